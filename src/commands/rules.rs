//! `rules`: the rule catalogue, or one rule's documentation.
//!
//! `mcp-cassette rules` lists every rule `check` can report (the structural CAS-C rules and
//! the CAS-L safety lint), one per line: id, level, evidence class, title. `rules <id>` prints
//! that rule's documentation laid out for a terminal (its Markdown markers rendered, wrapped);
//! an unknown id exits 2 with the known ones. `--json` gives the same as data, the
//! documentation as its Markdown source.

use std::io::Write as _;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::cli::RulesArgs;
use crate::inspect::rules::{self as structural, StructuralRule};
use crate::lint::{self, RuleDoc};
use crate::report::rule_doc;
use crate::report::style::Palette;

/// Columns a rule's documentation is wrapped to: `COLUMNS` when the shell exports it (within
/// reason), else 80.
fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| (40..=400).contains(c))
        .map_or(80, |c| c.min(100))
}

/// The evidence column for structural rules, which are facts about shape, not text.
const STRUCTURAL: &str = "structural";

enum Rule {
    Structural(&'static StructuralRule),
    Lint(&'static RuleDoc),
}

impl Rule {
    fn id(&self) -> &'static str {
        match self {
            Rule::Structural(rule) => rule.id,
            Rule::Lint(rule) => rule.id,
        }
    }

    fn level(&self) -> &'static str {
        match self {
            Rule::Structural(rule) => rule.level.as_str(),
            Rule::Lint(rule) => rule.level.as_str(),
        }
    }

    fn evidence(&self) -> &'static str {
        match self {
            Rule::Structural(_) => STRUCTURAL,
            Rule::Lint(rule) => rule.evidence.as_str(),
        }
    }

    fn title(&self) -> &'static str {
        match self {
            Rule::Structural(rule) => rule.title,
            Rule::Lint(rule) => rule.title,
        }
    }

    fn doc(&self) -> &'static str {
        match self {
            Rule::Structural(rule) => rule.doc,
            Rule::Lint(rule) => rule.doc,
        }
    }

    fn to_json(&self, with_doc: bool) -> Value {
        let mut value = match self {
            Rule::Structural(rule) => json!({
                "id": rule.id,
                "kind": "structural",
                "level": rule.level,
                "title": rule.title,
            }),
            Rule::Lint(rule) => json!({
                "id": rule.id,
                "kind": "lint",
                "level": rule.level,
                "evidence": rule.evidence,
                "title": rule.title,
                "describe": rule.describe,
                "owasp": rule.owasp,
                "safeMcp": rule.safe_mcp,
                "surfaces": rule.surfaces,
            }),
        };
        if with_doc {
            value["doc"] = json!(self.doc());
        }
        value
    }
}

/// Every rule, structural first, each group in id order.
fn all_rules() -> Vec<Rule> {
    structural::catalogue()
        .iter()
        .map(Rule::Structural)
        .chain(lint::catalogue().iter().map(Rule::Lint))
        .collect()
}

pub(crate) fn run(args: RulesArgs, palette: Palette) -> ExitCode {
    let rules = all_rules();
    let output = match &args.id {
        None if args.json => {
            let list: Vec<Value> = rules.iter().map(|rule| rule.to_json(false)).collect();
            pretty(&Value::Array(list))
        }
        None => listing(&rules),
        Some(id) => {
            let wanted = id.trim().to_ascii_uppercase();
            let Some(rule) = rules.iter().find(|rule| rule.id() == wanted) else {
                let known: Vec<&str> = rules.iter().map(Rule::id).collect();
                eprintln!(
                    "rules: unknown rule id \"{id}\"; known ids: {}",
                    known.join(", ")
                );
                return ExitCode::from(2);
            };
            if args.json {
                pretty(&rule.to_json(true))
            } else {
                rule_doc::render(rule.doc(), palette, width())
            }
        }
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush());
    ExitCode::SUCCESS
}

fn listing(rules: &[Rule]) -> String {
    let level_width = rules.iter().map(|r| r.level().len()).max().unwrap_or(0);
    let evidence_width = rules.iter().map(|r| r.evidence().len()).max().unwrap_or(0);
    let mut out = String::new();
    for rule in rules {
        out.push_str(&format!(
            "{}  {:level_width$}  {:evidence_width$}  {}\n",
            rule.id(),
            rule.level(),
            rule.evidence(),
            rule.title()
        ));
    }
    out.push_str("\nRun `mcp-cassette rules <id>` for a rule's documentation.\n");
    out
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}
