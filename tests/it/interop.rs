//! Interop with real third-party software: MCP servers from npm and PyPI, driven by the official
//! TypeScript and Python SDK clients (all pinned in `interop/`, installed by
//! `scripts/install-interop.sh`).
//!
//! Each test runs a scripted client session twice — once straight against the server, once
//! through the binary under test — and compares what the client saw.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::record::{bin, read_cassette};

pub fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop")
}

/// Fails the test when the interop packages are missing. Tests that need them are `#[ignore]`d,
/// so a plain `cargo test` reports them as ignored rather than passed; the project's test
/// command (`scripts/test-all.sh`) installs the packages and runs them with `--include-ignored`.
pub fn require_installed() {
    let dir = interop_dir();
    assert!(
        dir.join("node_modules/.bin/mcp-server-everything").exists()
            && dir.join(".venv/bin/python").exists(),
        "interop packages are missing: run scripts/install-interop.sh"
    );
}

pub fn everything() -> Vec<String> {
    vec![
        interop_dir()
            .join("node_modules/.bin/mcp-server-everything")
            .display()
            .to_string(),
        "stdio".to_owned(),
    ]
}

pub fn python() -> String {
    interop_dir().join(".venv/bin/python").display().to_string()
}

pub fn python_tiny() -> Vec<String> {
    vec![
        python(),
        interop_dir()
            .join("python/tiny_server.py")
            .display()
            .to_string(),
    ]
}

/// Runs the TypeScript SDK client scenario against `server` and returns its JSON report.
pub fn ts_client(scenario: &str, server: &[String]) -> Value {
    let mut cmd = Command::new("node");
    cmd.current_dir(interop_dir())
        .arg("ts-client.mjs")
        .arg(scenario)
        .arg("--")
        .args(server);
    run_client(cmd)
}

/// Runs the Python SDK client scenario (`mode`: legacy or auto) against `server`.
pub fn py_client(scenario: &str, mode: &str, server: &[String]) -> Value {
    let mut cmd = Command::new(python());
    cmd.current_dir(interop_dir())
        .arg("py-client.py")
        .arg(scenario)
        .arg(mode)
        .arg("--")
        .args(server);
    run_client(cmd)
}

fn run_client(mut cmd: Command) -> Value {
    let out = cmd.stdin(Stdio::null()).output().expect("client runs");
    assert!(
        out.status.success(),
        "client failed: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// `mcp-cassette record -o <out> -- <server>` as a command line.
pub fn through_record(out: &Path, server: &[String]) -> Vec<String> {
    let mut argv = vec![
        bin().to_owned(),
        "record".to_owned(),
        "-o".to_owned(),
        out.display().to_string(),
        "--".to_owned(),
    ];
    argv.extend(server.iter().cloned());
    argv
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn ts_sdk_through_record_sees_what_it_sees_directly() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("everything.cassette.jsonl");
    let direct = ts_client("everything", &everything());
    let proxied = ts_client("everything", &through_record(&out, &everything()));
    assert_eq!(direct["steps"], proxied["steps"]);
    assert_eq!(direct["server"], proxied["server"]);
    assert!(
        !proxied["progress"].as_array().unwrap().is_empty(),
        "progress notifications reached the client"
    );

    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era().map(|e| e.as_str()), Some("legacy"));
    let methods: Vec<&str> = entries
        .iter()
        .filter_map(|e| e.frame().and_then(|f| f.method()))
        .collect();
    for m in [
        "initialize",
        "tools/list",
        "tools/call",
        "prompts/get",
        "ping",
        "notifications/progress",
    ] {
        assert!(methods.contains(&m), "{m} recorded: {methods:?}");
    }
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn python_sdk_through_record_sees_what_it_sees_directly() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("everything-py.cassette.jsonl");
    let direct = py_client("everything", "auto", &everything());
    let proxied = py_client("everything", "auto", &through_record(&out, &everything()));
    assert_eq!(direct["steps"], proxied["steps"]);
    let (header, entries) = read_cassette(&out);
    // The SDK probes server/discover first; the server refuses it, the handshake follows.
    assert_eq!(
        entries[0].frame().and_then(|f| f.method()),
        Some("server/discover")
    );
    assert_eq!(header.era().map(|e| e.as_str()), Some("legacy"));
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_python_sdk_session_in_the_modern_era_is_recorded_as_modern() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("py.cassette.jsonl");
    let direct = py_client("tiny", "auto", &python_tiny());
    let proxied = py_client("tiny", "auto", &through_record(&out, &python_tiny()));
    assert_eq!(direct["steps"], proxied["steps"]);
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era().map(|e| e.as_str()), Some("modern"));
    assert!(
        !entries
            .iter()
            .any(|e| e.frame().and_then(|f| f.method()) == Some("initialize")),
        "a modern session has no handshake"
    );
}

/// `mcp-cassette replay <cassette>` as a command line.
pub fn through_replay(cassette: &Path) -> Vec<String> {
    vec![
        bin().to_owned(),
        "replay".to_owned(),
        cassette.display().to_string(),
    ]
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn ts_sdk_gets_the_same_session_from_the_replay() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("everything.cassette.jsonl");
    let live = ts_client("everything", &through_record(&out, &everything()));
    let replayed = ts_client("everything", &through_replay(&out));
    assert_eq!(live["server"], replayed["server"]);
    assert_eq!(live["steps"], replayed["steps"]);
    // The SDK handles notifications a tick after responses, so live it may lose a progress
    // notification that arrives together with the answer; the replay delivers every one the
    // cassette holds, and what the live client saw is a prefix of that.
    let (_, entries) = read_cassette(&out);
    let recorded: Vec<Value> = entries
        .iter()
        .filter_map(|e| e.frame())
        .filter(|f| f.method() == Some("notifications/progress"))
        .map(|f| f.value()["params"]["progress"].clone())
        .collect();
    assert_eq!(
        replayed["progress"].as_array().unwrap(),
        &recorded,
        "progress replayed in place"
    );
    let live_progress = live["progress"].as_array().unwrap();
    assert!(!live_progress.is_empty() && recorded.starts_with(live_progress));
    // One extra request first: the SDK's progress token (its request id) is not the recorded
    // one, and progress still reaches the callback, re-addressed to the live token.
    let shifted = ts_client("everything-shifted", &through_replay(&out));
    assert_eq!(live["steps"], shifted["steps"]);
    assert_eq!(
        shifted["progress"].as_array().unwrap(),
        &recorded,
        "progress re-keyed to the live token"
    );
    assert_eq!(
        live["notifications"], replayed["notifications"],
        "list_changed replayed"
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn python_sdk_gets_the_same_session_from_the_replay() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    for (name, server) in [("everything", everything()), ("tiny", python_tiny())] {
        let out = dir.path().join(format!("{name}.cassette.jsonl"));
        let live = py_client(name, "auto", &through_record(&out, &server));
        let replayed = py_client(name, "auto", &through_replay(&out));
        assert_eq!(live, replayed, "{name}");
    }
}

/// `check` against real servers: each publishes clean text, so no shape finding may fire.
#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn real_servers_pass_check_without_shape_findings() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = interop_dir().join("node_modules/.bin");
    let servers = [
        format!("{} stdio", bin_dir.join("mcp-server-everything").display()),
        format!(
            "{} {}",
            bin_dir.join("mcp-server-filesystem").display(),
            dir.path().display()
        ),
        bin_dir.join("mcp-server-memory").display().to_string(),
        python_tiny().join(" "),
    ];
    for server in servers {
        let out = Command::new(bin())
            .args(["check", "--format", "json", "--stdio", &server])
            .env("MEMORY_FILE_PATH", dir.path().join("memory.json"))
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{server}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(out.status.code(), Some(0), "{server}: {report:#}");
        let shape: Vec<&Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                let code = f["code"].as_str().unwrap_or_default();
                mcp_cassette::lint::rule(code)
                    .is_some_and(|r| matches!(r.evidence, mcp_cassette::lint::Evidence::Shape))
            })
            .collect();
        assert!(shape.is_empty(), "{server}: shape findings {shape:#?}");
        assert!(report["toolCount"].as_u64().unwrap() > 0, "{server}");
    }
}
