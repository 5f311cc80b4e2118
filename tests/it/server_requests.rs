//! Requests the recorded server sent its client (sampling, elicitation, roots), replayed
//! (docs/replay.md, "Requests from the server"), over stdio and over Streamable HTTP
//! (`replay --listen`, docs/http.md).
//!
//! The cassettes under `tests/fixtures/server-requests/` were recorded by our own `record`
//! between `@modelcontextprotocol/server-everything` and the `interop/py-asks.py` (Python SDK)
//! and `interop/ts-asks.mjs` (TypeScript SDK) clients, answering as `same`.
//!
//! - `everything-{py,ts}.cassette.jsonl` (stdio): `record -o <file> -- npx
//!   @modelcontextprotocol/server-everything` as the client's server command. Each holds a
//!   `sampling/createMessage` and an `elicitation/create` recorded inside a `tools/call`, and a
//!   `roots/list` the client never answered.
//! - `everything-http-{py,ts}.cassette.jsonl` (HTTP): with `scripts/install-interop.sh` run and
//!   `cargo build --locked` done, `PORT=<port> node
//!   interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp`,
//!   then `target/debug/mcp-cassette record --http http://127.0.0.1:<port>/mcp --listen
//!   127.0.0.1:0 -o <file>`, then (from `interop/`) `.venv/bin/python py-asks.py same --
//!   <proxy URL>` or `node ts-asks.mjs same -- <proxy URL>`, then SIGTERM to the proxy. Each
//!   holds the two requests inside the SSE streams of their calls, the client's POSTed answers
//!   written before those streams' entries, and an empty standalone GET stream: the clients
//!   closed before the server's `roots/list` (sent 350 ms after the handshake) came due.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::interop::{interop_dir, python, require_installed};
use crate::record::bin;
use crate::replay_http::{Open, Server, request};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/server-requests")
        .join(name)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true}},"clientInfo":{"name":"mcp","version":"0.1.0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const SAMPLING_CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"hi","maxTokens":5}}}"#;

/// A replay driven line by line: what it writes is read on a thread, so a test can tell that
/// nothing came.
struct Driven {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Driven {
    fn start(cassette: &Path, args: &[&str], env: &[(&str, &str)]) -> Driven {
        let mut child = Command::new(bin())
            .arg("replay")
            .arg(cassette)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("replay starts");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line).expect("a JSON line");
                if send.send(value).is_err() {
                    break;
                }
            }
        });
        Driven {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next frame that is not a notification.
    fn next(&self, within: Duration) -> Option<Value> {
        loop {
            let v = self.lines.recv_timeout(within).ok()?;
            if v.get("id").is_some() {
                return Some(v);
            }
        }
    }

    /// Closes stdin and returns the exit code and stderr.
    fn finish(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn handshake(replay: &mut Driven) {
    replay.send(INITIALIZE);
    let init = replay
        .next(Duration::from_secs(10))
        .expect("initialize answered");
    assert_eq!(init["id"], 1);
    replay.send(INITIALIZED);
}

#[test]
fn a_request_recorded_mid_call_goes_before_the_answer_which_waits_for_the_client() {
    let mut replay = Driven::start(&fixture("everything-py.cassette.jsonl"), &[], &[]);
    handshake(&mut replay);
    replay.send(SAMPLING_CALL);
    let ask = replay
        .next(Duration::from_secs(10))
        .expect("the sampling request");
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["id"], "mcp-cassette-replay-1");
    assert_eq!(ask["params"]["maxTokens"], 5);
    // The call's answer waits for the client's.
    assert!(replay.next(Duration::from_millis(300)).is_none());
    replay.send(
        &json!({"jsonrpc":"2.0","id":"mcp-cassette-replay-1","result":{"role":"assistant","content":{"type":"text","text":"a recorded answer"},"model":"test-model","stopReason":"endTurn"}}).to_string(),
    );
    let answer = replay
        .next(Duration::from_secs(10))
        .expect("the call's answer");
    assert_eq!(answer["id"], 2);
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("a recorded answer")
    );
    let (code, stderr) = replay.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("differs"), "{stderr}");
    assert!(
        stderr
            .contains("1 request(s) from the server sent to the client at their recorded position"),
        "{stderr}"
    );
}

#[test]
fn a_different_answer_is_a_diagnostic_with_its_paths_and_fails_the_run() {
    let mut replay = Driven::start(&fixture("everything-py.cassette.jsonl"), &[], &[]);
    handshake(&mut replay);
    replay.send(SAMPLING_CALL);
    let ask = replay
        .next(Duration::from_secs(10))
        .expect("the sampling request");
    replay.send(
        &json!({"jsonrpc":"2.0","id":ask["id"],"result":{"role":"assistant","content":{"type":"text","text":"something else"},"model":"other-model","stopReason":"endTurn"}}).to_string(),
    );
    let answer = replay
        .next(Duration::from_secs(10))
        .expect("the call's answer");
    assert_eq!(answer["id"], 2);
    let (code, stderr) = replay.finish();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("mcp-cassette replay: client answer differs for \"sampling/createMessage\": the answer to \"sampling/createMessage\" differs from the recorded one at: /result/content/text (recorded \"a recorded answer\", got \"something else\"); /result/model (recorded \"test-model\", got \"other-model\")"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 client answer(s) differ from the recorded ones"),
        "{stderr}"
    );
}

#[test]
fn volatile_fields_of_an_answer_are_not_compared() {
    // `--volatile` scoped to the request's method points into the client's result.
    let mut driven = Driven::start(
        &fixture("everything-py.cassette.jsonl"),
        &["--volatile", "sampling/createMessage:/content/text"],
        &[],
    );
    handshake(&mut driven);
    driven.send(SAMPLING_CALL);
    let ask = driven
        .next(Duration::from_secs(10))
        .expect("the sampling request");
    driven.send(
        &json!({"jsonrpc":"2.0","id":ask["id"],"result":{"role":"assistant","content":{"type":"text","text":"something else"},"model":"test-model","stopReason":"endTurn"}}).to_string(),
    );
    assert!(driven.next(Duration::from_secs(10)).is_some());
    let (code, stderr) = driven.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("differs"), "{stderr}");
}

#[test]
fn a_client_that_never_answers_times_out_and_the_session_goes_on() {
    let mut replay = Driven::start(
        &fixture("everything-py.cassette.jsonl"),
        &[],
        &[("MCP_CASSETTE_TIMEOUT_MS", "300")],
    );
    handshake(&mut replay);
    replay.send(SAMPLING_CALL);
    let ask = replay
        .next(Duration::from_secs(10))
        .expect("the sampling request");
    assert_eq!(ask["method"], "sampling/createMessage");
    // Sent while the request waits: answered after the call's answer, in order.
    replay.send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
    let answer = replay
        .next(Duration::from_secs(10))
        .expect("the call's answer");
    assert_eq!(answer["id"], 2);
    let ping = replay
        .next(Duration::from_secs(10))
        .expect("the ping's answer");
    assert_eq!(ping["id"], 7);
    let (code, stderr) = replay.finish();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("client answer missing for \"sampling/createMessage\": no answer within 300 ms; the recording holds the client's answer"),
        "{stderr}"
    );
}

#[test]
fn a_client_without_the_capability_is_not_asked() {
    let mut replay = Driven::start(&fixture("everything-py.cassette.jsonl"), &[], &[]);
    replay.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp","version":"0.1.0"}}}"#);
    assert!(replay.next(Duration::from_secs(10)).is_some());
    replay.send(INITIALIZED);
    replay.send(SAMPLING_CALL);
    let answer = replay
        .next(Duration::from_secs(10))
        .expect("the call's answer");
    assert_eq!(answer["id"], 2, "answered without asking: {answer}");
    let (code, stderr) = replay.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("1 request(s) from the server were not sent: the client did not declare the capability they need"),
        "{stderr}"
    );
}

// ---- Real SDK clients (interop packages) ----

/// The replay as a server command for an SDK client: its stderr and exit code go to files.
fn replay_command(cassette: &Path, dir: &Path) -> Vec<String> {
    vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"exec 2>"$2"; "$0" replay "$1"; echo $? >"$3""#.to_owned(),
        bin().to_owned(),
        cassette.display().to_string(),
        dir.join("stderr").display().to_string(),
        dir.join("code").display().to_string(),
    ]
}

fn run(mut cmd: Command) -> Value {
    let out = cmd.stdin(Stdio::null()).output().expect("client runs");
    assert!(
        out.status.success(),
        "client failed: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("client printed JSON")
}

/// The SDK client (`py` or `ts`) that answers the server's requests as `answers`, ready for
/// `--` and its server.
fn asks_client(sdk: &str, answers: &str) -> Command {
    let mut cmd = match sdk {
        "py" => {
            let mut c = Command::new(python());
            c.arg("py-asks.py");
            c
        }
        _ => {
            let mut c = Command::new("node");
            c.arg("ts-asks.mjs");
            c
        }
    };
    cmd.current_dir(interop_dir()).arg(answers);
    cmd
}

/// Runs an SDK client (`py` or `ts`) answering as `answers` against a replay of its own
/// recording; what it saw, the replay's exit code and its stderr.
fn sdk_session(sdk: &str, answers: &str) -> (Value, i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = replay_command(
        &fixture(&format!("everything-{sdk}.cassette.jsonl")),
        dir.path(),
    );
    let mut cmd = asks_client(sdk, answers);
    cmd.arg("--").args(&server);
    let seen = run(cmd);
    // The replay ends when the client closes its input; its status is written just after.
    let code_file = dir.path().join("code");
    for _ in 0..100 {
        if std::fs::read_to_string(&code_file).is_ok_and(|c| c.ends_with('\n')) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let code = std::fs::read_to_string(&code_file)
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(-1);
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default();
    (seen, code, stderr)
}

/// What the client answered, but `roots/list`: the recording puts it after the last answer, so
/// whether a client answers it before it closes is a race.
fn asked(seen: &Value) -> Vec<&str> {
    seen["asked"]
        .as_array()
        .expect("asked")
        .iter()
        .filter_map(Value::as_str)
        .filter(|m| *m != "roots/list")
        .collect()
}

fn sdk_cases(sdk: &str) {
    require_installed();
    let (seen, code, stderr) = sdk_session(sdk, "same");
    assert_eq!(
        asked(&seen),
        ["sampling/createMessage", "elicitation/create"],
        "{stderr}"
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("differs"), "{stderr}");
    assert!(
        seen["steps"][0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("a recorded answer"),
        "{seen}"
    );

    let (seen, code, stderr) = sdk_session(sdk, "different");
    assert_eq!(
        asked(&seen),
        ["sampling/createMessage", "elicitation/create"],
        "{stderr}"
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("client answer differs for \"sampling/createMessage\": the answer to \"sampling/createMessage\" differs from the recorded one at: /result/content/text (recorded \"a recorded answer\", got \"a different answer\")"),
        "{stderr}"
    );
    assert!(
        stderr.contains("client answer differs for \"elicitation/create\": the answer to \"elicitation/create\" differs from the recorded one at: /result/content/name"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 client answer(s) differ from the recorded ones"),
        "{stderr}"
    );

    let (seen, code, stderr) = sdk_session(sdk, "none");
    assert_eq!(seen["asked"], json!([]), "{stderr}");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("3 request(s) from the server were not sent: the client did not declare the capability they need"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn python_sdk_client_answers_the_replayed_requests() {
    sdk_cases("py");
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn typescript_sdk_client_answers_the_replayed_requests() {
    sdk_cases("ts");
}

// ---- Streamable HTTP (`replay --listen`) ----

/// Starts a replay of `cassette` over HTTP and opens a session declaring `capabilities`: the
/// server and the minted session id.
fn http_session(
    cassette: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    capabilities: Value,
) -> (Server, String) {
    let server = Server::start_with(cassette, "127.0.0.1:0", args, env);
    let init = server.post(
        &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":capabilities,"clientInfo":{"name":"mcp","version":"0.1.0"}}}),
        &[],
    );
    assert_eq!(init.status, 200, "{}", init.text());
    let answer = match init.header("content-type") {
        Some("text/event-stream") => init.events().remove(0),
        _ => init.json(),
    };
    assert_eq!(answer["id"], 1);
    let session = init
        .header("mcp-session-id")
        .expect("a minted session id")
        .to_owned();
    let notified = server.post(
        &serde_json::from_str(INITIALIZED).unwrap(),
        &[("mcp-session-id", &session)],
    );
    assert_eq!(notified.status, 202);
    (server, session)
}

fn every_capability() -> Value {
    json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": true}})
}

/// POSTs `SAMPLING_CALL` in `session`, its answer's stream open.
fn sampling_call(server: &Server, session: &str) -> Open {
    let call = Open::request(
        &server.addr,
        "POST",
        &[("mcp-session-id", session)],
        SAMPLING_CALL.as_bytes(),
    );
    assert_eq!(call.status, 200);
    assert_eq!(call.header("content-type"), Some("text/event-stream"));
    call
}

fn sampling_answer(id: &Value, text: &str, model: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"result":{"role":"assistant","content":{"type":"text","text":text},"model":model,"stopReason":"endTurn"}})
}

#[test]
fn over_http_a_request_goes_out_in_the_calls_stream_and_the_answer_waits_for_the_clients_post() {
    let (server, session) = http_session(
        &fixture("everything-http-py.cassette.jsonl"),
        &[],
        &[],
        every_capability(),
    );
    let with = [("mcp-session-id", session.as_str())];
    // A response that answers nothing pending is taken and ignored, as before.
    let stray = server.post(
        &json!({"jsonrpc":"2.0","id":"mcp-cassette-replay-99","result":{}}),
        &with,
    );
    assert_eq!((stray.status, stray.body.len()), (202, 0));

    let mut call = sampling_call(&server, &session);
    let ask = call.next_event().expect("the sampling request");
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(ask["id"], "mcp-cassette-replay-1");
    assert_eq!(ask["params"]["maxTokens"], 5);
    // The call's answer waits for the client's...
    assert_eq!(call.event_within(Duration::from_millis(300)), None);
    // ...and nothing else does: the same session's other requests, and other sessions.
    let ping = server.post(&json!({"jsonrpc":"2.0","id":"p","method":"ping"}), &with);
    assert_eq!(ping.json()["id"], "p");
    let other = server.post(&serde_json::from_str::<Value>(INITIALIZE).unwrap(), &[]);
    assert_eq!(other.status, 200);
    assert_ne!(other.header("mcp-session-id"), Some(session.as_str()));

    let answered = server.post(
        &sampling_answer(&ask["id"], "a recorded answer", "test-model"),
        &with,
    );
    assert_eq!(answered.status, 202, "{}", answered.text());
    assert!(answered.body.is_empty());
    let answer = call.next_event().expect("the call's answer");
    assert_eq!(answer["id"], 2);
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("a recorded answer")
    );
    assert_eq!(call.next_event(), None, "the stream ends with the answer");

    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("differs"), "{stderr}");
    assert!(!stderr.contains("not replayed"), "{stderr}");
    assert!(
        stderr.contains(
            "session 1: 1 request(s) from the server sent to the client at their recorded position"
        ),
        "{stderr}"
    );
}

#[test]
fn over_http_a_different_answer_is_a_diagnostic_and_fails_the_run_unless_warned() {
    for (on_miss, expected) in [("error", 1), ("warn", 0)] {
        let (server, session) = http_session(
            &fixture("everything-http-py.cassette.jsonl"),
            &["--on-miss", on_miss],
            &[],
            every_capability(),
        );
        let mut call = sampling_call(&server, &session);
        let ask = call.next_event().expect("the sampling request");
        let answered = server.post(
            &sampling_answer(&ask["id"], "something else", "other-model"),
            &[("mcp-session-id", &session)],
        );
        assert_eq!(answered.status, 202);
        assert_eq!(call.next_event().expect("the call's answer")["id"], 2);
        let (code, stderr) = server.stop();
        assert_eq!(code, Some(expected), "--on-miss {on_miss}: {stderr}");
        assert!(
            stderr.contains("mcp-cassette replay: session 1: client answer differs for \"sampling/createMessage\": the answer to \"sampling/createMessage\" differs from the recorded one at: /result/content/text (recorded \"a recorded answer\", got \"something else\"); /result/model (recorded \"test-model\", got \"other-model\")"),
            "{stderr}"
        );
        assert!(
            stderr.contains("session 1: 1 client answer(s) differ from the recorded ones"),
            "{stderr}"
        );
    }
}

#[test]
fn over_http_a_client_that_never_answers_times_out_and_the_stream_goes_on() {
    let (server, session) = http_session(
        &fixture("everything-http-py.cassette.jsonl"),
        &[],
        &[("MCP_CASSETTE_TIMEOUT_MS", "300")],
        every_capability(),
    );
    let mut call = sampling_call(&server, &session);
    let ask = call.next_event().expect("the sampling request");
    assert_eq!(ask["method"], "sampling/createMessage");
    let answer = call
        .next_event()
        .expect("the call's answer, after the timeout");
    assert_eq!(answer["id"], 2);
    // Too late: nothing waits for it any more.
    let late = server.post(
        &sampling_answer(&ask["id"], "a recorded answer", "test-model"),
        &[("mcp-session-id", &session)],
    );
    assert_eq!(late.status, 202);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("session 1: client answer missing for \"sampling/createMessage\": no answer within 300 ms; the recording holds the client's answer"),
        "{stderr}"
    );
    assert!(
        stderr.contains("session 1: 1 request(s) from the server were not answered by the client"),
        "{stderr}"
    );
}

#[test]
fn over_http_a_client_without_the_capability_is_not_asked() {
    let (server, session) = http_session(
        &fixture("everything-http-py.cassette.jsonl"),
        &[],
        &[],
        json!({}),
    );
    let mut call = sampling_call(&server, &session);
    let first = call.next_event().expect("the call's answer");
    assert_eq!(first["id"], 2, "answered without asking: {first}");
    assert_eq!(call.next_event(), None);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("session 1: 1 request(s) from the server were not sent: the client did not declare the capability they need"),
        "{stderr}"
    );
}

/// A `roots/list` the server sent on the standalone GET stream while a call was outstanding, the
/// client's answer, then the call's (JSON) answer.
fn roots_on_the_get_stream(dir: &Path) -> PathBuf {
    let lines = [
        json!({"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"http","era":"legacy","sessioned":true}),
        json!({"type":"frame","t":1,"dir":"c2s","frame":serde_json::from_str::<Value>(INITIALIZE).unwrap()}),
        json!({"type":"frame","t":2,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}}),
        json!({"type":"frame","t":3,"dir":"c2s","frame":{"jsonrpc":"2.0","method":"notifications/initialized"}}),
        json!({"type":"frame","t":4,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"where","arguments":{}}}}),
        json!({"type":"frame","t":6,"dir":"c2s","frame":{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///tmp/project"}]}}}),
        json!({"type":"frame","t":7,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"file:///tmp/project"}]}}}),
        json!({"type":"chunks","t":8,"dir":"s2c","via":"get","chunks":[{"t":5,"frame":{"jsonrpc":"2.0","id":0,"method":"roots/list"}}]}),
    ];
    let path = dir.join("roots.http.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn over_http_a_request_recorded_on_the_get_stream_goes_out_there() {
    let dir = tempfile::tempdir().unwrap();
    let (server, session) = http_session(
        &roots_on_the_get_stream(dir.path()),
        &[],
        &[],
        every_capability(),
    );
    let with = [("mcp-session-id", session.as_str())];
    let mut get = Open::request(&server.addr, "GET", &with, b"");
    assert_eq!(get.status, 200);
    // The call's answer is JSON: its response comes once the client has answered.
    let addr = server.addr.clone();
    let header = session.clone();
    let call = std::thread::spawn(move || {
        request(
            &addr,
            "POST",
            &[("mcp-session-id", &header)],
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"where","arguments":{}}})
                .to_string()
                .as_bytes(),
        )
    });
    let ask = get
        .next_event()
        .expect("the roots request on the GET stream");
    assert_eq!(ask["method"], "roots/list");
    assert_eq!(ask["id"], "mcp-cassette-replay-1");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !call.is_finished(),
        "the call's answer waits for the client's"
    );
    let answered = server.post(
        &json!({"jsonrpc":"2.0","id":ask["id"],"result":{"roots":[{"uri":"file:///elsewhere"}]}}),
        &with,
    );
    assert_eq!(answered.status, 202);
    let call = call.join().unwrap();
    assert_eq!(call.status, 200);
    assert_eq!(call.json()["id"], 2);
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("session 1: client answer differs for \"roots/list\": the answer to \"roots/list\" differs from the recorded one at: /result/roots/0/uri (recorded \"file:///tmp/project\", got \"file:///elsewhere\")"),
        "{stderr}"
    );
}

/// Runs an SDK client (`py` or `ts`) answering as `answers` against `replay --listen` of its own
/// HTTP recording; what it saw, the replay's exit code and its stderr.
fn sdk_http_session(sdk: &str, answers: &str) -> (Value, Option<i32>, String) {
    let server = Server::start(
        &fixture(&format!("everything-http-{sdk}.cassette.jsonl")),
        &[],
    );
    let mut cmd = asks_client(sdk, answers);
    cmd.arg("--").arg(&server.url);
    let seen = run(cmd);
    let (code, stderr) = server.stop();
    (seen, code, stderr)
}

fn sdk_http_cases(sdk: &str) {
    require_installed();
    let (seen, code, stderr) = sdk_http_session(sdk, "same");
    assert_eq!(
        seen["asked"],
        json!(["sampling/createMessage", "elicitation/create"]),
        "{stderr}"
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("differs"), "{stderr}");
    assert!(
        stderr.contains(
            "session 1: 2 request(s) from the server sent to the client at their recorded position"
        ),
        "{stderr}"
    );
    assert!(
        seen["steps"][0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("a recorded answer"),
        "{seen}"
    );

    let (seen, code, stderr) = sdk_http_session(sdk, "different");
    assert_eq!(
        seen["asked"],
        json!(["sampling/createMessage", "elicitation/create"]),
        "{stderr}"
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("session 1: client answer differs for \"sampling/createMessage\": the answer to \"sampling/createMessage\" differs from the recorded one at: /result/content/text (recorded \"a recorded answer\", got \"a different answer\")"),
        "{stderr}"
    );
    assert!(
        stderr.contains("session 1: client answer differs for \"elicitation/create\": the answer to \"elicitation/create\" differs from the recorded one at: /result/content/name"),
        "{stderr}"
    );

    let (seen, code, stderr) = sdk_http_session(sdk, "none");
    assert_eq!(seen["asked"], json!([]), "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("session 1: 2 request(s) from the server were not sent: the client did not declare the capability they need"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn python_sdk_client_answers_the_requests_replayed_over_http() {
    sdk_http_cases("py");
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn typescript_sdk_client_answers_the_requests_replayed_over_http() {
    sdk_http_cases("ts");
}
