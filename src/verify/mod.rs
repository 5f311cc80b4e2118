//! `verify`: re-fire a cassette's recorded requests at the live server and say exactly what
//! drifted (docs/verify.md).
//!
//! The core is synchronous and pure; `commands::verify` drives it with the one MCP client:
//!
//! - [`plan`] reads a cassette into [`Pair`]s (request + recorded answer, `frame` or `chunks`)
//!   and finds, on the recording alone, the server-minted values later requests reuse
//!   ([`follow`]);
//! - [`Verifier`] hands out each request to send (with followed values replaced by what the live
//!   server minted) and classifies each live answer ([`compare`], after [`normalise`]);
//! - [`render`] writes the text and JSON reports; [`headers`] says which called tools cannot
//!   carry their `x-mcp-header` parameters over modern-era HTTP.
//!
//! The structural diff is [`crate::json::diff`], the one replay's miss diagnosis uses.

pub(crate) mod compare;
pub(crate) mod follow;
pub(crate) mod headers;
pub(crate) mod normalise;
pub(crate) mod plan;
pub(crate) mod render;

use serde_json::Value;

pub(crate) use compare::{Class, Options, Payload};
pub(crate) use follow::Followed;
pub(crate) use plan::Plan;

use crate::protocol::Era;
use crate::protocol::meta::{CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION};
use follow::Follower;

/// What to send for one pair.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// Params as raw JSON text (the recorded bytes when nothing had to change).
    pub params: Option<String>,
    /// Values followed into this request.
    pub followed: Vec<Followed>,
}

/// How the live server answered one request.
#[derive(Debug, Clone)]
pub(crate) enum Live {
    /// The answer frame, as received.
    Answer(String),
    /// No answer: the client's error (timeout, server gone), in its words.
    Failed(String),
}

/// One pair's outcome.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// Index into the plan's pairs.
    pub pair: usize,
    pub class: Class,
    pub followed: Vec<Followed>,
}

/// Counts for the summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub matched: usize,
    /// Every CHANGED pair, allowed or not.
    pub changed: usize,
    pub allowed: usize,
    pub error_shape_changed: usize,
    pub missing: usize,
}

impl Summary {
    pub(crate) fn of(outcomes: &[Outcome]) -> Summary {
        let mut s = Summary::default();
        for o in outcomes {
            match &o.class {
                Class::Match => s.matched += 1,
                Class::Changed { allowed, .. } => {
                    s.changed += 1;
                    s.allowed += usize::from(*allowed);
                }
                Class::ErrorShapeChanged(_) => s.error_shape_changed += 1,
                Class::Missing(_) => s.missing += 1,
            }
        }
        s
    }

    /// Whether the gate passes: every pair matched or its change was waived.
    pub(crate) fn passed(&self) -> bool {
        self.changed == self.allowed && self.error_shape_changed == 0 && self.missing == 0
    }

    /// `verify: N match, N changed[ (N allowed)], N error-shape-changed, N missing`.
    pub(crate) fn line(&self) -> String {
        let allowed = if self.allowed > 0 {
            format!(" ({} allowed)", self.allowed)
        } else {
            String::new()
        };
        format!(
            "verify: {} match, {} changed{allowed}, {} error-shape-changed, {} missing",
            self.matched, self.changed, self.error_shape_changed, self.missing
        )
    }
}

/// Walks a plan pair by pair: [`Verifier::prepare`] what to send, then [`Verifier::answer`]
/// with what came back, in order.
#[derive(Debug)]
pub(crate) struct Verifier<'a> {
    plan: &'a Plan,
    options: &'a Options,
    follower: Follower,
}

impl<'a> Verifier<'a> {
    pub(crate) fn new(plan: &'a Plan, options: &'a Options) -> Verifier<'a> {
        Verifier {
            plan,
            options,
            follower: Follower::default(),
        }
    }

    /// The request for pair `index`, for a client speaking `era`.
    pub(crate) fn prepare(&self, index: usize, era: Era) -> Prepared {
        let pair = &self.plan.pairs[index];
        let Some(text) = pair.params.as_deref() else {
            return Prepared {
                params: None,
                followed: Vec::new(),
            };
        };
        let follows = self.plan.links.uses.contains_key(&index);
        // The recording's envelope keys spoke for the recording's client and protocol version:
        // the live client sends its own in the modern era, and none in the legacy era.
        let envelope = text.contains("io.modelcontextprotocol/");
        if !follows && !envelope {
            return Prepared {
                params: Some(text.to_owned()),
                followed: Vec::new(),
            };
        }
        let Ok(mut params) = serde_json::from_str::<Value>(text) else {
            return Prepared {
                params: Some(text.to_owned()),
                followed: Vec::new(),
            };
        };
        let (followed, mut changed) = self.follower.rewrite(&self.plan.links, index, &mut params);
        if envelope {
            changed |= strip_envelope(&mut params, era);
        }
        Prepared {
            params: Some(if changed {
                params.to_string()
            } else {
                text.to_owned()
            }),
            followed,
        }
    }

    /// Classifies the live answer to pair `index`.
    pub(crate) fn answer(&mut self, index: usize, followed: Vec<Followed>, live: Live) -> Outcome {
        let pair = &self.plan.pairs[index];
        let recorded = serde_json::from_str::<Value>(&pair.answer)
            .ok()
            .and_then(Payload::from_frame);
        let live = match live {
            Live::Failed(message) => Err(message),
            Live::Answer(line) => match serde_json::from_str::<Value>(&line) {
                Err(err) => Err(format!("the answer could not be read: {err}")),
                Ok(frame) => Payload::from_frame(frame)
                    .ok_or_else(|| "the answer is neither a result nor an error".to_owned()),
            },
        };
        self.follower.capture(
            &self.plan.links,
            index,
            recorded.as_ref().and_then(Payload::result),
            live.as_ref().ok().and_then(Payload::result),
        );
        let class = match (recorded, live) {
            (_, Err(message)) => Class::Missing(message),
            (None, Ok(_)) => Class::Missing(
                "the recorded answer could not be read (nested deeper than this build reads)"
                    .to_owned(),
            ),
            (Some(recorded), Ok(live)) => {
                compare::classify(recorded, live, &self.follower, self.options)
            }
        };
        Outcome {
            pair: index,
            class,
            followed,
        }
    }
}

/// Removes the recorded modern envelope keys from `params._meta` (and a `_meta` left empty by
/// that, in the legacy era, which has no envelope). Returns whether anything changed.
fn strip_envelope(params: &mut Value, era: Era) -> bool {
    let Some(members) = params.as_object_mut() else {
        return false;
    };
    let Some(meta) = members.get_mut("_meta").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for key in [PROTOCOL_VERSION, CLIENT_INFO, CLIENT_CAPABILITIES] {
        changed |= meta.shift_remove(key).is_some();
    }
    if changed && meta.is_empty() && era == Era::Legacy {
        members.shift_remove("_meta");
    }
    changed
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::cassette::Reader;

    fn plan(lines: &[&str]) -> Plan {
        let text = lines.join("\n");
        Plan::read(Reader::new(text.as_bytes(), Path::new("t")).unwrap()).unwrap()
    }

    const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"x","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;

    #[test]
    fn a_task_sequence_follows_the_live_task_id() {
        let p = plan(&[
            HEADER,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"build","arguments":{"target":"x"}}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"task-rec-9","status":"working"}}}"#,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"task-rec-9"}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","taskId":"task-rec-9","status":"working"}}}"#,
        ]);
        let options = Options::default();
        let mut v = Verifier::new(&p, &options);
        let first = v.prepare(0, Era::Modern);
        assert_eq!(
            first.params.as_deref(),
            Some(r#"{"name":"build","arguments":{"target":"x"}}"#)
        );
        let o = v.answer(
            0,
            first.followed,
            Live::Answer(
                r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"task-0001","status":"working"}}"#
                    .into(),
            ),
        );
        assert_eq!(o.class, Class::Match);
        let second = v.prepare(1, Era::Modern);
        assert_eq!(second.params.as_deref(), Some(r#"{"taskId":"task-0001"}"#));
        assert_eq!(second.followed.len(), 1);
        let o = v.answer(
            1,
            second.followed,
            Live::Answer(
                r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","taskId":"task-0001","status":"working"}}"#
                    .into(),
            ),
        );
        assert_eq!(o.class, Class::Match);
        assert_eq!(o.followed[0].live.as_deref(), Some("task-0001"));
        let missing = v.answer(1, Vec::new(), Live::Failed("timeout".into()));
        assert_eq!(missing.class, Class::Missing("timeout".into()));
    }

    #[test]
    fn recorded_envelope_keys_are_never_resent() {
        let p = plan(&[
            HEADER,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
        ]);
        let options = Options::default();
        let v = Verifier::new(&p, &options);
        assert_eq!(
            v.prepare(0, Era::Modern).params.as_deref(),
            Some(r#"{"_meta":{"progressToken":1}}"#)
        );
        assert_eq!(
            v.prepare(0, Era::Legacy).params.as_deref(),
            Some(r#"{"_meta":{"progressToken":1}}"#)
        );
        let mut only = serde_json::json!({"a": 1, "_meta": {PROTOCOL_VERSION: "x"}});
        assert!(strip_envelope(&mut only, Era::Legacy));
        assert_eq!(only, serde_json::json!({"a": 1}));
    }

    #[test]
    fn summary_line_and_gate() {
        let o = |class| Outcome {
            pair: 0,
            class,
            followed: Vec::new(),
        };
        let s = Summary::of(&[
            o(Class::Match),
            o(Class::Changed {
                entries: Vec::new(),
                allowed: true,
            }),
        ]);
        assert_eq!(
            s.line(),
            "verify: 1 match, 1 changed (1 allowed), 0 error-shape-changed, 0 missing"
        );
        assert!(s.passed());
        let s = Summary::of(&[o(Class::Missing("x".into()))]);
        assert_eq!(
            s.line(),
            "verify: 0 match, 0 changed, 0 error-shape-changed, 1 missing"
        );
        assert!(!s.passed());
    }
}
