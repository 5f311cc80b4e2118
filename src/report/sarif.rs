//! SARIF 2.1.0 for `check --format sarif`: what GitHub code scanning reads.
//!
//! The document matches the reference's (docs/sarif.md) wherever a user could notice: the rule ids
//! are the CAS ids the terminal prints, levels map `error`/`warn`/`info` to
//! `error`/`warning`/`note`, only rules that fired are described, and every result carries
//! `partialFingerprints.mcpCassetteFindingV1` computed exactly as the reference computes it,
//! so alerts triaged under the reference stay triaged after a binary swap:
//!
//! * a tool finding: the first 16 hex characters of SHA-256 over `rule ␀ subject`;
//! * a prompt, resource or resource-template finding: the same over `rule ␀ kind ␀ subject`,
//!   so a prompt and a tool that share a name stay two alerts (the reference mixes the kind in
//!   but its byte layout is not known; this is ours);
//! * never the excerpt, so rewording a description does not resurrect a dismissed alert, and
//!   one rule firing on two fields of one tool is one alert.
//!
//! Code scanning drops a result that has no `physicalLocation`, so each result is anchored to
//! a real file in the repository when one can be found ([`resolve_anchor`]): `--sarif-location`,
//! else `mcp-contract.snapshot.json` in the working directory, else the first `--stdio` token
//! that is a regular file inside it. In a contract snapshot each tool finding points at the line
//! of that tool's `"name"`; anything else points at line 1. The `logicalLocations` (the
//! subject) are kept beside it. With no anchor the document is still valid and the caller
//! prints [`NO_ANCHOR_WARNING`].
//!
//! Beyond the reference, each rule carries its help text (`help.text`/`help.markdown`) from the
//! rule's own documentation, which code scanning shows on the alert page.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::contract::{DEFAULT_FILE, MARKER, tool_name_lines};
use crate::lint::SubjectKind;
use crate::severity::Level;

/// `$schema` of the document.
pub(crate) const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// Where a reader of an alert is sent for the rule catalogue.
pub(crate) const HELP_URI: &str = "https://github.com/ivermin1123/mcp-cassette#safety-lint-rules";
/// The tool's home page.
pub(crate) const INFORMATION_URI: &str = "https://mcpcassette.dev";

/// The stderr warning printed when no file could anchor the results.
pub(crate) const NO_ANCHOR_WARNING: &str = "mcp-cassette check: no file to anchor SARIF findings to, so this document carries\n  no physicalLocation. GitHub code scanning REJECTS such results with \"expected a\n  physical location\" and creates no alerts, though the upload itself reports success.\n  Fix: commit a contract snapshot (mcp-cassette snapshot), or pass\n  --sarif-location <file> naming a file in the repository.\n";

/// One finding as `check` reports it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finding<'a> {
    pub level: Level,
    /// The rule id (`CAS-L…`, `CAS-C…`).
    pub code: &'a str,
    pub subject: &'a str,
    /// `None` for tools (and for CAS-C006/C007).
    pub kind: Option<SubjectKind>,
    pub message: &'a str,
    pub excerpt: Option<&'a str>,
}

/// What the document says about the run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    /// The `--stdio` string or the URL.
    pub target: &'a str,
    pub tool_count: usize,
    /// No finding failed its gate.
    pub ok: bool,
    /// Where the command ran (`invocations[0].workingDirectory`).
    pub working_directory: &'a Path,
}

/// The file results are anchored to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchor {
    /// Repository-relative, `/`-separated.
    pub uri: String,
    /// Tool name → line, when the file is a contract snapshot.
    tool_lines: Option<HashMap<String, u32>>,
}

impl Anchor {
    /// An anchor on a file whose text is `text`: a contract snapshot maps tools to lines,
    /// anything else is anchored at line 1.
    pub(crate) fn new(uri: String, text: &[u8]) -> Anchor {
        let tool_lines = if memchr::memmem::find(text, MARKER.as_bytes()).is_some() {
            std::str::from_utf8(text).ok().map(tool_name_lines)
        } else {
            None
        };
        Anchor { uri, tool_lines }
    }

    /// Whether the file was read as a contract snapshot (what the tests check the anchoring by).
    #[cfg(test)]
    pub(crate) fn is_snapshot(&self) -> bool {
        self.tool_lines.is_some()
    }

    /// The line a finding points at: its tool's line in a snapshot, else 1. Prompt and
    /// resource findings never take the line of a same-named tool.
    pub(crate) fn line_for(&self, finding: &Finding<'_>) -> u32 {
        match (&self.tool_lines, finding.kind) {
            (Some(lines), None) => lines.get(finding.subject).copied().unwrap_or(1),
            _ => 1,
        }
    }
}

/// Why `--sarif-location` was refused (an error, never a silent downgrade).
#[derive(Debug, thiserror::Error)]
pub(crate) enum AnchorError {
    #[error("--sarif-location: {0} does not exist")]
    Missing(String),
    #[error("--sarif-location: {0} is outside the working directory")]
    Outside(String),
    #[error("--sarif-location: {0} is a directory; name the file results are anchored to")]
    Directory(String),
    #[error("--sarif-location: failed to read {path}: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Removes `.` and resolves `..` without touching the file system (Node's `path.resolve`).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The repository-relative, `/`-separated uri of `file`, or `None` when it is the working
/// directory itself or outside it (an absolute or `../` uri means nothing to code scanning).
pub(crate) fn repo_relative(file: &Path, cwd: &Path) -> Option<String> {
    let cwd = lexical(cwd);
    let abs = lexical(&cwd.join(file));
    let rel = abs.strip_prefix(&cwd).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// Finds the file to anchor results to, in order: `--sarif-location` (must exist and lie
/// inside `cwd`), the contract snapshot in `cwd`, the first `--stdio` token that is a regular
/// file inside `cwd`. `Ok(None)` when there is none.
pub(crate) fn resolve_anchor(
    sarif_location: Option<&Path>,
    stdio_tokens: &[String],
    cwd: &Path,
) -> Result<Option<Anchor>, AnchorError> {
    let anchor_for = |file: &Path| -> Result<Option<Anchor>, std::io::Error> {
        let Some(uri) = repo_relative(file, cwd) else {
            return Ok(None);
        };
        let text = std::fs::read(cwd.join(file))?;
        Ok(Some(Anchor::new(uri, &text)))
    };
    if let Some(file) = sarif_location {
        let shown = file.display().to_string();
        if !cwd.join(file).exists() {
            return Err(AnchorError::Missing(shown));
        }
        if cwd.join(file).is_dir() {
            return Err(AnchorError::Directory(shown));
        }
        return match anchor_for(file) {
            Ok(Some(anchor)) => Ok(Some(anchor)),
            Ok(None) => Err(AnchorError::Outside(shown)),
            Err(source) => Err(AnchorError::Unreadable {
                path: shown,
                source,
            }),
        };
    }
    let snapshot = Path::new(DEFAULT_FILE);
    if cwd.join(snapshot).is_file() {
        if let Ok(Some(anchor)) = anchor_for(snapshot) {
            return Ok(Some(anchor));
        }
    }
    for token in stdio_tokens {
        let path = Path::new(token);
        if !cwd.join(path).is_file() {
            continue;
        }
        if let Ok(Some(anchor)) = anchor_for(path) {
            return Ok(Some(anchor));
        }
    }
    Ok(None)
}

/// `mcpCassetteFindingV1`: 16 hex characters of SHA-256 over the rule, the kind for
/// non-tool subjects, and the subject, NUL-separated.
pub(crate) fn fingerprint(code: &str, kind: Option<SubjectKind>, subject: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(code.as_bytes());
    hash.update([0u8]);
    if let Some(kind) = kind {
        hash.update(kind.as_str().as_bytes());
        hash.update([0u8]);
    }
    hash.update(subject.as_bytes());
    let digest = hash.finalize();
    let mut out = String::with_capacity(16);
    for byte in &digest[..8] {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn sarif_level(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warn => "warning",
        Level::Info => "note",
    }
}

/// Markdown help as plain text: emphasis and code marks dropped.
fn plain(markdown: &str) -> String {
    markdown.replace("**", "").replace('`', "")
}

/// The rule descriptor of one id, or `None` for an id this build does not describe.
fn describe_rule(id: &str) -> Value {
    if let Some(doc) = crate::lint::rule(id) {
        let mut tags = vec![
            "security".to_owned(),
            format!("evidence/{}", doc.evidence.as_str()),
        ];
        tags.extend(doc.owasp.iter().map(|o| format!("OWASP/{o}")));
        tags.extend(doc.safe_mcp.iter().map(|s| (*s).to_owned()));
        return json!({
            "id": doc.id,
            "name": doc.id,
            "shortDescription": {"text": doc.describe},
            "help": {"text": plain(doc.doc), "markdown": doc.doc},
            "helpUri": HELP_URI,
            "properties": {"tags": tags},
        });
    }
    let Some(rule) = crate::inspect::rules::rule(id) else {
        return json!({
            "id": id,
            "name": id,
            "shortDescription": {"text": id},
            "helpUri": HELP_URI,
            "properties": {"tags": ["contract"]},
        });
    };
    json!({
        "id": id,
        "name": id,
        "shortDescription": {"text": rule.title},
        "help": {"text": plain(rule.doc), "markdown": rule.doc},
        "helpUri": HELP_URI,
        "properties": {"tags": ["contract"]},
    })
}

/// Rules in catalogue order (lint rules, then structural), then any other id in first-seen
/// order; only ids that fired.
fn fired_rules(findings: &[Finding<'_>]) -> Vec<Value> {
    let fired: Vec<&str> = {
        let mut seen = Vec::new();
        for f in findings {
            if !seen.contains(&f.code) {
                seen.push(f.code);
            }
        }
        seen
    };
    let known = crate::lint::catalogue().iter().map(|d| d.id).chain(
        crate::inspect::rules::catalogue()
            .iter()
            .map(|rule| rule.id),
    );
    let mut ordered: Vec<&str> = known.filter(|id| fired.contains(id)).collect();
    for id in &fired {
        if !ordered.contains(id) {
            ordered.push(id);
        }
    }
    ordered.into_iter().map(describe_rule).collect()
}

/// Percent-encodes a path for a `file://` URI (unreserved characters and `/` kept).
fn file_uri(dir: &Path) -> String {
    let mut out = String::from("file://");
    for b in dir.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    if !out.ends_with('/') {
        out.push('/');
    }
    out
}

/// The SARIF document, pretty-printed, with a trailing newline.
pub(crate) fn render(run: &Run<'_>, findings: &[Finding<'_>], anchor: Option<&Anchor>) -> String {
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let text = match f.excerpt {
                Some(e) => format!("{}: {e}", f.message),
                None => f.message.to_owned(),
            };
            let logical = json!([{"fullyQualifiedName": f.subject, "kind": "member"}]);
            let location = match anchor {
                Some(a) => json!({
                    "physicalLocation": {
                        "artifactLocation": {"uri": a.uri},
                        "region": {"startLine": a.line_for(f)},
                    },
                    "logicalLocations": logical,
                }),
                None => json!({"logicalLocations": logical}),
            };
            json!({
                "ruleId": f.code,
                "level": sarif_level(f.level),
                "message": {"text": text},
                "partialFingerprints": {"mcpCassetteFindingV1": fingerprint(f.code, f.kind, f.subject)},
                "locations": [location],
            })
        })
        .collect();
    let doc = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mcp-cassette",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": INFORMATION_URI,
                "rules": fired_rules(findings),
            }},
            "invocations": [{
                "executionSuccessful": run.ok,
                "workingDirectory": {"uri": file_uri(run.working_directory)},
            }],
            "properties": {"target": run.target, "toolCount": run.tool_count},
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// The document for a `check` report.
pub(crate) fn render_report(
    report: &super::CheckReport,
    working_directory: &Path,
    anchor: Option<&Anchor>,
) -> String {
    let findings: Vec<Finding<'_>> = report
        .findings
        .iter()
        .map(|f| Finding {
            level: f.level,
            code: &f.code,
            subject: &f.subject,
            kind: f.kind,
            message: &f.message,
            excerpt: f.excerpt.as_deref(),
        })
        .collect();
    let run = Run {
        target: &report.target,
        tool_count: report.tool_count,
        ok: report.ok,
        working_directory,
    };
    render(&run, &findings, anchor)
}

#[cfg(test)]
mod tests;
