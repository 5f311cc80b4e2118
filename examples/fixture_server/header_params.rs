//! `header-params`: a classic stdio server whose tools declare `x-mcp-header` on input properties.
//! `route` declares a valid `Region`; `broken` declares `Tenant Id`, which is no HTTP field-name
//! token (it has a space), so `check` must report CAS-C008 on `broken` only, while a stdio client
//! must withhold neither tool (the annotation only matters on Streamable HTTP).

use std::io;

use serde_json::{Value, json};

use crate::tiny::js_string;
use crate::wire::{self, Emit, Flow, Incoming, Out, Server};

pub(crate) struct HeaderParams;

fn tools() -> Value {
    json!([
        {
            "name": "route",
            "description": "Run a query in one region.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Region to run in", "x-mcp-header": "Region"},
                    "query": {"type": "string", "description": "The query to run"}
                },
                "required": ["region", "query"]
            }
        },
        {
            "name": "broken",
            "description": "Declares a header name no field name may spell.",
            "inputSchema": {
                "type": "object",
                "properties": {"tenant": {"type": "string", "description": "Tenant", "x-mcp-header": "Tenant Id"}}
            }
        }
    ])
}

fn respond(message: &Incoming) -> Option<Emit> {
    let id = message.request_id()?;
    let text = |text: String| json!({"content": [{"type": "text", "text": text}]});
    let argument = |key: &str| js_string(message.params.pointer(&format!("/arguments/{key}")));
    Some(match message.method() {
        "initialize" => wire::result(
            id,
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "header-params", "version": "1.0.0"}
            }),
        ),
        "ping" => wire::result(id, json!({})),
        "tools/list" => wire::result(id, json!({"tools": tools()})),
        "tools/call" => match message.str_param("/name").unwrap_or("") {
            "route" => wire::result(
                id,
                text(format!(
                    "ran {} in {}",
                    argument("query"),
                    argument("region")
                )),
            ),
            "broken" => wire::result(id, text(format!("tenant {}", argument("tenant")))),
            other => wire::error(id, -32602, &format!("unknown tool {other}")),
        },
        other => wire::error(id, -32601, &format!("method not found: {other}")),
    })
}

impl Server for HeaderParams {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        if let Some(answer) = respond(&message) {
            out.emit(&answer)?;
        }
        Ok(Flow::Continue)
    }
}
