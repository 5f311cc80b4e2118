//! Streamable HTTP plumbing shared by the three HTTP roles: the MCP client (`check --url`,
//! `snapshot --url`, `verify --url`, passthrough), the record proxy (`record --http`) and
//! replay's server (`replay --listen`). hyper 1 on the process's tokio runtime, HTTP/1.1,
//! outbound TLS through rustls (docs/http.md). MCP semantics (sessions, eras, what a frame is)
//! live with the roles; this module only moves requests, bodies and events.

pub mod inbound;
pub mod outbound;
pub mod sse;
