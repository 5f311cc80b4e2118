//! The event streams one client session holds open, and the streamed answers it is sent.
//!
//! A session can hold two kinds of open stream (docs/http.md, "Replay server"): the standalone
//! GET stream of a legacy recording, which carries the recorded server's unsolicited frames, and
//! one stream per `subscriptions/listen` (modern), which carries the frames tagged with that
//! subscription and ends with its recorded graceful closure. Frames the schedule releases are
//! routed here by what they belong to; a frame with no open stream to carry it is counted.
//!
//! Streamed answers to a POST are sent whole, in one write, under `--timing none`; under
//! `--timing recorded` a task writes them chunk by chunk, spaced as recorded, and stops at the
//! first chunk the client is no longer there to read.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::replay::recorded::Recorded;
use crate::replay::wire::Outbound;
use crate::transport::http::inbound::{self, Body, Shutdown};
use crate::transport::http::sse::write_event;

/// Events a held-open stream may have waiting for a slow reader before more are counted as
/// undeliverable. Pushed frames are few (a list change, a subscription's updates); a client that
/// leaves this many unread is not reading.
const HELD_OPEN_BACKLOG: usize = 1024;

/// One frame as an SSE event.
pub fn event(frame: &Outbound) -> Bytes {
    let text = frame.text();
    let mut out = Vec::with_capacity(text.len() + 8);
    write_event(&mut out, &text);
    Bytes::from(out)
}

/// Frames as one SSE body, in order.
pub fn events<'f>(frames: impl IntoIterator<Item = &'f Outbound>) -> Bytes {
    let mut out = Vec::new();
    for frame in frames {
        write_event(&mut out, &frame.text());
    }
    Bytes::from(out)
}

/// A streamed answer sent chunk by chunk, each after the recorded gap since the one before.
/// Shutdown cancels the waits (the rest goes out at once, so the client still gets its answer);
/// a client that went away ends the task at the next chunk.
pub fn paced(chunks: Vec<(Duration, Bytes)>, shutdown: Shutdown) -> Body {
    let (tx, body) = inbound::streaming(4);
    tokio::spawn(async move {
        for (gap, chunk) in chunks {
            if !gap.is_zero() && !shutdown.is_triggered() {
                tokio::select! {
                    () = tokio::time::sleep(gap) => {}
                    () = shutdown.wait() => {}
                }
            }
            if tx.send(chunk).await.is_err() {
                return;
            }
        }
    });
    body
}

/// The held-open streams of one client session.
#[derive(Debug, Default)]
pub struct Streams {
    /// The standalone GET stream, while open.
    get: Option<mpsc::Sender<Bytes>>,
    /// Whether a GET stream was ever opened in this session.
    get_opened: bool,
    /// Frames that came due before the GET stream opened: delivered when it does.
    queued: Vec<Bytes>,
    /// Open subscription streams: the client's listen id (`String(id)`) and the stream.
    listens: Vec<(String, mpsc::Sender<Bytes>)>,
    /// Frames that came due with no stream open to carry them.
    pub undelivered: usize,
}

impl Streams {
    /// Whether any stream is open (a session holding one is not idle).
    pub fn any_open(&self) -> bool {
        self.get.as_ref().is_some_and(|tx| !tx.is_closed())
            || self.listens.iter().any(|(_, tx)| !tx.is_closed())
    }

    /// Opens (or re-opens) the standalone GET stream; what came due before is sent first.
    pub fn open_get(&mut self) -> Body {
        let (tx, body) = inbound::streaming(HELD_OPEN_BACKLOG);
        for event in self.queued.drain(..) {
            if tx.try_send(event).is_err() {
                self.undelivered += 1;
            }
        }
        self.get_opened = true;
        self.get = Some(tx);
        body
    }

    /// Opens the stream of the subscription the client's listen `key` opened, its first event
    /// the acknowledgment (when one was recorded).
    pub fn open_listen(&mut self, key: String, ack: Option<&Outbound>) -> Body {
        let (tx, body) = inbound::streaming(HELD_OPEN_BACKLOG);
        if let Some(ack) = ack {
            let _ = tx.try_send(event(ack));
        }
        self.listens
            .retain(|(open, tx)| *open != key && !tx.is_closed());
        self.listens.push((key, tx));
        body
    }

    /// Ends the stream of the client's listen `key` (the client cancelled it).
    pub fn close_listen(&mut self, key: &str) {
        self.listens.retain(|(open, _)| open != key);
    }

    /// Ends every open stream: their clients see them finish.
    pub fn close_all(&mut self) {
        self.get = None;
        self.listens.clear();
    }

    /// Frames still queued for a GET stream that never opened: counted as undelivered.
    pub fn finish(&mut self) {
        self.undelivered += self.queued.len();
        self.queued.clear();
        self.close_all();
    }

    /// Routes frames the schedule released: a subscription's frames to its stream (its
    /// graceful closure ends it); anything else to the GET stream when the recording has one
    /// (`get_served`), queued until the client opens it.
    pub fn push(&mut self, frames: &[Outbound], get_served: bool) {
        for frame in frames {
            self.route(frame, get_served);
        }
    }

    /// Routes one frame as [`Streams::push`] does; false when no stream could take it (it is
    /// counted as undelivered).
    pub fn route(&mut self, frame: &Outbound, get_served: bool) -> bool {
        let text = frame.text();
        let parsed = Recorded::new(&text);
        let delivered = match parsed.subscription() {
            Some(key) => match self.listens.iter().position(|(k, _)| *k == key) {
                None => false,
                Some(at) => {
                    let sent = self.listens[at].1.try_send(event(frame)).is_ok();
                    // The recorded graceful closure ends the subscription's stream, and so does
                    // a client no longer reading it.
                    if !sent || parsed.is_response() {
                        self.listens.swap_remove(at);
                    }
                    sent
                }
            },
            None if get_served => match &self.get {
                Some(tx) => {
                    let sent = tx.try_send(event(frame)).is_ok();
                    if !sent {
                        self.get = None;
                    }
                    sent
                }
                None if !self.get_opened => {
                    self.queued.push(event(frame));
                    true
                }
                None => false,
            },
            None => false,
        };
        self.undelivered += usize::from(!delivered);
        delivered
    }
}
