//! Answers relayed as they arrive, with a copy for the recorder: a body that forwards each
//! frame of the upstream body to the client and shows its bytes to an [`Observer`] first.
//!
//! Nothing is buffered on the way: an SSE answer reaches the client event by event while the
//! recorder parses it. The observer hears the end of the body however it comes: the upstream
//! finished, the upstream failed, the proxy is shutting down, or the client went away (the body
//! is dropped unfinished).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};

use crate::record::capture::MAX_CAPTURE_LINE;
use crate::record::recorder::Tap;
use crate::transport::http::sse;

/// What watches an answer go by.
pub(super) trait Observer: Send + 'static {
    /// Bytes about to go to the client.
    fn data(&mut self, bytes: &[u8]);
    /// The body ended, whole or not; called once.
    fn end(&mut self);
}

/// Nothing to capture (DELETE, an HTML page, a compressed answer).
pub(super) struct Ignore;

impl Observer for Ignore {
    fn data(&mut self, _: &[u8]) {}
    fn end(&mut self) {}
}

/// A JSON answer: one message, captured when the body is complete.
pub(super) struct JsonAnswer {
    tap: Tap,
    /// The exchange it answers, as numbered for the recorder.
    exchange: u64,
    /// The status it came with (the capture records it when the request implies another).
    status: u16,
    body: Vec<u8>,
}

impl JsonAnswer {
    pub(super) fn new(tap: Tap, exchange: u64, status: u16) -> JsonAnswer {
        JsonAnswer {
            tap,
            exchange,
            status,
            body: Vec::new(),
        }
    }
}

impl Observer for JsonAnswer {
    fn data(&mut self, bytes: &[u8]) {
        // An answer over the capture limit is relayed whole and recorded as an over-long raw
        // entry (see `capture::message_line`); holding more than one byte past the limit would
        // only cost memory.
        let room = (MAX_CAPTURE_LINE + 1).saturating_sub(self.body.len());
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn end(&mut self) {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // Copied into the capture queue: a slice of hyper's frames held there instead would
        // keep their whole read buffers for as long as the queue waits (peak RSS 9 → 15 MiB
        // under load, docs/benchmarks.md).
        self.tap.answer(self.exchange, &self.body, self.status);
        self.body = Vec::new();
    }
}

/// An SSE answer: parsed as it streams, each event's data handed to the recorder as it
/// completes, one `chunks` entry when the stream ends.
pub(super) struct EventStream {
    tap: Tap,
    key: u64,
    /// `None` once the stream broke the parser's limit: the rest is relayed, not recorded.
    parser: Option<sse::Parser>,
    events: Vec<sse::Event>,
}

impl EventStream {
    pub(super) fn new(tap: Tap, key: u64) -> EventStream {
        EventStream {
            tap,
            key,
            parser: Some(sse::Parser::new(MAX_CAPTURE_LINE)),
            events: Vec::new(),
        }
    }
}

impl Observer for EventStream {
    fn data(&mut self, bytes: &[u8]) {
        let Some(parser) = &mut self.parser else {
            return;
        };
        if let Err(err) = parser.feed(bytes, &mut self.events) {
            eprintln!(
                "mcp-cassette: a streamed answer was relayed whole but recorded only up to here: {err}"
            );
            self.parser = None;
        }
        for event in self.events.drain(..) {
            self.tap.stream_event(self.key, event.data.as_bytes());
        }
    }

    fn end(&mut self) {
        self.tap.stream_end(self.key);
    }
}

/// Ends a body early: the proxy is shutting down.
pub(super) type Stop = Pin<Box<dyn Future<Output = ()> + Send + Sync>>;

/// The upstream body, relayed frame by frame, seen by `O` on the way.
pub(super) struct Relay<O: Observer> {
    inner: Incoming,
    observer: O,
    stop: Option<Stop>,
    ended: bool,
}

impl<O: Observer> Relay<O> {
    /// `stop`, when given, ends the body when it resolves (streams held open by the upstream
    /// must not outlive the proxy's shutdown).
    pub(super) fn new(inner: Incoming, observer: O, stop: Option<Stop>) -> Relay<O> {
        Relay {
            inner,
            observer,
            stop,
            ended: false,
        }
    }

    fn end(&mut self) {
        if !self.ended {
            self.ended = true;
            self.observer.end();
        }
    }
}

impl<O: Observer> Drop for Relay<O> {
    fn drop(&mut self) {
        // The client went away mid-answer, or the runtime is going down: what was seen is kept.
        self.end();
    }
}

impl<O: Observer + Unpin> Body for Relay<O> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        if let Some(stop) = &mut this.stop {
            if stop.as_mut().poll(cx).is_ready() {
                this.end();
                return Poll::Ready(None);
            }
        }
        loop {
            return match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(None) => {
                    this.end();
                    Poll::Ready(None)
                }
                Poll::Ready(Some(Err(err))) => {
                    eprintln!("mcp-cassette: upstream request failed: {err}");
                    this.end();
                    Poll::Ready(None)
                }
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => {
                        this.observer.data(&data);
                        // A body whose length was announced is complete now: the copy is
                        // handed over before the client can see the last byte and send its
                        // next request.
                        if this.inner.is_end_stream() {
                            this.end();
                        }
                        Poll::Ready(Some(Ok(Frame::data(data))))
                    }
                    // Trailers are hop-by-hop here (the `trailer` header is not forwarded).
                    Err(_) => continue,
                },
            };
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }

    fn size_hint(&self) -> SizeHint {
        if self.stop.is_some() {
            // May be cut short at shutdown: announce no length.
            SizeHint::default()
        } else {
            self.inner.size_hint()
        }
    }
}
