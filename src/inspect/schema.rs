//! CAS-C005: does a tool's `inputSchema` compile as JSON Schema?
//!
//! The reference compiles each schema with Ajv (`strict: false`, formats validated); this is
//! our own checker for what that compilation refuses, pure and offline:
//!
//! - the dialect ([`dialect`]): draft-07 when `$schema` mentions `draft-07`, otherwise the one a
//!   json-schema.org `$schema` URI names, otherwise 2020-12 (the MCP default); any other
//!   `$schema` URI is refused, since its meta-schema would have to be fetched;
//! - the dialect's meta-schema, keyword by keyword, at every schema position ([`meta`]);
//! - every `$ref` and `$dynamicRef` resolves inside the document, through JSON Pointers,
//!   anchors and `$id` bases, or names a whole meta-schema of the schema's own dialect
//!   ([`reference`]); nothing is ever fetched, so a remote reference is a finding, not a network
//!   request (2019-09's `$recursiveRef` is defined only for `#`, which always resolves, and is
//!   left alone);
//! - every `pattern` and `patternProperties` key parses as an ECMAScript regular expression with
//!   the `u` flag, as Ajv compiles them ([`pattern`]).
//!
//! Deliberate differences from Ajv (the integration test `tests/it/ajv.rs` compiles the
//! differential set with real Ajv and lists each case with its reason): the message after
//! `inputSchema is not valid JSON Schema: ` is ours; a schema declaring draft-04, draft-06 or
//! 2019-09 is checked under that dialect, where Ajv's 2020-12 instance refuses the declaration
//! itself; only the root's `$schema` chooses the dialect; a reference into a meta-schema
//! (`…/draft-07/schema#/definitions/x`) is refused, only whole meta-schemas resolve; a URI
//! keyword holding a character no URI can hold is refused (Ajv lets any string through as
//! `$id`; `$schema` must be absolute); pattern modifiers (`(?i:…)`) and duplicate group names,
//! newer than ES2024, are refused, and Node versions that accept them exist. Where Ajv departs
//! from the specifications we follow the specifications:
//!
//! - draft-07 is checked against the published meta-schema, so `writeOnly` must be a boolean
//!   and `enum` may repeat a value (Ajv's bundled copy lacks `writeOnly` and wants unique
//!   values);
//! - every `patternProperties` key is parsed, where Ajv's draft-07 instance skips keys whose
//!   schemas assert nothing;
//! - `$anchor` and `$dynamicAnchor` are checked only in dialects that define them, and 2020-12
//!   gives `$recursiveAnchor` and `$recursiveRef` no 2019-09 meaning (Ajv checks anchor syntax in
//!   every dialect, and its 2020-12 instance implements the two 2019-09 keywords too);
//! - `$dynamicRef` resolves when the schema is checked (an anchor nobody defines is refused) and
//!   may be empty, where Ajv wants `#…` and resolves it only while validating;
//! - an anchor on a root without `$id` resolves, `#/` names the key `""` rather than the root,
//!   a `$ref` to itself is accepted and a `$ref` to a value that is not a schema refused: Ajv
//!   fails to resolve the first, reads the second as the root, overflows its stack on the third
//!   and compiles the fourth.
//!
//! Deliberate differences from the `jsonschema` crate this replaced (the differential test in
//! `differential.rs` lists each case with its reason). Patterns follow ECMAScript with the `u`
//! flag rather than the crate's translation for fancy-regex, so we accept named
//! backreferences (`\k<name>`), `\0`, `[\b]`, `[^]` and repetition counts of any size, and refuse
//! identity escapes (`\-` outside a class, `\_`, `\z`, `\A`), a lone `]` or `}`, `\pL` without
//! braces, property names in the wrong case, `(?P<name>…)`, `(?i:…)` and POSIX classes
//! (`[[:alpha:]]`). We refuse an empty `enum` in every dialect, as Ajv does, and a reference
//! keyword holding a character no URI holds; the crate lets both through.
//!
//! Depth is bounded before the walk: [`MAX_DEPTH`] nested values, the same limit serde_json
//! parses to; the walk and the pattern parser are iterative besides. Identical schemas are
//! checked once per run (servers with thousands of tools repeat a handful of shapes).

#[cfg(test)]
mod cases;
mod dialect;
#[cfg(test)]
mod differential;
mod meta;
mod pattern;
mod reference;
mod uri;

use std::collections::HashMap;

use serde_json::Value;

use dialect::Dialect;

/// Deepest schema compiled (nested objects and arrays, the root counting as one).
pub const MAX_DEPTH: usize = 128;

/// Longest message returned; problems past it are counted, not listed, and a single problem
/// longer than it is cut (values are quoted short already).
const MESSAGE_LIMIT: usize = 600;

/// Longest quoted value in a message, in characters.
const QUOTE_LIMIT: usize = 60;

/// Compiles schemas and remembers the verdicts.
#[derive(Default)]
pub struct SchemaCompiler {
    verdicts: HashMap<String, Option<String>>,
}

impl SchemaCompiler {
    pub fn new() -> Self {
        Self::default()
    }

    /// `None` when the schema compiles, else why not (without the CAS-C005 prefix).
    pub fn problem(&mut self, schema: &Value) -> Option<String> {
        let key = schema.to_string();
        if let Some(verdict) = self.verdicts.get(&key) {
            return verdict.clone();
        }
        let verdict = compile(schema).err();
        self.verdicts.insert(key, verdict.clone());
        verdict
    }
}

/// Compiles one schema: `Err` says where (a JSON Pointer into the schema) and what is wrong.
pub fn compile(schema: &Value) -> Result<(), String> {
    if depth_exceeds(schema, MAX_DEPTH) {
        return Err(too_deep());
    }
    let dialect = Dialect::of(schema).map_err(|message| clamp(&message))?;
    reference::Document::new(schema, dialect)
        .check()
        .map_err(|problems| list(&problems))
}

/// Every problem, joined as Ajv joins its errors (`, `), up to [`MESSAGE_LIMIT`]; what does
/// not fit is counted (`… and 3 more`), so the message is bounded however broken the schema.
fn list(problems: &[String]) -> String {
    let mut out = String::new();
    for (shown, problem) in problems.iter().enumerate() {
        let separator = if shown == 0 { "" } else { ", " };
        if shown > 0
            && out.chars().count() + separator.len() + problem.chars().count() > MESSAGE_LIMIT
        {
            let left = problems.len() - shown;
            out.push_str(&format!(", and {left} more"));
            return out;
        }
        out.push_str(separator);
        out.push_str(&clamp(problem));
    }
    out
}

/// Why a schema too deep to read (or compile) is refused.
pub fn too_deep() -> String {
    format!("nests deeper than {MAX_DEPTH} levels, more than mcp-cassette compiles")
}

fn clamp(message: &str) -> String {
    if message.chars().count() <= MESSAGE_LIMIT {
        return message.to_owned();
    }
    message.chars().take(MESSAGE_LIMIT).collect::<String>() + "…"
}

/// `text` as a JSON string, cut short when long: messages never echo a long value whole.
fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTE_LIMIT {
        return Value::from(text).to_string();
    }
    let short: String = text.chars().take(QUOTE_LIMIT).collect();
    let quoted = Value::from(short).to_string();
    format!("{}…\"", &quoted[..quoted.len() - 1])
}

/// Whether `value` nests more than `limit` levels of objects and arrays (the root is level 1).
/// Iterative, so it is safe on any value.
pub fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 1_usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Object(map) => Box::new(map.values()),
            Value::Array(items) => Box::new(items.iter()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn valid_schemas_compile() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            json!({}),
            json!(true),
            json!({"type": "object", "properties": {"when": {"type": "string", "format": "no-such-format"}}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "definitions": {"x": {"type": "integer"}}, "properties": {"x": {"$ref": "#/definitions/x"}}}),
            json!({"type": "object", "$defs": {"x": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/x"}}}),
            json!({"type": "object", "x-vendor-keyword": {"anything": [1, 2]}}),
        ] {
            assert_eq!(compile(&schema), Ok(()), "{schema}");
        }
    }

    #[test]
    fn every_problem_is_listed_once_and_the_list_is_bounded() {
        let err = compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "strang"}, "b": {"minLength": -1}, "c": 5},
            "required": "a",
            "allOf": [{"$ref": "#/nowhere"}]
        }))
        .unwrap_err();
        let listed: Vec<&str> = err.split(", /").collect();
        assert_eq!(listed.len(), 5, "{err}");
        for at in [
            "/properties/a/type",
            "properties/b/minLength",
            "properties/c",
            "required",
            "allOf/0/$ref",
        ] {
            assert_eq!(err.matches(at).count(), 1, "{at} in {err}");
        }

        let many: serde_json::Map<String, Value> = (0..500)
            .map(|i| (format!("p{i}"), json!({"type": "strang"})))
            .collect();
        let err = compile(&json!({"properties": many})).unwrap_err();
        assert!(err.chars().count() <= MESSAGE_LIMIT + 20, "{}", err.len());
        assert!(err.ends_with(" more"), "{err}");
        let shown = err.matches("/type: ").count();
        assert!(
            err.ends_with(&format!(", and {} more", 500 - shown)),
            "{err}"
        );
    }

    #[test]
    fn broken_schemas_say_where() {
        let err = compile(&json!({"type": "object", "properties": {"x": {"type": "strang"}}}))
            .unwrap_err();
        assert!(err.starts_with("/properties/x/type: "), "{err}");

        for schema in [
            json!("not a schema"),
            json!(null),
            json!({"type": "object", "required": "a"}),
            json!({"properties": {"x": {"$ref": "#/$defs/missing"}}}),
            json!({"properties": {"x": {"$ref": "https://example.com/remote.json"}}}),
            json!({"type": "object", "properties": {"x": {"pattern": "("}}}),
        ] {
            assert!(compile(&schema).is_err(), "{schema}");
        }
    }

    #[test]
    fn enum_and_vocabulary_follow_ajv() {
        // Ajv's `enum` keyword refuses an empty list under every meta-schema; it does not assert
        // the `uri` format of `$vocabulary` keys (tests/it/ajv.rs holds us to both).
        for dialect in [
            None,
            Some("http://json-schema.org/draft-04/schema#"),
            Some("http://json-schema.org/draft-07/schema#"),
            Some("https://json-schema.org/draft/2019-09/schema"),
        ] {
            let mut schema = json!({"properties": {"x": {"enum": []}}});
            if let Some(uri) = dialect {
                schema["$schema"] = json!(uri);
            }
            let err = compile(&schema).unwrap_err();
            assert!(err.starts_with("/properties/x/enum: "), "{err}");
        }
        assert_eq!(compile(&json!({"enum": [null]})), Ok(()));
        assert_eq!(compile(&json!({"$vocabulary": {"relative": true}})), Ok(()));
        assert!(compile(&json!({"$vocabulary": {"relative": 1}})).is_err());
    }

    #[test]
    fn draft07_is_chosen_by_substring() {
        // `exclusiveMinimum: true` is draft-04 syntax: invalid under draft-07.
        let schema =
            json!({"$schema": "https://json-schema.org/draft-07/schema", "exclusiveMinimum": true});
        assert!(compile(&schema).is_err());
    }

    #[test]
    fn depth_is_bounded() {
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"n": deep}});
        }
        assert_eq!(compile(&deep), Err(too_deep()));
        assert!(!depth_exceeds(&json!({"a": [1, {"b": 2}]}), 3));
        assert!(depth_exceeds(&json!({"a": [1, {"b": []}]}), 3));
    }

    #[test]
    fn the_deepest_readable_schema_compiles_on_a_small_stack() {
        // 63 nested properties: 126 levels, just under the bound, on a 2 MiB test thread.
        let mut deep = json!({"type": "string"});
        for _ in 0..63 {
            deep = json!({"type": "object", "properties": {"n": deep}});
        }
        assert!(!depth_exceeds(&deep, MAX_DEPTH));
        assert_eq!(compile(&deep), Ok(()));
        let mut bad = json!({"type": "strang"});
        for _ in 0..63 {
            bad = json!({"type": "object", "properties": {"n": bad}});
        }
        assert!(compile(&bad).is_err());
    }

    /// The problem `compile` reports, for asserting on.
    fn problem(schema: Value) -> String {
        compile(&schema).expect_err(&schema.to_string())
    }

    #[test]
    fn types() {
        assert_eq!(
            problem(json!({"properties": {"x": {"type": "strang"}}})),
            "/properties/x/type: \"strang\" is not one of the seven JSON types"
        );
        assert_eq!(
            problem(json!({"type": ["string", "string"]})),
            "/type/1: \"string\" is repeated"
        );
        assert_eq!(
            problem(json!({"type": []})),
            "/type: is an empty array of types"
        );
        assert_eq!(
            problem(json!({"type": ["null", 3]})),
            "/type/1: 3 is not a type name"
        );
        assert_eq!(compile(&json!({"type": ["null", "integer"]})), Ok(()));
    }

    #[test]
    fn arrays_of_schemas_and_names() {
        assert_eq!(
            problem(json!({"anyOf": []})),
            "/anyOf: is empty; it needs at least one schema"
        );
        assert_eq!(
            problem(json!({"allOf": [{}, 5]})),
            "/allOf/1: 5 is not a schema (an object or a boolean)"
        );
        assert_eq!(
            problem(json!({"required": ["a", 1]})),
            "/required/1: 1 is not a string"
        );
        assert_eq!(
            problem(json!({"required": ["a", "a"]})),
            "/required/1: \"a\" is repeated"
        );
        assert_eq!(compile(&json!({"required": []})), Ok(()));
        assert_eq!(
            problem(json!({"enum": {}})),
            "/enum: an object is not an array"
        );
        assert_eq!(
            problem(json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": []})),
            "/items: is an empty array; it needs a schema or at least one"
        );
        assert!(
            compile(&json!({"items": [{}]})).is_err(),
            "2020-12 items is one schema"
        );
        assert_eq!(
            compile(&json!({"prefixItems": [{}], "items": false})),
            Ok(())
        );
        assert_eq!(
            problem(json!({"dependencies": {"a": 5}})),
            "/dependencies/a: 5 is neither a schema nor an array of property names"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            problem(json!({"minLength": -1})),
            "/minLength: -1 is not a non-negative integer"
        );
        assert_eq!(
            problem(json!({"maxItems": 1.5})),
            "/maxItems: 1.5 is not a non-negative integer"
        );
        assert_eq!(compile(&json!({"maxItems": 1.0})), Ok(()));
        let draft04 =
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "maxItems": 1.0});
        assert!(
            compile(&draft04).is_err(),
            "draft-04 integers have no fraction part"
        );
        assert_eq!(
            problem(json!({"multipleOf": 0})),
            "/multipleOf: 0 is not a number greater than 0"
        );
        assert_eq!(
            problem(json!({"minimum": "1"})),
            "/minimum: \"1\" is not a number"
        );
        assert_eq!(
            problem(json!({"exclusiveMinimum": true})),
            "/exclusiveMinimum: true is not a number"
        );
        let draft04 =
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "exclusiveMinimum": true});
        assert_eq!(
            problem(draft04),
            "/exclusiveMinimum: needs \"minimum\" beside it (draft-04)"
        );
    }

    #[test]
    fn references_resolve_inside_the_document() {
        for schema in [
            json!({"$defs": {"a b": {}}, "$ref": "#/$defs/a%20b"}),
            json!({"$defs": {"a/b": {}, "c~d": {}}, "allOf": [{"$ref": "#/$defs/a~1b"}, {"$ref": "#/$defs/c~0d"}]}),
            json!({"properties": {"a": {"$ref": "#"}}}),
            json!({"x-defs": {"a": {"type": "string"}}, "$ref": "#/x-defs/a"}),
            json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}),
        ] {
            assert_eq!(compile(&schema), Ok(()), "{schema}");
        }
        assert_eq!(
            problem(json!({"properties": {"x": {"$ref": "#/$defs/missing"}}})),
            "/properties/x/$ref: \"#/$defs/missing\" points at nothing in the schema"
        );
        assert_eq!(
            problem(json!({"$ref": "https://example.com/remote.json"})),
            "/$ref: \"https://example.com/remote.json\" does not resolve inside the schema \
             (mcp-cassette fetches nothing)"
        );
        // What a reference reaches is checked as a schema, even outside schema keywords.
        assert_eq!(
            problem(json!({"x-defs": {"a": {"type": 5}}, "$ref": "#/x-defs/a"})),
            "/x-defs/a/type: 5 is neither a type name nor an array of them"
        );
        assert_eq!(compile(&json!({"x-defs": {"a": {"type": 5}}})), Ok(()));
        assert!(compile(&json!({"required": ["a"], "$ref": "#/required"})).is_err());
        // Cycles end.
        assert_eq!(
            compile(&json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})),
            Ok(())
        );
    }

    #[test]
    fn anchors() {
        assert_eq!(
            compile(&json!({"$defs": {"a": {"$anchor": "here"}}, "$ref": "#here"})),
            Ok(())
        );
        assert_eq!(
            problem(json!({"$ref": "#there"})),
            "/$ref: \"#there\" names an anchor the schema does not define"
        );
        assert_eq!(
            problem(json!({"$anchor": "1st"})),
            "/$anchor: \"1st\" is not a valid anchor name"
        );
        let draft07 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"a": {"$id": "#here"}},
            "properties": {"x": {"$ref": "#here"}}
        });
        assert_eq!(compile(&draft07), Ok(()));
        assert!(compile(&json!({"$id": "https://example.com/s#here"})).is_err());
        assert_eq!(
            compile(&json!({"$dynamicAnchor": "meta", "items": {"$dynamicRef": "#meta"}})),
            Ok(())
        );
    }

    #[test]
    fn id_bases() {
        let nested = json!({
            "$id": "https://example.com/dir/root.json",
            "$defs": {
                "a": {"$id": "a.json", "$defs": {"b": {"$anchor": "b", "type": "integer"}}},
                "c": {"$id": "../other.json"}
            },
            "allOf": [
                {"$ref": "a.json#b"},
                {"$ref": "https://example.com/dir/a.json"},
                {"$ref": "https://example.com/other.json"},
                {"$ref": "root.json#/$defs/a"}
            ]
        });
        assert_eq!(compile(&nested), Ok(()));
        assert!(
            compile(&json!({"$id": "https://example.com/root.json", "$ref": "b.json"})).is_err()
        );
        let urn = json!({"$id": "urn:example:root", "$defs": {"a": {}}, "$ref": "urn:example:root#/$defs/a"});
        assert_eq!(compile(&urn), Ok(()));
    }

    #[test]
    fn dialects() {
        assert_eq!(
            problem(json!({"$schema": "https://example.com/custom", "type": "object"})),
            "/$schema: \"https://example.com/custom\" names a meta-schema mcp-cassette does not \
             ship (it never fetches one)"
        );
        let draft06 = json!({"$schema": "http://json-schema.org/draft-06/schema#", "if": 5});
        assert_eq!(compile(&draft06), Ok(()), "draft-06 has no `if`");
        let draft07 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "if": 5});
        assert!(compile(&draft07).is_err());
        let draft2019 =
            json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "items": [{}]});
        assert_eq!(compile(&draft2019), Ok(()));
        assert_eq!(
            problem(json!({"$schema": 5})),
            "/$schema: 5 is not a string"
        );
    }

    #[test]
    fn boolean_schemas() {
        assert_eq!(
            compile(&json!({"properties": {"a": true, "b": false}})),
            Ok(())
        );
        let draft04 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": true}});
        assert_eq!(
            problem(draft04),
            "/properties/a: true is not a schema (an object, in draft-04)"
        );
        let draft04 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "additionalProperties": false});
        assert_eq!(compile(&draft04), Ok(()));
    }

    #[test]
    fn patterns() {
        assert_eq!(
            compile(&json!({"pattern": "^(?<id>[a-z]+)\\k<id>$"})),
            Ok(())
        );
        assert_eq!(
            problem(json!({"properties": {"x": {"pattern": "[z-a]"}}})),
            "/properties/x/pattern: \"[z-a]\" is not a valid ECMAScript regular expression (u \
             flag): range out of order in character class at offset 4"
        );
        assert_eq!(
            problem(json!({"patternProperties": {"(": {}}})),
            "/patternProperties/(: \"(\" is not a valid ECMAScript regular expression (u flag): \
             unterminated group at offset 1"
        );
    }

    #[test]
    fn messages_stay_short() {
        let long = "x".repeat(10_000);
        let message = problem(json!({"type": long}));
        assert!(message.chars().count() < 120, "{message}");
        let message = problem(json!({"properties": {long.clone(): {"type": 1}}}));
        assert!(message.chars().count() <= MESSAGE_LIMIT + 1, "{message}");
    }

    /// JSON built from schema keywords and awkward values, a few levels deep.
    fn schema_like() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3_i64..4).prop_map(Value::from),
            Just(json!(1.5)),
            "[#/a-z$~%0-9(){}\\[\\]]{0,8}".prop_map(Value::from),
            Just(json!("#")),
            Just(json!("#/$defs/a")),
            Just(json!("string")),
        ];
        let keys = prop_oneof![
            Just("type"),
            Just("properties"),
            Just("items"),
            Just("$ref"),
            Just("$defs"),
            Just("$id"),
            Just("$anchor"),
            Just("pattern"),
            Just("patternProperties"),
            Just("allOf"),
            Just("required"),
            Just("$schema"),
            Just("a"),
            Just("dependencies"),
            Just("$dynamicRef"),
            Just("enum"),
            Just("minLength"),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(keys.clone(), inner, 0..5).prop_map(|members| {
                    Value::Object(
                        members
                            .into_iter()
                            .map(|(key, value)| (key.to_owned(), value))
                            .collect(),
                    )
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Any such value gets a verdict, never a panic, and a problem is short.
        #[test]
        fn never_panics(schema in schema_like()) {
            if let Err(message) = compile(&schema) {
                proptest::prop_assert!(message.chars().count() <= MESSAGE_LIMIT + 1);
            }
        }
    }

    #[test]
    fn verdicts_are_cached() {
        let mut compiler = SchemaCompiler::new();
        let bad = json!({"type": 5});
        let first = compiler.problem(&bad);
        assert!(first.is_some());
        assert_eq!(compiler.problem(&bad), first);
        assert_eq!(compiler.problem(&json!({"type": "object"})), None);
        assert_eq!(compiler.verdicts.len(), 2);
    }
}
