//! `redact`: `-o`, `--scan`, `--redact-config`, `--check-config`, through the real binary, on
//! cassettes written to a temporary directory and on copies of the shared reference fixtures.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

const GITHUB: &str = "ghp_NOTAREALTOKENFORTESTSONLY0000000000";
const AWS: &str = "AKIANOTAREALKEYXXX00";
const HOUSE: &str = "ACME-NOT-A-REAL-HOUSE-TOKEN-00000";
const ACME: &str = r#"{"patterns":[{"name":"acme","regex":"ACME-[A-Z0-9-]{10,}"}]}"#;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-cassette")
}

fn redact(args: &[&str]) -> Output {
    Command::new(bin())
        .arg("redact")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-cassette")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn sha(path: &Path) -> String {
    Sha256::digest(fs::read(path).expect("read"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"mcp-cassette@test","startedAt":"2026-10-09T00:00:00.000Z","transport":"stdio","command":["npx","-y","server","--token=ghp_NOTAREALTOKENFORTESTSONLY0000000000"],"redaction":{"applied":false}}"#;

fn frame(t: u64, dir: &str, frame: Value) -> String {
    json!({"type": "frame", "t": t, "dir": dir, "frame": frame}).to_string()
}

/// A cassette with secrets in every place a cassette can hold them.
fn secret_cassette() -> String {
    let lines = [
        HEADER.to_owned(),
        frame(1, "c2s", json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"token":GITHUB,"text":"hi"}}})),
        frame(2, "s2c", json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":format!("key {AWS}")}]}})),
        // A server-initiated request with the same id, answered by the client.
        frame(3, "s2c", json!({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[]}})),
        frame(4, "c2s", json!({"jsonrpc":"2.0","id":1,"result":{"note":format!("Bearer {GITHUB}")}})),
        json!({"type":"chunks","t":5,"dir":"s2c","id":1,"future":true,"chunks":[{"t":5,"frame":{"jsonrpc":"2.0","id":1,"result":{"x":AWS}},"k":1}]}).to_string(),
        json!({"type":"raw","t":6,"dir":"s2c","data":format!("{{\"password\":\"correct-horse-battery\",\"msg\":\"login with {AWS}\"}}")}).to_string(),
        json!({"type":"hologram","t":7,"dir":"s2c","payload":GITHUB}).to_string(),
        frame(8, "c2s", json!({"jsonrpc":"2.0","method":"notifications/initialized","params":{"pin":123456789}})),
    ];
    format!("{}\n", lines.join("\n"))
}

fn write(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    fs::write(&path, text).expect("write");
    path
}

#[test]
fn scan_reports_every_hit_masked_with_paired_methods() {
    let dir = TempDir::new().unwrap();
    let input = write(&dir, "in.jsonl", &secret_cassette());
    let before = sha(&input);
    let out = redact(&[p(&input), "--scan"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let report = stdout(&out);
    let want = [
        "[github] header command[3]: ghp_**************** (39 chars)",
        "[keyctx] c2s tools/call params.arguments.token: **************** (39 chars)",
        "[aws] s2c tools/call result.content[0].text: AKIA**************** (20 chars)",
        "[bearer] c2s sampling/createMessage result.note: **************** (39 chars)",
        "[aws] s2c result.x: AKIA**************** (20 chars)",
        "[keyctx] s2c password: **************** (21 chars)",
        "[aws] s2c raw: AKIA**************** (20 chars)",
        "[keyctx] c2s notifications/initialized params.pin: ********* (9 chars)",
        "result: FOUND (8 secret(s) detected)",
    ];
    assert_eq!(report.lines().collect::<Vec<_>>(), want, "{report}");
    assert!(!report.contains("NOTAREAL") && !report.contains("correct-horse"));
    assert!(
        stderr(&out).contains("skipping unknown cassette entry type \"hologram\""),
        "{}",
        stderr(&out)
    );
    // It writes nothing.
    assert_eq!(sha(&input), before);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn write_redacts_everything_carries_the_rest_and_is_idempotent() {
    let dir = TempDir::new().unwrap();
    let input = write(&dir, "in.jsonl", &secret_cassette());
    let before = sha(&input);
    let once = dir.path().join("once.jsonl");
    let out = redact(&[p(&input), "-o", p(&once)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("wrote {} (8 secrets redacted)\n", once.display())
    );
    assert_eq!(sha(&input), before, "the input is never touched");
    let text = fs::read_to_string(&once).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines[0].contains("NOTAREAL"));
    let header: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(header["redaction"], json!({"applied": true}));
    assert!(
        header["command"][3]
            .as_str()
            .unwrap()
            .starts_with("--token=[REDACTED:github:")
    );
    // Unknown members and unknown entries ride along; the unknown entry is not redacted.
    assert!(lines[5].contains("\"future\":true") && lines[5].contains("\"k\":1"));
    assert!(lines[7].contains(GITHUB), "{}", lines[7]);
    for (i, line) in lines.iter().enumerate().filter(|(i, _)| *i != 7) {
        assert!(
            !line.contains("NOTAREAL") && !line.contains("correct-horse"),
            "line {i}: {line}"
        );
    }
    // The raw line keeps its bytes around the secrets.
    let raw: Value = serde_json::from_str(lines[6]).unwrap();
    let data = raw["data"].as_str().unwrap();
    assert!(
        data.starts_with("{\"password\":\"[REDACTED:keyctx:"),
        "{data}"
    );
    assert!(
        data.ends_with(",\"msg\":\"login with [REDACTED:aws:")
            || data.contains(",\"msg\":\"login with [REDACTED:aws:")
    );
    // A second pass is byte-identical and finds nothing.
    let twice = dir.path().join("twice.jsonl");
    let out = redact(&[p(&once), "-o", p(&twice)]);
    assert_eq!(
        stdout(&out),
        format!("wrote {} (0 secrets redacted)\n", twice.display())
    );
    assert_eq!(fs::read(&once).unwrap(), fs::read(&twice).unwrap());
    let scan = redact(&[p(&once), "--scan"]);
    assert_eq!(code(&scan), 0);
    assert_eq!(stdout(&scan), "result: CLEAN (0 secrets detected)\n");
}

#[test]
fn output_naming_the_input_rewrites_it_in_place() {
    let dir = TempDir::new().unwrap();
    let input = write(&dir, "in.jsonl", &secret_cassette());
    // The same file under another spelling, as the reference rewrites it: atomically.
    let sneaky = format!("{}/./in.jsonl", dir.path().display());
    let out = redact(&[p(&input), "-o", &sneaky]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!fs::read_to_string(&input).unwrap().contains("AKIANOT"));
    // `--in-place` is still accepted, and a second pass changes nothing.
    let before = sha(&input);
    let out = redact(&[p(&input), "-o", p(&input), "--in-place"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(sha(&input), before);
    // No temporary file is left beside it.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn bad_input_fails_cleanly_and_leaves_nothing() {
    let dir = TempDir::new().unwrap();
    let mut text = secret_cassette();
    text.push_str("{\"type\":\"frame\",\"t\":9,\"dir\":\"c2s\",\"frame\":{\"jsonrpc\":");
    let input = write(&dir, "cut.jsonl", &text);
    let before = sha(&input);
    let target = dir.path().join("out.jsonl");
    let out = redact(&[p(&input), "-o", p(&target)]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.starts_with("redact failed: "), "{err}");
    assert!(err.contains("cut.jsonl:10: not valid JSON"), "{err}");
    assert!(err.contains("cut short"), "{err}");
    assert!(!target.exists());
    assert_eq!(sha(&input), before);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
    let out = redact(&[p(&input), "--scan"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "", "no partial report");

    let missing = redact(&[p(&dir.path().join("nope.jsonl")), "--scan"]);
    assert_eq!(code(&missing), 2);
    assert!(stderr(&missing).starts_with("redact failed: "));
}

#[test]
fn a_failed_rename_leaves_no_temporary_file() {
    let dir = TempDir::new().unwrap();
    let input = write(&dir, "in.jsonl", &secret_cassette());
    // A non-empty directory at -o: everything is written beside it, and the rename fails.
    let target = dir.path().join("out.jsonl");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), "x").unwrap();
    let out = redact(&[p(&input), "-o", p(&target)]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("redact failed: failed to write {}: ", p(&target))),
        "{err}"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file left"
    );
    assert!(target.join("keep").is_file());
}

#[test]
fn a_megabyte_string_is_just_a_string() {
    let dir = TempDir::new().unwrap();
    let big = format!("{}{AWS}", "word ".repeat(200_000));
    let text = format!(
        "{HEADER}\n{}\n",
        frame(
            1,
            "s2c",
            json!({"jsonrpc":"2.0","id":1,"result":{"text":big}})
        )
    );
    let input = write(&dir, "big.jsonl", &text);
    let target = dir.path().join("out.jsonl");
    let out = redact(&[p(&input), "-o", p(&target)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("(2 secrets redacted)"));
    let written = fs::read_to_string(&target).unwrap();
    assert!(!written.contains(AWS) && written.contains("[REDACTED:aws:"));
}

#[test]
fn usage_table() {
    let dir = TempDir::new().unwrap();
    let input = write(&dir, "in.jsonl", &secret_cassette());
    let cfg = write(&dir, "cfg.json", ACME);
    let cases: [(&[&str], &str, i32); 6] = [
        (
            &[],
            "redact: pass a cassette, or --check-config with --redact-config\n",
            1,
        ),
        (
            &[p(&input)],
            "redact: pass -o <file> to write a redacted cassette, or --scan to audit\n",
            2,
        ),
        (
            &[p(&input), "--scan", "-o", "x.jsonl"],
            "redact: --scan writes nothing. Drop -o, or drop --scan\n",
            2,
        ),
        (
            &["--check-config"],
            "redact --check-config: pass --redact-config <file>, there is nothing else to check\n",
            2,
        ),
        (
            &[p(&input), "--check-config", "--redact-config", p(&cfg)],
            "redact: --check-config reads the config and writes nothing. Drop the cassette, --scan and -o, or drop --check-config\n",
            2,
        ),
        (
            &["--scan", "--check-config", "--redact-config", p(&cfg)],
            "redact: --check-config reads the config and writes nothing. Drop the cassette, --scan and -o, or drop --check-config\n",
            2,
        ),
    ];
    for (args, message, exit) in cases {
        let out = redact(args);
        assert_eq!(stderr(&out), message, "{args:?}");
        assert_eq!(code(&out), exit, "{args:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
}

#[test]
fn check_config_proves_patterns_without_anything_external() {
    let dir = TempDir::new().unwrap();
    let cfg = write(
        &dir,
        "cfg.json",
        r#"{"patterns":[{"name":"acme","regex":"ACME-[A-Z0-9-]{10,}"},{"name":"slow","regex":"(a+)+$"}]}"#,
    );
    let out = redact(&["--redact-config", p(&cfg), "--check-config"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = stdout(&out);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 3, "{report}");
    assert!(lines[0].starts_with("acme  safe        linear"), "{report}");
    assert!(lines[1].starts_with("slow  safe        linear"), "{report}");
    assert_eq!(
        lines[2],
        "result: 2 patterns proven free of super-linear blowup"
    );
    let keys_only = write(&dir, "keys.json", r#"{"keys":["handle"]}"#);
    let out = redact(&["--redact-config", p(&keys_only), "--check-config"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stdout(&out),
        "redact --check-config: the config declares no patterns, so there is nothing to analyse\n"
    );
    // A JavaScript pattern that needs backtracking is refused, naming the construct.
    let look = write(
        &dir,
        "look.json",
        r#"{"patterns":[{"name":"ctx","regex":"(?<=x)a+"}]}"#,
    );
    let out = redact(&["--redact-config", p(&look), "--check-config"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "redact failed: mcp-cassette: {}: patterns[0] regex does not compile: it uses a look-behind",
            look.display()
        )),
        "{err}"
    );
    assert!(err.contains("linear-time"), "{err}");
}

#[test]
fn bad_configs_name_the_file_and_field() {
    let dir = TempDir::new().unwrap();
    let input = write(&dir, "in.jsonl", &secret_cassette());
    let before = sha(&input);
    let target = dir.path().join("out.jsonl");
    let cases = [
        ("notjson.json", "{ nope", "is not valid JSON: "),
        (
            "unknown.json",
            r#"{"paterns":[]}"#,
            ": unknown field \"paterns\" (expected \"patterns\", \"keys\" or \"allow\")",
        ),
        (
            "nocompile.json",
            r#"{"patterns":[{"name":"x","regex":"(["}]}"#,
            ": patterns[0] regex does not compile: ",
        ),
        (
            "upper.json",
            r#"{"patterns":[{"name":"ACME","regex":"x"}]}"#,
            ": patterns[0] name \"ACME\" must be lowercase letters only, because it is written into the placeholder",
        ),
        (
            "empty.json",
            r#"{"patterns":[{"name":"x","regex":"a*"}]}"#,
            ": patterns[0] regex matches the empty string, so it would redact every position of every value",
        ),
    ];
    for (name, body, fragment) in cases {
        let cfg = write(&dir, name, body);
        let out = redact(&[p(&input), "-o", p(&target), "--redact-config", p(&cfg)]);
        assert_eq!(code(&out), 2, "{name}");
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("redact failed: mcp-cassette: {}", cfg.display())),
            "{name}: {err}"
        );
        assert!(err.contains(fragment), "{name}: {err}");
        assert!(!target.exists());
    }
    let missing = redact(&[
        p(&input),
        "--scan",
        "--redact-config",
        p(&dir.path().join("none.json")),
    ]);
    assert!(
        stderr(&missing)
            .starts_with("redact failed: mcp-cassette: cannot read the redaction config "),
        "{}",
        stderr(&missing)
    );
    assert_eq!(sha(&input), before);
}

#[test]
fn diagnostics_never_print_a_secret() {
    let dir = TempDir::new().unwrap();
    let cfg = write(&dir, "leaky.json", &format!(r#"{{"{GITHUB}":1}}"#));
    let out = redact(&["--redact-config", p(&cfg), "--check-config"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("unknown field \"[REDACTED:github:"), "{err}");
    assert!(!err.contains(GITHUB), "{err}");
    // A pattern that does not compile is not quoted back either.
    let cfg = write(
        &dir,
        "quoted.json",
        &format!(r#"{{"patterns":[{{"name":"x","regex":"{HOUSE}(["}}]}}"#),
    );
    let err = stderr(&redact(&["--redact-config", p(&cfg), "--check-config"]));
    assert!(!err.contains(HOUSE), "{err}");
}

#[test]
fn config_hash_travels_and_guards_reredaction() {
    let dir = TempDir::new().unwrap();
    let text = format!(
        "{HEADER}\n{}\n",
        frame(
            1,
            "c2s",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"note":HOUSE,"handle":"ordinary-looking-value"}}})
        )
    );
    let input = write(&dir, "in.jsonl", &text);
    let cfg = write(&dir, "acme.json", ACME);
    let other = write(
        &dir,
        "other.json",
        r#"{"patterns":[{"name":"other","regex":"OTHER-[A-Z0-9-]{10,}"}],"keys":["handle"]}"#,
    );
    // Built-ins alone do not see the house secret.
    let scan = redact(&[p(&input), "--scan"]);
    assert_eq!(
        stdout(&scan).lines().last(),
        Some("result: FOUND (1 secret(s) detected)")
    );
    let scan = redact(&[p(&input), "--scan", "--redact-config", p(&cfg)]);
    assert!(
        stdout(&scan)
            .contains("[acme] c2s tools/call params.arguments.note: **************** (33 chars)"),
        "{}",
        stdout(&scan)
    );
    let once = dir.path().join("once.jsonl");
    let out = redact(&[p(&input), "-o", p(&once), "--redact-config", p(&cfg)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let written = fs::read_to_string(&once).unwrap();
    assert!(!written.contains(HOUSE) && written.contains("[REDACTED:acme:"));
    let header: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    let hash = header["redaction"]["configHash"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(hash.len(), 64);
    // Same config again: a no-op that keeps the hash.
    let twice = dir.path().join("twice.jsonl");
    let out = redact(&[p(&once), "-o", p(&twice), "--redact-config", p(&cfg)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(fs::read(&once).unwrap(), fs::read(&twice).unwrap());
    // No config, or another one: refused, nothing written.
    let refused = dir.path().join("refused.jsonl");
    let out = redact(&[p(&once), "-o", p(&refused)]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "redact failed: mcp-cassette: this cassette was redacted under a --redact-config and none was given; pass the same file the recording used, or re-record without one\n"
    );
    let out = redact(&[p(&once), "-o", p(&refused), "--redact-config", p(&other)]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "redact failed: mcp-cassette: this cassette was redacted under a different --redact-config than the one given; pass the file the recording used\n"
    );
    assert!(!refused.exists());
}

#[test]
fn a_large_report_arrives_whole_through_a_pipe() {
    let dir = TempDir::new().unwrap();
    let mut text = format!("{HEADER}\n");
    for i in 0..4000 {
        text.push_str(&frame(
            i,
            "s2c",
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"data":format!("{AWS}")}}),
        ));
        text.push('\n');
    }
    let input = write(&dir, "many.jsonl", &text);
    let mut child = Command::new(bin())
        .args(["redact", p(&input), "--scan"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut report = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut report)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 4002);
    assert_eq!(lines[4001], "result: FOUND (4001 secret(s) detected)");
    assert!(lines[1].starts_with("[aws] s2c notifications/message params.data: AKIA"));
}

#[test]
fn reference_fixtures_pass_through_unchanged() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference");
    let dir = TempDir::new().unwrap();
    let mut seen = 0;
    for group in ["corpus-0.4", "reference-0.4", "reference-0.8"] {
        let Ok(listing) = fs::read_dir(fixtures.join(group)) else {
            continue;
        };
        for file in listing.flatten() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            seen += 1;
            let before = sha(&path);
            let copy = dir.path().join("copy.jsonl");
            fs::copy(&path, &copy).unwrap();
            let scan = redact(&[p(&copy), "--scan"]);
            assert_eq!(
                stdout(&scan),
                "result: CLEAN (0 secrets detected)\n",
                "{}",
                path.display()
            );
            let target = dir.path().join("out.jsonl");
            let out = redact(&[p(&copy), "-o", p(&target)]);
            assert_eq!(code(&out), 0, "{}: {}", path.display(), stderr(&out));
            // Redacted recordings come out byte for byte; others change only the header.
            let a = fs::read_to_string(&copy).unwrap();
            let b = fs::read_to_string(&target).unwrap();
            let skip_header = |s: &str| s.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
            assert_eq!(skip_header(&a), skip_header(&b), "{}", path.display());
            if a.lines()
                .next()
                .unwrap_or("")
                .contains("\"redaction\":{\"applied\":true}")
            {
                assert_eq!(a, b, "{}", path.display());
            }
            assert_eq!(sha(&path), before, "the shared fixture is never modified");
        }
    }
    assert!(seen >= 5, "found {seen} fixture cassettes");
}

/// A user pattern that also matches envelope text (here every `a`, `b` and `c`, so the
/// `jsonrpc` key and `params` too) once made the redacted frame unreadable as JSON-RPC, and the
/// original frame, secrets and all, was written instead. The envelope is kept and everything
/// else is redacted, a renamed sensitive key's value included; a second pass changes nothing.
#[test]
fn a_pattern_that_matches_the_envelope_still_redacts_the_frame() {
    let dir = TempDir::new().expect("tempdir");
    let cfg = write(
        &dir,
        "cfg.json",
        r#"{"patterns":[{"name":"letters","regex":"[a-c]+"}]}"#,
    );
    let input = write(
        &dir,
        "in.jsonl",
        &format!(
            "{HEADER}\n{}\n",
            frame(
                1,
                "c2s",
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"text":"abc def","password":"hunter-two-xyz"}}})
            )
        ),
    );
    let once = dir.path().join("once.jsonl");
    let out = redact(&[p(&input), "--redact-config", p(&cfg), "-o", p(&once)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let written = fs::read_to_string(&once).expect("read");
    let line: Value =
        serde_json::from_str(written.lines().nth(1).expect("frame line")).expect("json");
    let frame = &line["frame"];
    assert_eq!(frame["jsonrpc"], "2.0", "{written}");
    assert_eq!(frame["id"], 1, "{written}");
    assert!(!written.contains("abc def"), "the secret stayed: {written}");
    // The pattern renames `password` too; its value is still taken whole by key context.
    assert!(
        !written.contains("hunter-two-xyz"),
        "the password stayed: {written}"
    );
    assert!(written.contains("[REDACTED:keyctx:"), "{written}");
    assert!(frame["params"].is_object(), "{written}");
    let twice = dir.path().join("twice.jsonl");
    let out = redact(&[p(&once), "--redact-config", p(&cfg), "-o", p(&twice)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(written, fs::read_to_string(&twice).expect("read"));
}

/// A user pattern that cuts into a built-in's match (`r` inside `Bearer`, or letters inside the
/// token) once left the token in clear while `--scan` called the file clean.
#[test]
fn a_user_pattern_cannot_break_a_builtin_match() {
    let token = "tok3nNOTAREALBEARER0000000000";
    let dir = TempDir::new().expect("tempdir");
    let cfg = write(
        &dir,
        "cfg.json",
        r#"{"patterns":[{"name":"letter","regex":"r|[a-z]]","flags":"i"}]}"#,
    );
    let text = format!("curl -H 'Authorization: Bearer {token}' https://example.com");
    let input = write(
        &dir,
        "in.jsonl",
        &format!(
            "{HEADER}\n{}\n",
            frame(
                1,
                "s2c",
                json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":text}]}})
            )
        ),
    );
    let once = dir.path().join("once.jsonl");
    let out = redact(&[p(&input), "--redact-config", p(&cfg), "-o", p(&once)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let written = fs::read_to_string(&once).expect("read");
    assert!(!written.contains("NOTAREAL"), "the token stayed: {written}");
    assert!(written.contains("[REDACTED:bearer:"), "{written}");
    let twice = dir.path().join("twice.jsonl");
    let out = redact(&[p(&once), "--redact-config", p(&cfg), "-o", p(&twice)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(written, fs::read_to_string(&twice).expect("read"));
}
