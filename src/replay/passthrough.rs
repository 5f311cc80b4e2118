//! Passthrough ("spy mode"): a miss is forwarded to the real server, the client gets the live
//! answer, and the pair is appended to the cassette with `origin:"live"` so the next replay
//! answers it from the recording.
//!
//! The real server is spawned lazily, on the first miss, and the outcome is remembered including
//! failure: a broken command fails every later miss at once instead of spawning a process per miss.
//! It is spoken to by [`crate::client::Client`], the same client `check` uses: its handshake is
//! the client's own (legacy `initialize` first, then the modern `server/discover`), since the
//! replay client's handshake was answered from the recording; each request is bounded by the
//! client's timeout (`MCP_CASSETTE_TIMEOUT_MS`, 15 s by default); and what the live server asks
//! meanwhile is answered as the client answers it (`ping` with `{}`).
//!
//! Appended pairs carry minted `live-N` ids (continuing the file's highest, shared with
//! `record --mode append`), are redacted with the recording's rules when the recording was, and
//! are stamped on the file's own timeline: milliseconds since the header's `startedAt`, like an
//! appended recording session, so the cassette stays one monotone timeline.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use tokio::runtime::Runtime;

use super::session::Rules;
use super::wire::{Outbound, Request, find_spans};
use crate::cassette::{Dir, Entry, parse_iso};
use crate::client::{Client, ClientOptions, Target};
use crate::jsonrpc::{Frame, Id};
use crate::protocol::error_code::INTERNAL_ERROR;

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
            let frame = match &mut self.redactor {
                Some(r) => r.redact_frame(&frame).unwrap_or(frame),
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
    target: Target,
    options: ClientOptions,
    live: Option<Result<Live, String>>,
    appender: Appender,
    /// Pairs appended this session.
    pub appended: usize,
    /// Forwards that failed this session.
    pub failures: usize,
}

/// The live server's session, and the runtime its client runs on. The stdio front-end is
/// synchronous and starts without tokio; the runtime exists only once a miss needs the live
/// server, and each forward blocks on it (requests are handled strictly in order anyway).
/// Between forwards nothing runs on it, so what the live server writes meanwhile waits in its
/// pipes: its stderr reaches ours at the next forward or at close, and its notifications are
/// read (and dropped) then.
#[derive(Debug)]
struct Live {
    runtime: Runtime,
    client: Client,
}

impl Passthrough {
    /// `target` is the real server; `options` bound each request (the client's timeout, which
    /// `MCP_CASSETTE_TIMEOUT_MS` sets). Nothing is started until the first miss.
    pub fn new(target: Target, options: ClientOptions, appender: Appender) -> Passthrough {
        Passthrough {
            target,
            options,
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
    pub fn forward(&mut self, request: &Request, original: &str) -> Outbound {
        match self.try_forward(request, original) {
            Ok(answer) => answer,
            Err(message) => {
                self.failures += 1;
                let text =
                    format!("mcp-cassette replay: passthrough to live server failed: {message}");
                Outbound::Owned(format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{INTERNAL_ERROR},\"message\":{}}}}}",
                    request.id.to_json(),
                    Value::String(text)
                ))
            }
        }
    }

    fn try_forward(&mut self, request: &Request, original: &str) -> Result<Outbound, String> {
        let live = match &mut self.live {
            Some(live) => live,
            empty => empty.insert(Live::connect(&self.target, &self.options)),
        };
        let live = live.as_mut().map_err(|err| err.clone())?;
        let answer = live
            .runtime
            .block_on(
                live.client
                    .forward(&request.method, request.params.as_deref()),
            )
            .map_err(|err| err.to_string())?;
        self.appender.append(original, &answer).map_err(|e| {
            format!(
                "the answer arrived but could not be appended to {}: {e}",
                self.appender.path.display()
            )
        })?;
        self.appended += 1;
        Ok(Outbound::Owned(splice_id(&answer, &request.id)))
    }

    /// Ends the live server, if one was started.
    pub fn close(&mut self) {
        if let Some(Ok(Live { runtime, client })) = self.live.take() {
            runtime.block_on(client.close());
        }
    }
}

impl Live {
    /// Starts the runtime and the live server, and opens a session in the target's era
    /// (`auto` on stdio: `initialize` first, then `server/discover`).
    fn connect(target: &Target, options: &ClientOptions) -> Result<Live, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| format!("failed to start the async runtime: {err}"))?;
        let client = runtime
            .block_on(Client::connect(target, options.clone()))
            .map_err(|err| err.to_string())?;
        Ok(Live { runtime, client })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::EraChoice;

    /// A passthrough whose live session is already open (tests drive a scripted server).
    fn with_live(runtime: Runtime, client: Client, appender: Appender) -> Passthrough {
        let target = Target::stdio(&["scripted".to_owned()], EraChoice::Auto).unwrap();
        let mut passthrough = Passthrough::new(target, ClientOptions::default(), appender);
        passthrough.live = Some(Ok(Live { runtime, client }));
        passthrough
    }

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
    fn a_live_servers_ping_during_a_forward_is_answered_and_the_pair_appended() {
        use std::time::Duration;

        use serde_json::json;

        use crate::client::scripted::{self, legacy_init};

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(
            &path,
            "{\"type\":\"header\",\"cassetteVersion\":2,\"startedAt\":\"2020-01-01T00:00:00Z\"}\n",
        )
        .unwrap();
        let (transport, sent) = scripted::transport(|request| match request["method"].as_str() {
            Some("initialize") => legacy_init(request),
            Some("tools/call") => vec![
                json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}).to_string(),
                json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})
                    .to_string(),
            ],
            _ => Vec::new(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let options = ClientOptions {
            timeout: Duration::from_millis(200),
            ..ClientOptions::default()
        };
        let client = runtime
            .block_on(Client::over(transport, EraChoice::Auto, options))
            .unwrap();
        let mut passthrough = with_live(runtime, client, Appender::new(&path, None, 0, None));
        let original = r#"{"jsonrpc":"2.0","id":"c7","method":"tools/call","params":{"name":"x"}}"#;
        let request = Request::new(
            Id::Str("c7".into()),
            "tools/call",
            Some(&json!({"name": "x"})),
        );
        let Outbound::Owned(answer) = passthrough.forward(&request, original) else {
            panic!("an owned answer")
        };
        assert_eq!(
            answer,
            r#"{"jsonrpc":"2.0","id":"c7","result":{"content":[]}}"#
        );
        assert_eq!((passthrough.appended, passthrough.failures), (1, 0));
        let pong = sent
            .values()
            .into_iter()
            .find(|m| m["id"] == "srv-1")
            .expect("the ping was answered");
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}}));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.contains(r#""id":"live-1","method":"tools/call""#),
            "{text}"
        );

        // A request the live server never answers fails at the client's timeout.
        let request = Request::new(Id::Number("8".into()), "tasks/get", None);
        let Outbound::Owned(answer) = passthrough.forward(&request, "{}") else {
            panic!("an owned answer")
        };
        assert_eq!(
            answer,
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"mcp-cassette replay: passthrough to live server failed: timeout after 200ms waiting for \"tasks/get\""}}"#
        );
        assert_eq!(passthrough.failures, 1);
        passthrough.close();
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
