//! Moving bytes: child processes speaking line-delimited JSON-RPC over stdio, and (later) the
//! Streamable HTTP client and loopback server. Knows nothing about cassettes.

pub mod child;
pub mod command_line;
pub mod line;
pub mod stdio;
