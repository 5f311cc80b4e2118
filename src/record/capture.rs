//! Turning the bytes a proxy saw into cassette entries: line splitting, frame/raw
//! classification, redaction, and the passive era decision. Pure: bytes in, entries out.

use std::collections::HashMap;

use crate::cassette::{Dir, Entry};
use crate::jsonrpc::{self, FrameKind};
use crate::line::{Line, LineBuffer, OverLimit};
use crate::protocol::Era;
use crate::redact::{Echoes, Redactor};

/// Longest line captured whole. Longer lines are still forwarded untouched; the cassette gets a
/// raw entry holding the full length and, only when redaction is off, the first
/// [`TOO_LONG_HEAD`] bytes.
pub(crate) const MAX_CAPTURE_LINE: usize = 64 * 1024 * 1024;
/// How much of an over-long line the cassette keeps.
pub(crate) const TOO_LONG_HEAD: usize = 4096;
/// Requests remembered while waiting for their answer (the era decision pairs by id).
const MAX_PENDING: usize = 100_000;

/// The line buffer record captures with: lines up to [`MAX_CAPTURE_LINE`] are captured whole;
/// of a longer one only the first [`TOO_LONG_HEAD`] bytes are kept, with its length.
pub(crate) fn line_buffer() -> LineBuffer {
    LineBuffer::new(
        MAX_CAPTURE_LINE,
        OverLimit::Skip {
            keep: TOO_LONG_HEAD,
        },
    )
}

/// One whole message a front-end framed itself, under the same limit as a captured line.
pub(crate) fn message_line(message: &[u8]) -> Line<'_> {
    if message.len() > MAX_CAPTURE_LINE {
        return Line::TooLong {
            len: message.len(),
            head: &message[..TOO_LONG_HEAD],
            terminated: true,
        };
    }
    Line::Whole {
        bytes: message,
        terminated: true,
    }
}

/// Builds entries from lines, redacting them when a redactor is given, and decides the era.
#[derive(Debug)]
pub(crate) struct Capture {
    redactor: Option<Redactor>,
    /// Secrets seen so far, redacted wherever they appear again (docs/redaction.md, "Echoes").
    echoes: Echoes,
    pending: HashMap<String, String>,
    era: Option<Era>,
    decided_by: Option<String>,
    saw_initialize: bool,
    secrets: usize,
    warnings: Vec<String>,
}

impl Capture {
    pub(crate) fn new(redactor: Option<Redactor>) -> Capture {
        Capture {
            echoes: redactor.as_ref().map(Redactor::echoes).unwrap_or_default(),
            redactor,
            pending: HashMap::new(),
            era: None,
            decided_by: None,
            saw_initialize: false,
            secrets: 0,
            warnings: Vec::new(),
        }
    }

    /// The era, once the first successful answer decided it.
    pub(crate) fn era(&self) -> Option<Era> {
        self.era
    }

    /// Whether the client sent an `initialize` request in this session.
    pub(crate) fn saw_initialize(&self) -> bool {
        self.saw_initialize
    }

    /// How many secrets were replaced so far.
    pub(crate) fn secrets(&self) -> usize {
        self.secrets
    }

    /// Warnings for stderr gathered since the last call (e.g. an over-long line).
    pub(crate) fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The entry for one line of one direction, or `None` for a blank line.
    ///
    /// An over-limit line is recorded as a raw entry holding its length, and its head only when
    /// redaction is off.
    pub(crate) fn piece(&mut self, t: u64, dir: Dir, line: Line<'_>) -> Option<Entry> {
        match line {
            Line::Whole { bytes, .. } => self.line(t, dir, bytes),
            Line::TooLong {
                len: total, head, ..
            } => {
                // A cut line is no longer JSON, so its keys cannot be seen, and a token
                // straddling the cut would be written in part: under redaction nothing of its
                // text is kept, only its length (docs/redaction.md, "Lines over the limit").
                let kept = if self.redactor.is_some() {
                    0
                } else {
                    head.len()
                };
                self.warnings.push(format!(
                    "mcp-cassette: a {total}-byte line ({dir}) exceeds the {} MiB capture limit; it was forwarded untouched and recorded as a raw entry holding {}",
                    MAX_CAPTURE_LINE / (1024 * 1024),
                    if kept == 0 {
                        "only its length (redaction is on, and a cut line cannot be redacted)".to_owned()
                    } else {
                        format!("its first {kept} bytes")
                    }
                ));
                let data = String::from_utf8_lossy(&head[..kept]).into_owned();
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
            jsonrpc::Line::Frame(frame) => Some(Entry::new_frame(t, dir, self.frame(dir, frame))),
            jsonrpc::Line::Raw(line) => {
                let data = self.redact_raw(&line);
                Some(Entry::new_raw(t, dir, data))
            }
        }
    }

    /// One frame that crossed `dir`: seen by the era decision, then redacted for the disk.
    fn frame(&mut self, dir: Dir, frame: jsonrpc::Frame) -> jsonrpc::Frame {
        self.observe(dir, &frame);
        match &self.redactor {
            Some(r) => match r.redact_frame_echoing(&frame, &mut self.echoes) {
                Some((redacted, n)) => {
                    self.secrets += n;
                    redacted
                }
                None => frame,
            },
            None => frame,
        }
    }

    /// The frame one event of a streamed answer carries, redacted, or `None` when its data is
    /// not a JSON-RPC message (such events are relayed and not recorded). Streamed answers take
    /// part in the era decision like any other.
    pub(crate) fn event_frame(&mut self, dir: Dir, data: &[u8]) -> Option<jsonrpc::Frame> {
        let text = std::str::from_utf8(data).ok()?;
        let frame = jsonrpc::Frame::parse(text)?;
        Some(self.frame(dir, frame))
    }

    /// The method whose answer decided the era, once it is decided.
    pub(crate) fn decided_by(&self) -> Option<&str> {
        self.decided_by.as_deref()
    }

    fn redact_raw(&mut self, line: &str) -> String {
        match &self.redactor {
            Some(r) => {
                let (data, n) = r.redact_raw_line_echoing(line, &mut self.echoes);
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
                    self.decided_by = Some(method);
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

    #[test]
    fn an_over_long_line_keeps_its_head_and_length() {
        let mut lines = line_buffer();
        let mut capture = Capture::new(None);
        let mut entries = Vec::new();
        let mut long = vec![b'x'; MAX_CAPTURE_LINE + 10];
        long.extend_from_slice(b"\r\n{}\n");
        lines.feed(&long, |l| entries.extend(capture.piece(0, Dir::S2c, l)));
        assert_eq!(entries.len(), 2);
        let text = entries[0].to_line();
        assert!(text.contains(&format!("\"truncatedFrom\":{}", MAX_CAPTURE_LINE + 11)));
        assert!(text.contains(&"x".repeat(TOO_LONG_HEAD)));
        assert!(!text.contains(&"x".repeat(TOO_LONG_HEAD + 1)));
        assert_eq!(capture.take_warnings().len(), 1);
    }

    #[test]
    fn under_redaction_an_over_long_line_keeps_only_its_length() {
        let mut lines = line_buffer();
        let mut capture = Capture::new(Some(Redactor::builtin()));
        let mut entries = Vec::new();
        let mut long = br#"{"token":"hunter2-correct-horse","x":""#.to_vec();
        long.resize(MAX_CAPTURE_LINE + 10, b'x');
        long.push(b'\n');
        lines.feed(&long, |l| entries.extend(capture.piece(0, Dir::S2c, l)));
        assert_eq!(entries.len(), 1);
        let text = entries[0].to_line();
        assert!(
            !text.contains("hunter2"),
            "{}",
            &text[..text.len().min(200)]
        );
        assert!(text.contains(&format!("\"truncatedFrom\":{}", MAX_CAPTURE_LINE + 10)));
        assert!(text.contains(r#""data":"""#), "{text}");
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
