//! `check --url` and `snapshot --url`: the MCP client over Streamable HTTP, driven through the
//! real binary against a scripted HTTP server written here (raw HTTP/1.1 on a std listener, so
//! an answer can be split across writes, stall, or be HTML), and, in the interop suite, against
//! `@modelcontextprotocol/server-everything` and a Python SDK 2.x server.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::interop::{interop_dir, python, require_installed};
use crate::record::bin;

/// One request as the scripted server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: HashMap<String, String>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// A piece of an answer: bytes written after a pause.
type Parts = Vec<(Duration, Vec<u8>)>;

type Script = dyn Fn(&Seen) -> Parts + Send + Sync;

/// A scripted Streamable HTTP server on a free port; every connection serves one request and
/// closes. It lives as long as the test process (its thread blocks in `accept`).
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(script: impl Fn(&Seen) -> Parts + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let log = Arc::clone(&seen);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = Arc::clone(&script);
                let log = Arc::clone(&log);
                thread::spawn(move || serve_one(stream, &*script, &log));
            }
        });
        Server { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve_one(stream: TcpStream, script: &Script, log: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let method = line.split(' ').next().unwrap_or("").to_owned();
    let mut headers = HashMap::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let seen = Seen {
        method,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    log.lock().unwrap().push(seen.clone());
    let mut stream = stream;
    for (pause, bytes) in script(&seen) {
        thread::sleep(pause);
        if stream
            .write_all(&bytes)
            .and_then(|()| stream.flush())
            .is_err()
        {
            return;
        }
    }
}

fn head(status: &str, content_type: &str, extra: &str, length: Option<usize>) -> Vec<u8> {
    let length = length.map_or(String::new(), |n| format!("content-length: {n}\r\n"));
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n{length}{extra}connection: close\r\n\r\n"
    )
    .into_bytes()
}

/// A whole answer.
fn whole(status: &str, content_type: &str, extra: &str, body: &str) -> Parts {
    let mut bytes = head(status, content_type, extra, Some(body.len()));
    bytes.extend_from_slice(body.as_bytes());
    vec![(Duration::ZERO, bytes)]
}

fn json_answer(extra: &str, body: &Value) -> Parts {
    whole("200 OK", "application/json", extra, &body.to_string())
}

fn accepted() -> Parts {
    vec![(
        Duration::ZERO,
        b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
    )]
}

/// An event stream written in the pieces given, a pause before each.
fn event_stream(extra: &str, pieces: &[&str]) -> Parts {
    let mut parts = vec![(
        Duration::ZERO,
        head("200 OK", "text/event-stream", extra, None),
    )];
    for piece in pieces {
        parts.push((Duration::from_millis(20), piece.as_bytes().to_vec()));
    }
    parts
}

fn result(request: &Seen, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request.body["id"], "result": result})
}

fn legacy_init(request: &Seen) -> Value {
    result(
        request,
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted-http", "version": "1.0.0"}
        }),
    )
}

fn tools() -> Value {
    json!({"tools": [
        {"name": "echo", "description": "Echoes its input back.",
         "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
    ]})
}

/// Runs the binary with a deadline; the client's timeout is set by `timeout_ms` when given.
fn run(args: &[&str], timeout_ms: Option<u64>) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_remove("MCP_CASSETTE_TIMEOUT_MS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(ms) = timeout_ms {
        cmd.env("MCP_CASSETTE_TIMEOUT_MS", ms.to_string());
    }
    let child = cmd.spawn().unwrap();
    wait_with_deadline(child, Duration::from_secs(60))
}

fn wait_with_deadline(mut child: Child, deadline: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            panic!("the binary ran past {deadline:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A legacy server: no modern answer (400 without a JSON-RPC body), a session minted at
/// `initialize`, a ping and the listing on an event stream split mid-line, 202 for the
/// client's answer to the ping (and a plain-text 200 for its notification).
fn legacy_server() -> Server {
    Server::start(|request| {
        if request.method == "DELETE" {
            return whole("200 OK", "text/plain", "", "");
        }
        match request.rpc_method() {
            "server/discover" => whole("400 Bad Request", "text/plain", "", "no session"),
            "initialize" => json_answer("mcp-session-id: sess-1\r\n", &legacy_init(request)),
            "tools/list" => {
                let answer = result(request, tools()).to_string();
                let (first, second) = answer.split_at(answer.len() / 2);
                let ping = r#"{"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#;
                let first = format!(
                    ": keep-alive\r\n\r\ndata: {ping}\r\n\r\nevent: message\r\ndata: {first}"
                );
                let second = format!("{second}\r\n\r\n");
                event_stream("", &[&first, &second])
            }
            _ if request.body.get("method").is_none() => accepted(),
            // A lenient server's 200 with a body, where 202 is due: nothing to wait for.
            "notifications/initialized" => whole("200 OK", "text/plain", "", "ok"),
            _ => whole("404 Not Found", "text/plain", "", ""),
        }
    })
}

#[test]
fn check_over_http_in_the_legacy_era_echoes_the_session_and_ends_it() {
    let server = legacy_server();
    let out = run(&["check", "--url", &server.url], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "\nmcp-cassette check: {}\nserver: scripted-http@1.0.0  protocol: 2025-06-18\nsurface: 1 tool\n\n[OK] no findings\n\nresult: PASS (0 errors, 0 warnings, gate: error)\n",
            server.url
        )
    );
    assert!(
        stderr(&out).contains("mcp-cassette: modern probe failed (HTTP 400 from server), trying legacy\nmcp-cassette: connected as legacy (protocol 2025-06-18)\n"),
        "{}",
        stderr(&out)
    );
    let seen = server.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    for post in &posts {
        assert_eq!(post.header("content-type"), Some("application/json"));
        assert_eq!(
            post.header("accept"),
            Some("application/json, text/event-stream")
        );
    }
    let by_method = |m: &str| {
        posts
            .iter()
            .find(|s| s.rpc_method() == m)
            .unwrap_or_else(|| panic!("no {m}: {seen:#?}"))
    };
    let discover = by_method("server/discover");
    assert_eq!(discover.header("mcp-method"), Some("server/discover"));
    let init = by_method("initialize");
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None, "{init:?}");
    assert_eq!(
        init.header("mcp-method"),
        None,
        "no modern headers in legacy"
    );
    let list = by_method("tools/list");
    assert_eq!(list.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(list.header("mcp-protocol-version"), Some("2025-06-18"));
    assert_eq!(list.header("mcp-method"), None);
    let pong = posts
        .iter()
        .find(|s| s.body["id"] == "srv-1")
        .expect("the ping on the stream is answered");
    assert_eq!(pong.body["result"], json!({}));
    assert_eq!(pong.header("mcp-session-id"), Some("sess-1"));
    let delete = seen.iter().find(|s| s.method == "DELETE").expect("DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(seen.last().unwrap().method, "DELETE", "closing comes last");
}

#[test]
fn snapshot_over_http_writes_then_checks_the_same_contract() {
    let server = legacy_server();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snap.json");
    let file = file.to_str().unwrap();
    let out = run(&["snapshot", "--url", &server.url, "-f", file], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("wrote {file} (1 tool)\n"));
    let out = run(
        &["snapshot", "--check", "--url", &server.url, "-f", file],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("[OK] contract unchanged"),
        "{}",
        stdout(&out)
    );
}

/// A modern server that first refuses our version with HTTP 400 / -32022, names the one it
/// speaks, mints a session id nobody should echo, and checks the modern headers.
#[test]
fn modern_over_http_retries_a_named_version_and_sends_the_method_header() {
    let server = Server::start(|request| {
        let version = request.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        if request.method == "DELETE" {
            return whole("405 Method Not Allowed", "text/plain", "", "");
        }
        if request.header("mcp-protocol-version") != Some(version.as_str())
            || request.header("mcp-method") != Some(request.rpc_method())
            || request.header("mcp-session-id").is_some()
        {
            let error = json!({"jsonrpc": "2.0", "id": request.body["id"], "error": {"code": -32020, "message": "header mismatch"}});
            return whole(
                "400 Bad Request",
                "application/json",
                "",
                &error.to_string(),
            );
        }
        if version != "2027-01-01" {
            let error = json!({"jsonrpc": "2.0", "id": request.body["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2027-01-01"], "requested": version}}});
            return whole(
                "400 Bad Request",
                "application/json",
                "",
                &error.to_string(),
            );
        }
        match request.rpc_method() {
            "server/discover" => json_answer(
                "mcp-session-id: not-for-modern\r\n",
                &result(
                    request,
                    json!({"resultType": "complete", "supportedVersions": ["2027-01-01"],
                       "capabilities": {"tools": {}},
                       "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-http", "version": "2"}}}),
                ),
            ),
            "tools/list" => json_answer("", &result(request, tools())),
            _ => whole("404 Not Found", "application/json", "", "{}"),
        }
    });
    let out = run(&["check", "--url", &server.url, "--format", "json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["protocolVersion"], "2027-01-01");
    assert_eq!(report["server"]["name"], "modern-http");
    assert_eq!(report["toolCount"], 1);
    assert!(
        stderr(&out).contains("server rejected 2026-07-28; retrying at 2027-01-01"),
        "{}",
        stderr(&out)
    );
    let seen = server.seen();
    assert!(
        seen.iter().all(|s| s.method == "POST"),
        "no DELETE without a legacy session: {seen:#?}"
    );
}

#[test]
fn a_modern_header_refusal_settles_the_era_without_falling_back() {
    let server = Server::start(|request| {
        let error = json!({"jsonrpc": "2.0", "id": request.body["id"], "error": {"code": -32021, "message": "needs sampling"}});
        whole(
            "400 Bad Request",
            "application/json",
            "",
            &error.to_string(),
        )
    });
    let out = run(&["check", "--url", &server.url], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "check failed: server/discover rejected: needs sampling\n"
    );
    assert_eq!(server.seen().len(), 1, "no legacy fallback");
}

#[test]
fn an_html_error_page_is_an_http_status_error() {
    let server = Server::start(|_| {
        whole(
            "500 Internal Server Error",
            "text/html",
            "",
            "<html><body>Oops</body></html>",
        )
    });
    let out = run(&["check", "--url", &server.url], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "check failed: server answered neither era. modern: HTTP 500 from server; legacy: initialize failed: HTTP 500 from server"
    );
}

#[test]
fn an_html_page_with_status_200_is_named() {
    let server = Server::start(|_| whole("200 OK", "text/html", "", "<html>hello</html>"));
    let out = run(&["check", "--url", &server.url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "check failed: initialize failed: the server answered \"initialize\" with text/html, not JSON or an event stream\n"
    );
}

#[test]
fn a_server_that_hangs_times_out_per_request() {
    let server = Server::start(|_| vec![(Duration::from_secs(10), Vec::new())]);
    let start = Instant::now();
    let out = run(
        &["check", "--url", &server.url, "--era", "legacy"],
        Some(300),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "check failed: initialize failed: timeout after 300ms waiting for \"initialize\"\n"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_stream_that_ends_without_the_answer_fails_at_once() {
    let server = Server::start(|request| match request.rpc_method() {
        "initialize" => event_stream(
            "",
            &[
                r#"data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
                "\n\n",
            ],
        ),
        _ => accepted(),
    });
    let start = Instant::now();
    let out = run(&["check", "--url", &server.url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "check failed: initialize failed: the server ended its answer to \"initialize\" without a JSON-RPC response\n"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "no waiting for the timeout"
    );
}

#[test]
fn an_expired_session_is_the_servers_404() {
    let server = Server::start(|request| match request.rpc_method() {
        "initialize" => json_answer("mcp-session-id: s-1\r\n", &legacy_init(request)),
        "notifications/initialized" => accepted(),
        _ if request.method == "DELETE" => whole("404 Not Found", "text/plain", "", ""),
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "Session not found"}});
            whole("404 Not Found", "application/json", "", &error.to_string())
        }
    });
    let out = run(&["check", "--url", &server.url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "check failed: HTTP 404 from server (-32001: Session not found)"
    );
}

#[test]
fn an_answer_over_the_size_limit_is_refused_before_it_is_read() {
    let server = Server::start(|_| {
        vec![(
            Duration::ZERO,
            head("200 OK", "application/json", "", Some(65 * 1024 * 1024)),
        )]
    });
    let out = run(&["check", "--url", &server.url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "check failed: initialize failed: the server's answer to \"initialize\" exceeds 64 MiB, more than this client reads\n"
    );
}

#[test]
fn bad_urls_unreachable_servers_and_tls_failures_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snap.json");
    let file = file.to_str().unwrap();

    let out = run(&["check", "--url", "ftp://example.com/mcp"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "check failed: --url: \"ftp://example.com/mcp\" is not an http:// or https:// URL\n"
    );
    let out = run(&["snapshot", "--url", "not a url", "-f", file], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "snapshot failed: --url: \"not a url\" is not a URL\n"
    );

    // A port that was free a moment ago.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = run(&["snapshot", "--url", &url, "-f", file], None);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(
        text.starts_with(&format!(
            "snapshot failed: the server at {url} could not be reached (tcp connect error: Connection refused"
        )),
        "{text}"
    );
    assert!(
        !text.contains("trying legacy"),
        "a server that is not there is not probed twice: {text}"
    );
    assert!(!std::path::Path::new(file).exists(), "nothing written");

    // https to a server that speaks plain HTTP: the TLS handshake fails, and says why.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let https = format!("https://{}/mcp", plain.local_addr().unwrap());
    thread::spawn(move || {
        for mut stream in plain.incoming().flatten() {
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    let out = run(&["check", "--url", &https], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "check failed: the server at {https} could not be reached (TLS handshake failed: received corrupt message of type InvalidContentType) while waiting for \"server/discover\"\n"
        )
    );
}

/// A free port for a server started by a test.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port` (a server that takes its time to start).
fn wait_for_port(port: u16, child: &mut Child) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the server exited before listening: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "nothing listens on {port}"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// A server child that is killed when the test ends, however it ends.
pub(crate) struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn everything_http() -> (Running, String) {
    let port = free_port();
    let mut child = Command::new("node")
        .arg(
            interop_dir()
                .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        )
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child);
    (Running(child), format!("http://127.0.0.1:{port}/mcp"))
}

fn everything_stdio() -> String {
    format!(
        "node {} stdio",
        interop_dir()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            .display()
    )
}

/// The report without its target line, which names the transport.
fn without_target(report: &str) -> String {
    report
        .lines()
        .filter(|line| !line.starts_with("mcp-cassette check: "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn server_everything_over_http_checks_as_it_does_over_stdio() {
    require_installed();
    let (_server, url) = everything_http();
    let http = run(&["check", "--url", &url], None);
    assert_eq!(http.status.code(), Some(0), "{}", stderr(&http));
    let stdio = run(&["check", "--stdio", &everything_stdio()], None);
    assert_eq!(stdio.status.code(), Some(0), "{}", stderr(&stdio));
    assert_eq!(
        without_target(&stdout(&http)),
        without_target(&stdout(&stdio))
    );
    assert!(stdout(&http).contains(&format!("mcp-cassette check: {url}\n")));

    let http = run(&["check", "--url", &url, "--format", "json"], None);
    let stdio = run(
        &["check", "--stdio", &everything_stdio(), "--format", "json"],
        None,
    );
    let mut http: Value = serde_json::from_slice(&http.stdout).unwrap();
    let mut stdio: Value = serde_json::from_slice(&stdio.stdout).unwrap();
    http["target"] = Value::Null;
    stdio["target"] = Value::Null;
    assert_eq!(http, stdio);
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn server_everything_snapshots_alike_over_http_and_stdio() {
    require_installed();
    let (_server, url) = everything_http();
    let dir = tempfile::tempdir().unwrap();
    let over_http = dir.path().join("http.json");
    let over_stdio = dir.path().join("stdio.json");
    let out = run(
        &["snapshot", "--url", &url, "-f", over_http.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(
        &[
            "snapshot",
            "--stdio",
            &everything_stdio(),
            "-f",
            over_stdio.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = |path: &std::path::Path| -> Value {
        let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        // When it was taken is the only thing allowed to differ.
        if let Some(object) = value.as_object_mut() {
            object.remove("capturedAt");
        }
        value
    };
    assert_eq!(read(&over_http), read(&over_stdio));
    // And the stdio snapshot gates the HTTP server: same contract.
    let out = run(
        &[
            "snapshot",
            "--check",
            "--url",
            &url,
            "-f",
            over_stdio.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("[OK] contract unchanged"));
}

pub(crate) fn python_http() -> (Running, String) {
    let port = free_port();
    let mut child = Command::new(python())
        .arg(interop_dir().join("python/http_server.py"))
        .arg(port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child);
    (Running(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// The Python SDK 2.x server refuses a modern request whose `Mcp-Method`, `Mcp-Name` or
/// `Mcp-Param-*` headers disagree with its body, so a check that lands modern proves them.
#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_python_sdk_server_over_http_is_checked_in_the_modern_era() {
    require_installed();
    let (_server, url) = python_http();
    let out = run(
        &["check", "--url", &url, "--era", "auto", "--format", "json"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("mcp-cassette: connected as modern (protocol 2026-07-28)"),
        "{}",
        stderr(&out)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["protocolVersion"], "2026-07-28");
    assert_eq!(report["server"]["name"], "py-http");
    assert_eq!(report["toolCount"], 2);
    assert_eq!(report["promptCount"], 1);

    let out = run(&["check", "--url", &url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("protocol: 2025-06-18"),
        "{}",
        stdout(&out)
    );
}

/// Tool calls carry `Mcp-Name` and the `Mcp-Param-Region` header the tool's schema declares;
/// the Python SDK server checks both against the body (a plain value, and one that must travel
/// base64-encoded).
#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn tool_calls_over_http_carry_the_declared_header_parameters() {
    use mcp_cassette::client::{Client, ClientOptions, Target};
    require_installed();
    let (_server, url) = python_http();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let target = Target::from_flags(None, Some(&url), "modern").unwrap();
        let mut client = Client::connect(&target, ClientOptions::default())
            .await
            .unwrap();
        let tools = client.list_all("tools/list", "tools").await.unwrap();
        let forecast = tools.iter().find(|t| t["name"] == "forecast").unwrap();
        assert_eq!(
            forecast["inputSchema"]["properties"]["region"]["x-mcp-header"],
            "Region"
        );
        for region in ["us-west1", " padded 日本 "] {
            let answer = client
                .request(
                    "tools/call",
                    json!({"name": "forecast", "arguments": {"region": region, "days": 2}}),
                )
                .await
                .unwrap_or_else(|e| panic!("{region:?}: {e}"));
            assert_eq!(answer["isError"], json!(false), "{answer}");
            assert_eq!(
                answer["content"][0]["text"],
                format!("sunny in {region} for 2 day(s)")
            );
        }
        client.close().await;
    });
}

#[test]
fn a_connection_dropped_before_the_answer_is_named() {
    let server = Server::start(|request| match request.rpc_method() {
        // Closed with no answer at all.
        "initialize" => Vec::new(),
        _ => accepted(),
    });
    let out = run(&["check", "--url", &server.url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "check failed: initialize failed: the request \"initialize\" to {} failed: connection closed before message completed\n",
            server.url
        )
    );
}

#[test]
fn a_stream_cut_mid_event_loses_only_that_request() {
    let server = Server::start(|request| match request.rpc_method() {
        "initialize" => json_answer("", &legacy_init(request)),
        "tools/list" => event_stream("", &[r#"data: {"jsonrpc":"2.0","id":2,"res"#]),
        _ => accepted(),
    });
    let out = run(&["check", "--url", &server.url, "--era", "legacy"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        "check failed: the server ended its answer to \"tools/list\" without a JSON-RPC response"
    );
}
