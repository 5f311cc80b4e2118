//! Whether a cassette's header agrees with its frames: a modern-era header over a recorded
//! handshake, a `sessioned` flag or a standalone GET stream; a stdio header carrying a `url` or
//! over streamed (`chunks`) answers; an HTTP header carrying a spawn `command`.
//!
//! One rule with two readers: `lint` reports each contradiction as an error, replay prints it as a
//! warning and serves the cassette anyway. Both gather [`Observed`] while they read the entries.

use super::{Header, Transport};
use crate::protocol::Era;

/// What the frames show about the session that made them, gathered while reading the entries.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Observed {
    /// An `initialize` request was recorded.
    pub initialize: bool,
    /// A `chunks` entry (an answer streamed over HTTP) was recorded.
    pub chunks: bool,
    /// A stream was recorded as `via:"get"` (the standalone GET stream).
    pub get_stream: bool,
}

impl Observed {
    /// Notes a `chunks` entry.
    pub fn chunks(&mut self, via_get: bool) {
        self.chunks = true;
        self.get_stream |= via_get;
    }
}

/// One way the header and the frames disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contradiction {
    /// A short stable name (`era-handshake`, `transport-url`, ...), the lint finding's rule.
    pub rule: &'static str,
    pub message: &'static str,
}

/// Every contradiction between `header` and what the frames showed, in a fixed order.
pub fn contradictions(header: &Header, observed: &Observed) -> Vec<Contradiction> {
    let mut out = Vec::new();
    let mut found = |rule, message| out.push(Contradiction { rule, message });
    if header.effective_era() == Era::Modern {
        if observed.initialize {
            found(
                "era-handshake",
                "era is \"modern\" but the cassette records an `initialize` request; the modern era has no handshake",
            );
        }
        if header.sessioned() {
            found(
                "era-sessioned",
                "era is \"modern\" but the header says `sessioned`; the modern era removed sessions entirely",
            );
        }
        if observed.get_stream {
            found(
                "era-get-stream",
                "era is \"modern\" but a stream is recorded as `via:\"get\"`; the modern era removed the standalone GET stream",
            );
        }
    }
    match header.transport() {
        Transport::Stdio => {
            if header.url().is_some() {
                found(
                    "transport-url",
                    "transport is \"stdio\" but the header carries a `url`",
                );
            }
            if observed.chunks {
                found(
                    "transport-chunks",
                    "transport is \"stdio\" but the cassette records a streamed answer; `chunks` entries only come from HTTP",
                );
            }
        }
        Transport::Http => {
            if header.command().is_some() {
                found(
                    "transport-command",
                    "transport is \"http\" but the header carries a spawn `command`",
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn header(text: &str) -> Header {
        let object = crate::cassette::RawObject::parse(text).unwrap();
        Header::from_object(object, Path::new("t.jsonl")).unwrap()
    }

    fn rules(header: &Header, observed: Observed) -> Vec<&'static str> {
        contradictions(header, &observed)
            .iter()
            .map(|c| c.rule)
            .collect()
    }

    #[test]
    fn each_contradiction_needs_its_fact() {
        let all = Observed {
            initialize: true,
            chunks: true,
            get_stream: true,
        };
        let modern_http = header(
            r#"{"type":"header","cassetteVersion":2,"transport":"http","era":"modern","sessioned":true,"command":["x"]}"#,
        );
        assert_eq!(
            rules(&modern_http, all),
            [
                "era-handshake",
                "era-sessioned",
                "era-get-stream",
                "transport-command"
            ]
        );
        let stdio_url =
            header(r#"{"type":"header","cassetteVersion":2,"transport":"stdio","url":"http://x"}"#);
        assert_eq!(
            rules(&stdio_url, all),
            ["transport-url", "transport-chunks"]
        );
        let legacy = header(r#"{"type":"header","cassetteVersion":2,"transport":"http"}"#);
        assert!(rules(&legacy, all).is_empty());
        let mut seen = Observed::default();
        seen.chunks(false);
        assert_eq!((seen.chunks, seen.get_stream), (true, false));
        seen.chunks(true);
        assert!(seen.get_stream);
    }
}
