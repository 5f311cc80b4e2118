//! The document walk: every schema position checked once, `$id` bases and anchors collected,
//! then every `$ref` resolved inside the document.
//!
//! Iterative (an explicit stack), so only the depth bound the caller already enforced limits
//! it. A reference's target is checked as a schema too, even where no keyword puts one (Ajv
//! and the library this replaced both compile what a reference reaches). Nothing is fetched:
//! a reference leaving the document resolves only when it names a json-schema.org meta-schema
//! as a whole.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::dialect::Dialect;
use super::{meta, quote, uri};

/// The base URI of a document without `$id`; any absolute URI no schema would use will do.
const DOCUMENT_BASE: &str = "json-schema:///";

/// Meta-schemas a reference may name without the document holding them.
const META_SCHEMAS: &[&str] = &[
    "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2019-09/meta/core",
    "https://json-schema.org/draft/2019-09/meta/applicator",
    "https://json-schema.org/draft/2019-09/meta/validation",
    "https://json-schema.org/draft/2019-09/meta/meta-data",
    "https://json-schema.org/draft/2019-09/meta/format",
    "https://json-schema.org/draft/2019-09/meta/content",
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/meta/core",
    "https://json-schema.org/draft/2020-12/meta/applicator",
    "https://json-schema.org/draft/2020-12/meta/unevaluated",
    "https://json-schema.org/draft/2020-12/meta/validation",
    "https://json-schema.org/draft/2020-12/meta/meta-data",
    "https://json-schema.org/draft/2020-12/meta/format-annotation",
    "https://json-schema.org/draft/2020-12/meta/format-assertion",
    "https://json-schema.org/draft/2020-12/meta/content",
];

/// Whether `uri` is one of the meta-schemas of `dialect` (the ones its validator ships).
fn meta_schema_of(dialect: Dialect, uri: &str) -> bool {
    let family = match dialect {
        Dialect::Draft4 => "http://json-schema.org/draft-04/",
        Dialect::Draft6 => "http://json-schema.org/draft-06/",
        Dialect::Draft7 => "http://json-schema.org/draft-07/",
        Dialect::Draft2019 => "https://json-schema.org/draft/2019-09/",
        Dialect::Draft2020 => "https://json-schema.org/draft/2020-12/",
    };
    uri.starts_with(family) && META_SCHEMAS.contains(&uri)
}

/// A schema position waiting to be checked.
struct Pending<'a> {
    value: &'a Value,
    pointer: String,
    /// Base URI in effect where the value sits (before its own `$id`).
    base: String,
}

/// A reference keyword seen during the walk.
struct Reference<'a> {
    /// JSON Pointer to the keyword itself, for messages.
    at: String,
    base: String,
    text: &'a str,
}

pub struct Document<'a> {
    root: &'a Value,
    dialect: Dialect,
    /// Absolute URI (no fragment) of each resource → JSON Pointer to its root.
    resources: HashMap<String, String>,
    /// (resource URI, plain-name fragment) → JSON Pointer.
    anchors: HashMap<(String, String), String>,
    references: Vec<Reference<'a>>,
    checked: HashSet<String>,
    /// Every problem found so far, each `<pointer>: <what>`, in the order the walk met them.
    problems: Vec<String>,
    /// Pointers with a problem listed. A position can be judged twice (an `allOf` member by
    /// its parent's keyword and again as a schema position); the first verdict is kept.
    listed: HashSet<String>,
}

impl<'a> Document<'a> {
    pub fn new(root: &'a Value, dialect: Dialect) -> Self {
        Self {
            root,
            dialect,
            resources: HashMap::from([(DOCUMENT_BASE.to_owned(), String::new())]),
            anchors: HashMap::new(),
            references: Vec::new(),
            checked: HashSet::new(),
            problems: Vec::new(),
            listed: HashSet::new(),
        }
    }

    /// Every problem in the document, as Ajv lists them: meta-schema problems in document
    /// order, then references that do not resolve. The walk goes on past a problem; only a
    /// value that is not a schema at all stops the walk below it.
    pub fn check(mut self) -> Result<(), Vec<String>> {
        let mut stack = vec![Pending {
            value: self.root,
            pointer: String::new(),
            base: DOCUMENT_BASE.to_owned(),
        }];
        let mut resolved = 0;
        loop {
            while let Some(pending) = stack.pop() {
                self.visit(pending, &mut stack);
            }
            let Some(reference) = self.references.get(resolved) else {
                break;
            };
            resolved += 1;
            match self.resolve(reference) {
                Ok(Some(target)) => stack.push(target),
                Ok(None) => {}
                Err((pointer, what)) => self.report(pointer, &what),
            }
        }
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(self.problems)
        }
    }

    fn visit(&mut self, pending: Pending<'a>, stack: &mut Vec<Pending<'a>>) {
        if !self.checked.insert(pending.pointer.clone()) {
            return;
        }
        if let Err(what) = meta::schema_shape(self.dialect, pending.value) {
            self.report(pending.pointer.clone(), &what);
            return;
        }
        let Value::Object(schema) = pending.value else {
            return;
        };
        let mut problems = Vec::new();
        meta::check_keywords(self.dialect, schema, &mut problems);
        for problem in problems {
            self.report(extend(&pending.pointer, &problem.at), &problem.what);
        }
        let base = self.enter(schema, &pending.pointer, &pending.base);
        let children = meta::subschemas(self.dialect, schema);
        // Reversed onto the stack, so the walk (and the first problem) follows document order.
        for (segments, value) in children.into_iter().rev() {
            stack.push(Pending {
                value,
                pointer: extend(&pending.pointer, &segments),
                base: base.clone(),
            });
        }
    }

    fn report(&mut self, pointer: String, what: &str) {
        let problem = at(&pointer, what);
        if self.listed.insert(pointer) {
            self.problems.push(problem);
        }
    }

    /// Records the identifiers and references of one schema object; returns its base URI.
    fn enter(&mut self, schema: &'a Map<String, Value>, pointer: &str, base: &str) -> String {
        let mut base = base.to_owned();
        let hidden = self.dialect.ref_hides_id() && schema.contains_key("$ref");
        if !hidden
            && let Some(id) = schema
                .get(self.dialect.id_keyword())
                .and_then(Value::as_str)
        {
            let (resource, fragment) = uri::split_fragment(id);
            if !resource.is_empty() {
                let resolved = uri::resolve(&base, resource);
                base = uri::split_fragment(&resolved).0.to_owned();
                self.resources.insert(base.clone(), pointer.to_owned());
            }
            // Up to draft-07, `"$id": "#name"` is how a location is named.
            if !fragment.is_empty() && !fragment.starts_with('/') {
                self.anchors
                    .insert((base.clone(), fragment.to_owned()), pointer.to_owned());
            }
        }
        let anchor_keywords: &[&str] = match self.dialect {
            Dialect::Draft2019 => &["$anchor"],
            Dialect::Draft2020 => &["$anchor", "$dynamicAnchor"],
            _ => &[],
        };
        for keyword in anchor_keywords {
            if let Some(name) = schema.get(*keyword).and_then(Value::as_str) {
                self.anchors
                    .insert((base.clone(), name.to_owned()), pointer.to_owned());
            }
        }
        // 2019-09 defines `$recursiveRef` only for "#", which always resolves; other values
        // are left alone, as the library this replaced left them.
        let reference_keywords: &[&str] = match self.dialect {
            Dialect::Draft2020 => &["$ref", "$dynamicRef"],
            _ => &["$ref"],
        };
        for keyword in reference_keywords {
            if let Some(text) = schema.get(*keyword).and_then(Value::as_str) {
                self.references.push(Reference {
                    at: extend(pointer, &[(*keyword).to_owned()]),
                    base: base.clone(),
                    text,
                });
            }
        }
        base
    }

    /// The schema a reference reaches, if it is inside the document; `Ok(None)` for a
    /// meta-schema.
    fn resolve(&self, reference: &Reference<'a>) -> Result<Option<Pending<'a>>, (String, String)> {
        let absolute = uri::resolve(&reference.base, reference.text);
        let (resource, fragment) = uri::split_fragment(&absolute);
        let unresolved = |why: &str| {
            (
                reference.at.clone(),
                format!("{} {why}", quote(reference.text)),
            )
        };
        let Some(resource_pointer) = self.resources.get(resource) else {
            if fragment.is_empty() && meta_schema_of(self.dialect, resource) {
                return Ok(None);
            }
            return Err(unresolved(
                "does not resolve inside the schema (mcp-cassette fetches nothing)",
            ));
        };
        let pointer = if fragment.is_empty() {
            resource_pointer.clone()
        } else if fragment.starts_with('/') {
            let Some(decoded) = uri::percent_decode(fragment) else {
                return Err(unresolved("has a malformed percent-escape"));
            };
            format!("{resource_pointer}{decoded}")
        } else {
            match self
                .anchors
                .get(&(resource.to_owned(), fragment.to_owned()))
            {
                Some(pointer) => pointer.clone(),
                None => return Err(unresolved("names an anchor the schema does not define")),
            }
        };
        let Some(value) = self.root.pointer(&pointer) else {
            return Err(unresolved("points at nothing in the schema"));
        };
        Ok(Some(Pending {
            value,
            pointer,
            base: resource.to_owned(),
        }))
    }
}

/// `pointer` with unescaped `segments` appended.
fn extend(pointer: &str, segments: &[String]) -> String {
    let mut out = pointer.to_owned();
    for segment in segments {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

fn at(pointer: &str, what: &str) -> String {
    if pointer.is_empty() {
        what.to_owned()
    } else {
        format!("{pointer}: {what}")
    }
}
