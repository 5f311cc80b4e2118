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

use std::cell::OnceCell;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::fingerprint::{
    MRTR_FIELDS, TASKS_GET, TOOLS_CALL, fingerprint, fingerprint_node, is_mrtr_retry,
};
use super::schedule::{Event, Role, Schedule};
use super::shape::{ShapeRef, Shapes};
use super::volatile::VolatileSet;
use super::wire::{Spans, find_spans, params_text};
use super::{LookupMap, LookupSet};
use crate::cassette::{
    CassetteError, Dir, Entry, EntryKind, Header, Transport, unknown_entry_warning,
};
use crate::json::Node;
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::protocol::{ACKNOWLEDGED_METHOD, Era, LISTEN_METHOD};

/// A recorded server frame, ready to send again.
#[derive(Debug, Clone)]
pub struct Recorded {
    text: Arc<str>,
    spans: Spans,
    kind: FrameKind,
    /// A `notifications/subscriptions/acknowledged`.
    ack: bool,
}

impl Recorded {
    /// A recorded frame from its text (tests and fallbacks; the index builds from frames).
    pub fn new(text: &str) -> Recorded {
        match Frame::parse(text) {
            Some(frame) => Recorded::from_frame(&frame),
            None => Recorded {
                text: Arc::from(text),
                spans: Spans::default(),
                kind: FrameKind::Unclassified,
                ack: false,
            },
        }
    }

    pub fn from_frame(frame: &Frame) -> Recorded {
        // A copy, not the frame's shared text: a frame read from a cassette shares its whole
        // line, envelope included, and the index keeps every answer for the life of the replay.
        let text: Arc<str> = Arc::from(frame.text());
        let spans = find_spans(&text);
        Recorded {
            text,
            spans,
            kind: frame.kind(),
            ack: frame.kind() == FrameKind::Notification
                && frame.method() == Some(ACKNOWLEDGED_METHOD),
        }
    }

    pub fn text(&self) -> &Arc<str> {
        &self.text
    }

    pub fn spans(&self) -> &Spans {
        &self.spans
    }

    pub fn kind(&self) -> FrameKind {
        self.kind
    }

    /// Whether this is a subscription's acknowledgment.
    pub fn is_ack(&self) -> bool {
        self.ack
    }

    pub fn is_response(&self) -> bool {
        matches!(self.kind, FrameKind::Response | FrameKind::ErrorResponse)
    }

    /// The subscription a frame belongs to: the tag on a notification, and for the graceful
    /// closure of a listen the response id itself.
    pub fn subscription(&self) -> Option<String> {
        if self.is_response() {
            return self.response_id().map(|id| id.key());
        }
        self.spans.tag().map(|(_, id)| id.key())
    }

    fn response_id(&self) -> Option<Id> {
        let span = self.spans.id()?;
        let raw = serde_json::value::RawValue::from_string(self.text.get(span)?.to_owned()).ok()?;
        Id::from_raw(&raw)
    }
}

/// How a recorded request was answered.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A single response frame.
    Frame(Recorded),
    /// A streamed answer (HTTP): every frame, the last being the response.
    Stream(Vec<Recorded>),
}

impl Answer {
    /// The response that ends the answer.
    pub fn response(&self) -> Option<&Recorded> {
        match self {
            Answer::Frame(r) => Some(r),
            Answer::Stream(frames) => frames.last(),
        }
    }
}

/// A recorded request and its answer.
#[derive(Debug)]
pub struct Pair {
    pub method: Arc<str>,
    pub fp: usize,
    pub retry: bool,
    /// How the request was written (see [`Shapes`]), when it can be matched by shape.
    pub shape: ShapeRef,
    pub answer: Answer,
    /// The request's position among recorded requests (the schedule's anchor).
    pub anchor: usize,
}

/// A recorded `subscriptions/listen` and the acknowledgment that answered it.
#[derive(Debug)]
pub struct Listen {
    /// `String(id)` of the recorded listen request: what its frames are tagged with.
    pub key: String,
    pub ack: Option<Recorded>,
    pub fp: usize,
    pub anchor: usize,
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

/// A recorded request as the miss diagnosis sees it. Its params are not kept: the fingerprint
/// holds them (declared-volatile fields already dropped), and a miss reads them back from there.
#[derive(Debug)]
pub struct CorpusEntry {
    pub method: Arc<str>,
    pub fp: usize,
    /// Params read back from the fingerprint, on first use.
    shaped: OnceCell<Option<Box<Value>>>,
}

/// The index of one cassette.
#[derive(Debug)]
pub struct Index {
    pub header: Header,
    pub pairs: Vec<Pair>,
    pub fps: LookupMap<Arc<str>, usize>,
    /// Each fingerprint's text, by id.
    pub fp_text: Vec<Arc<str>>,
    pub fp_info: Vec<FpInfo>,
    /// How the recorded requests were written, for matching a repeated request by its bytes.
    pub shapes: Shapes,
    pool: Vec<u32>,
    listen_pool: Vec<u32>,
    /// Non-retry answered requests per method, in recorded order (warn mode's borrowing pool).
    pub by_method: LookupMap<Arc<str>, Vec<u32>>,
    pub listens: Vec<Listen>,
    /// Answered requests and listens, in file order.
    pub corpus: Vec<CorpusEntry>,
    /// Requests the recording holds no answer for, in file order.
    pub unanswered: Vec<CorpusEntry>,
    pub schedule: Schedule,
    /// Whether incoming requests must be redacted before fingerprinting.
    pub redact_requests: bool,
    pub volatile: VolatileSet,
    /// Non-fatal problems found while reading (for stderr).
    pub warnings: Vec<String>,
    /// The highest `live-N` id in the file (0 when none): passthrough continues from it.
    pub highest_live: u64,
}

/// Why an index could not be built.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    #[error(transparent)]
    Volatile(#[from] super::volatile::VolatileError),
}

/// Where a frame sits in wire order: `t`, entry index, position within the entry, and a tie-break
/// that only ever moves a request just ahead of its own answer.
type WireKey = (u64, usize, i64, i8);

/// A frame on the timeline: a recorded request or a server frame, by its index in its list.
#[derive(Debug, Clone, Copy)]
struct Timed(usize);

impl Timed {
    const REQUEST: usize = 1 << (usize::BITS - 1);

    fn request(i: usize) -> Timed {
        Timed(i | Timed::REQUEST)
    }

    fn server(i: usize) -> Timed {
        Timed(i)
    }

    /// Whether it is a request, and its index.
    fn split(self) -> (bool, usize) {
        (self.0 & Timed::REQUEST != 0, self.0 & !Timed::REQUEST)
    }
}

/// A recorded request, reduced while reading to what the index keeps: its text is not.
struct RequestItem {
    t: u64,
    entry: usize,
    /// `String(id)`.
    key: String,
    listen: bool,
    method: Arc<str>,
    fp: usize,
    retry: bool,
    shape: ShapeRef,
}

struct ServerItem {
    t: u64,
    entry: usize,
    within: i64,
    /// Taken by whatever ends up holding it (an answer, a listen, the schedule).
    rec: Option<Recorded>,
    kind: FrameKind,
    ack: bool,
    /// The id of a response, as `String(id)`; the tag of a tagged frame. Boxed: one of these
    /// is kept per recorded server frame, and every byte of it counts on a large cassette.
    id: Option<Box<str>>,
    tag: Option<Box<str>>,
    stream: Option<usize>,
}

impl ServerItem {
    fn new(t: u64, entry: usize, within: i64, frame: &Frame, stream: Option<usize>) -> ServerItem {
        let rec = Recorded::from_frame(frame);
        ServerItem {
            t,
            entry,
            within,
            kind: rec.kind(),
            ack: rec.is_ack(),
            id: frame
                .id()
                .filter(|id| **id != Id::Null)
                .map(|id| id_key(id).into()),
            tag: rec.spans().tag().map(|(_, id)| id_key(id).into()),
            rec: Some(rec),
            stream,
        }
    }

    fn is_response(&self) -> bool {
        matches!(self.kind, FrameKind::Response | FrameKind::ErrorResponse)
    }
}

struct StreamItem {
    id: Option<Id>,
    frames: Vec<usize>,
}

enum InOrder {
    Request(usize),
    Server(usize),
    Stream(usize),
}

#[derive(Clone, Copy)]
enum Reply {
    Frame(usize),
    Stream(usize),
}

impl Index {
    /// Builds the index from a cassette's header and entries. `invocation_volatile` are the
    /// `--volatile` declarations, added after the header's own.
    pub fn build(
        header: Header,
        entries: impl IntoIterator<Item = Result<Entry, CassetteError>>,
        invocation_volatile: &[String],
        path: &Path,
    ) -> Result<Index, IndexError> {
        let volatile = VolatileSet::build(header.volatile().as_ref(), invocation_volatile)?;
        let mut warnings = Vec::new();
        let mut requests: Vec<RequestItem> = Vec::new();
        let mut servers: Vec<ServerItem> = Vec::new();
        let mut streams: Vec<StreamItem> = Vec::new();
        let mut order: Vec<InOrder> = Vec::new();
        let mut facts = HeaderFacts::default();
        let mut warned_types: LookupSet<String> = LookupSet::default();
        let mut highest_live = 0u64;
        let mut methods: LookupMap<String, Arc<str>> = LookupMap::default();
        let mut interner = Interner::default();
        let mut shapes = Shapes::default();
        let mut task_ids: LookupMap<usize, String> = LookupMap::default();

        for (n, entry) in entries.into_iter().enumerate() {
            let entry = entry?;
            let Entry { t, dir, kind, .. } = entry;
            match &kind {
                EntryKind::Frame(f) => highest_live = highest_live.max(live_number(f.id())),
                EntryKind::Chunks { id, chunks, .. } => {
                    highest_live = highest_live.max(live_number(id.as_ref()));
                    for c in chunks {
                        highest_live = highest_live.max(live_number(c.frame.id()));
                    }
                }
                _ => {}
            }
            match (dir, kind) {
                (Some(Dir::C2s), EntryKind::Frame(frame))
                    if frame.kind() == FrameKind::Request && frame.id() != Some(&Id::Null) =>
                {
                    facts.initialize |= frame.method() == Some("initialize");
                    let listen = frame.method() == Some(LISTEN_METHOD);
                    let name = frame.method().unwrap_or_default();
                    let method = match methods.get(name) {
                        Some(m) => Arc::clone(m),
                        None => {
                            let m: Arc<str> = Arc::from(name);
                            methods.insert(name.to_owned(), Arc::clone(&m));
                            m
                        }
                    };
                    let (fp, retry, task_id) = read_request(&volatile, &method, &frame);
                    let shape = ShapeRef::from(if listen || volatile.applies_to(&method) {
                        None
                    } else {
                        shapes.learn(frame.text(), &fp)
                    });
                    let fp = interner.intern(fp);
                    if &*method == TASKS_GET {
                        if let Some(id) = task_id {
                            task_ids.entry(fp).or_insert(id);
                        }
                    }
                    order.push(InOrder::Request(requests.len()));
                    requests.push(RequestItem {
                        t,
                        entry: n,
                        key: frame.id().map(id_key).unwrap_or_default(),
                        listen,
                        method,
                        fp,
                        retry,
                        shape,
                    });
                }
                (Some(Dir::S2c), EntryKind::Frame(frame)) => {
                    order.push(InOrder::Server(servers.len()));
                    servers.push(ServerItem::new(t, n, -1, &frame, None));
                }
                (
                    dir,
                    EntryKind::Chunks {
                        id,
                        via_get,
                        chunks,
                    },
                ) => {
                    facts.chunks = true;
                    facts.get_stream |= via_get;
                    if dir != Some(Dir::S2c) {
                        continue;
                    }
                    let s = streams.len();
                    let mut frames = Vec::with_capacity(chunks.len());
                    for (j, chunk) in chunks.into_iter().enumerate() {
                        frames.push(servers.len());
                        servers.push(ServerItem::new(chunk.t, n, j as i64, &chunk.frame, Some(s)));
                    }
                    order.push(InOrder::Stream(s));
                    streams.push(StreamItem {
                        id: if via_get { None } else { id },
                        frames,
                    });
                }
                (_, EntryKind::Unknown(kind)) if warned_types.insert(kind.clone()) => {
                    warnings.push(unknown_entry_warning(&kind, path));
                }
                _ => {}
            }
        }
        warnings.extend(facts.contradictions(&header));
        // The lists grew by doubling; what follows allocates the index beside them, so give the
        // slack back first (a large cassette's peak memory is set here).
        servers.shrink_to_fit();
        requests.shrink_to_fit();
        order.shrink_to_fit();

        // Pair answers with requests, in file order, oldest waiting request first.
        let mut replies: Vec<Option<Reply>> = vec![None; requests.len()];
        let mut closures: LookupSet<usize> = LookupSet::default();
        let mut listen_streams: LookupSet<usize> = LookupSet::default();
        let mut standalone: Option<usize> = None;
        let mut waiting: LookupMap<String, VecDeque<usize>> = LookupMap::default();
        let mut early: LookupMap<String, VecDeque<usize>> = LookupMap::default();
        for item in &order {
            match *item {
                InOrder::Request(r) => {
                    let key = requests[r].key.clone();
                    if !requests[r].listen {
                        if let Some(s) = pop_early(&mut early, &key) {
                            replies[r] = Some(Reply::Frame(s));
                            continue;
                        }
                    }
                    waiting.entry(key).or_default().push_back(r);
                }
                InOrder::Server(s) => {
                    let item = &servers[s];
                    if !item.is_response() {
                        continue;
                    }
                    let Some(key) = item.id.as_deref().map(String::from) else {
                        continue;
                    };
                    // A listen's graceful closure tags its result with the listen id; anything
                    // else is an ordinary answer.
                    let closes_listen = item.tag.as_deref() == Some(key.as_str());
                    match take_waiting(&mut waiting, &key, &requests, closes_listen) {
                        Some(r) if requests[r].listen => {
                            closures.insert(s);
                        }
                        Some(r) => replies[r] = Some(Reply::Frame(s)),
                        None => early.entry(key).or_default().push_back(s),
                    }
                }
                InOrder::Stream(st) => {
                    let Some(id) = streams[st].id.as_ref() else {
                        // One standalone GET endpoint: the first such stream is served, the others
                        // are ignored.
                        if standalone.is_none() {
                            standalone = Some(st);
                        }
                        continue;
                    };
                    let key = id_key(id);
                    let opens_listen = streams[st].frames.first().is_some_and(|&s| servers[s].ack);
                    match take_waiting(&mut waiting, &key, &requests, opens_listen) {
                        Some(r) if requests[r].listen => {
                            listen_streams.insert(st);
                        }
                        Some(r) if !streams[st].frames.is_empty() => {
                            replies[r] = Some(Reply::Stream(st))
                        }
                        _ => {}
                    }
                }
            }
        }
        drop((waiting, early, order));

        // Wire order: timestamps, then file order.
        let server_key =
            |i: usize| (servers[i].t, servers[i].entry, servers[i].within, 0i8) as WireKey;
        let mut request_key: Vec<WireKey> =
            requests.iter().map(|r| (r.t, r.entry, -1, 0)).collect();
        // A recorder that writes a request's line after the answer it caused (a capture thread
        // per direction) can leave the two in the same millisecond in the wrong file order; no
        // answer precedes its request on the wire, so the request is put back in front of it.
        for (r, reply) in replies.iter().enumerate() {
            let answer = match reply {
                Some(Reply::Frame(s)) => Some(*s),
                Some(Reply::Stream(st)) => streams[*st].frames.last().copied(),
                None => None,
            };
            if let Some(a) = answer {
                let (t, entry, within, _) = server_key(a);
                if (t, entry, within, 0) < request_key[r] {
                    request_key[r] = (t, entry, within, -1);
                }
            }
        }
        // Every frame in wire order, as one tagged index each (8 bytes a frame: on a large
        // cassette this list is as long as the file), sorted by the keys it points at.
        let build_timeline = |request_key: &[WireKey]| {
            let mut timeline: Vec<Timed> = Vec::with_capacity(requests.len() + servers.len());
            timeline.extend((0..request_key.len()).map(Timed::request));
            timeline.extend((0..servers.len()).map(Timed::server));
            timeline.sort_unstable_by_key(|t| {
                let (is_req, i) = t.split();
                let key = if is_req {
                    request_key[i]
                } else {
                    server_key(i)
                };
                (key, !is_req, i)
            });
            timeline
        };
        let mut timeline = build_timeline(&request_key);

        // Acknowledgments pair with the listen they name, else with the oldest still unacknowledged.
        let listen_reqs: Vec<usize> = (0..requests.len())
            .filter(|&r| requests[r].listen)
            .collect();
        let mut ack_of: LookupMap<usize, usize> = LookupMap::default(); // server item -> request
        let mut acked: LookupSet<usize> = LookupSet::default();
        if !listen_reqs.is_empty() {
            for (is_req, i) in timeline.iter().map(|t| t.split()) {
                if is_req || !servers[i].ack {
                    continue;
                }
                let item = &servers[i];
                if item
                    .stream
                    .is_some_and(|st| !listen_streams.contains(&st) && Some(st) != standalone)
                {
                    continue;
                }
                let by_tag = item.tag.as_ref().and_then(|key| {
                    listen_reqs
                        .iter()
                        .copied()
                        .find(|r| !acked.contains(r) && *requests[*r].key == **key)
                });
                let found =
                    by_tag.or_else(|| listen_reqs.iter().copied().find(|r| !acked.contains(r)));
                if let Some(r) = found {
                    acked.insert(r);
                    ack_of.insert(i, r);
                }
            }
            // The same for a listen and its acknowledgment.
            let mut moved = false;
            for (&s, &r) in &ack_of {
                let (t, entry, within, _) = server_key(s);
                if (t, entry, within, 0) < request_key[r] {
                    request_key[r] = (t, entry, within, -1);
                    moved = true;
                }
            }
            if moved {
                timeline = build_timeline(&request_key);
            }
        }

        // Roles and the schedule.
        let mut stream_end: LookupMap<usize, usize> = LookupMap::default(); // stream -> request
        let mut frame_reply: LookupMap<usize, usize> = LookupMap::default(); // server item -> request
        for (r, reply) in replies.iter().enumerate() {
            match reply {
                Some(Reply::Stream(st)) => {
                    stream_end.insert(*st, r);
                }
                Some(Reply::Frame(s)) => {
                    frame_reply.insert(*s, r);
                }
                None => {}
            }
        }
        let mut events = Vec::with_capacity(timeline.len());
        for (is_req, i) in timeline.iter().map(|t| t.split()) {
            if is_req {
                let answered = replies[i].is_some() || acked.contains(&i);
                events.push(Event::Sent {
                    request: i,
                    answered,
                });
                continue;
            }
            let item = &servers[i];
            let role = if let Some(&r) = ack_of.get(&i) {
                Role::Answers(r)
            } else if let Some(st) = item.stream {
                if let Some(&r) = stream_end.get(&st) {
                    if streams[st].frames.last() == Some(&i) {
                        Role::Answers(r)
                    } else {
                        Role::InStream
                    }
                } else if listen_streams.contains(&st) || standalone == Some(st) {
                    classify_loose(item.kind, item.tag.is_some())
                } else {
                    Role::Skip
                }
            } else if let Some(&r) = frame_reply.get(&i) {
                Role::Answers(r)
            } else if closures.contains(&i) {
                Role::Push
            } else if item.is_response() {
                Role::Skip
            } else {
                classify_loose(item.kind, item.tag.is_some())
            };
            events.push(Event::Arrived { role, frame: i });
        }
        drop((timeline, stream_end, frame_reply, request_key));
        let schedule = Schedule::build(events, |i| servers[i].rec.take());
        // From here on only each server frame's recording is needed: keep 48 bytes a frame,
        // not the whole item, while the pairs are built beside it.
        let mut recs: Vec<Option<Recorded>> = servers.into_iter().map(|item| item.rec).collect();
        recs.shrink_to_fit();

        // Pools, in file order.
        let Interner { fps, texts } = interner;
        shapes.finish();
        let mut index = Index {
            redact_requests: header.redaction_applied(),
            header,
            pairs: Vec::new(),
            fp_info: (0..texts.len()).map(|_| FpInfo::default()).collect(),
            fps,
            fp_text: texts,
            shapes,
            pool: Vec::new(),
            listen_pool: Vec::new(),
            by_method: LookupMap::default(),
            listens: Vec::new(),
            corpus: Vec::new(),
            unanswered: Vec::new(),
            schedule,
            volatile,
            warnings,
            highest_live,
        };
        // Every request lands in `corpus` or `unanswered`, most of them with a pair: sized once
        // rather than grown by doubling.
        index.pairs.reserve_exact(requests.len());
        index.corpus.reserve_exact(requests.len());
        let mut acks: LookupMap<usize, usize> = ack_of.into_iter().map(|(s, r)| (r, s)).collect();
        let mut pair_fps: Vec<u32> = Vec::new();
        let mut listen_fps: Vec<u32> = Vec::new();
        for (r, item) in requests.into_iter().enumerate() {
            let RequestItem {
                key,
                listen,
                method,
                fp,
                retry,
                shape,
                ..
            } = item;
            let corpus = CorpusEntry {
                method: Arc::clone(&method),
                fp,
                shaped: OnceCell::new(),
            };
            if listen {
                listen_fps.push(fp as u32);
                index.listens.push(Listen {
                    key,
                    ack: acks.remove(&r).and_then(|s| recs[s].take()),
                    fp,
                    anchor: r,
                });
                index.corpus.push(corpus);
                continue;
            }
            let answer = match replies[r] {
                Some(Reply::Frame(s)) => recs[s].take().map(Answer::Frame),
                Some(Reply::Stream(st)) => Some(Answer::Stream(
                    streams[st]
                        .frames
                        .iter()
                        .filter_map(|&s| recs[s].take())
                        .collect(),
                )),
                None => None,
            };
            let Some(answer) = answer else {
                index.fp_info[fp].unanswered = true;
                index.unanswered.push(corpus);
                continue;
            };
            let p = index.pairs.len();
            if !retry {
                index
                    .by_method
                    .entry(Arc::clone(&method))
                    .or_default()
                    .push(p as u32);
            }
            index.pairs.push(Pair {
                method,
                fp,
                retry,
                shape,
                answer,
                anchor: r,
            });
            pair_fps.push(fp as u32);
            index.corpus.push(corpus);
        }
        drop(recs);
        index.pool = group(
            &pair_fps,
            index.fp_info.len(),
            |info, range| info.responses = range,
            &mut index.fp_info,
        );
        index.listen_pool = group(
            &listen_fps,
            index.fp_info.len(),
            |info, range| info.listens = range,
            &mut index.fp_info,
        );
        index.read_task_polls(&task_ids);
        index.fps.shrink_to_fit();
        index.pairs.shrink_to_fit();
        index.corpus.shrink_to_fit();
        Ok(index)
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

    /// A recorded request's params as the fingerprint holds them (declared-volatile fields
    /// dropped; `_meta` and `cursor` gone, and nothing for the methods matched on name alone).
    pub fn corpus_params<'c>(&self, entry: &'c CorpusEntry) -> Option<&'c Value> {
        entry
            .shaped
            .get_or_init(|| {
                let fp = self.fp_text.get(entry.fp)?;
                params_from_fingerprint(&entry.method, fp).map(Box::new)
            })
            .as_deref()
    }

    /// Reads, for every `tasks/get` pool, where the recording left the task.
    fn read_task_polls(&mut self, task_ids: &LookupMap<usize, String>) {
        for (&fp, task_id) in task_ids {
            let pool = self.pool(fp);
            let (Some(&last), polls) = (pool.last(), pool.len()) else {
                continue;
            };
            let last = last as usize;
            let status = self.pairs[last]
                .answer
                .response()
                .and_then(|r| serde_json::from_str::<Value>(r.text()).ok())
                .and_then(|v| {
                    v.pointer("/result/status")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            if let Some(status) = status {
                let terminal = matches!(status.as_str(), "completed" | "failed" | "cancelled");
                self.fp_info[fp].task = Some(Box::new(TaskPolls {
                    task_id: task_id.clone(),
                    status,
                    terminal,
                    polls,
                    last,
                }));
            }
        }
    }

    /// Every distinct recorded method (answered, listened or unanswered).
    pub fn recorded_methods(&self) -> Vec<String> {
        let mut methods: Vec<String> = self
            .corpus
            .iter()
            .chain(&self.unanswered)
            .map(|c| c.method.to_string())
            .collect::<LookupSet<_>>()
            .into_iter()
            .collect();
        methods.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        methods
    }
}

/// Fingerprint texts, each stored once and numbered in order of first sight.
#[derive(Default)]
struct Interner {
    fps: LookupMap<Arc<str>, usize>,
    texts: Vec<Arc<str>>,
}

impl Interner {
    fn intern(&mut self, fp: String) -> usize {
        if let Some(&id) = self.fps.get(fp.as_str()) {
            return id;
        }
        let id = self.texts.len();
        let text: Arc<str> = Arc::from(fp);
        self.texts.push(Arc::clone(&text));
        self.fps.insert(text, id);
        id
    }
}

/// A recorded request's fingerprint, whether it is an MRTR retry, and (for a poll) its task id.
fn read_request(
    volatile: &VolatileSet,
    method: &str,
    frame: &Frame,
) -> (String, bool, Option<String>) {
    if volatile.applies_to(method) {
        let params = shaped_params(volatile, method, frame);
        let task_id = params
            .as_ref()
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let fp = fingerprint(method, params.as_ref());
        return (fp, is_mrtr_retry(params.as_ref()), task_id);
    }
    // Read in place: no tree of hash maps per recorded request.
    let node = params_text(frame.text())
        .and_then(|t| Node::parse(t).ok())
        .filter(|n| *n != Node::Null);
    let task_id = match node.as_ref().and_then(|n| n.get("taskId")) {
        Some(Node::Str(id)) => Some(id.to_string()),
        _ => None,
    };
    let retry = matches!(&node, Some(Node::Obj(m)) if m.iter().any(|(k, _)| MRTR_FIELDS.contains(&k.as_ref())));
    (fingerprint_node(method, node.as_ref()), retry, task_id)
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

/// Groups item indices by fingerprint into one flat list (recorded order kept inside each
/// group), and tells each fingerprint where its group is.
fn group(
    fp_of: &[u32],
    fps: usize,
    mut set: impl FnMut(&mut FpInfo, (u32, u32)),
    info: &mut [FpInfo],
) -> Vec<u32> {
    let mut counts = vec![0u32; fps];
    for &fp in fp_of {
        counts[fp as usize] += 1;
    }
    let mut starts = vec![0u32; fps];
    let mut next = 0u32;
    for (fp, &count) in counts.iter().enumerate() {
        starts[fp] = next;
        set(&mut info[fp], (next, count));
        next += count;
    }
    let mut flat = vec![0u32; fp_of.len()];
    for (item, &fp) in fp_of.iter().enumerate() {
        let at = &mut starts[fp as usize];
        flat[*at as usize] = item as u32;
        *at += 1;
    }
    flat
}

/// A recorded request's params with declared-volatile fields dropped.
fn shaped_params(volatile: &VolatileSet, method: &str, frame: &Frame) -> Option<Value> {
    let mut params = frame
        .value()
        .get_mut("params")
        .map(Value::take)
        .filter(|p| !p.is_null());
    if let Some(p) = params.as_mut() {
        volatile.drop_from(method, p);
    }
    params
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

/// Takes the oldest request waiting under `key`, preferring a listen when `listen_first` (a
/// closure or a subscription stream) and an ordinary request otherwise.
fn take_waiting(
    waiting: &mut LookupMap<String, VecDeque<usize>>,
    key: &str,
    requests: &[RequestItem],
    listen_first: bool,
) -> Option<usize> {
    let queue = waiting.get_mut(key)?;
    let at = queue
        .iter()
        .position(|&r| requests[r].listen == listen_first)
        .or(if queue.is_empty() { None } else { Some(0) })?;
    let taken = queue.remove(at);
    if queue.is_empty() {
        // Ids are mostly unique: keeping an empty queue per answered id would make this map as
        // large as the recording (5 MB for 50,000 calls) instead of as large as what is in flight.
        waiting.remove(key);
    }
    taken
}

/// The oldest answer recorded ahead of any request under `key`; an emptied queue is dropped.
fn pop_early(early: &mut LookupMap<String, VecDeque<usize>>, key: &str) -> Option<usize> {
    let queue = early.get_mut(key)?;
    let first = queue.pop_front();
    if queue.is_empty() {
        early.remove(key);
    }
    first
}

/// `String(id)`, without the float formatting for the plain integers nearly every id is.
pub fn id_key(id: &Id) -> String {
    match id {
        Id::Number(text)
            if !text.is_empty()
                && text.len() < 16
                && text.bytes().all(|b| b.is_ascii_digit())
                && (text.len() == 1 || !text.starts_with('0')) =>
        {
            text.clone()
        }
        other => other.key(),
    }
}

/// `N` of a `live-N` id, 0 for any other id.
fn live_number(id: Option<&Id>) -> u64 {
    match id {
        Some(Id::Str(s)) => s
            .strip_prefix("live-")
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// The role of a server frame that answers nothing.
fn classify_loose(kind: FrameKind, tagged: bool) -> Role {
    match kind {
        FrameKind::Request => Role::ServerRequest,
        FrameKind::Notification => Role::Push,
        FrameKind::Response | FrameKind::ErrorResponse if tagged => Role::Push,
        FrameKind::Response | FrameKind::ErrorResponse | FrameKind::Unclassified => Role::Skip,
    }
}

/// What the frames say, to compare with what the header says.
#[derive(Default)]
struct HeaderFacts {
    initialize: bool,
    chunks: bool,
    get_stream: bool,
}

impl HeaderFacts {
    /// The header-versus-frames contradictions `lint` reports as errors, as replay warnings.
    fn contradictions(&self, header: &Header) -> Vec<String> {
        let mut out = Vec::new();
        let modern = header.effective_era() == Era::Modern;
        if modern && self.initialize {
            out.push("era is \"modern\" but the cassette records an `initialize` request; the modern era has no handshake".to_owned());
        }
        if modern && header.sessioned() {
            out.push("era is \"modern\" but the header says `sessioned`; the modern era removed sessions entirely".to_owned());
        }
        if modern && self.get_stream {
            out.push("era is \"modern\" but a stream is recorded as `via:\"get\"`; the modern era removed the standalone GET stream".to_owned());
        }
        match header.transport() {
            Transport::Stdio => {
                if header.url().is_some() {
                    out.push("transport is \"stdio\" but the header carries a `url`".to_owned());
                }
                if self.chunks {
                    out.push("transport is \"stdio\" but the cassette records a streamed answer; `chunks` entries only come from HTTP".to_owned());
                }
            }
            Transport::Http => {
                if header.command().is_some() {
                    out.push(
                        "transport is \"http\" but the header carries a spawn `command`".to_owned(),
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            assert_eq!(id_key(&Id::Number(id.to_owned())), key, "{id}");
        }
        assert_eq!(id_key(&Id::Str("x".into())), "x");
    }
}
