//! `replay --listen`, driven through the real binary over real sockets: HTTP cassettes answered
//! as recorded (statuses, event streams, the session header, the GET stream, subscriptions),
//! the refusals (400, 403, 405, 413), many client sessions at once, a client leaving mid-stream,
//! a taken port, and the reference's HTTP cassettes.
//!
//! The client here is a few dozen lines over `std::net`: HTTP/1.1 with `Connection: close`, a
//! chunked body read as it arrives, so a held-open stream can be read event by event.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::record::bin;

const TIMEOUT: Duration = Duration::from_secs(10);

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of a fixture in a temporary directory (passthrough appends to the cassette it serves).
fn copied(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    std::fs::copy(fixture(name), &path).unwrap();
    (dir, path)
}

/// A running `replay --listen 127.0.0.1:0`.
pub(crate) struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    pub url: String,
    stderr: Receiver<String>,
    reader: Option<JoinHandle<()>>,
    /// Lines read while waiting for the URL.
    early: Vec<String>,
}

impl Server {
    pub(crate) fn start(cassette: &Path, args: &[&str]) -> Server {
        Server::start_at(cassette, "127.0.0.1:0", args)
    }

    pub(crate) fn start_at(cassette: &Path, listen: &str, args: &[&str]) -> Server {
        Server::start_with(cassette, listen, args, &[])
    }

    /// With `env` added to the replay's environment.
    pub(crate) fn start_with(
        cassette: &Path,
        listen: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let mut child = Command::new(bin())
            .arg("replay")
            .arg(cassette)
            .args(["--listen", listen])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("replay starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut early = Vec::new();
        let url = loop {
            let line = rx
                .recv_timeout(TIMEOUT)
                .unwrap_or_else(|_| panic!("no URL line on stderr; saw {early:?}"));
            // The one parseable line: `mcp-cassette replay: serving <path> as a <era> server at <url>`.
            let found = line
                .strip_prefix("mcp-cassette replay: serving ")
                .and_then(|rest| rest.rsplit_once(" server at "))
                .map(|(_, url)| url.to_owned());
            early.push(line);
            if let Some(url) = found {
                break url;
            }
        };
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix('/'))
            .expect("http://host:port/")
            .to_owned();
        Server {
            child,
            addr,
            url,
            stderr: rx,
            reader: Some(reader),
            early,
        }
    }

    pub(crate) fn post(&self, body: &Value, headers: &[(&str, &str)]) -> Answer {
        request(&self.addr, "POST", headers, body.to_string().as_bytes())
    }

    /// SIGTERM, then the exit code and everything written on stderr.
    pub(crate) fn stop(mut self) -> (Option<i32>, String) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let started = Instant::now();
        let code = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            assert!(
                started.elapsed() < TIMEOUT,
                "replay did not stop on SIGTERM"
            );
            thread::sleep(Duration::from_millis(20));
        };
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        let mut lines = std::mem::take(&mut self.early);
        lines.extend(self.stderr.try_iter());
        (code, lines.join("\n"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A whole HTTP answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The `data` of every event in an event-stream body, as JSON.
    pub(crate) fn events(&self) -> Vec<Value> {
        events_of(&self.text())
    }
}

fn events_of(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            serde_json::from_str(&data.join("\n")).expect("event data is JSON")
        })
        .collect()
}

fn send_head(addr: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut head = format!("{method} / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    let mut has_length = false;
    for (name, value) in headers {
        has_length |= name.eq_ignore_ascii_case("content-length");
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !has_length {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    if method == "POST"
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        head.push_str(
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        );
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    stream
}

/// One request on its own connection, its whole answer.
pub(crate) fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let stream = send_head(addr, method, headers, body);
    let mut open = Open::read_head(stream);
    let mut body = Vec::new();
    while let Some(part) = open.next_part() {
        body.extend_from_slice(&part);
    }
    Answer {
        status: open.status,
        headers: open.headers,
        body,
    }
}

/// An answer whose body is read as it arrives.
pub(crate) struct Open {
    reader: BufReader<TcpStream>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    chunked: bool,
    remaining: Option<usize>,
    pending: String,
}

impl Open {
    fn read_head(stream: TcpStream) -> Open {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).expect("status line");
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            reader.read_line(&mut line).expect("header line");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (name, value) = l.split_once(':').expect("header");
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let chunked = headers
            .iter()
            .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
        let remaining = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok());
        Open {
            reader,
            status,
            headers,
            chunked,
            remaining,
            pending: String::new(),
        }
    }

    /// Opens a request whose answer is read as it arrives (a held-open stream).
    pub(crate) fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Open {
        Open::read_head(send_head(addr, method, headers, body))
    }

    /// The next piece of the body; `None` at its end.
    fn next_part(&mut self) -> Option<Vec<u8>> {
        if self.chunked {
            let mut size = String::new();
            if self.reader.read_line(&mut size).ok()? == 0 {
                return None;
            }
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                return None;
            }
            let mut part = vec![0u8; size + 2];
            self.reader.read_exact(&mut part).ok()?;
            part.truncate(size);
            return Some(part);
        }
        match self.remaining {
            Some(0) => None,
            Some(n) => {
                let mut part = vec![0u8; n];
                self.reader.read_exact(&mut part).ok()?;
                self.remaining = Some(0);
                Some(part)
            }
            None => {
                let mut part = Vec::new();
                self.reader.read_to_end(&mut part).ok()?;
                (!part.is_empty()).then_some(part)
            }
        }
    }

    /// The next event's data as JSON, if one comes within `within`; `None` when none did (the
    /// stream stays usable) or the stream ended.
    pub(crate) fn event_within(&mut self, within: Duration) -> Option<Value> {
        let socket = self.reader.get_ref();
        socket.set_read_timeout(Some(within)).unwrap();
        let event = self.next_event();
        self.reader
            .get_ref()
            .set_read_timeout(Some(TIMEOUT))
            .unwrap();
        event
    }

    /// The next event's data as JSON; `None` when the stream ended.
    pub(crate) fn next_event(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let block: String = self.pending.drain(..end + 2).collect();
                return events_of(&block).into_iter().next();
            }
            let part = self.next_part()?;
            self.pending.push_str(&String::from_utf8_lossy(&part));
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn initialize(id: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}})
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}})
}

/// Opens a legacy session: its minted id.
fn open_session(server: &Server) -> String {
    let answer = server.post(&initialize(json!("init")), &[]);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.json()["id"], "init");
    let id = answer
        .header("mcp-session-id")
        .expect("a minted session id")
        .to_owned();
    let notified = server.post(
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        &[("mcp-session-id", &id)],
    );
    assert_eq!(notified.status, 202);
    assert!(notified.body.is_empty());
    id
}

#[test]
fn a_legacy_sessioned_cassette_is_answered_as_recorded() {
    let server = Server::start(&fixture("http/legacy-sessioned.http.jsonl"), &[]);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let session = open_session(&server);
    assert_eq!(session.len(), 36, "UUID-shaped: {session}");
    let with = [("mcp-session-id", session.as_str())];

    let mut get = Open::request(&server.addr, "GET", &with, b"");
    assert_eq!(get.status, 200);
    assert_eq!(get.header("content-type"), Some("text/event-stream"));
    let opening = get
        .next_event()
        .expect("what the recording opens with, on connect");
    assert_eq!(opening["params"]["data"], "server up");

    let list = server.post(
        &json!({"jsonrpc":"2.0","id":"l","method":"tools/list"}),
        &with,
    );
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["id"], "l");
    assert_eq!(list.json()["result"]["tools"][0]["name"], "echo");

    let echo = server.post(&call(json!(7), "echo", json!({"m":"one"})), &with);
    assert_eq!(
        echo.text(),
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"one"}]}}"#,
        "the recorded bytes, re-keyed"
    );

    let slow = server.post(&call(json!("s"), "slow", json!({"steps":2})), &with);
    assert_eq!(slow.status, 200);
    assert_eq!(slow.header("content-type"), Some("text/event-stream"));
    assert_eq!(slow.header("cache-control"), Some("no-cache"));
    let events = slow.events();
    assert_eq!(events.len(), 3, "{}", slow.text());
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[1]["params"]["progress"], 2);
    assert_eq!(events[2]["id"], "s", "only the final frame is re-keyed");
    assert_eq!(events[2]["result"]["content"][0]["text"], "slow done");

    let added = server.post(&call(json!(9), "add-tool", json!({})), &with);
    assert_eq!(added.json()["result"]["content"][0]["text"], "added");
    let pushed = get.next_event().expect("the list change on the GET stream");
    assert_eq!(pushed["method"], "notifications/tools/list_changed");

    let ping = server.post(&json!({"jsonrpc":"2.0","id":"p","method":"ping"}), &with);
    assert_eq!(ping.text(), r#"{"jsonrpc":"2.0","id":"p","result":{}}"#);

    let missed = server.post(&call(json!(10), "no-such-tool", json!({})), &with);
    assert_eq!(
        missed.status, 200,
        "a miss is an answer: the transport worked"
    );
    assert_eq!(missed.json()["error"]["code"], -32601);

    let put = request(&server.addr, "PUT", &[], b"");
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE"));

    let deleted = request(&server.addr, "DELETE", &with, b"");
    assert_eq!(deleted.status, 200);
    assert!(deleted.body.is_empty());
    assert_eq!(
        get.next_event(),
        None,
        "ending the session ends its GET stream"
    );

    let (code, stderr) = server.stop();
    assert_eq!(code, Some(1), "a miss under --on-miss error: {stderr}");
    assert!(
        stderr.contains("session 1: fingerprint miss for \"tools/call\": no recorded tools/call for tool \"no-such-tool\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 streamed answer(s) in the cassette"),
        "{stderr}"
    );
    assert!(stderr.contains("1 client session(s) served"), "{stderr}");
}

#[test]
fn bad_requests_get_the_documented_statuses() {
    let server = Server::start(&fixture("http/legacy-sessioned.http.jsonl"), &[]);
    for body in [
        &b"not json"[..],
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
        b"\xff\xfe",
    ] {
        let answer = request(&server.addr, "POST", &[], body);
        assert_eq!(answer.status, 400, "{:?}", String::from_utf8_lossy(body));
        assert_eq!(
            answer.text(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"replay: body is not a JSON-RPC frame"}}"#
        );
    }
    let foreign = server.post(&initialize(json!(1)), &[("Origin", "http://evil.example")]);
    assert_eq!(foreign.status, 403);
    let local = server.post(
        &initialize(json!(1)),
        &[("Origin", "http://localhost:3000")],
    );
    assert_eq!(local.status, 200);
    // A 100 MB body is refused from its length alone, without being read.
    let huge = request(
        &server.addr,
        "POST",
        &[("Content-Length", "100000000")],
        b"{\"jsonrpc\":",
    );
    assert_eq!(huge.status, 413);
    assert_eq!(huge.json()["error"]["code"], -32600);
    let (_, stderr) = server.stop();
    assert!(stderr.contains("1 client session(s) served"), "{stderr}");
}

#[test]
fn requests_without_the_minted_id_are_answered_with_a_warning() {
    let server = Server::start(&fixture("http/legacy-sessioned.http.jsonl"), &[]);
    let _session = open_session(&server);
    let list = server.post(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}), &[]);
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["result"]["tools"][1]["name"], "slow");
    let other = server.post(
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        &[("mcp-session-id", "not-a-minted-id")],
    );
    assert_eq!(other.status, 200);
    let odd = server.post(&json!({"jsonrpc":"2.0","id":3,"method":"x\u{1b}[31m"}), &[]);
    assert_eq!(odd.json()["error"]["code"], -32601);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("request carries no mcp-session-id header")
            && stderr.contains("answering anyway"),
        "{stderr}"
    );
    assert!(
        stderr.contains("mcp-session-id \"not-a-minted-id\" is not a session this replay minted"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "client strings are shown inert: {stderr}"
    );
}

#[test]
fn parallel_sessions_each_get_the_whole_recording() {
    let server = Server::start(&fixture("http/legacy-sessioned.http.jsonl"), &[]);
    let workers: Vec<_> = (0..4)
        .map(|n| {
            let addr = server.addr.clone();
            thread::spawn(move || {
                let init = request(
                    &addr,
                    "POST",
                    &[],
                    initialize(json!(n)).to_string().as_bytes(),
                );
                let id = init.header("mcp-session-id").unwrap().to_owned();
                let with = [("mcp-session-id", id.as_str())];
                let mut seen = Vec::new();
                for (k, (name, args)) in [
                    ("echo", json!({"m":"one"})),
                    ("slow", json!({"steps":2})),
                    ("add-tool", json!({})),
                ]
                .into_iter()
                .enumerate()
                {
                    let answer = request(
                        &addr,
                        "POST",
                        &with,
                        call(json!(k), name, args).to_string().as_bytes(),
                    );
                    let last = if answer.header("content-type") == Some("text/event-stream") {
                        answer.events().pop().unwrap()
                    } else {
                        answer.json()
                    };
                    seen.push(last["result"]["content"][0]["text"].clone());
                }
                // Once more: this session has consumed its one recording of it.
                let again = request(
                    &addr,
                    "POST",
                    &with,
                    call(json!(99), "echo", json!({"m":"one"}))
                        .to_string()
                        .as_bytes(),
                );
                (id, seen, again.json())
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let mut ids: Vec<&String> = results.iter().map(|(id, _, _)| id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "one minted id per session");
    for (_, seen, again) in &results {
        assert_eq!(seen, &[json!("one"), json!("slow done"), json!("added")]);
        assert!(
            again["error"]["message"]
                .as_str()
                .unwrap()
                .contains("already consumed earlier in this session"),
            "{again}"
        );
    }
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(1));
    assert!(stderr.contains("4 client session(s) served"), "{stderr}");
    assert!(
        stderr.contains("4 fingerprint miss(es) across all sessions"),
        "{stderr}"
    );
    // No client opened the GET stream: the opening message and the list change found no stream.
    assert!(
        stderr.contains("mcp-cassette replay: 8 server-initiated frame(s) came due with no stream open to carry them"),
        "{stderr}"
    );
    for n in 1..=4 {
        assert!(
            stderr.contains(&format!("session {n}: fingerprint miss")),
            "{stderr}"
        );
    }
}

#[test]
fn recorded_timing_spaces_chunks_and_a_client_leaving_mid_stream_stops_nothing_else() {
    let server = Server::start(
        &fixture("http/legacy-sessioned.http.jsonl"),
        &["--timing", "recorded"],
    );
    let session = open_session(&server);
    let with = [("mcp-session-id", session.as_str())];
    let started = Instant::now();
    let slow = server.post(&call(json!(1), "slow", json!({"steps":2})), &with);
    assert_eq!(slow.events().len(), 3);
    assert!(
        started.elapsed() >= Duration::from_millis(550),
        "chunks 300 ms apart as recorded: {:?}",
        started.elapsed()
    );

    // A second session starts the same stream and leaves after its first event.
    let other = open_session(&server);
    let body = call(json!(2), "slow", json!({"steps":2})).to_string();
    let mut open = Open::request(
        &server.addr,
        "POST",
        &[("mcp-session-id", &other)],
        body.as_bytes(),
    );
    assert_eq!(
        open.next_event().unwrap()["method"],
        "notifications/progress"
    );
    drop(open);
    let list = server.post(
        &json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}),
        &[("mcp-session-id", &other)],
    );
    assert_eq!(list.status, 200, "the server keeps serving");
    // The answer left with the client: it stays consumed.
    let again = server.post(
        &call(json!(4), "slow", json!({"steps":2})),
        &[("mcp-session-id", &other)],
    );
    assert!(again.text().contains("already"), "{}", again.text());
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(1), "{stderr}");
}

#[test]
fn a_modern_cassette_serves_statuses_and_subscriptions() {
    let server = Server::start(&fixture("http/modern.http.jsonl"), &[]);
    let discover = server.post(
        &json!({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}),
        &[],
    );
    assert_eq!(discover.status, 200);
    assert!(
        discover.header("mcp-session-id").is_none(),
        "no sessions in the modern era"
    );
    let strict = server.post(
        &call(json!(5), "strict", json!({})),
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "strict")],
    );
    assert_eq!(strict.status, 400, "the recorded status");
    assert_eq!(strict.json()["error"]["code"], -32020);
    assert_eq!(strict.json()["id"], 5);
    for method in ["GET", "DELETE"] {
        let answer = request(&server.addr, method, &[], b"");
        assert_eq!(answer.status, 405, "{method}");
        assert_eq!(answer.header("allow"), Some("POST"));
    }
    let listen = json!({"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":["notifications/resources/updated"]}});
    let mut stream = Open::request(&server.addr, "POST", &[], listen.to_string().as_bytes());
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    let ack = stream.next_event().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub"
    );
    let touched = server.post(
        &call(json!(6), "touch", json!({"uri":"demo://a"})),
        &[
            ("Mcp-Method", "tools/list"),
            ("MCP-Protocol-Version", "2025-03-26"),
            ("Mcp-Name", "tap"),
            ("Mcp-Param-Uri", "demo://b"),
            ("Mcp-Param-Same", "=?base64?ZGVtbzovL2E=?="),
        ],
    );
    assert_eq!(touched.json()["result"]["content"][0]["text"], "touched");
    let updated = stream.next_event().unwrap();
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub"
    );
    let closed = stream.next_event().unwrap();
    assert_eq!(closed["id"], "sub", "the graceful closure, re-keyed");
    assert_eq!(stream.next_event(), None, "and the stream ends with it");
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("serving "), "{stderr}");
    assert!(
        stderr.contains("as a modern server at http://127.0.0.1:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Mcp-Method header \"tools/list\" does not match the body's method \"tools/call\"; answering anyway"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP-Protocol-Version header \"2025-03-26\" differs from the recorded version \"2026-07-28\"; answering anyway"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "Mcp-Name header \"tap\" does not match the body's \"touch\"; answering anyway"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("mcp-param-uri header value \"demo://b\" appears nowhere in the call's arguments; answering anyway"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("mcp-param-same"),
        "a base64 value decoded and found: {stderr}"
    );
    assert!(
        !stderr.contains("Mcp-Name header \"strict\""),
        "a matching Mcp-Name is not warned about: {stderr}"
    );
}

#[test]
fn held_open_streams_end_gracefully_at_shutdown() {
    let server = Server::start(&fixture("http/modern.http.jsonl"), &[]);
    let listen = json!({"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":["notifications/resources/updated"]}});
    let mut stream = Open::request(&server.addr, "POST", &[], listen.to_string().as_bytes());
    assert!(stream.next_event().is_some());
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stream.next_event(), None, "the stream finished, not reset");
    assert!(
        stderr.contains("1 subscription(s) acknowledged and held open"),
        "{stderr}"
    );
}

#[test]
fn the_reference_http_cassettes_are_answered_as_recorded() {
    let tape = Server::start(&fixture("reference/reference-0.4/tape.http.jsonl"), &[]);
    let answer = tape.post(&call(json!(3), "echo", json!({"m":"recorded"})), &[]);
    assert_eq!(
        answer.text(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"recorded"}]}}"#
    );
    let (code, _) = tape.stop();
    assert_eq!(code, Some(0));

    let volatile = Server::start(&fixture("reference/reference-0.8/volatile.http.jsonl"), &[]);
    let answer = volatile.post(
        &call(
            json!(1),
            "echo",
            json!({"m":"hi","requestedAt":"2030-01-01T00:00:00Z","runId":"run-1"}),
        ),
        &[],
    );
    assert_eq!(answer.json()["result"]["content"][0]["text"], "recorded");
    let (code, stderr) = volatile.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_taken_port_fails_loudly() {
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let out = Command::new(bin())
        .arg("replay")
        .arg(fixture("http/modern.http.jsonl"))
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("replay: 127.0.0.1:{port} is already in use by ")),
        "{stderr}"
    );
    assert!(stderr.contains("Stop it or pass --listen"), "{stderr}");
}

#[test]
fn passthrough_over_http_needs_the_real_server() {
    let (_dir, path) = copied("http/modern.http.jsonl");
    let out = Command::new(bin())
        .arg("replay")
        .arg(&path)
        .args(["--listen", "127.0.0.1:0", "--on-miss", "passthrough"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "replay --listen --on-miss passthrough needs the real server command: mcp-cassette replay <cassette> --listen <host:port> --on-miss passthrough -- <server command...>"
        )
    );
}

#[test]
fn passthrough_forwards_a_miss_to_the_real_server_and_appends_it() {
    let (_dir, path) = copied("http/legacy-sessioned.http.jsonl");
    let lines_before = std::fs::read_to_string(&path).unwrap().lines().count();
    let live = crate::fixtures::fixture_server();
    let server = Server::start(
        &path,
        &[
            "--on-miss",
            "passthrough",
            "--",
            live.to_str().unwrap(),
            "tiny",
        ],
    );
    let session = open_session(&server);
    let with = [("mcp-session-id", session.as_str())];
    let answer = server.post(&call(json!("x"), "echo", json!({"message": "live"})), &with);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["id"], "x");
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        "echo:live #1"
    );
    let recorded = server.post(&call(json!("y"), "echo", json!({"m": "one"})), &with);
    assert_eq!(recorded.json()["result"]["content"][0]["text"], "one");
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "1 interaction(s) appended to {} (origin:\"live\")",
            path.display()
        )),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), lines_before + 2);
    assert_eq!(lines[lines_before]["origin"], "live");
    assert_eq!(lines[lines_before + 1]["frame"]["id"], "live-1");
}

/// Rewrites a stdio recording as the HTTP recording the same session would have made against a
/// server that mints session ids: header `transport:"http"`, `era:"legacy"`, `sessioned:true`;
/// the notifications a server sent while a request was outstanding travel, with the answer, in a
/// `chunks` entry (an SSE answer); everything else stays a frame. Until `record --http` exists,
/// this is how the interop tests get an HTTP cassette of a real server.
fn as_http_recording(stdio: &Path, out: &Path) {
    let text = std::fs::read_to_string(stdio).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let mut header = lines.next().unwrap();
    let object = header.as_object_mut().unwrap();
    object.remove("command");
    object.insert("transport".into(), json!("http"));
    object.insert("url".into(), json!("http://127.0.0.1:9/mcp"));
    object.insert("era".into(), json!("legacy"));
    object.insert("sessioned".into(), json!(true));
    let mut written = vec![header.to_string()];
    let mut outstanding: Vec<Value> = Vec::new();
    let mut held: Vec<Value> = Vec::new();
    for entry in lines {
        let frame = &entry["frame"];
        let from_server = entry["dir"] == "s2c";
        let is_request = frame.get("method").is_some() && frame.get("id").is_some();
        let is_response = frame.get("method").is_none() && frame.get("id").is_some();
        if entry["type"] != "frame" {
            written.push(entry.to_string());
        } else if !from_server && is_request {
            outstanding.push(frame["id"].clone());
            written.push(entry.to_string());
        } else if from_server
            && frame.get("method").is_some()
            && frame.get("id").is_none()
            && !outstanding.is_empty()
        {
            held.push(json!({"t": entry["t"], "frame": frame}));
        } else if from_server && is_response {
            outstanding.retain(|id| *id != frame["id"]);
            if held.is_empty() {
                written.push(entry.to_string());
            } else {
                let mut chunks = std::mem::take(&mut held);
                let opened = chunks[0]["t"].clone();
                chunks.push(json!({"t": entry["t"], "frame": frame}));
                written.push(
                    json!({"type":"chunks","t":opened,"dir":"s2c","id":frame["id"],"chunks":chunks})
                        .to_string(),
                );
            }
        } else {
            written.push(entry.to_string());
        }
    }
    std::fs::write(out, written.join("\n") + "\n").unwrap();
}

/// Records `server` over stdio with `client`'s scenario, serves the recording as HTTP, and runs
/// the client twice in parallel against the replay: each run must see what the live one saw.
fn interop_over_http(
    client: impl Fn(&[String]) -> Value + Sync,
    server: &[String],
    compare: impl Fn(&Value, &Value),
) {
    use crate::interop::through_record;
    let dir = tempfile::tempdir().unwrap();
    let stdio = dir.path().join("stdio.cassette.jsonl");
    let http = dir.path().join("http.cassette.jsonl");
    let live = client(&through_record(&stdio, server));
    as_http_recording(&stdio, &http);
    let replay = Server::start(&http, &[]);
    let url = vec![format!("{}mcp", replay.url)];
    let (a, b) = thread::scope(|s| {
        let a = s.spawn(|| client(&url));
        let b = s.spawn(|| client(&url));
        (a.join().unwrap(), b.join().unwrap())
    });
    compare(&live, &a);
    compare(&live, &b);
    let (code, stderr) = replay.stop();
    assert_eq!(code, Some(0), "no session missed: {stderr}");
    assert!(stderr.contains("2 client session(s) served"), "{stderr}");
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn ts_sdk_clients_in_parallel_get_the_recorded_session_over_http() {
    crate::interop::require_installed();
    interop_over_http(
        |target| crate::interop::ts_client("everything", target),
        &crate::interop::everything(),
        |live, replayed| {
            assert_eq!(live["server"], replayed["server"]);
            assert_eq!(live["steps"], replayed["steps"]);
            let progress = replayed["progress"].as_array().unwrap();
            assert!(
                !progress.is_empty(),
                "progress streamed with the answer: {replayed}"
            );
        },
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn python_sdk_clients_in_parallel_get_the_recorded_session_over_http() {
    crate::interop::require_installed();
    interop_over_http(
        |target| crate::interop::py_client("everything", "legacy", target),
        &crate::interop::everything(),
        |live, replayed| assert_eq!(live, replayed),
    );
}

#[test]
fn without_session_ids_each_initialize_starts_a_new_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stateless.http.jsonl");
    let text = std::fs::read_to_string(fixture("http/legacy-sessioned.http.jsonl")).unwrap();
    std::fs::write(&path, text.replacen(",\"sessioned\":true", "", 1)).unwrap();
    let server = Server::start(&path, &[]);
    for client in 0..2 {
        let init = server.post(&initialize(json!(client)), &[]);
        assert_eq!(init.status, 200);
        assert!(
            init.header("mcp-session-id").is_none(),
            "the recorded server minted no id"
        );
        let echo = server.post(&call(json!(1), "echo", json!({"m":"one"})), &[]);
        assert_eq!(
            echo.json()["result"]["content"][0]["text"],
            "one",
            "client {client} gets the whole recording"
        );
    }
    let deleted = request(&server.addr, "DELETE", &[], b"");
    assert_eq!(deleted.status, 405);
    assert_eq!(deleted.header("allow"), Some("GET, POST"));
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("2 client session(s) served"), "{stderr}");
}

#[test]
fn beyond_loopback_is_served_with_a_warning() {
    let server = Server::start_at(&fixture("http/modern.http.jsonl"), "0.0.0.0:0", &[]);
    assert!(server.url.starts_with("http://0.0.0.0:"), "{}", server.url);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains(
            "mcp-cassette replay: WARNING listening on 0.0.0.0: reachable beyond this machine"
        ),
        "{stderr}"
    );
}

#[test]
fn unused_recordings_are_summed_over_sessions_and_fail_on_request() {
    let cassette = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference/reference-0.4/tape.http.jsonl");
    let server = Server::start(&cassette, &[]);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("1 recorded answer(s) were never used"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unused: tools/call \"echo\" (line 2)"),
        "{stderr}"
    );
    let server = Server::start(&cassette, &["--fail-on-unused"]);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(3), "{stderr}");
    let server = Server::start(&cassette, &["--fail-on-unused"]);
    let answer = server.post(&call(json!(1), "echo", json!({"m": "recorded"})), &[]);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("never used"), "{stderr}");
}
