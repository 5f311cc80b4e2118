use std::cmp::Ordering;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;
use crate::json::number::js_number;

fn canon_text(text: &str) -> String {
    let mut out = String::new();
    write(&Node::parse(text).unwrap(), &mut out);
    out
}

fn canon_node_of_value(v: &Value) -> String {
    let mut out = String::new();
    write(&Node::from_value(v), &mut out);
    out
}

/// UTF-16 code-unit order, computed the obvious way.
fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Canonical text as each former writer spelled it: keys sorted by `cmp` (UTF-16 for the
/// contract's `stable_stringify`, UTF-8 bytes for replay's fingerprints), strings escaped by
/// serde_json, numbers as JavaScript prints them.
fn former(v: &Value, cmp: fn(&str, &str) -> Ordering) -> String {
    match v {
        Value::Number(n) => js_number(n.as_f64().unwrap()),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| former(i, cmp)).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| cmp(a.0, b.0));
            let members: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String((*k).clone()), former(v, cmp)))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        other => other.to_string(),
    }
}

fn byte_cmp(a: &str, b: &str) -> Ordering {
    a.cmp(b)
}

/// Whether some object in `v` has two keys that byte order and UTF-16 order put the other way
/// round: the only inputs on which replay's former byte-ordered writer spelled differently.
fn orders_part(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(orders_part),
        Value::Object(map) => {
            let keys: Vec<&String> = map.keys().collect();
            keys.iter()
                .any(|a| keys.iter().any(|b| utf16_cmp(a, b) != a.as_str().cmp(b)))
                || map.values().any(orders_part)
        }
        _ => false,
    }
}

/// Keys from the ranges where the orders differ (U+E000-U+FFFF against astral characters),
/// mixed with ASCII and anything printable. Shared with the scanner's tests.
pub(crate) fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c\\PC]{0,3}",
        "[ab\u{E000}-\u{E002}\u{F8FF}\u{FFFD}-\u{FFFF}\u{10000}-\u{10002}\u{1F600}\u{10FFFF}]{0,3}",
    ]
}

/// Any JSON value, small: every scalar kind, strings with escapes, objects keyed by [`key`].
pub(crate) fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,8}|[\"\\\\\\x00-\\x1f\\x7f]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The same value with every object's members in reverse order and integers written as floats.
fn respelled(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_i64() && n.as_i64().unwrap().unsigned_abs() < 1 << 53 => {
            json!(n.as_f64().unwrap())
        }
        Value::Array(items) => Value::Array(items.iter().map(respelled).collect()),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map.iter().rev() {
                out.insert(k.clone(), respelled(v));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[test]
fn sorted_numbers_folded_duplicates_last() {
    assert_eq!(
        canon_text(r#"{"b":[1.0,{"z":1,"a":2e0}],"a":"x\n\u0001"}"#),
        r#"{"a":"x\n\u0001","b":[1,{"a":2,"z":1}]}"#
    );
    assert_eq!(canon_text(r#"{"a":1,"b":2}"#), r#"{"a":1,"b":2}"#);
    assert_eq!(canon_text(r#"{"b":1,"a":2,"b":3}"#), r#"{"a":2,"b":3}"#);
    assert_eq!(canon_text(r#"{"a":1,"a":2}"#), r#"{"a":2}"#);
    assert_eq!(canon_text("1e21"), "1e+21");
    assert_eq!(canon_text("0.1"), "0.1");
    assert_eq!(canon_text("-0"), "0");
    assert_eq!(canon_text(r#""\u00e9\"""#), "\"é\\\"\"");
    let v: Value = serde_json::from_str(r#"{"b":[1.0,{"z":1,"a":2}],"a":"x"}"#).unwrap();
    assert_eq!(stable_stringify(&v), r#"{"a":"x","b":[1,{"a":2,"z":1}]}"#);
    assert_eq!(stable_stringify(&json!({})), "{}");
    assert_eq!(stable_stringify(&json!([])), "[]");
    assert_eq!(quote("a\"\n\u{1}\u{7f}"), "\"a\\\"\\n\\u0001\u{7f}\"");
}

#[test]
fn keys_in_utf16_order() {
    // U+FFFF is one code unit 0xFFFF; U+10000 is the pair 0xD800 0xDC00, which sorts first,
    // though its UTF-8 bytes (F0 ...) sort after U+FFFF's (EF ...).
    let v = json!({"\u{FFFF}": 1, "\u{10000}": 2, "\u{E000}": 3, "z": 4});
    assert_eq!(
        stable_stringify(&v),
        "{\"z\":4,\"\u{10000}\":2,\"\u{E000}\":3,\"\u{FFFF}\":1}"
    );
    assert_eq!(key_cmp("a\u{10000}", "a\u{FFFF}"), Ordering::Less);
    assert_eq!(key_cmp("\u{D7FF}", "\u{10000}"), Ordering::Less);
    assert_eq!(key_cmp("a", "ab"), Ordering::Less);
    assert_eq!(key_cmp("\u{1F600}", "\u{1F600}"), Ordering::Equal);
}

proptest! {
    #[test]
    fn key_order_is_utf16_order(a in key(), b in key()) {
        prop_assert_eq!(key_cmp(&a, &b), utf16_cmp(&a, &b));
    }

    /// The writer spells a value as the contract's former `stable_stringify` did (UTF-16 order)
    /// on every input, whether it reads a [`Value`], a [`Node`] over one, or a [`Node`] parsed
    /// from the text; and as replay's former fingerprint writer (byte order) did wherever the two
    /// orders agree on the keys.
    #[test]
    fn one_writer_for_every_former_use(v in json()) {
        let one = stable_stringify(&v);
        prop_assert_eq!(&one, &former(&v, utf16_cmp));
        prop_assert_eq!(&one, &canon_node_of_value(&v));
        prop_assert_eq!(&one, &canon_text(&v.to_string()));
        if !orders_part(&v) {
            prop_assert_eq!(&one, &former(&v, byte_cmp));
        }
    }

    /// Which requests match is unchanged by the key order: a value and its respelling (members
    /// reversed, integers as floats) share a canonical text, and the canonical text reads back as
    /// the value it came from in the byte-ordered writer's eyes too.
    #[test]
    fn matching_is_unchanged(v in json()) {
        let one = stable_stringify(&v);
        prop_assert_eq!(&one, &stable_stringify(&respelled(&v)));
        let back: Value = serde_json::from_str(&one).unwrap();
        prop_assert_eq!(former(&back, byte_cmp), former(&v, byte_cmp));
    }
}
