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
        ("redis://:my secret pass@cache:6379/1", "my secret pass"),
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

/// A small deterministic generator, so the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| chars[(self.next() % chars.len() as u64) as usize])
            .collect()
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGIT: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &str = "0123456789abcdef";

/// More than 50 secret shapes: every built-in token family, JWTs small and large, PEM private
/// keys, and opaque values only their key or an earlier sighting gives away.
fn secret_corpus() -> Vec<String> {
    let mut r = Rng(0x5eed_1234_abcd_0001);
    let mut out = Vec::new();
    for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        out.push(format!("{p}{}", r.pick(ALNUM, 36)));
    }
    out.push(format!("github_pat_{}", r.pick(ALNUM, 60)));
    out.push(format!("sk-{}", r.pick(ALNUM, 48)));
    out.push(format!("sk-proj-{}", r.pick(B64URL, 40)));
    out.push(format!("sk-{}", r.pick(ALNUM, 20)));
    out.push(format!("sk-ant-api03-{}", r.pick(B64URL, 80)));
    out.push(format!("sk-ant-admin01-{}", r.pick(B64URL, 40)));
    for p in ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"] {
        out.push(format!(
            "{p}{}-{}",
            r.pick("0123456789", 12),
            r.pick(ALNUM, 24)
        ));
    }
    for _ in 0..3 {
        out.push(format!("AKIA{}", r.pick(UPPER_DIGIT, 16)));
    }
    for _ in 0..2 {
        out.push(format!("AIza{}", r.pick(B64URL, 35)));
    }
    for (h, p, s) in [(20, 60, 43), (36, 200, 86), (20, 9000, 43), (20, 40, 2000)] {
        out.push(format!(
            "eyJ{}.eyJ{}.{}",
            r.pick(B64URL, h),
            r.pick(B64URL, p),
            r.pick(B64URL, s)
        ));
    }
    for kind in ["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "] {
        let body: Vec<String> = (0..4).map(|_| r.pick(B64, 64)).collect();
        out.push(format!(
            "-----BEGIN {kind}PRIVATE KEY-----\n{}\n-----END {kind}PRIVATE KEY-----",
            body.join("\n")
        ));
    }
    for n in [12, 16, 20, 24, 32, 40, 13, 17, 21, 29, 33, 38] {
        out.push(r.pick(ALNUM, n));
    }
    for n in [14, 22, 30, 36, 44] {
        out.push(format!(
            "{}-{}_{}.{}~{}",
            r.pick(ALNUM, n / 4),
            r.pick(ALNUM, n / 4),
            r.pick(ALNUM, n / 4),
            r.pick(ALNUM, 3),
            r.pick(ALNUM, 3)
        ));
    }
    out.push(r.pick(HEX, 32));
    out.push(r.pick(HEX, 64));
    out.push(format!("{}", 4_000_000_000u64 + r.next() % 1_000_000_000));
    out.push("correct horse battery staple 9".to_owned());
    out
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("string serialises")
}

/// The secret with every third character spelled as a `\u` escape, as a JSON string body.
fn escaped(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i % 3 == 1 && (c as u32) < 0x10000 {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            let one = q(&c.to_string());
            out.push_str(&one[1..one.len() - 1]);
        }
    }
    out
}

/// Client lines and server script for the corpus: each secret in every placement. Within each
/// direction the first placement is one its key recognises, so later echoes are caught however
/// the two directions interleave.
fn corpus_session(secrets: &[String]) -> (String, String) {
    let mut client = vec![INIT.to_owned()];
    let mut script = String::new();
    let mut id = 10;
    for s in secrets {
        let qs = q(s);
        let body = &qs[1..qs.len() - 1];
        let mut c = |method: &str, params: String| {
            id += 1;
            client.push(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":{},"params":{params}}}"#,
                q(method)
            ));
        };
        // 1. request params under a sensitive key (and the client side's first sighting).
        c(
            "tools/call",
            format!(r#"{{"name":"login","arguments":{{"api_key":{qs}}}}}"#),
        );
        // 2. request params, free text.
        c(
            "tools/call",
            format!(r#"{{"name":"ask","arguments":{{"query":"please use {body} now"}}}}"#),
        );
        // 3. as an object key.
        c(
            "tools/call",
            format!(r#"{{"name":"map","arguments":{{"by":{{{qs}:1}}}}}}"#),
        );
        // 4. in a method name.
        c(&format!("x/{s}"), "{}".to_owned());
        let mut s2c = |line: String| {
            script.push_str(&line);
            script.push('\n');
        };
        // 5. nested deep under a sensitive key (the server side's first sighting).
        s2c(format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":{{"credentials":{{"a":[{{"b":{qs}}}]}}}}}}}}"#
        ));
        // 6. result text.
        s2c(format!(
            r#"{{"jsonrpc":"2.0","id":901,"result":{{"content":[{{"type":"text","text":"your key is {body}."}}]}}}}"#
        ));
        // 7. error message.
        s2c(format!(
            r#"{{"jsonrpc":"2.0","id":902,"error":{{"code":-32000,"message":"rejected credential {body} for user"}}}}"#
        ));
        // 8. a notification.
        s2c(format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progress":1,"message":"using {body}"}}}}"#
        ));
        // 9. a JSON document inside a string.
        let doc = serde_json::json!({ "config": { "client_secret": s } }).to_string();
        s2c(format!(
            r#"{{"jsonrpc":"2.0","id":903,"result":{{"content":[{{"type":"text","text":{}}}]}}}}"#,
            q(&doc)
        ));
        // 10. split by JSON escapes.
        s2c(format!(
            r#"{{"jsonrpc":"2.0","id":904,"result":{{"content":[{{"type":"text","text":"k={}"}}]}}}}"#,
            escaped(s)
        ));
        // 11. in a URL.
        s2c(format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"connect https://svc:{body}@db.internal:5432/app"}}}}"#
        ));
        // 12. a raw (non-JSON) log line.
        s2c(format!("log: token={body} (retrying)"));
        // 13. as a key, server side.
        s2c(format!(
            r#"{{"jsonrpc":"2.0","id":905,"result":{{"sessions":{{{qs}:{{"ok":true}}}}}}}}"#
        ));
    }
    let mut client_text = client.join("\n");
    client_text.push('\n');
    (client_text, script)
}

/// Every 8-character window of every secret, in the spellings a cassette can hold it in.
fn fragments(secrets: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for s in secrets {
        let chars: Vec<char> = s.chars().collect();
        for w in chars.windows(8) {
            let frag: String = w.iter().collect();
            if frag.trim() != frag || frag.contains('\n') {
                // Whitespace at an edge or a line break: its escaped spelling is checked below.
                let qf = q(&frag);
                out.push(qf[1..qf.len() - 1].to_owned());
                continue;
            }
            out.push(frag);
        }
    }
    out.sort();
    out.dedup();
    out
}

fn assert_no_fragment(path: &Path, secrets: &[String]) {
    let bytes = std::fs::read(path).expect("cassette readable");
    let frags = fragments(secrets);
    let ac = aho_corasick::AhoCorasick::new(&frags).expect("fragments compile");
    if let Some(m) = ac.find(&bytes[..]) {
        panic!(
            "fragment {:?} leaked into {}:\n{}",
            frags[m.pattern().as_usize()],
            path.display(),
            excerpt(&bytes, frags[m.pattern().as_usize()].as_bytes())
        );
    }
    // Every line is still JSON.
    for (i, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
        if !line.trim().is_empty() {
            assert!(
                serde_json::from_str::<serde_json::Value>(line).is_ok(),
                "line {} is not JSON: {line}",
                i + 1
            );
        }
    }
}

fn redact_cli(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(bin())
        .arg("redact")
        .args(args)
        .output()
        .expect("redact ran")
}

#[test]
fn the_generated_corpus_leaks_nothing() {
    let secrets = secret_corpus();
    assert!(secrets.len() >= 50, "{}", secrets.len());
    let (client, script) = corpus_session(&secrets);
    // Without the command line: every placement is caught by shape, key or an earlier sighting.
    let rec = record_script(&script, &client, &[], &[]);
    assert_no_fragment(&rec.cassette, &secrets);
    let text = rec.text();
    assert!(text.contains("please use [REDACTED:"), "echo in free text");

    // With every secret on the server's command line too, as flags and assignments.
    let mut argv: Vec<String> = Vec::new();
    for (i, s) in secrets.iter().enumerate() {
        match i % 4 {
            0 => argv.extend(["--api-key".to_owned(), s.clone()]),
            1 => argv.push(format!("--token={s}")),
            2 => argv.push(format!("DB_PASSWORD={s}")),
            _ => argv.extend(["--password".to_owned(), s.clone()]),
        }
    }
    let argv_refs: Vec<&str> = argv.iter().map(String::as_str).collect();
    let rec2 = record_script(&script, &client, &[], &argv_refs);
    assert_no_fragment(&rec2.cassette, &secrets);

    // The same session recorded in clear: `redact -o` cleans it, `--scan` counts exactly what
    // `-o` replaced, and a second `-o` changes nothing.
    let clear = record_script(&script, &client, &["--no-redact"], &argv_refs);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("clean.jsonl");
    let o = redact_cli(&[clear.cassette.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_fragment(&out, &secrets);
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    let count: usize = said
        .split('(')
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("count printed");
    let scan = redact_cli(&[clear.cassette.as_os_str(), "--scan".as_ref()]);
    assert_eq!(scan.status.code(), Some(1));
    let report = String::from_utf8_lossy(&scan.stdout).into_owned();
    assert!(
        report.ends_with(&format!("result: FOUND ({count} secret(s) detected)\n")),
        "scan and -o disagree: -o said {said}, scan ended {}",
        report.lines().last().unwrap_or_default()
    );
    // No diagnostic prints any part of a secret.
    let frags = fragments(&secrets);
    let ac = aho_corasick::AhoCorasick::new(&frags).expect("fragments compile");
    if let Some(m) = ac.find(report.as_bytes()) {
        panic!(
            "the scan report shows {:?}:\n{}",
            frags[m.pattern().as_usize()],
            excerpt(report.as_bytes(), frags[m.pattern().as_usize()].as_bytes())
        );
    }

    let again = dir.path().join("again.jsonl");
    let o2 = redact_cli(&[out.as_os_str(), "-o".as_ref(), again.as_os_str()]);
    assert_eq!(o2.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o2.stdout).contains("(0 secrets redacted)"));
    assert_eq!(
        std::fs::read(&out).expect("out"),
        std::fs::read(&again).expect("again"),
        "redact -o is idempotent"
    );
    for cassette in [&rec.cassette, &rec2.cassette, &out] {
        let scan = redact_cli(&[cassette.as_os_str(), "--scan".as_ref()]);
        assert_eq!(
            scan.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&scan.stdout)
        );
    }
}

/// An echo that comes before the secret's recognisable sighting: `redact -o` needs the whole
/// file's set, and `--scan` must agree with it.
#[test]
fn an_echo_before_its_sighting_is_caught_by_redact() {
    let secret = "Zq8vYt3LmN2pXw7R";
    let script = format!(
        "{}\n{}\n",
        format_args!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"early {secret}"}}}}"#
        ),
        format_args!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"password":"{secret}"}}}}"#
        ),
    );
    let clear = record_script(&script, &session(&[]), &["--no-redact"], &[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("clean.jsonl");
    let o = redact_cli(&[clear.cassette.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(2 secrets redacted)"));
    assert_no_leak(&out, &[secret]);
    let scan = redact_cli(&[clear.cassette.as_os_str(), "--scan".as_ref()]);
    assert!(
        String::from_utf8_lossy(&scan.stdout).ends_with("result: FOUND (2 secret(s) detected)\n")
    );
}

#[test]
fn look_alikes_are_left_alone() {
    let mut r = Rng(0xbeef_0000_1111_2222);
    let png = format!(
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{}",
        r.pick(B64, 4000)
    );
    let mut benign: Vec<String> = vec![
        "123e4567-e89b-12d3-a456-426614174000".into(),
        "f47ac10b-58cc-4372-a567-0e02b2c3d479".into(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into(),
        "9fceb02d0ae598e95dc970b74767f19372d61af8".into(),
        "req_01HZX3K9QF2M4N5P6R7S8T9V0W".into(),
        "cus_NffrFeUfNV2Hib".into(),
        "2026-12-03T13:16:13.123Z".into(),
        "42".into(),
        "8080".into(),
        "sk-short".into(),
        "AKIASHORT".into(),
        "eyJhbGciOiJIUzI1NiJ9".into(),
        "ghp_tooshort".into(),
        "https://example.com/path?query=1&page=2".into(),
        "https://example.com:8443/users/@alice".into(),
        "max_tokens=4096".into(),
        "the token: required for access".into(),
        "author: Jane Doe".into(),
        "passthrough mode enabled".into(),
        "mapping: a-to-b-to-c".into(),
        "/home/user/project/src/main.rs".into(),
        "user@example.com".into(),
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----"
            .into(),
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----"
            .into(),
        "{\"id\":\"abc\",\"count\":12345678,\"tags\":[\"x\"]}".into(),
        "Build 1234567 finished in 3.2s".into(),
    ];
    benign.push(png);
    let mut script = String::new();
    let mut client = Vec::new();
    for (i, b) in benign.iter().enumerate() {
        let qb = q(b);
        script.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"result":{{"content":[{{"type":"text","text":{qb}}}],"meta":{{"id":{qb}}}}}}}"#
        ));
        script.push('\n');
        client.push(format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"t","arguments":{{"q":{qb},"n":{i}}}}}}}"#,
            100 + i
        ));
    }
    let refs: Vec<&str> = client.iter().map(String::as_str).collect();
    let rec = record_script(&script, &session(&refs), &[], &[]);
    let text = rec.text();
    assert!(
        !text.contains("REDACTED"),
        "a look-alike was redacted:\n{}",
        {
            let at = text.find("REDACTED").unwrap_or(0);
            &text[at.saturating_sub(300)..(at + 100).min(text.len())]
        }
    );
    for b in &benign {
        assert!(text.contains(&json_spelling(b)), "{b:?} changed");
    }
}

#[test]
fn cassettes_are_private_files() {
    use std::os::unix::fs::PermissionsExt;
    let rec = record_script("", &session(&[]), &[], &[]);
    let mode = std::fs::metadata(&rec.cassette)
        .expect("cassette")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let out = rec.cassette.with_extension("redacted.jsonl");
    let o = redact_cli(&[rec.cassette.as_os_str(), "-o".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(0));
    let mode = std::fs::metadata(&out).expect("out").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}

/// Replay redacts a live request's echo of a secret an earlier request carried, as `record`
/// did, so the live session matches its recording.
#[test]
fn replay_matches_a_live_echo_of_an_earlier_secret() {
    let secret = "Zz9-echo-secret-0001";
    let login = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"login","arguments":{{"password":"{secret}"}}}}}}"#
    );
    let echo = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"note","arguments":{{"text":"remember {secret}"}}}}}}"#
    );
    let script = concat!(
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"logged in"}]}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"noted"}]}}"#,
        "\n"
    );
    let client = session(&[&login, &echo]);
    let rec = record_script(script, &client, &[], &[]);
    assert_no_leak(&rec.cassette, &[secret]);
    let mut child = Command::new(bin())
        .arg("replay")
        .arg(&rec.cassette)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("replay spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(client.as_bytes())
        .expect("requests written");
    let out = child.wait_with_output().expect("replay ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("logged in") && stdout.contains("noted"),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
