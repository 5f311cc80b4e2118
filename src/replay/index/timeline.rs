//! Phase 3 of building an index (see `build`): every frame of the recording in wire order, as
//! one tagged index each, and the subscriptions' acknowledgments paired with their listens.
//! Wire order is the recorded time, then file order; a request the file put after its own
//! answer is moved just ahead of it, since no answer precedes its request on the wire.

use super::pairing::Replies;
use super::read::{Recording, RequestItem, ServerItem, WireKey};
use crate::replay::{LookupMap, LookupSet};

/// A frame on the timeline: a recorded request or a server frame, by its index in its list.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timed(usize);

impl Timed {
    const REQUEST: usize = 1 << (usize::BITS - 1);

    fn request(i: usize) -> Timed {
        Timed(i | Timed::REQUEST)
    }

    fn server(i: usize) -> Timed {
        Timed(i)
    }

    /// Whether it is a request, and its index.
    pub(super) fn split(self) -> (bool, usize) {
        (self.0 & Timed::REQUEST != 0, self.0 & !Timed::REQUEST)
    }
}

/// Which listen each acknowledgment answers (part of phase 3's product).
#[derive(Default)]
pub(super) struct Acks {
    /// Server frame -> the listen request it acknowledges.
    pub(super) of: LookupMap<usize, usize>,
    /// Listen requests that got an acknowledgment.
    pub(super) acked: LookupSet<usize>,
}

/// Every request's wire key as the file gives it, and the timeline those keys make: what phase 3
/// starts from. It needs nothing from pairing, so on a large cassette it is built beside it; the
/// few requests that pairing shows must move (see [`wire_order`]) are moved after.
pub(super) struct Placed {
    request_key: Vec<WireKey>,
    pub(super) timeline: Vec<Timed>,
}

impl Placed {
    pub(super) fn of(rec: &Recording) -> Placed {
        let request_key: Vec<WireKey> = rec.requests.iter().map(RequestItem::wire_key).collect();
        let timeline = timeline(&rec.servers, &request_key);
        Placed {
            request_key,
            timeline,
        }
    }
}

/// The requests written after their own answer, each with the wire key that puts it just ahead
/// of the answer (see [`move_ahead`]): part of phase 3 that needs only pairing, so on a large
/// cassette it runs while the second thread lays the timeline out.
pub(super) fn answered_early(rec: &Recording, replies: &Replies) -> Vec<(usize, WireKey)> {
    let mut early = Vec::new();
    for (r, request) in rec.requests.iter().enumerate() {
        if let Some(a) = replies.last_frame(r, &rec.streams) {
            let mut key = request.wire_key();
            if move_ahead(&mut key, rec.servers[a].wire_key()) {
                early.push((r, key));
            }
        }
    }
    early
}

/// Phase 3: every frame in wire order (timestamps, then file order), as one tagged index each,
/// and the acknowledgments paired with their listens. A request is moved just ahead of its
/// answer (or acknowledgment) when the file put it after (`early`, see [`answered_early`]); the
/// timeline `placed` holds is built again only then (it is the keys' order, so the same as
/// building it after the moves).
pub(super) fn wire_order(
    rec: &Recording,
    replies: &Replies,
    placed: Placed,
    early: &[(usize, WireKey)],
) -> (Vec<Timed>, Acks) {
    let (requests, servers) = (&rec.requests, &rec.servers);
    let Placed {
        mut request_key,
        mut timeline,
    } = placed;
    // A recorder that writes a request's line after the answer it caused (a capture thread
    // per direction) can leave the two in the same millisecond in the wrong file order; no
    // answer precedes its request on the wire, so the request is put back in front of it.
    for &(r, key) in early {
        request_key[r] = key;
    }
    if !early.is_empty() {
        timeline = self::timeline(servers, &request_key);
    }

    // Acknowledgments pair with the listen they name, else with the oldest still unacknowledged.
    let listen_reqs: Vec<usize> = (0..requests.len())
        .filter(|&r| requests[r].listen)
        .collect();
    let mut acks = Acks::default();
    if listen_reqs.is_empty() {
        return (timeline, acks);
    }
    for (is_req, i) in timeline.iter().map(|t| t.split()) {
        if is_req || !servers[i].ack {
            continue;
        }
        let item = &servers[i];
        if item.stream.map(|st| st as usize).is_some_and(|st| {
            !replies.listen_streams.contains(&st) && Some(st) != replies.standalone
        }) {
            continue;
        }
        let by_tag = rec.tag(i).and_then(|key| {
            listen_reqs
                .iter()
                .copied()
                .find(|r| !acks.acked.contains(r) && requests[*r].key == *key)
        });
        let found = by_tag.or_else(|| {
            listen_reqs
                .iter()
                .copied()
                .find(|r| !acks.acked.contains(r))
        });
        if let Some(r) = found {
            acks.acked.insert(r);
            acks.of.insert(i, r);
        }
    }
    // The same for a listen and its acknowledgment.
    let mut moved = false;
    for (&s, &r) in &acks.of {
        moved |= move_ahead(&mut request_key[r], servers[s].wire_key());
    }
    if moved {
        timeline = self::timeline(servers, &request_key);
    }
    (timeline, acks)
}

/// Puts a request's wire key just ahead of its answer's when the answer sorts first.
pub(super) fn move_ahead(request: &mut WireKey, answer: WireKey) -> bool {
    if answer < *request {
        let (t, entry, within, _) = answer;
        *request = (t, entry, within, -1);
        return true;
    }
    false
}

/// Every frame in wire order, as one tagged index each (8 bytes a frame: on a large cassette this
/// list is as long as the file), ordered by the keys it points at.
pub(super) fn timeline(servers: &[ServerItem], request_key: &[WireKey]) -> Vec<Timed> {
    in_order(request_key.len(), servers.len(), |t| {
        let (is_req, i) = t.split();
        let key = if is_req {
            request_key[i]
        } else {
            servers[i].wire_key()
        };
        (key, !is_req, i)
    })
}

/// `requests` requests and `servers` server frames, ordered by `key` (distinct for each). The
/// two lists are nearly always in order already (file order, but for the few requests moved
/// ahead of their answers): then they are merged, each key looked up once by the merge, where a
/// sort compared and looked keys up twice as often; else they are sorted. The same order either
/// way (a property test compares the two).
fn in_order<K: Ord>(requests: usize, servers: usize, key: impl Fn(Timed) -> K) -> Vec<Timed> {
    let mut timeline: Vec<Timed> = Vec::with_capacity(requests + servers);
    if (0..requests).map(|r| key(Timed::request(r))).is_sorted()
        && (0..servers).map(|s| key(Timed::server(s))).is_sorted()
    {
        let mut requests_left = (0..requests).map(|r| (key(Timed::request(r)), Timed::request(r)));
        let mut servers_left = (0..servers).map(|s| (key(Timed::server(s)), Timed::server(s)));
        let (mut request, mut server) = (requests_left.next(), servers_left.next());
        while let (Some((rk, r)), Some((sk, s))) = (&request, &server) {
            if rk < sk {
                timeline.push(*r);
                request = requests_left.next();
            } else {
                timeline.push(*s);
                server = servers_left.next();
            }
        }
        timeline.extend(request.into_iter().chain(requests_left).map(|(_, t)| t));
        timeline.extend(server.into_iter().chain(servers_left).map(|(_, t)| t));
        return timeline;
    }
    timeline.extend((0..requests).map(Timed::request));
    timeline.extend((0..servers).map(Timed::server));
    timeline.sort_by_key(|&t| key(t));
    timeline
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::cassette::Reader;
    use crate::replay::volatile::VolatileSet;

    proptest::proptest! {
        /// Merging the two lists gives the order sorting them gives, in order or not.
        #[test]
        fn the_timeline_merge_is_the_sort(
            requests in proptest::collection::vec(0_u16..500, 0..60),
            servers in proptest::collection::vec(0_u16..500, 0..60),
            sorted in proptest::bool::ANY,
        ) {
            let (mut requests, mut servers) = (requests, servers);
            if sorted {
                requests.sort_unstable();
                servers.sort_unstable();
            }
            // Distinct keys, as wire keys are: the value, the side, the index.
            let key = |t: Timed| {
                let (is_req, i) = t.split();
                let k = if is_req { requests[i] } else { servers[i] };
                (k, !is_req, i)
            };
            let got: Vec<usize> = in_order(requests.len(), servers.len(), key)
                .into_iter()
                .map(|t| t.0)
                .collect();
            let mut all: Vec<Timed> = (0..requests.len())
                .map(Timed::request)
                .chain((0..servers.len()).map(Timed::server))
                .collect();
            all.sort_by_key(|&t| key(t));
            let want: Vec<usize> = all.into_iter().map(|t| t.0).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// The timeline placed beside pairing, then mended for the requests pairing shows must move,
    /// is the one placed after the moves: the plain way below, on a recording where two
    /// requests were written after their answers (as two capture threads can write them).
    #[test]
    fn the_timeline_placed_before_pairing_is_the_one_placed_after() {
        let header = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;
        let lines = [
            r#"{"type":"frame","t":5,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#,
            r#"{"type":"frame","t":5,"dir":"s2c","frame":{"jsonrpc":"2.0","method":"notifications/message","params":{}}}"#,
            r#"{"type":"frame","t":5,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#,
            r#"{"type":"frame","t":7,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"ping"}}"#,
            r#"{"type":"frame","t":9,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"result":{}}}"#,
            r#"{"type":"frame","t":9,"dir":"s2c","frame":{"jsonrpc":"2.0","id":3,"result":{}}}"#,
            r#"{"type":"frame","t":9,"dir":"c2s","frame":{"jsonrpc":"2.0","id":3,"method":"ping"}}"#,
        ];
        let text = format!("{header}\n{}\n", lines.join("\n"));
        let path = Path::new("t.jsonl");
        let reader = Reader::new(text.as_bytes(), path).unwrap();
        let mut rec = Recording::read(reader, &VolatileSet::default(), path).unwrap();
        let replies = Replies::pair(std::mem::take(&mut rec.order), &rec);
        let placed = Placed::of(&rec);
        let unmoved: Vec<usize> = placed.timeline.iter().map(|t| t.0).collect();
        // The plain way: every request's key moved first, then the timeline placed once.
        let mut request_key: Vec<WireKey> =
            rec.requests.iter().map(RequestItem::wire_key).collect();
        for (r, key) in request_key.iter_mut().enumerate() {
            if let Some(a) = replies.last_frame(r, &rec.streams) {
                move_ahead(key, rec.servers[a].wire_key());
            }
        }
        let plain: Vec<usize> = timeline(&rec.servers, &request_key)
            .iter()
            .map(|t| t.0)
            .collect();
        let early = answered_early(&rec, &replies);
        let (mended, _) = wire_order(&rec, &replies, placed, &early);
        let mended: Vec<usize> = mended.iter().map(|t| t.0).collect();
        assert_ne!(
            unmoved, plain,
            "no request was moved: the test says nothing"
        );
        assert_eq!(mended, plain);
    }
}
