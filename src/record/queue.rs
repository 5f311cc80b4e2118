//! The queue from the forwarders to the capture thread: messages, and the bytes they carry
//! copied one after another into one buffer, which the capture thread takes whole.
//!
//! A channel of messages each owning its bytes cost every message an allocation on the
//! forwarding thread and its release on the capture thread, into the other thread's heap (glibc
//! takes that heap's lock, which the forwarder then contends for), besides the channel's own
//! work: on the `record --http` forwarding path, about as much as the capture asked of it
//! otherwise (docs/benchmarks.md). Here a message costs a lock, a copy into spare capacity and
//! a push; the capture thread swaps the filled buffers for its emptied ones, so in a steady
//! session nothing is allocated at all.

use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a waiting taker looks whether every pusher is gone.
const ABANDON_CHECK: Duration = Duration::from_secs(1);

/// Buffers that grew past these in a burst (a long line, a flood) are let go when emptied
/// rather than kept for the next batch, so a quiet session does not hold a burst's memory.
const KEPT_BYTES: usize = 1024 * 1024;
const KEPT_MESSAGES: usize = 16 * 1024;

/// Where a message's bytes are in its [`Batch`].
pub(crate) type Span = Range<usize>;

/// Messages taken together, with the bytes they refer to (a message's [`Span`] indexes
/// `bytes`).
pub(crate) struct Batch<M> {
    pub messages: Vec<M>,
    pub bytes: Vec<u8>,
}

impl<M> Batch<M> {
    /// Empties the batch for the next take, keeping its buffers unless a burst grew them.
    fn recycle(&mut self) {
        debug_assert!(self.messages.is_empty());
        if self.messages.capacity() > KEPT_MESSAGES {
            self.messages = Vec::new();
        }
        if self.bytes.capacity() > KEPT_BYTES {
            self.bytes = Vec::new();
        } else {
            self.bytes.clear();
        }
    }
}

impl<M> Default for Batch<M> {
    fn default() -> Self {
        Batch {
            messages: Vec::new(),
            bytes: Vec::new(),
        }
    }
}

/// A queue many forwarders push to and one capture thread takes from.
pub(crate) struct Queue<M> {
    state: Mutex<State<M>>,
    /// Signalled when a message arrives while the taker waits for one.
    arrived: Condvar,
}

struct State<M> {
    batch: Batch<M>,
    /// The taker is waiting in [`Queue::take_waiting`].
    waiting: bool,
    /// The taker is gone: nothing pushed now would be taken.
    closed: bool,
}

impl<M> Default for Queue<M> {
    fn default() -> Self {
        Queue {
            state: Mutex::new(State {
                batch: Batch::default(),
                waiting: false,
                closed: false,
            }),
            arrived: Condvar::new(),
        }
    }
}

impl<M> Queue<M> {
    /// Queues the message `make` builds around a copy of `bytes`. Returns the bytes now queued
    /// (for the forwarders' budget), or `None` when the taker is gone.
    pub(crate) fn push(&self, bytes: &[u8], make: impl FnOnce(Span) -> M) -> Option<usize> {
        let mut state = self.lock();
        if state.closed {
            return None;
        }
        let batch = &mut state.batch;
        let start = batch.bytes.len();
        batch.bytes.extend_from_slice(bytes);
        batch.messages.push(make(start..batch.bytes.len()));
        let queued = batch.bytes.len();
        if state.waiting {
            state.waiting = false;
            self.arrived.notify_one();
        }
        Some(queued)
    }

    /// Whether more than `budget` bytes are queued and not yet taken by a taker still there:
    /// what a pusher over budget waits on, one lock a look.
    pub(crate) fn over(&self, budget: usize) -> bool {
        let state = self.lock();
        state.batch.bytes.len() > budget && !state.closed
    }

    /// Takes everything queued into `into`, which the taker has emptied (its buffers are kept,
    /// to be filled next); `into` stays empty when nothing was queued.
    pub(crate) fn take(&self, into: &mut Batch<M>) {
        into.recycle();
        std::mem::swap(&mut self.lock().batch, into);
    }

    /// As [`Queue::take`], but waits until something is queued; `false` (and nothing taken)
    /// once the taker holds the only reference left, so nothing can ever be pushed again.
    pub(crate) fn take_waiting(self: &Arc<Self>, into: &mut Batch<M>) -> bool {
        into.recycle();
        let mut state = self.lock();
        while state.batch.messages.is_empty() {
            if Arc::strong_count(self) == 1 {
                return false;
            }
            state.waiting = true;
            // Dropping a pusher signals nothing, hence the timeout: an abandoned queue is
            // noticed within it.
            state = self
                .arrived
                .wait_timeout(state, ABANDON_CHECK)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        state.waiting = false;
        std::mem::swap(&mut state.batch, into);
        true
    }

    /// The taker is gone: later pushes are refused.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
    }

    /// A poisoned lock means a forwarder panicked while holding it; every change under the lock
    /// leaves the state whole, so the rest of the session is still worth keeping.
    fn lock(&self) -> MutexGuard<'_, State<M>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn messages_come_out_in_order_with_their_bytes_and_buffers_are_reused() {
        let queue: Queue<(u32, Span)> = Queue::default();
        assert_eq!(queue.push(b"abc", |s| (1, s)), Some(3));
        assert_eq!(queue.push(b"", |s| (2, s)), Some(3));
        assert_eq!(queue.push(b"de", |s| (3, s)), Some(5));
        let mut batch = Batch::default();
        queue.take(&mut batch);
        let seen: Vec<(u32, &[u8])> = batch
            .messages
            .iter()
            .map(|(n, s)| (*n, &batch.bytes[s.clone()]))
            .collect();
        assert_eq!(seen, [(1, &b"abc"[..]), (2, b""), (3, b"de")]);
        assert!(!queue.over(0));
        batch.messages.clear();
        let capacity = batch.bytes.capacity();
        queue.take(&mut batch);
        assert!(batch.messages.is_empty());
        // The emptied buffer went back to the queue: the next push fills it.
        queue.push(b"xyz", |s| (4, s));
        let mut other = Batch::default();
        queue.take(&mut other);
        assert!(other.bytes.capacity() >= 3);
        assert!(capacity >= 5);
    }

    #[test]
    fn a_burst_does_not_stay_in_memory() {
        let queue: Queue<Span> = Queue::default();
        queue.push(&vec![b'x'; 3 * KEPT_BYTES], |s| s);
        let mut batch = Batch::default();
        queue.take(&mut batch);
        assert_eq!(batch.bytes.len(), 3 * KEPT_BYTES);
        batch.messages.clear();
        queue.take(&mut batch);
        // The big buffer went back to the queue emptied only if small enough: it was not.
        queue.push(b"y", |s| s);
        queue.take(&mut batch);
        assert!(batch.bytes.capacity() < KEPT_BYTES);
    }

    #[test]
    fn a_waiting_taker_wakes_for_a_push_from_another_thread_and_a_closed_queue_refuses() {
        let queue: Arc<Queue<Span>> = Arc::default();
        let pusher = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                for i in 0..1000u32 {
                    queue.push(&i.to_le_bytes(), |s| s).unwrap();
                    if i % 100 == 0 {
                        thread::yield_now();
                    }
                }
            })
        };
        let mut got = Vec::new();
        let mut batch = Batch::default();
        while got.len() < 1000 {
            assert!(queue.take_waiting(&mut batch));
            assert!(!batch.messages.is_empty());
            for span in batch.messages.drain(..) {
                got.push(u32::from_le_bytes(batch.bytes[span].try_into().unwrap()));
            }
        }
        pusher.join().unwrap();
        assert_eq!(got, (0..1000).collect::<Vec<_>>());
        // Every pusher gone and nothing queued: the taker stops waiting.
        assert!(!queue.take_waiting(&mut batch));
        queue.push(b"queued", |s| s);
        assert!(queue.over(5) && !queue.over(6));
        queue.close();
        // Nobody will take what is queued: nothing is over budget any more.
        assert!(!queue.over(0));
        assert_eq!(queue.push(b"late", |s| s), None);
    }
}
