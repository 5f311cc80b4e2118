//! Unit tests of the public redaction API.

use serde_json::{Value, json};

use super::*;

const GITHUB: &str = "ghp_NOTAREALTOKENFORTESTSONLY0000000000";
const AWS: &str = "AKIANOTAREALKEYXXX00";
const JWT: &str = "eyJhbGciOiJub25lIn0.eyJub3RlIjoiTk9ULUEtUkVBTC1KV1QifQ.NOT-A-REAL-SIGNATURE";

fn frame(text: &str) -> Frame {
    Frame::parse(text).unwrap()
}

fn redact_text_frame(r: &Redactor, text: &str) -> (String, usize) {
    match r.redact_frame(&frame(text)) {
        Some((f, n)) => (f.text().to_owned(), n),
        None => (text.to_owned(), 0),
    }
}

fn is_ph(v: &Value) -> bool {
    v.as_str().is_some_and(is_placeholder)
}

#[test]
fn frame_without_secrets_is_untouched() {
    let r = Redactor::builtin();
    let f = frame(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}"#,
    );
    assert!(r.redact_frame(&f).is_none());
    // A trigger word alone does not change anything either.
    let f = frame(
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"the token is short: abc"}],"_meta":{"progressToken":7}}}"#,
    );
    assert!(r.redact_frame(&f).is_none());
}

#[test]
fn frame_keeps_every_other_byte() {
    let r = Redactor::builtin();
    let text = format!(
        r#"{{"jsonrpc":"2.0", "id":1.0, "method":"tools/call","params":{{"arguments":{{"token": "{GITHUB}", "note":"use {AWS} now", "n": 1e2}}}}}}"#
    );
    let (out, n) = redact_text_frame(&r, &text);
    assert_eq!(n, 2);
    let want = text
        .replace(
            &format!("\"{GITHUB}\""),
            &format!("\"{}\"", placeholder("keyctx", GITHUB)),
        )
        .replace(AWS, &placeholder("aws", AWS));
    assert_eq!(out, want);
}

#[test]
fn key_context() {
    let r = Redactor::builtin();
    let (v, n) = r.redact_value(&json!({
        "password": "hunter2-not-a-known-shape",
        "api_key": "plain-but-sensitive",
        "Authorization": "Basic dXNlcjpwYXNzd29yZA==",
        "credentials": { "secret": "another-opaque-one" },
        "description": "a perfectly innocent sentence",
        "token": "none",
        "secret": "off",
        "list_token": ["aaaaaaaaaa", {"x": "bbbbbbbbbb"}],
        "card_pin": 123456789,
        "password_attempts": 3,
        "token_budget": 4096,
        "pin": 1.5,
        "n": 12345678901_i64,
    }));
    assert!(is_ph(&v["password"]) && is_ph(&v["api_key"]) && is_ph(&v["Authorization"]));
    assert!(is_ph(&v["credentials"]["secret"]));
    assert_eq!(v["description"], "a perfectly innocent sentence");
    assert_eq!(v["token"], "none");
    assert_eq!(v["secret"], "off");
    assert!(is_ph(&v["list_token"][0]));
    assert_eq!(v["list_token"][1]["x"], "bbbbbbbbbb");
    assert_eq!(v["card_pin"], placeholder("keyctx", "123456789"));
    assert_eq!(v["password_attempts"], 3);
    assert_eq!(v["token_budget"], 4096);
    assert_eq!(v["pin"], 1.5);
    assert_eq!(v["n"], 12345678901_i64);
    assert_eq!(n, 6);
}

#[test]
fn number_and_string_forms_agree() {
    let r = Redactor::builtin();
    let (a, _) = redact_text_frame(
        &r,
        r#"{"jsonrpc":"2.0","method":"m","params":{"pin":123456789}}"#,
    );
    let (b, _) = redact_text_frame(
        &r,
        r#"{"jsonrpc":"2.0","method":"m","params":{"pin":"123456789"}}"#,
    );
    assert_eq!(a, b);
    let (big, _) = redact_text_frame(
        &r,
        r#"{"jsonrpc":"2.0","method":"m","params":{"pin":1e21}}"#,
    );
    assert!(
        big.contains(&placeholder("keyctx", "1000000000000000000000")),
        "{big}"
    );
}

#[test]
fn discovery_exception() {
    let r = Redactor::builtin();
    let meta = json!({
        "token_endpoint": "https://auth.example.com/oauth/token",
        "authorization_endpoint": "https://auth.example.com/oauth/authorize",
        "revocation_endpoint": "https://auth.example.com/oauth/revoke",
        "jwks_uri": "https://auth.example.com/.well-known/jwks.json",
    });
    assert_eq!(r.redact_value(&meta), (meta.clone(), 0));
    for (key, value) in [
        ("token_endpoint", JWT),
        ("token_endpoint", "https://user:pa55word@evil.test/token"),
        ("token_endpoint", "ftp://auth.example.com/token"),
        (
            "authorization_endpoint",
            "https://evil.test/?secret=abcdefghij",
        ),
        ("token", "https://auth.example.com/oauth/token"),
    ] {
        let (v, _) = r.redact_value(&json!({ key: value }));
        assert!(is_ph(&v[key]), "{key}: {value}");
    }
}

#[test]
fn escaped_spellings_are_found() {
    let r = Redactor::builtin();
    // `\u0065` spells the `e` of eyJ; `\/` the slashes of a URL.
    let text = r#"{"jsonrpc":"2.0","method":"m","params":{"a":"\u0065yJhbGciOiJub25lIn0.eyJub3RlIjoiTk9ULUEtUkVBTC1KV1QifQ.sig","b":"postgres:\/\/u:pw12345@h\/db","t\u006fken":"abcdefghij"}}"#;
    let (out, n) = redact_text_frame(&r, text);
    assert_eq!(n, 3, "{out}");
    assert!(
        out.contains("[REDACTED:jwt:") && out.contains("[REDACTED:urlcreds:"),
        "{out}"
    );
    assert!(out.contains(&placeholder("keyctx", "abcdefghij")), "{out}");
}

#[test]
fn redaction_is_idempotent() {
    let r = Redactor::builtin();
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"h":"Bearer {JWT}","dsn":"postgres://u:hunter2hunter2@db/app","token":"{GITHUB}","pin":123456789,"t":"{AWS} and {GITHUB}"}}}}"#
    );
    let (once, n) = redact_text_frame(&r, &text);
    assert_eq!(n, 6, "{once}");
    assert!(!once.contains(GITHUB) && !once.contains(AWS) && !once.contains("hunter2"));
    assert!(r.redact_frame(&frame(&once)).is_none(), "{once}");
}

#[test]
fn frame_and_value_agree() {
    let r = Redactor::builtin();
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"h":["Bearer {JWT}",{{"apiKey":12345678}}],"x":"{AWS}","y":"plain"}}}}"#
    );
    let (out, n1) = redact_text_frame(&r, &text);
    let (v, n2) = r.redact_value(&serde_json::from_str(&text).unwrap());
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), v);
    assert_eq!(n1, n2);
}

#[test]
fn raw_lines() {
    let r = Redactor::builtin();
    let line = r#"{"level":"debug","params":{"arguments":{"password":"correct-horse-battery"}},"msg":"login with correct-horse-battery"}"#;
    let (out, n) = r.redact_raw_line(line);
    assert_eq!(n, 1);
    assert_eq!(
        out,
        line.replace(
            "correct-horse-battery",
            &placeholder("keyctx", "correct-horse-battery")
        )
    );
    let hits = r.scan_raw_line(line);
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].rule.as_str(), hits[0].path.as_str()),
        ("keyctx", "params.arguments.password")
    );
    assert!(!hits[0].excerpt.contains("correct"));

    let log = format!("warn: authenticating with {GITHUB}");
    assert_eq!(
        r.redact_raw_line(&log).0,
        format!(
            "warn: authenticating with {}",
            placeholder("github", GITHUB)
        )
    );
    assert_eq!(r.scan_raw_line(&log)[0].path, "raw");
    assert_eq!(r.redact_raw_line("password=correct-horse-battery").1, 0);

    // A secret that needs escaping is found in its escaped spelling, and the line stays JSON.
    let escaped = json!({ "token": "quote\"and\\slash-secret" }).to_string();
    let (out, n) = r.redact_raw_line(&escaped);
    assert_eq!(n, 1);
    assert!(!out.contains("slash-secret"), "{out}");
    assert!(serde_json::from_str::<Value>(&out).is_ok());

    // Numbers are swapped by position; the rest of the line keeps its bytes.
    let numeric = r#"[ {"pin": 123456789, "x": 1.50, "note": "123456789"} ]"#;
    let (out, n) = r.redact_raw_line(numeric);
    assert_eq!(n, 1);
    assert_eq!(
        out,
        numeric.replacen(
            "123456789",
            &format!("\"{}\"", placeholder("keyctx", "123456789")),
            1
        )
    );
    assert_eq!(r.redact_raw_line(&out), (out.clone(), 0));
}

#[test]
fn header_command_and_url() {
    let r = Redactor::builtin();
    let mut h = Header::new(
        "x",
        "2026-01-01T00:00:00.000Z",
        crate::cassette::Transport::Stdio,
    );
    h.set_command(vec![
        "npx".into(),
        "-y".into(),
        "server".into(),
        format!("--token={GITHUB}"),
    ]);
    h.set_url("https://user:s3cr3tpass@api.example.com/mcp");
    assert_eq!(r.redact_header(&mut h), 2);
    let cmd = h.command().unwrap();
    assert_eq!(cmd[..3], ["npx", "-y", "server"]);
    assert_eq!(cmd[3], format!("--token={}", placeholder("github", GITHUB)));
    assert!(
        h.url()
            .unwrap()
            .starts_with("https://user:[REDACTED:urlcreds:")
    );
    assert_eq!(r.redact_header(&mut h), 0);
}

#[test]
fn scan_paths_and_masks() {
    let r = Redactor::builtin();
    let hits = r.scan_frame(&frame(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"arguments":{{"key":"{AWS}","token":"{GITHUB}"}}}}}}"#
    )));
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].rule, "aws");
    assert_eq!(hits[0].path, "params.arguments.key");
    assert_eq!(hits[0].excerpt, "AKIA**************** (20 chars)");
    assert_eq!(hits[1].rule, "keyctx");
    assert_eq!(hits[1].excerpt, "**************** (39 chars)");
}

#[test]
fn config_rules() {
    let cfg = RedactConfig::parse(
        r#"{"patterns":[{"name":"acme","regex":"ACME-[A-Z0-9-]{10,}"}],"keys":["handle"],"allow":["sk-THIS-ONE-IS-PUBLIC-000000","123456789","public-sample-value"]}"#,
        "cfg",
    )
    .unwrap();
    let r = Redactor::with_config(&cfg);
    assert_eq!(r.config_hash().map(str::len), Some(64));
    assert_eq!(Redactor::builtin().config_hash(), None);
    let secret = "ACME-NOT-A-REAL-HOUSE-TOKEN-00000";
    assert_eq!(
        r.redact_text(&format!("{secret} and {secret}")).0,
        format!("{0} and {0}", placeholder("acme", secret))
    );
    assert_eq!(Redactor::builtin().redact_text(secret).1, 0);
    let (v, _) = r.redact_value(&json!({"sessionHandle": "ordinary-looking-value", "handler": "cccccccccccc", "token": "public-sample-value", "pin": 123456789}));
    assert!(is_ph(&v["sessionHandle"]));
    assert_eq!(v["handler"], "cccccccccccc");
    assert_eq!(v["token"], "public-sample-value");
    assert_eq!(v["pin"], 123456789);
    assert_eq!(r.redact_text("sk-THIS-ONE-IS-PUBLIC-000000").1, 0);
    // House format runs before the generic shape.
    let house = RedactConfig::parse(
        r#"{"patterns":[{"name":"house","regex":"sk-HOUSE-[A-Za-z0-9-]{10,}"}]}"#,
        "c",
    )
    .unwrap();
    let theirs = "sk-HOUSE-FORMAT-NOT-A-REAL-KEY-0000";
    assert_eq!(
        Redactor::with_config(&house).redact_text(theirs).0,
        placeholder("house", theirs)
    );
    // A key-only config keeps a prefilter, and it still sees the configured key.
    let keys_only = RedactConfig::parse(r#"{"keys":["handle"]}"#, "c").unwrap();
    let r = Redactor::with_config(&keys_only);
    let (out, n) = redact_text_frame(
        &r,
        r#"{"jsonrpc":"2.0","method":"m","params":{"user_handle":"abcdefghijk"}}"#,
    );
    assert_eq!(n, 1, "{out}");
}

#[test]
fn config_patterns_guarded() {
    let hex = Redactor::with_config(
        &RedactConfig::parse(
            r#"{"patterns":[{"name":"hex","regex":"\\b[0-9a-f]{8}\\b"}]}"#,
            "c",
        )
        .unwrap(),
    );
    let once = hex.redact_text("Bearer NOT-A-REAL-BEARER-TOKEN-0000").0;
    assert!(once.starts_with("Bearer [REDACTED:bearer:"), "{once}");
    assert_eq!(hex.redact_text(&once), (once.clone(), 0));
    let word = Redactor::with_config(
        &RedactConfig::parse(r#"{"patterns":[{"name":"lab","regex":"bearer"}]}"#, "c").unwrap(),
    );
    let once = word.redact_text("Bearer NOT-A-REAL-BEARER-TOKEN-0000").0;
    assert_eq!(word.redact_text(&once), (once.clone(), 0));
    assert!(!once.contains("REDACTED:[REDACTED"));
}

#[test]
fn entries() {
    let r = Redactor::builtin();
    let text = format!(
        "{{\"type\":\"header\",\"cassetteVersion\":2}}\n\
         {{\"type\":\"frame\",\"t\":1,\"dir\":\"c2s\",\"frame\":{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{{\"token\":\"{GITHUB}\"}}}},\"extra\":[1]}}\n\
         {{\"type\":\"chunks\",\"t\":2,\"dir\":\"s2c\",\"id\":1,\"chunks\":[{{\"t\":2,\"frame\":{{\"jsonrpc\":\"2.0\",\"method\":\"n\"}}}},{{\"t\":3,\"frame\":{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"x\":\"{AWS}\"}}}},\"k\":0}}]}}\n\
         {{\"type\":\"raw\",\"t\":3,\"dir\":\"s2c\",\"data\":\"log {AWS}\"}}\n\
         {{\"type\":\"hologram\",\"secret\":\"{GITHUB}\"}}\n"
    );
    let reader = crate::cassette::Reader::new(text.as_bytes(), std::path::Path::new("x")).unwrap();
    let mut total = 0;
    let mut lines = Vec::new();
    for e in reader {
        let mut e = e.unwrap();
        total += r.redact_entry(&mut e);
        lines.push(e.to_line());
    }
    assert_eq!(total, 3);
    assert!(lines[0].ends_with(",\"extra\":[1]}"));
    assert!(lines[0].contains("[REDACTED:keyctx:"));
    assert!(lines[1].contains("[REDACTED:aws:") && lines[1].contains(",\"k\":0}"));
    assert!(lines[2].contains("[REDACTED:aws:"));
    assert!(
        lines[3].contains(GITHUB),
        "unknown entries are carried through untouched"
    );
}

#[test]
fn hash_checks() {
    assert_eq!(check_config_hash(None, None), Ok(()));
    assert_eq!(check_config_hash(Some("a"), Some("a")), Ok(()));
    assert_eq!(
        check_config_hash(Some("a"), Some("b")),
        Err(HashMismatch::Different)
    );
    assert_eq!(
        check_config_hash(Some("a"), None),
        Err(HashMismatch::NotGiven)
    );
    assert_eq!(
        check_config_hash(None, Some("b")),
        Err(HashMismatch::NotRecorded)
    );
    assert!(
        HashMismatch::NotGiven
            .replay_message()
            .contains("recorded with a redaction config this replay was not given")
    );
    assert!(
        HashMismatch::NotRecorded
            .to_string()
            .contains("given a redaction config, but the cassette was recorded without one")
    );
    assert_eq!(HashMismatch::NotRecorded.redact_message(), None);
}

#[test]
fn hostile_input_is_bounded() {
    let r = Redactor::builtin();
    let deep = format!("{}\"{GITHUB}\"{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(r.redact_raw_line(&deep).1, 1);
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{{"t":"{}eyJ{}"}}}}"#,
        "x".repeat(1 << 20),
        "a-".repeat(1 << 19)
    );
    let start = std::time::Instant::now();
    let _ = r.redact_frame(&frame(&big));
    assert!(start.elapsed().as_secs() < 5);
}
