//! `verify` through the real binary: cassettes re-fired at our fixture servers (clean, drifted,
//! dying, silent, minting task ids), bad input, and, with the interop packages, real servers.
//!
//! The cassettes under `tests/fixtures/verify/` were recorded by our own `record` from the
//! fixture servers (`tiny`, `tasking`) and then edited as their names say: `tasks` carries a task
//! id the live fixture never mints, `block` a recorded answer to a call the fixture never
//! answers, `tiny.http` the tiny session with its answers stored as an HTTP recording stores
//! them (`chunks`), `tiny-list` the tiny session cut to the pairs `TINY_V2` drifts only in
//! `tools/list`, `handshake-only` nothing to verify. `py-http` was written by hand from the
//! answers of `interop/python/http_server.py` (modern era, over Streamable HTTP).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::fixtures::fixture_server;
use crate::http_client::{everything_http, python_http};
use crate::interop::{everything, python_tiny, require_installed, through_record};
use crate::record::bin;

fn cassette(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// `mcp-cassette verify <args> -- <server...>`, with `env` set and no stdin.
fn verify_cmd(args: &[&str], server: &[String], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("verify").args(args);
    if !server.is_empty() {
        cmd.arg("--").args(server);
    }
    for var in [
        "TINY_V2",
        "TINY_PROGRESS",
        "TASKING_STALL",
        "MCP_CASSETTE_TIMEOUT_MS",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.stdin(Stdio::null()).output().expect("verify runs")
}

/// `verify` against `fixture_server <mode>`.
fn verify(args: &[&str], mode: &str, env: &[(&str, &str)]) -> Output {
    let server = vec![fixture_server().display().to_string(), mode.to_owned()];
    verify_cmd(args, &server, env)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("verify exits with a status")
}

fn summary(out: &Output) -> String {
    stdout(out).lines().last().unwrap_or_default().to_owned()
}

#[test]
fn a_recording_of_the_fixture_matches_it_line_by_line() {
    let out = verify(&[&cassette("verify/tiny.cassette.jsonl")], "tiny", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out),
        "✓ MATCH    tools/list\n✓ MATCH    tools/call echo\n✓ MATCH    tools/call add\n✓ MATCH    tools/call slugify\n✓ MATCH    ping\n✓ MATCH    resources/list\nverify: 6 match, 0 changed, 0 error-shape-changed, 0 missing\n"
    );
}

#[test]
fn a_cassette_the_reference_recorded_matches_the_server_it_was_recorded_from() {
    // A format-v1 cassette the reference tool wrote from its tiny server, which our `tiny` fixture
    // reproduces answer for answer.
    let out = verify(
        &[&cassette(
            "reference/reference-0.4/tiny-server.golden.cassette.jsonl",
        )],
        "tiny",
        &[],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        summary(&out),
        "verify: 1 match, 0 changed, 0 error-shape-changed, 0 missing"
    );
}

#[test]
fn every_reference_recorded_cassette_matches_its_own_replay() {
    // Replay serves the recorded answers, so a cassette verified against its own replay must
    // match pair for pair: pairing, following, normalising and diffing on real recorded shapes
    // (progress tokens redacted to placeholders, a task sequence, server-initiated frames).
    for (name, pairs) in [
        ("reference/corpus-0.4/everything.cassette.jsonl", 42),
        ("reference/corpus-0.4/filesystem.cassette.jsonl", 12),
        ("reference/corpus-0.4/memory.cassette.jsonl", 11),
        ("reference/corpus-0.4/seqthink.cassette.jsonl", 4),
        ("reference/corpus-0.4/tiny.cassette.jsonl", 12),
        ("reference/reference-0.8/poisoned-output.cassette.jsonl", 4),
    ] {
        let path = cassette(name);
        let out = verify_cmd(
            &[&path],
            &[bin().to_owned(), "replay".to_owned(), path.clone()],
            &[],
        );
        assert_eq!(code(&out), 0, "{name}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(
            summary(&out),
            format!("verify: {pairs} match, 0 changed, 0 error-shape-changed, 0 missing"),
            "{name}"
        );
    }
}

#[test]
fn http_cassettes_are_compared_not_waved_through() {
    let http = cassette("verify/tiny.http.cassette.jsonl");
    let out = verify(&[&http], "tiny", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        summary(&out),
        "verify: 6 match, 0 changed, 0 error-shape-changed, 0 missing"
    );
    let drifted = verify(&[&http], "tiny", &[("TINY_V2", "1")]);
    assert_eq!(code(&drifted), 1);
    assert_eq!(
        summary(&drifted),
        "verify: 4 match, 1 changed, 1 error-shape-changed, 0 missing"
    );
}

#[test]
fn drift_is_reported_at_its_paths() {
    let out = verify(
        &[&cassette("verify/tiny.cassette.jsonl")],
        "tiny",
        &[("TINY_V2", "1")],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "✗ CHANGED  tools/list
    /tools/1/inputSchema/properties/mode: (absent) → {\"type\":\"string\"}
    /tools/1/inputSchema/properties/precision: (absent) → {\"type\":\"integer\"}
    /tools/1/inputSchema/required/2: (absent) → \"precision\"
    /tools/2: {\"name\":\"slugify\",\"description\":\"Turn a title into a URL sl… → (absent)
✓ MATCH    tools/call echo
✓ MATCH    tools/call add
✗ ERROR-SHAPE-CHANGED tools/call slugify: recorded a result, live returned error -32602: unknown tool slugify
✓ MATCH    ping
✓ MATCH    resources/list
verify: 4 match, 1 changed, 1 error-shape-changed, 0 missing
"
    );
}

#[test]
fn each_waiver() {
    let list = cassette("verify/tiny-list.cassette.jsonl");
    let v2 = [("TINY_V2", "1")];
    let run = |extra: &[&str]| {
        let mut args = vec![list.as_str()];
        args.extend_from_slice(extra);
        verify(&args, "tiny", &v2)
    };

    let plain = run(&[]);
    assert_eq!(code(&plain), 1);
    assert_eq!(
        summary(&plain),
        "verify: 2 match, 1 changed, 0 error-shape-changed, 0 missing"
    );

    let ignored = run(&["--ignore", "/tools"]);
    assert_eq!(code(&ignored), 0, "{}", stdout(&ignored));
    assert_eq!(
        summary(&ignored),
        "verify: 3 match, 0 changed, 0 error-shape-changed, 0 missing"
    );
    // An array element is blanked, not spliced: /tools/2 is gone live, so ignoring only /tools/1
    // still leaves the removed slugify.
    let partly = run(&["--ignore", "/tools/1"]);
    assert_eq!(code(&partly), 1);
    assert!(
        stdout(&partly).contains("    /tools/2: {"),
        "{}",
        stdout(&partly)
    );
    assert!(
        !stdout(&partly).contains("/tools/1/"),
        "{}",
        stdout(&partly)
    );

    let allowed = run(&["--allow-changed-paths", "/tools"]);
    assert_eq!(code(&allowed), 0, "{}", stdout(&allowed));
    assert!(stdout(&allowed).starts_with("○ CHANGED (allowed) tools/list\n"));
    assert_eq!(
        summary(&allowed),
        "verify: 2 match, 1 changed (1 allowed), 0 error-shape-changed, 0 missing"
    );
    // Every changed path must be covered, and prefixes are whole segments.
    assert_eq!(code(&run(&["--allow-changed-paths", "/tools/1"])), 1);
    assert_eq!(code(&run(&["--allow-changed-paths", "/tool"])), 1);
    let both = run(&[
        "--allow-changed-paths",
        "/tools/1",
        "--allow-changed-paths",
        "/tools/2",
    ]);
    assert_eq!(code(&both), 0, "{}", stdout(&both));

    let all = run(&["--allow-all-changes"]);
    assert_eq!(code(&all), 0);
    assert_eq!(
        summary(&all),
        "verify: 2 match, 1 changed (1 allowed), 0 error-shape-changed, 0 missing"
    );
}

#[test]
fn json_output_for_ci() {
    let out = verify(
        &[&cassette("verify/tiny.cassette.jsonl"), "--json"],
        "tiny",
        &[("TINY_V2", "1")],
    );
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["summary"],
        serde_json::json!({"match": 4, "changed": 1, "allowed": 0, "errorShapeChanged": 1, "missing": 0})
    );
    let pairs = report["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 6);
    assert_eq!(pairs[0]["class"], "CHANGED");
    assert_eq!(pairs[0]["line"], 5);
    assert_eq!(pairs[0]["allowed"], false);
    assert_eq!(
        pairs[0]["changes"][2],
        serde_json::json!({"path": "/tools/1/inputSchema/required/2", "live": "precision"})
    );
    assert_eq!(pairs[3]["class"], "ERROR-SHAPE-CHANGED");
    assert_eq!(pairs[3]["label"], "tools/call slugify");
    assert_eq!(
        pairs[3]["detail"],
        "recorded a result, live returned error -32602: unknown tool slugify"
    );
}

#[test]
fn a_server_that_dies_mid_run_leaves_the_rest_missing() {
    // `crash` answers tools/list, then exits with status 3 on the first tools/call.
    let out = verify(&[&cassette("verify/tiny.cassette.jsonl")], "crash", &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "✓ MATCH    tools/list");
    assert!(
        lines[1].starts_with("✗ MISSING tools/call echo: the server exited with status 3"),
        "{text}"
    );
    for line in &lines[2..6] {
        assert!(
            line.contains(": not sent: the server exited with status 3"),
            "{text}"
        );
    }
    assert_eq!(
        lines[6],
        "verify: 1 match, 0 changed, 0 error-shape-changed, 5 missing"
    );
}

#[test]
fn a_request_never_answered_is_missing_after_the_timeout_and_the_run_goes_on() {
    let out = verify(
        &[&cassette("verify/block.cassette.jsonl")],
        "tiny",
        &[("MCP_CASSETTE_TIMEOUT_MS", "300")],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "✗ MISSING tools/call block: timeout after 300ms waiting for \"tools/call\"
✓ MATCH    tools/call echo
verify: 1 match, 0 changed, 0 error-shape-changed, 1 missing
"
    );
}

#[test]
fn answers_with_wrong_ids_leave_the_pair_missing_and_the_run_goes_on() {
    // The handshake is answered; after it, the only answer the server ever gives carries an id
    // nobody sent.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.jsonl");
    std::fs::write(
        &script,
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":99,"result":{"tools":[]}}"#,
            "\n",
        ),
    )
    .unwrap();
    let script = script.display().to_string();
    let out = verify(
        &[&cassette("verify/tiny-list.cassette.jsonl")],
        "script",
        &[("SCRIPT_FILE", &script), ("MCP_CASSETTE_TIMEOUT_MS", "300")],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "✗ MISSING tools/list: timeout after 300ms waiting for \"tools/list\"; meanwhile the server sent 1 answer(s) with an id this client never sent
✗ MISSING tools/call echo: timeout after 300ms waiting for \"tools/call\"
✗ MISSING tools/call add: timeout after 300ms waiting for \"tools/call\"
verify: 0 match, 0 changed, 0 error-shape-changed, 3 missing
"
    );
}

#[test]
fn task_ids_the_live_server_mints_are_followed() {
    // Recorded against a server that minted `task-recorded-77`; the fixture mints `task-0001`.
    let tasks = cassette("verify/tasks.cassette.jsonl");
    let out = verify(&[&tasks], "tasking", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let followed = "    ↳ followed /taskId: \"task-recorded-77\" → \"task-0001\" (minted at /taskId by tools/call build, line 4)";
    assert_eq!(text.matches(followed).count(), 5, "{text}");
    assert_eq!(
        summary(&out),
        "verify: 6 match, 0 changed, 0 error-shape-changed, 0 missing"
    );

    let json = verify(&[&tasks, "--json"], "tasking", &[]);
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["pairs"][1]["followed"][0],
        serde_json::json!({
            "pointer": "/taskId",
            "recorded": "task-recorded-77",
            "live": "task-0001",
            "sourceLine": 4,
            "sourcePointer": "/taskId"
        })
    );
}

#[test]
fn placeholders_in_re_fired_params_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redacted.cassette.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"header","cassetteVersion":2,"recorder":"x","startedAt":"2026-01-01T00:00:00Z","transport":"stdio","redaction":{"applied":true}}"#,
            "\n",
            r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[REDACTED:keyctx:0123abcd]"}}}}"#,
            "\n",
            r#"{"type":"frame","t":2,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"echo:[REDACTED:keyctx:0123abcd] #1"}]}}}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = verify(&[&path.display().to_string()], "tiny", &[]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "⚠ cassette was recorded with redaction: the params of 1 re-fired request(s) hold\n"
        ),
        "{text}"
    );
    assert!(text.ends_with(
        "✓ MATCH    tools/call echo\nverify: 1 match, 0 changed, 0 error-shape-changed, 0 missing\n"
    ));
    // The same session without placeholders gets no warning.
    let clean = verify(&[&cassette("verify/tiny.cassette.jsonl")], "tiny", &[]);
    assert!(!stdout(&clean).contains('⚠'));
}

/// A setup failure: exit 2, `verify failed: …` on stderr, nothing on stdout.
fn refused(out: &Output, message: &str) {
    assert_eq!(code(out), 2, "{}{}", stdout(out), stderr(out));
    assert!(out.stdout.is_empty(), "{}", stdout(out));
    let err = stderr(out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("verify failed: ") && l.contains(message)),
        "wanted {message:?} in: {err}"
    );
}

#[test]
fn bad_input_is_refused_before_anything_is_fired() {
    let tiny = cassette("verify/tiny.cassette.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let not_one = dir.path().join("notes.txt");
    std::fs::write(&not_one, "hello\n").unwrap();
    let not_one = not_one.display().to_string();
    let none = dir.path().join("absent.jsonl").display().to_string();

    refused(
        &verify(&[&not_one], "tiny", &[]),
        "Cassette has no header line",
    );
    refused(&verify(&[&none], "tiny", &[]), "failed to read");
    refused(
        &verify(
            &[&cassette("verify/handshake-only.cassette.jsonl")],
            "tiny",
            &[],
        ),
        "nothing to verify: the cassette holds no recorded request with a recorded answer; verify does not re-fire the 1 initialize it holds",
    );
    refused(
        &verify(&[&tiny, "--ignore", "tools"], "tiny", &[]),
        "invalid JSON Pointer (must start with \"/\"): tools",
    );
    refused(
        &verify(&[&tiny, "--allow-changed-paths", "x"], "tiny", &[]),
        "invalid JSON Pointer (must start with \"/\"): x",
    );
    refused(
        &verify(&[&tiny, "--allow-changed-paths", ""], "tiny", &[]),
        "empty --allow-changed-paths would waive every change; pass --allow-all-changes if that is what you mean",
    );
    refused(
        &verify_cmd(&[&tiny], &[], &[]),
        "missing target: pass --url <http-url> or a server command after --",
    );
    refused(
        &verify(&[&tiny, "--era", "future"], "tiny", &[]),
        "--era must be legacy | modern | auto",
    );
    // Unreachable servers: a command that cannot start, a URL nothing serves, a server that
    // answers with ids nobody sent.
    refused(
        &verify_cmd(&[&tiny], &["/nonexistent/mcp-server".to_owned()], &[]),
        "",
    );
    refused(
        &verify_cmd(&[&tiny, "--url", "http://127.0.0.1:9/mcp"], &[], &[]),
        "",
    );
    refused(
        &verify(&[&tiny], "wrong-id", &[("MCP_CASSETTE_TIMEOUT_MS", "300")]),
        "timeout after 300ms waiting for \"initialize\"",
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn the_reference_recorded_task_sequence_of_server_everything_follows_its_task_id() {
    require_installed();
    // The reference re-fires the recorded task id, so against a server that works every poll
    // comes back "task not found". Statuses read by a poll depend on timing, so a status that
    // moved on is waived; the id is what this test is about.
    let out = verify_cmd(
        &[
            &cassette("reference/corpus-0.4/everything.cassette.jsonl"),
            "--json",
            "--allow-changed-paths",
            "/status",
            "--allow-changed-paths",
            "/statusMessage",
        ],
        &everything(),
        &[],
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    let task_pairs: Vec<&Value> = report["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["method"].as_str().unwrap_or("").starts_with("tasks/"))
        .collect();
    assert_eq!(task_pairs.len(), 10, "{report:#}");
    for pair in task_pairs {
        assert!(
            pair["class"] == "MATCH" || pair["allowed"] == true,
            "{pair:#}"
        );
        let followed = &pair["followed"][0];
        assert_eq!(followed["pointer"], "/taskId", "{pair:#}");
        assert_eq!(followed["recorded"], "d2ea895211b600bc4e22dd8f9c0e766e");
        assert_ne!(followed["live"], followed["recorded"]);
        assert_eq!(followed["sourcePointer"], "/task/taskId");
    }
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_python_sdk_session_recorded_by_us_verifies_clean_in_its_era() {
    require_installed();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("py.cassette.jsonl");
    crate::interop::py_client("tiny", "auto", &through_record(&out, &python_tiny()));
    let path = out.display().to_string();
    let clean = verify_cmd(&[&path], &python_tiny(), &[]);
    assert_eq!(code(&clean), 0, "{}{}", stdout(&clean), stderr(&clean));
    assert_eq!(
        summary(&clean),
        "verify: 3 match, 0 changed, 0 error-shape-changed, 0 missing"
    );
    // Asked to speak the other era, the same server answers in legacy shapes: drift, not a crash.
    let legacy = verify_cmd(&[&path, "--era", "legacy"], &python_tiny(), &[]);
    assert_eq!(code(&legacy), 1);
    assert!(stdout(&legacy).contains("    /resultType: \"complete\" → (absent)"));
}

/// The classes of a `--json` report, pair by pair.
fn classes(report: &Value) -> Vec<(String, String)> {
    report["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let class = if p["allowed"] == true {
                "CHANGED (allowed)".to_owned()
            } else {
                p["class"].as_str().unwrap_or_default().to_owned()
            };
            (p["label"].as_str().unwrap_or_default().to_owned(), class)
        })
        .collect()
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn server_everything_over_http_verifies_its_task_sequence() {
    require_installed();
    let (_server, url) = everything_http();
    // The reference recorded this session over stdio in the legacy era.
    let args = [
        cassette("reference/corpus-0.4/everything.cassette.jsonl"),
        "--json".to_owned(),
        "--era".to_owned(),
        "legacy".to_owned(),
        "--allow-changed-paths".to_owned(),
        "/status".to_owned(),
        "--allow-changed-paths".to_owned(),
        "/statusMessage".to_owned(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut over_http = args.clone();
    over_http.extend(["--url", &url]);
    let out = verify_cmd(&over_http, &[], &[]);
    let http: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    let classes = classes(&http);
    assert_eq!(classes.len(), 42, "{http:#}");
    // Every request was answered, in the shape it was answered over stdio. Content may differ
    // (timestamps in texts, what a tool says about its session); that is what CHANGED is for.
    assert!(
        classes
            .iter()
            .all(|(_, c)| c == "MATCH" || c.starts_with("CHANGED")),
        "{classes:?}"
    );
    for label in [
        "tools/call echo",
        "tools/call get-sum",
        "resources/list",
        "prompts/list",
    ] {
        assert!(
            classes.contains(&(label.to_owned(), "MATCH".to_owned())),
            "{label}: {classes:?}"
        );
    }
    let tasks: Vec<&(String, String)> = classes
        .iter()
        .filter(|(label, _)| label.starts_with("tasks/"))
        .collect();
    assert_eq!(tasks.len(), 10);
    assert!(tasks.iter().all(|(_, c)| c != "CHANGED"), "{tasks:?}");
    let followed = http["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["followed"][0]["pointer"] == "/taskId")
        .count();
    assert_eq!(followed, 10, "{http:#}");
}

/// The Python SDK refuses a modern HTTP `tools/call` whose `Mcp-Param-*` headers do not match
/// its arguments; the cassette holds no `tools/list`, so the call only gets its header because
/// verify lists the tools before re-firing.
#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_modern_http_cassette_verifies_over_http_with_its_header_params() {
    require_installed();
    let (_server, url) = python_http();
    let out = verify_cmd(
        &[&cassette("verify/py-http.cassette.jsonl"), "--url", &url],
        &[],
        &[],
    );
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out),
        "✓ MATCH    tools/call forecast\n✓ MATCH    tools/call echo\nverify: 2 match, 0 changed, 0 error-shape-changed, 0 missing\n"
    );
}
