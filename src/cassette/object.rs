//! A JSON object kept as its text plus the spans of its members.
//!
//! This is what lets a cassette line be read, one member changed, and written again with every
//! other byte of every other member exactly as it was — including members this build has never
//! heard of. Reading costs one validating pass and no allocation per member: members are
//! byte ranges into the line, and only a member that is set gets text of its own.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[derive(Debug, Clone)]
enum Text {
    Span(Range<usize>),
    Owned(Box<str>),
}

#[derive(Debug, Clone, Default)]
pub struct RawObject {
    source: String,
    members: Vec<(Text, Text)>,
}

/// The members of a borrowed object, as the parser hands them over.
struct Borrowed<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Borrowed<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Borrowed<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Borrowed<'de>, A::Error> {
                let mut members = Vec::with_capacity(6);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    members.push((key, value));
                }
                Ok(Borrowed(members))
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

impl RawObject {
    pub fn new() -> RawObject {
        RawObject::default()
    }

    /// Parses one JSON object from text (validating all of it).
    pub fn parse(text: &str) -> serde_json::Result<RawObject> {
        RawObject::parse_owned(text.to_owned())
    }

    /// As [`RawObject::parse`], keeping the given string as the backing text.
    pub fn parse_owned(source: String) -> serde_json::Result<RawObject> {
        let members = {
            let Borrowed(borrowed) = serde_json::from_str::<Borrowed<'_>>(&source)?;
            let base = source.as_ptr() as usize;
            let span_of = |s: &str| -> Option<Range<usize>> {
                let start = (s.as_ptr() as usize).checked_sub(base)?;
                (start + s.len() <= source.len()).then_some(start..start + s.len())
            };
            borrowed
                .into_iter()
                .map(|(k, v)| {
                    let key = match &k {
                        Cow::Borrowed(b) => {
                            span_of(b).map_or_else(|| Text::Owned((*b).into()), Text::Span)
                        }
                        Cow::Owned(o) => Text::Owned(o.as_str().into()),
                    };
                    let value =
                        span_of(v.get()).map_or_else(|| Text::Owned(v.get().into()), Text::Span);
                    (key, value)
                })
                .collect()
        };
        Ok(RawObject { source, members })
    }

    fn text<'a>(&'a self, t: &'a Text) -> &'a str {
        match t {
            Text::Span(r) => self.source.get(r.clone()).unwrap_or_default(),
            Text::Owned(s) => s,
        }
    }

    /// The raw JSON text of a member.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|(k, _)| self.text(k) == key)
            .map(|(_, v)| self.text(v))
    }

    /// Parses one member into a typed value; `None` when absent, `Some(Err)` when of the wrong shape.
    pub fn get_as<'a, T: Deserialize<'a>>(&'a self, key: &str) -> Option<serde_json::Result<T>> {
        self.get(key).map(serde_json::from_str)
    }

    /// Replaces a member in place, or appends it when absent. `json` must be valid JSON text.
    fn set_text(&mut self, key: &str, json: Box<str>) {
        let at = self.members.iter().position(|(k, _)| self.text(k) == key);
        match at {
            Some(i) => self.members[i].1 = Text::Owned(json),
            None => self
                .members
                .push((Text::Owned(key.into()), Text::Owned(json))),
        }
    }

    /// Replaces or appends a member from raw JSON.
    pub fn set_raw(&mut self, key: &str, value: Box<RawValue>) {
        let text: Box<str> = value.into();
        self.set_text(key, text);
    }

    /// Replaces or appends a member from any serialisable value.
    pub fn set<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        if let Ok(json) = serde_json::to_string(value) {
            self.set_text(key, json.into());
        }
    }

    /// Replaces or appends a member given as JSON text that the caller knows to be valid
    /// (for instance the text of a parsed [`crate::jsonrpc::Frame`]).
    pub fn set_json(&mut self, key: &str, json: String) {
        self.set_text(key, json.into());
    }

    pub fn remove(&mut self, key: &str) -> Option<String> {
        let at = self.members.iter().position(|(k, _)| self.text(k) == key)?;
        let (_, v) = self.members.remove(at);
        Some(self.text(&v).to_owned())
    }

    /// Members in order, as (key, raw JSON text).
    pub fn members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.members
            .iter()
            .map(|(k, v)| (self.text(k), self.text(v)))
    }

    /// Compact JSON text of the object, members in their order.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.source.len() + 16);
        out.push('{');
        for (i, (k, v)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(&mut out, self.text(k));
            out.push(':');
            out.push_str(self.text(v));
        }
        out.push('}');
        out
    }
}

fn push_json_string(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::Value::String(s.to_owned()).to_string());
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Deserialising from an arbitrary source cannot borrow spans; go through the text.
        let raw: Box<RawValue> = Deserialize::deserialize(deserializer)?;
        RawObject::parse(raw.get()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_unknown_members_and_bytes() {
        let text = r#"{"type":"frame","t":1,"future":{"x": [1.0, 2]},"frame":{"b":1,"a":2}}"#;
        let mut o = RawObject::parse(text).unwrap();
        assert_eq!(o.get("future").unwrap(), r#"{"x": [1.0, 2]}"#);
        o.set("t", &5);
        assert_eq!(
            o.to_json(),
            r#"{"type":"frame","t":5,"future":{"x": [1.0, 2]},"frame":{"b":1,"a":2}}"#
        );
        assert!(RawObject::parse("[1]").is_err());
        assert!(RawObject::parse("{\"a\":1").is_err());
    }

    #[test]
    fn escaped_keys_and_spaces() {
        let mut o = RawObject::parse("{ \"a\\u0062\" : [ 1 ] , \"c\":\"d\" }").unwrap();
        assert_eq!(o.get("ab"), Some("[ 1 ]"));
        assert_eq!(o.to_json(), "{\"ab\":[ 1 ],\"c\":\"d\"}");
        assert_eq!(o.remove("c").as_deref(), Some("\"d\""));
    }
}
