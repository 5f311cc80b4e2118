//! The replay index: what a cassette can answer, built once before serving.
//!
//! Requests and answers are paired by id the way they travelled: each answer goes to the oldest
//! request still waiting under the same `String(id)` key, so two connections of one HTTP recording
//! that both used id 1 keep their own answers (the reference keeps only the last answer per id).
//! Answered requests are pooled by fingerprint, in recorded order; `subscriptions/listen` requests
//! get pools of their own (a listen is answered by its acknowledgment, not by a response); requests
//! the server never answered are kept apart as a miss cause of their own.
//!
//! Recorded answers are kept as their exact text with the position of their `id`, so serving one
//! is two copies and a splice; the rest of the index is small per recorded frame, so the whole
//! costs about what the recorded frames weigh.
//!
//! An index is immutable once built and `Send + Sync`, so one `Arc<Index>` serves any number of
//! sessions on any threads; what a session consumes (cursors, released frames, subscriptions)
//! lives in the [`Session`](super::Session), never here. [`Index::build`] turns a cassette into
//! one, in named phases.

mod build;
pub mod catalogue;
mod pairing;
mod read;
mod timeline;

use std::sync::Arc;

use serde_json::Value;

use super::LookupMap;
use super::fingerprint::{MRTR_FIELDS, TOOLS_CALL};
use super::schedule::Schedule;
use super::shape::{ShapeRef, Shapes};
use super::volatile::VolatileSet;
use crate::cassette::{CassetteError, Header};
use crate::jsonrpc::Id;

pub use super::recorded::{Answer, Ask, Recorded};
pub use catalogue::Catalogue;
pub use read::{FpTable, FpTexts};

/// A recorded request and its answer.
#[derive(Debug)]
pub struct Pair {
    /// The method's number, which [`Pair::method`] names (a number, not a shared name: four
    /// bytes and no reference count to bump a pair on a large cassette).
    method: u32,
    /// The fingerprint's number (an index into [`Index::fp_text`]); `u32` as every position the
    /// index keeps per recorded request, to keep it small on a large cassette.
    pub fp: u32,
    pub retry: bool,
    /// How the request was written (see [`Shapes`]), when it can be matched by shape.
    pub shape: ShapeRef,
    pub answer: Answer,
    /// The request's position among recorded requests (the schedule's anchor).
    pub anchor: u32,
    /// What few pairs have (see [`PairExtra`]); `None` for most. One pointer instead of the
    /// three fields inline: on a 200,000-call cassette that is 5 MB less at the peak.
    pub extra: Option<Box<PairExtra>>,
    /// The cassette line the request was read from (an unused-recording report names it).
    pub line: u32,
}

/// The parts of a [`Pair`] that only some recordings have.
#[derive(Debug, Default)]
pub struct PairExtra {
    /// The recorded request's `_meta.progressToken` (JSON text): its progress notifications
    /// are re-addressed to the live request's token.
    pub progress: Option<Box<str>>,
    /// The recorded HTTP status of a single-frame answer, when it was not the default (200).
    pub status: Option<u16>,
    /// A streamed answer's chunk times (`t`, one per frame of [`Answer::Stream`]); empty for a
    /// single-frame answer. The HTTP front-end spaces chunks by them under `--timing recorded`.
    pub chunk_t: Box<[u64]>,
}

impl PairExtra {
    /// `None` when there is nothing to keep.
    fn of(
        progress: Option<Box<str>>,
        status: Option<u16>,
        chunk_t: Box<[u64]>,
    ) -> Option<Box<PairExtra>> {
        (progress.is_some() || status.is_some() || !chunk_t.is_empty()).then(|| {
            Box::new(PairExtra {
                progress,
                status,
                chunk_t,
            })
        })
    }
}

impl Pair {
    /// The recorded request's method, named by `index` (the index holding this pair).
    pub fn method<'i>(&self, index: &'i Index) -> &'i str {
        index.methods.get(self.method as usize).map_or("", |m| m)
    }

    /// The recorded request's `_meta.progressToken` (JSON text), when it asked for progress.
    pub fn progress(&self) -> Option<&str> {
        self.extra.as_ref()?.progress.as_deref()
    }

    /// The recorded HTTP status of a single-frame answer, when it was not the default (200).
    pub fn status(&self) -> Option<u16> {
        self.extra.as_ref()?.status
    }

    /// A streamed answer's chunk times; empty for a single-frame answer.
    pub fn chunk_t(&self) -> &[u64] {
        self.extra.as_ref().map_or(&[], |e| &e.chunk_t)
    }
}

/// A recorded `subscriptions/listen` and the acknowledgment that answered it.
#[derive(Debug)]
pub struct Listen {
    /// `String(id)` of the recorded listen request: what its frames are tagged with.
    pub key: String,
    pub ack: Option<Recorded>,
    pub fp: usize,
    pub anchor: usize,
    /// The cassette line the listen was read from.
    pub line: u32,
}

/// Where a recording left one task, read from its `tasks/get` pool.
#[derive(Debug, Clone)]
pub struct TaskPolls {
    pub task_id: String,
    pub status: String,
    pub terminal: bool,
    pub polls: usize,
    /// The pair holding the last recorded poll.
    pub last: usize,
}

/// Everything recorded under one fingerprint.
#[derive(Debug, Default)]
pub struct FpInfo {
    /// Answered requests, in recorded order: a range of [`Index::pool`].
    responses: (u32, u32),
    /// Recorded listens, in recorded order: a range of [`Index::listen_pool`].
    listens: (u32, u32),
    /// Recorded at least once with no answer.
    pub unanswered: bool,
    pub task: Option<Box<TaskPolls>>,
}

/// The index of one cassette.
#[derive(Debug)]
pub struct Index {
    pub header: Header,
    pub pairs: Vec<Pair>,
    /// Every recorded method's name, by the number its pairs keep (see [`Pair::method`]).
    methods: Vec<Arc<str>>,
    /// Fingerprint numbers by text (see [`Index::fp_number`]).
    pub fps: FpTable,
    /// Each fingerprint's text, by id.
    pub fp_text: FpTexts,
    pub fp_info: Vec<FpInfo>,
    /// How the recorded requests were written, for matching a repeated request by its bytes.
    pub shapes: Shapes,
    pool: Vec<u32>,
    listen_pool: Vec<u32>,
    /// Non-retry answered requests per method, in recorded order (warn mode's borrowing pool).
    pub by_method: LookupMap<Arc<str>, Vec<u32>>,
    pub listens: Vec<Listen>,
    /// Recorded requests by method and tool, for the miss diagnosis.
    pub catalogue: Catalogue,
    pub schedule: Schedule,
    /// Whether incoming requests must be redacted before fingerprinting.
    pub redact_requests: bool,
    pub volatile: VolatileSet,
    /// Non-fatal problems found while reading (for stderr).
    pub warnings: Vec<String>,
    /// The highest `live-N` id in the file (0 when none): passthrough continues from it.
    pub highest_live: u64,
    /// How many standalone GET streams (`via:"get"`) the recording holds; the first is served.
    pub standalone_streams: usize,
    /// The requests the recorded server sent to its client, numbered as their frames say
    /// ([`Recorded::ask`]), each with the client's recorded answer.
    pub asks: Vec<Ask>,
}

/// Why an index could not be built.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    #[error(transparent)]
    Volatile(#[from] super::volatile::VolatileError),
}

impl Index {
    /// The number of the fingerprint whose text is `fp`, when one was recorded.
    pub fn fp_number(&self, fp: &str) -> Option<usize> {
        self.fps.get(fp, &self.fp_text)
    }

    /// Answered requests recorded under `fp`, in recorded order.
    pub fn pool(&self, fp: usize) -> &[u32] {
        let (start, len) = self.fp_info[fp].responses;
        &self.pool[start as usize..(start + len) as usize]
    }

    /// Listens recorded under `fp`, in recorded order.
    pub fn listen_pool(&self, fp: usize) -> &[u32] {
        let (start, len) = self.fp_info[fp].listens;
        &self.listen_pool[start as usize..(start + len) as usize]
    }

    /// A recorded request's params as fingerprint `fp` holds them (declared-volatile fields
    /// dropped; `_meta` and `cursor` gone, and nothing for the methods matched on name alone).
    /// Read back on each use, not kept: a miss reads a bounded few (see [`catalogue`]), and
    /// keeping every one read would grow the shared index with each miss.
    pub fn recorded_params(&self, method: &str, fp: usize) -> Option<Value> {
        params_from_fingerprint(method, self.fp_text.get(fp)?)
    }

    /// The tool a recorded `tools/call` named: `params.name` of [`Index::recorded_params`] when
    /// it is a string, read in place for the common form (a summary of 200,000 unused calls
    /// spent a tenth of a second reading each one's params back).
    pub fn recorded_tool(&self, method: &str, fp: usize) -> Option<String> {
        if method != TOOLS_CALL {
            return None;
        }
        let text = self.fp_text.get(fp)?;
        if let Some(name) = catalogue::plain_tool_name(text) {
            return Some(name.to_owned());
        }
        params_from_fingerprint(method, text)?
            .get("name")?
            .as_str()
            .map(str::to_owned)
    }

    /// Every distinct recorded method (answered, listened or unanswered).
    pub fn recorded_methods(&self) -> Vec<String> {
        let mut methods: Vec<String> = self.catalogue.method_names().map(str::to_owned).collect();
        methods.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        methods
    }
}

/// Reads params back from a fingerprint's text: the canonical JSON after the method, or for a
/// `tools/call` the name, arguments and retry part. `None` for methods matched on name alone.
fn params_from_fingerprint(method: &str, fp: &str) -> Option<Value> {
    let rest = fp.strip_prefix(method)?.strip_prefix('\u{0}')?;
    let mut parts: Vec<&str> = rest.split('\u{0}').collect();
    if method != TOOLS_CALL || parts.len() < 2 {
        return serde_json::from_str(rest).ok();
    }
    // JSON text has no raw NUL, so the last one or two parts are JSON; the name is the rest.
    let mut params = serde_json::Map::new();
    let last: Value = serde_json::from_str(parts.last()?).ok()?;
    let retry = parts.len() >= 3
        && last
            .as_object()
            .is_some_and(|o| o.keys().all(|k| MRTR_FIELDS.contains(&k.as_str())));
    if retry {
        parts.pop();
        if let Value::Object(o) = last {
            params.extend(o);
        }
    }
    let args = parts.pop()?;
    params.insert("arguments".to_owned(), serde_json::from_str(args).ok()?);
    params.insert("name".to_owned(), Value::String(parts.join("\u{0}")));
    Some(Value::Object(params))
}

impl FpInfo {
    /// How many answered requests were recorded under this fingerprint.
    pub fn recorded(&self) -> usize {
        self.responses.1 as usize
    }

    /// How many listens were recorded under this fingerprint.
    pub fn recorded_listens(&self) -> usize {
        self.listens.1 as usize
    }
}

/// `String(id)`, without the float formatting for the plain integers nearly every id is.
pub fn id_key(id: &Id) -> String {
    match id {
        Id::Number(text) if plain_decimal(text) => text.to_string(),
        other => other.key(),
    }
}

/// Whether `text` is a decimal integer as `String(n)` writes it (no sign, no leading zero, no
/// exponent), short enough to fit a `u64` with room to spare.
fn plain_decimal(text: &str) -> bool {
    decimal_value(text).is_some()
}

/// The value of `text` when it is a plain decimal (see [`plain_decimal`]), read in the pass that
/// checks it: every recorded id is read so, and checking, then parsing, cost four times as much
/// (docs/benchmarks.md).
fn decimal_value(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() >= 16 || (bytes.len() > 1 && bytes[0] == b'0') {
        return None;
    }
    bytes.iter().try_fold(0u64, |n, &b| {
        // Fifteen digits at most: no overflow.
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

/// [`id_key`] as the index keeps it for every recorded frame: a key that is a plain decimal
/// number is held as that number, so the ids of a large cassette cost no allocation each (two
/// per call, 12 MB at the peak of a 200,000-call cassette); any other key is boxed. Two keys are
/// equal exactly when their texts are: a text is a `Number` if and only if it is a plain
/// decimal, and a plain decimal reads back as the same text (test `id_keys_are_equal_as_their_texts`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Number(u64),
    /// A thin pointer, so that the key stays 16 bytes (the size of the `Box<str>` it replaced).
    Text(Box<Box<str>>),
}

impl IdKey {
    /// The key of a recorded id.
    pub fn of(id: &Id) -> IdKey {
        match id {
            Id::Number(text) => match decimal_value(text) {
                Some(n) => IdKey::Number(n),
                None => IdKey::from_text(&id.key()),
            },
            Id::Str(text) => IdKey::from_text(text),
            other => IdKey::from_text(&other.key()),
        }
    }

    /// The key whose text is `text`.
    pub fn from_text(text: &str) -> IdKey {
        match decimal_value(text) {
            Some(n) => IdKey::Number(n),
            None => IdKey::Text(Box::new(text.into())),
        }
    }
}

impl std::fmt::Display for IdKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdKey::Number(n) => write!(f, "{n}"),
            IdKey::Text(text) => f.write_str(text),
        }
    }
}

/// The index is shared between sessions and threads: this stops compiling if a field ever makes it
/// otherwise.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Index>();
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fingerprint::fingerprint;
    use serde_json::json;

    proptest::proptest! {
        /// Reading a plain decimal in the pass that checks it gives what checking, then parsing,
        /// gave.
        #[test]
        fn decimal_values_are_the_checked_parse(text in "[0-9]{0,17}|[-+.e0-9a ]{0,6}|0[0-9]{0,3}") {
            let plain = !text.is_empty()
                && text.len() < 16
                && text.bytes().all(|b| b.is_ascii_digit())
                && (text.len() == 1 || !text.starts_with('0'));
            let expected = plain.then(|| text.parse::<u64>().ok()).flatten();
            proptest::prop_assert_eq!(decimal_value(&text), expected);
        }
    }

    #[test]
    fn id_keys_are_equal_as_their_texts() {
        let ids = [
            Id::Number("7".into()),
            Id::Str("7".into()),
            Id::Number("7.0".into()),
            Id::Number("7e0".into()),
            Id::Str("07".into()),
            Id::Number("0".into()),
            Id::Str("0".into()),
            Id::Number("-0".into()),
            Id::Number("123456789012345".into()),
            Id::Number("1234567890123456".into()),
            Id::Str("1234567890123456".into()),
            Id::Number("18446744073709551616".into()),
            Id::Str("live-1".into()),
            Id::Str("".into()),
            Id::Null,
        ];
        for a in &ids {
            assert_eq!(IdKey::of(a).to_string(), id_key(a), "{a:?}");
            for b in &ids {
                assert_eq!(
                    IdKey::of(a) == IdKey::of(b),
                    id_key(a) == id_key(b),
                    "{a:?} {b:?}"
                );
            }
        }
        assert_eq!(std::mem::size_of::<IdKey>(), 16);
        assert_eq!(std::mem::size_of::<Option<IdKey>>(), 16);
    }

    proptest::proptest! {
        #[test]
        fn id_keys_from_any_text_are_equal_as_their_texts(a in "[0-9a]{0,17}", b in "[0-9a]{0,17}") {
            let (ka, kb) = (IdKey::from_text(&a), IdKey::from_text(&b));
            proptest::prop_assert_eq!(ka.to_string(), a.clone());
            proptest::prop_assert_eq!(ka == kb, a == b);
        }
    }

    #[test]
    fn params_come_back_from_fingerprints() {
        let cases = [
            (
                "tools/call",
                json!({"name": "a", "arguments": {"x": [1, {"b": 2}]}}),
            ),
            (
                "tools/call",
                json!({"name": "a", "arguments": {}, "inputResponses": {"k": 1}, "requestState": "s"}),
            ),
            ("resources/read", json!({"uri": "demo://x"})),
            ("custom/x", json!({})),
        ];
        for (method, params) in cases {
            let fp = fingerprint(method, Some(&params));
            assert_eq!(
                params_from_fingerprint(method, &fp),
                Some(params.clone()),
                "{method}"
            );
        }
        assert_eq!(params_from_fingerprint("tools/list", "tools/list"), None);
        let fp = fingerprint(
            "tools/call",
            Some(&json!({"name": "a\u{0}b", "arguments": {"q": 1}})),
        );
        assert_eq!(
            params_from_fingerprint("tools/call", &fp),
            Some(json!({"name": "a\u{0}b", "arguments": {"q": 1}}))
        );
    }

    #[test]
    fn plain_integer_ids_key_without_formatting() {
        for (id, key) in [
            ("7", "7"),
            ("0", "0"),
            ("1.0", "1"),
            ("007", "7"),
            ("1e3", "1000"),
        ] {
            assert_eq!(id_key(&Id::Number((*id).into())), key, "{id}");
        }
        assert_eq!(id_key(&Id::Str("x".into())), "x");
    }
}
