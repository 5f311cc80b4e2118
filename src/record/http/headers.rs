//! Which headers cross the proxy (docs/http.md, "Record proxy"): everything except the
//! hop-by-hop set, which belongs to each connection rather than to the exchange.

use http::header::{self, HeaderMap, HeaderValue};

use crate::transport::http::remove_hop_by_hop;

/// The headers of a client request as they go upstream: verbatim, less the hop-by-hop set, and
/// asking for an unencoded answer. The recorder must read every answer to capture it, and this
/// build decodes no content coding, so it asks for `identity` in place of whatever the client
/// accepts; the client gets the same answer, uncompressed. Edited in place: the request's own
/// map goes on, as a bare relay's would.
pub(super) fn upstream_request(headers: &mut HeaderMap) {
    remove_hop_by_hop(headers);
    // `insert` replaces every value the client sent.
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
}

/// A content coding other than `identity` on an answer, if any.
pub(super) fn content_coding(headers: &HeaderMap) -> Option<&HeaderValue> {
    headers
        .get(header::CONTENT_ENCODING)
        .filter(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

/// The headers of an upstream answer as they go to the client: verbatim, less the hop-by-hop
/// set and a `content-encoding: identity` that claims nothing. A real coding (an upstream that
/// compressed although asked not to) is kept with the bytes it describes. Edited in place.
pub(super) fn client_response(headers: &mut HeaderMap) {
    remove_hop_by_hop(headers);
    let identity = |v: &HeaderValue| v.as_bytes().eq_ignore_ascii_case(b"identity");
    if headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .any(identity)
    {
        let kept: Vec<HeaderValue> = headers
            .get_all(header::CONTENT_ENCODING)
            .iter()
            .filter(|v| !identity(v))
            .cloned()
            .collect();
        headers.remove(header::CONTENT_ENCODING);
        for value in kept {
            headers.append(header::CONTENT_ENCODING, value);
        }
    }
}

/// What an answer's body is, by its `content-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyKind {
    Json,
    EventStream,
    /// Anything else (an HTML error page, plain text): relayed, never captured.
    Other,
}

pub(super) fn body_kind(headers: &HeaderMap) -> BodyKind {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return BodyKind::Other;
    };
    // The essence: what comes before any parameter, trimmed; compared without case. Bytes,
    // not text, and no lowercased copy: this runs on every answer.
    let value = value.as_bytes();
    let essence = value
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if essence.eq_ignore_ascii_case(b"text/event-stream") {
        BodyKind::EventStream
    } else if essence.eq_ignore_ascii_case(b"application/json")
        || essence.len() >= 5 && essence[essence.len() - 5..].eq_ignore_ascii_case(b"+json")
    {
        BodyKind::Json
    } else {
        BodyKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_stay_on_their_hop() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("connection", "keep-alive"),
            ("host", "127.0.0.1:6402"),
            ("content-length", "12"),
            ("authorization", "Bearer secret"),
            ("mcp-session-id", "abc"),
            ("mcp-param-region", "eu"),
            ("accept-encoding", "gzip, br"),
            ("accept", "application/json, text/event-stream"),
        ] {
            h.append(k, v.parse().unwrap());
        }
        let mut up = h.clone();
        upstream_request(&mut up);
        assert!(up.get("connection").is_none() && up.get("host").is_none());
        assert!(up.get("content-length").is_none());
        assert_eq!(up["authorization"], "Bearer secret");
        assert_eq!(up["mcp-session-id"], "abc");
        assert_eq!(up["mcp-param-region"], "eu");
        assert_eq!(up["accept-encoding"], "identity");
        assert_eq!(up["accept"], "application/json, text/event-stream");

        let mut a = HeaderMap::new();
        a.append("transfer-encoding", "chunked".parse().unwrap());
        a.append("content-encoding", "identity".parse().unwrap());
        a.append("set-cookie", "a=1".parse().unwrap());
        a.append("set-cookie", "b=2".parse().unwrap());
        let mut down = a.clone();
        client_response(&mut down);
        assert!(down.get("transfer-encoding").is_none());
        assert!(down.get("content-encoding").is_none());
        assert_eq!(down.get_all("set-cookie").iter().count(), 2);
        a.insert("content-encoding", "gzip".parse().unwrap());
        let mut down = a.clone();
        client_response(&mut down);
        assert_eq!(down["content-encoding"], "gzip");
        // Only the `identity` values go; a real coding beside one stays.
        a.append("content-encoding", "Identity".parse().unwrap());
        a.append("content-encoding", "br".parse().unwrap());
        let mut down = a.clone();
        client_response(&mut down);
        let codings: Vec<_> = down.get_all("content-encoding").iter().collect();
        assert_eq!(codings, ["gzip", "br"]);
        assert!(content_coding(&a).is_some());
    }

    #[test]
    fn body_kinds_by_content_type() {
        let kind = |ct: &str| {
            let mut h = HeaderMap::new();
            h.insert("content-type", ct.parse().unwrap());
            body_kind(&h)
        };
        assert_eq!(kind("application/json"), BodyKind::Json);
        assert_eq!(kind("Application/JSON; charset=utf-8"), BodyKind::Json);
        assert_eq!(kind("text/event-stream"), BodyKind::EventStream);
        assert_eq!(kind("text/html"), BodyKind::Other);
        assert_eq!(
            kind(" TEXT/Event-Stream ;charset=utf-8"),
            BodyKind::EventStream
        );
        assert_eq!(kind("application/vnd.api+JSON"), BodyKind::Json);
        assert_eq!(kind("json"), BodyKind::Other);
        assert_eq!(kind("application/jsonx"), BodyKind::Other);
        assert_eq!(body_kind(&HeaderMap::new()), BodyKind::Other);
    }
}
