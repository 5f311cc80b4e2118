//! Structural difference between two JSON values, as RFC 6901 JSON Pointer paths.
//!
//! Shared by replay's miss diagnosis (which argument drifted from the nearest recording) and
//! `verify` (which part of a live answer drifted from the recorded one). It compares values, not
//! text: `1` and `1.0` are the same number, as they are to the JavaScript reference. Arrays are
//! compared position by position, because a cassette pins one concrete payload and an element that
//! moved really is a different payload.

use serde_json::Value;

use crate::json::stringify;

/// One place where the two values differ.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffEntry {
    /// JSON Pointer to the differing value; `""` is the whole value.
    pub path: String,
    /// The value on the recorded side, `None` when the member or element is absent there.
    pub recorded: Option<Value>,
    /// The value on the live side, `None` when absent there.
    pub live: Option<Value>,
    /// The nearest object key enclosing the value (array elements inherit their array's key), so a
    /// renderer can redact the value in the context it had.
    pub key: Option<String>,
}

/// How much of a differing value a [`DiffEntry`] keeps, in bytes of string content and members.
/// A diagnosis shows 60 characters of it, after redaction; the rest of this room is there so that
/// a secret starting within those characters is still whole when it is redacted. Without the
/// bound, a request near the line limit was copied whole into each diff entry, and again on the
/// way to being shown (docs/replay.md, "Bad input").
pub(crate) const PREVIEW_BYTES: usize = 64 * 1024;

/// `value`, cut down to about [`PREVIEW_BYTES`]: long strings keep their head, arrays and objects
/// their first members. A cut value always renders longer than what a diagnosis shows, so the
/// cut shows as the diagnosis's own ellipsis.
pub(crate) fn preview(value: &Value) -> Value {
    let mut budget = PREVIEW_BYTES;
    cut(value, &mut budget)
}

fn cut(value: &Value, budget: &mut usize) -> Value {
    match value {
        Value::String(s) => {
            let mut end = s.len().min(*budget);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            *budget -= end;
            Value::String(s[..end].to_owned())
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                if *budget == 0 {
                    break;
                }
                *budget -= 1;
                out.push(cut(item, budget));
            }
            Value::Array(out)
        }
        Value::Object(members) => {
            let mut out = serde_json::Map::new();
            for (k, v) in members {
                if *budget == 0 {
                    break;
                }
                *budget = budget.saturating_sub(1 + k.len());
                out.insert(k.clone(), cut(v, budget));
            }
            Value::Object(out)
        }
        other => {
            *budget = budget.saturating_sub(1);
            other.clone()
        }
    }
}

/// RFC 6901 escaping of one segment: `~` becomes `~0`, `/` becomes `~1`.
pub(crate) fn escape_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Every path where `recorded` and `live` differ, objects by sorted key, arrays by position.
pub(crate) fn diff_values(recorded: &Value, live: &Value) -> Vec<DiffEntry> {
    let mut out = Vec::new();
    walk(recorded, live, &mut String::new(), None, &mut out);
    out
}

fn walk(
    recorded: &Value,
    live: &Value,
    path: &mut String,
    key: Option<&str>,
    out: &mut Vec<DiffEntry>,
) {
    let here =
        |path: &str, recorded: Option<&Value>, live: Option<&Value>, key: Option<&str>| DiffEntry {
            path: path.to_owned(),
            recorded: recorded.map(preview),
            live: live.map(preview),
            key: key.map(str::to_owned),
        };
    match (recorded, live) {
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => walk(x, y, path, key, out),
                    (x, y) => out.push(here(path, x, y, key)),
                }
                path.truncate(len);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a
                .keys()
                .chain(b.keys().filter(|k| !a.contains_key(*k)))
                .collect();
            // JavaScript's default sort compares UTF-16 code units.
            keys.sort_by(|x, y| x.encode_utf16().cmp(y.encode_utf16()));
            for k in keys {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_segment(k));
                match (a.get(k.as_str()), b.get(k.as_str())) {
                    (Some(x), Some(y)) => walk(x, y, path, Some(k), out),
                    (x, y) => out.push(here(path, x, y, Some(k))),
                }
                path.truncate(len);
            }
        }
        (a, b) if same_value(a, b) => {}
        (a, b) => out.push(here(path, Some(a), Some(b), key)),
    }
}

/// Equality of two leaves as JavaScript's `Object.is` sees parsed JSON: numbers by value.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q || (p.is_nan() && q.is_nan()),
            _ => x == y,
        },
        (Value::Array(_), _) | (Value::Object(_), _) => false,
        _ => a == b,
    }
}

/// A short single-line rendering of a value for people: its JSON (numbers spelled as JavaScript
/// spells them), `(absent)` for a missing one, cut to `max` UTF-16 units with a trailing `…`.
pub(crate) fn format_value(value: Option<&Value>, max: usize) -> String {
    let text = match value {
        None => return "(absent)".to_owned(),
        Some(v) => {
            // Only the head is ever shown: a 50 MB argument is not serialised whole to show 60
            // characters of it.
            stringify::compact_head(v, max.saturating_mul(4) + 16)
        }
    };
    let units = text.encode_utf16().count();
    if units <= max {
        return text;
    }
    let mut kept = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.len_utf16();
        if used + w > max.saturating_sub(1) {
            break;
        }
        used += w;
        kept.push(c);
    }
    kept.push('…');
    kept
}

/// Splits a JSON Pointer into unescaped segments; `None` when it does not start with `/` (the empty
/// pointer, the whole document, has no segments).
pub fn split_pointer(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// Removes what a JSON Pointer (given as segments) names from `value`: an object member is
/// deleted, an array element is replaced by the string `"[ignored]"` so that later elements keep
/// their indices. A path that does not exist, or a non-numeric segment under an array, changes
/// nothing. Returns whether anything changed.
pub(crate) fn remove_pointer(value: &mut Value, segments: &[String]) -> bool {
    let Some((last, parents)) = segments.split_last() else {
        return false;
    };
    let mut here = value;
    for seg in parents {
        here = match here {
            Value::Object(map) => match map.get_mut(seg.as_str()) {
                Some(v) => v,
                None => return false,
            },
            Value::Array(items) => match array_index(seg).and_then(|i| items.get_mut(i)) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
    }
    match here {
        Value::Object(map) => map.shift_remove(last.as_str()).is_some(),
        Value::Array(items) => match array_index(last).and_then(|i| items.get_mut(i)) {
            Some(slot) => {
                *slot = Value::String("[ignored]".to_owned());
                true
            }
            None => false,
        },
        _ => false,
    }
}

fn array_index(segment: &str) -> Option<usize> {
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(a: Value, b: Value) -> Vec<String> {
        diff_values(&a, &b).into_iter().map(|d| d.path).collect()
    }

    #[test]
    fn objects_arrays_and_numbers() {
        assert!(
            paths(
                json!({"a": 1, "b": [1, 2]}),
                json!({"b": [1.0, 2], "a": 1.0})
            )
            .is_empty()
        );
        assert_eq!(
            paths(json!({"a": 1, "b": 2}), json!({"a": 5, "b": 5})),
            ["/a", "/b"]
        );
        assert_eq!(paths(json!([1, 2]), json!([1, 2, 3])), ["/2"]);
        assert_eq!(paths(json!({"x": 1}), json!({})), ["/x"]);
        assert_eq!(paths(json!({"a/b~": 1}), json!({"a/b~": 2})), ["/a~1b~0"]);
        assert_eq!(paths(json!(1), json!("1")), [""]);
        assert_eq!(paths(json!({"a": {}}), json!({"a": []})), ["/a"]);
    }

    #[test]
    fn entries_carry_values_and_key_context() {
        let d = diff_values(&json!({"token": ["a", "b"]}), &json!({"token": ["a", "c"]}));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "/token/1");
        assert_eq!(d[0].key.as_deref(), Some("token"));
        assert_eq!(d[0].recorded, Some(json!("b")));
        let d = diff_values(&json!({}), &json!({"n": 1}));
        assert_eq!(d[0].recorded, None);
    }

    #[test]
    fn formatting() {
        assert_eq!(format_value(None, 60), "(absent)");
        assert_eq!(
            format_value(Some(&json!({"b": 1.0, "a": "x"})), 60),
            r#"{"b":1,"a":"x"}"#
        );
        let long = format_value(Some(&json!("x".repeat(100))), 60);
        assert_eq!(long.chars().count(), 60);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn pointers() {
        assert_eq!(split_pointer("/a~1b/~0c").unwrap(), ["a/b", "~c"]);
        assert_eq!(split_pointer("").unwrap(), Vec::<String>::new());
        assert!(split_pointer("a").is_none());
        let mut v = json!({"a": [1, 2, 3], "b": {"c": 1}});
        assert!(remove_pointer(&mut v, &split_pointer("/a/1").unwrap()));
        assert!(remove_pointer(&mut v, &split_pointer("/b/c").unwrap()));
        assert!(!remove_pointer(&mut v, &split_pointer("/a/x").unwrap()));
        assert!(!remove_pointer(&mut v, &split_pointer("/a/9").unwrap()));
        assert!(!remove_pointer(&mut v, &split_pointer("/z/q").unwrap()));
        assert_eq!(v, json!({"a": [1, "[ignored]", 3], "b": {}}));
    }
}
