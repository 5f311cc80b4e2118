//! Two recordings compared interaction by interaction: what `mcp-cassette diff` reports
//! (docs/diff.md).
//!
//! An interaction is a client request and the answer the server gave it: a `frame` entry, or
//! the final answer frame of the `chunks` entry carrying the request's id (how an HTTP cassette
//! stores a streamed answer). Within one cassette an answer pairs with the latest unanswered
//! request carrying its id, as `verify` pairs them, so ids repeated across the connections of an
//! HTTP recording still find their own requests.
//!
//! Across the two cassettes, interactions are paired by the key replay matches requests on (its
//! fingerprint, with the declared-volatile fields of both headers dropped first), repeated
//! identical requests in recorded order: the second `tools/call echo {"message":"hi"}` of one
//! recording pairs with the second of the other. The key is handed in rather than computed here
//! because the fingerprint belongs to replay, which sits above the cassette format; the command
//! passes replay's, so `diff` pairs exactly what replay would answer from each recording.
//!
//! Paired answers are compared with the one structural diff ([`crate::json::diff`]), payload
//! against payload (`result` or `error`), after `--ignore` pointers are removed from both. Server
//! notifications are compared only inside a streamed answer, where they belong to the request
//! without doubt: there they are a sequence, element by element. On stdio a notification is
//! not tied to any one request (progress, logging and list changes interleave with every
//! answer in flight), so it is not compared there.
//!
//! Nothing else is normalised: a timestamp that differs between the recordings is a change,
//! as it is in the files. `--ignore` is how a user says it is not.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::volatile::{self, Declaration, VolatileError};
use super::{CassetteError, Dir, Entry, EntryKind, Reader};
use crate::json::diff::{DiffEntry, diff_values, remove_pointer, split_pointer};
use crate::jsonrpc::{Frame, FrameKind};
use crate::protocol::Era;

/// The key interactions are paired on: the method and the params already in matching shape
/// (declared-volatile fields dropped). `diff` hands in replay's fingerprint.
pub type Key = fn(&str, Option<&Value>) -> String;

/// Why two cassettes cannot be compared. `Display` is the message after `diff failed: `.
#[derive(Debug, thiserror::Error)]
pub enum ComparisonError {
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    #[error("{}: {source}", path.display())]
    Volatile {
        path: PathBuf,
        #[source]
        source: VolatileError,
    },
    #[error(
        "{} was recorded in the {} era and {} in the {} era: their answers have different shapes, so a diff would report the era rather than the server; compare recordings made in the same era",
        a.display(), a_era.as_str(), b.display(), b_era.as_str()
    )]
    Eras {
        a: PathBuf,
        a_era: Era,
        b: PathBuf,
        b_era: Era,
    },
    #[error("invalid JSON Pointer for --ignore (must start with \"/\"): {0:?}")]
    Pointer(String),
}

/// The validated `--ignore` pointers.
#[derive(Debug, Clone, Default)]
pub struct Options {
    ignore: Vec<Vec<String>>,
}

impl Options {
    /// Validates every pointer: each must start with `/` (an empty one would ignore the whole
    /// payload, and with it every change).
    pub fn new(ignore: &[String]) -> Result<Options, ComparisonError> {
        let ignore = ignore
            .iter()
            .map(|p| {
                p.starts_with('/')
                    .then(|| split_pointer(p))
                    .flatten()
                    .ok_or_else(|| ComparisonError::Pointer(p.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Options { ignore })
    }
}

/// What a request was answered with.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Result(Value),
    Error(Value),
}

impl Answer {
    /// The answer in words, for a change of shape: `a result`, `error -32601: not found`.
    pub fn describe(answer: Option<&Answer>) -> String {
        match answer {
            None => "no answer".to_owned(),
            Some(Answer::Result(_)) => "a result".to_owned(),
            Some(Answer::Error(error)) => {
                let code = error
                    .get("code")
                    .map_or_else(|| "?".to_owned(), crate::json::stringify::compact);
                match error.get("message") {
                    Some(Value::String(m)) => format!("error {code}: {m}"),
                    _ => format!("error {code}"),
                }
            }
        }
    }
}

/// One request and what answered it, in one recording.
#[derive(Debug, Clone)]
pub struct Interaction {
    /// 1-based cassette line of the request.
    pub line: u64,
    pub method: String,
    /// `method`, or `tools/call <tool name>`.
    pub label: String,
    key: String,
    /// `None` when the recording holds no answer.
    pub answer: Option<Answer>,
    /// The notifications of a streamed answer, each `{"method", "params"}`, in order; `None`
    /// when the answer was not streamed (nothing to compare).
    pub notifications: Option<Vec<Value>>,
}

impl Interaction {
    /// An answered-by-nothing interaction keyed by its label, for renderer tests.
    #[cfg(test)]
    pub(crate) fn bare(method: &str, label: &str, line: u64) -> Interaction {
        Interaction {
            line,
            method: method.to_owned(),
            label: label.to_owned(),
            key: label.to_owned(),
            answer: None,
            notifications: None,
        }
    }
}

/// One cassette, read into interactions.
#[derive(Debug, Clone)]
pub struct Recording {
    pub path: PathBuf,
    pub interactions: Vec<Interaction>,
    /// Warnings for stderr (entry types from a newer writer).
    pub notes: Vec<String>,
}

/// How one pair of interactions (or an unpaired one) came out.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// Only in the second recording (index into its interactions).
    Added { b: usize },
    /// Only in the first.
    Removed { a: usize },
    /// Both answered in the same shape, and the payloads or the notifications differ.
    Changed {
        a: usize,
        b: usize,
        answer: Vec<DiffEntry>,
        notifications: Vec<DiffEntry>,
    },
    /// A result on one side, an error or no answer on the other.
    ShapeChanged { a: usize, b: usize },
}

/// Everything `diff` found.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: Recording,
    pub b: Recording,
    /// Pairs whose answers are equal.
    pub same: usize,
    /// In the first recording's order, then what only the second holds, in its order.
    pub differences: Vec<Difference>,
}

/// Counts per kind of difference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub same: usize,
    pub changed: usize,
    pub added: usize,
    pub removed: usize,
}

impl Comparison {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            same: self.same,
            ..Summary::default()
        };
        for d in &self.differences {
            match d {
                Difference::Added { .. } => s.added += 1,
                Difference::Removed { .. } => s.removed += 1,
                Difference::Changed { .. } | Difference::ShapeChanged { .. } => s.changed += 1,
            }
        }
        s
    }

    /// Whether the two recordings answer alike.
    pub fn identical(&self) -> bool {
        self.differences.is_empty()
    }
}

/// Opens both cassettes, reads them with the volatile declarations of both headers, and
/// compares them.
pub fn compare_files(
    a: &Path,
    b: &Path,
    key: Key,
    options: &Options,
) -> Result<Comparison, ComparisonError> {
    let a = Reader::open(a)?;
    let b = Reader::open(b)?;
    compare_readers(a, b, key, options)
}

/// [`compare_files`] over two readers whose headers are read.
pub fn compare_readers<A: Read, B: Read>(
    a: Reader<A>,
    b: Reader<B>,
    key: Key,
    options: &Options,
) -> Result<Comparison, ComparisonError> {
    let (a_era, b_era) = (a.header().effective_era(), b.header().effective_era());
    if a_era != b_era {
        return Err(ComparisonError::Eras {
            a: a.path().to_owned(),
            a_era,
            b: b.path().to_owned(),
            b_era,
        });
    }
    // Both sides drop what either header declares volatile: a pair needs the same key on both
    // sides, and a field one recording calls volatile changes between runs of the other too.
    let mut declarations = header_declarations(&a)?;
    declarations.extend(header_declarations(&b)?);
    let a = read(a, &declarations, key)?;
    let b = read(b, &declarations, key)?;
    Ok(compare(a, b, options))
}

fn header_declarations<R: Read>(reader: &Reader<R>) -> Result<Vec<Declaration>, ComparisonError> {
    volatile::parse_list(reader.header().volatile().as_ref()).map_err(|source| {
        ComparisonError::Volatile {
            path: reader.path().to_owned(),
            source,
        }
    })
}

/// Reads the interactions of one cassette, in the order their requests were recorded.
pub fn read<R: Read>(
    reader: Reader<R>,
    declarations: &[Declaration],
    key: Key,
) -> Result<Recording, ComparisonError> {
    let path = reader.path().to_owned();
    let mut recording = Recording {
        path: path.clone(),
        interactions: Vec::new(),
        notes: Vec::new(),
    };
    // Per id: the requests still waiting for an answer, as indices into `interactions`.
    let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
    for entry in reader {
        let entry: Entry = entry?;
        match (&entry.kind, entry.dir) {
            (EntryKind::Frame(frame), Some(Dir::C2s)) if frame.kind() == FrameKind::Request => {
                let (Some(method), Some(id)) = (frame.method(), frame.id()) else {
                    continue;
                };
                waiting
                    .entry(id.key())
                    .or_default()
                    .push(recording.interactions.len());
                recording.interactions.push(interaction(
                    entry.line,
                    method,
                    frame,
                    declarations,
                    key,
                ));
            }
            (EntryKind::Frame(frame), Some(Dir::S2c)) if frame.is_response() => {
                if let Some(i) = answered(frame, &mut waiting) {
                    recording.interactions[i].answer = answer(frame);
                }
            }
            (
                EntryKind::Chunks {
                    id: Some(id),
                    chunks,
                    ..
                },
                Some(Dir::S2c),
            ) => {
                let id = id.key();
                let is_answer =
                    |f: &Frame| f.is_response() && f.id().is_some_and(|fid| fid.key() == id);
                let Some(last) = chunks.iter().rev().map(|c| &c.frame).find(|f| is_answer(f))
                else {
                    continue;
                };
                if let Some(i) = answered(last, &mut waiting) {
                    let notifications = chunks
                        .iter()
                        .filter(|c| c.frame.kind() == FrameKind::Notification)
                        .map(|c| {
                            let mut v = c.frame.value();
                            if let Some(members) = v.as_object_mut() {
                                members.shift_remove("jsonrpc");
                            }
                            v
                        })
                        .collect();
                    let slot = &mut recording.interactions[i];
                    slot.answer = answer(last);
                    slot.notifications = Some(notifications);
                }
            }
            (EntryKind::Unknown(kind), _) => {
                recording
                    .notes
                    .push(super::unknown_entry_warning(kind, &path));
            }
            _ => {}
        }
    }
    Ok(recording)
}

fn interaction(
    line: u64,
    method: &str,
    frame: &Frame,
    declarations: &[Declaration],
    key: Key,
) -> Interaction {
    let mut params = match frame.value() {
        Value::Object(mut members) => members.shift_remove("params"),
        _ => None,
    };
    if let Some(params) = params.as_mut() {
        for d in declarations.iter().filter(|d| d.applies_to(method)) {
            remove_pointer(params, &d.segments);
        }
    }
    let label = match (method, params.as_ref().and_then(|p| p.get("name"))) {
        ("tools/call", Some(Value::String(name))) => format!("tools/call {name}"),
        _ => method.to_owned(),
    };
    Interaction {
        line,
        method: method.to_owned(),
        label,
        key: key(method, params.as_ref()),
        answer: None,
        notifications: None,
    }
}

/// The latest unanswered request `frame` answers, taken off the waiting list.
fn answered(frame: &Frame, waiting: &mut HashMap<String, Vec<usize>>) -> Option<usize> {
    waiting.get_mut(&frame.id()?.key())?.pop()
}

fn answer(frame: &Frame) -> Option<Answer> {
    let Value::Object(mut members) = frame.value() else {
        return None;
    };
    if let Some(error) = members.shift_remove("error") {
        return Some(Answer::Error(error));
    }
    members.shift_remove("result").map(Answer::Result)
}

/// Pairs the interactions of `a` and `b` by key, repeated keys in order, and compares each pair.
pub fn compare(a: Recording, b: Recording, options: &Options) -> Comparison {
    let mut pools: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, x) in b.interactions.iter().enumerate() {
        pools.entry(x.key.as_str()).or_default().push_back(i);
    }
    let mut paired_b = vec![false; b.interactions.len()];
    let mut differences = Vec::new();
    let mut same = 0;
    for (ai, x) in a.interactions.iter().enumerate() {
        let Some(bi) = pools.get_mut(x.key.as_str()).and_then(VecDeque::pop_front) else {
            differences.push(Difference::Removed { a: ai });
            continue;
        };
        paired_b[bi] = true;
        match difference(x, &b.interactions[bi], options) {
            None => same += 1,
            Some(Pair::Shape) => differences.push(Difference::ShapeChanged { a: ai, b: bi }),
            Some(Pair::Changed {
                answer,
                notifications,
            }) => differences.push(Difference::Changed {
                a: ai,
                b: bi,
                answer,
                notifications,
            }),
        }
    }
    differences.extend(
        paired_b
            .iter()
            .enumerate()
            .filter(|(_, paired)| !**paired)
            .map(|(bi, _)| Difference::Added { b: bi }),
    );
    Comparison {
        a,
        b,
        same,
        differences,
    }
}

enum Pair {
    Shape,
    Changed {
        answer: Vec<DiffEntry>,
        notifications: Vec<DiffEntry>,
    },
}

fn difference(x: &Interaction, y: &Interaction, options: &Options) -> Option<Pair> {
    let answer = match (&x.answer, &y.answer) {
        (None, None) => Vec::new(),
        (Some(Answer::Result(p)), Some(Answer::Result(q)))
        | (Some(Answer::Error(p)), Some(Answer::Error(q))) => {
            let (mut p, mut q) = (p.clone(), q.clone());
            for pointer in &options.ignore {
                remove_pointer(&mut p, pointer);
                remove_pointer(&mut q, pointer);
            }
            diff_values(&p, &q)
        }
        _ => return Some(Pair::Shape),
    };
    let notifications = match (&x.notifications, &y.notifications) {
        (Some(p), Some(q)) => diff_values(&Value::Array(p.clone()), &Value::Array(q.clone())),
        _ => Vec::new(),
    };
    if answer.is_empty() && notifications.is_empty() {
        None
    } else {
        Some(Pair::Changed {
            answer,
            notifications,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fingerprint::fingerprint;

    const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00.000Z","transport":"stdio"}"#;

    fn recording(lines: &[&str]) -> Recording {
        recording_with(HEADER, lines)
    }

    fn recording_with(header: &str, lines: &[&str]) -> Recording {
        let text = format!("{header}\n{}\n", lines.join("\n"));
        let reader = Reader::new(text.as_bytes(), Path::new("x.jsonl")).unwrap();
        let declarations = volatile::parse_list(reader.header().volatile().as_ref()).unwrap();
        read(reader, &declarations, fingerprint).unwrap()
    }

    fn call(id: u32, tool: &str, args: &str) -> String {
        format!(
            r#"{{"type":"frame","t":0,"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}}}"#
        )
    }

    fn text(id: u32, text: &str) -> String {
        format!(
            r#"{{"type":"frame","t":0,"dir":"s2c","frame":{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}}}"#
        )
    }

    fn lines(items: &[String]) -> Vec<&str> {
        items.iter().map(String::as_str).collect()
    }

    #[test]
    fn repeated_requests_pair_in_order_and_extras_are_added_or_removed() {
        let a = [
            call(1, "echo", r#"{"m":1}"#),
            text(1, "first"),
            call(2, "echo", r#"{"m":1}"#),
            text(2, "second"),
            call(3, "gone", "{}"),
            text(3, "x"),
        ];
        let b = [
            call(7, "echo", r#"{"m":1.0}"#),
            text(7, "first"),
            call(8, "echo", r#"{"m":1}"#),
            text(8, "SECOND"),
            call(9, "echo", r#"{"m":1}"#),
            text(9, "third"),
            call(10, "new", "{}"),
            text(10, "y"),
        ];
        let c = compare(
            recording(&lines(&a)),
            recording(&lines(&b)),
            &Options::default(),
        );
        assert_eq!(c.same, 1);
        let Difference::Changed {
            a: 1,
            b: 1,
            answer,
            notifications,
        } = &c.differences[0]
        else {
            panic!("{:?}", c.differences);
        };
        assert_eq!(answer[0].path, "/content/0/text");
        assert!(notifications.is_empty());
        assert_eq!(
            &c.differences[1..],
            [
                Difference::Removed { a: 2 },
                Difference::Added { b: 2 },
                Difference::Added { b: 3 },
            ]
        );
        assert_eq!(c.a.interactions[2].label, "tools/call gone");
        assert_eq!(
            c.summary(),
            Summary {
                same: 1,
                changed: 1,
                added: 2,
                removed: 1
            }
        );
    }

    #[test]
    fn answers_pair_with_the_latest_request_of_their_id() {
        // Two connections of an HTTP recording both used id 1.
        let r = recording(&lines(&[
            call(1, "a", "{}"),
            call(1, "b", "{}"),
            text(1, "for b"),
            text(1, "for a"),
        ]));
        let texts: Vec<_> = r
            .interactions
            .iter()
            .map(|i| match &i.answer {
                Some(Answer::Result(v)) => v["content"][0]["text"].clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["for a", "for b"]);
    }

    #[test]
    fn shapes_ignores_and_volatile_declarations() {
        let error = r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}}"#;
        let a = [call(1, "t", "{}"), text(1, "ok")];
        let c = compare(
            recording(&lines(&a)),
            recording(&[&call(1, "t", "{}"), error]),
            &Options::default(),
        );
        assert_eq!(c.differences, [Difference::ShapeChanged { a: 0, b: 0 }]);
        assert_eq!(
            Answer::describe(c.b.interactions[0].answer.as_ref()),
            "error -32603: boom"
        );
        // An unanswered request against an answered one is a change of shape too.
        let c = compare(
            recording(&lines(&a)),
            recording(&[&call(1, "t", "{}")]),
            &Options::default(),
        );
        assert_eq!(c.differences, [Difference::ShapeChanged { a: 0, b: 0 }]);

        let ignore = Options::new(&["/content/0/text".to_owned()]).unwrap();
        let c = compare(
            recording(&lines(&a)),
            recording(&lines(&[call(1, "t", "{}"), text(1, "changed")])),
            &ignore,
        );
        assert!(c.identical());
        assert!(matches!(
            Options::new(&["x".to_owned()]),
            Err(ComparisonError::Pointer(_))
        ));
        assert!(matches!(
            Options::new(&[String::new()]),
            Err(ComparisonError::Pointer(_))
        ));

        let volatile = HEADER.replace('}', r#","volatile":["tools/call:/arguments/at"]}"#);
        let c = compare(
            recording_with(
                &volatile,
                &lines(&[call(1, "t", r#"{"at":1}"#), text(1, "ok")]),
            ),
            recording_with(
                &volatile,
                &lines(&[call(1, "t", r#"{"at":2}"#), text(1, "ok")]),
            ),
            &Options::default(),
        );
        assert!(c.identical(), "{:?}", c.differences);
    }

    #[test]
    fn streamed_notifications_are_compared_as_a_sequence() {
        let stream = |level: &str| {
            format!(
                r#"{{"type":"chunks","t":0,"dir":"s2c","id":1,"chunks":[{{"t":0,"frame":{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"{level}"}}}}}},{{"t":1,"frame":{{"jsonrpc":"2.0","id":1,"result":{{}}}}}}]}}"#
            )
        };
        let c = compare(
            recording(&lines(&[call(1, "t", "{}"), stream("info")])),
            recording(&lines(&[call(1, "t", "{}"), stream("debug")])),
            &Options::default(),
        );
        let Difference::Changed {
            answer,
            notifications,
            ..
        } = &c.differences[0]
        else {
            panic!("{:?}", c.differences);
        };
        assert!(answer.is_empty());
        assert_eq!(notifications[0].path, "/0/params/level");
        // Against a frame answer (a stdio recording), notifications are not compared.
        let plain =
            r#"{"type":"frame","t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#;
        let c = compare(
            recording(&lines(&[call(1, "t", "{}"), stream("info")])),
            recording(&[&call(1, "t", "{}"), plain]),
            &Options::default(),
        );
        assert!(c.identical());
    }

    #[test]
    fn different_eras_are_refused() {
        let modern = HEADER.replace('}', r#","era":"modern"}"#);
        let a = Reader::new(
            format!("{HEADER}\n").into_bytes().as_slice(),
            Path::new("a.jsonl"),
        )
        .map(|r| r.header().effective_era())
        .unwrap();
        assert_eq!(a, Era::Legacy);
        let ta = format!("{HEADER}\n");
        let tb = format!("{modern}\n");
        let err = compare_readers(
            Reader::new(ta.as_bytes(), Path::new("a.jsonl")).unwrap(),
            Reader::new(tb.as_bytes(), Path::new("b.jsonl")).unwrap(),
            fingerprint,
            &Options::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "a.jsonl was recorded in the legacy era and b.jsonl in the modern era"
            ),
            "{err}"
        );
    }
}
