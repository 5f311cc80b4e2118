//! Streaming cassette reader: one line in memory at a time, each bounded.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(test)]
use super::EntryKind;
use super::{CassetteError, Entry, Header, Location, MAX_LINE_BYTES, RawObject};
use crate::json::{Captured, delimiter};
use crate::line::{Found, Line, LineBuffer, OverLimit};

/// Reads a cassette entry by entry. Construct with [`Reader::open`] or [`Reader::new`]; the
/// header is read and validated up front. Iteration yields entries of every kind, including
/// [`EntryKind::Unknown`] (callers that only consume skip those with
/// [`super::unknown_entry_warning`]; callers that rewrite carry them through). The first error
/// ends the iteration.
#[derive(Debug)]
pub struct Reader<R> {
    input: R,
    path: PathBuf,
    header: Header,
    line_no: u64,
    lines: LineBuffer,
    done: bool,
    trailing_newline: bool,
}

impl Reader<File> {
    /// Opens a cassette file and reads its header.
    pub fn open(path: &Path) -> Result<Self, CassetteError> {
        let file = File::open(path).map_err(|source| CassetteError::Io {
            path: path.to_owned(),
            source,
        })?;
        // Large cassettes are read 256 KiB at a time. A small one gets a buffer its size: a
        // buffer that large is a fresh mapping from the allocator, and mapping and unmapping
        // it was a measurable part of a small replay's start-up.
        let size = file.metadata().map_or(u64::MAX, |meta| meta.len());
        let capacity = usize::try_from(size.saturating_add(1))
            .unwrap_or(usize::MAX)
            .clamp(4 * 1024, 256 * 1024);
        Reader::with_buffer(file, path, capacity, MAX_LINE_BYTES)
    }

    /// The size of the file being read, when the system says.
    pub fn file_len(&self) -> Option<u64> {
        self.input.metadata().ok().map(|meta| meta.len())
    }
}

impl<R: Read> Reader<R> {
    /// Reads the header from `input`; `path` names the file in messages.
    pub fn new(input: R, path: &Path) -> Result<Self, CassetteError> {
        Reader::with_limit(input, path, MAX_LINE_BYTES)
    }

    /// As [`Reader::new`] with a custom line-length bound.
    pub fn with_limit(input: R, path: &Path, limit: usize) -> Result<Self, CassetteError> {
        Reader::with_buffer(input, path, 64 * 1024, limit)
    }

    fn with_buffer(
        input: R,
        path: &Path,
        capacity: usize,
        limit: usize,
    ) -> Result<Self, CassetteError> {
        let mut reader = Reader {
            input,
            path: path.to_owned(),
            header: Header::new("", "", super::Transport::Stdio),
            line_no: 0,
            // A cassette with an over-long line is refused at once: nothing after it is read.
            lines: LineBuffer::with_capacity(capacity, limit, OverLimit::Stop),
            done: false,
            trailing_newline: true,
        };
        let first = loop {
            match reader.next_line()? {
                None => {
                    return Err(CassetteError::Empty {
                        path: path.to_owned(),
                    });
                }
                Some(text) if text.trim().is_empty() => continue,
                Some(text) => break text,
            }
        };
        let object = RawObject::parse(first.trim_start_matches('\u{feff}')).map_err(|_| {
            CassetteError::NoHeader {
                path: path.to_owned(),
            }
        })?;
        reader.header = Header::from_object(object, path)?;
        Ok(reader)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the last line read ended with `\n` (a cassette cut mid-write does not).
    pub fn ended_with_newline(&self) -> bool {
        self.trailing_newline
    }

    /// The next line's text (without terminator), or `None` at end of input.
    ///
    /// The text is copied once, from the line buffer into the shared string the entry keeps.
    fn next_line(&mut self) -> Result<Option<Arc<str>>, CassetteError> {
        let Some(found) = self.next_found()? else {
            return Ok(None);
        };
        Ok(Some(Arc::from(self.text_of(found)?.0)))
    }

    /// Where the next line stands in the line buffer, reading as needed; `None` at end of input.
    fn next_found(&mut self) -> Result<Option<Found>, CassetteError> {
        self.line_no += 1;
        self.lines
            .next_found_from(&mut self.input)
            .map_err(|source| CassetteError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// The text of the line at `found` (valid UTF-8, without terminator) with its line number.
    fn text_of(&mut self, found: Found) -> Result<(&str, u64), CassetteError> {
        match self.lines.get(found) {
            Line::Whole { bytes, terminated } => {
                self.trailing_newline = terminated;
                match std::str::from_utf8(bytes) {
                    Ok(text) => Ok((text, self.line_no)),
                    Err(_) => Err(CassetteError::NotUtf8 {
                        path: self.path.clone(),
                        line: self.line_no,
                    }),
                }
            }
            Line::TooLong { .. } => Err(CassetteError::LineTooLong {
                path: self.path.clone(),
                line: self.line_no,
                limit: self.lines.limit(),
            }),
        }
    }

    /// Whether the line at `found` is blank (white space only), which the reader skips. An entry
    /// starts with `{`, so most lines are answered by their first byte.
    fn is_blank(&self, found: Found) -> bool {
        match self.lines.get(found) {
            Line::Whole { bytes, .. } => {
                bytes.first() != Some(&b'{')
                    && std::str::from_utf8(bytes).is_ok_and(|text| text.trim().is_empty())
            }
            Line::TooLong { .. } => false,
        }
    }

    /// The next entry line's text (blank lines skipped) and its line number, not yet parsed:
    /// [`parse_line`] makes it an entry. [`Reader::next`] in two steps, for a reader that parses
    /// on other threads.
    pub(super) fn next_entry_text(&mut self) -> Result<Option<(&str, u64)>, CassetteError> {
        loop {
            let Some(found) = self.next_found()? else {
                return Ok(None);
            };
            if !self.is_blank(found) {
                return self.text_of(found).map(Some);
            }
        }
    }

    fn next_entry(&mut self) -> Result<Option<Entry>, CassetteError> {
        let Some((text, line)) = self.next_entry_text()? else {
            return Ok(None);
        };
        let text = Arc::from(text);
        parse_line(text, &self.path, line, self.trailing_newline).map(Some)
    }
}

/// Parses and validates one entry line read from `path` at `line`; `terminated` says whether
/// the line ended with a newline (a last line without one was likely cut mid-write, which the
/// error then says).
pub(super) fn parse_line(
    text: Arc<str>,
    path: &Path,
    line: u64,
    terminated: bool,
) -> Result<Entry, CassetteError> {
    let at = 0..text.len();
    parse_line_at(&text, at, path, line, terminated)
}

/// As [`parse_line`] for the line at `at` of `text` (one of several read together), which the
/// entry shares instead of copying.
pub(super) fn parse_line_at(
    text: &Arc<str>,
    at: std::ops::Range<usize>,
    path: &Path,
    line: u64,
    terminated: bool,
) -> Result<Entry, CassetteError> {
    let mut frame = Captured::default();
    let object = match RawObject::parse_line_capturing(text, at, "frame", &mut frame) {
        Ok(o) => o,
        Err(e) => {
            let hint = if terminated {
                ""
            } else {
                "; the last line is cut short, as if a write was interrupted"
            };
            return Err(CassetteError::BadJson {
                path: path.to_owned(),
                line,
                detail: e.to_string(),
                hint,
            });
        }
    };
    Entry::from_object(object, &frame, &Location { path, line })
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Entry, CassetteError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_entry() {
            Ok(Some(entry)) => Some(Ok(entry)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// What a path holds, for `record --mode once`'s overwrite protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Nothing at the path.
    Absent,
    /// A file whose first line is a cassette header (or an unbroken first 64 KiB).
    Cassette,
    /// A zero-byte or header-less file: a recording that never flushed.
    Leftover,
}

/// Decides whether the file at `path` is a cassette worth protecting.
pub fn looks_like_cassette(path: &Path) -> std::io::Result<Existing> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Absent),
        Err(e) => return Err(e),
    };
    let mut head = Vec::with_capacity(64 * 1024);
    file.take(64 * 1024).read_to_end(&mut head)?;
    if head.is_empty() {
        return Ok(Existing::Leftover);
    }
    let Some(end) = delimiter::newline(&head) else {
        // A first line longer than 64 KiB cannot be judged cheaply; protect it.
        return Ok(if head.len() >= 64 * 1024 {
            Existing::Cassette
        } else {
            header_state(&head)
        });
    };
    Ok(header_state(&head[..end]))
}

fn header_state(first: &[u8]) -> Existing {
    let is_header = std::str::from_utf8(first)
        .ok()
        .and_then(|t| RawObject::parse(t.trim()).ok())
        .and_then(|o| o.get_as::<String>("type").and_then(Result::ok))
        .is_some_and(|t| t == "header");
    if is_header {
        Existing::Cassette
    } else {
        Existing::Leftover
    }
}

/// The frame whose JSON text is `frame` as this reader gives it from a one-line cassette, with
/// the members it captured while validating the line: for tests of what such frames carry.
#[cfg(test)]
pub(crate) fn frame_as_read(frame: &str) -> Option<crate::jsonrpc::Frame> {
    let text = format!(
        "{{\"type\":\"header\",\"cassetteVersion\":2}}\n{{\"type\":\"frame\",\"t\":0,\"dir\":\"s2c\",\"frame\":{frame}}}\n"
    );
    match Reader::new(text.as_bytes(), Path::new("c.jsonl"))
        .ok()?
        .next()?
        .ok()?
        .kind
    {
        EntryKind::Frame(frame) => Some(frame),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(Header, Vec<Entry>), CassetteError> {
        let r = Reader::new(text.as_bytes(), Path::new("x.jsonl"))?;
        let header = r.header().clone();
        let entries = r.collect::<Result<Vec<_>, _>>()?;
        Ok((header, entries))
    }

    #[test]
    fn a_frame_entry_says_whether_its_frame_is_missing_or_wrong() {
        let header = r#"{"type":"header","cassetteVersion":2}"#;
        for (entry, problem) in [
            (r#"{"type":"frame","t":1,"dir":"c2s"}"#, "is missing"),
            (
                r#"{"type":"frame","t":1,"dir":"c2s","frame":5}"#,
                "must be a JSON-RPC 2.0 object",
            ),
            (
                r#"{"type":"frame","t":1,"dir":"c2s","frame":{"id":1}}"#,
                "must be a JSON-RPC 2.0 object",
            ),
        ] {
            match read(&format!("{header}\n{entry}\n")) {
                Err(CassetteError::BadField {
                    line,
                    field,
                    problem: said,
                    ..
                }) => assert_eq!((line, field.as_str(), said.as_str()), (2, "frame", problem)),
                other => panic!("{entry}: {:?}", other.map(|_| ())),
            }
        }
    }

    #[test]
    fn empty_and_headerless() {
        assert_eq!(
            read("").unwrap_err().to_string(),
            "Cassette is empty: x.jsonl"
        );
        assert_eq!(
            read("\n  \n").unwrap_err().to_string(),
            "Cassette is empty: x.jsonl"
        );
        assert_eq!(
            read("{\"type\":\"frame\"}\n").unwrap_err().to_string(),
            "Cassette has no header line: x.jsonl"
        );
    }

    #[test]
    fn versions() {
        let e = read("{\"type\":\"header\",\"cassetteVersion\":3}\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Cassette version 3 was recorded with a newer mcp-cassette (this build supports 1, 2). Upgrade mcp-cassette to read x.jsonl"
        );
        let e = read("{\"type\":\"header\",\"cassetteVersion\":\"x\"}\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Unsupported cassette version \"x\" (supported: 1, 2)"
        );
    }

    #[test]
    fn bad_lines_named() {
        let h = "{\"type\":\"header\",\"cassetteVersion\":2,\"transport\":\"stdio\"}\n";
        let e = read(&format!(
            "{h}\n{{\"type\":\"frame\",\"t\":1,\"dir\":\"c2s\",\"frame\":{{\"jsonrpc\":"
        ))
        .unwrap_err();
        assert!(
            e.to_string().starts_with("x.jsonl:3: not valid JSON"),
            "{e}"
        );
        assert!(e.to_string().contains("cut short"), "{e}");
        let e = read(&format!(
            "{h}{{\"type\":\"frame\",\"t\":\"soon\",\"dir\":\"c2s\"}}\n"
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.jsonl:2: field \"t\" must be a number of milliseconds"
        );
        let e = read(&format!(
            "{h}{{\"type\":\"raw\",\"t\":1,\"dir\":\"up\",\"data\":\"x\"}}\n"
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.jsonl:2: field \"dir\" must be \"c2s\" or \"s2c\""
        );
    }

    #[test]
    fn unknown_entries_and_fields_survive() {
        let text = "{\"type\":\"header\",\"cassetteVersion\":2,\"transport\":\"stdio\",\"future\":1}\n{\"type\":\"hologram\",\"t\":1,\"x\":[1]}\n{\"type\":\"raw\",\"t\":2,\"dir\":\"s2c\",\"data\":\"hi\",\"note\":\"n\"}\n";
        let (h, e) = read(text).unwrap();
        assert_eq!(
            h.to_line(),
            "{\"type\":\"header\",\"cassetteVersion\":2,\"transport\":\"stdio\",\"future\":1}"
        );
        assert!(matches!(&e[0].kind, EntryKind::Unknown(k) if k == "hologram"));
        assert_eq!(
            e[1].to_line(),
            "{\"type\":\"raw\",\"t\":2,\"dir\":\"s2c\",\"data\":\"hi\",\"note\":\"n\"}"
        );
    }

    #[test]
    fn long_line_refused() {
        let text = format!(
            "{{\"type\":\"header\",\"cassetteVersion\":2}}\n{}\n",
            "x".repeat(100)
        );
        let r = Reader::with_limit(text.as_bytes(), Path::new("x"), 64).unwrap();
        let e = r.collect::<Result<Vec<_>, _>>().unwrap_err();
        assert!(
            matches!(e, CassetteError::LineTooLong { line: 2, .. }),
            "{e}"
        );
    }

    #[test]
    fn invalid_utf8_named() {
        let mut bytes = b"{\"type\":\"header\",\"cassetteVersion\":2}\n".to_vec();
        bytes.extend_from_slice(b"{\"type\":\"raw\",\"data\":\"\xff\"}\n");
        let r = Reader::new(&bytes[..], Path::new("x")).unwrap();
        let e = r.collect::<Result<Vec<_>, _>>().unwrap_err();
        assert_eq!(e.to_string(), "x:2: line is not valid UTF-8");
    }
}
