//! A strict, allocation-free reader of JSON text for replay's hot path: it validates a value and,
//! when the text is already canonical, copies it straight into the fingerprint being built.

use std::cmp::Ordering;

use super::canonical::key_cmp;
use super::delimiter;
use super::token::{self, Escapes};

/// How deep the scanner follows nesting before leaving the text to the full parser.
const SCAN_DEPTH: usize = 64;

/// A strict, allocation-free reader of JSON text for the replay's hot path.
///
/// It either validates a value ([`Scanner::skip`]) or validates it and appends its canonical text
/// ([`Scanner::copy`]) when the text is already canonical up to whitespace: keys in strictly
/// increasing [key order](key_cmp), integers of at most 15 digits, strings whose only escapes are
/// the ones [`write`](super::canonical::write) itself produces. Anything else — a float, `\u`
/// escapes, unsorted or repeated keys, nesting deeper than 64 — answers `None`, and the caller
/// falls back to the full parser, which gives the same canonical text the slow way (or the
/// error). So the scanner never decides a question differently from the parser; it only answers
/// the common case sooner.
/// The members of an object nested in a scanned text, as [`Scanner::members_capturing`] found
/// them while validating it: each key as written (between its quotes, escapes kept) and each
/// value (without surrounding white space), as spans of the text. Only the first
/// [`Captured::MEMBERS`] are kept; an object with more is not captured.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// Where the object stands in the text; `None` when nothing was captured.
    object: Option<(u32, u32)>,
    members: [((u32, u32), (u32, u32)); Captured::MEMBERS],
    len: usize,
}

impl Captured {
    /// A JSON-RPC frame has four or five members.
    pub const MEMBERS: usize = 8;

    /// The members (key as written, value) of the object captured at `span` of `text` (the
    /// text that was scanned), in order, as [`crate::json::token::for_each_member`] gives them
    /// over the object's text; `None` when no object was captured there. Each member is `None`
    /// if its spans do not lie in `text` (never, for the text that was scanned): a walk that
    /// meets one stops, and its caller decides the slow way.
    pub fn members_at<'t>(
        &self,
        text: &'t str,
        span: std::ops::Range<usize>,
    ) -> Option<impl Iterator<Item = Option<(&'t str, &'t str)>> + use<'t, '_>> {
        let (a, b) = self.object?;
        if (a as usize, b as usize) != (span.start, span.end) {
            return None;
        }
        let get = |(a, b): (u32, u32)| text.get(a as usize..b as usize);
        let members = self.members.get(..self.len)?;
        Some(members.iter().map(move |&(k, v)| Some((get(k)?, get(v)?))))
    }
}

#[derive(Clone)]
pub struct Scanner<'a> {
    src: &'a str,
    text: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            src: text,
            text: text.as_bytes(),
            pos: 0,
        }
    }

    /// A scanner over `text` that starts reading at byte `pos` (positions still count from the
    /// start of `text`).
    pub fn starting_at(text: &'a str, pos: usize) -> Scanner<'a> {
        Scanner {
            pos,
            ..Scanner::new(text)
        }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The whole text being scanned (what [`Scanner::pos`] counts in).
    pub fn text(&self) -> &'a str {
        self.src
    }

    /// Skips whitespace and answers the next byte.
    pub fn peek(&mut self) -> Option<u8> {
        self.pos = token::skip_ws(self.text, self.pos);
        self.text.get(self.pos).copied()
    }

    /// Consumes `b` (after whitespace) when it is next.
    pub fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// A string with no escapes in it: its content, borrowed from the text.
    #[inline]
    pub fn plain_str(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        let end = start + delimiter::plain_run_end(&self.text[start..])?;
        if self.text[end] != b'"' {
            return None;
        }
        self.pos = end + 1;
        // Both ends are ASCII bytes, so they are char boundaries.
        self.src.get(start..end)
    }

    /// Validates one value of any shape.
    pub fn skip(&mut self) -> Option<()> {
        self.value(&mut Validate, 0)
    }

    /// Validates one value and appends its canonical text to `out`; `None` when the text is not
    /// already canonical (what was appended is then meaningless).
    pub fn copy(&mut self, out: &mut String) -> Option<()> {
        self.value(out, 0)
    }

    /// The members of an object whose keys are not in `dropped`, copied as [`Scanner::copy`]
    /// would copy the object made of them alone; the dropped members are only validated.
    pub fn copy_object_without(&mut self, out: &mut String, dropped: &[&str]) -> Option<()> {
        self.object(out, 0, dropped)
    }

    /// Validates one object whose keys have no escapes, and the end of the text after it,
    /// calling `each(key, value)` for every member in order, with each value's text as written
    /// (no surrounding whitespace). `None` when the text is not such an object (not JSON, a key
    /// with escapes, nesting deeper than the scanner follows) or `each` says to stop: the
    /// caller then asks the full parser, which decides. One validating pass, no allocation.
    pub fn members(self, each: impl FnMut(&'a str, &'a str) -> Option<()>) -> Option<()> {
        self.members_noting(None, each)
    }

    /// As [`Scanner::members`], also capturing the members of the object that is the value of
    /// the first top-level member named `nested` (a cassette line's `frame`): validating it is
    /// reading it, so whoever looks into it next need not walk it again.
    pub fn members_capturing(
        self,
        nested: &str,
        captured: &mut Captured,
        each: impl FnMut(&'a str, &'a str) -> Option<()>,
    ) -> Option<()> {
        *captured = Captured::default();
        self.members_noting(Some((nested, captured)), each)
    }

    /// As [`Scanner::members_capturing`] for a scanner standing at a member's key inside an
    /// object whose opening and earlier members its caller has read (and vouches for): the
    /// members from there to the end of the object, then the end of the text.
    pub fn rest_capturing(
        self,
        nested: &str,
        captured: &mut Captured,
        each: impl FnMut(&'a str, &'a str) -> Option<()>,
    ) -> Option<()> {
        *captured = Captured::default();
        self.rest_noting(Some((nested, captured)), each)
    }

    fn members_noting(
        mut self,
        nested: Option<(&str, &mut Captured)>,
        each: impl FnMut(&'a str, &'a str) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return self.at_end().then_some(());
        }
        self.rest_noting(nested, each)
    }

    /// The members of an object from the key the scanner stands at, then the end of the text.
    fn rest_noting(
        mut self,
        mut nested: Option<(&str, &mut Captured)>,
        mut each: impl FnMut(&'a str, &'a str) -> Option<()>,
    ) -> Option<()> {
        loop {
            let key = self.plain_str()?;
            if !self.eat(b':') {
                return None;
            }
            let first = self.peek()?;
            let start = self.pos;
            match nested.take_if(|(name, _)| *name == key) {
                // The first member so named only: `nested` is spent either way.
                Some((_, captured)) if first == b'{' => self.object_captured(captured)?,
                _ => self.value(&mut Validate, 1)?,
            }
            each(key, self.src.get(start..self.pos)?)?;
            if self.eat(b'}') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        self.at_end().then_some(())
    }

    /// [`Scanner::object`] for a member's value (depth 1) without a copy, noting each member.
    fn object_captured(&mut self, captured: &mut Captured) -> Option<()> {
        let object_start = self.pos;
        if !self.eat(b'{') {
            return None;
        }
        let (mut n, mut all) = (0, true);
        if !self.eat(b'}') {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key_start = self.pos;
                self.string(&mut Validate)?;
                let key_end = self.pos;
                if !self.eat(b':') {
                    return None;
                }
                self.peek()?;
                let value_start = self.pos;
                self.value(&mut Validate, 2)?;
                let span =
                    |a: usize, b: usize| Some((u32::try_from(a).ok()?, u32::try_from(b).ok()?));
                match (
                    captured.members.get_mut(n),
                    span(key_start + 1, key_end - 1),
                    span(value_start, self.pos),
                ) {
                    (Some(slot), Some(key), Some(value)) => {
                        *slot = (key, value);
                        n += 1;
                    }
                    _ => all = false,
                }
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        captured.len = n;
        captured.object = all
            .then(|| {
                Some((
                    u32::try_from(object_start).ok()?,
                    u32::try_from(self.pos).ok()?,
                ))
            })
            .flatten();
        Some(())
    }

    fn value<S: Sink>(&mut self, out: &mut S, depth: usize) -> Option<()> {
        if depth > SCAN_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(out, depth, &[]),
            b'[' => self.array(out, depth),
            b'"' => self.string(out),
            b't' => self.literal("true", out),
            b'f' => self.literal("false", out),
            b'n' => self.literal("null", out),
            b'-' | b'0'..=b'9' => self.number(out),
            _ => None,
        }
    }

    fn literal<S: Sink>(&mut self, word: &str, out: &mut S) -> Option<()> {
        self.pos = token::literal_end(self.text, self.pos, word)?;
        out.push_str(word);
        Some(())
    }

    // Inlined: most strings in a frame are short keys, and a call's register saves cost as
    // much as reading one (measured: 6 % of replay's start-up instructions, docs/benchmarks.md).
    #[inline(always)]
    fn string<S: Sink>(&mut self, out: &mut S) -> Option<()> {
        let start = self.pos;
        // A canonical copy keeps only the escapes the writer itself produces.
        let escapes = if S::COPIES {
            Escapes::Canonical
        } else {
            Escapes::Any
        };
        let (end, escaped) = token::string_end(self.text, start, escapes)?;
        // serde_json refuses a `\u` surrogate that is not half of a pair (JavaScript takes it,
        // and so does the redactor's walk); the scanner answers for serde_json here, so it
        // refuses one too (docs/fuzzing.md, "Bugs found").
        if escaped && escapes == Escapes::Any && !surrogates_paired(&self.text[start..end]) {
            return None;
        }
        self.pos = end;
        if S::COPIES {
            out.push_str(self.src.get(start..self.pos)?);
        }
        Some(())
    }

    fn number<S: Sink>(&mut self, out: &mut S) -> Option<()> {
        let start = self.pos;
        let number = token::number(self.text, start)?;
        self.pos = number.end;
        let text = self.src.get(start..self.pos)?;
        let plain_integer = number.integer && number.int_digits <= 15;
        // The parser refuses a number too large for a double; so must the scanner.
        if !plain_integer && !text.parse::<f64>().is_ok_and(f64::is_finite) {
            return None;
        }
        if S::COPIES {
            // JavaScript spells an integer below 1e15 as its digits; `-0` is `0`.
            if !plain_integer || text == "-0" {
                return None;
            }
            out.push_str(text);
        }
        Some(())
    }

    fn array<S: Sink>(&mut self, out: &mut S, depth: usize) -> Option<()> {
        self.pos += 1;
        out.push('[');
        if !self.eat(b']') {
            loop {
                self.value(out, depth + 1)?;
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
                out.push(',');
            }
        }
        out.push(']');
        Some(())
    }

    fn object<S: Sink>(&mut self, out: &mut S, depth: usize, dropped: &[&str]) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        out.push('{');
        let mut previous: Option<&str> = None;
        if !self.eat(b'}') {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key_start = self.pos;
                // Canonical order is the order of the unescaped keys: only plain keys can be
                // compared as written.
                let key = if S::COPIES {
                    Some(self.plain_str()?)
                } else {
                    self.string(&mut Validate)?;
                    None
                };
                if !self.eat(b':') {
                    return None;
                }
                match key {
                    Some(key) if !dropped.contains(&key) => {
                        if previous.is_some_and(|p| key_cmp(p, key) != Ordering::Less) {
                            return None;
                        }
                        if previous.is_some() {
                            out.push(',');
                        }
                        previous = Some(key);
                        out.push_str(self.src.get(key_start..key_start + key.len() + 2)?);
                        out.push(':');
                        self.value(out, depth + 1)?;
                    }
                    _ => self.value(&mut Validate, depth + 1)?,
                }
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        out.push('}');
        Some(())
    }
}

/// Where a scan's canonical copy goes. The scanner is generic over it, so that the validating
/// walk, which reads every line of a cassette, is compiled without the copy's steps and tests
/// rather than testing at each token whether it copies.
trait Sink {
    /// Whether the scan copies (and so must find the text canonical as written).
    const COPIES: bool;
    fn push_str(&mut self, text: &str);
    fn push(&mut self, c: char);
}

/// Validating only: nothing is copied.
struct Validate;

impl Sink for Validate {
    const COPIES: bool = false;
    #[inline(always)]
    fn push_str(&mut self, _: &str) {}
    #[inline(always)]
    fn push(&mut self, _: char) {}
}

impl Sink for String {
    const COPIES: bool = true;
    #[inline(always)]
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
    #[inline(always)]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

/// Whether every `\u` surrogate escape in a validated string is a high one followed directly by
/// an escaped low one.
fn surrogates_paired(string: &[u8]) -> bool {
    let unit = |at: usize| {
        string
            .get(at..at + 4)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u16::from_str_radix(hex, 16).ok())
    };
    let mut i = 0;
    while i < string.len() {
        if string[i] != b'\\' {
            i += 1;
            continue;
        }
        if string.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        match unit(i + 2) {
            Some(0xD800..=0xDBFF) => {
                let low = if string.get(i + 6..i + 8) == Some(&b"\\u"[..]) {
                    unit(i + 8)
                } else {
                    None
                };
                if !matches!(low, Some(0xDC00..=0xDFFF)) {
                    return false;
                }
                i += 12;
            }
            Some(0xDC00..=0xDFFF) | None => return false,
            Some(_) => i += 6,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;
    use crate::json::canonical::tests::json;
    use crate::json::canonical::write;
    use crate::json::node::Node;

    fn canon_text(text: &str) -> String {
        let mut out = String::new();
        write(&Node::parse(text).unwrap(), &mut out);
        out
    }

    /// What the scanner says about `text`: whether it is JSON, and its canonical copy if the
    /// scanner made one.
    fn scan(text: &str) -> (bool, Option<String>) {
        let mut skip = Scanner::new(text);
        let valid = skip.skip().is_some() && skip.at_end();
        let mut copy = Scanner::new(text);
        let mut out = String::new();
        let copied = (copy.copy(&mut out).is_some() && copy.at_end()).then_some(out);
        (valid, copied)
    }

    #[test]
    fn scanner_copies_canonical_text_and_leaves_the_rest() {
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"x\n\"y\""}}"#,
            r#" { "a" : -12 , "b" : [ ] , "c" : { } } "#,
            "123456789012345",
            r#""\b\f\t\r""#,
        ] {
            assert_eq!(scan(text), (true, Some(canon_text(text))), "{text}");
        }
        // Valid, but not canonical as written: left to the parser.
        for text in [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            "1.0",
            "1e3",
            "-0",
            "1234567890123456",
            r#""\u0041""#,
            r#""a\/b""#,
            r#"{"\u0061":1}"#,
        ] {
            assert_eq!(scan(text), (true, None), "{text}");
        }
        // Not JSON at all.
        for text in [
            "",
            "{",
            "}",
            "[1,]",
            "{\"a\"}",
            "{\"a\":}",
            "01",
            "1.",
            "1e",
            "-",
            "+1",
            "tru",
            "\"\\x\"",
            "\"\\u12g4\"",
            r#""\ud83d""#,
            r#""\ude00\ud83d""#,
            r#""\ud83d\u0041""#,
            "\"a\u{1}\"",
            "[1 2]",
            "{\"a\":1,}",
            "nul",
            "\"open",
        ] {
            assert_eq!(scan(text), (false, None), "{text:?}");
        }
        let deep = "[".repeat(SCAN_DEPTH + 2) + &"]".repeat(SCAN_DEPTH + 2);
        assert_eq!(
            scan(&deep),
            (false, None),
            "too deep for the scanner: the parser decides"
        );
        let mut out = String::new();
        let mut s = Scanner::new(r#"{"_meta":{"z":1.5},"b":2,"cursor":"c","a":1}"#);
        assert!(
            s.copy_object_without(&mut out, &["_meta", "cursor"])
                .is_none(),
            "a after b"
        );
        out.clear();
        let mut s = Scanner::new(r#"{"_meta":{"z":1.5},"a":2,"cursor":"\u0063","b":1}"#);
        assert!(
            s.copy_object_without(&mut out, &["_meta", "cursor"])
                .is_some()
        );
        assert_eq!(out, r#"{"a":2,"b":1}"#);
    }

    type Members = Vec<(String, String)>;

    /// What capturing the `frame` member of `line` reads: whether the line passed, its members,
    /// and the frame's members as captured; next to what the plain scan and the walk over the
    /// frame's own text give.
    fn captured_and_walked(line: &str) -> (bool, bool, Option<Members>, Option<Members>) {
        let mut captured = Captured::default();
        let (mut frame, mut plain_frame) = (None, None);
        let capturing = Scanner::new(line).members_capturing("frame", &mut captured, |k, v| {
            if k == "frame" && frame.is_none() {
                frame = Some(v);
            }
            Some(())
        });
        let plain = Scanner::new(line).members(|k, v| {
            if k == "frame" && plain_frame.is_none() {
                plain_frame = Some(v);
            }
            Some(())
        });
        assert_eq!(frame, plain_frame);
        let Some(frame) = frame else {
            return (capturing.is_some(), plain.is_some(), None, None);
        };
        let start = frame.as_ptr() as usize - line.as_ptr() as usize;
        let owned = |(k, v): (&str, &str)| (k.to_owned(), v.to_owned());
        let got = captured
            .members_at(line, start..start + frame.len())
            .and_then(|m| m.map(|member| member.map(owned)).collect());
        let mut walked = Vec::new();
        let walk = crate::json::token::for_each_member(frame, |k, v| {
            walked.push(owned((k, v)));
            Some(())
        });
        (
            capturing.is_some(),
            plain.is_some(),
            got,
            walk.map(|()| walked),
        )
    }

    #[test]
    fn captured_members_are_the_walked_ones() {
        for line in [
            r#"{"type":"frame","frame":{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":"}"}]}}}"#,
            r#"{"frame" : { "k\u0065y" : "v" , "id" : -1.5e3 } , "t":1}"#,
            r#"{"frame":{},"frame":{"a":1}}"#,
            r#"{"frame":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9}}"#,
            r#"{"frame":[1,2]}"#,
            r#"{"frame":{"a":1}"#,
        ] {
            let (capturing, plain, got, walked) = captured_and_walked(line);
            assert_eq!(capturing, plain, "{line}");
            if capturing && got.is_some() {
                assert_eq!(got, walked, "{line}");
            }
        }
        let (_, _, got, _) = captured_and_walked(
            r#"{"frame":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9}}"#,
        );
        assert!(got.is_none(), "more members than kept: nothing captured");
        let (_, _, got, walked) = captured_and_walked(r#"{"t":1,"frame":{"id":1}}"#);
        assert_eq!(got, walked);
        assert!(got.is_some());
    }

    proptest! {
        /// Capturing a nested object's members while validating accepts what the plain scan
        /// accepts and captures what walking the object afterwards finds.
        #[test]
        fn capturing_agrees_with_walking(v in json(), pretty in any::<bool>(), junk in "[\\[\\]{}\",:0-9a-z .\\\\-]{0,3}", cut in any::<prop::sample::Index>()) {
            let frame = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            let line = format!(r#"{{"type":"frame","frame":{frame},"t":1}}"#);
            let at = cut.index(line.len() + 1);
            let damaged = match (line.get(..at), line.get(at..)) {
                (Some(a), Some(b)) => format!("{a}{junk}{b}"),
                _ => line.clone(),
            };
            for text in [&line, &damaged] {
                let (capturing, plain, got, walked) = captured_and_walked(text);
                prop_assert_eq!(capturing, plain, "{}", text);
                if capturing && got.is_some() {
                    prop_assert_eq!(got, walked, "{}", text);
                }
            }
        }

        /// The scanner accepts exactly the JSON the parser accepts, and a canonical copy it makes
        /// is the canonical text.
        #[test]
        fn scanner_agrees_with_the_parser(v in json(), pretty in any::<bool>(), cut in any::<prop::sample::Index>(), junk in "[\\[\\]{}\",:0-9a-z .\\\\-]{0,3}") {
            let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            let (valid, copied) = scan(&text);
            prop_assert!(valid, "valid JSON refused: {}", text);
            if let Some(copied) = copied {
                prop_assert_eq!(copied, canon_text(&text));
            }
            // A damaged text is refused whenever the parser refuses it.
            let chars: Vec<char> = text.chars().collect();
            let at = cut.index(chars.len() + 1);
            let damaged: String = chars[..at]
                .iter()
                .chain(junk.chars().collect::<Vec<_>>().iter())
                .chain(chars.get(at + 1..).unwrap_or_default())
                .collect();
            let parsed = serde_json::from_str::<Value>(&damaged).is_ok();
            let (valid, copied) = scan(&damaged);
            prop_assert_eq!(valid, parsed, "scanner and parser disagree on {:?}", damaged);
            if let Some(copied) = copied {
                prop_assert_eq!(copied, canon_text(&damaged));
            }
        }

        /// Integers and plain strings under sorted keys — what clients send — take the fast path,
        /// keys beyond the BMP included.
        #[test]
        fn canonical_shapes_are_copied(
            m in prop::collection::vec(("[a-z_é\u{E000}\u{F8FF}\u{FFFF}\u{10000}\u{1F600}]{1,6}", prop_oneof![
                (-999_999_999_999_999i64..=999_999_999_999_999).prop_map(Value::from),
                "[^\"\\\\\\x00-\\x1f]{0,12}".prop_map(Value::String),
                any::<bool>().prop_map(Value::Bool),
            ]), 0..6)
        ) {
            // Members in canonical order, without repeats: what a canonical client writes.
            let mut m = m;
            m.sort_by(|a, b| key_cmp(&a.0, &b.0));
            m.dedup_by(|a, b| a.0 == b.0);
            let v = Value::Object(m.into_iter().collect());
            let text = v.to_string();
            let (valid, copied) = scan(&text);
            prop_assert!(valid);
            prop_assert_eq!(copied, Some(canon_text(&text)));
        }
    }
}
