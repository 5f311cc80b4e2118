//! Comparing one recorded answer with the live one: the classification of docs/verify.md.

use serde_json::Value;

use super::follow::Follower;
use super::normalise::normalise;
use crate::json::diff::{DiffEntry, diff_values, remove_pointer, split_pointer};

/// The pointer flags, validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// `--ignore`: removed from both payloads before comparing, as segments.
    pub ignore: Vec<Vec<String>>,
    /// `--allow-changed-paths`: escaped pointers whose changes are waived.
    pub allow: Vec<String>,
    /// `--allow-all-changes`.
    pub allow_all: bool,
}

/// A flag that cannot be used; `Display` is the message after `verify failed: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OptionsError {
    #[error("invalid JSON Pointer (must start with \"/\"): {0}")]
    Pointer(String),
    #[error(
        "empty --allow-changed-paths would waive every change; pass --allow-all-changes if that is what you mean"
    )]
    EmptyAllow,
}

impl Options {
    /// Validates every pointer before anything is fired.
    pub(crate) fn new(
        ignore: &[String],
        allow: &[String],
        allow_all: bool,
    ) -> Result<Options, OptionsError> {
        if allow.iter().any(String::is_empty) {
            return Err(OptionsError::EmptyAllow);
        }
        let pointer = |p: &String| {
            p.starts_with('/')
                .then(|| split_pointer(p))
                .flatten()
                .ok_or_else(|| OptionsError::Pointer(p.clone()))
        };
        let ignore = ignore.iter().map(pointer).collect::<Result<Vec<_>, _>>()?;
        for p in allow {
            pointer(p)?;
        }
        Ok(Options {
            ignore,
            allow: allow.to_vec(),
            allow_all,
        })
    }

    /// Whether every changed path is at or under an allowed pointer (whole segments).
    fn waives(&self, entries: &[DiffEntry]) -> bool {
        self.allow_all
            || (!self.allow.is_empty()
                && entries.iter().all(|e| {
                    self.allow.iter().any(|p| {
                        e.path == *p
                            || (e.path.starts_with(p.as_str())
                                && e.path.as_bytes().get(p.len()) == Some(&b'/'))
                    })
                }))
    }
}

/// How one pair came out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Class {
    Match,
    /// The answers differ at these paths; `allowed` when a waiver covers them all.
    Changed {
        entries: Vec<DiffEntry>,
        allowed: bool,
    },
    /// One side is a result, the other an error.
    ErrorShapeChanged(String),
    /// No usable live answer.
    Missing(String),
}

impl Class {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Class::Match => "MATCH",
            Class::Changed { .. } => "CHANGED",
            Class::ErrorShapeChanged(_) => "ERROR-SHAPE-CHANGED",
            Class::Missing(_) => "MISSING",
        }
    }

    /// Whether this pair passes the gate (the summary counts the classes; tests ask this).
    #[cfg(test)]
    pub(crate) fn passes(&self) -> bool {
        matches!(self, Class::Match | Class::Changed { allowed: true, .. })
    }
}

/// One side's answer: a result or an error payload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Payload {
    Result(Value),
    Error(Value),
}

impl Payload {
    /// Reads an answer frame; `None` when it is neither a result nor an error.
    pub(crate) fn from_frame(mut frame: Value) -> Option<Payload> {
        let members = frame.as_object_mut()?;
        if let Some(error) = members.remove("error") {
            return Some(Payload::Error(error));
        }
        members.remove("result").map(Payload::Result)
    }

    pub(crate) fn result(&self) -> Option<&Value> {
        match self {
            Payload::Result(v) => Some(v),
            Payload::Error(_) => None,
        }
    }
}

/// Where an answer frame's payload sits in its text, read without building a value: the
/// byte-equality fast path of [`crate::verify::Verifier::answer`] compares these spans before
/// anything is parsed, normalised or diffed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawPayload {
    /// An `error` member (which wins over `result`, as in [`Payload::from_frame`]).
    pub error: bool,
    /// The payload's bytes in the frame text.
    pub span: std::ops::Range<usize>,
}

impl RawPayload {
    /// The payload of the frame `text`, when reading `text` as a [`Value`] would succeed and give
    /// a frame [`Payload::from_frame`] reads, so that equal spans stand for equal payloads.
    /// `None` when that cannot be told without the full parse (a payload member given twice, a
    /// text that is not an object): the caller then takes the plain path.
    ///
    /// Members other than the payload are read as values, which applies the parse's own checks
    /// (nesting depth, number range) to them; the payload is only scanned, so a caller must know
    /// by other means that it parses (the recorded one was parsed when the plan was read, and a
    /// live payload is only ever compared with a recorded one of the same bytes, at the same
    /// depth).
    pub(crate) fn find(text: &str) -> Option<RawPayload> {
        let base = text.as_ptr() as usize;
        let members = serde_json::from_str::<FrameMembers<'_>>(text).ok()?;
        let (error, raw) = match (members.error, members.result) {
            (Some(error), _) => (true, error),
            (None, Some(result)) => (false, result),
            (None, None) => return None,
        };
        let start = raw.get().as_ptr() as usize - base;
        Some(RawPayload {
            error,
            span: start..start + raw.get().len(),
        })
    }
}

/// An answer frame's `result` and `error` members, borrowed from its text; see
/// [`RawPayload::find`].
struct FrameMembers<'a> {
    result: Option<&'a serde_json::value::RawValue>,
    error: Option<&'a serde_json::value::RawValue>,
}

impl<'de> serde::Deserialize<'de> for FrameMembers<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{Error as _, MapAccess, Visitor};

        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = FrameMembers<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC answer object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = FrameMembers {
                    result: None,
                    error: None,
                };
                while let Some(key) = map.next_key::<Key>()? {
                    let slot = match key {
                        Key::Result => &mut members.result,
                        Key::Error => &mut members.error,
                        Key::Other => {
                            map.next_value::<Value>()?;
                            continue;
                        }
                    };
                    // A repeated payload member: the full parse would read (and check) both
                    // and keep the last; leave that to it.
                    if slot.replace(map.next_value()?).is_some() {
                        return Err(A::Error::custom("a payload member given twice"));
                    }
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// A member name of an answer frame, told apart without allocating.
enum Key {
    Result,
    Error,
    Other,
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Key;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// `code` of an error payload, as JSON text (`?` when absent).
fn code(error: &Value) -> String {
    error
        .get("code")
        .map_or_else(|| "?".to_owned(), crate::json::stringify::compact)
}

/// Classifies a pair from its two payloads (consumed: they are normalised in place).
pub(crate) fn classify(
    recorded: Payload,
    live: Payload,
    follower: &Follower,
    options: &Options,
) -> Class {
    let (mut recorded, mut live) = match (recorded, live) {
        (Payload::Result(r), Payload::Result(l)) | (Payload::Error(r), Payload::Error(l)) => (r, l),
        (Payload::Error(r), Payload::Result(_)) => {
            return Class::ErrorShapeChanged(format!(
                "recorded error {}, live returned a result",
                code(&r)
            ));
        }
        (Payload::Result(_), Payload::Error(l)) => {
            let message = match l.get("message") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => crate::json::stringify::compact(other),
                None => String::new(),
            };
            return Class::ErrorShapeChanged(format!(
                "recorded a result, live returned error {}: {message}",
                code(&l)
            ));
        }
    };
    follower.map_recorded(&mut recorded);
    normalise(&mut recorded);
    normalise(&mut live);
    for pointer in &options.ignore {
        remove_pointer(&mut recorded, pointer);
        remove_pointer(&mut live, pointer);
    }
    let entries = diff_values(&recorded, &live);
    if entries.is_empty() {
        Class::Match
    } else {
        let allowed = options.waives(&entries);
        Class::Changed { entries, allowed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(class: &Class) -> Vec<&str> {
        match class {
            Class::Changed { entries, .. } => entries.iter().map(|e| e.path.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn classes() {
        let none = Options::default();
        let f = Follower::default();
        let r = |v: Value| Payload::Result(v);
        assert_eq!(
            classify(
                r(json!({"a": 1, "_meta": {"x": 1}})),
                r(json!({"a": 1.0})),
                &f,
                &none
            ),
            Class::Match
        );
        let c = classify(
            r(json!({"a": 1, "b": [1]})),
            r(json!({"a": 2, "b": [1, 2]})),
            &f,
            &none,
        );
        assert_eq!(paths(&c), ["/a", "/b/1"]);
        assert!(!c.passes());
        assert_eq!(
            classify(
                r(json!({})),
                Payload::Error(json!({"code": -32602, "message": "unknown tool x"})),
                &f,
                &none
            ),
            Class::ErrorShapeChanged(
                "recorded a result, live returned error -32602: unknown tool x".into()
            )
        );
        assert_eq!(
            classify(
                Payload::Error(json!({"code": -1, "message": "m"})),
                r(json!({})),
                &f,
                &none
            ),
            Class::ErrorShapeChanged("recorded error -1, live returned a result".into())
        );
        let e = classify(
            Payload::Error(json!({"code": -1, "message": "m"})),
            Payload::Error(json!({"code": -1, "message": "n"})),
            &f,
            &none,
        );
        assert_eq!(paths(&e), ["/message"]);
    }

    #[test]
    fn waivers_and_ignores() {
        let f = Follower::default();
        let r = |v: Value| Payload::Result(v);
        let opts = Options::new(&["/x".into(), "/list/0".into()], &["/a".into()], false).unwrap();
        let c = classify(
            r(json!({"x": 1, "a": {"b": 1}, "list": [1, 2]})),
            r(json!({"x": 2, "a": {"b": 2}, "list": [9, 2]})),
            &f,
            &opts,
        );
        assert_eq!(
            c,
            Class::Changed {
                entries: diff_values(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})),
                allowed: true
            }
        );
        let c = classify(r(json!({"ab": 1})), r(json!({"ab": 2})), &f, &opts);
        assert!(matches!(c, Class::Changed { allowed: false, .. }));
        let all = Options::new(&[], &[], true).unwrap();
        assert!(classify(r(json!(1)), r(json!(2)), &f, &all).passes());

        assert_eq!(
            Options::new(&["x".into()], &[], false)
                .unwrap_err()
                .to_string(),
            "invalid JSON Pointer (must start with \"/\"): x"
        );
        assert_eq!(
            Options::new(&[], &["a".into()], false).unwrap_err(),
            OptionsError::Pointer("a".into())
        );
        assert_eq!(
            Options::new(&["x".into()], &[String::new()], false).unwrap_err(),
            OptionsError::EmptyAllow
        );
    }
}
