//! The per-tool structural checks CAS-C001 … CAS-C005 and CAS-C008 (docs/check.md, "Structural rules"). Pure.

use std::collections::HashMap;

use serde_json::Value;

use super::schema::{SchemaCompiler, too_deep};
use super::{CheckFinding, Entry};
use crate::protocol::header_param;
use crate::severity::Level;

/// CAS-C001: one finding per name that occurs more than once, in order of first occurrence.
pub fn duplicate_names(tools: &[Entry]) -> Vec<CheckFinding> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for tool in tools {
        let Some(name) = tool.value.get("name").and_then(Value::as_str) else {
            continue;
        };
        match index.get(name) {
            Some(&at) => counts[at].1 += 1,
            None => {
                index.insert(name, counts.len());
                counts.push((name, 1));
            }
        }
    }
    counts
        .into_iter()
        .filter(|&(_, count)| count > 1)
        .map(|(name, count)| {
            finding(
                Level::Error,
                "CAS-C001",
                subject_of(name),
                format!("duplicate tool name ({count} occurrences)"),
            )
        })
        .collect()
}

/// CAS-C002, C003, C004 or C005, and C008, for one tool, in that order.
pub fn tool(tool: &Entry, schemas: &mut SchemaCompiler) -> Vec<CheckFinding> {
    let value = &tool.value;
    let name = value.get("name").and_then(Value::as_str);
    let subject = tool_subject(value);
    let mut findings = Vec::new();

    if !name.is_some_and(recommended_name) {
        findings.push(finding(
            Level::Warn,
            "CAS-C002",
            subject.clone(),
            "tool name outside recommended charset/length ([a-zA-Z0-9_.-], ≤128)".to_owned(),
        ));
    }

    let described = value
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|text| !text.trim_matches(is_js_space).is_empty());
    if !described {
        findings.push(finding(
            Level::Warn,
            "CAS-C003",
            subject.clone(),
            "missing description (models select tools by description)".to_owned(),
        ));
    }

    let schema_unread = tool.unread.iter().any(|member| member == "inputSchema");
    let schema = value.get("inputSchema");
    let problem = if schema_unread {
        Some(too_deep())
    } else {
        schema.and_then(|schema| schemas.problem(schema))
    };
    if schema.is_none() && !schema_unread {
        findings.push(finding(
            Level::Error,
            "CAS-C004",
            subject.clone(),
            "missing inputSchema (required by the MCP specification)".to_owned(),
        ));
    } else if let Some(problem) = problem {
        findings.push(finding(
            Level::Error,
            "CAS-C005",
            subject.clone(),
            format!("inputSchema is not valid JSON Schema: {problem}"),
        ));
    }

    if let Some(schema) = schema {
        if let Err(reason) = header_param::declarations(schema) {
            findings.push(finding(
                Level::Warn,
                "CAS-C008",
                subject,
                format!(
                    "invalid x-mcp-header declaration, so a 2026-07-28 Streamable HTTP client must refuse this tool whatever transport it is served over: {reason}"
                ),
            ));
        }
    }
    findings
}

/// `^[a-zA-Z0-9_.-]{1,128}$`.
fn recommended_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// JavaScript's `trim()` set: Unicode white space and the byte-order mark.
fn is_js_space(ch: char) -> bool {
    ch == '\u{feff}' || (ch.is_whitespace() && ch != '\u{85}')
}

/// The tool's name, or `(unnamed tool)` (the lint's convention) when it has none.
pub fn tool_subject(tool: &Value) -> String {
    match tool.get("name").and_then(Value::as_str) {
        Some(name) => subject_of(name),
        None => "(unnamed tool)".to_owned(),
    }
}

fn subject_of(name: &str) -> String {
    if name.is_empty() {
        "(unnamed tool)".to_owned()
    } else {
        name.to_owned()
    }
}

fn finding(level: Level, code: &str, subject: String, message: String) -> CheckFinding {
    CheckFinding {
        level,
        code: code.to_owned(),
        subject,
        kind: None,
        message,
        excerpt: None,
        surface: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(value: Value) -> Entry {
        Entry {
            value,
            unread: Vec::new(),
        }
    }

    fn codes(findings: &[CheckFinding]) -> Vec<&str> {
        findings.iter().map(|f| f.code.as_str()).collect()
    }

    fn check(value: Value) -> Vec<CheckFinding> {
        tool(&entry(value), &mut SchemaCompiler::new())
    }

    #[test]
    fn a_clean_tool_has_no_finding() {
        assert!(
            check(
                json!({"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}})
            )
            .is_empty()
        );
    }

    #[test]
    fn each_check_with_its_level_and_message() {
        let findings = check(json!({"name": "get weather", "description": " \u{feff}\t"}));
        assert_eq!(codes(&findings), ["CAS-C002", "CAS-C003", "CAS-C004"]);
        assert_eq!(findings[0].level, Level::Warn);
        assert_eq!(
            findings[0].message,
            "tool name outside recommended charset/length ([a-zA-Z0-9_.-], ≤128)"
        );
        assert_eq!(
            findings[1].message,
            "missing description (models select tools by description)"
        );
        assert_eq!(findings[2].level, Level::Error);
        assert_eq!(
            findings[2].message,
            "missing inputSchema (required by the MCP specification)"
        );
        assert_eq!(findings[2].subject, "get weather");

        let findings =
            check(json!({"name": "broken", "description": "d", "inputSchema": {"type": "strang"}}));
        assert_eq!(codes(&findings), ["CAS-C005"]);
        assert!(
            findings[0]
                .message
                .starts_with("inputSchema is not valid JSON Schema: ")
        );

        let findings = check(json!({"name": "h", "description": "d", "inputSchema": {
            "type": "object", "properties": {"t": {"type": "string", "x-mcp-header": "Tenant Id"}}
        }}));
        assert_eq!(codes(&findings), ["CAS-C008"]);
        assert_eq!(
            findings[0].message,
            "invalid x-mcp-header declaration, so a 2026-07-28 Streamable HTTP client must refuse this tool whatever transport it is served over: x-mcp-header \"Tenant Id\" is not an HTTP field-name token"
        );
    }

    #[test]
    fn names() {
        assert!(recommended_name("a.b-c_1"));
        assert!(recommended_name(&"x".repeat(128)));
        assert!(!recommended_name(&"x".repeat(129)));
        assert!(!recommended_name(""));
        assert!(!recommended_name("café"));
        let findings = check(json!({"description": "d", "inputSchema": {}}));
        assert_eq!(codes(&findings), ["CAS-C002"]);
        assert_eq!(findings[0].subject, "(unnamed tool)");
    }

    #[test]
    fn null_schema_is_invalid_not_missing() {
        let findings = check(json!({"name": "n", "description": "d", "inputSchema": null}));
        assert_eq!(codes(&findings), ["CAS-C005"]);
    }

    #[test]
    fn an_unreadable_schema_is_invalid() {
        let mut tool = entry(json!({"name": "deep", "description": "d"}));
        tool.unread.push("inputSchema".into());
        let findings = super::tool(&tool, &mut SchemaCompiler::new());
        assert_eq!(codes(&findings), ["CAS-C005"]);
        assert_eq!(
            findings[0].message,
            "inputSchema is not valid JSON Schema: nests deeper than 128 levels, more than mcp-cassette compiles"
        );
    }

    #[test]
    fn duplicates_in_first_occurrence_order() {
        let tools: Vec<Entry> = ["b", "a", "b", "a", "b", "c"]
            .iter()
            .map(|name| entry(json!({"name": name})))
            .collect();
        let findings = duplicate_names(&tools);
        let got: Vec<_> = findings
            .iter()
            .map(|f| (f.subject.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("b", "duplicate tool name (3 occurrences)"),
                ("a", "duplicate tool name (2 occurrences)")
            ]
        );
        assert!(
            findings
                .iter()
                .all(|f| f.level == Level::Error && f.code == "CAS-C001")
        );
    }
}
