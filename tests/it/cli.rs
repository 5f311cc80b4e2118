//! The command line as a whole: `--version`, and the exit code of a usage error per command
//! (docs/cli.md).

use std::process::{Command, Output};

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
    let folder = dir.path().to_str().unwrap();
    for (args, code) in [
        (vec!["redact", missing.to_str().unwrap(), "--scan"], 2),
        (vec!["snapshot", "--check", "-f", folder, "--stdio", "x"], 2),
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
