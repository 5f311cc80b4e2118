//! The command line as a whole: `--version`, and the exit code of a usage error per command
//! (docs/cli.md).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::fixtures::fixture_server;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .args(args)
        .output()
        .expect("mcp-cassette runs")
}

#[test]
fn version_names_the_formats_it_speaks() {
    let out = run(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("mcp-cassette {} (", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    for part in [
        "cassette format v1-v2",
        "contract snapshot v1",
        "2026-07-28",
        "TypeScript mcp-cassette",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
}

#[test]
fn a_usage_error_exits_with_the_code_of_its_command() {
    let cases: &[(&[&str], i32)] = &[
        (&["check", "--no-such-flag"], 2),
        (&["check", "--stdio", "x", "--format", "yaml"], 2),
        (&["snapshot", "--no-such-flag"], 2),
        (&["verify", "--no-such-flag"], 2),
        (&["redact", "--no-such-flag"], 2),
        (&["rules", "--no-such-flag"], 2),
        (&["record", "--no-such-flag"], 1),
        (&["record"], 1),
        (&["replay", "a.jsonl", "--no-such-flag"], 1),
        (&["replay", "a.jsonl", "--on-miss", "sometimes"], 1),
        (&["lint", "--no-such-flag"], 1),
        (&["no-such-command"], 1),
        (&[], 1),
    ];
    for (args, code) in cases {
        let out = run(args);
        assert_eq!(
            out.status.code(),
            Some(*code),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "{args:?} says why");
    }
    for args in [&["--help"][..], &["check", "--help"], &["replay", "--help"]] {
        assert_eq!(run(args).status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn an_os_error_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let nested = dir.path().join("none/snap.json").display().to_string();
    for (args, code) in [
        (vec!["redact", missing.to_str().unwrap(), "--scan"], 2),
        (vec!["snapshot", "-f", &nested, "--stdio", "x"], 2),
        (vec!["check", "--stdio", missing.to_str().unwrap()], 2),
    ] {
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert_eq!(stderr.matches("(os error").count(), 1, "{args:?}: {stderr}");
    }
}

/// Flags that would do nothing are said, never silently ignored (the runs still go ahead, as
/// the reference's do).
#[test]
fn flags_that_do_nothing_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference/corpus-0.4/tiny.cassette.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .args([
            "replay",
            cassette.to_str().unwrap(),
            "--",
            "node",
            "server.js",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("only used by --on-miss passthrough; it is ignored"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let missing = dir.path().join("none.json");
    let out = run(&[
        "snapshot",
        "--check",
        "--update",
        "-f",
        missing.to_str().unwrap(),
        "--stdio",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2), "no snapshot to compare with");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--update has no effect with --check"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The codes a `--help` lists under "Exit codes:": the first word of each entry line.
fn help_codes(help: &str) -> BTreeSet<String> {
    let section = help
        .split_once("Exit codes:")
        .unwrap_or_else(|| panic!("no exit codes in:\n{help}"))
        .1;
    section
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// docs/cli.md's "Exit codes" table: per command, the backticked codes of its row.
fn documented_codes() -> Vec<(String, BTreeSet<String>)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    let table = doc.split_once("## Exit codes").unwrap().1;
    let table = table.split("\n## ").next().unwrap();
    table
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let verb = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            let codes = cells[1]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|c| c.chars().all(|ch| ch.is_ascii_digit()) || *c == "N")
                .map(str::to_owned)
                .collect();
            Some((verb.to_owned(), codes))
        })
        .collect()
}

#[test]
fn every_help_has_examples_and_the_documented_exit_codes() {
    let documented = documented_codes();
    let verbs: Vec<&str> = documented.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(
        verbs,
        [
            "record", "replay", "check", "snapshot", "verify", "lint", "redact", "rules", "exec"
        ]
    );
    for (verb, codes) in &documented {
        for flag in ["--help", "-h"] {
            let out = run(&[verb, flag]);
            assert_eq!(out.status.code(), Some(0), "{verb} {flag}");
            let help = String::from_utf8(out.stdout).unwrap();
            let examples = help
                .split_once("Examples:\n")
                .unwrap_or_else(|| panic!("{verb} {flag} has no examples:\n{help}"))
                .1;
            assert!(
                examples.starts_with(&format!("  mcp-cassette {verb}")),
                "{verb}: {examples}"
            );
            assert_eq!(&help_codes(&help), codes, "{verb} {flag}:\n{help}");
        }
    }
}

/// `check --stdio` on the tiny fixture server in `mode`, with `env` and extra arguments.
fn check_tiny(extra: &[&str], env: &[(&str, &str)]) -> Output {
    let target = format!("\"{}\" tiny", fixture_server().display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"));
    command
        .args(["check", "--stdio", &target])
        .args(extra)
        .env_remove("NO_COLOR")
        .env_remove("MCP_CASSETTE_TIMEOUT_MS")
        .env_remove("TINY_EVIL")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    command.output().expect("mcp-cassette runs")
}

const ESC: char = '\u{1b}';

#[test]
fn colour_follows_the_flag_and_no_color() {
    let poisoned = [("TINY_POISONED", "1")];
    // Piped: plain, unless asked.
    let plain = check_tiny(&[], &poisoned);
    let text = String::from_utf8(plain.stdout).unwrap();
    assert_eq!(plain.status.code(), Some(1), "{text}");
    assert!(!text.contains(ESC), "{text}");
    let always = check_tiny(&["--color", "always"], &poisoned);
    let painted = String::from_utf8(always.stdout).unwrap();
    assert_eq!(always.status.code(), Some(1));
    assert!(
        painted.contains("\u{1b}[1m\u{1b}[31m[FAIL]\u{1b}[0m CAS-L001"),
        "{painted:?}"
    );
    assert!(
        painted.contains("result: \u{1b}[1m\u{1b}[31mFAIL\u{1b}[0m ("),
        "{painted:?}"
    );
    // Without the escapes, the very same report.
    let stripped = painted
        .replace("\u{1b}[1m\u{1b}[31m", "")
        .replace("\u{1b}[33m", "")
        .replace("\u{1b}[0m", "");
    assert_eq!(stripped, text);
    // The flag may come first; NO_COLOR does not overrule an explicit always, and `never` wins.
    let rules = |args: &[&str], no_color: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"));
        command.args(args);
        match no_color {
            Some(value) => command.env("NO_COLOR", value),
            None => command.env_remove("NO_COLOR"),
        };
        String::from_utf8(command.output().unwrap().stdout).unwrap()
    };
    assert!(!rules(&["--color", "never", "rules", "CAS-L001"], None).contains(ESC));
    assert!(!rules(&["rules", "CAS-L001", "--color", "auto"], Some("1")).contains(ESC));
    let doc = rules(&["rules", "CAS-L001", "--color", "always"], Some("1"));
    assert!(doc.contains(ESC), "{doc}");
    // JSON never is.
    let json = check_tiny(&["--json", "--color", "always"], &poisoned);
    assert!(!String::from_utf8(json.stdout).unwrap().contains(ESC));
    // A bad value is a usage error of the command it was given to.
    assert_eq!(
        run(&["check", "--color", "sometimes"]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["--color", "sometimes", "lint", "x"]).status.code(),
        Some(1)
    );
}

#[test]
fn rules_render_their_markdown_for_reading() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .args(["rules", "cas-l001"])
        .env("COLUMNS", "60")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("CAS-L001 — instruction-override phrasing (shape, error)\n\n"),
        "{text}"
    );
    assert!(text.contains("\nWhat it flags. "), "{text}");
    assert!(!text.contains("**"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 60), "{text}");
    // The Markdown source stays available as data.
    let out = run(&["rules", "CAS-L001", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["doc"].as_str().unwrap().starts_with("**CAS-L001"));
}

#[test]
fn bad_input_is_refused_before_a_server_starts() {
    let dir = tempfile::tempdir().unwrap();
    // A server that would leave a mark if it ever ran.
    let mark = dir.path().join("started");
    let server = format!("sh -c 'touch {}'", mark.display());
    let stderr = |out: &Output| String::from_utf8_lossy(&out.stderr).into_owned();

    let out = run(&["check", "--stdio", "node \"my server.js"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--stdio: the \" quote"),
        "{}",
        stderr(&out)
    );

    for (value, shown) in [
        ("soon", "\"soon\""),
        ("0", "\"0\""),
        ("99999999999", "\"99999999999\""),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
            .args(["check", "--stdio", &server])
            .env("MCP_CASSETTE_TIMEOUT_MS", value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        assert!(
            stderr(&out).contains(&format!("MCP_CASSETTE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 86400000 (got {shown})")),
            "{}",
            stderr(&out)
        );
    }

    let folder = dir.path().to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "check",
                "--stdio",
                &server,
                "--format",
                "sarif",
                "--sarif-location",
                ".",
            ],
            "--sarif-location: . is a directory",
        ),
        (
            vec![
                "check",
                "--stdio",
                &server,
                "--format",
                "sarif",
                "--sarif-location",
                "no/such.ts",
            ],
            "--sarif-location: no/such.ts does not exist",
        ),
        (
            vec!["snapshot", "--stdio", &server, "-f", folder],
            "is a directory; name the snapshot file",
        ),
        (
            vec!["snapshot", "--stdio", &server, "-f", "/no/such/dir/s.json"],
            "failed to create a temporary file in /no/such/dir",
        ),
    ];
    for (args, said) in cases {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(said), "{args:?}: {}", stderr(&out));
    }
    assert!(!mark.exists(), "a server was started");

    // A server that cannot start is named.
    let out = run(&["check", "--stdio", "no-such-server-program --flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("\"no-such-server-program\""),
        "{}",
        stderr(&out)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .args(["record", "-o"])
        .arg(dir.path().join("c.jsonl"))
        .args(["--", "no-such-server-program"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .starts_with("record: failed to start server command: \"no-such-server-program\": "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_crashing_servers_stderr_appears_once() {
    let out = run(&[
        "check",
        "--stdio",
        "sh -c 'echo fatal: no API key >&2; exit 3'",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("fatal: no API key").count(), 1, "{stderr}");
    assert!(stderr.contains("(its stderr is above)"), "{stderr}");
}

#[test]
fn counts_are_singular_for_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snap.json");
    let target = format!("\"{}\" tiny", fixture_server().display());
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .args(["snapshot", "--stdio", &target, "-f"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with(" (3 tools)\n"), "{text}");
    let report = check_tiny(&[], &[]);
    let text = String::from_utf8(report.stdout).unwrap();
    assert!(!text.contains("(s)"), "{text}");
    assert!(
        text.contains("(0 errors, 0 warnings, gate: error)"),
        "{text}"
    );
}

/// A replay stopped by SIGTERM after a miss still prints its summary and exits 1.
#[test]
fn replay_stopped_by_sigterm_keeps_its_summary_and_miss_code() {
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference/corpus-0.4/tiny.cassette.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .arg("replay")
        .arg(&cassette)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"no/such/method","params":{{}}}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"error\""), "{line}");
    // The handlers are installed by now: the answer came after start-up.
    std::thread::sleep(Duration::from_millis(100));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 fingerprint miss(es) this session"),
        "{stderr}"
    );
    drop(stdin);
}

/// Piped, `record` and `replay` do not announce what they wait for (a terminal gets one line;
/// docs/cli.md, "Started by hand").
#[test]
fn piped_sessions_do_not_announce_themselves() {
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference/corpus-0.4/tiny.cassette.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .arg("replay")
        .arg(&cassette)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("waiting for"));
}

/// On a terminal, each says what it waits for, once (a pseudo-terminal made by Python's pty
/// module stands in for one; the test is skipped where there is no python3).
#[test]
fn sessions_started_on_a_terminal_say_what_they_wait_for() {
    const DRIVER: &str = r#"
import os, pty, subprocess, sys
main, side = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=side, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(side)
os.write(main, b"\x04")
out, err = p.communicate(timeout=20)
sys.stdout.write(err.decode())
sys.exit(p.returncode)
"#;
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cassette = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference/corpus-0.4/tiny.cassette.jsonl");
    let bin = env!("CARGO_BIN_EXE_mcp-cassette");
    let recorded = dir.path().join("r.jsonl");
    let runs: [Vec<&std::ffi::OsStr>; 2] = [
        vec![bin.as_ref(), "replay".as_ref(), cassette.as_os_str()],
        vec![
            bin.as_ref(),
            "record".as_ref(),
            "-o".as_ref(),
            recorded.as_os_str(),
            "--".as_ref(),
            "cat".as_ref(),
        ],
    ];
    for argv in runs {
        let out = Command::new("python3")
            .arg("-c")
            .arg(DRIVER)
            .args(&argv)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{argv:?}: {stderr}");
        assert_eq!(
            stderr
                .matches("waiting for an MCP client's JSON-RPC lines on stdin")
                .count(),
            1,
            "{argv:?}: {stderr}"
        );
    }
}

/// A client that declares roots, sampling and elicitation is shown what a capable client sees:
/// server-everything publishes three more tools to it (and asks for its roots, which are
/// answered, so nothing hangs). The default declares nothing, as the reference's client.
#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn client_capabilities_show_what_a_capable_client_sees() {
    crate::interop::require_installed();
    let server = crate::interop::everything().join(" ");
    let tools = |extra: &[&str]| -> Vec<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
            .args(["check", "--format", "json", "--stdio", &server])
            .args(extra)
            .env("MCP_CASSETTE_TIMEOUT_MS", "20000")
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        assert!(report["toolCount"].is_u64(), "{report}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("snap.json");
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
            .args(["snapshot", "--stdio", &server, "-f"])
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let snapshot: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let names: Vec<String> = snapshot["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(report["toolCount"].as_u64(), Some(names.len() as u64));
        names
    };
    let plain = tools(&[]);
    let capable = tools(&["--client-capabilities", "roots,sampling,elicitation"]);
    assert!(capable.len() > plain.len(), "{plain:?} vs {capable:?}");
    assert!(plain.iter().all(|name| capable.contains(name)));
    assert_eq!(tools(&["--client-capabilities", "all"]), capable);
    assert_eq!(tools(&["--client-capabilities", "none"]), plain);
    let out = run(&[
        "check",
        "--stdio",
        &server,
        "--client-capabilities",
        "telepathy",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--client-capabilities takes"));
}
