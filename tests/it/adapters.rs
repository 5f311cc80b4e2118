//! The test adapters: the miss channel `replay --listen --control` serves them, and real vitest
//! and jest runs of `mcp-cassette/vitest` and `mcp-cassette/jest` (docs/adapters.md).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::record::bin;

const TOKEN: &str = "test-token-0123456789abcdef";
const DRAIN: &str = "/.mcp-cassette/misses/drain";
const TIMEOUT: Duration = Duration::from_secs(10);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tape() -> PathBuf {
    repo().join("tests/fixtures/reference/reference-0.4/tape.http.jsonl")
}

/// A `replay --listen 127.0.0.1:0` started with `args` and `$MCP_CASSETTE_CONTROL_TOKEN` = `token`.
struct Replay {
    child: Child,
    addr: String,
}

impl Replay {
    fn start(args: &[&str], token: Option<&str>) -> Replay {
        let mut cmd = Command::new(bin());
        cmd.arg("replay")
            .arg(tape())
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
            // Held open: under --control the replay stops when its stdin closes.
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            cmd.env("MCP_CASSETTE_CONTROL_TOKEN", token);
        }
        let mut child = cmd.spawn().expect("replay starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let addr = loop {
            let line = rx.recv_timeout(TIMEOUT).expect("a URL line");
            if let Some((_, url)) = line.rsplit_once(" server at http://") {
                break url.trim_end_matches('/').to_owned();
            }
        };
        Replay { child, addr }
    }

    /// One request on its own connection: status and body.
    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, body.to_owned())
    }

    fn call(&self, id: u64, arguments: Value) -> Value {
        let frame = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":arguments}});
        let (status, body) = self.send(
            "POST",
            "/",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            &frame.to_string(),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    fn drain(&self, headers: &[(&str, &str)]) -> (u16, String) {
        self.send("POST", DRAIN, headers, "")
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

#[test]
fn a_drain_returns_the_misses_since_the_last_one() {
    let replay = Replay::start(&["--control"], Some(TOKEN));
    let auth = bearer();
    let auth = [("Authorization", auth.as_str())];
    let (status, body) = replay.drain(&auth);
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"misses":[],"dropped":0}"#)
    );

    // A hit is not a miss.
    let hit = replay.call(1, json!({"m":"recorded"}));
    assert_eq!(hit["result"]["content"][0]["text"], "recorded");
    // The client has the miss error in hand before it drains: the drain must hold the miss.
    let missed = replay.call(2, json!({"m":"drifted"}));
    assert_eq!(missed["error"]["code"], -32601);
    let (status, body) = replay.drain(&auth);
    assert_eq!(status, 200);
    let drained: Value = serde_json::from_str(&body).unwrap();
    let misses = drained["misses"].as_array().unwrap();
    assert_eq!(misses.len(), 1, "{drained}");
    let miss = &misses[0];
    assert_eq!(miss["method"], "tools/call");
    assert_eq!(miss["tool"], "echo");
    assert_eq!(miss["id"], 2);
    assert_eq!(miss["handling"], "error");
    assert_eq!(miss["session"], 1);
    assert_eq!(miss["reason"]["kind"], "arguments-differ");
    assert_eq!(
        miss["reason"]["changes"],
        json!([{"path":"/m","recorded":"recorded","live":"drifted"}])
    );
    assert_eq!(
        miss["diagnosis"],
        "method and tool match a recording, but arguments differ at: /m (recorded \"recorded\", got \"drifted\")"
    );

    // Drained means gone; a second miss is the only one in the next drain.
    replay.call(3, json!({"m":"other"}));
    let (_, body) = replay.drain(&auth);
    let drained: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(drained["misses"].as_array().unwrap().len(), 1);
    assert_eq!(drained["misses"][0]["id"], 3);
    let (_, body) = replay.drain(&auth);
    assert_eq!(body, r#"{"misses":[],"dropped":0}"#);
}

#[test]
fn the_drain_answers_only_its_token_and_only_from_home() {
    let replay = Replay::start(&["--control"], Some(TOKEN));
    replay.call(1, json!({"m":"drifted"}));
    assert_eq!(replay.drain(&[]).0, 404);
    assert_eq!(
        replay
            .drain(&[("Authorization", "Bearer test-token-0123456789abcdeX")])
            .0,
        404
    );
    assert_eq!(replay.drain(&[("Authorization", TOKEN)]).0, 404);
    let auth = bearer();
    let (status, _) = replay.drain(&[
        ("Authorization", auth.as_str()),
        ("Origin", "https://evil.example"),
    ]);
    assert_eq!(status, 403);
    let (status, _) = replay.send("GET", DRAIN, &[("Authorization", auth.as_str())], "");
    assert_eq!(status, 405);
    // None of the refused attempts drained anything.
    let (status, body) = replay.drain(&[("Authorization", auth.as_str())]);
    assert_eq!(status, 200);
    let drained: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(drained["misses"].as_array().unwrap().len(), 1);
}

#[test]
fn without_the_flag_there_is_no_drain() {
    let replay = Replay::start(&[], Some(TOKEN));
    replay.call(1, json!({"m":"drifted"}));
    let auth = bearer();
    let (status, body) = replay.drain(&[
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ]);
    // The path is just the MCP endpoint, and an empty body is not a JSON-RPC frame.
    assert_eq!(status, 400, "{body}");
    assert!(!body.contains("misses"), "{body}");
}

#[test]
fn a_controlled_replay_stops_when_its_stdin_closes() {
    let mut replay = Replay::start(&["--control"], Some(TOKEN));
    drop(replay.child.stdin.take());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = replay.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "still running with stdin closed"
        );
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn the_flag_needs_a_token_and_listen() {
    let run = |args: &[&str], token: Option<&str>| {
        let mut cmd = Command::new(bin());
        cmd.arg("replay")
            .arg(tape())
            .args(args)
            .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
            .stdin(Stdio::null());
        if let Some(token) = token {
            cmd.env("MCP_CASSETTE_CONTROL_TOKEN", token);
        }
        cmd.output().unwrap()
    };
    let out = run(&["--listen", "127.0.0.1:0", "--control"], None);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MCP_CASSETTE_CONTROL_TOKEN"), "{stderr}");
    let out = run(&["--listen", "127.0.0.1:0", "--control"], Some("short"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));
    let stdio = repo().join("tests/fixtures/reference/reference-0.4/stdio-tape.jsonl");
    let out = Command::new(bin())
        .args(["replay", "--control"])
        .arg(&stdio)
        .env("MCP_CASSETTE_CONTROL_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("add --listen"), "{stderr}");
    // The token is never echoed.
    assert!(!stderr.contains(TOKEN), "{stderr}");
}

// ---- vitest and jest running the adapter specs (interop/adapters) ----

fn adapters_dir() -> PathBuf {
    repo().join("interop/adapters")
}

/// Whether the pinned runners are installed (scripts/install-interop.sh); says why not.
fn runners_installed() -> bool {
    let modules = adapters_dir().join("node_modules");
    let missing: Vec<&str> = [
        "vitest",
        "jest",
        "@jest/globals",
        "@modelcontextprotocol/sdk",
    ]
    .into_iter()
    .filter(|p| !modules.join(p).join("package.json").exists())
    .collect();
    if missing.is_empty() {
        return true;
    }
    eprintln!(
        "SKIPPED: {} not installed in interop/adapters/node_modules; run scripts/install-interop.sh",
        missing.join(", ")
    );
    false
}

/// A project as a user would have it: the specs and cassettes, the pinned runners, and
/// `node_modules/mcp-cassette` a copy of npm/mcp-cassette (a copy, not a link: the adapter's own
/// `import "vitest"` must resolve from inside the project, as it does from an installed package).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let modules = root.join("node_modules");
    std::fs::create_dir(&modules).unwrap();
    for entry in std::fs::read_dir(adapters_dir().join("node_modules")).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), modules.join(entry.file_name())).unwrap();
    }
    let package = repo().join("npm/mcp-cassette");
    copy_tree(&package.join("lib"), &modules.join("mcp-cassette/lib"));
    std::fs::copy(
        package.join("package.json"),
        modules.join("mcp-cassette/package.json"),
    )
    .unwrap();
    for name in ["cassettes", "vitest", "jest"] {
        copy_tree(&adapters_dir().join(name), &root.join(name));
    }
    for name in ["suites.mjs", "vitest.config.mjs", "jest.config.mjs"] {
        std::fs::copy(adapters_dir().join(name), root.join(name)).unwrap();
    }
    dir
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Runs a test runner in `project` and returns its JSON report and everything it printed.
fn run_runner(project: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (Value, String) {
    let report = project.join("report.json");
    let out = Command::new("node")
        .args(args)
        .arg(format!("--outputFile={}", report.display()))
        .current_dir(project)
        .env("MCP_CASSETTE_BINARY", bin())
        .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Some specs fail on purpose: the exit status says only that.
    assert_eq!(out.status.code(), Some(1), "{printed}");
    let report = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}: {printed}"));
    (serde_json::from_str(&report).unwrap(), printed)
}

/// One test's verdict in a JSON report (vitest and jest write the same shape).
struct Verdict {
    status: String,
    message: String,
    details: Value,
}

fn verdicts(report: &Value) -> std::collections::BTreeMap<String, Verdict> {
    let mut out = std::collections::BTreeMap::new();
    for file in report["testResults"].as_array().unwrap() {
        for test in file["assertionResults"].as_array().unwrap() {
            let message = test["failureMessages"]
                .as_array()
                .map(|m| {
                    m.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            out.insert(
                test["fullName"].as_str().unwrap().to_owned(),
                Verdict {
                    status: test["status"].as_str().unwrap().to_owned(),
                    message,
                    details: test["failureDetails"].clone(),
                },
            );
        }
    }
    out
}

/// The file-level failure message of `name` (a suite that failed to collect).
fn file_message(report: &Value, name: &str) -> String {
    report["testResults"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"].as_str().unwrap().ends_with(name))
        .map(|f| f["message"].as_str().unwrap_or("").to_owned())
        .unwrap_or_else(|| panic!("no result for {name}"))
}

/// The verdicts both frameworks must give, by test name: `(name, passed, message fragments)`.
const EXPECTED: &[(&str, bool, &[&str])] = &[
    (
        "an http cassette answers a recorded call over fetch",
        true,
        &[],
    ),
    ("an http cassette has no url at describe scope", true, &[]),
    ("an http cassette has no command", true, &[]),
    (
        "the SDK client over http gets the recorded session",
        true,
        &[],
    ),
    (
        "misses fails on drifted arguments",
        false,
        &[
            "CassetteMismatchError: mcp-cassette: no recorded answer for \"tools/call\", method and tool match a recording, but arguments differ at: /m (recorded \"recorded\", got \"drifted\"). Re-record the cassette or adjust the interaction.",
        ],
    ),
    ("misses passes between two misses", true, &[]),
    (
        "misses fails on an unknown tool",
        false,
        &[
            "CassetteMissError: mcp-cassette: no recorded answer for \"tools/call\", no recorded tools/call for tool \"nope\". Recorded tools: echo, stamp. Re-record the cassette or adjust the interaction.",
        ],
    ),
    (
        "misses counts further misses",
        false,
        &["CassetteMissError", "(and 1 further miss(es) in this test)"],
    ),
    ("misses exposes the changes of a mismatch", true, &[]),
    (
        "onMiss warn leaves the JSON-RPC error as the only signal",
        true,
        &[],
    ),
    ("onMiss warn still answers recorded calls", true, &[]),
    (
        "volatile declared matches a call whose declared fields changed",
        true,
        &[],
    ),
    (
        "volatile not declared misses on the undeclared field",
        false,
        &[
            "CassetteMismatchError",
            "arguments differ at: /runId (recorded \"run-1\"",
        ],
    ),
    ("volatile malformed is refused at collection", true, &[]),
    ("a stdio cassette hands back the command", true, &[]),
    ("a stdio cassette is spawned by the SDK client", true, &[]),
    ("a stdio cassette has no url and no server", true, &[]),
    (
        "a stdio cassette with a redaction config passes the config on after the declarations",
        true,
        &[],
    ),
    ("bad input names a file that is not a cassette", true, &[]),
    ("bad input refuses useCassette inside a test", true, &[]),
    ("bad input exports one set of error classes", true, &[]),
    (
        "a binary that exits early fails with its stderr",
        false,
        &[
            "the replay server for cassettes/echo.http.jsonl exited before it was ready (exit code 1); its stderr:",
            "--listen wants <host>:<port> (got \"not-an-address\")",
        ],
    ),
];

fn check_verdicts(report: &Value, printed: &str) {
    let verdicts = verdicts(report);
    for (name, passed, fragments) in EXPECTED {
        let verdict = verdicts
            .get(*name)
            .unwrap_or_else(|| panic!("no verdict for {name:?}; got {:?}", verdicts.keys()));
        let want = if *passed { "passed" } else { "failed" };
        assert_eq!(verdict.status, want, "{name}: {}", verdict.message);
        for fragment in *fragments {
            assert!(
                verdict.message.contains(fragment),
                "{name}: {fragment:?} not in {}",
                verdict.message
            );
        }
    }
    assert_eq!(verdicts.len(), EXPECTED.len(), "{:?}", verdicts.keys());
    let missing = file_message(report, "missing.test.mjs");
    assert!(
        missing.contains("cannot open the cassette cassettes/no-such.http.jsonl"),
        "{missing}"
    );
    let lower = printed.to_lowercase();
    assert!(!lower.contains("unhandled"), "{printed}");
}

#[test]
fn vitest_runs_the_adapter_specs() {
    if !runners_installed() {
        return;
    }
    let project = project();
    let (report, printed) = run_runner(
        project.path(),
        &["node_modules/vitest/vitest.mjs", "run", "--reporter=json"],
        &[],
    );
    check_verdicts(&report, &printed);
}

#[test]
fn jest_runs_the_adapter_specs_in_native_esm_mode() {
    if !runners_installed() {
        return;
    }
    let project = project();
    let (report, printed) = run_runner(
        project.path(),
        &["node_modules/jest/bin/jest.js", "--json"],
        &[("NODE_OPTIONS", "--experimental-vm-modules")],
    );
    check_verdicts(&report, &printed);
    // jest's report carries the thrown error's own fields: `.changes` of the mismatch.
    let verdicts = verdicts(&report);
    let details = &verdicts["misses fails on drifted arguments"].details[0];
    assert_eq!(details["name"], "CassetteMismatchError");
    assert_eq!(
        details["changes"],
        json!([{"path":"/m","recorded":"recorded","live":"drifted"}])
    );
    assert_eq!(details["reason"]["kind"], "arguments-differ");
    assert_eq!(details["misses"].as_array().unwrap().len(), 1);
}

#[test]
fn the_unused_endpoint_lists_what_no_request_used() {
    const UNUSED: &str = "/.mcp-cassette/unused";
    let replay = Replay::start(&["--control"], Some(TOKEN));
    let auth = bearer();
    let auth = [("Authorization", auth.as_str())];
    let (status, body) = replay.send("GET", UNUSED, &auth, "");
    assert_eq!(status, 200, "{body}");
    let unused: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        unused,
        json!({"unused": [{"line": 2, "method": "tools/call", "tool": "echo"}], "count": 1})
    );
    replay.call(1, json!({"m":"recorded"}));
    let (status, body) = replay.send("POST", UNUSED, &auth, "");
    assert_eq!((status, body.as_str()), (200, r#"{"unused":[],"count":0}"#));
    // Same token and Origin rules as the drain.
    assert_eq!(replay.send("GET", UNUSED, &[], "").0, 404);
    let (status, _) = replay.send(
        "GET",
        UNUSED,
        &[auth[0], ("Origin", "https://evil.example")],
        "",
    );
    assert_eq!(status, 403);
    assert_eq!(replay.send("DELETE", UNUSED, &auth, "").0, 405);
}

#[test]
fn vitest_fails_a_block_that_left_a_recording_unused() {
    if !runners_installed() {
        return;
    }
    let project = project();
    copy_tree(
        &adapters_dir().join("vitest-unused"),
        &project.path().join("vitest-unused"),
    );
    std::fs::copy(
        adapters_dir().join("vitest-unused.config.mjs"),
        project.path().join("vitest-unused.config.mjs"),
    )
    .unwrap();
    // The JSON report has no room for a hook's error: the default reporter's text is checked.
    let out = Command::new("node")
        .args([
            "node_modules/vitest/vitest.mjs",
            "run",
            "--config",
            "vitest-unused.config.mjs",
        ])
        .current_dir(project.path())
        .env("MCP_CASSETTE_BINARY", bin())
        .env("NO_COLOR", "1")
        .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{printed}");
    assert!(printed.contains("Failed Suites 1"), "{printed}");
    assert!(
        printed.contains("FAIL  vitest-unused/unused.test.mjs > a recording left unused"),
        "{printed}"
    );
    assert!(
        printed.contains("CassetteUnusedError: mcp-cassette: 2 recorded answer(s) in cassettes/echo.http.jsonl were never used"),
        "{printed}"
    );
    assert!(
        printed.contains("tools/call \"stamp\" (line 4)"),
        "{printed}"
    );
    assert!(printed.contains("Tests  2 passed (2)"), "{printed}");
}
