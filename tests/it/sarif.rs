//! `check --format sarif`: the document validates against the OASIS SARIF 2.1.0 schema, its
//! results anchor to the snapshot's tool lines, the server script, or nothing (with the
//! warning), and a bad `--sarif-location` is refused.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::fixtures::fixture_server;

fn check(cwd: &Path, command: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-cassette"));
    cmd.args(["check", "--format", "sarif", "--stdio", command])
        .args(extra)
        .current_dir(cwd);
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
    cmd.output().expect("run mcp-cassette check")
}

fn tiny() -> String {
    format!("\"{}\" tiny", fixture_server().display())
}

/// Parses the document and validates it against the vendored schema.
fn valid_sarif(o: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&o.stdout).expect("SARIF is JSON");
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif/sarif-schema-2.1.0.json");
    match std::fs::read_to_string(&schema_path) {
        Ok(text) => {
            let schema: Value = serde_json::from_str(&text).unwrap();
            let validator = jsonschema::draft4::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&doc)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "SARIF invalid: {errors:#?}");
        }
        Err(e) => panic!("SARIF schema {}: {e}", schema_path.display()),
    }
    doc
}

fn anchors(doc: &Value) -> Vec<(String, String, Option<u64>)> {
    doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let loc = &r["locations"][0];
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                loc["logicalLocations"][0]["fullyQualifiedName"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                loc["physicalLocation"]["region"]["startLine"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn anchored_to_the_tools_lines_in_the_snapshot() {
    let Some(evil) = Some(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference/reference-0.4/tiny-server-evil.snapshot.json"),
    )
    .filter(|p| p.is_file()) else {
        panic!("reference fixture tiny-server-evil.snapshot.json is missing");
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&evil, dir.path().join("mcp-contract.snapshot.json")).unwrap();
    let o = check(dir.path(), &tiny(), &[], &[("TINY_EVIL", "1")]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("no file to anchor"));
    let doc = valid_sarif(&o);
    let got = anchors(&doc);
    assert_eq!(got.len(), 6, "{got:?}");
    for (rule, subject, line) in &got {
        let want = match subject.as_str() {
            "get_weather" => 58,
            "broken" => 30,
            other => panic!("unexpected subject {other} ({rule})"),
        };
        assert_eq!(*line, Some(want), "{rule} {subject}");
    }
    let first = &doc["runs"][0]["results"][0];
    assert_eq!(first["ruleId"], "CAS-L001");
    assert_eq!(
        first["partialFingerprints"]["mcpCassetteFindingV1"],
        "86f30c3c29712ff6"
    );
    assert_eq!(
        first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "mcp-contract.snapshot.json"
    );
    assert_eq!(
        doc["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
}

#[test]
fn no_anchor_warns_and_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let o = check(dir.path(), &tiny(), &[], &[("TINY_EVIL", "1")]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(
            "mcp-cassette check: no file to anchor SARIF findings to, so this document carries\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("  --sarif-location <file> naming a file in the repository.\n"),
        "{stderr}"
    );
    let doc = valid_sarif(&o);
    assert!(anchors(&doc).iter().all(|(_, _, line)| line.is_none()));
    // A clean server: an empty, valid run.
    let o = check(dir.path(), &tiny(), &[], &[]);
    assert_eq!(o.status.code(), Some(0));
    let doc = valid_sarif(&o);
    assert_eq!(doc["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(
        doc["runs"][0]["tool"]["driver"]["rules"],
        serde_json::json!([])
    );
}

#[test]
fn anchored_to_the_server_script_inside_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("fixture_server");
    std::fs::copy(fixture_server(), &local).unwrap();
    let o = check(
        dir.path(),
        "./fixture_server tiny",
        &[],
        &[("TINY_EVIL", "1")],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = valid_sarif(&o);
    let loc = &doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "fixture_server");
    assert_eq!(loc["region"]["startLine"], 1);
}

#[test]
fn sarif_location_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let o = check(dir.path(), &tiny(), &["--sarif-location", "nope.json"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("check failed: --sarif-location: nope.json does not exist")
    );
    let outside = tempfile::NamedTempFile::new().unwrap();
    let o = check(
        dir.path(),
        &tiny(),
        &["--sarif-location", outside.path().to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is outside the working directory"));
    std::fs::write(dir.path().join("README.md"), "# repo\n").unwrap();
    let o = check(
        dir.path(),
        &tiny(),
        &["--sarif-location", "README.md"],
        &[("TINY_EVIL", "1")],
    );
    let doc = valid_sarif(&o);
    assert!(anchors(&doc).iter().all(|(_, _, line)| *line == Some(1)));
}
