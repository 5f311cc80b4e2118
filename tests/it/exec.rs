//! `exec` through the real binary (docs/exec.md): an HTTP cassette served to curl, a stdio
//! cassette spawned by a shell pipe and by the official Python SDK client through
//! `sh -c "$MCP_CASSETTE_COMMAND"`, misses and unused recordings failing a passing command,
//! signals forwarded, and every bad input with its exit code and no process left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::interop::{interop_dir, python, require_installed};
use crate::record::bin;

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference")
        .join(path)
}

fn tape() -> PathBuf {
    fixture("reference-0.4/tape.http.jsonl")
}

fn poisoned() -> PathBuf {
    fixture("reference-0.8/poisoned-output.cassette.jsonl")
}

fn exec(cassette: &Path, flags: &[&str], command: &[&str]) -> Output {
    Command::new(bin())
        .arg("exec")
        .arg("--cassette")
        .arg(cassette)
        .args(flags)
        .arg("--")
        .args(command)
        .stdin(Stdio::null())
        .output()
        .expect("exec runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A shell running curl against `$MCP_CASSETTE_URL` with one `tools/call "echo"`.
fn curl_echo(m: &str) -> String {
    format!(
        r#"curl -sS -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"m":"{m}"}}}}}}' "$MCP_CASSETTE_URL""#
    )
}

#[test]
fn an_http_cassette_is_served_to_curl_at_the_url() {
    let out = exec(
        &tape(),
        &["--fail-on-unused"],
        &["sh", "-c", &curl_echo("recorded")],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout.contains(r#""text":"recorded""#), "{stdout}");
    assert!(!stderr(&out).contains("miss"), "{}", stderr(&out));
}

#[test]
fn a_miss_fails_a_command_that_passed() {
    let out = exec(&tape(), &[], &["sh", "-c", &curl_echo("drifted")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("mcp-cassette exec: 1 miss(es):"), "{err}");
    assert!(
        err.contains(
            r#"tools/call "echo": method and tool match a recording, but arguments differ at: /m"#
        ),
        "{err}"
    );
    assert!(
        err.contains(r#"unused: tools/call "echo" (line 2)"#),
        "{err}"
    );
    // Under warn a borrowed answer is listed and does not fail the run.
    let out = exec(
        &tape(),
        &["--on-miss", "warn"],
        &["sh", "-c", &curl_echo("drifted")],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(r#"tools/call "echo" (borrowed another recording): "#),
        "{err}"
    );
    // The command's own failure wins.
    let out = exec(
        &tape(),
        &[],
        &[
            "sh",
            "-c",
            &format!("{} >/dev/null; exit 9", curl_echo("drifted")),
        ],
    );
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    // Unused only fails under --fail-on-unused.
    assert_eq!(exec(&tape(), &[], &["true"]).status.code(), Some(0));
    let out = exec(&tape(), &["--fail-on-unused"], &["true"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

/// The JSON-RPC lines a shell pipes into the stdio replay.
const STDIO_SESSION: &str = r#"printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"weather"}}}'"#;

#[test]
fn a_stdio_cassette_is_spawned_from_the_command_line_and_reports_back() {
    let script = format!(r#"{STDIO_SESSION} | sh -c "$MCP_CASSETTE_COMMAND""#);
    let out = exec(&poisoned(), &[], &["sh", "-c", &script]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Hanoi: 31C"),
        "{err}"
    );
    assert!(
        err.contains("3 recorded answer(s) were never used"),
        "{err}"
    );
    assert!(
        err.contains(r#"unused: tools/call "fetch_issue" (line 7)"#),
        "{err}"
    );
    let out = exec(&poisoned(), &["--fail-on-unused"], &["sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // Two replays of the same session add up: each used the same two answers.
    let twice = format!("{script}; {script}");
    let out = exec(&poisoned(), &[], &["sh", "-c", &twice]);
    assert!(stderr(&out).contains("3 recorded answer(s) were never used"));
    // A miss in a spawned replay reaches exec.
    let missing = r#"printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}' | sh -c "$MCP_CASSETTE_COMMAND"; true"#;
    let out = exec(&poisoned(), &[], &["sh", "-c", missing]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains(r#"tools/call "nope""#), "{err}");
}

#[test]
fn the_stdio_command_line_is_shell_quoted_and_absolute() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("it's a \"cassette\" $x.jsonl");
    std::fs::copy(poisoned(), &odd).unwrap();
    let out = exec(
        &odd,
        &["--volatile", "tools/call:/arguments/q"],
        &["sh", "-c", "printf '%s' \"$MCP_CASSETTE_COMMAND\""],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = String::from_utf8(out.stdout).unwrap();
    // sh reads the words back exactly.
    let words = Command::new("sh")
        .args(["-c", &format!("printf '%s\\0' {line}")])
        .output()
        .unwrap();
    let words: Vec<String> = String::from_utf8(words.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_owned)
        .collect();
    assert_eq!(words[0], bin(), "{line}");
    assert_eq!(
        words[1..5],
        ["replay", odd.to_str().unwrap(), "--on-miss", "error"]
    );
    assert_eq!(words[5..7], ["--volatile", "tools/call:/arguments/q"]);
    assert_eq!(words[7], "--exec-report");
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn the_python_sdk_client_spawns_the_stdio_replay() {
    require_installed();
    let cassette = fixture("corpus-0.4/tiny.cassette.jsonl");
    // The scenario lists tools, echoes "hi" (recorded) and adds 2 and 3 (recorded: 20 and 22).
    let client = format!(
        r#"cd '{}' && '{}' py-client.py tiny legacy -- sh -c "$MCP_CASSETTE_COMMAND""#,
        interop_dir().display(),
        python()
    );
    let out = exec(&cassette, &[], &["sh", "-c", &client]);
    let err = stderr(&out);
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(
        report["steps"][1]["result"]["content"][0]["text"], "hi",
        "{report}"
    );
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains(r#"tools/call "add": "#), "{err}");
}

/// Whether process `pid` still exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}

fn wait_for_file(path: &Path) -> String {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text.trim().to_owned();
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no {}",
            path.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn signals_reach_the_command_group_and_exit_128_plus() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("sleep.pid");
    let script = format!("sleep 30 & echo $! > '{}'; wait", pidfile.display());
    let child = Command::new(bin())
        .args(["exec", "--cassette"])
        .arg(tape())
        .args(["--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeper: u32 = wait_for_file(&pidfile).parse().unwrap();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("killed by signal 15"), "{err}");
    thread::sleep(Duration::from_millis(100));
    assert!(!alive(sleeper), "the command's own child was left running");
}

#[test]
fn bad_input_is_named_with_its_exit_code() {
    // A cassette that does not exist.
    let out = exec(Path::new("no-such.jsonl"), &[], &["true"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("no-such.jsonl"), "{}", stderr(&out));
    // A command that does not exist, and one that cannot run.
    let out = exec(&tape(), &[], &["no-such-command-here"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(
        stderr(&out).contains("command not found: no-such-command-here"),
        "{}",
        stderr(&out)
    );
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("not-executable.sh");
    std::fs::write(&plain, "#!/bin/sh\nexit 0\n").unwrap();
    let out = exec(&poisoned(), &[], &[plain.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(126));
    assert!(
        stderr(&out).contains("not-executable.sh"),
        "{}",
        stderr(&out)
    );
    // A port that cannot be bound.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = exec(&tape(), &["--listen", &addr], &["true"]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(stderr(&out).contains(&addr), "{}", stderr(&out));
    // A usage error, and an --on-miss exec cannot honour.
    let out = exec(&tape(), &["--on-miss", "passthrough"], &["true"]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let out = Command::new(bin())
        .args(["exec", "--cassette"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
}

#[test]
fn a_stdio_replay_left_running_is_stopped_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("replay.pid");
    // The replay's stdin stays open (a sleep holds the pipe) after the command exits.
    let script = format!(
        r#"(sleep 30 | sh -c 'echo $$ > "{}"; exec '"$MCP_CASSETTE_COMMAND") & sleep 0.3"#,
        pidfile.display()
    );
    let out = exec(&poisoned(), &[], &["sh", "-c", &script]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    let replay: u32 = wait_for_file(&pidfile).parse().unwrap();
    assert!(
        err.contains(&format!(
            "the stdio replay (pid {replay}) was still running"
        )),
        "{err}"
    );
    thread::sleep(Duration::from_millis(100));
    assert!(!alive(replay), "the replay was left running");
}
