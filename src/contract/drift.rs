//! Drift: what changed between the approved contract and the live one, each change under a
//! stable rule id in one of four tiers (docs/contract.md, "Tiers and rule ids").
//!
//! * **breaking** — a call that used to work now fails, or we cannot tell that it still works;
//! * **dangerous** — every old call still validates, but what a caller observes changes;
//! * **minor** — strictly additive or relaxing;
//! * **info** — prose and hints.
//!
//! The schema walk runs on canonical forms ([`super::canonical`]) so reorderings are never
//! changes, recurses into nested `properties`, `items` and `additionalProperties`, and has a
//! fallback *per node*: a node whose remaining keywords differ with nothing else said about it
//! yields `input-schema-changed-unclassified` at its pointer, so a minor finding at the root
//! cannot hide a breaking one further down. References are not resolved: when either schema
//! uses `$ref`, `input-schema-ref-unclassified` is added **in addition to** whatever was
//! classified, because a change behind a reference cannot be localised and silence there is
//! not evidence of safety.
//!
//! A new property that is also listed in `required` yields both `input-property-became-required`
//! and `input-property-added-required`, as the reference reports it, so a policy written against
//! either id sees the change (docs/contract.md). A `type` that disappears is a loosening
//! (`input-property-type-removed`, `input-schema-type-removed`, minor); one that appears is a
//! tightening, reported as a type change from `any`. No JavaScript word (`undefined`) reaches
//! a message.
//!
//! The rug pull: a changed description that trips a lint rule carrying a SAFE-MCP technique
//! which the approved wording did not trip is `tool-description-poisoned` (dangerous) instead
//! of `tool-description-changed` (info).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::{Map, Value};

use super::canonical::{self, escape};
use super::snapshot::{ContractTool, Snapshot};
use crate::json::{stable_stringify, stringify};

/// How much a change matters to a caller. Ordered most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Breaking,
    Dangerous,
    Minor,
    Info,
}

impl Tier {
    /// Report order.
    pub const ALL: [Tier; 4] = [Tier::Breaking, Tier::Dangerous, Tier::Minor, Tier::Info];

    /// `breaking`, `dangerous`, `minor`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Breaking => "breaking",
            Tier::Dangerous => "dangerous",
            Tier::Minor => "minor",
            Tier::Info => "info",
        }
    }

    /// The bracketed label of the text report: `BREAKING`, …
    pub fn label(self) -> &'static str {
        match self {
            Tier::Breaking => "BREAKING",
            Tier::Dangerous => "DANGEROUS",
            Tier::Minor => "MINOR",
            Tier::Info => "INFO",
        }
    }
}

/// The drift rule ids. Frozen: never renamed, never reused; a new id is added instead.
pub mod rule {
    pub const TOOL_REMOVED: &str = "tool-removed";
    pub const TOOL_ADDED: &str = "tool-added";
    pub const TOOL_DESCRIPTION_CHANGED: &str = "tool-description-changed";
    pub const TOOL_DESCRIPTION_POISONED: &str = "tool-description-poisoned";
    pub const TOOL_ANNOTATIONS_CHANGED: &str = "tool-annotations-changed";
    pub const INPUT_SCHEMA_REPLACED: &str = "input-schema-replaced";
    pub const INPUT_SCHEMA_TYPE_CHANGED: &str = "input-schema-type-changed";
    pub const INPUT_SCHEMA_CHANGED_UNCLASSIFIED: &str = "input-schema-changed-unclassified";
    pub const INPUT_SCHEMA_REF_UNCLASSIFIED: &str = "input-schema-ref-unclassified";
    pub const INPUT_ANNOTATION_CHANGED: &str = "input-annotation-changed";
    pub const INPUT_PROPERTY_BECAME_REQUIRED: &str = "input-property-became-required";
    pub const INPUT_PROPERTY_BECAME_OPTIONAL: &str = "input-property-became-optional";
    pub const INPUT_PROPERTY_REMOVED: &str = "input-property-removed";
    pub const INPUT_PROPERTY_ADDED_REQUIRED: &str = "input-property-added-required";
    pub const INPUT_PROPERTY_ADDED_OPTIONAL: &str = "input-property-added-optional";
    pub const INPUT_PROPERTY_TYPE_CHANGED: &str = "input-property-type-changed";
    pub const INPUT_PROPERTY_TYPE_REMOVED: &str = "input-property-type-removed";
    pub const INPUT_SCHEMA_TYPE_REMOVED: &str = "input-schema-type-removed";
    pub const INPUT_PROPERTY_DEFAULT_CHANGED: &str = "input-property-default-changed";
    pub const INPUT_ENUM_VALUE_REMOVED: &str = "input-enum-value-removed";
    pub const INPUT_ENUM_VALUE_ADDED: &str = "input-enum-value-added";
}

/// Every drift rule id with its tier.
pub const RULES: [(&str, Tier); 21] = [
    (rule::TOOL_REMOVED, Tier::Breaking),
    (rule::INPUT_PROPERTY_REMOVED, Tier::Breaking),
    (rule::INPUT_PROPERTY_BECAME_REQUIRED, Tier::Breaking),
    (rule::INPUT_PROPERTY_ADDED_REQUIRED, Tier::Breaking),
    (rule::INPUT_PROPERTY_TYPE_CHANGED, Tier::Breaking),
    (rule::INPUT_SCHEMA_TYPE_CHANGED, Tier::Breaking),
    (rule::INPUT_ENUM_VALUE_REMOVED, Tier::Breaking),
    (rule::INPUT_SCHEMA_REPLACED, Tier::Breaking),
    (rule::INPUT_SCHEMA_CHANGED_UNCLASSIFIED, Tier::Breaking),
    (rule::INPUT_SCHEMA_REF_UNCLASSIFIED, Tier::Breaking),
    (rule::INPUT_ENUM_VALUE_ADDED, Tier::Dangerous),
    (rule::INPUT_PROPERTY_DEFAULT_CHANGED, Tier::Dangerous),
    (rule::INPUT_PROPERTY_ADDED_OPTIONAL, Tier::Dangerous),
    (rule::TOOL_DESCRIPTION_POISONED, Tier::Dangerous),
    (rule::TOOL_ADDED, Tier::Minor),
    (rule::INPUT_PROPERTY_BECAME_OPTIONAL, Tier::Minor),
    (rule::INPUT_PROPERTY_TYPE_REMOVED, Tier::Minor),
    (rule::INPUT_SCHEMA_TYPE_REMOVED, Tier::Minor),
    (rule::TOOL_DESCRIPTION_CHANGED, Tier::Info),
    (rule::TOOL_ANNOTATIONS_CHANGED, Tier::Info),
    (rule::INPUT_ANNOTATION_CHANGED, Tier::Info),
];

/// The tier of a rule id (`None` for an id this build does not know).
pub fn tier_of(rule_id: &str) -> Option<Tier> {
    RULES.iter().find(|(id, _)| *id == rule_id).map(|(_, t)| *t)
}

/// One classified change. Serialises as `{kind, rule, subject, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub kind: Tier,
    /// Stable rule id: match on this, never on the message.
    pub rule: &'static str,
    /// The tool.
    pub subject: String,
    pub message: String,
}

impl Change {
    fn new(rule: &'static str, subject: &str, message: String) -> Change {
        Change {
            kind: tier_of(rule).unwrap_or(Tier::Breaking),
            rule,
            subject: subject.to_owned(),
            message,
        }
    }
}

/// The lowest tier that fails `snapshot --check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Breaking,
    Dangerous,
}

impl FailOn {
    pub fn parse(s: &str) -> Option<FailOn> {
        match s {
            "breaking" => Some(FailOn::Breaking),
            "dangerous" => Some(FailOn::Dangerous),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Breaking => "breaking",
            FailOn::Dangerous => "dangerous",
        }
    }
}

/// How many changes fell in each tier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub breaking: usize,
    pub dangerous: usize,
    pub minor: usize,
    pub info: usize,
}

/// Counts changes per tier.
pub fn counts(changes: &[Change]) -> Counts {
    let mut c = Counts::default();
    for change in changes {
        match change.kind {
            Tier::Breaking => c.breaking += 1,
            Tier::Dangerous => c.dangerous += 1,
            Tier::Minor => c.minor += 1,
            Tier::Info => c.info += 1,
        }
    }
    c
}

/// Breaking always gates; dangerous only at `--fail-on dangerous`; minor and info never.
pub fn should_fail(changes: &[Change], fail_on: FailOn) -> bool {
    changes.iter().any(|c| {
        c.kind == Tier::Breaking || (fail_on == FailOn::Dangerous && c.kind == Tier::Dangerous)
    })
}

/// The ids of SAFE-MCP-carrying lint rules a text trips (the rug-pull comparison).
pub type PoisonIds = fn(&str) -> BTreeSet<&'static str>;

/// Diffs the approved contract against the live one.
pub fn diff_contracts(stored: &Snapshot, live: &Snapshot) -> Vec<Change> {
    diff_contracts_with(stored, live, crate::lint::safe_mcp_rule_ids)
}

/// As [`diff_contracts`], with the lint rule set used by the rug-pull rule injected.
pub fn diff_contracts_with(stored: &Snapshot, live: &Snapshot, poison: PoisonIds) -> Vec<Change> {
    let mut changes = Vec::new();
    let live_by_name: HashMap<&str, &ContractTool> =
        live.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let stored_names: HashMap<&str, ()> =
        stored.tools.iter().map(|t| (t.name.as_str(), ())).collect();

    for tool in &stored.tools {
        if !live_by_name.contains_key(tool.name.as_str()) {
            changes.push(Change::new(
                rule::TOOL_REMOVED,
                &tool.name,
                "tool removed".into(),
            ));
        }
    }
    for tool in &live.tools {
        if !stored_names.contains_key(tool.name.as_str()) {
            changes.push(Change::new(
                rule::TOOL_ADDED,
                &tool.name,
                "tool added".into(),
            ));
        }
    }
    for old in &stored.tools {
        let Some(new) = live_by_name.get(old.name.as_str()) else {
            continue;
        };
        diff_description(old, new, poison, &mut changes);
        let annotations = |t: &ContractTool| match &t.annotations {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(v) => stable_stringify(v),
        };
        if annotations(old) != annotations(new) {
            changes.push(Change::new(
                rule::TOOL_ANNOTATIONS_CHANGED,
                &old.name,
                "annotations changed".into(),
            ));
        }
        diff_schema(
            &old.name,
            old.input_schema.as_ref(),
            new.input_schema.as_ref(),
            &mut changes,
        );
    }
    changes
}

fn diff_description(
    old: &ContractTool,
    new: &ContractTool,
    poison: PoisonIds,
    out: &mut Vec<Change>,
) {
    let (before, after) = (old.description_text(), new.description_text());
    if before == after {
        return;
    }
    let approved = poison(&before);
    let tripped: Vec<&str> = poison(&after)
        .into_iter()
        .filter(|id| !approved.contains(id))
        .collect();
    if tripped.is_empty() {
        out.push(Change::new(
            rule::TOOL_DESCRIPTION_CHANGED,
            &old.name,
            "description changed".into(),
        ));
    } else {
        out.push(Change::new(
            rule::TOOL_DESCRIPTION_POISONED,
            &old.name,
            format!(
                "description changed and the new wording trips {}, which the approved wording did not (rug pull: SAFE-T1201, OWASP MCP03:2025)",
                tripped.join(", ")
            ),
        ));
    }
}

/// Deepest schema node the walk descends to; a node below it that differs is reported as
/// unclassified (breaking) at its pointer rather than walked.
pub const MAX_WALK_DEPTH: usize = 48;

/// A schema `type` as the messages print it: `string`, `string,null` for a list (as the
/// reference prints one), `any` when there is none.
fn type_name(v: Option<&Value>) -> String {
    match v {
        None => "any".to_owned(),
        Some(v) => stringify::display(Some(v)),
    }
}

fn stable_or_null(v: Option<&Value>) -> String {
    v.map_or_else(|| "null".to_owned(), stable_stringify)
}

fn diff_schema(tool: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<Change>) {
    if stable_or_null(old) == stable_or_null(new) {
        return;
    }
    let (Some(Value::Object(_)), Some(Value::Object(_))) = (old, new) else {
        out.push(Change::new(
            rule::INPUT_SCHEMA_REPLACED,
            tool,
            "inputSchema replaced entirely".into(),
        ));
        return;
    };
    let (Some(old), Some(new)) = (old, new) else {
        return;
    };
    let (co, cn) = (canonical::canonical(old), canonical::canonical(new));
    if stable_stringify(&co) == stable_stringify(&cn) {
        if canonical::prose(old) != canonical::prose(new) {
            out.push(Change::new(
                rule::INPUT_ANNOTATION_CHANGED,
                tool,
                "inputSchema annotations changed (description/title/examples only)".into(),
            ));
        }
        return;
    }
    let has_ref = canonical::contains_ref(&co) || canonical::contains_ref(&cn);
    let (Value::Object(o), Value::Object(n)) = (&co, &cn) else {
        return;
    };
    let start = out.len();
    let mut walk = Walk { tool, has_ref, out };
    walk.node(o, n, "", Role::Root, 0);
    if has_ref {
        out.push(Change::new(
            rule::INPUT_SCHEMA_REF_UNCLASSIFIED,
            tool,
            "inputSchema changed and uses $ref: reference resolution is not implemented, so the change is unclassified and treated as breaking".into(),
        ));
    } else if out.len() == start {
        // The canonical forms differ, so something changed: never say nothing.
        out.push(unclassified(tool, ""));
    }
}

fn at(ptr: &str) -> String {
    if ptr.is_empty() {
        String::new()
    } else {
        format!(" at {ptr}")
    }
}

fn unclassified(tool: &str, ptr: &str) -> Change {
    Change::new(
        rule::INPUT_SCHEMA_CHANGED_UNCLASSIFIED,
        tool,
        format!(
            "inputSchema changed structurally{} (unclassified, treated as breaking)",
            at(ptr)
        ),
    )
}

/// How a node was reached, which decides what its parent already compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The `inputSchema` itself: its `type` is compared here.
    Root,
    /// A property of a parent node: the parent compared its `type`, `default` and `enum`.
    Property,
    /// `items` or `additionalProperties`: nothing compared it yet.
    Nested,
}

struct Walk<'a> {
    tool: &'a str,
    has_ref: bool,
    out: &'a mut Vec<Change>,
}

fn required_names(node: &Map<String, Value>) -> Vec<String> {
    match node.get("required") {
        Some(Value::Array(items)) => items.iter().map(|v| stringify::display(Some(v))).collect(),
        _ => Vec::new(),
    }
}

fn properties(node: &Map<String, Value>) -> Option<&Map<String, Value>> {
    node.get("properties").and_then(Value::as_object)
}

fn both_objects(a: Option<&Value>, b: Option<&Value>) -> bool {
    matches!((a, b), (Some(Value::Object(_)), Some(Value::Object(_))))
}

fn both_arrays(a: Option<&Value>, b: Option<&Value>) -> bool {
    matches!((a, b), (Some(Value::Array(_)), Some(Value::Array(_))))
}

impl Walk<'_> {
    fn push(&mut self, rule: &'static str, message: String) {
        self.out.push(Change::new(rule, self.tool, message));
    }

    /// Compares two canonical schema nodes at `ptr`.
    fn node(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        role: Role,
        depth: usize,
    ) {
        if depth > MAX_WALK_DEPTH {
            // Every node walked here differed from its counterpart, or it would not be walked.
            if !self.has_ref {
                self.out.push(unclassified(self.tool, ptr));
            }
            return;
        }
        let here = at(ptr);
        let mut own = 0usize;

        if role == Role::Root && stable_or_null(o.get("type")) != stable_or_null(n.get("type")) {
            match (o.get("type"), n.get("type")) {
                (Some(was), None) => self.push(
                    rule::INPUT_SCHEMA_TYPE_REMOVED,
                    format!("schema type removed (was {}){here}", type_name(Some(was))),
                ),
                (was, now) => self.push(
                    rule::INPUT_SCHEMA_TYPE_CHANGED,
                    format!(
                        "schema type changed: {} → {}{here}",
                        type_name(was),
                        type_name(now)
                    ),
                ),
            }
            own += 1;
        }

        let (old_req, new_req) = (required_names(o), required_names(n));
        let empty = Map::new();
        let (old_props, new_props) = (
            properties(o).unwrap_or(&empty),
            properties(n).unwrap_or(&empty),
        );
        for name in &new_req {
            if old_req.contains(name) {
                continue;
            }
            self.push(
                rule::INPUT_PROPERTY_BECAME_REQUIRED,
                format!("parameter \"{name}\" is now required{here}"),
            );
            own += 1;
        }
        for name in &old_req {
            if !new_req.contains(name) {
                self.push(
                    rule::INPUT_PROPERTY_BECAME_OPTIONAL,
                    format!("parameter \"{name}\" is no longer required{here}"),
                );
                own += 1;
            }
        }

        for key in old_props.keys() {
            if !new_props.contains_key(key) {
                self.push(
                    rule::INPUT_PROPERTY_REMOVED,
                    format!("parameter \"{key}\" removed{here}"),
                );
                own += 1;
            }
        }
        for key in new_props.keys() {
            if old_props.contains_key(key) {
                continue;
            }
            if new_req.contains(key) {
                self.push(
                    rule::INPUT_PROPERTY_ADDED_REQUIRED,
                    format!("parameter \"{key}\" added (required){here}"),
                );
            } else {
                self.push(
                    rule::INPUT_PROPERTY_ADDED_OPTIONAL,
                    format!("parameter \"{key}\" added{here}"),
                );
            }
            own += 1;
        }
        for (key, op) in old_props {
            let Some(np) = new_props.get(key) else {
                continue;
            };
            if stable_stringify(op) == stable_stringify(np) {
                continue;
            }
            let child = format!("{ptr}/properties/{}", escape(key));
            let (Value::Object(op), Value::Object(np)) = (op, np) else {
                // A boolean schema (or garbage) on either side: nothing finer to say.
                if !self.has_ref {
                    self.out.push(unclassified(self.tool, &child));
                    own += 1;
                }
                continue;
            };
            own += self.property(key, op, np, &here);
            self.node(op, np, &child, Role::Property, depth + 1);
        }

        for member in ["items", "additionalProperties"] {
            if let (Some(a @ Value::Object(am)), Some(b @ Value::Object(bm))) =
                (o.get(member), n.get(member))
            {
                if stable_stringify(a) != stable_stringify(b) {
                    self.node(am, bm, &format!("{ptr}/{member}"), Role::Nested, depth + 1);
                }
            }
        }

        if own == 0 && !self.has_ref && remaining(o, n, role) != remaining(n, o, role) {
            self.out.push(unclassified(self.tool, ptr));
        }
    }

    /// What a parent says about one of its properties that exists on both sides.
    fn property(
        &mut self,
        key: &str,
        op: &Map<String, Value>,
        np: &Map<String, Value>,
        here: &str,
    ) -> usize {
        let start = self.out.len();
        if stable_or_null(op.get("type")) != stable_or_null(np.get("type")) {
            match (op.get("type"), np.get("type")) {
                (Some(was), None) => self.push(
                    rule::INPUT_PROPERTY_TYPE_REMOVED,
                    format!(
                        "parameter \"{key}\" no longer declares a type (was {}){here}",
                        type_name(Some(was))
                    ),
                ),
                (was, now) => self.push(
                    rule::INPUT_PROPERTY_TYPE_CHANGED,
                    format!(
                        "parameter \"{key}\" type changed: {} → {}{here}",
                        type_name(was),
                        type_name(now)
                    ),
                ),
            }
        }
        match (op.get("default"), np.get("default")) {
            (None, None) => {}
            (Some(a), Some(b)) if stable_stringify(a) == stable_stringify(b) => {}
            (None, Some(b)) => self.push(
                rule::INPUT_PROPERTY_DEFAULT_CHANGED,
                format!(
                    "parameter \"{key}\" default added: {}{here}",
                    stringify::compact(b)
                ),
            ),
            (Some(a), None) => self.push(
                rule::INPUT_PROPERTY_DEFAULT_CHANGED,
                format!(
                    "parameter \"{key}\" default removed (was {}){here}",
                    stringify::compact(a)
                ),
            ),
            (Some(a), Some(b)) => self.push(
                rule::INPUT_PROPERTY_DEFAULT_CHANGED,
                format!(
                    "parameter \"{key}\" default changed: {} → {}{here}",
                    stringify::compact(a),
                    stringify::compact(b)
                ),
            ),
        }
        if let (Some(Value::Array(old_enum)), Some(Value::Array(new_enum))) =
            (op.get("enum"), np.get("enum"))
        {
            let old_set: BTreeSet<String> = old_enum.iter().map(stable_stringify).collect();
            let new_set: BTreeSet<String> = new_enum.iter().map(stable_stringify).collect();
            for v in old_enum {
                if !new_set.contains(&stable_stringify(v)) {
                    self.push(
                        rule::INPUT_ENUM_VALUE_REMOVED,
                        format!(
                            "parameter \"{key}\" enum value {} removed{here}",
                            stringify::compact(v)
                        ),
                    );
                }
            }
            for v in new_enum {
                if !old_set.contains(&stable_stringify(v)) {
                    self.push(
                        rule::INPUT_ENUM_VALUE_ADDED,
                        format!(
                            "parameter \"{key}\" enum value {} added{here}",
                            stringify::compact(v)
                        ),
                    );
                }
            }
        }
        self.out.len() - start
    }
}

/// A node's keywords that no rule above compared, as canonical text. `other` is the node on
/// the opposite side, needed to know what was delegated (a member recursed into only when it
/// is an object on both sides).
fn remaining(node: &Map<String, Value>, other: &Map<String, Value>, role: Role) -> String {
    let mut rest = Map::new();
    for (key, value) in node {
        let k = key.as_str();
        let delegated = match k {
            "type" => role != Role::Nested,
            "required" => {
                matches!(value, Value::Array(_))
                    && matches!(other.get(k), Some(Value::Array(_)) | None)
            }
            "properties" => value.is_object() && other.get(k).is_none_or(Value::is_object),
            "default" => role == Role::Property,
            "enum" => role == Role::Property && both_arrays(Some(value), other.get(k)),
            "items" | "additionalProperties" => both_objects(Some(value), other.get(k)),
            _ => false,
        };
        if !delegated {
            rest.insert(key.clone(), value.clone());
        }
    }
    stable_stringify(&Value::Object(rest))
}

#[cfg(test)]
mod tests;
