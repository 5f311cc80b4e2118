//! Declared volatility: request fields a user says change on every run (a timestamp, a generated
//! run id), dropped from `params` on both sides before fingerprinting so that a request differing
//! only there still finds its recording.
//!
//! A declaration is a JSON Pointer into `params` (`/arguments/requestedAt`), optionally scoped to
//! one method (`tools/call:/arguments/requestedAt`). A pointer always starts with `/`, which is how
//! the two forms are told apart: anything else must name a method before its first colon, and a
//! colon inside the pointer is an ordinary character.
//!
//! Declarations may not name a field the engine reads to choose a rule (the MRTR retry fields,
//! a `tools/call`'s `name`, a `tasks/get`'s `taskId`): erasing one would not loosen a match, it
//! would silently answer one request with another's recording.

use serde_json::Value;

use super::diff::{remove_pointer, split_pointer};

/// One parsed declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// The declaration as written, for messages.
    pub spec: String,
    /// Only requests with this method drop the field; every method when `None`.
    pub method: Option<String>,
    /// The pointer, unescaped into segments.
    pub segments: Vec<String>,
}

/// Why a declaration (or the header's list of them) was refused. `Display` is the whole stderr
/// message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VolatileError {
    #[error(
        "mcp-cassette: {why}: \"{spec}\". A volatile declaration is a JSON Pointer into the request params (/arguments/requestedAt), optionally scoped to one method (tools/call:/arguments/requestedAt); it comes from replay --volatile or the cassette header's \"volatile\" list"
    )]
    Malformed { why: String, spec: String },
    #[error("mcp-cassette: cannot declare \"{spec}\" volatile: {refusal}")]
    EngineRead { spec: String, refusal: String },
    #[error(
        "mcp-cassette: the cassette header's \"volatile\" must be a list of strings, got {got}"
    )]
    HeaderShape { got: String },
}

/// The fields the engine reads to decide which rule applies, with the reason erasing each is
/// refused. `None` as method: every method reads it.
const ENGINE_READ: [(Option<&str>, &str, &str); 4] = [
    (
        None,
        "inputResponses",
        "replay matches on /inputResponses to tell a retry from the call it retried, on every method, so dropping it would answer a retry with the recording of the call it retried",
    ),
    (
        None,
        "requestState",
        "replay matches on /requestState to tell a retry from the call it retried, on every method, so dropping it would answer a retry carrying no /inputResponses with the recording of the plain call",
    ),
    (
        Some("tools/call"),
        "name",
        "replay matches a tools/call on /name, so dropping it would answer a call with another tool's recording",
    ),
    (
        Some("tasks/get"),
        "taskId",
        "replay matches a tasks/get on /taskId, so dropping it would pool every task's polls together and serve one task's final state for another",
    ),
];

impl Declaration {
    /// Parses one declaration, refusing a malformed one or one that names an engine-read field.
    pub fn parse(spec: &str) -> Result<Declaration, VolatileError> {
        let malformed = |why: String| VolatileError::Malformed {
            why,
            spec: spec.to_owned(),
        };
        if spec.is_empty() {
            // RFC 6901 reads "" as the whole document; erasing all of params would make every
            // request it applies to identical.
            return Err(malformed("the declaration names no field".to_owned()));
        }
        let (method, pointer) = if spec.starts_with('/') {
            (None, spec)
        } else {
            let Some((method, pointer)) = spec.split_once(':') else {
                return Err(malformed(
                    "neither a JSON Pointer nor a method-scoped one".to_owned(),
                ));
            };
            if method.is_empty() {
                return Err(malformed("the method scope is empty".to_owned()));
            }
            if pointer.is_empty() {
                return Err(malformed(format!(
                    "the declaration names no field, only the method \"{method}\""
                )));
            }
            if !pointer.starts_with('/') {
                return Err(malformed(format!(
                    "the pointer after \"{method}:\" does not start with \"/\""
                )));
            }
            (Some(method.to_owned()), pointer)
        };
        let segments = split_pointer(pointer).unwrap_or_default();
        if let Some(first) = segments.first() {
            for (rule_method, key, refusal) in ENGINE_READ {
                if first != key {
                    continue;
                }
                if let (Some(rule), Some(scoped)) = (rule_method, method.as_deref()) {
                    if rule != scoped {
                        continue;
                    }
                }
                let mut refusal = refusal.to_owned();
                if rule_method.is_some() {
                    refusal
                        .push_str(". Scope the declaration to a method that does not match on it");
                }
                return Err(VolatileError::EngineRead {
                    spec: spec.to_owned(),
                    refusal,
                });
            }
        }
        Ok(Declaration {
            spec: spec.to_owned(),
            method,
            segments,
        })
    }

    fn applies_to(&self, method: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
    }
}

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
        let mut specs: Vec<String> = Vec::new();
        if let Some(declared) = header {
            let list = declared
                .as_array()
                .filter(|l| l.iter().all(Value::is_string));
            let Some(list) = list else {
                return Err(VolatileError::HeaderShape {
                    got: super::diff::js_stringify(declared),
                });
            };
            specs.extend(list.iter().filter_map(|v| v.as_str().map(str::to_owned)));
        }
        specs.extend(invocation.iter().cloned());
        let declarations = specs
            .iter()
            .map(|s| Declaration::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
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
