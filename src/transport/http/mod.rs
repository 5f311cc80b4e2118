//! Streamable HTTP plumbing shared by the three HTTP roles: the MCP client (`check --url`,
//! `snapshot --url`, `verify --url`, passthrough), the record proxy (`record --http`) and
//! replay's server (`replay --listen`). hyper 1 on the process's tokio runtime, HTTP/1.1,
//! outbound TLS through rustls (docs/http.md). MCP semantics (sessions, eras, what a frame is)
//! live with the roles; this module only moves requests, bodies and events.

/// The header that carries a Streamable HTTP session's id, built once: a name given as text is
/// parsed and checked on every lookup.
pub const SESSION_ID: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

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

/// Removes every [`HOP_BY_HOP`] header from `headers`, in place.
///
/// This runs twice per proxied exchange. Removing the ten names one by one parses and hashes
/// each of them every time (a twentieth of the recording proxy's CPU in a profile); a message
/// carries a handful of headers, so each name present is looked at once instead, and only the
/// hop-by-hop ones found are removed.
pub fn remove_hop_by_hop(headers: &mut http::HeaderMap) {
    let mut found: [Option<http::HeaderName>; HOP_BY_HOP.len()] = Default::default();
    // `keys` yields each name once, so at most every hop-by-hop name is found: no overflow.
    for (slot, name) in found
        .iter_mut()
        .zip(headers.keys().filter(|name| is_hop_by_hop(name.as_str())))
    {
        *slot = Some(name.clone());
    }
    for name in found.iter().flatten() {
        headers.remove(name);
    }
}

pub mod inbound;
pub mod outbound;
pub mod sse;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Headers that travel end to end, drawn beside every hop-by-hop one.
    const END_TO_END: [&str; 5] = [
        "accept",
        "authorization",
        "mcp-session-id",
        "set-cookie",
        "x-custom",
    ];

    proptest! {
        /// The one-look removal leaves exactly what removing each name in turn leaves, every
        /// value of every other header in its order.
        #[test]
        fn removal_matches_removing_each_name(
            picks in proptest::collection::vec((0..HOP_BY_HOP.len() + END_TO_END.len(), 0u8..4), 0..24)
        ) {
            let names: Vec<&str> = HOP_BY_HOP.iter().chain(&END_TO_END).copied().collect();
            let mut headers = http::HeaderMap::new();
            for (name, value) in picks {
                headers.append(names[name], http::HeaderValue::from(u16::from(value)));
            }
            let mut plain = headers.clone();
            for name in HOP_BY_HOP {
                plain.remove(name);
            }
            remove_hop_by_hop(&mut headers);
            prop_assert_eq!(headers, plain);
        }
    }
}
