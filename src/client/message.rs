//! Reading what a server sends: one line into a response, a server request, a notification, or
//! something to skip. Pure: the client decides what to do with each.
//!
//! Results and error payloads stay raw JSON text. serde_json skips over raw values with an
//! iterative scanner, so an answer nested far deeper than its 128-level parse limit is still
//! read and routed; only the caller who parses it finds out, and can say where.

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonrpc::Id;

/// What one line from the server is, borrowed from the line.
#[derive(Debug)]
pub(super) enum Incoming<'a> {
    /// An answer: `id` plus `result` or `error`.
    Response(Reply<'a>),
    /// A request from the server (legacy servers may ping or ask for roots).
    Request { id: Id, method: String },
    /// A notification (progress, logs, list changes): not the client's business here.
    Notification,
    /// Not a JSON-RPC message at all (a log line, garbage, a batch array).
    NotJsonRpc,
}

/// An answer as it sits in its line: nothing is copied until a caller asks for a [`Response`]
/// (a relayed answer never is: its caller wants the line).
#[derive(Debug)]
pub(super) struct Reply<'a> {
    /// A valid id ([`Id::from_raw`] reads it).
    id: &'a RawValue,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl Reply<'_> {
    /// Whether this answers the request whose id is `wanted` (an id this client chose), by
    /// the reference's `String(id)`, as [`Id::key`] spells it.
    pub(super) fn answers(&self, wanted: u64) -> bool {
        let text = self.id.get();
        // The common case, a short integer (JSON has no leading zeros), is its own key: compare
        // it without building one. Longer ones may read differently in JavaScript.
        if (1..=15).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
            return text.parse::<u64>() == Ok(wanted);
        }
        Id::from_raw(self.id).is_some_and(|id| id.key() == wanted.to_string())
    }

    /// The answer's id, as [`Id::key`] spells it.
    pub(super) fn key(&self) -> String {
        Id::from_raw(self.id).map(|id| id.key()).unwrap_or_default()
    }

    /// The answer, copied out of its line.
    pub(super) fn to_response(&self) -> Response {
        let outcome = match (self.result, self.error) {
            (_, Some(error)) => Outcome::Error(read_error(error)),
            (Some(result), None) => Outcome::Result(result.to_owned()),
            // `classify` makes no reply without one of the two.
            (None, None) => Outcome::Result(RawValue::NULL.to_owned()),
        };
        Response {
            id: Id::from_raw(self.id).unwrap_or(Id::Null),
            outcome,
        }
    }
}

/// An answer to one of our requests.
#[derive(Debug)]
pub struct Response {
    pub id: Id,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub enum Outcome {
    Result(Box<RawValue>),
    Error(RpcError),
}

/// A JSON-RPC error object, read leniently (a missing message is empty, an odd code is 0).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<Value>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorObject {
    code: Option<Value>,
    message: Option<Value>,
    data: Option<Value>,
}

/// Whether [`Id::from_json`] reads `raw` (valid JSON) as an id, without building one.
fn is_id(raw: &RawValue) -> bool {
    let text = raw.get().trim();
    matches!(text.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9')) || text == "null"
}

/// Classifies one line. Never fails: what cannot be read is [`Incoming::NotJsonRpc`].
pub(super) fn classify(line: &[u8]) -> Incoming<'_> {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(line) else {
        return Incoming::NotJsonRpc;
    };
    let id = envelope.id.filter(|raw| is_id(raw));
    match (envelope.method, id) {
        (Some(Value::String(method)), Some(id)) => match Id::from_raw(id) {
            Some(id) => Incoming::Request { id, method },
            None => Incoming::Notification,
        },
        (Some(_), _) => Incoming::Notification,
        (None, Some(id)) => match (envelope.result, envelope.error) {
            (None, None) => Incoming::NotJsonRpc,
            (result, error) => Incoming::Response(Reply { id, result, error }),
        },
        (None, None) => Incoming::NotJsonRpc,
    }
}

fn read_error(raw: &RawValue) -> RpcError {
    let object = serde_json::from_str::<ErrorObject>(raw.get()).ok();
    let (code, message, data) = match object {
        Some(ErrorObject {
            code,
            message,
            data,
        }) => (code, message, data),
        None => (None, None, None),
    };
    RpcError {
        code: code.as_ref().and_then(Value::as_i64).unwrap_or(0),
        message: match message {
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
            None => String::new(),
        },
        data,
    }
}

/// A JSON object's members in order, each kept raw (so one member too deep to parse does not
/// make the others unreadable).
pub struct RawMembers(pub Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for RawMembers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = RawMembers;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMembers, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(entry);
                }
                Ok(RawMembers(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

impl RawMembers {
    /// Parses an object's text; `None` when it is not an object.
    pub fn parse(text: &str) -> Option<RawMembers> {
        serde_json::from_str(text).ok()
    }

    /// The last member with this key (JSON.parse keeps the last of duplicates).
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Strategy as _;

    use super::*;

    #[test]
    fn responses_requests_notifications_and_noise() {
        let Incoming::Response(reply) = classify(br#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#)
        else {
            panic!()
        };
        assert!(reply.answers(3) && !reply.answers(4));
        let r = reply.to_response();
        assert_eq!(r.id.key(), "3");
        assert!(matches!(r.outcome, Outcome::Result(ref raw) if raw.get() == r#"{"a":1}"#));

        let Incoming::Response(reply) = classify(
            br#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"nope","data":[1]}}"#,
        ) else {
            panic!()
        };
        let Outcome::Error(e) = reply.to_response().outcome else {
            panic!()
        };
        assert_eq!((e.code, e.message.as_str()), (-32601, "nope"));
        assert_eq!(e.data, Some(serde_json::json!([1])));

        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#),
            Incoming::Request { ref method, .. } if method == "ping"
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#),
            Incoming::Notification
        ));
        for noise in [
            &b"starting up"[..],
            b"",
            b"[1,2]",
            b"{\"jsonrpc\":\"2.0\",\"id\":",
            b"{\"id\":1}",
            b"\xff\xfe",
        ] {
            assert!(matches!(classify(noise), Incoming::NotJsonRpc), "{noise:?}");
        }
    }

    proptest::proptest! {
        /// The short-integer shortcut of [`Reply::answers`] reads ids as [`Id::key`] does.
        #[test]
        fn answers_matches_the_key(
            id in proptest::prop_oneof![
                (0_u64..40).prop_map(|n| n.to_string()),
                (0_u64..u64::MAX).prop_map(|n| n.to_string()),
                proptest::string::string_regex("-?[0-9]{1,3}(\\.[0-9]{1,2})?([eE][+-]?[0-9])?").unwrap(),
                (0_u64..40).prop_map(|n| format!("\"{n}\"")),
            ],
            wanted in proptest::prop_oneof![0_u64..40, proptest::num::u64::ANY],
        ) {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
            if let Incoming::Response(reply) = classify(line.as_bytes()) {
                let by_key = Id::from_json(&id).is_some_and(|i| i.key() == wanted.to_string());
                proptest::prop_assert_eq!(reply.answers(wanted), by_key, "{}", id);
            }
        }
    }

    #[test]
    fn a_result_deeper_than_the_parse_limit_is_still_routed() {
        let depth = 10_000;
        let mut line = String::from(r#"{"jsonrpc":"2.0","id":1,"result":"#);
        line.push_str(&"[".repeat(depth));
        line.push_str(&"]".repeat(depth));
        line.push('}');
        let Incoming::Response(reply) = classify(line.as_bytes()) else {
            panic!()
        };
        let Outcome::Result(raw) = reply.to_response().outcome else {
            panic!()
        };
        assert_eq!(raw.get().len(), 2 * depth);
        assert!(serde_json::from_str::<Value>(raw.get()).is_err());
    }

    #[test]
    fn raw_members_keep_order_and_survive_deep_members() {
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let text = format!(r#"{{"name":"deep","inputSchema":{deep},"description":"d"}}"#);
        let members = RawMembers::parse(&text).unwrap();
        let keys: Vec<_> = members.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["name", "inputSchema", "description"]);
        assert_eq!(members.get("description").unwrap().get(), r#""d""#);
        assert!(RawMembers::parse("[1]").is_none());
    }
}
