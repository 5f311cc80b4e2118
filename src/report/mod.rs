//! Reports. `check`: the [`CheckReport`] value with its gates and verdict, and its renderers
//! ([`text`], [`json`], [`sarif`], [`markdown`]); `snapshot --check`: [`drift`] (and
//! [`markdown`]); `lint <cassette>`: [`cassette`]. Renderers return strings; only commands print. Text renderers show every
//! string a server or a cassette chose through [`terminal::escape`].
//!
//! Gate arithmetic (docs/check.md, "Levels and gates"): a `CAS-L*` finding is judged by the
//! lint gate, every other one by the structural gate. `never` passes everything, `warn` fails
//! on any finding that is not `info`, `error` fails on errors only. `never` is a lint gate only, so it can waive the safety
//! lint but never a structural fault, and never a server that could not be inspected (that is
//! exit 2 before any report exists).

pub(crate) mod cassette;
pub(crate) mod diff;
pub(crate) mod drift;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod rule_doc;
pub(crate) mod sarif;
pub(crate) mod style;
pub(crate) mod terminal;
pub(crate) mod text;

use serde::Serialize;
use serde_json::Value;

use crate::inspect::CheckFinding;
use crate::severity::Level;

/// The lowest level a gate fails on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Gate {
    Error,
    Warn,
    Never,
}

impl Gate {
    /// `error`, `warn` or `never`.
    pub(crate) fn parse(text: &str) -> Option<Gate> {
        match text {
            "error" => Some(Gate::Error),
            "warn" => Some(Gate::Warn),
            "never" => Some(Gate::Never),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Gate::Error => "error",
            Gate::Warn => "warn",
            Gate::Never => "never",
        }
    }

    /// Whether a finding at `level` fails this gate.
    pub(crate) fn fails(self, level: Level) -> bool {
        match self {
            Gate::Never => false,
            Gate::Warn => level != Level::Info,
            Gate::Error => level == Level::Error,
        }
    }
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything `check` learnt, in the shape of its JSON report (field order included).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckReport {
    /// The `--stdio` string or the URL, as given.
    pub target: String,
    /// The server's identity object as it sent it (`serverInfo`, or modern `_meta`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub tool_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_count: Option<usize>,
    pub findings: Vec<CheckFinding>,
    pub fail_on: Gate,
    pub lint_fail_on: Gate,
    /// No finding fails its gate.
    pub ok: bool,
}

/// What a report is built from, besides its findings.
#[derive(Debug, Clone)]
pub(crate) struct ReportHead {
    pub target: String,
    pub server: Option<Value>,
    pub protocol_version: Option<String>,
    pub tool_count: usize,
    pub resource_count: Option<usize>,
    pub prompt_count: Option<usize>,
}

impl CheckReport {
    /// Assembles a report and decides `ok` from the gates.
    pub(crate) fn new(
        head: ReportHead,
        findings: Vec<CheckFinding>,
        fail_on: Gate,
        lint_fail_on: Gate,
    ) -> Self {
        let mut report = CheckReport {
            target: head.target,
            server: head.server,
            protocol_version: head.protocol_version,
            tool_count: head.tool_count,
            resource_count: head.resource_count,
            prompt_count: head.prompt_count,
            findings,
            fail_on,
            lint_fail_on,
            ok: true,
        };
        report.ok = !report.findings.iter().any(|f| report.fails(f));
        report
    }

    /// Whether `finding` fails the gate that judges it: the lint gate for `CAS-L*`, the
    /// structural gate for the rest.
    pub(crate) fn fails(&self, finding: &CheckFinding) -> bool {
        let gate = if finding.is_lint() {
            self.lint_fail_on
        } else {
            self.fail_on
        };
        gate.fails(finding.level)
    }

    /// Findings at `level`.
    pub(crate) fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }

    /// The exit code: 0 when `ok`, 1 when a finding fails its gate.
    pub(crate) fn exit_code(&self) -> u8 {
        if self.ok { 0 } else { 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(code: &str, level: Level) -> CheckFinding {
        CheckFinding {
            level,
            code: code.into(),
            subject: "s".into(),
            kind: None,
            message: "m".into(),
            excerpt: None,
            surface: None,
        }
    }

    fn head() -> ReportHead {
        ReportHead {
            target: "t".into(),
            server: None,
            protocol_version: None,
            tool_count: 0,
            resource_count: None,
            prompt_count: None,
        }
    }

    fn ok(findings: &[(&str, Level)], fail_on: Gate, lint: Gate) -> bool {
        let findings = findings.iter().map(|(c, l)| finding(c, *l)).collect();
        CheckReport::new(head(), findings, fail_on, lint).ok
    }

    #[test]
    fn gates() {
        use Level::*;
        assert!(ok(&[], Gate::Error, Gate::Error));
        assert!(!ok(&[("CAS-L001", Error)], Gate::Error, Gate::Error));
        assert!(ok(&[("CAS-L011", Warn)], Gate::Error, Gate::Error));
        assert!(!ok(&[("CAS-L011", Warn)], Gate::Error, Gate::Warn));
        assert!(!ok(&[("CAS-L011", Warn)], Gate::Warn, Gate::Warn));
        assert!(ok(
            &[("CAS-L001", Error), ("CAS-L011", Warn)],
            Gate::Warn,
            Gate::Never
        ));
        // never waives the lint only.
        assert!(!ok(&[("CAS-C001", Error)], Gate::Error, Gate::Never));
        assert!(!ok(&[("CAS-C003", Warn)], Gate::Warn, Gate::Never));
        assert!(ok(&[("CAS-C003", Warn)], Gate::Error, Gate::Warn));
        assert!(ok(&[("CAS-C003", Info)], Gate::Warn, Gate::Warn));
    }
}
