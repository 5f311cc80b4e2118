//! The report, as text for people and as one JSON object for CI and the adapters
//! (docs/verify.md, "Output"). Every string a cassette or a server chose is escaped for the
//! terminal in the text form; JSON escapes control characters itself.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{Class, Followed, Outcome, Plan, Summary};
use crate::json::diff::format_value;
use crate::report::terminal::escape;

/// Changed paths shown per pair before `... N more path(s)`.
pub(crate) const MAX_PATHS: usize = 10;
/// Characters of a value shown in a changed path.
pub(crate) const VALUE_CHARS: usize = 60;

/// The warning printed above the report when re-fired params hold redaction placeholders.
pub(crate) fn redaction_warning(plan: &Plan) -> Option<String> {
    if !plan.redaction_applied || plan.placeholder_labels.is_empty() {
        return None;
    }
    Some(format!(
        "⚠ cassette was recorded with redaction: the params of {} re-fired request(s) hold\n  placeholders where secrets were, and the live server receives the placeholder, so\n  calls that need the secret may drift. --ignore the affected paths, or keep a recording\n  made with --no-redact for verify.\n",
        plan.placeholder_labels.len()
    ))
}

/// The text report, summary line last.
pub(crate) fn text(plan: &Plan, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    if let Some(warning) = redaction_warning(plan) {
        out.push_str(&warning);
    }
    for outcome in outcomes {
        let label = escape(&plan.pairs[outcome.pair].label);
        let _ = match &outcome.class {
            Class::Match => writeln!(out, "✓ MATCH    {label}"),
            Class::Changed { allowed: true, .. } => writeln!(out, "○ CHANGED (allowed) {label}"),
            Class::Changed { .. } => writeln!(out, "✗ CHANGED  {label}"),
            Class::ErrorShapeChanged(detail) => {
                writeln!(out, "✗ ERROR-SHAPE-CHANGED {label}: {}", escape(detail))
            }
            Class::Missing(detail) => writeln!(out, "✗ MISSING {label}: {}", escape(detail)),
        };
        for followed in &outcome.followed {
            out.push_str(&followed_line(plan, followed));
        }
        if let Class::Changed { entries, .. } = &outcome.class {
            for entry in entries.iter().take(MAX_PATHS) {
                let path = if entry.path.is_empty() {
                    "/"
                } else {
                    &entry.path
                };
                let _ = writeln!(
                    out,
                    "    {}: {} → {}",
                    escape(path),
                    escape(&format_value(entry.recorded.as_ref(), VALUE_CHARS)),
                    escape(&format_value(entry.live.as_ref(), VALUE_CHARS)),
                );
            }
            if entries.len() > MAX_PATHS {
                let _ = writeln!(out, "    ... {} more path(s)", entries.len() - MAX_PATHS);
            }
        }
    }
    out.push_str(&Summary::of(outcomes).line());
    out.push('\n');
    out
}

fn followed_line(plan: &Plan, f: &Followed) -> String {
    let source = &plan.pairs[f.source_pair];
    let recorded = format_value(Some(&Value::String(f.recorded.clone())), VALUE_CHARS);
    let label = escape(&source.label);
    let at = escape(&f.source_pointer);
    let line = source.line;
    match &f.live {
        Some(live) => format!(
            "    ↳ followed {}: {} → {} (minted at {at} by {label}, line {line})\n",
            escape(&f.pointer),
            escape(&recorded),
            escape(&format_value(
                Some(&Value::String(live.clone())),
                VALUE_CHARS
            )),
        ),
        None => format!(
            "    ↳ could not follow {}: the live answer to {label} (line {line}) has no string at {at}; {}\n",
            escape(&f.pointer),
            if f.pointer.ends_with("/requestState") {
                "left out".to_owned()
            } else {
                format!("sent the recorded {}", escape(&recorded))
            }
        ),
    }
}

/// The JSON report: one object.
pub(crate) fn json(plan: &Plan, outcomes: &[Outcome]) -> String {
    let summary = Summary::of(outcomes);
    let pairs: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let pair = &plan.pairs[o.pair];
            let mut item = Map::new();
            item.insert("line".into(), json!(pair.line));
            item.insert("method".into(), json!(pair.method));
            item.insert("label".into(), json!(pair.label));
            item.insert("class".into(), json!(o.class.name()));
            match &o.class {
                Class::Changed { entries, allowed } => {
                    item.insert("allowed".into(), json!(allowed));
                    let changes: Vec<Value> = entries
                        .iter()
                        .map(|e| {
                            let mut c = Map::new();
                            c.insert("path".into(), json!(e.path));
                            if let Some(v) = &e.recorded {
                                c.insert("recorded".into(), v.clone());
                            }
                            if let Some(v) = &e.live {
                                c.insert("live".into(), v.clone());
                            }
                            Value::Object(c)
                        })
                        .collect();
                    item.insert("changes".into(), Value::Array(changes));
                }
                Class::ErrorShapeChanged(detail) | Class::Missing(detail) => {
                    item.insert("detail".into(), json!(detail));
                }
                Class::Match => {}
            }
            if !o.followed.is_empty() {
                let followed: Vec<Value> = o
                    .followed
                    .iter()
                    .map(|f| {
                        json!({
                            "pointer": f.pointer,
                            "recorded": f.recorded,
                            "live": f.live,
                            "sourceLine": plan.pairs[f.source_pair].line,
                            "sourcePointer": f.source_pointer,
                        })
                    })
                    .collect();
                item.insert("followed".into(), Value::Array(followed));
            }
            Value::Object(item)
        })
        .collect();
    let report = json!({
        "ok": summary.passed(),
        "summary": {
            "match": summary.matched,
            "changed": summary.changed,
            "allowed": summary.allowed,
            "errorShapeChanged": summary.error_shape_changed,
            "missing": summary.missing,
        },
        "redactionWarning": redaction_warning(plan).is_some(),
        "pairs": pairs,
    });
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::diff::diff_values;
    use crate::verify::plan::Pair;

    fn pair(label: &str, line: u64) -> Pair {
        Pair {
            line,
            t: 0,
            method: label.split(' ').next().unwrap_or(label).to_owned(),
            label: label.to_owned(),
            params: None,
            answer: "{}".into(),
            payload: None,
        }
    }

    #[test]
    fn text_and_json() {
        let plan = Plan {
            pairs: vec![
                pair("tools/call build", 3),
                pair("tasks/get", 5),
                pair("tools/list", 7),
                pair("x\u{1b}[2J", 9),
            ],
            redaction_applied: true,
            placeholder_labels: vec!["tasks/get".into()],
            ..Plan::default()
        };
        let entries: Vec<_> = (0..12)
            .map(|i| i.to_string())
            .flat_map(|k| diff_values(&json!({ k.clone(): 1 }), &json!({ k: "x".repeat(80) })))
            .collect();
        let outcomes = vec![
            Outcome {
                pair: 0,
                class: Class::Match,
                followed: Vec::new(),
            },
            Outcome {
                pair: 1,
                class: Class::Match,
                followed: vec![Followed {
                    pointer: "/taskId".into(),
                    recorded: "t-rec".into(),
                    live: Some("t-live".into()),
                    source_pair: 0,
                    source_pointer: "/taskId".into(),
                }],
            },
            Outcome {
                pair: 2,
                class: Class::Changed {
                    entries,
                    allowed: false,
                },
                followed: Vec::new(),
            },
            Outcome {
                pair: 3,
                class: Class::Missing("gone\nforged".into()),
                followed: Vec::new(),
            },
        ];
        let text = text(&plan, &outcomes);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("⚠ cassette was recorded with redaction"));
        assert_eq!(lines[4], "✓ MATCH    tools/call build");
        assert_eq!(
            lines[6],
            "    ↳ followed /taskId: \"t-rec\" → \"t-live\" (minted at /taskId by tools/call build, line 3)"
        );
        assert_eq!(lines[7], "✗ CHANGED  tools/list");
        assert!(lines[8].starts_with("    /0: 1 → \"xxxx"));
        assert_eq!(lines[18], "    ... 2 more path(s)");
        assert_eq!(lines[19], "✗ MISSING x\\x1b[2J: gone\\nforged");
        assert_eq!(
            lines[20],
            "verify: 2 match, 1 changed, 0 error-shape-changed, 1 missing"
        );

        let report: Value = serde_json::from_str(&json(&plan, &outcomes)).unwrap();
        assert_eq!(report["ok"], false);
        assert_eq!(report["summary"]["changed"], 1);
        assert_eq!(report["pairs"][1]["followed"][0]["live"], "t-live");
        assert_eq!(
            report["pairs"][2]["changes"][0],
            json!({"path": "/0", "recorded": 1, "live": "x".repeat(80)})
        );
        assert_eq!(report["pairs"][3]["detail"], "gone\nforged");
        assert_eq!(report["redactionWarning"], true);
    }

    #[test]
    fn values_that_could_not_be_followed_say_what_was_sent() {
        let plan = Plan {
            pairs: vec![pair("tools/call a", 2), pair("tools/call b", 4)],
            ..Plan::default()
        };
        let f = |pointer: &str| Followed {
            pointer: pointer.into(),
            recorded: "s-1".into(),
            live: None,
            source_pair: 0,
            source_pointer: "/requestState".into(),
        };
        assert_eq!(
            followed_line(&plan, &f("/requestState")),
            "    ↳ could not follow /requestState: the live answer to tools/call a (line 2) has no string at /requestState; left out\n"
        );
        assert_eq!(
            followed_line(&plan, &f("/ref")),
            "    ↳ could not follow /ref: the live answer to tools/call a (line 2) has no string at /requestState; sent the recorded \"s-1\"\n"
        );
    }
}
