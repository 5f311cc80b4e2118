//! One replay session: the index plus what this session has consumed, the subscriptions the client
//! opened, and the counts reported at the end. Transport-independent: a message goes in, the frames
//! to send come out ([`Exchange`]), and the front-end (stdio today, HTTP later) writes them.
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

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::Value;
use serde_json::value::RawValue;

use super::OnMiss;
use super::fingerprint::{
    IDEMPOTENT, METHOD_ONLY, TASKS_GET, fingerprint, fingerprint_into, fingerprint_text,
    is_mrtr_retry,
};
use super::index::{Answer, Index, Recorded};
use super::miss::{MissReason, diagnose, format_miss, miss_answer};
use super::wire::{Malformed, Message, Outbound, Request, parse_message, quick_request};
use crate::jsonrpc::{FrameKind, Id};
use crate::protocol::{LISTEN_METHOD, SUBSCRIPTION_ID_KEY};
use crate::redact::{RedactConfig, Redactor};

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
}

impl Exchange {
    fn silent() -> Exchange {
        Exchange {
            before: Vec::new(),
            streamed: Vec::new(),
            answer: None,
            after: Vec::new(),
            outcome: Outcome::Silent,
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
}

impl Rules {
    /// The built-in rules, plus `config` when given.
    pub fn new(config: Option<RedactConfig>) -> Rules {
        Rules {
            config,
            built: OnceLock::new(),
        }
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
}

/// A replay session over one index.
#[derive(Debug)]
pub struct Session {
    index: Index,
    redactor: Rules,
    on_miss: OnMiss,
    consumed: Vec<bool>,
    fp_next: Vec<usize>,
    listen_next: Vec<usize>,
    method_next: HashMap<Box<str>, usize>,
    /// Recorded listen key -> the id the client's own listen carries.
    live_subs: HashMap<String, Id>,
    cancelled_subs: HashSet<String>,
    stats: Stats,
    /// The hot path's fingerprint, built here so that answering a request allocates nothing.
    scratch: String,
    /// The recorded pair after the last one answered on the hot path (see `expected`).
    next_pair: usize,
}

impl Session {
    /// `redactor` must hold the rules the cassette was recorded under (its config hash checked by
    /// the caller); it redacts incoming requests when the cassette is redacted, and every
    /// diagnosis always.
    pub fn new(index: Index, redactor: Rules, on_miss: OnMiss) -> Session {
        Session {
            consumed: vec![false; index.pairs.len()],
            fp_next: vec![0; index.fp_info.len()],
            listen_next: vec![0; index.fp_info.len()],
            method_next: HashMap::new(),
            live_subs: HashMap::new(),
            cancelled_subs: HashSet::new(),
            stats: Stats::default(),
            scratch: String::with_capacity(256),
            next_pair: 0,
            index,
            redactor,
            on_miss,
        }
    }

    pub fn index(&self) -> &Index {
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
        self.index.schedule.pending()
    }

    /// Server-initiated requests in the recording (never replayed).
    pub fn server_requests(&self) -> usize {
        self.index.schedule.server_requests
    }

    /// The frames the recording opens with (due before any request), once.
    pub fn take_initial(&mut self) -> Vec<Outbound> {
        let frames = std::mem::take(&mut self.index.schedule.initial);
        self.deliverable(frames)
    }

    /// Handles one line from the client. The common case (a request recorded exactly as sent) is
    /// answered straight from the line's text, without building a request; `message` is `Some`
    /// whenever the line had to be parsed as a whole (the front-end needs it for a miss).
    pub fn handle_text(&mut self, line: &str) -> Result<Handled, Malformed> {
        if let Some((id, f)) = self.expected_shape(line) {
            if let Some(p) = self.take_exact(f) {
                self.next_pair = p + 1;
                return Ok(Handled {
                    exchange: self.serve_as(id, p, Outcome::Answered),
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
                        .or_else(|| self.index.fps.get(fp.as_str()).copied()),
                )
            } else {
                fingerprint_text(quick.method, quick.params)
                    .map(|slow| self.index.fps.get(slow.as_str()).copied())
            };
            if let Some(f) = f {
                if let Some(p) = f.and_then(|f| self.take_exact(f)) {
                    self.keep_scratch(fp);
                    self.next_pair = p + 1;
                    return Ok(Handled {
                        exchange: self.serve_as(quick.id, p, Outcome::Answered),
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
        let f = self.index.pairs.get(self.next_pair)?.fp;
        (*self.index.fp_text[f] == *fp).then_some(f)
    }

    /// The client's id and the fingerprint id when `line` is the recording after the last one
    /// served, byte for byte but for its id (see [`crate::replay::shape`]).
    fn expected_shape<'l>(&self, line: &'l str) -> Option<(&'l str, usize)> {
        let pair = self.index.pairs.get(self.next_pair)?;
        let shape = self.index.shapes.get(pair.shape.get()?)?;
        let id = shape.matches(line, &self.index.fp_text[pair.fp])?;
        Some((id, pair.fp))
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
            Message::Request(request) => self.request(request, None),
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
                fp = self.index.fps.get(text_fp.as_str()).copied();
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
                .fps
                .get(fingerprint(method, shaped.as_ref()).as_str())
                .copied();
            if !listen {
                if let Some(p) = fp.and_then(|f| self.take_exact(f)) {
                    return self.serve(req, p, Outcome::Answered);
                }
            }
        }
        let mut redacted_params: Option<Value> = None;
        if self.index.redact_requests && !method_only {
            if let Some(params) = req.params_value().ok().flatten() {
                let (mut redacted, changed) = self.redactor.get().redact_value(&params);
                if changed > 0 {
                    self.index.volatile.drop_from(method, &mut redacted);
                    fp = self
                        .index
                        .fps
                        .get(fingerprint(method, Some(&redacted)).as_str())
                        .copied();
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
        if self.on_miss == OnMiss::Warn && !is_mrtr_retry(effective) && method != TASKS_GET {
            if let Some(p) = self.take_same_method(method) {
                self.stats.borrowed += 1;
                return self.serve(req, p, Outcome::Borrowed { reason, diagnosis });
            }
        }
        self.stats.misses += 1;
        let shown_method = self.redactor.get().redact_text(method).0;
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
        let cursor = &mut self.listen_next[fp];
        let l = *pool.get(*cursor)?;
        *cursor += 1;
        Some(l as usize)
    }

    /// Answers `req` with recorded pair `p`, releasing the server frames anchored to it.
    fn serve(&mut self, req: &Request, p: usize, outcome: Outcome) -> Exchange {
        self.serve_as(&req.id.to_json(), p, outcome)
    }

    /// Answers the request whose id is `id_json` (its JSON text) with recorded pair `p`.
    fn serve_as(&mut self, id_json: &str, p: usize, outcome: Outcome) -> Exchange {
        let anchor = self.index.pairs[p].anchor;
        let before = self.release_before(anchor);
        let after_frames = if self.index.schedule.after.is_empty() {
            None
        } else {
            self.index.schedule.after.remove(&anchor)
        };
        let (streamed, answer) = match &self.index.pairs[p].answer {
            Answer::Frame(rec) => (Vec::new(), rekey_response(rec, id_json)),
            Answer::Stream(frames) => {
                let (last, rest) = match frames.split_last() {
                    Some(split) => split,
                    None => return Exchange::silent(),
                };
                let streamed = rest
                    .iter()
                    // Replay never originates a request to the client.
                    .filter(|f| f.kind() != FrameKind::Request)
                    .map(|f| Outbound::Verbatim(f.text().clone()))
                    .collect();
                (streamed, rekey_response(last, id_json))
            }
        };
        let after = self.deliverable(after_frames.unwrap_or_default());
        Exchange {
            before,
            streamed,
            answer: Some(answer),
            after,
            outcome,
        }
    }

    fn subscribe(&mut self, req: &Request, l: usize) -> Exchange {
        let listen = &self.index.listens[l];
        let (key, anchor) = (listen.key.clone(), listen.anchor);
        self.cancelled_subs.remove(&key);
        self.live_subs.insert(key, req.id.clone());
        self.stats.subscriptions += 1;
        let before = self.release_before(anchor);
        let answer = self.index.listens[l]
            .ack
            .as_ref()
            .map(|ack| rekey_subscription(ack, &req.id));
        let after_frames = self
            .index
            .schedule
            .after
            .remove(&anchor)
            .unwrap_or_default();
        let after = self.deliverable(after_frames);
        Exchange {
            before,
            streamed: Vec::new(),
            answer,
            after,
            outcome: Outcome::Subscribed,
        }
    }

    fn release_before(&mut self, anchor: usize) -> Vec<Outbound> {
        if self.index.schedule.before.is_empty() {
            return Vec::new();
        }
        let frames = self
            .index
            .schedule
            .before
            .remove(&anchor)
            .unwrap_or_default();
        self.deliverable(frames)
    }

    /// Re-keys the frames of subscriptions the client opened, holds back (and counts) the others.
    fn deliverable(&mut self, frames: Vec<Recorded>) -> Vec<Outbound> {
        let mut out = Vec::with_capacity(frames.len());
        for frame in frames {
            match frame.subscription() {
                None => out.push(Outbound::Verbatim(frame.text().clone())),
                Some(key) => match self.live_subs.get(&key) {
                    Some(live) => out.push(rekey_subscription(&frame, live)),
                    None if self.cancelled_subs.contains(&key) => self.stats.cancelled += 1,
                    None => self.stats.unopened += 1,
                },
            }
        }
        self.stats.pushed += out.len();
        out
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
            .live_subs
            .iter()
            .filter(|(_, live)| live.key() == key)
            .map(|(recorded, _)| recorded.clone())
            .collect();
        for recorded in ended {
            self.live_subs.remove(&recorded);
            self.cancelled_subs.insert(recorded);
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

/// A recorded response with its id replaced by the client's, every other byte as recorded.
fn rekey_response(rec: &Recorded, id_json: &str) -> Outbound {
    match rec.spans().id() {
        Some(span) => Outbound::Spliced {
            text: rec.text().clone(),
            span,
            value: id_json.into(),
        },
        None => rewrite(rec, |v| {
            if let (Some(obj), Ok(id)) = (v.as_object_mut(), serde_json::from_str::<Value>(id_json))
            {
                obj.insert("id".to_owned(), id);
            }
        }),
    }
}

/// A recorded subscription frame carrying the client's listen id: the tag of a notification, and
/// both the id and the tag of a graceful closure.
fn rekey_subscription(rec: &Recorded, live: &Id) -> Outbound {
    let spans = rec.spans();
    if !rec.is_response() {
        return match spans.tag() {
            Some((span, _)) => Outbound::Spliced {
                text: rec.text().clone(),
                span,
                value: live.to_json().into(),
            },
            None => Outbound::Verbatim(rec.text().clone()),
        };
    }
    match (spans.id(), spans.tag()) {
        (Some(id_span), Some((tag_span, _))) => {
            let text = rec.text();
            let value = live.to_json();
            let (first, second) = if id_span.start < tag_span.start {
                (id_span, tag_span)
            } else {
                (tag_span, id_span)
            };
            let mut out = String::with_capacity(text.len() + 2 * value.len());
            out.push_str(&text[..first.start]);
            out.push_str(&value);
            out.push_str(&text[first.end..second.start]);
            out.push_str(&value);
            out.push_str(&text[second.end..]);
            Outbound::Owned(out)
        }
        (Some(span), None) if !spans.has_meta() => Outbound::Spliced {
            text: rec.text().clone(),
            span,
            value: live.to_json().into(),
        },
        _ => rewrite(rec, |v| {
            if let Some(obj) = v.as_object_mut() {
                obj.insert("id".to_owned(), live.to_value());
                if let Some(meta) = obj
                    .get_mut("result")
                    .and_then(|r| r.get_mut("_meta"))
                    .and_then(Value::as_object_mut)
                {
                    meta.insert(SUBSCRIPTION_ID_KEY.to_owned(), live.to_value());
                }
            }
        }),
    }
}

/// The slow path: parse, change, serialise (member order kept).
fn rewrite(rec: &Recorded, change: impl FnOnce(&mut Value)) -> Outbound {
    match serde_json::from_str::<Value>(rec.text()) {
        Ok(mut v) => {
            change(&mut v);
            Outbound::Owned(v.to_string())
        }
        Err(_) => Outbound::Verbatim(rec.text().clone()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::*;
    use crate::cassette::Reader;
    use crate::replay::wire::parse_message;

    const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;

    fn frame(t: u64, dir: &str, frame: Value) -> String {
        json!({"type": "frame", "t": t, "dir": dir, "frame": frame}).to_string()
    }

    fn req(id: Value, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn res(id: Value, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    fn note(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }

    fn build(header: &str, lines: &[String], volatile: &[&str], on_miss: OnMiss) -> Session {
        let text = format!("{header}\n{}\n", lines.join("\n"));
        let reader = Reader::new(text.as_bytes(), Path::new("t.jsonl")).unwrap();
        let header = reader.header().clone();
        let volatile: Vec<String> = volatile.iter().map(|s| s.to_string()).collect();
        let index = Index::build(header, reader, &volatile, Path::new("t.jsonl")).unwrap();
        Session::new(index, Rules::default(), on_miss)
    }

    fn session(lines: &[String]) -> Session {
        build(HEADER, lines, &[], OnMiss::Error)
    }

    fn send(s: &mut Session, message: Value) -> (Vec<Value>, Outcome) {
        let m = parse_message(&message.to_string()).unwrap();
        let ex = s.handle(&m);
        let frames = ex
            .frames()
            .map(|f| serde_json::from_str(&f.text()).unwrap())
            .collect();
        (frames, ex.outcome)
    }

    fn call(name: &str, args: Value) -> Value {
        json!({"name": name, "arguments": args})
    }

    #[test]
    fn exact_matches_fifo_rekeyed_then_exhausted() {
        let mut s = session(&[
            frame(
                1,
                "c2s",
                req(json!(1), "tools/call", call("echo", json!({"m": "a"}))),
            ),
            frame(2, "s2c", res(json!(1), json!({"n": 1}))),
            frame(
                3,
                "c2s",
                req(json!(2), "tools/call", call("echo", json!({"m": "a"}))),
            ),
            frame(4, "s2c", res(json!(2), json!({"n": 2}))),
        ]);
        let (f, o) = send(
            &mut s,
            req(json!("x"), "tools/call", call("echo", json!({"m": "a"}))),
        );
        assert_eq!(f, [res(json!("x"), json!({"n": 1}))]);
        assert_eq!(o, Outcome::Answered);
        let (f, _) = send(
            &mut s,
            req(
                json!(9),
                "tools/call",
                json!({"arguments": {"m": "a"}, "name": "echo"}),
            ),
        );
        assert_eq!(f, [res(json!(9), json!({"n": 2}))]);
        let (f, o) = send(
            &mut s,
            req(json!(10), "tools/call", call("echo", json!({"m": "a"}))),
        );
        assert!(
            matches!(
                o,
                Outcome::Missed {
                    reason: MissReason::Exhausted { recorded: 2 },
                    ..
                }
            ),
            "{o:?}"
        );
        assert_eq!(f[0]["error"]["code"], -32601);
        let message = f[0]["error"]["message"].as_str().unwrap();
        assert_eq!(
            message,
            "mcp-cassette replay: no recorded response for \"tools/call\" (fingerprint miss). Nearest recording: this exact fingerprint was recorded 2 time(s), but every recorded response was already consumed earlier in this session; the client is calling it more often than the recording did. Re-record the cassette or adjust the interaction."
        );
        assert_eq!(s.stats().misses, 1);
    }

    #[test]
    fn answers_keep_recorded_bytes() {
        let text = r#"{"type":"frame","t":2,"dir":"s2c","frame":{"result":{"a":1.0,"u":"\u00e9"},"jsonrpc":"2.0","id":1}}"#;
        let mut s = session(&[
            frame(1, "c2s", req(json!(1), "ping", json!({}))),
            text.to_owned(),
        ]);
        let m = parse_message(r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#).unwrap();
        let ex = s.handle(&m);
        assert_eq!(
            ex.answer.unwrap().text(),
            r#"{"result":{"a":1.0,"u":"\u00e9"},"jsonrpc":"2.0","id":"abc"}"#
        );
    }

    #[test]
    fn idempotent_reads_are_served_again_other_requests_are_not() {
        let mut s = session(&[
            frame(1, "c2s", req(json!(1), "tools/list", json!({}))),
            frame(2, "s2c", res(json!(1), json!({"tools": [1]}))),
            frame(
                3,
                "c2s",
                req(json!(2), "tools/list", json!({"cursor": "p2"})),
            ),
            frame(4, "s2c", res(json!(2), json!({"tools": [2]}))),
            frame(
                5,
                "c2s",
                req(json!(3), "resources/read", json!({"uri": "a"})),
            ),
            frame(6, "s2c", res(json!(3), json!({"contents": []}))),
        ]);
        for expect in [1, 2, 2, 2] {
            let (f, _) = send(&mut s, req(json!(7), "tools/list", json!({})));
            assert_eq!(f[0]["result"]["tools"][0], expect);
        }
        assert_eq!(s.stats().reserved_reads, 2);
        send(&mut s, req(json!(8), "resources/read", json!({"uri": "a"})));
        let (_, o) = send(&mut s, req(json!(9), "resources/read", json!({"uri": "a"})));
        assert!(matches!(o, Outcome::Missed { .. }));
        assert!(
            s.summary(None)
                .iter()
                .any(|l| l.contains("1 fingerprint miss(es)"))
        );
    }

    #[test]
    fn ping_is_synthesized_when_not_recorded() {
        let mut s = session(&[]);
        let (f, o) = send(&mut s, req(json!(5), "ping", json!(null)));
        assert_eq!(f, [res(json!(5), json!({}))]);
        assert_eq!(o, Outcome::Synthesized);
        let (f, o) = send(&mut s, req(json!(6), "tools/list", json!(null)));
        assert!(matches!(
            o,
            Outcome::Missed {
                reason: MissReason::EmptyCassette,
                ..
            }
        ));
        assert!(
            f[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("the cassette contains no request/response pairs at all")
        );
    }

    #[test]
    fn diagnoses_name_the_nearest_recording() {
        let mut s = session(&[
            frame(
                1,
                "c2s",
                req(json!(1), "tools/call", call("add", json!({"a": 1, "b": 2}))),
            ),
            frame(2, "s2c", res(json!(1), json!({}))),
            frame(
                3,
                "c2s",
                req(
                    json!(2),
                    "tools/call",
                    call("add", json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})),
                ),
            ),
            frame(4, "s2c", res(json!(2), json!({}))),
            frame(
                5,
                "c2s",
                req(
                    json!(3),
                    "resources/read",
                    json!({"uri": "x", "_meta": {"k": 1}}),
                ),
            ),
            frame(6, "s2c", res(json!(3), json!({}))),
            frame(7, "c2s", req(json!(4), "prompts/get", json!({"name": "p"}))),
        ]);
        let diagnosis = |s: &mut Session, m: Value| match send(s, m).1 {
            Outcome::Missed { diagnosis, .. } => diagnosis,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            diagnosis(
                &mut s,
                req(json!(9), "tools/call", call("add", json!({"a": 5, "b": 5})))
            ),
            "method and tool match a recording, but arguments differ at: /a (recorded 1, got 5); /b (recorded 2, got 5)"
        );
        assert_eq!(
            diagnosis(
                &mut s,
                req(
                    json!(9),
                    "tools/call",
                    call("add", json!({"a": 9, "b": 9, "c": 3, "d": 9, "e": 9}))
                )
            ),
            "method and tool match a recording, but arguments differ at: /a (recorded 1, got 9); /b (recorded 2, got 9); /d (recorded 4, got 9) and 1 more path(s)"
        );
        assert_eq!(
            diagnosis(
                &mut s,
                req(
                    json!(9),
                    "resources/read",
                    json!({"uri": "y", "_meta": {"k": 2}})
                )
            ),
            "method and tool match a recording, but params differ at: /uri (recorded \"x\", got \"y\")"
        );
        assert_eq!(
            diagnosis(&mut s, req(json!(9), "prompts/get", json!({"name": "p"}))),
            "this exact request was recorded, but the recording holds no response for it: the server never answered it before the session ended, so replay has nothing to hand back"
        );
        assert_eq!(
            diagnosis(&mut s, req(json!(9), "prompts/get", json!({"name": "q"}))),
            "\"prompts/get\" was recorded, but no recording of it holds a response: the server never answered it before the session ended, so replay has nothing to hand back"
        );
        assert_eq!(
            diagnosis(&mut s, req(json!(9), "tools/call", call("sub", json!({})))),
            "no recorded tools/call for tool \"sub\". Recorded tools: add"
        );
        assert_eq!(
            diagnosis(&mut s, req(json!(9), "x/y", json!({}))),
            "no recorded request has method \"x/y\". Recorded methods: prompts/get, resources/read, tools/call"
        );
    }

    #[test]
    fn warn_borrows_loudly_but_never_for_retries_or_polls() {
        let lines = [
            frame(
                1,
                "c2s",
                req(json!(1), "tools/call", call("echo", json!({"m": "a"}))),
            ),
            frame(2, "s2c", res(json!(1), json!({"n": "a"}))),
            frame(
                3,
                "c2s",
                req(
                    json!(2),
                    "tools/call",
                    json!({"name": "echo", "arguments": {"m": "a"}, "inputResponses": {"k": 1}}),
                ),
            ),
            frame(4, "s2c", res(json!(2), json!({"n": "retry"}))),
            frame(
                5,
                "c2s",
                req(json!(3), "tasks/get", json!({"taskId": "t1"})),
            ),
            frame(6, "s2c", res(json!(3), json!({"status": "working"}))),
        ];
        let mut s = build(HEADER, &lines, &[], OnMiss::Warn);
        let (_, o) = send(
            &mut s,
            req(
                json!(9),
                "tools/call",
                json!({"name": "echo", "arguments": {"m": "a"}, "inputResponses": {"k": 2}}),
            ),
        );
        match o {
            Outcome::Missed { diagnosis, .. } => assert_eq!(
                diagnosis,
                "method and tool match a recording, but params differ at: /inputResponses/k (recorded 1, got 2)"
            ),
            other => panic!("{other:?}"),
        }
        let (_, o) = send(&mut s, req(json!(9), "tasks/get", json!({"taskId": "t2"})));
        assert!(matches!(o, Outcome::Missed { .. }));
        let (f, o) = send(
            &mut s,
            req(json!(9), "tools/call", call("echo", json!({"m": "zzz"}))),
        );
        assert!(matches!(o, Outcome::Borrowed { .. }), "{o:?}");
        assert_eq!(
            f[0]["result"]["n"], "a",
            "the plain call is lent, never the retry's answer"
        );
        let (_, o) = send(
            &mut s,
            req(json!(9), "tools/call", call("echo", json!({"m": "a"}))),
        );
        assert!(
            matches!(o, Outcome::Missed { .. }),
            "a borrowed recording is consumed"
        );
        assert_eq!(s.stats().borrowed, 1);
    }

    #[test]
    fn task_polls_terminal_reserve_and_not_terminal_miss() {
        let poll = |id: i64, t: u64, status: &str, task: &str| {
            [
                frame(
                    t,
                    "c2s",
                    req(json!(id), "tasks/get", json!({"taskId": task})),
                ),
                frame(
                    t + 1,
                    "s2c",
                    res(json!(id), json!({"taskId": task, "status": status})),
                ),
            ]
        };
        let mut lines = Vec::new();
        lines.extend(poll(1, 10, "working", "done"));
        lines.extend(poll(2, 20, "completed", "done"));
        lines.extend(poll(3, 30, "working", "stuck"));
        lines.extend(poll(4, 40, "input_required", "stuck"));
        let mut s = session(&lines);
        let get = |task: &str| req(json!("p"), "tasks/get", json!({"taskId": task}));
        let statuses: Vec<Value> = (0..4)
            .map(|_| send(&mut s, get("done")).0[0]["result"]["status"].clone())
            .collect();
        assert_eq!(
            statuses,
            [
                json!("working"),
                json!("completed"),
                json!("completed"),
                json!("completed")
            ]
        );
        assert_eq!(s.stats().reserved_tasks, 2);
        send(&mut s, get("stuck"));
        send(&mut s, get("stuck"));
        match send(&mut s, get("stuck")).1 {
            Outcome::Missed { diagnosis, .. } => assert_eq!(
                diagnosis,
                "the recording holds 2 poll(s) for task \"stuck\" and ends with status \"input_required\", which is not terminal: the task was still running when recording stopped, so there is no later state to serve. Re-record until the task reaches completed, failed or cancelled"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn server_frames_follow_the_recording_they_belong_to() {
        let mut s = session(&[
            frame(0, "s2c", note("notifications/hello", json!({}))),
            frame(
                1,
                "c2s",
                req(json!(1), "tools/call", call("echo", json!({}))),
            ),
            frame(2, "s2c", note("notifications/progress", json!({"p": 1}))),
            frame(3, "s2c", res(json!(1), json!({"n": 1}))),
            frame(
                4,
                "s2c",
                note("notifications/tools/list_changed", json!({"after": 1})),
            ),
            frame(
                5,
                "c2s",
                req(json!(2), "tools/call", call("echo", json!({}))),
            ),
            frame(6, "s2c", res(json!(2), json!({"n": 2}))),
            frame(
                7,
                "s2c",
                note("notifications/tools/list_changed", json!({"after": 2})),
            ),
            frame(
                8,
                "c2s",
                req(json!(3), "tools/call", call("never", json!({}))),
            ),
            frame(9, "s2c", res(json!(3), json!({}))),
            frame(10, "s2c", note("notifications/lost", json!({}))),
            frame(
                11,
                "s2c",
                req(json!(0), "sampling/createMessage", json!({})),
            ),
        ]);
        assert_eq!(s.server_requests(), 1);
        let initial: Vec<String> = s
            .take_initial()
            .iter()
            .map(|f| f.text().into_owned())
            .collect();
        assert_eq!(initial.len(), 1);
        let (f, _) = send(&mut s, req(json!(1), "tools/call", call("echo", json!({}))));
        let methods: Vec<&str> = f
            .iter()
            .map(|v| v["method"].as_str().unwrap_or("answer"))
            .collect();
        assert_eq!(
            methods,
            [
                "notifications/progress",
                "answer",
                "notifications/tools/list_changed"
            ]
        );
        assert_eq!(f[2]["params"]["after"], 1);
        let (f, _) = send(&mut s, req(json!(2), "tools/call", call("echo", json!({}))));
        assert_eq!(f.len(), 2);
        assert_eq!(f[1]["params"]["after"], 2);
        assert_eq!(s.pending_frames(), 1);
        assert_eq!(s.stats().pushed, 4, "the opening frame counts too");
        assert!(s.summary(None).iter().any(|l| l == "1 recorded server-initiated frame(s) were not replayed: the client never sent the request each one follows"));
    }

    fn tagged(method: &str, sub: Value, extra: Value) -> Value {
        let mut params = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": sub}});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        note(method, params)
    }

    #[test]
    fn subscriptions_are_acknowledged_rekeyed_and_kept_apart() {
        let listen = |id: Value, what: &str| {
            req(
                id,
                "subscriptions/listen",
                json!({"notifications": {what: true}}),
            )
        };
        let mut s = session(&[
            frame(1, "c2s", listen(json!(10), "toolsListChanged")),
            frame(
                2,
                "s2c",
                tagged(
                    "notifications/subscriptions/acknowledged",
                    json!(10),
                    json!({"notifications": {"toolsListChanged": true}}),
                ),
            ),
            frame(3, "c2s", listen(json!(11), "promptsListChanged")),
            frame(
                4,
                "s2c",
                tagged(
                    "notifications/subscriptions/acknowledged",
                    json!(11),
                    json!({}),
                ),
            ),
            frame(
                5,
                "c2s",
                req(json!(12), "tools/call", call("add_tool", json!({}))),
            ),
            frame(6, "s2c", res(json!(12), json!({"ok": true}))),
            frame(
                7,
                "s2c",
                tagged("notifications/tools/list_changed", json!(10), json!({})),
            ),
            frame(
                8,
                "s2c",
                tagged("notifications/prompts/list_changed", json!(11), json!({})),
            ),
            frame(
                9,
                "c2s",
                req(json!(13), "tools/call", call("end_listen", json!({}))),
            ),
            frame(10, "s2c", res(json!(13), json!({"ended": true}))),
            frame(
                11,
                "s2c",
                res(
                    json!(10),
                    json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 10}}),
                ),
            ),
        ]);
        let (f, o) = send(&mut s, listen(json!("sub-a"), "toolsListChanged"));
        assert_eq!(o, Outcome::Subscribed);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0]["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            f[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "sub-a"
        );
        let (f, _) = send(
            &mut s,
            req(json!(2), "tools/call", call("add_tool", json!({}))),
        );
        // The prompts subscription was never opened: its frame is held back.
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[1]["method"], "notifications/tools/list_changed");
        assert_eq!(
            f[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "sub-a"
        );
        assert_eq!(s.stats().unopened, 1);
        let (f, _) = send(
            &mut s,
            req(json!(3), "tools/call", call("end_listen", json!({}))),
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[1]["id"], "sub-a");
        assert_eq!(
            f[1]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "sub-a"
        );
        let (_, o) = send(&mut s, listen(json!(4), "toolsListChanged"));
        match o {
            Outcome::Missed { reason, .. } => {
                assert_eq!(reason, MissReason::SubscriptionExhausted { recorded: 1 })
            }
            other => panic!("{other:?}"),
        }
        let (_, o) = send(&mut s, listen(json!(5), "resourcesListChanged"));
        match o {
            Outcome::Missed { diagnosis, .. } => assert!(
                diagnosis.contains("params differ at: /notifications/"),
                "{diagnosis}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn listen_ids_are_the_clients() {
        // Same as above with a string listen id from the client, to pin the re-keying text.
        let mut s = session(&[
            frame(1, "c2s", req(json!(10), "subscriptions/listen", json!({}))),
            frame(
                2,
                "s2c",
                tagged(
                    "notifications/subscriptions/acknowledged",
                    json!(10),
                    json!({}),
                ),
            ),
        ]);
        let m = parse_message(
            r#"{"jsonrpc":"2.0","id":"sub-a","method":"subscriptions/listen","params":{}}"#,
        )
        .unwrap();
        let ex = s.handle(&m);
        assert_eq!(
            ex.answer.unwrap().text(),
            r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-a"}}}"#
        );
    }

    #[test]
    fn cancelled_subscriptions_stop_receiving() {
        let mut s = session(&[
            frame(1, "c2s", req(json!(10), "subscriptions/listen", json!({}))),
            frame(
                2,
                "s2c",
                tagged(
                    "notifications/subscriptions/acknowledged",
                    json!(10),
                    json!({}),
                ),
            ),
            frame(3, "c2s", req(json!(11), "tools/call", call("x", json!({})))),
            frame(4, "s2c", res(json!(11), json!({}))),
            frame(
                5,
                "s2c",
                tagged("notifications/tools/list_changed", json!(10), json!({})),
            ),
        ]);
        send(&mut s, req(json!(1), "subscriptions/listen", json!({})));
        send(
            &mut s,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        );
        let (f, _) = send(&mut s, req(json!(2), "tools/call", call("x", json!({}))));
        assert_eq!(f.len(), 1);
        assert_eq!(s.stats().cancelled, 1);
    }

    #[test]
    fn volatile_fields_are_ignored_on_both_sides() {
        let lines = [
            frame(
                1,
                "c2s",
                req(
                    json!(1),
                    "tools/call",
                    call("echo", json!({"m": "hi", "at": "2026", "list": [1, 2, 3]})),
                ),
            ),
            frame(2, "s2c", res(json!(1), json!({"ok": 1}))),
        ];
        let mut s = build(
            HEADER,
            &lines,
            &["tools/call:/arguments/at", "/arguments/list/1"],
            OnMiss::Error,
        );
        let (f, _) = send(
            &mut s,
            req(
                json!(7),
                "tools/call",
                call("echo", json!({"m": "hi", "at": "2027", "list": [1, 9, 3]})),
            ),
        );
        assert_eq!(f[0]["result"]["ok"], 1);
        let (_, o) = send(
            &mut s,
            req(
                json!(8),
                "tools/call",
                call("echo", json!({"m": "ho", "at": "2028", "list": [1, 2]})),
            ),
        );
        match o {
            Outcome::Missed { diagnosis, .. } => assert_eq!(
                diagnosis,
                "method and tool match a recording, but arguments differ at: /list/2 (recorded 3, got (absent)); /m (recorded \"hi\", got \"ho\")"
            ),
            other => panic!("{other:?}"),
        }
        let header = r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"stdio","volatile":["/arguments/at"]}"#;
        let mut s = build(header, &lines, &["/arguments/list"], OnMiss::Error);
        let (f, _) = send(
            &mut s,
            req(
                json!(7),
                "tools/call",
                call("echo", json!({"m": "hi", "at": 0})),
            ),
        );
        assert_eq!(f[0]["result"]["ok"], 1);
    }

    #[test]
    fn duplicate_ids_pair_in_order_and_streams_answer_over_stdio() {
        let header = r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"http","era":"modern"}"#;
        let chunks = json!({"type": "chunks", "t": 5, "dir": "s2c", "id": 1, "chunks": [
            {"t": 6, "frame": note("notifications/progress", json!({"progress": 1}))},
            {"t": 7, "frame": res(json!(1), json!({"streamed": true}))}
        ]})
        .to_string();
        let mut s = build(
            header,
            &[
                frame(1, "c2s", req(json!(1), "tools/call", call("a", json!({})))),
                frame(2, "c2s", req(json!(1), "tools/call", call("b", json!({})))),
                frame(3, "s2c", res(json!(1), json!({"for": "a"}))),
                frame(4, "s2c", res(json!(1), json!({"for": "b"}))),
                frame(5, "c2s", req(json!(1), "tools/call", call("c", json!({})))),
                chunks,
            ],
            &[],
            OnMiss::Error,
        );
        let (f, _) = send(&mut s, req(json!(1), "tools/call", call("b", json!({}))));
        assert_eq!(f[0]["result"]["for"], "b");
        let (f, _) = send(&mut s, req(json!(1), "tools/call", call("a", json!({}))));
        assert_eq!(f[0]["result"]["for"], "a");
        let (f, _) = send(&mut s, req(json!(77), "tools/call", call("c", json!({}))));
        assert_eq!(f.len(), 2);
        assert_eq!(f[0]["method"], "notifications/progress");
        assert_eq!(f[1], res(json!(77), json!({"streamed": true})));
    }

    #[test]
    fn a_request_written_after_its_answer_still_precedes_it() {
        // One capture thread per direction can write the answer's line first, in the same ms.
        let mut s = session(&[
            frame(5, "s2c", res(json!(1), json!({"n": 1}))),
            frame(
                5,
                "s2c",
                note("notifications/tools/list_changed", json!({})),
            ),
            frame(
                5,
                "c2s",
                req(json!(1), "tools/call", call("add", json!({}))),
            ),
            frame(7, "c2s", req(json!(2), "tools/list", json!({}))),
            frame(
                8,
                "s2c",
                note("notifications/message", json!({"during": 2})),
            ),
            frame(9, "s2c", res(json!(2), json!({"tools": []}))),
        ]);
        let (f, _) = send(
            &mut s,
            req(json!("a"), "tools/call", call("add", json!({}))),
        );
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[1]["method"], "notifications/tools/list_changed");
        let (f, _) = send(&mut s, req(json!("b"), "tools/list", json!({})));
        assert_eq!(f[0]["params"]["during"], 2, "{f:?}");
        assert_eq!(s.pending_frames(), 0);
    }

    #[test]
    fn repeated_lines_are_answered_in_recorded_order_whatever_path_they_take() {
        let a = call("echo", json!({"m": "a"}));
        let b = call("echo", json!({"m": "b"}));
        let lines = [
            frame(1, "c2s", req(json!(1), "tools/call", a.clone())),
            frame(2, "s2c", res(json!(1), json!({"n": "a1"}))),
            frame(3, "c2s", req(json!(2), "tools/call", b.clone())),
            frame(4, "s2c", res(json!(2), json!({"n": "b"}))),
            frame(5, "c2s", req(json!(3), "tools/call", a.clone())),
            frame(6, "s2c", res(json!(3), json!({"n": "a2"}))),
        ];
        let mut s = session(&lines);
        let line = |id: &str, params: &Value| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
        };
        let mut answer = |text: String| {
            let h = s.handle_text(&text).unwrap();
            h.exchange.answer.map(|a| a.text().into_owned())
        };
        // Out of order first: the recording expected next is `a`, the client asks for `b`.
        assert_eq!(
            answer(line("\"x\\\"y\"", &b)).as_deref(),
            Some(r#"{"jsonrpc":"2.0","id":"x\"y","result":{"n":"b"}}"#)
        );
        // `a` twice: first recording first, whichever was expected.
        assert_eq!(
            answer(line("7", &a)).as_deref(),
            Some(r#"{"jsonrpc":"2.0","id":7,"result":{"n":"a1"}}"#)
        );
        // The same request with other spacing is the same request.
        let spaced = line("8", &a).replace(",", " , ");
        assert_eq!(
            answer(spaced).as_deref(),
            Some(r#"{"jsonrpc":"2.0","id":8,"result":{"n":"a2"}}"#)
        );
        let missed = answer(line("9", &a)).unwrap();
        assert!(missed.contains("-32601"), "{missed}");
    }

    #[test]
    fn the_line_fast_path_answers_like_the_message_path() {
        let lines = [
            frame(
                1,
                "c2s",
                req(
                    json!(1),
                    "tools/call",
                    call("echo", json!({"b": 1, "a": [1.0]})),
                ),
            ),
            frame(2, "s2c", res(json!(1), json!({"n": 1}))),
            frame(
                3,
                "c2s",
                req(
                    json!(2),
                    "tools/call",
                    call("echo", json!({"b": 1, "a": [1.0]})),
                ),
            ),
            frame(4, "s2c", res(json!(2), json!({"n": 2}))),
        ];
        let mut s = session(&lines);
        let line = r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"arguments":{"a":[1],"b":1.0},"name":"echo"}}"#;
        let h = s.handle_text(line).unwrap();
        assert!(h.message.is_none(), "answered on the fast path");
        assert_eq!(
            h.exchange.answer.unwrap().text(),
            r#"{"jsonrpc":"2.0","id":1.0,"result":{"n":1}}"#
        );
        let h = s.handle_text(r#"{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"echo","arguments":{"a":[1],"b":1}}}"#).unwrap();
        assert_eq!(
            h.exchange.answer.unwrap().text(),
            r#"{"jsonrpc":"2.0","id":"\u0041","result":{"n":2}}"#
        );
        let h = s.handle_text(line).unwrap();
        assert!(matches!(h.message.as_deref(), Some(Message::Request(_))));
        assert!(matches!(h.exchange.outcome, Outcome::Missed { .. }));
        assert!(s.handle_text("{").is_err());
        let h = s
            .handle_text(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .unwrap();
        assert_eq!(h.exchange.outcome, Outcome::Silent);
    }

    #[test]
    fn header_contradictions_become_warnings() {
        let header = r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"stdio","era":"modern","url":"http://x"}"#;
        let s = build(
            header,
            &[frame(1, "c2s", req(json!(1), "initialize", json!({})))],
            &[],
            OnMiss::Error,
        );
        let w = &s.index().warnings;
        assert!(
            w.iter().any(|m| m
                .starts_with("era is \"modern\" but the cassette records an `initialize` request")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|m| m == "transport is \"stdio\" but the header carries a `url`")
        );
    }
}
