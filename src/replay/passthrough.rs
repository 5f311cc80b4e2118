//! Passthrough ("spy mode"): a miss is forwarded to the real server, the client gets the live
//! answer, and the pair is appended to the cassette with `origin:"live"` so the next replay
//! answers it from the recording.
//!
//! The real server is spawned lazily, on the first miss, and the outcome is remembered including
//! failure: a broken command fails every later miss at once instead of spawning a process per miss.
//! Its handshake is its own (legacy `initialize` first, then the modern `server/discover`), since
//! the client's handshake was answered from the recording.
//!
//! Appended pairs carry minted `live-N` ids (continuing the file's highest, shared with
//! `record --mode append`), are redacted with the recording's rules when the recording was, and
//! are stamped on the file's own timeline: milliseconds since the header's `startedAt`, like an
//! appended recording session, so the cassette stays one monotone timeline.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::session::Rules;
use super::stdio::MAX_LINE;
use super::wire::{Outbound, Request, find_spans};
use crate::cassette::{Dir, Entry, parse_iso};
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::line::{Line, LineBuffer, OverLimit};
use crate::protocol::Era;
use crate::transport::child::{Signal, send_signal, spawn_piped};

/// How long one request to the live server may take.
pub const TIMEOUT: Duration = Duration::from_secs(15);
const LEGACY_VERSION: &str = "2025-06-18";
const MODERN_VERSION: &str = "2026-07-28";

/// Where appended pairs go and how they are stamped.
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    next_live: u64,
    /// The header's `startedAt`, the origin of every `t` in the file.
    origin: Option<time::OffsetDateTime>,
    /// Fallback origin when the header's `startedAt` cannot be read.
    started: Instant,
    redactor: Option<Rules>,
}

impl Appender {
    /// `highest_live` is the highest `live-N` already in the file; `redactor` is `Some` when the
    /// cassette was recorded with redaction on.
    pub fn new(
        path: &Path,
        started_at: Option<&str>,
        highest_live: u64,
        redactor: Option<Rules>,
    ) -> Appender {
        Appender {
            path: path.to_owned(),
            next_live: highest_live + 1,
            origin: started_at.and_then(parse_iso),
            started: Instant::now(),
            redactor,
        }
    }

    fn t(&self) -> u64 {
        match self.origin {
            Some(origin) => (time::OffsetDateTime::now_utc() - origin)
                .whole_milliseconds()
                .max(0) as u64,
            None => self.started.elapsed().as_millis() as u64,
        }
    }

    /// Appends a request/response pair under a fresh `live-N` id, in one write.
    fn append(&mut self, request_text: &str, response_text: &str) -> io::Result<()> {
        let live = Id::Str(format!("live-{}", self.next_live));
        let t = self.t();
        let mut block = String::new();
        if !ends_with_newline(&self.path)? {
            block.push('\n');
        }
        for (dir, text) in [(Dir::C2s, request_text), (Dir::S2c, response_text)] {
            let rekeyed = splice_id(text, &live);
            let frame = Frame::parse(&rekeyed)
                .ok_or_else(|| io::Error::other("a forwarded frame is not a JSON-RPC object"))?;
            let frame = match &self.redactor {
                Some(r) => r
                    .get()
                    .redact_frame(&frame)
                    .map(|(f, _)| f)
                    .unwrap_or(frame),
                None => frame,
            };
            let mut entry = Entry::new_frame(t, dir, frame);
            entry.set_member("origin", "live");
            block.push_str(&entry.to_line());
            block.push('\n');
        }
        let mut file = OpenOptions::new().append(true).open(&self.path)?;
        file.write_all(block.as_bytes())?;
        file.sync_data()?;
        self.next_live += 1;
        Ok(())
    }
}

fn ends_with_newline(path: &Path) -> io::Result<bool> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// `text` (a JSON-RPC frame) with its top-level id replaced, every other byte kept.
fn splice_id(text: &str, id: &Id) -> String {
    let text = text.trim();
    match find_spans(text).id() {
        Some(span) => format!(
            "{}{}{}",
            &text[..span.start],
            id.to_json(),
            &text[span.end..]
        ),
        None => match serde_json::from_str::<Value>(text) {
            Ok(mut v) => {
                if let Some(o) = v.as_object_mut() {
                    o.insert("id".to_owned(), id.to_value());
                }
                v.to_string()
            }
            Err(_) => text.to_owned(),
        },
    }
}

/// The passthrough side of a replay session.
#[derive(Debug)]
pub struct Passthrough {
    command: Vec<String>,
    live: Option<Result<LiveServer, String>>,
    appender: Appender,
    /// Pairs appended this session.
    pub appended: usize,
    /// Forwards that failed this session.
    pub failures: usize,
}

impl Passthrough {
    pub fn new(command: Vec<String>, appender: Appender) -> Passthrough {
        Passthrough {
            command,
            live: None,
            appender,
            appended: 0,
            failures: 0,
        }
    }

    pub fn path(&self) -> &Path {
        &self.appender.path
    }

    /// Forwards a missed request (`original` is the line the client sent) and returns the answer
    /// for the client: the live answer re-keyed to the client's id, or a -32603 error.
    pub fn forward(&mut self, request: &Request, original: &str, diag: &mut dyn Write) -> Outbound {
        match self.try_forward(request, original, diag) {
            Ok(answer) => answer,
            Err(message) => {
                self.failures += 1;
                let text =
                    format!("mcp-cassette replay: passthrough to live server failed: {message}");
                Outbound::Owned(format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32603,\"message\":{}}}}}",
                    request.id.to_json(),
                    Value::String(text)
                ))
            }
        }
    }

    fn try_forward(
        &mut self,
        request: &Request,
        original: &str,
        diag: &mut dyn Write,
    ) -> Result<Outbound, String> {
        if self.live.is_none() {
            self.live = Some(LiveServer::connect(&self.command, diag));
        }
        let live = match self.live.as_mut() {
            Some(Ok(live)) => live,
            Some(Err(e)) => return Err(e.clone()),
            None => return Err("the live server is not connected".to_owned()),
        };
        let response = live.relay(&request.method, request.params_value()?)?;
        self.appender
            .append(original, response.text())
            .map_err(|e| {
                format!(
                    "the answer arrived but could not be appended to {}: {e}",
                    self.appender.path.display()
                )
            })?;
        self.appended += 1;
        Ok(Outbound::Owned(splice_id(response.text(), &request.id)))
    }

    /// Ends the live server, if one was started.
    pub fn close(&mut self) {
        if let Some(Ok(live)) = self.live.take() {
            live.close();
        }
    }
}

/// A real MCP server over stdio, as a minimal client of it.
#[derive(Debug)]
struct LiveServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<String, String>>,
    next_id: u64,
    era: Era,
    protocol: String,
}

impl LiveServer {
    fn connect(command: &[String], diag: &mut dyn Write) -> Result<LiveServer, String> {
        let mut child =
            spawn_piped(command).map_err(|e| format!("failed to start server command: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("failed to start server command: no pipes".to_owned());
        };
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut input = stdout;
            let mut lines = LineBuffer::new(MAX_LINE, OverLimit::Skip { keep: 0 });
            loop {
                let sent = match lines.next_from(&mut input) {
                    Ok(Some(Line::Whole { bytes, .. })) => {
                        tx.send(Ok(String::from_utf8_lossy(bytes).into_owned()))
                    }
                    Ok(Some(Line::TooLong {
                        len, terminated, ..
                    })) => tx.send(Err(format!(
                        "the live server wrote a line of {} bytes, over the limit",
                        len + usize::from(terminated)
                    ))),
                    Ok(None) | Err(_) => return,
                };
                if sent.is_err() {
                    return;
                }
            }
        });
        let mut live = LiveServer {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 1,
            era: Era::Legacy,
            protocol: LEGACY_VERSION.to_owned(),
        };
        match live.initialize() {
            Ok(()) => {}
            Err(first) => {
                let _ = writeln!(
                    diag,
                    "mcp-cassette: legacy probe failed ({first}), trying modern"
                );
                if let Err(second) = live.discover() {
                    live.close();
                    return Err(format!(
                        "server answered neither era. legacy: {first}; modern: {second}"
                    ));
                }
            }
        }
        let _ = writeln!(
            diag,
            "mcp-cassette: connected as {} (protocol {})",
            live.era, live.protocol
        );
        Ok(live)
    }

    fn initialize(&mut self) -> Result<(), String> {
        let params = json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-cassette", "version": env!("CARGO_PKG_VERSION")}
        });
        let res = self
            .request("initialize", Some(params))
            .map_err(|e| format!("initialize failed: {e}"))?;
        let v = res.value();
        if let Some(err) = v.get("error") {
            return Err(format!(
                "initialize returned error {}: {}",
                err.get("code").map(Value::to_string).unwrap_or_default(),
                err.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ));
        }
        self.era = Era::Legacy;
        if let Some(p) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
            self.protocol = p.to_owned();
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
    }

    fn discover(&mut self) -> Result<(), String> {
        self.era = Era::Modern;
        self.protocol = MODERN_VERSION.to_owned();
        let params = self.with_meta(None);
        let res = self.request("server/discover", Some(params))?;
        let v = res.value();
        if let Some(err) = v.get("error") {
            return Err(format!(
                "server/discover returned error {}: {}",
                err.get("code").map(Value::to_string).unwrap_or_default(),
                err.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ));
        }
        if let Some(versions) = v
            .pointer("/result/supportedVersions")
            .and_then(Value::as_array)
        {
            let listed: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
            if !listed.is_empty() && !listed.contains(&self.protocol.as_str()) {
                self.protocol = listed[0].to_owned();
            }
        }
        Ok(())
    }

    /// Modern requests carry version, identity and capabilities per call; the client's own `_meta`
    /// keys win where it set them.
    fn with_meta(&self, params: Option<Value>) -> Value {
        let mut params = match params {
            Some(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            for (k, v) in [
                (
                    "io.modelcontextprotocol/protocolVersion",
                    json!(self.protocol),
                ),
                (
                    "io.modelcontextprotocol/clientInfo",
                    json!({"name": "mcp-cassette", "version": env!("CARGO_PKG_VERSION")}),
                ),
                ("io.modelcontextprotocol/clientCapabilities", json!({})),
            ] {
                meta.entry(k).or_insert(v);
            }
        }
        Value::Object(params)
    }

    /// Forwards one request as the client asked it; an `input_required` or error answer is the
    /// client's to act on, so any response is returned.
    fn relay(&mut self, method: &str, params: Option<Value>) -> Result<Frame, String> {
        let params = match self.era {
            Era::Modern => Some(self.with_meta(params)),
            Era::Legacy => params,
        };
        self.request(method, params)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or("the live server's input is closed")?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("failed to write to the live server: {e}"))
    }

    fn request(&mut self, method: &str, params: Option<Value>) -> Result<Frame, String> {
        let id = self.next_id;
        self.next_id += 1;
        let mut frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            frame["params"] = p;
        }
        self.send(&frame.to_string())?;
        let want = Id::Number(id.to_string());
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(wait) {
                Ok(Ok(line)) => line,
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "timeout after {}ms waiting for \"{method}\"",
                        TIMEOUT.as_millis()
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "the live server closed its output before answering \"{method}\""
                    ));
                }
            };
            let Some(got) = Frame::parse(&line) else {
                continue;
            };
            match got.kind() {
                FrameKind::Response | FrameKind::ErrorResponse
                    if got.id().map(Id::key) == Some(want.key()) =>
                {
                    return Ok(got);
                }
                FrameKind::Request => {
                    // The replay has no model, user or roots to offer: say so rather than leave the
                    // server waiting.
                    if let Some(sid) = got.id() {
                        let answer = json!({
                            "jsonrpc": "2.0",
                            "id": sid.to_value(),
                            "error": {"code": -32601, "message": format!("mcp-cassette replay passthrough cannot answer \"{}\"", got.method().unwrap_or_default())}
                        });
                        self.send(&answer.to_string())?;
                    }
                }
                _ => {}
            }
        }
    }

    /// Closes the server's input, then asks it to stop, then stops it.
    fn close(mut self) {
        drop(self.stdin.take());
        let pid = self.child.id();
        for (signal, wait) in [
            (None, 2),
            (Some(Signal::Terminate), 2),
            (Some(Signal::Kill), 2),
        ] {
            if let Some(signal) = signal {
                send_signal(pid, signal);
            }
            let deadline = Instant::now() + Duration::from_secs(wait);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_keeps_bytes() {
        assert_eq!(
            splice_id(
                r#"{"jsonrpc":"2.0", "id": 7 ,"method":"x","params":{"a":1.0}}"#,
                &Id::Str("live-3".into())
            ),
            r#"{"jsonrpc":"2.0", "id": "live-3" ,"method":"x","params":{"a":1.0}}"#
        );
    }

    #[test]
    fn appends_two_lines_with_live_ids_after_a_missing_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(
            &path,
            "{\"type\":\"header\",\"cassetteVersion\":2,\"startedAt\":\"2020-01-01T00:00:00Z\"}",
        )
        .unwrap();
        let mut a = Appender::new(&path, Some("2020-01-01T00:00:00Z"), 4, None);
        a.append(
            r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains(r#""dir":"c2s","frame":{"jsonrpc":"2.0","id":"live-5","method":"x"},"origin":"live""#), "{}", lines[1]);
        assert!(lines[2].contains(r#""id":"live-5","result":{}"#));
        let t: Value = serde_json::from_str(lines[1]).unwrap();
        assert!(
            t["t"].as_u64().unwrap() > 1_000_000_000,
            "t counts from startedAt"
        );
        assert!(text.ends_with('\n'));
    }
}
