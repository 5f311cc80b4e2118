//! Which strings of a listing entry the lint reads, under which label and surface (spec §6.4).
//!
//! Only string values are collected: a number or boolean carries no instructions. Entries
//! and members of the wrong type are skipped rather than reported, because a listing may hold
//! whatever a broken server put there and the structural checks own that complaint.

use serde_json::{Map, Value};

use super::Surface;

/// One text to lint: its label in messages (`inputSchema.properties.city.description`), the
/// text, and the surface that decides which rules read it.
pub(crate) struct Field<'v> {
    pub(crate) label: String,
    pub(crate) text: &'v str,
    pub(crate) surface: Surface,
}

/// Deepest schema level read (the root is level 0). Text nested deeper is not linted: a
/// stated limit, and the bound that keeps a hostile 10,000-level schema from costing stack.
pub(crate) const SCHEMA_DEPTH_LIMIT: usize = 6;

/// Keys whose string value reaches the model as text. Schema poisoning (SAFE-T1501) hides
/// instructions in any of them, not only in `description`.
const TEXT_KEYS: [&str; 4] = ["description", "title", "default", "const"];
/// The same where the schema holds a list of values.
const TEXT_LIST_KEYS: [&str; 2] = ["enum", "examples"];
/// Keys holding sub-schemas: an array of schemas, a single schema (`items`), or a map of
/// named schemas (`properties`, `$defs`, `definitions`).
const CHILD_KEYS: [&str; 7] = [
    "properties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "$defs",
    "definitions",
];
/// Child keys whose object value is itself a schema rather than a map of them.
const SINGLE_SCHEMA_KEYS: [&str; 1] = ["items"];

/// A tool: `description`, `title`, then the input schema and the annotations, both walked.
pub(crate) fn tool_fields(tool: &Map<String, Value>) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    push_text(
        &mut out,
        "description",
        tool.get("description"),
        Surface::Tool,
    );
    push_text(&mut out, "title", tool.get("title"), Surface::Tool);
    if let Some(schema) = tool.get("inputSchema") {
        walk_schema(schema, "inputSchema", 0, &mut out);
    }
    if let Some(annotations) = tool.get("annotations") {
        walk_schema(annotations, "annotations", 0, &mut out);
    }
    out
}

/// A prompt: `description`, `title`, and each argument's `description` and `title`. The name
/// is what `prompts/get` is called with, so linting it would report naming as an attack.
pub(crate) fn prompt_fields(prompt: &Map<String, Value>) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    push_text(
        &mut out,
        "description",
        prompt.get("description"),
        Surface::Prompt,
    );
    push_text(&mut out, "title", prompt.get("title"), Surface::Prompt);
    if let Some(Value::Array(arguments)) = prompt.get("arguments") {
        for (i, argument) in arguments.iter().enumerate() {
            let Some(argument) = argument.as_object() else {
                continue;
            };
            for key in ["description", "title"] {
                if let Some(Value::String(text)) = argument.get(key) {
                    out.push(Field {
                        label: format!("arguments[{i}].{key}"),
                        text,
                        surface: Surface::Prompt,
                    });
                }
            }
        }
    }
    out
}

/// A resource or resource template: `name` (display text standing in for a title; reads are
/// keyed by `uri`), then `title` and `description`.
pub(crate) fn resource_fields(res: &Map<String, Value>) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    push_text(&mut out, "name", res.get("name"), Surface::Name);
    push_text(&mut out, "title", res.get("title"), Surface::Resource);
    push_text(
        &mut out,
        "description",
        res.get("description"),
        Surface::Resource,
    );
    out
}

fn push_text<'v>(
    out: &mut Vec<Field<'v>>,
    label: &str,
    value: Option<&'v Value>,
    surface: Surface,
) {
    if let Some(Value::String(text)) = value {
        out.push(Field {
            label: label.to_owned(),
            text,
            surface,
        });
    }
}

/// Collect schema text. Recursion is bounded by [`SCHEMA_DEPTH_LIMIT`], so at most seven
/// frames are ever live whatever the input's depth.
fn walk_schema<'v>(node: &'v Value, path: &str, depth: usize, out: &mut Vec<Field<'v>>) {
    if depth > SCHEMA_DEPTH_LIMIT {
        return;
    }
    let Some(obj) = node.as_object() else {
        return;
    };
    for key in TEXT_KEYS {
        if let Some(Value::String(text)) = obj.get(key) {
            out.push(Field {
                label: format!("{path}.{key}"),
                text,
                surface: Surface::Tool,
            });
        }
    }
    for key in TEXT_LIST_KEYS {
        if let Some(Value::Array(members)) = obj.get(key) {
            for (i, member) in members.iter().enumerate() {
                if let Value::String(text) = member {
                    out.push(Field {
                        label: format!("{path}.{key}[{i}]"),
                        text,
                        surface: Surface::Tool,
                    });
                }
            }
        }
    }
    for key in CHILD_KEYS {
        match obj.get(key) {
            Some(Value::Array(children)) => {
                for (i, child) in children.iter().enumerate() {
                    walk_schema(child, &format!("{path}.{key}[{i}]"), depth + 1, out);
                }
            }
            Some(child @ Value::Object(_)) if SINGLE_SCHEMA_KEYS.contains(&key) => {
                walk_schema(child, &format!("{path}.{key}"), depth + 1, out);
            }
            Some(Value::Object(named)) => {
                for (name, child) in named {
                    walk_schema(child, &format!("{path}.{key}.{name}"), depth + 1, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(fields: &[Field<'_>]) -> Vec<String> {
        fields.iter().map(|f| f.label.clone()).collect()
    }

    #[test]
    fn tool_reads_every_text_key() {
        let tool = json!({
            "name": "t",
            "description": "d",
            "title": "t",
            "inputSchema": {
                "type": "object",
                "description": "root",
                "properties": {
                    "city": {"type": "string", "description": "c", "default": "x", "examples": ["e", 3]},
                    "unit": {"enum": ["C", "F", 1], "const": "C", "title": "u"},
                    "tags": {"type": "array", "items": {"description": "item text"}}
                },
                "anyOf": [{"description": "a0"}],
                "$defs": {"D": {"description": "def"}},
                "definitions": {"E": {"title": "e"}}
            },
            "annotations": {"title": "ann"}
        });
        let Some(obj) = tool.as_object() else {
            panic!("object");
        };
        let got = labels(&tool_fields(obj));
        assert_eq!(
            got,
            [
                "description",
                "title",
                "inputSchema.description",
                "inputSchema.properties.city.description",
                "inputSchema.properties.city.default",
                "inputSchema.properties.city.examples[0]",
                "inputSchema.properties.unit.title",
                "inputSchema.properties.unit.const",
                "inputSchema.properties.unit.enum[0]",
                "inputSchema.properties.unit.enum[1]",
                "inputSchema.properties.tags.items.description",
                "inputSchema.anyOf[0].description",
                "inputSchema.$defs.D.description",
                "inputSchema.definitions.E.title",
                "annotations.title",
            ]
        );
    }

    #[test]
    fn schema_walk_stops_below_depth_six() {
        // Level k holds "level k"; levels 0..=6 are read, 7 is not.
        let mut node = json!({"description": "level 8"});
        for level in (0..8).rev() {
            node = json!({"description": format!("level {level}"), "properties": {"p": node}});
        }
        let tool = json!({"inputSchema": node});
        let Some(obj) = tool.as_object() else {
            panic!("object");
        };
        let texts: Vec<&str> = tool_fields(obj).iter().map(|f| f.text).collect();
        assert_eq!(texts.len(), 7);
        assert_eq!(texts.last().copied(), Some("level 6"));
    }

    #[test]
    fn prompt_and_resource_fields() {
        let prompt = json!({"name": "ignored", "description": "d", "arguments": [7, {"title": "a", "description": "b"}]});
        let Some(p) = prompt.as_object() else {
            panic!("object");
        };
        assert_eq!(
            labels(&prompt_fields(p)),
            [
                "description",
                "arguments[1].description",
                "arguments[1].title"
            ]
        );
        let res = json!({"uri": "file:///x", "name": "n", "title": "t", "description": 5});
        let Some(r) = res.as_object() else {
            panic!("object");
        };
        let fields = resource_fields(r);
        assert_eq!(labels(&fields), ["name", "title"]);
        assert_eq!(fields[0].surface, Surface::Name);
        assert_eq!(fields[1].surface, Surface::Resource);
    }
}
