//! The tokens of JSON text, read in place: whitespace, strings, numbers, literals, and (for text
//! already known to be valid) whole values and the members of an object.
//!
//! Every reader of JSON text in the crate is built from these: the strict [`Scanner`] on replay's
//! hot path, redaction's walk, and the shallow look at a frame's envelope. Positions are byte
//! indices into the text; a function that reads a token is handed the index where it starts and
//! answers the index just past it, or `None` when the text there is not that token.
//!
//! [`Scanner`]: super::Scanner

use super::delimiter;

/// Skips JSON whitespace from `i`; answers the index of the next other byte (or the end).
#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    // Compact text, which nearly every frame is, has no white space at all: one comparison
    // says so (every byte above the space is not white space).
    if b.get(i).is_none_or(|&c| c > b' ') {
        return i;
    }
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Which escapes a string may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escapes {
    /// Every escape JSON allows.
    Any,
    /// Only the ones the canonical writer produces itself (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`,
    /// `\f`): a string using no others is already written canonically.
    Canonical,
}

/// Validates the string whose opening quote is at `i`: answers the index just past its closing
/// quote and whether it contains escapes. `None` for a control character, an escape outside
/// `escapes`, or a string that does not end.
// Inlined into the scanner's string reading for the same reason as `Scanner::string`.
#[inline(always)]
pub(crate) fn string_end(b: &[u8], i: usize, escapes: Escapes) -> Option<(usize, bool)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        j += delimiter::plain_run_end(b.get(j..)?)?;
        match b[j] {
            b'"' => return Some((j + 1, escaped)),
            b'\\' => {
                escaped = true;
                match (*b.get(j + 1)?, escapes) {
                    (b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f', _) => j += 2,
                    (b'/', Escapes::Any) => j += 2,
                    (b'u', Escapes::Any) => {
                        let hex = b.get(j + 2..j + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        j += 6;
                    }
                    _ => return None,
                }
            }
            // A control character: not allowed unescaped.
            _ => return None,
        }
    }
}

/// As [`string_end`] for text already known to be valid JSON, without checking: the string ends
/// at the first quote preceded by an even number of backslashes. Most strings have no backslash
/// and end at the first quote or backslash found; the rest are searched quote by quote, which
/// skips runs of `\n` escapes in one step. Both searches are vectorised: strings are most of a
/// cassette's bytes.
#[inline]
pub(crate) fn string_end_trusted(b: &[u8], i: usize) -> Option<(usize, bool)> {
    let start = i + 1;
    let first = start + delimiter::quote_or_backslash(b.get(start..)?)?;
    if b[first] == b'"' {
        return Some((first + 1, false));
    }
    let mut from = first;
    loop {
        let at = from + delimiter::quote(b.get(from..)?)?;
        let backslashes = b[start..at]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some((at + 1, true));
        }
        from = at + 1;
    }
}

/// A number token: where it ends and what its spelling says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Number {
    /// The index just past the number.
    pub end: usize,
    /// How many digits its integer part has.
    pub int_digits: usize,
    /// No fraction and no exponent.
    pub integer: bool,
}

/// Reads the number starting at `i` by JSON's grammar (`-`? int frac? exp?). A leading zero ends
/// the integer part, so `01` reads as `0` followed by a stray `1` the caller then refuses.
#[inline]
pub(crate) fn number(b: &[u8], i: usize) -> Option<Number> {
    let digits = |mut j: usize| {
        while matches!(b.get(j), Some(b'0'..=b'9')) {
            j += 1;
        }
        j
    };
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let int_start = j;
    match b.get(j)? {
        b'0' => j += 1,
        b'1'..=b'9' => j = digits(j),
        _ => return None,
    }
    let int_digits = j - int_start;
    let mut integer = true;
    if b.get(j) == Some(&b'.') {
        let end = digits(j + 1);
        if end == j + 1 {
            return None;
        }
        j = end;
        integer = false;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let end = digits(j);
        if end == j {
            return None;
        }
        j = end;
        integer = false;
    }
    Some(Number {
        end: j,
        int_digits,
        integer,
    })
}

/// The index just past `word` (`true`, `false` or `null`) when it stands at `i`.
#[inline]
pub(crate) fn literal_end(b: &[u8], i: usize, word: &str) -> Option<usize> {
    let end = i + word.len();
    (b.get(i..end)? == word.as_bytes()).then_some(end)
}

/// Bytes that matter while skipping a nested value: quotes and brackets.
const STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'[' as usize] = true;
    t[b'}' as usize] = true;
    t[b']' as usize] = true;
    t
};

/// The index just past the value starting at `i`, in text already known to be valid JSON.
pub(crate) fn value_end_trusted(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end_trusted(b, i).map(|(end, _)| end),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                j += b
                    .get(j..)?
                    .iter()
                    .position(|&c| STRUCTURAL[usize::from(c)])?;
                match b[j] {
                    b'"' => {
                        j = string_end_trusted(b, j)?.0;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while !matches!(
                b.get(j),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Calls `each(key, raw value)` for every top-level member of an object, in text already known to
/// be valid JSON; keys are as written (still escaped). `None` when the text is not shaped as
/// expected (the caller then takes a validating path) or when `each` says to stop. No allocation:
/// this runs once per cassette entry.
pub(crate) fn for_each_member<'a>(
    text: &'a str,
    mut each: impl FnMut(&'a str, &'a str) -> Option<()>,
) -> Option<()> {
    let b = text.as_bytes();
    let at = skip_ws(b, 0);
    members_from(text, at, |key, start| {
        let stop = value_end_trusted(b, start)?;
        each(key, text.get(start..stop)?)?;
        Some(stop)
    })?;
    Some(())
}

/// The members of the object at `at` in `text` (valid JSON), for a caller that reads each value
/// itself: `each(key as written, where the value starts)` answers where the value ends, so a
/// value the caller walks is not also stepped over. Answers the index past the object; `None`
/// as [`for_each_member`] does.
pub(crate) fn members_from<'a>(
    text: &'a str,
    at: usize,
    mut each: impl FnMut(&'a str, usize) -> Option<usize>,
) -> Option<usize> {
    let b = text.as_bytes();
    if *b.get(at)? != b'{' {
        return None;
    }
    let mut i = skip_ws(b, at + 1);
    if *b.get(i)? == b'}' {
        return Some(i + 1);
    }
    loop {
        if *b.get(i)? != b'"' {
            return None;
        }
        let (end, _) = string_end_trusted(b, i)?;
        let key = text.get(i + 1..end - 1)?;
        i = skip_ws(b, end);
        if *b.get(i)? != b':' {
            return None;
        }
        let stop = each(key, skip_ws(b, i + 1))?;
        i = skip_ws(b, stop);
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Resolves the escapes of string content (between the quotes) that [`string_end`] accepted. A
/// lone surrogate becomes U+FFFD, which is also what the reference hashes for one (it encodes the
/// string as UTF-8).
pub(crate) fn decode(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let esc = &rest[at + 1..];
        let mut consumed = 2;
        match esc.as_bytes().first() {
            Some(b'b') => out.push('\u{8}'),
            Some(b'f') => out.push('\u{c}'),
            Some(b'n') => out.push('\n'),
            Some(b'r') => out.push('\r'),
            Some(b't') => out.push('\t'),
            Some(b'u') => {
                let unit = hex4(esc.get(1..5));
                consumed = 6;
                match unit {
                    Some(hi @ 0xD800..=0xDBFF) => {
                        let lo = esc
                            .get(5..7)
                            .filter(|s| *s == "\\u")
                            .and_then(|_| hex4(esc.get(7..11)))
                            .filter(|lo| (0xDC00..=0xDFFF).contains(lo));
                        match lo {
                            Some(lo) => {
                                let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                                consumed = 12;
                            }
                            None => out.push('\u{FFFD}'),
                        }
                    }
                    Some(u) => out.push(char::from_u32(u).unwrap_or('\u{FFFD}')),
                    None => out.push('\u{FFFD}'),
                }
            }
            Some(&b) => out.push(char::from(b)),
            None => consumed = 1,
        }
        rest = rest.get(at + consumed..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

fn hex4(s: Option<&str>) -> Option<u32> {
    let s = s?;
    if s.len() == 4 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        u32::from_str_radix(s, 16).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn strings() {
        let s = |t: &str, e| string_end(t.as_bytes(), 0, e);
        assert_eq!(s(r#""abc" "#, Escapes::Any), Some((5, false)));
        assert_eq!(s(r#""a\"b""#, Escapes::Canonical), Some((6, true)));
        assert_eq!(s(r#""\u00e9""#, Escapes::Any), Some((8, true)));
        assert_eq!(s(r#""\u00e9""#, Escapes::Canonical), None);
        assert_eq!(s(r#""a\/b""#, Escapes::Canonical), None);
        assert_eq!(s(r#""\u12g4""#, Escapes::Any), None);
        assert_eq!(s("\"a\u{1}\"", Escapes::Any), None);
        assert_eq!(s(r#""\x""#, Escapes::Any), None);
        assert_eq!(s(r#""open"#, Escapes::Any), None);
        assert_eq!(s("x", Escapes::Any), None);
    }

    #[test]
    fn numbers() {
        let n = |t: &str| number(t.as_bytes(), 0).map(|n| (n.end, n.int_digits, n.integer));
        assert_eq!(n("0"), Some((1, 1, true)));
        assert_eq!(n("-12,"), Some((3, 2, true)));
        assert_eq!(n("01"), Some((1, 1, true)));
        assert_eq!(n("-0.5E+2]"), Some((7, 1, false)));
        assert_eq!(n("1e3"), Some((3, 1, false)));
        for bad in ["", "-", "1.", "1e", "1e+", "+1", ".5", "-x"] {
            assert_eq!(number(bad.as_bytes(), 0), None, "{bad}");
        }
    }

    #[test]
    fn members_of_valid_text() {
        let mut seen = Vec::new();
        let text = r#" { "a" : [1,{"b":"}\"]"}] , "c\u0064":"x\\" ,"e":-1.5e3,"f":null} "#;
        for_each_member(text, |k, v| {
            seen.push((k, v));
            Some(())
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                ("a", r#"[1,{"b":"}\"]"}]"#),
                (r"c\u0064", r#""x\\""#),
                ("e", "-1.5e3"),
                ("f", "null"),
            ]
        );
        assert_eq!(for_each_member("[1]", |_, _| Some(())), None);
        assert_eq!(for_each_member("{}", |_, _| None), Some(()));
    }

    #[test]
    fn decodes_escapes() {
        assert_eq!(
            decode(r#"a\"b\\c\/d\n\u00e9\ud83d\ude00\ud800x"#),
            "a\"b\\c/d\né😀\u{FFFD}x"
        );
    }

    proptest! {
        /// On valid JSON the unchecked string search ends where the checking one does, and
        /// decoding gives back the string that was written.
        #[test]
        fn trusted_strings_end_where_checked_ones_do(s in "\\PC{0,12}|[\"\\\\\\n\\x01a-z]{0,12}") {
            let text = serde_json::to_string(&s).unwrap() + ",";
            let b = text.as_bytes();
            let checked = string_end(b, 0, Escapes::Any);
            prop_assert_eq!(checked, string_end_trusted(b, 0));
            let (end, _) = checked.unwrap();
            prop_assert_eq!(decode(&text[1..end - 1]), s);
        }
    }
}
