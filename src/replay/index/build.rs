//! Building an [`Index`] from a cassette, in phases. Each phase is a function that produces what
//! the next one reads, and drops what no later phase needs (on a large cassette the peak memory is
//! set here):
//!
//! 1. [`Recording::read`] (in `read`) reads the entries once, reducing every frame to what the later phases
//!    need (a request to its fingerprint and shape, a server frame to its recording and id), and
//!    notes what the header must agree with;
//! 2. [`Replies::pair`] (in `pairing`) pairs each answer with the oldest request waiting under
//!    its id, in file order;
//! 3. [`wire_order`] (in `timeline`) sorts every frame into wire order and pairs acknowledgments
//!    with listens;
//! 4. [`events`] gives every server frame its role, for [`Schedule::build`];
//! 5. [`assemble`] moves the answers into pairs and listens, pools them by fingerprint and by
//!    method, and reads where each recorded task was left.
//!
//! On a large cassette phases 2 to 5 use a second thread too. What phase 3 reads but pairing
//! does not decide (the timeline as the file orders it, see `Placed`) is built beside phase 2,
//! and mended after it for the few requests written after their answers. Phases 4 and 5 want
//! different frames (the schedule's are never answers), so they run side by side: the schedule
//! is planned by frame number on the second thread, then the catalogue built there, while the
//! pairs are built here; the schedule's frames are handed over after.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::catalogue::CatalogueBuilder;
use super::pairing::{Replies, Reply};
use super::read::{ClientAnswer, FpTexts, Recording, RequestItem, ServerItem, StreamItem};
use super::timeline::{Acks, Placed, Timed, answered_early, wire_order};
use super::{
    Answer, Catalogue, FpInfo, FpTable, IdKey, Index, IndexError, Listen, Pair, PairExtra,
    Recorded, TaskPolls,
};
use crate::cassette::consistency::contradictions;
use crate::cassette::{CassetteError, Entry, Header};
use crate::jsonrpc::FrameKind;
use crate::replay::LookupMap;
use crate::replay::recorded::Ask;
use crate::replay::schedule::{Event, Role, Schedule};
use crate::replay::shape::Shapes;
use crate::replay::volatile::VolatileSet;

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
        let recording = Recording::read(entries, &volatile, path)?;
        Ok(Index::from_recording(header, recording, volatile, false))
    }

    /// [`Index::build`] from a reader, its entries parsed and reduced on `workers` threads (one
    /// means none: the plain way). The same index: a large cassette is ready sooner.
    pub fn build_parallel<R: std::io::Read>(
        header: Header,
        reader: crate::cassette::Reader<R>,
        invocation_volatile: &[String],
        path: &Path,
        workers: usize,
    ) -> Result<Index, IndexError> {
        if workers <= 1 {
            return Index::build(header, reader, invocation_volatile, path);
        }
        let volatile = VolatileSet::build(header.volatile().as_ref(), invocation_volatile)?;
        let recording = Recording::read_parallel(reader, &volatile, path, workers)?;
        Ok(Index::from_recording(header, recording, volatile, true))
    }

    /// [`Index::build`] from a cassette file, on as many threads as its size is worth (see
    /// [`parse_workers`]).
    pub fn build_from_file(
        header: Header,
        reader: crate::cassette::Reader<std::fs::File>,
        invocation_volatile: &[String],
        path: &Path,
    ) -> Result<Index, IndexError> {
        let workers = reader.file_len().map_or(1, parse_workers);
        Index::build_parallel(header, reader, invocation_volatile, path, workers)
    }

    /// Phases 2 to 5, from what phase 1 read; with `parallel`, on two threads (see the module's
    /// documentation).
    fn from_recording(
        header: Header,
        mut recording: Recording,
        volatile: VolatileSet,
        parallel: bool,
    ) -> Index {
        let mut warnings = std::mem::take(&mut recording.warnings);
        warnings.extend(
            contradictions(&header, &recording.observed)
                .into_iter()
                .map(|c| c.message.to_owned()),
        );
        let order = std::mem::take(&mut recording.order);
        let mut recs = std::mem::take(&mut recording.recs);
        let rec = &recording;
        // What phases 3 to 5 read that pairing does not decide: the timeline as the file orders
        // it (see `Placed`) and, of each server frame, the third that phases 4 and 5 read (see
        // `Heard`). On a large cassette it is built on a second thread while this one pairs,
        // then finds the requests written after their answers (see `wire_order`) and numbers
        // the server's own requests, which need nothing from the second thread.
        let beside = || {
            let heard: Vec<Heard> = rec.servers.iter().map(Heard::of).collect();
            let fp_info: Vec<FpInfo> = (0..rec.fps.texts.len())
                .map(|_| FpInfo::default())
                .collect();
            (Placed::of(rec), heard, fp_info)
        };
        let here = || {
            let replies = Replies::pair(order, rec);
            let early = answered_early(rec, &replies);
            let asks = number_asks(&rec.servers, &mut recs, &rec.client_answers);
            (replies, early, asks)
        };
        let ((replies, early, asks), (placed, heard, fp_info)) =
            side_by_side(parallel, "replay-placing", here, beside);
        let (timeline, acks) = wire_order(&recording, &replies, placed, &early);
        // The rest of each server frame (tens of MB on a large cassette) is handed back first
        // thing on the schedule's thread, which has less to do, while this one allocates the
        // pairs: a large cassette's peak memory is set there, and handing the list back took 2 ms
        // on this thread before them (docs/benchmarks.md).
        let servers = std::sync::Mutex::new(Some(std::mem::take(&mut recording.servers)));
        let streams = std::mem::take(&mut recording.streams);
        let requests = std::mem::take(&mut recording.requests);
        let fp_text = std::mem::take(&mut recording.fps.texts);
        let methods = std::mem::take(&mut recording.methods);
        let taken = Taken::from(recording);
        let kept = Kept {
            header,
            volatile,
            warnings,
            asks,
        };
        let read = Read {
            servers: &heard,
            streams: &streams,
            replies: &replies,
            acks: &acks,
        };
        // Phases 4 and 5 side by side: the schedule's walk places frames by number while the
        // pairs take the answers. They never want the same frame (an answer's role is
        // `Answers` or `InStream`, never scheduled), so the schedule's frames are handed over
        // once both are done, and which runs first does not matter. The catalogue, which reads
        // only the requests and whether each was answered, is built after the walk, beside the
        // pairs too.
        let walk = || {
            // A mutex only to hand the list over: the walk is called once, here or there.
            drop(servers.lock().map(|mut s| s.take()));
            let plan = Schedule::plan(events(read, &timeline));
            (plan, catalogue(&requests, &replies, &methods, &fp_text))
        };
        let (mut index, (plan, catalogue)) = side_by_side(
            parallel,
            "replay-schedule",
            || assemble(taken, (&requests, &methods), fp_info, read, &mut recs, kept),
            walk,
        );
        index.catalogue = catalogue;
        index.fp_text = fp_text;
        index.methods = methods;
        index.schedule = plan.fill(|i| {
            let frame = recs[i].take();
            debug_assert!(
                frame.is_some(),
                "server frame {i} is an answer and scheduled"
            );
            frame
        });
        // The lists the build leaves behind are tens of MB on a large cassette, and handing them
        // back to the system took 4 ms before the first answer (docs/benchmarks.md): they are
        // freed on a thread of their own. Without one (it could not be started) the closure
        // holding them is dropped here, and they with it.
        let leftovers = (requests, recs, heard, timeline, replies, acks, streams);
        if parallel {
            let _ = std::thread::Builder::new()
                .name("replay-freeing".to_owned())
                .spawn(move || drop(leftovers));
        }
        index
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
}

/// `here()` on this thread and `beside()` on a second one named `name`, side by side: both
/// answers. Without `parallel`, or when no thread can be started, `beside` runs here, after.
fn side_by_side<H, B: Send>(
    parallel: bool,
    name: &str,
    here: impl FnOnce() -> H,
    beside: impl Fn() -> B + Sync,
) -> (H, B) {
    if !parallel {
        return (here(), beside());
    }
    std::thread::scope(|scope| {
        let beside = &beside;
        let side = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn_scoped(scope, beside);
        let here = here();
        let side = match side {
            Ok(side) => side
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => beside(),
        };
        (here, side)
    })
}

/// Cassettes smaller than this are read on the calling thread alone: starting threads costs
/// more than it saves on the small cassettes most tests replay (docs/replay.md, "Start-up on a
/// large cassette").
const PARALLEL_FROM_BYTES: u64 = 4 * 1024 * 1024;

/// How many threads to parse a cassette of `bytes` on: one per core (at most four) from
/// [`PARALLEL_FROM_BYTES`] up, else one.
fn parse_workers(bytes: u64) -> usize {
    if bytes < PARALLEL_FROM_BYTES {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

// ---- Phase 4: roles, for the schedule ----

/// Phase 4: the recorded session as [`Schedule::build`] reads it, one event per frame of the
/// `timeline`, each server frame with its role.
fn events<'a>(read: Read<'a>, timeline: &'a [Timed]) -> impl Iterator<Item = Event> + 'a {
    let (servers, streams, replies, acks) = (read.servers, read.streams, read.replies, read.acks);
    // The request each stream or server frame answers, by its index: dense lists, since nearly
    // every server frame answers one (a hash map of them was larger and had to grow).
    let mut stream_end: Vec<Option<usize>> = vec![None; streams.len()];
    let mut frame_reply: Vec<u32> = vec![u32::MAX; servers.len()];
    for (r, reply) in replies.of.iter().enumerate() {
        match reply {
            Some(Reply::Stream(st)) => stream_end[*st] = Some(r),
            Some(Reply::Frame(s)) => frame_reply[*s] = super::read::narrow(r),
            None => {}
        }
    }
    // Handed over one at a time: a list of them would be as long as the file.
    timeline.iter().map(move |&t| {
        let (is_req, i) = t.split();
        if is_req {
            let answered = replies.of[i].is_some() || acks.acked.contains(&i);
            return Event::Sent {
                request: i,
                answered,
            };
        }
        let item = &servers[i];
        let role = if let Some(&r) = acks.of.get(&i) {
            Role::Answers(r)
        } else if let Some(st) = item.stream.map(|st| st as usize) {
            if let Some(r) = stream_end[st] {
                if streams[st].frames.last() == Some(&i) {
                    Role::Answers(r)
                } else {
                    Role::InStream
                }
            } else if replies.listen_streams.contains(&st) || replies.standalone == Some(st) {
                classify_loose(item.kind, item.tagged)
            } else {
                Role::Skip
            }
        } else if frame_reply[i] != u32::MAX {
            Role::Answers(frame_reply[i] as usize)
        } else if replies.closures.contains(&i) {
            Role::Push
        } else if item.is_response() {
            Role::Skip
        } else {
            classify_loose(item.kind, item.tagged)
        };
        Event::Arrived { role, frame: i }
    })
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

/// Numbers every request the server sent (in file order, on the frame itself: wherever the
/// schedule or a streamed answer puts it, the session finds its [`Ask`]) and pairs each with the
/// client's answer: the first response after it under the same id. After it in file order, but
/// for a request inside an SSE stream: the stream's entry is written once the stream ends, after
/// the answers the client POSTed while it was open, so there the answer's time tells.
fn number_asks(
    servers: &[ServerItem],
    recs: &mut [Option<Recorded>],
    client_answers: &[ClientAnswer],
) -> Vec<Ask> {
    let mut answers: LookupMap<&IdKey, VecDeque<usize>> = LookupMap::default();
    for (a, answer) in client_answers.iter().enumerate() {
        answers.entry(&answer.key).or_default().push_back(a);
    }
    let mut asks = Vec::new();
    for (item, recorded) in servers.iter().zip(recs.iter_mut()) {
        let Some(recorded) = recorded.as_mut().filter(|r| r.kind() == FrameKind::Request) else {
            continue;
        };
        let answer = item.id.as_ref().and_then(|key| {
            let queue = answers.get_mut(key)?;
            // Answers before the request belong to an earlier request under the same id.
            let before = |a: &ClientAnswer| match item.stream {
                Some(_) => a.t < item.t,
                None => a.entry < item.entry,
            };
            while queue.front().is_some_and(|&a| before(&client_answers[a])) {
                queue.pop_front();
            }
            queue.pop_front()
        });
        recorded.set_ask(asks.len());
        asks.push(Ask::new(
            recorded,
            answer.map(|a| client_answers[a].text.clone()),
            item.stream.is_some(),
        ));
    }
    asks
}

// ---- Phase 5: pools ----

/// What the index keeps as it was handed to it or built beside the phases.
struct Kept {
    header: Header,
    volatile: VolatileSet,
    warnings: Vec<String>,
    asks: Vec<Ask>,
}

/// What phase 5 takes of the recording for the index (but for the requests and the fingerprint
/// texts and the method names, which the catalogue reads beside it).
struct Taken {
    fps: FpTable,
    shapes: Shapes,
    task_ids: LookupMap<usize, String>,
    highest_live: u64,
    standalone_streams: usize,
}

impl From<Recording> for Taken {
    fn from(rec: Recording) -> Taken {
        Taken {
            fps: rec.fps.fps,
            shapes: rec.shapes,
            task_ids: rec.task_ids,
            highest_live: rec.highest_live,
            standalone_streams: rec.standalone_streams,
        }
    }
}

/// A server frame as phases 4 and 5 read it: a third of the item's size, and on a large
/// cassette there is one a line.
#[derive(Clone, Copy)]
struct Heard {
    t: u64,
    stream: Option<u32>,
    status: Option<u16>,
    kind: FrameKind,
    tagged: bool,
}

impl Heard {
    fn of(item: &ServerItem) -> Heard {
        Heard {
            t: item.t,
            stream: item.stream,
            status: item.status,
            kind: item.kind,
            tagged: item.tagged,
        }
    }

    fn is_response(&self) -> bool {
        self.kind.is_response()
    }
}

/// What phases 4 and 5 both read, side by side.
#[derive(Clone, Copy)]
struct Read<'a> {
    servers: &'a [Heard],
    streams: &'a [StreamItem],
    replies: &'a Replies,
    acks: &'a Acks,
}

/// Phase 5: the index itself, but for its schedule, its catalogue, its fingerprint texts and its
/// method names (which the caller sets: the catalogue is built beside this, from the same
/// `requests` and names). Answers move out of `recs` into pairs and listens, in file order; the
/// pairs are pooled by fingerprint and by method, and every `tasks/get` pool tells where its
/// task was left. `fp_info` holds a default entry per fingerprint.
fn assemble(
    taken: Taken,
    (requests, methods): (&[RequestItem], &[Arc<str>]),
    fp_info: Vec<FpInfo>,
    read: Read<'_>,
    recs: &mut [Option<Recorded>],
    kept: Kept,
) -> Index {
    let Taken {
        fps,
        shapes,
        task_ids,
        highest_live,
        standalone_streams,
    } = taken;
    let Read {
        servers,
        streams,
        replies,
        acks,
    } = read;
    let Kept {
        header,
        volatile,
        warnings,
        asks,
    } = kept;
    let mut index = Index {
        redact_requests: header.redaction_applied(),
        header,
        pairs: Vec::new(),
        methods: Vec::new(),
        fp_info,
        fps,
        fp_text: FpTexts::default(),
        shapes,
        pool: Vec::new(),
        listen_pool: Vec::new(),
        by_method: LookupMap::default(),
        listens: Vec::new(),
        catalogue: Catalogue::default(),
        schedule: Schedule::default(),
        volatile,
        warnings,
        highest_live,
        standalone_streams,
        asks,
    };
    // Nearly every request gets a pair: sized once rather than grown by doubling.
    index.pairs.reserve_exact(requests.len());
    let mut ack_for: LookupMap<usize, usize> = acks.of.iter().map(|(&s, &r)| (r, s)).collect();
    let mut by_method: Vec<Vec<u32>> = vec![Vec::new(); methods.len()];
    let mut pair_fps: Vec<u32> = Vec::new();
    let mut listen_fps: Vec<u32> = Vec::new();
    for (r, item) in requests.iter().enumerate() {
        let RequestItem {
            ref key,
            line,
            listen,
            method,
            fp,
            retry,
            shape,
            ref progress,
            ..
        } = *item;
        let fp = fp as usize;
        if listen {
            listen_fps.push(fp as u32);
            index.listens.push(Listen {
                key: key.to_string(),
                ack: ack_for.remove(&r).and_then(|s| recs[s].take()),
                fp,
                anchor: r,
                line,
            });
            continue;
        }
        let mut status = None;
        let mut chunk_t: Box<[u64]> = Box::default();
        let answer = match replies.of[r] {
            Some(Reply::Frame(s)) => {
                status = servers[s].status;
                // Pairing gives each response to one request, and no response is a listen's
                // acknowledgment, so the frame is still there (the catalogue counts on it).
                let frame = recs[s].take();
                debug_assert!(frame.is_some(), "server frame {s} answers two requests");
                frame.map(Answer::Frame)
            }
            Some(Reply::Stream(st)) => {
                let (frames, t): (Vec<Recorded>, Vec<u64>) = streams[st]
                    .frames
                    .iter()
                    .filter_map(|&s| recs[s].take().map(|rec| (rec, servers[s].t)))
                    .unzip();
                chunk_t = t.into_boxed_slice();
                Some(Answer::Stream(frames))
            }
            None => None,
        };
        let Some(answer) = answer else {
            index.fp_info[fp].unanswered = true;
            continue;
        };
        let p = index.pairs.len();
        if !retry {
            by_method[method as usize].push(p as u32);
        }
        index.pairs.push(Pair {
            method,
            fp: fp as u32,
            retry,
            shape,
            answer,
            anchor: super::read::narrow(r),
            extra: PairExtra::of(
                progress.as_deref().map(|p| p.as_str().into()),
                status,
                chunk_t,
            ),
            line,
        });
        pair_fps.push(fp as u32);
    }
    index.pool = group(&pair_fps, &mut index.fp_info, |info, range| {
        info.responses = range
    });
    index.listen_pool = group(&listen_fps, &mut index.fp_info, |info, range| {
        info.listens = range
    });
    index.read_task_polls(&task_ids);
    index.fps.shrink_to_fit();
    index.pairs.shrink_to_fit();
    index.by_method = methods
        .iter()
        .zip(by_method)
        .filter(|(_, pairs)| !pairs.is_empty())
        .map(|(name, pairs)| (Arc::clone(name), pairs))
        .collect();
    index
}

/// The catalogue of recorded requests (see [`Catalogue`]): every listen and every answered
/// request under its method (and tool), each fingerprint once, in file order; the others noted
/// as unanswered. A request is answered when pairing gave it a reply, as [`assemble`] reads it.
fn catalogue(
    requests: &[RequestItem],
    replies: &Replies,
    methods: &[Arc<str>],
    fp_text: &FpTexts,
) -> Catalogue {
    let mut catalogue = CatalogueBuilder::new(methods);
    // Which fingerprints the catalogue holds already (it keeps each once).
    let mut catalogued = vec![false; fp_text.len()];
    for (r, item) in requests.iter().enumerate() {
        let fp = item.fp as usize;
        if item.listen || replies.of[r].is_some() {
            let first = !std::mem::replace(&mut catalogued[fp], true);
            catalogue.note_answered(item.method, fp, &fp_text[fp], first);
        } else {
            catalogue.note_unanswered(item.method);
        }
    }
    catalogue.finish(methods)
}

/// Groups item indices by fingerprint into one flat list (recorded order kept inside each
/// group), and tells each fingerprint where its group is.
fn group(
    fp_of: &[u32],
    info: &mut [FpInfo],
    mut set: impl FnMut(&mut FpInfo, (u32, u32)),
) -> Vec<u32> {
    let fps = info.len();
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cassette::Reader;

    /// A server frame's subscription tag decides two pairings the order alone cannot: which
    /// listen an acknowledgment answers, and whether a response under a listen's id closes the
    /// listen or answers a call that reused the id.
    #[test]
    fn tags_pair_acknowledgments_and_closures() {
        let header = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;
        let tag = |id: u32| format!(r#"{{"io.modelcontextprotocol/subscriptionId":{id}}}"#);
        let lines = [
            r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":10,"method":"subscriptions/listen","params":{}}}"#.to_owned(),
            r#"{"type":"frame","t":2,"dir":"c2s","frame":{"jsonrpc":"2.0","id":11,"method":"subscriptions/listen","params":{"x":1}}}"#.to_owned(),
            // Acknowledged the other way round: by their tags, not by age.
            format!(r#"{{"type":"frame","t":3,"dir":"s2c","frame":{{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{{"_meta":{}}}}}}}"#, tag(11)),
            format!(r#"{{"type":"frame","t":4,"dir":"s2c","frame":{{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{{"_meta":{}}}}}}}"#, tag(10)),
            r#"{"type":"frame","t":5,"dir":"c2s","frame":{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"a","arguments":{}}}}"#.to_owned(),
            // Under id 10 both the listen and the call wait: the tagged response closes the
            // listen, the plain one answers the call.
            format!(r#"{{"type":"frame","t":6,"dir":"s2c","frame":{{"jsonrpc":"2.0","id":10,"result":{{"_meta":{}}}}}}}"#, tag(10)),
            r#"{"type":"frame","t":7,"dir":"s2c","frame":{"jsonrpc":"2.0","id":10,"result":{"ok":true}}}"#.to_owned(),
        ];
        let text = format!("{header}\n{}\n", lines.join("\n"));
        let path = Path::new("t.jsonl");
        let reader = Reader::new(text.as_bytes(), path).unwrap();
        let header = reader.header().clone();
        let index = Index::build(header, reader, &[], path).unwrap();
        let acked: Vec<_> = index
            .listens
            .iter()
            .map(|l| {
                (
                    l.key.clone(),
                    l.ack.as_ref().map(|a| a.text().contains(&tag(10))),
                )
            })
            .collect();
        assert_eq!(
            acked,
            [
                ("10".to_owned(), Some(true)),
                ("11".to_owned(), Some(false))
            ]
        );
        let call = index
            .pairs
            .iter()
            .find(|p| p.method(&index) == "tools/call")
            .expect("the call is answered");
        let answer = call.answer.response().expect("a response");
        assert!(answer.text().contains(r#""ok":true"#), "{}", answer.text());
    }

    /// What an index holds, in a form that does not depend on hash order.
    fn describe(index: &Index) -> String {
        let pools: Vec<_> = (0..index.fp_text.len())
            .map(|fp| (index.pool(fp).to_vec(), index.listen_pool(fp).to_vec()))
            .collect();
        let shapes: Vec<_> = (0..)
            .map_while(|n| index.shapes.get(n).map(|s| format!("{s:?}")))
            .collect();
        format!(
            "{:?}\n{:?}\n{pools:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{} {}\n{:?}\n{shapes:?}",
            index.pairs,
            index.fp_text,
            index.listens,
            index.schedule.describe(),
            index.asks,
            index.warnings,
            index.highest_live,
            index.standalone_streams,
            index.fp_info,
        )
    }

    /// Every cassette under `dir`, recursively.
    fn cassettes(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                cassettes(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_parallel_build_is_the_plain_one() {
        let mut paths = Vec::new();
        cassettes(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
            &mut paths,
        );
        let mut compared = 0;
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap();
            let Some((header, body)) = text.split_once('\n') else {
                continue;
            };
            if Reader::new(text.as_bytes(), &path).is_err() {
                continue;
            }
            // The recording over and over, so that it spans many batches and each worker
            // learns shapes and methods the others learnt before it.
            let repeats = 1 + 6000 / body.lines().count().max(1);
            let big = format!("{header}\n{}", format!("{body}\n").repeat(repeats));
            let build = |workers| {
                let reader = Reader::new(big.as_bytes(), &path).unwrap();
                let header = reader.header().clone();
                Index::build_parallel(header, reader, &[], &path, workers)
            };
            let plain = build(1);
            for workers in [2, 3] {
                match (&plain, build(workers)) {
                    (Ok(plain), Ok(parallel)) => assert!(
                        describe(plain) == describe(&parallel),
                        "{} with {workers} workers",
                        path.display()
                    ),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    (a, b) => panic!("{}: {a:?} against {b:?}", path.display()),
                }
            }
            compared += 1;
        }
        assert!(compared >= 20, "only {compared} fixture cassettes read");
    }
}
