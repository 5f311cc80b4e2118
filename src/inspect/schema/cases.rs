//! The schemas CAS-C005's differential tests compile on both sides: the cassette corpus,
//! hand-written edge cases, and mutations that put values of every JSON type under every keyword,
//! each named for the lists of known differences.
//!
//! Shared by two tests that must see the same set: the unit test against the `jsonschema` crate
//! (`differential.rs`) and the integration test against real Ajv (`tests/it/ajv.rs`), which
//! includes this file by path. So it stays self-contained: `serde_json` only, nothing from the
//! crate, and it is never part of the library's public API.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

/// Every case, named: a corpus or hand-written schema by its compact JSON, a generated one by
/// `pattern <p>` (in `pattern` or as a `patternProperties` key, any dialect) or
/// `<dialect> <keyword>: <value>`. Several generated schemas share a name.
pub(super) fn all() -> Vec<(String, Value)> {
    let corpus = corpus();
    assert!(corpus.len() >= 30, "corpus shrank to {}", corpus.len());
    let mut schemas: Vec<(String, Value)> = corpus
        .into_iter()
        .chain(hand_written())
        .map(|schema| (schema.to_string(), schema))
        .collect();
    schemas.extend(mutations());
    schemas
}

/// The disagreements of one differential run, held against its list of known differences
/// (name → reason): the run fails on a disagreement not listed, and on a listed one that no
/// longer occurs, so the list stays true.
pub(super) struct Tally<'a> {
    listed: BTreeMap<&'a str, &'a str>,
    seen: BTreeSet<String>,
    /// Name → one example: generated names cover several schemas.
    unexpected: BTreeMap<String, String>,
}

impl<'a> Tally<'a> {
    pub(super) fn new(listed: &'a [(&'a str, &'a str)]) -> Self {
        Tally {
            listed: listed.iter().copied().collect(),
            seen: BTreeSet::new(),
            unexpected: BTreeMap::new(),
        }
    }

    /// Records a disagreement on the case (or family) `name`; `detail` describes it for the
    /// failure message when it is not listed.
    pub(super) fn disagree(&mut self, name: String, detail: impl FnOnce() -> String) {
        if self.listed.contains_key(name.as_str()) {
            self.seen.insert(name);
        } else {
            self.unexpected.entry(name).or_insert_with(detail);
        }
    }

    /// Fails unless every disagreement was listed and every listed one occurred.
    pub(super) fn assert_only_listed(&self, compared: usize) {
        let stale: Vec<&&str> = self
            .listed
            .keys()
            .filter(|name| !self.seen.contains(**name))
            .collect();
        assert!(
            self.unexpected.is_empty() && stale.is_empty(),
            "{compared} schemas compared\nunexpected differences ({}):\n{}\nlisted but no longer different: {stale:?}",
            self.unexpected.len(),
            self.unexpected
                .iter()
                .map(|(name, detail)| format!("{name}  {detail}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn corpus() -> Vec<Value> {
    let text = include_str!("../../../tests/fixtures/schemas/corpus.json");
    match serde_json::from_str(text) {
        Ok(Value::Array(schemas)) => schemas,
        other => panic!("tests/fixtures/schemas/corpus.json is not an array: {other:?}"),
    }
}

fn hand_written() -> Vec<Value> {
    vec![
        json!({}),
        json!(true),
        json!(false),
        json!(null),
        json!(1),
        json!("x"),
        json!([]),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": true}}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": true}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": true, "minimum": 1}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": 1}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "required": []}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "maxLength": 1.0}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "definitions": {"a": {"id": "#a"}}, "$ref": "#a"}),
        json!({"$schema": "http://json-schema.org/draft-06/schema#", "exclusiveMinimum": true}),
        json!({"$schema": "http://json-schema.org/draft-06/schema#", "if": 5}),
        json!({"$schema": "http://json-schema.org/draft-06/schema#", "contains": 5}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "if": 5}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "maxLength": 1.0}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "maxLength": 1.5}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "maxLength": -1}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$id": "#a"}}, "properties": {"x": {"$ref": "#a"}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"x": {"$ref": "#nope"}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "http://json-schema.org/draft-07/schema#"}),
        json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true, "$recursiveRef": "#"}),
        json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "$anchor": "a:b", "$ref": "#a:b"}),
        json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "items": [{}]}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "items": [{}]}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema#", "prefixItems": [{}], "items": false}),
        json!({"$schema": "https://example.com/custom-meta", "type": "object"}),
        json!({"$schema": 5}),
        json!({"$schema": "not a uri"}),
        json!({"$id": "https://example.com/root.json", "$defs": {"a": {"$id": "a.json", "type": "string"}}, "$ref": "a.json"}),
        json!({"$id": "https://example.com/root.json", "$defs": {"a": {"$id": "a.json", "$defs": {"b": {"$anchor": "b"}}}}, "$ref": "a.json#b"}),
        json!({"$id": "https://example.com/root.json", "$defs": {"a": {"$id": "a.json"}}, "$ref": "b.json"}),
        json!({"$id": "https://example.com/dir/root.json", "$defs": {"a": {"$id": "../other.json"}}, "$ref": "https://example.com/other.json"}),
        json!({"$id": "urn:example:root", "$defs": {"a": {"type": "integer"}}, "$ref": "urn:example:root#/$defs/a"}),
        json!({"$id": "https://example.com/root.json#frag"}),
        json!({"$id": "https://example.com/root.json#"}),
        json!({"$id": 5}),
        json!({"$defs": {"a b": {}}, "$ref": "#/$defs/a%20b"}),
        json!({"$defs": {"a/b": {}, "c~d": {}}, "allOf": [{"$ref": "#/$defs/a~1b"}, {"$ref": "#/$defs/c~0d"}]}),
        json!({"$defs": {"a": {}}, "$ref": "#/$defs/a/b"}),
        json!({"$defs": {"a": 5}, "$ref": "#/$defs/a"}),
        json!({"x-defs": {"a": {"type": "string"}}, "$ref": "#/x-defs/a"}),
        json!({"x-defs": {"a": {"type": 5}}, "$ref": "#/x-defs/a"}),
        json!({"x-defs": {"a": {"type": 5}}}),
        json!({"x-defs": {"a": {"$ref": "#/nope"}}}),
        json!({"required": ["a"], "$ref": "#/required"}),
        json!({"$ref": "#"}),
        json!({"$ref": ""}),
        json!({"$ref": "#/"}),
        json!({"$ref": "#/properties"}),
        json!({"properties": {"a": {"$ref": "#/properties/a"}}}),
        json!({"$anchor": "top", "properties": {"a": {"$ref": "#top"}}}),
        json!({"$anchor": "1top"}),
        json!({"$anchor": "_top"}),
        json!({"$dynamicAnchor": "meta", "properties": {"a": {"$dynamicRef": "#meta"}}}),
        json!({"properties": {"a": {"$dynamicRef": "#meta"}}}),
        json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}),
        json!({"$ref": "https://json-schema.org/draft/2020-12/meta/validation"}),
        json!({"$ref": "https://json-schema.org/draft/2020-12/schema#/$defs/nope"}),
        json!({"$ref": "http://json-schema.org/draft-07/schema#"}),
        json!({"$ref": "https://example.com/remote.json"}),
        json!({"$ref": "other.json"}),
        json!({"$ref": "#/$defs/missing"}),
        json!({"$ref": "a b"}),
        json!({"$ref": 5}),
        json!({"type": ["string", "string"]}),
        json!({"type": []}),
        json!({"type": ["string", 5]}),
        json!({"type": "any"}),
        json!({"required": ["a", "a"]}),
        json!({"required": []}),
        json!({"enum": []}),
        json!({"enum": [1, 1]}),
        json!({"multipleOf": 0}),
        json!({"multipleOf": -1}),
        json!({"multipleOf": 0.5}),
        json!({"minLength": 1.0}),
        json!({"minLength": 1e300}),
        json!({"minLength": 18446744073709551616u128 as f64}),
        json!({"dependencies": {"a": ["b"], "c": {"type": "string"}}}),
        json!({"dependencies": {"a": [1]}}),
        json!({"dependencies": {"a": 5}}),
        json!({"dependentRequired": {"a": ["b", "b"]}}),
        json!({"$vocabulary": {"https://example.com/v": true}}),
        json!({"$vocabulary": {"relative": true}}),
        json!({"$vocabulary": {"https://example.com/v": 1}}),
        json!({"$comment": 5}),
        json!({"format": "date-time"}),
        json!({"format": "no-such-format"}),
        json!({"format": 5}),
        json!({"contentSchema": 5}),
        json!({"if": {"type": "string"}, "then": {"minLength": 1}, "else": false}),
        json!({"not": []}),
        json!({"allOf": []}),
        json!({"anyOf": [5]}),
        json!({"oneOf": {}}),
        json!({"properties": {"a": 5}}),
        json!({"properties": []}),
    ]
}

/// Patterns, each tried as `pattern` and as a `patternProperties` key.
const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "(",
    ")",
    "[",
    "[a",
    "*",
    "a**",
    "a{2,1}",
    "a{2}",
    "a{,5}",
    "{",
    "}",
    "]",
    "[z-a]",
    "[a-z]",
    "\\d+",
    "\\-",
    "[\\-]",
    "\\a",
    "\\e",
    "\\_",
    "\\/",
    "(?<n>a)\\k<n>",
    "\\k<n>",
    "(a)\\1",
    "\\2",
    "(?<=a+)b",
    "(?<!ab)c",
    "(?=a)*",
    "(?i:a)",
    "(?P<n>a)",
    "\\p{L}",
    "\\p{Letter}",
    "\\p{letter}",
    "\\p{Script=Greek}",
    "\\p{sc=Grek}",
    "\\p{Nope}",
    "\\pL",
    "\\u{1F600}",
    "\\u0041",
    "\\x41",
    "\\x4",
    "\\cJ",
    "\\c1",
    "\\0",
    "\\00",
    "[\\d-z]",
    "[\\b]",
    "\\b",
    "^$",
    "a|",
    "[^]",
    "[[]",
    ".*?",
    "a{99999999999999999999}",
    "^[\\w.-]+@[\\w.-]+$",
    "^https?://",
    "^\\S+$",
    "\\Z",
    "\\z",
    "\\A",
    "(?#comment)",
    "[[:alpha:]]",
];

/// Values of every JSON type, put under each keyword.
fn replacements() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(1.5),
        json!(2.0),
        json!(""),
        json!("string"),
        json!("#"),
        json!("#/nope"),
        json!("^a("),
        json!([]),
        json!(["string"]),
        json!(["a", "a"]),
        json!([1]),
        json!([{}]),
        json!([true]),
        json!({}),
        json!({"type": "string"}),
        json!({"a": {}}),
        json!({"a": 1}),
        json!({"a": ["b"]}),
        json!({"^a(": {}}),
    ]
}

const KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "definitions",
    "$defs",
    "unevaluatedItems",
    "unevaluatedProperties",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$comment",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "$vocabulary",
    "x-unknown",
];

const DIALECTS: &[Option<&str>] = &[
    None,
    Some("http://json-schema.org/draft-07/schema#"),
    Some("http://json-schema.org/draft-04/schema#"),
    Some("http://json-schema.org/draft-06/schema#"),
    Some("https://json-schema.org/draft/2019-09/schema"),
];

fn mutations() -> Vec<(String, Value)> {
    let mut schemas = Vec::new();
    for dialect in DIALECTS {
        let name = dialect.map_or("2020-12", |uri| {
            ["draft-04", "draft-06", "draft-07", "2019-09"]
                .into_iter()
                .find(|draft| uri.contains(draft))
                .unwrap_or(uri)
        });
        let with_dialect = |mut schema: Value| {
            if let (Some(uri), Some(object)) = (dialect, schema.as_object_mut()) {
                object.insert("$schema".to_owned(), json!(uri));
            }
            schema
        };
        for keyword in KEYWORDS {
            for value in replacements() {
                let case = format!("{name} {keyword}: {value}");
                // Directly, and one level down (inside `properties`).
                schemas.push((
                    case.clone(),
                    with_dialect(json!({ *keyword: value.clone() })),
                ));
                schemas.push((
                    case,
                    with_dialect(
                        json!({"type": "object", "properties": {"x": { *keyword: value }}}),
                    ),
                ));
            }
        }
        for pattern in PATTERNS {
            let case = format!("pattern {pattern}");
            schemas.push((case.clone(), with_dialect(json!({"pattern": pattern}))));
            schemas.push((
                case,
                with_dialect(json!({"patternProperties": {*pattern: {}}})),
            ));
        }
    }
    schemas
}
