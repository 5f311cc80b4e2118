//! A recorded server frame, kept ready to send again, and the answer a recorded request got.
//!
//! Below both the index (which stores them) and the schedule (which places them between answers),
//! so neither has to import the other for its vocabulary.

use std::sync::Arc;

use super::wire::{Spans, find_spans};
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
}

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
            },
        }
    }

    pub fn from_frame(frame: &Frame) -> Recorded {
        // A copy, not the frame's shared text: a frame read from a cassette shares its whole
        // line, envelope included, and the index keeps every answer for the life of the replay.
        let text: Arc<str> = Arc::from(frame.text());
        let spans = find_spans(&text);
        Recorded {
            text,
            spans,
            kind: frame.kind(),
            ack: frame.kind() == FrameKind::Notification
                && frame.method() == Some(ACKNOWLEDGED_METHOD),
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

    /// Whether this is a subscription's acknowledgment.
    pub fn is_ack(&self) -> bool {
        self.ack
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
