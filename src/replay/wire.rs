//! Frames as replay reads and writes them: incoming client lines parsed in one pass, and recorded
//! frames sent back byte for byte except for the one or two values that must change (the response
//! id, a subscription tag), which are spliced into the recorded text rather than re-serialised.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::fingerprint::{PartSpans, scan_params_into};
use crate::json::{Scanner, token};
use crate::jsonrpc::{Frame, Id, Layout};
use crate::protocol::SUBSCRIPTION_ID_KEY;

/// A request from the client: it expects an answer.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: Id,
    pub method: String,
    /// The params exactly as sent (absent or `null` is `None`).
    pub params: Option<Box<RawValue>>,
}

impl Request {
    /// A request built from parsed parts.
    pub fn new(id: Id, method: &str, params: Option<&Value>) -> Request {
        Request {
            id,
            method: method.to_owned(),
            params: params
                .filter(|p| !p.is_null())
                .and_then(|p| serde_json::value::to_raw_value(p).ok()),
        }
    }

    /// The params as a tree; an error names why they cannot be one (they nest too deep).
    pub fn params_value(&self) -> Result<Option<Value>, String> {
        match &self.params {
            None => Ok(None),
            Some(raw) => serde_json::from_str::<Value>(raw.get())
                .map(|v| (!v.is_null()).then_some(v))
                .map_err(|e| format!("its params cannot be read: {e}")),
        }
    }
}

/// One message from the client, classified.
#[derive(Debug, Clone)]
pub enum Message {
    Request(Request),
    /// A notification.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response the client sent (to a server-initiated request replay never sends).
    Response,
}

/// Why a client line is not a message replay can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// Not JSON at all (JSON-RPC -32700).
    Parse(String),
    /// JSON, but not a JSON-RPC 2.0 message (JSON-RPC -32600); carries the id when one was legible.
    Invalid { detail: String, id: Option<Id> },
}

impl Malformed {
    pub fn code(&self) -> i64 {
        match self {
            Malformed::Parse(_) => -32700,
            Malformed::Invalid { .. } => -32600,
        }
    }

    pub fn detail(&self) -> &str {
        match self {
            Malformed::Parse(d) | Malformed::Invalid { detail: d, .. } => d,
        }
    }

    /// The JSON-RPC error answer for this line.
    pub fn answer(&self) -> String {
        let id = match self {
            Malformed::Invalid { id: Some(id), .. } => id.to_json(),
            _ => "null".to_owned(),
        };
        let message = match self {
            Malformed::Parse(d) => format!("mcp-cassette replay: parse error: {d}"),
            Malformed::Invalid { detail, .. } => {
                format!("mcp-cassette replay: invalid request: {detail}")
            }
        };
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{},\"message\":{}}}}}",
            self.code(),
            Value::String(message)
        )
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.detail())
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    /// `Some` whenever the member is there, `null` included (a plain `Option` reads `null` as
    /// absent, which would make `"id": null` a notification).
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Parses one line from the client (without its terminator), in a single pass over the text.
pub fn parse_message(line: &str) -> Result<Message, Malformed> {
    let text = line.strip_prefix('\u{feff}').unwrap_or(line).trim();
    if !text.starts_with('{') {
        return Err(match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) if text.starts_with('[') => Malformed::Invalid {
                detail: "a batch (JSON array) is not a message replay answers; send one JSON-RPC object per line".to_owned(),
                id: None,
            },
            Ok(_) => Malformed::Invalid {
                detail: "not a JSON object".to_owned(),
                id: None,
            },
            Err(e) => Malformed::Parse(e.to_string()),
        });
    }
    let env: Envelope<'_> =
        serde_json::from_str(text).map_err(|e| Malformed::Parse(e.to_string()))?;
    let id = match env.id {
        None => None,
        Some(raw) => Some(Id::from_raw(raw).ok_or_else(|| Malformed::Invalid {
            detail: "\"id\" must be a string, a number or null".to_owned(),
            id: None,
        })?),
    };
    let legible = id.clone();
    let invalid = move |detail: &str| Malformed::Invalid {
        detail: detail.to_owned(),
        id: legible.clone(),
    };
    let tagged = env
        .jsonrpc
        .and_then(|raw| serde_json::from_str::<Cow<'_, str>>(raw.get()).ok())
        .is_some_and(|v| v == "2.0");
    if !tagged {
        return Err(invalid("\"jsonrpc\" must be \"2.0\""));
    }
    let method = match env.method {
        None => None,
        Some(raw) => Some(
            serde_json::from_str::<String>(raw.get())
                .map_err(|_| invalid("\"method\" must be a string"))?,
        ),
    };
    match (method, id) {
        // JSON-RPC 2.0: a request's id is a string or a number; `null` is kept for errors about
        // requests whose id could not be read (docs/replay.md, "Malformed client lines").
        (Some(_), Some(Id::Null)) => Err(invalid(
            "a request's \"id\" must be a string or a number, not null",
        )),
        (Some(method), Some(id)) => Ok(Message::Request(Request {
            id,
            method,
            params: env.params.map(RawValue::to_owned),
        })),
        (Some(method), None) => Ok(Message::Notification {
            method,
            params: env.params.and_then(|p| serde_json::from_str(p.get()).ok()),
        }),
        (None, _) if env.result.is_some() || env.error.is_some() => Ok(Message::Response),
        (None, _) => Err(invalid(
            "a message needs a \"method\" (request or notification) or a \"result\"/\"error\" (response)",
        )),
    }
}

/// A request read in place from its line: what the hot path needs, nothing allocated.
#[derive(Debug, Clone, Copy)]
pub struct Quick<'a> {
    /// The id's JSON text, exactly as sent.
    pub id: &'a str,
    pub method: &'a str,
    /// The params' JSON text (`None` when absent or `null`).
    pub params: Option<&'a str>,
    /// Whether the request's fingerprint was computed on the way (see [`quick_request`]).
    pub fingerprinted: bool,
    /// Where the fingerprint's parts were read in the line, when it was computed.
    pub parts: PartSpans,
}

/// Reads a well-formed request in place, validating the whole line; `None` for anything else,
/// and for the rare shapes the scanner leaves to the parser (escapes in the method or in a
/// member name, a member given twice, nesting deeper than the scanner follows): [`parse_message`]
/// then classifies the line, errors included.
///
/// When the method comes before the params (as every SDK writes them) and `fingerprint_for`
/// accepts it, the request's fingerprint is computed into `fp` in the same pass, if the params
/// are in canonical shape ([`scan_params_into`]); [`Quick::fingerprinted`] says so.
pub fn quick_request<'a>(
    line: &'a str,
    fp: &mut String,
    fingerprint_for: impl Fn(&str) -> bool,
) -> Option<Quick<'a>> {
    let mut scan = Scanner::new(line);
    if !scan.eat(b'{') {
        return None;
    }
    let (mut jsonrpc, mut id, mut method, mut params) = (false, None, None, None);
    let mut fingerprinted = false;
    let mut parts = PartSpans::default();
    if !scan.eat(b'}') {
        loop {
            let key = scan.plain_str()?;
            if !scan.eat(b':') {
                return None;
            }
            scan.peek()?;
            let start = scan.pos();
            let seen = match key {
                "jsonrpc" => std::mem::replace(&mut jsonrpc, scan.plain_str()? == "2.0"),
                "method" => method.replace(scan.plain_str()?).is_some(),
                "id" => {
                    scan.skip()?;
                    id.replace(&line[start..scan.pos()]).is_some()
                }
                "params" => {
                    fingerprinted = false;
                    if let Some(m) = method.filter(|m| fingerprint_for(m)) {
                        fp.clear();
                        let mut ahead = scan.clone();
                        if scan_params_into(m, &mut ahead, fp, &mut parts).is_some() {
                            scan = ahead;
                            fingerprinted = true;
                        }
                    }
                    if !fingerprinted {
                        scan.skip()?;
                    }
                    params.replace(&line[start..scan.pos()]).is_some()
                }
                _ => {
                    scan.skip()?;
                    false
                }
            };
            if seen || (key == "jsonrpc" && !jsonrpc) {
                return None;
            }
            if scan.eat(b'}') {
                break;
            }
            if !scan.eat(b',') {
                return None;
            }
        }
    }
    if !jsonrpc || !scan.at_end() {
        return None;
    }
    let id: &str = id?;
    if !matches!(id.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9')) {
        return None;
    }
    Some(Quick {
        id,
        method: method?,
        params: params.filter(|p| *p != "null"),
        fingerprinted,
        parts,
    })
}

/// A frame to send: recorded text, with at most one value spliced in, or text built here.
#[derive(Debug, Clone)]
pub enum Outbound {
    /// Exactly as recorded.
    Verbatim(Arc<str>),
    /// As recorded, with `span` replaced by `value` (JSON text).
    Spliced {
        text: Arc<str>,
        span: Range<usize>,
        value: SpliceValue,
    },
    /// Built or rewritten here.
    Owned(String),
}

/// The JSON text spliced into a recorded frame: an id or a subscription tag, nearly always short
/// enough to be kept inline, so that answering a request allocates nothing for it.
#[derive(Debug, Clone)]
pub enum SpliceValue {
    Inline { len: u8, bytes: [u8; 22] },
    Heap(Box<str>),
}

impl SpliceValue {
    pub fn as_str(&self) -> &str {
        match self {
            // Copied whole from a `str`, so always UTF-8.
            SpliceValue::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            SpliceValue::Heap(text) => text,
        }
    }
}

impl From<&str> for SpliceValue {
    fn from(text: &str) -> SpliceValue {
        let mut bytes = [0u8; 22];
        match (bytes.get_mut(..text.len()), u8::try_from(text.len())) {
            (Some(head), Ok(len)) => {
                head.copy_from_slice(text.as_bytes());
                SpliceValue::Inline { len, bytes }
            }
            _ => SpliceValue::Heap(text.into()),
        }
    }
}

impl From<String> for SpliceValue {
    fn from(text: String) -> SpliceValue {
        SpliceValue::from(text.as_str())
    }
}

impl Outbound {
    /// Writes the frame and its terminating newline.
    pub fn write_line(&self, out: &mut impl Write) -> io::Result<()> {
        match self {
            Outbound::Verbatim(t) => out.write_all(t.as_bytes())?,
            Outbound::Spliced { text, span, value } => {
                out.write_all(&text.as_bytes()[..span.start])?;
                out.write_all(value.as_str().as_bytes())?;
                out.write_all(&text.as_bytes()[span.end..])?;
            }
            Outbound::Owned(s) => out.write_all(s.as_bytes())?,
        }
        out.write_all(b"\n")
    }

    /// The frame's text (without newline).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Outbound::Verbatim(t) => Cow::Borrowed(t),
            Outbound::Spliced { text, span, value } => {
                let mut s = String::with_capacity(text.len() + value.as_str().len());
                s.push_str(&text[..span.start]);
                s.push_str(value.as_str());
                s.push_str(&text[span.end..]);
                Cow::Owned(s)
            }
            Outbound::Owned(s) => Cow::Borrowed(s),
        }
    }
}

/// Where the values replay may rewrite sit inside one recorded frame's text. Kept small: the
/// index holds one per recorded frame.
#[derive(Debug, Clone, Default)]
pub struct Spans {
    id: Option<(u32, u32)>,
    tag: Option<Box<(u32, u32, Id)>>,
    has_meta: bool,
}

impl Spans {
    /// The top-level `id` value.
    pub fn id(&self) -> Option<Range<usize>> {
        self.id.map(|(a, b)| a as usize..b as usize)
    }

    /// The subscription tag (`_meta["io.modelcontextprotocol/subscriptionId"]`) inside `params`
    /// or `result`, with its value.
    pub fn tag(&self) -> Option<(Range<usize>, &Id)> {
        self.tag
            .as_deref()
            .map(|(a, b, id)| (*a as usize..*b as usize, id))
    }

    /// Whether `params._meta` / `result._meta` is an object (a tag may be added there).
    pub fn has_meta(&self) -> bool {
        self.has_meta
    }
}

fn compact(range: Range<usize>) -> Option<(u32, u32)> {
    Some((
        u32::try_from(range.start).ok()?,
        u32::try_from(range.end).ok()?,
    ))
}

/// Finds [`Spans`] in a frame's text (valid JSON, as every frame's is). Values nested too deep
/// or malformed yield no span.
pub fn find_spans(text: &str) -> Spans {
    spans_in_place(text).unwrap_or_else(|| spans_parsed(text))
}

/// The `_meta` key as written without escapes, searched for in bodies (built once).
static META_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"_meta\""));

/// [`find_spans`] read in place by the tokenizer, without a parse: `None` when a key has escapes
/// (it might spell one of the keys looked for) or the text is not shaped as the tokenizer
/// expects, and the parser then decides. A property test holds the two equal.
fn spans_in_place(text: &str) -> Option<Spans> {
    let mut spans = Spans::default();
    token::for_each_member(text, |key, value| note_member(&mut spans, text, key, value))?;
    Some(spans)
}

/// [`find_spans`] for a frame whose reader noted where its `id` and body stand (see
/// [`Layout`]): only those two members are looked at, and the body only when it may hold a
/// `_meta`. The other members cannot change the spans (a key with escapes sends the reader the
/// slow way, which notes no layout), so the answer is [`find_spans`]'s, as a property test holds.
pub fn frame_spans(frame: &Frame) -> Spans {
    let text = frame.text();
    let in_layout = |layout: Layout| {
        let mut spans = Spans::default();
        if let Some(id) = layout.id() {
            note_member(&mut spans, text, "id", text.get(id)?)?;
        }
        if let Some(body) = layout.body() {
            // `params` and `result` are read alike (see `note_member`).
            note_member(&mut spans, text, "result", text.get(body)?)?;
        }
        Some(spans)
    };
    frame
        .layout()
        .and_then(in_layout)
        .unwrap_or_else(|| find_spans(text))
}

/// What top-level member `key` (its value `value`, a slice of `text`) adds to a frame's spans;
/// `None` when the tokenizer declines it and the parser must decide.
fn note_member(spans: &mut Spans, text: &str, key: &str, value: &str) -> Option<()> {
    if key.contains('\\') {
        return None;
    }
    let at = |value: &str| {
        let start = value.as_ptr() as usize - text.as_ptr() as usize;
        start..start + value.len()
    };
    match key {
        "id" => spans.id = compact(at(value)),
        "params" | "result" if value.starts_with('{') => {
            // Nearly every body has no `_meta` key: a vectorised search says so without
            // walking the body's members (a key written with escapes has a backslash, and
            // is walked, as is any body holding one).
            if memchr::memchr(b'\\', value.as_bytes()).is_none()
                && META_KEY.find(value.as_bytes()).is_none()
            {
                return Some(());
            }
            let Some(meta) = last_member(value, "_meta")?.filter(|m| m.starts_with('{')) else {
                return Some(());
            };
            let tag = last_member(meta, SUBSCRIPTION_ID_KEY)?;
            spans.has_meta = true;
            if let Some(tag) = tag {
                let id = match tag.as_bytes().first() {
                    Some(b'"' | b'-' | b'0'..=b'9') => Id::from_json(tag),
                    _ => None,
                };
                if let (Some((a, b)), Some(id)) = (compact(at(tag)), id) {
                    spans.tag = Some(Box::new((a, b, id)));
                }
            }
        }
        _ => {}
    }
    Some(())
}

/// The value of the last member of `object` (valid JSON) named `key`; `None` when a key has
/// escapes or the tokenizer declines the text.
fn last_member<'a>(object: &'a str, key: &str) -> Option<Option<&'a str>> {
    let mut found = None;
    token::for_each_member(object, |k, v| {
        if k.contains('\\') {
            return None;
        }
        if k == key {
            found = Some(v);
        }
        Some(())
    })?;
    Some(found)
}

/// [`find_spans`] by the parser: what decides whenever the tokenizer declines.
fn spans_parsed(text: &str) -> Spans {
    let mut spans = Spans::default();
    let Some(top) = members(text) else {
        return spans;
    };
    for (key, raw) in &top {
        match key.as_ref() {
            "id" => spans.id = span_in(text, raw).and_then(compact),
            "params" | "result" => {
                let Some(inner) = members(raw.get()) else {
                    continue;
                };
                let Some((_, meta)) = inner.iter().rev().find(|(k, _)| k == "_meta") else {
                    continue;
                };
                let Some(meta_members) = members(meta.get()) else {
                    continue;
                };
                spans.has_meta = true;
                if let Some((_, tag)) = meta_members
                    .iter()
                    .rev()
                    .find(|(k, _)| k == SUBSCRIPTION_ID_KEY)
                {
                    let id = match tag.get().as_bytes().first() {
                        Some(b'"' | b'-' | b'0'..=b'9') => Id::from_raw(tag),
                        _ => None,
                    };
                    if let (Some((a, b)), Some(id)) = (span_in(text, tag).and_then(compact), id) {
                        spans.tag = Some(Box::new((a, b, id)));
                    }
                }
            }
            _ => {}
        }
    }
    spans
}

/// The JSON text of a frame's `params` (`None` when absent or not an object member).
pub fn params_text(frame: &str) -> Option<&str> {
    members(frame)?
        .into_iter()
        .rev()
        .find(|(k, _)| k == "params")
        .map(|(_, v)| v.get())
}

/// The byte range `raw` occupies in `text` (it must have been borrowed from `text`).
fn span_in(text: &str, raw: &RawValue) -> Option<Range<usize>> {
    let inner = raw.get();
    let start = (inner.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(inner.len())?;
    (text.get(start..end) == Some(inner)).then_some(start..end)
}

/// The members of a JSON object, values borrowed raw; `None` when `text` is not an object.
fn members(text: &str) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    struct Key<'a>(Cow<'a, str>);
    impl<'de> Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Borrowed(v)))
                }
                fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(v.to_owned())))
                }
            }
            d.deserialize_str(V)
        }
    }
    impl<'de> Deserialize<'de> for Members<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Members<'de>, A::Error> {
                    let mut out = Vec::new();
                    while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                        let v: &'de RawValue = map.next_value()?;
                        out.push((k, v));
                    }
                    Ok(Members(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Members<'_>>(text).ok().map(|m| m.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An object's text from members drawn from `keys` and `values`, keys possibly repeated,
    /// with optional white space.
    fn object_of(keys: Vec<&'static str>, values: BoxedStrategy<String>) -> BoxedStrategy<String> {
        let ws = prop_oneof![Just(""), Just(" "), Just("\n\t")];
        proptest::collection::vec((proptest::sample::select(keys), values, ws), 0..4)
            .prop_map(|members| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, v, w)| format!("{w}\"{k}\"{w}:{w}{v}{w}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            })
            .boxed()
    }

    /// Frames whose `params` or `result` may hold a `_meta` with a subscription tag, keys
    /// sometimes escaped (spelling a key looked for, or not) and repeated.
    fn frame_text() -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            Just("1".to_owned()),
            Just("-2.5e3".to_owned()),
            Just("\"s\\\"q\"".to_owned()),
            Just("null".to_owned()),
            Just("[1,{\"a\":[]}]".to_owned()),
            Just("{}".to_owned()),
        ]
        .boxed();
        let meta = object_of(
            vec![
                SUBSCRIPTION_ID_KEY,
                "io.modelcontextprotocol\\/subscriptionId",
                "a",
            ],
            leaf.clone(),
        );
        let inner = object_of(
            vec!["_meta", "_m\\u0065ta", "x"],
            prop_oneof![meta, leaf.clone()].boxed(),
        );
        object_of(
            vec!["id", "i\\u0064", "params", "result", "jsonrpc"],
            prop_oneof![inner, leaf].boxed(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn spans_read_in_place_are_the_parsed_ones(text in frame_text()) {
            prop_assume!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
            if let Some(fast) = spans_in_place(&text) {
                prop_assert_eq!(format!("{fast:?}"), format!("{:?}", spans_parsed(&text)));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        /// However a frame was read (scanned, walked as valid JSON, or captured by the cassette
        /// reader while it validated the line), the spans its layout gives are the ones found by
        /// reading its text.
        #[test]
        fn spans_from_a_frames_layout_are_the_found_ones(text in frame_text(), pad in 0usize..2) {
            let text = format!("{{\"jsonrpc\":\"2.0\",{}", text.strip_prefix('{').unwrap_or(&text))
                .replace("\"2.0\",}", "\"2.0\"}");
            prop_assume!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
            let expected = format!("{:?}", find_spans(&text));
            let captured = crate::cassette::frame_as_read(&format!("{}{text}", " ".repeat(pad)));
            let frames = [Frame::parse(&text), Frame::from_valid_json(&text), captured];
            for frame in frames.iter().flatten() {
                prop_assert_eq!(frame.text(), text.as_str());
                prop_assert_eq!(&format!("{:?}", frame_spans(frame)), &expected);
            }
        }
    }

    #[test]
    fn a_frame_read_in_one_pass_keeps_its_layout() {
        let text = r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"a":1}}}"#;
        let layout = Frame::parse(text).and_then(|f| f.layout()).expect("layout");
        let read = crate::cassette::frame_as_read(text).and_then(|f| f.layout());
        assert_eq!(
            read,
            Some(layout),
            "the cassette reader notes the same layout"
        );
        assert_eq!(layout.id().map(|r| &text[r]), Some("7"));
        assert_eq!(
            layout.body().map(|r| &text[r]),
            Some(r#"{"_meta":{"a":1}}"#)
        );
        // Two bodies: no layout, and the spans are found by reading the text.
        let both = r#"{"jsonrpc":"2.0","id":7,"params":{},"result":{"_meta":{}}}"#;
        let frame = Frame::parse(both).expect("frame");
        assert_eq!(frame.layout(), None);
        assert!(frame_spans(&frame).has_meta());
    }

    #[test]
    fn spans_in_place_read_ids_tags_and_meta() {
        let key = SUBSCRIPTION_ID_KEY;
        let text =
            format!(r#"{{"jsonrpc":"2.0","id": "a","result":{{"x":1,"_meta":{{"{key}":7}}}}}}"#);
        let fast = spans_in_place(&text).expect("no escapes");
        assert_eq!(&text[fast.id().unwrap()], r#""a""#);
        let (range, id) = fast.tag().unwrap();
        assert_eq!((&text[range], id), ("7", &Id::Number("7".into())));
        assert!(fast.has_meta());
        assert!(
            spans_in_place(r#"{"i\u0064":1}"#).is_none(),
            "escaped keys go to the parser"
        );
    }

    #[test]
    fn requests_notifications_and_responses() {
        let m = parse_message(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#,
        )
        .unwrap();
        let Message::Request(r) = m else { panic!() };
        assert_eq!(r.id, Id::Number("7".into()));
        assert_eq!(r.method, "tools/call");
        assert!(matches!(
            parse_message(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification { .. })
        ));
        let null = parse_message(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap_err();
        assert_eq!(null.code(), -32600);
        assert!(
            null.answer()
                .starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#)
        );
        assert!(matches!(
            parse_message(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Message::Response)
        ));
    }

    #[test]
    fn malformed_lines() {
        assert_eq!(parse_message("{\"jsonrpc\":").unwrap_err().code(), -32700);
        assert_eq!(parse_message("hello").unwrap_err().code(), -32700);
        assert_eq!(parse_message("[1]").unwrap_err().code(), -32600);
        assert_eq!(parse_message("42").unwrap_err().code(), -32600);
        let e = parse_message(r#"{"id":3,"method":"x"}"#).unwrap_err();
        assert_eq!(e.code(), -32600);
        assert!(
            e.answer()
                .starts_with(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600"#)
        );
        assert_eq!(
            parse_message(r#"{"jsonrpc":"2.0","id":1,"method":5}"#)
                .unwrap_err()
                .code(),
            -32600
        );
        assert_eq!(
            parse_message(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#)
                .unwrap_err()
                .code(),
            -32600
        );
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{}1{}}}",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        // Too deep to build a tree from: the envelope reads, the params are refused where used.
        let Ok(Message::Request(r)) = parse_message(&deep) else {
            panic!()
        };
        assert!(r.params_value().is_err());
    }

    #[test]
    fn spans_and_splicing() {
        let text: Arc<str> = Arc::from(
            r#"{"result":{"a":1.0,"_meta":{"io.modelcontextprotocol/subscriptionId":"s1"}},"jsonrpc":"2.0","id":  42 }"#,
        );
        let spans = find_spans(&text);
        let id = spans.id().unwrap();
        assert_eq!(&text[id.clone()], "42");
        let (tag, tag_id) = spans.tag().unwrap();
        assert_eq!(&text[tag], "\"s1\"");
        assert_eq!(tag_id, &Id::Str("s1".into()));
        let out = Outbound::Spliced {
            text: text.clone(),
            span: id,
            value: "\"x\"".into(),
        };
        assert_eq!(
            out.text(),
            r#"{"result":{"a":1.0,"_meta":{"io.modelcontextprotocol/subscriptionId":"s1"}},"jsonrpc":"2.0","id":  "x" }"#
        );
        let mut buf = Vec::new();
        out.write_line(&mut buf).unwrap();
        assert!(buf.ends_with(b"}\n"));
    }
}
