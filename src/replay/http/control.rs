//! The miss channel: how a test adapter that spawned `replay --listen` learns which requests
//! missed, per test (docs/adapters.md, "The miss channel").
//!
//! A miss is answered with a JSON-RPC error, which a test may swallow; the adapter has to fail
//! the test anyway, so the replay keeps a log of the requests the recording did not answer
//! exactly, and the adapter drains it after every test with
//! `POST /.mcp-cassette/misses/drain`. The endpoint exists only when `replay --listen --control`
//! was given, and answers only a request carrying the per-run token the adapter put in
//! `$MCP_CASSETTE_CONTROL_TOKEN` (`Authorization: Bearer <token>`): anything else on that path is
//! a plain 404, so nobody learns the endpoint is there. A foreign `Origin` has been refused with
//! 403 before this is reached, as on the MCP endpoint.
//!
//! Ordering: a miss is logged while its request is answered, before the response carrying the
//! miss error is built, so a drain sent after the client saw that error always includes it.
//!
//! `GET` (or `POST`) [`UNUSED_PATH`], behind the same token, answers the recordings no session has
//! used so far (docs/replay.md, "Unused recordings"), for an adapter's `failOnUnused`.

use std::sync::Mutex;

use http::{Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};

use crate::jsonrpc::Id;
use crate::replay::miss::MissReason;
use crate::replay::usage::{Unused, Usage};
use crate::transport::http::inbound::{self, Body};

/// The drain endpoint's path.
pub const DRAIN_PATH: &str = "/.mcp-cassette/misses/drain";
/// The unused-recordings endpoint's path.
pub const UNUSED_PATH: &str = "/.mcp-cassette/unused";
/// The environment variable the token is read from (never a command-line value: those are
/// visible to every user of the machine in the process list).
pub const TOKEN_ENV: &str = "MCP_CASSETTE_CONTROL_TOKEN";
/// A token shorter than this is refused at start-up: it would be guessable.
pub const MIN_TOKEN_LEN: usize = 16;
/// Misses kept between two drains; past it they are counted in `dropped`, so a client that
/// misses in a loop and is never drained cannot grow the replay without bound.
const KEPT: usize = 10_000;

/// What became of a request the recording did not answer exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Answered with the JSON-RPC miss error.
    Error,
    /// `--on-miss warn`: answered with another recording of the same method.
    Borrowed,
    /// `--on-miss passthrough`: forwarded to the real server.
    Forwarded,
}

impl Handling {
    pub fn as_str(self) -> &'static str {
        match self {
            Handling::Error => "error",
            Handling::Borrowed => "borrowed",
            Handling::Forwarded => "forwarded",
        }
    }
}

/// One logged miss.
#[derive(Debug, Clone)]
pub struct MissRecord {
    /// The client session's label (1, 2, 3… as the stderr diagnostics name it).
    pub session: u64,
    /// Its minted `mcp-session-id`, when the recording's server minted them.
    pub session_id: Option<String>,
    pub id: Id,
    pub method: String,
    /// The tool a `tools/call` named.
    pub tool: Option<String>,
    pub handling: Handling,
    pub reason: MissReason,
    /// The sentence stderr and the miss error show (already redacted).
    pub diagnosis: String,
}

impl MissRecord {
    /// The record as the drain answers it.
    pub fn to_json(&self) -> Value {
        json!({
            "session": self.session,
            "sessionId": self.session_id,
            "id": serde_json::from_str::<Value>(&self.id.to_json()).unwrap_or(Value::Null),
            "method": self.method,
            "tool": self.tool,
            "handling": self.handling.as_str(),
            "reason": reason_json(&self.reason),
            "diagnosis": self.diagnosis,
        })
    }
}

/// The tool a `tools/call` request names, as a miss record shows it.
pub fn tool_of(request: &crate::replay::wire::Request) -> Option<String> {
    if request.method != crate::replay::fingerprint::TOOLS_CALL {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Named {
        name: Option<String>,
    }
    serde_json::from_str::<Named>(request.params.as_ref()?.get())
        .ok()?
        .name
}

/// A [`MissReason`] as data: `kind` plus the fields that kind has, named as the reference's
/// `MissReason` union names them. Diff values are the ones matching compared (redacted when the
/// cassette is, volatile fields dropped); only the test process that sent them can drain them.
pub fn reason_json(reason: &MissReason) -> Value {
    let mut out = json!({ "kind": reason.kind() });
    let extra = match reason {
        MissReason::EmptyCassette => json!({}),
        MissReason::Exhausted { recorded }
        | MissReason::StreamExhausted { recorded }
        | MissReason::SubscriptionExhausted { recorded } => json!({ "recorded": recorded }),
        MissReason::TaskNotTerminal {
            task_id,
            status,
            polls,
        } => json!({ "taskId": task_id, "status": status, "polls": polls }),
        MissReason::RecordedUnanswered { method, exact } => {
            json!({ "method": method, "exact": exact })
        }
        MissReason::UnknownMethod { method, recorded } => {
            json!({ "method": method, "recorded": recorded })
        }
        MissReason::UnknownTool { tool, recorded } => {
            json!({ "tool": tool, "recorded": recorded })
        }
        MissReason::ArgumentsDiffer(changes) | MissReason::ParamsDiffer(changes) => {
            let changes: Vec<Value> = changes
                .iter()
                .map(|c| {
                    let mut entry = serde_json::Map::new();
                    entry.insert("path".into(), Value::String(c.path.clone()));
                    // An absent side stays absent (not `null`, which is a value a side can have).
                    if let Some(v) = &c.recorded {
                        entry.insert("recorded".into(), v.clone());
                    }
                    if let Some(v) = &c.live {
                        entry.insert("live".into(), v.clone());
                    }
                    Value::Object(entry)
                })
                .collect();
            json!({ "changes": changes })
        }
    };
    if let (Some(out), Value::Object(extra)) = (out.as_object_mut(), extra) {
        out.extend(extra);
    }
    out
}

#[derive(Debug, Default)]
struct Log {
    misses: Vec<MissRecord>,
    dropped: u64,
}

/// The control surface of one replay server.
#[derive(Debug)]
pub struct Control {
    /// `None` for a replay served inside the process that reads its log
    /// ([`Control::in_process`]): nobody outside may drain it, so the endpoint is never there.
    token: Option<String>,
    log: Mutex<Log>,
}

/// Why a control token is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("replay --control needs a token in ${TOKEN_ENV}")]
    Missing,
    #[error("replay --control: ${TOKEN_ENV} must be at least {MIN_TOKEN_LEN} characters")]
    TooShort,
}

impl Control {
    pub fn new(token: Option<String>) -> Result<Control, TokenError> {
        let token = token.filter(|t| !t.is_empty()).ok_or(TokenError::Missing)?;
        if token.len() < MIN_TOKEN_LEN {
            return Err(TokenError::TooShort);
        }
        Ok(Control {
            token: Some(token),
            log: Mutex::new(Log::default()),
        })
    }

    /// The miss log of a replay served inside the test process (docs/testing-api.md), which
    /// drains it with [`Control::drain`]: the HTTP endpoint answers 404 to every request.
    pub fn in_process() -> Control {
        Control {
            token: None,
            log: Mutex::new(Log::default()),
        }
    }

    /// Logs a miss. Called while the request is answered, before its response exists.
    pub fn record(&self, miss: MissRecord) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.misses.len() < KEPT {
            log.misses.push(miss);
        } else {
            log.dropped += 1;
        }
    }

    /// Everything logged since the last drain, oldest first.
    pub fn drain(&self) -> (Vec<MissRecord>, u64) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let Log { misses, dropped } = std::mem::take(&mut *log);
        (misses, dropped)
    }

    /// Whether `request` is for the control surface at all (its path).
    pub fn routes<B>(request: &Request<B>) -> bool {
        let path = request.uri().path();
        path == DRAIN_PATH || path == UNUSED_PATH
    }

    /// Answers a request for [`DRAIN_PATH`] or [`UNUSED_PATH`]; `usage` is what the replay's
    /// sessions served.
    pub fn handle<B>(&self, request: &Request<B>, usage: &Usage) -> Response<Body> {
        if !self.authorized(request) {
            let mut response = Response::new(inbound::empty());
            *response.status_mut() = StatusCode::NOT_FOUND;
            return response;
        }
        let unused = request.uri().path() == UNUSED_PATH;
        let allowed = if unused {
            request.method() == Method::GET || request.method() == Method::POST
        } else {
            request.method() == Method::POST
        };
        if !allowed {
            let mut response = Response::new(inbound::empty());
            *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            response.headers_mut().insert(
                header::ALLOW,
                http::HeaderValue::from_static(if unused { "GET, POST" } else { "POST" }),
            );
            return response;
        }
        let body = if unused {
            let unused = usage.unused();
            json!({
                "unused": unused.iter().map(Unused::to_json).collect::<Vec<_>>(),
                "count": unused.len(),
            })
        } else {
            let (misses, dropped) = self.drain();
            json!({
                "misses": misses.iter().map(MissRecord::to_json).collect::<Vec<_>>(),
                "dropped": dropped,
            })
        };
        let mut response = Response::new(inbound::full(body.to_string()));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        response
    }

    fn authorized<B>(&self, request: &Request<B>) -> bool {
        let Some(token) = &self.token else {
            return false;
        };
        let Some(given) = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return false;
        };
        same_secret(given.as_bytes(), token.as_bytes())
    }
}

/// Compares without stopping at the first differing byte, so the answer time says nothing
/// about how much of a guess was right.
fn same_secret(given: &[u8], token: &[u8]) -> bool {
    let mut diff = u8::from(given.len() != token.len());
    for (i, t) in token.iter().enumerate() {
        diff |= t ^ given.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::diff::DiffEntry;

    const TOKEN: &str = "0123456789abcdef-token";

    fn record(method: &str) -> MissRecord {
        MissRecord {
            session: 1,
            session_id: None,
            id: Id::from_value(&json!(7)).unwrap(),
            method: method.to_owned(),
            tool: Some("echo".to_owned()),
            handling: Handling::Error,
            reason: MissReason::ArgumentsDiffer(vec![DiffEntry {
                path: "/m".into(),
                recorded: Some(json!("recorded")),
                live: None,
                key: Some("m".into()),
            }]),
            diagnosis: "d".into(),
        }
    }

    fn post(path: &str, auth: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().method(Method::POST).uri(path);
        if let Some(auth) = auth {
            builder = builder.header(header::AUTHORIZATION, auth);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn tokens_are_required_and_long_enough() {
        assert_eq!(Control::new(None).unwrap_err(), TokenError::Missing);
        assert_eq!(
            Control::new(Some(String::new())).unwrap_err(),
            TokenError::Missing
        );
        assert_eq!(
            Control::new(Some("short".into())).unwrap_err(),
            TokenError::TooShort
        );
        assert!(Control::new(Some(TOKEN.into())).is_ok());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }

    #[test]
    fn a_drain_empties_the_log_and_keeps_order() {
        let control = Control::new(Some(TOKEN.into())).unwrap();
        control.record(record("a"));
        control.record(record("b"));
        let (misses, dropped) = control.drain();
        assert_eq!(
            misses.iter().map(|m| m.method.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(dropped, 0);
        assert!(control.drain().0.is_empty());
    }

    #[test]
    fn the_log_is_bounded() {
        let control = Control::new(Some(TOKEN.into())).unwrap();
        for _ in 0..KEPT + 3 {
            control.record(record("a"));
        }
        let (misses, dropped) = control.drain();
        assert_eq!((misses.len(), dropped), (KEPT, 3));
    }

    #[test]
    fn records_serialise_with_absent_sides_left_out() {
        let value = record("tools/call").to_json();
        assert_eq!(value["id"], json!(7));
        assert_eq!(value["tool"], "echo");
        assert_eq!(value["handling"], "error");
        assert_eq!(value["reason"]["kind"], "arguments-differ");
        assert_eq!(
            value["reason"]["changes"],
            json!([{"path": "/m", "recorded": "recorded"}])
        );
        assert_eq!(
            reason_json(&MissReason::UnknownTool {
                tool: "t".into(),
                recorded: vec!["a".into()]
            }),
            json!({"kind": "unknown-tool", "tool": "t", "recorded": ["a"]})
        );
    }

    #[test]
    fn only_the_token_opens_the_endpoint() {
        let control = Control::new(Some(TOKEN.into())).unwrap();
        let usage = empty_usage();
        let status = |r: &Request<()>| control.handle(r, &usage).status();
        assert_eq!(status(&post(DRAIN_PATH, None)), StatusCode::NOT_FOUND);
        assert_eq!(
            status(&post(DRAIN_PATH, Some("Bearer wrong-token-of-length"))),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status(&post(DRAIN_PATH, Some(&format!("Bearer {TOKEN}")))),
            StatusCode::OK
        );
        let get = Request::builder()
            .method(Method::GET)
            .uri(DRAIN_PATH)
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(())
            .unwrap();
        assert_eq!(status(&get), StatusCode::METHOD_NOT_ALLOWED);
        assert!(Control::routes(&post(DRAIN_PATH, None)));
        let local = Control::in_process();
        assert_eq!(
            local
                .handle(&post(DRAIN_PATH, Some(&format!("Bearer {TOKEN}"))), &usage)
                .status(),
            StatusCode::NOT_FOUND
        );
        assert!(Control::routes(&post(UNUSED_PATH, None)));
        assert!(!Control::routes(&post("/mcp", None)));
        assert_eq!(status(&post(UNUSED_PATH, None)), StatusCode::NOT_FOUND);
        let get_unused = Request::builder()
            .method(Method::GET)
            .uri(UNUSED_PATH)
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .body(())
            .unwrap();
        assert_eq!(status(&get_unused), StatusCode::OK);
        assert_eq!(
            status(&post(UNUSED_PATH, Some(&format!("Bearer {TOKEN}")))),
            StatusCode::OK
        );
    }

    fn empty_usage() -> Usage {
        let text = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"http","era":"legacy"}"#;
        let path = std::path::Path::new("t.jsonl");
        let reader = crate::cassette::Reader::new(text.as_bytes(), path).unwrap();
        let header = reader.header().clone();
        let index = crate::replay::Index::build(header, reader, &[], path).unwrap();
        Usage::new(std::sync::Arc::new(index))
    }
}
