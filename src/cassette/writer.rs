//! Cassette writer: one line per header or entry, each ending in `\n`.

use std::io::{self, Write};

use super::{Entry, Header};

#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer { out }
    }

    pub fn write_header(&mut self, header: &Header) -> io::Result<()> {
        self.write_line(&header.to_line())
    }

    pub fn write_entry(&mut self, entry: &Entry) -> io::Result<()> {
        entry.write_line(&mut self.out)?;
        self.out.write_all(b"\n")
    }

    pub fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
