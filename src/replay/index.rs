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
//! is two copies and a splice, and the index costs about what the recorded frames weigh.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::fingerprint::{TASKS_GET, fingerprint, is_mrtr_retry};
use super::schedule::{Event, Role, Schedule};
use super::volatile::VolatileSet;
use super::wire::{Spans, find_spans};
use crate::cassette::{
    CassetteError, Dir, Entry, EntryKind, Header, Transport, unknown_entry_warning,
};
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::protocol::{ACKNOWLEDGED_METHOD, Era, LISTEN_METHOD};

/// A recorded server frame, ready to send again.
#[derive(Debug, Clone)]
pub struct Recorded {
    text: Arc<str>,
    spans: Spans,
    kind: FrameKind,
    method: Option<Box<str>>,
}

impl Recorded {
    /// A recorded frame from its text (test and fallback use; the index builds from frames).
    pub fn new(text: &str) -> Recorded {
        match Frame::parse(text) {
            Some(frame) => Recorded::from_frame(&frame),
            None => Recorded {
                text: Arc::from(text),
                spans: Spans::default(),
                kind: FrameKind::Unclassified,
                method: None,
            },
        }
    }

    pub fn from_frame(frame: &Frame) -> Recorded {
        let text: Arc<str> = Arc::from(frame.text());
        let spans = find_spans(&text);
        Recorded {
            text,
            spans,
            kind: frame.kind(),
            method: frame.method().map(Box::from),
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

    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
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
        self.spans.tag.as_ref().map(|(_, id)| id.key())
    }

    fn response_id(&self) -> Option<Id> {
        let span = self.spans.id.clone()?;
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
    pub method: Box<str>,
    pub fp: usize,
    pub retry: bool,
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
    /// Answered requests, in recorded order.
    pub responses: Vec<usize>,
    /// Recorded listens, in recorded order.
    pub listens: Vec<usize>,
    /// Recorded at least once with no answer.
    pub unanswered: bool,
    pub task: Option<TaskPolls>,
}

/// A recorded request as the miss diagnosis sees it.
#[derive(Debug)]
pub struct CorpusEntry {
    pub method: Box<str>,
    /// The request frame's text, parsed only when a miss needs it.
    pub text: Box<str>,
    pub fp: usize,
    /// Params with declared-volatile fields dropped, parsed on first use.
    pub shaped: OnceCell<Option<Value>>,
}

/// The index of one cassette.
#[derive(Debug)]
pub struct Index {
    pub header: Header,
    pub pairs: Vec<Pair>,
    pub fps: HashMap<Box<str>, usize>,
    pub fp_info: Vec<FpInfo>,
    /// Non-retry answered requests per method, in recorded order (warn mode's borrowing pool).
    pub by_method: HashMap<Box<str>, Vec<usize>>,
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

struct RequestItem {
    t: u64,
    entry: usize,
    frame: Frame,
    listen: bool,
}

struct ServerItem {
    t: u64,
    entry: usize,
    within: i64,
    rec: Recorded,
    id: Option<Id>,
    stream: Option<usize>,
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
        let mut warned_types: HashSet<String> = HashSet::new();

        let mut highest_live = 0u64;
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
                    order.push(InOrder::Request(requests.len()));
                    requests.push(RequestItem {
                        t,
                        entry: n,
                        frame,
                        listen,
                    });
                }
                (Some(Dir::S2c), EntryKind::Frame(frame)) => {
                    order.push(InOrder::Server(servers.len()));
                    servers.push(ServerItem {
                        t,
                        entry: n,
                        within: -1,
                        rec: Recorded::from_frame(&frame),
                        id: frame.id().cloned(),
                        stream: None,
                    });
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
                        servers.push(ServerItem {
                            t: chunk.t,
                            entry: n,
                            within: j as i64,
                            rec: Recorded::from_frame(&chunk.frame),
                            id: chunk.frame.id().cloned(),
                            stream: Some(s),
                        });
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

        // Pair answers with requests, in file order, oldest waiting request first.
        let mut replies: Vec<Option<Reply>> = vec![None; requests.len()];
        let mut closures: HashSet<usize> = HashSet::new();
        let mut listen_streams: HashSet<usize> = HashSet::new();
        let mut standalone: Option<usize> = None;
        let mut waiting: HashMap<String, VecDeque<usize>> = HashMap::new();
        let mut early: HashMap<String, VecDeque<usize>> = HashMap::new();
        for item in &order {
            match *item {
                InOrder::Request(r) => {
                    let key = requests[r].frame.id().map(Id::key).unwrap_or_default();
                    if !requests[r].listen {
                        if let Some(s) = early.get_mut(&key).and_then(VecDeque::pop_front) {
                            replies[r] = Some(Reply::Frame(s));
                            continue;
                        }
                    }
                    waiting.entry(key).or_default().push_back(r);
                }
                InOrder::Server(s) => {
                    let item = &servers[s];
                    if !item.rec.is_response() {
                        continue;
                    }
                    let Some(id) = item.id.as_ref().filter(|id| **id != Id::Null) else {
                        continue;
                    };
                    let key = id.key();
                    // A listen's graceful closure tags its result with the listen id; anything
                    // else is an ordinary answer.
                    let closes_listen = item
                        .rec
                        .spans()
                        .tag
                        .as_ref()
                        .is_some_and(|(_, tag)| tag.key() == key);
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
                    let key = id.key();
                    let opens_listen = streams[st]
                        .frames
                        .first()
                        .is_some_and(|&s| servers[s].rec.method() == Some(ACKNOWLEDGED_METHOD));
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

        // Wire order: timestamps, then file order. A key is (t, entry, position in entry, tie),
        // the last member only ever moving a request just ahead of its own answer.
        let server_key = |i: usize| (servers[i].t, servers[i].entry, servers[i].within, 0i8);
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
        let build_timeline = |request_key: &[WireKey]| {
            let mut timeline: Vec<(WireKey, bool, usize)> =
                Vec::with_capacity(requests.len() + servers.len());
            timeline.extend(request_key.iter().enumerate().map(|(i, k)| (*k, true, i)));
            timeline.extend((0..servers.len()).map(|i| (server_key(i), false, i)));
            timeline.sort_by_key(|&(k, _, _)| k);
            timeline
        };
        let mut timeline = build_timeline(&request_key);

        // Acknowledgments pair with the listen they name, else with the oldest still unacknowledged.
        let listen_reqs: Vec<usize> = (0..requests.len())
            .filter(|&r| requests[r].listen)
            .collect();
        let mut ack_of: HashMap<usize, usize> = HashMap::new(); // server item -> request
        let mut acked: HashSet<usize> = HashSet::new();
        for &(_, is_req, i) in &timeline {
            if is_req {
                continue;
            }
            let item = &servers[i];
            if item.rec.kind() != FrameKind::Notification
                || item.rec.method() != Some(ACKNOWLEDGED_METHOD)
            {
                continue;
            }
            if item
                .stream
                .is_some_and(|st| !listen_streams.contains(&st) && Some(st) != standalone)
            {
                continue;
            }
            let tagged = item.rec.spans().tag.as_ref().map(|(_, id)| id.key());
            let by_tag = tagged.and_then(|key| {
                listen_reqs.iter().copied().find(|r| {
                    !acked.contains(r)
                        && requests[*r].frame.id().map(Id::key).as_deref() == Some(key.as_str())
                })
            });
            let found = by_tag.or_else(|| listen_reqs.iter().copied().find(|r| !acked.contains(r)));
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

        // Roles and the schedule.
        let mut stream_end: HashMap<usize, usize> = HashMap::new(); // stream -> request
        for (r, reply) in replies.iter().enumerate() {
            if let Some(Reply::Stream(st)) = reply {
                stream_end.insert(*st, r);
            }
        }
        let mut frame_reply: HashMap<usize, usize> = HashMap::new(); // server item -> request
        for (r, reply) in replies.iter().enumerate() {
            if let Some(Reply::Frame(s)) = reply {
                frame_reply.insert(*s, r);
            }
        }
        let mut events = Vec::with_capacity(timeline.len());
        for &(_, is_req, i) in &timeline {
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
                    classify_loose(&item.rec)
                } else {
                    Role::Skip
                }
            } else if let Some(&r) = frame_reply.get(&i) {
                Role::Answers(r)
            } else if closures.contains(&i) {
                Role::Push
            } else if item.rec.is_response() {
                Role::Skip
            } else {
                classify_loose(&item.rec)
            };
            events.push(Event::Arrived {
                role,
                frame: item.rec.clone(),
            });
        }
        let schedule = Schedule::build(events);

        // Fingerprints and pools, in file order.
        let mut index = Index {
            redact_requests: header.redaction_applied(),
            header,
            pairs: Vec::new(),
            fps: HashMap::new(),
            fp_info: Vec::new(),
            by_method: HashMap::new(),
            listens: Vec::new(),
            corpus: Vec::new(),
            unanswered: Vec::new(),
            schedule,
            volatile,
            warnings,
            highest_live,
        };
        let mut acks: HashMap<usize, Recorded> = ack_of
            .into_iter()
            .map(|(s, r)| (r, servers[s].rec.clone()))
            .collect();
        for (r, item) in requests.into_iter().enumerate() {
            let method: Box<str> = item.frame.method().unwrap_or_default().into();
            let params = index.shaped_params(&method, &item.frame);
            let fp = index.intern(fingerprint(&method, params.as_ref()));
            let corpus = CorpusEntry {
                method: method.clone(),
                text: item.frame.text().into(),
                fp,
                shaped: OnceCell::from(params),
            };
            if item.listen {
                let l = index.listens.len();
                index.listens.push(Listen {
                    key: item.frame.id().map(Id::key).unwrap_or_default(),
                    ack: acks.remove(&r),
                    fp,
                    anchor: r,
                });
                index.fp_info[fp].listens.push(l);
                index.corpus.push(corpus);
                continue;
            }
            let answer = match replies[r] {
                Some(Reply::Frame(s)) => Answer::Frame(servers[s].rec.clone()),
                Some(Reply::Stream(st)) => Answer::Stream(
                    streams[st]
                        .frames
                        .iter()
                        .map(|&s| servers[s].rec.clone())
                        .collect(),
                ),
                None => {
                    index.fp_info[fp].unanswered = true;
                    index.unanswered.push(corpus);
                    continue;
                }
            };
            let retry = is_mrtr_retry(corpus.shaped.get().and_then(Option::as_ref));
            let p = index.pairs.len();
            if !retry {
                index.by_method.entry(method.clone()).or_default().push(p);
            }
            index.pairs.push(Pair {
                method,
                fp,
                retry,
                answer,
                anchor: r,
            });
            index.fp_info[fp].responses.push(p);
            index.corpus.push(corpus);
        }
        index.read_task_polls();
        // The shaped params of answered requests are parsed again on a miss; keeping every one
        // would double the index's memory for nothing on a session that never misses.
        for entry in index.corpus.iter_mut().chain(index.unanswered.iter_mut()) {
            entry.shaped = OnceCell::new();
        }
        Ok(index)
    }

    /// A recorded request's params with declared-volatile fields dropped.
    pub fn shaped_params(&self, method: &str, frame: &Frame) -> Option<Value> {
        let mut params = frame
            .value()
            .get_mut("params")
            .map(Value::take)
            .filter(|p| !p.is_null());
        if let Some(p) = params.as_mut() {
            self.volatile.drop_from(method, p);
        }
        params
    }

    fn intern(&mut self, fp: String) -> usize {
        if let Some(&id) = self.fps.get(fp.as_str()) {
            return id;
        }
        let id = self.fp_info.len();
        self.fp_info.push(FpInfo::default());
        self.fps.insert(fp.into_boxed_str(), id);
        id
    }

    /// Reads, for every `tasks/get` pool, where the recording left the task.
    fn read_task_polls(&mut self) {
        for fp in 0..self.fp_info.len() {
            let info = &self.fp_info[fp];
            let (Some(&first), Some(&last)) = (info.responses.first(), info.responses.last())
            else {
                continue;
            };
            if &*self.pairs[first].method != TASKS_GET {
                continue;
            }
            let corpus = self.corpus.iter().find(|c| c.fp == fp);
            let task_id = corpus
                .and_then(|c| c.shaped.get())
                .and_then(Option::as_ref)
                .and_then(|p| p.get("taskId"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let status = self.pairs[last]
                .answer
                .response()
                .and_then(|r| serde_json::from_str::<Value>(r.text()).ok())
                .and_then(|v| {
                    v.pointer("/result/status")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            if let (Some(task_id), Some(status)) = (task_id, status) {
                let terminal = matches!(status.as_str(), "completed" | "failed" | "cancelled");
                let polls = info.responses.len();
                self.fp_info[fp].task = Some(TaskPolls {
                    task_id,
                    status,
                    terminal,
                    polls,
                    last,
                });
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
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        methods.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        methods
    }
}

impl CorpusEntry {
    /// This recorded request's params, declared-volatile fields dropped.
    pub fn params(&self, volatile: &VolatileSet) -> Option<&Value> {
        self.shaped
            .get_or_init(|| {
                let frame = Frame::parse(&self.text)?;
                let mut params = frame
                    .value()
                    .get_mut("params")
                    .map(Value::take)
                    .filter(|p| !p.is_null());
                if let Some(p) = params.as_mut() {
                    volatile.drop_from(&self.method, p);
                }
                params
            })
            .as_ref()
    }
}

/// Takes the oldest request waiting under `key`, preferring a listen when `listen_first` (a
/// closure or a subscription stream) and an ordinary request otherwise.
fn take_waiting(
    waiting: &mut HashMap<String, VecDeque<usize>>,
    key: &str,
    requests: &[RequestItem],
    listen_first: bool,
) -> Option<usize> {
    let queue = waiting.get_mut(key)?;
    let at = queue
        .iter()
        .position(|&r| requests[r].listen == listen_first)
        .or(if queue.is_empty() { None } else { Some(0) })?;
    queue.remove(at)
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
fn classify_loose(rec: &Recorded) -> Role {
    match rec.kind() {
        FrameKind::Request => Role::ServerRequest,
        FrameKind::Notification => Role::Push,
        FrameKind::Response | FrameKind::ErrorResponse => {
            if rec.spans().tag.is_some() {
                Role::Push
            } else {
                Role::Skip
            }
        }
        FrameKind::Unclassified => Role::Skip,
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
