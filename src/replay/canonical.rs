//! Canonical JSON for fingerprints, computed over a borrowed tree.
//!
//! The same text comes out whether the tree was read straight from a client's line (the hot path:
//! strings borrowed from the line, no hash map built per object) or viewed over a parsed
//! [`Value`] (the index, and requests whose params were redacted or had volatile fields dropped).
//! Keys are sorted, numbers are JavaScript numbers (`1` and `1.0` are one number, as in the
//! reference), and a key repeated in one object keeps its last value, as a parser would.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::protocol::canonical::js_number;

/// A JSON value whose strings borrow from the text or the [`Value`] it was read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// Every JSON number is an IEEE double to JavaScript, and so here.
    Num(f64),
    Str(Cow<'a, str>),
    Arr(Vec<Node<'a>>),
    /// Members in document order (duplicates included; the writer keeps the last).
    Obj(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// A view over a parsed value.
    pub fn from_value(value: &'a Value) -> Node<'a> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Num(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Node::Str(Cow::Borrowed(s)),
            Value::Array(items) => Node::Arr(items.iter().map(Node::from_value).collect()),
            Value::Object(map) => Node::Obj(
                map.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Node::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// Parses JSON text into a borrowed tree.
    pub fn parse(text: &'a str) -> serde_json::Result<Node<'a>> {
        serde_json::from_str(text)
    }

    /// The member `key` of an object (the last one when repeated).
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            Node::Obj(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// JavaScript's `String(value)`.
    pub fn js_string(&self) -> String {
        match self {
            Node::Null => "null".to_owned(),
            Node::Bool(b) => b.to_string(),
            Node::Num(n) => number_text(*n),
            Node::Str(s) => s.to_string(),
            Node::Arr(items) => items
                .iter()
                .map(|v| match v {
                    Node::Null => String::new(),
                    other => other.js_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
            Node::Obj(_) => "[object Object]".to_owned(),
        }
    }
}

/// Appends the canonical text of `node`: keys sorted by their bytes at every depth, arrays in
/// order, numbers as JavaScript prints them.
pub fn write(node: &Node<'_>, out: &mut String) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Num(n) => write_number(*n, out),
        Node::Str(s) => write_str(s, out),
        Node::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Node::Obj(members) => write_members(members.iter().map(|(k, v)| (k.as_ref(), v)), out),
    }
}

/// Writes an object from its members (any order, duplicates allowed: the last one counts).
pub fn write_members<'n, 'a: 'n>(
    members: impl Iterator<Item = (&'n str, &'n Node<'a>)> + Clone,
    out: &mut String,
) {
    // Most objects arrive with few members, often already in order: write those without sorting.
    let mut previous: Option<&str> = None;
    let in_order = members.clone().all(|(k, _)| {
        let ok = previous.is_none_or(|p| p < k);
        previous = Some(k);
        ok
    });
    if in_order {
        out.push('{');
        for (i, (key, value)) in members.enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(key, out);
            out.push(':');
            write(value, out);
        }
        out.push('}');
        return;
    }
    let mut sorted: Vec<(&str, &Node<'_>)> = members.collect();
    // Stable, so equal keys stay in document order and the last one is kept below.
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    let mut first = true;
    for (i, (key, value)) in sorted.iter().enumerate() {
        if sorted.get(i + 1).is_some_and(|(next, _)| next == key) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_str(key, out);
        out.push(':');
        write(value, out);
    }
    out.push('}');
}

/// Appends a number as JavaScript prints it.
fn write_number(n: f64, out: &mut String) {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        // Exactly representable integers, without the formatting machinery.
        let mut v = n as i64;
        if v == 0 {
            out.push('0');
            return;
        }
        if v < 0 {
            out.push('-');
            v = -v;
        }
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        while v > 0 {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        for &d in &digits[at..] {
            out.push(char::from(d));
        }
        return;
    }
    out.push_str(&js_number(n));
}

fn number_text(n: f64) -> String {
    // Integers in the exactly representable range print as themselves; js_number covers the
    // rest (fractions, exponents) the way Number.prototype.toString does.
    if n.fract() == 0.0 && n.abs() < 1e15 {
        if n == 0.0 {
            return "0".to_owned();
        }
        return (n as i64).to_string();
    }
    js_number(n)
}

/// A JSON string literal, escaped as `JSON.stringify` escapes it.
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => out.push_str(&format!("\\u{b:04x}")),
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

impl<'de: 'a, 'a> Deserialize<'de> for Node<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor(PhantomData))
    }
}

struct NodeVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for NodeVisitor<'a> {
    type Value = Node<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node<'a>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'a>, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'a>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'a>, E> {
        Ok(Node::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'a>, E> {
        Ok(Node::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node<'a>, E> {
        Ok(Node::Num(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'a>, E> {
        Ok(Node::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'a>, E> {
        Ok(Node::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'a>, E> {
        Ok(Node::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'a>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<Node<'a>>()? {
            items.push(item);
        }
        Ok(Node::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'a>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(key) = map.next_key::<Key<'a>>()? {
            let value = map.next_value::<Node<'a>>()?;
            members.push((key.0, value));
        }
        Ok(Node::Obj(members))
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canon_text(text: &str) -> String {
        let mut out = String::new();
        write(&Node::parse(text).unwrap(), &mut out);
        out
    }

    fn canon_value(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut out = String::new();
        write(&Node::from_value(&v), &mut out);
        out
    }

    #[test]
    fn integers_and_order() {
        for n in [
            "0",
            "-7",
            "123456789012345",
            "999999999999999",
            "1e15",
            "-1e16",
            "2.5",
            "1e-7",
        ] {
            let v: f64 = n.parse().unwrap();
            let mut out = String::new();
            write_number(v, &mut out);
            assert_eq!(out, js_number(v), "{n}");
        }
        assert_eq!(canon_text(r#"{"a":1,"b":2}"#), r#"{"a":1,"b":2}"#);
        assert_eq!(canon_text(r#"{"b":1,"a":2,"b":3}"#), r#"{"a":2,"b":3}"#);
    }

    #[test]
    fn sorted_numbers_folded_duplicates_last() {
        assert_eq!(
            canon_text(r#"{"b":[1.0,{"z":1,"a":2e0}],"a":"x\n\u0001"}"#),
            r#"{"a":"x\n\u0001","b":[1,{"a":2,"z":1}]}"#
        );
        assert_eq!(canon_text(r#"{"a":1,"a":2}"#), r#"{"a":2}"#);
        assert_eq!(canon_value(r#"{"a":1,"a":2}"#), r#"{"a":2}"#);
        assert_eq!(canon_text("1e21"), "1e+21");
        assert_eq!(canon_text("0.1"), "0.1");
        assert_eq!(canon_text("-0"), "0");
        assert_eq!(canon_text(r#""\u00e9\"""#), "\"é\\\"\"");
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-c\\PC]{0,3}", inner), 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn text_and_value_views_agree(v in json()) {
            let text = v.to_string();
            prop_assert_eq!(canon_text(&text), canon_value(&text));
        }
    }
}
