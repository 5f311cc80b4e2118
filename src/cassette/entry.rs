//! Entries: every line after the header.

use super::{CassetteError, Dir, Location, RawObject};
use crate::json::Captured;
use crate::jsonrpc::{Frame, Id};

/// One frame of a streamed (SSE) answer.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// Arrival offset of this chunk, in ms since the header's `startedAt`.
    pub t: u64,
    pub frame: Frame,
}

/// What an entry holds, validated.
#[derive(Debug, Clone)]
pub enum EntryKind {
    /// One JSON-RPC message.
    Frame(Frame),
    /// A line that was not a JSON-RPC frame, verbatim (after redaction).
    Raw(String),
    /// One streamed answer, whole: the request id it answers (absent for a standalone GET
    /// stream), how it was opened (`post`/`get`) and its frames.
    Chunks {
        id: Option<Id>,
        via_get: bool,
        chunks: Vec<Chunk>,
    },
    /// An entry type from a newer writer: skipped by readers, carried through by rewriters.
    Unknown(String),
}

/// A cassette entry: the validated view plus every member as it was read.
#[derive(Debug, Clone)]
pub struct Entry {
    object: RawObject,
    /// 1-based line number in the file it was read from (0 for entries built in memory).
    pub line: u64,
    pub t: u64,
    pub dir: Option<Dir>,
    pub kind: EntryKind,
}

impl Entry {
    /// A `frame` entry for a message just seen on the wire (`frame_json` must be one JSON object).
    pub fn new_frame(t: u64, dir: Dir, frame: Frame) -> Entry {
        // The members `set` would write, spelled directly: a recorder builds one of these per
        // frame, and the frame's text is shared with the frame rather than copied.
        let mut object = RawObject::with_capacity(4);
        object.push_static("type", "\"frame\"");
        object.push_owned("t", t.to_string());
        object.push_static(
            "dir",
            match dir {
                Dir::C2s => "\"c2s\"",
                Dir::S2c => "\"s2c\"",
            },
        );
        let (source, span) = frame.shared_text();
        object.push_shared("frame", source, span);
        Entry {
            object,
            line: 0,
            t,
            dir: Some(dir),
            kind: EntryKind::Frame(frame),
        }
    }

    /// A `raw` entry for a line that was not a JSON-RPC frame.
    pub fn new_raw(t: u64, dir: Dir, data: String) -> Entry {
        let mut object = RawObject::new();
        object.set("type", "raw");
        object.set("t", &t);
        object.set("dir", dir.as_str());
        object.set("data", &data);
        Entry {
            object,
            line: 0,
            t,
            dir: Some(dir),
            kind: EntryKind::Raw(data),
        }
    }

    /// A `chunks` entry for a streamed answer that just closed: `t` is when it opened, `id` the
    /// request it answers (none for a standalone GET stream, `via_get`), and each chunk keeps
    /// its own arrival time.
    pub fn new_chunks(
        t: u64,
        dir: Dir,
        id: Option<Id>,
        via_get: bool,
        chunks: Vec<Chunk>,
    ) -> Entry {
        let mut object = RawObject::new();
        object.set("type", "chunks");
        object.set("t", &t);
        object.set("dir", dir.as_str());
        if let Some(id) = &id {
            object.set_json("id", id.to_json());
        }
        if via_get {
            object.set("via", "get");
        }
        let mut list = String::from("[");
        for (i, chunk) in chunks.iter().enumerate() {
            if i > 0 {
                list.push(',');
            }
            list.push_str(&format!(
                "{{\"t\":{},\"frame\":{}}}",
                chunk.t,
                chunk.frame.text()
            ));
        }
        list.push(']');
        object.set_json("chunks", list);
        Entry {
            object,
            line: 0,
            t,
            dir: Some(dir),
            kind: EntryKind::Chunks {
                id,
                via_get,
                chunks,
            },
        }
    }

    /// Validates a parsed line; `frame` is what the reader captured of its `frame` member's
    /// members while validating it (see [`Frame::from_captured`]), or nothing.
    pub fn from_object(
        object: RawObject,
        frame: &Captured,
        at: &Location<'_>,
    ) -> Result<Entry, CassetteError> {
        let kind_name = match object.get("type").map(json_str) {
            Some(Some(k)) => k,
            Some(None) => return Err(at.bad_field("type", "must be a string")),
            None => return Err(at.bad_field("type", "is missing")),
        };
        let t = match object.get("t") {
            None => 0,
            Some(raw) => {
                offset(raw).ok_or_else(|| at.bad_field("t", "must be a number of milliseconds"))?
            }
        };
        let dir = || -> Result<Dir, CassetteError> {
            object
                .get("dir")
                .and_then(json_str)
                .and_then(|d| Dir::parse(&d))
                .ok_or_else(|| at.bad_field("dir", "must be \"c2s\" or \"s2c\""))
        };
        let (dir, kind) = match kind_name.as_ref() {
            "frame" => {
                let d = dir()?;
                // Looked up once on the way that succeeds: a frame line is most of a cassette.
                let Some(frame) = frame_member(&object, "frame", frame) else {
                    return Err(match object.get("frame") {
                        None => at.bad_field("frame", "is missing"),
                        Some(_) => at.bad_field("frame", "must be a JSON-RPC 2.0 object"),
                    });
                };
                (Some(d), EntryKind::Frame(frame))
            }
            "raw" => {
                let d = dir()?;
                let data = match object.get_as::<String>("data") {
                    Some(Ok(s)) => s,
                    _ => return Err(at.bad_field("data", "must be a string")),
                };
                (Some(d), EntryKind::Raw(data))
            }
            "chunks" => {
                let d = dir()?;
                let id = match object.get("id") {
                    None => None,
                    Some(raw) => Some(
                        Id::from_json(raw)
                            .ok_or_else(|| at.bad_field("id", "must be a string or a number"))?,
                    ),
                };
                let via_get = match object.get_as::<String>("via") {
                    None => false,
                    Some(Ok(v)) if v == "post" => false,
                    Some(Ok(v)) if v == "get" => true,
                    Some(_) => return Err(at.bad_field("via", "must be \"post\" or \"get\"")),
                };
                let list: Vec<&serde_json::value::RawValue> = match object
                    .get("chunks")
                    .map(serde_json::from_str::<Vec<&serde_json::value::RawValue>>)
                {
                    Some(Ok(list)) => list,
                    _ => {
                        return Err(
                            at.bad_field("chunks", "must be a list of {\"t\", \"frame\"} objects")
                        );
                    }
                };
                let mut chunks = Vec::with_capacity(list.len());
                for (i, raw) in list.into_iter().enumerate() {
                    let field = format!("chunks[{i}]");
                    let chunk = RawObject::parse(raw.get())
                        .map_err(|_| at.bad_field(&field, "must be an object"))?;
                    let t = chunk.get("t").and_then(offset).ok_or_else(|| {
                        at.bad_field(&format!("{field}.t"), "must be a number of milliseconds")
                    })?;
                    let frame =
                        frame_member(&chunk, "frame", &Captured::default()).ok_or_else(|| {
                            at.bad_field(&format!("{field}.frame"), "must be a JSON-RPC 2.0 object")
                        })?;
                    chunks.push(Chunk { t, frame });
                }
                (
                    Some(d),
                    EntryKind::Chunks {
                        id,
                        via_get,
                        chunks,
                    },
                )
            }
            other => (
                object
                    .get_as::<String>("dir")
                    .and_then(Result::ok)
                    .and_then(|d| Dir::parse(&d)),
                EntryKind::Unknown(other.to_owned()),
            ),
        };
        Ok(Entry {
            object,
            line: at.line,
            t,
            dir,
            kind,
        })
    }

    /// The `frame` of a frame entry.
    pub fn frame(&self) -> Option<&Frame> {
        match &self.kind {
            EntryKind::Frame(f) => Some(f),
            _ => None,
        }
    }

    /// Whether `origin:"live"` marks this entry as appended by passthrough.
    pub fn is_live(&self) -> bool {
        matches!(self.object.get_as::<String>("origin"), Some(Ok(o)) if o == "live")
    }

    /// Every member, as read or set.
    pub fn object(&self) -> &RawObject {
        &self.object
    }

    /// Sets `t` (e.g. shifting an appended session onto the file's timeline).
    pub fn set_t(&mut self, t: u64) {
        self.t = t;
        self.object.set("t", &t);
    }

    /// Replaces the frame of a frame entry, keeping every other member.
    pub fn set_frame(&mut self, frame: Frame) {
        self.object.set_json("frame", frame.text().to_owned());
        self.kind = EntryKind::Frame(frame);
    }

    /// Replaces the data of a raw entry.
    pub fn set_data(&mut self, data: String) {
        self.object.set("data", &data);
        self.kind = EntryKind::Raw(data);
    }

    /// Replaces the frames of a chunks entry (same count and order), keeping every other member
    /// of the entry and of each chunk.
    pub fn set_chunk_frames(&mut self, frames: Vec<Frame>) {
        let Some(list) = self
            .object
            .get_as::<Vec<RawObject>>("chunks")
            .and_then(Result::ok)
        else {
            return;
        };
        let mut rebuilt = Vec::with_capacity(list.len());
        let mut new_chunks = Vec::with_capacity(list.len());
        for (mut chunk, frame) in list.into_iter().zip(frames) {
            chunk.set_json("frame", frame.text().to_owned());
            let t = chunk.get("t").and_then(offset).unwrap_or(0);
            rebuilt.push(chunk.to_json());
            new_chunks.push(Chunk { t, frame });
        }
        self.object
            .set_json("chunks", format!("[{}]", rebuilt.join(",")));
        if let EntryKind::Chunks { chunks, .. } = &mut self.kind {
            *chunks = new_chunks;
        }
    }

    /// Sets any member (e.g. `origin`), raw.
    pub fn set_member<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        self.object.set(key, value);
    }

    /// The entry line, without its newline.
    pub fn to_line(&self) -> String {
        self.object.to_json()
    }

    /// Writes the entry line (without its newline), as [`Entry::to_line`] returns it.
    pub fn write_line<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        self.object.write_json(out)
    }
}

/// The frame held by member `key` of an object the reader validated, sharing the object's text
/// when the member is still as read (no copy), else parsed from the member's own text.
fn frame_member(object: &RawObject, key: &str, captured: &Captured) -> Option<Frame> {
    match object.shared_member(key) {
        Some((source, span)) => Frame::from_captured(source, span, captured),
        None => object.get(key).and_then(Frame::from_valid_json),
    }
}

/// The value of a JSON string, borrowed when it has no escapes. Read for an entry's `type` and
/// `dir`, a few bytes each, on every line: a byte loop finds a backslash there in a fraction of
/// what setting up a vectorised search costs.
fn json_str(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.bytes().any(|b| b == b'\\') {
        serde_json::from_str::<String>(raw)
            .ok()
            .map(std::borrow::Cow::Owned)
    } else {
        Some(std::borrow::Cow::Borrowed(inner))
    }
}

/// Reads a `t`: a non-negative number of milliseconds; fractions are floored.
fn offset(text: &str) -> Option<u64> {
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    let f: f64 = serde_json::from_str(text).ok()?;
    if f.is_finite() {
        Some(f.max(0.0).floor() as u64)
    } else {
        None
    }
}
