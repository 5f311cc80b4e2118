//! Parsing a cassette's lines on several threads, with the results taken in file order.
//!
//! For a reader whose work per entry costs several times the parse (replay's index reduces
//! every frame to a fingerprint, a shape and a ready answer), one reading thread cannot keep up
//! with the cores. Here the calling thread only frames lines (the one line reader, the same
//! bounds and errors as [`Reader`]) and copies them into batches; workers parse each line into an
//! [`Entry`] and map it, and the caller folds the mapped batches in file order. The result is
//! what the plain reader would give entry by entry: the same entries, numbered the same, and
//! the first error in file order ends the walk, after every entry before it was folded.
//!
//! Each worker keeps its own state (`init` runs on its thread), so what it learns across
//! entries needs no lock; what the fold must know of it travels with each batch (`flush`).
//! A batch's entries share one copy of its text (a frame points into it, as it points into its
//! own line when read by [`Reader`]), so whatever `map` keeps of an entry keeps that copy
//! alive: a mapping that outlives the batch copies what it keeps, as replay's index does.
//! Memory is freed where it was allocated: a worker parses, maps and drops its entries itself,
//! and the batches of line text go back to the calling thread to be filled again (see
//! `read_ahead` for what mixing the allocator's per-thread arenas costs). At most
//! [`IN_FLIGHT`] batches per worker are read ahead of the fold.

use std::collections::BTreeMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, mpsc};

use super::reader::parse_line_at;
use super::{CassetteError, Entry, Reader};

/// A batch is handed to a worker once it holds this much text or this many lines.
const BATCH_BYTES: usize = 256 * 1024;
const BATCH_LINES: usize = 2048;
/// Batches read ahead of the fold, per worker. The fold takes batches in file order, so one slow
/// batch holds back the ones done after it; with three per worker the workers waited for work a
/// fifth of the time on a 200,000-call cassette (docs/benchmarks.md), with eight they keep busy.
/// A batch holds at most [`BATCH_BYTES`] of text, so this bounds what is read ahead to 2 MiB
/// per worker.
const IN_FLIGHT: usize = 8;

/// Entry lines as read, not yet parsed: their text end to end, and where each one is.
#[derive(Default)]
struct Lines {
    text: String,
    /// Each line's end in `text` and its line number in the file.
    lines: Vec<(usize, u64)>,
    /// The number (among entries) of the first line.
    first_entry: usize,
    /// Whether the batch's last line ended with a newline (only a file's last line may not).
    last_terminated: bool,
}

impl Lines {
    fn clear(&mut self) {
        self.text.clear();
        self.lines.clear();
    }

    fn push(&mut self, text: &str, line: u64) {
        self.text.push_str(text);
        self.lines.push((self.text.len(), line));
    }

    /// Where each line stands in `text`, its line number and whether it ended with a newline.
    fn iter(&self) -> impl Iterator<Item = (std::ops::Range<usize>, u64, bool)> {
        let count = self.lines.len();
        let starts = std::iter::once(0).chain(self.lines.iter().map(|&(end, _)| end));
        starts
            .zip(&self.lines)
            .enumerate()
            .map(move |(i, (start, &(end, line)))| {
                let terminated = i + 1 < count || self.last_terminated;
                (start..end, line, terminated)
            })
    }
}

/// What a worker gives back for one batch.
struct Done<T, D> {
    seq: usize,
    worker: usize,
    items: Vec<T>,
    flushed: D,
    /// The parse error that ended the batch, after `items`.
    error: Option<CassetteError>,
    /// The batch's text, to be filled again.
    lines: Lines,
}

/// Parses every entry of `reader` (whose header is already read) on `workers` threads, maps
/// each with `map(state, entry number, entry)` on the worker that parsed it, and calls
/// `fold(worker, mapped entries, flush(state))` batch by batch in file order; `fold` takes the
/// entries out of the list it is given, which goes back to a worker to be filled again. Each
/// worker's state comes from `init`, called on that worker. Returns the first error in file order, once
/// everything before it was folded; `Ok` at the end of the file or when `fold` breaks.
pub fn map_entries<R, S, T, D>(
    mut reader: Reader<R>,
    workers: usize,
    init: impl Fn() -> S + Sync,
    map: impl Fn(&mut S, usize, Entry) -> T + Sync,
    flush: impl Fn(&mut S) -> D + Sync,
    mut fold: impl FnMut(usize, &mut Vec<T>, D) -> ControlFlow<()>,
) -> Result<(), CassetteError>
where
    R: Read,
    T: Send,
    D: Send,
{
    let workers = workers.max(1);
    let path = reader.path().to_owned();
    let (init, map, flush) = (&init, &map, &flush);
    std::thread::scope(|scope| {
        let (work_tx, work_rx) = mpsc::channel::<(usize, Lines, Vec<T>)>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = mpsc::channel::<Done<T, D>>();
        for worker in 0..workers {
            let (work_rx, done_tx, path) = (Arc::clone(&work_rx), done_tx.clone(), &path);
            let spawned = std::thread::Builder::new()
                .name("cassette-parse".to_owned())
                .spawn_scoped(scope, move || {
                    work(worker, path, &work_rx, &done_tx, init, map, flush);
                });
            if let Err(source) = spawned {
                return Err(CassetteError::Io {
                    path: path.clone(),
                    source,
                });
            }
        }
        drop(done_tx);
        let mut spare: Vec<(Lines, Vec<T>)> = Vec::new();
        let mut pending: BTreeMap<usize, Done<T, D>> = BTreeMap::new();
        let (mut sent, mut folded, mut entries) = (0, 0, 0);
        // How the reading ended, once it has: the end of the file or its error.
        let mut ended: Option<Result<(), CassetteError>> = None;
        loop {
            while ended.is_none() && sent - folded < workers * IN_FLIGHT {
                let (mut lines, items) = spare.pop().unwrap_or_default();
                lines.clear();
                lines.first_entry = entries;
                let outcome = read_batch(&mut reader, &mut lines);
                entries += lines.lines.len();
                if !lines.lines.is_empty() && work_tx.send((sent, lines, items)).is_ok() {
                    sent += 1;
                }
                match outcome {
                    Ok(true) => {}
                    Ok(false) => ended = Some(Ok(())),
                    Err(e) => ended = Some(Err(e)),
                }
            }
            if folded == sent {
                return ended.unwrap_or(Ok(()));
            }
            // Every worker gone with batches outstanding means one panicked: the scope's join
            // carries the panic on.
            let Ok(done) = done_rx.recv() else {
                return Ok(());
            };
            pending.insert(done.seq, done);
            while let Some(mut done) = pending.remove(&folded) {
                folded += 1;
                if fold(done.worker, &mut done.items, done.flushed).is_break() {
                    return Ok(());
                }
                if let Some(e) = done.error {
                    return Err(e);
                }
                done.items.clear();
                spare.push((done.lines, done.items));
            }
        }
    })
}

/// Fills `lines` with the next entry lines; `Ok(false)` at the end of the file. An error comes
/// after the lines read before it, which are still in `lines`.
fn read_batch<R: Read>(reader: &mut Reader<R>, lines: &mut Lines) -> Result<bool, CassetteError> {
    while lines.text.len() < BATCH_BYTES && lines.lines.len() < BATCH_LINES {
        let Some((text, line)) = reader.next_entry_text()? else {
            return Ok(false);
        };
        lines.push(text, line);
        lines.last_terminated = reader.ended_with_newline();
    }
    Ok(true)
}

/// One worker: takes batches until the caller stops sending, parses and maps each line.
fn work<S, T, D>(
    worker: usize,
    path: &Path,
    work_rx: &Mutex<mpsc::Receiver<(usize, Lines, Vec<T>)>>,
    done_tx: &mpsc::Sender<Done<T, D>>,
    init: &(impl Fn() -> S + Sync),
    map: &(impl Fn(&mut S, usize, Entry) -> T + Sync),
    flush: &(impl Fn(&mut S) -> D + Sync),
) {
    let mut state = init();
    loop {
        // Only the receiving is under the lock; a poisoned lock means another worker panicked,
        // and the receiver it guards is still whole.
        let next = work_rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok((seq, lines, mut items)) = next else {
            return;
        };
        items.reserve(lines.lines.len());
        let mut error = None;
        // One copy of the batch's text, which its entries share (a copy and a free per line
        // cost 3 % of a large replay index's build, docs/benchmarks.md); it is freed here with
        // the last entry that holds it, unless `map` kept one.
        let text: Arc<str> = Arc::from(lines.text.as_str());
        for (i, (at, line, terminated)) in lines.iter().enumerate() {
            match parse_line_at(&text, at, path, line, terminated) {
                Ok(entry) => items.push(map(&mut state, lines.first_entry + i, entry)),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let done = Done {
            seq,
            worker,
            items,
            flushed: flush(&mut state),
            error,
            lines,
        };
        if done_tx.send(done).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry with its number, through the workers and through the plain reader.
    fn both(text: &str, workers: usize) -> (Vec<String>, Vec<String>) {
        let describe = |n: usize, e: Result<Entry, CassetteError>| match e {
            Ok(e) => format!("{n} line {} t {} {}", e.line, e.t, e.to_line()),
            Err(e) => format!("error {e}"),
        };
        let plain = Reader::new(text.as_bytes(), Path::new("p.jsonl"))
            .unwrap()
            .enumerate()
            .map(|(n, e)| describe(n, e))
            .collect();
        let reader = Reader::new(text.as_bytes(), Path::new("p.jsonl")).unwrap();
        let mut seen = Vec::new();
        let outcome = map_entries(
            reader,
            workers,
            || (),
            |(), n, e| describe(n, Ok(e)),
            |()| (),
            |_, items, ()| {
                seen.append(items);
                ControlFlow::Continue(())
            },
        );
        if let Err(e) = outcome {
            seen.push(describe(0, Err(e)));
        }
        (seen, plain)
    }

    fn cassette(lines: usize) -> String {
        let mut text = String::from(
            r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#,
        );
        text.push('\n');
        for i in 0..lines {
            // Long lines now and then, so batches end on bytes as well as on counts.
            let pad = "x".repeat(if i % 97 == 0 { 200_000 } else { i % 50 });
            text.push_str(&format!(
                r#"{{"type":"frame","t":{i},"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{i},"method":"m","params":{{"p":"{pad}"}}}}}}"#
            ));
            text.push_str(if i % 13 == 0 { "\n\n  \n" } else { "\n" });
        }
        text
    }

    #[test]
    fn same_entries_same_numbers_same_order() {
        let text = cassette(5000);
        for workers in [1, 2, 3] {
            let (seen, plain) = both(&text, workers);
            assert_eq!(seen.len(), 5000);
            assert!(seen == plain, "workers {workers}");
        }
    }

    #[test]
    fn the_first_error_in_file_order_ends_the_walk() {
        let mut lines: Vec<String> = cassette(12_000).lines().map(str::to_owned).collect();
        // A bad field late, a line that is not JSON earlier: the earlier one is reported.
        lines[9000] = r#"{"type":"frame","t":1,"dir":"sideways","frame":{}}"#.to_owned();
        lines[4000] = r#"{"type":"frame","t":1,"dir":"c2s","frame":{"#.to_owned();
        let text = lines.join("\n");
        for workers in [1, 2, 4] {
            let (seen, plain) = both(&text, workers);
            assert!(
                seen.last().unwrap().contains("p.jsonl:4001:"),
                "{:?}",
                seen.last()
            );
            assert!(seen == plain, "workers {workers}");
        }
        // A last line cut short says so, as the plain reader does.
        let text = cassette(3000);
        let (seen, plain) = both(&text[..text.len() - 10], 2);
        assert!(
            seen.last().unwrap().contains("cut short"),
            "{:?}",
            seen.last()
        );
        assert!(seen == plain);
    }

    #[test]
    fn a_fold_that_breaks_stops_the_walk() {
        let text = cassette(20_000);
        let reader = Reader::new(text.as_bytes(), Path::new("p.jsonl")).unwrap();
        let mut batches = 0;
        let outcome = map_entries(
            reader,
            2,
            || (),
            |(), n, _| n,
            |()| (),
            |_, _, ()| {
                batches += 1;
                if batches == 3 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert!(outcome.is_ok());
        assert_eq!(batches, 3);
    }
}
