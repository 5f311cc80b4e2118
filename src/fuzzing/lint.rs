//! The lint engine: every rule over any text, on every surface, and the listing walkers over any
//! JSON value.

use serde_json::{Value, json};

use crate::lint::{
    Finding, Surface, lint_output_text, lint_prompt, lint_resource, lint_resource_template,
    lint_tool, rule, safe_mcp_rule_ids, scan_text,
};

/// Longest excerpt a finding may carry, in bytes. A rule quotes a window of 60 UTF-16 units
/// (docs/check.md, "Reports"); a second-stage finding in decoded text adds the first 40
/// characters of the encoded run and a label, or a list of what normalising revealed. 512 was
/// too tight for those (a 550-byte excerpt, `regressions/lint_engine/excerpt-of-550-bytes`); the
/// point is that excerpts do not grow with the text.
const EXCERPT_LIMIT: usize = 1024;

/// The input is linted as text on every surface and as recorded output; when it is JSON, as a
/// tool, prompt, resource and template listing entry, else as a tool's description. Holds: each
/// match comes from a rule reading that surface; every finding names a rule of the catalogue;
/// excerpts are bounded whatever the text's length; the SAFE-MCP ids the snapshot rug-pull rule
/// compares are a subset of what the tool surface reports.
pub fn lint_engine(data: &[u8]) {
    let Some(text) = super::text(data) else {
        return;
    };
    let mut on_tool = Vec::new();
    for surface in [
        Surface::Tool,
        Surface::Prompt,
        Surface::Resource,
        Surface::Name,
        Surface::Output,
    ] {
        for m in scan_text(text, surface) {
            assert!(
                surface == Surface::Output || m.rule.reads(surface),
                "{} does not read {surface:?}",
                m.rule.id
            );
            assert_excerpt(&m.excerpt);
            if surface == Surface::Tool {
                on_tool.push(m.rule.id);
            }
        }
    }
    for id in safe_mcp_rule_ids(text) {
        assert!(
            on_tool.contains(&id),
            "{id} fires for the rug-pull rule only"
        );
    }
    for hit in lint_output_text(text) {
        assert!(rule(hit.code).is_some());
        assert_excerpt(&hit.excerpt);
    }

    let findings: Vec<Finding> = match serde_json::from_str::<Value>(text) {
        Ok(value) => [
            lint_tool(&value),
            lint_prompt(&value),
            lint_resource(&value),
            lint_resource_template(&value),
        ]
        .concat(),
        Err(_) => lint_tool(&json!({"name": "fuzz", "description": text})),
    };
    for finding in findings {
        assert!(
            rule(&finding.code).is_some(),
            "unknown rule {}",
            finding.code
        );
        if let Some(excerpt) = &finding.excerpt {
            assert_excerpt(excerpt);
        }
    }
}

fn assert_excerpt(excerpt: &str) {
    assert!(
        excerpt.len() <= EXCERPT_LIMIT,
        "excerpt of {} bytes: {excerpt:?}",
        excerpt.len()
    );
}
