//! `record` over stdio, driven through the real binary against our fixture servers.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mcp_cassette::cassette::{EntryKind, Header, Reader};
use serde_json::Value;

use crate::fixtures::fixture_server;

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-cassette")
}

/// Runs `mcp-cassette record <args> -- fixture_server <mode> <extra>` with `input` on stdin.
fn record(args: &[&str], server: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("record")
        .args(args)
        .arg("--")
        .arg(fixture_server())
        .args(server);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_with_input(cmd, input)
}

fn run_with_input(mut cmd: Command, input: &[u8]) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    out
}

fn direct(server: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
    let mut cmd = Command::new(fixture_server());
    cmd.args(server);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_with_input(cmd, input)
}

pub(crate) fn read_cassette(path: &Path) -> (Header, Vec<mcp_cassette::cassette::Entry>) {
    let reader = Reader::open(path).expect("cassette reads");
    let header = reader.header().clone();
    let entries = reader.collect::<Result<Vec<_>, _>>().expect("entries read");
    (header, entries)
}

fn frames(entries: &[mcp_cassette::cassette::Entry]) -> Vec<(String, Value)> {
    entries
        .iter()
        .filter_map(|e| {
            e.frame().map(|f| {
                (
                    e.dir.map(|d| d.as_str().to_owned()).unwrap_or_default(),
                    f.value(),
                )
            })
        })
        .collect()
}

const SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc": "2.0", "id": "two",   "method": "tools/list"}"#,
    "\r\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hé \u00e9"}}}"#,
    "\n",
);

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[test]
fn bytes_pass_untouched_and_the_transcript_is_faithful() {
    let dir = tmp();
    let out = dir.path().join("s.cassette.jsonl");
    let proxied = record(
        &["-o", out.to_str().unwrap()],
        &["tiny"],
        &[],
        SESSION.as_bytes(),
    );
    let plain = direct(&["tiny"], &[], SESSION.as_bytes());
    assert_eq!(
        proxied.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&proxied.stderr)
    );
    assert_eq!(
        proxied.stdout, plain.stdout,
        "the client sees exactly what the server wrote"
    );

    let (header, entries) = read_cassette(&out);
    assert_eq!(header.transport().as_str(), "stdio");
    assert_eq!(header.era().map(|e| e.as_str()), Some("legacy"));
    assert!(header.redaction_applied());
    assert!(
        header
            .object()
            .get("recorder")
            .unwrap()
            .starts_with("\"mcp-cassette@")
    );
    assert_eq!(header.command().unwrap()[1], "tiny");
    let frames = frames(&entries);
    let c2s: Vec<_> = frames.iter().filter(|(d, _)| d == "c2s").collect();
    let s2c: Vec<_> = frames.iter().filter(|(d, _)| d == "s2c").collect();
    assert_eq!(c2s.len(), 4);
    assert_eq!(s2c.len(), 3);
    // Ids keep their type, the spaced frame keeps its bytes.
    assert_eq!(c2s[2].1["id"], Value::String("two".into()));
    let spaced = entries
        .iter()
        .find(|e| e.frame().is_some_and(|f| f.method() == Some("tools/list")))
        .unwrap();
    assert!(
        spaced
            .to_line()
            .contains(r#""frame":{"jsonrpc": "2.0", "id": "two",   "method": "tools/list"}"#)
    );
    // Offsets never go backwards.
    assert!(
        entries
            .windows(2)
            .all(|w| w[0].t <= w[1].t || w[0].dir != w[1].dir)
    );
}

#[test]
fn non_frame_lines_are_raw_entries() {
    let dir = tmp();
    let out = dir.path().join("log.jsonl");
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["stdout-log"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0));
    let (_, entries) = read_cassette(&out);
    let raws: Vec<&str> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Raw(d) => Some(d.as_str()),
            _ => None,
        })
        .collect();
    assert!(raws.iter().any(|r| r.contains("starting up")), "{raws:?}");
    assert!(
        raws.iter().any(|r| r.starts_with('[')),
        "a batch array is a raw line: {raws:?}"
    );
}

#[test]
fn secrets_are_redacted_on_disk_only() {
    let dir = tmp();
    let out = dir.path().join("secret.jsonl");
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let input = format!(
        "{}\n{}\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        format_args!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"leak","arguments":{{"token":"{token}"}}}}}}"#
        ),
    );
    let arg = format!("--token={token}");
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["tiny", &arg],
        &[("TINY_SECRETS", "1")],
        input.as_bytes(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(token), "the client gets the real bytes");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(token), "no token on disk:\n{text}");
    assert!(
        !text.contains("hunter2"),
        "no password from the raw log line on disk"
    );
    assert!(text.contains("[REDACTED:github:"));
    assert!(text.contains("[REDACTED:keyctx:"));
    let (header, _) = read_cassette(&out);
    assert!(header.command().unwrap()[2].starts_with("--token=[REDACTED:github:"));
}

#[test]
fn no_redact_writes_verbatim_and_says_so() {
    let dir = tmp();
    let out = dir.path().join("plain.jsonl");
    let o = record(
        &["-o", out.to_str().unwrap(), "--no-redact"],
        &["tiny", "--token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0));
    let first = std::fs::read_to_string(&out).unwrap();
    assert!(
        first
            .lines()
            .next()
            .unwrap()
            .contains(r#""redaction":{"applied":false}"#)
    );
    assert!(first.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    let both = Command::new(bin())
        .args([
            "record",
            "-o",
            "x.jsonl",
            "--no-redact",
            "--redact-config",
            "c.json",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&both.stderr).trim(),
        "record: --no-redact removes every rule, so --redact-config would do nothing. Drop one of the two"
    );
}

#[test]
fn once_refuses_a_real_cassette_and_leaves_it_byte_identical() {
    let dir = tmp();
    let out = dir.path().join("c.jsonl");
    assert_eq!(
        record(
            &["-o", out.to_str().unwrap()],
            &["tiny"],
            &[],
            SESSION.as_bytes()
        )
        .status
        .code(),
        Some(0)
    );
    let before = std::fs::read(&out).unwrap();
    let again = record(
        &["-o", out.to_str().unwrap()],
        &["tiny"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&again.stderr).trim(),
        format!(
            "record: {} already exists. Replay it, or pass --mode all to re-record over it",
            out.display()
        )
    );
    assert!(again.stdout.is_empty(), "no server was started");
    assert_eq!(std::fs::read(&out).unwrap(), before);

    // `--mode all` replaces the cassette only with a session the server said something in.
    let silent = record(
        &["-o", out.to_str().unwrap(), "--mode", "all"],
        &["tiny"],
        &[],
        b"",
    );
    assert_eq!(silent.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&silent.stderr).contains(&format!(
            "mcp-cassette: the server sent nothing this session, so {} was left as it was",
            out.display()
        )),
        "{}",
        String::from_utf8_lossy(&silent.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let all = record(
        &["-o", out.to_str().unwrap(), "--mode", "all"],
        &["tiny"],
        &[],
        TWO_CALLS.as_bytes(),
    );
    assert_eq!(all.status.code(), Some(0));
    assert_eq!(read_cassette(&out).1.len(), 4, "--mode all re-recorded");
    assert_eq!(names(dir.path()), ["c.jsonl"], "no temporary file remains");
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn only_an_empty_leftover_is_recorded_over() {
    let dir = tmp();
    let out = dir.path().join("left.jsonl");
    std::fs::write(&out, "").unwrap();
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["tiny"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("exists but is empty (a recording that never flushed); recording into it")
    );
    assert_eq!(read_cassette(&out).1.len(), 7);

    // A file that is not ours is never replaced by `once` or `append`.
    let notes = dir.path().join("notes.md");
    let text = "# my notes\n\nnot a cassette\n";
    for mode in ["once", "append"] {
        std::fs::write(&notes, text).unwrap();
        let o = record(
            &["-o", notes.to_str().unwrap(), "--mode", mode],
            &["tiny"],
            &[],
            SESSION.as_bytes(),
        );
        assert_eq!(o.status.code(), Some(1), "{mode}");
        assert!(o.stdout.is_empty(), "{mode}: no server was started");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(&format!(
                "{} exists and is not a cassette (its first line is not a cassette header)",
                notes.display()
            )),
            "{mode}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), text, "{mode}");
    }
}

#[test]
fn a_symlink_at_out_is_refused_in_every_mode() {
    let dir = tmp();
    let real = dir.path().join("real.jsonl");
    std::fs::write(&real, "precious\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    // A dangling link too: following it would create the file it names.
    let dangling = dir.path().join("dangling.jsonl");
    let nowhere = dir.path().join("nowhere.jsonl");
    std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
    for path in [&link, &dangling] {
        for mode in ["once", "all", "append"] {
            let o = record(
                &["-o", path.to_str().unwrap(), "--mode", mode],
                &["tiny"],
                &[],
                SESSION.as_bytes(),
            );
            assert_eq!(o.status.code(), Some(1), "{mode}");
            assert!(
                String::from_utf8_lossy(&o.stderr).contains(&format!(
                    "{} is a symbolic link; refusing to write through it",
                    path.display()
                )),
                "{mode}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(std::fs::symlink_metadata(path).unwrap().is_symlink());
        }
    }
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "precious\n");
    assert!(!nowhere.exists());
    // Nor is anything that is not a regular file written to.
    let o = record(
        &["-o", dir.path().to_str().unwrap(), "--mode", "all"],
        &["tiny"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a regular file"));
}

#[test]
fn all_keeps_the_cassette_when_the_server_dies_at_start_up() {
    let dir = tmp();
    let out = dir.path().join("keep.jsonl");
    assert_eq!(
        record(
            &["-o", out.to_str().unwrap()],
            &["tiny"],
            &[],
            SESSION.as_bytes()
        )
        .status
        .code(),
        Some(0)
    );
    let before = std::fs::read(&out).unwrap();
    // The server starts, then exits at once; the client's request is still read and recorded.
    let o = run_with_input(
        {
            let mut cmd = Command::new(bin());
            cmd.args(["record", "-o", out.to_str().unwrap(), "--mode", "all", "--"])
                .args(["sh", "-c", "exit 3"]);
            cmd
        },
        SESSION.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the server sent nothing this session"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(names(dir.path()), ["keep.jsonl"]);
    // And the kept cassette still blocks `--mode once`.
    let once = record(
        &["-o", out.to_str().unwrap()],
        &["tiny"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(once.status.code(), Some(1));
}

/// Runs `mcp-cassette <args>` under a file-size limit of `blocks` × 512 bytes, with SIGXFSZ
/// ignored so that a write past the limit fails with EFBIG as a full disk fails a write.
fn with_file_size_limit(blocks: u64, args: &[&str], input: &[u8]) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""
        ))
        .arg(bin())
        .args(args);
    run_with_input(cmd, input)
}

#[test]
fn a_failed_append_leaves_the_cassette_as_it_was() {
    let dir = tmp();
    let out = dir.path().join("full.jsonl");
    assert_eq!(append(&out, &["tiny"], TWO_CALLS).status.code(), Some(0));
    let before = std::fs::read(&out).unwrap();
    // Room for at most 512 more bytes: the session's block (over 2 KiB) is cut off part way.
    let blocks = before.len() as u64 / 512 + 1;
    let server = fixture_server();
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "m".repeat(2048)
    );
    let input = format!("{TWO_CALLS}{long}\n");
    let o = with_file_size_limit(
        blocks,
        &[
            "record",
            "-o",
            out.to_str().unwrap(),
            "--mode",
            "append",
            "--",
            server.to_str().unwrap(),
            "tiny",
        ],
        input.as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("failed to write")
            && stderr.contains("it was left as it was before this session"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // It still takes appends.
    assert_eq!(append(&out, &["tiny"], TWO_CALLS).status.code(), Some(0));
    assert_eq!(read_cassette(&out).1.len(), 8);

    // `--mode all` on a full disk: the previous cassette stays, and no temporary remains.
    let before = std::fs::read(&out).unwrap();
    let o = with_file_size_limit(
        0,
        &[
            "record",
            "-o",
            out.to_str().unwrap(),
            "--mode",
            "all",
            "--",
            server.to_str().unwrap(),
            "tiny",
        ],
        TWO_CALLS.as_bytes(),
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert_eq!(names(dir.path()), ["full.jsonl"]);
}

#[test]
fn usage_refusals() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["record", "-o", "x.jsonl", "--mode", "twice", "--", "true"],
            "record: unknown --mode \"twice\" (expected once, all or append)",
        ),
        (
            &["record", "-o", "x.jsonl"],
            "record: missing target. Pass a server command after -- , or --http <url>",
        ),
        (
            &[
                "record",
                "-o",
                "x.jsonl",
                "--http",
                "http://127.0.0.1:1/",
                "--",
                "true",
            ],
            "record: use either --http or a server command, not both",
        ),
    ];
    for (args, message) in cases {
        let dir = tmp();
        let o = Command::new(bin())
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr).trim(), message);
        assert!(!dir.path().join("x.jsonl").exists());
    }
    let dir = tmp();
    let o = Command::new(bin())
        .current_dir(dir.path())
        .args([
            "record",
            "-o",
            "x.jsonl",
            "--mode",
            "append",
            "--http",
            "http://127.0.0.1:1/",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("record --mode append is for stdio recordings")
    );
    assert!(!dir.path().join("x.jsonl").exists());
}

/// `record --mode <mode> -o <out>` of a server command that does not exist.
fn record_missing_server(out: &std::path::Path, mode: &str) -> std::process::Output {
    Command::new(bin())
        .args(["record", "-o", out.to_str().unwrap(), "--mode", mode, "--"])
        .arg("/nonexistent/server")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_server_that_cannot_start_leaves_nothing() {
    let dir = tmp();
    let out = dir.path().join("never.jsonl");
    for mode in ["once", "all", "append"] {
        let o = record_missing_server(&out, mode);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .starts_with("record: failed to start server command: ")
        );
        assert!(!out.exists(), "{mode}");
    }
    // An existing cassette survives a failed start in every mode.
    assert_eq!(
        record(
            &["-o", out.to_str().unwrap()],
            &["tiny"],
            &[],
            SESSION.as_bytes()
        )
        .status
        .code(),
        Some(0)
    );
    let before = std::fs::read(&out).unwrap();
    for mode in ["all", "append"] {
        let o = record_missing_server(&out, mode);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(std::fs::read(&out).unwrap(), before, "{mode}");
    }
}

#[test]
fn exit_code_is_the_servers() {
    let dir = tmp();
    let out = dir.path().join("crash.jsonl");
    let input = format!(
        "{}{}\n",
        SESSION,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}"#
    );
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["crash"],
        &[],
        input.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(3));
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era().map(|e| e.as_str()), Some("legacy"));
    assert!(!entries.is_empty());

    let out = dir.path().join("now.jsonl");
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["exit-now"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(7));
    let (header, _) = read_cassette(&out);
    assert_eq!(header.era(), None, "no successful answer, no era");
}

#[test]
fn modern_sessions_are_recorded_as_modern() {
    let dir = tmp();
    let out = dir.path().join("modern.jsonl");
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        "\n"
    );
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["pushy"],
        &[("PUSHY_ERA", "modern")],
        input.as_bytes(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era().map(|e| e.as_str()), Some("modern"));
    assert_eq!(entries.len(), 4);
}

fn append(out: &Path, server: &[&str], input: &str) -> Output {
    record(
        &["-o", out.to_str().unwrap(), "--mode", "append"],
        server,
        &[],
        input.as_bytes(),
    )
}

const TWO_CALLS: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m"}}}"#,
    "\n"
);

#[test]
fn append_adds_sessions_with_minted_ids_on_one_timeline() {
    let dir = tmp();
    let out = dir.path().join("app.jsonl");
    assert_eq!(append(&out, &["tiny"], TWO_CALLS).status.code(), Some(0));
    std::thread::sleep(Duration::from_millis(30));
    let o = append(&out, &["tiny"], TWO_CALLS);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (_, entries) = read_cassette(&out);
    let ids: Vec<Value> = frames(&entries)
        .into_iter()
        .filter(|(d, _)| d == "c2s")
        .map(|(_, f)| f["id"].clone())
        .collect();
    assert_eq!(
        ids,
        vec![
            Value::from(1),
            Value::from(2),
            Value::from("live-1"),
            Value::from("live-2")
        ]
    );
    let s2c: Vec<Value> = frames(&entries)
        .into_iter()
        .filter(|(d, _)| d == "s2c")
        .map(|(_, f)| f["id"].clone())
        .collect();
    assert_eq!(
        s2c,
        vec![
            Value::from(1),
            Value::from(2),
            Value::from("live-1"),
            Value::from("live-2")
        ]
    );
    let ts: Vec<u64> = entries.iter().map(|e| e.t).collect();
    assert!(
        ts[4] >= ts[3] && ts[4] >= 30,
        "appended offsets continue the timeline: {ts:?}"
    );
    // A third session continues the numbering.
    assert_eq!(append(&out, &["tiny"], TWO_CALLS).status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains(r#""id":"live-4""#));
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(r#""type":"header""#))
            .count(),
        1
    );
}

#[test]
fn append_refusals_leave_the_file_byte_identical() {
    let dir = tmp();
    let out = dir.path().join("app.jsonl");
    assert_eq!(append(&out, &["tiny"], TWO_CALLS).status.code(), Some(0));
    let before = std::fs::read(&out).unwrap();
    let prefix = format!("record --mode append: {} ", out.display());

    let other = append(&out, &["stdout-log"], TWO_CALLS);
    assert_eq!(other.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&other.stderr);
    assert!(
        msg.starts_with(&prefix)
            && msg.contains("the header names the one server that produced the file"),
        "{msg}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);

    let plain = record(
        &[
            "-o",
            out.to_str().unwrap(),
            "--mode",
            "append",
            "--no-redact",
        ],
        &["tiny"],
        &[],
        TWO_CALLS.as_bytes(),
    );
    assert_eq!(plain.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&plain.stderr)
            .contains("was recorded with redaction on and this session has it off")
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);

    // A cassette cut mid-line is not appended to.
    let mut cut = before.clone();
    cut.extend_from_slice(br#"{"type":"frame","t":5,"dir":"c2s","fra"#);
    std::fs::write(&out, &cut).unwrap();
    let o = append(&out, &["tiny"], TWO_CALLS);
    assert_eq!(o.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(
        msg.contains(&format!(
            "record --mode append: {} could not be read as a cassette",
            out.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("it was left untouched"));
    assert_eq!(std::fs::read(&out).unwrap(), cut);
}

#[test]
fn append_refuses_a_handshake_under_a_modern_header() {
    let dir = tmp();
    let out = dir.path().join("modern.jsonl");
    let discover = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#,
        "\n"
    );
    // pushy modern decides the era; then a legacy session through the same command is refused.
    let first = record(
        &["-o", out.to_str().unwrap(), "--mode", "append"],
        &["pushy"],
        &[("PUSHY_ERA", "modern")],
        discover.as_bytes(),
    );
    assert_eq!(first.status.code(), Some(0));
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .contains(r#""era":"modern""#)
    );
    let before = std::fs::read(&out).unwrap();
    let o = record(
        &["-o", out.to_str().unwrap(), "--mode", "append"],
        &["pushy"],
        &[("PUSHY_ERA", "modern")],
        TWO_CALLS.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("declares the modern era, which has no handshake, and this session recorded an `initialize` request"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn sigkill_during_append_loses_the_session_and_nothing_else() {
    let dir = tmp();
    let out = dir.path().join("k.jsonl");
    assert_eq!(append(&out, &["tiny"], TWO_CALLS).status.code(), Some(0));
    let before = std::fs::read(&out).unwrap();
    let mut child = Command::new(bin())
        .args([
            "record",
            "-o",
            out.to_str().unwrap(),
            "--mode",
            "append",
            "--",
        ])
        .arg(fixture_server())
        .arg("tiny")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(TWO_CALLS.as_bytes()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = [0u8; 64];
    let _ = stdout.read(&mut buf).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn sigterm_is_forwarded_and_the_cassette_finalised() {
    let dir = tmp();
    let out = dir.path().join("term.jsonl");
    let mut child = Command::new(bin())
        .args(["record", "-o", out.to_str().unwrap(), "--"])
        .arg(fixture_server())
        .arg("tiny")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(TWO_CALLS.as_bytes()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let started = Instant::now();
    while seen.iter().filter(|b| **b == b'\n').count() < 2
        && started.elapsed() < Duration::from_secs(5)
    {
        let mut buf = [0u8; 4096];
        let n = stdout.read(&mut buf).unwrap();
        seen.extend_from_slice(&buf[..n]);
    }
    let pid = child.id();
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "the server died of the forwarded SIGTERM"
    );
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era().map(|e| e.as_str()), Some("legacy"));
    assert_eq!(entries.len(), 4);
    drop(stdin);
}

#[test]
fn hostile_lines_are_forwarded_and_recorded_safely() {
    let dir = tmp();
    let out = dir.path().join("bad.jsonl");
    // A 70 MB line (over the 64 MiB capture bound), invalid UTF-8, and a last line cut short.
    let mut input = Vec::new();
    input.extend_from_slice(SESSION.as_bytes());
    input.extend(std::iter::repeat_n(b'x', 70 * 1024 * 1024));
    input.push(b'\n');
    input.extend_from_slice(b"\xff\xfe not utf8\n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":4,"method":"tools/ca"#);
    let o = record(&["-o", out.to_str().unwrap()], &["tiny"], &[], &input);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("exceeds the 64 MiB capture limit"),
        "{stderr}"
    );
    assert!(stderr.contains("is not valid UTF-8"), "{stderr}");
    let (_, entries) = read_cassette(&out);
    let raws: Vec<&mcp_cassette::cassette::Entry> = entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Raw(_)))
        .collect();
    assert_eq!(raws.len(), 3, "long line, bad UTF-8, cut-short frame");
    assert!(raws[0].to_line().contains(r#""truncatedFrom":73400320"#));
    assert!(matches!(&raws[1].kind, EntryKind::Raw(d) if d.contains('\u{fffd}')));
    assert!(matches!(&raws[2].kind, EntryKind::Raw(d) if d.ends_with("tools/ca")));
}

#[test]
fn every_reference_fixture_reads() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference");
    let mut read = 0;
    for sub in ["reference-0.4", "reference-0.8", "corpus-0.4"] {
        for entry in std::fs::read_dir(root.join(sub)).expect("shared fixtures present") {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            let (header, entries) = read_cassette(&path);
            assert!(header.version() == 1 || header.version() == 2);
            assert!(!entries.is_empty(), "{}", path.display());
            // Re-serialising every line reproduces the file byte for byte.
            let mut rebuilt = header.to_line();
            rebuilt.push('\n');
            for e in &entries {
                rebuilt.push_str(&e.to_line());
                rebuilt.push('\n');
            }
            assert_eq!(
                rebuilt,
                std::fs::read_to_string(&path).unwrap(),
                "{}",
                path.display()
            );
            read += 1;
        }
    }
    assert!(read >= 10, "read {read} fixtures");
}

#[test]
fn a_flood_is_recorded_whole_while_capture_holds_the_forwarders_back() {
    // About 12 MB each way, fed at once: well over the capture backlog budget, so the
    // forwarders pause for the capture thread (that is what bounds the recorder's memory) and
    // every message must still arrive and be written, in order.
    let count: u64 = 100_000;
    let mut input = String::new();
    for i in 0..count {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"flood-{i}-{}\"}}}}}}\n",
            "x".repeat(60)
        ));
    }
    let dir = tmp();
    let out = dir.path().join("flood.jsonl");
    let o = record(
        &["-o", out.to_str().unwrap()],
        &["echo-bench"],
        &[],
        input.as_bytes(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count() as u64,
        count
    );
    let written = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len() as u64, 1 + 2 * count);
    // Requests in order, each ahead of its answer.
    let mut next: u64 = 0;
    for line in &lines[1..] {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        if entry["dir"] == "c2s" {
            assert_eq!(entry["frame"]["id"], next);
            next += 1;
        } else {
            assert!(entry["frame"]["id"].as_u64().unwrap() < next);
        }
    }
    assert_eq!(next, count);
}

/// Starts `record` of the tiny server run with `ignored` signals ignored (an ignored signal
/// stays ignored across `exec`), holds a two-call session open, and returns once both answers
/// came back.
fn stubborn_recording(
    out: &Path,
    ignored: &str,
) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = Command::new(bin())
        .args(["record", "-o", out.to_str().unwrap(), "--", "sh", "-c"])
        .arg(format!("trap '' {ignored}; exec \"$0\" tiny"))
        .arg(fixture_server())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(TWO_CALLS.as_bytes()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let started = Instant::now();
    while seen.iter().filter(|b| **b == b'\n').count() < 2
        && started.elapsed() < Duration::from_secs(5)
    {
        let mut buf = [0u8; 4096];
        let n = stdout.read(&mut buf).unwrap();
        seen.extend_from_slice(&buf[..n]);
    }
    (child, stdin)
}

fn interrupt(pid: u32) {
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn ctrl_c_escalates_against_a_server_that_ignores_it() {
    let dir = tmp();
    // One Ctrl-C: the server ignores SIGINT, so SIGTERM follows after the grace period.
    let out = dir.path().join("int.jsonl");
    let (mut child, stdin) = stubborn_recording(&out, "INT");
    let started = Instant::now();
    interrupt(child.id());
    let status = child.wait().unwrap();
    let waited = started.elapsed();
    assert_eq!(status.code(), Some(0), "stopped by the signals we sent");
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(10),
        "SIGTERM came after the SIGINT grace period: {waited:?}"
    );
    let (header, entries) = read_cassette(&out);
    assert_eq!(header.era().map(|e| e.as_str()), Some("legacy"));
    assert_eq!(entries.len(), 4);
    drop(stdin);

    // A server that ignores SIGINT and SIGTERM: each further Ctrl-C takes the next step at
    // once, and the third one is SIGKILL.
    let out = dir.path().join("kill.jsonl");
    let (mut child, stdin) = stubborn_recording(&out, "INT TERM");
    let started = Instant::now();
    for _ in 0..3 {
        interrupt(child.id());
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().unwrap();
    let waited = started.elapsed();
    assert_eq!(status.code(), Some(0));
    assert!(
        waited < Duration::from_millis(1500),
        "no grace period was waited out: {waited:?}"
    );
    assert_eq!(read_cassette(&out).1.len(), 4);
    drop(stdin);
}

/// The MCP Inspector CLI and many scripts drop `--`: the trailing command is the server's,
/// flags included, with or without it (docs/record.md).
#[test]
fn the_server_command_needs_no_double_dash() {
    let dir = tmp();
    let with = dir.path().join("with.cassette.jsonl");
    let without = dir.path().join("without.cassette.jsonl");
    let proxied = record(
        &["-o", with.to_str().unwrap()],
        &["tiny"],
        &[],
        SESSION.as_bytes(),
    );
    assert_eq!(
        proxied.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&proxied.stderr)
    );
    let mut cmd = Command::new(bin());
    cmd.args(["record", "-o", without.to_str().unwrap()])
        .arg(fixture_server())
        .arg("tiny");
    let bare = run_with_input(cmd, SESSION.as_bytes());
    assert_eq!(
        bare.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&bare.stderr)
    );
    assert_eq!(bare.stdout, proxied.stdout);
    // The summary line names the file, the era, the redactions and how the server ended.
    let stderr = String::from_utf8_lossy(&bare.stderr);
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("mcp-cassette: recorded "))
        .unwrap_or_else(|| panic!("no summary line in {stderr}"));
    assert!(
        summary.contains(" entries to ") && summary.contains(without.to_str().unwrap()),
        "{summary}"
    );
    assert!(
        summary.ends_with("redacted; the server ended with exit code 0"),
        "{summary}"
    );
    let (with_header, with_entries) = read_cassette(&with);
    let (without_header, without_entries) = read_cassette(&without);
    assert_eq!(with_header.command(), without_header.command());
    assert_eq!(frames(&with_entries), frames(&without_entries));
}
