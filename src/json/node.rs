//! A JSON value as a borrowed tree: strings point into the text (or the [`Value`]) it was read
//! from, objects keep their members in document order, duplicates included. It is what the
//! canonical writer reads when the text is not already canonical, and what replay inspects a
//! request's params through without building a [`Value`].

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::number::js_number;

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
            Node::Num(n) => js_number(*n),
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

    #[test]
    fn views_and_javascript_strings() {
        let n = Node::parse(r#"{"a":1,"b":[1.0,null,"x"],"a":{"k":true}}"#).unwrap();
        assert_eq!(
            n.get("a"),
            Some(&Node::Obj(vec![("k".into(), Node::Bool(true))]))
        );
        assert_eq!(n.get("b").unwrap().js_string(), "1,,x");
        assert_eq!(n.js_string(), "[object Object]");
        assert_eq!(Node::Num(1e21).js_string(), "1e+21");
        let v: Value = serde_json::from_str(r#"{"z":"\u00e9","a":[2.5]}"#).unwrap();
        assert_eq!(
            Node::from_value(&v),
            Node::parse(r#"{"z":"é","a":[2.5]}"#).unwrap()
        );
    }
}
