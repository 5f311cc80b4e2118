//! The cassette entry reader: whatever the bytes, the reader answers entries or a named error,
//! and what it accepts it can write back and read again to the same bytes.

use std::path::Path;

use crate::cassette::{Entry, EntryKind, Reader, Writer};
use crate::lint::cassette::CassetteLinter;
use crate::redact::Redactor;

/// Entries read per input: enough for every shape, few enough to keep an execution short.
const MAX_ENTRIES: usize = 64;

/// Reads `data` as a cassette. For what is accepted: the header and every entry written with
/// [`Writer`] read back to the same validated view, and writing that again gives the same bytes
/// (the reader never accepts what it then cannot re-serialise byte-identically); the cassette
/// linter and the redactor take every accepted entry, and redacting an entry twice changes
/// nothing the second time.
pub fn cassette_reader(data: &[u8]) {
    let path = Path::new("fuzz.jsonl");
    let Ok(reader) = Reader::new(super::bounded(data), path) else {
        return;
    };
    let header = reader.header().clone();
    let mut written = Vec::new();
    let mut writer = Writer::new(&mut written);
    writer.write_header(&header).expect("writing to a Vec");
    let mut entries = Vec::new();
    for item in reader.take(MAX_ENTRIES) {
        let Ok(entry) = item else { break };
        writer.write_entry(&entry).expect("writing to a Vec");
        entries.push(entry);
    }

    let again = Reader::new(&written[..], path).expect("a written header reads back");
    let header_again = again.header().clone();
    assert_eq!(header_again.to_line(), header.to_line());
    let reread: Vec<Entry> = again
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("written entries read back: {e}"));
    assert_eq!(reread.len(), entries.len(), "entries lost or gained");
    let mut rewritten = Vec::new();
    let mut writer = Writer::new(&mut rewritten);
    writer
        .write_header(&header_again)
        .expect("writing to a Vec");
    for (first, second) in entries.iter().zip(&reread) {
        assert_same_entry(first, second);
        writer.write_entry(second).expect("writing to a Vec");
    }
    assert_eq!(
        String::from_utf8_lossy(&rewritten),
        String::from_utf8_lossy(&written),
        "a cassette written from what was read is not stable"
    );

    let mut linter = CassetteLinter::new();
    let redactor = Redactor::builtin();
    for entry in &entries {
        if !matches!(entry.kind, EntryKind::Unknown(_)) {
            linter.entry(entry);
        }
        let mut once = entry.clone();
        redactor.redact_entry(&mut once);
        let mut twice = once.clone();
        assert_eq!(
            redactor.redact_entry(&mut twice),
            0,
            "second redaction found more in {}",
            once.to_line()
        );
        assert_eq!(
            twice.to_line(),
            once.to_line(),
            "redaction is not idempotent"
        );
    }
    let _ = linter.finish(&header);
}

fn assert_same_entry(a: &Entry, b: &Entry) {
    assert_eq!(a.to_line(), b.to_line());
    assert_eq!(a.t, b.t, "t changed in {}", a.to_line());
    assert_eq!(a.dir, b.dir, "dir changed in {}", a.to_line());
    match (&a.kind, &b.kind) {
        (EntryKind::Frame(x), EntryKind::Frame(y)) => {
            assert_eq!(x.text(), y.text());
            assert_eq!(x.kind(), y.kind());
            assert_eq!(x.id(), y.id());
            assert_eq!(x.method(), y.method());
        }
        (EntryKind::Raw(x), EntryKind::Raw(y)) => assert_eq!(x, y),
        (
            EntryKind::Chunks {
                id: i,
                via_get: v,
                chunks: c,
            },
            EntryKind::Chunks {
                id: j,
                via_get: w,
                chunks: d,
            },
        ) => {
            assert_eq!(i, j);
            assert_eq!(v, w);
            assert_eq!(c.len(), d.len());
            for (x, y) in c.iter().zip(d) {
                assert_eq!(x.t, y.t);
                assert_eq!(x.frame.text(), y.frame.text());
            }
        }
        (EntryKind::Unknown(x), EntryKind::Unknown(y)) => assert_eq!(x, y),
        _ => panic!("entry kind changed on re-read: {}", a.to_line()),
    }
}
