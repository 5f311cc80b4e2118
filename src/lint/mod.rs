//! Safety lint: the CAS-L001…CAS-L016 catalogue, CAS-L017 (terminal control sequences), the
//! second stage (CAS-L018 onward: phrase families in ten languages over normalised text, and
//! an intent reader), and the engine that applies them to the text a server publishes to the
//! model.
//!
//! # Shape
//!
//! * `rules` holds one file per rule: its [`RuleDoc`] (what `rules`, `--explain` and SARIF
//!   show) and a finder from one field's text to an evidence excerpt. The rules know nothing
//!   about tools, prompts or reports.
//! * `fields` decides which strings of a listing entry are read, and under which label and
//!   [`Surface`] (docs/check.md, "What is read"): a tool's `description`, `title`, every text-bearing key of its
//!   `inputSchema` and `annotations` (walked to depth 6, never deeper, whatever the input); a
//!   prompt's `description`, `title` and argument text; a resource's `name`, `title` and
//!   `description`. Some fields (`outputSchema`, further sub-schema keys, strings nested in
//!   values) are read only by the rules added after the catalogue (CAS-L017 onward), so the
//!   catalogue's results never change.
//! * `normalise` folds a text (compatibility forms, homoglyphs, invisibles, leetspeak,
//!   letter-spacing, comments) and decodes embedded base64, hex and percent-encoding for the
//!   second stage; `rules::families` matches its phrase families and reads intent. Each
//!   second-stage rule is silent where the catalogue rule of its family fires, and is warn.
//! * This module runs, for each field in order, every rule that declares the field's surface,
//!   in catalogue order, and turns hits into [`Finding`]s with the reference's subject and
//!   message conventions (docs/check.md, "Reports").
//!
//! # Levels, caps and ceilings
//!
//! A tool finding keeps its rule's level. A rule may declare a per-surface *ceiling*
//! ([`RuleDoc::ceilings`]); the only one is CAS-L013 on prompts, capped at warn for good
//! because asking the model to "act as a system administrator" is what a prompt template is
//! for. After the ceiling, every finding on the prompt, resource and resource-name surfaces is
//! reported at warn: the reference's release-discipline cap for surfaces added in its 0.7.0,
//! scheduled to graduate "no earlier than 2026-11-06". Whether that graduation ever shipped is
//! not known. **We keep the cap**: it is the reference's documented behaviour,
//! and it is the safe direction, since a user swapping binaries can never see a server turn
//! red on a surface the reference reports at warn. [`surface_cap`] is the single place to
//! change if the graduation is confirmed. Findings on recorded output are always warn.
//!
//! # Deliberate differences from the reference
//!
//! * An `items` member that is a single schema object is walked as a schema (`…items.description`).
//!   The reference iterates that object's *entries* instead, so it never reads the item
//!   schema's own text; we read what the specification says is there.
//! * Bounded repetitions inside patterns (`[^.]{0,40}`) count code points rather than UTF-16
//!   units; the two differ only for characters outside the Basic Multilingual Plane.
//!
//! Lengths, excerpt windows and the URL look-back are measured in UTF-16 units like the
//! reference's, so evidence strings read the same under either binary.
//!
//! # Cost
//!
//! Everything is linear in the text: the `regex` crate cannot backtrack. Per text, one packed
//! SIMD search finds which rules' anchor literals occur, and a regex runs only where its
//! anchors are present (see `rules`); the four Unicode-class rules (CAS-L006, L009, L010,
//! L015) return at once on ASCII-only text and otherwise jump between candidate lead bytes
//! with `memchr`; the blob rule looks at about one byte in a hundred of ordinary prose.
//! `examples/bench_lint.rs` measures the whole pass.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use memchr::memmem;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod byte_class;
pub mod cassette;
mod char_fold;
mod decode;
mod fields;
mod normalise;
mod rules;
mod text;

use fields::Fields;
use text::Text;

pub use crate::severity::Level;

/// Can text alone tell the attack from legitimate use?
///
/// `Shape`: yes, so a legitimate entry must produce no finding at all. `Intent`: no, the
/// finding is true but may be intended, so the rule is always warn and its wording says
/// "verify intended" rather than accusing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Evidence {
    Shape,
    Intent,
}

impl Evidence {
    /// `shape` or `intent` (SARIF tags are `evidence/<this>`).
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Shape => "shape",
            Evidence::Intent => "intent",
        }
    }
}

/// Where a text came from, which decides the rules that read it (docs/check.md, "What is read").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    /// A tool's description, title, annotations and schema text.
    Tool,
    /// A prompt's description, title and argument text (never its name).
    Prompt,
    /// A resource's or resource template's title and description.
    Resource,
    /// The `name` of a resource or resource template (display text, not an identifier).
    Name,
    /// Text a server returned, as recorded in a cassette (`lint <cassette>`).
    Output,
}

impl Surface {
    /// Lowercase name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Tool => "tool",
            Surface::Prompt => "prompt",
            Surface::Resource => "resource",
            Surface::Name => "name",
            Surface::Output => "output",
        }
    }
}

/// What a non-tool finding's subject names. Tool findings carry `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubjectKind {
    Prompt,
    Resource,
    ResourceTemplate,
}

impl SubjectKind {
    /// `prompt`, `resource` or `resource-template`.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Prompt => "prompt",
            SubjectKind::Resource => "resource",
            SubjectKind::ResourceTemplate => "resource-template",
        }
    }
}

/// Everything known about a rule except how it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RuleDoc {
    /// `CAS-Lnnn`. Frozen forever: never renamed, never reused.
    pub id: &'static str,
    /// The rule text findings are built from (`<describe> (in <field>)`).
    pub describe: &'static str,
    /// Short title for tables and SARIF names.
    pub title: &'static str,
    /// Level on the tool surface.
    pub level: Level,
    pub evidence: Evidence,
    /// OWASP MCP Top 10 risks, e.g. `MCP06:2025`.
    pub owasp: &'static [&'static str],
    /// SAFE-MCP technique, e.g. `SAFE-T1102` (none for CAS-L008).
    pub safe_mcp: Option<&'static str>,
    /// Surfaces the rule reads.
    pub surfaces: &'static [Surface],
    /// Per-surface level ceilings applied before the surface cap (CAS-L013 on prompts).
    pub ceilings: &'static [(Surface, Level)],
    /// Markdown help: what it flags, why it matters, an example, references.
    pub doc: &'static str,
}

impl RuleDoc {
    /// Whether the rule reads texts of this surface.
    pub fn reads(&self, surface: Surface) -> bool {
        self.surfaces.contains(&surface)
    }

    /// The rule's level on a surface: its own level, lowered by its ceiling for that
    /// surface, then by the surface cap.
    pub fn level_on(&self, surface: Surface) -> Level {
        let mut level = self.level;
        for &(on, ceiling) in self.ceilings {
            if on == surface {
                level = level.min(ceiling);
            }
        }
        match surface_cap(surface) {
            Some(cap) => level.min(cap),
            None => level,
        }
    }

    /// SARIF `properties.tags` for this rule (docs/sarif.md): `security`, `evidence/<class>`, one
    /// `OWASP/<id>` per OWASP risk, and the SAFE-MCP technique when there is one.
    pub fn tags(&self) -> Vec<String> {
        let mut tags = vec![
            "security".to_owned(),
            format!("evidence/{}", self.evidence.as_str()),
        ];
        tags.extend(self.owasp.iter().map(|id| format!("OWASP/{id}")));
        tags.extend(self.safe_mcp.map(str::to_owned));
        tags
    }

    /// The wording used on recorded output: the describe text without a trailing
    /// ` in description` (the caller appends ` (in recorded output)`).
    pub fn output_describe(&self) -> &'static str {
        let describe: &'static str = self.describe;
        describe.strip_suffix(" in description").unwrap_or(describe)
    }
}

/// The highest level a finding on this surface is reported at, whatever its rule says.
///
/// Prompt, resource and resource-name findings are capped at warn (the reference's
/// release-discipline cap, kept deliberately; see the module docs), recorded output is
/// always warn, and the tool surface is uncapped.
pub fn surface_cap(surface: Surface) -> Option<Level> {
    match surface {
        Surface::Tool => None,
        Surface::Prompt | Surface::Resource | Surface::Name | Surface::Output => Some(Level::Warn),
    }
}

/// Every rule in catalogue order: CAS-L001 … CAS-L024.
pub fn catalogue() -> &'static [RuleDoc] {
    &rules::DOCS
}

/// Look a rule up by id (exact, e.g. `CAS-L004`).
pub fn rule(id: &str) -> Option<&'static RuleDoc> {
    rules::DOCS.iter().find(|doc| doc.id == id)
}

/// One lint finding on a tool, prompt, resource or resource template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub level: Level,
    /// The rule id.
    pub code: String,
    /// Tool name, prompt name, resource uri (else name) or template `uriTemplate`;
    /// `(unnamed <kind>)` when missing.
    pub subject: String,
    /// `None` for tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<SubjectKind>,
    /// `<describe> (in <field>)`.
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// The surface of the field that matched.
    pub surface: Surface,
}

/// One rule matching one text, before it is attached to a subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatch {
    pub rule: &'static RuleDoc,
    pub excerpt: String,
}

/// Every rule that reads `surface`, run over one text, in catalogue order. For
/// [`Surface::Output`] this is the narrowed output rule set ([`lint_output_text`] also blanks
/// redaction placeholders first).
pub fn scan_text(text: &str, surface: Surface) -> Vec<TextMatch> {
    let text = Text::new(text);
    let rules = finders(surface);
    let mut out = Vec::new();
    let mut admitted = rules.admitted(&text);
    while admitted != 0 {
        let i = admitted.trailing_zeros() as usize;
        admitted &= admitted - 1;
        let Some(&(index, find)) = rules.finders.get(i) else {
            continue;
        };
        if let (Some(rule), Some(excerpt)) = (rules::DOCS.get(index), find(&text)) {
            out.push(TextMatch { rule, excerpt });
        }
    }
    out
}

/// The rules that read `surface` with their gates, in catalogue order: for [`Surface::Output`]
/// the narrowed output rule set. Worked out once per surface, not asked of each rule for every
/// text.
fn finders(surface: Surface) -> &'static rules::SurfaceRules {
    fn built(finders: Vec<(usize, rules::Finder)>) -> rules::SurfaceRules {
        // The catalogue has 24 rules; a test checks every surface fits.
        rules::SurfaceRules::new(finders).expect("a surface reads at most 64 rules")
    }
    static DECLARED: LazyLock<[rules::SurfaceRules; 4]> = LazyLock::new(|| {
        [
            Surface::Tool,
            Surface::Prompt,
            Surface::Resource,
            Surface::Name,
        ]
        .map(|surface| built(declared_finders(surface)))
    });
    static OUTPUT: LazyLock<rules::SurfaceRules> = LazyLock::new(|| built(output_finders()));
    match surface {
        Surface::Tool => &DECLARED[0],
        Surface::Prompt => &DECLARED[1],
        Surface::Resource => &DECLARED[2],
        Surface::Name => &DECLARED[3],
        Surface::Output => &OUTPUT,
    }
}

/// The catalogue index and finder of every rule that reads a declared `surface`.
fn declared_finders(surface: Surface) -> Vec<(usize, rules::Finder)> {
    rules::DOCS
        .iter()
        .zip(rules::FINDERS)
        .enumerate()
        .filter(|(_, (rule, _))| rule.reads(surface))
        .map(|(index, (_, find))| (index, find))
        .collect()
}

/// The catalogue index and output finder of every rule that reads recorded output.
fn output_finders() -> Vec<(usize, rules::Finder)> {
    (0..rules::DOCS.len())
        .filter_map(|index| rules::output_finder(index).map(|find| (index, find)))
        .collect()
}

/// Lint a tool from a `tools/list` answer. Levels are the rules' own (uncapped).
/// A value that is not an object yields nothing.
pub fn lint_tool(tool: &Value) -> Vec<Finding> {
    let Some(obj) = tool.as_object() else {
        return Vec::new();
    };
    let subject = subject_of(obj.get("name"), "tool");
    scan_fields(None, subject, fields::tool_fields(obj))
}

/// Lint a prompt from a `prompts/list` answer: description, title and argument text, never
/// the name. Levels are capped at warn (CAS-L013's prompt ceiling applied first).
pub fn lint_prompt(prompt: &Value) -> Vec<Finding> {
    let Some(obj) = prompt.as_object() else {
        return Vec::new();
    };
    let subject = subject_of(obj.get("name"), SubjectKind::Prompt.as_str());
    scan_fields(
        Some(SubjectKind::Prompt),
        subject,
        fields::prompt_fields(obj),
    )
}

/// Lint a resource from a `resources/list` answer (name, title, description), capped at warn.
/// The subject is the `uri`, falling back to the `name`. An entry carrying a string
/// `uriTemplate` is linted as a resource template, as the reference does.
pub fn lint_resource(res: &Value) -> Vec<Finding> {
    let Some(obj) = res.as_object() else {
        return Vec::new();
    };
    if obj.get("uriTemplate").is_some_and(Value::is_string) {
        return lint_resource_template(res);
    }
    let identifier = match obj.get("uri") {
        None | Some(Value::Null) => obj.get("name"),
        uri => uri,
    };
    let subject = subject_of(identifier, SubjectKind::Resource.as_str());
    scan_fields(
        Some(SubjectKind::Resource),
        subject,
        fields::resource_fields(obj),
    )
}

/// Lint a resource template from `resources/templates/list`; the subject is its `uriTemplate`.
pub fn lint_resource_template(t: &Value) -> Vec<Finding> {
    let Some(obj) = t.as_object() else {
        return Vec::new();
    };
    let subject = subject_of(
        obj.get("uriTemplate"),
        SubjectKind::ResourceTemplate.as_str(),
    );
    scan_fields(
        Some(SubjectKind::ResourceTemplate),
        subject,
        fields::resource_fields(obj),
    )
}

/// A rule matching text a server returned (docs/lint.md). Always reported at warn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextHit {
    /// The rule id.
    pub code: &'static str,
    /// The rule's describe text with a trailing ` in description` removed.
    pub describe: &'static str,
    pub excerpt: String,
}

impl TextHit {
    /// The finding message the reference prints: `<describe> (in recorded output)`.
    pub fn message(&self) -> String {
        format!("{} (in recorded output)", self.describe)
    }
}

/// Lint one string of recorded output: the rules whose surfaces include output (CAS-L001,
/// L003, L006 narrowed to runs and Tags code points, L009, L010, L013, L017 narrowed to
/// sequences that hide text or act on the terminal), in catalogue order.
/// Redaction placeholders (`[REDACTED:<rule>:<hash8>]`) are blanked with spaces first: they
/// are our own writing, not the server's, while the text around them is still read.
pub fn lint_output_text(text: &str) -> Vec<TextHit> {
    let text = blank_placeholders(text);
    scan_text(&text, Surface::Output)
        .into_iter()
        .map(|m| TextHit {
            code: m.rule.id,
            describe: m.rule.output_describe(),
            excerpt: m.excerpt,
        })
        .collect()
}

/// The ids of rules carrying a SAFE-MCP technique that fire on `text` read as a tool
/// description (CAS-L008, which has none, is never included). Used by the snapshot
/// rug-pull rule: a reworded description that trips an id the approved one did not. Only
/// the first stage (CAS-L001 … CAS-L016) is read: second-stage rules are at warn until they
/// graduate, and must not turn an upgrade into a dangerous drift.
pub fn safe_mcp_rule_ids(text: &str) -> BTreeSet<&'static str> {
    let prepared = Text::new(text);
    rules::DOCS
        .iter()
        .zip(rules::FINDERS.iter())
        .take(rules::FIRST_STAGE)
        .filter(|(doc, _)| doc.safe_mcp.is_some() && doc.reads(Surface::Tool))
        .filter(|(_, find)| find(&prepared).is_some())
        .map(|(doc, _)| doc.id)
        .collect()
}

/// A subject a reader can act on even when the server sent no identifier.
fn subject_of(value: Option<&Value>, kind: &str) -> String {
    match value {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => format!("(unnamed {kind})"),
    }
}

/// Run the rules over collected fields and shape the findings (docs/check.md, "Reports").
fn scan_fields(kind: Option<SubjectKind>, subject: String, fields: Fields<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for field in &fields.list {
        // Fields are never collected on the output surface, whose rule set is the narrowed
        // one of recorded output (`lint_output_text`).
        if field.surface == Surface::Output {
            continue;
        }
        let text = Text::new(field.text);
        // Fields only the rules after the catalogue read skip the catalogue (fields.rs).
        let first = if field.extended {
            rules::FIRST_STAGE
        } else {
            0
        };
        // The same admission as `scan_text`: only the rules the text can trip are called.
        let rules = finders(field.surface);
        let mut admitted = rules.admitted(&text);
        while admitted != 0 {
            let i = admitted.trailing_zeros() as usize;
            admitted &= admitted - 1;
            let Some(&(index, find)) = rules.finders.get(i) else {
                continue;
            };
            if index < first {
                continue;
            }
            let (Some(rule), Some(excerpt)) = (rules::DOCS.get(index), find(&text)) else {
                continue;
            };
            let message = match kind {
                None => format!("{} (in {})", rule.describe, fields.label(field)),
                Some(kind) => format!(
                    "{} (in {} {})",
                    retitle(rule.describe, kind),
                    kind.as_str(),
                    fields.label(field)
                ),
            };
            findings.push(Finding {
                level: rule.level_on(field.surface),
                code: rule.id.to_owned(),
                subject: subject.clone(),
                kind,
                message,
                excerpt: Some(excerpt),
                surface: field.surface,
            });
        }
    }
    findings
}

/// Rules worded as what a *tool* declares name the actual kind on other subjects
/// ("prompt declares command execution, verify intended"); the leading word only.
fn retitle(describe: &'static str, kind: SubjectKind) -> Cow<'static, str> {
    match describe.strip_prefix("tool") {
        Some(rest) if !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') => {
            Cow::Owned(format!("{}{rest}", kind.as_str()))
        }
        _ => Cow::Borrowed(describe),
    }
}

/// `[REDACTED:<rule>:<hash8>]`, the placeholder the redactor writes (docs/redaction.md, "The placeholder").
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    // A constant pattern; the output-lint tests exercise it.
    Regex::new(r"\[REDACTED:[a-z]+:[0-9a-f]{8}\]").expect("placeholder pattern compiles")
});

/// Replace each placeholder with as many spaces, so offsets and excerpts keep their shape.
fn blank_placeholders(text: &str) -> Cow<'_, str> {
    if memmem::find(text.as_bytes(), b"[REDACTED:").is_none() {
        return Cow::Borrowed(text);
    }
    PLACEHOLDER.replace_all(text, |caps: &regex::Captures<'_>| {
        " ".repeat(caps.get(0).map_or(0, |m| m.len()))
    })
}

#[cfg(test)]
mod scaling;
#[cfg(test)]
mod tests;
