//! A JSON object kept as its text plus the spans of its members.
//!
//! This is what lets a cassette line be read, one member changed, and written again with every
//! other byte of every other member exactly as it was — including members this build has never
//! heard of. Reading costs one validating pass and no allocation per member: members are
//! byte ranges into the line, and only a member that is set gets text of its own.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::json::Captured;

#[derive(Debug, Clone)]
enum Text {
    Span(Range<usize>),
    Owned(Box<str>),
    /// A constant: the keys and fixed values of an entry built in memory, which then cost no
    /// allocation.
    Static(&'static str),
    /// A span of another shared text: the frame an entry built in memory holds, shared with
    /// the frame instead of copied.
    Shared(Arc<str>, Range<usize>),
}

#[derive(Debug, Clone, Default)]
pub struct RawObject {
    /// Shared so that a frame read from this line can point into it instead of copying it. It
    /// may hold more than the object (a batch of lines read together, see
    /// [`RawObject::parse_line_capturing`]): the members' spans count from its start.
    source: Arc<str>,
    /// How long the object's own text is.
    len: usize,
    members: Vec<(Text, Text)>,
}

/// Collects the members of an object as spans of the text being parsed, straight from the
/// parser: one allocation per object, none per member.
struct Spans<'s> {
    source: &'s str,
}

impl Spans<'_> {
    fn of(&self, s: &str) -> Text {
        let base = self.source.as_ptr() as usize;
        let span = (s.as_ptr() as usize)
            .checked_sub(base)
            .filter(|start| start + s.len() <= self.source.len())
            .map(|start| start..start + s.len());
        // A key with escapes is decoded into a fresh string, which is not a span of the line.
        span.map_or_else(|| Text::Owned(s.into()), Text::Span)
    }
}

impl<'de> Visitor<'de> for Spans<'de> {
    type Value = Vec<(Text, Text)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(6);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let value: &'de RawValue = map.next_value()?;
            members.push((self.of(&key), self.of(value.get())));
        }
        Ok(members)
    }
}

/// The members of the object at `at` of `source`, as spans of `source`, read by the crate's
/// strict scanner in one pass; `None` when the scanner declines (a key with escapes, deep
/// nesting, or not an object at all), and the parser then decides. The scanner accepts only what
/// the parser accepts, and reports the same members, in the same order (a property test below
/// holds the two equal). What is captured of `nested` counts from the start of `source` too.
fn scan_members(
    source: &str,
    at: Range<usize>,
    nested: Option<(&str, &mut Captured)>,
) -> Option<Vec<(Text, Text)>> {
    let base = source.as_ptr() as usize;
    let span = |s: &str| {
        let start = s.as_ptr() as usize - base;
        start..start + s.len()
    };
    let mut members = Vec::with_capacity(6);
    let mut each = |key: &str, value: &str| {
        members.push((Text::Span(span(key)), Text::Span(span(value))));
        Some(())
    };
    // The scanner reads to the object's end and counts positions from the start of `source`.
    let upto = source.get(..at.end)?;
    let scanner = crate::json::Scanner::starting_at(upto, at.start);
    match nested {
        None => scanner.members(each)?,
        Some((key, captured)) => match frame_line_head(upto.get(at.start..)?) {
            Some((head, rest)) => {
                for (k, v) in head {
                    each(k, v)?;
                }
                crate::json::Scanner::starting_at(upto, at.start + rest)
                    .rest_capturing(key, captured, each)?
            }
            None => scanner.members_capturing(key, captured, each)?,
        },
    }
    Some(members)
}

/// How every writer (this tool's and the reference's) starts a frame line: its `type`, its `t`
/// (whole milliseconds) and its `dir`, in that order, compact.
const FRAME_HEAD: &str = r#"{"type":"frame","t":"#;

/// The first three members of a line that starts as [`FRAME_HEAD`] says, read by comparing
/// bytes rather than by the scanner (they are a third of a short line's scanning), and where
/// the next member's key starts; `None` for a line written any other way, which the scanner
/// reads whole. A property test holds the members equal to the scanner's.
fn frame_line_head(source: &str) -> Option<([(&str, &str); 3], usize)> {
    let after_t = source.strip_prefix(FRAME_HEAD)?;
    let digits = after_t.bytes().take_while(u8::is_ascii_digit).count();
    // A JSON integer: no leading zero but in `0` itself.
    if digits == 0 || (digits > 1 && after_t.starts_with('0')) {
        return None;
    }
    let t_end = FRAME_HEAD.len() + digits;
    let dir = source.get(t_end..)?;
    let dir_value = [r#","dir":"c2s","#, r#","dir":"s2c","#]
        .into_iter()
        .find(|d| dir.starts_with(d))?;
    // Each piece is a slice of `source` (the members are spans of it).
    let at = |start: usize, len: usize| source.get(start..start + len);
    let dir_at = t_end + 1;
    let head = [
        (at(2, 4)?, at(8, 7)?),
        (at(17, 1)?, at(FRAME_HEAD.len(), digits)?),
        (at(dir_at + 1, 3)?, at(dir_at + 6, 5)?),
    ];
    Some((head, t_end + dir_value.len()))
}

impl RawObject {
    pub fn new() -> RawObject {
        RawObject::default()
    }

    /// An empty object with room for `members` members.
    pub(super) fn with_capacity(members: usize) -> RawObject {
        RawObject {
            source: Arc::default(),
            len: 0,
            members: Vec::with_capacity(members),
        }
    }

    /// Parses one JSON object from text (validating all of it).
    pub fn parse(text: &str) -> serde_json::Result<RawObject> {
        RawObject::parse_shared(text.into())
    }

    /// As [`RawObject::parse`], keeping the given string as the backing text.
    pub fn parse_shared(source: Arc<str>) -> serde_json::Result<RawObject> {
        let at = 0..source.len();
        if let Some(members) = scan_members(&source, at.clone(), None) {
            return Ok(RawObject {
                len: source.len(),
                source,
                members,
            });
        }
        RawObject::parse_slow(&source, at)
    }

    /// As [`RawObject::parse_shared`], capturing the members of member `nested` (an object) on
    /// the way when the one validating pass reads the text (see [`Captured`]); `captured` says
    /// nothing when the parser decided.
    pub fn parse_shared_capturing(
        source: Arc<str>,
        nested: &str,
        captured: &mut Captured,
    ) -> serde_json::Result<RawObject> {
        let at = 0..source.len();
        RawObject::parse_line_capturing(&source, at, nested, captured)
    }

    /// As [`RawObject::parse_shared_capturing`] for the object at `at` of `source` (a line
    /// among the lines read with it), which the object then shares: no copy of its own text.
    /// `at` must start and end on character boundaries (a line's ends do).
    pub fn parse_line_capturing(
        source: &Arc<str>,
        at: Range<usize>,
        nested: &str,
        captured: &mut Captured,
    ) -> serde_json::Result<RawObject> {
        if let Some(members) = scan_members(source, at.clone(), Some((nested, &mut *captured))) {
            return Ok(RawObject {
                source: Arc::clone(source),
                len: at.len(),
                members,
            });
        }
        *captured = Captured::default();
        RawObject::parse_slow(source, at)
    }

    /// [`RawObject::parse_shared`] of the object at `at` of `source` by serde_json alone: what
    /// decides (and words the error) whenever the scanner declines.
    fn parse_slow(source: &Arc<str>, at: Range<usize>) -> serde_json::Result<RawObject> {
        let text = source.get(at.clone()).unwrap_or_default();
        let members = {
            let mut de = serde_json::Deserializer::from_str(text);
            let members = de.deserialize_map(Spans { source })?;
            de.end()?;
            members
        };
        Ok(RawObject {
            source: Arc::clone(source),
            len: at.len(),
            members,
        })
    }

    /// The backing text and the span of a member's value, when the value is still the text it
    /// was read as (not set since).
    pub fn shared_member(&self, key: &str) -> Option<(&Arc<str>, Range<usize>)> {
        let (_, value) = self.members.iter().find(|(k, _)| self.is_key(k, key))?;
        match value {
            Text::Span(span) => Some((&self.source, span.clone())),
            Text::Shared(source, span) => Some((source, span.clone())),
            Text::Owned(_) | Text::Static(_) => None,
        }
    }

    /// Whether a member's key is `key`: compared as bytes, which says the same as comparing the
    /// texts and spares the character-boundary checks of slicing (keys are looked up per entry).
    fn is_key(&self, t: &Text, key: &str) -> bool {
        let bytes = match t {
            Text::Span(r) => self.source.as_bytes().get(r.clone()),
            Text::Shared(source, r) => source.as_bytes().get(r.clone()),
            Text::Owned(s) => Some(s.as_bytes()),
            Text::Static(s) => Some(s.as_bytes()),
        };
        bytes.unwrap_or_default() == key.as_bytes()
    }

    fn text<'a>(&'a self, t: &'a Text) -> &'a str {
        match t {
            Text::Span(r) => self.source.get(r.clone()).unwrap_or_default(),
            Text::Owned(s) => s,
            Text::Static(s) => s,
            Text::Shared(source, r) => source.get(r.clone()).unwrap_or_default(),
        }
    }

    /// Appends a member whose key and JSON text are constants, without looking for an
    /// existing one: for building an entry in memory, member by member.
    pub(super) fn push_static(&mut self, key: &'static str, json: &'static str) {
        self.members.push((Text::Static(key), Text::Static(json)));
    }

    /// As [`RawObject::push_static`], for JSON text of its own.
    pub(super) fn push_owned(&mut self, key: &'static str, json: String) {
        self.members
            .push((Text::Static(key), Text::Owned(json.into())));
    }

    /// As [`RawObject::push_static`], for JSON text at `span` of a shared string, which the
    /// member then shares instead of copying.
    pub(super) fn push_shared(&mut self, key: &'static str, source: &Arc<str>, span: Range<usize>) {
        self.members
            .push((Text::Static(key), Text::Shared(Arc::clone(source), span)));
    }

    /// Length of the text the object was read from (0 for one built in memory): a cheap
    /// measure of how much memory it holds.
    pub fn source_len(&self) -> usize {
        self.len
    }

    /// The raw JSON text of a member.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|(k, _)| self.is_key(k, key))
            .map(|(_, v)| self.text(v))
    }

    /// Parses one member into a typed value; `None` when absent, `Some(Err)` when of the wrong shape.
    pub fn get_as<'a, T: Deserialize<'a>>(&'a self, key: &str) -> Option<serde_json::Result<T>> {
        self.get(key).map(serde_json::from_str)
    }

    /// Replaces a member in place, or appends it when absent. `json` must be valid JSON text.
    fn set_text(&mut self, key: &str, json: Box<str>) {
        let at = self.members.iter().position(|(k, _)| self.is_key(k, key));
        match at {
            Some(i) => self.members[i].1 = Text::Owned(json),
            None => self
                .members
                .push((Text::Owned(key.into()), Text::Owned(json))),
        }
    }

    /// Replaces or appends a member from raw JSON.
    pub fn set_raw(&mut self, key: &str, value: Box<RawValue>) {
        let text: Box<str> = value.into();
        self.set_text(key, text);
    }

    /// Replaces or appends a member from any serialisable value.
    pub fn set<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        if let Ok(json) = serde_json::to_string(value) {
            self.set_text(key, json.into());
        }
    }

    /// Replaces or appends a member given as JSON text that the caller knows to be valid
    /// (for instance the text of a parsed [`crate::jsonrpc::Frame`]).
    pub fn set_json(&mut self, key: &str, json: String) {
        self.set_text(key, json.into());
    }

    pub fn remove(&mut self, key: &str) -> Option<String> {
        let at = self.members.iter().position(|(k, _)| self.is_key(k, key))?;
        let (_, v) = self.members.remove(at);
        Some(self.text(&v).to_owned())
    }

    /// Members in order, as (key, raw JSON text).
    pub fn members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.members
            .iter()
            .map(|(k, v)| (self.text(k), self.text(v)))
    }

    /// Compact JSON text of the object, members in their order.
    pub fn to_json(&self) -> String {
        // The exact length when no key needs escapes: one allocation, no growing.
        let len = 2 + self
            .members
            .iter()
            .map(|(k, v)| self.text(k).len() + self.text(v).len() + 4)
            .sum::<usize>();
        let mut out = Vec::with_capacity(len);
        self.write_json(&mut out)
            .expect("writing to a Vec cannot fail");
        // Every piece written is valid UTF-8 text (spans of a `String`, or owned strings).
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes the compact JSON text of the object, as [`RawObject::to_json`] returns it,
    /// without building it in memory first.
    pub fn write_json<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        // The punctuation around a plain key goes out with it, `,"` before and `":` after: a
        // recorder writes every captured message through here, and each piece is a copy call.
        let mut before: &[u8] = b"{\"";
        for (k, v) in &self.members {
            let key = self.text(k);
            if key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
                out.write_all(before)?;
                out.write_all(key.as_bytes())?;
                out.write_all(b"\":")?;
            } else {
                out.write_all(&before[..1])?;
                serde_json::to_writer(&mut *out, key).map_err(std::io::Error::other)?;
                out.write_all(b":")?;
            }
            out.write_all(self.text(v).as_bytes())?;
            before = b",\"";
        }
        if self.members.is_empty() {
            out.write_all(b"{")?;
        }
        out.write_all(b"}")
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Deserialising from an arbitrary source cannot borrow spans; go through the text.
        let raw: Box<RawValue> = Deserialize::deserialize(deserializer)?;
        RawObject::parse(raw.get()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_lines_as_written_are_read_by_their_head() {
        let line = r#"{"type":"frame","t":35,"dir":"s2c","frame":{"jsonrpc":"2.0"}}"#;
        let (head, rest) = frame_line_head(line).expect("head");
        assert_eq!(
            head,
            [("type", "\"frame\""), ("t", "35"), ("dir", "\"s2c\"")]
        );
        assert_eq!(&line[rest..], r#""frame":{"jsonrpc":"2.0"}}"#);
        for other in [
            r#"{"type":"frame","t":035,"dir":"s2c","frame":{}}"#,
            r#"{"type":"frame","t":3.5,"dir":"s2c","frame":{}}"#,
            r#"{"type":"frame", "t":3,"dir":"s2c","frame":{}}"#,
            r#"{"type":"chunks","t":3,"dir":"s2c"}"#,
        ] {
            assert!(frame_line_head(other).is_none(), "{other}");
        }
    }

    #[test]
    fn keeps_unknown_members_and_bytes() {
        let text = r#"{"type":"frame","t":1,"future":{"x": [1.0, 2]},"frame":{"b":1,"a":2}}"#;
        let mut o = RawObject::parse(text).unwrap();
        assert_eq!(o.get("future").unwrap(), r#"{"x": [1.0, 2]}"#);
        o.set("t", &5);
        assert_eq!(
            o.to_json(),
            r#"{"type":"frame","t":5,"future":{"x": [1.0, 2]},"frame":{"b":1,"a":2}}"#
        );
        assert!(RawObject::parse("[1]").is_err());
        assert!(RawObject::parse("{\"a\":1").is_err());
    }

    fn members_of(o: &RawObject) -> Vec<(String, String)> {
        o.members()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    /// The scanner's reading of a line, and serde_json's: both accept or both refuse, with the
    /// same members.
    fn agree(text: &str) -> Result<(), String> {
        let fast = scan_members(text, 0..text.len(), None).map(|members| RawObject {
            source: text.into(),
            len: text.len(),
            members,
        });
        let slow = RawObject::parse_slow(&text.into(), 0..text.len());
        match (fast, slow) {
            (Some(f), Ok(s)) if members_of(&f) == members_of(&s) => Ok(()),
            (None, _) => Ok(()),
            (Some(f), Ok(s)) => Err(format!(
                "members differ on {text:?}: {:?} vs {:?}",
                members_of(&f),
                members_of(&s)
            )),
            (Some(_), Err(e)) => Err(format!(
                "scanner accepted what serde refused ({e}): {text:?}"
            )),
        }
    }

    #[test]
    fn scanner_reads_lines_as_serde_does() {
        for text in [
            r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"m"}}"#,
            r#" { "a" : [ 1 , 2 ] , "a" : null } "#,
            "{}",
            "{ }",
            r#"{"a":"\u00e9\n","b":-0.5e-3,"c":true,"d":{"x":[{}]}}"#,
        ] {
            assert!(scan_members(text, 0..text.len(), None).is_some(), "{text}");
            agree(text).unwrap();
        }
        // Declined: the parser decides.
        for text in [
            r#"{"a\u0062":1}"#,
            "[1]",
            "{\"a\":1",
            "{\"a\":1} x",
            "{\"a\":01}",
            "{\"a\":1,}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":1e999}",
            "",
        ] {
            assert!(
                scan_members(text, 0..text.len(), None).is_none(),
                "{text:?}"
            );
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert!(scan_members(&deep, 0..deep.len(), None).is_none());
        assert!(RawObject::parse(&deep).is_ok(), "the parser goes deeper");
    }

    proptest::proptest! {
        /// A frame line's head read by comparing bytes gives the members and the capture that
        /// the scanner gives reading the line whole, on heads written every way (and lines
        /// damaged after them).
        #[test]
        fn a_frame_lines_head_reads_as_the_scanner_reads_it(
            ty in proptest::sample::select(vec!["\"frame\"", "\"raw\"", "\"fr\\u0061me\""]),
            t in proptest::sample::select(vec!["0", "35", "007", "1.5", "-1", "", "1e3", "18446744073709551616"]),
            dir in proptest::sample::select(vec!["\"c2s\"", "\"s2c\"", "\"x\"", " \"c2s\""]),
            next in proptest::sample::select(vec![
                r#""frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
                r#""frame" : {"a":[1,{"b":2}]} , "frame":{}}"#,
                r#""x":1,"frame":{"k":"v"}}"#,
                r#""frame":[1]}"#,
                r#""frame":{"a":1}"#,
                r#""frame":{"a":1}} x"#,
                "}",
            ]),
        ) {
            let line = format!(r#"{{"type":{ty},"t":{t},"dir":{dir},{next}"#);
            let mut captured = Captured::default();
            let fast = scan_members(&line, 0..line.len(), Some(("frame", &mut captured))).map(|members| {
                members_of(&RawObject { source: line.as_str().into(), len: line.len(), members })
            });
            let fast = (fast, format!("{captured:?}"));
            let mut members = Vec::new();
            let whole = crate::json::Scanner::new(&line)
                .members_capturing("frame", &mut captured, |k, v| {
                    members.push((k.to_owned(), v.to_owned()));
                    Some(())
                })
                .map(|()| members);
            let whole = (whole, format!("{captured:?}"));
            proptest::prop_assert_eq!(&fast, &whole, "{}", line);

            // The same line among others read with it (as a batch of lines is): the same
            // members, the same error or none, and the capture at the same place in the line.
            let before = "{\"type\":\"x\"}\n";
            let batch: Arc<str> = format!("{before}{line}\n{{\"t\":1}}\n").into();
            let at = before.len()..before.len() + line.len();
            let mut in_batch = Captured::default();
            let object = RawObject::parse_line_capturing(&batch, at.clone(), "frame", &mut in_batch);
            let alone = RawObject::parse_shared_capturing(line.as_str().into(), "frame", &mut captured);
            match (&object, &alone) {
                (Ok(object), Ok(alone)) => {
                    proptest::prop_assert_eq!(members_of(object), members_of(alone));
                    proptest::prop_assert_eq!(object.source_len(), alone.source_len());
                    let shared = object.shared_member("frame").map(|(_, span)| span);
                    let own = alone.shared_member("frame").map(|(_, span)| span);
                    if let (Some(shared), Some(own)) = (shared, own) {
                        proptest::prop_assert_eq!(shared.start - at.start, own.start);
                        proptest::prop_assert_eq!(
                            in_batch.members_at(&batch, shared.clone()).map(|m| m.collect::<Vec<_>>()),
                            captured.members_at(&line, own.clone()).map(|m| m.collect::<Vec<_>>())
                        );
                    }
                }
                (Err(a), Err(b)) => proptest::prop_assert_eq!(a.to_string(), b.to_string()),
                _ => proptest::prop_assert!(false, "{:?} against {:?}", object.is_ok(), alone.is_ok()),
            }
        }

        /// On generated objects, spaced or not, and on damaged copies of them, the scanner never
        /// accepts what serde_json refuses and reads the same members when both accept.
        #[test]
        fn scanner_agrees_with_serde(
            v in crate::json::canonical::tests::json(),
            keys in proptest::collection::vec("[a-z\\\\\"é]{0,4}", 0..4),
            pretty in proptest::bool::ANY,
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            junk in "[\\[\\]{}\",:0-9a-z .\\\\u-]{0,3}",
        ) {
            let mut object = serde_json::Map::new();
            for (i, k) in keys.iter().enumerate() {
                object.insert(k.clone(), if i == 0 { v.clone() } else { serde_json::Value::from(i) });
            }
            object.insert("v".to_owned(), v);
            let value = serde_json::Value::Object(object);
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                value.to_string()
            };
            proptest::prop_assert!(scan_members(&text, 0..text.len(), None).is_some() || text.contains('\\'), "{}", text);
            agree(&text).map_err(proptest::test_runner::TestCaseError::fail)?;
            let chars: Vec<char> = text.chars().collect();
            let at = cut.index(chars.len() + 1);
            let damaged: String = chars[..at]
                .iter()
                .copied()
                .chain(junk.chars())
                .chain(chars.get(at + 1..).unwrap_or_default().iter().copied())
                .collect();
            agree(&damaged).map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }

    #[test]
    fn escaped_keys_and_spaces() {
        let mut o = RawObject::parse("{ \"a\\u0062\" : [ 1 ] , \"c\":\"d\" }").unwrap();
        assert_eq!(o.get("ab"), Some("[ 1 ]"));
        assert_eq!(o.to_json(), "{\"ab\":[ 1 ],\"c\":\"d\"}");
        assert_eq!(o.remove("c").as_deref(), Some("\"d\""));
    }

    proptest::proptest! {
        /// The object's text is what serde_json writes for the same members in the same order,
        /// whatever the keys hold (quotes, backslashes, control characters, other scripts) and
        /// however many members there are (none included).
        #[test]
        fn written_objects_are_serdes(
            members in proptest::collection::vec(("[a-z\"\\\u{1}\u{1f} é語]{0,6}", proptest::prelude::any::<i32>()), 0..5),
        ) {
            let mut object = RawObject::new();
            let mut map = serde_json::Map::new();
            for (key, value) in &members {
                object.set(key, value);
                map.insert(key.clone(), serde_json::json!(value));
            }
            let want = serde_json::Value::Object(map).to_string();
            proptest::prop_assert_eq!(object.to_json(), want);
        }
    }
}
