//! Which pass through the recording answers an HTTP request (docs/http.md, "Replay server",
//! "Many sessions at once").
//!
//! Every client session gets its own [`Session`] over the one shared index, so parallel clients
//! each see the whole recording:
//!
//! - a legacy recording whose server minted session ids (`sessioned`): every `initialize` starts
//!   a session under a freshly minted id, sent back in `mcp-session-id`; a request naming that id
//!   is answered by that session. A request with no id, or one this replay never minted (or
//!   already forgot), is warned about and answered by the session the latest `initialize`
//!   started, as the reference's single session would answer it;
//! - any other recording (no ids on the wire to tell clients apart): one current pass, and every
//!   handshake (`initialize` in the legacy era, `server/discover` in the modern one) starts a new
//!   one, so clients that run one after another each get the whole recording.
//!
//! Sessions are never a leak: one idle (no request, no open stream, no request from the server
//! waiting for its answer) for [`IDLE`] is ended, and past [`MAX_SESSIONS`] the least recently
//! used idle session is ended to make room. Ending a session keeps only its summary lines and
//! counts.
//!
//! Locks: the table's lock is held only to find or insert a session; a session's own lock only
//! while the synchronous engine answers one message. Neither is ever held across an await.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::asks::Pending;
use super::streams::Streams;
use crate::replay::index::Index;
use crate::replay::session::{Rules, Session, Stats};
use crate::replay::usage::Usage;
use crate::replay::{LookupMap, OnMiss};

/// A session with no request and no open stream for this long is ended.
pub const IDLE: Duration = Duration::from_secs(600);
/// Sessions kept at most; past it the least recently used idle one is ended.
pub const MAX_SESSIONS: usize = 10_000;
/// How often the table is swept for idle sessions (on the next session created).
const SWEEP_EVERY: Duration = Duration::from_secs(10);
/// Ended sessions whose summary lines are kept one by one; the rest only add to the totals.
const KEPT_SUMMARIES: usize = 100;

/// One client session: its pass through the recording and the streams it holds open.
#[derive(Debug)]
pub struct ClientSession {
    /// 1, 2, 3… in the order sessions started: how diagnostics name it.
    pub label: u64,
    /// The minted `mcp-session-id` (sessioned recordings only).
    pub id: Option<Arc<str>>,
    state: Mutex<State>,
    /// Milliseconds since the replay started, at the last request.
    last_used: AtomicU64,
}

/// What a session's lock guards.
#[derive(Debug)]
pub struct State {
    pub session: Session,
    pub streams: Streams,
    /// Requests from the server sent to this client, waiting for its answer.
    pub asks: Pending,
    /// Ended already (deleted, replaced, expired): its summary is taken.
    pub ended: bool,
}

impl ClientSession {
    /// The session's state, locked. A panic while answering (a bug) poisons nothing for good:
    /// the state is still the engine's, whole between messages.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What an ended session leaves behind.
#[derive(Debug, Default)]
pub struct Totals {
    pub sessions: u64,
    pub misses: usize,
    pub borrowed: usize,
    pub undelivered: usize,
    /// Client answers to requests from the server that differ from the recorded ones, or never
    /// came: they fail the run as misses do.
    pub ask_failures: usize,
    /// Summary lines of the first ended sessions, each already naming its session.
    pub lines: Vec<String>,
    /// Sessions whose lines are in `lines`.
    listed: usize,
    /// Ended sessions with something to report whose lines were not kept.
    pub unlisted: u64,
}

impl Totals {
    fn add(&mut self, label: u64, state: &mut State, forwarded: Option<(usize, usize, &str)>) {
        state.streams.finish();
        // A request still waiting when its session ends was not answered: the task that waits
        // for it learns so from the dropped sender, after the counts below are taken.
        for waiting in state.asks.drain() {
            state.session.ask_unanswered(&waiting.asked);
        }
        let stats: &Stats = state.session.stats();
        self.sessions += 1;
        self.misses += stats.misses;
        self.borrowed += stats.borrowed;
        self.ask_failures += stats.ask_failures();
        self.undelivered += state.streams.undelivered;
        let mut lines = state.session.summary(forwarded);
        if state.streams.undelivered > 0 {
            lines.push(format!(
                "{} server-initiated frame(s) came due with no stream open to carry them",
                state.streams.undelivered
            ));
        }
        if lines.is_empty() {
            return;
        }
        if self.listed < KEPT_SUMMARIES {
            self.listed += 1;
            self.lines
                .extend(lines.into_iter().map(|l| format!("session {label}: {l}")));
        } else {
            self.unlisted += 1;
        }
    }
}

/// Every live client session.
#[derive(Debug)]
pub struct Sessions {
    index: Arc<Index>,
    rules: Rules,
    on_miss: OnMiss,
    sessioned: bool,
    started: Instant,
    next_label: AtomicU64,
    table: Mutex<Table>,
    limits: Limits,
    /// Unsolicited frames travel on a GET stream (a legacy recording that has one).
    get_served: bool,
    /// What every session served, counted together (docs/replay.md, "Unused recordings").
    usage: Arc<Usage>,
}

/// When sessions are ended for being idle, and how many may live at once.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub idle: Duration,
    pub max: usize,
    pub sweep_every: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            idle: IDLE,
            max: MAX_SESSIONS,
            sweep_every: SWEEP_EVERY,
        }
    }
}

#[derive(Debug)]
struct Table {
    by_id: LookupMap<Arc<str>, Arc<ClientSession>>,
    /// The latest `initialize`'s session (sessioned), or the current pass (otherwise).
    current: Option<Arc<ClientSession>>,
    last_sweep: Instant,
    totals: Totals,
}

/// Why a request was answered by a session other than the one it named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// A sessioned recording and no `mcp-session-id` header.
    Absent,
    /// An id this replay did not mint, or already forgot.
    Unknown(String),
}

impl Sessions {
    pub fn new(index: Arc<Index>, rules: Rules, on_miss: OnMiss, sessioned: bool) -> Sessions {
        Sessions::with_limits(index, rules, on_miss, sessioned, Limits::default())
    }

    pub fn with_limits(
        index: Arc<Index>,
        rules: Rules,
        on_miss: OnMiss,
        sessioned: bool,
        limits: Limits,
    ) -> Sessions {
        Sessions {
            limits,
            get_served: false,
            usage: Arc::new(Usage::new(Arc::clone(&index))),
            index,
            rules,
            on_miss,
            sessioned,
            started: Instant::now(),
            next_label: AtomicU64::new(1),
            table: Mutex::new(Table {
                by_id: LookupMap::default(),
                current: None,
                last_sweep: Instant::now(),
                totals: Totals::default(),
            }),
        }
    }

    /// Unsolicited frames go to the GET stream (queued until it opens) rather than being counted
    /// as undeliverable.
    pub fn with_get_stream(mut self, served: bool) -> Sessions {
        self.get_served = served;
        self
    }

    /// What the sessions served, over all of them.
    pub fn usage(&self) -> &Arc<Usage> {
        &self.usage
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The session that answers a request. `handshake`: the request starts a session
    /// (`initialize`, or `server/discover` in the modern era); `named`: its `mcp-session-id`.
    pub fn for_request(
        &self,
        handshake: bool,
        named: Option<&str>,
    ) -> (Arc<ClientSession>, Option<Mismatch>) {
        let mut table = self.table();
        if handshake {
            let session = self.start(&mut table);
            return (session, None);
        }
        let mut mismatch = None;
        if self.sessioned {
            match named {
                Some(id) => match table.by_id.get(id) {
                    Some(found) => {
                        let found = Arc::clone(found);
                        found.last_used.store(self.now_ms(), Ordering::Relaxed);
                        return (found, None);
                    }
                    None => mismatch = Some(Mismatch::Unknown(id.to_owned())),
                },
                None => mismatch = Some(Mismatch::Absent),
            }
        }
        let session = match &table.current {
            Some(current) if !current.lock().ended => Arc::clone(current),
            _ => self.start(&mut table),
        };
        session.last_used.store(self.now_ms(), Ordering::Relaxed);
        (session, mismatch)
    }

    /// The session a request names, without starting one (GET and DELETE).
    pub fn named(&self, named: Option<&str>) -> (Option<Arc<ClientSession>>, Option<Mismatch>) {
        let table = self.table();
        if self.sessioned {
            match named {
                Some(id) => {
                    if let Some(found) = table.by_id.get(id) {
                        return (Some(Arc::clone(found)), None);
                    }
                    return (
                        table.current.clone(),
                        Some(Mismatch::Unknown(id.to_owned())),
                    );
                }
                None => return (table.current.clone(), Some(Mismatch::Absent)),
            }
        }
        (table.current.clone(), None)
    }

    /// Starts a session (minting its id when the recording is sessioned); it becomes current.
    fn start(&self, table: &mut Table) -> Arc<ClientSession> {
        self.sweep(table);
        let label = self.next_label.fetch_add(1, Ordering::Relaxed);
        let id = self.sessioned.then(|| Arc::<str>::from(mint_id()));
        let mut replaying = Session::new(Arc::clone(&self.index), self.rules.clone(), self.on_miss)
            .tracking(Arc::clone(&self.usage));
        if !self.index.asks.is_empty() {
            replaying.send_asks();
        }
        let session = Arc::new(ClientSession {
            label,
            id: id.clone(),
            state: Mutex::new(State {
                session: replaying,
                streams: Streams::default(),
                asks: Pending::default(),
                ended: false,
            }),
            last_used: AtomicU64::new(self.now_ms()),
        });
        {
            // The frames the recording opens with: on the GET stream when it opens.
            let mut state = session.lock();
            let initial = state.session.take_initial();
            state.streams.push(&initial, self.get_served);
        }
        if let Some(id) = id {
            table.by_id.insert(id, Arc::clone(&session));
        } else if let Some(previous) = table.current.take() {
            // A new pass replaces the old one: nothing can name the old one any more.
            Self::end_in(table, &previous, None);
        }
        table.current = Some(Arc::clone(&session));
        session
    }

    /// Ends idle sessions, and the least recently used ones past [`MAX_SESSIONS`].
    fn sweep(&self, table: &mut Table) {
        let full = table.by_id.len() >= self.limits.max;
        if !full && table.last_sweep.elapsed() < self.limits.sweep_every {
            return;
        }
        table.last_sweep = Instant::now();
        let now = self.now_ms();
        let idle_ms = u64::try_from(self.limits.idle.as_millis()).unwrap_or(u64::MAX);
        let mut idle: Vec<(u64, Arc<str>)> = table
            .by_id
            .iter()
            .filter(|(_, s)| {
                let state = s.lock();
                !state.streams.any_open() && state.asks.is_empty()
            })
            .map(|(id, s)| (s.last_used.load(Ordering::Relaxed), Arc::clone(id)))
            .collect();
        idle.sort_unstable();
        let mut over = (table.by_id.len() + 1).saturating_sub(self.limits.max);
        for (used, id) in idle {
            if now.saturating_sub(used) < idle_ms && over == 0 {
                break;
            }
            over = over.saturating_sub(1);
            if let Some(session) = table.by_id.remove(&id) {
                Self::end_in(table, &session, None);
            }
        }
    }

    /// Forgets a minted id (DELETE): the session ends. False when no session had it.
    pub fn delete(&self, id: &str) -> bool {
        let mut table = self.table();
        let Some(session) = table.by_id.remove(id) else {
            return false;
        };
        Self::end_in(&mut table, &session, None);
        true
    }

    fn end_in(
        table: &mut Table,
        session: &Arc<ClientSession>,
        forwarded: Option<(usize, usize, &str)>,
    ) {
        if table
            .current
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, session))
        {
            table.current = None;
        }
        let mut state = session.lock();
        if state.ended {
            return;
        }
        state.ended = true;
        table.totals.add(session.label, &mut state, forwarded);
    }

    /// Ends every open stream (shutdown): clients see them finish.
    pub fn close_streams(&self) {
        let table = self.table();
        for session in table.by_id.values().chain(table.current.iter()) {
            session.lock().streams.close_all();
        }
    }

    /// Ends every session and returns what they all leave behind.
    pub fn finish(&self) -> Totals {
        let mut table = self.table();
        let mut all: Vec<Arc<ClientSession>> = table.by_id.drain().map(|(_, s)| s).collect();
        all.extend(table.current.take());
        all.sort_by_key(|s| s.label);
        for session in &all {
            Self::end_in(&mut table, session, None);
        }
        std::mem::take(&mut table.totals)
    }

    /// Live sessions (minted ids, plus the current pass when it has none).
    pub fn live(&self) -> usize {
        let table = self.table();
        table.by_id.len() + usize::from(table.current.as_ref().is_some_and(|c| c.id.is_none()))
    }
}

/// A fresh session id: 128 random bits from the system, written as a version-4 UUID. Without
/// `/dev/urandom` (not Linux), the bits come from the per-process random hasher seeds, mixed
/// with the time and a counter: unpredictable enough for ids that only tell local clients
/// apart.
pub fn mint_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        use std::hash::{BuildHasher, Hasher};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        for half in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            hasher.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default(),
            );
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Reader;
    use std::path::Path;

    fn index(sessioned: bool) -> Arc<Index> {
        let header = format!(
            r#"{{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"http","era":"legacy","sessioned":{sessioned}}}"#
        );
        let text = format!(
            "{header}\n{}\n{}\n",
            r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}}"#,
            r#"{"type":"frame","t":2,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}"#
        );
        let reader = Reader::new(text.as_bytes(), Path::new("t.jsonl")).unwrap();
        let header = reader.header().clone();
        Arc::new(Index::build(header, reader, &[], Path::new("t.jsonl")).unwrap())
    }

    fn sessions(sessioned: bool, limits: Limits) -> Sessions {
        Sessions::with_limits(
            index(sessioned),
            Rules::default(),
            OnMiss::Error,
            sessioned,
            limits,
        )
    }

    #[test]
    fn a_handshake_mints_a_session_and_its_id_finds_it() {
        let table = sessions(true, Limits::default());
        let (first, _) = table.for_request(true, None);
        let (second, _) = table.for_request(true, None);
        let (a, b) = (first.id.clone().unwrap(), second.id.clone().unwrap());
        assert_ne!(a, b);
        assert!(Arc::ptr_eq(&table.for_request(false, Some(&a)).0, &first));
        let (latest, mismatch) = table.for_request(false, None);
        assert!(
            Arc::ptr_eq(&latest, &second),
            "no id: the latest initialize's"
        );
        assert_eq!(mismatch, Some(Mismatch::Absent));
        let (_, mismatch) = table.for_request(false, Some("nope"));
        assert_eq!(mismatch, Some(Mismatch::Unknown("nope".into())));
        assert!(table.delete(&a));
        assert!(!table.delete(&a));
        assert_eq!(table.live(), 1);
        assert_eq!(table.finish().sessions, 2);
    }

    #[test]
    fn without_ids_each_handshake_starts_a_new_pass() {
        let table = sessions(false, Limits::default());
        let (first, _) = table.for_request(true, None);
        assert!(first.id.is_none());
        assert!(Arc::ptr_eq(&table.for_request(false, Some("x")).0, &first));
        let (second, _) = table.for_request(true, None);
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(first.lock().ended, "the old pass ended");
        assert_eq!(table.live(), 1);
        assert_eq!(table.finish().sessions, 2);
    }

    #[test]
    fn idle_sessions_end_and_the_table_is_capped() {
        let capped = Limits {
            idle: Duration::from_secs(3600),
            max: 2,
            sweep_every: Duration::from_secs(3600),
        };
        let table = sessions(true, capped);
        let ids: Vec<Arc<str>> = (0..3)
            .map(|_| {
                // Recency is kept in milliseconds: the oldest must be told apart.
                std::thread::sleep(Duration::from_millis(3));
                table.for_request(true, None).0.id.clone().unwrap()
            })
            .collect();
        assert_eq!(
            table.live(),
            2,
            "past the cap the least recently used ended"
        );
        assert_eq!(
            table.named(Some(&ids[0])).1,
            Some(Mismatch::Unknown(ids[0].to_string()))
        );
        assert_eq!(table.named(Some(&ids[2])).1, None);

        let idle = Limits {
            idle: Duration::ZERO,
            max: 100,
            sweep_every: Duration::ZERO,
        };
        let table = sessions(true, idle);
        let (first, _) = table.for_request(true, None);
        std::thread::sleep(Duration::from_millis(5));
        table.for_request(true, None);
        assert!(first.lock().ended, "an idle session ends at the next sweep");
        assert_eq!(table.live(), 1);
    }

    #[test]
    fn minted_ids_are_uuid_shaped_and_distinct() {
        let a = mint_id();
        let b = mint_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        assert!(
            a.bytes()
                .all(|c| c == b'-' || c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        );
    }
}
