//! mcp-cassette: record, replay, check and lint Model Context Protocol sessions.
//!
//! Architecture (arrows point down; nothing imports `commands` or `cli`):
//!
//! ```text
//! commands ──▶ record, replay, client, report
//!          ──▶ transport, cassette, redact, lint, contract
//!          ──▶ protocol, jsonrpc, line, atomic_file
//!          ──▶ json
//! ```
//!
//! `jsonrpc`, `protocol`, `cassette`, `redact`, `lint`, `contract` and the replay engine are
//! synchronous and pure: they read and write only the `Read`/`Write` they are handed. Tokio
//! lives in `transport`, `record`, the replay front-ends, `client` and `commands`.

pub mod atomic_file;
pub mod cassette;
pub mod cli;
pub mod client;
pub mod commands;
pub mod contract;
pub mod inspect;
pub mod json;
pub mod jsonrpc;
pub mod line;
pub mod lint;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
pub mod severity;
pub mod transport;
