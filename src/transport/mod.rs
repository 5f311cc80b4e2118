//! Moving bytes: child processes speaking line-delimited JSON-RPC over stdio, and Streamable
//! HTTP in both directions (`http`). Knows nothing about cassettes.

pub mod child;
pub mod command_line;
pub mod http;
pub mod line;
pub mod stdio;
