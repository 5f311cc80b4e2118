//! What this client tells a server it can do, and its answers to the requests that follows.
//!
//! By default it declares nothing (`"capabilities": {}`), as the reference does, so a snapshot or
//! a check sees what the reference's client sees. `check`/`snapshot --client-capabilities`
//! declare `roots`, `sampling` and `elicitation` (docs/cli.md, "Client capabilities"): some
//! servers publish more to a client that can do these things (a tool that lists the client's
//! roots, one that asks it to sample). A capable client must then answer those requests, or the
//! server waits on it: `roots/list` gets an empty list, `elicitation/create` a decline, and
//! `sampling/createMessage` a refusal error (there is no model here to ask).

use serde_json::{Map, Value, json};

use crate::protocol::error_code::METHOD_NOT_FOUND;

/// The error code of a refused sampling request: the one MCP SDKs use for a user who declined.
const SAMPLING_REFUSED: i64 = -1;

/// The optional client capabilities this client can declare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCapabilities {
    pub roots: bool,
    pub sampling: bool,
    pub elicitation: bool,
}

impl ClientCapabilities {
    /// Every capability.
    pub const ALL: ClientCapabilities = ClientCapabilities {
        roots: true,
        sampling: true,
        elicitation: true,
    };

    /// The `capabilities` object sent in `initialize` (or in modern `_meta`).
    pub fn to_value(self) -> Value {
        let mut map = Map::new();
        if self.roots {
            map.insert("roots".into(), json!({}));
        }
        if self.sampling {
            map.insert("sampling".into(), json!({}));
        }
        if self.elicitation {
            map.insert("elicitation".into(), json!({}));
        }
        Value::Object(map)
    }

    /// The answer (`result` or `error` member and its value) to a server's request for
    /// `method`: `ping` always, the declared capabilities' own, `-32601` for the rest.
    pub(super) fn answer(self, method: &str) -> (&'static str, Value) {
        match method {
            "ping" => ("result", json!({})),
            "roots/list" if self.roots => ("result", json!({"roots": []})),
            "elicitation/create" if self.elicitation => ("result", json!({"action": "decline"})),
            "sampling/createMessage" if self.sampling => (
                "error",
                json!({
                    "code": SAMPLING_REFUSED,
                    "message": "mcp-cassette declines sampling requests: it has no model to ask",
                }),
            ),
            _ => (
                "error",
                json!({
                    "code": METHOD_NOT_FOUND,
                    "message": format!("mcp-cassette does not serve {method}"),
                }),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_declared_by_default() {
        assert_eq!(ClientCapabilities::default().to_value(), json!({}));
        assert_eq!(
            ClientCapabilities::default().answer("roots/list").0,
            "error"
        );
        assert_eq!(ClientCapabilities::default().answer("ping").0, "result");
    }

    #[test]
    fn declared_capabilities_are_answered() {
        let all = ClientCapabilities::ALL;
        assert_eq!(
            all.to_value(),
            json!({"roots": {}, "sampling": {}, "elicitation": {}})
        );
        assert_eq!(all.answer("roots/list"), ("result", json!({"roots": []})));
        assert_eq!(
            all.answer("elicitation/create"),
            ("result", json!({"action": "decline"}))
        );
        assert_eq!(all.answer("sampling/createMessage").0, "error");
        assert_eq!(all.answer("x/y").1["code"], json!(METHOD_NOT_FOUND));
    }
}
