//! The `lint <cassette>` report: header errors and warnings, output findings with their
//! evidence, and the verdict lines (docs/lint.md, "Output").

use super::terminal::escape;
use crate::lint::cassette::CassetteLint;
use crate::severity::Level;

/// The text report (docs/lint.md, "Output").
pub(crate) fn text_report(label: &str, lint: &CassetteLint, warnings_gate: bool) -> String {
    let label = escape(label);
    let mut out = String::new();
    for f in &lint.header {
        if f.severity == Level::Error {
            out.push_str(&format!("{}: {}\n", f.rule, escape(&f.message)));
        } else {
            out.push_str(&format!("[WARN] {}: {}\n", f.rule, escape(&f.message)));
        }
    }
    for f in &lint.output {
        out.push_str(&format!(
            "[WARN] {} {} #{} {}: {}\n",
            f.rule,
            escape(f.method),
            escape(&f.request_label()),
            escape(&f.path),
            escape(&f.message)
        ));
        if let Some(excerpt) = &f.excerpt {
            out.push_str(&format!("       evidence: \"{}\"\n", escape(excerpt)));
        }
    }
    let errors = lint.errors();
    if errors == 0 {
        out.push_str(&format!("{label}: header and frames agree\n"));
    } else {
        out.push_str(&format!("{label}: {errors} inconsistency(ies)\n"));
    }
    let warnings = lint.warnings();
    if warnings > 0 {
        let gate = if warnings_gate {
            "gated by --fail-on warn"
        } else {
            "reported, not gated"
        };
        out.push_str(&format!("{label}: {warnings} warning(s) ({gate})\n"));
    }
    out
}

/// `{cassette, ok, header, output}`, 2-space indented; `ok` is the verdict of the gate the run
/// used (`--fail-on`).
pub(crate) fn json_report(label: &str, lint: &CassetteLint, ok: bool) -> String {
    let doc = serde_json::json!({
        "cassette": label,
        "ok": ok,
        "header": lint.header,
        "output": lint.output,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}
