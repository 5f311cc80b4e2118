//! `snapshot`: writing, refusing to overwrite, `--check` in every tier, the reference's
//! snapshot files, bad input, and a real Python SDK (Pydantic) server whose contract lives
//! under `$defs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::fixtures::fixture_server;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-cassette")
}

/// The reference's files, vendored under `tests/fixtures/reference` (`rel` starts with
/// `fixtures/`). Always present: a missing one fails the test rather than skipping it.
fn shared(rel: &str) -> PathBuf {
    let rel = rel.strip_prefix("fixtures/").unwrap_or(rel);
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference")
        .join(rel);
    assert!(p.is_file(), "reference fixture missing: {}", p.display());
    p
}

/// `--stdio` string for a fixture server mode (paths quoted: the tokenizer honours quotes).
fn tiny() -> String {
    format!("\"{}\" tiny", fixture_server().display())
}

fn snapshot(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("snapshot").args(args).current_dir(cwd);
    for var in [
        "TINY_EVIL",
        "TINY_V2",
        "TINY_POISONED",
        "TINY_SURFACES",
        "TINY_SECRETS",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run mcp-cassette snapshot")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn without_captured_at(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("\"capturedAt\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn write_update_and_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let o = snapshot(dir.path(), &["--stdio", &tiny()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "wrote mcp-contract.snapshot.json (3 tools)\n");
    let written = std::fs::read_to_string(dir.path().join("mcp-contract.snapshot.json")).unwrap();
    assert!(written.ends_with("}\n"));
    // Byte for byte what the reference wrote for the same server, apart from the time.
    let reference =
        std::fs::read_to_string(shared("fixtures/reference-0.4/tiny-server.snapshot.json"))
            .unwrap();
    assert_eq!(
        without_captured_at(&written),
        without_captured_at(&reference)
    );
    let o = snapshot(dir.path(), &["--stdio", &tiny()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("snapshot: mcp-contract.snapshot.json already exists. Use --check to compare or --update to overwrite"),
        "{}",
        stderr(&o)
    );
    let o = snapshot(
        dir.path(),
        &[
            "--update",
            "-f",
            "mcp-contract.snapshot.json",
            "--stdio",
            &tiny(),
        ],
        &[("TINY_V2", "1")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "wrote mcp-contract.snapshot.json (2 tools)\n");
}

#[test]
fn a_directory_in_the_snapshots_place_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A non-empty directory where the snapshot goes: refused before the server starts, and
    // no temporary file is left beside it.
    let taken = dir.path().join("mcp-contract.snapshot.json");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("keep"), "x").unwrap();
    let o = snapshot(dir.path(), &["--update", "--stdio", &tiny()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("snapshot failed: -f mcp-contract.snapshot.json is a directory"),
        "{}",
        stderr(&o)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        ["mcp-contract.snapshot.json"],
        "no temporary file left"
    );
    assert!(taken.join("keep").is_file());
}

#[test]
fn check_unchanged_and_every_tier() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        snapshot(dir.path(), &["--stdio", &tiny()], &[])
            .status
            .code(),
        Some(0)
    );
    let o = snapshot(dir.path(), &["--check", "--stdio", &tiny()], &[]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "[OK] contract unchanged\n")
    );

    let o = snapshot(
        dir.path(),
        &["--check", "--stdio", &tiny()],
        &[("TINY_V2", "1")],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "[BREAKING] slugify: tool removed (tool-removed)\n\
         [BREAKING] add: parameter \"precision\" is now required (input-property-became-required)\n\
         [BREAKING] add: parameter \"precision\" added (required) (input-property-added-required)\n\
         [DANGEROUS] add: parameter \"mode\" added (input-property-added-optional)\n\
         \n\
         result: FAIL (3 breaking, 1 dangerous, 0 minor, 0 info; gate: breaking)\n"
    );

    let o = snapshot(
        dir.path(),
        &[
            "--check",
            "--json",
            "--fail-on",
            "dangerous",
            "--stdio",
            &tiny(),
        ],
        &[("TINY_V2", "1")],
    );
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["failOn"], "dangerous");
    assert_eq!(
        doc["counts"],
        serde_json::json!({"breaking": 3, "dangerous": 1, "minor": 0, "info": 0})
    );
    let rules: Vec<&str> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "tool-removed",
            "input-property-became-required",
            "input-property-added-optional",
            "input-property-added-required"
        ]
    );
    assert_eq!(
        doc["changes"][0],
        serde_json::json!({"kind": "breaking", "rule": "tool-removed", "subject": "slugify", "message": "tool removed"})
    );

    // Additions only: minor, passes at either gate.
    let v2 = tempfile::tempdir().unwrap();
    assert_eq!(
        snapshot(v2.path(), &["--stdio", &tiny()], &[("TINY_V2", "1")])
            .status
            .code(),
        Some(0)
    );
    let o = snapshot(
        v2.path(),
        &["--check", "--fail-on", "dangerous", "--stdio", &tiny()],
        &[],
    );
    let text = stdout(&o);
    assert!(
        text.contains("[MINOR] slugify: tool added (tool-added)"),
        "{text}"
    );
    assert!(text.contains("[MINOR] add: parameter \"precision\" is no longer required (input-property-became-optional)"), "{text}");
    assert!(
        text.contains("[BREAKING] add: parameter \"mode\" removed (input-property-removed)"),
        "{text}"
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn reads_the_reference_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    for (name, expect_code, expect) in [
        ("tiny-server.snapshot.json", 0, "[OK] contract unchanged\n"),
        (
            "tiny-server-evil.snapshot.json",
            1,
            "[BREAKING] broken: tool removed (tool-removed)\n[BREAKING] get_weather: tool removed (tool-removed)\n",
        ),
    ] {
        let path = shared(&format!("fixtures/reference-0.4/{name}"));
        let o = snapshot(
            dir.path(),
            &["--check", "-f", path.to_str().unwrap(), "--stdio", &tiny()],
            &[],
        );
        assert_eq!(o.status.code(), Some(expect_code), "{name}: {}", stderr(&o));
        assert!(stdout(&o).starts_with(expect), "{name}: {}", stdout(&o));
    }
    // The evil server against the evil snapshot: unchanged.
    let path = shared("fixtures/reference-0.4/tiny-server-evil.snapshot.json");
    let o = snapshot(
        dir.path(),
        &["--check", "-f", path.to_str().unwrap(), "--stdio", &tiny()],
        &[("TINY_EVIL", "1")],
    );
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "[OK] contract unchanged\n"),
        "{}",
        stderr(&o)
    );
    // A 13-tool snapshot of another server reads fine and reports every tool removed.
    let path = shared("fixtures/reference-0.4/everything.snapshot.json");
    let o = snapshot(
        dir.path(),
        &[
            "--check",
            "--json",
            "-f",
            path.to_str().unwrap(),
            "--stdio",
            &tiny(),
        ],
        &[],
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Twelve removed, and `echo` (in both) changed root keywords (`$schema`), unclassified.
    assert_eq!(doc["counts"]["breaking"], 13, "{doc}");
    let last = &doc["changes"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["rule"].as_str(), last["subject"].as_str()),
        (Some("input-schema-changed-unclassified"), Some("echo"))
    );
}

#[test]
fn missing_and_bad_snapshots_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = snapshot(
        dir.path(),
        &["--check", "-f", "nope.json", "--stdio", &tiny()],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "snapshot --check: no snapshot at nope.json (run snapshot first)\n"
    );

    let cases: [(&str, String, &str); 3] = [
        (
            "garbage.json",
            "this is not json".to_owned(),
            "snapshot failed: garbage.json is not a JSON contract snapshot",
        ),
        (
            "newer.json",
            "{\"mcpCassetteContract\": 2, \"tools\": []}".to_owned(),
            "snapshot failed: Unsupported contract snapshot version in newer.json",
        ),
        (
            "deep.json",
            format!(
                "{{\"mcpCassetteContract\":1,\"tools\":[{{\"name\":\"x\",\"inputSchema\":{}0{}}}]}}",
                "{\"a\":".repeat(10_000),
                "}".repeat(10_000)
            ),
            "snapshot failed: deep.json nests JSON deeper than 128 levels",
        ),
    ];
    for (name, text, expect) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let o = snapshot(
            dir.path(),
            &["--check", "-f", name, "--stdio", &tiny()],
            &[],
        );
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(stderr(&o).starts_with(expect), "{name}: {}", stderr(&o));
    }
    let o = snapshot(dir.path(), &["--fail-on", "minor", "--stdio", &tiny()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "snapshot failed: --fail-on must be \"breaking\" or \"dangerous\" (got \"minor\")\n"
    );
    let o = snapshot(dir.path(), &[], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "snapshot failed: missing target: pass --stdio \"<command>\" or --url <http-url>\n"
    );
}

#[test]
fn a_server_with_a_ten_thousand_deep_schema_is_refused_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("\"{}\" deep-schema", fixture_server().display());
    let o = snapshot(dir.path(), &["--stdio", &deep], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("snapshot failed:"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(!dir.path().join("mcp-contract.snapshot.json").exists());
}

/// The Python SDK server from the interop venv (tests using it are `#[ignore]`d: see
/// `interop::require_installed`).
fn pydantic_server() -> String {
    crate::interop::require_installed();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("interop/.venv/bin/python");
    let script = root.join("interop/python/pydantic_server.py");
    format!("\"{}\" \"{}\"", python.display(), script.display())
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn pydantic_defs_change_fails_the_gate() {
    let server = pydantic_server();
    let dir = tempfile::tempdir().unwrap();
    let o = snapshot(dir.path(), &["--stdio", &server], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("mcp-contract.snapshot.json")).unwrap(),
    )
    .unwrap();
    let register = &written["tools"][1];
    assert_eq!(register["name"], "register");
    assert_eq!(
        register["inputSchema"]["properties"]["user"]["$ref"], "#/$defs/User",
        "{register}"
    );

    let o = snapshot(dir.path(), &["--check", "--stdio", &server], &[]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "[OK] contract unchanged\n"),
        "{}",
        stderr(&o)
    );

    // Only a $defs member changes (User.age: integer → string): the gate fails.
    let o = snapshot(
        dir.path(),
        &["--check", "--stdio", &server],
        &[("PYDANTIC_SERVER_DEFS_CHANGE", "1")],
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "[BREAKING] register: inputSchema changed and uses $ref: reference resolution is not implemented, so the change is unclassified and treated as breaking (input-schema-ref-unclassified)\n\
         \n\
         result: FAIL (1 breaking, 0 dangerous, 0 minor, 0 info; gate: breaking)\n"
    );

    // The same, with a root relaxation beside it: the relaxation is reported and still does not
    // hide the change behind the reference.
    let o = snapshot(
        dir.path(),
        &["--check", "--json", "--stdio", &server],
        &[
            ("PYDANTIC_SERVER_DEFS_CHANGE", "1"),
            ("PYDANTIC_SERVER_RELAX", "1"),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rules: Vec<&str> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"input-property-became-optional"),
        "{rules:?}"
    );
    assert!(
        rules.contains(&"input-schema-ref-unclassified"),
        "{rules:?}"
    );
}
