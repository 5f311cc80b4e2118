//! Server-sent events, both ways: an incremental parser for streams we relay or read (the record
//! proxy, the HTTP client) and the writer replay answers with.
//!
//! The parser follows the WHATWG event-stream rules (docs/http.md, "Server-sent events"): lines
//! end in CR, LF or CRLF, and a CRLF split across two reads is one line end; a leading BOM is
//! dropped; `:` lines are comments; `data` lines accumulate, joined by LF; `id` containing NUL
//! is ignored; `retry` must be all ASCII digits; a blank line dispatches, and a block with no
//! `data` dispatches nothing; a block still open when the stream ends is dropped. It is fed byte
//! slices as they arrive and never looks back, so its cost is linear in the stream, and it holds
//! at most one line and one event, each bounded by `limit` bytes.

use std::mem;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event` field, or `message` when the block named none.
    pub kind: String,
    /// The `data` lines joined by LF (no trailing LF).
    pub data: String,
    /// The last event id seen so far on this stream (it persists across events).
    pub id: Option<String>,
    /// A `retry` value in this block, in milliseconds.
    pub retry: Option<u64>,
}

/// A line or an event grew past the parser's byte limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event-stream line or event exceeds {limit} bytes")]
pub struct TooLarge {
    pub limit: usize,
}

/// An incremental event-stream parser.
#[derive(Debug)]
pub struct Parser {
    limit: usize,
    line: Vec<u8>,
    /// The previous chunk ended in CR: an LF starting the next chunk belongs to that line end.
    after_cr: bool,
    /// Nothing has been fed yet: a BOM may still open the stream.
    at_start: bool,
    data: Vec<u8>,
    has_data: bool,
    kind: Option<String>,
    retry: Option<u64>,
    last_id: Option<String>,
}

impl Parser {
    /// A parser that refuses any line or event over `limit` bytes.
    pub fn new(limit: usize) -> Parser {
        Parser {
            limit,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            data: Vec::new(),
            has_data: false,
            kind: None,
            retry: None,
            last_id: None,
        }
    }

    /// Feeds the next bytes of the stream; every event they complete is pushed onto `events`.
    pub fn feed(&mut self, mut bytes: &[u8], events: &mut Vec<Event>) -> Result<(), TooLarge> {
        // An empty read (an empty body frame) changes nothing; in particular it must not forget
        // a CR that ended the previous read, or the LF after it would read as a blank line.
        if bytes.is_empty() {
            return Ok(());
        }
        if self.at_start {
            // The BOM may itself arrive split; buffer until three bytes decide it.
            self.line.extend_from_slice(bytes);
            if self.line.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.line) {
                return Ok(());
            }
            self.at_start = false;
            let held = mem::take(&mut self.line);
            let held = held.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&held);
            return self.feed_body(held, events);
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        self.feed_body(bytes, events)
    }

    fn feed_body(&mut self, mut bytes: &[u8], events: &mut Vec<Event>) -> Result<(), TooLarge> {
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            self.push_line_part(&bytes[..end])?;
            let line = mem::take(&mut self.line);
            self.process_line(&line, events)?;
            self.line = line;
            self.line.clear();
            if bytes[end] == b'\r' {
                match bytes.get(end + 1) {
                    Some(b'\n') => bytes = &bytes[end + 2..],
                    Some(_) => bytes = &bytes[end + 1..],
                    None => {
                        self.after_cr = true;
                        return Ok(());
                    }
                }
            } else {
                bytes = &bytes[end + 1..];
            }
        }
        self.push_line_part(bytes)
    }

    fn push_line_part(&mut self, part: &[u8]) -> Result<(), TooLarge> {
        if self.line.len() + part.len() > self.limit {
            return Err(TooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(part);
        Ok(())
    }

    fn process_line(&mut self, line: &[u8], events: &mut Vec<Event>) -> Result<(), TooLarge> {
        if line.is_empty() {
            self.dispatch(events);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(TooLarge { limit: self.limit });
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.kind = Some(String::from_utf8_lossy(value).into_owned()),
            // An id holding NUL is ignored; retry takes ASCII digits only.
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<Event>) {
        let kind = self.kind.take();
        let retry = self.retry.take();
        if !self.has_data {
            self.data.clear();
            return;
        }
        self.has_data = false;
        let data = mem::take(&mut self.data);
        events.push(Event {
            kind: kind.unwrap_or_else(|| "message".to_owned()),
            data: match String::from_utf8(data) {
                Ok(text) => text,
                Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
            },
            id: self.last_id.clone(),
            retry,
        });
    }
}

/// Appends one `message` event carrying `data` (a JSON text) to `out`: one `data:` line per line
/// of the text, then the blank line that dispatches it.
pub fn write_event(out: &mut Vec<u8>, data: &str) {
    for line in data.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_in(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = Parser::new(1 << 20);
        let mut events = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut events).unwrap();
        }
        events
    }

    fn datas(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn whatwg_examples() {
        // The specification's own examples.
        let e = parse_in(&[b"data: YHOO\ndata: +2\ndata: 10\n\n"]);
        assert_eq!(datas(&e), ["YHOO\n+2\n10"]);
        let e = parse_in(&[b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"]);
        assert_eq!(datas(&e), ["first event", "second event", " third event"]);
        assert_eq!(e[0].id.as_deref(), Some("1"));
        assert_eq!(e[1].id.as_deref(), Some(""));
        let e = parse_in(&[b"data\n\ndata\ndata\n\ndata:"]);
        assert_eq!(datas(&e), ["", "\n"]);
    }

    #[test]
    fn line_ends_of_every_kind_even_split_across_reads() {
        for chunks in [
            &[&b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"[..]][..],
            &[b"data: a\r", b"\n\r", b"\ndata: b\r", b"\rdata: c\n", b"\n"],
            &[b"da", b"ta: a\r\n", b"\r\nd", b"ata: b\r\r", b"data: c\n\n"],
            // An empty read between a CR and its LF (found by the `sse` fuzzer).
            &[
                b"data: a\r",
                b"",
                b"\n\r",
                b"",
                b"",
                b"\ndata: b\r\r",
                b"data: c\n\n",
            ],
        ] {
            assert_eq!(datas(&parse_in(chunks)), ["a", "b", "c"], "{chunks:?}");
        }
    }

    #[test]
    fn event_kind_retry_bom_and_nul_ids() {
        let e = parse_in(&[
            b"\xEF\xBB",
            b"\xBFevent: ping\nretry: 15\ndata: x\n\nretry: 1a\nid: a\0b\ndata: y\n\n",
        ]);
        assert_eq!(e[0].kind, "ping");
        assert_eq!(e[0].retry, Some(15));
        assert_eq!(e[1].kind, "message");
        assert_eq!(e[1].retry, None);
        assert_eq!(e[1].id, None);
    }

    #[test]
    fn an_unterminated_block_is_dropped_and_limits_hold() {
        assert_eq!(datas(&parse_in(&[b"data: done\n\ndata: half"])), ["done"]);
        let mut parser = Parser::new(8);
        assert_eq!(
            parser.feed(b"data: 123456789", &mut Vec::new()),
            Err(TooLarge { limit: 8 })
        );
        let mut parser = Parser::new(10);
        let mut events = Vec::new();
        parser.feed(b"data:1234\n", &mut events).unwrap();
        assert!(parser.feed(b"data:1234\ndata:1234\n", &mut events).is_err());
    }

    proptest! {
        /// Whatever the read boundaries, the same events come out, and what the writer writes
        /// reads back as the text it was given.
        #[test]
        fn reads_are_boundary_independent(
            texts in proptest::collection::vec("[ -~\n]{0,40}", 0..6),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut stream = Vec::new();
            for text in &texts {
                write_event(&mut stream, text);
            }
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= stream.len()).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut at = 0;
            for cut in cuts {
                chunks.push(&stream[at..cut]);
                at = cut;
            }
            chunks.push(&stream[at..]);
            let events = parse_in(&chunks);
            prop_assert_eq!(datas(&events), texts.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
}
