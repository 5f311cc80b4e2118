//! Embedded encodings, decoded for the second-stage rules: base64 and hex runs of at least
//! [`MIN_ENCODED`] characters and percent-encoded runs with at least three escapes, kept when
//! they decode to readable text (docs/check.md). One forward pass with bounded look-back, so
//! linear like the rest of the normalisation in [`super::normalise`], which re-exports these.

use super::byte_class;
use super::normalise::{MAX_DECODED_BYTES, MIN_ENCODED};
use base64_alphabet::{is_b64, is_hex};

/// An encoded run in a text and what it decodes to.
pub(crate) struct Decoded {
    /// Byte range of the encoded run in the text it was found in.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) encoding: &'static str,
    pub(crate) text: String,
}

/// The readable texts encoded in `s`: base64, hex and percent-encoded runs, at most `limit`.
#[cfg(test)]
pub(crate) fn decode_embedded(s: &str, limit: usize) -> Vec<Decoded> {
    decode_embedded_in(s, limit, None)
}

/// [`decode_embedded`], given the byte classes of `s` when they are known: a text without a
/// run of [`MIN_ENCODED`] base64 bytes in its classes (nearly all prose) is not scanned for
/// one.
pub(crate) fn decode_embedded_in(
    s: &str,
    limit: usize,
    blocks: Option<&[byte_class::Block]>,
) -> Vec<Decoded> {
    let mut out = Vec::new();
    if limit == 0 {
        return out;
    }
    let bytes = s.as_bytes();
    // Base64 and hex runs: a run of at least MIN_ENCODED must cover the byte at
    // `start + MIN_ENCODED - 1`, so most prose is decided by one look per 16 bytes.
    let mut start = if blocks.is_some_and(|b| !byte_class::has_b64_run(b, MIN_ENCODED)) {
        bytes.len()
    } else {
        0
    };
    while start + MIN_ENCODED <= bytes.len() && out.len() < limit {
        let probe = start + MIN_ENCODED - 1;
        if !is_b64(bytes[probe]) {
            start = probe + 1;
            continue;
        }
        match (start..probe).rev().find(|&k| !is_b64(bytes[k])) {
            Some(breaker) => start = breaker + 1,
            None => {
                let end = bytes[probe..]
                    .iter()
                    .position(|&b| !is_b64(b))
                    .map_or(bytes.len(), |n| probe + n);
                if end - start <= MAX_DECODED_BYTES {
                    let run = &bytes[start..end];
                    let decoded = if run.iter().all(|&b| is_hex(b)) && run.len() % 2 == 0 {
                        hex_decode(run).map(|t| ("hex", t))
                    } else {
                        base64_decode(run).map(|t| ("base64", t))
                    };
                    if let Some((encoding, text)) = decoded {
                        out.push(Decoded {
                            start,
                            end,
                            encoding,
                            text,
                        });
                    }
                }
                start = end;
            }
        }
    }
    // Percent-encoding: runs of text holding at least three `%XX` escapes.
    let mut at = 0;
    while out.len() < limit {
        let Some(i) = memchr::memchr(b'%', &bytes[at..]) else {
            break;
        };
        let mut first = at + i;
        // The run starts with the word the first escape is in (`ignore%20all…`).
        while first > at && is_unreserved(bytes[first - 1]) {
            first -= 1;
        }
        let percent = at + i;
        let mut end = percent;
        let mut escapes = 0;
        while end < bytes.len() && end - first <= MAX_DECODED_BYTES {
            let b = bytes[end];
            if b == b'%'
                && end + 2 < bytes.len()
                && is_hex(bytes[end + 1])
                && is_hex(bytes[end + 2])
            {
                escapes += 1;
                end += 3;
            } else if is_unreserved(b) {
                end += 1;
            } else {
                break;
            }
        }
        if escapes >= 3 {
            if let Some(text) = percent_decode(&bytes[first..end]) {
                out.push(Decoded {
                    start: first,
                    end,
                    encoding: "percent-encoding",
                    text,
                });
            }
        }
        at = end.max(percent + 1);
        if at >= bytes.len() {
            break;
        }
    }
    out
}

/// Characters a percent-encoded run may hold besides escapes (`+` is a space in forms).
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_' | b'~')
}

/// Decoded bytes count as text when they are UTF-8, hold a space, and at least nine in ten
/// characters are letters, digits, punctuation or spaces.
fn readable(bytes: Vec<u8>) -> Option<String> {
    let text = String::from_utf8(bytes).ok()?;
    if !text.contains(' ') {
        return None;
    }
    let total = text.chars().count();
    let good = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .count();
    (good * 10 >= total * 9 && total >= 8).then_some(text)
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    }
}

fn hex_decode(run: &[u8]) -> Option<String> {
    readable(
        run.chunks_exact(2)
            .map(|pair| hex_value(pair[0]) << 4 | hex_value(pair[1]))
            .collect(),
    )
}

fn percent_decode(run: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(run.len());
    let mut i = 0;
    while i < run.len() {
        if run[i] == b'%' && i + 2 < run.len() {
            out.push(hex_value(run[i + 1]) << 4 | hex_value(run[i + 2]));
            i += 3;
        } else {
            out.push(if run[i] == b'+' { b' ' } else { run[i] });
            i += 1;
        }
    }
    readable(out)
}

fn base64_decode(run: &[u8]) -> Option<String> {
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let body: Vec<u8> = run.iter().copied().take_while(|&b| b != b'=').collect();
    if body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut acc = 0u32;
        for (k, &b) in chunk.iter().enumerate() {
            acc |= value(b)? << (18 - 6 * k);
        }
        let n = chunk.len() * 6 / 8;
        for k in 0..n {
            out.push((acc >> (16 - 8 * k)) as u8);
        }
    }
    readable(out)
}

mod base64_alphabet {
    /// Whether each byte may be part of a base64 run (either alphabet, and padding), as a
    /// table: the run scan asks about nearly every byte of every text, and one load is cheaper
    /// than five comparisons and two ranges (a test holds it to the plain definition).
    static B64: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'-' | b'_');
            b += 1;
        }
        table
    };

    pub(super) fn is_b64(b: u8) -> bool {
        B64[usize::from(b)]
    }

    pub(super) fn is_hex(b: u8) -> bool {
        b.is_ascii_hexdigit()
    }

    #[test]
    fn the_table_is_the_definition() {
        for b in 0..=255u8 {
            let plain = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_');
            assert_eq!(is_b64(b), plain, "{b}");
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Texts of prose, base64 and hex runs of every length around the minimum, and escapes.
    fn encoded_text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "Reads a file. ",
            "SWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM=",
            "69676e6f726520616c6c2072756c6573",
            "aGVsbG8gd29y",
            "aGVsbG8gd29ybGQh",
            "abcdefghijklmno",
            "abcdefghijklmnop",
            "a+b/c=d-e_f",
            "%20ignore%20all%20",
            " ",
            "é",
            "-",
        ]);
        prop::collection::vec(pieces, 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        /// Skipping the run scan where the classes show no run long enough finds what the
        /// scan finds.
        #[test]
        fn the_classes_skip_only_texts_without_a_run(s in encoded_text(), limit in 0usize..4) {
            let blocks = byte_class::text_classes(s.as_bytes());
            let plain: Vec<_> = decode_embedded(&s, limit)
                .into_iter()
                .map(|d| (d.start, d.end, d.encoding, d.text))
                .collect();
            let classified: Vec<_> = decode_embedded_in(&s, limit, Some(&blocks))
                .into_iter()
                .map(|d| (d.start, d.end, d.encoding, d.text))
                .collect();
            prop_assert_eq!(classified, plain);
        }
    }
}
