//! Where the recorded server's own frames go: the notifications it sent unprompted, the requests
//! it sent the client (sampling, elicitation, roots), and the graceful closure of a subscription,
//! each tied to the answer it sat next to. A request from the server recorded in the middle of a
//! call (the usual sampling-inside-a-tool pattern) therefore goes out before that call's answer.
//!
//! The recording is walked once in wire order (timestamps, file order breaking ties, because an
//! HTTP recording writes a whole stream when it closes). A frame that arrived while a request was
//! outstanding belongs just *before* that request's answer (on stdio that is where a call's
//! `notifications/progress` lives); one that arrived with nothing outstanding belongs just *after*
//! the answer before it, or at the very start when no answer precedes it. Only requests the
//! recording answers count as outstanding: a request the server never answered would otherwise
//! hold every later frame back forever.
//!
//! Anchors are recorded requests (by their position among the recorded requests), so a fingerprint
//! recorded three times releases the frames of its first occurrence when its first recording is
//! consumed, and not before.

use super::recorded::Recorded;
use super::{LookupMap, LookupSet};

/// A recorded server frame's role in the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The answer to the recorded request with this index (a response, the last frame of a
    /// stream, or a listen's acknowledgment).
    Answers(usize),
    /// A frame that travels inside the stream answering a request: not scheduled.
    InStream,
    /// A frame to schedule (notification, listen closure, standalone-stream frame).
    Push,
    /// A server-initiated request (sampling, elicitation, roots, ping): placed as a notification
    /// is, and counted.
    ServerRequest,
    /// Nothing replay can place (an unpaired response, a frame of an ignored stream).
    Skip,
}

/// One event of the recorded session in wire order.
#[derive(Debug, Clone)]
pub enum Event {
    /// A client request left the client; `answered` when the recording holds its answer.
    Sent { request: usize, answered: bool },
    /// A server frame arrived (by its index among the recording's server frames).
    Arrived { role: Role, frame: usize },
}

/// Frames released together around one answer, and the slot that records, per session, whether
/// they have been released (see [`Released`]).
#[derive(Debug)]
struct Batch {
    slot: u32,
    frames: Vec<Recorded>,
}

/// The frames to release around answers. Built once and never changed: what one session has
/// released is that session's [`Released`].
#[derive(Debug, Default)]
pub struct Schedule {
    /// Due at the very start: nothing precedes them in the recording.
    initial: Vec<Recorded>,
    /// Released just before the answer to the keyed request.
    before: LookupMap<usize, Batch>,
    /// Released right after the answer to the keyed request.
    after: LookupMap<usize, Batch>,
    /// Server-initiated requests in the recording.
    server_requests: usize,
}

impl Schedule {
    /// The schedule in an order that does not depend on hashing (batches by anchor, without
    /// their slot numbers, which follow the maps' order), for tests that compare two schedules.
    #[cfg(test)]
    pub fn describe(&self) -> String {
        let sorted = |map: &LookupMap<usize, Batch>| {
            let mut batches: Vec<_> = map.iter().map(|(a, b)| (*a, &b.frames)).collect();
            batches.sort_by_key(|(a, _)| *a);
            format!("{batches:?}")
        };
        format!(
            "{:?} before {} after {} asks {}",
            self.initial,
            sorted(&self.before),
            sorted(&self.after),
            self.server_requests
        )
    }

    /// Builds the schedule from events already in wire order; `take` hands over the frame a
    /// scheduled event names.
    pub fn build(
        events: impl IntoIterator<Item = Event>,
        take: impl FnMut(usize) -> Option<Recorded>,
    ) -> Schedule {
        Schedule::plan(events).fill(take)
    }

    /// Where each scheduled frame goes, by its number, from events already in wire order: the
    /// walk of [`Schedule::build`] before any frame is handed over, so that it can run while
    /// the frames it does not schedule are taken elsewhere.
    pub fn plan(events: impl IntoIterator<Item = Event>) -> Plan {
        let mut placed = Placed::default();
        let mut anchor: Option<usize> = None;
        // Looked up twice per answered request: the fast hasher, as for every per-request map.
        let mut outstanding: LookupSet<usize> = LookupSet::default();
        let mut pending: Vec<usize> = Vec::new();
        for event in events {
            match event {
                Event::Sent { request, answered } => {
                    if answered {
                        outstanding.insert(request);
                    }
                }
                Event::Arrived { role, frame } => match role {
                    Role::Answers(request) => {
                        outstanding.remove(&request);
                        if !pending.is_empty() {
                            placed
                                .before
                                .entry(request)
                                .or_default()
                                .append(&mut pending);
                        }
                        anchor = Some(request);
                    }
                    Role::Push | Role::ServerRequest => {
                        // A request from the server is placed as a notification is; the session
                        // sends it and the front-end waits for the client's answer there.
                        placed.server_requests += usize::from(role == Role::ServerRequest);
                        if outstanding.is_empty() {
                            placed.after(anchor, frame);
                        } else {
                            pending.push(frame);
                        }
                    }
                    Role::InStream | Role::Skip => {}
                },
            }
        }
        // The recording ended with a request outstanding: there is no answer left for these to
        // precede, so they take the place they would have had without it.
        for frame in pending {
            placed.after(anchor, frame);
        }
        Plan(placed)
    }

    /// The frames due before any request.
    pub fn initial(&self) -> &[Recorded] {
        &self.initial
    }

    /// The frames released just before the answer to recorded request `anchor`.
    pub fn before(&self, anchor: usize) -> &[Recorded] {
        self.before.get(&anchor).map_or(&[], |b| &b.frames)
    }

    /// The frames released right after the answer to recorded request `anchor`.
    pub fn after(&self, anchor: usize) -> &[Recorded] {
        self.after.get(&anchor).map_or(&[], |b| &b.frames)
    }

    /// Server-initiated requests in the recording.
    pub fn server_requests(&self) -> usize {
        self.server_requests
    }

    /// How many batches there are: the size of a session's [`Released`].
    fn batches(&self) -> usize {
        self.before.len() + self.after.len()
    }
}

/// The schedule while it is being built: plain lists of frames (or of their numbers, in a
/// [`Plan`]), numbered into batches at the end.
struct Placed<F> {
    initial: Vec<F>,
    before: LookupMap<usize, Vec<F>>,
    after: LookupMap<usize, Vec<F>>,
    server_requests: usize,
}

impl<F> Default for Placed<F> {
    fn default() -> Placed<F> {
        Placed {
            initial: Vec::new(),
            before: LookupMap::default(),
            after: LookupMap::default(),
            server_requests: 0,
        }
    }
}

impl<F> Placed<F> {
    fn after(&mut self, anchor: Option<usize>, frame: F) {
        match anchor {
            Some(a) => self.after.entry(a).or_default().push(frame),
            None => self.initial.push(frame),
        }
    }
}

/// A schedule by frame numbers (see [`Schedule::plan`]).
pub struct Plan(Placed<usize>);

impl Plan {
    /// The schedule, each frame handed over by `take`. A frame `take` does not have is left
    /// out, and a batch left with none is no batch, as when [`Schedule::build`] walks with
    /// `take` in hand.
    pub fn fill(self, mut take: impl FnMut(usize) -> Option<Recorded>) -> Schedule {
        let Placed {
            initial,
            before,
            after,
            server_requests,
        } = self.0;
        let mut frames = |numbers: Vec<usize>| -> Vec<Recorded> {
            numbers.into_iter().filter_map(&mut take).collect()
        };
        let mut batches = |map: LookupMap<usize, Vec<usize>>| -> LookupMap<usize, Vec<Recorded>> {
            map.into_iter()
                .map(|(anchor, numbers)| (anchor, frames(numbers)))
                .filter(|(_, frames)| !frames.is_empty())
                .collect()
        };
        let (before, after) = (batches(before), batches(after));
        Placed {
            initial: frames(initial),
            before,
            after,
            server_requests,
        }
        .finish()
    }
}

impl Placed<Recorded> {
    fn finish(self) -> Schedule {
        let mut slot = 0u32;
        let mut number = |map: LookupMap<usize, Vec<Recorded>>| -> LookupMap<usize, Batch> {
            let mut out = LookupMap::with_capacity_and_hasher(map.len(), Default::default());
            for (anchor, frames) in map {
                out.insert(anchor, Batch { slot, frames });
                slot += 1;
            }
            out
        };
        let before = number(self.before);
        let after = number(self.after);
        Schedule {
            initial: self.initial,
            before,
            after,
            server_requests: self.server_requests,
        }
    }
}

/// One session's progress through a [`Schedule`]: which of its batches were released. A flag per
/// batch, allocated when the session starts, so releasing one allocates nothing.
#[derive(Debug, Clone)]
pub struct Released {
    initial: bool,
    batches: Vec<bool>,
}

impl Released {
    pub fn new(schedule: &Schedule) -> Released {
        Released {
            initial: false,
            batches: vec![false; schedule.batches()],
        }
    }

    /// The frames the recording opens with, the first time; nothing after that.
    pub fn initial<'s>(&mut self, schedule: &'s Schedule) -> &'s [Recorded] {
        if std::mem::replace(&mut self.initial, true) {
            return &[];
        }
        &schedule.initial
    }

    /// The frames due just before the answer to `anchor`, unless already released.
    pub fn before<'s>(&mut self, schedule: &'s Schedule, anchor: usize) -> &'s [Recorded] {
        if schedule.before.is_empty() {
            return &[];
        }
        self.take(schedule.before.get(&anchor))
    }

    /// The frames due right after the answer to `anchor`, unless already released.
    pub fn after<'s>(&mut self, schedule: &'s Schedule, anchor: usize) -> &'s [Recorded] {
        if schedule.after.is_empty() {
            return &[];
        }
        self.take(schedule.after.get(&anchor))
    }

    fn take<'s>(&mut self, batch: Option<&'s Batch>) -> &'s [Recorded] {
        let Some(batch) = batch else { return &[] };
        let released = &mut self.batches[batch.slot as usize];
        if std::mem::replace(released, true) {
            return &[];
        }
        &batch.frames
    }

    /// Frames still waiting: their anchor was never answered in this session.
    pub fn pending(&self, schedule: &Schedule) -> usize {
        let waiting = |b: &Batch| {
            if self.batches[b.slot as usize] {
                0
            } else {
                b.frames.len()
            }
        };
        let initial = if self.initial {
            0
        } else {
            schedule.initial.len()
        };
        initial
            + schedule.before.values().map(waiting).sum::<usize>()
            + schedule.after.values().map(waiting).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 7] = [
        "answer",
        "hello",
        "progress",
        "changed",
        "while-unanswered",
        "sampling",
        "tail",
    ];

    fn note(n: &str) -> Recorded {
        Recorded::new(&format!(r#"{{"jsonrpc":"2.0","method":"{n}"}}"#))
    }

    /// The frame number of a test frame.
    fn no(name: &str) -> usize {
        NAMES.iter().position(|x| *x == name).unwrap()
    }

    /// Request `request`, which the recording answers, left the client.
    fn sent(request: usize) -> Event {
        Event::Sent {
            request,
            answered: true,
        }
    }

    /// Test frame `name` arrived in `role`.
    fn arrived(role: Role, name: &str) -> Event {
        Event::Arrived {
            role,
            frame: no(name),
        }
    }

    fn names(frames: &[Recorded]) -> Vec<String> {
        frames
            .iter()
            .map(|f| {
                let v: serde_json::Value = serde_json::from_str(f.text()).unwrap();
                v["method"].as_str().unwrap_or_default().to_owned()
            })
            .collect()
    }

    #[test]
    fn before_after_and_initial() {
        let answer = |r| Event::Arrived {
            role: Role::Answers(r),
            frame: no("answer"),
        };
        let push = |n| Event::Arrived {
            role: Role::Push,
            frame: no(n),
        };
        let s = Schedule::build(
            vec![
                push("hello"),
                Event::Sent {
                    request: 0,
                    answered: true,
                },
                push("progress"),
                answer(0),
                push("changed"),
                Event::Sent {
                    request: 1,
                    answered: false,
                },
                push("while-unanswered"),
                Event::Sent {
                    request: 2,
                    answered: true,
                },
                Event::Arrived {
                    role: Role::ServerRequest,
                    frame: no("sampling"),
                },
                push("tail"),
            ],
            |i| Some(note(NAMES[i])),
        );
        assert_eq!(names(s.initial()), ["hello"]);
        assert_eq!(names(s.before(0)), ["progress"]);
        // The request from the server arrived while request 2 (never answered) was outstanding:
        // it takes its place after the last answer, in order.
        assert_eq!(
            names(s.after(0)),
            ["changed", "while-unanswered", "sampling", "tail"]
        );
        assert_eq!(s.server_requests(), 1);

        // A session releases each batch once; another session starts from the beginning.
        let mut one = Released::new(&s);
        assert_eq!(one.pending(&s), 6);
        assert_eq!(names(one.before(&s, 0)), ["progress"]);
        assert!(one.before(&s, 0).is_empty());
        assert_eq!(names(one.initial(&s)), ["hello"]);
        assert!(one.initial(&s).is_empty());
        assert_eq!(one.pending(&s), 4);
        assert_eq!(one.after(&s, 0).len(), 4);
        assert_eq!(one.pending(&s), 0);
        let mut two = Released::new(&s);
        assert_eq!(two.pending(&s), 6);
        assert_eq!(names(two.before(&s, 0)), ["progress"]);
    }

    #[test]
    fn a_request_from_the_server_inside_a_call_precedes_its_answer() {
        let s = Schedule::build(
            vec![
                sent(0),
                arrived(Role::Push, "progress"),
                arrived(Role::ServerRequest, "sampling"),
                arrived(Role::Answers(0), "answer"),
            ],
            |i| Some(note(NAMES[i])),
        );
        assert_eq!(names(s.before(0)), ["progress", "sampling"]);
        assert!(s.after(0).is_empty());
        assert_eq!(s.server_requests(), 1);
    }

    /// A frame `take` does not have is left out, and a batch it leaves empty is no batch: what
    /// the walk gave when it took each frame as it went, before the plan was filled after.
    #[test]
    fn a_frame_not_handed_over_is_left_out() {
        let events = || {
            vec![
                sent(0),
                arrived(Role::Push, "progress"),
                arrived(Role::Answers(0), "answer"),
                arrived(Role::Push, "changed"),
            ]
        };
        let all = Schedule::build(events(), |i| Some(note(NAMES[i])));
        assert_eq!(names(all.before(0)), ["progress"]);
        assert_eq!(Released::new(&all).pending(&all), 2);
        let without = Schedule::build(events(), |i| {
            (NAMES[i] != "progress").then(|| note(NAMES[i]))
        });
        assert!(without.before(0).is_empty());
        assert_eq!(names(without.after(0)), ["changed"]);
        assert_eq!(Released::new(&without).pending(&without), 1);
        assert_eq!((all.batches(), without.batches()), (2, 1));
        let planned = Schedule::plan(events()).fill(|i| Some(note(NAMES[i])));
        assert_eq!(planned.describe(), all.describe());
    }
}
