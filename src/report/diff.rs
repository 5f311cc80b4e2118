//! `diff`'s report (docs/diff.md, "Output"): text for people, one JSON object for scripts, and a
//! Markdown section for a pull-request comment. Everything a cassette chose (labels, values,
//! error messages, file names) is escaped for the terminal in text and made inert in Markdown
//! cells; JSON escapes control characters itself.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::markdown::{MAX_BYTES, cell, code_span, push_table, truncate};
use super::style::count;
use super::terminal::escape;
use crate::cassette::comparison::{Answer, Comparison, Difference, Interaction, Summary};
use crate::json::diff::{DiffEntry, format_value};

/// Changed paths shown per interaction before `... N more path(s)`, as `verify` shows them.
const MAX_PATHS: usize = 10;
/// Characters of a value shown in a changed path, as `verify` shows them.
const VALUE_CHARS: usize = 60;

impl Summary {
    /// `diff: 5 same, 2 changed, 1 added, 1 removed`.
    pub(crate) fn line(&self) -> String {
        format!(
            "diff: {} same, {} changed, {} added, {} removed",
            self.same, self.changed, self.added, self.removed
        )
    }
}

/// `/content/0/text`, or `/` for the whole payload.
fn shown_path(entry: &DiffEntry) -> &str {
    if entry.path.is_empty() {
        "/"
    } else {
        &entry.path
    }
}

/// The pairs of (prefix, entry) a changed interaction lists: payload paths, then the streamed
/// notifications' paths under `notifications`.
fn changed_paths<'a>(
    answer: &'a [DiffEntry],
    notifications: &'a [DiffEntry],
) -> impl Iterator<Item = (&'static str, &'a DiffEntry)> {
    answer
        .iter()
        .map(|e| ("", e))
        .chain(notifications.iter().map(|e| ("notifications", e)))
}

fn lines(c: &Comparison, a: usize, b: usize) -> String {
    format!(
        "line {} → line {}",
        c.a.interactions[a].line, c.b.interactions[b].line
    )
}

/// The text report, summary line last.
pub(crate) fn text(c: &Comparison) -> String {
    let mut out = String::new();
    for d in &c.differences {
        match d {
            Difference::Added { b } => {
                let x = &c.b.interactions[*b];
                let _ = writeln!(out, "+ ADDED    {} (line {})", escape(&x.label), x.line);
            }
            Difference::Removed { a } => {
                let x = &c.a.interactions[*a];
                let _ = writeln!(out, "- REMOVED  {} (line {})", escape(&x.label), x.line);
            }
            Difference::ShapeChanged { a, b } => {
                let _ = writeln!(
                    out,
                    "~ CHANGED  {} ({}): {} → {}",
                    escape(&c.a.interactions[*a].label),
                    lines(c, *a, *b),
                    escape(&Answer::describe(c.a.interactions[*a].answer.as_ref())),
                    escape(&Answer::describe(c.b.interactions[*b].answer.as_ref())),
                );
            }
            Difference::Changed {
                a,
                b,
                answer,
                notifications,
            } => {
                let _ = writeln!(
                    out,
                    "~ CHANGED  {} ({})",
                    escape(&c.a.interactions[*a].label),
                    lines(c, *a, *b)
                );
                let total = answer.len() + notifications.len();
                for (prefix, entry) in changed_paths(answer, notifications).take(MAX_PATHS) {
                    let _ = writeln!(
                        out,
                        "    {prefix}{}: {} → {}",
                        escape(shown_path(entry)),
                        escape(&format_value(entry.recorded.as_ref(), VALUE_CHARS)),
                        escape(&format_value(entry.live.as_ref(), VALUE_CHARS)),
                    );
                }
                if total > MAX_PATHS {
                    let _ = writeln!(out, "    ... {} more path(s)", total - MAX_PATHS);
                }
            }
        }
    }
    out.push_str(&c.summary().line());
    out.push('\n');
    out
}

fn side(item: &mut Map<String, Value>, which: &str, x: &Interaction) {
    item.insert(format!("line{which}"), json!(x.line));
}

fn entries(list: &[DiffEntry]) -> Value {
    Value::Array(
        list.iter()
            .map(|e| {
                let mut change = Map::new();
                change.insert("path".into(), json!(e.path));
                if let Some(v) = &e.recorded {
                    change.insert("a".into(), v.clone());
                }
                if let Some(v) = &e.live {
                    change.insert("b".into(), v.clone());
                }
                Value::Object(change)
            })
            .collect(),
    )
}

/// The JSON report: one object.
pub(crate) fn json(c: &Comparison) -> String {
    let summary = c.summary();
    let differences: Vec<Value> = c
        .differences
        .iter()
        .map(|d| {
            let mut item = Map::new();
            let (kind, first) = match d {
                Difference::Added { b } => ("added", &c.b.interactions[*b]),
                Difference::Removed { a } => ("removed", &c.a.interactions[*a]),
                Difference::Changed { a, .. } | Difference::ShapeChanged { a, .. } => {
                    ("changed", &c.a.interactions[*a])
                }
            };
            item.insert("kind".into(), json!(kind));
            item.insert("method".into(), json!(first.method));
            item.insert("label".into(), json!(first.label));
            match d {
                Difference::Added { b } => side(&mut item, "B", &c.b.interactions[*b]),
                Difference::Removed { a } => side(&mut item, "A", &c.a.interactions[*a]),
                Difference::ShapeChanged { a, b } => {
                    side(&mut item, "A", &c.a.interactions[*a]);
                    side(&mut item, "B", &c.b.interactions[*b]);
                    item.insert(
                        "shape".into(),
                        json!({
                            "a": Answer::describe(c.a.interactions[*a].answer.as_ref()),
                            "b": Answer::describe(c.b.interactions[*b].answer.as_ref()),
                        }),
                    );
                }
                Difference::Changed {
                    a,
                    b,
                    answer,
                    notifications,
                } => {
                    side(&mut item, "A", &c.a.interactions[*a]);
                    side(&mut item, "B", &c.b.interactions[*b]);
                    item.insert("changes".into(), entries(answer));
                    if !notifications.is_empty() {
                        item.insert("notifications".into(), entries(notifications));
                    }
                }
            }
            Value::Object(item)
        })
        .collect();
    let report = json!({
        "identical": c.identical(),
        "a": c.a.path.display().to_string(),
        "b": c.b.path.display().to_string(),
        "summary": {
            "same": summary.same,
            "changed": summary.changed,
            "added": summary.added,
            "removed": summary.removed,
        },
        "differences": differences,
    });
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

/// The Markdown section: a verdict line, then a row per changed path, added and removed
/// interaction, as many as fit in a comment.
pub(crate) fn markdown(c: &Comparison) -> String {
    let summary = c.summary();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "**Cassette diff** {} → {}: {} ({}, {}, {}; {} same)",
        code_span(&c.a.path.display().to_string()),
        code_span(&c.b.path.display().to_string()),
        if c.identical() {
            "✅ identical"
        } else {
            "❌ differ"
        },
        count(summary.changed, "changed", "changed"),
        count(summary.added, "added", "added"),
        count(summary.removed, "removed", "removed"),
        summary.same,
    );
    out.push('\n');
    if c.identical() {
        out.push_str("Every interaction was answered alike.\n");
        return out;
    }
    let value = |v: Option<&Value>| cell(&format_value(v, VALUE_CHARS));
    let mut rows = Vec::new();
    for d in &c.differences {
        match d {
            Difference::Added { b } => {
                let x = &c.b.interactions[*b];
                rows.push(format!(
                    "| ➕ added | {} (line {}) | | |\n",
                    cell(&x.label),
                    x.line
                ));
            }
            Difference::Removed { a } => {
                let x = &c.a.interactions[*a];
                rows.push(format!(
                    "| ➖ removed | {} (line {}) | | |\n",
                    cell(&x.label),
                    x.line
                ));
            }
            Difference::ShapeChanged { a, b } => rows.push(format!(
                "| ✏️ changed | {} ({}) | | {} → {} |\n",
                cell(&c.a.interactions[*a].label),
                lines(c, *a, *b),
                cell(&Answer::describe(c.a.interactions[*a].answer.as_ref())),
                cell(&Answer::describe(c.b.interactions[*b].answer.as_ref())),
            )),
            Difference::Changed {
                a,
                b,
                answer,
                notifications,
            } => {
                for (prefix, entry) in changed_paths(answer, notifications) {
                    rows.push(format!(
                        "| ✏️ changed | {} ({}) | {} | {} → {} |\n",
                        cell(&c.a.interactions[*a].label),
                        lines(c, *a, *b),
                        cell(&format!("{prefix}{}", shown_path(entry))),
                        value(entry.recorded.as_ref()),
                        value(entry.live.as_ref()),
                    ));
                }
            }
        }
    }
    push_table(
        &mut out,
        "| change | interaction | path | a → b |\n",
        rows.into_iter(),
    );
    truncate(&out, MAX_BYTES, "\n... (truncated)\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::comparison::{Options, Recording, compare};

    fn interaction(label: &str, line: u64, answer: Option<Answer>) -> Interaction {
        let method = label.split(' ').next().unwrap_or(label);
        let mut x = Interaction::bare(method, label, line);
        x.answer = answer;
        x
    }

    #[test]
    fn text_json_and_markdown() {
        let ok = |t: &str| Some(Answer::Result(json!({"content": [{"text": t}]})));
        let a = Recording {
            path: "a.jsonl".into(),
            interactions: vec![
                interaction("tools/call echo", 2, ok("hi")),
                interaction("tools/call x\u{1b}[2J|@you", 4, ok("x")),
                interaction("tools/call boom", 6, ok("x")),
                interaction("ping", 8, ok("same")),
            ],
            notes: Vec::new(),
        };
        let b = Recording {
            path: "b.jsonl".into(),
            interactions: vec![
                interaction("tools/call echo", 3, ok(&"y".repeat(80))),
                interaction(
                    "tools/call boom",
                    5,
                    Some(Answer::Error(
                        json!({"code": -32603, "message": "bad\nline"}),
                    )),
                ),
                interaction("ping", 7, ok("same")),
                interaction("tools/call new", 9, ok("x")),
            ],
            notes: Vec::new(),
        };
        let c = compare(a, b, &Options::default());
        let text = text(&c);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "~ CHANGED  tools/call echo (line 2 → line 3)");
        assert!(
            lines[1].starts_with("    /content/0/text: \"hi\" → \"yyy"),
            "{}",
            lines[1]
        );
        assert!(lines[1].ends_with('…'));
        assert_eq!(lines[2], "- REMOVED  tools/call x\\x1b[2J|@you (line 4)");
        assert_eq!(
            lines[3],
            "~ CHANGED  tools/call boom (line 6 → line 5): a result → error -32603: bad\\nline"
        );
        assert_eq!(lines[4], "+ ADDED    tools/call new (line 9)");
        assert_eq!(lines[5], "diff: 1 same, 2 changed, 1 added, 1 removed");

        let report: Value = serde_json::from_str(&json(&c)).unwrap();
        assert_eq!(report["identical"], false);
        assert_eq!(report["summary"]["removed"], 1);
        assert_eq!(
            report["differences"][0]["changes"][0],
            json!({"path": "/content/0/text", "a": "hi", "b": "y".repeat(80)})
        );
        assert_eq!(
            report["differences"][2]["shape"]["b"],
            "error -32603: bad\nline"
        );
        assert_eq!(report["differences"][3]["lineB"], 9);

        let md = markdown(&c);
        assert!(
            md.starts_with("**Cassette diff** `a.jsonl` → `b.jsonl`: ❌ differ"),
            "{md}"
        );
        assert!(
            md.contains("| ➖ removed | tools/call x\\u{001b}\\[2J\\|&#64;you (line 4) | | |"),
            "{md}"
        );
        assert!(!md.contains('\u{1b}'));
    }
}
