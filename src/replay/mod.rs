//! Replay: a cassette served back as an MCP server.
//!
//! The engine is pure and transport-independent:
//!
//! - [`index`] reads a cassette once into pools of recorded answers keyed by [`fingerprint`],
//!   subscription pools, task polls and the [`schedule`] of server-initiated frames;
//! - [`session`] matches each client message against them, in the documented order, and returns
//!   the frames to send ([`session::Exchange`]), re-keyed to the client's ids;
//! - [`miss`] explains a request nothing answered, using [`diff`] for the nearest recording;
//! - [`volatile`] parses declared-volatile fields.
//!
//! Front-ends move bytes: [`stdio`] serves stdin/stdout (and [`passthrough`] forwards misses to the
//! real server and appends what it answered). An HTTP front-end reuses the same session.

pub mod diff;
pub mod fingerprint;
pub mod index;
pub mod miss;
pub mod passthrough;
pub mod schedule;
pub mod session;
pub mod shape;
pub mod stdio;
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
