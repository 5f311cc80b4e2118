//! Volatile declarations: request fields a user says change on every run (a timestamp, a
//! generated run id), named by the cassette header's `volatile` list or by `replay --volatile`.
//!
//! A declaration is a JSON Pointer into `params` (`/arguments/requestedAt`), optionally scoped to
//! one method (`tools/call:/arguments/requestedAt`). A pointer always starts with `/`, which is how
//! the two forms are told apart: anything else must name a method before its first colon, and a
//! colon inside the pointer is an ordinary character.
//!
//! Declarations may not name a field the replay engine reads to choose a rule (the MRTR retry
//! fields, a `tools/call`'s `name`, a `tasks/get`'s `taskId`): erasing one would not loosen a
//! match, it would silently answer one request with another's recording.
//!
//! The parser lives with the cassette format because two layers read the header's list: replay
//! applies it and `lint <cassette>` checks it, with the same messages.

pub use crate::json::diff::split_pointer;

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

/// Parses the header's `volatile` member (already `null`-filtered): a list of declarations,
/// each refused as [`Declaration::parse`] refuses it.
pub fn parse_list(declared: Option<&serde_json::Value>) -> Result<Vec<Declaration>, VolatileError> {
    let Some(declared) = declared else {
        return Ok(Vec::new());
    };
    let list = declared
        .as_array()
        .filter(|l| l.iter().all(serde_json::Value::is_string))
        .ok_or_else(|| VolatileError::HeaderShape {
            got: crate::json::stringify::compact(declared),
        })?;
    list.iter()
        .filter_map(serde_json::Value::as_str)
        .map(Declaration::parse)
        .collect()
}

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

    /// Whether this declaration applies to requests with `method`.
    pub fn applies_to(&self, method: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
    }
}
