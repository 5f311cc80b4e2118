//! One replay session: a shared, immutable [`Index`] plus everything this session changes — what it
//! has consumed (a flag per recorded answer, a cursor per fingerprint and per method), the
//! scheduled frames it has released, the subscriptions the client opened, and the counts reported
//! at the end. Any number of sessions can serve from one `Arc<Index>`, each seeing the whole
//! recording. Transport-independent: a message goes in, the frames to send come out
//! ([`Exchange`]), and the front-end (stdio or HTTP) writes them.
//!
//! A session's state is allocated when it starts, in proportion to the index (a flag per recorded
//! answer and per scheduled batch, two cursors per fingerprint), so that answering a request
//! allocates nothing and takes no lock.
//!
//! Matching order for a request (each step only when the previous found nothing):
//!
//! 1. `subscriptions/listen`: the next recorded listen with the same fingerprint, answered by its
//!    acknowledgment and held open;
//! 2. the next unconsumed recording with the same fingerprint, in recorded order;
//! 3. a `tasks/get` whose recording ends in a terminal state: that last answer again;
//! 4. an idempotent read (`initialize`, `server/discover`, the four list methods) asked more often
//!    than recorded: its last recording again;
//! 5. `ping`: a synthesized empty result;
//! 6. `--on-miss warn` only: the next unconsumed recording of the same method, said out loud
//!    (never for an MRTR retry or a `tasks/get`);
//! 7. a miss, answered with JSON-RPC error -32601 and a diagnosis.
//!
//! Every answer is the recorded frame re-keyed to the client's id, every other byte as recorded.

mod rekey;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use serde_json::value::RawValue;

use super::OnMiss;
use super::fingerprint::{
    IDEMPOTENT, METHOD_ONLY, TASKS_GET, fingerprint, fingerprint_into, fingerprint_text,
    is_mrtr_retry,
};
use super::index::Index;
use super::miss::{MissReason, diagnose, format_miss, miss_answer};
use super::progress;
use super::recorded::{Answer, Recorded};
use super::schedule::Released;
use super::server_request::{Asked, Declared, Verdict, compare, describe, fresh_id};
use super::usage::Usage;
use super::wire::{Malformed, Message, Outbound, Request, parse_message, quick_request};
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::protocol::LISTEN_METHOD;
use crate::redact::{Echoes, RedactConfig, Redactor};
use rekey::{rekey_response, rekey_subscription};

/// What happened to one message.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A notification or a stray response: nothing is sent back.
    Silent,
    /// The recording's own answer.
    Answered,
    /// A recording served again without being consumed: a finished task's last poll
    /// (`idempotent: false`), or an idempotent read asked more often than recorded.
    Reserved { idempotent: bool },
    /// A `ping` with no recording left, answered with an empty result.
    Synthesized,
    /// A `subscriptions/listen`, acknowledged and held open.
    Subscribed,
    /// `--on-miss warn`: answered with another recording of the same method.
    Borrowed {
        reason: MissReason,
        diagnosis: String,
    },
    /// No recorded answer; `answer` holds the miss error.
    Missed {
        reason: MissReason,
        diagnosis: String,
    },
    /// A request replay cannot read (its params nest too deep); answered with error -32600.
    Rejected { detail: String },
}

/// The frames one message sends back, in order: `before`, `streamed`, `answer`, `after`.
#[derive(Debug)]
pub struct Exchange {
    /// Server frames the recording put just before this answer.
    pub before: Vec<Outbound>,
    /// Frames recorded inside the stream that carried this answer (HTTP recordings), in order.
    pub streamed: Vec<Outbound>,
    pub answer: Option<Outbound>,
    /// Server frames the recording put right after this answer.
    pub after: Vec<Outbound>,
    pub outcome: Outcome,
    /// The recorded pair that answered (an index into [`Index::pairs`]), when one did: the HTTP
    /// front-end reads how it was answered (a stream, a status) from there.
    pub pair: Option<usize>,
    /// Requests from the server to send among these frames, each at its place, in order; the
    /// front-end waits for each one's answer before sending what follows it. Empty unless the
    /// front-end sends them ([`Session::send_asks`]).
    pub asks: Vec<Asked>,
}

impl Exchange {
    fn silent() -> Exchange {
        Exchange {
            before: Vec::new(),
            streamed: Vec::new(),
            answer: None,
            after: Vec::new(),
            outcome: Outcome::Silent,
            pair: None,
            asks: Vec::new(),
        }
    }

    /// Every frame, in the order it goes out.
    pub fn frames(&self) -> impl Iterator<Item = &Outbound> {
        self.before
            .iter()
            .chain(&self.streamed)
            .chain(self.answer.as_ref())
            .chain(&self.after)
    }
}

/// The redaction rules a session runs, compiled only when first needed: a session whose requests
/// all match as sent never pays for them, which is most of a replay's start-up.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    config: Option<RedactConfig>,
    built: OnceLock<Redactor>,
    /// Secrets this session's requests carried, redacted wherever a later request repeats them,
    /// as `record` did (docs/redaction.md, "Echoes").
    echoes: Echoes,
}

impl Rules {
    /// The built-in rules, plus `config` when given.
    pub fn new(config: Option<RedactConfig>) -> Rules {
        Rules {
            config,
            built: OnceLock::new(),
            echoes: Echoes::new(),
        }
    }

    /// A live request's params redacted as `record` redacted them, echoes included.
    pub fn redact_request(&mut self, params: &Value) -> (Value, usize) {
        let redactor = self.get().clone();
        redactor.redact_value_echoing(params, &mut self.echoes)
    }

    /// A text as a diagnosis may show it: shape rules, then this session's remembered secrets.
    pub fn mask(&mut self, text: &str) -> String {
        let redactor = self.get().clone();
        redactor.mask_text(text, &mut self.echoes)
    }

    /// A frame appended to the cassette, redacted with this session's echoes.
    pub fn redact_frame(&mut self, frame: &Frame) -> Option<Frame> {
        let redactor = self.get().clone();
        redactor
            .redact_frame_echoing(frame, &mut self.echoes)
            .map(|(f, _)| f)
    }

    pub fn get(&self) -> &Redactor {
        self.built.get_or_init(|| match &self.config {
            Some(c) => Redactor::with_config(c),
            None => Redactor::builtin(),
        })
    }
}

/// A line handled by [`Session::handle_text`].
#[derive(Debug)]
pub struct Handled {
    pub exchange: Exchange,
    /// The parsed message, unless the line was answered on the fast path.
    pub message: Option<Box<Message>>,
}

/// Counts reported at the end of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub misses: usize,
    pub borrowed: usize,
    /// Idempotent reads answered again from their last recording.
    pub reserved_reads: usize,
    /// `tasks/get` polls past a finished task's last recorded poll.
    pub reserved_tasks: usize,
    pub synthesized_pings: usize,
    pub subscriptions: usize,
    /// Server-initiated frames sent at their recorded position.
    pub pushed: usize,
    /// Frames held back: they belong to a subscription the client never opened.
    pub unopened: usize,
    /// Frames held back: the client cancelled the subscription they belong to.
    pub cancelled: usize,
    /// Requests from the server sent to the client.
    pub asks_sent: usize,
    /// Client answers that differ from the recorded ones (a diagnostic each).
    pub asks_differ: usize,
    /// Requests the client never answered (in time), though it did in the recording.
    pub asks_unanswered: usize,
    /// Requests not sent: the client did not declare the capability they need.
    pub asks_skipped: usize,
}

impl Stats {
    /// Client answers that fail the session as a miss does: different, or missing.
    pub fn ask_failures(&self) -> usize {
        self.asks_differ + self.asks_unanswered
    }
}

/// The subscriptions a client opened (and cancelled) in one session.
#[derive(Debug, Default)]
struct Subscriptions {
    /// Recorded listen key -> the id the client's own listen carries.
    live: HashMap<String, Id>,
    cancelled: HashSet<String>,
}

/// A replay session over a shared index.
#[derive(Debug)]
pub struct Session {
    index: Arc<Index>,
    redactor: Rules,
    on_miss: OnMiss,
    /// By recorded pair: answered already in this session.
    consumed: Vec<bool>,
    /// By fingerprint: the next place in its pool to look. `u32` (pools are indexed by `u32`):
    /// an HTTP replay keeps one of these per client session, a thousand sessions at once.
    fp_next: Vec<u32>,
    /// By fingerprint: the next recorded listen. Allocated at the session's first listen: most
    /// sessions never open one.
    listen_next: Vec<u32>,
    /// Warn mode's borrowing cursor, by method.
    method_next: HashMap<Box<str>, usize>,
    /// The scheduled server frames this session has released.
    released: Released,
    subs: Subscriptions,
    stats: Stats,
    /// The hot path's fingerprint, built here so that answering a request allocates nothing.
    scratch: String,
    /// The recorded pair after the last one answered on the hot path (see `expected`).
    next_pair: usize,
    /// Where answers served are counted across sessions (see [`Session::tracking`]).
    usage: Option<Arc<Usage>>,
    /// Whether requests from the server are sent (the front-end can wait for their answers).
    send_asks: bool,
    /// What the client declared in its `initialize`, once seen.
    declared: Option<Declared>,
    /// Requests sent to the client so far: the next fresh id's number.
    asked: u64,
}

impl Session {
    /// `redactor` must hold the rules the cassette was recorded under (its config hash checked by
    /// the caller); it redacts incoming requests when the cassette is redacted, and every
    /// diagnosis always.
    ///
    /// The session starts at the beginning of the recording, whatever other sessions over the
    /// same index have consumed: many sessions (one per HTTP client session, say) share one
    /// `index`, each allocating here its own flags and cursors, in proportion to it.
    pub fn new(index: Arc<Index>, redactor: Rules, on_miss: OnMiss) -> Session {
        Session {
            consumed: vec![false; index.pairs.len()],
            fp_next: vec![0; index.fp_info.len()],
            listen_next: Vec::new(),
            method_next: HashMap::new(),
            released: Released::new(&index.schedule),
            subs: Subscriptions::default(),
            stats: Stats::default(),
            scratch: String::with_capacity(256),
            next_pair: 0,
            usage: None,
            send_asks: false,
            declared: None,
            asked: 0,
            index,
            redactor,
            on_miss,
        }
    }

    /// Counts every answer this session serves in `usage` (docs/replay.md, "Unused
    /// recordings"); `usage` must be over this session's index.
    pub fn tracking(mut self, usage: Arc<Usage>) -> Session {
        self.usage = Some(usage);
        self
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The shared index, for starting another session over the same recording.
    pub fn shared_index(&self) -> &Arc<Index> {
        &self.index
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn on_miss(&self) -> OnMiss {
        self.on_miss
    }

    /// The redaction rules (compiled on first use).
    pub fn redactor(&self) -> &Redactor {
        self.redactor.get()
    }

    /// Server frames still waiting at the end: the client never sent the request each follows.
    pub fn pending_frames(&self) -> usize {
        self.released.pending(&self.index.schedule)
    }

    /// Server-initiated requests in the recording.
    pub fn server_requests(&self) -> usize {
        self.index.schedule.server_requests()
    }

    /// Has the session put the recorded server's requests into its exchanges
    /// ([`Exchange::asks`]): for a front-end that sends them and waits for the answers.
    pub fn send_asks(&mut self) {
        self.send_asks = true;
    }

    /// The frames the recording opens with (due before any request), once. A request from the
    /// server cannot be among them: no client has said what it can do yet.
    pub fn take_initial(&mut self) -> Vec<Outbound> {
        let frames = self.released.initial(&self.index.schedule);
        let mut asks = Vec::new();
        let out = deliverable(frames, &self.subs, &mut self.stats, &mut asks);
        self.stats.asks_skipped += asks.len();
        out
    }

    /// Notes that the client answered `asked` with `answer` (its whole response); the diagnosis
    /// when the answer differs from the recorded one.
    pub fn ask_answered(&mut self, asked: &Asked, answer: &Value) -> Option<String> {
        let ask = &self.index.asks[asked.ask];
        match compare(
            ask.recorded_answer(),
            answer,
            ask.method(),
            &self.index.volatile,
        ) {
            Verdict::Same | Verdict::Unrecorded => None,
            Verdict::Differs(changes) => {
                self.stats.asks_differ += 1;
                let text = describe(ask.method(), &changes, self.redactor.get());
                Some(self.redactor.mask(&text))
            }
        }
    }

    /// Notes that the client did not answer `asked` (in time, or before its input ended); whether
    /// that is a failure: it is when the recording holds the client's answer.
    pub fn ask_unanswered(&mut self, asked: &Asked) -> bool {
        let recorded = self.index.asks[asked.ask].recorded_answer().is_some();
        self.stats.asks_unanswered += usize::from(recorded);
        recorded
    }

    /// Notes that the front-end found no stream open to carry `asked`: it was not sent after all
    /// (the front-end counts it with the other frames it could not deliver).
    pub fn ask_undelivered(&mut self, _asked: &Asked) {
        self.stats.asks_sent = self.stats.asks_sent.saturating_sub(1);
    }

    /// The method of the request `asked` sent.
    pub fn ask_method(&self, asked: &Asked) -> &str {
        self.index.asks[asked.ask].method()
    }

    /// Handles one line from the client. The common case (a request recorded exactly as sent) is
    /// answered straight from the line's text, without building a request; `message` is `Some`
    /// whenever the line had to be parsed as a whole (the front-end needs it for a miss).
    pub fn handle_text(&mut self, line: &str) -> Result<Handled, Malformed> {
        if self.send_asks && self.declared.is_none() {
            self.declared = Declared::from_line(line);
        }
        if let Some((id, f)) = self.expected_shape(line) {
            if let Some(p) = self.take_exact(f) {
                self.next_pair = p + 1;
                let mut exchange = self.serve_as(id, p, Outcome::Answered);
                self.follow_progress(&mut exchange, p, || progress::request_token(line));
                return Ok(Handled {
                    exchange,
                    message: None,
                });
            }
        }
        let mut hint = None;
        let mut fp = std::mem::take(&mut self.scratch);
        // Listens and requests with declared-volatile fields are never matched on their text.
        let volatile = &self.index.volatile;
        let by_text = |m: &str| m != LISTEN_METHOD && !volatile.applies_to(m);
        let quick = quick_request(line, &mut fp, by_text).filter(|q| by_text(q.method));
        if let Some(quick) = quick {
            let f = if quick.fingerprinted || {
                fp.clear();
                fingerprint_into(quick.method, quick.params, &mut fp)
            } {
                Some(
                    self.expected(&fp)
                        .or_else(|| self.index.fp_number(fp.as_str())),
                )
            } else {
                fingerprint_text(quick.method, quick.params)
                    .map(|slow| self.index.fp_number(slow.as_str()))
            };
            if let Some(f) = f {
                if let Some(p) = f.and_then(|f| self.take_exact(f)) {
                    self.keep_scratch(fp);
                    self.next_pair = p + 1;
                    let mut exchange = self.serve_as(quick.id, p, Outcome::Answered);
                    self.follow_progress(&mut exchange, p, || progress::request_token(line));
                    return Ok(Handled {
                        exchange,
                        message: None,
                    });
                }
                hint = Some(f);
            }
        }
        self.keep_scratch(fp);
        let message = parse_message(line)?;
        let exchange = match &message {
            Message::Request(req) => self.request(req, hint),
            other => self.handle(other),
        };
        Ok(Handled {
            exchange,
            message: Some(Box::new(message)),
        })
    }

    /// The fingerprint id of `fp` when it is the one of the recording after the last one served:
    /// a client repeating its recorded session asks in recorded order, and checking that guess
    /// reads memory in order, where a hash lookup lands anywhere (at a cache miss's price).
    fn expected(&self, fp: &str) -> Option<usize> {
        let f = self.index.pairs.get(self.next_pair)?.fp as usize;
        (self.index.fp_text[f] == *fp).then_some(f)
    }

    /// The client's id and the fingerprint id when `line` is the recording after the last one
    /// served, byte for byte but for its id (see [`crate::replay::shape`]).
    fn expected_shape<'l>(&self, line: &'l str) -> Option<(&'l str, usize)> {
        let pair = self.index.pairs.get(self.next_pair)?;
        let shape = self.index.shapes.get(pair.shape.get()?)?;
        let id = shape.matches(line, &self.index.fp_text[pair.fp as usize])?;
        Some((id, pair.fp as usize))
    }

    fn keep_scratch(&mut self, fp: String) {
        // One huge request must not keep its buffer for the rest of the session.
        self.scratch = if fp.capacity() > 1 << 20 {
            String::with_capacity(256)
        } else {
            fp
        };
    }

    /// Handles one message from the client.
    pub fn handle(&mut self, message: &Message) -> Exchange {
        match message {
            Message::Response => Exchange::silent(),
            Message::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    self.cancel(params.as_ref());
                }
                Exchange::silent()
            }
            Message::Request(request) => {
                if self.send_asks && self.declared.is_none() && request.method == "initialize" {
                    let params = request.params_value().ok().flatten();
                    self.declared = Some(Declared::from_initialize(params.as_ref()));
                }
                self.request(request, None)
            }
        }
    }

    /// `hint`: the exact-match lookup already done on the request as sent (and found empty), so
    /// it is not done twice.
    fn request(&mut self, req: &Request, hint: Option<Option<usize>>) -> Exchange {
        let method = req.method.as_str();
        let listen = method == LISTEN_METHOD;
        let method_only = METHOD_ONLY.contains(&method);
        let raw = req.params.as_deref().map(RawValue::get);
        let volatile = self.index.volatile.applies_to(method);
        // The hot path, straight from the params' text: a recorded request is a fixed point of
        // redaction, so an exact hit on the request as sent is the hit the redacted request would
        // have had, without paying for redaction or for a parsed tree.
        let mut fp = None;
        if let Some(known) = hint {
            fp = known;
        } else if !volatile {
            if let Some(text_fp) = fingerprint_text(method, raw) {
                fp = self.index.fp_number(text_fp.as_str());
                if !listen {
                    if let Some(p) = fp.and_then(|f| self.take_exact(f)) {
                        return self.serve(req, p, Outcome::Answered);
                    }
                }
            }
        }
        let params = match req.params_value() {
            Ok(p) => p,
            Err(detail) => return Self::rejected(req, detail),
        };
        let mut shaped = params;
        if volatile {
            if let Some(p) = shaped.as_mut() {
                self.index.volatile.drop_from(method, p);
            }
            fp = self
                .index
                .fp_number(fingerprint(method, shaped.as_ref()).as_str());
            if !listen {
                if let Some(p) = fp.and_then(|f| self.take_exact(f)) {
                    return self.serve(req, p, Outcome::Answered);
                }
            }
        }
        let mut redacted_params: Option<Value> = None;
        if self.index.redact_requests && !method_only {
            // Redaction runs on the params as sent. Without volatile fields to drop, `shaped` is
            // exactly that, so it is redacted rather than parsed a second time: a request near
            // the line limit must not hold one more copy of itself (docs/replay.md, "Bad input").
            let reparsed = if volatile {
                req.params_value().ok().flatten()
            } else {
                None
            };
            if let Some(params) = reparsed.as_ref().or(shaped.as_ref()) {
                let (mut redacted, changed) = self.redactor.redact_request(params);
                drop(reparsed);
                if changed > 0 {
                    // From here on only the redacted params are read.
                    shaped = None;
                    self.index.volatile.drop_from(method, &mut redacted);
                    fp = self
                        .index
                        .fp_number(fingerprint(method, Some(&redacted)).as_str());
                    redacted_params = Some(redacted);
                    if !listen {
                        if let Some(p) = fp.and_then(|f| self.take_exact(f)) {
                            return self.serve(req, p, Outcome::Answered);
                        }
                    }
                }
            }
        }
        let effective = redacted_params.as_ref().or(shaped.as_ref());
        if listen {
            if let Some(l) = fp.and_then(|f| self.take_listen(f)) {
                return self.subscribe(req, l);
            }
        }
        if let Some(f) = fp {
            let info = &self.index.fp_info[f];
            if let Some(task) = info.task.as_ref().filter(|t| t.terminal) {
                let last = task.last;
                self.stats.reserved_tasks += 1;
                return self.serve(req, last, Outcome::Reserved { idempotent: false });
            }
            if IDEMPOTENT.contains(&method) {
                if let Some(&last) = self.index.pool(f).last() {
                    let last = last as usize;
                    self.stats.reserved_reads += 1;
                    return self.serve(req, last, Outcome::Reserved { idempotent: true });
                }
            }
        }
        if method == "ping" {
            self.stats.synthesized_pings += 1;
            let mut ex = Exchange::silent();
            ex.answer = Some(Outbound::Owned(format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{}}}}",
                req.id.to_json()
            )));
            ex.outcome = Outcome::Synthesized;
            return ex;
        }
        // Diagnosed before any borrowing: the reason is about this request, not the loan.
        let reason = diagnose(&self.index, method, effective, fp);
        let diagnosis = format_miss(&reason, self.redactor.get());
        let diagnosis = self.redactor.mask(&diagnosis);
        if self.on_miss == OnMiss::Warn && !is_mrtr_retry(effective) && method != TASKS_GET {
            if let Some(p) = self.take_same_method(method) {
                self.stats.borrowed += 1;
                return self.serve(req, p, Outcome::Borrowed { reason, diagnosis });
            }
        }
        self.stats.misses += 1;
        let shown_method = self.redactor.mask(method);
        let mut ex = Exchange::silent();
        ex.answer = Some(Outbound::Owned(miss_answer(
            &req.id,
            &shown_method,
            &diagnosis,
        )));
        ex.outcome = Outcome::Missed { reason, diagnosis };
        ex
    }

    /// A request whose params cannot be read as a tree (nested deeper than the parser allows).
    fn rejected(req: &Request, detail: String) -> Exchange {
        let mut ex = Exchange::silent();
        ex.answer = Some(Outbound::Owned(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32600,\"message\":{}}}}}",
            req.id.to_json(),
            Value::String(format!("mcp-cassette replay: invalid request: {detail}"))
        )));
        ex.outcome = Outcome::Rejected { detail };
        ex
    }

    fn take_exact(&mut self, fp: usize) -> Option<usize> {
        let pool = self.index.pool(fp);
        let cursor = &mut self.fp_next[fp];
        while let Some(&p) = pool.get(*cursor as usize) {
            *cursor += 1;
            let p = p as usize;
            if !self.consumed[p] {
                self.consumed[p] = true;
                return Some(p);
            }
        }
        None
    }

    fn take_same_method(&mut self, method: &str) -> Option<usize> {
        let pool = self.index.by_method.get(method)?;
        let cursor = self.method_next.entry(method.into()).or_insert(0);
        while let Some(&p) = pool.get(*cursor) {
            *cursor += 1;
            let p = p as usize;
            if !self.consumed[p] {
                self.consumed[p] = true;
                return Some(p);
            }
        }
        None
    }

    fn take_listen(&mut self, fp: usize) -> Option<usize> {
        let pool = self.index.listen_pool(fp);
        if self.listen_next.is_empty() {
            self.listen_next = vec![0; self.index.fp_info.len()];
        }
        let cursor = &mut self.listen_next[fp];
        let l = *pool.get(*cursor as usize)?;
        *cursor += 1;
        Some(l as usize)
    }

    /// Answers `req` with recorded pair `p`, releasing the server frames anchored to it.
    fn serve(&mut self, req: &Request, p: usize, outcome: Outcome) -> Exchange {
        let mut ex = self.serve_as(&req.id.to_json(), p, outcome);
        self.follow_progress(&mut ex, p, || progress::live_token(req.params.as_deref()));
        ex
    }

    /// Re-addresses the progress frames of pair `p`'s answer to the live request's token
    /// (`live` is only asked when the recorded request had one).
    fn follow_progress(
        &self,
        ex: &mut Exchange,
        p: usize,
        live: impl FnOnce() -> Option<Box<str>>,
    ) {
        let Some(recorded) = self.index.pairs[p].progress() else {
            return;
        };
        let Some(live) = live() else {
            return;
        };
        if recorded != &*live {
            progress::retoken(&mut ex.before, recorded, &live);
            progress::retoken(&mut ex.streamed, recorded, &live);
            progress::retoken(&mut ex.after, recorded, &live);
        }
    }

    /// Answers the request whose id is `id_json` (its JSON text) with recorded pair `p`.
    fn serve_as(&mut self, id_json: &str, p: usize, outcome: Outcome) -> Exchange {
        if let Some(usage) = &self.usage {
            usage.answered(p);
        }
        let index = &*self.index;
        let anchor = index.pairs[p].anchor as usize;
        let mut scheduled = Vec::new();
        let before = self.released.before(&index.schedule, anchor);
        let before = deliverable(before, &self.subs, &mut self.stats, &mut scheduled);
        let mut asks: Vec<Place> = scheduled
            .into_iter()
            .map(|(at, n)| (at, n, false))
            .collect();
        let after_frames = self.released.after(&index.schedule, anchor);
        let (streamed, answer) = match &index.pairs[p].answer {
            Answer::Frame(rec) => (Vec::new(), rekey_response(rec, id_json)),
            Answer::Stream(frames) => {
                let (last, rest) = match frames.split_last() {
                    Some(split) => split,
                    None => return Exchange::silent(),
                };
                let mut streamed = Vec::with_capacity(rest.len());
                for f in rest {
                    match f.ask() {
                        Some(n) => asks.push((before.len() + streamed.len(), n, true)),
                        None if f.kind() == FrameKind::Request => {}
                        None => streamed.push(Outbound::Verbatim(f.text().clone())),
                    }
                }
                (streamed, rekey_response(last, id_json))
            }
        };
        let offset = before.len() + streamed.len() + 1;
        let mut after_asks = Vec::new();
        let after = deliverable(after_frames, &self.subs, &mut self.stats, &mut after_asks);
        asks.extend(
            after_asks
                .into_iter()
                .map(|(at, n)| (at + offset, n, false)),
        );
        let asks = self.ready_asks(asks);
        Exchange {
            before,
            streamed,
            answer: Some(answer),
            after,
            outcome,
            pair: Some(p),
            asks,
        }
    }

    /// The requests from the server due at `places` made ready to send: a fresh id each, unless
    /// the client lacks the capability one needs (skipped), or this front-end does not send them.
    fn ready_asks(&mut self, places: Vec<Place>) -> Vec<Asked> {
        if places.is_empty() || !self.send_asks {
            return Vec::new();
        }
        let mut ready = Vec::with_capacity(places.len());
        for (at, n, in_answer) in places {
            let ask = &self.index.asks[n];
            let declared = self.declared.unwrap_or_default();
            if declared.lacks(ask.method()).is_some() {
                self.stats.asks_skipped += 1;
                continue;
            }
            self.asked += 1;
            let id_json = fresh_id(self.asked);
            let frame = ask.frame();
            let id = id_json.trim_matches('"').to_owned();
            let recorded_id = frame
                .spans()
                .id()
                .and_then(|span| frame.text().get(span))
                .and_then(|text| serde_json::from_str(text).ok());
            self.stats.asks_sent += 1;
            ready.push(Asked {
                at,
                ask: n,
                frame: rekey_response(frame, &id_json),
                id,
                recorded_id,
                in_answer,
            });
        }
        ready
    }

    fn subscribe(&mut self, req: &Request, l: usize) -> Exchange {
        if let Some(usage) = &self.usage {
            usage.listened(l);
        }
        let index = &*self.index;
        let listen = &index.listens[l];
        let anchor = listen.anchor;
        self.subs.cancelled.remove(&listen.key);
        self.subs.live.insert(listen.key.clone(), req.id.clone());
        self.stats.subscriptions += 1;
        let mut asks = Vec::new();
        let before = self.released.before(&index.schedule, anchor);
        let before = deliverable(before, &self.subs, &mut self.stats, &mut asks);
        let answer = listen
            .ack
            .as_ref()
            .map(|ack| rekey_subscription(ack, &req.id));
        let offset = before.len() + usize::from(answer.is_some());
        let after_frames = self.released.after(&index.schedule, anchor);
        let mut after_asks = Vec::new();
        let after = deliverable(after_frames, &self.subs, &mut self.stats, &mut after_asks);
        asks.extend(after_asks.into_iter().map(|(at, n)| (at + offset, n)));
        let asks = self.ready_asks(asks.into_iter().map(|(at, n)| (at, n, false)).collect());
        Exchange {
            before,
            streamed: Vec::new(),
            answer,
            after,
            outcome: Outcome::Subscribed,
            pair: None,
            asks,
        }
    }

    /// `notifications/cancelled` naming one of the client's listens ends that subscription: its
    /// later frames are held back.
    fn cancel(&mut self, params: Option<&Value>) {
        let Some(id) = params
            .and_then(|p| p.get("requestId"))
            .and_then(Id::from_value)
        else {
            return;
        };
        let key = id.key();
        let ended: Vec<String> = self
            .subs
            .live
            .iter()
            .filter(|(_, live)| live.key() == key)
            .map(|(recorded, _)| recorded.clone())
            .collect();
        for recorded in ended {
            self.subs.live.remove(&recorded);
            self.subs.cancelled.insert(recorded);
        }
    }

    /// The stderr summary lines for the end of the session (without the `mcp-cassette replay: `
    /// prefix). `forwarded` is passthrough's (appended, failed, cassette path).
    pub fn summary(&self, forwarded: Option<(usize, usize, &str)>) -> Vec<String> {
        let s = &self.stats;
        let mut lines = Vec::new();
        if s.misses > 0 {
            lines.push(match forwarded {
                Some((appended, failed, path)) => {
                    let mut line =
                        format!("{} miss(es), {appended} interaction(s) appended to {path} (origin:\"live\")", s.misses);
                    if failed > 0 {
                        line.push_str(&format!(", {failed} forward(s) FAILED"));
                    }
                    line
                }
                None => format!("{} fingerprint miss(es) this session", s.misses),
            });
        }
        if s.borrowed > 0 {
            lines.push(format!(
                "{} answer(s) borrowed from another recording of the same method",
                s.borrowed
            ));
        }
        if s.reserved_reads > 0 {
            lines.push(format!(
                "{} idempotent read(s) (initialize, server/discover, the list methods) answered again from their last recording: the client asked for them more often than the recording did",
                s.reserved_reads
            ));
        }
        if s.subscriptions > 0 {
            lines.push(format!(
                "{} subscription(s) acknowledged and held open",
                s.subscriptions
            ));
        }
        if s.pushed > 0 {
            lines.push(format!(
                "{} server-initiated frame(s) replayed at their recorded position",
                s.pushed
            ));
        }
        if s.asks_sent > 0 {
            lines.push(format!(
                "{} request(s) from the server sent to the client at their recorded position",
                s.asks_sent
            ));
        }
        if s.asks_differ > 0 {
            lines.push(format!(
                "{} client answer(s) differ from the recorded ones",
                s.asks_differ
            ));
        }
        if s.asks_unanswered > 0 {
            lines.push(format!(
                "{} request(s) from the server were not answered by the client, though the recording holds its answers",
                s.asks_unanswered
            ));
        }
        if s.asks_skipped > 0 {
            lines.push(format!(
                "{} request(s) from the server were not sent: the client did not declare the capability they need (sampling, elicitation or roots)",
                s.asks_skipped
            ));
        }
        let pending = self.pending_frames();
        if pending > 0 {
            lines.push(format!(
                "{pending} recorded server-initiated frame(s) were not replayed: the client never sent the request each one follows"
            ));
        }
        if s.unopened > 0 {
            lines.push(format!(
                "{} server-initiated frame(s) were not replayed: they belong to a subscription this client never opened",
                s.unopened
            ));
        }
        if s.cancelled > 0 {
            lines.push(format!(
                "{} server-initiated frame(s) were not replayed: they belong to a subscription the client cancelled",
                s.cancelled
            ));
        }
        lines
    }
}

/// Where a request from the server is due: how many of the exchange's frames go before it, its
/// number in [`Index::asks`], and whether it was recorded inside the stream of the call's answer.
type Place = (usize, usize, bool);

/// Re-keys the frames of subscriptions the client opened, holds back (and counts) the others.
/// Requests from the server go to `asks` instead, with the number of frames before each.
fn deliverable(
    frames: &[Recorded],
    subs: &Subscriptions,
    stats: &mut Stats,
    asks: &mut Vec<(usize, usize)>,
) -> Vec<Outbound> {
    if frames.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(frames.len());
    for frame in frames {
        if let Some(n) = frame.ask() {
            asks.push((out.len(), n));
            continue;
        }
        match frame.subscription() {
            None => out.push(Outbound::Verbatim(frame.text().clone())),
            Some(key) => match subs.live.get(&key) {
                Some(live) => out.push(rekey_subscription(frame, live)),
                None if subs.cancelled.contains(&key) => stats.cancelled += 1,
                None => stats.unopened += 1,
            },
        }
    }
    stats.pushed += out.len();
    out
}

#[cfg(test)]
mod tests;
