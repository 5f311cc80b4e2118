//! Requests the recorded server sent its client (sampling, elicitation, roots), replayed
//! (docs/replay.md, "Requests from the server").
//!
//! The cassettes under `tests/fixtures/server-requests/` were recorded by our own `record`
//! between `@modelcontextprotocol/server-everything` and the `interop/py-asks.py` (Python SDK)
//! and `interop/ts-asks.mjs` (TypeScript SDK) clients, answering as `same`. Each holds a
//! `sampling/createMessage` and an `elicitation/create` recorded inside a `tools/call`, and a
//! `roots/list` the client never answered.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::interop::{interop_dir, python, require_installed};
use crate::record::bin;

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

/// Runs an SDK client (`py` or `ts`) answering as `answers` against a replay of its own
/// recording; what it saw, the replay's exit code and its stderr.
fn sdk_session(sdk: &str, answers: &str) -> (Value, i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = replay_command(
        &fixture(&format!("everything-{sdk}.cassette.jsonl")),
        dir.path(),
    );
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
    cmd.current_dir(interop_dir())
        .arg(answers)
        .arg("--")
        .args(&server);
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
