//! `diff` through the real binary (docs/diff.md): the tiny session against itself, against its
//! HTTP recording, and against copies edited in the test (an answer changed, a call added and
//! removed, an error for a result, a streamed notification changed), each output form, and bad
//! input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::record::bin;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/verify")
        .join(name)
}

fn diff(args: &[&Path], flags: &[&str]) -> Output {
    Command::new(bin())
        .arg("diff")
        .args(args)
        .args(flags)
        .stdin(Stdio::null())
        .output()
        .expect("diff runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A copy of fixture `name` in `dir`, with every `from` replaced by its `to`.
fn edited(dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut body = std::fs::read_to_string(fixture(name)).unwrap();
    for (from, to) in edits {
        assert!(body.contains(from), "{from} is not in {name}");
        body = body.replace(from, to);
    }
    let path = dir.join(format!("edited-{name}"));
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn a_recording_is_identical_to_itself_and_to_its_http_twin() {
    let tiny = fixture("tiny.cassette.jsonl");
    let out = diff(&[&tiny, &tiny], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "diff: 7 same, 0 changed, 0 added, 0 removed\n"
    );
    // The same session over HTTP: answers stored as SSE chunks compare by their payloads, and
    // the stream's notification has nothing to compare with on stdio.
    let http = fixture("tiny.http.cassette.jsonl");
    let out = diff(&[&tiny, &http], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn changed_added_and_removed_answers_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let b = edited(
        dir.path(),
        "tiny.cassette.jsonl",
        &[
            (r#""text":"echo:hi #1""#, r#""text":"echo:hi #2""#),
            (
                r#""name": "add", "arguments": {"a": 2, "b": 3}"#,
                r#""name": "add", "arguments": {"a": 2, "b": 4}"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hello-big-world"}]}}"#,
                r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"slug\u001b[31m failed"}}"#,
            ),
        ],
    );
    let a = fixture("tiny.cassette.jsonl");
    let out = diff(&[&a, &b], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines,
        [
            "~ CHANGED  tools/call echo (line 7 → line 7)",
            "    /content/0/text: \"echo:hi #1\" → \"echo:hi #2\"",
            "- REMOVED  tools/call add (line 9)",
            "~ CHANGED  tools/call slugify (line 11 → line 11): a result → error -32603: slug\\x1b[31m failed",
            "+ ADDED    tools/call add (line 9)",
            "diff: 4 same, 2 changed, 1 added, 1 removed",
        ],
        "{report}"
    );

    let out = diff(&[&a, &b], &["--json", "--ignore", "/content/0/text"]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["identical"], false);
    assert_eq!(
        json["summary"],
        serde_json::json!({"same": 5, "changed": 1, "added": 1, "removed": 1})
    );
    assert_eq!(json["differences"][0]["kind"], "removed");
    assert_eq!(json["differences"][0]["lineA"], 9);
    assert_eq!(
        json["differences"][1]["shape"]["b"],
        "error -32603: slug\u{1b}[31m failed"
    );

    let out = diff(&[&a, &b], &["--format", "markdown"]);
    assert_eq!(out.status.code(), Some(1));
    let md = text(&out.stdout);
    assert!(md.starts_with("**Cassette diff** `"), "{md}");
    assert!(
        md.contains("| ✏️ changed | tools/call echo (line 7 → line 7) | /content/0/text |"),
        "{md}"
    );
    assert!(
        md.contains("| ➕ added | tools/call add (line 9) | | |"),
        "{md}"
    );
    assert!(!md.contains('\u{1b}'), "{md}");
}

#[test]
fn streamed_notifications_and_volatile_fields() {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture("tiny.http.cassette.jsonl");
    let b = edited(
        dir.path(),
        "tiny.http.cassette.jsonl",
        &[(r#""data":"echoing""#, r#""data":"echoing loudly""#)],
    );
    let out = diff(&[&a, &b], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout)
            .contains("    notifications/0/params/data: \"echoing\" → \"echoing loudly\"\n"),
        "{}",
        text(&out.stdout)
    );

    // A declared-volatile argument does not split a pair.
    let header_edit = (
        r#""era":"legacy""#,
        r#""era":"legacy","volatile":["tools/call:/arguments/title"]"#,
    );
    let va = edited(dir.path(), "tiny.cassette.jsonl", &[header_edit]);
    let vb_dir = tempfile::tempdir().unwrap();
    let vb = edited(
        vb_dir.path(),
        "tiny.cassette.jsonl",
        &[
            header_edit,
            (
                r#""title": "Hello Big World""#,
                r#""title": "Another title""#,
            ),
        ],
    );
    let out = diff(&[&va, &vb], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // A declaration in either header applies to both sides.
    let tiny = fixture("tiny.cassette.jsonl");
    let out = diff(&[&tiny, &vb], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Without one, the call is removed and another added.
    let plain = edited(
        dir.path(),
        "tiny.cassette.jsonl",
        &[(
            r#""title": "Hello Big World""#,
            r#""title": "Another title""#,
        )],
    );
    let out = diff(&[&tiny, &plain], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).ends_with("diff: 6 same, 0 changed, 1 added, 1 removed\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = fixture("tiny.cassette.jsonl");
    let missing = dir.path().join("missing.jsonl");
    let out = diff(&[&tiny, &missing], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("diff failed: failed to read ") && err.contains("missing.jsonl"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let broken = edited(
        dir.path(),
        "tiny.cassette.jsonl",
        &[(
            r#""t":8,"dir":"c2s","frame":{"jsonrpc": "2.0", "id": 2"#,
            r#""t":"soon","dir":"c2s","frame":{"jsonrpc": "2.0", "id": 2"#,
        )],
    );
    let out = diff(&[&tiny, &broken], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("edited-tiny.cassette.jsonl:5: field \"t\""),
        "{err}"
    );

    let modern = edited(
        dir.path(),
        "tiny.http.cassette.jsonl",
        &[(r#""era":"legacy""#, r#""era":"modern""#)],
    );
    let out = diff(&[&tiny, &modern], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("in the legacy era and ") && err.contains(" in the modern era"),
        "{err}"
    );

    let out = diff(&[&tiny, &tiny], &["--ignore", "content"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid JSON Pointer for --ignore"));
    let out = diff(&[&tiny, &tiny], &["--format", "sarif"]);
    assert_eq!(out.status.code(), Some(2));
    let out = diff(&[&tiny], &[]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
}
