//! The canonical form of an input schema: the same contract spelled the same way, so the drift
//! walk only ever sees differences a caller could notice.
//!
//! What is folded away (docs/contract.md, "How schemas are compared"):
//! * the prose keys `description`, `title`, `$comment` and `examples`, at every depth (they
//!   are compared separately, see [`prose`], and can only ever be `info`);
//! * the order of `required` (sorted, duplicates dropped), of `enum` (sorted by canonical JSON)
//!   and of a union `type` array (sorted, duplicates dropped);
//! * how `additionalProperties` says "anything": absent, `{}` and `true` all become `true`,
//!   and an object schema (one with `properties` or `type: "object"`) that omits it gets the
//!   implicit `true` written in;
//! * the order of the names under `properties`, `patternProperties`, `$defs` and
//!   `definitions`.
//!
//! Not folded, on purpose: tuple `items: [X]` against `items: X` (they validate different
//! things). The data keywords `const`, `default` and `enum` members are values, not schemas,
//! so nothing inside them is dropped or reordered — a `default` object that carries a `title`
//! member has changed when that member changes. (The reference recurses into them too; we
//! treat them as the data the JSON Schema specification says they are.)
//!
//! Every walk here is bounded: nodes deeper than [`MAX_DEPTH`] are kept verbatim, and `$ref`
//! is never followed (references are not resolved at all, so a reference cycle is just a
//! string).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::json::{key_cmp, stable_stringify};

/// Deepest schema node canonicalised; below it a subtree is compared verbatim.
pub(crate) const MAX_DEPTH: usize = 64;

/// Keys that only ever carry prose.
pub(crate) const PROSE_KEYS: [&str; 4] = ["description", "title", "$comment", "examples"];
/// Keys whose object value maps names to schemas.
const SCHEMA_MAPS: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];
/// Keys whose value is data, never a schema.
const DATA_KEYS: [&str; 3] = ["const", "default", "enum"];

/// A list sorted by its members' canonical text, optionally without duplicates.
fn sorted_list(items: &[Value], dedupe: bool) -> Vec<Value> {
    // Sorted by the text JavaScript's sort would compare, then by canonical JSON so that the
    // string "1" and the number 1 always come out in the same order.
    let mut keyed: Vec<(String, String, &Value)> = items
        .iter()
        .map(|v| {
            let stable = stable_stringify(v);
            let key = match v {
                Value::String(s) => s.clone(),
                _ => stable.clone(),
            };
            (key, stable, v)
        })
        .collect();
    keyed.sort_by(|a, b| key_cmp(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    if dedupe {
        keyed.dedup_by(|a, b| a.1 == b.1);
    }
    keyed.into_iter().map(|(_, _, v)| v.clone()).collect()
}

fn is_object_schema(obj: &Map<String, Value>) -> bool {
    obj.contains_key("properties") || obj.get("type").and_then(Value::as_str) == Some("object")
}

/// The canonical form of one schema (any JSON value; only objects and arrays change).
pub(crate) fn canonical(schema: &Value) -> Value {
    canonical_at(schema, 0)
}

fn canonical_at(node: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return node.clone();
    }
    match node {
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| canonical_at(v, depth + 1)).collect())
        }
        Value::Object(obj) => Value::Object(canonical_object(obj, depth)),
        other => other.clone(),
    }
}

fn canonical_object(obj: &Map<String, Value>, depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in obj {
        let k = key.as_str();
        if PROSE_KEYS.contains(&k) {
            continue;
        }
        let folded = match (k, value) {
            ("required", Value::Array(items)) | ("type", Value::Array(items)) => {
                Value::Array(sorted_list(items, true))
            }
            ("enum", Value::Array(items)) => Value::Array(sorted_list(items, false)),
            _ if DATA_KEYS.contains(&k) => value.clone(),
            ("additionalProperties", Value::Bool(true)) => Value::Bool(true),
            ("additionalProperties", Value::Object(m)) if m.is_empty() => Value::Bool(true),
            (_, Value::Object(members)) if SCHEMA_MAPS.contains(&k) => {
                let mut names: Vec<&String> = members.keys().collect();
                names.sort_by(|a, b| key_cmp(a, b));
                let mut sorted = Map::new();
                for name in names {
                    if let Some(v) = members.get(name) {
                        sorted.insert(name.clone(), canonical_at(v, depth + 1));
                    }
                }
                Value::Object(sorted)
            }
            _ => canonical_at(value, depth + 1),
        };
        out.insert(key.clone(), folded);
    }
    if !out.contains_key("additionalProperties") && is_object_schema(obj) {
        out.insert("additionalProperties".to_owned(), Value::Bool(true));
    }
    out
}

/// The prose of a schema: every prose-key value, by the pointer of the node that carries it.
/// Two schemas whose canonical forms are equal differ in prose exactly when these differ.
pub(crate) fn prose(schema: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    prose_at(schema, String::new(), 0, &mut out);
    out
}

fn prose_at(node: &Value, ptr: String, depth: usize, out: &mut BTreeMap<String, String>) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                prose_at(v, format!("{ptr}/{i}"), depth + 1, out);
            }
        }
        Value::Object(obj) => {
            for (key, value) in obj {
                let k = key.as_str();
                let child = format!("{ptr}/{}", escape(k));
                if PROSE_KEYS.contains(&k) {
                    out.insert(child, stable_stringify(value));
                } else if DATA_KEYS.contains(&k) {
                    continue;
                } else if let (true, Value::Object(members)) = (SCHEMA_MAPS.contains(&k), value) {
                    for (name, v) in members {
                        prose_at(v, format!("{child}/{}", escape(name)), depth + 1, out);
                    }
                } else {
                    prose_at(value, child, depth + 1, out);
                }
            }
        }
        _ => {}
    }
}

/// Whether a `$ref` string appears anywhere in the value (iterative, so any depth is safe).
pub(crate) fn contains_ref(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(obj) => {
                if obj.get("$ref").is_some_and(Value::is_string) {
                    return true;
                }
                stack.extend(obj.values());
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    false
}

/// One JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`).
pub(crate) fn escape(token: &str) -> String {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1")
    } else {
        token.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(v: Value) -> String {
        stable_stringify(&canonical(&v))
    }

    #[test]
    fn spelling_only_differences_fold() {
        let a = json!({
            "type": "object",
            "properties": {"b": {"type": ["null", "string", "null"]}, "a": {"enum": ["y", "x", 2]}},
            "required": ["b", "a", "b"],
            "description": "one",
        });
        let b = json!({
            "required": ["a", "b"],
            "additionalProperties": {},
            "properties": {"a": {"enum": [2, "x", "y"], "title": "A"}, "b": {"type": ["string", "null"]}},
            "type": "object",
            "$comment": "two",
            "examples": [{"a": "x"}],
        });
        assert_eq!(canon(a.clone()), canon(b.clone()));
        assert_ne!(prose(&a), prose(&b));
        assert_eq!(
            canon(json!({"type": "object", "additionalProperties": true})),
            canon(json!({"type": "object"}))
        );
    }

    #[test]
    fn real_differences_survive() {
        assert_ne!(
            canon(json!({"type": "object", "additionalProperties": false})),
            canon(json!({"type": "object"}))
        );
        assert_ne!(
            canon(json!({"items": [{"type": "string"}]})),
            canon(json!({"items": {"type": "string"}}))
        );
        // A property named like a prose key is a property.
        assert_ne!(
            canon(json!({"properties": {"description": {"type": "string"}}})),
            canon(json!({"properties": {}}))
        );
        // Data is data: a default's inner title is compared.
        assert_ne!(
            canon(json!({"default": {"title": "a"}})),
            canon(json!({"default": {"title": "b"}}))
        );
    }

    #[test]
    fn refs_found_at_any_depth_without_recursion() {
        assert!(contains_ref(
            &json!({"properties": {"u": {"$ref": "#/$defs/U"}}})
        ));
        assert!(!contains_ref(
            &json!({"properties": {"$ref": {"type": "string"}}})
        ));
        let mut deep = json!({"$ref": "#"});
        for _ in 0..100 {
            deep = json!({ "items": deep });
        }
        assert!(contains_ref(&deep));
    }

    #[test]
    fn escape_tokens() {
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(escape("plain"), "plain");
    }
}
