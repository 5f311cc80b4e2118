//! mcp-cassette: record, replay, check and lint Model Context Protocol sessions.
//!
//! Architecture: each line imports only from the lines below it (checked by hand with
//! `grep crate::` per module; nothing imports `commands` or `cli`).
//!
//! ```text
//! commands, cli        one file per verb; the only code that prints and picks exit codes
//! record, replay,      the recorder core and its stdio and HTTP proxies; the replay engine and
//!   verify             its stdio and HTTP front-ends; re-firing a cassette at the live server
//! report, view         text (coloured on a terminal), JSON, SARIF, Markdown and terminal-safe renderings;
//!                      a cassette as a self-contained HTML page
//! inspect, contract    what a live server publishes (CAS-C checks); snapshots and drift
//! client, lint, redact the one MCP client; the CAS-L rules and cassette lint; redaction
//! transport, cassette  child processes, line framing and Streamable HTTP plumbing (SSE,
//!                      listening, outbound TLS); the cassette format
//! protocol, jsonrpc,   MCP facts (eras, versions, error codes, header params); frames;
//!   line, atomic_file, the one bounded line reader; the one atomic file write;
//!   severity           the one severity scale
//! json                 the one JSON text toolkit: scanning, canonical text, JS numbers, diff
//! ```
//!
//! Only what the binary, the integration tests and the benchmark drivers reach is `pub`
//! (`cli`, `commands`, `cassette`, `client`, `inspect`, `jsonrpc`, `lint`, `protocol`, `replay`,
//! `transport`); the rest is `pub(crate)`, and `unreachable_pub` keeps it that way. Of those,
//! only [`testing`] (cassettes in cargo tests, docs/testing-api.md) is meant for other crates
//! and kept stable across minor versions; the others move with the binary.
//!
//! `json`, `jsonrpc`, `line`, `protocol`, `cassette`, `redact`, `lint`, `contract`, `inspect`'s
//! checks, `verify` (plan, following, classification) and the replay engine (index, session,
//! schedule, miss diagnosis) are synchronous and pure: they read and write only the
//! `Read`/`Write` they are handed (`verify` reads its cassette file, and `commands::verify`
//! drives the client for it). Tokio lives in `transport` (the child process), `client`,
//! `record`, `commands`, and in replay only in the HTTP front-end (`replay --listen`) and behind
//! passthrough, whose runtime is started at the first forwarded miss so a plain stdio replay
//! never starts one.

pub(crate) mod atomic_file;
pub mod cassette;
pub mod cli;
pub mod client;
pub mod commands;
pub(crate) mod contract;
pub mod fuzzing;
pub mod inspect;
pub(crate) mod json;
pub mod jsonrpc;
pub(crate) mod line;
pub mod lint;
pub mod protocol;
pub(crate) mod record;
pub(crate) mod redact;
pub mod replay;
pub(crate) mod report;
#[cfg(test)]
mod scaling;
pub(crate) mod severity;
pub mod testing;
pub mod transport;
pub(crate) mod verify;
pub(crate) mod view;
