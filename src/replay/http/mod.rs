//! The Streamable HTTP front-end: a cassette recorded over HTTP served back as an MCP server
//! (`replay --listen`), on the same engine as [`super::stdio`].
//!
//! - [`routing`]: the POST/GET/DELETE matrix, one request in, one response out;
//! - [`sessions`]: which pass through the recording answers a request (many client sessions at
//!   once, each its own [`super::Session`] over the one shared index), and their expiry;
//! - [`streams`]: streamed answers and the streams a session holds open;
//! - [`asks`]: requests from the recorded server sent to the client, each waiting for its answer;
//! - [`headers`]: the lenient header checks, and where diagnostics go;
//! - [`control`]: the miss channel a test adapter drains (`--control`, docs/adapters.md);
//! - [`background`]: the server on a thread of its own, inside another program's process.
//!
//! The behaviour is documented in docs/http.md ("Replay server") and docs/replay.md.

pub mod asks;
pub mod background;
pub mod control;
pub mod headers;
pub mod routing;
pub mod sessions;
pub mod streams;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderValue;

use super::fault::Injector;
use super::passthrough::Passthrough;
use super::session::Rules;
use super::usage::{Unused, Usage};
use super::{Index, OnMiss};
use crate::client::{DEFAULT_TIMEOUT, timeout_from_env};
use crate::protocol::era::Era;
use crate::transport::http::inbound::{self, Listening, Shutdown};
use headers::Notes;
use sessions::{Sessions, Totals};

/// Request bodies larger than this are answered 413 without being read whole.
pub const BODY_LIMIT: usize = 32 * 1024 * 1024;

/// How a replay server is set up.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub on_miss: OnMiss,
    /// `--timing recorded`: streamed answers spaced by their recorded gaps.
    pub paced: bool,
    pub body_limit: usize,
}

/// What every request handler shares.
#[derive(Debug)]
pub struct Replay {
    index: Arc<Index>,
    sessions: Sessions,
    notes: Notes,
    recorded: headers::Recorded,
    on_miss: OnMiss,
    paced: bool,
    body_limit: usize,
    /// A legacy recording with a standalone GET stream: GET is served.
    get_served: bool,
    /// A legacy recording whose server minted session ids: ids are minted, DELETE is served.
    sessioned: bool,
    /// The request that starts a session in this era.
    handshake: &'static str,
    allow: HeaderValue,
    passthrough: Option<Arc<Mutex<Passthrough>>>,
    shutdown: Shutdown,
    /// The miss channel, when `--control` asked for it.
    control: Option<control::Control>,
    /// `--fault`s (docs/replay.md, "Fault injection"), decided one request at a time.
    faults: Option<Mutex<Injector>>,
    /// How long a request from the server waits for the client's answer
    /// (`MCP_CASSETTE_TIMEOUT_MS`, as on stdio).
    ask_timeout: Duration,
}

/// What the server leaves behind when it stops: the stderr summary and the exit code.
#[derive(Debug)]
pub struct Finished {
    pub lines: Vec<String>,
    pub code: u8,
    /// The recordings no session used (summarised by [`super::usage::summary`]).
    pub unused: Vec<Unused>,
}

impl Replay {
    pub fn new(
        index: Arc<Index>,
        rules: Rules,
        options: Options,
        passthrough: Option<Passthrough>,
        notes: Notes,
        shutdown: Shutdown,
    ) -> Replay {
        let era = index.header.effective_era();
        let legacy = era == Era::Legacy;
        let sessioned = legacy && index.header.sessioned();
        let get_served = legacy && index.standalone_streams > 0;
        let mut allow = Vec::new();
        if get_served {
            allow.push("GET");
        }
        allow.push("POST");
        if sessioned {
            allow.push("DELETE");
        }
        Replay {
            sessions: Sessions::new(Arc::clone(&index), rules, options.on_miss, sessioned)
                .with_get_stream(get_served),
            recorded: headers::Recorded::read(&index, !legacy),
            index,
            notes,
            on_miss: options.on_miss,
            paced: options.paced,
            body_limit: options.body_limit,
            get_served,
            sessioned,
            handshake: if legacy {
                "initialize"
            } else {
                "server/discover"
            },
            allow: HeaderValue::from_str(&allow.join(", "))
                .unwrap_or(HeaderValue::from_static("POST")),
            passthrough: passthrough.map(|p| Arc::new(Mutex::new(p))),
            shutdown,
            control: None,
            faults: None,
            ask_timeout: timeout_from_env().unwrap_or(DEFAULT_TIMEOUT),
        }
    }

    /// Injects `faults` into what this replay answers.
    pub fn with_faults(mut self, faults: Injector) -> Replay {
        self.faults = Some(Mutex::new(faults));
        self
    }

    /// Serves the miss channel (docs/adapters.md) next to the MCP endpoint.
    pub fn with_control(mut self, control: control::Control) -> Replay {
        self.control = Some(control);
        self
    }

    /// The lines written when the server starts (without the `mcp-cassette replay: ` prefix),
    /// the URL line last: `serving <path> as a <era> server at <url>`.
    pub fn start_lines(&self, path: &str, listening: &Listening) -> Vec<String> {
        let mut lines = Vec::new();
        if !listening.is_loopback() {
            lines.push(format!(
                "WARNING listening on {}: reachable beyond this machine",
                listening.host
            ));
        }
        // Requests from the server go out from a call's stream or from the schedule; one recorded
        // on a stream replay does not serve (a second GET stream, a stream answering nothing)
        // never can.
        let in_answers: usize = self
            .index
            .pairs
            .iter()
            .map(|p| match &p.answer {
                super::index::Answer::Stream(frames) => {
                    frames.iter().filter(|f| f.ask().is_some()).count()
                }
                super::index::Answer::Frame(_) => 0,
            })
            .sum();
        let unsent = self
            .index
            .asks
            .len()
            .saturating_sub(in_answers + self.index.schedule.server_requests());
        if unsent > 0 {
            lines.push(format!(
                "{unsent} request(s) from the server in the cassette will not be sent: they travelled on a stream this replay does not serve"
            ));
        }
        let streamed = self
            .index
            .pairs
            .iter()
            .filter(|p| matches!(p.answer, super::index::Answer::Stream(_)))
            .count();
        if streamed > 0 {
            lines.push(format!("{streamed} streamed answer(s) in the cassette"));
        }
        if self.index.standalone_streams > 1 {
            lines.push(format!(
                "{} standalone GET stream(s) recorded; only the first is served",
                self.index.standalone_streams
            ));
        }
        let era = self.index.header.effective_era().as_str();
        lines.push(format!(
            "serving {path} as a {era} server at {}",
            listening.url()
        ));
        lines
    }

    pub fn notes(&self) -> &Notes {
        &self.notes
    }

    /// The miss log, when the server keeps one ([`Replay::with_control`]); `exec` and the
    /// testing API drain it in-process.
    pub fn control(&self) -> Option<&control::Control> {
        self.control.as_ref()
    }

    /// What the client sessions served, over all of them (docs/replay.md, "Unused recordings").
    pub fn usage(&self) -> &Arc<Usage> {
        self.sessions.usage()
    }

    /// Client sessions alive now.
    pub fn live_sessions(&self) -> usize {
        self.sessions.live()
    }

    /// Ends every session, closes the live server, and sums up.
    pub fn finish(&self) -> Finished {
        let Totals {
            sessions,
            misses,
            borrowed,
            undelivered,
            ask_failures,
            mut lines,
            unlisted,
            ..
        } = self.sessions.finish();
        self.notes.finish();
        let mut code = 0;
        if unlisted > 0 {
            lines.push(format!(
                "{unlisted} more session(s) had something to report; the totals below count them"
            ));
        }
        lines.push(format!("{sessions} client session(s) served"));
        if misses > 0 {
            lines.push(format!("{misses} fingerprint miss(es) across all sessions"));
        }
        if borrowed > 0 {
            lines.push(format!(
                "{borrowed} answer(s) borrowed from another recording of the same method across all sessions"
            ));
        }
        if undelivered > 0 {
            lines.push(format!(
                "{undelivered} server-initiated frame(s) came due with no stream open to carry them"
            ));
        }
        if ask_failures > 0 {
            lines.push(format!(
                "{ask_failures} client answer(s) to requests from the server differ from the recorded ones or never came, across all sessions"
            ));
        }
        if let Some(faults) = &self.faults {
            lines.push(faults.lock().unwrap_or_else(|p| p.into_inner()).summary());
        }
        if let Some(passthrough) = &self.passthrough {
            let mut live = passthrough.lock().unwrap_or_else(|p| p.into_inner());
            live.close();
            if misses > 0 {
                let mut line = format!(
                    "{} interaction(s) appended to {} (origin:\"live\")",
                    live.appended,
                    live.path().display()
                );
                if live.failures > 0 {
                    line.push_str(&format!(", {} forward(s) FAILED", live.failures));
                }
                lines.push(line);
            }
            if live.failures > 0 {
                code = 1;
            }
        }
        if self.on_miss == OnMiss::Error && misses > 0 {
            code = 1;
        }
        // As on stdio: a client's answer is its own doing, which no forward stands in for.
        if self.on_miss != OnMiss::Warn && ask_failures > 0 {
            code = 1;
        }
        let unused = self.usage().unused();
        Finished {
            lines,
            code,
            unused,
        }
    }
}

/// Serves until `shutdown` fires, then ends every held-open stream and lets connections drain.
pub async fn serve(listening: Listening, replay: Arc<Replay>) {
    let shutdown = replay.shutdown.clone();
    let closer = {
        let replay = Arc::clone(&replay);
        tokio::spawn(async move {
            replay.shutdown.wait().await;
            replay.sessions.close_streams();
        })
    };
    inbound::serve(listening.listener, shutdown, move |request| {
        routing::handle(Arc::clone(&replay), request)
    })
    .await;
    let _ = closer.await;
}
