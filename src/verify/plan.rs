//! Reading a cassette into what `verify` re-fires: every recorded request that holds a recorded
//! answer, in recorded order, each with that answer (a `frame` entry, or the final frame of a
//! `chunks` entry carrying the request's id, which is how an HTTP cassette stores a streamed
//! answer).
//!
//! What is not re-fired: notifications and server-initiated frames (nothing answers them), the
//! era's handshake (`initialize`, `server/discover`: the client makes its own), a
//! `subscriptions/listen` (it stays open until cancelled; there is no single answer to compare),
//! and requests the recording never saw answered.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::compare::RawPayload;
use super::follow::{self, Linker, Links, Tree};
use crate::cassette::{self, CassetteError, Entry, EntryKind, Reader};
use crate::cassette::{Dir, volatile::Declaration};
use crate::json::token;
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::protocol::Era;
use crate::redact::placeholder::contains_placeholder;

/// Methods that are the lifecycle handshake: the live client performs its own.
const HANDSHAKE: [&str; 2] = ["initialize", "server/discover"];
/// A subscription has no single answer to compare (docs/verify.md, "What is re-fired").
const LISTEN: &str = "subscriptions/listen";

/// One recorded request and its recorded answer.
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    /// 1-based cassette line of the request.
    pub line: u64,
    /// When the request was sent, in ms since the recording started.
    pub t: u64,
    pub method: String,
    /// `method`, or `tools/call <tool name>`.
    pub label: String,
    /// The request's `params`, raw JSON text as recorded; `None` when it had none.
    pub params: Option<Box<str>>,
    /// The recorded answer frame, whole, as recorded.
    pub answer: Box<str>,
    /// Where its payload sits in `answer`, when `answer` reads as a result or error frame
    /// (for the byte-equality fast path).
    pub payload: Option<RawPayload>,
}

/// Everything `verify` needs from one cassette.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub pairs: Vec<Pair>,
    /// Requests left out on purpose: handshake methods and subscriptions, by method.
    pub skipped: Vec<(String, usize)>,
    /// Requests the recording holds no answer for.
    pub unanswered: usize,
    /// Warnings for stderr (entry types from a newer writer).
    pub notes: Vec<String>,
    /// Whether the header says the frames were redacted.
    pub redaction_applied: bool,
    /// The era the header says the session was recorded in (absent: not stated).
    pub era: Option<Era>,
    /// Labels of re-fired requests whose recorded params hold a redaction placeholder.
    pub placeholder_labels: Vec<String>,
    /// Server-minted values later requests reuse.
    pub links: Links,
}

/// Why a cassette cannot be verified.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PlanError {
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    #[error("{0}")]
    Volatile(#[from] cassette::volatile::VolatileError),
    #[error(
        "{path}: nothing to verify: the cassette holds no recorded request with a recorded answer{why}"
    )]
    Nothing { path: String, why: String },
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// A request waiting for its answer, by id key.
struct Pending {
    line: u64,
    t: u64,
    method: String,
    params: Option<Box<str>>,
}

impl Plan {
    /// Reads the cassette at `path`.
    pub(crate) fn open(path: &Path) -> Result<Plan, PlanError> {
        let reader = Reader::open(path)?;
        Plan::read(reader)
    }

    /// Reads a cassette whose header `reader` has read already.
    ///
    /// The entries are read and parsed on a second thread while this one pairs them and finds
    /// the links: the two halves cost about the same, and nothing else runs before the plan is
    /// whole, so on two cores the plan is ready in about half the time. The order of the
    /// entries, and the first error, are the reader's.
    pub(crate) fn read<R: Read + Send>(reader: Reader<R>) -> Result<Plan, PlanError> {
        let header = reader.header();
        // The header's `volatile` declarations are validated with replay's rules and messages
        // and otherwise change nothing: verify re-sends the recorded values (docs/verify.md,
        // "Declared volatility").
        declarations(header.volatile().as_ref())?;
        let plan = Plan {
            redaction_applied: header.redaction_applied(),
            era: header.era(),
            ..Plan::default()
        };
        let path = reader.path().to_owned();
        std::thread::scope(|scope| {
            let (sender, batches) = mpsc::sync_channel(BATCHES_AHEAD);
            scope.spawn(move || read_ahead(reader, &sender));
            // Returning early (an error) drops the receiver, which stops the reading thread.
            plan.assemble(&path, batches.into_iter().flatten())
        })
    }

    /// Pairs the entries of a cassette, in order, into the plan.
    fn assemble(
        self,
        path: &Path,
        entries: impl Iterator<Item = Result<Entry, CassetteError>>,
    ) -> Result<Plan, PlanError> {
        let mut plan = self;
        // Ids repeat across connections in an HTTP cassette: an answer pairs with the latest
        // unanswered request carrying its id.
        let mut requests: Vec<(Pending, Option<Box<str>>)> = Vec::new();
        // Per id: the requests still waiting for an answer, as indices into `requests`.
        let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
        let mut skipped: Vec<(String, usize)> = Vec::new();
        for entry in entries {
            let entry: Entry = entry?;
            match (&entry.kind, entry.dir) {
                (EntryKind::Frame(frame), Some(Dir::C2s)) if frame.kind() == FrameKind::Request => {
                    let (Some(method), Some(id)) = (frame.method(), frame.id()) else {
                        continue;
                    };
                    if HANDSHAKE.contains(&method) || method == LISTEN {
                        match skipped.iter_mut().find(|(m, _)| m == method) {
                            Some((_, n)) => *n += 1,
                            None => skipped.push((method.to_owned(), 1)),
                        }
                        continue;
                    }
                    let params = serde_json::from_str::<Params<'_>>(frame.text())
                        .ok()
                        .and_then(|p| p.params.map(|raw| Box::from(raw.get())));
                    waiting.entry(id.key()).or_default().push(requests.len());
                    let request = Pending {
                        line: entry.line,
                        t: entry.t,
                        method: method.to_owned(),
                        params,
                    };
                    requests.push((request, None));
                }
                (EntryKind::Frame(frame), Some(Dir::S2c)) if frame.is_response() => {
                    answer(frame, &mut waiting, &mut requests);
                }
                (
                    EntryKind::Chunks {
                        id: Some(id),
                        chunks,
                        ..
                    },
                    Some(Dir::S2c),
                ) => {
                    let key = id.key();
                    let last =
                        chunks.iter().rev().map(|c| &c.frame).find(|f| {
                            f.is_response() && f.id().is_some_and(|fid| fid.key() == key)
                        });
                    if let Some(frame) = last {
                        answer(frame, &mut waiting, &mut requests);
                    }
                }
                (EntryKind::Unknown(kind), _) => {
                    plan.notes.push(cassette::unknown_entry_warning(kind, path));
                }
                _ => {}
            }
        }
        plan.unanswered = waiting.values().map(Vec::len).sum();
        plan.skipped = skipped;
        let mut linker = Linker::default();
        let answered = requests
            .into_iter()
            .filter_map(|(request, answer)| Some((request, answer?)));
        for (pending, answer) in answered {
            // Text the linker can walk in place is not parsed (most of a cassette's is).
            let params_value: Option<Value>;
            let params = match pending.params.as_deref() {
                Some(text) if follow::walkable(text) => Some(Tree::Text(text)),
                Some(text) => {
                    params_value = serde_json::from_str(text).ok();
                    params_value.as_ref().map(Tree::Value)
                }
                None => None,
            };
            let label = label(&pending.method, params);
            if pending.params.as_deref().is_some_and(contains_placeholder) {
                plan.placeholder_labels.push(label.clone());
            }
            let index = plan.pairs.len();
            linker.request(index, params);
            let answer_value: Option<Value>;
            let (answer_reads, result) = if follow::walkable(&answer) {
                (true, result_member(&answer).map(Tree::Text))
            } else {
                answer_value = serde_json::from_str(&answer).ok();
                let result = answer_value.as_ref().and_then(|a| a.get("result"));
                (answer_value.is_some(), result.map(Tree::Value))
            };
            if let Some(result) = result {
                linker.response(index, &pending.method, result);
            }
            // Only an answer that parses: the fast path stands for the plain one, which
            // cannot read the others.
            let payload = answer_reads.then(|| RawPayload::find(&answer)).flatten();
            plan.pairs.push(Pair {
                line: pending.line,
                t: pending.t,
                method: pending.method,
                label,
                params: pending.params,
                answer,
                payload,
            });
        }
        plan.links = linker.finish();
        if plan.pairs.is_empty() {
            let mut why = String::new();
            if plan.unanswered > 0 {
                why.push_str(&format!(
                    "; {} request(s) were recorded without an answer",
                    plan.unanswered
                ));
            }
            if !plan.skipped.is_empty() {
                let listed: Vec<String> = plan
                    .skipped
                    .iter()
                    .map(|(m, n)| format!("{n} {m}"))
                    .collect();
                why.push_str(&format!(
                    "; verify does not re-fire the {} it holds",
                    listed.join(", ")
                ));
            }
            return Err(PlanError::Nothing {
                path: path.display().to_string(),
                why,
            });
        }
        Ok(plan)
    }
}

impl Plan {
    /// How long after the previous request pair `index` is re-fired: a task poll (`tasks/get`)
    /// keeps its recorded distance from the request before it (at most [`MAX_POLL_PAUSE_MS`]),
    /// because the state it reads depends on the time the task has had; everything else is
    /// re-fired at once.
    pub(crate) fn pause_before(&self, index: usize) -> Option<std::time::Duration> {
        let pair = self.pairs.get(index)?;
        let previous = self.pairs.get(index.checked_sub(1)?)?;
        if pair.method != "tasks/get" {
            return None;
        }
        let gap = pair.t.saturating_sub(previous.t).min(MAX_POLL_PAUSE_MS);
        (gap > 0).then(|| std::time::Duration::from_millis(gap))
    }
}

/// Longest recorded pause kept before a task poll.
pub(crate) const MAX_POLL_PAUSE_MS: u64 = 10_000;

/// Entries handed from the reading thread at a time: one hand-over per entry would cost more
/// than it saves.
const BATCH: usize = 256;
/// Batches read ahead of the pairing, at most (so memory stays bounded by a few batches).
const BATCHES_AHEAD: usize = 4;

type Batch = Vec<Result<Entry, CassetteError>>;

/// Reads every entry, in batches, until the end, the first error, or a receiver gone.
fn read_ahead<R: Read>(reader: Reader<R>, sender: &mpsc::SyncSender<Batch>) {
    let mut batch = Vec::with_capacity(BATCH);
    for entry in reader {
        let failed = entry.is_err();
        batch.push(entry);
        if failed || batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            // After an error the reader has nothing more to say.
            if sender.send(full).is_err() || failed {
                return;
            }
        }
    }
    if !batch.is_empty() {
        let _ = sender.send(batch);
    }
}

/// Files a recorded answer with the latest unanswered request carrying its id.
fn answer(
    frame: &Frame,
    waiting: &mut HashMap<String, Vec<usize>>,
    requests: &mut [(Pending, Option<Box<str>>)],
) {
    let Some(key) = frame.id().map(Id::key) else {
        return;
    };
    let Some(slots) = waiting.get_mut(&key) else {
        return;
    };
    let slot = slots.pop();
    if slots.is_empty() {
        waiting.remove(&key);
    }
    if let Some((_, answer)) = slot.and_then(|slot| requests.get_mut(slot)) {
        *answer = Some(Box::from(frame.text()));
    }
}

/// `tools/call <name>` for a tool call, the method otherwise.
pub(crate) fn label(method: &str, params: Option<Tree<'_>>) -> String {
    match params.and_then(|p| p.member_str("name")) {
        Some(name) if method == "tools/call" => format!("tools/call {name}"),
        _ => method.to_owned(),
    }
}

/// The `result` member of an answer frame's text that [`follow::walkable`] accepted (so no key
/// is given twice).
fn result_member(frame: &str) -> Option<&str> {
    let mut result = None;
    token::for_each_member(frame, |key, value| {
        if key == "result" {
            result = Some(value);
        }
        Some(())
    });
    result
}

/// The header's `volatile` list, validated with replay's grammar and messages.
fn declarations(
    declared: Option<&Value>,
) -> Result<Vec<Declaration>, cassette::volatile::VolatileError> {
    cassette::volatile::parse_list(declared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(lines: &[&str]) -> Result<Plan, PlanError> {
        let text = lines.join("\n");
        let reader = Reader::new(text.as_bytes(), Path::new("t.jsonl")).unwrap();
        Plan::read(reader)
    }

    const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"x","startedAt":"2026-01-01T00:00:00Z","transport":"stdio","redaction":{"applied":true}}"#;

    #[test]
    fn pairs_in_request_order_without_handshake_or_notifications() {
        let p = plan(&[
            HEADER,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"k":"[REDACTED:keyctx:0123abcd]"}}}}"#,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":3,"method":"tools/list"}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","method":"notifications/message","params":{}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}}"#,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":4,"method":"ping"}}"#,
        ])
        .unwrap();
        let labels: Vec<&str> = p.pairs.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["tools/call echo", "tools/list"]);
        assert_eq!(p.pairs[0].line, 5);
        assert_eq!(
            p.pairs[0].params.as_deref(),
            Some(r#"{"name":"echo","arguments":{"k":"[REDACTED:keyctx:0123abcd]"}}"#)
        );
        assert!(p.pairs[0].answer.contains("\"error\""));
        assert_eq!(p.pairs[1].params, None);
        assert_eq!(p.unanswered, 1);
        assert_eq!(p.skipped, [("initialize".to_owned(), 1)]);
        assert_eq!(p.placeholder_labels, ["tools/call echo"]);
        assert!(p.redaction_applied);
    }

    #[test]
    fn http_chunks_answer_with_their_final_frame() {
        let p = plan(&[
            HEADER,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count"}}}"#,
            r#"{"type":"chunks","t":1,"dir":"s2c","id":7,"chunks":[{"t":1,"frame":{"jsonrpc":"2.0","method":"notifications/progress","params":{}}},{"t":2,"frame":{"jsonrpc":"2.0","id":7,"result":{"n":3}}}]}"#,
            r#"{"type":"chunks","t":1,"dir":"s2c","via":"get","chunks":[{"t":1,"frame":{"jsonrpc":"2.0","method":"notifications/message","params":{}}}]}"#,
        ])
        .unwrap();
        assert_eq!(p.pairs.len(), 1);
        assert_eq!(
            p.pairs[0].answer.as_ref(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"n":3}}"#
        );
    }

    #[test]
    fn task_polls_keep_their_recorded_distance() {
        let p = plan(&[
            HEADER,
            r#"{"type":"frame","t":100,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b"}}}"#,
            r#"{"type":"frame","t":110,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
            r#"{"type":"frame","t":1100,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"x"}}}"#,
            r#"{"type":"frame","t":1110,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
            r#"{"type":"frame","t":99000,"dir":"c2s","frame":{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"x"}}}"#,
            r#"{"type":"frame","t":99010,"dir":"s2c","frame":{"jsonrpc":"2.0","id":3,"result":{}}}"#,
            r#"{"type":"frame","t":99900,"dir":"c2s","frame":{"jsonrpc":"2.0","id":4,"method":"ping"}}"#,
            r#"{"type":"frame","t":99910,"dir":"s2c","frame":{"jsonrpc":"2.0","id":4,"result":{}}}"#,
        ])
        .unwrap();
        let ms = |i| p.pause_before(i).map(|d| d.as_millis());
        assert_eq!(
            [ms(0), ms(1), ms(2), ms(3)],
            [None, Some(1000), Some(10_000), None]
        );
    }

    #[test]
    fn nothing_to_verify_is_an_error_that_says_why() {
        let err = plan(&[
            HEADER,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#,
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
            r#"{"type":"frame","t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#,
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.jsonl: nothing to verify: the cassette holds no recorded request with a recorded answer; 1 request(s) were recorded without an answer; verify does not re-fire the 1 initialize it holds"
        );
    }

    #[test]
    fn a_malformed_volatile_list_is_refused() {
        let header = r#"{"type":"header","cassetteVersion":2,"recorder":"x","startedAt":"2026-01-01T00:00:00Z","transport":"stdio","volatile":["arguments"]}"#;
        let err = plan(&[header]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("mcp-cassette: neither a JSON Pointer nor a method-scoped one"),
            "{err}"
        );
    }
}
