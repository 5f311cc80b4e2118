//! The JSON Schema checker behind CAS-C005 (`inputSchema` compiles), including its ECMAScript
//! pattern parser.

use serde_json::{Value, json};

use crate::inspect::Entry;
use crate::inspect::schema::{MAX_DEPTH, SchemaCompiler, compile, depth_exceeds};
use crate::inspect::structural;

/// Longest verdict, in characters: the checker's own message limit (600), one cut-off mark and
/// the count of problems left out.
const MESSAGE_LIMIT: usize = 640;

/// The input is a schema when it is JSON; otherwise it is used as a `pattern` and a
/// `patternProperties` key of an otherwise valid schema, which reaches the pattern parser with
/// any text. Holds: the verdict is bounded; the cached compiler gives the verdict `compile`
/// gives, twice; the CAS-C checks of a tool carrying the schema report CAS-C005 exactly when the
/// verdict is a refusal.
pub fn json_schema(data: &[u8]) {
    let Some(text) = super::text(data) else {
        return;
    };
    let schema = serde_json::from_str::<Value>(text).unwrap_or_else(|_| {
        json!({
            "type": "object",
            "properties": {"p": {"type": "string", "pattern": text}},
            "patternProperties": {text: {}},
        })
    });
    let verdict = compile(&schema).err();
    if let Some(message) = &verdict {
        let chars = message.chars().count();
        assert!(chars <= MESSAGE_LIMIT, "a verdict of {chars} characters");
    }
    let mut compiler = SchemaCompiler::new();
    assert_eq!(compiler.problem(&schema), verdict);
    assert_eq!(
        compiler.problem(&schema),
        verdict,
        "the cached verdict differs"
    );

    if depth_exceeds(&schema, MAX_DEPTH - 1) {
        // Inside a tool the schema sits one level deeper, past what a listing is read to.
        return;
    }
    let tool = json!({"name": "fuzz", "description": "d", "inputSchema": schema}).to_string();
    let Ok(raw) = serde_json::from_str::<&serde_json::value::RawValue>(&tool) else {
        return;
    };
    let findings = structural::tool(&Entry::read(raw), &mut SchemaCompiler::new());
    let c005 = findings.iter().any(|f| f.code == "CAS-C005");
    assert_eq!(
        c005,
        verdict.is_some(),
        "CAS-C005 and the verdict disagree: {findings:?}"
    );
}
