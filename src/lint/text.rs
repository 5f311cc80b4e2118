//! One field's text, prepared once for all sixteen rules, and the excerpt helpers they share.
//!
//! Positions and lengths the reference reports (the 1500-character limit, the 20/60 excerpt
//! window, the 60-character URL look-back) are counted in UTF-16 code units, because that is
//! what a JavaScript string measures. We keep that unit so a finding and its evidence read the
//! same under either binary; for ASCII text (almost every description) units, chars and bytes
//! coincide and the helpers take a byte-slicing fast path.

use std::cell::OnceCell;

use super::byte_class;

/// A field's text plus facts every rule wants and nobody should recompute.
pub(crate) struct Text<'a> {
    pub(crate) s: &'a str,
    /// Which of a few bytes rules search for the text holds, and whether it is ASCII, found in
    /// one pass when the text is prepared (see [`byte_class::Seen`]).
    pub(crate) seen: byte_class::Seen,
    /// Which phrase-rule anchor groups occur in the text (see `rules::Anchors`), computed by
    /// one automaton pass the first time a phrase rule asks.
    pub(crate) phrase_hits: OnceCell<u32>,
    /// What the second stage (CAS-L018 onward) found, computed once for all its rules.
    pub(crate) second: OnceCell<super::rules::families::Analysis>,
    /// Which kinds of format character the text holds (see `rules::Special`), found by one
    /// scan the first time a rule that looks for them asks.
    pub(crate) specials: OnceCell<u8>,
    /// Where the URL-anchored rules fire, found by one scan the first time one of them asks.
    pub(crate) urls: OnceCell<super::rules::UrlDirectives>,
}

impl<'a> Text<'a> {
    /// Whether the text is ASCII only: then it holds none of the code points the Unicode rules
    /// look for, and those rules return at once.
    pub(crate) fn ascii(&self) -> bool {
        !self.seen.non_ascii()
    }

    pub(crate) fn new(s: &'a str) -> Self {
        let seen = byte_class::seen(s.as_bytes());
        Text {
            s,
            seen,
            phrase_hits: OnceCell::new(),
            second: OnceCell::new(),
            specials: OnceCell::new(),
            urls: OnceCell::new(),
        }
    }
}

/// JavaScript's `\s`: Unicode `White_Space` plus U+FEFF, minus U+0085. Used for the excerpt
/// collapse and, as a regex class, by the phrase rules so "ignore\u{FEFF}previous
/// instructions" is caught exactly as the reference catches it.
pub(crate) fn is_js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}'
}

/// Regex class equivalent of [`is_js_space`], spelled with the Unicode property.
pub(crate) const JS_SPACE_CLASS: &str = r"[[\s\x{FEFF}]&&[^\x{85}]]";

/// The UTF-16 length of `s` (JavaScript's `string.length`).
pub(crate) fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char::len_utf16).sum()
}

/// Byte offset of the point `units` UTF-16 code units before `byte_idx` (clamped at 0).
/// A surrogate pair the boundary would split is left out, which is the closest a `&str`
/// can get to JavaScript slicing through it.
///
/// Only the last `units` characters before `byte_idx` are looked at, never the whole head:
/// callers step back from every URL or match of a long text, and a scan of the prefix each
/// time would make them quadratic.
pub(crate) fn back_utf16(s: &str, byte_idx: usize, units: usize) -> usize {
    let head = &s[..byte_idx];
    // `units` ASCII bytes are `units` units; any non-ASCII byte among them means walking
    // back char by char, which also stops after at most `units` characters.
    let near = byte_idx.saturating_sub(units);
    if head.as_bytes()[near..].is_ascii() {
        return near;
    }
    let mut taken = 0usize;
    let mut at = byte_idx;
    for (i, c) in head.char_indices().rev() {
        let w = c.len_utf16();
        if taken + w > units {
            break;
        }
        taken += w;
        at = i;
    }
    at
}

/// The reference's `excerptAround`: from 20 units before the match, 60 units of text, every
/// whitespace run collapsed to one space, trimmed.
pub(crate) fn excerpt_around(s: &str, byte_idx: usize) -> String {
    let start = back_utf16(s, byte_idx, 20);
    let tail = &s[start..];
    let end = if tail.as_bytes()[..tail.len().min(60)].is_ascii() {
        start + tail.len().min(60)
    } else {
        let mut units = 0usize;
        let mut end = s.len();
        for (i, c) in tail.char_indices() {
            if units >= 60 {
                end = start + i;
                break;
            }
            units += c.len_utf16();
        }
        end
    };
    collapse_space(&s[start..end])
}

/// Collapse whitespace runs to one space and trim, as `.replace(/\s+/g, " ").trim()` does.
pub(crate) fn collapse_space(s: &str) -> String {
    if s.is_ascii() {
        return collapse_ascii_space(s.as_bytes());
    }
    collapse_space_chars(s)
}

/// [`collapse_space`] of ASCII text, a byte at a time: JavaScript's white space among ASCII
/// bytes is the space and `\t` to `\r`, as [`is_js_space`] says. Excerpts are nearly always
/// ASCII, and the character loop decoded and re-encoded each byte (a test holds the two equal).
fn collapse_ascii_space(s: &[u8]) -> String {
    let mut out = Vec::with_capacity(s.len());
    let mut pending_space = false;
    for &b in s {
        if matches!(b, b' ' | b'\t'..=b'\r') {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(b' ');
                pending_space = false;
            }
            out.push(b);
        }
    }
    // Only ASCII bytes were copied.
    String::from_utf8(out).unwrap_or_default()
}

/// [`collapse_space`], a character at a time: the plain way, and the way for any text.
fn collapse_space_chars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for c in s.chars() {
        if is_js_space(c) {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    out
}

/// `U+XXXX` as the reference prints a code point: uppercase hex, at least four digits.
pub(crate) fn code_point_label(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_window_is_twenty_back_sixty_long() {
        let s = format!("{}MATCH{}", "a".repeat(30), "b".repeat(100));
        let ex = excerpt_around(&s, 30);
        assert_eq!(ex.len(), 60);
        assert!(ex.starts_with(&"a".repeat(20)));
        assert!(ex.contains("MATCH"));
    }

    #[test]
    fn excerpt_clamps_and_collapses() {
        let ex = excerpt_around("  Ignore\n\n\tall   previous", 2);
        assert_eq!(ex, "Ignore all previous");
    }

    #[test]
    fn excerpt_counts_utf16_units() {
        // Each 𝒜 is two UTF-16 units: 10 of them fill the 20-unit look-back.
        let s = format!("xx{}MATCH", "𝒜".repeat(10));
        let idx = s.find("MATCH").unwrap_or(0);
        let ex = excerpt_around(&s, idx);
        assert_eq!(ex, format!("{}MATCH", "𝒜".repeat(10)));
        let long = "語".repeat(100);
        assert_eq!(excerpt_around(&long, 0).chars().count(), 60);
    }

    #[test]
    fn ascii_collapse_is_the_plain_one() {
        for b in 0u8..0x80 {
            assert_eq!(
                is_js_space(char::from(b)),
                matches!(b, b' ' | b'\t'..=b'\r'),
                "{b:#x}"
            );
        }
    }

    proptest::proptest! {
        /// The byte loop collapses ASCII text exactly as the character loop does.
        #[test]
        fn ascii_collapse_equals_the_char_loop(s in "[ \t\n\x0b\x0c\r\x1c-\x1fa-c.]{0,40}") {
            proptest::prop_assert_eq!(collapse_ascii_space(s.as_bytes()), collapse_space_chars(&s));
        }
    }

    #[test]
    fn js_space_set() {
        assert!(is_js_space('\u{FEFF}'));
        assert!(is_js_space('\u{3000}'));
        assert!(!is_js_space('\u{85}'));
        assert!(!is_js_space('\u{200B}'));
        assert_eq!(utf16_len("a𝒜"), 3);
        assert_eq!(code_point_label('\u{200B}'), "U+200B");
        assert_eq!(code_point_label('\u{E0041}'), "U+E0041");
    }
}
