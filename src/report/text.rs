//! The human report of `check`, line for line the reference's:
//!
//! ```text
//!
//! mcp-cassette check: <target>
//! server: <name|unknown>@<version|?>  protocol: <version|?>
//! surface: <N> tools[, <N> resources][, <N> prompts]
//!
//! [OK] no findings                      (or one line per finding, plus its evidence)
//!
//! result: PASS|FAIL (<E> errors, <W> warnings, gate: <fail-on>[, lint: <lint-fail-on>])
//! ```
//!
//! Two departures from the reference, both for a reader: counts take the singular for one
//! (`1 tool`, `1 error`), and an error-level finding its gate waives (`--lint-fail-on never`)
//! is labelled `[ERROR]`, not `[FAIL]`, since it fails nothing. On a terminal the labels and
//! the verdict are coloured ([`Palette`]).

use std::fmt::Write as _;

use serde_json::Value;

use super::CheckReport;
use super::style::{Palette, Tone, count};
use super::terminal::escape;
use crate::severity::Level;

/// Renders the report, ending with a newline.
pub(crate) fn render(report: &CheckReport, palette: Palette) -> String {
    let mut out = String::new();
    out.push('\n');
    let _ = writeln!(out, "mcp-cassette check: {}", escape(&report.target));
    let _ = writeln!(
        out,
        "server: {}@{}  protocol: {}",
        escape(&identity(report.server.as_ref(), "name").unwrap_or_else(|| "unknown".to_owned())),
        escape(&identity(report.server.as_ref(), "version").unwrap_or_else(|| "?".to_owned())),
        escape(report.protocol_version.as_deref().unwrap_or("?"))
    );
    let mut counts = vec![count(report.tool_count, "tool", "tools")];
    if let Some(resources) = report.resource_count {
        counts.push(count(resources, "resource", "resources"));
    }
    if let Some(prompts) = report.prompt_count {
        counts.push(count(prompts, "prompt", "prompts"));
    }
    let _ = writeln!(out, "surface: {}", counts.join(", "));
    out.push('\n');
    if report.findings.is_empty() {
        let _ = writeln!(out, "{} no findings", palette.paint(Tone::Pass, "[OK]"));
    }
    for finding in &report.findings {
        let tag = match finding.level {
            Level::Error if report.fails(finding) => palette.paint(Tone::Fail, "[FAIL]"),
            Level::Error => palette.paint(Tone::Waived, "[ERROR]"),
            Level::Warn => palette.paint(Tone::Warn, "[WARN]"),
            Level::Info => palette.paint(Tone::Info, "[INFO]"),
        };
        let _ = writeln!(
            out,
            "{tag} {} {}: {}",
            escape(&finding.code),
            escape(&finding.subject),
            escape(&finding.message)
        );
        if let Some(excerpt) = finding.excerpt.as_deref().filter(|e| !e.is_empty()) {
            let _ = writeln!(out, "       evidence: \"{}\"", escape(excerpt));
        }
    }
    out.push('\n');
    let gate = if report.fail_on == report.lint_fail_on {
        report.fail_on.to_string()
    } else {
        format!("{}, lint: {}", report.fail_on, report.lint_fail_on)
    };
    let verdict = if report.ok {
        palette.paint(Tone::Pass, "PASS")
    } else {
        palette.paint(Tone::Fail, "FAIL")
    };
    let _ = writeln!(
        out,
        "result: {verdict} ({}, {}, gate: {gate})",
        count(report.count(Level::Error), "error", "errors"),
        count(report.count(Level::Warn), "warning", "warnings")
    );
    out
}

/// A member of the server identity as JavaScript's template literal shows it: strings bare,
/// other values as JSON; absent or null is `None`.
fn identity(server: Option<&Value>, key: &str) -> Option<String> {
    match server?.get(key)? {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::inspect::CheckFinding;
    use crate::report::{Gate, ReportHead};

    fn head() -> ReportHead {
        ReportHead {
            target: "node server.js".into(),
            server: Some(json!({"name": "tiny-server", "version": "1.0.0"})),
            protocol_version: Some("2025-06-18".into()),
            tool_count: 3,
            resource_count: None,
            prompt_count: None,
        }
    }

    #[test]
    fn clean_report() {
        let report = CheckReport::new(head(), Vec::new(), Gate::Error, Gate::Error);
        assert_eq!(
            render(&report, Palette::PLAIN),
            "\nmcp-cassette check: node server.js\nserver: tiny-server@1.0.0  protocol: 2025-06-18\nsurface: 3 tools\n\n[OK] no findings\n\nresult: PASS (0 errors, 0 warnings, gate: error)\n"
        );
    }

    #[test]
    fn findings_counts_and_split_gates() {
        let mut head = head();
        head.server = None;
        head.protocol_version = None;
        head.resource_count = Some(2);
        head.prompt_count = Some(0);
        let findings = vec![
            CheckFinding {
                level: Level::Error,
                code: "CAS-L001".into(),
                subject: "get_weather".into(),
                kind: None,
                message:
                    "instruction-override phrasing (classic prompt-injection) (in description)"
                        .into(),
                excerpt: Some("Ignore previous instructions".into()),
                surface: None,
            },
            CheckFinding {
                level: Level::Warn,
                code: "CAS-C003".into(),
                subject: "x".into(),
                kind: None,
                message: "missing description (models select tools by description)".into(),
                excerpt: None,
                surface: None,
            },
        ];
        let report = CheckReport::new(head, findings, Gate::Error, Gate::Never);
        assert_eq!(
            render(&report, Palette::PLAIN),
            "\nmcp-cassette check: node server.js\nserver: unknown@?  protocol: ?\nsurface: 3 tools, 2 resources, 0 prompts\n\n\
[ERROR] CAS-L001 get_weather: instruction-override phrasing (classic prompt-injection) (in description)\n       evidence: \"Ignore previous instructions\"\n\
[WARN] CAS-C003 x: missing description (models select tools by description)\n\n\
result: PASS (1 error, 1 warning, gate: error, lint: never)\n"
        );
    }
}
