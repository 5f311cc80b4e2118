//! Which strings of a listing entry the lint reads, under which label and surface (docs/check.md, "What is read").
//!
//! Only string values are collected: a number or boolean carries no instructions. Entries
//! and members of the wrong type are skipped rather than reported, because a listing may hold
//! whatever a broken server put there and the structural checks own that complaint.

use serde_json::{Map, Value};

use super::Surface;

/// One text to lint, the surface that decides which rules read it, and where it was found.
pub(crate) struct Field<'v> {
    pub(crate) text: &'v str,
    pub(crate) surface: Surface,
    /// Found where only the rules added after the catalogue (CAS-L017 onward) read: `outputSchema`, the
    /// sub-schema keys beyond the first stage's seven, strings nested inside `default`,
    /// `const`, `enum` and `examples` values. The first-stage rules keep the fields they have
    /// always read, so their results do not change.
    pub(crate) extended: bool,
    place: Place,
}

/// Where a field sits. Labels are rendered only for fields that produce a finding, so the
/// walk itself allocates nothing per text (but a suffix for strings nested inside values).
#[derive(Clone)]
enum Place {
    /// A top-level key: `description`, `title`, `name`.
    Key(&'static str),
    /// `arguments[i].<key>` of a prompt.
    Argument(usize, &'static str),
    /// `<path of schema node>.<key>`, or `…<key>[i]` for a member of a list.
    Schema {
        node: usize,
        key: &'static str,
        member: Option<usize>,
    },
    /// A string nested inside a value: `<path of schema node>.<key><suffix>`, the suffix
    /// spelled `[i]` and `.name` (allocated only for such strings, which are rare).
    Nested {
        node: usize,
        key: &'static str,
        suffix: String,
    },
}

/// How a schema node is reached from its parent.
enum Step<'v> {
    /// The walk's root: `inputSchema` or `annotations`.
    Root(&'static str),
    /// A single sub-schema: `.items`.
    Single(&'static str),
    /// A named sub-schema: `.properties.city`, `.$defs.Address`.
    Named(&'static str, &'v str),
    /// A sub-schema in a list: `.anyOf[0]`.
    Indexed(&'static str, usize),
}

struct Node<'v> {
    parent: Option<usize>,
    step: Step<'v>,
}

/// The fields of one listing entry, in the order they are linted.
pub(crate) struct Fields<'v> {
    pub(crate) list: Vec<Field<'v>>,
    nodes: Vec<Node<'v>>,
}

/// Deepest schema level read (the root is level 0). Text nested deeper is not linted: a
/// stated limit, and the bound that keeps a hostile 10,000-level schema from costing stack.
pub(crate) const SCHEMA_DEPTH_LIMIT: usize = 6;

/// Keys whose string value reaches the model as text. Schema poisoning (SAFE-T1501) hides
/// instructions in any of them, not only in `description`.
const TEXT_KEYS: [&str; 4] = ["description", "title", "default", "const"];
/// The same where the schema holds a list of values.
const TEXT_LIST_KEYS: [&str; 2] = ["enum", "examples"];
/// Keys holding sub-schemas: a list of schemas, a single schema (`items`), or a map of named
/// schemas (`properties`, `$defs`, `definitions`). The first seven are read by every rule;
/// the rest (from `not` on) only by the second stage (see [`Field::extended`]).
const CHILD_KEYS: [&str; 20] = [
    "properties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "$defs",
    "definitions",
    "not",
    "additionalProperties",
    "patternProperties",
    "prefixItems",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// How many of [`CHILD_KEYS`] every rule reads.
const FIRST_STAGE_CHILD_KEYS: usize = 7;
/// Child keys whose object value is one schema rather than a map of named schemas.
const SINGLE_SCHEMA_KEYS: [&str; 11] = [
    "items",
    "not",
    "additionalProperties",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Deepest level read inside a `default`, `const`, `enum` or `examples` value.
const VALUE_DEPTH_LIMIT: usize = 4;
/// Where a schema key's value goes during the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Text(usize),
    List(usize),
    Child(usize),
}

/// The slot of a schema key: index into [`TEXT_KEYS`], [`TEXT_LIST_KEYS`] or [`CHILD_KEYS`].
/// A `match` on the string compiles to a length switch, cheaper than scanning three lists.
fn slot_of(key: &str) -> Option<Slot> {
    Some(match key {
        "description" => Slot::Text(0),
        "title" => Slot::Text(1),
        "default" => Slot::Text(2),
        "const" => Slot::Text(3),
        "enum" => Slot::List(0),
        "examples" => Slot::List(1),
        "properties" => Slot::Child(0),
        "items" => Slot::Child(1),
        "anyOf" => Slot::Child(2),
        "oneOf" => Slot::Child(3),
        "allOf" => Slot::Child(4),
        "$defs" => Slot::Child(5),
        "definitions" => Slot::Child(6),
        "not" => Slot::Child(7),
        "additionalProperties" => Slot::Child(8),
        "patternProperties" => Slot::Child(9),
        "prefixItems" => Slot::Child(10),
        "if" => Slot::Child(11),
        "then" => Slot::Child(12),
        "else" => Slot::Child(13),
        "dependentSchemas" => Slot::Child(14),
        "contains" => Slot::Child(15),
        "propertyNames" => Slot::Child(16),
        "unevaluatedProperties" => Slot::Child(17),
        "unevaluatedItems" => Slot::Child(18),
        "additionalItems" => Slot::Child(19),
        _ => return None,
    })
}

impl<'v> Fields<'v> {
    fn new() -> Self {
        Fields {
            list: Vec::new(),
            nodes: Vec::new(),
        }
    }

    fn push_key(&mut self, key: &'static str, value: Option<&'v Value>, surface: Surface) {
        if let Some(Value::String(text)) = value {
            self.list.push(Field {
                text,
                surface,
                extended: false,
                place: Place::Key(key),
            });
        }
    }

    /// Strings nested inside a `default`, `const`, `enum` or `examples` value (arrays and
    /// objects), to [`VALUE_DEPTH_LIMIT`] levels; only the second stage reads them.
    fn walk_value(
        &mut self,
        value: &'v Value,
        node: usize,
        key: &'static str,
        suffix: &mut String,
        depth: usize,
    ) {
        if depth > VALUE_DEPTH_LIMIT {
            return;
        }
        let len = suffix.len();
        match value {
            Value::String(text) if depth > 0 => self.list.push(Field {
                text,
                surface: Surface::Tool,
                extended: true,
                place: Place::Nested {
                    node,
                    key,
                    suffix: suffix.clone(),
                },
            }),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    suffix.push_str(&format!("[{i}]"));
                    self.walk_value(item, node, key, suffix, depth + 1);
                    suffix.truncate(len);
                }
            }
            Value::Object(members) => {
                for (name, member) in members {
                    suffix.push('.');
                    suffix.push_str(name);
                    self.walk_value(member, node, key, suffix, depth + 1);
                    suffix.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// The label messages use: `description`, `arguments[0].title`,
    /// `inputSchema.properties.city.description`, `inputSchema.enum[0]`, `annotations.title`.
    pub(crate) fn label(&self, field: &Field<'_>) -> String {
        match field.place {
            Place::Key(key) => key.to_owned(),
            Place::Argument(i, key) => format!("arguments[{i}].{key}"),
            Place::Schema { node, key, member } => {
                let mut label = self.node_path(node);
                label.push('.');
                label.push_str(key);
                if let Some(i) = member {
                    label.push_str(&format!("[{i}]"));
                }
                label
            }
            Place::Nested {
                node,
                key,
                ref suffix,
            } => {
                let mut label = self.node_path(node);
                label.push('.');
                label.push_str(key);
                label.push_str(suffix);
                label
            }
        }
    }

    fn node_path(&self, node: usize) -> String {
        // At most SCHEMA_DEPTH_LIMIT + 1 steps: the walk never records a deeper node.
        let mut chain = Vec::new();
        let mut at = Some(node);
        while let Some(index) = at {
            let Some(n) = self.nodes.get(index) else {
                break;
            };
            chain.push(&n.step);
            at = n.parent;
        }
        let mut path = String::new();
        for step in chain.into_iter().rev() {
            match step {
                Step::Root(name) => path.push_str(name),
                Step::Single(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                Step::Named(key, name) => {
                    path.push('.');
                    path.push_str(key);
                    path.push('.');
                    path.push_str(name);
                }
                Step::Indexed(key, i) => path.push_str(&format!(".{key}[{i}]")),
            }
        }
        path
    }

    /// Collect one schema node's text, then its sub-schemas, reading the object's entries
    /// once. Recursion is bounded by [`SCHEMA_DEPTH_LIMIT`]: at most seven frames are ever
    /// live, whatever the input's depth.
    fn walk_schema(
        &mut self,
        value: &'v Value,
        parent: Option<usize>,
        step: Step<'v>,
        depth: usize,
        extended: bool,
    ) {
        if depth > SCHEMA_DEPTH_LIMIT {
            return;
        }
        let Some(obj) = value.as_object() else {
            return;
        };
        let node = self.nodes.len();
        self.nodes.push(Node { parent, step });

        let mut texts: [Option<&'v String>; 4] = [None; 4];
        let mut lists: [Option<&'v Vec<Value>>; 2] = [None; 2];
        let mut children: [Option<&'v Value>; 20] = [None; 20];
        let mut nested: [Option<&'v Value>; 4] = [None; 4];
        for (key, member) in obj {
            // Slots follow TEXT_KEYS, TEXT_LIST_KEYS and CHILD_KEYS; a test checks the match
            // against those lists.
            match (slot_of(key), member) {
                (Some(Slot::Text(i)), Value::String(text)) => texts[i] = Some(text),
                (Some(Slot::Text(i)), Value::Array(_) | Value::Object(_)) => {
                    nested[i] = Some(member);
                }
                (Some(Slot::List(i)), Value::Array(items)) => lists[i] = Some(items),
                (Some(Slot::Child(i)), _) => children[i] = Some(member),
                _ => {}
            }
        }

        for (key, text) in TEXT_KEYS.iter().zip(texts) {
            if let Some(text) = text {
                self.list.push(Field {
                    text,
                    surface: Surface::Tool,
                    extended,
                    place: Place::Schema {
                        node,
                        key,
                        member: None,
                    },
                });
            }
        }
        for (key, items) in TEXT_LIST_KEYS.iter().zip(lists) {
            for (i, item) in items.into_iter().flatten().enumerate() {
                match item {
                    Value::String(text) => self.list.push(Field {
                        text,
                        surface: Surface::Tool,
                        extended,
                        place: Place::Schema {
                            node,
                            key,
                            member: Some(i),
                        },
                    }),
                    Value::Array(_) | Value::Object(_) => {
                        let mut suffix = format!("[{i}]");
                        self.walk_value(item, node, key, &mut suffix, 1);
                    }
                    _ => {}
                }
            }
        }
        for (key, value) in TEXT_KEYS.iter().zip(nested) {
            if let Some(value) = value {
                self.walk_value(value, node, key, &mut String::new(), 0);
            }
        }
        for (i, (key, child)) in CHILD_KEYS.iter().zip(children).enumerate() {
            let extended = extended || i >= FIRST_STAGE_CHILD_KEYS;
            match child {
                Some(Value::Array(schemas)) => {
                    for (i, schema) in schemas.iter().enumerate() {
                        let step = Step::Indexed(key, i);
                        self.walk_schema(schema, Some(node), step, depth + 1, extended);
                    }
                }
                Some(schema @ Value::Object(_)) if SINGLE_SCHEMA_KEYS.contains(key) => {
                    self.walk_schema(schema, Some(node), Step::Single(key), depth + 1, extended);
                }
                Some(Value::Object(named)) => {
                    for (name, schema) in named {
                        let step = Step::Named(key, name);
                        self.walk_schema(schema, Some(node), step, depth + 1, extended);
                    }
                }
                _ => {}
            }
        }
    }
}

/// A tool: `description`, `title`, then the input schema and the annotations, both walked,
/// then the output schema (second stage only).
pub(crate) fn tool_fields(tool: &Map<String, Value>) -> Fields<'_> {
    // One pass over the entries instead of four hashed lookups: this runs once per tool of
    // every listing.
    let (mut description, mut title, mut schema, mut annotations) = (None, None, None, None);
    let mut output = None;
    for (key, value) in tool {
        match key.as_str() {
            "description" => description = Some(value),
            "title" => title = Some(value),
            "inputSchema" => schema = Some(value),
            "annotations" => annotations = Some(value),
            "outputSchema" => output = Some(value),
            _ => {}
        }
    }
    let mut fields = Fields::new();
    fields.push_key("description", description, Surface::Tool);
    fields.push_key("title", title, Surface::Tool);
    if let Some(schema) = schema {
        fields.walk_schema(schema, None, Step::Root("inputSchema"), 0, false);
    }
    if let Some(annotations) = annotations {
        fields.walk_schema(annotations, None, Step::Root("annotations"), 0, false);
    }
    if let Some(output) = output {
        // The model reads a tool's output schema too; only the second stage reads it here.
        fields.walk_schema(output, None, Step::Root("outputSchema"), 0, true);
    }
    fields
}

/// A prompt: `description`, `title`, and each argument's `description` and `title`. The name
/// is what `prompts/get` is called with, so linting it would report naming as an attack.
pub(crate) fn prompt_fields(prompt: &Map<String, Value>) -> Fields<'_> {
    let mut fields = Fields::new();
    fields.push_key("description", prompt.get("description"), Surface::Prompt);
    fields.push_key("title", prompt.get("title"), Surface::Prompt);
    if let Some(Value::Array(arguments)) = prompt.get("arguments") {
        for (i, argument) in arguments.iter().enumerate() {
            let Some(argument) = argument.as_object() else {
                continue;
            };
            for key in ["description", "title"] {
                if let Some(Value::String(text)) = argument.get(key) {
                    fields.list.push(Field {
                        text,
                        surface: Surface::Prompt,
                        extended: false,
                        place: Place::Argument(i, key),
                    });
                }
            }
        }
    }
    fields
}

/// A resource or resource template: `name` (display text standing in for a title; reads are
/// keyed by `uri`), then `title` and `description`.
pub(crate) fn resource_fields(res: &Map<String, Value>) -> Fields<'_> {
    let mut fields = Fields::new();
    fields.push_key("name", res.get("name"), Surface::Name);
    fields.push_key("title", res.get("title"), Surface::Resource);
    fields.push_key("description", res.get("description"), Surface::Resource);
    fields
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(fields: &Fields<'_>) -> Vec<String> {
        fields.list.iter().map(|f| fields.label(f)).collect()
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
    fn second_stage_reads_every_schema_text() {
        let tool = json!({
            "inputSchema": {
                "properties": {
                    "p": {"default": {"note": "n", "list": ["x", 1]}, "enum": [["e"]], "not": {"description": "not"}},
                    "q": {"additionalProperties": {"title": "ap"}, "patternProperties": {"^x": {"description": "pp"}}}
                },
                "if": {"description": "if"}, "prefixItems": [{"description": "pi"}]
            },
            "outputSchema": {"description": "out"}
        });
        let Some(obj) = tool.as_object() else {
            panic!("object");
        };
        let fields = tool_fields(obj);
        let got: Vec<(String, bool)> = fields
            .list
            .iter()
            .map(|f| (fields.label(f), f.extended))
            .collect();
        let expected = [
            ("inputSchema.properties.p.enum[0][0]", true),
            ("inputSchema.properties.p.default.note", true),
            ("inputSchema.properties.p.default.list[0]", true),
            ("inputSchema.properties.p.not.description", true),
            ("inputSchema.properties.q.additionalProperties.title", true),
            (
                "inputSchema.properties.q.patternProperties.^x.description",
                true,
            ),
            ("inputSchema.prefixItems[0].description", true),
            ("inputSchema.if.description", true),
            ("outputSchema.description", true),
        ];
        assert_eq!(
            got,
            expected
                .iter()
                .map(|(l, e)| ((*l).to_owned(), *e))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn slots_follow_the_key_lists() {
        for (i, key) in TEXT_KEYS.iter().enumerate() {
            assert_eq!(slot_of(key), Some(Slot::Text(i)));
        }
        for (i, key) in TEXT_LIST_KEYS.iter().enumerate() {
            assert_eq!(slot_of(key), Some(Slot::List(i)));
        }
        for (i, key) in CHILD_KEYS.iter().enumerate() {
            assert_eq!(slot_of(key), Some(Slot::Child(i)));
        }
        assert_eq!(slot_of("type"), None);
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
        let texts: Vec<&str> = tool_fields(obj).list.iter().map(|f| f.text).collect();
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
        assert_eq!(fields.list[0].surface, Surface::Name);
        assert_eq!(fields.list[1].surface, Surface::Resource);
    }
}
