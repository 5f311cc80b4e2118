//! Misses as typed values: what a test reads to learn why a request found no recorded answer.
//!
//! Built from the miss channel's JSON record (docs/adapters.md, "The miss channel"), the one
//! shape every front-end reports a miss in, so a miss read from an in-process server and one
//! read from a replay child look the same.

use serde_json::Value;

use crate::replay::miss::kind;

/// A request the recording did not answer exactly.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Miss {
    /// The JSON-RPC method, e.g. `tools/call`.
    pub method: String,
    /// The tool a `tools/call` named.
    pub tool: Option<String>,
    /// The request's id as the client sent it (`null` when it had none legible).
    pub id: Value,
    /// What the client got instead.
    pub handling: Handling,
    /// Why, as data.
    pub reason: MissReason,
    /// The sentence the replay prints for this miss (redacted as the cassette is).
    pub diagnosis: String,
}

impl Miss {
    /// The reason's stable name, e.g. `arguments-differ` ([`MissReason::kind`]).
    pub fn kind(&self) -> &str {
        self.reason.kind()
    }

    /// The differences from the nearest recording, for `arguments-differ` and `params-differ`;
    /// empty for every other kind.
    pub fn changes(&self) -> &[Change] {
        match &self.reason {
            MissReason::ArgumentsDiffer { changes } | MissReason::ParamsDiffer { changes } => {
                changes
            }
            _ => &[],
        }
    }

    /// Reads one record of the miss channel; `None` when it is not one.
    pub(crate) fn from_json(record: &Value) -> Option<Miss> {
        let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Miss {
            method: text("method")?,
            tool: text("tool"),
            id: record.get("id").cloned().unwrap_or(Value::Null),
            handling: match record.get("handling").and_then(Value::as_str) {
                Some("borrowed") => Handling::Borrowed,
                Some("forwarded") => Handling::Forwarded,
                _ => Handling::Error,
            },
            reason: MissReason::from_json(record.get("reason")?),
            diagnosis: text("diagnosis").unwrap_or_default(),
        })
    }
}

/// What the client got for a missed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handling {
    /// The JSON-RPC miss error (code -32601).
    Error,
    /// `OnMiss::Warn`: another recording of the same method.
    Borrowed,
    /// Forwarded to a live server (a `replay --on-miss passthrough` child).
    Forwarded,
}

/// Why a request was not answered from the recording. The kinds and their fields are the miss
/// channel's (docs/adapters.md); [`MissReason::kind`] spells each as the channel does.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MissReason {
    /// The cassette holds no request/response pairs at all.
    EmptyCassette,
    /// This request was recorded `recorded` times, and every recorded answer is spent.
    #[non_exhaustive]
    Exhausted { recorded: u64 },
    /// As `Exhausted`, for an answer recorded as a stream.
    #[non_exhaustive]
    StreamExhausted { recorded: u64 },
    /// A `subscriptions/listen` whose recorded subscriptions are all open already.
    #[non_exhaustive]
    SubscriptionExhausted { recorded: u64 },
    /// A `tasks/get` past the last recorded poll of a task the recording never saw finish.
    #[non_exhaustive]
    TaskNotTerminal {
        task_id: String,
        status: String,
        polls: u64,
    },
    /// Recorded, but the recording holds no answer to it.
    #[non_exhaustive]
    RecordedUnanswered { method: String, exact: bool },
    /// A method the cassette never recorded; `recorded` lists the ones it did.
    #[non_exhaustive]
    UnknownMethod {
        method: String,
        recorded: Vec<String>,
    },
    /// A tool the cassette never recorded a call of; `recorded` lists the ones it did.
    #[non_exhaustive]
    UnknownTool { tool: String, recorded: Vec<String> },
    /// A recorded tool called with different arguments.
    #[non_exhaustive]
    ArgumentsDiffer { changes: Vec<Change> },
    /// A recorded method sent with different params.
    #[non_exhaustive]
    ParamsDiffer { changes: Vec<Change> },
    /// A kind this version of the library does not know (a newer binary reported it).
    #[non_exhaustive]
    Other { kind: String },
}

impl MissReason {
    /// The stable name: `empty-cassette`, `exhausted`, `stream-exhausted`,
    /// `subscription-exhausted`, `task-not-terminal`, `recorded-unanswered`, `unknown-method`,
    /// `unknown-tool`, `arguments-differ`, `params-differ`, or an unknown kind as reported.
    pub fn kind(&self) -> &str {
        match self {
            MissReason::EmptyCassette => kind::EMPTY_CASSETTE,
            MissReason::Exhausted { .. } => kind::EXHAUSTED,
            MissReason::StreamExhausted { .. } => kind::STREAM_EXHAUSTED,
            MissReason::SubscriptionExhausted { .. } => kind::SUBSCRIPTION_EXHAUSTED,
            MissReason::TaskNotTerminal { .. } => kind::TASK_NOT_TERMINAL,
            MissReason::RecordedUnanswered { .. } => kind::RECORDED_UNANSWERED,
            MissReason::UnknownMethod { .. } => kind::UNKNOWN_METHOD,
            MissReason::UnknownTool { .. } => kind::UNKNOWN_TOOL,
            MissReason::ArgumentsDiffer { .. } => kind::ARGUMENTS_DIFFER,
            MissReason::ParamsDiffer { .. } => kind::PARAMS_DIFFER,
            MissReason::Other { kind } => kind,
        }
    }

    /// True for a divergence from a recording of the same method and tool (`arguments-differ`,
    /// `params-differ`): the JavaScript adapter's `CassetteMismatchError` cases.
    pub fn is_mismatch(&self) -> bool {
        matches!(
            self,
            MissReason::ArgumentsDiffer { .. } | MissReason::ParamsDiffer { .. }
        )
    }

    fn from_json(reason: &Value) -> MissReason {
        let kind = reason.get("kind").and_then(Value::as_str).unwrap_or("");
        let count = |key: &str| reason.get(key).and_then(Value::as_u64).unwrap_or(0);
        let text = |key: &str| {
            reason
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let names = || {
            reason
                .get("recorded")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let changes = || {
            reason
                .get("changes")
                .and_then(Value::as_array)
                .map(|changes| changes.iter().filter_map(Change::from_json).collect())
                .unwrap_or_default()
        };
        match kind {
            kind::EMPTY_CASSETTE => MissReason::EmptyCassette,
            kind::EXHAUSTED => MissReason::Exhausted {
                recorded: count("recorded"),
            },
            kind::STREAM_EXHAUSTED => MissReason::StreamExhausted {
                recorded: count("recorded"),
            },
            kind::SUBSCRIPTION_EXHAUSTED => MissReason::SubscriptionExhausted {
                recorded: count("recorded"),
            },
            kind::TASK_NOT_TERMINAL => MissReason::TaskNotTerminal {
                task_id: text("taskId"),
                status: text("status"),
                polls: count("polls"),
            },
            kind::RECORDED_UNANSWERED => MissReason::RecordedUnanswered {
                method: text("method"),
                exact: reason
                    .get("exact")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            kind::UNKNOWN_METHOD => MissReason::UnknownMethod {
                method: text("method"),
                recorded: names(),
            },
            kind::UNKNOWN_TOOL => MissReason::UnknownTool {
                tool: text("tool"),
                recorded: names(),
            },
            kind::ARGUMENTS_DIFFER => MissReason::ArgumentsDiffer { changes: changes() },
            kind::PARAMS_DIFFER => MissReason::ParamsDiffer { changes: changes() },
            other => MissReason::Other {
                kind: other.to_owned(),
            },
        }
    }
}

/// One difference between a request and the nearest recording. A side is `None` when the member
/// is absent there (a JSON `null` is `Some(Value::Null)`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Change {
    /// A JSON pointer into the arguments (or params), e.g. `/city`.
    pub path: String,
    pub recorded: Option<Value>,
    pub live: Option<Value>,
}

impl Change {
    fn from_json(change: &Value) -> Option<Change> {
        Some(Change {
            path: change.get("path")?.as_str()?.to_owned(),
            recorded: change.get("recorded").cloned(),
            live: change.get("live").cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::diff::DiffEntry;
    use crate::jsonrpc::Id;
    use crate::replay::http::control::{Handling as Logged, MissRecord};
    use crate::replay::miss::MissReason as Engine;
    use serde_json::json;

    fn logged(reason: Engine) -> Miss {
        let record = MissRecord {
            session: 1,
            session_id: None,
            id: Id::from_value(&json!("a")).unwrap(),
            method: "tools/call".into(),
            tool: Some("echo".into()),
            handling: Logged::Borrowed,
            reason,
            diagnosis: "why".into(),
        };
        Miss::from_json(&record.to_json()).unwrap()
    }

    #[test]
    fn every_engine_reason_reads_back_with_its_kind_and_fields() {
        let diff = vec![DiffEntry {
            path: "/m".into(),
            recorded: Some(json!("a")),
            live: None,
            key: Some("m".into()),
        }];
        let cases = [
            Engine::EmptyCassette,
            Engine::Exhausted { recorded: 2 },
            Engine::StreamExhausted { recorded: 1 },
            Engine::SubscriptionExhausted { recorded: 1 },
            Engine::TaskNotTerminal {
                task_id: "t".into(),
                status: "working".into(),
                polls: 3,
            },
            Engine::RecordedUnanswered {
                method: "x".into(),
                exact: true,
            },
            Engine::UnknownMethod {
                method: "x".into(),
                recorded: vec!["y".into()],
            },
            Engine::UnknownTool {
                tool: "x".into(),
                recorded: vec!["y".into()],
            },
            Engine::ArgumentsDiffer(diff.clone()),
            Engine::ParamsDiffer(diff),
        ];
        for engine in cases {
            let miss = logged(engine.clone());
            assert_eq!(miss.kind(), engine.kind());
            assert!(!matches!(miss.reason, MissReason::Other { .. }));
        }
        let miss = logged(Engine::TaskNotTerminal {
            task_id: "t".into(),
            status: "working".into(),
            polls: 3,
        });
        assert_eq!(
            miss.reason,
            MissReason::TaskNotTerminal {
                task_id: "t".into(),
                status: "working".into(),
                polls: 3
            }
        );
        assert_eq!(miss.id, json!("a"));
        assert_eq!(miss.tool.as_deref(), Some("echo"));
        assert_eq!(miss.handling, Handling::Borrowed);
    }

    #[test]
    fn an_absent_side_stays_absent_and_null_stays_null() {
        let miss = logged(Engine::ArgumentsDiffer(vec![DiffEntry {
            path: "/m".into(),
            recorded: Some(Value::Null),
            live: None,
            key: None,
        }]));
        assert!(miss.reason.is_mismatch());
        assert_eq!(
            miss.changes(),
            [Change {
                path: "/m".into(),
                recorded: Some(Value::Null),
                live: None
            }]
        );
    }

    #[test]
    fn an_unknown_kind_is_kept_by_name() {
        let miss = Miss::from_json(&json!({
            "method": "m", "reason": {"kind": "from-the-future"}
        }))
        .unwrap();
        assert_eq!(miss.kind(), "from-the-future");
        assert!(Miss::from_json(&json!({"reason": {}})).is_none());
    }
}
