//! What each dialect's meta-schema says about a schema's own keywords.
//!
//! One schema object at a time, never recursing: [`subschemas`] names the positions holding
//! schemas and the caller walks them with its own stack. Keywords a dialect does not define are
//! ignored, as the meta-schemas (which allow additional properties) ignore them.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::dialect::Dialect;
use super::{pattern, quote};

/// What a keyword's value must be.
#[derive(Clone, Copy)]
enum Shape {
    Schema,
    /// A non-empty array of schemas.
    SchemaArray,
    /// An object whose values are schemas.
    SchemaMap,
    /// [`Shape::SchemaMap`] whose keys are regular expressions.
    PatternSchemaMap,
    /// A schema, or a non-empty array of schemas (`items` before 2020-12).
    SchemaOrArray,
    /// A boolean or a schema (draft-04's `additionalItems` / `additionalProperties`).
    BooleanOrSchema,
    /// Values are schemas or arrays of unique strings.
    Dependencies,
    /// Values are arrays of unique strings.
    DependentRequired,
    NonNegativeInteger,
    Number,
    /// A number above zero (`multipleOf`).
    PositiveNumber,
    Boolean,
    String,
    Type,
    /// Unique strings; `non_empty` for draft-04's `required`.
    StringArray {
        non_empty: bool,
    },
    Array,
    /// `enum`: Ajv's keyword refuses an empty list in every dialect, whatever the meta-schema says.
    NonEmptyArray,
    Pattern,
    /// `$id`; from 2019-09 on it may not carry a non-empty fragment.
    Id {
        fragment: bool,
    },
    UriReference,
    Uri,
    Anchor {
        pattern: AnchorSyntax,
    },
    Vocabulary,
    Any,
}

#[derive(Clone, Copy)]
enum AnchorSyntax {
    /// 2019-09: `^[A-Za-z][-A-Za-z0-9.:_]*$`.
    Draft2019,
    /// 2020-12: `^[A-Za-z_][-A-Za-z0-9._]*$`.
    Draft2020,
}

fn shape(dialect: Dialect, keyword: &str) -> Option<Shape> {
    use Dialect::{Draft4, Draft6, Draft7, Draft2019, Draft2020};
    let modern = matches!(dialect, Draft2019 | Draft2020);
    let shape = match keyword {
        // Applicators.
        "not" => Shape::Schema,
        "allOf" | "anyOf" | "oneOf" => Shape::SchemaArray,
        "properties" | "definitions" => Shape::SchemaMap,
        "patternProperties" => Shape::PatternSchemaMap,
        "additionalProperties" | "additionalItems" if dialect == Draft4 => Shape::BooleanOrSchema,
        "additionalProperties" => Shape::Schema,
        "additionalItems" if dialect != Draft2020 => Shape::Schema,
        "items" if dialect == Draft2020 => Shape::Schema,
        "items" => Shape::SchemaOrArray,
        "prefixItems" if dialect == Draft2020 => Shape::SchemaArray,
        "contains" | "propertyNames" if dialect != Draft4 => Shape::Schema,
        "if" | "then" | "else" if dialect != Draft4 && dialect != Draft6 => Shape::Schema,
        "dependencies" => Shape::Dependencies,
        "$defs" | "dependentSchemas" if modern => Shape::SchemaMap,
        "unevaluatedItems" | "unevaluatedProperties" | "contentSchema" if modern => Shape::Schema,
        // Validation.
        "type" => Shape::Type,
        "enum" => Shape::NonEmptyArray,
        "const" if dialect != Draft4 => Shape::Any,
        "multipleOf" => Shape::PositiveNumber,
        "maximum" | "minimum" => Shape::Number,
        "exclusiveMaximum" | "exclusiveMinimum" if dialect == Draft4 => Shape::Boolean,
        "exclusiveMaximum" | "exclusiveMinimum" => Shape::Number,
        "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties" | "minProperties" => {
            Shape::NonNegativeInteger
        }
        "maxContains" | "minContains" if modern => Shape::NonNegativeInteger,
        "pattern" => Shape::Pattern,
        "uniqueItems" => Shape::Boolean,
        "required" => Shape::StringArray {
            non_empty: dialect == Draft4,
        },
        "dependentRequired" if modern => Shape::DependentRequired,
        // Annotations.
        "title" | "description" | "format" => Shape::String,
        "default" => Shape::Any,
        "examples" if dialect != Draft4 => Shape::Array,
        "readOnly" | "writeOnly" if dialect != Draft4 && dialect != Draft6 => Shape::Boolean,
        "deprecated" if modern => Shape::Boolean,
        "$comment" if dialect != Draft4 && dialect != Draft6 => Shape::String,
        // Draft-06 predates them, but the library this replaced checked them there too.
        "contentMediaType" | "contentEncoding" if dialect != Draft4 => Shape::String,
        // Core.
        "id" if dialect == Draft4 => Shape::String,
        "$schema" if dialect == Draft4 => Shape::String,
        "$schema" => Shape::Uri,
        "$id" if matches!(dialect, Draft6 | Draft7) => Shape::Id { fragment: true },
        "$id" if modern => Shape::Id { fragment: false },
        "$ref" => Shape::UriReference,
        "$anchor" if dialect == Draft2019 => Shape::Anchor {
            pattern: AnchorSyntax::Draft2019,
        },
        "$anchor" | "$dynamicAnchor" | "$recursiveAnchor" if dialect == Draft2020 => {
            Shape::Anchor {
                pattern: AnchorSyntax::Draft2020,
            }
        }
        "$recursiveAnchor" if dialect == Draft2019 => Shape::Boolean,
        "$recursiveRef" if modern => Shape::UriReference,
        "$dynamicRef" if dialect == Draft2020 => Shape::UriReference,
        "$vocabulary" if modern => Shape::Vocabulary,
        _ => return None,
    };
    Some(shape)
}

/// A problem with one keyword: the JSON Pointer segments below the schema, and what is wrong.
pub struct Problem {
    pub at: Vec<String>,
    pub what: String,
}

impl Problem {
    fn new(at: &[&str], what: impl Into<String>) -> Self {
        Self {
            at: at.iter().map(|segment| (*segment).to_owned()).collect(),
            what: what.into(),
        }
    }
}

/// Whether `value` may stand where a schema is expected (its keywords are checked separately).
pub fn schema_shape(dialect: Dialect, value: &Value) -> Result<(), String> {
    match value {
        Value::Object(_) => Ok(()),
        Value::Bool(_) if dialect.boolean_schemas() => Ok(()),
        _ if dialect.boolean_schemas() => Err(format!(
            "{} is not a schema (an object or a boolean)",
            describe(value)
        )),
        _ => Err(format!(
            "{} is not a schema (an object, in draft-04)",
            describe(value)
        )),
    }
}

/// Every keyword of `schema` its dialect's meta-schema refuses, in document order, pushed onto
/// `problems`.
pub fn check_keywords(dialect: Dialect, schema: &Map<String, Value>, problems: &mut Vec<Problem>) {
    for (keyword, value) in schema {
        let Some(shape) = shape(dialect, keyword) else {
            continue;
        };
        if let Err(mut problem) = check_shape(dialect, shape, value) {
            problem.at.insert(0, keyword.clone());
            problems.push(problem);
        }
    }
    if dialect == Dialect::Draft4 {
        // Draft-04's meta-schema: an exclusive bound needs the bound it qualifies.
        for (exclusive, bound) in [
            ("exclusiveMaximum", "maximum"),
            ("exclusiveMinimum", "minimum"),
        ] {
            if schema.contains_key(exclusive) && !schema.contains_key(bound) {
                problems.push(Problem::new(
                    &[exclusive],
                    format!("needs \"{bound}\" beside it (draft-04)"),
                ));
            }
        }
    }
}

fn check_shape(dialect: Dialect, shape: Shape, value: &Value) -> Result<(), Problem> {
    match shape {
        Shape::Any => Ok(()),
        Shape::Schema => schema_shape(dialect, value).map_err(here),
        Shape::BooleanOrSchema => match value {
            Value::Bool(_) => Ok(()),
            _ => schema_shape(dialect, value).map_err(here),
        },
        Shape::SchemaArray => {
            let items = array(value)?;
            if items.is_empty() {
                return Err(here("is empty; it needs at least one schema".to_owned()));
            }
            each(items, |item| schema_shape(dialect, item).map_err(here))
        }
        Shape::SchemaOrArray => match value {
            Value::Array(items) if items.is_empty() => Err(here(
                "is an empty array; it needs a schema or at least one".to_owned(),
            )),
            Value::Array(items) => each(items, |item| schema_shape(dialect, item).map_err(here)),
            _ => schema_shape(dialect, value).map_err(here),
        },
        Shape::SchemaMap => each_member(object(value)?, |_, member| {
            schema_shape(dialect, member).map_err(here)
        }),
        Shape::PatternSchemaMap => each_member(object(value)?, |key, member| {
            pattern::check(key).map_err(|why| here(not_a_pattern(key, &why)))?;
            schema_shape(dialect, member).map_err(here)
        }),
        Shape::Dependencies => each_member(object(value)?, |_, member| match member {
            Value::Array(_) => string_array(member, dialect == Dialect::Draft4),
            _ => schema_shape(dialect, member).map_err(|_| {
                here(format!(
                    "{} is neither a schema nor an array of property names",
                    describe(member)
                ))
            }),
        }),
        Shape::DependentRequired => {
            each_member(object(value)?, |_, member| string_array(member, false))
        }
        Shape::NonNegativeInteger => {
            let integral = value.as_u64().is_some()
                || (dialect.integral_floats()
                    && value
                        .as_f64()
                        .is_some_and(|n| n >= 0.0 && n.is_finite() && n.fract() == 0.0));
            if integral {
                Ok(())
            } else {
                Err(here(format!(
                    "{} is not a non-negative integer",
                    describe(value)
                )))
            }
        }
        Shape::Number => match value {
            Value::Number(_) => Ok(()),
            _ => Err(here(format!("{} is not a number", describe(value)))),
        },
        Shape::PositiveNumber => match value.as_f64() {
            Some(n) if n > 0.0 => Ok(()),
            _ => Err(here(format!(
                "{} is not a number greater than 0",
                describe(value)
            ))),
        },
        Shape::Boolean => match value {
            Value::Bool(_) => Ok(()),
            _ => Err(here(format!("{} is not a boolean", describe(value)))),
        },
        Shape::String => string(value).map(drop),
        Shape::Type => match value {
            Value::String(name) => simple_type(name).map_err(here),
            Value::Array(names) => {
                if names.is_empty() {
                    return Err(here("is an empty array of types".to_owned()));
                }
                each(names, |name| match name {
                    Value::String(name) => simple_type(name).map_err(here),
                    _ => Err(here(format!("{} is not a type name", describe(name)))),
                })?;
                unique(names)
            }
            _ => Err(here(format!(
                "{} is neither a type name nor an array of them",
                describe(value)
            ))),
        },
        Shape::StringArray { non_empty } => string_array(value, non_empty),
        Shape::Array => array(value).map(drop),
        Shape::NonEmptyArray => {
            if array(value)?.is_empty() {
                return Err(here("is empty; it needs at least one value".to_owned()));
            }
            Ok(())
        }
        Shape::Pattern => {
            let pattern = string(value)?;
            pattern::check(pattern).map_err(|why| here(not_a_pattern(pattern, &why)))
        }
        Shape::Id { fragment } => {
            let id = string(value)?;
            uri_reference(id).map_err(here)?;
            if !fragment && id.split_once('#').is_some_and(|(_, f)| !f.is_empty()) {
                return Err(here(format!(
                    "{} has a fragment; name a location with $anchor instead",
                    quote(id)
                )));
            }
            Ok(())
        }
        Shape::UriReference => uri_reference(string(value)?).map_err(here),
        Shape::Uri => absolute_uri(string(value)?).map_err(here),
        Shape::Anchor { pattern } => {
            let anchor = string(value)?;
            let mut chars = anchor.chars();
            let first_fits = chars.next().is_some_and(|c| match pattern {
                AnchorSyntax::Draft2019 => c.is_ascii_alphabetic(),
                AnchorSyntax::Draft2020 => c.is_ascii_alphabetic() || c == '_',
            });
            let rest_fit = chars.all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '-' | '.' | '_')
                    || (c == ':' && matches!(pattern, AnchorSyntax::Draft2019))
            });
            if first_fits && rest_fit {
                Ok(())
            } else {
                Err(here(format!(
                    "{} is not a valid anchor name",
                    quote(anchor)
                )))
            }
        }
        // Keys are not checked as URIs: Ajv does not assert the meta-schema's `uri` format here.
        Shape::Vocabulary => each_member(object(value)?, |_, member| match member {
            Value::Bool(_) => Ok(()),
            _ => Err(here(format!("{} is not a boolean", describe(member)))),
        }),
    }
}

/// Every position in `schema` that holds a schema, as pointer segments (one or two deep).
pub fn subschemas(dialect: Dialect, schema: &Map<String, Value>) -> Vec<(Vec<String>, &Value)> {
    let mut found = Vec::new();
    for (keyword, value) in schema {
        let Some(shape) = shape(dialect, keyword) else {
            continue;
        };
        let direct = |found: &mut Vec<_>| found.push((vec![keyword.clone()], value));
        match (shape, value) {
            // Draft-04's `additionalProperties: false` is a boolean, not a boolean schema.
            (Shape::BooleanOrSchema, Value::Object(_)) => direct(&mut found),
            (Shape::Schema, Value::Object(_) | Value::Bool(_)) => direct(&mut found),
            (Shape::SchemaOrArray, Value::Object(_) | Value::Bool(_)) => direct(&mut found),
            (Shape::SchemaArray | Shape::SchemaOrArray, Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    found.push((vec![keyword.clone(), index.to_string()], item));
                }
            }
            (
                Shape::SchemaMap | Shape::PatternSchemaMap | Shape::Dependencies,
                Value::Object(members),
            ) => {
                for (key, member) in members {
                    if !member.is_array() {
                        found.push((vec![keyword.clone(), key.clone()], member));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn not_a_pattern(pattern: &str, why: &str) -> String {
    format!(
        "{} is not a valid ECMAScript regular expression (u flag): {why}",
        quote(pattern)
    )
}

fn simple_type(name: &str) -> Result<(), String> {
    match name {
        "array" | "boolean" | "integer" | "null" | "number" | "object" | "string" => Ok(()),
        _ => Err(format!(
            "{} is not one of the seven JSON types",
            quote(name)
        )),
    }
}

fn string(value: &Value) -> Result<&str, Problem> {
    value
        .as_str()
        .ok_or_else(|| Problem::new(&[], format!("{} is not a string", describe(value))))
}

fn array(value: &Value) -> Result<&Vec<Value>, Problem> {
    value
        .as_array()
        .ok_or_else(|| Problem::new(&[], format!("{} is not an array", describe(value))))
}

fn object(value: &Value) -> Result<&Map<String, Value>, Problem> {
    value
        .as_object()
        .ok_or_else(|| Problem::new(&[], format!("{} is not an object", describe(value))))
}

fn here(what: String) -> Problem {
    Problem {
        at: Vec::new(),
        what,
    }
}

fn string_array(value: &Value, non_empty: bool) -> Result<(), Problem> {
    let Value::Array(items) = value else {
        return Err(here(format!(
            "{} is not an array of strings",
            describe(value)
        )));
    };
    if non_empty && items.is_empty() {
        return Err(here(
            "is empty; draft-04 wants at least one name".to_owned(),
        ));
    }
    each(items, |item| match item {
        Value::String(_) => Ok(()),
        _ => Err(here(format!("{} is not a string", describe(item)))),
    })?;
    unique(items)
}

/// Uniqueness of strings (`type` and string arrays hold nothing else by the time this runs),
/// hashed so a huge `required` stays linear.
fn unique(items: &[Value]) -> Result<(), Problem> {
    let mut seen = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        if !seen.insert(item.as_str()) {
            return Err(Problem::new(
                &[&index.to_string()],
                format!("{} is repeated", describe(item)),
            ));
        }
    }
    Ok(())
}

/// Applies `check` to each item; a failure is placed under the item's index.
fn each(items: &[Value], check: impl Fn(&Value) -> Result<(), Problem>) -> Result<(), Problem> {
    for (index, item) in items.iter().enumerate() {
        check(item).map_err(|mut problem| {
            problem.at.insert(0, index.to_string());
            problem
        })?;
    }
    Ok(())
}

fn each_member(
    members: &Map<String, Value>,
    check: impl Fn(&str, &Value) -> Result<(), Problem>,
) -> Result<(), Problem> {
    for (key, member) in members {
        check(key, member).map_err(|mut problem| {
            problem.at.insert(0, key.clone());
            problem
        })?;
    }
    Ok(())
}

/// RFC 3986 URI-reference syntax, leniently: no characters a URI can never hold.
fn uri_reference(text: &str) -> Result<(), String> {
    let bad = text.chars().find(|&c| {
        c.is_whitespace()
            || c.is_control()
            || matches!(c, '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}')
    });
    match bad {
        Some(_) => Err(format!("{} is not a URI reference", quote(text))),
        None => Ok(()),
    }
}

/// A URI reference with a scheme.
fn absolute_uri(text: &str) -> Result<(), String> {
    uri_reference(text)?;
    let scheme = text.split_once(':').map(|(scheme, _)| scheme);
    let schemed = scheme.is_some_and(|scheme| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if schemed {
        Ok(())
    } else {
        Err(format!("{} is not an absolute URI", quote(text)))
    }
}

/// A short description of a value for messages: small values whole, others by kind.
pub fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => quote(text),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        other => {
            let text = other.to_string();
            if text.chars().count() > 40 {
                "a number".to_owned()
            } else {
                text
            }
        }
    }
}
