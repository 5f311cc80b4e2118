//! `pushy`: a server that speaks on its own, which tiny never does. Calling `add_tool` changes the
//! tool list, and the server says so unprompted.
//!
//! - `PUSHY_ERA=legacy` (default): classic handshake; an unsolicited
//!   `notifications/tools/list_changed` follows the answer of the call that changed the list.
//! - `PUSHY_ERA=modern`: the 2026-07-28 lifecycle. `initialize` is refused; `server/discover`
//!   answers; `subscriptions/listen` is acknowledged by a `notifications/subscriptions/acknowledged`
//!   tagged with the listen's id and never answered; change notifications go only to
//!   subscriptions that asked for them, tagged the same way; every result carries
//!   `resultType:"complete"` and lists carry `ttlMs`/`cacheScope`. The tool `end_listen` ends
//!   every open subscription gracefully (a result for each listen id), so a recording can hold a
//!   closure too. A `notifications/cancelled` naming a listen id drops it silently.

use std::io;

use serde_json::{Map, Value, json};

use crate::tiny::js_string;
use crate::wire::{self, Emit, Flow, Incoming, Out, Server};

pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
const LIST_CHANGED: &str = "notifications/tools/list_changed";

pub(crate) struct Pushy {
    modern: bool,
    tools: Vec<Value>,
    /// Open subscriptions in the order they were opened: listen id and the filter honoured.
    subscriptions: Vec<(Value, Value)>,
}

impl Pushy {
    pub(crate) fn from_env() -> Self {
        let modern = std::env::var("PUSHY_ERA").is_ok_and(|era| era == "modern");
        let mut tools = vec![
            json!({
                "name": "echo",
                "description": "Echo a message back to the caller.",
                "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
            }),
            json!({
                "name": "add_tool",
                "description": "Install one more tool, which changes the tool list.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            }),
        ];
        if modern {
            tools.push(json!({
                "name": "end_listen",
                "description": "End every open subscription gracefully.",
                "inputSchema": {"type": "object"}
            }));
        }
        Self {
            modern,
            tools,
            subscriptions: Vec::new(),
        }
    }

    fn protocol(&self) -> &'static str {
        if self.modern {
            "2026-07-28"
        } else {
            "2025-06-18"
        }
    }

    /// A result in this server's era: the modern era requires `resultType`, the legacy era has none.
    fn result(&self, id: &Value, mut payload: Value) -> Emit {
        if self.modern
            && let Value::Object(fields) = &mut payload
        {
            let mut tagged = Map::new();
            tagged.insert("resultType".to_owned(), json!("complete"));
            tagged.append(fields);
            payload = Value::Object(tagged);
        }
        wire::result(id, payload)
    }

    /// The list changed: legacy tells everyone, modern tells each subscription that asked.
    fn announce(&self) -> Vec<Emit> {
        if !self.modern {
            return vec![Emit::Json(
                json!({"jsonrpc": "2.0", "method": LIST_CHANGED}),
            )];
        }
        self.subscriptions
            .iter()
            .filter(|(_, honoured)| honoured["toolsListChanged"] == true)
            .map(|(listen, _)| {
                wire::notification(LIST_CHANGED, json!({"_meta": {SUBSCRIPTION_ID: listen}}))
            })
            .collect()
    }

    fn respond(&mut self, message: &Incoming) -> Vec<Emit> {
        let Some(id) = message.request_id() else {
            if message.method() == "notifications/cancelled"
                && let Some(cancelled) = message.params.get("requestId")
            {
                self.subscriptions.retain(|(listen, _)| listen != cancelled);
            }
            return Vec::new();
        };
        match message.method() {
            "initialize" if self.modern => vec![Emit::Json(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32601,
                    "message": "method not found: initialize",
                    "data": {"supported": [self.protocol()]}
                }
            }))],
            "initialize" => {
                let version = message
                    .str_param("/protocolVersion")
                    .unwrap_or(self.protocol());
                vec![self.result(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": true}},
                        "serverInfo": {"name": "pushy-server", "version": "1.0.0"}
                    }),
                )]
            }
            "ping" if !self.modern => vec![self.result(id, json!({}))],
            "server/discover" => vec![wire::result(
                id,
                json!({
                    "resultType": "complete",
                    "supportedVersions": [self.protocol()],
                    "capabilities": {"tools": {"listChanged": true}},
                    "ttlMs": 0,
                    "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "pushy-server", "version": "1.0.0"}}
                }),
            )],
            "subscriptions/listen" if self.modern => {
                // No response: the acknowledgment is the answer, and the request stays open until
                // the server ends it or the client cancels it.
                let asked =
                    message.params.pointer("/notifications/toolsListChanged") == Some(&json!(true));
                let honoured = json!({"toolsListChanged": asked});
                self.subscriptions.push((id.clone(), honoured.clone()));
                vec![wire::notification(
                    "notifications/subscriptions/acknowledged",
                    json!({"_meta": {SUBSCRIPTION_ID: id}, "notifications": honoured}),
                )]
            }
            "tools/list" if self.modern => vec![self.result(
                id,
                json!({"tools": self.tools, "ttlMs": 60_000, "cacheScope": "public"}),
            )],
            "tools/list" => vec![self.result(id, json!({"tools": self.tools}))],
            "tools/call" => self.call(id, message),
            other => vec![wire::error(
                id,
                -32601,
                &format!("method not found: {other}"),
            )],
        }
    }

    fn call(&mut self, id: &Value, message: &Incoming) -> Vec<Emit> {
        let text = |text: String| json!({"content": [{"type": "text", "text": text}]});
        match message.str_param("/name").unwrap_or("") {
            "echo" => {
                let said = js_string(message.params.pointer("/arguments/message"));
                vec![self.result(id, text(format!("echo:{said}")))]
            }
            "add_tool" => {
                let added = message
                    .str_param("/arguments/name")
                    .unwrap_or("extra")
                    .to_owned();
                self.tools.push(json!({
                    "name": added,
                    "description": "Installed at runtime.",
                    "inputSchema": {"type": "object"}
                }));
                // The answer first, then the news: the change happened because of this call.
                let mut emits = vec![self.result(id, text(format!("installed:{added}")))];
                emits.extend(self.announce());
                emits
            }
            "end_listen" if self.modern => {
                let mut emits = vec![self.result(id, text("ended".to_owned()))];
                for (listen, _) in self.subscriptions.drain(..) {
                    emits.push(wire::result(
                        &listen,
                        json!({"resultType": "complete", "_meta": {SUBSCRIPTION_ID: listen}}),
                    ));
                }
                emits
            }
            other => vec![wire::error(id, -32602, &format!("unknown tool {other}"))],
        }
    }
}

impl Server for Pushy {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        out.emit_all(&self.respond(&message))?;
        Ok(Flow::Continue)
    }
}
