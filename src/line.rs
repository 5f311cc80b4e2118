//! Newline-delimited input, framed into lines bounded in bytes: the one line reader behind the
//! child transport, replay's stdin, record's capture and the cassette reader.
//!
//! A [`LineBuffer`] is filled from any source — a [`Read`] ([`LineBuffer::fill_from`]), an async
//! reader (`transport::line`), or chunks a proxy already holds ([`LineBuffer::feed`]) — and
//! complete lines are taken out of it as slices of its own storage, so a line that arrived whole
//! in one read is never copied before its user sees it. A line's length is the number of bytes
//! before its `\n` (a `\r` there included); a line longer than the buffer's limit is an explicit
//! outcome, [`Line::TooLong`], handled as the [`OverLimit`] policy says: skipped to its end with
//! a bounded prefix kept and its full length reported, or reported at once with nothing more
//! read. Either way the buffer never holds much more than the limit, whatever the input.

use std::io::{self, Read};

// The newline search is vectorised (see its module); this is the one call site.
use crate::json::delimiter::newline;

/// Storage this large grows straight to its cap (see [`LineBuffer::spare`]).
const GROW_TO_CAP_FROM: usize = 4 << 20;

/// What a buffer does with a line longer than its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverLimit {
    /// Read past the line to its end, keeping its first `keep` bytes, and report it with its
    /// full length; the lines after it are read as usual.
    Skip { keep: usize },
    /// Report the line as soon as it passes the limit and take nothing more from the buffer:
    /// for callers that give up on an input with such a line.
    Stop,
}

/// One line taken from a [`LineBuffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line within the limit: its bytes without the `\n` and without one `\r` before it.
    /// `terminated` is false for a last line that ended with the input instead of a `\n`.
    Whole { bytes: &'a [u8], terminated: bool },
    /// A line over the limit. `len` is its length (with [`OverLimit::Stop`], how much of it
    /// was seen, already more than the limit); `head` its first bytes, as many as the policy
    /// keeps.
    TooLong {
        len: usize,
        head: &'a [u8],
        terminated: bool,
    },
}

/// Where a line found by [`LineBuffer::advance`] is, valid until the buffer is next filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Whole {
        start: usize,
        end: usize,
        terminated: bool,
    },
    /// `head` is `Some(range of the storage)` when the line was whole in the storage, else the
    /// kept prefix is in the buffer's side copy.
    TooLong {
        len: usize,
        head: Option<(usize, usize)>,
        terminated: bool,
    },
}

/// Storage that has held a line this long is given back once it is empty again: one huge line
/// must not keep its memory for the rest of a session.
const SHRINK_ABOVE: usize = 1 << 20;

/// A buffer that input is read into and complete lines are taken from. See the module docs.
#[derive(Debug)]
pub struct LineBuffer {
    storage: Vec<u8>,
    /// Unconsumed input is `storage[start..end]`.
    start: usize,
    end: usize,
    /// `storage[start..searched]` has no `\n`: a line still coming in is not searched twice.
    searched: usize,
    /// The size reads are made in, and what the storage shrinks back to.
    chunk: usize,
    limit: usize,
    over: OverLimit,
    /// Bytes so far of an over-limit line being skipped; its prefix is in `head`.
    skipping: Option<usize>,
    head: Vec<u8>,
    /// The input has ended: a last line without its `\n` is a line.
    ended: bool,
    /// An over-limit line stopped the buffer ([`OverLimit::Stop`]).
    stopped: bool,
}

impl LineBuffer {
    /// A buffer reading 64 KiB at a time.
    pub fn new(limit: usize, over: OverLimit) -> LineBuffer {
        LineBuffer::with_capacity(64 * 1024, limit, over)
    }

    /// A buffer reading `chunk` bytes at a time (it grows while a longer line comes in).
    pub fn with_capacity(chunk: usize, limit: usize, over: OverLimit) -> LineBuffer {
        let chunk = chunk.max(1);
        LineBuffer {
            storage: vec![0; chunk],
            start: 0,
            end: 0,
            searched: 0,
            chunk,
            limit,
            over,
            skipping: None,
            head: Vec::new(),
            ended: false,
            stopped: false,
        }
    }

    /// The longest line taken whole, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether input is held that no line taken so far has covered (a partial line, or lines
    /// not yet taken).
    pub fn has_buffered(&self) -> bool {
        self.end > self.start || self.skipping.is_some()
    }

    /// Whether every line has been taken: the input ended (or an over-limit line stopped the
    /// buffer) and nothing is left.
    pub fn is_finished(&self) -> bool {
        self.stopped || (self.ended && !self.has_buffered())
    }

    /// Room to read into, at least half a chunk (the storage is compacted or grown for it).
    /// Follow with [`LineBuffer::filled`].
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            self.searched = 0;
            if self.storage.len() > SHRINK_ABOVE.max(self.chunk) {
                self.storage = vec![0; self.chunk];
            }
        }
        let want = self.chunk.div_ceil(2);
        if self.storage.len() - self.end < want && self.start > 0 {
            self.storage.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.searched -= self.start;
            self.start = 0;
        }
        if self.storage.len() - self.end < want {
            // Only a line within the limit is held here (a longer one is skipped), so the
            // storage stays under the limit plus a chunk.
            let needed = self.end + self.chunk;
            let cap = self.limit.saturating_add(1).saturating_add(self.chunk);
            let size = needed.max(self.storage.len().saturating_mul(2).min(cap));
            if size >= GROW_TO_CAP_FROM && size < cap {
                // Past a few MiB, one step to the cap: a fresh zeroed buffer arrives as
                // untouched pages (calloc), so only the bytes copied now and read later become
                // resident, and the doubling steps (each a copy beside the old buffer, then a
                // zero-fill) that put a 64 MiB limit's peak near twice that never happen.
                let mut grown = vec![0u8; cap];
                grown[..self.end].copy_from_slice(&self.storage[..self.end]);
                self.storage = grown;
            } else {
                self.storage.resize(size, 0);
            }
        }
        &mut self.storage[self.end..]
    }

    /// Records that `n` bytes were read into [`LineBuffer::spare`]; `0` means the input ended.
    pub fn filled(&mut self, n: usize) {
        if n == 0 {
            self.ended = true;
        } else {
            self.end += n;
        }
    }

    /// Marks the end of the input: a last line without its `\n` becomes a line.
    pub fn finish(&mut self) {
        self.ended = true;
    }

    /// Reads once from `input` into the buffer; `false` when the input has ended.
    pub fn fill_from(&mut self, input: &mut impl Read) -> io::Result<bool> {
        loop {
            match input.read(self.spare()) {
                Ok(n) => {
                    self.filled(n);
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line from `input`, reading as needed; `None` at the end of the input.
    pub fn next_from(&mut self, input: &mut impl Read) -> io::Result<Option<Line<'_>>> {
        Ok(self.next_found_from(input)?.map(|found| self.get(found)))
    }

    /// As [`LineBuffer::next_from`], saying where the line is instead of borrowing the buffer
    /// (see [`LineBuffer::get`]).
    pub fn next_found_from(&mut self, input: &mut impl Read) -> io::Result<Option<Found>> {
        loop {
            if let Some(found) = self.advance() {
                return Ok(Some(found));
            }
            if self.is_finished() {
                return Ok(None);
            }
            self.fill_from(input)?;
        }
    }

    /// Adds `bytes` (a chunk a proxy saw) and calls `each` on every line they complete.
    pub fn feed(&mut self, mut bytes: &[u8], mut each: impl FnMut(Line<'_>)) {
        while !bytes.is_empty() {
            let spare = self.spare();
            let n = spare.len().min(bytes.len());
            spare[..n].copy_from_slice(&bytes[..n]);
            self.filled(n);
            bytes = &bytes[n..];
            while let Some(found) = self.advance() {
                each(self.get(found));
            }
        }
    }

    /// Ends the input and calls `each` on what is left (a last line without its `\n`).
    pub fn finish_with(&mut self, mut each: impl FnMut(Line<'_>)) {
        self.finish();
        while let Some(found) = self.advance() {
            each(self.get(found));
        }
    }

    /// Takes the next line out of the buffer and says where it is, without borrowing the
    /// buffer (see [`LineBuffer::get`]); `None` when more input is needed, or none will come.
    pub fn advance(&mut self) -> Option<Found> {
        if self.stopped {
            return None;
        }
        if let Some(seen) = self.skipping {
            return self.advance_skipping(seen);
        }
        match newline(&self.storage[self.searched..self.end]) {
            Some(at) => {
                let start = self.start;
                let end = self.searched + at;
                self.start = end + 1;
                self.searched = self.start;
                Some(self.complete(start, end, true))
            }
            None => {
                self.searched = self.end;
                let len = self.end - self.start;
                if len > self.limit {
                    return self.passed_limit(len);
                }
                if self.ended && len > 0 {
                    let start = self.start;
                    self.start = self.end;
                    self.searched = self.end;
                    return Some(self.complete(start, self.end, false));
                }
                None
            }
        }
    }

    /// The line at `found`, as [`LineBuffer::advance`] just returned it.
    pub fn get(&self, found: Found) -> Line<'_> {
        match found {
            Found::Whole {
                start,
                end,
                terminated,
            } => Line::Whole {
                bytes: &self.storage[start..end],
                terminated,
            },
            Found::TooLong {
                len,
                head,
                terminated,
            } => Line::TooLong {
                len,
                head: match head {
                    Some((start, end)) => &self.storage[start..end],
                    None => &self.head,
                },
                terminated,
            },
        }
    }

    /// A line that is whole in the storage at `start..end` (its `\n` excluded).
    fn complete(&mut self, start: usize, end: usize, terminated: bool) -> Found {
        let len = end - start;
        if len > self.limit {
            let keep = match self.over {
                OverLimit::Skip { keep } => keep.min(len),
                OverLimit::Stop => {
                    self.stopped = true;
                    0
                }
            };
            return Found::TooLong {
                len,
                head: Some((start, start + keep)),
                terminated,
            };
        }
        let end = if self.storage[start..end].last() == Some(&b'\r') {
            end - 1
        } else {
            end
        };
        Found::Whole {
            start,
            end,
            terminated,
        }
    }

    /// The line still coming in has `len` bytes, more than the limit, and no `\n` yet.
    fn passed_limit(&mut self, len: usize) -> Option<Found> {
        match self.over {
            OverLimit::Stop => {
                self.stopped = true;
                Some(Found::TooLong {
                    len,
                    head: Some((self.start, self.start)),
                    terminated: false,
                })
            }
            OverLimit::Skip { keep } => {
                self.head.clear();
                self.head
                    .extend_from_slice(&self.storage[self.start..self.start + keep.min(len)]);
                self.start = self.end;
                self.searched = self.end;
                self.skipping = Some(len);
                // Reports the line at once only when the input has ended with it.
                self.advance_skipping(len)
            }
        }
    }

    /// Skipping an over-limit line of which `seen` bytes went by: `Some` once it ends.
    fn advance_skipping(&mut self, seen: usize) -> Option<Found> {
        let ends = newline(&self.storage[self.start..self.end]);
        // The kept prefix may still be short of `keep` when the limit is below it.
        if let OverLimit::Skip { keep } = self.over {
            let part = ends.unwrap_or(self.end - self.start);
            let more = keep.saturating_sub(self.head.len()).min(part);
            self.head
                .extend_from_slice(&self.storage[self.start..self.start + more]);
        }
        match ends {
            Some(at) => {
                self.start += at + 1;
                self.searched = self.start;
                self.skipping = None;
                Some(Found::TooLong {
                    len: seen + at,
                    head: None,
                    terminated: true,
                })
            }
            None => {
                let len = seen + (self.end - self.start);
                self.start = self.end;
                self.searched = self.end;
                if self.ended {
                    self.skipping = None;
                    return Some(Found::TooLong {
                        len,
                        head: None,
                        terminated: false,
                    });
                }
                self.skipping = Some(len);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What the buffer should give, worked out the slow way on the whole input.
    fn model(input: &[u8], limit: usize, keep: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let (line, terminated, next) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true, &rest[i + 1..]),
                None => (rest, false, &rest[rest.len()..]),
            };
            rest = next;
            out.push(if line.len() > limit {
                format!(
                    "long {} {:?} {terminated}",
                    line.len(),
                    &line[..keep.min(line.len())]
                )
            } else {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                format!("line {line:?} {terminated}")
            });
        }
        out
    }

    fn show(line: Line<'_>) -> String {
        match line {
            Line::Whole { bytes, terminated } => format!("line {bytes:?} {terminated}"),
            Line::TooLong {
                len,
                head,
                terminated,
            } => format!("long {len} {head:?} {terminated}"),
        }
    }

    fn fed(chunks: &[&[u8]], chunk: usize, limit: usize, keep: usize) -> Vec<String> {
        let mut lines = LineBuffer::with_capacity(chunk, limit, OverLimit::Skip { keep });
        let mut out = Vec::new();
        for c in chunks {
            lines.feed(c, |l| out.push(show(l)));
        }
        lines.finish_with(|l| out.push(show(l)));
        out
    }

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn pulled(input: &[u8], step: usize, chunk: usize, limit: usize, keep: usize) -> Vec<String> {
        let mut lines = LineBuffer::with_capacity(chunk, limit, OverLimit::Skip { keep });
        let mut reader = Trickle { bytes: input, step };
        let mut out = Vec::new();
        while let Some(line) = lines.next_from(&mut reader).unwrap() {
            out.push(show(line));
        }
        out
    }

    #[test]
    fn lines_cr_and_a_last_line_without_newline() {
        let got = fed(&[b"ab\r\ncd\n\nef"], 16, 100, 0);
        assert_eq!(
            got,
            [
                "line [97, 98] true",
                "line [99, 100] true",
                "line [] true",
                "line [101, 102] false"
            ]
        );
        // A trailing newline ends the input with no empty line after it.
        assert_eq!(fed(&[b"a\n"], 16, 100, 0), ["line [97] true"]);
        assert!(fed(&[b""], 16, 100, 0).is_empty());
    }

    #[test]
    fn a_line_of_many_mib_grows_the_storage_in_one_step_and_reads_the_same() {
        // Sizes past GROW_TO_CAP_FROM take the one-step growth; the small property tests above
        // never reach it.
        let mut input = vec![b'a'; 9 << 20];
        input.extend_from_slice(b"\nshort\n");
        input.extend(std::iter::repeat_n(b'b', 20 << 20));
        input.push(b'\n');
        let mut lines = LineBuffer::new(16 << 20, OverLimit::Skip { keep: 4 });
        let mut reader = &input[..];
        let mut seen = Vec::new();
        loop {
            while let Some(found) = lines.advance() {
                seen.push(match lines.get(found) {
                    Line::Whole { bytes, .. } => {
                        format!("whole {} {}", bytes.len(), bytes[0] as char)
                    }
                    Line::TooLong { len, head, .. } => {
                        format!("long {len} {}", String::from_utf8_lossy(head))
                    }
                });
            }
            if !lines.fill_from(&mut reader).unwrap() {
                if let Some(found) = lines.advance() {
                    seen.push(format!("{:?}", lines.get(found)));
                }
                break;
            }
            assert!(
                lines.storage.len() <= (16 << 20) + 1 + lines.chunk,
                "bounded"
            );
        }
        assert_eq!(seen, ["whole 9437184 a", "whole 5 s", "long 20971520 bbbb"]);
    }

    #[test]
    fn over_limit_lines_are_measured_and_skipped() {
        assert_eq!(
            fed(&[b"abcdefgh\nxy\n"], 4, 4, 2),
            ["long 8 [97, 98] true", "line [120, 121] true"]
        );
        // The same line, arriving a byte at a time, and ending with the input.
        let bytes = b"abcdefgh";
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(fed(&chunks, 4, 4, 2), ["long 8 [97, 98] false"]);
    }

    #[test]
    fn stop_reports_at_once_and_reads_no_further() {
        let mut lines = LineBuffer::with_capacity(4, 5, OverLimit::Stop);
        let mut input = Trickle {
            bytes: b"ok\nxxxxxxxxxxxxxxxxxxxxxxxx\nnever\n",
            step: 3,
        };
        assert_eq!(
            show(lines.next_from(&mut input).unwrap().unwrap()),
            "line [111, 107] true"
        );
        let Line::TooLong { len, .. } = lines.next_from(&mut input).unwrap().unwrap() else {
            panic!("expected an over-limit line");
        };
        assert!(len > 5 && len < 24, "{len}");
        assert!(lines.next_from(&mut input).unwrap().is_none());
        assert!(!input.bytes.is_empty(), "nothing more is read");
    }

    #[test]
    fn storage_stays_bounded_while_skipping() {
        let mut lines = LineBuffer::with_capacity(64, 100, OverLimit::Skip { keep: 10 });
        let mut seen = 0;
        for _ in 0..10_000 {
            lines.feed(&[b'x'; 100], |_| seen += 1);
            assert!(lines.storage.len() <= 100 + 1 + 64);
        }
        lines.feed(b"\n", |l| {
            assert_eq!(show(l), format!("long 1000000 {:?} true", [b'x'; 10]));
            seen += 1;
        });
        assert_eq!(seen, 1);
    }

    #[test]
    fn a_huge_line_does_not_keep_its_storage() {
        let mut lines = LineBuffer::with_capacity(16, 4 << 20, OverLimit::Stop);
        let mut big = vec![b'y'; 3 << 20];
        big.push(b'\n');
        let mut n = 0;
        lines.feed(&big, |_| n += 1);
        assert_eq!(n, 1);
        lines.feed(b"z\n", |_| n += 1);
        assert!(lines.storage.len() <= 16, "{}", lines.storage.len());
    }

    proptest! {
        /// However the input is cut into reads or chunks, and whatever the buffer's size, the
        /// lines are those the slow model finds in the whole input.
        #[test]
        fn agrees_with_the_model(
            input in proptest::collection::vec(
                prop_oneof![3 => Just(b'\n'), 1 => Just(b'\r'), 20 => Just(b'a')],
                0..300,
            ),
            cuts in proptest::collection::vec(0usize..300, 0..8),
            step in 1usize..40,
            chunk in 1usize..40,
            limit in 0usize..30,
            keep in 0usize..8,
        ) {
            let expect = model(&input, limit, keep);
            let mut cuts = cuts;
            cuts.push(0);
            cuts.push(input.len());
            cuts.sort_unstable();
            let chunks: Vec<&[u8]> = cuts
                .windows(2)
                .map(|w| &input[w[0].min(input.len())..w[1].min(input.len())])
                .collect();
            prop_assert_eq!(fed(&chunks, chunk, limit, keep), expect.clone());
            prop_assert_eq!(pulled(&input, step, chunk, limit, keep), expect);
        }
    }
}
