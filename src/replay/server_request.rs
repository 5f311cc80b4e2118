//! Requests the recorded server sent its client — `sampling/createMessage`, `elicitation/create`,
//! `roots/list`, a `ping` — replayed (docs/replay.md, "Requests from the server").
//!
//! The [`schedule`](super::schedule) places each where it was recorded, as it places a
//! notification: one recorded while a call was outstanding goes out before that call's answer.
//! The session sends it with a fresh id ([`ID_PREFIX`] and a number: a string no client uses for
//! its own requests, so the client's answer cannot be mistaken for anything else), the front-end
//! holds back what follows until the client answers, and the answer is compared with the one the
//! client gave in the recording through the structural diff misses use ([`crate::json::diff`]).
//!
//! Pure: the front-ends do the waiting.

use serde_json::Value;

use super::miss::differing_paths;
use super::volatile::VolatileSet;
use super::wire::Outbound;
use crate::json::diff::{DiffEntry, diff_values, remove_pointer};
use crate::redact::Redactor;

/// The id of every request replay sends the client starts with this, then a number.
pub const ID_PREFIX: &str = "mcp-cassette-replay-";

/// The capabilities a client declared in its `initialize`, as far as requests from the server
/// depend on them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared {
    sampling: bool,
    elicitation: bool,
    roots: bool,
}

impl Declared {
    /// From `initialize`'s params: a capability is declared when its member is present.
    pub fn from_initialize(params: Option<&Value>) -> Declared {
        let caps = params.and_then(|p| p.get("capabilities"));
        let has = |name: &str| caps.and_then(|c| c.get(name)).is_some_and(|v| !v.is_null());
        Declared {
            sampling: has("sampling"),
            elicitation: has("elicitation"),
            roots: has("roots"),
        }
    }

    /// Reads the capabilities from a client line, when it is an `initialize` request. Cheap on
    /// any other line: only a line naming the method is parsed.
    pub fn from_line(line: &str) -> Option<Declared> {
        if !line.contains("\"initialize\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        (v.get("method")?.as_str()? == "initialize" && v.get("id").is_some())
            .then(|| Declared::from_initialize(v.get("params")))
    }

    /// The capability `method` needs that the client did not declare, if any. A method no
    /// capability governs (`ping`) never lacks one.
    pub fn lacks(&self, method: &str) -> Option<&'static str> {
        match method {
            "sampling/createMessage" if !self.sampling => Some("sampling"),
            "elicitation/create" if !self.elicitation => Some("elicitation"),
            "roots/list" if !self.roots => Some("roots"),
            _ => None,
        }
    }
}

/// A request from the server, ready to go out in an exchange.
#[derive(Debug, Clone)]
pub struct Asked {
    /// How many of the exchange's frames ([`Exchange::frames`](super::Exchange::frames)) go out
    /// before it.
    pub at: usize,
    /// Its number in [`Index::asks`](super::Index::asks).
    pub ask: usize,
    /// The fresh id, as the string it is (without quotes).
    pub id: String,
    /// The id the request was recorded with: a script repeating the recorded client side answers
    /// with it, and is understood too.
    pub recorded_id: Option<Value>,
    /// The recorded request with the fresh id.
    pub frame: Outbound,
    /// Recorded inside the event stream that carried the call's answer (HTTP), so it goes out on
    /// that stream; otherwise it goes where the recording's unsolicited frames go.
    pub in_answer: bool,
}

/// The fresh id of the `n`th request a session sends, as JSON text.
pub fn fresh_id(n: u64) -> String {
    format!("\"{ID_PREFIX}{n}\"")
}

/// Whether `message` (a client line, parsed) answers `asked`: a response carrying its fresh id,
/// or the id it was recorded with (replay sends no other request, so a response can answer
/// nothing else).
pub fn answers(message: &Value, asked: &Asked) -> bool {
    let Some(id) = message.get("id") else {
        return false;
    };
    (id.as_str() == Some(asked.id.as_str()) || Some(id) == asked.recorded_id.as_ref())
        && (message.get("result").is_some() || message.get("error").is_some())
        && message.get("method").is_none()
}

/// What a client's answer came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// As recorded, declared-volatile fields aside.
    Same,
    /// The recording holds no answer to compare with.
    Unrecorded,
    /// Different at these paths (JSON Pointers from the response's root: `/result/...`).
    Differs(Vec<DiffEntry>),
}

/// Compares the client's live answer (a whole response) with the recorded one. Only `result` or
/// `error` count: the id is replay's own, and `jsonrpc` is always the same. A `--volatile`
/// declaration scoped to the request's method (`sampling/createMessage:/model`) is a pointer
/// into `result`, dropped on both sides.
pub fn compare(
    recorded: Option<&str>,
    live: &Value,
    method: &str,
    volatile: &VolatileSet,
) -> Verdict {
    let Some(recorded) = recorded.and_then(|t| serde_json::from_str::<Value>(t).ok()) else {
        return Verdict::Unrecorded;
    };
    let mut recorded = outcome(&recorded);
    let mut live = outcome(live);
    for d in volatile.declarations() {
        if d.method.as_deref() == Some(method) {
            for side in [&mut recorded, &mut live] {
                if let Some(result) = side.get_mut("result") {
                    remove_pointer(result, &d.segments);
                }
            }
        }
    }
    let changes = diff_values(&recorded, &live);
    if changes.is_empty() {
        Verdict::Same
    } else {
        Verdict::Differs(changes)
    }
}

/// A response's `result` and `error` members, nothing else.
fn outcome(message: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["result", "error"] {
        if let Some(v) = message.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

/// The diagnosis for an answer that differs, values redacted as a miss's are.
pub fn describe(method: &str, changes: &[DiffEntry], redactor: &Redactor) -> String {
    let text = format!(
        "the answer to \"{method}\" differs from the recorded one at: {}",
        differing_paths(changes, redactor)
    );
    redactor.redact_text(&text).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The index keeps one recorded frame per server frame: numbering requests from the server
    /// must not make every one of them larger.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_recorded_frame_stays_48_bytes() {
        assert_eq!(std::mem::size_of::<crate::replay::recorded::Recorded>(), 48);
    }

    #[test]
    fn capabilities_from_initialize() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"sampling":{},"roots":{"listChanged":true}}}}"#;
        let d = Declared::from_line(line).unwrap();
        assert_eq!(d.lacks("sampling/createMessage"), None);
        assert_eq!(d.lacks("roots/list"), None);
        assert_eq!(d.lacks("elicitation/create"), Some("elicitation"));
        assert_eq!(d.lacks("ping"), None);
        assert!(Declared::from_line(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).is_none());
        // A notification naming the method is no handshake.
        assert!(Declared::from_line(r#"{"jsonrpc":"2.0","method":"initialize"}"#).is_none());
        let none = Declared::from_initialize(Some(&json!({"capabilities": {}})));
        assert_eq!(none.lacks("sampling/createMessage"), Some("sampling"));
    }

    #[test]
    fn answers_our_id_or_the_recorded_one() {
        let asked = Asked {
            at: 0,
            ask: 0,
            id: "mcp-cassette-replay-1".to_owned(),
            recorded_id: Some(json!(0)),
            frame: Outbound::Owned(String::new()),
            in_answer: false,
        };
        assert!(answers(
            &json!({"jsonrpc":"2.0","id":"mcp-cassette-replay-1","result":{}}),
            &asked
        ));
        assert!(answers(
            &json!({"jsonrpc":"2.0","id":"mcp-cassette-replay-1","error":{"code":-1,"message":"no"}}),
            &asked
        ));
        assert!(answers(
            &json!({"jsonrpc":"2.0","id":0,"result":{}}),
            &asked
        ));
        assert!(!answers(
            &json!({"jsonrpc":"2.0","id":"mcp-cassette-replay-1","method":"x"}),
            &asked
        ));
        assert!(!answers(
            &json!({"jsonrpc":"2.0","id":"0","result":{}}),
            &asked
        ));
        assert!(!answers(
            &json!({"jsonrpc":"2.0","id":1,"result":{}}),
            &asked
        ));
        assert_eq!(fresh_id(3), "\"mcp-cassette-replay-3\"");
    }

    #[test]
    fn comparison_ignores_the_id_and_honours_volatile() {
        let recorded = r#"{"jsonrpc":"2.0","id":0,"result":{"model":"m1","content":{"type":"text","text":"hi"}}}"#;
        let same = json!({"jsonrpc":"2.0","id":"mcp-cassette-replay-1","result":{"content":{"text":"hi","type":"text"},"model":"m1"}});
        let none = VolatileSet::default();
        assert_eq!(
            compare(Some(recorded), &same, "sampling/createMessage", &none),
            Verdict::Same
        );
        let other = json!({"jsonrpc":"2.0","id":"x","result":{"model":"m2","content":{"type":"text","text":"bye"}}});
        let Verdict::Differs(changes) =
            compare(Some(recorded), &other, "sampling/createMessage", &none)
        else {
            panic!("differs")
        };
        let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["/result/content/text", "/result/model"]);
        let text = describe("sampling/createMessage", &changes, &Redactor::builtin());
        assert!(
            text.starts_with("the answer to \"sampling/createMessage\" differs from the recorded one at: /result/content/text (recorded \"hi\", got \"bye\")"),
            "{text}"
        );

        // Scoped to the method, the pointer reads inside `result`.
        let volatile =
            VolatileSet::build(None, &["sampling/createMessage:/model".to_owned()]).unwrap();
        let Verdict::Differs(changes) =
            compare(Some(recorded), &other, "sampling/createMessage", &volatile)
        else {
            panic!("differs")
        };
        assert_eq!(changes.len(), 1);
        // Another method's declaration does not apply.
        let elsewhere = VolatileSet::build(None, &["roots/list:/model".to_owned()]).unwrap();
        let Verdict::Differs(changes) =
            compare(Some(recorded), &other, "sampling/createMessage", &elsewhere)
        else {
            panic!("differs")
        };
        assert_eq!(changes.len(), 2);

        // An error where a result was recorded differs at the root's members.
        let error = json!({"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"declined"}});
        let Verdict::Differs(changes) = compare(Some(recorded), &error, "roots/list", &none) else {
            panic!("differs")
        };
        assert!(changes.iter().any(|c| c.path == "/error"));
        assert_eq!(
            compare(None, &error, "roots/list", &none),
            Verdict::Unrecorded
        );
    }
}
