//! The pytest plugin (docs/pytest.md): the specs in interop/pytest run under the pinned pytest,
//! talking to the replays with the official Python SDK client, and every test's verdict is
//! checked by name from pytest's JUnit XML report. Several specs fail on purpose.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::record::bin;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The interop venv's python, or None (saying so) when the venv is not installed.
fn venv_python() -> Option<PathBuf> {
    let python = repo().join("interop/.venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    eprintln!("SKIPPED: interop/.venv is missing; run scripts/install-interop.sh");
    None
}

/// Fails, with the fix, when the venv predates pytest's pin (scripts/install-interop.sh).
fn require_modules(python: &PathBuf, modules: &str) {
    let out = Command::new(python)
        .args(["-c", &format!("import {modules}")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "interop/.venv lacks {modules}: run scripts/install-interop.sh\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Passed,
    Failed,
    Error,
    Skipped,
}

/// One test case of a JUnit report: its outcome and everything it says (messages, tracebacks).
#[derive(Debug)]
struct Case {
    outcome: Outcome,
    text: String,
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let ch = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => {
                let code = if let Some(hex) = entity.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(decimal) = entity.strip_prefix('#') {
                    decimal.parse().ok()
                } else {
                    None
                };
                code.and_then(char::from_u32)
            }
        };
        match ch {
            Some(ch) => {
                out.push(ch);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn attribute(tag: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    let start = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    let len = tag[start..].find('"').unwrap();
    unescape(&tag[start..start + len])
}

/// The test cases of a pytest JUnit report, keyed `classname.name` (`test_misses.TestMisses.
/// test_fails_on_drifted_arguments`). Enough XML for what pytest writes, nothing more.
fn junit(xml: &str) -> BTreeMap<String, Case> {
    let mut cases = BTreeMap::new();
    let mut rest = xml;
    while let Some(at) = rest.find("<testcase ") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap();
        let tag = &rest[..tag_end];
        let key = format!("{}.{}", attribute(tag, "classname"), attribute(tag, "name"));
        let (body, next) = if tag.ends_with('/') {
            ("", &rest[tag_end + 1..])
        } else {
            let end = rest.find("</testcase>").unwrap();
            (&rest[tag_end + 1..end], &rest[end..])
        };
        let outcome = if body.contains("<failure") {
            Outcome::Failed
        } else if body.contains("<error") {
            Outcome::Error
        } else if body.contains("<skipped") {
            Outcome::Skipped
        } else {
            Outcome::Passed
        };
        let text = unescape(body);
        assert!(
            cases.insert(key.clone(), Case { outcome, text }).is_none(),
            "{key} twice"
        );
        rest = next;
    }
    cases
}

/// Every spec's verdict: `(classname.name, outcome, fragments its report must show)`.
const EXPECTED: &[(&str, Outcome, &[&str])] = &[
    (
        "test_http.test_the_sdk_client_gets_the_recorded_session",
        Outcome::Passed,
        &[],
    ),
    (
        "test_http.test_a_plain_post_gets_a_recorded_answer",
        Outcome::Passed,
        &[],
    ),
    (
        "test_http.test_an_http_cassette_has_no_command",
        Outcome::Passed,
        &[],
    ),
    (
        "test_http.test_the_server_describes_its_process",
        Outcome::Passed,
        &[],
    ),
    (
        "test_stdio.test_hands_back_the_command",
        Outcome::Passed,
        &[],
    ),
    (
        "test_stdio.test_is_spawned_by_the_sdk_client",
        Outcome::Passed,
        &[],
    ),
    (
        "test_stdio.test_has_no_url_and_no_server",
        Outcome::Passed,
        &[],
    ),
    (
        "test_stdio.test_passes_the_redaction_config_after_the_declarations",
        Outcome::Passed,
        &[],
    ),
    (
        "test_misses.TestMisses.test_fails_on_drifted_arguments",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.CassetteMismatchError: mcp-cassette: no recorded answer for \"tools/call\", method and tool match a recording, but arguments differ at: /m (recorded \"recorded\", got \"drifted\"). Re-record the cassette or adjust the interaction.",
        ],
    ),
    (
        "test_misses.TestMisses.test_passes_between_two_misses",
        Outcome::Passed,
        &[],
    ),
    (
        "test_misses.TestMisses.test_fails_on_an_unknown_tool",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.CassetteMissError: mcp-cassette: no recorded answer for \"tools/call\", no recorded tools/call for tool \"nope\". Recorded tools: echo, stamp. Re-record the cassette or adjust the interaction.",
        ],
    ),
    (
        "test_misses.TestMisses.test_counts_further_misses",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.CassetteMissError",
            "(and 1 further miss(es) in this test)",
        ],
    ),
    (
        "test_misses.TestMisses.test_exposes_the_changes_of_a_mismatch",
        Outcome::Passed,
        &[],
    ),
    (
        "test_misses.TestMisses.test_fails_with_the_miss_when_the_sdk_error_is_not_caught",
        Outcome::Failed,
        &[
            // The SDK's own error is shown as the context of the miss.
            "MCPError: mcp-cassette replay: no recorded response for \"tools/call\"",
            "pytest_mcp_cassette.CassetteMismatchError: mcp-cassette: no recorded answer for \"tools/call\", method and tool match a recording, but arguments differ at: /m (recorded \"recorded\", got \"uncaught\")",
        ],
    ),
    (
        "test_volatile.test_a_declared_field_may_change",
        Outcome::Passed,
        &[],
    ),
    (
        "test_volatile.test_an_undeclared_field_misses",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.CassetteMismatchError",
            "arguments differ at: /runId (recorded \"run-1\"",
        ],
    ),
    (
        "test_volatile.test_a_malformed_declaration_fails_naming_it",
        Outcome::Failed,
        &[
            "ValueError: mcp-cassette: neither a JSON Pointer nor a method-scoped one: \"arguments/runId\"",
        ],
    ),
    (
        "test_warn.TestWarn.test_leaves_the_error_as_the_only_signal",
        Outcome::Passed,
        &[],
    ),
    (
        "test_warn.TestWarn.test_still_answers_recorded_calls",
        Outcome::Passed,
        &[],
    ),
    (
        "test_bad.test_a_missing_cassette_fails_naming_the_file",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.CassetteFileError: mcp-cassette: cannot open the cassette cassettes/no-such.http.jsonl (",
        ],
    ),
    (
        "test_bad.test_a_file_that_is_not_a_cassette_fails_naming_it",
        Outcome::Failed,
        &[
            "mcp-cassette: cassettes/broken.jsonl is not a cassette: its first line is not a cassette header",
        ],
    ),
    (
        "test_bad.test_a_binary_that_exits_early_fails_with_its_stderr",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.ReplayServerError: mcp-cassette: the replay server for cassettes/tools.http.jsonl exited before it was ready (exit code 1); its stderr:",
            "--listen wants <host>:<port> (got \"not-an-address\")",
        ],
    ),
    (
        "test_bad.test_the_fixture_without_a_marker_fails_saying_so",
        Outcome::Failed,
        &[
            "pytest_mcp_cassette.CassetteHandleError: mcp-cassette: the mcp_cassette fixture needs a cassette",
        ],
    ),
    (
        "test_bad.test_an_unknown_option_fails_naming_it",
        Outcome::Failed,
        &[
            "TypeError: mcp-cassette: unknown option(s) onMiss (known: on_miss, volatile, redact_config, listen, timing, fail_on_unused)",
        ],
    ),
    (
        "test_bad.test_a_replay_killed_during_the_test_fails_it",
        Outcome::Failed,
        &[
            "the replay server for cassettes/tools.http.jsonl exited during the test (signal SIGKILL); its stderr:",
        ],
    ),
    (
        "test_bad.test_one_set_of_error_classes",
        Outcome::Passed,
        &[],
    ),
    (
        "test_unused.TestAllUsed.test_uses_half",
        Outcome::Passed,
        &[],
    ),
    (
        "test_unused.TestAllUsed.test_uses_the_rest",
        Outcome::Passed,
        &[],
    ),
    (
        // Reported after the owner's last test, as an error in its teardown.
        "test_unused.TestSomeUnused.test_uses_only_echo",
        Outcome::Error,
        &[
            // The SDK lists the tools itself before a call: only stamp is left.
            "pytest_mcp_cassette.CassetteUnusedError: mcp-cassette: 1 recorded answer(s) of cassettes/tools.http.jsonl were never used by the tests of test_unused.py::TestSomeUnused. Re-record the cassette, or call them again:",
            "unused: tools/call \"stamp\" (line 9)",
        ],
    ),
    (
        "test_unused.test_a_stdio_command_carries_the_flag",
        Outcome::Passed,
        &[],
    ),
];

#[test]
fn pytest_runs_the_plugin_specs() {
    let Some(python) = venv_python() else {
        return;
    };
    require_modules(&python, "pytest, mcp");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.xml");
    let pids = dir.path().join("replay.pids");
    // Run from the repository root: cassette paths in markers are read from each test file's
    // directory, not the working directory. The plugin comes from the source tree, named with
    // -p, so what is tested is this checkout whatever copy the venv holds.
    let out = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "interop/pytest",
            "-p",
            "pytest_mcp_cassette.plugin",
        ])
        .args(["-p", "no:cacheprovider", "-rA"])
        .arg(format!("--junitxml={}", report.display()))
        .current_dir(repo())
        .env("PYTHONPATH", repo().join("python/pytest-mcp-cassette/src"))
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("MCP_CASSETTE_BINARY", bin())
        .env("PYTEST_REPLAY_PIDS", &pids)
        .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("pytest runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Some specs fail on purpose: exit status 1 says tests failed, nothing worse.
    assert_eq!(out.status.code(), Some(1), "{printed}");
    let xml = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}: {printed}"));
    let cases = junit(&xml);
    for (name, want, fragments) in EXPECTED {
        let case = cases
            .get(*name)
            .unwrap_or_else(|| panic!("no verdict for {name}; got {:?}", cases.keys()));
        assert_eq!(&case.outcome, want, "{name}: {}", case.text);
        for fragment in *fragments {
            assert!(
                case.text.contains(fragment),
                "{name}: {fragment:?} not in {}",
                case.text
            );
        }
    }
    assert_eq!(cases.len(), EXPECTED.len(), "{:?}", cases.keys());
    // on_miss="warn": the miss is a warning in the summary, the test passed above.
    assert!(
        printed.contains("CassetteMissWarning: mcp-cassette: no recorded answer for \"tools/call\", method and tool match a recording, but arguments differ at: /m"),
        "{printed}"
    );
    // No replay outlives the run.
    let pids = std::fs::read_to_string(&pids).unwrap();
    assert!(!pids.trim().is_empty());
    for pid in pids.lines() {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while proc.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            !proc.exists(),
            "replay {pid} still running after pytest ended"
        );
    }
}

/// scripts/install-interop.sh installs the plugin into the interop venv, where pytest finds it
/// through its `pytest11` entry point.
#[test]
fn the_interop_venv_has_the_plugin_registered() {
    let Some(python) = venv_python() else {
        return;
    };
    require_modules(&python, "pytest");
    let out = Command::new(&python)
        .args(["-m", "pytest", "--version", "--version"])
        .env_remove("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let versions = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        versions.contains(&format!(
            "pytest-mcp-cassette-{}",
            env!("CARGO_PKG_VERSION")
        )),
        "the plugin is not installed in interop/.venv: run scripts/install-interop.sh\n{versions}"
    );
}
