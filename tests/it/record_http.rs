//! `record --http`: the recording reverse proxy, driven through the real binary between an
//! HTTP client and an upstream scripted in this file (built on the crate's own listener).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use mcp_cassette::cassette::{Entry, EntryKind};
use mcp_cassette::protocol::Era;
use mcp_cassette::transport::http::inbound::{self, Body, Shutdown};
use mcp_cassette::transport::http::outbound::{Outbound, parse_url};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::record::{bin, read_cassette};

const SESSION_ID: &str = "sess-4b1d-very-private-value";
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/// How the scripted upstream behaves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// Knows `initialize` and mints a session id; `server/discover` is an unknown method.
    Legacy,
    /// Answers `server/discover`; never mints a session.
    Modern,
    /// Answers every request with an error.
    Failing,
}

/// What the upstream received.
#[derive(Clone, Debug)]
struct Seen {
    method: Method,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// The SSE answer to `tools/call slow`, byte for byte: a comment, ids, a retry, a progress
/// notification, then (after the test releases it) the result.
const SLOW_FIRST: &str = ": warming up\nid: 1\nretry: 1000\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n";
const SLOW_LAST: &str = "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\n\ndata: \"not json-rpc\"\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n";
const GET_FIRST: &str =
    "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";

struct Upstream {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    release: Arc<Notify>,
    shutdown: Shutdown,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Upstream {
    fn start(flavour: Flavour) -> Upstream {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let release = Arc::new(Notify::new());
        let shutdown = Shutdown::new();
        let (tx, rx) = mpsc::channel();
        let thread = {
            let (seen, release, shutdown) = (seen.clone(), release.clone(), shutdown.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let listening = inbound::bind("127.0.0.1:0").await.unwrap();
                    tx.send(format!("{}mcp", listening.url())).unwrap();
                    inbound::serve(listening.listener, shutdown, move |request| {
                        let (seen, release) = (seen.clone(), release.clone());
                        async move { answer(flavour, request, &seen, &release).await }
                    })
                    .await;
                });
            })
        };
        Upstream {
            url: rx.recv().unwrap(),
            seen,
            release,
            shutdown,
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.shutdown.trigger();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn reply(status: u16, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(inbound::full(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    if !content_type.is_empty() {
        r.headers_mut()
            .insert("content-type", content_type.parse().unwrap());
    }
    r
}

fn sse(parts: Vec<(&'static str, Option<Arc<Notify>>)>, hold: bool) -> Response<Body> {
    let (tx, body) = inbound::streaming(8);
    tokio::spawn(async move {
        for (part, wait) in parts {
            if let Some(wait) = wait {
                wait.notified().await;
            }
            if tx.send(Bytes::from_static(part.as_bytes())).await.is_err() {
                return;
            }
        }
        if hold {
            tx.closed().await;
        }
    });
    let mut r = Response::new(body);
    r.headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    r
}

async fn answer(
    flavour: Flavour,
    request: Request<Incoming>,
    seen: &Mutex<Vec<Seen>>,
    release: &Arc<Notify>,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.unwrap().to_bytes().to_vec();
    seen.lock().unwrap().push(Seen {
        method: parts.method.clone(),
        headers: parts.headers.clone(),
        body: body.clone(),
    });
    match parts.method {
        Method::GET => return sse(vec![(GET_FIRST, None)], true),
        Method::POST => {}
        _ => return reply(200, "", ""),
    }
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = message.get("id").cloned() else {
        return reply(202, "", "");
    };
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let error = |code: i64| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}}).to_string()
    };
    if flavour == Flavour::Failing {
        return reply(200, "application/json", error(-32603));
    }
    match (method.as_str(), flavour) {
        ("initialize", Flavour::Legacy) => {
            let mut r = reply(
                200,
                "application/json",
                result(
                    json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "up", "version": "1"}}),
                ),
            );
            r.headers_mut()
                .insert("mcp-session-id", SESSION_ID.parse().unwrap());
            r
        }
        ("server/discover", Flavour::Modern) => reply(
            200,
            "application/json",
            result(json!({"supportedVersions": ["2026-07-28"]})),
        ),
        ("server/discover", _) => reply(200, "application/json", error(-32601)),
        ("tools/call", _) => match message["params"]["name"].as_str() {
            Some("slow") => sse(
                vec![(SLOW_FIRST, None), (SLOW_LAST, Some(release.clone()))],
                false,
            ),
            Some("html") => reply(500, "text/html", "<html>oops</html>"),
            Some("hang") => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                reply(200, "", "")
            }
            Some("identity") => {
                let mut r = reply(200, "application/json", result(json!({"ok": true})));
                r.headers_mut()
                    .insert("content-encoding", "identity".parse().unwrap());
                r
            }
            _ => reply(
                200,
                "application/json",
                result(json!({"echo": message["params"]["arguments"]})),
            ),
        },
        ("bad/request", _) => reply(400, "application/json", error(-32600)),
        _ => reply(200, "application/json", result(json!({}))),
    }
}

/// The proxy under test: `record --http <upstream> --listen 127.0.0.1:0 -o <out>`.
struct Proxy {
    child: Child,
    url: String,
    stderr: Receiver<String>,
}

impl Proxy {
    fn start(upstream: &str, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Proxy {
        Proxy::start_on("127.0.0.1:0", upstream, out, extra, env)
    }

    fn start_on(
        listen: &str,
        upstream: &str,
        out: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Proxy {
        let mut cmd = Command::new(bin());
        cmd.args(["record", "--http", upstream, "--listen", listen, "-o"])
            .arg(out)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("record starts");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("record prints where it listens");
        let url = first
            .strip_prefix("mcp-cassette: recording ")
            .and_then(|rest| rest.split(" → ").next())
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_owned();
        assert_eq!(first, format!("mcp-cassette: recording {url} → {upstream}"));
        Proxy {
            child,
            url,
            stderr: rx,
        }
    }

    /// SIGTERM, then the exit status and every stderr line after the first.
    fn stop(mut self) -> (ExitStatus, String) {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        let lines: Vec<String> = self.stderr.iter().collect();
        (status, lines.join("\n"))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // A failed test must not leave its proxy running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `cmd` with `input` on stdin and returns what it printed.
fn run_stdin(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// A client of the proxy.
struct Client {
    rt: tokio::runtime::Runtime,
    out: Outbound,
    url: http::Uri,
}

struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Client {
    fn new(url: &str) -> Client {
        let url = parse_url(url).unwrap();
        Client {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            out: Outbound::for_url(&url).unwrap(),
            url,
        }
    }

    fn request(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Request<Full<Bytes>> {
        let mut request = Request::builder().method(method).uri(self.url.clone());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        request.body(Full::new(Bytes::from(body))).unwrap()
    }

    fn send(&self, method: Method, headers: &[(&str, &str)], body: Vec<u8>) -> Answer {
        let request = self.request(method, headers, body);
        self.rt.block_on(async {
            let answer = self.out.send(request).await.expect("the proxy answers");
            let (head, body) = answer.into_parts();
            let body = body.collect().await.unwrap().to_bytes().to_vec();
            Answer {
                status: head.status.as_u16(),
                headers: head.headers,
                body,
            }
        })
    }

    fn post(&self, message: &Value) -> Answer {
        self.send(
            Method::POST,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            message.to_string().into_bytes(),
        )
    }
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn frames(entries: &[Entry]) -> Vec<(String, Value)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Frame(f) => Some((
                e.dir.unwrap().as_str().to_owned(),
                serde_json::from_str(f.text()).unwrap(),
            )),
            _ => None,
        })
        .collect()
}

fn entry_json(entry: &Entry) -> Value {
    serde_json::from_str(&entry.to_line()).unwrap()
}

#[test]
fn a_legacy_session_is_relayed_verbatim_and_recorded() {
    let upstream = Upstream::start(Flavour::Legacy);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let proxy = Proxy::start(&upstream.url, &out, &[], &[]);
    let client = Client::new(&proxy.url);

    // A modern probe the server does not know, then the handshake: still legacy.
    let probe = client.post(&rpc(1, "server/discover", json!({})));
    assert_eq!(probe.status, 200);
    let init = client.post(&rpc(
        2,
        "initialize",
        json!({"protocolVersion": "2025-06-18"}),
    ));
    assert_eq!(init.status, 200);
    assert_eq!(init.headers["mcp-session-id"], SESSION_ID);
    let note = client.send(
        Method::POST,
        &[
            ("content-type", "application/json"),
            ("mcp-session-id", SESSION_ID),
        ],
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
    );
    assert_eq!(note.status, 202);
    assert!(note.body.is_empty());

    // An SSE answer reaches the client event by event: the upstream sends its last part only
    // once the client has read the first one through the proxy.
    let request = client.request(
        Method::POST,
        &[
            ("content-type", "application/json"),
            ("authorization", "Bearer t0p"),
        ],
        rpc(3, "tools/call", json!({"name": "slow", "arguments": {}}))
            .to_string()
            .into_bytes(),
    );
    let streamed = client.rt.block_on(async {
        let answer = client.out.send(request).await.unwrap();
        assert_eq!(answer.headers()["content-type"], "text/event-stream");
        let mut body = answer.into_body();
        let mut got = Vec::new();
        while got.len() < SLOW_FIRST.len() {
            let frame = body.frame().await.unwrap().unwrap();
            got.extend_from_slice(frame.data_ref().unwrap());
        }
        upstream.release.notify_one();
        while let Some(frame) = body.frame().await {
            got.extend_from_slice(frame.unwrap().data_ref().unwrap());
        }
        got
    });
    assert_eq!(
        String::from_utf8(streamed).unwrap(),
        format!("{SLOW_FIRST}{SLOW_LAST}"),
        "SSE relayed byte for byte"
    );

    let bad = client.post(&rpc(4, "bad/request", json!({})));
    assert_eq!(bad.status, 400);
    let html = client.post(&rpc(5, "tools/call", json!({"name": "html"})));
    assert_eq!(
        (html.status, &html.body[..]),
        (500, &b"<html>oops</html>"[..])
    );
    let deleted = client.send(
        Method::DELETE,
        &[("mcp-session-id", SESSION_ID)],
        Vec::new(),
    );
    assert_eq!(deleted.status, 200);

    // A standalone GET stream, still open when the proxy stops.
    let get = client.request(Method::GET, &[("accept", "text/event-stream")], Vec::new());
    let first = client.rt.block_on(async {
        let answer = client.out.send(get).await.unwrap();
        let mut body = answer.into_body();
        let frame = body.frame().await.unwrap().unwrap();
        let first = frame.data_ref().unwrap().to_vec();
        // Keep the stream open past the shutdown.
        std::mem::forget(body);
        first
    });
    assert_eq!(first, GET_FIRST.as_bytes());

    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        stderr.contains(r#"mcp-cassette: recording as legacy (decided by "initialize")"#),
        "{stderr}"
    );

    // The upstream saw the client's headers, less the hop-by-hop ones.
    let seen = upstream.seen();
    let call = seen
        .iter()
        .find(|s| s.headers.contains_key("authorization"))
        .unwrap();
    assert_eq!(call.headers["authorization"], "Bearer t0p");
    assert_eq!(call.headers["accept-encoding"], "identity");
    assert!(seen.iter().any(|s| s.method == Method::DELETE));

    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains(SESSION_ID),
        "session id values are never written"
    );
    assert!(!text.contains("t0p"), "header values are never written");
    assert!(!text.contains("oops"), "an HTML answer is not captured");
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era(), Some(Era::Legacy));
    assert!(header.sessioned());
    assert_eq!(header.url(), Some(upstream.url.as_str()));
    let header_line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header_line["transport"], "http");

    let f = frames(&entries);
    let methods: Vec<String> = f
        .iter()
        .filter(|(d, _)| d == "c2s")
        .map(|(_, v)| v["method"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/call",
            "bad/request",
            "tools/call"
        ]
    );
    // Derivable statuses are not written; the 400 is.
    let with_status: Vec<Value> = entries
        .iter()
        .map(entry_json)
        .filter(|e| e.get("http").is_some())
        .collect();
    assert_eq!(with_status.len(), 1, "{with_status:?}");
    assert_eq!(with_status[0]["http"], json!({"status": 400}));
    assert_eq!(with_status[0]["frame"]["id"], 4);

    let chunks: Vec<Value> = entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Chunks { .. }))
        .map(entry_json)
        .collect();
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    let post = chunks.iter().find(|c| c.get("via").is_none()).unwrap();
    assert_eq!(post["id"], 3);
    let frames_of = |c: &Value| -> Vec<Value> {
        c["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["frame"].clone())
            .collect()
    };
    assert_eq!(
        frames_of(post),
        [
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}),
            json!({"jsonrpc":"2.0","id":3,"result":{"content":[]}}),
        ],
        "events that are not JSON-RPC messages are relayed, not recorded"
    );
    let get = chunks.iter().find(|c| c.get("via").is_some()).unwrap();
    assert_eq!(get["via"], "get");
    assert!(get.get("id").is_none());
    assert_eq!(
        frames_of(get),
        [json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})],
        "a stream open at shutdown is written with what it carried"
    );

    // Our own tools read it: lint passes, and stdio replay answers the JSON exchanges.
    let lint = Command::new(bin()).arg("lint").arg(&out).output().unwrap();
    assert!(
        lint.status.success(),
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    let input = format!(
        "{}\n{}\n",
        rpc(2, "initialize", json!({"protocolVersion": "2025-06-18"})),
        rpc(3, "tools/call", json!({"name": "slow", "arguments": {}}))
    );
    let replay = run_stdin(
        Command::new(bin()).arg("replay").arg(&out),
        input.as_bytes(),
    );
    let replayed = String::from_utf8_lossy(&replay.stdout);
    assert!(
        replayed.contains(r#""serverInfo":{"name":"up","version":"1"}"#),
        "{replayed}"
    );
    assert!(
        replayed.contains(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#),
        "{replayed}"
    );
}

#[test]
fn request_bodies_are_redacted_on_disk_only() {
    let upstream = Upstream::start(Flavour::Legacy);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let proxy = Proxy::start(&upstream.url, &out, &[], &[]);
    let client = Client::new(&proxy.url);
    let answer = client.post(&rpc(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": TOKEN}}),
    ));
    assert_eq!(answer.status, 200);
    let answer: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(
        answer["result"]["echo"]["text"], TOKEN,
        "the client sees the original"
    );
    let identity = client.send(
        Method::POST,
        &[
            ("content-type", "application/json"),
            ("accept-encoding", "gzip, br"),
        ],
        rpc(2, "tools/call", json!({"name": "identity"}))
            .to_string()
            .into_bytes(),
    );
    assert!(
        identity.headers.get("content-encoding").is_none(),
        "content-encoding not claimed"
    );
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&upstream.seen()[0].body).contains(TOKEN),
        "the upstream sees the secret"
    );
    assert_eq!(upstream.seen()[1].headers["accept-encoding"], "identity");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(TOKEN), "{text}");
    assert!(text.contains("[REDACTED:github:"), "{text}");
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era(), Some(Era::Modern), "never handshook: modern");
    assert_eq!(frames(&entries).len(), 4);
    assert!(!header.sessioned());
}

#[test]
fn a_modern_session_and_a_session_without_success() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = Upstream::start(Flavour::Modern);
    let out = dir.path().join("modern.cassette.jsonl");
    let proxy = Proxy::start(&upstream.url, &out, &["--no-redact"], &[]);
    let client = Client::new(&proxy.url);
    client.post(&rpc(1, "server/discover", json!({})));
    let (_, stderr) = proxy.stop();
    assert!(
        stderr.contains(r#"recording as modern (decided by "server/discover")"#),
        "{stderr}"
    );
    let (header, _) = read_cassette(&out);
    assert_eq!(header.era(), Some(Era::Modern));

    let failing = Upstream::start(Flavour::Failing);
    let out = dir.path().join("failing.cassette.jsonl");
    let proxy = Proxy::start(&failing.url, &out, &[], &[]);
    let client = Client::new(&proxy.url);
    client.post(&rpc(1, "initialize", json!({})));
    client.post(&rpc(2, "server/discover", json!({})));
    let (status, stderr) = proxy.stop();
    assert!(status.success());
    assert!(!stderr.contains("recording as"), "{stderr}");
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era(), None, "no success: era omitted");
    assert_eq!(entries.len(), 4);
}

#[test]
fn upstream_failures_are_502_and_bodies_over_the_limit_413() {
    let upstream = Upstream::start(Flavour::Legacy);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let proxy = Proxy::start(
        &upstream.url,
        &out,
        &[],
        &[("MCP_CASSETTE_UPSTREAM_TIMEOUT_MS", "300")],
    );
    let client = Client::new(&proxy.url);
    let hang = client.post(&rpc(1, "tools/call", json!({"name": "hang"})));
    assert_eq!(hang.status, 502);
    let body: Value = serde_json::from_slice(&hang.body).unwrap();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32603);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("300 ms")
    );

    // A body announced over the limit is refused before it is read (a client still sending
    // would see its connection closed under it, so only the head is sent here).
    let huge = {
        use std::io::{Read, Write};
        let host = proxy
            .url
            .trim_start_matches("http://")
            .trim_end_matches('/');
        let mut raw = std::net::TcpStream::connect(host).unwrap();
        write!(
            raw,
            "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            100 * 1024 * 1024
        )
        .unwrap();
        let mut head = [0u8; 12];
        raw.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head).into_owned()
    };
    assert_eq!(huge, "HTTP/1.1 413");

    let foreign = client.send(
        Method::POST,
        &[
            ("content-type", "application/json"),
            ("origin", "http://evil.example"),
        ],
        rpc(2, "ping", json!({})).to_string().into_bytes(),
    );
    assert_eq!(foreign.status, 403);
    let local = client.send(
        Method::POST,
        &[
            ("content-type", "application/json"),
            ("origin", "http://localhost:3000"),
        ],
        rpc(3, "ping", json!({})).to_string().into_bytes(),
    );
    assert_eq!(local.status, 200);

    // The upstream goes away: refused connections are 502 too.
    drop(upstream);
    let down = client.post(&rpc(4, "ping", json!({})));
    assert_eq!(down.status, 502);
    let (status, stderr) = proxy.stop();
    assert!(status.success());
    assert_eq!(
        stderr
            .matches("mcp-cassette: upstream request failed: ")
            .count(),
        2,
        "{stderr}"
    );
    let (_, entries) = read_cassette(&out);
    let f = frames(&entries);
    assert!(
        !f.iter().any(|(_, v)| v["id"] == 2),
        "a refused request is not recorded"
    );
}

#[test]
fn a_taken_port_fails_loudly_and_leaves_nothing() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let output = Command::new(bin())
        .args(["record", "--http", "http://127.0.0.1:9/mcp", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("record: 127.0.0.1:{port} is already in use by ")),
        "{stderr}"
    );
    assert!(stderr.contains("Stop it or pass --listen"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn refusals_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let run = |args: &[&str]| {
        let o = Command::new(bin())
            .arg("record")
            .args(args)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--http", "http://127.0.0.1:9/mcp", "--mode", "append"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("record --mode append is for stdio recordings"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--http", "ftp://example.com/mcp"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("\"ftp://example.com/mcp\" is not an http:// or https:// URL"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--http", "http://127.0.0.1:9/mcp", "--listen", "nowhere"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("record: --listen wants <host>:<port>"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// A port free right now, for servers that take theirs from the command line or environment.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A third-party server run for one test, killed when dropped.
struct Server(Child);

impl Server {
    /// Starts `cmd` and waits until `port` accepts connections.
    fn start(mut cmd: Command, port: u16) -> Server {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let server = Server(child);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "server never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn everything_http() -> (Server, String) {
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.current_dir(crate::interop::interop_dir())
        .arg("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    (
        Server::start(cmd, port),
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn sdk_clients_see_through_the_proxy_what_they_see_directly() {
    crate::interop::require_installed();
    let (_everything, upstream) = everything_http();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("everything.cassette.jsonl");
    let proxy = Proxy::start(&upstream, &out, &[], &[]);
    let through = format!("{}mcp", proxy.url);

    // Nothing is normalised: server-everything answers these scenarios with the same values on
    // every run, so the whole report must be equal.
    let direct_ts = crate::interop::ts_client("everything", std::slice::from_ref(&upstream));
    let proxied = crate::interop::ts_client("everything", std::slice::from_ref(&through));
    assert_eq!(direct_ts, proxied);
    assert!(
        !proxied["progress"].as_array().unwrap().is_empty(),
        "progress notifications reached the client through the proxy"
    );
    let direct = crate::interop::py_client("everything", "auto", std::slice::from_ref(&upstream));
    let proxied = crate::interop::py_client("everything", "auto", &[through]);
    assert_eq!(direct, proxied);

    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era(), Some(Era::Legacy));
    assert!(header.sessioned());
    assert!(
        entries
            .iter()
            .any(|e| matches!(&e.kind, EntryKind::Chunks { chunks, .. } if chunks.len() > 1)),
        "the progress stream is recorded as one chunks entry"
    );
    let lint = Command::new(bin()).arg("lint").arg(&out).output().unwrap();
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );

    // The whole loop with real parts: what the proxy recorded, `replay --listen` serves to the
    // same SDK clients, each seeing what it saw from the live server.
    let replay = crate::replay_http::Server::start(&out, &[]);
    let replayed = vec![format!("{}mcp", replay.url)];
    let ts = crate::interop::ts_client("everything", &replayed);
    assert_eq!(ts["server"], direct_ts["server"]);
    assert_eq!(ts["steps"], direct_ts["steps"]);
    assert_eq!(ts["progress"], direct_ts["progress"]);
    // Legacy mode: server-everything answers the auto probe's `server/discover` with an HTTP
    // error carrying no JSON-RPC response for it, so the recording holds no answer to replay.
    let py = crate::interop::py_client("everything", "legacy", &replayed);
    assert_eq!(py, direct);
    let (code, stderr) = replay.stop();
    assert_eq!(code, Some(0), "no miss: {stderr}");
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_modern_python_sdk_session_is_recorded_as_modern() {
    crate::interop::require_installed();
    let port = free_port();
    let mut cmd = Command::new(crate::interop::python());
    cmd.current_dir(crate::interop::interop_dir())
        .arg("python/http_server.py")
        .arg(port.to_string());
    let _server = Server::start(cmd, port);
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("modern.cassette.jsonl");
    let proxy = Proxy::start(&upstream, &out, &[], &[]);
    let direct = crate::interop::py_client("tiny", "auto", &[upstream]);
    let proxied = crate::interop::py_client("tiny", "auto", &[format!("{}mcp", proxy.url)]);
    assert_eq!(direct, proxied);
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(r#"recording as modern (decided by "server/discover")"#),
        "{stderr}"
    );
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era(), Some(Era::Modern));
    assert!(!header.sessioned());
    assert!(
        !frames(&entries)
            .iter()
            .any(|(_, v)| v["method"] == "initialize"),
        "no handshake in the modern era"
    );
}

#[test]
fn the_recorded_everything_cassette_reads_lints_and_replays() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/http/everything.cassette.jsonl");
    let (header, entries) = read_cassette(&path);
    assert_eq!(header.era(), Some(Era::Legacy));
    assert!(entries.iter().any(|e| matches!(
        &e.kind,
        EntryKind::Chunks {
            via_get: true,
            id: None,
            ..
        }
    )));
    let lint = Command::new(bin()).arg("lint").arg(&path).output().unwrap();
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    // Stdio replay serves an HTTP cassette's streamed answers as plain answers.
    let input = format!(
        "{}\n{}\n",
        rpc(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "interop-ts", "version": "1.0.0"}})
        ),
        rpc(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "hello from ts"}})
        )
    );
    let replay = run_stdin(
        Command::new(bin()).arg("replay").arg(&path),
        input.as_bytes(),
    );
    let replayed = String::from_utf8_lossy(&replay.stdout);
    assert!(replayed.contains("Echo: hello from ts"), "{replayed}");
}

#[test]
fn a_client_gone_mid_stream_leaves_a_parseable_cassette() {
    let upstream = Upstream::start(Flavour::Legacy);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let proxy = Proxy::start(&upstream.url, &out, &[], &[]);
    let client = Client::new(&proxy.url);
    let request = client.request(
        Method::POST,
        &[("content-type", "application/json")],
        rpc(7, "tools/call", json!({"name": "slow"}))
            .to_string()
            .into_bytes(),
    );
    client.rt.block_on(async {
        let answer = client.out.send(request).await.unwrap();
        let mut body = answer.into_body();
        let mut got = 0;
        while got < SLOW_FIRST.len() {
            got += body
                .frame()
                .await
                .unwrap()
                .unwrap()
                .data_ref()
                .unwrap()
                .len();
        }
        // Dropped here: the connection goes away with the stream half sent.
    });
    drop(client);
    // The proxy goes on serving.
    let again = Client::new(&proxy.url);
    assert_eq!(again.post(&rpc(8, "ping", json!({}))).status, 200);
    let (status, stderr) = proxy.stop();
    assert!(status.success(), "{stderr}");
    let (_, entries) = read_cassette(&out);
    let chunks: Vec<Value> = entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Chunks { .. }))
        .map(entry_json)
        .collect();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["id"], 7);
    assert_eq!(
        chunks[0]["chunks"].as_array().unwrap().len(),
        1,
        "{chunks:?}"
    );
}

#[test]
fn beyond_loopback_is_served_with_a_warning() {
    let upstream = Upstream::start(Flavour::Modern);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.cassette.jsonl");
    let proxy = Proxy::start_on("0.0.0.0:0", &upstream.url, &out, &[], &[]);
    assert!(proxy.url.starts_with("http://0.0.0.0:"), "{}", proxy.url);
    let port = proxy.url.rsplit(':').next().unwrap().trim_end_matches('/');
    let client = Client::new(&format!("http://127.0.0.1:{port}/"));
    assert_eq!(
        client.post(&rpc(1, "server/discover", json!({}))).status,
        200
    );
    let (status, stderr) = proxy.stop();
    assert!(status.success());
    assert!(
        stderr.contains(
            "mcp-cassette record: WARNING listening on 0.0.0.0: reachable beyond this machine"
        ),
        "{stderr}"
    );
}
