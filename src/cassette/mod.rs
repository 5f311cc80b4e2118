//! The cassette: an open, append-only JSONL transcript of one or more MCP sessions.
//!
//! Line 1 is the [`Header`]; every later non-blank line is an [`Entry`]. Both keep every member
//! they were read with — in order, as raw JSON text — so a tool that rewrites a cassette (redact,
//! passthrough append) carries fields and entry types from newer writers through untouched.
//! Typed accessors validate the members this build needs and name the field when one is wrong.
//!
//! Format versions 1 and 2 are read; version 2 is written.

pub mod comparison;
pub mod consistency;
mod entry;
mod header;
mod object;
mod parallel;
mod read_ahead;
mod reader;
pub mod volatile;
mod writer;

use std::fmt;
use std::path::{Path, PathBuf};

pub use entry::{Chunk, Entry, EntryKind};
pub use header::{Header, Redaction, Transport};
pub use object::RawObject;
pub use parallel::map_entries;
pub use read_ahead::for_each_entry;
#[cfg(test)]
pub(crate) use reader::frame_as_read;
pub use reader::{Existing, Reader, looks_like_cassette};
pub use writer::Writer;

/// Format versions this build reads.
pub const SUPPORTED_VERSIONS: [u64; 2] = [1, 2];
/// The version this build writes.
pub const WRITE_VERSION: u64 = 2;
/// Longest line the reader accepts. A cassette line is one JSON-RPC message; this bounds the
/// memory one hostile or corrupt line can take while still fitting any real MCP answer.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Which way a frame travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Client to server.
    C2s,
    /// Server to client.
    S2c,
}

impl Dir {
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::C2s => "c2s",
            Dir::S2c => "s2c",
        }
    }

    pub fn parse(s: &str) -> Option<Dir> {
        match s {
            "c2s" => Some(Dir::C2s),
            "s2c" => Some(Dir::S2c),
            _ => None,
        }
    }

    pub fn opposite(self) -> Dir {
        match self {
            Dir::C2s => Dir::S2c,
            Dir::S2c => Dir::C2s,
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a cassette could not be read. Every variant names the file, and the line where one applies.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    #[error("failed to read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Cassette is empty: {}", path.display())]
    Empty { path: PathBuf },
    #[error("Cassette has no header line: {}", path.display())]
    NoHeader { path: PathBuf },
    #[error(
        "Cassette version {version} was recorded with a newer mcp-cassette (this build supports 1, 2). Upgrade mcp-cassette to read {}",
        path.display()
    )]
    NewerVersion { version: u64, path: PathBuf },
    #[error("Unsupported cassette version {version} (supported: 1, 2)")]
    UnsupportedVersion { version: String, path: PathBuf },
    #[error("{}:{line}: line is longer than {limit} bytes; a cassette line holds one message", path.display())]
    LineTooLong {
        path: PathBuf,
        line: u64,
        limit: usize,
    },
    #[error("{}:{line}: line is not valid UTF-8", path.display())]
    NotUtf8 { path: PathBuf, line: u64 },
    #[error("{}:{line}: not valid JSON ({detail}){hint}", path.display())]
    BadJson {
        path: PathBuf,
        line: u64,
        detail: String,
        hint: &'static str,
    },
    #[error("{}:{line}: field \"{field}\" {problem}", path.display())]
    BadField {
        path: PathBuf,
        line: u64,
        field: String,
        problem: String,
    },
}

impl CassetteError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            CassetteError::Io { path, .. }
            | CassetteError::Empty { path }
            | CassetteError::NoHeader { path }
            | CassetteError::NewerVersion { path, .. }
            | CassetteError::UnsupportedVersion { path, .. }
            | CassetteError::LineTooLong { path, .. }
            | CassetteError::NotUtf8 { path, .. }
            | CassetteError::BadJson { path, .. }
            | CassetteError::BadField { path, .. } => path,
        }
    }
}

/// Where a field problem was found, for building [`CassetteError::BadField`].
#[derive(Debug, Clone)]
pub struct Location<'a> {
    pub path: &'a Path,
    pub line: u64,
}

impl Location<'_> {
    pub fn bad_field(&self, field: &str, problem: impl Into<String>) -> CassetteError {
        CassetteError::BadField {
            path: self.path.to_owned(),
            line: self.line,
            field: field.to_owned(),
            problem: problem.into(),
        }
    }
}

/// The stderr warning for an entry type this build does not know (it is skipped, not fatal).
pub fn unknown_entry_warning(kind: &str, path: &Path) -> String {
    format!(
        "mcp-cassette: skipping unknown cassette entry type \"{kind}\" in {} (recorded with a newer mcp-cassette?)",
        path.display()
    )
}

/// Current time as the header's `startedAt` spells it: ISO-8601 UTC with milliseconds.
pub fn now_iso() -> String {
    format_iso(time::OffsetDateTime::now_utc())
}

/// Formats a UTC instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_iso(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

/// Parses a header `startedAt` (RFC 3339 / ISO-8601 with offset).
pub fn parse_iso(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        let t = parse_iso("2026-08-15T14:02:44.380Z").unwrap();
        assert_eq!(format_iso(t), "2026-08-15T14:02:44.380Z");
        assert!(parse_iso("2026-08-16T00:00:00Z").is_some());
        assert!(parse_iso("yesterday").is_none());
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{Dir, Entry, Header, Reader, Transport, Writer};
    use crate::jsonrpc::Frame;

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(".*", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_frame_round_trips_byte_for_byte(params in arb_json(), id in any::<u32>(), t in any::<u32>()) {
            let frame = Frame::from_value(&json!({"jsonrpc":"2.0","id":id,"method":"m","params":params})).unwrap();
            let mut out = Vec::new();
            let mut w = Writer::new(&mut out);
            w.write_header(&Header::new("r", "2026-01-01T00:00:00.000Z", Transport::Stdio)).unwrap();
            w.write_entry(&Entry::new_frame(u64::from(t), Dir::C2s, frame.clone())).unwrap();
            let text = String::from_utf8(out).unwrap();
            prop_assert_eq!(text.lines().count(), 2);
            let mut r = Reader::new(text.as_bytes(), std::path::Path::new("p")).unwrap();
            let e = r.next().unwrap().unwrap();
            prop_assert_eq!(e.frame().unwrap().text(), frame.text());
            prop_assert_eq!(e.t, u64::from(t));
        }

        #[test]
        fn frame_parse_never_panics(s in ".*") {
            let _ = Frame::parse(&s);
            let _ = Frame::from_valid_json(&s);
        }

        #[test]
        fn reader_fails_cleanly_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(r) = Reader::new(&bytes[..], std::path::Path::new("p")) {
                for e in r {
                    let _ = e;
                }
            }
        }
    }
}
