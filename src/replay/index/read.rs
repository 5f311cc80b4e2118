//! Phase 1 of building an index: the cassette's entries read once, in file order, every frame
//! reduced to what the later phases (in `build`) need: a request to its fingerprint and shape, a
//! server frame to its recording and id. Nothing here pairs or orders anything.
//!
//! Reading is two steps: a [`Reducer`] does the costly part of each entry, alone (on a large
//! cassette, several reducers on as many threads), and [`Recording::fold`] takes the reduced
//! entries in file order and numbers what must be numbered once: fingerprints, shapes, methods.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{IdKey, Recorded};
use crate::cassette::consistency::Observed;
use crate::cassette::{CassetteError, Dir, Entry, EntryKind, unknown_entry_warning};
use crate::json::Node;
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::protocol::LISTEN_METHOD;
use crate::replay::fingerprint::{
    MRTR_FIELDS, TASKS_GET, TOOLS_CALL, fingerprint, fingerprint_node, is_mrtr_retry,
};
use crate::replay::shape::{Shape, ShapeRef, Shapes};
use crate::replay::volatile::VolatileSet;
use crate::replay::wire::params_text;
use crate::replay::{LookupMap, LookupSet};

/// Where a frame sits in wire order: `t`, entry index, position within the entry, and a tie-break
/// that only ever moves a request just ahead of its own answer.
pub(super) type WireKey = (u64, u32, i32, i8);

/// A recorded request, reduced while reading to what the index keeps: its text is not.
pub(super) struct RequestItem {
    pub(super) t: u64,
    pub(super) entry: u32,
    /// The cassette line it was read from (what an unused-recording report names).
    pub(super) line: u32,
    pub(super) key: IdKey,
    pub(super) listen: bool,
    /// The method's number: its name is `Recording::methods[method]`.
    pub(super) method: u32,
    pub(super) fp: u32,
    pub(super) retry: bool,
    pub(super) shape: ShapeRef,
    /// The request's `_meta.progressToken` as JSON text, when it asked for progress. Boxed
    /// twice: eight bytes on every request rather than sixteen, for a token few carry (a
    /// request is 56 bytes, and a large cassette holds one a line).
    #[expect(
        clippy::box_collection,
        reason = "a thin pointer: a `String`'s three words would grow every request"
    )]
    pub(super) progress: Option<Box<String>>,
}

impl RequestItem {
    /// Where the request sits in wire order as the file gives it (see `timeline::wire_order`).
    pub(super) fn wire_key(&self) -> WireKey {
        (self.t, self.entry, -1, 0)
    }
}

/// A recorded server frame (on its own or inside a stream), with what pairing and ordering read.
pub(super) struct ServerItem {
    pub(super) t: u64,
    pub(super) entry: u32,
    pub(super) within: i32,
    pub(super) kind: FrameKind,
    pub(super) ack: bool,
    /// The id of a response. One of these is kept per recorded server frame, so every byte of
    /// it counts on a large cassette: the tag of a tagged frame, which few are, is kept aside
    /// (see [`Recording::tag`]).
    pub(super) id: Option<IdKey>,
    pub(super) tagged: bool,
    pub(super) stream: Option<u32>,
    /// The entry's recorded `http.status`, when the HTTP status was not the default one.
    pub(super) status: Option<u16>,
}

impl ServerItem {
    pub(super) fn is_response(&self) -> bool {
        self.kind.is_response()
    }

    /// Where the frame sits in wire order.
    pub(super) fn wire_key(&self) -> WireKey {
        (self.t, self.entry, self.within, 0)
    }
}

/// A server frame as a reducer leaves it: its item, its tag (kept aside by the fold) and its
/// recording.
pub(super) struct ServerFrame {
    item: ServerItem,
    tag: Option<IdKey>,
    rec: Recorded,
}

impl ServerFrame {
    /// Frame `frame` read: its item, its tag and its recording (which the recording keeps
    /// beside the item: see [`Recording::recs`]).
    fn read(t: u64, entry: u32, within: i32, frame: &Frame, stream: Option<u32>) -> ServerFrame {
        let rec = Recorded::from_frame(frame);
        let tag = rec.spans().tag().map(|(_, id)| IdKey::of(id));
        let item = ServerItem {
            t,
            entry,
            within,
            kind: rec.kind(),
            ack: rec.is_ack(),
            id: frame.id().filter(|id| **id != Id::Null).map(IdKey::of),
            tagged: tag.is_some(),
            stream,
            status: None,
        };
        ServerFrame { item, tag, rec }
    }
}

/// A server-to-client `chunks` entry: the server frames it holds, by index.
pub(super) struct StreamItem {
    /// The key of the request it answers (as pairing files requests); `None` for the
    /// standalone GET stream.
    pub(super) key: Option<IdKey>,
    pub(super) frames: Vec<usize>,
}

/// A request, server frame or stream, in file order: one per frame of the cassette, so its index
/// is narrowed to four bytes (see [`narrow`]) and the whole to eight.
pub(super) enum InOrder {
    Request(u32),
    Server(u32),
    Stream(u32),
}

/// Phase 1's product: every frame of the cassette, reduced to what the later phases read.
#[derive(Default)]
pub(super) struct Recording {
    pub(super) requests: Vec<RequestItem>,
    pub(super) servers: Vec<ServerItem>,
    /// Each server frame's recording, by the frame's index in `servers`: taken by whatever ends
    /// up holding it (an answer, a listen, the schedule). A list of its own, so that the
    /// frames can be taken while the items are read.
    pub(super) recs: Vec<Option<Recorded>>,
    pub(super) streams: Vec<StreamItem>,
    /// The tags of the tagged server frames, by index in `servers` (see [`Recording::tag`]).
    tags: LookupMap<u32, IdKey>,
    /// Requests, server frames and streams in file order (what pairing walks).
    pub(super) order: Vec<InOrder>,
    /// Every method name, once, numbered in order of first sight: phase 5 files pairs by number
    /// and looks each name up once, not once a request.
    pub(super) methods: Vec<Arc<str>>,
    pub(super) fps: Interner,
    /// How the recorded requests were written.
    pub(super) shapes: Shapes,
    /// The task id of each `tasks/get` fingerprint (its first recording's).
    pub(super) task_ids: LookupMap<usize, String>,
    /// What the header must agree with.
    pub(super) observed: Observed,
    pub(super) warnings: Vec<String>,
    /// The highest `live-N` id (0 when none).
    pub(super) highest_live: u64,
    /// How many standalone GET streams (`via:"get"`) were recorded.
    pub(super) standalone_streams: usize,
    /// The client's answers to the server's own requests, in file order.
    pub(super) client_answers: Vec<ClientAnswer>,
}

/// A response the client sent: its answer to a request from the server.
pub(super) struct ClientAnswer {
    pub(super) t: u64,
    pub(super) entry: u32,
    pub(super) key: IdKey,
    pub(super) text: Box<str>,
}

/// One entry reduced by a [`Reducer`] to what phase 1 keeps of it, not yet numbered among the
/// recording's frames nor interned: [`Recording::fold`] does that, in file order.
pub(super) struct Reduced {
    highest_live: u64,
    what: What,
}

enum What {
    /// A client request, but for what the fold numbers: its method (as the reducer numbered
    /// it), its shape (the same) and its fingerprint (not yet interned).
    Request(RequestParts),
    ClientAnswer(ClientAnswer),
    Server(ServerFrame),
    /// A `chunks` entry: its direction, how it was opened, the request it answers, and its
    /// frames (server-to-client only).
    Stream {
        dir: Option<Dir>,
        via_get: bool,
        id: Option<Id>,
        frames: Vec<ServerFrame>,
    },
    Unknown(String),
    Nothing,
}

/// Reduces entries, one at a time, to what phase 1 keeps of them: the costly half of reading,
/// which needs nothing from other entries but the shapes and method names learnt so far, so
/// several reducers can each take part of a cassette (see [`Recording::read_parallel`]).
pub(super) struct Reducer<'v> {
    volatile: &'v VolatileSet,
    /// Shapes learnt by this reducer, numbered its own way until the fold adopts them.
    shapes: Shapes,
    /// Method names, numbered in order of first sight: by name, and in that order.
    methods: LookupMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    /// How many of `shapes` and of `methods` the fold has been given.
    given: (usize, usize),
    fp_hasher: FpHasher,
    /// The fingerprints of the requests reduced since the fold was last told, end to end: one
    /// string a batch, not an allocation a request (see [`RequestParts::fp`]).
    fps: String,
}

/// What a [`Reducer`] learnt since it last said: shapes and method names, in the order it
/// numbered them. The fold adopts them before the entries reduced since, which may name them.
#[derive(Default)]
pub(super) struct Learnt {
    shapes: Vec<Shape>,
    methods: Vec<Box<str>>,
    /// The fingerprint texts of the requests reduced since (see [`RequestParts::fp`]).
    fps: String,
}

/// A request as a [`Reducer`] leaves it (see [`What::Request`]).
pub(super) struct RequestParts {
    t: u64,
    entry: u32,
    line: u32,
    key: IdKey,
    listen: bool,
    method: u32,
    /// Where the fingerprint stands in the text of the [`Learnt`] that comes with it.
    fp: std::ops::Range<usize>,
    /// The fingerprint's hash, by the recording's [`FpTable`].
    fp_hash: u64,
    task_id: Option<String>,
    retry: bool,
    shape: ShapeRef,
    /// As [`RequestItem::progress`] keeps it, made here rather than on the folding thread.
    #[expect(
        clippy::box_collection,
        reason = "the thin pointer `RequestItem::progress` keeps"
    )]
    progress: Option<Box<String>>,
}

impl<'v> Reducer<'v> {
    /// A reducer whose fingerprint hashes are those of `fp_hasher` (the recording's table's).
    pub(super) fn new(volatile: &'v VolatileSet, fp_hasher: FpHasher) -> Reducer<'v> {
        Reducer {
            volatile,
            fp_hasher,
            shapes: Shapes::default(),
            methods: LookupMap::default(),
            names: Vec::new(),
            given: (0, 0),
            fps: String::new(),
        }
    }

    /// Entry number `n`, reduced.
    pub(super) fn reduce(&mut self, n: usize, entry: Entry) -> Reduced {
        let status = http_status(&entry);
        let Entry {
            t, dir, kind, line, ..
        } = entry;
        let highest_live = highest_live_in(&kind);
        let what = match (dir, kind) {
            (Some(Dir::C2s), EntryKind::Frame(frame))
                if frame.kind() == FrameKind::Request && frame.id() != Some(&Id::Null) =>
            {
                self.request((t, n, line), &frame)
            }
            (Some(Dir::C2s), EntryKind::Frame(frame)) if frame.kind().is_response() => {
                match frame.id() {
                    Some(id) => What::ClientAnswer(ClientAnswer {
                        t,
                        entry: narrow(n),
                        key: IdKey::of(id),
                        text: frame.text().into(),
                    }),
                    None => What::Nothing,
                }
            }
            (Some(Dir::S2c), EntryKind::Frame(frame)) => {
                let mut server = ServerFrame::read(t, narrow(n), -1, &frame, None);
                server.item.status = status;
                What::Server(server)
            }
            (
                dir,
                EntryKind::Chunks {
                    id,
                    via_get,
                    chunks,
                },
            ) => {
                let frames = if dir == Some(Dir::S2c) {
                    chunks
                        .iter()
                        .enumerate()
                        .map(|(j, chunk)| {
                            let within = i32::try_from(j).unwrap_or(i32::MAX);
                            ServerFrame::read(chunk.t, narrow(n), within, &chunk.frame, None)
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                What::Stream {
                    dir,
                    via_get,
                    id,
                    frames,
                }
            }
            (_, EntryKind::Unknown(kind)) => What::Unknown(kind),
            _ => What::Nothing,
        };
        Reduced { highest_live, what }
    }

    /// What this reducer learnt since the last call.
    pub(super) fn learnt(&mut self) -> Learnt {
        let (shapes, methods) = self.given;
        let fps = std::mem::take(&mut self.fps);
        if self.shapes.count() == shapes && self.methods.len() == methods {
            return Learnt {
                fps,
                ..Learnt::default()
            };
        }
        let learnt = Learnt {
            shapes: self.shapes.since(shapes),
            methods: self.names.get(methods..).unwrap_or_default().to_vec(),
            fps,
        };
        self.given = (self.shapes.count(), self.methods.len());
        learnt
    }

    /// A client request (with a non-null id): time `t`, entry `n`, read from cassette `line`.
    fn request(&mut self, (t, n, line): (u64, usize, u64), frame: &Frame) -> What {
        let volatile = self.volatile;
        let method = frame.method().unwrap_or_default();
        let next = u32::try_from(self.methods.len()).unwrap_or(u32::MAX);
        let number = match self.methods.get(method) {
            Some(&n) => n,
            None => {
                self.methods.insert(method.into(), next);
                self.names.push(method.into());
                next
            }
        };
        let listen = method == LISTEN_METHOD;
        // A `tools/call` the scanner reads is fingerprinted by it, with its shape, in one pass:
        // the scanner declines MRTR retries, so such a call is no retry and no task poll.
        let scanned = (method == TOOLS_CALL && !volatile.applies_to(method))
            .then(|| self.shapes.fingerprint_and_learn(frame))
            .flatten();
        let start = self.fps.len();
        let (retry, task_id, shape) = match scanned {
            Some((fp, shape)) => {
                self.fps.push_str(fp);
                (false, None, shape)
            }
            None => {
                let (fp, retry, task_id) = read_request(volatile, method, frame);
                let shape = if listen || volatile.applies_to(method) {
                    None
                } else {
                    self.shapes.learn(frame.text(), &fp)
                };
                self.fps.push_str(&fp);
                (retry, task_id, shape)
            }
        };
        let fp = start..self.fps.len();
        What::Request(RequestParts {
            t,
            entry: narrow(n),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            key: frame.id().map_or_else(|| IdKey::from_text(""), IdKey::of),
            listen,
            method: number,
            fp_hash: self
                .fp_hasher
                .hash(self.fps.get(fp.clone()).unwrap_or_default()),
            fp,
            task_id,
            retry,
            shape: ShapeRef::from(shape),
            progress: crate::replay::progress::request_token(frame.text())
                .map(|p| Box::new(p.into_string())),
        })
    }
}

/// What folding needs to remember between entries, apart from the recording itself.
#[derive(Default)]
pub(super) struct Folding {
    /// The recording's number of every method name.
    numbers: LookupMap<Arc<str>, u32>,
    warned_types: LookupSet<String>,
    /// Per reducer, its shape and method numbers as the recording has them.
    shapes: Vec<Vec<ShapeRef>>,
    methods: Vec<Vec<u32>>,
    /// The fingerprint texts of the entries being folded (what their reducer learnt with them).
    fps: String,
}

impl Folding {
    /// Takes in what reducer `worker` learnt; new method names join `methods`.
    fn adopt(
        &mut self,
        worker: usize,
        learnt: Learnt,
        shapes: &mut Shapes,
        methods: &mut Vec<Arc<str>>,
    ) {
        if self.shapes.len() <= worker {
            self.shapes.resize_with(worker + 1, Vec::new);
            self.methods.resize_with(worker + 1, Vec::new);
        }
        for shape in &learnt.shapes {
            self.shapes[worker].push(ShapeRef::from(shapes.adopt(shape)));
        }
        for name in learnt.methods {
            let number = match self.numbers.get(&*name) {
                Some(&known) => known,
                None => {
                    let method: Arc<str> = Arc::from(name);
                    let number = narrow(methods.len());
                    methods.push(Arc::clone(&method));
                    self.numbers.insert(method, number);
                    number
                }
            };
            self.methods[worker].push(number);
        }
        self.fps = learnt.fps;
    }
}

impl Recording {
    /// Phase 1: reads every entry once, in file order.
    pub(super) fn read(
        entries: impl IntoIterator<Item = Result<Entry, CassetteError>>,
        volatile: &VolatileSet,
        path: &Path,
    ) -> Result<Recording, CassetteError> {
        let mut rec = Recording::default();
        let mut folding = Folding::default();
        let mut reducer = Reducer::new(volatile, rec.fps.fps.hasher());
        for (n, entry) in entries.into_iter().enumerate() {
            let reduced = reducer.reduce(n, entry?);
            rec.fold(&mut folding, 0, reducer.learnt(), [reduced], path);
        }
        Ok(rec.finish())
    }

    /// [`Recording::read`] with the entries parsed and reduced on `workers` threads while this
    /// one reads the lines and folds, in file order: the same recording.
    pub(super) fn read_parallel<R: std::io::Read>(
        reader: crate::cassette::Reader<R>,
        volatile: &VolatileSet,
        path: &Path,
        workers: usize,
    ) -> Result<Recording, CassetteError> {
        let mut rec = Recording::default();
        let mut folding = Folding::default();
        let fp_hasher = rec.fps.fps.hasher();
        crate::cassette::map_entries(
            reader,
            workers,
            || Reducer::new(volatile, fp_hasher.clone()),
            Reducer::reduce,
            Reducer::learnt,
            |worker, items, learnt| {
                rec.fold(&mut folding, worker, learnt, items.drain(..), path);
                std::ops::ControlFlow::Continue(())
            },
        )?;
        Ok(rec.finish())
    }

    /// Takes reduced entries, in file order, from reducer `worker`, and what it learnt before
    /// reducing them.
    fn fold(
        &mut self,
        folding: &mut Folding,
        worker: usize,
        learnt: Learnt,
        items: impl IntoIterator<Item = Reduced>,
        path: &Path,
    ) {
        folding.adopt(worker, learnt, &mut self.shapes, &mut self.methods);
        for Reduced { highest_live, what } in items {
            self.highest_live = self.highest_live.max(highest_live);
            match what {
                What::Request(parts) => {
                    let method = folding.methods[worker][parts.method as usize];
                    let name = &*self.methods[method as usize];
                    let shape = parts
                        .shape
                        .get()
                        .and_then(|s| folding.shapes[worker].get(s as usize).copied())
                        .unwrap_or(ShapeRef::NONE);
                    self.observed.initialize |= name == "initialize";
                    let is_tasks_get = name == TASKS_GET;
                    let fp = self
                        .fps
                        .intern(folding.fps.get(parts.fp).unwrap_or_default(), parts.fp_hash);
                    if is_tasks_get {
                        if let Some(id) = parts.task_id {
                            self.task_ids.entry(fp).or_insert(id);
                        }
                    }
                    self.order
                        .push(InOrder::Request(narrow(self.requests.len())));
                    self.requests.push(RequestItem {
                        t: parts.t,
                        entry: parts.entry,
                        line: parts.line,
                        key: parts.key,
                        listen: parts.listen,
                        method,
                        fp: fp as u32,
                        retry: parts.retry,
                        shape,
                        progress: parts.progress,
                    });
                }
                What::ClientAnswer(answer) => self.client_answers.push(answer),
                What::Server(server) => {
                    self.order.push(InOrder::Server(narrow(self.servers.len())));
                    self.push_server(server);
                }
                What::Stream {
                    dir,
                    via_get,
                    id,
                    frames,
                } => {
                    self.observed.chunks(via_get);
                    self.standalone_streams += usize::from(via_get && dir == Some(Dir::S2c));
                    if dir == Some(Dir::S2c) {
                        self.stream(if via_get { None } else { id }, frames);
                    }
                }
                What::Unknown(kind) => {
                    if folding.warned_types.insert(kind.clone()) {
                        self.warnings.push(unknown_entry_warning(&kind, path));
                    }
                }
                What::Nothing => {}
            }
        }
    }

    /// The recording once every entry is folded.
    fn finish(mut self) -> Recording {
        // The lists grew by doubling; what follows allocates the index beside them, so give the
        // slack back first (a large cassette's peak memory is set here).
        self.servers.shrink_to_fit();
        self.recs.shrink_to_fit();
        self.requests.shrink_to_fit();
        self.order.shrink_to_fit();
        self.fps.texts.shrink_to_fit();
        self.shapes.finish();
        self
    }

    /// A server frame, its tag kept aside.
    fn push_server(&mut self, ServerFrame { item, tag, rec }: ServerFrame) {
        if let Some(tag) = tag {
            self.tags.insert(narrow(self.servers.len()), tag);
        }
        self.servers.push(item);
        self.recs.push(Some(rec));
    }

    /// The tag of server frame `s` (see [`ServerItem::tagged`]). Pairing asks for every
    /// response's: the item's flag answers for the untagged ones without hashing.
    pub(super) fn tag(&self, s: usize) -> Option<&IdKey> {
        match self.servers.get(s) {
            Some(item) if item.tagged => self.tags.get(&narrow(s)),
            _ => None,
        }
    }

    /// A server-to-client stream with its frames; `id` is `None` for the standalone GET stream.
    fn stream(&mut self, id: Option<Id>, frames: Vec<ServerFrame>) {
        let s = self.streams.len();
        let mut at = Vec::with_capacity(frames.len());
        for mut server in frames {
            at.push(self.servers.len());
            server.item.stream = Some(narrow(s));
            self.push_server(server);
        }
        self.order.push(InOrder::Stream(narrow(s)));
        self.streams.push(StreamItem {
            key: id.as_ref().map(IdKey::of),
            frames: at,
        });
    }
}

/// An index into one of phase 1's lists as the items store it: four bytes, not eight, on
/// something kept per recorded frame. No cassette holds four billion frames (each is a line of
/// its own), so the saturation is never reached.
pub(super) fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Fingerprint texts, each stored once and numbered in order of first sight.
#[derive(Default)]
pub(super) struct Interner {
    pub(super) fps: FpTable,
    pub(super) texts: FpTexts,
}

impl Interner {
    /// The number of `fp`, whose hash (by the table's [`FpHasher`]) is `hash`, added when new.
    fn intern(&mut self, fp: &str, hash: u64) -> usize {
        let texts = &mut self.texts;
        let entry = self.fps.table.entry(
            hash,
            |&(h, n)| h == hash && texts.get(n as usize) == Some(fp),
            |&(h, _)| h,
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(known) => known.get().1 as usize,
            hashbrown::hash_table::Entry::Vacant(new) => {
                let n = texts.push(fp);
                new.insert((hash, narrow(n)));
                n
            }
        }
    }
}

/// Fingerprint texts end to end in one string, numbered in order of first sight: one allocation
/// for all of them, not one each (docs/benchmarks.md: on a 200,000-call cassette, 200,000 fewer
/// allocations on the reading threads and several MB less memory to fault in).
#[derive(Debug, Default)]
pub struct FpTexts {
    text: String,
    /// Where each text ends in `text`, by number.
    ends: Vec<usize>,
}

impl FpTexts {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Fingerprint number `n`.
    pub fn get(&self, n: usize) -> Option<&str> {
        let end = *self.ends.get(n)?;
        let start = match n {
            0 => 0,
            _ => self.ends[n - 1],
        };
        self.text.get(start..end)
    }

    /// Adds `fp`, returning its number.
    fn push(&mut self, fp: &str) -> usize {
        self.text.push_str(fp);
        self.ends.push(self.text.len());
        self.ends.len() - 1
    }

    fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

impl std::ops::Index<usize> for FpTexts {
    type Output = str;

    /// Fingerprint number `n`, which must exist (as with a list's index).
    fn index(&self, n: usize) -> &str {
        self.get(n)
            .unwrap_or_else(|| panic!("no fingerprint number {n}"))
    }
}

/// Fingerprint numbers by text, the texts being kept elsewhere (`Index::fp_text`). Each entry
/// holds its fingerprint's hash, so the table grows without reading a text again (rehashing
/// 200,000 fingerprints by text was a sixth of the reading thread's work), and the hashes are
/// computed where the requests are reduced, on the workers.
#[derive(Debug, Default)]
pub struct FpTable {
    table: hashbrown::HashTable<(u64, u32)>,
    hasher: FpHasher,
}

/// How fingerprints are hashed for an [`FpTable`]: one per table, copied to the threads that
/// hash for it, so that every hash it is given is one it would compute itself.
#[derive(Debug, Default, Clone)]
pub(super) struct FpHasher(foldhash::fast::RandomState);

impl FpHasher {
    pub(super) fn hash(&self, fp: &str) -> u64 {
        use std::hash::BuildHasher;
        self.0.hash_one(fp)
    }
}

impl FpTable {
    /// The hasher this table files fingerprints with, for another thread.
    pub(super) fn hasher(&self) -> FpHasher {
        self.hasher.clone()
    }

    /// The number of fingerprint `fp`, whose texts are `texts`.
    pub fn get(&self, fp: &str, texts: &FpTexts) -> Option<usize> {
        let hash = self.hasher.hash(fp);
        self.table
            .find(hash, |&(h, n)| {
                h == hash && texts.get(n as usize) == Some(fp)
            })
            .map(|&(_, n)| n as usize)
    }

    pub fn shrink_to_fit(&mut self) {
        self.table.shrink_to_fit(|&(h, _)| h);
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

/// An entry's `http.status` (`{"http":{"status":N}}`), when it holds a valid HTTP status code.
fn http_status(entry: &Entry) -> Option<u16> {
    let http = entry.object().get("http")?;
    let value: Value = serde_json::from_str(http).ok()?;
    value
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..=599).contains(s))
}

/// The highest `N` of the `live-N` ids an entry carries, 0 when none.
fn highest_live_in(kind: &EntryKind) -> u64 {
    match kind {
        EntryKind::Frame(f) => live_number(f.id()),
        EntryKind::Chunks { id, chunks, .. } => chunks
            .iter()
            .map(|c| live_number(c.frame.id()))
            .fold(live_number(id.as_ref()), u64::max),
        _ => 0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What phase 1 reads from a recorded `tools/call` by the scanner, against the parser.
    fn both(text: &str) -> (Option<String>, String, bool) {
        let frame = Frame::parse(text).expect("a frame");
        let mut shapes = Shapes::default();
        let fast = shapes
            .fingerprint_and_learn(&frame)
            .map(|(fp, _)| fp.to_owned());
        let (slow, retry, _) = read_request(&VolatileSet::default(), TOOLS_CALL, &frame);
        (fast, slow, retry)
    }

    /// Phase 1 keeps one of each per recorded frame: on a large cassette every byte of them is
    /// written, and faulted in, once a line.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn phase_one_items_stay_small() {
        assert_eq!(std::mem::size_of::<RequestItem>(), 56);
        assert_eq!(std::mem::size_of::<ServerItem>(), 48);
    }

    #[test]
    fn fingerprint_texts_are_kept_end_to_end_and_interned_once() {
        let mut interner = Interner::default();
        let hasher = interner.fps.hasher();
        let texts = [
            "tools/call\u{0}a\u{0}{}",
            "",
            "ping",
            "tools/call\u{0}a\u{0}{}",
            "",
        ];
        let numbers: Vec<usize> = texts
            .iter()
            .map(|t| interner.intern(t, hasher.hash(t)))
            .collect();
        assert_eq!(numbers, [0, 1, 2, 0, 1]);
        let kept = &interner.texts;
        assert_eq!(kept.len(), 3);
        assert_eq!(
            (0..4).map(|n| kept.get(n)).collect::<Vec<_>>(),
            [Some(texts[0]), Some(""), Some("ping"), None]
        );
        assert_eq!(&kept[2], "ping");
        assert_eq!(interner.fps.get("ping", kept), Some(2));
        assert_eq!(interner.fps.get("", kept), Some(1));
        assert_eq!(interner.fps.get("pong", kept), None);
    }

    #[test]
    fn retries_and_odd_params_are_left_to_the_parser() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{},"requestState":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{"name":"a","arguments":{}},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
        ] {
            let (fast, _, _) = both(text);
            assert_eq!(fast, None, "{text}");
        }
    }

    proptest! {
        #[test]
        fn scanned_tools_calls_fingerprint_as_parsed(
            args in proptest::collection::btree_map(r#"[a-z_"\\é]{0,4}"#, proptest::prelude::any::<i32>(), 0..4),
            name in r#"[a-z/_"\\-]{0,8}"#,
            extra in proptest::option::of("[a-z_]{1,5}"),
            spaced in proptest::prelude::any::<bool>(),
        ) {
            let mut params = serde_json::json!({"name": name, "arguments": args});
            if let Some(k) = extra {
                params[k] = serde_json::json!({"b": [1, 2.50, "x"]});
            }
            let body = if spaced {
                serde_json::to_string_pretty(&params).unwrap().replace('\n', " ")
            } else {
                params.to_string()
            };
            let text = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{body}}}"#);
            let (fast, slow, retry) = both(&text);
            if let Some(fast) = fast {
                prop_assert_eq!(fast, slow);
                prop_assert!(!retry);
            }
        }
    }
}
