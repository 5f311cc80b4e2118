//! Where the recorded server's own frames go: the notifications it sent unprompted, and the
//! graceful closure of a subscription, each tied to the answer it sat next to.
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

use std::collections::HashSet;

use super::LookupMap;
use super::index::Recorded;

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
    /// A server-initiated request: counted, never sent.
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

/// The frames to release around answers.
#[derive(Debug, Default)]
pub struct Schedule {
    /// Due at the very start: nothing precedes them in the recording.
    pub initial: Vec<Recorded>,
    /// Released just before the answer to the keyed request.
    pub before: LookupMap<usize, Vec<Recorded>>,
    /// Released right after the answer to the keyed request.
    pub after: LookupMap<usize, Vec<Recorded>>,
    /// Server-initiated requests in the recording (never replayed).
    pub server_requests: usize,
}

impl Schedule {
    /// Builds the schedule from events already in wire order; `take` hands over the frame a
    /// scheduled event names.
    pub fn build(events: Vec<Event>, mut take: impl FnMut(usize) -> Option<Recorded>) -> Schedule {
        let mut schedule = Schedule::default();
        let mut anchor: Option<usize> = None;
        let mut outstanding: HashSet<usize> = HashSet::new();
        let mut pending: Vec<Recorded> = Vec::new();
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
                            schedule
                                .before
                                .entry(request)
                                .or_default()
                                .append(&mut pending);
                        }
                        anchor = Some(request);
                    }
                    Role::Push => {
                        let Some(frame) = take(frame) else { continue };
                        if outstanding.is_empty() {
                            schedule.place_after(anchor, frame);
                        } else {
                            pending.push(frame);
                        }
                    }
                    Role::ServerRequest => schedule.server_requests += 1,
                    Role::InStream | Role::Skip => {}
                },
            }
        }
        // The recording ended with a request outstanding: there is no answer left for these to
        // precede, so they take the place they would have had without it.
        for frame in pending {
            schedule.place_after(anchor, frame);
        }
        schedule
    }

    fn place_after(&mut self, anchor: Option<usize>, frame: Recorded) {
        match anchor {
            Some(a) => self.after.entry(a).or_default().push(frame),
            None => self.initial.push(frame),
        }
    }

    /// Frames still waiting: their anchor was never answered in this session.
    pub fn pending(&self) -> usize {
        self.initial.len()
            + self.before.values().map(Vec::len).sum::<usize>()
            + self.after.values().map(Vec::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::index::Recorded;

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
        let no = |n: &str| NAMES.iter().position(|x| *x == n).unwrap();
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
        assert_eq!(names(&s.initial), ["hello"]);
        assert_eq!(names(&s.before[&0]), ["progress"]);
        assert_eq!(names(&s.after[&0]), ["changed", "while-unanswered", "tail"]);
        assert_eq!(s.server_requests, 1);
        assert_eq!(s.pending(), 5);
    }
}
