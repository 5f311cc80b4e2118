//! Turning the bytes a proxy saw into cassette entries: line splitting, frame/raw
//! classification, redaction, and the passive era decision. Pure: bytes in, entries out.

use std::collections::HashMap;

use crate::cassette::{Dir, Entry};
use crate::json::delimiter;
use crate::jsonrpc::{self, FrameKind, Line};
use crate::protocol::Era;
use crate::redact::Redactor;

/// Longest line captured whole. Longer lines are still forwarded untouched; the cassette gets a
/// raw entry holding the first [`TOO_LONG_HEAD`] bytes and the full length.
pub const MAX_CAPTURE_LINE: usize = 64 * 1024 * 1024;
/// How much of an over-long line the cassette keeps.
pub const TOO_LONG_HEAD: usize = 4096;
/// Requests remembered while waiting for their answer (the era decision pairs by id).
const MAX_PENDING: usize = 100_000;

/// One complete line, or the head of one that exceeded the bound.
#[derive(Debug)]
pub enum Piece<'a> {
    Line(&'a [u8]),
    TooLong { head: &'a [u8], total: usize },
}

/// Splits a byte stream into LF-terminated lines without ever holding more than the bound.
#[derive(Debug)]
pub struct LineSplitter {
    buf: Vec<u8>,
    limit: usize,
    /// Bytes of the current line beyond `limit` that were dropped.
    dropped: usize,
}

impl LineSplitter {
    pub fn new(limit: usize) -> LineSplitter {
        LineSplitter {
            buf: Vec::new(),
            limit,
            dropped: 0,
        }
    }

    /// Feeds bytes; calls `emit` for every line they complete.
    pub fn push(&mut self, mut bytes: &[u8], mut emit: impl FnMut(Piece<'_>)) {
        while !bytes.is_empty() {
            match delimiter::newline(bytes) {
                Some(i) => {
                    self.take(&bytes[..i]);
                    self.emit_line(&mut emit);
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.take(bytes);
                    bytes = &[];
                }
            }
        }
    }

    /// Flushes a trailing line that never got its newline.
    pub fn finish(&mut self, mut emit: impl FnMut(Piece<'_>)) {
        if !self.buf.is_empty() || self.dropped > 0 {
            self.emit_line(&mut emit);
        }
    }

    fn take(&mut self, part: &[u8]) {
        let room = self.limit.saturating_sub(self.buf.len());
        let keep = part.len().min(room);
        self.buf.extend_from_slice(&part[..keep]);
        self.dropped += part.len() - keep;
    }

    fn emit_line(&mut self, emit: &mut impl FnMut(Piece<'_>)) {
        if self.buf.last() == Some(&b'\r') && self.dropped == 0 {
            self.buf.pop();
        }
        if self.dropped > 0 {
            let total = self.buf.len() + self.dropped;
            let head = &self.buf[..self.buf.len().min(TOO_LONG_HEAD)];
            emit(Piece::TooLong { head, total });
        } else {
            emit(Piece::Line(&self.buf));
        }
        self.buf.clear();
        self.dropped = 0;
    }
}

/// Builds entries from lines, redacting them when a redactor is given, and decides the era.
#[derive(Debug)]
pub struct Capture {
    redactor: Option<Redactor>,
    pending: HashMap<String, String>,
    era: Option<Era>,
    saw_initialize: bool,
    secrets: usize,
    warnings: Vec<String>,
}

impl Capture {
    pub fn new(redactor: Option<Redactor>) -> Capture {
        Capture {
            redactor,
            pending: HashMap::new(),
            era: None,
            saw_initialize: false,
            secrets: 0,
            warnings: Vec::new(),
        }
    }

    /// The era, once the first successful answer decided it.
    pub fn era(&self) -> Option<Era> {
        self.era
    }

    /// Whether the client sent an `initialize` request in this session.
    pub fn saw_initialize(&self) -> bool {
        self.saw_initialize
    }

    /// How many secrets were replaced so far.
    pub fn secrets(&self) -> usize {
        self.secrets
    }

    /// Warnings for stderr gathered since the last call (e.g. an over-long line).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The entry for one piece of one direction, or `None` for a blank line.
    pub fn piece(&mut self, t: u64, dir: Dir, piece: Piece<'_>) -> Option<Entry> {
        match piece {
            Piece::Line(bytes) => self.line(t, dir, bytes),
            Piece::TooLong { head, total } => {
                self.warnings.push(format!(
                    "mcp-cassette: a {total}-byte line ({dir}) exceeds the {} MiB capture limit; it was forwarded untouched and recorded as a raw entry holding its first {} bytes",
                    MAX_CAPTURE_LINE / (1024 * 1024),
                    head.len()
                ));
                let text = String::from_utf8_lossy(head);
                let data = self.redact_raw(&text);
                let mut entry = Entry::new_raw(t, dir, data);
                entry.set_member("truncatedFrom", &total);
                Some(entry)
            }
        }
    }

    fn line(&mut self, t: u64, dir: Dir, bytes: &[u8]) -> Option<Entry> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                self.warnings.push(format!(
                    "mcp-cassette: a line ({dir}) is not valid UTF-8; it was forwarded untouched and recorded as a raw entry with U+FFFD in place of the bad bytes"
                ));
                let lossy = String::from_utf8_lossy(bytes).into_owned();
                let data = self.redact_raw(&lossy);
                return Some(Entry::new_raw(t, dir, data));
            }
        };
        match jsonrpc::classify(&text) {
            Line::Frame(frame) => {
                self.observe(dir, &frame);
                let frame = match &self.redactor {
                    Some(r) => match r.redact_frame(&frame) {
                        Some((redacted, n)) => {
                            self.secrets += n;
                            redacted
                        }
                        None => frame,
                    },
                    None => frame,
                };
                Some(Entry::new_frame(t, dir, frame))
            }
            Line::Raw(line) => {
                let data = self.redact_raw(&line);
                Some(Entry::new_raw(t, dir, data))
            }
        }
    }

    fn redact_raw(&mut self, line: &str) -> String {
        match &self.redactor {
            Some(r) => {
                let (data, n) = r.redact_raw_line(line);
                self.secrets += n;
                data
            }
            None => line.to_owned(),
        }
    }

    /// The passive era rule: the first successful answer decides, by the method it answers.
    fn observe(&mut self, dir: Dir, frame: &jsonrpc::Frame) {
        match (dir, frame.kind()) {
            (Dir::C2s, FrameKind::Request) => {
                let method = frame.method().unwrap_or_default();
                if method == "initialize" {
                    self.saw_initialize = true;
                }
                if self.era.is_none() && self.pending.len() < MAX_PENDING {
                    if let Some(id) = frame.id() {
                        self.pending.insert(id.key(), method.to_owned());
                    }
                }
            }
            (Dir::S2c, FrameKind::Response | FrameKind::ErrorResponse) if self.era.is_none() => {
                let Some(method) = frame.id().and_then(|id| self.pending.remove(&id.key())) else {
                    return;
                };
                if frame.kind() == FrameKind::Response {
                    self.era = Some(Era::from_first_success(&method));
                    self.pending = HashMap::new();
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(limit: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut s = LineSplitter::new(limit);
        let mut out = Vec::new();
        let mut emit = |p: Piece<'_>| {
            out.push(match p {
                Piece::Line(l) => String::from_utf8_lossy(l).into_owned(),
                Piece::TooLong { head, total } => {
                    format!("{}..({total})", String::from_utf8_lossy(head))
                }
            })
        };
        for c in chunks {
            s.push(c, &mut emit);
        }
        s.finish(&mut emit);
        out
    }

    #[test]
    fn splitting_is_chunking_invariant() {
        let whole: &[u8] = b"ab\r\ncd\n\nef";
        let expect = vec!["ab", "cd", "", "ef"];
        assert_eq!(lines(100, &[whole]), expect);
        for cut in 0..whole.len() {
            assert_eq!(
                lines(100, &[&whole[..cut], &whole[cut..]]),
                expect,
                "cut {cut}"
            );
        }
    }

    #[test]
    fn long_lines_bounded() {
        assert_eq!(lines(4, &[b"abcdefgh\nxy\n"]), vec!["abcd..(8)", "xy"]);
    }

    #[test]
    fn era_from_first_success() {
        let mut c = Capture::new(None);
        let f = |s: &str| s.as_bytes().to_vec();
        c.line(
            0,
            Dir::C2s,
            &f(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#),
        );
        c.line(
            1,
            Dir::S2c,
            &f(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#),
        );
        assert_eq!(c.era(), None);
        c.line(
            2,
            Dir::C2s,
            &f(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#),
        );
        c.line(3, Dir::S2c, &f(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#));
        assert_eq!(c.era(), Some(Era::Legacy));
        let mut m = Capture::new(None);
        m.line(
            0,
            Dir::C2s,
            &f(r#"{"jsonrpc":"2.0","id":"a","method":"server/discover"}"#),
        );
        m.line(1, Dir::S2c, &f(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#));
        assert_eq!(m.era(), Some(Era::Modern));
    }
}
