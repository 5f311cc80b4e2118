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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::OnMiss;
use super::fingerprint::{IDEMPOTENT, METHOD_ONLY, TASKS_GET, fingerprint, is_mrtr_retry};
use super::index::{Answer, Index, Recorded};
use super::miss::{MissReason, diagnose, format_miss, miss_answer};
use super::wire::{Message, Outbound, Request};
use crate::jsonrpc::{FrameKind, Id};
use crate::protocol::{LISTEN_METHOD, SUBSCRIPTION_ID_KEY};
use crate::redact::Redactor;

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
    redactor: Redactor,
    on_miss: OnMiss,
    consumed: Vec<bool>,
    fp_next: Vec<usize>,
    listen_next: Vec<usize>,
    method_next: HashMap<Box<str>, usize>,
    /// Recorded listen key -> the id the client's own listen carries.
    live_subs: HashMap<String, Id>,
    cancelled_subs: HashSet<String>,
    stats: Stats,
}

impl Session {
    /// `redactor` must hold the rules the cassette was recorded under (its config hash checked by
    /// the caller); it redacts incoming requests when the cassette is redacted, and every
    /// diagnosis always.
    pub fn new(index: Index, redactor: Redactor, on_miss: OnMiss) -> Session {
        Session {
            consumed: vec![false; index.pairs.len()],
            fp_next: vec![0; index.fp_info.len()],
            listen_next: vec![0; index.fp_info.len()],
            method_next: HashMap::new(),
            live_subs: HashMap::new(),
            cancelled_subs: HashSet::new(),
            stats: Stats::default(),
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

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
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
            Message::Request(request) => self.request(request),
        }
    }

    fn request(&mut self, req: &Request) -> Exchange {
        let method = req.method.as_str();
        let listen = method == LISTEN_METHOD;
        let method_only = METHOD_ONLY.contains(&method);
        let shaped = self.shape(method, req.params.as_ref());
        let mut fp = if method_only {
            self.index.fps.get(method).copied()
        } else {
            self.index
                .fps
                .get(fingerprint(method, shaped.as_deref()).as_str())
                .copied()
        };
        // The request as sent: a recorded request is a fixed point of redaction, so an exact hit
        // here is the hit the redacted request would have had, without paying for redaction.
        if !listen {
            if let Some(p) = fp.and_then(|f| self.take_exact(f)) {
                return self.serve(req, p, Outcome::Answered);
            }
        }
        let mut effective: Option<Value> = shaped.map(Cow::into_owned);
        if self.index.redact_requests && !method_only {
            if let Some(params) = req.params.as_ref() {
                let (mut redacted, changed) = self.redactor.redact_value(params);
                if changed > 0 {
                    self.index.volatile.drop_from(method, &mut redacted);
                    fp = self
                        .index
                        .fps
                        .get(fingerprint(method, Some(&redacted)).as_str())
                        .copied();
                    effective = Some(redacted);
                    if !listen {
                        if let Some(p) = fp.and_then(|f| self.take_exact(f)) {
                            return self.serve(req, p, Outcome::Answered);
                        }
                    }
                }
            }
        }
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
                if let Some(&last) = info.responses.last() {
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
        let reason = diagnose(&self.index, method, effective.as_ref(), fp);
        let diagnosis = format_miss(&reason, &self.redactor);
        if self.on_miss == OnMiss::Warn && !is_mrtr_retry(effective.as_ref()) && method != TASKS_GET
        {
            if let Some(p) = self.take_same_method(method) {
                self.stats.borrowed += 1;
                return self.serve(req, p, Outcome::Borrowed { reason, diagnosis });
            }
        }
        self.stats.misses += 1;
        let shown_method = self.redactor.redact_text(method).0;
        let mut ex = Exchange::silent();
        ex.answer = Some(Outbound::Owned(miss_answer(
            &req.id,
            &shown_method,
            &diagnosis,
        )));
        ex.outcome = Outcome::Missed { reason, diagnosis };
        ex
    }

    /// Params with declared-volatile fields dropped (a copy only when a declaration applies).
    fn shape<'p>(&self, method: &str, params: Option<&'p Value>) -> Option<Cow<'p, Value>> {
        let params = params?;
        if !self.index.volatile.applies_to(method) {
            return Some(Cow::Borrowed(params));
        }
        let mut owned = params.clone();
        self.index.volatile.drop_from(method, &mut owned);
        Some(Cow::Owned(owned))
    }

    fn take_exact(&mut self, fp: usize) -> Option<usize> {
        let pool = &self.index.fp_info[fp].responses;
        let cursor = &mut self.fp_next[fp];
        while let Some(&p) = pool.get(*cursor) {
            *cursor += 1;
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
            if !self.consumed[p] {
                self.consumed[p] = true;
                return Some(p);
            }
        }
        None
    }

    fn take_listen(&mut self, fp: usize) -> Option<usize> {
        let pool = &self.index.fp_info[fp].listens;
        let cursor = &mut self.listen_next[fp];
        let l = *pool.get(*cursor)?;
        *cursor += 1;
        Some(l)
    }

    /// Answers `req` with recorded pair `p`, releasing the server frames anchored to it.
    fn serve(&mut self, req: &Request, p: usize, outcome: Outcome) -> Exchange {
        let anchor = self.index.pairs[p].anchor;
        let before = self.release_before(anchor);
        let after_frames = self.index.schedule.after.remove(&anchor);
        let (streamed, answer) = match &self.index.pairs[p].answer {
            Answer::Frame(rec) => (Vec::new(), rekey_response(rec, &req.id)),
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
                (streamed, rekey_response(last, &req.id))
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
fn rekey_response(rec: &Recorded, id: &Id) -> Outbound {
    match rec.spans().id.clone() {
        Some(span) => Outbound::Spliced {
            text: rec.text().clone(),
            span,
            value: id.to_json(),
        },
        None => rewrite(rec, |v| {
            if let Some(obj) = v.as_object_mut() {
                obj.insert("id".to_owned(), id.to_value());
            }
        }),
    }
}

/// A recorded subscription frame carrying the client's listen id: the tag of a notification, and
/// both the id and the tag of a graceful closure.
fn rekey_subscription(rec: &Recorded, live: &Id) -> Outbound {
    let spans = rec.spans();
    if !rec.is_response() {
        return match spans.tag.clone() {
            Some((span, _)) => Outbound::Spliced {
                text: rec.text().clone(),
                span,
                value: live.to_json(),
            },
            None => Outbound::Verbatim(rec.text().clone()),
        };
    }
    match (spans.id.clone(), spans.tag.clone()) {
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
        (Some(span), None) if !spans.has_meta => Outbound::Spliced {
            text: rec.text().clone(),
            span,
            value: live.to_json(),
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
