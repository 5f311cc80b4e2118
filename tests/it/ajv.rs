//! CAS-C005 against real Ajv, as the reference compiles a tool's `inputSchema`: every schema of
//! the differential set (`src/inspect/schema/cases.rs`, the one the unit test against the
//! `jsonschema` crate uses) goes through our checker and through `interop/ajv-verdicts.mjs`
//! (Ajv and ajv-formats, pinned in `interop/`), in one node process. Each disagreement must be
//! listed in [`DIFFERENCES`] with its reason, and each listed one must still occur.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::thread;

use serde_json::Value;

use mcp_cassette::inspect::schema::compile;

use crate::interop::{interop_dir, require_installed};

#[path = "../../src/inspect/schema/cases.rs"]
mod cases;

/// Disagreements on purpose (or accepted), with why. A case is named as in `cases.rs`, or by
/// the family [`listed_as`] puts it in when one reason covers many generated cases.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "$schema http://json-schema.org/draft-04/schema#",
        "Ajv2020 has no draft-04 meta-schema and refuses the declaration; we check draft-04's rules",
    ),
    (
        "$schema http://json-schema.org/draft-06/schema#",
        "Ajv2020 has no draft-06 meta-schema and refuses the declaration; we check draft-06's rules",
    ),
    (
        "$schema https://json-schema.org/draft/2019-09/schema",
        "Ajv2020 has no 2019-09 meta-schema and refuses the declaration; we check 2019-09's rules",
    ),
    (
        "draft-07 patternProperties keys",
        "Ajv's draft-07 instance skips compiling patternProperties whose schemas assert nothing",
    ),
    (
        "draft-07 anchor syntax",
        "Ajv checks $anchor/$dynamicAnchor syntax in every dialect; draft-07 has neither keyword",
    ),
    (
        "draft-07 writeOnly",
        "Ajv's copy of the draft-07 meta-schema lacks writeOnly; we follow the published one",
    ),
    (
        r#"draft-07 enum: ["a","a"]"#,
        "Ajv's copy of the draft-07 meta-schema wants unique enum values; the published one does not",
    ),
    (
        r#"2020-12 $dynamicRef: """#,
        "Ajv takes only '#…' in $dynamicRef; we resolve the empty reference to the root",
    ),
    (
        r##"2020-12 $dynamicRef: "#/nope""##,
        "Ajv resolves $dynamicRef only while validating; we refuse one pointing at nothing",
    ),
    (
        r##"{"properties":{"a":{"$dynamicRef":"#meta"}}}"##,
        "Ajv resolves $dynamicRef only while validating; we refuse an anchor nobody defines",
    ),
    (
        r#"2020-12 $recursiveAnchor: "string""#,
        "Ajv2020 also implements 2019-09's $recursiveAnchor (a boolean); 2020-12 has no such keyword",
    ),
    (
        r#"2020-12 $recursiveRef: """#,
        "Ajv2020 also implements 2019-09's $recursiveRef ('#…' only); 2020-12 has no such keyword",
    ),
    (
        r#"2020-12 $recursiveRef: "string""#,
        "Ajv2020 also implements 2019-09's $recursiveRef ('#…' only); 2020-12 has no such keyword",
    ),
    (
        r#"2020-12 $id: "^a(""#,
        "Ajv does not assert uri-reference on $id; we refuse a character no URI holds",
    ),
    (
        r#"draft-07 $id: "^a(""#,
        "Ajv does not assert uri-reference on $id; we refuse a character no URI holds",
    ),
    (
        r##"{"$anchor":"top","properties":{"a":{"$ref":"#top"}}}"##,
        "Ajv cannot resolve an anchor on a root without $id; the anchor is defined, so we accept",
    ),
    (
        r##"{"$ref":"#/"}"##,
        "Ajv reads '#/' as the root; as a JSON Pointer it names the key \"\", which is absent",
    ),
    (
        r##"{"properties":{"a":{"$ref":"#/properties/a"}}}"##,
        "Ajv overflows its stack on a reference to itself; we accept the (useless) cycle",
    ),
    (
        r##"{"required":["a"],"$ref":"#/required"}"##,
        "Ajv compiles a $ref to a non-schema value; we refuse it",
    ),
];

/// What Ajv said about one schema.
struct Verdict {
    ok: bool,
    error: String,
}

/// Runs every schema through Ajv in one node process.
fn ajv_verdicts(schemas: &[&Value]) -> Vec<Verdict> {
    let input = serde_json::to_vec(schemas).expect("schemas serialise");
    let mut child = Command::new("node")
        .current_dir(interop_dir())
        .arg("ajv-verdicts.mjs")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    let mut stdin = child.stdin.take().expect("piped");
    // Written from a thread: node answers while it reads, and both pipes are finite.
    let writer = thread::spawn(move || stdin.write_all(&input));
    let mut stderr = child.stderr.take().expect("piped");
    let warnings = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout)
        .expect("node's stdout is UTF-8");
    let status = child.wait().expect("node exits");
    let stderr = warnings.join().expect("stderr reader");
    writer
        .join()
        .expect("stdin writer")
        .expect("node reads its stdin");
    assert!(
        status.success(),
        "ajv-verdicts.mjs failed: {status}\n{stderr}"
    );
    stdout
        .lines()
        .map(|line| {
            let verdict: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("ajv-verdicts.mjs printed {line:?}: {e}"));
            Verdict {
                ok: verdict["ok"] == Value::Bool(true),
                error: verdict["error"].as_str().unwrap_or_default().to_owned(),
            }
        })
        .collect()
}

/// The name a disagreement is listed under: its case, or a family of cases with one reason.
fn listed_as(case: &str, schema: &Value, ours: &Result<(), String>, ajv: &Verdict) -> String {
    let declared = schema.get("$schema").and_then(Value::as_str);
    let draft07 = declared.is_some_and(|uri| uri.contains("draft-07"));
    if let Some(uri) = declared {
        // Ajv2020 refuses every schema declaring a dialect it has no meta-schema for, whatever
        // else the schema holds (sometimes with an earlier error), so one entry per dialect.
        let foreign = ["draft-04", "draft-06", "2019-09"]
            .iter()
            .any(|draft| uri.contains(draft));
        if foreign && !draft07 && !ajv.ok {
            return format!("$schema {uri}");
        }
    }
    if draft07 {
        let ours_at = ours.as_ref().err().map_or("", String::as_str);
        if ajv.ok && ours_at.contains("patternProperties/") {
            return "draft-07 patternProperties keys".to_owned();
        }
        if ours.is_ok() && ajv.error.starts_with("invalid anchor") {
            return "draft-07 anchor syntax".to_owned();
        }
        if case.starts_with("draft-07 writeOnly: ") {
            return "draft-07 writeOnly".to_owned();
        }
    }
    case.to_owned()
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn verdicts_match_real_ajv_except_where_listed() {
    require_installed();
    for package in ["ajv", "ajv-formats"] {
        assert!(
            interop_dir()
                .join("node_modules")
                .join(package)
                .join("package.json")
                .exists(),
            "interop/node_modules/{package} is missing: run scripts/install-interop.sh"
        );
    }
    let schemas = cases::all();
    let verdicts = ajv_verdicts(&schemas.iter().map(|(_, schema)| schema).collect::<Vec<_>>());
    assert_eq!(verdicts.len(), schemas.len(), "one Ajv verdict per schema");

    let mut tally = cases::Tally::new(DIFFERENCES);
    for ((case, schema), ajv) in schemas.iter().zip(&verdicts) {
        let ours = compile(schema);
        if ours.is_ok() != ajv.ok {
            tally.disagree(listed_as(case, schema, &ours, ajv), || {
                format!(
                    "{schema}  ours: {ours:?}  Ajv: {}",
                    if ajv.ok { "ok" } else { &ajv.error }
                )
            });
        }
    }
    tally.assert_only_listed(schemas.len());
}
