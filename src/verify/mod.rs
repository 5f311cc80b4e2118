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

pub(crate) use compare::{Class, Options, Payload, RawPayload};
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
    ///
    /// A live payload byte for byte equal to the recorded one is a MATCH without being parsed,
    /// normalised or diffed: equal bytes read as equal values, and everything the plain path
    /// does to two equal values leaves them equal, except reading followed values as their live
    /// counterparts, so the shortcut is only taken while no value is followed and when this pair
    /// mints none (the follower must see its answer). The property tests below hold the two
    /// paths to the same verdict.
    pub(crate) fn answer(&mut self, index: usize, followed: Vec<Followed>, live: Live) -> Outcome {
        if let Live::Answer(line) = &live {
            if self.unchanged(index, line) {
                return Outcome {
                    pair: index,
                    class: Class::Match,
                    followed,
                };
            }
        }
        self.answer_plain(index, followed, live)
    }

    /// Whether the live answer `line` carries the recorded payload of pair `index`, byte for
    /// byte, with nothing to follow in it.
    fn unchanged(&self, index: usize, line: &str) -> bool {
        let pair = &self.plan.pairs[index];
        let Some(recorded) = &pair.payload else {
            return false;
        };
        if self.follower.maps_values() || self.plan.links.minted_by.contains_key(&index) {
            return false;
        }
        let Some(live) = RawPayload::find(line) else {
            return false;
        };
        live.error == recorded.error
            && line.as_bytes().get(live.span) == pair.answer.as_bytes().get(recorded.span.clone())
    }

    /// [`Verifier::answer`] without the byte-equality shortcut: parse both answers, normalise,
    /// diff.
    fn answer_plain(&mut self, index: usize, followed: Vec<Followed>, live: Live) -> Outcome {
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

/// The byte-equality fast path of [`Verifier::answer`] gives the plain path's verdict, whatever
/// the answers, waivers and followed values.
#[cfg(test)]
mod properties {
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;
    use crate::cassette::Reader;

    const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"x","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;

    /// JSON values rich in what the plain path erases or follows.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3_i64..3).prop_map(Value::from),
            Just(serde_json::json!(1_700_000_000_u64)),
            Just(serde_json::json!(2.5)),
            Just(serde_json::json!(1.0)),
            prop::sample::select(vec![
                "x",
                "task",
                "working",
                "task-1",
                "task-9",
                "2026-10-08T00:00:00Z",
                "0f8fad5b-d9cb-469f-a165-70867728950e",
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop::sample::select(vec![
                            "a",
                            "b",
                            "_meta",
                            "ttlMs",
                            "resultType",
                            "taskId",
                            "requestState",
                            "pollIntervalMs",
                        ]),
                        inner
                    ),
                    0..4
                )
                .prop_map(|members| {
                    Value::Object(
                        members
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                    )
                }),
            ]
        })
    }

    /// A payload's text: compact, or spaced out on one line (same value, other bytes).
    fn text(value: &Value, pretty: bool) -> String {
        if pretty {
            // Newlines inside strings are escaped: the literal ones are layout.
            serde_json::to_string_pretty(value)
                .unwrap()
                .replace('\n', " ")
        } else {
            value.to_string()
        }
    }

    /// How the live line is built around a payload text.
    #[derive(Debug, Clone)]
    enum Shape {
        Plain,
        /// An extra member the plain parse rejects (too deep, a number out of range).
        Unreadable(&'static str),
        /// The payload member given twice, the first one other.
        Twice,
        Bom,
    }

    fn shape() -> impl Strategy<Value = Shape> {
        prop_oneof![
            6 => Just(Shape::Plain),
            1 => prop::sample::select(vec!["1e400", "DEEP"]).prop_map(Shape::Unreadable),
            1 => Just(Shape::Twice),
            1 => Just(Shape::Bom),
        ]
    }

    fn frame(id: u64, error: bool, payload: &str, shape: &Shape) -> String {
        let kind = if error { "error" } else { "result" };
        match shape {
            Shape::Plain => format!(r#"{{"jsonrpc":"2.0","id":{id},"{kind}":{payload}}}"#),
            Shape::Unreadable(extra) => {
                let extra = if *extra == "DEEP" {
                    format!("{}{}", "[".repeat(200), "]".repeat(200))
                } else {
                    (*extra).to_owned()
                };
                format!(r#"{{"jsonrpc":"2.0","x":{extra},"id":{id},"{kind}":{payload}}}"#)
            }
            Shape::Twice => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"{kind}":{{"a":1}},"{kind}":{payload}}}"#)
            }
            Shape::Bom => {
                format!("\u{feff}{{\"jsonrpc\":\"2.0\",\"id\":{id},\"{kind}\":{payload}}}")
            }
        }
    }

    fn request(id: u64, method: &str, params: &str) -> String {
        format!(
            r#"{{"type":"frame","t":0,"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}}}"#
        )
    }

    fn answer(frame: &str) -> String {
        format!(r#"{{"type":"frame","t":0,"dir":"s2c","frame":{frame}}}"#)
    }

    #[derive(Debug, Clone)]
    struct Case {
        /// A task sequence first, so values are followed when the pair under test is answered
        /// (the live server minting `live_task`).
        tasks: Option<&'static str>,
        recorded: Value,
        recorded_error: bool,
        recorded_pretty: bool,
        /// The live payload: the recorded bytes, or another value.
        live: Option<Value>,
        live_error: bool,
        live_pretty: bool,
        shape: Shape,
        /// A later request reusing `task-1`, so the pair under test may mint it.
        reuse: bool,
        ignore: Vec<&'static str>,
        allow: Vec<&'static str>,
        allow_all: bool,
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            (
                prop::option::of(prop::sample::select(vec!["task-9", "task-1", "task-5"])),
                value(),
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.1),
                prop::option::weighted(0.3, value()),
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.1),
                shape(),
            ),
            (
                any::<bool>(),
                prop::collection::vec(prop::sample::select(vec!["/a", "/b/0", "/taskId"]), 0..2),
                prop::collection::vec(prop::sample::select(vec!["/a", "/b"]), 0..2),
                prop::bool::weighted(0.1),
            ),
        )
            .prop_map(
                |(
                    (
                        tasks,
                        recorded,
                        recorded_error,
                        recorded_pretty,
                        live,
                        live_error,
                        live_pretty,
                        shape,
                    ),
                    (reuse, ignore, allow, allow_all),
                )| Case {
                    tasks,
                    recorded,
                    recorded_error,
                    recorded_pretty,
                    live,
                    live_error: live_error != recorded_error && live_error,
                    live_pretty,
                    shape,
                    reuse,
                    ignore,
                    allow,
                    allow_all,
                },
            )
    }

    /// Runs `case` through a fresh verifier: every pair before the one under test the plain way,
    /// then that one by `fast` or by the plain path.
    fn verdict(case: &Case, fast: bool) -> (Class, Vec<Followed>) {
        let recorded_text = text(&case.recorded, case.recorded_pretty);
        let mut lines = vec![HEADER.to_owned()];
        if case.tasks.is_some() {
            lines.push(request(1, "tools/call", r#"{"name":"build"}"#));
            lines.push(answer(
                r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"task-9"}}"#,
            ));
            lines.push(request(2, "tasks/get", r#"{"taskId":"task-9"}"#));
            lines.push(answer(
                r#"{"jsonrpc":"2.0","id":2,"result":{"taskId":"task-9"}}"#,
            ));
        }
        lines.push(request(3, "tools/call", r#"{"name":"probe"}"#));
        lines.push(answer(&frame(
            3,
            case.recorded_error,
            &recorded_text,
            &Shape::Plain,
        )));
        if case.reuse {
            lines.push(request(4, "tasks/get", r#"{"taskId":"task-1"}"#));
            lines.push(answer(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#));
        }
        let text_all = lines.join("\n");
        let plan = Plan::read(Reader::new(text_all.as_bytes(), Path::new("t")).unwrap()).unwrap();
        let options = Options::new(
            &case
                .ignore
                .iter()
                .map(|p| (*p).to_owned())
                .collect::<Vec<_>>(),
            &case
                .allow
                .iter()
                .map(|p| (*p).to_owned())
                .collect::<Vec<_>>(),
            case.allow_all,
        )
        .unwrap();
        let mut v = Verifier::new(&plan, &options);
        let mut index = 0;
        if let Some(live_task) = case.tasks {
            let first = v.prepare(0, Era::Legacy);
            v.answer_plain(
                0,
                first.followed,
                Live::Answer(format!(
                    r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"task","taskId":"{live_task}"}}}}"#
                )),
            );
            let second = v.prepare(1, Era::Legacy);
            v.answer_plain(
                1,
                second.followed,
                Live::Answer(format!(
                    r#"{{"jsonrpc":"2.0","id":2,"result":{{"taskId":"{live_task}"}}}}"#
                )),
            );
            index = 2;
        }
        let live_payload = match &case.live {
            None => recorded_text.clone(),
            Some(other) => text(other, case.live_pretty),
        };
        let live_error = if case.live.is_none() {
            case.recorded_error
        } else {
            case.live_error
        };
        let line = frame(17, live_error, &live_payload, &case.shape);
        let prepared = v.prepare(index, Era::Legacy);
        let outcome = if fast {
            v.answer(index, prepared.followed, Live::Answer(line))
        } else {
            v.answer_plain(index, prepared.followed, Live::Answer(line))
        };
        (outcome.class, outcome.followed)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn the_byte_equal_fast_path_gives_the_plain_verdict(case in case()) {
            prop_assert_eq!(verdict(&case, true), verdict(&case, false), "{:?}", case);
        }
    }

    /// The fast path is taken where it should be (the property above would hold vacuously if
    /// it never were) and refused where it must be.
    #[test]
    fn the_fast_path_is_taken_for_an_unchanged_answer_only() {
        let lines = [
            HEADER.to_owned(),
            request(1, "tools/call", r#"{"name":"echo"}"#),
            answer(
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
            ),
            request(2, "tools/call", r#"{"name":"build"}"#),
            answer(r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"task-9"}}"#),
            request(3, "tasks/get", r#"{"taskId":"task-9"}"#),
            answer(r#"{"jsonrpc":"2.0","id":3,"result":{"taskId":"task-9"}}"#),
        ]
        .join("\n");
        let plan = Plan::read(Reader::new(lines.as_bytes(), Path::new("t")).unwrap()).unwrap();
        let options = Options::default();
        let mut v = Verifier::new(&plan, &options);
        let echo = r#"{"id":9,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert!(v.unchanged(0, echo));
        assert!(!v.unchanged(0, &echo.replace("hi", "ho")));
        assert!(!v.unchanged(0, &echo.replace("result", "error")));
        // The minting pair: the follower must see its answer.
        let minted = r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"task-9"}}"#;
        assert!(!v.unchanged(1, minted));
        v.answer(
            1,
            Vec::new(),
            Live::Answer(minted.replace("task-9", "task-3")),
        );
        // Now `task-9` reads as `task-3`: an answer still saying `task-9` is no shortcut.
        assert!(!v.unchanged(
            2,
            r#"{"jsonrpc":"2.0","id":3,"result":{"taskId":"task-9"}}"#
        ));
    }
}
