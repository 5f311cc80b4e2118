//! `x-mcp-header` before re-firing over modern-era Streamable HTTP (docs/verify.md, "`--url`").
//!
//! There, a `tools/call` of a tool whose `inputSchema` declares header parameters carries them
//! as `Mcp-Param-*` headers, which the client builds from the tool listing. `verify` lists the
//! tools once, before the first recorded call, only when the cassette re-fires a `tools/call` on
//! such a connection, and tells the user which of the called tools cannot get their headers: a
//! tool whose declarations break the rules is withheld from header resolution (the rules and
//! their messages are `crate::protocol::header_param`'s, shared with `check`'s CAS-C008).

use std::collections::BTreeSet;

use serde_json::Value;

use super::Plan;
use crate::protocol::header_param;

/// The tools the plan calls, by name, sorted.
pub(crate) fn called_tools(plan: &Plan) -> BTreeSet<String> {
    plan.pairs
        .iter()
        .filter(|p| p.method == "tools/call")
        .filter_map(|p| p.label.strip_prefix("tools/call ").map(str::to_owned))
        .collect()
}

/// One stderr note per called tool whose declarations are invalid, in listing order.
pub(crate) fn invalid_declarations(tools: &[Value], called: &BTreeSet<String>) -> Vec<String> {
    tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            if !called.contains(name) {
                return None;
            }
            let reason = header_param::declarations(tool.get("inputSchema")?).err()?;
            Some(format!(
                "mcp-cassette: tool \"{name}\" has an invalid x-mcp-header declaration ({reason}); a tools/call for it will carry no Mcp-Param-* header"
            ))
        })
        .collect()
}

/// The note when the listing itself failed.
pub(crate) fn listing_failed(error: &str) -> String {
    format!(
        "mcp-cassette: could not list the tools to learn their x-mcp-header declarations ({error}); tools/call will carry no Mcp-Param-* header"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_called_tools_with_bad_declarations_are_named() {
        let tools = [
            json!({"name": "ok", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}}),
            json!({"name": "bad", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Bad Name"}}}}),
            json!({"name": "bad-uncalled", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": ""}}}}),
        ];
        let called: BTreeSet<String> = ["ok", "bad"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(
            invalid_declarations(&tools, &called),
            [
                "mcp-cassette: tool \"bad\" has an invalid x-mcp-header declaration (x-mcp-header \"Bad Name\" is not an HTTP field-name token); a tools/call for it will carry no Mcp-Param-* header"
            ]
        );
    }
}
