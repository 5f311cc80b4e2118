//! CAS-C005: does a tool's `inputSchema` compile as JSON Schema?
//!
//! The dialect is the reference's choice: draft-07 when the schema's `$schema` mentions
//! `draft-07`, otherwise the one its `$schema` names, otherwise 2020-12 (the MCP default). The
//! schema is checked against its dialect's meta-schema and every `$ref` must resolve inside the
//! document: nothing is ever fetched (the library is built without its HTTP and file
//! resolvers), so a remote reference is a finding, not a network request.
//!
//! Differences from the reference, which compiles with Ajv: the message after
//! `inputSchema is not valid JSON Schema: ` is this library's, not Ajv's; and a schema declaring
//! draft-04, draft-06 or 2019-09 is checked under that dialect, where Ajv's 2020-12 instance
//! refuses the declaration itself.
//!
//! Depth is bounded before the library sees the schema: [`MAX_DEPTH`] nested values, the same
//! limit serde_json parses to, so the compiler's recursion stays shallow whatever the server
//! sends. Identical schemas are compiled once per run (servers with thousands of tools repeat
//! a handful of shapes).

use std::collections::HashMap;

use serde_json::Value;

/// Deepest schema compiled (nested objects and arrays, the root counting as one).
pub const MAX_DEPTH: usize = 128;

/// Longest library message quoted whole; longer ones are replaced by a masked form that does
/// not repeat the offending value.
const MESSAGE_LIMIT: usize = 240;

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

/// Compiles one schema.
pub fn compile(schema: &Value) -> Result<(), String> {
    if depth_exceeds(schema, MAX_DEPTH) {
        return Err(too_deep());
    }
    let draft07 = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|dialect| dialect.contains("draft-07"));
    let mut options = jsonschema::options();
    if draft07 {
        options = options.with_draft(jsonschema::Draft::Draft7);
    }
    match options.build(schema) {
        Ok(_) => Ok(()),
        Err(err) => Err(describe(&err)),
    }
}

/// Why a schema too deep to read (or compile) is refused.
pub fn too_deep() -> String {
    format!("nests deeper than {MAX_DEPTH} levels, more than mcp-cassette compiles")
}

fn describe(err: &jsonschema::ValidationError<'_>) -> String {
    let mut message = err.to_string();
    if message.chars().count() > MESSAGE_LIMIT {
        message = err.masked().to_string();
    }
    if message.chars().count() > MESSAGE_LIMIT {
        message = message.chars().take(MESSAGE_LIMIT).collect::<String>() + "…";
    }
    let at = err.instance_path().to_string();
    if at.is_empty() {
        message
    } else {
        format!("{at}: {message}")
    }
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
