//! The `snapshot --check` report: contract drift, grouped by tier, and the verdict
//! (docs/contract.md).

use super::style::{Palette, Tone};
use super::terminal::escape;
use crate::contract::{Change, FailOn, Tier, counts, should_fail};

/// The text report: `[OK] contract unchanged`, or the changes grouped by tier, a blank line
/// and the verdict.
pub(crate) fn text_report(changes: &[Change], fail_on: FailOn, palette: Palette) -> String {
    if changes.is_empty() {
        return format!("{} contract unchanged\n", palette.paint(Tone::Pass, "[OK]"));
    }
    let mut out = String::new();
    for tier in Tier::ALL {
        let tone = match tier {
            Tier::Breaking => Tone::Fail,
            Tier::Dangerous => Tone::Warn,
            Tier::Minor | Tier::Info => Tone::Info,
        };
        let label = palette.paint(tone, &format!("[{}]", tier.label()));
        for c in changes.iter().filter(|c| c.kind == tier) {
            out.push_str(&format!(
                "{label} {}: {} ({})\n",
                escape(&c.subject),
                escape(&c.message),
                c.rule
            ));
        }
    }
    let n = counts(changes);
    out.push_str(&format!(
        "\nresult: {} ({} breaking, {} dangerous, {} minor, {} info; gate: {})\n",
        if should_fail(changes, fail_on) {
            palette.paint(Tone::Fail, "FAIL")
        } else {
            palette.paint(Tone::Pass, "PASS")
        },
        n.breaking,
        n.dangerous,
        n.minor,
        n.info,
        fail_on.as_str()
    ));
    out
}

/// `{ok, failOn, counts, changes}`, 2-space indented.
pub(crate) fn json_report(changes: &[Change], fail_on: FailOn) -> String {
    let doc = serde_json::json!({
        "ok": !should_fail(changes, fail_on),
        "failOn": fail_on,
        "counts": counts(changes),
        "changes": changes,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
