//! Markdown sections for a pull-request comment or a job summary (docs/action.md):
//! `check --format markdown` renders [`check_section`], `snapshot --check --format markdown`
//! renders [`drift_section`]. The GitHub Action puts its marker and verdict heading above the
//! sections it ran and joins them; each command renders only what it knows.
//!
//! Everything a server chose (names, messages, evidence) reaches the page escaped: table cells
//! through [`cell`], so a `|`, a newline, HTML or an `@mention` in a tool description cannot
//! change the table, hide text or notify anyone; the text report inside a fence that is longer
//! than any run of backticks in it. A section is at most [`MAX_BYTES`] bytes (so also at most
//! that many characters), under GitHub's limit for a comment: rows that do not fit are counted,
//! not shown.

use std::fmt::Write as _;

use super::CheckReport;
use super::style::count;
use crate::contract::{Change, FailOn, Tier, counts, should_fail};
use crate::severity::Level;

/// Most bytes a section may take.
pub(crate) const MAX_BYTES: usize = 60_000;
/// Most bytes of the text report shown in the collapsed "check output" block.
const LOG_BYTES: usize = 8_000;
/// Most characters of one table cell; longer text ends in `…`.
const CELL_CHARS: usize = 500;
/// Room kept for what follows the table rows (the omission note, the collapsed text report).
const TAIL_BYTES: usize = LOG_BYTES + 1_000;

/// The `check` section: verdict line, a row per finding, and the text report collapsed.
pub(crate) fn check_section(report: &CheckReport, text_report: &str) -> String {
    let mut out = String::new();
    let gate = if report.fail_on == report.lint_fail_on {
        format!("gate: `{}`", report.fail_on)
    } else {
        format!(
            "gate: `{}`, lint gate: `{}`",
            report.fail_on, report.lint_fail_on
        )
    };
    let _ = writeln!(
        out,
        "**Safety check** ({gate}): {} ({}, {})",
        if report.ok {
            "✅ passed"
        } else {
            "❌ failed"
        },
        count(report.count(Level::Error), "error", "errors"),
        count(report.count(Level::Warn), "warning", "warnings")
    );
    out.push('\n');
    if report.findings.is_empty() {
        out.push_str("No findings.\n");
    } else {
        let rows = report.findings.iter().map(|finding| {
            let mut text = cell(&finding.message);
            if let Some(excerpt) = finding.excerpt.as_deref().filter(|e| !e.is_empty()) {
                let _ = write!(text, "<br>evidence: “{}”", cell(excerpt));
            }
            format!(
                "| {} | `{}` | {} | {} |\n",
                level_label(finding.level),
                finding.code,
                cell(&finding.subject),
                text
            )
        });
        push_table(&mut out, "| Level | Rule | Subject | Finding |\n", rows);
    }
    out.push_str("\n<details><summary>check output</summary>\n\n");
    out.push_str(&fenced(&truncate(
        text_report,
        LOG_BYTES,
        "... (truncated)\n",
    )));
    out.push_str("\n</details>\n");
    truncate(&out, MAX_BYTES, "\n... (truncated)\n")
}

/// The `snapshot --check` section: the snapshot file, the verdict with its tally, and a row per
/// change, breaking first.
pub(crate) fn drift_section(changes: &[Change], fail_on: FailOn, file: &str) -> String {
    let mut out = String::new();
    let n = counts(changes);
    let tally = format!(
        "{} breaking, {} dangerous, {} minor, {} info",
        n.breaking, n.dangerous, n.minor, n.info
    );
    let verdict = if changes.is_empty() {
        format!("✅ contract unchanged ({tally})")
    } else if should_fail(changes, fail_on) {
        format!("❌ blocked by the gate: {tally}")
    } else {
        format!("✅ within the gate: {tally}")
    };
    let _ = writeln!(
        out,
        "**Contract drift** against {} (gate: `{}`): {verdict}",
        code_span(file),
        fail_on.as_str()
    );
    if !changes.is_empty() {
        out.push('\n');
        let rows = Tier::ALL.into_iter().flat_map(|tier| {
            changes
                .iter()
                .filter(move |c| c.kind == tier)
                .map(move |c| {
                    format!(
                        "| {} | `{}` | {} | {} |\n",
                        tier_label(tier),
                        c.rule,
                        cell(&c.subject),
                        cell(&c.message)
                    )
                })
        });
        push_table(&mut out, "| Tier | Rule | Tool | Change |\n", rows);
    }
    truncate(&out, MAX_BYTES, "\n... (truncated)\n")
}

fn level_label(level: Level) -> &'static str {
    match level {
        Level::Error => "❌ error",
        Level::Warn => "⚠️ warn",
        Level::Info => "ℹ️ info",
    }
}

fn tier_label(tier: Tier) -> &'static str {
    match tier {
        Tier::Breaking => "🚨 breaking",
        Tier::Dangerous => "⚠️ dangerous",
        Tier::Minor => "➕ minor",
        Tier::Info => "ℹ️ info",
    }
}

/// A table with as many rows as fit in the section, and a note counting the rest.
pub(crate) fn push_table(out: &mut String, header: &str, rows: impl Iterator<Item = String>) {
    out.push_str(header);
    out.push_str("| --- | --- | --- | --- |\n");
    let budget = MAX_BYTES.saturating_sub(TAIL_BYTES);
    let mut left_out = 0usize;
    for row in rows {
        if left_out > 0 || out.len() + row.len() > budget {
            left_out += 1;
        } else {
            out.push_str(&row);
        }
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "\n{} not shown: the comment has a size limit. \
             Run the command locally to see every one.",
            count(left_out, "more row", "more rows")
        );
    }
}

/// Text made safe for a table cell: at most [`CELL_CHARS`] characters; `&`, `<`, `>` as
/// entities (no HTML, no comment that could pass for the action's marker); `|` escaped; line
/// breaks as `<br>`; `@` as an entity so a name cannot mention a user; backslash and backtick
/// escaped so they stay literal.
pub(crate) fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (count, ch) in text.chars().enumerate() {
        if count == CELL_CHARS {
            out.push('…');
            break;
        }
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '@' => out.push_str("&#64;"),
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '`' => out.push_str("\\`"),
            '*' | '_' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(ch);
            }
            '\r' => {}
            '\n' => out.push_str("<br>"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as an inline code span, delimited by more backticks than any run inside it.
pub(crate) fn code_span(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let ticks = "`".repeat(longest_backtick_run(&text) + 1);
    // A span that starts or ends with a backtick needs a space of padding, which Markdown strips.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// `text` in a fenced code block whose fence is longer than any run of backticks inside, so
/// nothing in the text can close it.
pub(crate) fn fenced(text: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(text) + 1).max(3));
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}text\n{text}{newline}{fence}\n")
}

fn longest_backtick_run(text: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        if ch == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

/// At most `max` bytes: cut at a character boundary, leaving room for `note`.
pub(crate) fn truncate(text: &str, max: usize, note: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max.saturating_sub(note.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{note}", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table_or_mention_anyone() {
        assert_eq!(
            cell("a|b\nc <!-- mcp-cassette-action --> @octocat `x` *y*"),
            "a\\|b<br>c &lt;!-- mcp-cassette-action --&gt; &#64;octocat \\`x\\` \\*y\\*"
        );
        let long = "é".repeat(CELL_CHARS + 10);
        assert_eq!(cell(&long).chars().count(), CELL_CHARS + 1);
    }

    #[test]
    fn fences_outrun_the_payload() {
        assert_eq!(fenced("plain"), "```text\nplain\n```\n");
        assert_eq!(fenced("a ```` b\n"), "`````text\na ```` b\n`````\n");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        let text = "é".repeat(100);
        let cut = truncate(&text, 51, "!");
        assert!(cut.len() <= 51 && cut.ends_with('!'));
        assert_eq!(truncate("short", 10, "!"), "short");
    }

    #[test]
    fn a_huge_drift_stays_under_the_cap() {
        let changes: Vec<Change> = (0..5_000)
            .map(|i| Change {
                kind: Tier::Breaking,
                rule: "tool-removed",
                subject: format!("tool_{i}"),
                message: "tool removed ".repeat(20),
            })
            .collect();
        let section = drift_section(&changes, FailOn::Breaking, "mcp-contract.snapshot.json");
        assert!(section.len() <= MAX_BYTES, "{}", section.len());
        assert!(section.contains("more rows not shown"));
    }
}
