//! Lenient header checks: what an HTTP request's MCP headers say that the recording, or the
//! request's own body, contradicts. Each is a warning on stderr ending `answering anyway`, never
//! a 400: replay's job is to answer the client, and a test that wants strictness reads stderr.
//!
//! The checks (docs/http.md, "Replay server"): `MCP-Protocol-Version` against the version the
//! recording negotiated; in the modern era `Mcp-Method` against the body's method, `Mcp-Name`
//! against the body's `name` (or `uri`), and each `Mcp-Param-*` value against the call's
//! arguments (a missing one is not judged: replay holds no tool schemas).

use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::sessions::Mismatch;
use crate::protocol::header_param::{decode_value, header_text};
use crate::replay::index::Index;
use crate::report::terminal::escape;

const PREFIX: &str = "mcp-cassette replay: ";
/// Header warnings written one by one; the rest are counted and the count noted at the end, so a
/// load test sending a million mismatched headers costs a few lines of stderr.
pub const HEADER_NOTES: u64 = 10;

/// Where diagnostics go: stderr in the binary, a buffer in tests.
pub struct Notes {
    out: Mutex<Box<dyn std::io::Write + Send>>,
    header_warnings: AtomicU64,
}

impl std::fmt::Debug for Notes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notes").finish_non_exhaustive()
    }
}

impl Notes {
    pub fn new(out: Box<dyn std::io::Write + Send>) -> Notes {
        Notes {
            out: Mutex::new(out),
            header_warnings: AtomicU64::new(0),
        }
    }

    /// One line, prefixed; what the client sent and the cassette holds is shown inert.
    pub fn note(&self, message: &str) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{PREFIX}{}", escape(message));
        let _ = out.flush();
    }

    /// A header warning: the first [`HEADER_NOTES`] are written.
    pub fn header(&self, message: &str) {
        let n = self.header_warnings.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= HEADER_NOTES {
            self.note(&format!("{message}; answering anyway"));
        }
        if n == HEADER_NOTES {
            self.note("further header warnings are counted, not shown; the count comes at the end");
        }
    }

    /// The count of header warnings that were not written.
    pub fn finish(&self) {
        let n = self.header_warnings.load(Ordering::Relaxed);
        if n > HEADER_NOTES {
            self.note(&format!(
                "{} more header warning(s) were not shown ({n} in all)",
                n - HEADER_NOTES
            ));
        }
    }
}

/// What the request's headers are checked against.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The protocol version the recording negotiated (an `initialize` or `server/discover`
    /// answer's `result.protocolVersion`).
    pub version: Option<String>,
    pub modern: bool,
}

impl Recorded {
    pub fn read(index: &Index, modern: bool) -> Recorded {
        let version = index
            .pairs
            .iter()
            .filter(|p| matches!(p.method(index), "initialize" | "server/discover"))
            .filter_map(|p| p.answer.response())
            .filter_map(|r| serde_json::from_str::<Value>(r.text()).ok())
            .find_map(|v| {
                v.pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        Recorded { version, modern }
    }
}

/// The session-id warning for a request answered by a session it did not name.
pub fn session_warning(notes: &Notes, mismatch: &Mismatch, label: u64) {
    match mismatch {
        Mismatch::Absent => notes.header(&format!(
            "request carries no mcp-session-id header, though this replay mints one at initialize; session {label} (the latest initialize's) answers it"
        )),
        Mismatch::Unknown(id) => notes.header(&format!(
            "mcp-session-id \"{id}\" is not a session this replay minted (or it was deleted); session {label} (the latest initialize's) answers it"
        )),
    }
}

#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Named {
    name: Option<Value>,
    uri: Option<Value>,
    arguments: Option<Value>,
}

/// Checks a POST's headers against the recording and its body, warning about each
/// contradiction. Costs nothing when the request carries none of the headers checked.
pub fn check(notes: &Notes, recorded: &Recorded, headers: &HeaderMap, body: &str) {
    if let (Some(sent), Some(version)) = (
        headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok()),
        recorded.version.as_deref(),
    ) {
        if sent != version {
            notes.header(&format!(
                "MCP-Protocol-Version header \"{sent}\" differs from the recorded version \"{version}\""
            ));
        }
    }
    if !recorded.modern {
        return;
    }
    let method_header = headers.get("mcp-method").and_then(|v| v.to_str().ok());
    let name_header = headers.get("mcp-name").and_then(|v| v.to_str().ok());
    let params_headers: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("mcp-param-"))
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    if method_header.is_none() && name_header.is_none() && params_headers.is_empty() {
        return;
    }
    let Ok(peek) = serde_json::from_str::<Peek<'_>>(body) else {
        return;
    };
    if let (Some(sent), Some(method)) = (method_header, peek.method.as_deref()) {
        if sent != method {
            notes.header(&format!(
                "Mcp-Method header \"{sent}\" does not match the body's method \"{method}\""
            ));
        }
    }
    if name_header.is_none() && params_headers.is_empty() {
        return;
    }
    let named: Named = peek
        .params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or_default();
    if let Some(sent) = name_header {
        let sent = decode_value(sent);
        let body_name = named
            .name
            .as_ref()
            .or(named.uri.as_ref())
            .and_then(Value::as_str);
        if let Some(body_name) = body_name.filter(|n| *n != sent) {
            notes.header(&format!(
                "Mcp-Name header \"{sent}\" does not match the body's \"{body_name}\""
            ));
        }
    }
    for (name, value) in params_headers {
        let value = decode_value(value);
        let found = named
            .arguments
            .as_ref()
            .is_some_and(|args| appears_in(args, &value));
        if !found {
            notes.header(&format!(
                "{name} header value \"{value}\" appears nowhere in the call's arguments"
            ));
        }
    }
}

/// Whether `text` is what some value inside `value` would be mirrored as.
fn appears_in(value: &Value, text: &str) -> bool {
    match value {
        Value::Object(map) => map.values().any(|v| appears_in(v, text)),
        Value::Array(items) => items.iter().any(|v| appears_in(v, text)),
        leaf => header_text(leaf).is_some_and(|t| t == text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn param_values_are_found_anywhere_in_the_arguments() {
        let args = json!({"a": {"b": [1, "x", true]}});
        assert!(appears_in(&args, "1"));
        assert!(appears_in(&args, "x"));
        assert!(appears_in(&args, "true"));
        assert!(!appears_in(&args, "y"));
    }
}
