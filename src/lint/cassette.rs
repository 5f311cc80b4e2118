//! `lint <cassette>`: does the header agree with its own frames, are the header's newer fields
//! well formed, and did the recorded server hand the model an injection (docs/lint.md)?
//!
//! * **Header against frames** (severity error, decides the exit code): the contradictions of
//!   [`crate::cassette::consistency`] (a modern-era header over an `initialize` handshake, a
//!   `sessioned` flag or a standalone GET stream; a stdio header carrying a `url` or over
//!   `chunks` entries; an HTTP header carrying a spawn `command`).
//! * **Newer header fields** (warn, never gating): a malformed `volatile` list or declaration,
//!   a `redaction.configHash` that is not a sha256 hex digest.
//! * **Recorded output** (warn, never gating): every string under the `result` of an answer to
//!   `tools/call`, `tasks/get`, `tasks/result`, `resources/read` or `prompts/get`, down to depth
//!   12, read by the output rule set ([`super::lint_output_text`]: CAS-L001, L003, L006
//!   narrowed, L009, L010, L013, L017 narrowed), with redaction placeholders blanked and base64 under `blob`
//!   or `data` never decoded or read.
//!
//! Streaming: [`CassetteLinter`] takes one entry at a time and keeps only the ids of output
//! requests still waiting for an answer plus the findings, so memory does not grow with the
//! file. An answer's `result` is walked straight off its JSON text (validated when the line was
//! read) by the crate's JSON tokens, decoding only strings with escapes, never building a
//! `serde_json::Value`.
//!
//! Pairing (docs/lint.md): each client request registers its id (typed: `1` and `"1"` differ) with
//! its method; each server response — a frame of its own or inside a `chunks` entry — takes
//! the most recent request waiting under that id and clears it, since ids are reused across
//! the connections of one recording.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;
use std::ops::ControlFlow;

use serde::Serialize;

use super::Level;
use crate::cassette::consistency::{Observed, contradictions};
use crate::cassette::volatile::Declaration;
use crate::cassette::{CassetteError, Dir, Entry, EntryKind, Header, Reader, for_each_entry};
use crate::json::token;
use crate::jsonrpc::{Frame, FrameKind, Id};

/// The methods whose answers carry text written for the model to read.
pub const OUTPUT_METHODS: [&str; 5] = [
    "tools/call",
    "tasks/get",
    "tasks/result",
    "resources/read",
    "prompts/get",
];
/// Keys whose values are base64 by specification: never decoded, never read.
pub const UNSCANNED_KEYS: [&str; 2] = ["blob", "data"];
/// Deepest node under `result` (which is depth 0) whose strings are read.
pub const MAX_OUTPUT_DEPTH: usize = 12;

/// A finding about the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderFinding {
    pub rule: &'static str,
    /// `error` (decides the exit code) or `warn`.
    pub severity: Level,
    pub message: String,
}

/// A finding about text a recorded server returned. Always `warn`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutputFinding {
    pub rule: &'static str,
    pub severity: Level,
    /// The id of the answer (and so of the request it answers).
    #[serde(rename = "requestId", serialize_with = "id_or_null")]
    pub request_id: Option<Id>,
    /// The method of the request it answers.
    pub method: &'static str,
    /// JSON path from the frame root, e.g. `/result/content/0/text`.
    pub path: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
}

impl OutputFinding {
    /// `#<id>` as the text report prints it: the id as JavaScript's `String(id)`, or `?`.
    pub fn request_label(&self) -> String {
        match &self.request_id {
            None | Some(Id::Null) => "?".to_owned(),
            Some(id) => id.key(),
        }
    }
}

fn id_or_null<S: serde::Serializer>(id: &Option<Id>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => id.to_value().serialize(s),
        None => s.serialize_none(),
    }
}

/// Everything `lint <cassette>` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CassetteLint {
    /// Header errors first, then header warnings.
    pub header: Vec<HeaderFinding>,
    pub output: Vec<OutputFinding>,
}

impl CassetteLint {
    /// Header findings at error: the ones that decide the exit code.
    pub fn errors(&self) -> usize {
        self.header
            .iter()
            .filter(|f| f.severity == Level::Error)
            .count()
    }

    /// Everything reported at warn.
    pub fn warnings(&self) -> usize {
        self.header.len() - self.errors() + self.output.len()
    }

    /// No header contradiction.
    pub fn ok(&self) -> bool {
        self.errors() == 0
    }

    /// Whether the run passes the `--fail-on` gate: `Error` counts header contradictions only,
    /// `Warn` every finding, recorded-output ones included.
    pub fn passes(&self, fail_on: Level) -> bool {
        match fail_on {
            Level::Error => self.ok(),
            Level::Warn | Level::Info => self.ok() && self.warnings() == 0,
        }
    }
}

/// The entry-by-entry state of one lint run.
#[derive(Debug, Default)]
pub struct CassetteLinter {
    /// Typed id → index into [`OUTPUT_METHODS`], for output requests awaiting an answer.
    pending: HashMap<String, usize>,
    /// What the frames showed, for the header-versus-frames contradictions.
    observed: Observed,
    output: Vec<OutputFinding>,
}

/// `typeof id + ":" + String(id)`: the reference's pairing key.
fn typed_key(id: &Id) -> String {
    match id {
        // A plain integer is already spelled as JavaScript would print it; only other numbers
        // (`1.0`, `1e3`) need the conversion, which is worth skipping on every frame.
        Id::Number(text) if text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit()) => {
            format!("number:{text}")
        }
        Id::Number(_) => format!("number:{}", id.key()),
        Id::Str(s) => format!("string:{s}"),
        Id::Null => "object:null".to_owned(),
    }
}

impl CassetteLinter {
    pub fn new() -> CassetteLinter {
        CassetteLinter::default()
    }

    /// Takes the next entry of the cassette, in file order.
    pub fn entry(&mut self, entry: &Entry) {
        match &entry.kind {
            EntryKind::Frame(frame) => match entry.dir {
                Some(Dir::C2s) => self.client_frame(frame),
                Some(Dir::S2c) => self.server_frame(frame),
                None => {}
            },
            EntryKind::Chunks {
                via_get, chunks, ..
            } => {
                self.observed.chunks(*via_get);
                // A streamed answer is the same answer, delivered in pieces.
                for chunk in chunks {
                    self.server_frame(&chunk.frame);
                }
            }
            EntryKind::Raw(_) | EntryKind::Unknown(_) => {}
        }
    }

    fn client_frame(&mut self, frame: &Frame) {
        if frame.kind() != FrameKind::Request {
            return;
        }
        let (Some(method), Some(id)) = (frame.method(), frame.id()) else {
            return;
        };
        if method == "initialize" {
            self.observed.initialize = true;
        }
        let key = typed_key(id);
        // Only output requests are remembered; any other request under the same id is the
        // most recent one, so it clears the slot.
        match OUTPUT_METHODS.iter().position(|m| *m == method) {
            Some(at) => {
                self.pending.insert(key, at);
            }
            None => {
                self.pending.remove(&key);
            }
        }
    }

    fn server_frame(&mut self, frame: &Frame) {
        if !frame.is_response() {
            return;
        }
        let Some(id) = frame.id() else {
            return;
        };
        let Some(at) = self.pending.remove(&typed_key(id)) else {
            return;
        };
        if frame.kind() != FrameKind::Response {
            return;
        }
        let mut path = String::from("/result");
        let mut hits = Vec::new();
        walk_result(frame.text(), &mut path, &mut hits);
        let method = OUTPUT_METHODS[at];
        for (path, hit) in hits {
            self.output.push(OutputFinding {
                rule: hit.code,
                severity: Level::Warn,
                request_id: Some(id.clone()),
                method,
                path,
                message: hit.message(),
                excerpt: Some(hit.excerpt),
            });
        }
    }

    /// Ends the run: judges the header against what the frames showed.
    pub fn finish(self, header: &Header) -> CassetteLint {
        let mut findings = Vec::new();
        // The rule is the cassette's own (replay prints the same contradictions as warnings);
        // lint makes each one an error.
        findings.extend(contradictions(header, &self.observed).into_iter().map(|c| {
            HeaderFinding {
                rule: c.rule,
                severity: Level::Error,
                message: c.message.to_owned(),
            }
        }));
        findings.extend(header_field_warnings(header));
        CassetteLint {
            header: findings,
            output: self.output,
        }
    }
}

/// The newer header fields, checked for the shape their readers demand.
fn header_field_warnings(header: &Header) -> Vec<HeaderFinding> {
    let mut out = Vec::new();
    let mut warn = |rule: &'static str, message: String| {
        out.push(HeaderFinding {
            rule,
            severity: Level::Warn,
            message,
        });
    };
    // `null` reads as absent, as replay reads it.
    match header.volatile() {
        None => {}
        Some(serde_json::Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item {
                    serde_json::Value::String(decl) => {
                        if let Err(why) = validate_volatile(decl) {
                            warn(
                                "volatile-declaration",
                                format!("header `volatile`[{i}] is not a valid declaration: {why}"),
                            );
                        }
                    }
                    _ => warn(
                        "volatile-type",
                        format!(
                            "header `volatile`[{i}] is not a string; every declaration is a string"
                        ),
                    ),
                }
            }
        }
        Some(_) => warn(
            "volatile-type",
            "header `volatile` is not a list; it must be a list of declaration strings".to_owned(),
        ),
    }
    if let Some(hash) = header.config_hash() {
        let hex = hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !hex {
            warn(
                "redaction-config-hash",
                "header `redaction.configHash` is not a sha256 hex digest; `redact` writes 64 lowercase hex characters".to_owned(),
            );
        }
    }
    out
}

/// Checks one volatile declaration as replay parses it (docs/replay.md, "Declared volatility"), returning replay's
/// refusal message.
pub fn validate_volatile(decl: &str) -> Result<(), String> {
    Declaration::parse(decl)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Lints a whole cassette from a reader, one entry at a time. `on_warning` receives the
/// reader's notes (an unknown entry type is skipped with one).
///
/// Reading runs on a second thread ([`for_each_entry`]), overlapping the parse of later lines with
/// the lint of earlier ones; entries and the first error still arrive in file order.
pub fn lint_cassette<R: Read + Send>(
    reader: Reader<R>,
    mut on_warning: impl FnMut(String),
) -> Result<CassetteLint, CassetteError> {
    let header = reader.header().clone();
    let path = reader.path().to_owned();
    let mut linter = CassetteLinter::new();
    for_each_entry(reader, |entry| {
        if let EntryKind::Unknown(kind) = &entry.kind {
            on_warning(crate::cassette::unknown_entry_warning(kind, &path));
        } else {
            linter.entry(entry);
        }
        ControlFlow::Continue(())
    })?;
    Ok(linter.finish(&header))
}

/// Lints the strings of a response frame's `result` (its first member so named), straight off the
/// frame's text, which the cassette reader validated: a string is found by a vectorised search
/// for its closing quote and decoded only when it has escapes, and whatever is not walked (the
/// rest of the frame, base64 under [`UNSCANNED_KEYS`], anything deeper than
/// [`MAX_OUTPUT_DEPTH`]) is stepped over by its end alone. A test holds the hits equal to those of
/// a `serde_json` walk of the same text.
fn walk_result(text: &str, path: &mut String, hits: &mut Vec<(String, super::TextHit)>) {
    let b = text.as_bytes();
    let mut walked = false;
    let _ = members(text, token::skip_ws(b, 0), |key, at| {
        if key == "result" && !std::mem::replace(&mut walked, true) {
            walk_value(text, at, 0, path, hits)
        } else {
            token::value_end_trusted(b, at)
        }
    });
}

/// The members of the object at `at` in `text` (valid JSON), keys decoded:
/// [`token::members_from`] with the escapes of each key resolved.
fn members(
    text: &str,
    at: usize,
    mut each: impl FnMut(&str, usize) -> Option<usize>,
) -> Option<usize> {
    token::members_from(text, at, |raw, value| {
        if raw.contains('\\') {
            each(&token::decode(raw), value)
        } else {
            each(raw, value)
        }
    })
}

/// Walks the value at `at`, `depth` levels below `result`, linting its strings; answers the index
/// past it.
fn walk_value(
    text: &str,
    at: usize,
    depth: usize,
    path: &mut String,
    hits: &mut Vec<(String, super::TextHit)>,
) -> Option<usize> {
    let b = text.as_bytes();
    if depth > MAX_OUTPUT_DEPTH {
        return token::value_end_trusted(b, at);
    }
    match *b.get(at)? {
        b'"' => {
            let (end, escaped) = token::string_end_trusted(b, at)?;
            let raw = text.get(at + 1..end - 1)?;
            let decoded;
            let s = if escaped {
                decoded = token::decode(raw);
                decoded.as_str()
            } else {
                raw
            };
            for hit in super::lint_output_text(s) {
                hits.push((path.clone(), hit));
            }
            Some(end)
        }
        b'{' => members(text, at, |key, value| {
            if UNSCANNED_KEYS.contains(&key) {
                return token::value_end_trusted(b, value);
            }
            let base = path.len();
            // Keys go into the path as they are, unescaped, as the reference writes them.
            path.push('/');
            path.push_str(key);
            let end = walk_value(text, value, depth + 1, path, hits);
            path.truncate(base);
            end
        }),
        b'[' => {
            let mut i = token::skip_ws(b, at + 1);
            if *b.get(i)? == b']' {
                return Some(i + 1);
            }
            let mut n = 0usize;
            loop {
                let base = path.len();
                // Writing to a String cannot fail.
                let _ = write!(path, "/{n}");
                let end = walk_value(text, i, depth + 1, path, hits);
                path.truncate(base);
                i = token::skip_ws(b, end?);
                match *b.get(i)? {
                    b',' => i = token::skip_ws(b, i + 1),
                    _ => return Some(i + 1),
                }
                n += 1;
            }
        }
        _ => token::value_end_trusted(b, at),
    }
}

#[cfg(test)]
mod tests;
