//! Reading a cassette on a second thread while the caller works on the entries already read.
//!
//! Parsing and validating a line costs about as much as linting it, and the machines this
//! runs on have at least two cores, so a tool that consumes a whole cassette overlaps the two
//! halves. Order is kept: the caller sees entries exactly as a plain [`Reader`] yields them,
//! and the first error ends the walk, as it would there.
//!
//! Entries travel in batches (about 256 KiB of text each) so the threads meet once per batch,
//! not once per entry. The caller borrows each entry and hands the batch back, and the reading
//! thread frees it: memory is then always freed by the thread that allocated it, which keeps
//! the allocator from contending for its per-thread arenas (measured: handing entries over by
//! value and freeing them on the caller's side made `lint` 60 % slower than one thread).
//!
//! Memory stays bounded whatever the file: batches in flight (queued, being looked at, or on
//! their way back) hold at most [`BUDGET_BYTES`] of entry text, except that one batch is always
//! admitted, so a single line up to the reader's own bound still gets through.

use std::collections::VecDeque;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::{CassetteError, Entry, Reader};

/// Entry text in flight before the reading thread waits.
pub(super) const BUDGET_BYTES: usize = 4 * 1024 * 1024;
/// A batch is handed over once it holds this much text or this many entries.
const BATCH_BYTES: usize = 256 * 1024;
const BATCH_ENTRIES: usize = 512;

struct Batch {
    entries: Vec<Entry>,
    bytes: usize,
    /// The error that ended the reading, after `entries`.
    error: Option<CassetteError>,
}

#[derive(Default)]
struct Queue {
    full: VecDeque<Batch>,
    returned: Vec<Batch>,
    /// Text held by batches not yet freed.
    bytes: usize,
    /// The reader reached the end or an error: nothing more will be queued.
    finished: bool,
    /// The caller stopped (returned or panicked): the reader stops too.
    abandoned: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Every update under the lock is a single push, pop or flag, so a queue whose lock was
        // poisoned by a panic elsewhere is still consistent.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks the walk abandoned when the caller's side ends, however it ends.
struct Abandon<'a>(&'a Shared);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.0.lock().abandoned = true;
        self.0.changed.notify_all();
    }
}

/// Calls `each` on every entry of `reader` (whose header is already read), in order, while a
/// second thread reads ahead. Stops at the first reading error and returns it, or with `Ok`
/// when `each` breaks (the caller knows why). `each` may change the entry it is given (a
/// redacting copy does): the reading thread frees it afterwards.
pub fn for_each_entry<R: Read + Send>(
    reader: Reader<R>,
    mut each: impl FnMut(&mut Entry) -> ControlFlow<()>,
) -> Result<(), CassetteError> {
    let shared = Shared::default();
    let path = reader.path().to_owned();
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("cassette-read-ahead".to_owned())
            .spawn_scoped(scope, || produce(reader, &shared));
        if let Err(e) = spawned {
            return Err(CassetteError::Io { path, source: e });
        }
        let _abandon = Abandon(&shared);
        loop {
            let mut queue = shared.lock();
            let batch = loop {
                if let Some(batch) = queue.full.pop_front() {
                    break batch;
                }
                if queue.finished {
                    return Ok(());
                }
                queue = shared.wait(queue);
            };
            drop(queue);
            let mut batch = batch;
            for entry in &mut batch.entries {
                if each(entry).is_break() {
                    return Ok(());
                }
            }
            let Batch {
                entries,
                bytes,
                error,
            } = batch;
            if let Some(error) = error {
                return Err(error);
            }
            shared.lock().returned.push(Batch {
                entries,
                bytes,
                error: None,
            });
            shared.changed.notify_all();
        }
    })
}

fn produce<R: Read>(reader: Reader<R>, shared: &Shared) {
    let mut batch = Batch {
        entries: Vec::new(),
        bytes: 0,
        error: None,
    };
    for item in reader {
        match item {
            Ok(entry) => {
                batch.bytes += entry.object().source_len();
                batch.entries.push(entry);
            }
            Err(e) => {
                batch.error = Some(e);
                break;
            }
        }
        if batch.bytes >= BATCH_BYTES || batch.entries.len() >= BATCH_ENTRIES {
            let next = Batch {
                entries: Vec::with_capacity(batch.entries.len()),
                bytes: 0,
                error: None,
            };
            if !hand_over(shared, std::mem::replace(&mut batch, next)) {
                return;
            }
        }
    }
    if (!batch.entries.is_empty() || batch.error.is_some()) && !hand_over(shared, batch) {
        return;
    }
    shared.lock().finished = true;
    shared.changed.notify_all();
}

/// Queues one batch, first freeing what the caller handed back and waiting while the batches
/// in flight are over budget. `false` when the caller has stopped.
fn hand_over(shared: &Shared, batch: Batch) -> bool {
    let mut queue = shared.lock();
    loop {
        if queue.abandoned {
            return false;
        }
        if !queue.returned.is_empty() {
            let freed = std::mem::take(&mut queue.returned);
            queue.bytes -= freed.iter().map(|b| b.bytes).sum::<usize>();
            // Freed here, on the thread that allocated them, and outside the lock.
            drop(queue);
            drop(freed);
            queue = shared.lock();
            continue;
        }
        if queue.bytes == 0 || queue.bytes + batch.bytes <= BUDGET_BYTES {
            break;
        }
        queue = shared.wait(queue);
    }
    queue.bytes += batch.bytes;
    queue.full.push_back(batch);
    drop(queue);
    shared.changed.notify_all();
    true
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn cassette(entries: usize, data_len: usize) -> String {
        let mut text =
            String::from("{\"type\":\"header\",\"cassetteVersion\":2,\"transport\":\"stdio\"}\n");
        for i in 0..entries {
            text.push_str(&format!(
                "{{\"type\":\"raw\",\"t\":{i},\"dir\":\"s2c\",\"data\":\"{}\"}}\n",
                "x".repeat(data_len)
            ));
        }
        text
    }

    fn reader(text: &str) -> Reader<std::io::Cursor<String>> {
        Reader::new(std::io::Cursor::new(text.to_owned()), Path::new("x")).unwrap()
    }

    fn plain(text: &str) -> Vec<String> {
        reader(text)
            .map(|e| e.map(|e| e.to_line()).unwrap_or_else(|e| e.to_string()))
            .collect()
    }

    fn ahead(text: &str) -> Vec<String> {
        let mut seen = Vec::new();
        let walked = for_each_entry(reader(text), |e| {
            seen.push(e.to_line());
            ControlFlow::Continue(())
        });
        if let Err(e) = walked {
            seen.push(e.to_string());
        }
        seen
    }

    #[test]
    fn same_entries_same_order() {
        // Entries larger than the budget force the one-batch-at-a-time path too.
        for (n, len) in [(0, 1), (3000, 10), (5, BUDGET_BYTES + 10)] {
            let text = cassette(n, len);
            assert_eq!(ahead(&text), plain(&text), "{n} entries of {len}");
        }
    }

    #[test]
    fn error_arrives_last_and_in_place() {
        let mut text = cassette(1500, 10);
        text.push_str("{\"type\":\"raw\",\"t\":");
        let got = ahead(&text);
        assert_eq!(got, plain(&text));
        assert_eq!(got.len(), 1501);
        assert!(got[1500].contains("not valid JSON"), "{}", got[1500]);
    }

    #[test]
    fn a_panicking_caller_does_not_hang_the_reader() {
        let text = cassette(20_000, 1000);
        let outcome = std::panic::catch_unwind(|| {
            let _ = for_each_entry(reader(&text), |_| panic!("caller gives up"));
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_caller_can_stop_and_change_entries() {
        let text = cassette(20_000, 1000);
        let mut seen = 0;
        let walked = for_each_entry(reader(&text), |e| {
            seen += 1;
            e.set_t(7);
            assert!(e.to_line().contains("\"t\":7"));
            if seen == 3000 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert!(walked.is_ok());
        assert_eq!(seen, 3000);
    }
}
