//! Canonical JSON text: one spelling per JSON value, so two values are the same exactly when their
//! canonical texts are byte-equal. Replay's fingerprints and the contract's schema comparisons are
//! this text.
//!
//! * Object members are sorted by key in **UTF-16 code-unit order** (see [`key_cmp`]), at every
//!   depth; a key repeated in one object keeps its last value, as a parser would.
//! * Arrays keep their order.
//! * Numbers are spelled as JavaScript spells them ([`super::number`]): `1` and `1.0` are one
//!   number.
//! * Strings are escaped as `JSON.stringify` escapes them: `"`, `\`, the short forms `\b \f \n \r
//!   \t`, `\u00XX` for the other control characters, nothing else.
//! * No whitespace.
//!
//! The same text comes out whether the tree is a [`Node`] borrowed from the text (the replay hot
//! path's slow side) or a [`Value`] (the index, the contract); replay's [`Scanner`] copies text
//! that is already canonical straight through, and property tests hold all three to each other.
//!
//! [`Scanner`]: super::Scanner

use std::cmp::Ordering;

use serde_json::Value;

use super::node::Node;
use super::number::write_number;

/// The one key order: UTF-16 code units, as JavaScript's default `Array.prototype.sort()` orders
/// strings. It differs from the byte order of UTF-8 (and from code-point order) only where one
/// key has a character in U+E000–U+FFFF and the other a character above U+FFFF at the first
/// place they differ: UTF-16 writes the latter as a surrogate pair (U+D800–U+DFFF), which sorts
/// first. Everywhere else — all ASCII keys among them — it is plain byte order, which is what
/// this compares first.
#[inline]
pub(crate) fn key_cmp(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    match x.iter().zip(y).position(|(p, q)| p != q) {
        None => x.len().cmp(&y.len()),
        Some(i) => {
            let (p, q) = (x[i], y[i]);
            // Lead bytes: 0xEE-0xEF start U+E000-U+FFFF, 0xF0-0xF4 start U+10000 and above.
            // Strings that share a prefix differ first at a lead byte whenever the characters
            // there differ in class, so these two tests see every case where the orders part.
            let bmp_high = |c: u8| c == 0xEE || c == 0xEF;
            let astral = |c: u8| c >= 0xF0;
            if (bmp_high(p) && astral(q)) || (astral(p) && bmp_high(q)) {
                q.cmp(&p)
            } else {
                p.cmp(&q)
            }
        }
    }
}

/// The canonical text of a [`Value`].
pub(crate) fn stable_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// Appends the canonical text of a [`Value`]. Recursive: values reach here from serde_json's
/// parser, which refuses nesting deeper than 128, or from code that builds shallow ones.
pub(crate) fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) => write_number(f, out),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            write_object(map.iter().map(|(k, v)| (k.as_str(), v)), out, write_value);
        }
    }
}

/// Appends the canonical text of `node`.
pub(crate) fn write(node: &Node<'_>, out: &mut String) {
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Num(n) => write_number(*n, out),
        Node::Str(s) => write_str(s, out),
        Node::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Node::Obj(members) => write_members(members.iter().map(|(k, v)| (k.as_ref(), v)), out),
    }
}

/// Writes an object from its members (any order, duplicates allowed: the last one counts).
pub(crate) fn write_members<'n, 'a: 'n>(
    members: impl Iterator<Item = (&'n str, &'n Node<'a>)> + Clone,
    out: &mut String,
) {
    write_object(members, out, |node, out| write(node, out));
}

/// Writes an object whose values `write_value` spells.
fn write_object<'k, V: Copy>(
    members: impl Iterator<Item = (&'k str, V)> + Clone,
    out: &mut String,
    write_value: impl Fn(V, &mut String),
) {
    // Most objects arrive with few members, often already in order: write those without sorting.
    let mut previous: Option<&str> = None;
    let in_order = members.clone().all(|(k, _)| {
        let ok = previous.is_none_or(|p| key_cmp(p, k) == Ordering::Less);
        previous = Some(k);
        ok
    });
    out.push('{');
    if in_order {
        for (i, (key, value)) in members.enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(key, out);
            out.push(':');
            write_value(value, out);
        }
    } else {
        let mut sorted: Vec<(&str, V)> = members.collect();
        // Stable, so equal keys stay in document order and the last one is kept below.
        sorted.sort_by(|a, b| key_cmp(a.0, b.0));
        let mut first = true;
        for (i, &(key, value)) in sorted.iter().enumerate() {
            if sorted.get(i + 1).is_some_and(|(next, _)| *next == key) {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            write_str(key, out);
            out.push(':');
            write_value(value, out);
        }
    }
    out.push('}');
}

/// Appends a JSON string literal, escaped as `JSON.stringify` escapes it.
pub(crate) fn write_str(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A JSON string literal (quotes included), escaped as `JSON.stringify` escapes it.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str(s, &mut out);
    out
}

#[cfg(test)]
pub(crate) mod tests;
