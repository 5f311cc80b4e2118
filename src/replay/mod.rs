//! Replay: a cassette served back as an MCP server.
//!
//! The engine is pure and transport-independent:
//!
//! - [`index`] reads a cassette once into pools of recorded answers keyed by [`fingerprint`],
//!   subscription pools, task polls and the [`schedule`] of server-initiated frames. It is
//!   immutable once built and shared as `Arc<Index>`;
//! - [`session`] holds everything one client changes (cursors, consumed answers, released frames,
//!   subscriptions, counts) and matches each client message against the index, in the documented
//!   order, returning the frames to send ([`session::Exchange`]) re-keyed to the client's ids. Any
//!   number of sessions, on any threads, serve from one index;
//! - [`miss`] explains a request nothing answered, using [`crate::json::diff`] for the nearest
//!   recording (the structural diff `verify` shares);
//! - [`volatile`] parses declared-volatile fields;
//! - [`handoff`] is the file a stdio replay started under `exec` reports its misses and usage in;
//! - [`usage`] counts, across sessions, which recorded answers were asked for, to report the
//!   unused ones.
//!
//! Front-ends move bytes: [`stdio`] serves stdin/stdout, [`http`] serves Streamable HTTP (one
//! session per client session), and [`passthrough`] forwards misses to the real server and
//! appends what it answered.
//!
//! # Layering
//!
//! Imports inside `replay` point one way only, down this list: a module may use any module below
//! it, never one above (tests excepted).
//!
//! 1. the front-ends, [`stdio`], [`http`] and [`passthrough`] (passthrough still borrows stdio's line
//!    reader; that goes with its move onto the one MCP client);
//! 2. [`session`]: per-session state and matching (with `rekey` beside it), counting what it
//!    serves in [`usage`] (which reads only the index);
//! 3. [`miss`]: explaining a miss;
//! 4. [`index`]: the immutable index (its `build` phases over `read`);
//! 5. [`schedule`]: where recorded server frames go, and a session's progress through them;
//! 6. [`recorded`]: a recorded frame and a recorded answer, the vocabulary of 4 and 5;
//! 7. [`shape`], then [`wire`], then [`fingerprint`]: a request's text, read fast;
//! 8. [`volatile`], [`canonical`]: JSON values and text, knowing nothing of cassettes.
//!
//! This file holds only what every layer shares ([`LookupMap`], [`OnMiss`], the passthrough listen
//! note) and the re-exports.

pub mod fingerprint;
pub mod handoff;
pub mod http;
pub mod index;
pub mod miss;
pub mod passthrough;
pub mod progress;
pub mod recorded;
pub mod schedule;
pub mod session;
pub mod shape;
pub mod stdio;
pub mod usage;
pub mod volatile;
pub mod wire;

use std::fmt;
use std::str::FromStr;

/// The hash maps replay looks requests up in, once per request: foldhash is several times faster
/// than the standard SipHash on short keys and still seeded per process, so a client cannot
/// choose keys that collide.
pub type LookupMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// The set counterpart of [`LookupMap`].
pub type LookupSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

pub use index::{Index, IndexError};
pub use session::{Exchange, Handled, Outcome, Session, Stats};
pub use wire::{Message, Outbound, Request, parse_message};

/// What a miss becomes (`--on-miss`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnMiss {
    /// A JSON-RPC error; the session exits 1.
    Error,
    /// Borrow another recording of the same method when one is left (said on stderr); exit 0.
    Warn,
    /// Forward to the real server and append the pair to the cassette.
    Passthrough,
}

impl OnMiss {
    pub fn as_str(self) -> &'static str {
        match self {
            OnMiss::Error => "error",
            OnMiss::Warn => "warn",
            OnMiss::Passthrough => "passthrough",
        }
    }
}

impl fmt::Display for OnMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OnMiss {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "error" => Ok(OnMiss::Error),
            "warn" => Ok(OnMiss::Warn),
            "passthrough" => Ok(OnMiss::Passthrough),
            _ => Err(()),
        }
    }
}

/// The stderr note for a `subscriptions/listen` miss under passthrough.
pub const LISTEN_NOT_FORWARDED: &str = "passthrough does not forward \"subscriptions/listen\": a live server answers it only when the subscription ends, so the client gets the miss error instead";
