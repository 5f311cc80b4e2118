//! Why a request found no recorded answer, as data first and as a sentence second.
//!
//! "You never recorded this tool" and "you recorded it but `/city` drifted" need different fixes,
//! so the reason stays structured ([`MissReason`]) and [`format_miss`] renders it. Diagnosis runs
//! on the request as matching saw it (redacted when the cassette is, declared-volatile fields
//! dropped on both sides), so a miss never blames a field the session said to ignore; and every
//! value it shows is passed through the redactor first, so no secret reaches stderr or the client
//! through a diagnosis.
//!
//! A diagnosis is bounded: its candidates come from the index's
//! [`Catalogue`](super::index::Catalogue) (by method and tool, at most
//! [`COMPARED`](super::index::catalogue::COMPARED) of each), so a miss costs the same on a large
//! cassette as on a small one, and keeps nothing once answered.

use serde_json::{Map, Value};

use super::fingerprint::{TOOLS_CALL, is_mrtr_retry, mrtr_part};
use super::index::Index;
use crate::json::diff::{DiffEntry, diff_values, format_value};
use crate::json::stringify::display as js_string;
use crate::jsonrpc::Id;
use crate::redact::Redactor;

/// How many differing paths a diagnosis names.
const SHOWN_PATHS: usize = 3;
/// How long a shown value may be.
const SHOWN_VALUE: usize = 60;

/// Why a request was not answered from the recording.
#[derive(Debug, Clone, PartialEq)]
pub enum MissReason {
    /// The cassette holds no request/response pairs at all.
    EmptyCassette,
    /// This fingerprint was recorded, and every recorded answer is spent.
    Exhausted {
        recorded: usize,
    },
    /// As [`MissReason::Exhausted`], for an answer recorded as a stream (HTTP front-end).
    StreamExhausted {
        recorded: usize,
    },
    /// A `subscriptions/listen` whose recorded subscriptions are all open already.
    SubscriptionExhausted {
        recorded: usize,
    },
    /// A `tasks/get` past the last recorded poll of a task the recording never saw finish.
    TaskNotTerminal {
        task_id: String,
        status: String,
        polls: usize,
    },
    /// Recorded, but never answered: nothing to hand back.
    RecordedUnanswered {
        method: String,
        exact: bool,
    },
    UnknownMethod {
        method: String,
        recorded: Vec<String>,
    },
    UnknownTool {
        tool: String,
        recorded: Vec<String>,
    },
    /// A `tools/call` of a recorded tool whose arguments differ at these paths.
    ArgumentsDiffer(Vec<DiffEntry>),
    /// A recorded method whose params (or MRTR retry part) differ at these paths.
    ParamsDiffer(Vec<DiffEntry>),
}

/// The stable names of the miss kinds, as the reference's `kind` spells them: one list for the
/// engine that reports a miss and the testing library that reads it back.
pub(crate) mod kind {
    pub(crate) const EMPTY_CASSETTE: &str = "empty-cassette";
    pub(crate) const EXHAUSTED: &str = "exhausted";
    pub(crate) const STREAM_EXHAUSTED: &str = "stream-exhausted";
    pub(crate) const SUBSCRIPTION_EXHAUSTED: &str = "subscription-exhausted";
    pub(crate) const TASK_NOT_TERMINAL: &str = "task-not-terminal";
    pub(crate) const RECORDED_UNANSWERED: &str = "recorded-unanswered";
    pub(crate) const UNKNOWN_METHOD: &str = "unknown-method";
    pub(crate) const UNKNOWN_TOOL: &str = "unknown-tool";
    pub(crate) const ARGUMENTS_DIFFER: &str = "arguments-differ";
    pub(crate) const PARAMS_DIFFER: &str = "params-differ";
}

impl MissReason {
    /// A short stable name, as the reference's `kind` spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            MissReason::EmptyCassette => kind::EMPTY_CASSETTE,
            MissReason::Exhausted { .. } => kind::EXHAUSTED,
            MissReason::StreamExhausted { .. } => kind::STREAM_EXHAUSTED,
            MissReason::SubscriptionExhausted { .. } => kind::SUBSCRIPTION_EXHAUSTED,
            MissReason::TaskNotTerminal { .. } => kind::TASK_NOT_TERMINAL,
            MissReason::RecordedUnanswered { .. } => kind::RECORDED_UNANSWERED,
            MissReason::UnknownMethod { .. } => kind::UNKNOWN_METHOD,
            MissReason::UnknownTool { .. } => kind::UNKNOWN_TOOL,
            MissReason::ArgumentsDiffer(_) => kind::ARGUMENTS_DIFFER,
            MissReason::ParamsDiffer(_) => kind::PARAMS_DIFFER,
        }
    }
}

/// Diagnoses a miss. `params` are the effective params (redacted when the cassette is, volatile
/// fields dropped) and `fp` the fingerprint they produced, when the index knows it.
pub fn diagnose(
    index: &Index,
    method: &str,
    params: Option<&Value>,
    fp: Option<usize>,
) -> MissReason {
    if let Some(info) = fp.map(|f| &index.fp_info[f]) {
        // Checked before the plain exhausted pool it is a special case of: only this one can say
        // why there is nothing more to serve.
        if let Some(task) = info.task.as_ref().filter(|t| !t.terminal) {
            return MissReason::TaskNotTerminal {
                task_id: task.task_id.clone(),
                status: task.status.clone(),
                polls: task.polls,
            };
        }
        if info.recorded() > 0 {
            return MissReason::Exhausted {
                recorded: info.recorded(),
            };
        }
        if info.recorded_listens() > 0 {
            return MissReason::SubscriptionExhausted {
                recorded: info.recorded_listens(),
            };
        }
        if info.unanswered {
            return MissReason::RecordedUnanswered {
                method: method.to_owned(),
                exact: true,
            };
        }
    }
    let recordings = index.catalogue.method(method);
    let unanswered_same = recordings.is_some_and(|r| r.unanswered());
    if !index.catalogue.any_answered() && !unanswered_same {
        return MissReason::EmptyCassette;
    }
    let Some(same) = recordings.filter(|r| r.answered()) else {
        if unanswered_same {
            return MissReason::RecordedUnanswered {
                method: method.to_owned(),
                exact: false,
            };
        }
        return MissReason::UnknownMethod {
            method: method.to_owned(),
            recorded: index.recorded_methods(),
        };
    };
    let recorded = |fps: &[u32]| -> Vec<Option<Value>> {
        #[cfg(test)]
        READ_BACK.with(|n| n.set(n.get() + fps.len()));
        fps.iter()
            .map(|&f| index.recorded_params(method, f as usize))
            .collect()
    };
    let empty = Value::Object(Map::new());
    if method == TOOLS_CALL {
        let wanted = js_string(params.and_then(|p| p.get("name")));
        let Some(fps) = same.tool(&wanted) else {
            let mut tools: Vec<String> = same.tool_names().map(str::to_owned).collect();
            tools.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            return MissReason::UnknownTool {
                tool: wanted,
                recorded: tools,
            };
        };
        let by_name = recorded(fps);
        let incoming_args = arguments_of(params, &empty);
        let changes = nearest(
            by_name
                .iter()
                .map(|p| diff_values(arguments_of(p.as_ref(), &empty), incoming_args)),
        );
        if !changes.is_empty() {
            return MissReason::ArgumentsDiffer(changes);
        }
        // The arguments equal a recording's, so what diverged is the retry part. A retry is
        // compared with recorded retries only, never with the call it retried.
        let same_args: Vec<Option<&Value>> = by_name
            .iter()
            .map(Option::as_ref)
            .filter(|p| diff_values(arguments_of(*p, &empty), incoming_args).is_empty())
            .collect();
        let retries: Vec<Option<&Value>> = same_args
            .iter()
            .copied()
            .filter(|p| is_mrtr_retry(*p))
            .collect();
        let candidates = if is_mrtr_retry(params) && !retries.is_empty() {
            retries
        } else {
            same_args
        };
        let part = |p: Option<&Value>| mrtr_part(p).unwrap_or_else(|| Value::Object(Map::new()));
        let incoming_part = part(params);
        return MissReason::ParamsDiffer(nearest(
            candidates
                .iter()
                .map(|p| diff_values(&part(*p), &incoming_part)),
        ));
    }
    let incoming = params.unwrap_or(&empty);
    MissReason::ParamsDiffer(nearest(recorded(same.fps()).iter().map(|p| {
        let mut changes = diff_values(p.as_ref().unwrap_or(&empty), incoming);
        // The matcher never reads top-level `_meta` or `cursor`, so neither may a diagnosis
        // blame them.
        changes.retain(|d| {
            !IGNORED_TOP
                .iter()
                .any(|k| d.path == *k || d.path.starts_with(&format!("{k}/")))
        });
        changes
    })))
}

#[cfg(test)]
thread_local! {
    /// How many recordings diagnoses on this thread have read back to compare with: the work a
    /// miss does, counted for the scaling test.
    pub(crate) static READ_BACK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Top-level params members the generic fingerprint ignores, as pointers.
const IGNORED_TOP: [&str; 2] = ["/_meta", "/cursor"];

/// A `tools/call`'s arguments (absent or `null` read as `{}`).
fn arguments_of<'a>(params: Option<&'a Value>, empty: &'a Value) -> &'a Value {
    match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => empty,
        Some(a) => a,
    }
}

/// The candidate with the fewest differing paths (the first among equals); empty when there is
/// none to compare with.
fn nearest(candidates: impl Iterator<Item = Vec<DiffEntry>>) -> Vec<DiffEntry> {
    let mut best: Option<Vec<DiffEntry>> = None;
    for changes in candidates {
        if best.as_ref().is_none_or(|b| changes.len() < b.len()) {
            best = Some(changes);
        }
    }
    best.unwrap_or_default()
}

/// The sentence a person reads. Shown values are redacted in the key context they had.
pub fn format_miss(reason: &MissReason, redactor: &Redactor) -> String {
    let text = match reason {
        MissReason::EmptyCassette => {
            "the cassette contains no request/response pairs at all".to_owned()
        }
        MissReason::Exhausted { recorded } => format!(
            "this exact fingerprint was recorded {recorded} time(s), but every recorded response was already consumed earlier in this session; the client is calling it more often than the recording did"
        ),
        MissReason::StreamExhausted { recorded } => format!(
            "this request's answer was recorded as a stream {recorded} time(s), but every one was already replayed earlier in this session"
        ),
        MissReason::TaskNotTerminal {
            task_id,
            status,
            polls,
        } => format!(
            "the recording holds {polls} poll(s) for task \"{task_id}\" and ends with status \"{status}\", which is not terminal: the task was still running when recording stopped, so there is no later state to serve. Re-record until the task reaches completed, failed or cancelled"
        ),
        MissReason::SubscriptionExhausted { recorded } => format!(
            "this exact subscription was recorded {recorded} time(s), and every one is already open in this session; the client is opening it more often than the recording did"
        ),
        MissReason::RecordedUnanswered { method, exact } => {
            let head = if *exact {
                "this exact request was recorded, but the recording holds no response for it"
                    .to_owned()
            } else {
                format!("\"{method}\" was recorded, but no recording of it holds a response")
            };
            format!(
                "{head}: the server never answered it before the session ended, so replay has nothing to hand back"
            )
        }
        MissReason::UnknownMethod { method, recorded } => format!(
            "no recorded request has method \"{method}\". Recorded methods: {}",
            recorded.join(", ")
        ),
        MissReason::UnknownTool { tool, recorded } => format!(
            "no recorded tools/call for tool \"{tool}\". Recorded tools: {}",
            recorded.join(", ")
        ),
        MissReason::ArgumentsDiffer(changes) => describe(changes, "arguments", redactor),
        MissReason::ParamsDiffer(changes) => describe(changes, "params", redactor),
    };
    // Names (a method, a tool) come from the client too: shape rules over the whole sentence.
    redactor.redact_text(&text).0
}

fn describe(changes: &[DiffEntry], what: &str, redactor: &Redactor) -> String {
    if changes.is_empty() {
        return format!("{what} could not be compared to any recording");
    }
    format!(
        "method and tool match a recording, but {what} differ at: {}",
        differing_paths(changes, redactor)
    )
}

/// The first differing paths with both values, redacted and cut short, as a diagnosis lists them
/// (a miss, and a client answer that differs from the recorded one).
pub(crate) fn differing_paths(changes: &[DiffEntry], redactor: &Redactor) -> String {
    let shown: Vec<String> = changes
        .iter()
        .take(SHOWN_PATHS)
        .map(|c| {
            let path = if c.path.is_empty() {
                "/"
            } else {
                c.path.as_str()
            };
            format!(
                "{path} (recorded {}, got {})",
                shown_value(c.recorded.as_ref(), c.key.as_deref(), redactor),
                shown_value(c.live.as_ref(), c.key.as_deref(), redactor)
            )
        })
        .collect();
    let more = if changes.len() > SHOWN_PATHS {
        format!(" and {} more path(s)", changes.len() - SHOWN_PATHS)
    } else {
        String::new()
    };
    format!("{}{more}", shown.join("; "))
}

/// A value as a diagnosis shows it: redacted under the key it sat under, then cut short.
fn shown_value(value: Option<&Value>, key: Option<&str>, redactor: &Redactor) -> String {
    let Some(value) = value else {
        return format_value(None, SHOWN_VALUE);
    };
    let redacted = match key {
        Some(k) => {
            let mut wrapper = serde_json::Map::new();
            wrapper.insert(k.to_owned(), value.clone());
            let (out, _) = redactor.redact_value(&Value::Object(wrapper));
            out.get(k).cloned().unwrap_or(Value::Null)
        }
        None => redactor.redact_value(value).0,
    };
    format_value(Some(&redacted), SHOWN_VALUE)
}

/// The JSON-RPC error a miss is answered with (code -32601), as text.
pub fn miss_answer(id: &Id, method: &str, diagnosis: &str) -> String {
    let message = format!(
        "mcp-cassette replay: no recorded response for \"{method}\" (fingerprint miss). Nearest recording: {diagnosis}. Re-record the cassette or adjust the interaction."
    );
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32601,\"message\":{}}}}}",
        id.to_json(),
        Value::String(message)
    )
}
