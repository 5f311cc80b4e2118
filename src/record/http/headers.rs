//! Which headers cross the proxy (docs/http.md, "Record proxy"): everything except the
//! hop-by-hop set, which belongs to each connection rather than to the exchange.

use http::header::{self, HeaderMap, HeaderValue};

use crate::transport::http::{SESSION_ID, remove_hop_by_hop};

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

/// What the proxy needs to know of an answer's headers, read in one pass over them: looking
/// each fact up by name hashed a name per lookup, four times an answer (a tenth of what the
/// recorder added to a bare relay's forwarding thread, docs/benchmarks.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AnswerHead {
    /// By the first `content-type`.
    pub kind: BodyKind,
    /// The first `content-encoding` names a coding other than `identity`.
    pub coded: bool,
    /// Some `content-encoding` value says `identity`, which claims nothing.
    pub says_identity: bool,
    /// The server minted a session id (`Mcp-Session-Id`).
    pub sessioned: bool,
}

impl AnswerHead {
    pub(super) fn read(headers: &HeaderMap) -> AnswerHead {
        let mut head = AnswerHead {
            kind: BodyKind::Other,
            coded: false,
            says_identity: false,
            sessioned: false,
        };
        let (mut typed, mut encoded) = (false, false);
        for (name, value) in headers {
            if *name == header::CONTENT_TYPE {
                if !typed {
                    head.kind = body_kind(value);
                    typed = true;
                }
            } else if *name == header::CONTENT_ENCODING {
                let identity = is_identity(value);
                if !encoded {
                    head.coded = !identity;
                    encoded = true;
                }
                head.says_identity |= identity;
            } else if *name == SESSION_ID {
                head.sessioned = true;
            }
        }
        head
    }
}

fn is_identity(value: &HeaderValue) -> bool {
    value.as_bytes().eq_ignore_ascii_case(b"identity")
}

/// The headers of an upstream answer as they go to the client: verbatim, less the hop-by-hop
/// set and a `content-encoding: identity` that claims nothing (`says_identity`, from
/// [`AnswerHead`]). A real coding (an upstream that compressed although asked not to) is kept
/// with the bytes it describes. Edited in place.
pub(super) fn client_response(headers: &mut HeaderMap, says_identity: bool) {
    remove_hop_by_hop(headers);
    if says_identity {
        let kept: Vec<HeaderValue> = headers
            .get_all(header::CONTENT_ENCODING)
            .iter()
            .filter(|v| !is_identity(v))
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

fn body_kind(content_type: &HeaderValue) -> BodyKind {
    // The essence: what comes before any parameter, trimmed; compared without case. Bytes,
    // not text, and no lowercased copy: this runs on every answer.
    let value = content_type.as_bytes();
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
        let down = answer(&a);
        assert!(down.get("transfer-encoding").is_none());
        assert!(down.get("content-encoding").is_none());
        assert_eq!(down.get_all("set-cookie").iter().count(), 2);
        a.insert("content-encoding", "gzip".parse().unwrap());
        let down = answer(&a);
        assert_eq!(down["content-encoding"], "gzip");
        // Only the `identity` values go; a real coding beside one stays.
        a.append("content-encoding", "Identity".parse().unwrap());
        a.append("content-encoding", "br".parse().unwrap());
        let down = answer(&a);
        let codings: Vec<_> = down.get_all("content-encoding").iter().collect();
        assert_eq!(codings, ["gzip", "br"]);
        assert!(AnswerHead::read(&a).coded);
    }

    /// The answer's headers as the client gets them.
    fn answer(headers: &HeaderMap) -> HeaderMap {
        let mut down = headers.clone();
        client_response(&mut down, AnswerHead::read(headers).says_identity);
        down
    }

    /// The one pass reads what a lookup by name would: the first `content-type`, the first
    /// `content-encoding`, and whether any says `identity` or a session id came.
    #[test]
    fn the_answer_head_is_what_lookups_by_name_give() {
        let values: [(&str, &[&str]); 4] = [
            (
                "content-type",
                &["application/json", "text/event-stream", "text/html"],
            ),
            ("content-encoding", &["identity", "gzip", "IDENTITY"]),
            ("mcp-session-id", &["abc"]),
            ("x-other", &["1"]),
        ];
        // Every map of up to three headers drawn from those, in every order.
        let all: Vec<(&str, &str)> = values
            .iter()
            .flat_map(|(n, vs)| vs.iter().map(move |v| (*n, *v)))
            .collect();
        let mut maps = vec![Vec::new()];
        let mut level = maps.clone();
        for _ in 0..3 {
            level = level
                .iter()
                .flat_map(|m: &Vec<(&str, &str)>| {
                    all.iter().map(move |h| {
                        let mut m = m.clone();
                        m.push(*h);
                        m
                    })
                })
                .collect();
            maps.extend(level.iter().cloned());
        }
        assert_eq!(maps.len(), 1 + 8 + 64 + 512);
        for pairs in maps {
            let mut h = HeaderMap::new();
            for (n, v) in &pairs {
                h.append(*n, v.parse().unwrap());
            }
            let by_name = AnswerHead {
                kind: h
                    .get(header::CONTENT_TYPE)
                    .map_or(BodyKind::Other, body_kind),
                coded: h
                    .get(header::CONTENT_ENCODING)
                    .is_some_and(|v| !is_identity(v)),
                says_identity: h.get_all(header::CONTENT_ENCODING).iter().any(is_identity),
                sessioned: h.contains_key(&SESSION_ID),
            };
            assert_eq!(AnswerHead::read(&h), by_name, "{pairs:?}");
        }
    }

    #[test]
    fn body_kinds_by_content_type() {
        let kind = |ct: &str| {
            let mut h = HeaderMap::new();
            h.insert("content-type", ct.parse().unwrap());
            AnswerHead::read(&h).kind
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
        assert_eq!(AnswerHead::read(&HeaderMap::new()).kind, BodyKind::Other);
    }
}
