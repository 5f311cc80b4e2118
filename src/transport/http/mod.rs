//! Streamable HTTP plumbing shared by the three HTTP roles: the MCP client (`check --url`,
//! `snapshot --url`, `verify --url`, passthrough), the record proxy (`record --http`) and
//! replay's server (`replay --listen`). hyper 1 on the process's tokio runtime, HTTP/1.1,
//! outbound TLS through rustls (docs/http.md). MCP semantics (sessions, eras, what a frame is)
//! live with the roles; this module only moves requests, bodies and events.

/// Headers that describe one connection, not the exchange: a proxy never forwards them either
/// way. `host` and `content-length` are set again for the next hop by the HTTP stack.
pub const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// Whether `name` (lowercase, as `http` stores header names) is in [`HOP_BY_HOP`].
pub fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.contains(&name)
}

pub mod inbound;
pub mod outbound;
pub mod sse;
