//! The scripted fixture servers (`examples/fixture_server`) and a small driver for them.
//!
//! Other test modules get the server's path from [`fixture_server`] and may drive it with
//! [`Fixture`]. The tests here pin what each mode does, with plain JSON lines over pipes, so a
//! test elsewhere that relies on a fixture misbehaving in a particular way can trust it does.
//!
//! Every read has a timeout (a reader thread feeds a channel), so a broken fixture fails a test
//! instead of hanging the suite.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use regex::Regex;
use serde_json::{Value, json};

/// How long any single read waits before the test fails.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Environment variables that select fixture variants; cleared before every spawn so the
/// surrounding environment cannot change what a test sees.
const VARIANT_VARS: [&str; 8] = [
    "TINY_EVIL",
    "TINY_POISONED",
    "TINY_V2",
    "TINY_SECRETS",
    "TINY_SURFACES",
    "TINY_PROGRESS",
    "PUSHY_ERA",
    "TASKING_STALL",
];

/// Path of the compiled fixture server (cargo test builds examples into
/// `target/<profile>/examples/`).
///
/// `cargo test` builds examples only when no target filter is given, so a run like
/// `cargo test --test it` may find the binary missing or older than its sources; it is then
/// built once, with the same cargo, profile and target directory as the test binary.
pub(crate) fn fixture_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let bin = Path::new(env!("CARGO_BIN_EXE_mcp-cassette"));
        let profile_dir = bin
            .parent()
            .expect("the binary lives in a profile directory");
        let path = profile_dir
            .join("examples")
            .join(format!("fixture_server{}", std::env::consts::EXE_SUFFIX));
        if is_stale(&path) {
            build_fixture_server(profile_dir);
        }
        assert!(
            path.is_file(),
            "fixture server not found at {}",
            path.display()
        );
        path
    })
    .clone()
}

/// Missing, or older than any of its source files.
fn is_stale(binary: &Path) -> bool {
    let Ok(built) = binary.metadata().and_then(|meta| meta.modified()) else {
        return true;
    };
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fixture_server");
    let newest = std::fs::read_dir(sources)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.metadata().and_then(|meta| meta.modified()).ok())
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    newest > built
}

fn build_fixture_server(profile_dir: &Path) {
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let target_dir = profile_dir
        .parent()
        .expect("a profile directory has a parent");
    let status = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args([
            "build",
            "--quiet",
            "--example",
            "fixture_server",
            "--profile",
            profile,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building the fixture server failed: {status}"
    );
}

/// A running fixture server with its stdout read line by line on a thread.
pub(crate) struct Fixture {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Fixture {
    /// Starts `fixture_server <mode>` with only the given variant variables set.
    pub(crate) fn spawn(mode: &str, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(fixture_server());
        command
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in VARIANT_VARS {
            command.env_remove(var);
        }
        command.envs(env.iter().copied());
        let mut child = command.spawn().expect("the fixture server starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&line)
                            .trim_end_matches(['\r', '\n'])
                            .to_owned();
                        if sender.send(text).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    /// Writes one line (a newline is added).
    pub(crate) fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin
            .write_all(line.as_bytes())
            .expect("write to the fixture");
        stdin.write_all(b"\n").expect("write to the fixture");
        stdin.flush().expect("flush to the fixture");
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    /// Sends a request and returns the next line the server writes, parsed.
    pub(crate) fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}));
        self.message()
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next stdout line, or a failed test after [`TIMEOUT`] or at end of output.
    pub(crate) fn line(&self) -> String {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line from the fixture within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the fixture closed stdout"),
        }
    }

    /// The next stdout line, parsed as JSON.
    pub(crate) fn message(&self) -> Value {
        let line = self.line();
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line:.200}"))
    }

    /// The next line within `wait`, `Err(Timeout)` if none, `Err(Disconnected)` at end of output.
    pub(crate) fn try_line(&self, wait: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(wait)
    }

    /// Asserts nothing arrives on stdout for `wait`.
    pub(crate) fn assert_quiet(&self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("expected silence, got: {line:.200}");
        }
    }

    /// Closes stdin and waits for the exit; returns the status and everything written to stderr.
    pub(crate) fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.wait();
        let stderr = self
            .stderr
            .take()
            .map(|reader| reader.join().unwrap_or_default());
        (status, stderr.unwrap_or_default())
    }

    /// Waits for the process to exit on its own (stdin left as is).
    pub(crate) fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the fixture") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the fixture did not exit within {TIMEOUT:?}"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A legacy `initialize` and the `notifications/initialized` that follows it; returns the result.
fn handshake(fixture: &mut Fixture, version: &str) -> Value {
    let answer = fixture.request(
        0,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}),
    );
    fixture.notify("notifications/initialized", json!({}));
    answer["result"].clone()
}

fn call(fixture: &mut Fixture, id: i64, tool: &str, arguments: Value) -> Value {
    fixture.request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

fn tool_names(list: &Value) -> Vec<&str> {
    list["result"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// The shapes of the lint rules CAS-L001…L005 as docs/check.md describes them, so the poisoned
/// fixtures are checked against the rules they exist to trip, independently of our linter.
fn lint_hits(text: &str) -> Vec<&'static str> {
    static RULES: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            ("L001", r"(?i)\bignore\s+(?:(?:all|any)\s+)?(?:previous|prior|above|earlier)\s+(?:instructions?|rules?|prompts?)"),
            ("L002", r"(?i)<\s*(?:system|important|secret|hidden|instructions?)\s*>|<!--"),
            ("L003", r"(?i)\bdo\s+not\s+(?:tell|inform|mention|reveal|show|notify|alert)\b[^.]{0,40}\b(?:user|human|operator)"),
            ("L005", r"(?i)\.ssh\b|id_rsa|\.env\b|credentials?\.json"),
        ]
        .into_iter()
        .map(|(id, pattern)| (id, Regex::new(pattern).expect("pattern compiles")))
        .collect()
    });
    let mut hits: Vec<&str> = rules
        .iter()
        .filter(|(_, re)| re.is_match(text))
        .map(|(id, _)| *id)
        .collect();
    let exfiltration = text.match_indices("http").any(|(at, _)| {
        let rest = &text[at..];
        (rest.starts_with("http://") || rest.starts_with("https://")) && {
            let window = &text[at.saturating_sub(60)..at];
            let clause = window.rsplit('.').next().unwrap_or(window).to_lowercase();
            ["send", "post", "upload", "forward", "transmit"]
                .iter()
                .any(|verb| clause.contains(verb))
        }
    });
    if exfiltration {
        hits.push("L004");
        hits.sort_unstable();
    }
    hits
}

#[test]
fn tiny_handshake_echo_count_and_errors() {
    let mut tiny = Fixture::spawn("tiny", &[]);
    let init = handshake(&mut tiny, "2025-03-26");
    assert_eq!(init["protocolVersion"], "2025-03-26");
    assert_eq!(
        init["serverInfo"],
        json!({"name": "tiny-server", "version": "1.0.0"})
    );
    assert_eq!(init["capabilities"], json!({"tools": {}}));

    let list = tiny.request(1, "tools/list", json!({}));
    assert_eq!(list["id"], 1);
    assert_eq!(tool_names(&list), ["echo", "add", "slugify"]);

    assert_eq!(
        text_of(&call(&mut tiny, 2, "echo", json!({"message": "hi"}))),
        "echo:hi #1"
    );
    assert_eq!(
        text_of(&call(&mut tiny, 3, "echo", json!({"message": "hi"}))),
        "echo:hi #2"
    );
    assert_eq!(
        text_of(&call(&mut tiny, 4, "add", json!({"a": 2, "b": 3}))),
        "5"
    );
    assert_eq!(
        text_of(&call(&mut tiny, 5, "add", json!({"a": 0.1, "b": 0.2}))),
        "0.30000000000000004"
    );
    assert_eq!(
        text_of(&call(
            &mut tiny,
            6,
            "slugify",
            json!({"title": "Hello  Big World"})
        )),
        "hello-big-world"
    );
    assert_eq!(
        tiny.request("p", "ping", json!({})),
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );

    let unknown = tiny.request(7, "resources/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let no_tool = call(&mut tiny, 8, "nope", json!({}));
    assert_eq!(no_tool["id"], 8);
    assert_eq!(no_tool["error"]["code"], -32602);

    // `block` never answers: the next line is the answer to the request after it.
    tiny.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "block", "arguments": {}}}));
    assert_eq!(tiny.request(10, "ping", json!({}))["id"], 10);

    let (status, _) = tiny.finish();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn tiny_answers_an_unknown_protocol_version_with_its_own() {
    let mut tiny = Fixture::spawn("tiny", &[]);
    assert_eq!(
        handshake(&mut tiny, "1999-01-01")["protocolVersion"],
        "2025-06-18"
    );
    assert_eq!(
        handshake(&mut tiny, "2025-11-25")["protocolVersion"],
        "2025-11-25"
    );
}

#[test]
fn tiny_v2_changes_the_contract() {
    let mut tiny = Fixture::spawn("tiny", &[("TINY_V2", "1")]);
    assert_eq!(
        handshake(&mut tiny, "2025-06-18")["serverInfo"]["version"],
        "2.0.0"
    );
    let list = tiny.request(1, "tools/list", json!({}));
    assert_eq!(tool_names(&list), ["echo", "add"]);
    let add = &list["result"]["tools"][1]["inputSchema"];
    assert_eq!(add["required"], json!(["a", "b", "precision"]));
    assert_eq!(add["properties"]["precision"], json!({"type": "integer"}));
    assert_eq!(add["properties"]["mode"], json!({"type": "string"}));
    assert_eq!(
        call(&mut tiny, 2, "slugify", json!({"title": "x"}))["error"]["code"],
        -32602
    );
}

#[test]
fn tiny_evil_poisons_get_weather_and_breaks_a_schema() {
    let mut tiny = Fixture::spawn("tiny", &[("TINY_EVIL", "1")]);
    handshake(&mut tiny, "2025-06-18");
    let list = tiny.request(1, "tools/list", json!({}));
    assert_eq!(
        tool_names(&list),
        ["echo", "add", "slugify", "get_weather", "broken"]
    );
    let tools = list["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for tool in &tools {
        let description = tool["description"].as_str().unwrap_or_default();
        let expected: &[&str] = if tool["name"] == "get_weather" {
            &["L001", "L002", "L003", "L004", "L005"]
        } else {
            &[]
        };
        assert_eq!(lint_hits(description), expected, "{}", tool["name"]);
    }
    assert_eq!(tools[4]["inputSchema"]["properties"]["x"]["type"], "strang");
    assert_eq!(
        text_of(&call(&mut tiny, 2, "get_weather", json!({"city": "Oslo"}))),
        "sunny in Oslo"
    );
}

#[test]
fn tiny_poisoned_adds_only_get_weather() {
    let mut tiny = Fixture::spawn("tiny", &[("TINY_POISONED", "1")]);
    let list = tiny.request(1, "tools/list", json!({}));
    assert_eq!(tool_names(&list), ["echo", "add", "slugify", "get_weather"]);
}

#[test]
fn tiny_secrets_leaks_on_stdout_and_in_results() {
    let mut tiny = Fixture::spawn("tiny", &[("TINY_SECRETS", "1")]);
    handshake(&mut tiny, "2025-06-18");
    assert!(tool_names(&tiny.request(1, "tools/list", json!({}))).contains(&"leak"));

    tiny.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "leak", "arguments": {"token": "sk-live-1234567890abcdef"}}}));
    // First a raw JSON log line (no "jsonrpc") carrying a password, then the answer.
    let log = tiny.message();
    assert!(log.get("jsonrpc").is_none(), "{log}");
    assert_eq!(
        log["params"]["arguments"]["password"],
        "hunter2-secret-value"
    );
    let answer = tiny.message();
    assert_eq!(answer["id"], 2);
    let texts: Vec<&str> = answer["result"]["content"]
        .as_array()
        .map(|content| {
            content
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(texts[0], "received:sk-live-1234567890abcdef");
    let github = Regex::new(r"\bghp_[A-Za-z0-9]{36}\b").expect("pattern compiles");
    assert!(github.is_match(texts[1]), "{}", texts[1]);
}

#[test]
fn tiny_surfaces_serves_prompts_and_resources() {
    let mut tiny = Fixture::spawn("tiny", &[("TINY_SURFACES", "1")]);
    let caps = handshake(&mut tiny, "2025-06-18")["capabilities"].clone();
    assert_eq!(caps, json!({"tools": {}, "prompts": {}, "resources": {}}));

    let prompts = tiny.request(1, "prompts/list", json!({}))["result"]["prompts"].clone();
    assert_eq!(prompts.as_array().map(Vec::len), Some(2));
    assert_eq!(prompts[0]["name"], "plan_trip");
    let description = prompts[0]["description"].as_str().unwrap_or_default();
    let argument = prompts[0]["arguments"][0]["description"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(lint_hits(description), ["L001", "L002"]);
    assert_eq!(lint_hits(argument), ["L003"]);
    assert_eq!(lint_hits(&prompts[1].to_string()), Vec::<&str>::new());

    let resources = tiny.request(2, "resources/list", json!({}))["result"]["resources"].clone();
    assert_eq!(resources[0]["uri"], "file:///docs/notes.md");
    assert_eq!(
        lint_hits(resources[0]["name"].as_str().unwrap_or_default()),
        ["L001", "L002"]
    );
    assert_eq!(lint_hits(&resources[1].to_string()), Vec::<&str>::new());
    assert_eq!(resources.as_array().map(Vec::len), Some(2));

    let templates =
        tiny.request(3, "resources/templates/list", json!({}))["result"]["resourceTemplates"]
            .clone();
    assert_eq!(templates[0]["uriTemplate"], "file:///logs/{date}.log");
    assert_eq!(
        lint_hits(templates[0]["description"].as_str().unwrap_or_default()),
        ["L004"]
    );

    let prompt = tiny.request(
        4,
        "prompts/get",
        json!({"name": "plan_trip", "arguments": {"destination": "Rome"}}),
    );
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Plan a trip to Rome."
    );
    let read = tiny.request(
        5,
        "resources/read",
        json!({"uri": "file:///logs/2026-01-02.log"}),
    );
    assert_eq!(
        read["result"]["contents"][0]["uri"],
        "file:///logs/2026-01-02.log"
    );
    assert_eq!(
        tiny.request(6, "resources/read", json!({"uri": "file:///nope"}))["error"]["code"],
        -32002
    );
}

#[test]
fn tiny_without_surfaces_has_no_prompts() {
    let mut tiny = Fixture::spawn("tiny", &[]);
    assert_eq!(
        tiny.request(1, "prompts/list", json!({}))["error"]["code"],
        -32601
    );
}

#[test]
fn tiny_progress_reports_before_answering() {
    let mut tiny = Fixture::spawn("tiny", &[("TINY_PROGRESS", "1")]);
    handshake(&mut tiny, "2025-06-18");
    tiny.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "m"}, "_meta": {"progressToken": "tok-1"}}}));
    let mut methods = Vec::new();
    for _ in 0..6 {
        let notification = tiny.message();
        if notification["method"] == "notifications/progress" {
            assert_eq!(notification["params"]["progressToken"], "tok-1");
        }
        methods.push(
            notification["method"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    assert_eq!(
        methods
            .iter()
            .filter(|m| *m == "notifications/progress")
            .count(),
        3
    );
    assert_eq!(
        methods
            .iter()
            .filter(|m| *m == "notifications/message")
            .count(),
        3
    );
    assert_eq!(text_of(&tiny.message()), "echo:m #1");

    // Without a progress token: the log messages only.
    tiny.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "m"}}}));
    for _ in 0..3 {
        assert_eq!(tiny.message()["method"], "notifications/message");
    }
    assert_eq!(tiny.message()["id"], 2);
}

#[test]
fn stdout_log_mixes_log_lines_and_a_batch_with_answers() {
    let mut server = Fixture::spawn("stdout-log", &[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}}));
    let mut lines = Vec::new();
    let mut batches = 0;
    let mut answer = Value::Null;
    for _ in 0..5 {
        let line = server.line();
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Array(batch)) => {
                batches += 1;
                assert!(!batch.is_empty());
            }
            Ok(value) if value["id"] == 1 => answer = value,
            Ok(other) => panic!("unexpected JSON line {other}"),
            Err(_) => lines.push(line),
        }
    }
    assert_eq!(lines[0], "starting up...");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(batches, 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "tiny-server");

    // Later answers come wrapped in log lines too, but no second batch.
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert!(serde_json::from_str::<Value>(&server.line()).is_err());
    assert_eq!(server.message()["id"], 2);
    assert!(serde_json::from_str::<Value>(&server.line()).is_err());
    server.assert_quiet(Duration::from_millis(100));
}

#[test]
fn crash_exits_3_on_the_first_call() {
    let mut server = Fixture::spawn("crash", &[]);
    handshake(&mut server, "2025-06-18");
    assert_eq!(
        tool_names(&server.request(1, "tools/list", json!({}))),
        ["echo", "add", "slugify"]
    );
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "x"}}}));
    assert_eq!(
        server.try_line(TIMEOUT),
        Err(RecvTimeoutError::Disconnected)
    );
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(3));
    assert!(!stderr.trim().is_empty());
}

#[test]
fn silent_never_answers_and_exits_0_at_eof() {
    let mut server = Fixture::spawn("silent", &[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}));
    server.assert_quiet(Duration::from_millis(200));
    let (status, _) = server.finish();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn exit_now_exits_7_without_reading() {
    let mut server = Fixture::spawn("exit-now", &[]);
    assert_eq!(server.wait().code(), Some(7));
    assert_eq!(
        server.try_line(TIMEOUT),
        Err(RecvTimeoutError::Disconnected)
    );
}

#[test]
fn garbage_never_writes_json() {
    let mut server = Fixture::spawn("garbage", &[]);
    for id in 0..4 {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let line = server.line();
        assert!(serde_json::from_str::<Value>(&line).is_err(), "{line}");
    }
}

#[test]
fn wrong_id_answers_someone_else() {
    let mut server = Fixture::spawn("wrong-id", &[]);
    let init = server.request(5, "initialize", json!({"protocolVersion": "2025-06-18"}));
    assert!(init.get("result").is_some());
    assert_ne!(init["id"], 5);
    let list = server.request("abc", "tools/list", json!({}));
    assert_ne!(list["id"], "abc");
    assert_eq!(tool_names(&list), ["echo", "add", "slugify"]);
}

#[test]
fn huge_list_answers_with_20_megabytes() {
    let mut server = Fixture::spawn("huge-list", &[]);
    handshake(&mut server, "2025-06-18");
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let line = server.line();
    assert!(line.len() >= 20 * 1024 * 1024, "{} bytes", line.len());
    assert!(line.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo""#));
    // Still an ordinary tiny server otherwise.
    assert_eq!(
        text_of(&call(&mut server, 2, "echo", json!({"message": "x"}))),
        "echo:x #1"
    );
}

#[test]
fn deep_schema_nests_ten_thousand_levels() {
    let mut server = Fixture::spawn("deep-schema", &[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let line = server.line();
    // Depth counted by scanning: no recursive parser could read this back.
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0_usize, 0_usize, false, false);
    for byte in line.bytes() {
        match (in_string, byte) {
            (true, b'\\') if !escaped => escaped = true,
            (true, b'"') if !escaped => in_string = false,
            (true, _) => escaped = false,
            (false, b'"') => in_string = true,
            (false, b'{' | b'[') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b'}' | b']') => depth = depth.checked_sub(1).expect("balanced"),
            _ => {}
        }
    }
    assert_eq!(depth, 0, "balanced");
    // Two JSON levels per schema level (the schema and its "properties").
    assert!(deepest >= 20_000, "{deepest}");
    assert!(line.contains(r#""name":"deep""#));
    assert!(line.ends_with("}]}}"));
}

#[test]
fn paginate_forever_always_has_a_next_page() {
    let mut server = Fixture::spawn("paginate-forever", &[]);
    let mut cursor = Value::Null;
    for id in 0..5 {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let page = server.request(id, "tools/list", params);
        assert!(!tool_names(&page).is_empty());
        cursor = page["result"]["nextCursor"].clone();
        assert!(cursor.is_string(), "{page}");
    }
    assert_eq!(cursor, "page-5");
}

#[test]
fn pushy_legacy_announces_a_changed_list() {
    let mut server = Fixture::spawn("pushy", &[]);
    let init = handshake(&mut server, "2025-06-18");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true);
    assert!(init.get("resultType").is_none());
    let answer = call(&mut server, 1, "add_tool", json!({"name": "extra"}));
    assert_eq!(text_of(&answer), "installed:extra");
    assert_eq!(
        server.message(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(
        tool_names(&server.request(2, "tools/list", json!({}))),
        ["echo", "add_tool", "extra"]
    );
    // An echo changes nothing, so nothing follows its answer.
    assert_eq!(
        text_of(&call(&mut server, 3, "echo", json!({"message": "x"}))),
        "echo:x"
    );
    server.assert_quiet(Duration::from_millis(100));
}

#[test]
fn pushy_modern_acknowledges_listens_and_tags_notifications() {
    let mut server = Fixture::spawn("pushy", &[("PUSHY_ERA", "modern")]);
    assert!(
        server
            .request(0, "initialize", json!({"protocolVersion": "2025-06-18"}))
            .get("error")
            .is_some()
    );

    let discover = server.request(1, "server/discover", json!({"_meta": {}}));
    assert_eq!(discover["result"]["resultType"], "complete");
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );

    let list = server.request(2, "tools/list", json!({}));
    assert_eq!(list["result"]["resultType"], "complete");
    assert!(list["result"]["ttlMs"].is_u64());
    assert!(list["result"]["cacheScope"].is_string());

    // The acknowledgment is the listen's only answer, tagged with its id.
    let ack = server.request(
        "listen-1",
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(ack.get("id").is_none());
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
    // A second listen that did not ask for tool changes hears nothing of them.
    let quiet = server.request(9, "subscriptions/listen", json!({"notifications": {}}));
    assert_eq!(
        quiet["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );

    let answer = call(&mut server, 3, "add_tool", json!({"name": "extra"}));
    assert_eq!(answer["result"]["resultType"], "complete");
    let changed = server.message();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    server.assert_quiet(Duration::from_millis(100));

    // Ending the subscriptions answers each listen, the call's own answer first.
    assert_eq!(call(&mut server, 4, "end_listen", json!({}))["id"], 4);
    let closures = [server.message(), server.message()];
    assert_eq!(closures[0]["id"], "listen-1");
    assert_eq!(
        closures[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(closures[1]["id"], 9);
}

fn poll(server: &mut Fixture, id: i64) -> Value {
    let answer = server.request(id, "tasks/get", json!({"taskId": "task-0001"}));
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    answer["result"].clone()
}

#[test]
fn tasking_walks_its_state_script() {
    let mut server = Fixture::spawn("tasking", &[]);
    let discover = server.request(1, "server/discover", json!({}));
    assert!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object()
    );
    assert!(
        server
            .request(2, "initialize", json!({}))
            .get("error")
            .is_some()
    );

    let ack = server.request(
        "L",
        "subscriptions/listen",
        json!({"notifications": {"taskIds": ["task-0001"]}}),
    );
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    let handle = call(&mut server, 3, "build", json!({"target": "app"}));
    assert_eq!(handle["result"]["resultType"], "task");
    assert_eq!(handle["result"]["taskId"], "task-0001");
    assert_eq!(handle["result"]["status"], "working");

    assert_eq!(poll(&mut server, 4)["status"], "working");
    let parked = poll(&mut server, 5);
    assert_eq!(parked["status"], "input_required");
    assert!(parked["inputRequests"]["confirm"].is_object());
    assert_eq!(
        poll(&mut server, 6)["status"],
        "input_required",
        "parked until tasks/update"
    );

    let update = server.request(7, "tasks/update",
        json!({"taskId": "task-0001", "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}));
    assert_eq!(update["result"]["resultType"], "complete");
    let pushed = server.message();
    assert_eq!(pushed["method"], "notifications/tasks");
    assert_eq!(
        pushed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );

    assert_eq!(poll(&mut server, 8)["status"], "working");
    let done = poll(&mut server, 9);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "built: ok");
    assert_eq!(
        server.message()["params"]["status"],
        "completed",
        "the listener hears the end"
    );
    assert_eq!(
        poll(&mut server, 10)["status"],
        "completed",
        "terminal state stays"
    );

    let result = server.request(11, "tasks/result", json!({"taskId": "task-0001"}));
    assert_eq!(result["result"]["content"][0]["text"], "built: ok");
    assert_eq!(
        server.request(12, "tasks/get", json!({"taskId": "task-9"}))["error"]["code"],
        -32602
    );
}

#[test]
fn tasking_cancel_and_stall() {
    let mut server = Fixture::spawn("tasking", &[]);
    call(&mut server, 1, "build", json!({"target": "app"}));
    assert_eq!(poll(&mut server, 2)["status"], "working");
    // tasks/result waits for the end, which the cancel brings at the next poll.
    server.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": "task-0001"}}));
    server.assert_quiet(Duration::from_millis(100));
    assert_eq!(
        server.request(4, "tasks/cancel", json!({"taskId": "task-0001"}))["id"],
        4
    );
    assert_eq!(poll(&mut server, 5)["status"], "cancelled");
    assert_eq!(server.message()["id"], 3);

    let mut stalled = Fixture::spawn("tasking", &[("TASKING_STALL", "1")]);
    call(&mut stalled, 1, "build", json!({"target": "app"}));
    for id in 2..8 {
        assert_eq!(poll(&mut stalled, id)["status"], "working");
    }
}

#[test]
fn header_params_declares_one_valid_and_one_invalid_header() {
    let mut server = Fixture::spawn("header-params", &[]);
    handshake(&mut server, "2025-06-18");
    let list = server.request(1, "tools/list", json!({}));
    assert_eq!(tool_names(&list), ["route", "broken"]);
    let tools = &list["result"]["tools"];
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    assert_eq!(
        tools[1]["inputSchema"]["properties"]["tenant"]["x-mcp-header"],
        "Tenant Id"
    );
    let routed = call(
        &mut server,
        2,
        "route",
        json!({"region": "us-west1", "query": "q"}),
    );
    assert_eq!(text_of(&routed), "ran q in us-west1");
}

#[test]
fn echo_bench_answers_a_pipelined_burst_in_order() {
    let mut server = Fixture::spawn("echo-bench", &[]);
    assert_eq!(
        server.request(0, "initialize", json!({}))["result"]["serverInfo"]["name"],
        "echo-bench"
    );
    assert_eq!(
        tool_names(&server.request(1, "tools/list", json!({}))),
        ["echo"]
    );
    let burst: String = (2..1002)
        .map(|id| {
            format!(
                "{}\n",
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": format!("m\"{id}")}}})
            )
        })
        .collect();
    server.send_line(burst.trim_end());
    for id in 2..1002 {
        let answer = server.message();
        assert_eq!(answer["id"], id);
        assert_eq!(text_of(&answer), format!("m\"{id}"));
    }
    assert_eq!(
        server.request(2000, "nope", json!({}))["error"]["code"],
        -32601
    );
}

#[test]
fn null_answers_every_line_with_an_id() {
    let mut server = Fixture::spawn("null", &[]);
    server.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send_line(r#"{"jsonrpc":"2.0","id": "a\"b","method":"x"}"#);
    assert_eq!(
        server.message(),
        json!({"jsonrpc": "2.0", "id": "a\"b", "result": {}})
    );
    server.send_line(r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo"}}"#);
    assert_eq!(
        server.message(),
        json!({"jsonrpc": "2.0", "id": 42, "result": {}})
    );
    let (status, _) = server.finish();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn an_unknown_mode_is_a_usage_error() {
    let mut server = Fixture::spawn("no-such-mode", &[]);
    assert_eq!(server.wait().code(), Some(2));
    let (_, stderr) = server.finish();
    assert!(stderr.contains("usage: fixture_server <mode>"), "{stderr}");
}
