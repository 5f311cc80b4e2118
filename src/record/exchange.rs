//! The HTTP exchanges a recording proxy has sent on and not yet seen answered, as the capture
//! thread knows them.
//!
//! An answer's entry needs two facts about its request: its id (a streamed answer's `chunks`
//! entry names the request it answers) and the status the exchange implies (an answer with
//! another one is recorded with `http.status`). Both come from reading the request, which the
//! capture does anyway to record it. The proxy therefore only numbers each exchange and hands
//! the number along with the request and with its answer; the reading happens here, off the
//! forwarding path (docs/benchmarks.md, record --http: the proxy thread's work per request is
//! what bounds its added latency).

use std::collections::HashMap;

use crate::cassette::{Entry, EntryKind};
use crate::jsonrpc::{FrameKind, Id};

/// How many exchanges, counted back from the newest, are remembered while unanswered. An
/// exchange whose answer carries no body the capture reads (a `202`, an error, a compressed
/// answer) is never taken back; it is forgotten once this many newer ones were sent. An answer
/// that comes after that is recorded as an answer to an unknown request (no id, status `200`
/// implied).
const REMEMBERED: u64 = 65_536;

/// What a POST carried, as far as its answer's entry cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    /// The request id, when the body was one request.
    pub(crate) id: Option<Id>,
    /// The status the exchange implies: 200 for a request, 202 for anything else.
    pub(crate) expected: u16,
}

impl Sent {
    /// What a POST body tells its answer, from the entry it was recorded as: a frame keeps its
    /// kind and id through redaction, so the recorded frame tells what the sent one did.
    pub(crate) fn of(entry: Option<&Entry>) -> Sent {
        match entry.map(|e| &e.kind) {
            Some(EntryKind::Frame(f)) if f.kind() == FrameKind::Request => Sent {
                id: f.id().cloned(),
                expected: 200,
            },
            Some(EntryKind::Frame(_)) => Sent {
                id: None,
                expected: 202,
            },
            // A batch or something unreadable: the server answers it as it will; 200 is what a
            // request would get.
            _ => Sent::UNKNOWN,
        }
    }

    const UNKNOWN: Sent = Sent {
        id: None,
        expected: 200,
    };
}

/// Exchanges sent and not yet answered, by the number the proxy gave each. The numbers are the
/// proxy's own counter, not anything a client chose, so the fast hash the replay index uses
/// is safe here; SipHash cost the capture thread about 150 instructions a message.
#[derive(Debug, Default)]
pub(crate) struct Exchanges {
    open: HashMap<u64, Sent, foldhash::fast::RandomState>,
    newest: u64,
}

impl Exchanges {
    /// Exchange `number` sent `sent`.
    pub(crate) fn sent(&mut self, number: u64, sent: Sent) {
        self.newest = self.newest.max(number);
        self.open.insert(number, sent);
        if self.open.len() as u64 > 2 * REMEMBERED {
            let oldest = self.newest.saturating_sub(REMEMBERED);
            self.open.retain(|&n, _| n >= oldest);
        }
    }

    /// What exchange `number` sent, now that its answer came; unknown when it was forgotten.
    pub(crate) fn answered(&mut self, number: u64) -> Sent {
        self.open.remove(&number).unwrap_or(Sent::UNKNOWN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Dir;
    use crate::jsonrpc::Frame;

    fn entry(text: &str) -> Entry {
        match Frame::parse(text) {
            Some(frame) => Entry::new_frame(0, Dir::C2s, frame),
            None => Entry::new_raw(0, Dir::C2s, text.to_owned()),
        }
    }

    #[test]
    fn a_request_implies_200_and_names_its_id_anything_else_202_or_unknown() {
        let request = entry(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#);
        assert_eq!(
            Sent::of(Some(&request)),
            Sent {
                id: Some(Id::Str("a".into())),
                expected: 200
            }
        );
        let note = entry(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(Sent::of(Some(&note)).expected, 202);
        assert_eq!(Sent::of(Some(&entry("[1,2]"))), Sent::UNKNOWN);
        assert_eq!(Sent::of(None), Sent::UNKNOWN);
    }

    #[test]
    fn an_answer_takes_its_exchange_once_and_old_ones_are_forgotten() {
        let mut open = Exchanges::default();
        let sent = |expected| Sent { id: None, expected };
        open.sent(1, sent(202));
        assert_eq!(open.answered(1).expected, 202);
        assert_eq!(open.answered(1), Sent::UNKNOWN);
        for n in 2..(2 * REMEMBERED + 10) {
            open.sent(n, sent(202));
        }
        assert!(open.open.len() as u64 <= 2 * REMEMBERED);
        assert_eq!(open.answered(2), Sent::UNKNOWN);
        assert_eq!(open.answered(2 * REMEMBERED + 9).expected, 202);
    }
}
