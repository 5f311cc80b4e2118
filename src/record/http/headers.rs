//! Which headers cross the proxy (docs/http.md, "Record proxy"): everything except the
//! hop-by-hop set, which belongs to each connection rather than to the exchange.

use http::header::{self, HeaderMap, HeaderValue};

use crate::transport::http::is_hop_by_hop as hop_by_hop;

/// The headers of a client request as they go upstream: verbatim, less the hop-by-hop set, and
/// asking for an unencoded answer. The recorder must read every answer to capture it, and this
/// build decodes no content coding, so it asks for `identity` in place of whatever the client
/// accepts; the client gets the same answer, uncompressed.
pub(super) fn upstream_request(from: &HeaderMap) -> HeaderMap {
    let mut to = HeaderMap::with_capacity(from.len() + 1);
    for (name, value) in from {
        if hop_by_hop(name.as_str()) || name == header::ACCEPT_ENCODING {
            continue;
        }
        to.append(name.clone(), value.clone());
    }
    to.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    to
}

/// A content coding other than `identity` on an answer, if any.
pub(super) fn content_coding(headers: &HeaderMap) -> Option<&HeaderValue> {
    headers
        .get(header::CONTENT_ENCODING)
        .filter(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

/// The headers of an upstream answer as they go to the client: verbatim, less the hop-by-hop
/// set and a `content-encoding: identity` that claims nothing. A real coding (an upstream that
/// compressed although asked not to) is kept with the bytes it describes.
pub(super) fn client_response(from: &HeaderMap) -> HeaderMap {
    let mut to = HeaderMap::with_capacity(from.len());
    for (name, value) in from {
        if hop_by_hop(name.as_str())
            || (name == header::CONTENT_ENCODING
                && value.as_bytes().eq_ignore_ascii_case(b"identity"))
        {
            continue;
        }
        to.append(name.clone(), value.clone());
    }
    to
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
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return BodyKind::Other;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if essence == "text/event-stream" {
        BodyKind::EventStream
    } else if essence == "application/json" || essence.ends_with("+json") {
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
        let up = upstream_request(&h);
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
        let down = client_response(&a);
        assert!(down.get("transfer-encoding").is_none());
        assert!(down.get("content-encoding").is_none());
        assert_eq!(down.get_all("set-cookie").iter().count(), 2);
        a.insert("content-encoding", "gzip".parse().unwrap());
        assert_eq!(client_response(&a)["content-encoding"], "gzip");
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
        assert_eq!(body_kind(&HeaderMap::new()), BodyKind::Other);
    }
}
