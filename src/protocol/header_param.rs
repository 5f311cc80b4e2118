//! `x-mcp-header`: a tool asking, in its `inputSchema`, for one of its arguments to be mirrored
//! into an `Mcp-Param-<Name>` HTTP header (2026-07-28 Streamable HTTP).
//!
//! Two users share these rules. `check` reports a tool whose declarations break them (CAS-C008)
//! on every transport, because a conforming HTTP client must refuse that tool whatever transport
//! it is served over today. The HTTP client withholds such a tool from header resolution and,
//! for the rest, builds the headers of each `tools/call` from the arguments.
//!
//! A declaration is valid when all of these hold, checked in this order for each declaration in
//! document order, the first failure reported:
//! 1. its value is a non-empty string;
//! 2. that string is an RFC 9110 token (`1*tchar`);
//! 3. it sits on a property reachable from the schema root through `properties` keys alone;
//! 4. its name differs, ignoring ASCII case, from every earlier declaration's;
//! 5. the property is typed `string`, `integer` or `boolean` (a type array of those plus
//!    `"null"` is allowed); the root schema itself is never a property.
//!
//! Keys under `const`, `default`, `enum` and `examples` are data, never declarations, and a
//! property *named* `x-mcp-header` is just a property. The walk is iterative and stops at
//! [`MAX_DEPTH`] nested values, so no schema can exhaust the stack.

use serde_json::Value;

/// The annotation key.
pub const KEYWORD: &str = "x-mcp-header";

/// How deep the declaration walk descends. serde_json refuses to parse anything deeper, so a
/// parsed schema is never cut short; the bound is for values built by other means.
pub const MAX_DEPTH: usize = 256;

/// Keywords whose values are data, never schemas.
const DATA_KEYWORDS: [&str; 4] = ["const", "default", "enum", "examples"];

/// Keywords whose values map arbitrary names to schemas (so a member *named* `x-mcp-header` is
/// a schema, not a declaration).
const SCHEMA_MAP_KEYWORDS: [&str; 5] = [
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
];

/// One valid declaration: the header name as declared and the argument path it mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The `<Name>` of `Mcp-Param-<Name>`, exactly as declared.
    pub name: String,
    /// Property names from the root of the arguments to the mirrored value.
    pub path: Vec<String>,
}

impl HeaderParam {
    /// The header name on the wire: `mcp-param-<Name as declared>` (header names are
    /// case-insensitive; this is the spelling the reference sends).
    pub fn header_name(&self) -> String {
        format!("mcp-param-{}", self.name)
    }
}

/// Why a tool's declarations make it unusable over Streamable HTTP. The messages are the
/// reference's, so CAS-C008 reads the same under either binary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderParamError {
    #[error("x-mcp-header must be a non-empty string")]
    NotANonEmptyString,
    #[error("x-mcp-header {} is not an HTTP field-name token", quoted(.name))]
    NotAToken { name: String },
    #[error(
        "x-mcp-header {} is not on a property reachable from the schema root through \"properties\" alone",
        quoted(.name)
    )]
    Unreachable { name: String },
    #[error(
        "x-mcp-header {} repeats {}; header names are case-insensitive",
        quoted(.name),
        quoted(.first)
    )]
    Duplicate { name: String, first: String },
    #[error(
        "x-mcp-header {} is on /{}, which is not a string, integer or boolean",
        quoted(.name),
        .path.join("/")
    )]
    BadType { name: String, path: Vec<String> },
}

/// A string as a JSON literal, the way the reference quotes names in its messages.
fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// A declaration found by the walk, before validation.
struct Found<'a> {
    value: &'a Value,
    /// The `properties` path when every step from the root was a `properties` key.
    path: Option<Vec<String>>,
    node: &'a serde_json::Map<String, Value>,
}

/// Every declaration in `input_schema`, validated. `Ok` with an empty list when the tool
/// declares none; `Err` with the first rule broken otherwise.
pub fn declarations(input_schema: &Value) -> Result<Vec<HeaderParam>, HeaderParamError> {
    let mut params: Vec<HeaderParam> = Vec::new();
    for found in find_all(input_schema) {
        let name = match found.value {
            Value::String(name) if !name.is_empty() => name.clone(),
            _ => return Err(HeaderParamError::NotANonEmptyString),
        };
        if !is_token(&name) {
            return Err(HeaderParamError::NotAToken { name });
        }
        let Some(path) = found.path else {
            return Err(HeaderParamError::Unreachable { name });
        };
        if let Some(first) = params
            .iter()
            .find(|earlier| earlier.name.eq_ignore_ascii_case(&name))
        {
            return Err(HeaderParamError::Duplicate {
                first: first.name.clone(),
                name,
            });
        }
        if path.is_empty() || !mirrorable_type(found.node.get("type")) {
            return Err(HeaderParamError::BadType { name, path });
        }
        params.push(HeaderParam { name, path });
    }
    Ok(params)
}

/// Walks the schema in document order (pre-order, keys in their received order) and collects
/// each object carrying the keyword, with its `properties`-only path when it has one.
fn find_all(root: &Value) -> Vec<Found<'_>> {
    struct Visit<'a> {
        value: &'a Value,
        path: Option<Vec<String>>,
        depth: usize,
    }
    let mut found = Vec::new();
    let mut stack = vec![Visit {
        value: root,
        path: Some(Vec::new()),
        depth: 0,
    }];
    while let Some(Visit { value, path, depth }) = stack.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        let mut children: Vec<Visit<'_>> = Vec::new();
        match value {
            Value::Object(node) => {
                if let Some(declared) = node.get(KEYWORD) {
                    found.push(Found {
                        value: declared,
                        path: path.clone(),
                        node,
                    });
                }
                for (key, member) in node {
                    if key == KEYWORD || DATA_KEYWORDS.contains(&key.as_str()) {
                        continue;
                    }
                    let named_schemas =
                        key == "properties" || SCHEMA_MAP_KEYWORDS.contains(&key.as_str());
                    match member {
                        Value::Object(map) if named_schemas => {
                            for (name, schema) in map {
                                let child_path = if key == "properties" {
                                    path.as_ref().map(|p| {
                                        let mut p = p.clone();
                                        p.push(name.clone());
                                        p
                                    })
                                } else {
                                    None
                                };
                                children.push(Visit {
                                    value: schema,
                                    path: child_path,
                                    depth: depth + 2,
                                });
                            }
                        }
                        _ => children.push(Visit {
                            value: member,
                            path: None,
                            depth: depth + 1,
                        }),
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    children.push(Visit {
                        value: item,
                        path: None,
                        depth: depth + 1,
                    });
                }
            }
            _ => {}
        }
        stack.extend(children.into_iter().rev());
    }
    found
}

/// `string`, `integer` or `boolean`, alone or in a type array with `"null"`.
fn mirrorable_type(declared: Option<&Value>) -> bool {
    const ALLOWED: [&str; 3] = ["string", "integer", "boolean"];
    match declared {
        Some(Value::String(t)) => ALLOWED.contains(&t.as_str()),
        Some(Value::Array(types)) => {
            let mut any = false;
            for t in types {
                match t.as_str() {
                    Some("null") => {}
                    Some(t) if ALLOWED.contains(&t) => any = true,
                    _ => return false,
                }
            }
            any
        }
        _ => false,
    }
}

/// RFC 9110 `token`: one or more of ``! # $ % & ' * + - . ^ _ ` | ~``, digits and letters.
pub fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// The largest integer JavaScript represents exactly (2^53 − 1).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The text an argument value is mirrored as, before encoding: strings as they are, booleans
/// as `true`/`false`, safe integers in decimal. `None` (no header) for null, absent, objects,
/// arrays, fractions and integers beyond ±(2^53 − 1).
pub fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => {
            if let Some(n) = number.as_u64() {
                (n <= MAX_SAFE_INTEGER).then(|| n.to_string())
            } else if let Some(n) = number.as_i64() {
                (n.unsigned_abs() <= MAX_SAFE_INTEGER).then(|| n.to_string())
            } else {
                // A float that is a whole number (`42.0`) is the integer JavaScript sees.
                let f = number.as_f64()?;
                if f.fract() != 0.0 || f.abs() > 9_007_199_254_740_991.0 {
                    None
                } else if f == 0.0 {
                    Some("0".to_owned())
                } else {
                    Some(format!("{f:.0}"))
                }
            }
        }
        _ => None,
    }
}

const SENTINEL_OPEN: &str = "=?base64?";
const SENTINEL_CLOSE: &str = "?=";

/// Encodes a header value: visible ASCII (inner spaces and tabs allowed) without leading or
/// trailing whitespace travels as is, and so does the empty string; anything else, and any
/// plain value that would read as the sentinel itself, travels as `=?base64?<base64>?=`.
pub fn encode_value(text: &str) -> String {
    if text.is_empty() || (is_plain(text) && !looks_like_sentinel(text)) {
        text.to_owned()
    } else {
        format!(
            "{SENTINEL_OPEN}{}{SENTINEL_CLOSE}",
            base64_encode(text.as_bytes())
        )
    }
}

/// Decodes a header value: the exact lowercase sentinel around canonical base64 of UTF-8 is
/// decoded; anything else is the literal text.
pub fn decode_value(text: &str) -> String {
    let inner = text
        .strip_prefix(SENTINEL_OPEN)
        .and_then(|rest| rest.strip_suffix(SENTINEL_CLOSE));
    inner
        .and_then(base64_decode)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// The `(header name, encoded value)` pairs one `tools/call` carries, given the tool's valid
/// declarations and the call's `arguments`. A value absent at its path, or not mirrorable, sends
/// no header.
pub fn param_headers(params: &[HeaderParam], arguments: &Value) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|param| {
            let mut value = arguments;
            for step in &param.path {
                value = value.as_object()?.get(step)?;
            }
            let text = header_text(value)?;
            Some((param.header_name(), encode_value(&text)))
        })
        .collect()
}

fn is_plain(text: &str) -> bool {
    let bytes = text.as_bytes();
    let visible = |b: u8| (0x21..=0x7e).contains(&b);
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            visible(first)
                && visible(last)
                && bytes.iter().all(|&b| visible(b) || b == b' ' || b == b'\t')
        }
        _ => false,
    }
}

fn looks_like_sentinel(text: &str) -> bool {
    text.len() >= SENTINEL_OPEN.len() + SENTINEL_CLOSE.len()
        && text.starts_with(SENTINEL_OPEN)
        && text.ends_with(SENTINEL_CLOSE)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded base64 (also the digest in the `view` page's Content-Security-Policy).
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(BASE64[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Canonical padded base64 only (what an encoder writes); `None` for anything else.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| BASE64.iter().position(|&b| b == c).map(|p| p as u32);
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.chunks(4).count();
    for (index, quad) in bytes.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && index + 1 != quads) {
            return None;
        }
        let mut n = 0_u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        // Canonical: the bits a padded quad drops must be zero.
        if (pad == 1 && decoded[2] != 0) || (pad == 2 && decoded[1] != 0) {
            return None;
        }
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema_with(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn valid_declarations_in_document_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "target": {"type": "object", "properties": {
                    "cluster": {"type": ["integer", "null"], "x-mcp-header": "Cluster"}
                }},
                "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
                "x-mcp-header": {"type": "number", "description": "just a property"}
            },
            "examples": [{"x-mcp-header": "Ignored"}],
            "default": {"x-mcp-header": 5}
        });
        let params = declarations(&schema).unwrap();
        let names: Vec<_> = params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Region", "Cluster", "Dry-Run"]);
        assert_eq!(params[1].path, ["target", "cluster"]);
        assert_eq!(params[0].header_name(), "mcp-param-Region");
    }

    #[test]
    fn each_rule_has_its_message() {
        let cases = [
            (
                schema_with(json!({"a": {"type": "string", "x-mcp-header": ""}})),
                "x-mcp-header must be a non-empty string",
            ),
            (
                schema_with(json!({"a": {"type": "string", "x-mcp-header": 7}})),
                "x-mcp-header must be a non-empty string",
            ),
            (
                schema_with(json!({"a": {"type": "string", "x-mcp-header": "Tenant Id"}})),
                r#"x-mcp-header "Tenant Id" is not an HTTP field-name token"#,
            ),
            (
                schema_with(json!({"a": {"type": "string", "x-mcp-header": "Région"}})),
                r#"x-mcp-header "Région" is not an HTTP field-name token"#,
            ),
            (
                schema_with(
                    json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}),
                ),
                r#"x-mcp-header "Item" is not on a property reachable from the schema root through "properties" alone"#,
            ),
            (
                json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                r#"x-mcp-header "A" is not on a property reachable from the schema root through "properties" alone"#,
            ),
            (
                json!({"$defs": {"x-mcp-header": {"type": "string", "x-mcp-header": "Def"}}, "properties": {}}),
                r#"x-mcp-header "Def" is not on a property reachable from the schema root through "properties" alone"#,
            ),
            (
                schema_with(json!({
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "area": {"type": "string", "x-mcp-header": "REGION"}
                })),
                r#"x-mcp-header "REGION" repeats "Region"; header names are case-insensitive"#,
            ),
            (
                schema_with(
                    json!({"target": {"type": "object", "properties": {"shard": {"type": "number", "x-mcp-header": "Shard"}}}}),
                ),
                r#"x-mcp-header "Shard" is on /target/shard, which is not a string, integer or boolean"#,
            ),
            (
                schema_with(json!({"a": {"x-mcp-header": "Untyped"}})),
                r#"x-mcp-header "Untyped" is on /a, which is not a string, integer or boolean"#,
            ),
            (
                schema_with(json!({"a": {"type": ["null"], "x-mcp-header": "N"}})),
                r#"x-mcp-header "N" is on /a, which is not a string, integer or boolean"#,
            ),
            (
                json!({"type": "object", "x-mcp-header": "Root"}),
                r#"x-mcp-header "Root" is on /, which is not a string, integer or boolean"#,
            ),
        ];
        for (schema, message) in cases {
            let err = declarations(&schema).expect_err(message);
            assert_eq!(err.to_string(), message);
        }
    }

    #[test]
    fn the_first_broken_declaration_wins() {
        let schema = schema_with(json!({
            "a": {"type": "number", "x-mcp-header": "A"},
            "b": {"type": "string", "x-mcp-header": "B C"}
        }));
        assert!(matches!(
            declarations(&schema),
            Err(HeaderParamError::BadType { .. })
        ));
    }

    #[test]
    fn deep_schemas_are_walked_without_recursion() {
        let mut schema = json!({"type": "string", "x-mcp-header": "Deep"});
        for _ in 0..300 {
            schema = json!({"type": "object", "properties": {"n": schema}});
        }
        // Past the walk's bound the declaration is not seen; nothing overflows either way.
        assert_eq!(declarations(&schema), Ok(Vec::new()));
    }

    #[test]
    fn tokens() {
        assert!(is_token("Mcp-Param_x.1!#$%&'*+^`|~"));
        for bad in ["", "a b", "a:b", "a\tb", "a\nb", "é", "a\"b", "(x)"] {
            assert!(!is_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn value_text() {
        assert_eq!(header_text(&json!("x")), Some("x".into()));
        assert_eq!(header_text(&json!(true)), Some("true".into()));
        assert_eq!(header_text(&json!(-7)), Some("-7".into()));
        assert_eq!(header_text(&json!(42.0)), Some("42".into()));
        assert_eq!(
            header_text(&json!(9_007_199_254_740_991_u64)),
            Some("9007199254740991".into())
        );
        assert_eq!(header_text(&json!(9_007_199_254_740_992_u64)), None);
        assert_eq!(header_text(&json!(-9_007_199_254_740_992_i64)), None);
        assert_eq!(header_text(&json!(1.5)), None);
        assert_eq!(header_text(&json!(null)), None);
        assert_eq!(header_text(&json!({"a": 1})), None);
    }

    #[test]
    fn encoding_matches_the_documented_examples() {
        let cases = [
            ("us-west1", "us-west1"),
            (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
            ("日本語", "=?base64?5pel5pys6Kqe?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("-7", "-7"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("a\tb c", "a\tb c"),
            ("", ""),
        ];
        for (plain, encoded) in cases {
            assert_eq!(encode_value(plain), encoded, "{plain:?}");
            assert_eq!(decode_value(encoded), plain, "{encoded:?}");
        }
    }

    #[test]
    fn decoding_needs_exact_markers_and_canonical_base64() {
        assert_eq!(decode_value("=?BASE64?eA==?="), "=?BASE64?eA==?=");
        assert_eq!(decode_value("=?base64?eA?="), "=?base64?eA?=");
        assert_eq!(decode_value("=?base64?eB==?="), "=?base64?eB==?=");
        assert_eq!(decode_value("=?base64?eA==?="), "x");
    }

    #[test]
    fn base64_round_trip() {
        for len in 0..40_u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)), Some(bytes));
        }
    }

    #[test]
    fn headers_for_a_call() {
        let schema = schema_with(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "target": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"}
        }));
        let params = declarations(&schema).unwrap();
        let headers = param_headers(
            &params,
            &json!({"region": " eu", "target": {"n": 3}, "flag": null}),
        );
        assert_eq!(
            headers,
            [
                ("mcp-param-Region".to_owned(), "=?base64?IGV1?=".to_owned()),
                ("mcp-param-N".to_owned(), "3".to_owned())
            ]
        );
    }
}
