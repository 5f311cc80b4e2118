//! JSON-RPC 2.0 frames as they travel: the exact text received plus a parsed view of the envelope.
//!
//! A line is a [`Frame`] only when it is a JSON object carrying `"jsonrpc":"2.0"`; anything else
//! (a log line on stdout, a batch array, JSON without the version tag, invalid UTF-8 or non-JSON
//! text) is a [`Line::Raw`] value, never an error, because a proxy must carry it on untouched and
//! a cassette must be able to hold it.
//!
//! The view is deliberately shallow: `params`, `result` and `error` stay raw JSON text so that a
//! frame is forwarded and replayed byte for byte; callers parse a copy only when they must look
//! inside.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use smol_str::SmolStr;

use crate::json::{js_number_text, token};

/// A JSON-RPC id. `1` and `"1"` are different ids, so the type is kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// A numeric id, kept as its JSON text (`1` and `1.0` are different texts but see [`Id::key`]).
    /// Held inline up to 23 bytes (every id a client counts up to), so reading a frame's id
    /// allocates nothing: recording and replay read one per frame.
    Number(SmolStr),
    /// A string id.
    Str(String),
    /// `null` (only legal on error responses to unparseable requests).
    Null,
}

impl Id {
    /// Parses an id from its JSON text; `None` when it is not a number, string or null.
    pub fn from_raw(raw: &RawValue) -> Option<Id> {
        Id::from_json(raw.get())
    }

    /// Parses an id from JSON text; `None` when it is not a number, string or null.
    pub fn from_json(text: &str) -> Option<Id> {
        let text = trimmed(text);
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str::<String>(text).ok().map(Id::Str),
            b'n' if text == "null" => Some(Id::Null),
            b'-' | b'0'..=b'9' => Some(Id::Number(SmolStr::new(text))),
            _ => None,
        }
    }

    /// Builds an id from a parsed JSON value.
    pub fn from_value(value: &serde_json::Value) -> Option<Id> {
        match value {
            serde_json::Value::Number(n) => Some(Id::Number(SmolStr::new(n.to_string()))),
            serde_json::Value::String(s) => Some(Id::Str(s.clone())),
            serde_json::Value::Null => Some(Id::Null),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Id::Number(text) => serde_json::from_str(text).unwrap_or(serde_json::Value::Null),
            Id::Str(s) => serde_json::Value::String(s.clone()),
            Id::Null => serde_json::Value::Null,
        }
    }

    /// The id as JSON text, ready to splice into a frame.
    pub fn to_json(&self) -> String {
        match self {
            Id::Number(text) => text.to_string(),
            Id::Str(s) => serde_json::Value::String(s.clone()).to_string(),
            Id::Null => "null".to_owned(),
        }
    }

    /// The reference's `String(id)`: the key the replay index pairs requests and responses by.
    pub fn key(&self) -> String {
        match self {
            Id::Number(text) => js_number_text(text),
            Id::Str(s) => s.clone(),
            Id::Null => "null".to_owned(),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// What a frame is, decided from which envelope members it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// `method` and `id`.
    Request,
    /// `method` without `id`.
    Notification,
    /// `result` without `method`.
    Response,
    /// `error` without `method`.
    ErrorResponse,
    /// Tagged `"jsonrpc":"2.0"` but none of the shapes above; still carried as a frame.
    Unclassified,
}

impl FrameKind {
    /// A response, with a result or an error.
    pub fn is_response(self) -> bool {
        matches!(self, FrameKind::Response | FrameKind::ErrorResponse)
    }

    /// The kind a frame with these envelope members has; every reader (validating, shallow,
    /// scanned) decides through this one table.
    fn of(method: bool, id: bool, result: bool, error: bool) -> Self {
        match (method, id, result, error) {
            (true, true, _, _) => Self::Request,
            (true, false, _, _) => Self::Notification,
            (false, _, true, false) => Self::Response,
            (false, _, _, true) => Self::ErrorResponse,
            _ => Self::Unclassified,
        }
    }
}

/// One JSON-RPC message: the exact text and the parsed envelope.
///
/// The text is a span of a shared string, so a frame read from a cassette line points into
/// that line instead of copying it, and cloning a frame copies no text.
#[derive(Debug, Clone)]
pub struct Frame {
    source: Arc<str>,
    span: Range<usize>,
    kind: FrameKind,
    method: Option<Method>,
    id: Option<Id>,
    layout: Option<Layout>,
}

/// Where a frame's `id` value and its body (the value of its one `params` or `result` member)
/// stand in its text, noted while its members were read, so that whoever looks for them next
/// (replay keeps every recorded answer ready to re-address) need not walk the frame again.
/// Frames read the slow way, and frames with both a `params` and a `result` member or either
/// twice, have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    id: Option<(u32, u32)>,
    body: Option<(u32, u32)>,
    /// Whether the body is a `params` member (else a `result`).
    params: bool,
}

impl Layout {
    /// The top-level `id` value's span in the frame's text.
    pub fn id(&self) -> Option<Range<usize>> {
        self.id.map(|(a, b)| a as usize..b as usize)
    }

    /// The body's span in the frame's text.
    pub fn body(&self) -> Option<Range<usize>> {
        self.body.map(|(a, b)| a as usize..b as usize)
    }

    /// The span of the `params` value in the frame's text, when the body is one.
    pub fn params(&self) -> Option<Range<usize>> {
        self.body().filter(|_| self.params)
    }

    /// The layout of the frame `text` whose `id` and body values (slices of `text`) are these.
    fn of(text: &str, id: Option<&str>, body: &Body<'_>) -> Option<Layout> {
        if body.count > 1 {
            return None;
        }
        let span = |value: &str| {
            let start = (value.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
            Some((
                u32::try_from(start).ok()?,
                u32::try_from(start + value.len()).ok()?,
            ))
        };
        Some(Layout {
            id: match id {
                Some(value) => Some(span(value)?),
                None => None,
            },
            body: match body.value {
                Some(value) => Some(span(value)?),
                None => None,
            },
            params: body.params,
        })
    }
}

/// A frame's body as its members are read: the value of its last `params` or `result` member,
/// and how many there were (a [`Layout`] is kept only for one).
#[derive(Default)]
struct Body<'t> {
    value: Option<&'t str>,
    params: bool,
    count: u8,
}

impl<'t> Body<'t> {
    fn note(&mut self, value: &'t str, params: bool) {
        self.value = Some(value);
        self.params = params;
        self.count = self.count.saturating_add(1);
    }
}

/// A frame's method: where its text stands in the frame's shared string when written without
/// escapes (as nearly every method is: no allocation per frame read), else decoded.
#[derive(Debug, Clone)]
enum Method {
    At(Range<usize>),
    Decoded(Box<str>),
}

impl Method {
    /// The method whose JSON string `raw` (quotes included, no escapes) is a slice of `source`.
    fn at(source: &str, raw: &str) -> Method {
        let start = raw.as_ptr() as usize - source.as_ptr() as usize + 1;
        Method::At(start..start + raw.len() - 2)
    }
}

/// A line of a JSON-RPC stream: a frame, or anything else kept verbatim.
#[derive(Debug, Clone)]
pub enum Line {
    Frame(Frame),
    Raw(String),
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is present is `Some`, even when it is `null` (`"id":null` is an id).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// `text` without surrounding white space, as [`str::trim`] gives it. Nearly every frame and id
/// begins and ends with a byte that is no white space, and then the text is returned as it is:
/// `trim` decoded a character from each end first, a hundred instructions a frame on the
/// recorder's capture thread (a test holds the two equal).
fn trimmed(text: &str) -> &str {
    // An ASCII byte other than `\t`..=`\r` and the space starts or ends no white space
    // character (`char::is_whitespace`: those six, U+0085 and code points beyond ASCII).
    let plain =
        |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !matches!(b, b'\t'..=b'\r' | b' '));
    let bytes = text.as_bytes();
    if plain(bytes.first()) && plain(bytes.last()) {
        text
    } else {
        text.trim()
    }
}

impl Frame {
    /// Parses a frame from text; `None` when the text is not a JSON-RPC 2.0 object.
    /// A leading byte-order mark and surrounding whitespace are tolerated.
    pub fn parse(text: &str) -> Option<Frame> {
        let text = trimmed(text.strip_prefix('\u{feff}').unwrap_or(text));
        if !text.starts_with('{') {
            return None;
        }
        match Frame::scan(text) {
            Some(decided) => decided,
            None => Frame::parse_slow(text),
        }
    }

    /// [`Frame::parse`] in one pass of the crate's strict scanner, which validates the text and
    /// hands over the top-level members as it goes. `None` when it cannot decide as serde_json
    /// would (a key with escapes, an escaped `jsonrpc` or `method`, a repeated envelope member,
    /// deep nesting, or text the scanner refuses); `Some(answer)` otherwise. A property test
    /// holds the answers equal to [`Frame::parse_slow`]'s.
    fn scan(text: &str) -> Option<Option<Frame>> {
        let (mut jsonrpc, mut id, mut method) = (None, None, None);
        let (mut result, mut error) = (false, false);
        let mut body = Body::default();
        crate::json::Scanner::new(text).members(|key, value| {
            let first = match key {
                "jsonrpc" => jsonrpc.replace(value).is_none(),
                "id" => id.replace(value).is_none(),
                "method" => method.replace(value).is_none(),
                "params" => {
                    body.note(value, true);
                    true
                }
                "result" => {
                    body.note(value, false);
                    !std::mem::replace(&mut result, true)
                }
                "error" => !std::mem::replace(&mut error, true),
                _ => true,
            };
            // serde refuses a repeated field; let it say so.
            first.then_some(())
        })?;
        // An escaped `jsonrpc` or `method` is decoded by serde: leave those to it.
        if [jsonrpc, method]
            .iter()
            .flatten()
            .any(|raw| raw.starts_with('"') && raw.contains('\\'))
        {
            return None;
        }
        if jsonrpc != Some("\"2.0\"") {
            return Some(None);
        }
        let method = match method {
            None | Some("null") => None,
            Some(raw) if raw.starts_with('"') => Some(Method::at(text, raw)),
            // serde refuses a `method` that is not a string.
            Some(_) => return Some(None),
        };
        let layout = Layout::of(text, id, &body);
        let id = match id {
            Some(raw) => match Id::from_json(raw) {
                Some(id) => Some(id),
                None => return Some(None),
            },
            None => None,
        };
        let kind = FrameKind::of(method.is_some(), id.is_some(), result, error);
        Some(Some(Frame {
            span: 0..text.len(),
            source: text.into(),
            kind,
            method,
            id,
            layout,
        }))
    }

    /// [`Frame::parse`] by serde_json: what decides whenever the scanner cannot.
    fn parse_slow(text: &str) -> Option<Frame> {
        let env: Envelope<'_> = serde_json::from_str(text).ok()?;
        if env.jsonrpc.as_deref() != Some("2.0") {
            return None;
        }
        let id = match env.id {
            Some(raw) => Some(Id::from_raw(raw)?),
            None => None,
        };
        let kind = FrameKind::of(
            env.method.is_some(),
            id.is_some(),
            env.result.is_some(),
            env.error.is_some(),
        );
        Some(Frame {
            span: 0..text.len(),
            source: text.into(),
            kind,
            method: env.method.map(|m| Method::Decoded(m.into())),
            id,
            layout: None,
        })
    }

    /// Parses a frame from text that is already known to be valid JSON (a member of a cassette
    /// line the reader validated). Only the top level is looked at, without re-validating
    /// nested values, which makes reading a cassette one validating pass instead of two.
    /// Falls back to [`Frame::parse`] for anything unusual (escaped keys, odd spellings).
    pub fn from_valid_json(text: &str) -> Option<Frame> {
        let source: Arc<str> = text.into();
        Frame::from_members(&source, 0..source.len(), |text, each| {
            token::for_each_member(text, each)
        })
    }

    /// As [`Frame::from_valid_json`] for the text at `span` of `source` (a cassette line),
    /// which the frame then shares instead of copying, with the frame's members as the reader
    /// captured them while validating the line: not walked a second time. Falls back to walking
    /// them when nothing was captured at `span`.
    pub(crate) fn from_captured(
        source: &Arc<str>,
        span: Range<usize>,
        captured: &crate::json::Captured,
    ) -> Option<Frame> {
        Frame::from_members(source, span, |text, each| {
            // The capture is of the member's value exactly, which `text` is (trimmed, as the
            // reader's spans are already).
            let start = text.as_ptr() as usize - source.as_ptr() as usize;
            match captured.members_at(source, start..start + text.len()) {
                Some(members) => {
                    for member in members {
                        let (key, value) = member?;
                        each(key, value)?;
                    }
                    Some(())
                }
                None => token::for_each_member(text, each),
            }
        })
    }

    /// The frame at `span` of `source` (valid JSON), its top-level members read by `walk` over
    /// its text.
    fn from_members<'s>(
        source: &'s Arc<str>,
        span: Range<usize>,
        walk: impl FnOnce(&'s str, &mut dyn FnMut(&'s str, &'s str) -> Option<()>) -> Option<()>,
    ) -> Option<Frame> {
        let text = source.get(span.clone())?;
        let trimmed = text.trim_start();
        let start = span.start + (text.len() - trimmed.len());
        let text = trimmed.trim_end();
        let span = start..start + text.len();
        let mut jsonrpc_ok = false;
        let (mut id, mut method, mut result, mut error) = (None, None, false, false);
        // Envelope members seen so far: a repeated one is refused by the validating path, so
        // it must not be read here either (docs/fuzzing.md, "Bugs found").
        let mut seen = [false; 5];
        let mut body = Body::default();
        let shaped = walk(text, &mut |key, value| {
            // One match on the key: each envelope member is noted under its slot, whose second
            // sight ends the walk (what was noted then no longer matters).
            let slot = match key {
                "jsonrpc" => {
                    jsonrpc_ok = value == "\"2.0\"";
                    0
                }
                "id" => {
                    id = Some(value);
                    1
                }
                "method" => {
                    method = Some(value);
                    2
                }
                "result" => {
                    result = true;
                    body.note(value, false);
                    3
                }
                "error" => {
                    error = true;
                    4
                }
                "params" => {
                    body.note(value, true);
                    return Some(());
                }
                // An escaped key might spell one of the above: take the validating path.
                k if k.contains('\\') => return None,
                _ => return Some(()),
            };
            (!std::mem::replace(&mut seen[slot], true)).then_some(())
        });
        if shaped.is_none() || !jsonrpc_ok {
            return Frame::parse(text);
        }
        let layout = Layout::of(text, id, &body);
        let id = match id {
            Some(raw) => Some(Id::from_json(raw)?),
            None => None,
        };
        let method = match method {
            // serde reads a `null` member into `None`, as if it were absent: so must this.
            None | Some("null") => None,
            Some(raw) if raw.len() >= 2 && !raw.contains('\\') && raw.starts_with('"') => {
                Some(Method::at(source, raw))
            }
            Some(raw) => Some(Method::Decoded(
                serde_json::from_str::<String>(raw).ok()?.into(),
            )),
        };
        let kind = FrameKind::of(method.is_some(), id.is_some(), result, error);
        Some(Frame {
            source: Arc::clone(source),
            span,
            kind,
            method,
            id,
            layout,
        })
    }

    /// Builds a frame from a JSON value (serialised compactly).
    pub fn from_value(value: &serde_json::Value) -> Option<Frame> {
        Frame::parse(&value.to_string())
    }

    /// The shared string the frame's text is a span of, and that span: a holder that keeps
    /// the text (a cassette entry) shares it instead of copying it.
    pub(crate) fn shared_text(&self) -> (&Arc<str>, Range<usize>) {
        (&self.source, self.span.clone())
    }

    /// The exact text of the frame (as received, minus a BOM and surrounding whitespace).
    pub fn text(&self) -> &str {
        self.source.get(self.span.clone()).unwrap_or_default()
    }

    pub fn kind(&self) -> FrameKind {
        self.kind
    }

    pub fn method(&self) -> Option<&str> {
        match self.method.as_ref()? {
            Method::At(span) => self.source.get(span.clone()),
            Method::Decoded(text) => Some(text),
        }
    }

    /// Where the method's name (inside its quotes) stands in [`Frame::text`], when it is written
    /// there without escapes.
    pub fn method_span(&self) -> Option<Range<usize>> {
        match self.method.as_ref()? {
            Method::At(span) => Some(
                span.start.checked_sub(self.span.start)?..span.end.checked_sub(self.span.start)?,
            ),
            Method::Decoded(_) => None,
        }
    }

    pub fn id(&self) -> Option<&Id> {
        self.id.as_ref()
    }

    /// Where the `id` and the body stand in [`Frame::text`], when the frame's reader noted it.
    pub fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// True for requests and notifications.
    pub fn is_message(&self) -> bool {
        matches!(self.kind, FrameKind::Request | FrameKind::Notification)
    }

    /// True for results and error responses.
    pub fn is_response(&self) -> bool {
        self.kind.is_response()
    }

    /// Parses the whole frame into a JSON value (a copy: the text stays as it was).
    pub fn value(&self) -> serde_json::Value {
        // The text parsed as JSON once already, so this fails only on a number a double cannot
        // hold (read as JavaScript reads it: `Infinity`, written back as `null`) or on a depth
        // the view never walked; an empty object is a safe stand-in for a frame no caller can
        // inspect.
        serde_json::from_str(self.text())
            .ok()
            .or_else(|| {
                crate::json::number::with_infinities_as_null(self.text())
                    .and_then(|text| serde_json::from_str(&text).ok())
            })
            .unwrap_or_else(|| serde_json::json!({}))
    }

    /// The frame with its id replaced, every other byte kept where possible.
    pub fn with_id(&self, id: &Id) -> Frame {
        let mut value = self.value();
        if let Some(obj) = value.as_object_mut() {
            obj.insert("id".to_owned(), id.to_value());
        }
        let text = value.to_string();
        Frame {
            span: 0..text.len(),
            source: text.into(),
            kind: self.kind,
            // The text is new, so the method cannot point into it.
            method: self.method().map(|m| Method::Decoded(m.into())),
            id: Some(id.clone()),
            layout: None,
        }
    }
}

/// Classifies one line of a stream (without its line terminator).
pub fn classify(line: &str) -> Line {
    match Frame::parse(line) {
        Some(frame) => Line::Frame(frame),
        None => Line::Raw(line.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Strategy;

    use super::*;

    #[test]
    fn ids_keep_their_type() {
        let a = Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        let b = Frame::parse(r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#).unwrap();
        assert_ne!(a.id(), b.id());
        assert_eq!(a.id().unwrap().key(), b.id().unwrap().key());
        assert_eq!(a.kind(), FrameKind::Request);
    }

    #[test]
    fn kinds() {
        let n = Frame::parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(n.unwrap().kind(), FrameKind::Notification);
        let r = Frame::parse(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#).unwrap();
        assert_eq!(r.kind(), FrameKind::Response);
        let e = Frame::parse(r#"{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}"#);
        assert_eq!(e.unwrap().kind(), FrameKind::ErrorResponse);
    }

    #[test]
    fn a_number_past_a_double_reads_as_null_not_as_an_empty_frame() {
        let f =
            Frame::parse(r#"{"jsonrpc":"2.0","id":1,"result":{"n":1e400,"token":"abcdefghij"}}"#)
                .unwrap();
        assert_eq!(
            f.value(),
            serde_json::json!({"jsonrpc":"2.0","id":1,"result":{"n":null,"token":"abcdefghij"}})
        );
    }

    #[test]
    fn non_frames_are_raw() {
        for line in [
            "starting up",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            "{\"id\":1,\"method\":\"ping\"}",
            "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\",",
            "",
        ] {
            assert!(matches!(classify(line), Line::Raw(_)), "{line}");
        }
    }

    #[test]
    fn bom_and_crlf_tolerated_and_text_kept() {
        let f = Frame::parse("\u{feff}{\"jsonrpc\":\"2.0\", \"id\":1, \"result\":{\"a\":1.0}}\r")
            .unwrap();
        assert_eq!(
            f.text(),
            "{\"jsonrpc\":\"2.0\", \"id\":1, \"result\":{\"a\":1.0}}"
        );
    }

    #[test]
    fn shallow_path_agrees_with_validating_path() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":[1,{"b":"}\"]"}]}}"#,
            r#"{ "jsonrpc" : "2.0" , "id" : "x" , "result" : { } }"#,
            r#"{"jsonrpc":"2.0","method":"notifications/\u0078","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":-1.5e3,"result":null}"#,
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonr\u0070c":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","result":1,"result":2}"#,
            r#"{"jsonrpc":"2.0","method":null,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
        ] {
            let a = Frame::parse(text);
            let b = Frame::from_valid_json(text);
            assert_eq!(
                a.as_ref()
                    .map(|f| (f.kind(), f.id().cloned(), f.method().map(str::to_owned))),
                b.as_ref()
                    .map(|f| (f.kind(), f.id().cloned(), f.method().map(str::to_owned))),
                "{text}"
            );
        }
    }

    /// The frame `text` (valid JSON) as the cassette reader reads it from a line: members
    /// captured by the validating pass over the line, then the frame built from them.
    fn captured_in_a_line(text: &str) -> Option<Frame> {
        let line = format!(r#"{{"type":"frame","t":1,"dir":"c2s","frame":{text}}}"#);
        let mut captured = crate::json::Captured::default();
        let object =
            crate::cassette::RawObject::parse_shared_capturing(line.into(), "frame", &mut captured)
                .ok()?;
        let (source, span) = object.shared_member("frame")?;
        Frame::from_captured(source, span, &captured)
    }

    /// [`Frame::parse`] with serde_json deciding every time.
    fn slow(text: &str) -> Option<Frame> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text).trim();
        if !text.starts_with('{') {
            return None;
        }
        Frame::parse_slow(text)
    }

    fn view(f: Option<Frame>) -> Option<(FrameKind, Option<Id>, Option<String>, String)> {
        f.map(|f| {
            (
                f.kind(),
                f.id().cloned(),
                f.method().map(str::to_owned),
                f.text().to_owned(),
            )
        })
    }

    #[test]
    fn scanned_frames_read_as_serde_reads_them() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":[1,{"b":"}\"]"}]}}"#,
            r#"{ "jsonrpc" : "2.0" , "id" : "x" , "result" : { } }"#,
            r#"{"jsonrpc":"2.0","method":"notifications/\u0078","params":[]}"#,
            r#"{"jsonrpc":"\u0032.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":-1.5e3,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":1}"#,
            r#"{"jsonrpc":"2.0","method":null,"result":1}"#,
            r#"{"jsonrpc":2,"method":"m"}"#,
            r#"{"jsonrpc":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonr\u0070c":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
        ] {
            assert_eq!(view(Frame::parse(text)), view(slow(text)), "{text}");
        }
    }

    proptest::proptest! {
        /// The fast path of `trimmed` gives what `str::trim` gives, whatever white space (ASCII,
        /// U+0085, U+00A0, the wide spaces, vertical tab) or other text is at either end.
        #[test]
        fn trimmed_is_trim(text in "[ \t\n\x0B\x0C\r\x1C\x1F{}a\u{85}\u{a0}\u{2028}\u{3000}\u{feff}é]{0,8}") {
            proptest::prop_assert_eq!(trimmed(&text), text.trim());
        }

        /// Envelopes of every shape (members present or not, of any type, repeated, escaped),
        /// whole and damaged: the scanner's answer is serde's.
        #[test]
        fn scanned_frames_agree_with_serde(
            members in proptest::collection::vec((
                proptest::prop_oneof![
                    proptest::strategy::Just("jsonrpc"), proptest::strategy::Just("id"),
                    proptest::strategy::Just("method"), proptest::strategy::Just("result"),
                    proptest::strategy::Just("error"), proptest::strategy::Just("params"),
                    proptest::strategy::Just("jsonr\\u0070c"), proptest::strategy::Just("x"),
                ],
                proptest::prop_oneof![
                    proptest::strategy::Just("\"2.0\"".to_owned()),
                    proptest::strategy::Just("\"\\u0032.0\"".to_owned()),
                    proptest::strategy::Just("null".to_owned()),
                    proptest::strategy::Just("{}".to_owned()),
                    (0i64..100).prop_map(|n| n.to_string()),
                    "[a-z/\\\\]{0,6}".prop_map(|s| format!("\"{s}\"")),
                    crate::json::canonical::tests::json().prop_map(|v| v.to_string()),
                ],
            ), 0..10),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            junk in "[\\[\\]{}\",:0-9a-z .\\\\-]{0,2}",
            damage in proptest::bool::ANY,
        ) {
            let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            let mut text = format!("{{{}}}", body.join(","));
            if damage {
                let chars: Vec<char> = text.chars().collect();
                let at = cut.index(chars.len() + 1);
                text = chars[..at]
                    .iter()
                    .copied()
                    .chain(junk.chars())
                    .chain(chars.get(at + 1..).unwrap_or_default().iter().copied())
                    .collect();
            }
            proptest::prop_assert_eq!(view(Frame::parse(&text)), view(slow(&text)), "{}", text);
            // The cassette reader hands the shallow path only text it validated: on valid JSON
            // it must decide as the validating path does (a `"method":null` once did not).
            if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                proptest::prop_assert_eq!(
                    view(Frame::from_valid_json(&text)),
                    view(Frame::parse(&text)),
                    "{}",
                    text
                );
                // So must a frame read from a cassette line, its members captured while the
                // line was validated (more than the eight kept, escaped keys, repeats).
                proptest::prop_assert_eq!(
                    view(captured_in_a_line(&text)),
                    view(Frame::parse(&text)),
                    "{}",
                    text
                );
            }
        }
    }

    #[test]
    fn rekey() {
        let f = Frame::parse(r#"{"jsonrpc":"2.0","id":7,"result":{"b":1,"a":2}}"#).unwrap();
        let g = f.with_id(&Id::Str("x".into()));
        assert_eq!(
            g.text(),
            r#"{"jsonrpc":"2.0","id":"x","result":{"b":1,"a":2}}"#
        );
    }
}
