//! Our checker against the `jsonschema` crate it replaced (now a dev-dependency), verdict for
//! verdict, on the schemas of [`cases`] (shared with the integration test against real Ajv,
//! `tests/it/ajv.rs`). Each disagreement must be listed in [`DIFFERENCES`] with its
//! reason, and each listed one must still occur, so the list stays exact.

use serde_json::Value;

use super::cases;
use super::compile;

/// Cases on which the verdicts differ on purpose, with why. A case is named by its schema's
/// compact JSON, or for generated ones by `pattern <p>` (in `pattern` or as a
/// `patternProperties` key, any dialect) or `<dialect> <keyword>: <value>`.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        r#"2020-12 $recursiveRef: "^a(""#,
        "a reference keyword holding a character no URI holds is refused; the crate ignores it",
    ),
    (
        r#"{"enum":[]}"#,
        "Ajv's enum keyword refuses an empty list in every dialect; the crate accepts it",
    ),
    (
        "2020-12 enum: []",
        "Ajv's enum keyword refuses an empty list in every dialect; the crate accepts it",
    ),
    (
        "2019-09 enum: []",
        "Ajv's enum keyword refuses an empty list in every dialect; the crate accepts it",
    ),
    (
        "draft-07 enum: []",
        "Ajv's enum keyword refuses an empty list in every dialect; the crate accepts it",
    ),
    (
        "draft-06 enum: []",
        "Ajv's enum keyword refuses an empty list in every dialect; the crate accepts it",
    ),
    (
        "draft-04 enum: []",
        "Ajv's enum keyword refuses an empty list in every dialect (draft-04's meta-schema \
         says so too); the crate accepts it",
    ),
    ("pattern }", "a lone '}' is a syntax error with the u flag"),
    ("pattern ]", "a lone ']' is a syntax error with the u flag"),
    (
        r"pattern \-",
        r"'\-' is an identity escape, refused outside a class with the u flag",
    ),
    (
        r"pattern \_",
        r"'\_' is an identity escape, refused with the u flag",
    ),
    (
        r"pattern \z",
        r"'\z' is not an ECMAScript escape (identity escape, refused with the u flag)",
    ),
    (
        r"pattern \A",
        r"'\A' is not an ECMAScript escape (identity escape, refused with the u flag)",
    ),
    (
        r"pattern (?<n>a)\k<n>",
        "named backreferences are ECMAScript; the crate's translation refuses them",
    ),
    (
        "pattern (?i:a)",
        "pattern modifiers are newer than ES2024; refused",
    ),
    (
        "pattern (?P<n>a)",
        "'(?P<' is Python syntax, not ECMAScript",
    ),
    (
        r"pattern \p{letter}",
        "ECMAScript property names are case-sensitive",
    ),
    (r"pattern \pL", r"ECMAScript wants braces: \p{L}"),
    (
        r"pattern \0",
        r"'\0' (NUL, no digit after) is valid ECMAScript",
    ),
    (r"pattern [\b]", r"'[\b]' (backspace) is valid ECMAScript"),
    ("pattern [^]", "'[^]' (any character) is valid ECMAScript"),
    (
        "pattern a{99999999999999999999}",
        "ECMAScript has no limit on repetition counts",
    ),
    (
        "pattern [[:alpha:]]",
        "no POSIX classes in ECMAScript: '[[:alpha:]' then a lone ']', refused with the u flag",
    ),
];

fn library_accepts(schema: &Value) -> bool {
    let draft07 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|dialect| dialect.contains("draft-07"));
    let mut options = jsonschema::options();
    if draft07 {
        options = options.with_draft(jsonschema::Draft::Draft7);
    }
    options.build(schema).is_ok()
}

#[test]
fn verdicts_match_the_jsonschema_crate_except_where_listed() {
    let schemas = cases::all();
    let mut tally = cases::Tally::new(DIFFERENCES);
    for (case, schema) in &schemas {
        let ours = compile(schema);
        let theirs = library_accepts(schema);
        if ours.is_ok() != theirs {
            tally.disagree(case.clone(), || {
                format!("{schema}  ours: {ours:?}  crate accepts: {theirs}")
            });
        }
    }
    tally.assert_only_listed(schemas.len());
}
