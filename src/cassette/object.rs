//! A JSON object kept as an ordered list of members whose values are raw JSON text.
//!
//! This is what lets a cassette line be read, one member changed, and written again with every
//! other byte of every other member exactly as it was — including members this build has never
//! heard of.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[derive(Debug, Clone, Default)]
pub struct RawObject {
    members: Vec<(String, Box<RawValue>)>,
}

impl RawObject {
    pub fn new() -> RawObject {
        RawObject::default()
    }

    /// Parses one JSON object from text.
    pub fn parse(text: &str) -> serde_json::Result<RawObject> {
        serde_json::from_str(text)
    }

    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// Parses one member into a typed value; `None` when absent, `Some(Err)` when of the wrong shape.
    pub fn get_as<'a, T: Deserialize<'a>>(&'a self, key: &str) -> Option<serde_json::Result<T>> {
        self.get(key).map(|raw| serde_json::from_str(raw.get()))
    }

    /// Replaces a member in place, or appends it when absent.
    pub fn set_raw(&mut self, key: &str, value: Box<RawValue>) {
        match self.members.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.members.push((key.to_owned(), value)),
        }
    }

    /// Replaces or appends a member from any serialisable value.
    pub fn set<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        if let Ok(raw) = serde_json::value::to_raw_value(value) {
            self.set_raw(key, raw);
        }
    }

    /// Replaces or appends a member given as JSON text that the caller knows to be valid.
    pub fn set_json(&mut self, key: &str, json: String) {
        if let Ok(raw) = RawValue::from_string(json) {
            self.set_raw(key, raw);
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Box<RawValue>> {
        let at = self.members.iter().position(|(k, _)| k == key)?;
        Some(self.members.remove(at).1)
    }

    pub fn members(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.members.iter().map(|(k, v)| (k.as_str(), v.as_ref()))
    }

    /// Compact JSON text of the object, members in their order.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(
            self.members
                .iter()
                .map(|(k, v)| k.len() + v.get().len() + 4)
                .sum::<usize>()
                + 2,
        );
        out.push('{');
        for (i, (k, v)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(&mut out, k);
            out.push(':');
            out.push_str(v.get());
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
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = RawObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(6));
                while let Some(key) = map.next_key::<String>()? {
                    let value: Box<RawValue> = map.next_value()?;
                    members.push((key, value));
                }
                Ok(RawObject { members })
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_unknown_members_and_bytes() {
        let text = r#"{"type":"frame","t":1,"future":{"x": [1.0, 2]},"frame":{"b":1,"a":2}}"#;
        let mut o = RawObject::parse(text).unwrap();
        assert_eq!(o.get("future").unwrap().get(), r#"{"x": [1.0, 2]}"#);
        o.set("t", &5);
        assert_eq!(
            o.to_json(),
            r#"{"type":"frame","t":5,"future":{"x": [1.0, 2]},"frame":{"b":1,"a":2}}"#
        );
        assert!(RawObject::parse("[1]").is_err());
    }
}
