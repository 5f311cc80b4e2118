//! JSON text spelled the way JavaScript's `JSON.stringify` spells it, so a snapshot written here is
//! byte-identical to one the reference writes from the same listing, and drift messages quote
//! values the same way. This is not canonical text ([`super::canonical`]): members keep their
//! order, as a JavaScript object keeps it.
//!
//! Two JavaScript habits matter: numbers are printed by `Number.prototype.toString` (`1.0` is
//! `1`, `1e21` is `1e+21`), and an object's integer-like keys (`"0"`, `"42"`) come first, in
//! ascending numeric order, before the other keys in insertion order. Strings are escaped as
//! `JSON.stringify` escapes them ([`write_str`]).
//!
//! Depth: every value here was produced by serde_json's parser, which refuses nesting deeper
//! than 128, so the recursion below is bounded by that; [`MAX_DEPTH`] is a second fence for
//! values built some other way, past which a subtree is written as `null` rather than
//! recursed into.

use serde_json::{Map, Value};

use super::canonical::write_str;
use super::number::write_number;

/// Deepest nesting written out.
pub(crate) const MAX_DEPTH: usize = 512;

/// `JSON.stringify(value, null, 2)`.
pub(crate) fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out, Some(0), 0, usize::MAX);
    out
}

/// `JSON.stringify(value)`.
pub(crate) fn compact(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out, None, 0, usize::MAX);
    out
}

/// The start of `JSON.stringify(value)`: writing stops soon after the text passes `cap` bytes
/// (a string member is cut to `cap` characters first), so showing the head of a 50 MB value
/// never serialises all of it. Whatever it returns is a prefix of [`compact`]'s text, except
/// that a cut string is closed with its quote.
pub(crate) fn compact_head(value: &Value, cap: usize) -> String {
    let mut out = String::new();
    write(value, &mut out, None, 0, cap);
    out
}

/// `String(value)` as a template literal would print it (`undefined` for an absent value).
pub(crate) fn display(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => {
            let mut out = String::new();
            number(n, &mut out);
            out
        }
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                // Array.prototype.join prints null and undefined as empty.
                Value::Null => String::new(),
                other => display(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}

fn number(n: &serde_json::Number, out: &mut String) {
    match n.as_f64() {
        Some(f) => write_number(f, out),
        None => out.push_str(&n.to_string()),
    }
}

/// An array index as JavaScript orders object keys: a canonical decimal below 2^32 - 1.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|n| *n < u64::from(u32::MAX))
        .map(|n| n as u32)
}

/// Object members in JavaScript property order.
pub(crate) fn js_order(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
    let mut named: Vec<(&String, &Value)> = Vec::with_capacity(map.len());
    for (k, v) in map {
        match array_index(k) {
            Some(i) => indexed.push((i, k, v)),
            None => named.push((k, v)),
        }
    }
    if indexed.is_empty() {
        return named;
    }
    indexed.sort_by_key(|(i, _, _)| *i);
    indexed
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(named)
        .collect()
}

fn newline(out: &mut String, indent: Option<usize>) {
    if let Some(level) = indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str("  ");
        }
    }
}

fn write(value: &Value, out: &mut String, indent: Option<usize>, depth: usize, cap: usize) {
    if out.len() > cap {
        return;
    }
    if depth > MAX_DEPTH {
        out.push_str("null");
        return;
    }
    let inner = indent.map(|l| l + 1);
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => number(n, out),
        Value::String(s) if s.len() > cap => {
            let head: String = s.chars().take(cap).collect();
            write_str(&head, out);
        }
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, inner);
                write(item, out, inner, depth + 1, cap);
                if out.len() > cap {
                    return;
                }
            }
            newline(out, indent);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (k, v)) in js_order(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, inner);
                write_str(k, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write(v, out, inner, depth + 1, cap);
                if out.len() > cap {
                    return;
                }
            }
            newline(out, indent);
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_matches_json_stringify() {
        let v: Value =
            serde_json::from_str(r#"{"b":[1.0,2.5,{}],"a":{"x":[]},"10":"ten","2":null}"#).unwrap();
        assert_eq!(
            pretty(&v),
            "{\n  \"2\": null,\n  \"10\": \"ten\",\n  \"b\": [\n    1,\n    2.5,\n    {}\n  ],\n  \"a\": {\n    \"x\": []\n  }\n}"
        );
        assert_eq!(
            compact(&v),
            r#"{"2":null,"10":"ten","b":[1,2.5,{}],"a":{"x":[]}}"#
        );
    }

    #[test]
    fn the_head_is_a_prefix_of_the_whole() {
        let v: Value = serde_json::from_str(
            r#"{"b":[1.0,2.5,{"deep":[true,null,"text"]}],"a":{"x":[]},"10":"ten","2":null}"#,
        )
        .unwrap();
        let whole = compact(&v);
        for cap in 0..whole.len() + 2 {
            let head = compact_head(&v, cap);
            assert!(whole.starts_with(&head), "cap {cap}: {head}");
            assert!(head.len() >= cap.min(whole.len()), "cap {cap}: {head}");
        }
        assert_eq!(compact_head(&v, usize::MAX), whole);
        let long = Value::String("é".repeat(100));
        assert_eq!(compact_head(&long, 3), "\"ééé\"");
    }

    #[test]
    fn numeric_looking_keys_that_are_not_indices_keep_their_place() {
        let v: Value = serde_json::from_str(r#"{"b":1,"01":2,"-1":3,"1.5":4}"#).unwrap();
        assert_eq!(compact(&v), r#"{"b":1,"01":2,"-1":3,"1.5":4}"#);
    }

    #[test]
    fn display_as_template_literal() {
        assert_eq!(display(None), "undefined");
        assert_eq!(display(Some(&json!("string"))), "string");
        assert_eq!(display(Some(&json!(["string", "null"]))), "string,null");
        assert_eq!(display(Some(&json!({"a": 1}))), "[object Object]");
        assert_eq!(display(Some(&json!(1.0))), "1");
    }

    #[test]
    fn escapes_control_characters_like_javascript() {
        assert_eq!(compact(&json!("a\"b\\c\n\u{1}")), r#""a\"b\\c\n\u0001""#);
    }
}
