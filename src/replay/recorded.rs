//! A recorded server frame, kept ready to send again, the answer a recorded request got, and a
//! request the server sent with the client's answer to it.
//!
//! Below both the index (which stores them) and the schedule (which places them between answers),
//! so neither has to import the other for its vocabulary.

use std::sync::Arc;

use serde_json::Value;

use super::wire::{Spans, frame_spans};
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::protocol::ACKNOWLEDGED_METHOD;

/// A recorded server frame, ready to send again.
#[derive(Debug, Clone)]
pub struct Recorded {
    text: Arc<str>,
    spans: Spans,
    kind: FrameKind,
    /// A `notifications/subscriptions/acknowledged`.
    ack: bool,
    /// For a request the server sent, its number in [`Index::asks`](super::Index::asks);
    /// [`NO_ASK`] otherwise. A plain `u32` rather than an `Option`: it fits in the padding, so a
    /// recorded frame stays 48 bytes.
    ask: u32,
}

/// [`Recorded`]'s `ask` when the frame is no request from the server.
const NO_ASK: u32 = u32::MAX;

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
                ask: NO_ASK,
            },
        }
    }

    pub fn from_frame(frame: &Frame) -> Recorded {
        // A copy, not the frame's shared text: a frame read from a cassette shares its whole
        // line, envelope included, and the index keeps every answer for the life of the replay.
        let text: Arc<str> = Arc::from(frame.text());
        let spans = frame_spans(frame);
        Recorded {
            text,
            spans,
            kind: frame.kind(),
            ack: frame.kind() == FrameKind::Notification
                && frame.method() == Some(ACKNOWLEDGED_METHOD),
            ask: NO_ASK,
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

    /// For a request the server sent, its number among the recording's server requests
    /// (docs/replay.md, "Requests from the server").
    pub fn ask(&self) -> Option<usize> {
        (self.ask != NO_ASK).then_some(self.ask as usize)
    }

    /// Numbers this request from the server (see [`Recorded::ask`]).
    pub fn set_ask(&mut self, n: usize) {
        self.ask = u32::try_from(n).unwrap_or(NO_ASK);
    }

    /// Whether this is a subscription's acknowledgment.
    pub fn is_ack(&self) -> bool {
        self.ack
    }

    pub fn is_response(&self) -> bool {
        self.kind.is_response()
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

/// A request the recorded server sent its client, and the client's recorded answer.
#[derive(Debug)]
pub struct Ask {
    /// The request as recorded (its id is replaced when it is sent).
    frame: Recorded,
    method: Box<str>,
    /// The client's response frame, as recorded; `None` when it never answered.
    answer: Option<Box<str>>,
    /// Recorded inside an SSE stream (HTTP) rather than as a frame of its own.
    streamed: bool,
}

impl Ask {
    pub fn new(frame: &Recorded, answer: Option<Box<str>>, streamed: bool) -> Ask {
        let method = serde_json::from_str::<Value>(frame.text())
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(Box::from))
            .unwrap_or_default();
        Ask {
            frame: frame.clone(),
            method,
            answer,
            streamed,
        }
    }

    pub fn method(&self) -> &str {
        &self.method
    }

    pub fn frame(&self) -> &Recorded {
        &self.frame
    }

    /// The client's recorded response, when the recording holds one.
    pub fn recorded_answer(&self) -> Option<&str> {
        self.answer.as_deref()
    }

    pub fn streamed(&self) -> bool {
        self.streamed
    }
}
