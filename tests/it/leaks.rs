//! Redaction leak classes (docs/redaction.md), each proven through the binary: a scripted
//! server (`fixture_server script`) or the client puts a secret in one placement, `record`
//! writes the cassette, and the secret's text must appear nowhere in the file's bytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::fixtures::fixture_server;
use crate::record::bin;

pub(crate) const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

pub(crate) struct Recorded {
    pub _dir: tempfile::TempDir,
    pub cassette: PathBuf,
    pub output: Output,
}

impl Recorded {
    pub(crate) fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.cassette).expect("cassette written")
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }
}

/// Records a session against `fixture_server script <server_args>` writing `script`, with
/// `client` (lines) on stdin. Extra `record` arguments come first.
pub(crate) fn record_script(
    script: &str,
    client: &str,
    args: &[&str],
    server_args: &[&str],
) -> Recorded {
    let dir = tempfile::tempdir().expect("tempdir");
    let script_path = dir.path().join("script.txt");
    std::fs::write(&script_path, script).expect("script written");
    let cassette = dir.path().join("session.jsonl");
    let mut cmd = Command::new(bin());
    cmd.arg("record")
        .arg("-o")
        .arg(&cassette)
        .args(args)
        .arg("--")
        .arg(fixture_server())
        .arg("script")
        .args(server_args)
        .env("SCRIPT_FILE", &script_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn record");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = client.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("record ran");
    writer.join().expect("writer");
    assert_eq!(
        output.status.code(),
        Some(0),
        "record failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Recorded {
        _dir: dir,
        cassette,
        output,
    }
}

/// Asserts that none of `secrets` appears in the file, in any spelling a JSON writer gives it.
pub(crate) fn assert_no_leak(path: &Path, secrets: &[&str]) {
    let bytes = std::fs::read(path).expect("cassette readable");
    for secret in secrets {
        for needle in [secret.to_string(), json_spelling(secret)] {
            assert!(
                memchr::memmem::find(&bytes, needle.as_bytes()).is_none(),
                "{secret:?} leaked into {}:\n{}",
                path.display(),
                excerpt(&bytes, needle.as_bytes())
            );
        }
    }
}

fn json_spelling(s: &str) -> String {
    let q = serde_json::to_string(s).expect("string serialises");
    q[1..q.len() - 1].to_owned()
}

fn excerpt(bytes: &[u8], needle: &[u8]) -> String {
    let at = memchr::memmem::find(bytes, needle).unwrap_or(0);
    let from = at.saturating_sub(200);
    let to = (at + needle.len() + 200).min(bytes.len());
    String::from_utf8_lossy(&bytes[from..to]).into_owned()
}

fn session(lines: &[&str]) -> String {
    let mut out = String::from(INIT);
    out.push('\n');
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The capture limit (src/record/capture.rs); a line longer than this is cut.
const LIMIT: usize = 64 * 1024 * 1024;

#[test]
fn an_over_limit_line_leaves_nothing_of_its_text() {
    let secret_kv = "hunter2-correct-horse-battery";
    let token = "ghp_OVERLIMITLEAKTESTTOKEN000000000000";
    // A key-context secret at the head, a shape secret at the head, and the line over the limit.
    let script = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"password\":\"{secret_kv}\",\"data\":\"{token} {{{{PAD:{LIMIT}}}}}\"}}}}\n"
    );
    let rec = record_script(&script, &session(&[]), &[], &[]);
    assert_no_leak(&rec.cassette, &[secret_kv, token, "ghp_OVERLIMIT"]);
    let text = rec.text();
    assert!(text.contains("\"truncatedFrom\":"), "{text}");
    // The reader still accepts the entry.
    let (_, entries) = crate::record::read_cassette(&rec.cassette);
    assert!(entries.iter().any(|e| matches!(
        &e.kind,
        mcp_cassette::cassette::EntryKind::Raw(d) if d.is_empty()
    )));
    assert!(String::from_utf8_lossy(&rec.output.stderr).contains("only its length"));
}

#[test]
fn every_leaf_under_a_sensitive_key_is_redacted() {
    let leaves = [
        "nested-user-name-0001",
        "nested-pass-word-0002",
        "deep-array-leaf-0003",
        "3141592653589",
    ];
    let script = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"credentials":{{"user":"{}","pass":"{}","more":[{{"k":["{}"]}}],"n":{}}}}}}}"#,
            "\n",
            r#"{{"batch":[{{"auth":{{"inner":{{"x":"{}"}}}}}}]}}"#,
            "\n"
        ),
        leaves[0], leaves[1], leaves[2], leaves[3], leaves[0]
    );
    let client = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"secrets":{"a":{"b":"client-side-nested-0004"}}}}}"#;
    let rec = record_script(&script, &session(&[client]), &[], &[]);
    let mut all = leaves.to_vec();
    all.push("client-side-nested-0004");
    assert_no_leak(&rec.cassette, &all);
}

#[test]
fn url_credentials_in_every_form_are_redacted() {
    let urls = [
        ("redis://:r3disEmptyUserPw@cache:6379/0", "r3disEmptyUserPw"),
        ("amqp://user:p@ss/w:rd99@mq.internal/vhost", "p@ss/w:rd99"),
        (
            "postgres://app:pct%40enc%2Fpw@db:5432/app",
            "pct%40enc%2Fpw",
        ),
        (
            "mongodb+srv://admin:M0ng0:Pw@cluster.example.net",
            "M0ng0:Pw",
        ),
        (
            "https://x-access-token:plainOpaque123@git.example.com/r.git",
            "plainOpaque123",
        ),
    ];
    let mut script = String::new();
    for (url, _) in &urls {
        script.push_str(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"connecting to {url} now"}}}}"#
        ));
        script.push('\n');
        script.push_str(&format!("log: dsn={url}\n"));
    }
    let rec = record_script(&script, &session(&[]), &[], &[]);
    let secrets: Vec<&str> = urls.iter().map(|(_, pw)| *pw).collect();
    assert_no_leak(&rec.cassette, &secrets);
    let text = rec.text();
    assert!(text.contains("cache:6379/0"), "host and path stay: {text}");
}
