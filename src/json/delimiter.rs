//! Finding the delimiters of the wire format: the newline that ends a frame, the quote (or
//! backslash) that ends or interrupts a JSON string, the first byte that ends a plain run of
//! string content.
//!
//! Every line of a cassette and every frame on stdio passes through these searches, so they
//! are vectorised. On x86-64 they use SSE2, which every x86-64 processor has, rather than the
//! `memchr` crate's entry points: those pick AVX2 at run time, and the first call detects the
//! processor's features with a dozen `cpuid` instructions. In a virtual machine each `cpuid` traps
//! to the hypervisor (about 3.6 µs each on the benchmark machine), which made detection the
//! largest single cost of a replay's cold start after the dynamic loader; the lines these
//! searches scan are short, so AVX2's wider registers buy nothing here. Other targets use the
//! crate's entry points, whose vector baseline (NEON on aarch64) needs no detection.
//!
//! [`plain_run_end`] is different: it reads the strings of one request, which are short, so it
//! works eight bytes at a time in an ordinary register rather than setting up a vector search.

/// Position of the first `\n` in `bytes`.
pub(crate) fn newline(bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(b'\n') {
        return searcher.find(bytes);
    }
    memchr::memchr(b'\n', bytes)
}

/// Position of the first `"` in `bytes`.
pub(crate) fn quote(bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(b'"') {
        return searcher.find(bytes);
    }
    memchr::memchr(b'"', bytes)
}

/// Position of the first `"` or `\` in `bytes`: where a JSON string ends or has an escape.
pub(crate) fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(b'"', b'\\') {
        return searcher.find(bytes);
    }
    memchr::memchr2(b'"', b'\\', bytes)
}

/// Position of the first of three bytes in `bytes` (SSE2 on x86-64, as above).
pub(crate) fn any_of3(a: u8, b: u8, c: u8, bytes: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Three::new(a, b, c) {
        return searcher.find(bytes);
    }
    memchr::memchr3(a, b, c, bytes)
}

/// The first byte of `bytes` that ends a plain run inside a JSON string: a quote, a backslash or
/// a control character (invalid there). Eight bytes at a time: strings in requests are short, and
/// a general search routine costs more in setting up than it saves on them.
#[inline]
pub(crate) fn plain_run_end(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let stop = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let mut at = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let x = u64::from_le_bytes(chunk.try_into().ok()?);
        // A flag is exact at the lowest flagged byte (borrows only run upwards from it).
        let found = zero_byte(x ^ (ONES * u64::from(b'"')))
            | zero_byte(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| stop(b))
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn finds_the_first_delimiter() {
        assert_eq!(newline(b""), None);
        assert_eq!(newline(b"abc"), None);
        assert_eq!(newline(b"a\nb\n"), Some(1));
        assert_eq!(quote(br#"ab"c""#), Some(2));
        assert_eq!(quote_or_backslash(br#"ab\"c""#), Some(2));
        assert_eq!(quote_or_backslash(br#"abc""#), Some(3));
        // Past the first vector and in the tail.
        let mut long = vec![b'x'; 100];
        long[70] = b'\n';
        long[90] = b'"';
        assert_eq!(newline(&long), Some(70));
        assert_eq!(quote(&long), Some(90));
        assert_eq!(quote_or_backslash(&long), Some(90));
    }

    #[test]
    fn plain_run_ends_are_found_at_every_offset() {
        for len in 0..40 {
            for stop in [b'"', b'\\', 0x01, 0x1f] {
                let mut bytes = vec![b'a'; len];
                bytes.extend_from_slice(&[stop, b'"', 0x80, b'x']);
                assert_eq!(plain_run_end(&bytes), Some(len), "{len} {stop}");
            }
            let plain: Vec<u8> = "é ~\u{7f}".bytes().cycle().take(len).collect();
            assert_eq!(plain_run_end(&plain), None, "{len}");
        }
    }

    proptest! {
        /// The vectorised searches agree with a plain scan, at every length and alignment.
        #[test]
        fn agree_with_a_plain_scan(
            bytes in proptest::collection::vec(
                prop_oneof![1 => Just(b'\n'), 1 => Just(b'"'), 1 => Just(b'\\'), 1 => 0u8..0x20, 40 => any::<u8>()],
                0..200,
            ),
            skip in 0usize..16,
        ) {
            let bytes = &bytes[skip.min(bytes.len())..];
            prop_assert_eq!(newline(bytes), bytes.iter().position(|&b| b == b'\n'));
            prop_assert_eq!(quote(bytes), bytes.iter().position(|&b| b == b'"'));
            prop_assert_eq!(
                quote_or_backslash(bytes),
                bytes.iter().position(|&b| b == b'"' || b == b'\\')
            );
            prop_assert_eq!(
                any_of3(b'"', b'\\', b'\n', bytes),
                bytes.iter().position(|&b| b == b'"' || b == b'\\' || b == b'\n')
            );
            prop_assert_eq!(
                plain_run_end(bytes),
                bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            );
        }
    }
}
