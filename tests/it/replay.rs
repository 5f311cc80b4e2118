//! `replay` over stdio, driven through the real binary: the reference's corpus replayed for a
//! client that repeats its recorded requests, cassettes recorded from our fixture servers (pushy,
//! tasking, tiny) replayed with their server frames, subscriptions and task polls, every miss and
//! refusal, and passthrough appending to the cassette.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::fixtures::fixture_server;
use crate::record::bin;

const TIMEOUT: Duration = Duration::from_secs(10);
const FIXTURE_VARS: [&str; 8] = [
    "TINY_EVIL",
    "TINY_POISONED",
    "TINY_V2",
    "TINY_SECRETS",
    "TINY_SURFACES",
    "TINY_PROGRESS",
    "PUSHY_ERA",
    "TASKING_STALL",
];

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference")
}

/// A running process spoken to line by line, every read bounded by [`TIMEOUT`].
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Proc {
    fn spawn(mut command: Command) -> Proc {
        for var in FIXTURE_VARS {
            command.env_remove(var);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Proc::spawn_prepared(command)
    }

    fn replay(cassette: &Path, args: &[&str]) -> Proc {
        let mut command = Command::new(bin());
        command.arg("replay").arg(cassette).args(args);
        Proc::spawn(command)
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    fn line(&self) -> String {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("stdout closed"),
        }
    }

    fn line_within(&self, wait: Duration) -> String {
        self.lines
            .recv_timeout(wait)
            .unwrap_or_else(|e| panic!("no line within {wait:?}: {e}"))
    }

    fn message(&self) -> Value {
        let line = self.line();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:.300}"))
    }

    /// Reads messages until one satisfies `done`; returns all of them, that one last.
    fn until(&self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.message();
            let stop = done(&m);
            seen.push(m);
            if stop {
                return seen;
            }
        }
    }

    /// Sends a request and reads up to and including its answer.
    fn exchange(&mut self, message: &Value) -> Vec<Value> {
        let id = message["id"].clone();
        self.send(message);
        self.until(|m| m.get("method").is_none() && m["id"] == id)
    }

    fn assert_quiet(&self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("expected silence, got {line:.300}");
        }
    }

    fn finish(mut self) -> (ExitStatus, String, Vec<String>) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        let rest = self.lines.try_iter().collect();
        (status, stderr, rest)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn run(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_owned();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    out
}

fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

fn call(id: impl Into<Value>, tool: &str, arguments: Value) -> Value {
    req(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

fn initialize(id: impl Into<Value>) -> Value {
    req(
        id,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout_messages(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:.200}")))
        .collect()
}

/// One recorded frame: direction and the frame's exact text.
fn recorded_frames(path: &Path) -> Vec<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(rename = "type")]
        kind: String,
        dir: Option<String>,
        #[serde(borrow)]
        frame: Option<&'a RawValue>,
    }
    let text = std::fs::read_to_string(path).expect("read cassette");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let line: Line<'_> = serde_json::from_str(l).expect("entry");
            (line.kind == "frame").then(|| {
                (
                    line.dir.unwrap_or_default(),
                    line.frame.expect("frame").get().to_owned(),
                )
            })
        })
        .collect()
}

fn id_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Replays a cassette for a client that repeats its recorded c2s frames with its own (string)
/// ids, and checks every answer is the recorded one, byte for byte but for the id.
fn replays_as_recorded(path: &Path) -> String {
    let frames = recorded_frames(path);
    // Pair recorded requests with their recorded answers (oldest waiting request first).
    let mut waiting: HashMap<String, VecDeque<usize>> = HashMap::new();
    let mut expected: HashMap<usize, String> = HashMap::new();
    let mut input = String::new();
    let mut sent: Vec<(String, usize)> = Vec::new();
    for (i, (dir, text)) in frames.iter().enumerate() {
        let v: Value = serde_json::from_str(text).expect("frame");
        let is_request = v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null());
        if dir == "c2s" {
            let mut out = v.clone();
            if is_request {
                let mine = format!("client-{i}");
                out["id"] = json!(mine);
                waiting.entry(id_key(&v["id"])).or_default().push_back(i);
                sent.push((mine, i));
            }
            input.push_str(&out.to_string());
            input.push('\n');
        } else if v.get("method").is_none() {
            if let Some(r) = waiting
                .get_mut(&id_key(&v["id"]))
                .and_then(VecDeque::pop_front)
            {
                expected.insert(r, text.clone());
            }
        }
    }
    let out = run(&["replay", path.to_str().unwrap()], &input);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", path.display());
    assert!(!stderr.contains("miss"), "{}: {stderr}", path.display());
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let answers: HashMap<String, &str> = stdout
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).expect("json line");
            (v.get("method").is_none()).then(|| (id_key(&v["id"]), l))
        })
        .collect();
    let mut checked = 0;
    for (mine, r) in sent {
        let Some(recorded) = expected.get(&r) else {
            continue;
        };
        let got = answers
            .get(&mine)
            .unwrap_or_else(|| panic!("{}: no answer for {mine}", path.display()));
        let recorded_id = serde_json::from_str::<Value>(recorded).expect("answer")["id"].clone();
        let want = recorded.replacen(
            &format!("\"id\":{}", recorded_id),
            &format!("\"id\":{}", json!(mine)),
            1,
        );
        assert_eq!(*got, want, "{}: answer to {mine}", path.display());
        checked += 1;
    }
    assert_eq!(checked, expected.len(), "{}", path.display());
    stdout
}

#[test]
fn every_corpus_cassette_replays_as_recorded() {
    let dir = shared().join("corpus-0.4");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.to_string_lossy().ends_with(".jsonl") {
            replays_as_recorded(&path);
            seen += 1;
        }
    }
    assert_eq!(seen, 5);
}

#[test]
fn every_reference_cassette_replays_as_recorded() {
    for name in [
        "reference-0.4/tiny-server.golden.cassette.jsonl",
        "reference-0.4/stdio-tape.jsonl",
        "reference-0.4/tape.http.jsonl",
        "reference-0.8/poisoned-output.cassette.jsonl",
        "reference-0.8/volatile.http.jsonl",
    ] {
        replays_as_recorded(&shared().join(name));
    }
}

#[test]
fn server_frames_come_at_their_recorded_position() {
    // tiny: three progress and three log notifications inside one tools/call.
    let stdout = replays_as_recorded(&shared().join("corpus-0.4/tiny.cassette.jsonl"));
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer6 = lines
        .iter()
        .position(|v| v["result"]["content"][0]["text"] == "counted to 3")
        .expect("the count answer");
    let methods: Vec<&str> = lines[answer6 - 6..answer6]
        .iter()
        .map(|v| v["method"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message"
        ]
    );
}

#[test]
fn the_session_answers_one_request_at_a_time_and_exits_at_eof() {
    let path = shared().join("corpus-0.4/memory.cassette.jsonl");
    let mut p = Proc::replay(&path, &[]);
    let init = p.exchange(&initialize(1));
    assert_eq!(init.len(), 1);
    assert_eq!(init[0]["result"]["serverInfo"]["name"], "memory-server");
    p.send(&initialized());
    p.assert_quiet(Duration::from_millis(100));
    let list = p.exchange(&req("two", "tools/list", json!({})));
    assert_eq!(list[0]["id"], "two");
    // Asked again: still answered (the reference misses here).
    let again = p.exchange(&req(3, "tools/list", json!({})));
    assert_eq!(again[0]["result"], list[0]["result"]);
    let (status, stderr, rest) = p.finish();
    assert!(rest.is_empty());
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("mcp-cassette replay: 1 idempotent read(s)"),
        "{stderr}"
    );
}

/// A cassette of `calls` answered `tools/call`s of tool `t`, call `i` with arguments
/// `{"i": i, "pad": "…"}` and call 3 also with `"near": true`.
fn many_calls_cassette(calls: usize) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let mut text = String::from(
        "{\"type\":\"header\",\"cassetteVersion\":2,\"recorder\":\"mcp-cassette@0.4.0\",\"startedAt\":\"2026-12-02T08:28:32.541Z\",\"transport\":\"stdio\",\"command\":[\"srv\"]}\n",
    );
    for i in 0..calls {
        let mut args = json!({"i": i, "pad": "x"});
        if i == 3 {
            args["near"] = json!(true);
        }
        let request = call(i + 1, "t", args);
        let answer = json!({"jsonrpc": "2.0", "id": i + 1, "result": {"content": []}});
        text.push_str(&format!(
            "{{\"type\":\"frame\",\"t\":{i},\"dir\":\"c2s\",\"frame\":{request}}}\n{{\"type\":\"frame\",\"t\":{i},\"dir\":\"s2c\",\"frame\":{answer}}}\n"
        ));
    }
    file.write_all(text.as_bytes()).unwrap();
    file
}

#[test]
fn misses_on_a_large_cassette_still_name_the_nearest_recording() {
    // 5,000 recordings of one tool: the miss compares with a bounded few (docs/replay.md), and
    // the nearest of them is named as it always was.
    let cassette = many_calls_cassette(5_000);
    let input = [
        call(1, "t", json!({"i": 3, "pad": "x", "near": false})),
        call(2, "t", json!({"i": 5, "pad": "y"})),
        call(3, "u", json!({})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let out = run(&["replay", cassette.path().to_str().unwrap()], &input);
    assert_eq!(out.status.code(), Some(1));
    let answers = stdout_messages(&out);
    let message = |n: usize| answers[n]["error"]["message"].as_str().unwrap().to_owned();
    assert_eq!(
        message(0),
        "mcp-cassette replay: no recorded response for \"tools/call\" (fingerprint miss). Nearest recording: method and tool match a recording, but arguments differ at: /near (recorded true, got false). Re-record the cassette or adjust the interaction."
    );
    assert!(
        message(1).contains("arguments differ at: /pad (recorded \"x\", got \"y\")"),
        "{}",
        message(1)
    );
    assert!(
        message(2).contains("no recorded tools/call for tool \"u\". Recorded tools: t."),
        "{}",
        message(2)
    );
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("mcp-cassette replay: 3 fingerprint miss(es) this session\n"),
        "{stderr}"
    );
}

#[test]
fn misses_are_explained_answered_with_32601_and_fail_the_session() {
    let path = shared().join("corpus-0.4/tiny.cassette.jsonl");
    let before = std::fs::read(&path).unwrap();
    let input = [
        call(1, "add", json!({"a": 20, "b": 23})),
        call(2, "add", json!({"a": 20, "b": 22})),
        call(3, "add", json!({"a": 20, "b": 22})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let out = run(&["replay", path.to_str().unwrap()], &input);
    assert_eq!(out.status.code(), Some(1));
    let answers = stdout_messages(&out);
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0]["error"]["code"], -32601);
    assert_eq!(
        answers[0]["error"]["message"],
        "mcp-cassette replay: no recorded response for \"tools/call\" (fingerprint miss). Nearest recording: method and tool match a recording, but arguments differ at: /b (recorded 22, got 23). Re-record the cassette or adjust the interaction."
    );
    assert_eq!(answers[1]["result"]["structuredContent"]["result"], 42);
    assert!(
        answers[2]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("this exact fingerprint was recorded 1 time(s)")
    );
    let stderr = stderr_of(&out);
    assert!(stderr.contains("mcp-cassette replay: fingerprint miss for \"tools/call\": method and tool match a recording, but arguments differ at: /b (recorded 22, got 23)\n"), "{stderr}");
    assert!(
        stderr.contains("mcp-cassette replay: 2 fingerprint miss(es) this session\n"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "replay never writes the cassette"
    );
}

#[test]
fn warn_borrows_a_same_method_recording_and_exits_0() {
    let path = shared().join("corpus-0.4/seqthink.cassette.jsonl");
    let input = call(1, "sequentialthinking", json!({"thought": "something else", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": true})).to_string() + "\n";
    let out = run(
        &["replay", path.to_str().unwrap(), "--on-miss", "warn"],
        &input,
    );
    assert_eq!(out.status.code(), Some(0));
    let answers = stdout_messages(&out);
    assert!(
        answers[0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"thoughtNumber\": 1")
    );
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("mcp-cassette replay: answered \"tools/call\" with another recording of the same method (--on-miss warn): method and tool match a recording, but arguments differ at: /thought (recorded \"First, restate the problem.\", got \"something else\")"),
        "{stderr}"
    );
    assert!(stderr.contains("1 answer(s) borrowed from another recording of the same method"));
}

#[test]
fn malformed_lines_get_an_error_and_the_session_goes_on() {
    let path = shared().join("corpus-0.4/tiny.cassette.jsonl");
    let mut p = Proc::replay(&path, &[]);
    p.send_line("this is not json");
    let e = p.message();
    assert_eq!(e["id"], Value::Null);
    assert_eq!(e["error"]["code"], -32700);
    p.send_line(r#"{"id":7,"method":"ping"}"#);
    let e = p.message();
    assert_eq!(e["id"], 7);
    assert_eq!(e["error"]["code"], -32600);
    p.send_line(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(p.message()["error"]["code"], -32600);
    // A request whose id is null is an invalid request, answered with id null (JSON-RPC 2.0),
    // not taken for a notification and left unanswered.
    p.send_line(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#);
    let e = p.message();
    assert_eq!(e["id"], Value::Null);
    assert_eq!(e["error"]["code"], -32600);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a request's \"id\" must be a string or a number, not null"),
        "{e}"
    );
    p.send_line("");
    // A 50 MB argument: read whole, diagnosed with short excerpts, and the session goes on.
    let big = "x".repeat(50 * 1024 * 1024);
    p.send(&call(8, "echo", json!({"message": big})));
    let e: Value = serde_json::from_str(&p.line_within(Duration::from_secs(180))).unwrap();
    assert_eq!(e["id"], 8);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.len() < 1000, "{}", message.len());
    assert!(
        message.contains("/message (recorded \"hi\", got \"xxxxxxxx"),
        "{message:.300}"
    );
    let ok = p.exchange(&call(9, "echo", json!({"message": "hi"})));
    assert_eq!(ok[0]["result"]["structuredContent"]["result"], "hi");
    let (status, stderr, _) = p.finish();
    assert_eq!(status.code(), Some(1), "the 50 MB call missed");
    assert!(
        stderr.contains("line 1 from the client is not a JSON-RPC message"),
        "{stderr}"
    );
    assert!(stderr.contains("answered with error -32600"), "{stderr}");
}

#[test]
fn startup_refusals_exit_1_with_their_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let tape = shared().join("reference-0.4/stdio-tape.jsonl");
    let tape = tape.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec![tape, "--on-miss", "loud"], "replay: unknown --on-miss \"loud\" (expected error, warn, or passthrough)".into()),
        (vec![tape, "--timing", "fast"], "replay: unknown --timing \"fast\" (expected none or recorded)".into()),
        (vec![tape, "--timing", "recorded"], "replay --timing applies to streamed answers, which only --listen serves. Add --listen or drop --timing".into()),
        (
            vec![tape, "--on-miss", "passthrough"],
            "replay --on-miss passthrough needs the real server command: mcp-cassette replay <cassette> --on-miss passthrough -- <server command...>".into(),
        ),
        (
            vec![tape, "--listen", "127.0.0.1:0"],
            format!("replay --listen serves HTTP cassettes; {tape} was recorded over stdio. Replay it without --listen to serve it on stdio"),
        ),
        (
            vec![tape, "--volatile", "tools/call:/name"],
            "mcp-cassette: cannot declare \"tools/call:/name\" volatile: replay matches a tools/call on /name, so dropping it would answer a call with another tool's recording. Scope the declaration to a method that does not match on it".into(),
        ),
        (
            vec![tape, "--volatile", "arguments"],
            "mcp-cassette: neither a JSON Pointer nor a method-scoped one: \"arguments\". A volatile declaration is a JSON Pointer into the request params (/arguments/requestedAt), optionally scoped to one method (tools/call:/arguments/requestedAt); it comes from replay --volatile or the cassette header's \"volatile\" list".into(),
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["replay"];
        all.extend(args.iter().copied());
        let out = run(&all, "");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr_of(&out), format!("{message}\n"), "{args:?}");
        assert!(out.stdout.is_empty());
    }

    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let newer = write("v3.jsonl", "{\"type\":\"header\",\"cassetteVersion\":3}\n");
    let out = run(&["replay", newer.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        format!(
            "Cassette version 3 was recorded with a newer mcp-cassette (this build supports 1, 2). Upgrade mcp-cassette to read {}\n",
            newer.display()
        )
    );
    let hashed = write(
        "hashed.jsonl",
        &format!(
            "{{\"type\":\"header\",\"cassetteVersion\":2,\"transport\":\"stdio\",\"redaction\":{{\"applied\":true,\"configHash\":\"{}\"}}}}\n",
            "a".repeat(64)
        ),
    );
    let out = run(&["replay", hashed.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "mcp-cassette: the cassette was recorded with a redaction config this replay was not given; pass the same --redact-config the recording used. Redaction runs before matching, so replay must use the rules the recording used\n"
    );
    let listed = write(
        "vol.jsonl",
        "{\"type\":\"header\",\"cassetteVersion\":2,\"volatile\":\"/a\"}\n",
    );
    let out = run(&["replay", listed.to_str().unwrap()], "");
    assert_eq!(
        stderr_of(&out),
        "mcp-cassette: the cassette header's \"volatile\" must be a list of strings, got \"/a\"\n"
    );
    let broken = write(
        "broken.jsonl",
        "{\"type\":\"header\",\"cassetteVersion\":2}\n{\"type\":\"frame\",\"t\":1,\"dir\":\"c2s\",\"frame\":{\n",
    );
    let out = run(&["replay", broken.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).starts_with(&format!("{}:2: not valid JSON", broken.display())),
        "{}",
        stderr_of(&out)
    );
    let missing = dir.path().join("absent.jsonl");
    let out = run(&["replay", missing.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).starts_with("failed to read"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn contradicting_headers_and_unknown_entries_are_reported_and_served() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"stdio","era":"modern"}"#, "\n",
            r#"{"type":"hologram","t":0}"#, "\n",
            r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#, "\n",
            r#"{"type":"frame","t":2,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{"ok":true}}}"#, "\n",
        ),
    )
    .unwrap();
    let out = run(
        &["replay", path.to_str().unwrap()],
        &(initialize(5).to_string() + "\n"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_messages(&out)[0]["result"]["ok"], true);
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains(&format!(
            "mcp-cassette: skipping unknown cassette entry type \"hologram\" in {}",
            path.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("era is \"modern\" but the cassette records an `initialize` request; the modern era has no handshake; serving it anyway"), "{stderr}");
}

#[test]
fn volatile_declarations_from_the_header_and_the_flag() {
    let path = shared().join("reference-0.8/volatile.http.jsonl");
    let ask = |run_id: &str, at: &str| {
        call(
            1,
            "echo",
            json!({"m": "hi", "requestedAt": at, "runId": run_id}),
        )
        .to_string()
            + "\n"
    };
    let out = run(
        &["replay", path.to_str().unwrap()],
        &ask("run-1", "2030-01-01T00:00:00Z"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let out = run(
        &["replay", path.to_str().unwrap()],
        &ask("run-2", "2030-01-01T00:00:00Z"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("/runId (recorded \"run-1\", got \"run-2\")"),
        "{}",
        stderr_of(&out)
    );
    let out = run(
        &[
            "replay",
            path.to_str().unwrap(),
            "--volatile",
            "tools/call:/arguments/runId",
        ],
        &ask("run-2", "2031"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert_eq!(
        stdout_messages(&out)[0]["result"]["content"][0]["text"],
        "recorded"
    );
}

/// Records a session with `mcp-cassette record`, one step at a time: each message is sent once
/// the previous step's awaited message arrived, so the recording's timing is a sequential
/// client's.
fn record_steps(out: &Path, server: &[&str], env: &[(&str, &str)], steps: &[(Value, Await)]) {
    let mut command = Command::new(bin());
    command
        .arg("record")
        .arg("-o")
        .arg(out)
        .arg("--")
        .arg(fixture_server())
        .args(server);
    for var in FIXTURE_VARS {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut p = Proc::spawn_prepared(command);
    for (message, wait) in steps {
        p.send(message);
        match wait {
            Await::Answer => {
                let id = message["id"].clone();
                p.until(|m| m.get("method").is_none() && m["id"] == id);
            }
            Await::Method(method) => {
                p.until(|m| m["method"] == *method);
            }
            Await::Nothing => thread::sleep(Duration::from_millis(30)),
        }
        // Distinct timestamps between steps.
        thread::sleep(Duration::from_millis(3));
    }
    let (status, stderr, _) = p.finish();
    assert_eq!(status.code(), Some(0), "record failed: {stderr}");
}

#[derive(Clone)]
enum Await {
    Answer,
    Method(&'static str),
    Nothing,
}

impl Proc {
    /// As [`Proc::spawn`], without touching the command's environment.
    fn spawn_prepared(mut command: Command) -> Proc {
        let mut child = command.spawn().expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
                if tx
                    .send(line.trim_end_matches(['\n', '\r']).to_owned())
                    .is_err()
                {
                    return;
                }
                line.clear();
            }
        });
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Proc {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }
}

fn meta_tag(v: &Value) -> &Value {
    &v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

#[test]
fn pushy_legacy_list_changed_follows_the_call_that_changed_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pushy.jsonl");
    record_steps(
        &path,
        &["pushy"],
        &[("PUSHY_ERA", "legacy")],
        &[
            (initialize(1), Await::Answer),
            (initialized(), Await::Nothing),
            (req(2, "tools/list", json!({})), Await::Answer),
            (
                call(3, "add_tool", json!({"name": "extra"})),
                Await::Method("notifications/tools/list_changed"),
            ),
            (req(4, "tools/list", json!({})), Await::Answer),
        ],
    );
    let mut p = Proc::replay(&path, &[]);
    p.exchange(&initialize("a"));
    p.send(&initialized());
    let first = p.exchange(&req("b", "tools/list", json!({})));
    assert_eq!(first[0]["result"]["tools"].as_array().unwrap().len(), 2);
    let added = p.exchange(&call("c", "add_tool", json!({"name": "extra"})));
    assert_eq!(added.len(), 1, "the answer comes first");
    let news = p.message();
    assert_eq!(news["method"], "notifications/tools/list_changed");
    let second = p.exchange(&req("d", "tools/list", json!({})));
    assert_eq!(second[0]["result"]["tools"].as_array().unwrap().len(), 3);
    let third = p.exchange(&req("e", "tools/list", json!({})));
    assert_eq!(
        third[0]["result"], second[0]["result"],
        "the last recording, served again"
    );
    let (status, stderr, _) = p.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("1 server-initiated frame(s) replayed at their recorded position"),
        "{stderr}"
    );
}

#[test]
fn pushy_modern_subscriptions_are_held_open_and_rekeyed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pushy-modern.jsonl");
    let listen = |id: Value, filter: Value| {
        req(id, "subscriptions/listen", json!({"notifications": filter}))
    };
    record_steps(
        &path,
        &["pushy"],
        &[("PUSHY_ERA", "modern")],
        &[
            (req(1, "server/discover", json!({})), Await::Answer),
            (
                listen(json!(2), json!({"toolsListChanged": true})),
                Await::Method("notifications/subscriptions/acknowledged"),
            ),
            (
                listen(
                    json!(3),
                    json!({"toolsListChanged": true, "promptsListChanged": true}),
                ),
                Await::Method("notifications/subscriptions/acknowledged"),
            ),
            (call(4, "add_tool", json!({"name": "extra"})), Await::Answer),
            (req(5, "tools/list", json!({})), Await::Answer),
            (call(6, "end_listen", json!({})), Await::Answer),
        ],
    );
    let mut p = Proc::replay(&path, &[]);
    p.exchange(&req("d", "server/discover", json!({})));
    // Opened in the other order: each gets its own recorded subscription by filter.
    p.send(&listen(
        json!("L2"),
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    ));
    let ack = p.message();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(meta_tag(&ack), "L2");
    p.send(&listen(json!("L1"), json!({"toolsListChanged": true})));
    assert_eq!(meta_tag(&p.message()), "L1");
    p.assert_quiet(Duration::from_millis(100));
    let added = p.exchange(&call("c1", "add_tool", json!({"name": "extra"})));
    assert_eq!(added.len(), 1);
    let mut tags: Vec<String> = (0..2)
        .map(|_| {
            let m = p.message();
            assert_eq!(m["method"], "notifications/tools/list_changed");
            meta_tag(&m).as_str().unwrap().to_owned()
        })
        .collect();
    tags.sort();
    assert_eq!(tags, ["L1", "L2"]);
    p.exchange(&req("t", "tools/list", json!({})));
    let ended = p.exchange(&call("c2", "end_listen", json!({})));
    assert_eq!(ended.len(), 1);
    let mut closed: Vec<String> = (0..2)
        .map(|_| {
            let m = p.message();
            assert_eq!(m["result"]["resultType"], "complete");
            assert_eq!(
                m["id"],
                m["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
            );
            m["id"].as_str().unwrap().to_owned()
        })
        .collect();
    closed.sort();
    assert_eq!(closed, ["L1", "L2"]);
    // A third listen was never recorded.
    p.send(&listen(json!("L3"), json!({"toolsListChanged": true})));
    let miss = p.message();
    assert!(
        miss["error"]["message"]
            .as_str()
            .unwrap()
            .contains("this exact subscription was recorded 1 time(s)"),
        "{miss}"
    );
    let (status, stderr, _) = p.finish();
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains("2 subscription(s) acknowledged and held open"),
        "{stderr}"
    );
}

#[test]
fn tasking_polls_replay_in_order_and_a_finished_task_stays_finished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasking.jsonl");
    let poll = |id: i64| req(id, "tasks/get", json!({"taskId": "task-0001"}));
    let update = |id: i64, confirm: bool| {
        req(
            id,
            "tasks/update",
            json!({"taskId": "task-0001", "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": confirm}}}}),
        )
    };
    record_steps(
        &path,
        &["tasking"],
        &[],
        &[
            (req(1, "server/discover", json!({})), Await::Answer),
            (call(2, "build", json!({"target": "prod"})), Await::Answer),
            (poll(3), Await::Answer),
            (poll(4), Await::Answer),
            (update(5, true), Await::Answer),
            (poll(6), Await::Answer),
            (poll(7), Await::Answer),
        ],
    );
    let mut p = Proc::replay(&path, &[]);
    let handle = p.exchange(&call("b", "build", json!({"target": "prod"})));
    assert_eq!(handle[0]["result"]["resultType"], "task");
    let status = |p: &mut Proc, id: &str| {
        p.exchange(&req(id, "tasks/get", json!({"taskId": "task-0001"})))[0]["result"]["status"]
            .clone()
    };
    assert_eq!(status(&mut p, "p1"), "working");
    assert_eq!(status(&mut p, "p2"), "input_required");
    // tasks/update is matched on its inputResponses.
    p.send(&update(0, false));
    let miss = p.message();
    assert!(
        miss["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/inputResponses/confirm/content/confirm (recorded true, got false)"),
        "{miss}"
    );
    let ok = p.exchange(&update(9, true));
    assert_eq!(ok[0]["result"]["resultType"], "complete");
    assert_eq!(status(&mut p, "p3"), "working");
    assert_eq!(status(&mut p, "p4"), "completed");
    assert_eq!(status(&mut p, "p5"), "completed");
    assert_eq!(status(&mut p, "p6"), "completed");
    let (code, stderr, _) = p.finish();
    assert_eq!(
        code.code(),
        Some(1),
        "the update miss fails the session: {stderr}"
    );
}

#[test]
fn a_stalled_task_past_its_last_poll_is_a_task_not_terminal_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stalled.jsonl");
    let poll = |id: i64| req(id, "tasks/get", json!({"taskId": "task-0001"}));
    record_steps(
        &path,
        &["tasking"],
        &[("TASKING_STALL", "1")],
        &[
            (call(1, "build", json!({"target": "prod"})), Await::Answer),
            (poll(2), Await::Answer),
            (poll(3), Await::Answer),
        ],
    );
    let input: String = [
        call(1, "build", json!({"target": "prod"})),
        poll(2),
        poll(3),
        poll(4),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect();
    let out = run(
        &["replay", path.to_str().unwrap(), "--on-miss", "warn"],
        &input,
    );
    let answers = stdout_messages(&out);
    assert_eq!(answers.len(), 4);
    assert_eq!(
        answers[3]["error"]["message"],
        "mcp-cassette replay: no recorded response for \"tasks/get\" (fingerprint miss). Nearest recording: the recording holds 2 poll(s) for task \"task-0001\" and ends with status \"working\", which is not terminal: the task was still running when recording stopped, so there is no later state to serve. Re-record until the task reaches completed, failed or cancelled. Re-record the cassette or adjust the interaction."
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "warn exits 0 even when it cannot borrow"
    );
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
}

fn tiny_cassette(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.jsonl");
    record_steps(
        &path,
        &["tiny"],
        &[],
        &[
            (initialize(1), Await::Answer),
            (initialized(), Await::Nothing),
            (
                call(2, "echo", json!({"message": "recorded"})),
                Await::Answer,
            ),
        ],
    );
    path
}

#[test]
fn passthrough_asks_the_real_server_and_appends_what_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_cassette(dir.path());
    let server = fixture_server();
    let server = server.to_str().unwrap();
    let lines_before = std::fs::read_to_string(&path).unwrap().lines().count();
    let input: String = [
        initialize(1),
        initialized(),
        call("x", "echo", json!({"message": "live"})),
        call("y", "echo", json!({"message": "recorded"})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect();
    let out = run(
        &[
            "replay",
            path.to_str().unwrap(),
            "--on-miss",
            "passthrough",
            "--",
            server,
            "tiny",
        ],
        &input,
    );
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let answers = stdout_messages(&out);
    assert_eq!(answers[1]["id"], "x");
    assert_eq!(
        text_of(&answers[1]),
        "echo:live #1",
        "the live server's answer"
    );
    assert_eq!(
        text_of(&answers[2]),
        "echo:recorded #1",
        "the recording's answer"
    );
    assert!(
        stderr.contains("mcp-cassette: connected as legacy (protocol 2025-06-18)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "mcp-cassette replay: 1 miss(es), 1 interaction(s) appended to {} (origin:\"live\")",
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
    let (c2s, s2c) = (&lines[lines_before], &lines[lines_before + 1]);
    assert_eq!(c2s["origin"], "live");
    assert_eq!(c2s["frame"]["id"], "live-1");
    assert_eq!(c2s["frame"]["params"]["arguments"]["message"], "live");
    assert_eq!(s2c["frame"]["id"], "live-1");
    assert!(
        c2s["t"].as_u64().unwrap() >= lines[lines_before - 1]["t"].as_u64().unwrap(),
        "one timeline"
    );

    // The next replay answers it from the recording, and a second passthrough continues the ids.
    let input: String = [
        call(1, "echo", json!({"message": "live"})),
        call(2, "echo", json!({"message": "again"})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect();
    let out = run(
        &[
            "replay",
            path.to_str().unwrap(),
            "--on-miss",
            "passthrough",
            "--",
            server,
            "tiny",
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let answers = stdout_messages(&out);
    assert_eq!(
        text_of(&answers[0]),
        "echo:live #1",
        "answered from the appended pair"
    );
    assert_eq!(text_of(&answers[1]), "echo:again #1", "a fresh live server");
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["frame"]["id"], "live-2");
}

#[test]
fn passthrough_failures_and_listens() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_cassette(dir.path());
    let before = std::fs::read(&path).unwrap();
    let server = fixture_server();
    let input: String = [
        call(1, "echo", json!({"message": "a"})),
        call(2, "echo", json!({"message": "b"})),
        req(3, "subscriptions/listen", json!({"notifications": {}})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect();
    let out = run(
        &[
            "replay",
            path.to_str().unwrap(),
            "--on-miss",
            "passthrough",
            "--",
            server.to_str().unwrap(),
            "exit-now",
        ],
        &input,
    );
    assert_eq!(out.status.code(), Some(1));
    let answers = stdout_messages(&out);
    assert_eq!(answers[0]["error"]["code"], -32603);
    // The client that `check` uses notices the exit at once and says so, rather than probing
    // the other era of a server that is gone.
    assert_eq!(
        answers[0]["error"]["message"],
        "mcp-cassette replay: passthrough to live server failed: the server exited with status 7 while waiting for \"initialize\" (nothing on its stderr)",
        "{}",
        answers[0]
    );
    assert_eq!(
        answers[1]["error"], answers[0]["error"],
        "the failure is remembered"
    );
    assert_eq!(answers[2]["error"]["code"], -32601);
    let stderr = stderr_of(&out);
    assert!(stderr.contains("mcp-cassette replay: passthrough does not forward \"subscriptions/listen\": a live server answers it only when the subscription ends, so the client gets the miss error instead"), "{stderr}");
    assert!(stderr.contains(", 2 forward(s) FAILED"), "{stderr}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a failed forward appends nothing"
    );
}

#[test]
fn passthrough_requests_are_bounded_by_the_client_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_cassette(dir.path());
    let lines_before = std::fs::read_to_string(&path).unwrap().lines().count();
    let server = fixture_server();
    let input: String = [
        // `block` is a tiny tool that never answers.
        call(1, "block", json!({})),
        call(2, "echo", json!({"message": "after"})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect();
    let mut command = Command::new(bin());
    command
        .args([
            "replay",
            path.to_str().unwrap(),
            "--on-miss",
            "passthrough",
            "--",
            server.to_str().unwrap(),
            "tiny",
        ])
        .env("MCP_CASSETTE_TIMEOUT_MS", "300")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in FIXTURE_VARS {
        command.env_remove(var);
    }
    let started = std::time::Instant::now();
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    let stderr = stderr_of(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed forward fails the session: {stderr}"
    );
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}: {stderr}");
    let answers = stdout_messages(&out);
    assert_eq!(
        answers[0]["error"],
        json!({"code": -32603, "message": "mcp-cassette replay: passthrough to live server failed: timeout after 300ms waiting for \"tools/call\""})
    );
    assert!(
        text_of(&answers[1]).starts_with("echo:after"),
        "the live server still serves the next miss: {}",
        answers[1]
    );
    assert!(stderr.contains(", 1 forward(s) FAILED"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().lines().count(),
        lines_before + 2,
        "only the answered pair is appended"
    );
}

#[test]
fn a_client_that_leaves_during_a_forward_still_gets_the_pair_appended() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny_cassette(dir.path());
    let lines_before = std::fs::read_to_string(&path).unwrap().lines().count();
    let server = fixture_server();
    let mut child = Command::new(bin())
        .args([
            "replay",
            path.to_str().unwrap(),
            "--on-miss",
            "passthrough",
            "--",
            server.to_str().unwrap(),
            "tiny",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all((call(1, "echo", json!({"message": "gone"})).to_string() + "\n").as_bytes())
        .unwrap();
    drop(stdin);
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().lines().count(),
        lines_before + 2
    );
}

#[test]
fn requests_are_redacted_like_the_recording_before_matching() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.jsonl");
    let token = "sk-liveSECRETtokenAAAAAAAAAAAA1";
    let leak = |id: i64, token: &str| call(id, "leak", json!({"token": token}));
    record_steps(
        &path,
        &["tiny"],
        &[("TINY_SECRETS", "1")],
        &[
            (initialize(1), Await::Answer),
            (initialized(), Await::Nothing),
            (leak(2, token), Await::Answer),
        ],
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(token), "the recording holds no secret");
    assert!(text.contains("[REDACTED:"));

    // The live token collapses to the recorded placeholder, so the call is answered.
    let out = run(
        &["replay", path.to_str().unwrap()],
        &(leak(7, token).to_string() + "\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let answers = stdout_messages(&out);
    assert!(
        text_of(&answers[0]).starts_with("received:[REDACTED:"),
        "{}",
        answers[0]
    );

    // Another token misses, and neither token reaches stderr or the client.
    let other = "sk-liveOTHERtokenBBBBBBBBBBBBB2";
    let out = run(
        &["replay", path.to_str().unwrap()],
        &(leak(8, other).to_string() + "\n"),
    );
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr_of(&out),
    );
    for shown in [&stdout, &stderr] {
        assert!(!shown.contains(token) && !shown.contains(other), "{shown}");
        assert!(
            shown.contains("/token (recorded \\\"[REDACTED:keyctx:")
                || shown.contains("/token (recorded \"[REDACTED:keyctx:"),
            "{shown}"
        );
    }
}

#[test]
fn a_verbatim_recording_still_keeps_secrets_out_of_diagnoses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verbatim.jsonl");
    let mut command = Command::new(bin());
    command
        .args(["record", "--no-redact", "-o"])
        .arg(&path)
        .arg("--")
        .arg(fixture_server())
        .arg("tiny");
    command
        .env("TINY_SECRETS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut p = Proc::spawn_prepared(command);
    p.exchange(&initialize(1));
    p.exchange(&call(
        2,
        "leak",
        json!({"token": "ghp_RecordedTokenAAAAAAAAAAAAAAAA"}),
    ));
    let (status, stderr, _) = p.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let given = "ghp_GivenTokenBBBBBBBBBBBBBBBBBBBB";
    let out = run(
        &["replay", path.to_str().unwrap()],
        &(call(3, "leak", json!({"token": given})).to_string() + "\n"),
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr_of(&out),
    );
    assert!(stderr.contains("fingerprint miss"), "{stderr}");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains(given) && !shown.contains("ghp_RecordedToken"),
            "{shown}"
        );
    }
}

#[test]
fn a_redaction_config_must_be_the_recordings() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("redact.json");
    std::fs::write(&config, r#"{"keys": ["message"]}"#).unwrap();
    let path = dir.path().join("configured.jsonl");
    let mut command = Command::new(bin());
    command
        .args(["record", "--redact-config"])
        .arg(&config)
        .arg("-o")
        .arg(&path)
        .arg("--")
        .arg(fixture_server())
        .arg("tiny");
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut p = Proc::spawn_prepared(command);
    p.exchange(&initialize(1));
    p.exchange(&call(2, "echo", json!({"message": "a private message"})));
    let (status, stderr, _) = p.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains(r#""arguments":{"message":"[REDACTED:keyctx:"#)
    );

    let ask = call(5, "echo", json!({"message": "a private message"})).to_string() + "\n";
    let out = run(&["replay", path.to_str().unwrap()], &ask);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr_of(&out),
        "mcp-cassette: the cassette was recorded with a redaction config this replay was not given; pass the same --redact-config the recording used. Redaction runs before matching, so replay must use the rules the recording used\n"
    );
    let out = run(
        &[
            "replay",
            path.to_str().unwrap(),
            "--redact-config",
            config.to_str().unwrap(),
        ],
        &ask,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // The server's echo of the redacted argument was redacted too (docs/redaction.md, "Echoes").
    let messages = stdout_messages(&out);
    let text = text_of(&messages[0]);
    assert!(
        text.starts_with("echo:[REDACTED:keyctx:") && text.ends_with("] #1"),
        "{text}"
    );
}

#[test]
fn one_cassette_serves_both_eras() {
    // Two sessions appended into one file, as a pinned 2026-07-28 client's probe and session
    // connections would leave it: a legacy handshake and a modern discover.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("both.jsonl");
    let append = |era: &str, steps: &[Value]| {
        let mut command = Command::new(bin());
        command
            .args(["record", "--mode", "append", "-o"])
            .arg(&path)
            .arg("--")
            .arg(fixture_server())
            .arg("pushy");
        for var in FIXTURE_VARS {
            command.env_remove(var);
        }
        command
            .env("PUSHY_ERA", era)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut p = Proc::spawn_prepared(command);
        for step in steps {
            if step.get("id").is_some() {
                p.exchange(step);
            } else {
                p.send(step);
            }
        }
        let (status, stderr, _) = p.finish();
        assert_eq!(status.code(), Some(0), "{stderr}");
    };
    append(
        "legacy",
        &[
            initialize(1),
            initialized(),
            req(2, "tools/list", json!({})),
        ],
    );
    let modern_meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    append(
        "modern",
        &[
            req(1, "server/discover", json!({"_meta": modern_meta})),
            req(2, "tools/list", json!({"_meta": modern_meta})),
        ],
    );
    let input: String = [
        req("d", "server/discover", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "other"}}})),
        initialize("i"),
        req("l1", "tools/list", json!({})),
        req("l2", "tools/list", json!({"_meta": modern_meta})),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect();
    let out = run(&["replay", path.to_str().unwrap()], &input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let answers = stdout_messages(&out);
    assert_eq!(answers[0]["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(answers[1]["result"]["serverInfo"]["name"], "pushy-server");
    assert!(
        answers[2]["result"].get("ttlMs").is_none(),
        "the legacy list first, as recorded"
    );
    assert_eq!(answers[3]["result"]["resultType"], "complete");
}

#[test]
fn params_too_deep_to_read_are_refused_and_serving_goes_on() {
    let path = shared().join("corpus-0.4/tiny.cassette.jsonl");
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"name\":\"x\",\"arguments\":{}1{}}}}}\n",
        "[".repeat(3000),
        "]".repeat(3000)
    );
    let input = deep + &(call(6, "echo", json!({"message": "hi"})).to_string() + "\n");
    let out = run(&["replay", path.to_str().unwrap()], &input);
    let answers = stdout_messages(&out);
    assert_eq!(answers[0]["id"], 5);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[1]["result"]["structuredContent"]["result"], "hi");
    assert!(
        stderr_of(&out).contains("line 1 from the client was answered with error -32600"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn a_listen_with_no_server_frame_at_all_is_a_miss_not_a_crash() {
    // More recorded requests than server frames, one of them a listen: indexing used to look
    // a request's position up among the server frames and panic.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("listen-only.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"type\":\"header\",\"cassetteVersion\":2,\"recorder\":\"test\",\"startedAt\":\"2026-12-02T00:00:00.000Z\",\"transport\":\"stdio\",\"era\":\"modern\"}\n",
            "{\"type\":\"frame\",\"t\":1,\"dir\":\"c2s\",\"frame\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{}}}\n",
            "{\"type\":\"frame\",\"t\":2,\"dir\":\"c2s\",\"frame\":{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}}\n",
        ),
    )
    .unwrap();
    let out = run(
        &["replay", path.to_str().unwrap()],
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let answers = stdout_messages(&out);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], 7);
    assert_eq!(answers[0]["error"]["code"], -32601);
    assert!(
        stderr_of(&out).contains("the recording holds no response for it"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn malformed_lines_are_noted_a_few_times_then_counted() {
    let path = shared().join("corpus-0.4/tiny.cassette.jsonl");
    let input = "not json\n".repeat(100_000);
    let out = run(&["replay", path.to_str().unwrap()], &input);
    let stderr = stderr_of(&out);
    assert_eq!(
        stdout_messages(&out).len(),
        100_000,
        "every line is answered"
    );
    assert_eq!(
        stderr.matches("is not a JSON-RPC message").count(),
        10,
        "{stderr:.2000}"
    );
    assert!(
        stderr.contains(
            "99990 more malformed line(s) from the client were answered with errors without a note (100000 in all)"
        ),
        "{stderr:.2000}"
    );
    assert!(stderr.len() < 4096, "{} bytes of stderr", stderr.len());
}

/// Peak resident memory (KiB) of `replay <cassette>` fed `input`.
fn replay_peak_kib(cassette: &Path, input: Vec<u8>) -> u64 {
    let report = tempfile::NamedTempFile::new().expect("a temporary file");
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by `try_reap` (wait4), which also reads its peak memory"
    )]
    let mut child = crate::check::measured(Path::new(bin()), report.path())
        .args(["replay", cassette.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let started = std::time::Instant::now();
    let peak = loop {
        if let Some((_, peak)) = crate::check::try_reap(&child) {
            break crate::check::peak_from(report.path(), peak);
        }
        assert!(started.elapsed() < Duration::from_secs(300), "replay hung");
        thread::sleep(Duration::from_millis(10));
    };
    writer.join().expect("writer");
    peak
}

#[test]
fn a_request_near_the_size_limit_costs_a_few_times_its_size() {
    let path = shared().join("corpus-0.4/tiny.cassette.jsonl");
    let line = |message: &str| {
        let mut text = initialize(1).to_string();
        text.push('\n');
        text.push_str(&call(2, "echo", json!({ "message": message })).to_string());
        text.push('\n');
        text.into_bytes()
    };
    let size = 60 * 1024 * 1024;
    let baseline = replay_peak_kib(&path, line("small"));
    let big = replay_peak_kib(&path, line(&"x".repeat(size)));
    let ratio = (big.saturating_sub(baseline) * 1024) as f64 / size as f64;
    // Held at once: the line as read, the params as sent, the params parsed, and their redacted
    // copy. It was about 6× when every diff entry and every shown value copied it whole.
    assert!(
        ratio < 4.75,
        "a {size}-byte request cost {ratio:.2}× its size"
    );
}

#[test]
fn diagnostics_show_client_text_as_visible_escapes() {
    let path = shared().join("corpus-0.4/tiny.cassette.jsonl");
    let method = "tools/x\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\u{202e}";
    let input = format!("{}\n{}\n", req(1, method, json!({})), "not json \u{1b}[31m");
    let out = run(&["replay", path.to_str().unwrap()], &input);
    let stderr = stderr_of(&out);
    assert!(crate::check::is_inert(&stderr), "{stderr:?}");
    assert!(
        stderr.contains("tools/x\\x1b[2J\\x1b]52;c;aGk=\\x07\\u{202e}"),
        "{stderr}"
    );
}

#[test]
fn unused_recordings_are_summarised_and_fail_on_request() {
    let cassette = shared().join("reference-0.8/poisoned-output.cassette.jsonl");
    let cassette = cassette.to_str().unwrap();
    let input = format!(
        "{}\n{}\n",
        initialize(1),
        call(2, "search", json!({"q": "weather"}))
    );
    let out = run(&["replay", cassette], &input);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("3 recorded answer(s) were never used"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unused: tools/call \"fetch_issue\" (line 7)"),
        "{stderr}"
    );
    assert!(!stderr.contains("(line 2)"), "{stderr}");
    let out = run(&["replay", cassette, "--fail-on-unused"], &input);
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    // A miss keeps its own code.
    let missed = format!("{input}{}\n", call(3, "nope", json!({})));
    let out = run(&["replay", cassette, "--fail-on-unused"], &missed);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
}

#[test]
fn a_long_unused_list_is_cut_with_a_count() {
    let cassette = many_calls_cassette(30);
    let out = run(&["replay", cassette.path().to_str().unwrap()], "");
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("30 recorded answer(s) were never used"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("  unused: ").count(), 20, "{stderr}");
    assert!(stderr.contains("… and 10 more"), "{stderr}");
}
