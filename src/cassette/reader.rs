//! Streaming cassette reader: one line in memory at a time, each bounded.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(test)]
use super::EntryKind;
use super::{CassetteError, Entry, Header, Location, MAX_LINE_BYTES, RawObject};
use crate::json::delimiter;

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
    buf: Vec<u8>,
    done: bool,
    limit: usize,
    trailing_newline: bool,
}

impl Reader<BufReader<File>> {
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
        Reader::new(BufReader::with_capacity(capacity, file), path)
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the header from `input`; `path` names the file in messages.
    pub fn new(input: R, path: &Path) -> Result<Self, CassetteError> {
        Reader::with_limit(input, path, MAX_LINE_BYTES)
    }

    /// As [`Reader::new`] with a custom line-length bound.
    pub fn with_limit(input: R, path: &Path, limit: usize) -> Result<Self, CassetteError> {
        let mut reader = Reader {
            input,
            path: path.to_owned(),
            header: Header::new("", "", super::Transport::Stdio),
            line_no: 0,
            buf: Vec::new(),
            done: false,
            limit,
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
    /// The text is copied once, into the shared string the entry keeps: straight from the
    /// input's buffer when the whole line is there (the common case), else through a line
    /// buffer that is reused from line to line.
    fn next_line(&mut self) -> Result<Option<Arc<str>>, CassetteError> {
        self.buf.clear();
        self.line_no += 1;
        let mut saw_newline = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(CassetteError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            };
            if available.is_empty() {
                break;
            }
            let (take, found) = match delimiter::newline(available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            if self.buf.len() + take > self.limit + 1 {
                return Err(CassetteError::LineTooLong {
                    path: self.path.clone(),
                    line: self.line_no,
                    limit: self.limit,
                });
            }
            if found && self.buf.is_empty() {
                let line = shared_line(&available[..take - 1], &self.path, self.line_no);
                self.input.consume(take);
                self.trailing_newline = true;
                return line.map(Some);
            }
            self.buf.extend_from_slice(&available[..take]);
            self.input.consume(take);
            if found {
                saw_newline = true;
                break;
            }
        }
        if self.buf.is_empty() {
            return Ok(None);
        }
        if saw_newline {
            self.buf.pop();
        }
        self.trailing_newline = saw_newline;
        let shared = shared_line(&self.buf, &self.path, self.line_no);
        // A huge line's buffer is not worth keeping for the ordinary lines after it.
        if self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
        shared.map(Some)
    }

    fn next_entry(&mut self) -> Result<Option<Entry>, CassetteError> {
        loop {
            let line = self.line_no + 1;
            let Some(text) = self.next_line()? else {
                return Ok(None);
            };
            if text.trim().is_empty() {
                continue;
            }
            let object = match RawObject::parse_shared(text) {
                Ok(o) => o,
                Err(e) => {
                    let hint = if self.trailing_newline {
                        ""
                    } else {
                        "; the last line is cut short, as if a write was interrupted"
                    };
                    return Err(CassetteError::BadJson {
                        path: self.path.clone(),
                        line,
                        detail: e.to_string(),
                        hint,
                    });
                }
            };
            let at = Location {
                path: &self.path,
                line,
            };
            return Entry::from_object(object, &at).map(Some);
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
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

/// A line's bytes (without `\n`) as shared text; a trailing `\r` is dropped.
fn shared_line(bytes: &[u8], path: &Path, line: u64) -> Result<Arc<str>, CassetteError> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Arc::from(text)),
        Err(_) => Err(CassetteError::NotUtf8 {
            path: path.to_owned(),
            line,
        }),
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
