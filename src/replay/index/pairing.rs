//! Phase 2 of building an index (see `build`): each answer is paired with the oldest request
//! still waiting under its id, in file order.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use super::IdKey;
use super::read::{InOrder, Recording, RequestItem, StreamItem};
use crate::replay::{LookupMap, LookupSet};

/// What answers a request: a server frame or a stream, by index.
#[derive(Clone, Copy)]
pub(super) enum Reply {
    Frame(usize),
    Stream(usize),
}

/// Phase 2's product: which frame or stream answers each request.
pub(super) struct Replies {
    /// By request.
    pub(super) of: Vec<Option<Reply>>,
    /// Responses that close a listen gracefully: scheduled like a notification, not answers.
    pub(super) closures: LookupSet<usize>,
    /// Streams a listen opened.
    pub(super) listen_streams: LookupSet<usize>,
    /// The standalone GET stream that is served (the first one).
    pub(super) standalone: Option<usize>,
}

impl Replies {
    /// Phase 2: walks the frames in file order (`order`, consumed), giving each answer to the
    /// oldest request still waiting under its id.
    pub(super) fn pair(order: Vec<InOrder>, rec: &Recording) -> Replies {
        let (requests, servers, streams) = (&rec.requests, &rec.servers, &rec.streams);
        let mut replies = Replies {
            of: vec![None; requests.len()],
            closures: LookupSet::default(),
            listen_streams: LookupSet::default(),
            standalone: None,
        };
        // Keyed by ids borrowed from the recording: no copy of an id per request.
        let mut waiting: LookupMap<&IdKey, Queue> = LookupMap::default();
        let mut early: LookupMap<&IdKey, Queue> = LookupMap::default();
        for item in &order {
            match *item {
                InOrder::Request(r) => {
                    let r = r as usize;
                    let key = &requests[r].key;
                    if !requests[r].listen {
                        if let Some(s) = pop_early(&mut early, key) {
                            replies.of[r] = Some(Reply::Frame(s));
                            continue;
                        }
                    }
                    waiting.entry(key).or_default().push_back(r);
                }
                InOrder::Server(s) => {
                    let s = s as usize;
                    let item = &servers[s];
                    if !item.is_response() {
                        continue;
                    }
                    let Some(key) = item.id.as_ref() else {
                        continue;
                    };
                    // A listen's graceful closure tags its result with the listen id; anything
                    // else is an ordinary answer.
                    let closes_listen = rec.tag(s) == Some(key);
                    match take_waiting(&mut waiting, key, requests, closes_listen) {
                        Some(r) if requests[r].listen => {
                            replies.closures.insert(s);
                        }
                        Some(r) => replies.of[r] = Some(Reply::Frame(s)),
                        None => early.entry(key).or_default().push_back(s),
                    }
                }
                InOrder::Stream(st) => {
                    let st = st as usize;
                    let Some(key) = streams[st].key.as_ref() else {
                        // One standalone GET endpoint: the first such stream is served, the others
                        // are ignored.
                        if replies.standalone.is_none() {
                            replies.standalone = Some(st);
                        }
                        continue;
                    };
                    let opens_listen = streams[st].frames.first().is_some_and(|&s| servers[s].ack);
                    match take_waiting(&mut waiting, key, requests, opens_listen) {
                        Some(r) if requests[r].listen => {
                            replies.listen_streams.insert(st);
                        }
                        Some(r) if !streams[st].frames.is_empty() => {
                            replies.of[r] = Some(Reply::Stream(st))
                        }
                        _ => {}
                    }
                }
            }
        }
        replies
    }

    /// The server frame that ends request `r`'s answer.
    pub(super) fn last_frame(&self, r: usize, streams: &[StreamItem]) -> Option<usize> {
        match self.of[r] {
            Some(Reply::Frame(s)) => Some(s),
            Some(Reply::Stream(st)) => streams[st].frames.last().copied(),
            None => None,
        }
    }
}

/// Requests (or early answers) waiting under one id, oldest first. Ids are mostly unique, so
/// the queue nearly always holds one, which is kept without an allocation: a `VecDeque` per id
/// cost an allocation and a free per recorded call.
#[derive(Default)]
struct Queue {
    /// The oldest; `None` only when the queue is empty.
    head: Option<usize>,
    rest: VecDeque<usize>,
}

impl Queue {
    fn push_back(&mut self, item: usize) {
        if self.head.is_none() {
            self.head = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    fn pop_front(&mut self) -> Option<usize> {
        let first = self.head.take()?;
        self.head = self.rest.pop_front();
        Some(first)
    }

    fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    fn iter(&self) -> impl Iterator<Item = &usize> {
        self.head.iter().chain(&self.rest)
    }

    /// Takes the item at `at` (counted from the oldest).
    fn remove(&mut self, at: usize) -> Option<usize> {
        match at.checked_sub(1) {
            None => self.pop_front(),
            Some(at) => self.rest.remove(at),
        }
    }
}

/// Takes the oldest request waiting under `key`, preferring a listen when `listen_first` (a
/// closure or a subscription stream) and an ordinary request otherwise.
fn take_waiting<'r>(
    waiting: &mut LookupMap<&'r IdKey, Queue>,
    key: &'r IdKey,
    requests: &[RequestItem],
    listen_first: bool,
) -> Option<usize> {
    // One lookup for the queue and its removal (nearly every answer empties its queue).
    let Entry::Occupied(mut slot) = waiting.entry(key) else {
        return None;
    };
    let queue = slot.get_mut();
    let at = queue
        .iter()
        .position(|&r| requests[r].listen == listen_first)
        .or(if queue.is_empty() { None } else { Some(0) })?;
    let taken = queue.remove(at);
    if queue.is_empty() {
        // Ids are mostly unique: keeping an empty queue per answered id would make this map as
        // large as the recording (5 MB for 50,000 calls) instead of as large as what is in flight.
        slot.remove();
    }
    taken
}

/// The oldest answer recorded ahead of any request under `key`; an emptied queue is dropped.
fn pop_early(early: &mut LookupMap<&IdKey, Queue>, key: &IdKey) -> Option<usize> {
    // Looked up before anything else: the map is nearly always empty, and then answers without
    // hashing the key.
    let queue = early.get_mut(key)?;
    let first = queue.pop_front();
    if queue.is_empty() {
        early.remove(key);
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The pairing queue keeps its first item inline; it behaves as the `VecDeque` it
        /// replaced, whatever is pushed, popped and taken from the middle.
        #[test]
        fn the_pairing_queue_is_a_deque(ops in proptest::collection::vec((0_u8..3, 0_usize..6), 0..40)) {
            let (mut queue, mut deque) = (Queue::default(), VecDeque::new());
            for (n, (op, at)) in ops.into_iter().enumerate() {
                match op {
                    0 => {
                        queue.push_back(n);
                        deque.push_back(n);
                    }
                    1 => proptest::prop_assert_eq!(queue.pop_front(), deque.pop_front()),
                    _ => proptest::prop_assert_eq!(queue.remove(at), deque.remove(at)),
                }
                proptest::prop_assert_eq!(queue.is_empty(), deque.is_empty());
                proptest::prop_assert!(queue.iter().eq(deque.iter()));
            }
        }
    }
}
