//! Declared volatility: request fields a user says change on every run (a timestamp, a generated
//! run id), dropped from `params` on both sides before fingerprinting so that a request differing
//! only there still finds its recording.
//!
//! Parsing and the refusals live in [`crate::cassette::volatile`]; this is the set in force
//! for one replay and what it does to params.

use serde_json::Value;

pub use crate::cassette::volatile::{Declaration, VolatileError};
use crate::json::diff::remove_pointer;

/// Every declaration in force for a replay: the header's own, then the invocation's.
#[derive(Debug, Clone, Default)]
pub struct VolatileSet {
    declarations: Vec<Declaration>,
}

impl VolatileSet {
    /// Validates the header's `volatile` member (already `null`-filtered) and the invocation's
    /// declarations, header first.
    pub fn build(
        header: Option<&Value>,
        invocation: &[String],
    ) -> Result<VolatileSet, VolatileError> {
        let mut declarations = crate::cassette::volatile::parse_list(header)?;
        for spec in invocation {
            declarations.push(Declaration::parse(spec)?);
        }
        Ok(VolatileSet { declarations })
    }

    pub fn is_empty(&self) -> bool {
        self.declarations.is_empty()
    }

    pub fn declarations(&self) -> &[Declaration] {
        &self.declarations
    }

    /// Whether any declaration applies to `method` (so its params must be copied and cut).
    pub fn applies_to(&self, method: &str) -> bool {
        self.declarations.iter().any(|d| d.applies_to(method))
    }

    /// Drops every declaration that applies to `method` from `params`, in place.
    pub fn drop_from(&self, method: &str, params: &mut Value) {
        for d in &self.declarations {
            if d.applies_to(method) {
                remove_pointer(params, &d.segments);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refusal(spec: &str) -> String {
        Declaration::parse(spec).unwrap_err().to_string()
    }

    #[test]
    fn grammar() {
        let d = Declaration::parse("tools/call:/arguments/run:id").unwrap();
        assert_eq!(d.method.as_deref(), Some("tools/call"));
        assert_eq!(d.segments, ["arguments", "run:id"]);
        let d = Declaration::parse("/arguments/a~1b").unwrap();
        assert_eq!(d.method, None);
        assert_eq!(d.segments, ["arguments", "a/b"]);
        for ok in [
            "prompts/get:/name",
            "tasks/update:/taskId",
            "/arguments/requestState",
            "tools/call:/arguments/name",
        ] {
            assert!(Declaration::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn malformed_named() {
        let tail = ". A volatile declaration is a JSON Pointer into the request params (/arguments/requestedAt), optionally scoped to one method (tools/call:/arguments/requestedAt); it comes from replay --volatile or the cassette header's \"volatile\" list";
        assert_eq!(
            refusal(""),
            format!("mcp-cassette: the declaration names no field: \"\"{tail}")
        );
        assert_eq!(
            refusal("tools/call:"),
            format!(
                "mcp-cassette: the declaration names no field, only the method \"tools/call\": \"tools/call:\"{tail}"
            )
        );
        assert_eq!(
            refusal("arguments"),
            format!(
                "mcp-cassette: neither a JSON Pointer nor a method-scoped one: \"arguments\"{tail}"
            )
        );
        assert_eq!(
            refusal(":/x"),
            format!("mcp-cassette: the method scope is empty: \":/x\"{tail}")
        );
        assert_eq!(
            refusal("tools/call:arguments"),
            format!(
                "mcp-cassette: the pointer after \"tools/call:\" does not start with \"/\": \"tools/call:arguments\"{tail}"
            )
        );
    }

    #[test]
    fn engine_read_fields_refused() {
        assert!(refusal("/inputResponses/x").starts_with("mcp-cassette: cannot declare \"/inputResponses/x\" volatile: replay matches on /inputResponses"));
        assert!(
            refusal("tasks/update:/requestState").contains("retry carrying no /inputResponses")
        );
        assert_eq!(
            refusal("/name"),
            "mcp-cassette: cannot declare \"/name\" volatile: replay matches a tools/call on /name, so dropping it would answer a call with another tool's recording. Scope the declaration to a method that does not match on it"
        );
        assert!(refusal("tasks/get:/taskId").contains("pool every task's polls together"));
        assert!(refusal("tools/call:/name").ends_with("does not match on it"));
    }

    #[test]
    fn header_shape_and_order() {
        let e = VolatileSet::build(Some(&json!("/a")), &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mcp-cassette: the cassette header's \"volatile\" must be a list of strings, got \"/a\""
        );
        assert!(VolatileSet::build(Some(&json!(["/a", 1])), &[]).is_err());
        let set = VolatileSet::build(Some(&json!(["/a"])), &["tools/call:/b".to_owned()]).unwrap();
        assert_eq!(set.declarations().len(), 2);
        assert!(set.applies_to("x"));
        let mut p = json!({"a": 1, "b": 2});
        set.drop_from("resources/read", &mut p);
        assert_eq!(p, json!({"b": 2}));
        let mut p = json!({"a": 1, "b": 2});
        set.drop_from("tools/call", &mut p);
        assert_eq!(p, json!({}));
    }
}
