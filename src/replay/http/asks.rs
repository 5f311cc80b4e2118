//! Requests from the recorded server (`sampling/createMessage`, `elicitation/create`,
//! `roots/list`, a `ping`) sent on an HTTP session, and the client's answers to them (docs/http.md,
//! "Requests from the server"; the rules are the stdio ones, docs/replay.md).
//!
//! An exchange holding such requests is sent by a task of its own, in recorded order: the call's
//! own frames on the POST's event stream, the unsolicited ones on the streams the session holds
//! open, and at each request a wait for the client's answer. The answer comes as a POST of its
//! own, which [`answer`] matches to the request and answers 202. Only that task waits: the
//! session's other requests, and every other session, are served meanwhile.
//!
//! A request is registered as waiting before it is written, so no answer can arrive ahead of it;
//! the session's lock is taken to register, to route a frame and to settle an answer, never
//! across an await.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::Replay;
use super::routing::{accepted, event_stream, json};
use super::sessions::{ClientSession, State};
use super::streams::event;
use crate::replay::index::{Answer, Pair};
use crate::replay::server_request::{Asked, answers};
use crate::replay::session::Exchange;
use crate::replay::wire::Outbound;
use crate::transport::http::inbound::{self, Body};

/// Events the POST's stream may hold for a slow reader; the task waits when it is full.
const STREAM_BACKLOG: usize = 16;

/// A request sent to the client, waiting for its answer.
#[derive(Debug)]
pub struct Waiting {
    pub asked: Asked,
    /// Fired when the answer comes; dropped unfired when the session ends first.
    done: oneshot::Sender<()>,
}

/// The requests one session waits on (a handful at most: one per call in flight).
#[derive(Debug, Default)]
pub struct Pending(Vec<Waiting>);

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every request still waiting, taken out.
    pub fn drain(&mut self) -> impl Iterator<Item = Waiting> + '_ {
        self.0.drain(..)
    }

    fn remove(&mut self, id: &str) -> Option<Waiting> {
        let at = self.0.iter().position(|w| w.asked.id == id)?;
        Some(self.0.swap_remove(at))
    }

    /// The request `message` answers, taken out: the one its id names freshly first, else one
    /// recorded under that id.
    fn answered_by(&mut self, message: &Value) -> Option<Waiting> {
        let fresh = message.get("id").and_then(Value::as_str);
        let at = self
            .0
            .iter()
            .position(|w| fresh == Some(w.asked.id.as_str()) && answers(message, &w.asked))
            .or_else(|| self.0.iter().position(|w| answers(message, &w.asked)))?;
        Some(self.0.swap_remove(at))
    }
}

/// A POST carrying the client's answer to a request that waits: compared with the recorded
/// answer (a difference is said on stderr), the waiting task goes on, and the POST gets 202.
/// `None` when `text` answers nothing that waits (then it is handled as any other message).
pub fn answer(
    replay: &Replay,
    label: u64,
    state: &mut State,
    text: &str,
) -> Option<Response<Body>> {
    if state.asks.is_empty() {
        return None;
    }
    let message: Value = serde_json::from_str(text).ok()?;
    let waiting = state.asks.answered_by(&message)?;
    if let Some(diagnosis) = state.session.ask_answered(&waiting.asked, &message) {
        let method = state.session.ask_method(&waiting.asked).to_owned();
        replay.notes.note(&format!(
            "session {label}: client answer differs for \"{method}\": {diagnosis}"
        ));
    }
    let _ = waiting.done.send(());
    Some(accepted())
}

/// Sends `exchange`, which holds requests from the server, on a task of its own. `respond` gets
/// the POST's response as soon as it can go out: an event stream at once, a JSON answer once the
/// requests recorded before it are settled. Without `respond` the response went out already (a
/// subscription's stream, opened with its acknowledgment), and only the frames around it are
/// left to send.
pub fn spawn(
    replay: Arc<Replay>,
    client: Arc<ClientSession>,
    exchange: Exchange,
    spacing: Option<Vec<Duration>>,
    respond: Option<oneshot::Sender<Response<Body>>>,
) {
    let pair = exchange.pair.map(|p| &replay.index.pairs[p]);
    let streamed = pair.is_some_and(|p| matches!(p.answer, Answer::Stream(_)));
    let status = pair
        .and_then(Pair::status)
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    let mut walk = Walk {
        replay,
        client,
        stream: None,
        respond,
        status,
        ended: false,
    };
    if streamed {
        if let Some(respond) = walk.respond.take() {
            let (tx, body) = inbound::streaming(STREAM_BACKLOG);
            let _ = respond.send(event_stream(body));
            walk.stream = Some(tx);
        }
    }
    tokio::spawn(walk.run(exchange, spacing.unwrap_or_default()));
}

/// Where a frame of the exchange goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Unsolicited: the session's held-open streams.
    Scheduled,
    /// Inside the call's answer: the POST's event stream.
    Streamed,
    /// The call's answer itself.
    Answer,
}

/// One exchange on its way out.
struct Walk {
    replay: Arc<Replay>,
    client: Arc<ClientSession>,
    /// The POST's event stream, until the call's answer has gone out on it.
    stream: Option<mpsc::Sender<Bytes>>,
    /// The POST's response, until it is sent (a JSON answer).
    respond: Option<oneshot::Sender<Response<Body>>>,
    /// The recorded status of a JSON answer.
    status: StatusCode,
    /// The session ended (deleted, replaced, shut down): no request is sent any more, and no
    /// unsolicited frame routed; the call's own frames still go out.
    ended: bool,
}

impl Walk {
    /// `spacing`: the pause before each frame of the POST's stream (the streamed ones, then the
    /// answer); missing entries are no pause.
    async fn run(mut self, exchange: Exchange, spacing: Vec<Duration>) {
        let Exchange {
            before,
            streamed,
            answer,
            after,
            asks,
            ..
        } = exchange;
        let frames = before
            .into_iter()
            .map(|f| (f, Slot::Scheduled))
            .chain(streamed.into_iter().map(|f| (f, Slot::Streamed)))
            .chain(answer.into_iter().map(|f| (f, Slot::Answer)))
            .chain(after.into_iter().map(|f| (f, Slot::Scheduled)));
        let mut asks = asks.into_iter().peekable();
        let mut gaps = spacing.into_iter();
        for (i, (frame, slot)) in frames.enumerate() {
            while let Some(asked) = asks.next_if(|a| a.at <= i) {
                self.ask(asked).await;
            }
            match slot {
                Slot::Scheduled => self.route(&frame),
                Slot::Streamed => self.on_stream(&frame, gaps.next()).await,
                Slot::Answer => {
                    let gap = gaps.next();
                    self.answer(frame, gap).await;
                }
            }
        }
        for asked in asks {
            self.ask(asked).await;
        }
        // An exchange with no answer of its own (none is made so; a safeguard): the POST still
        // gets a response, an empty stream.
        if let Some(respond) = self.respond.take() {
            let _ = respond.send(event_stream(inbound::empty()));
        }
    }

    /// An unsolicited frame, to the stream that carries it.
    fn route(&mut self, frame: &Outbound) {
        let mut state = self.client.lock();
        if state.ended {
            self.ended = true;
            return;
        }
        state.streams.route(frame, self.replay.get_served);
    }

    /// A frame of the POST's stream, after its pause (cut short by shutdown, as a paced stream's
    /// are).
    async fn on_stream(&mut self, frame: &Outbound, gap: Option<Duration>) {
        let Some(tx) = &self.stream else {
            return;
        };
        let gap = gap.unwrap_or_default();
        let shutdown = &self.replay.shutdown;
        if !gap.is_zero() && !shutdown.is_triggered() {
            tokio::select! {
                () = tokio::time::sleep(gap) => {}
                () = shutdown.wait() => {}
            }
        }
        if tx.send(event(frame)).await.is_err() {
            // The client left: nothing more can reach it on this stream.
            self.stream = None;
        }
    }

    /// The call's answer: the last event of the POST's stream, or the JSON response.
    async fn answer(&mut self, frame: Outbound, gap: Option<Duration>) {
        if self.stream.is_some() {
            self.on_stream(&frame, gap).await;
            // The stream ends with the answer; what follows it travels elsewhere.
            self.stream = None;
        } else if let Some(respond) = self.respond.take() {
            let body = match frame.text() {
                std::borrow::Cow::Borrowed(text) => Bytes::copy_from_slice(text.as_bytes()),
                std::borrow::Cow::Owned(text) => Bytes::from(text),
            };
            let _ = respond.send(json(self.status, body));
        }
    }

    /// Sends one request and waits for its answer: until the client POSTs it, the timeout, the
    /// replay stopping, or the session ending.
    async fn ask(&mut self, asked: Asked) {
        if self.ended {
            return;
        }
        let (done, mut answered) = oneshot::channel();
        let id = asked.id.clone();
        let on_stream = asked.in_answer;
        let request = event(&asked.frame);
        {
            let mut state = self.client.lock();
            if state.ended {
                self.ended = true;
                return;
            }
            let delivered = if on_stream {
                self.stream.as_ref().is_some_and(|tx| !tx.is_closed())
            } else {
                state.streams.route(&asked.frame, self.replay.get_served)
            };
            if !delivered {
                // No stream left to carry it (the client left the POST's stream, or holds no
                // GET stream open): it was not sent, and nothing waits.
                state.session.ask_undelivered(&asked);
                return;
            }
            state.asks.0.push(Waiting { asked, done });
        }
        if on_stream {
            let sent = match &self.stream {
                Some(tx) => tx.send(request).await.is_ok(),
                None => false,
            };
            if !sent {
                self.stream = None;
                self.give_up(
                    &id,
                    "the client closed the stream before the request reached it",
                    answered,
                );
                return;
            }
        }
        let timeout = self.replay.ask_timeout;
        let why = tokio::select! {
            settled = &mut answered => {
                // Dropped unfired: the session ended while the request waited.
                self.ended = settled.is_err();
                return;
            }
            () = tokio::time::sleep(timeout) => format!("no answer within {} ms", timeout.as_millis()),
            () = self.replay.shutdown.wait() => "the replay was stopped".to_owned(),
        };
        self.give_up(&id, &why, answered);
    }

    /// Stops waiting for request `id` (`why`: the timeout, shutdown): a failure when the
    /// recording holds the client's answer, said on stderr as on stdio.
    fn give_up(&mut self, id: &str, why: &str, mut answered: oneshot::Receiver<()>) {
        let mut state = self.client.lock();
        let Some(waiting) = state.asks.remove(id) else {
            // Settled at the same moment: answered (fired), or the session ended (dropped).
            self.ended = answered.try_recv().is_err();
            return;
        };
        let method = state.session.ask_method(&waiting.asked).to_owned();
        if state.session.ask_unanswered(&waiting.asked) {
            let label = self.client.label;
            self.replay.notes.note(&format!(
                "session {label}: client answer missing for \"{method}\": {why}; the recording holds the client's answer"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn waiting(n: u64, recorded: Value) -> (Waiting, oneshot::Receiver<()>) {
        let (done, fired) = oneshot::channel();
        let asked = Asked {
            at: 0,
            ask: 0,
            id: format!("mcp-cassette-replay-{n}"),
            recorded_id: Some(recorded),
            frame: Outbound::Owned(String::new()),
            in_answer: true,
        };
        (Waiting { asked, done }, fired)
    }

    #[test]
    fn an_answer_takes_the_request_its_fresh_id_names_before_a_recorded_id() {
        let mut pending = Pending::default();
        // Recorded under id 0 in another session of the recording, and freshly numbered 1 here.
        let (first, _) = waiting(1, json!("mcp-cassette-replay-2"));
        let (second, _) = waiting(2, json!(0));
        pending.0.push(first);
        pending.0.push(second);
        let answer = json!({"jsonrpc": "2.0", "id": "mcp-cassette-replay-2", "result": {}});
        let taken = pending.answered_by(&answer).unwrap();
        assert_eq!(taken.asked.id, "mcp-cassette-replay-2");
        let by_recorded = json!({"jsonrpc": "2.0", "id": "mcp-cassette-replay-2", "result": {}});
        assert_eq!(
            pending.answered_by(&by_recorded).unwrap().asked.id,
            "mcp-cassette-replay-1",
            "then the recorded id"
        );
        assert!(pending.is_empty());
        assert!(
            pending
                .answered_by(&json!({"jsonrpc": "2.0", "id": 5, "result": {}}))
                .is_none()
        );
        let (third, _) = waiting(3, json!(0));
        pending.0.push(third);
        assert!(pending.remove("mcp-cassette-replay-3").is_some());
        assert!(pending.remove("mcp-cassette-replay-3").is_none());
    }
}
