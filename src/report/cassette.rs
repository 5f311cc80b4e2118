//! The `lint <cassette>` report: header errors and warnings, output findings with their
//! evidence, and the verdict lines (docs/lint.md, "Output").

use super::style::{Palette, Tone, count};
use super::terminal::escape;
use crate::lint::cassette::CassetteLint;
use crate::severity::Level;

/// The text report (docs/lint.md, "Output").
pub(crate) fn text_report(
    label: &str,
    lint: &CassetteLint,
    warnings_gate: bool,
    palette: Palette,
) -> String {
    let warn = palette.paint(Tone::Warn, "[WARN]");
    let label = escape(label);
    let mut out = String::new();
    for f in &lint.header {
        if f.severity == Level::Error {
            let rule = palette.paint(Tone::Fail, f.rule);
            out.push_str(&format!("{rule}: {}\n", escape(&f.message)));
        } else {
            out.push_str(&format!("{warn} {}: {}\n", f.rule, escape(&f.message)));
        }
    }
    for f in &lint.output {
        out.push_str(&format!(
            "{warn} {} {} #{} {}: {}\n",
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
        let errors = count(errors, "inconsistency", "inconsistencies");
        out.push_str(&format!(
            "{label}: {}\n",
            palette.paint(Tone::Fail, &errors)
        ));
    }
    let warnings = lint.warnings();
    if warnings > 0 {
        let gate = if warnings_gate {
            "gated by --fail-on warn"
        } else {
            "reported, not gated"
        };
        let warnings = count(warnings, "warning", "warnings");
        out.push_str(&format!("{label}: {warnings} ({gate})\n"));
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
