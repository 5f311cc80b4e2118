//! Where captured entries go in `--mode once` / `--mode all`: streamed to the file as they
//! happen, behind a header that waits for the era decision.

use std::io::{self, BufWriter};

use crate::cassette::{Entry, Header, Writer};
use crate::protocol::Era;
use crate::record::output::Output;

/// Entries held back while the era is undecided, at most. A session whose first successful
/// answer is this far away gets its header without an era rather than an unbounded buffer.
const MAX_DEFERRED_ENTRIES: usize = 1024;
const MAX_DEFERRED_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug)]
pub(crate) struct StreamSink {
    writer: Writer<BufWriter<Output>>,
    header: Header,
    header_written: bool,
    deferred: Vec<String>,
    deferred_bytes: usize,
}

impl StreamSink {
    pub(crate) fn new(file: Output, header: Header) -> StreamSink {
        StreamSink {
            writer: Writer::new(BufWriter::with_capacity(64 * 1024, file)),
            header,
            header_written: false,
            deferred: Vec::new(),
            deferred_bytes: 0,
        }
    }

    /// Adds one entry; `era` is the capture's decision so far.
    pub(crate) fn push(&mut self, entry: &Entry, era: Option<Era>) -> io::Result<()> {
        if self.header_written {
            // Straight into the file's buffer: a line of its own first was an allocation, a
            // copy and a free for every captured message.
            return self.writer.write_entry(entry);
        }
        let line = entry.to_line();
        self.deferred_bytes += line.len();
        self.deferred.push(line);
        if era.is_some()
            || self.deferred.len() >= MAX_DEFERRED_ENTRIES
            || self.deferred_bytes >= MAX_DEFERRED_BYTES
        {
            self.write_header(era)?;
        }
        Ok(())
    }

    /// The server minted a session id: the header says `sessioned` if it is still held back
    /// (once written, the header is never rewritten).
    pub(crate) fn set_sessioned(&mut self) {
        if !self.header_written {
            self.header.set_sessioned(true);
        }
    }

    /// Hands what is buffered to the operating system (not a sync: a crash of the recorder
    /// keeps it, a crash of the machine may not).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        if self.header_written {
            self.writer.flush()?;
        }
        Ok(())
    }

    /// Writes whatever is still held back and flushes; the output is then for the caller to
    /// make durable (see [`Output::finish`]).
    pub(crate) fn finish(mut self, era: Option<Era>) -> io::Result<Output> {
        if !self.header_written {
            self.write_header(era)?;
        }
        self.writer.flush()?;
        self.writer
            .into_inner()
            .into_inner()
            .map_err(|e| e.into_error())
    }

    fn write_header(&mut self, era: Option<Era>) -> io::Result<()> {
        if let Some(era) = era {
            self.header.set_era(era);
        }
        self.writer.write_header(&self.header)?;
        for line in self.deferred.drain(..) {
            self.writer.write_line(&line)?;
        }
        self.deferred_bytes = 0;
        self.header_written = true;
        self.writer.flush()
    }
}
