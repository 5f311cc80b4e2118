//! The upstream's deadline to start answering, kept for every request in flight by one watcher
//! thread rather than by a runtime timer per request.
//!
//! A tokio timer per request cost the forwarding thread about a thousand instructions a request
//! (registering it, removing it, and the runtime reading the clock whenever it parked with
//! timers pending): a quarter of all the recorder adds to a bare relay (docs/benchmarks.md,
//! record --http). Here a request costs a lock, a clock read and a slot in a [`Slab`]; the
//! watcher wakes a few times per timeout, marks the requests whose time is up and wakes them.
//! The price is precision: a request is cut between its deadline and one tick after it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use slab::Slab;

/// Requests in flight, each with the moment it started waiting.
pub(super) struct Deadlines {
    shared: Arc<Shared>,
}

struct Shared {
    timeout: Duration,
    waiting: Mutex<Slab<Waiting>>,
}

struct Waiting {
    since: Instant,
    /// Taken when the deadline passes: the request is woken once, to see it passed.
    waker: Option<Waker>,
}

impl Waiting {
    fn expired(&self) -> bool {
        self.waker.is_none()
    }
}

/// Ticks per timeout: a request is cut at most a tenth of its timeout late.
const TICKS_PER_TIMEOUT: u32 = 10;
/// The watcher looks at least this often, however long the timeout.
const LONGEST_TICK: Duration = Duration::from_secs(1);
/// ... and at most this often, however short.
const SHORTEST_TICK: Duration = Duration::from_millis(1);

impl Deadlines {
    /// Starts the watcher; it ends by itself once the `Deadlines` and every request are gone.
    pub(super) fn start(timeout: Duration) -> std::io::Result<Deadlines> {
        let shared = Arc::new(Shared {
            timeout,
            waiting: Mutex::new(Slab::new()),
        });
        let tick = (timeout / TICKS_PER_TIMEOUT).clamp(SHORTEST_TICK, LONGEST_TICK);
        let watched = Arc::downgrade(&shared);
        thread::Builder::new()
            .name("upstream deadlines".into())
            .spawn(move || watch(&watched, tick))?;
        Ok(Deadlines { shared })
    }

    /// How long a request may wait.
    pub(super) fn timeout(&self) -> Duration {
        self.shared.timeout
    }

    /// `future`, given until the timeout to finish once it first waits: `None` if it did not.
    pub(super) fn within<F: Future>(&self, future: F) -> Within<F> {
        Within {
            future,
            shared: Arc::clone(&self.shared),
            slot: None,
        }
    }
}

fn watch(shared: &Weak<Shared>, tick: Duration) {
    loop {
        thread::sleep(tick);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let now = Instant::now();
        let mut waiting = lock(&shared.waiting);
        for (_, request) in waiting.iter_mut() {
            if now.duration_since(request.since) >= shared.timeout {
                if let Some(waker) = request.waker.take() {
                    waker.wake();
                }
            }
        }
    }
}

/// A poisoned lock only means a panic elsewhere while it was held; the slab is still whole
/// (every change to it is a single call).
fn lock(waiting: &Mutex<Slab<Waiting>>) -> MutexGuard<'_, Slab<Waiting>> {
    waiting
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A future with a deadline; see [`Deadlines::within`].
pub(super) struct Within<F> {
    future: F,
    shared: Arc<Shared>,
    /// Its slot among the waiting, from its first wait on.
    slot: Option<usize>,
}

impl<F> Within<F> {
    fn release(&mut self) {
        if let Some(slot) = self.slot.take() {
            lock(&self.shared.waiting).remove(slot);
        }
    }
}

impl<F> Drop for Within<F> {
    fn drop(&mut self) {
        self.release();
    }
}

impl<F: Future + Unpin> Future for Within<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Poll::Ready(output) = Pin::new(&mut this.future).poll(cx) {
            this.release();
            return Poll::Ready(Some(output));
        }
        let mut waiting = lock(&this.shared.waiting);
        match this.slot {
            None => {
                this.slot = Some(waiting.insert(Waiting {
                    since: Instant::now(),
                    waker: Some(cx.waker().clone()),
                }));
            }
            Some(slot) => {
                let request = &mut waiting[slot];
                if request.expired() {
                    drop(waiting);
                    this.release();
                    return Poll::Ready(None);
                }
                if let Some(waker) = &mut request.waker {
                    waker.clone_from(cx.waker());
                }
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_that_answers_in_time_is_not_cut_and_leaves_no_slot() {
        let deadlines = Deadlines::start(Duration::from_millis(500)).unwrap();
        let answered = deadlines
            .within(Box::pin(async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                7
            }))
            .await;
        assert_eq!(answered, Some(7));
        assert!(lock(&deadlines.shared.waiting).is_empty());
    }

    #[tokio::test]
    async fn a_request_past_its_deadline_is_cut_within_a_tick() {
        let timeout = Duration::from_millis(100);
        let deadlines = Deadlines::start(timeout).unwrap();
        let started = Instant::now();
        let answered = deadlines.within(std::future::pending::<()>()).await;
        let took = started.elapsed();
        assert_eq!(answered, None);
        assert!(took >= timeout, "cut early, after {took:?}");
        // One tick late at most, with room for a loaded test machine.
        assert!(took < timeout * 5, "cut late, after {took:?}");
        assert!(lock(&deadlines.shared.waiting).is_empty());
    }

    #[tokio::test]
    async fn a_request_given_up_on_frees_its_slot_and_the_watcher_ends_with_the_last_user() {
        let deadlines = Deadlines::start(Duration::from_millis(50)).unwrap();
        let watched = Arc::downgrade(&deadlines.shared);
        let mut hanging = deadlines.within(std::future::pending::<()>());
        assert!(poll_once(&mut hanging).await.is_pending(), "waits at first");
        assert_eq!(lock(&deadlines.shared.waiting).len(), 1);
        drop(hanging);
        assert!(lock(&deadlines.shared.waiting).is_empty());
        drop(deadlines);
        // The watcher holds only a weak reference between its ticks.
        let started = Instant::now();
        while watched.strong_count() > 0 {
            assert!(started.elapsed() < Duration::from_secs(5));
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// Polls `future` once, from inside a task.
    async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
        std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *future).poll(cx))).await
    }
}
