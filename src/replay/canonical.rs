//! Canonical JSON for fingerprints, computed over a borrowed tree.
//!
//! The same text comes out whether the tree was read straight from a client's line (the hot path:
//! strings borrowed from the line, no hash map built per object) or viewed over a parsed
//! [`Value`] (the index, and requests whose params were redacted or had volatile fields dropped).
//! Keys are sorted, numbers are JavaScript numbers (`1` and `1.0` are one number, as in the
//! reference), and a key repeated in one object keeps its last value, as a parser would.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::protocol::canonical::js_number;

/// A JSON value whose strings borrow from the text or the [`Value`] it was read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// Every JSON number is an IEEE double to JavaScript, and so here.
    Num(f64),
    Str(Cow<'a, str>),
    Arr(Vec<Node<'a>>),
    /// Members in document order (duplicates included; the writer keeps the last).
    Obj(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// A view over a parsed value.
    pub fn from_value(value: &'a Value) -> Node<'a> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Num(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Node::Str(Cow::Borrowed(s)),
            Value::Array(items) => Node::Arr(items.iter().map(Node::from_value).collect()),
            Value::Object(map) => Node::Obj(
                map.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Node::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// Parses JSON text into a borrowed tree.
    pub fn parse(text: &'a str) -> serde_json::Result<Node<'a>> {
        serde_json::from_str(text)
    }

    /// The member `key` of an object (the last one when repeated).
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            Node::Obj(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// JavaScript's `String(value)`.
    pub fn js_string(&self) -> String {
        match self {
            Node::Null => "null".to_owned(),
            Node::Bool(b) => b.to_string(),
            Node::Num(n) => number_text(*n),
            Node::Str(s) => s.to_string(),
            Node::Arr(items) => items
                .iter()
                .map(|v| match v {
                    Node::Null => String::new(),
                    other => other.js_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
            Node::Obj(_) => "[object Object]".to_owned(),
        }
    }
}

/// Appends the canonical text of `node`: keys sorted by their bytes at every depth, arrays in
/// order, numbers as JavaScript prints them.
pub fn write(node: &Node<'_>, out: &mut String) {
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
pub fn write_members<'n, 'a: 'n>(
    members: impl Iterator<Item = (&'n str, &'n Node<'a>)> + Clone,
    out: &mut String,
) {
    // Most objects arrive with few members, often already in order: write those without sorting.
    let mut previous: Option<&str> = None;
    let in_order = members.clone().all(|(k, _)| {
        let ok = previous.is_none_or(|p| p < k);
        previous = Some(k);
        ok
    });
    if in_order {
        out.push('{');
        for (i, (key, value)) in members.enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(key, out);
            out.push(':');
            write(value, out);
        }
        out.push('}');
        return;
    }
    let mut sorted: Vec<(&str, &Node<'_>)> = members.collect();
    // Stable, so equal keys stay in document order and the last one is kept below.
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    let mut first = true;
    for (i, (key, value)) in sorted.iter().enumerate() {
        if sorted.get(i + 1).is_some_and(|(next, _)| next == key) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_str(key, out);
        out.push(':');
        write(value, out);
    }
    out.push('}');
}

/// Appends a number as JavaScript prints it.
fn write_number(n: f64, out: &mut String) {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        // Exactly representable integers, without the formatting machinery.
        let mut v = n as i64;
        if v == 0 {
            out.push('0');
            return;
        }
        if v < 0 {
            out.push('-');
            v = -v;
        }
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        while v > 0 {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        for &d in &digits[at..] {
            out.push(char::from(d));
        }
        return;
    }
    out.push_str(&js_number(n));
}

fn number_text(n: f64) -> String {
    // Integers in the exactly representable range print as themselves; js_number covers the
    // rest (fractions, exponents) the way Number.prototype.toString does.
    if n.fract() == 0.0 && n.abs() < 1e15 {
        if n == 0.0 {
            return "0".to_owned();
        }
        return (n as i64).to_string();
    }
    js_number(n)
}

/// A JSON string literal, escaped as `JSON.stringify` escapes it.
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => out.push_str(&format!("\\u{b:04x}")),
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

impl<'de: 'a, 'a> Deserialize<'de> for Node<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor(PhantomData))
    }
}

struct NodeVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for NodeVisitor<'a> {
    type Value = Node<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node<'a>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'a>, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'a>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'a>, E> {
        Ok(Node::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'a>, E> {
        Ok(Node::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node<'a>, E> {
        Ok(Node::Num(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'a>, E> {
        Ok(Node::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'a>, E> {
        Ok(Node::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'a>, E> {
        Ok(Node::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'a>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<Node<'a>>()? {
            items.push(item);
        }
        Ok(Node::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'a>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(key) = map.next_key::<Key<'a>>()? {
            let value = map.next_value::<Node<'a>>()?;
            members.push((key.0, value));
        }
        Ok(Node::Obj(members))
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// How deep the scanner follows nesting before leaving the text to the full parser.
const SCAN_DEPTH: usize = 64;

/// A strict, allocation-free reader of JSON text for the replay's hot path.
///
/// It either validates a value ([`Scanner::skip`]) or validates it and appends its canonical text
/// ([`Scanner::copy`]) when the text is already canonical up to whitespace: keys in strictly
/// increasing byte order, integers of at most 15 digits, strings whose only escapes are the ones
/// [`write`] itself produces. Anything else — a float, `\u` escapes, unsorted or repeated keys,
/// nesting deeper than 64 — answers `None`, and the caller falls back to the full parser, which
/// gives the same canonical text the slow way (or the error). So the scanner never decides a
/// question differently from the parser; it only answers the common case sooner.
#[derive(Clone)]
pub struct Scanner<'a> {
    src: &'a str,
    text: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            src: text,
            text: text.as_bytes(),
            pos: 0,
        }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Skips whitespace and answers the next byte.
    pub fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.pos) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Consumes `b` (after whitespace) when it is next.
    pub fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// A string with no escapes in it: its content, borrowed from the text.
    #[inline]
    pub fn plain_str(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        let end = start + special(&self.text[start..])?;
        if self.text[end] != b'"' {
            return None;
        }
        self.pos = end + 1;
        // Both ends are ASCII bytes, so they are char boundaries.
        self.src.get(start..end)
    }

    /// Validates one value of any shape.
    pub fn skip(&mut self) -> Option<()> {
        self.value(None, 0)
    }

    /// Validates one value and appends its canonical text to `out`; `None` when the text is not
    /// already canonical (what was appended is then meaningless).
    pub fn copy(&mut self, out: &mut String) -> Option<()> {
        self.value(Some(out), 0)
    }

    /// The members of an object whose keys are not in `dropped`, copied as [`Scanner::copy`]
    /// would copy the object made of them alone; the dropped members are only validated.
    pub fn copy_object_without(&mut self, out: &mut String, dropped: &[&str]) -> Option<()> {
        self.object(Some(out), 0, dropped)
    }

    fn value(&mut self, out: Option<&mut String>, depth: usize) -> Option<()> {
        if depth > SCAN_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(out, depth, &[]),
            b'[' => self.array(out, depth),
            b'"' => self.string(out),
            b't' => self.literal("true", out),
            b'f' => self.literal("false", out),
            b'n' => self.literal("null", out),
            b'-' | b'0'..=b'9' => self.number(out),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, out: Option<&mut String>) -> Option<()> {
        if !self.text[self.pos..].starts_with(word.as_bytes()) {
            return None;
        }
        self.pos += word.len();
        if let Some(out) = out {
            out.push_str(word);
        }
        Some(())
    }

    fn string(&mut self, out: Option<&mut String>) -> Option<()> {
        let start = self.pos;
        self.pos += 1;
        let canonical = out.is_some();
        loop {
            let rest = &self.text[self.pos..];
            let at = special(rest)?;
            self.pos += at;
            match rest[at] {
                b'"' => break,
                b'\\' => {
                    let escaped = *self.text.get(self.pos + 1)?;
                    match escaped {
                        // The escapes the canonical writer emits itself.
                        b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => self.pos += 2,
                        b'/' if !canonical => self.pos += 2,
                        b'u' if !canonical => {
                            let hex = self.text.get(self.pos + 2..self.pos + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.pos += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        self.pos += 1;
        if let Some(out) = out {
            out.push_str(self.src.get(start..self.pos)?);
        }
        Some(())
    }

    fn number(&mut self, out: Option<&mut String>) -> Option<()> {
        let start = self.pos;
        let negative = self.text[self.pos] == b'-';
        if negative {
            self.pos += 1;
        }
        let digits = self.digits();
        if digits == 0 || (digits > 1 && self.text[self.pos - digits] == b'0') {
            return None;
        }
        let mut integer = true;
        if self.text.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        if matches!(self.text.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.text.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        // The parser refuses a number too large for a double; so must the scanner.
        if (!integer || digits > 15)
            && !self
                .src
                .get(start..self.pos)?
                .parse::<f64>()
                .is_ok_and(f64::is_finite)
        {
            return None;
        }
        if let Some(out) = out {
            let text = &self.text[start..self.pos];
            // JavaScript spells an integer below 1e15 as its digits; `-0` is `0`.
            if !integer || digits > 15 || text == b"-0" {
                return None;
            }
            out.push_str(self.src.get(start..self.pos)?);
        }
        Some(())
    }

    fn digits(&mut self) -> usize {
        let n = self.text[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        self.pos += n;
        n
    }

    fn array(&mut self, mut out: Option<&mut String>, depth: usize) -> Option<()> {
        self.pos += 1;
        if let Some(out) = out.as_deref_mut() {
            out.push('[');
        }
        if !self.eat(b']') {
            loop {
                self.value(out.as_deref_mut(), depth + 1)?;
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
                if let Some(out) = out.as_deref_mut() {
                    out.push(',');
                }
            }
        }
        if let Some(out) = out {
            out.push(']');
        }
        Some(())
    }

    fn object(
        &mut self,
        mut out: Option<&mut String>,
        depth: usize,
        dropped: &[&str],
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if let Some(out) = out.as_deref_mut() {
            out.push('{');
        }
        let mut previous: Option<&str> = None;
        if !self.eat(b'}') {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key_start = self.pos;
                let key = match out {
                    // Canonical order is the order of the unescaped keys: only plain keys can be
                    // compared as written.
                    Some(_) => Some(self.plain_str()?),
                    None => {
                        self.string(None)?;
                        None
                    }
                };
                if !self.eat(b':') {
                    return None;
                }
                match (out.as_deref_mut(), key) {
                    (Some(out), Some(key)) if !dropped.contains(&key) => {
                        if previous.is_some_and(|p| p >= key) {
                            return None;
                        }
                        if previous.is_some() {
                            out.push(',');
                        }
                        previous = Some(key);
                        out.push_str(self.src.get(key_start..key_start + key.len() + 2)?);
                        out.push(':');
                        self.value(Some(out), depth + 1)?;
                    }
                    _ => self.value(None, depth + 1)?,
                }
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
            }
        }
        if let Some(out) = out {
            out.push('}');
        }
        Some(())
    }
}

/// The first byte of `bytes` that ends a plain run inside a JSON string: a quote, a backslash or
/// a control character (invalid there). Eight bytes at a time: strings in requests are short, and
/// a general search routine costs more in setting up than it saves on them.
fn special(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let stop = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let mut at = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let x = u64::from_le_bytes(chunk.try_into().ok()?);
        // A flag is exact at the lowest flagged byte (borrows only run upwards from it).
        let found = zero_byte(x ^ (ONES * u64::from(b'"')))
            | zero_byte(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| stop(b))
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canon_text(text: &str) -> String {
        let mut out = String::new();
        write(&Node::parse(text).unwrap(), &mut out);
        out
    }

    fn canon_value(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        let mut out = String::new();
        write(&Node::from_value(&v), &mut out);
        out
    }

    #[test]
    fn integers_and_order() {
        for n in [
            "0",
            "-7",
            "123456789012345",
            "999999999999999",
            "1e15",
            "-1e16",
            "2.5",
            "1e-7",
        ] {
            let v: f64 = n.parse().unwrap();
            let mut out = String::new();
            write_number(v, &mut out);
            assert_eq!(out, js_number(v), "{n}");
        }
        assert_eq!(canon_text(r#"{"a":1,"b":2}"#), r#"{"a":1,"b":2}"#);
        assert_eq!(canon_text(r#"{"b":1,"a":2,"b":3}"#), r#"{"a":2,"b":3}"#);
    }

    #[test]
    fn sorted_numbers_folded_duplicates_last() {
        assert_eq!(
            canon_text(r#"{"b":[1.0,{"z":1,"a":2e0}],"a":"x\n\u0001"}"#),
            r#"{"a":"x\n\u0001","b":[1,{"a":2,"z":1}]}"#
        );
        assert_eq!(canon_text(r#"{"a":1,"a":2}"#), r#"{"a":2}"#);
        assert_eq!(canon_value(r#"{"a":1,"a":2}"#), r#"{"a":2}"#);
        assert_eq!(canon_text("1e21"), "1e+21");
        assert_eq!(canon_text("0.1"), "0.1");
        assert_eq!(canon_text("-0"), "0");
        assert_eq!(canon_text(r#""\u00e9\"""#), "\"é\\\"\"");
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-c\\PC]{0,3}", inner), 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// What the scanner says about `text`: whether it is JSON, and its canonical copy if the
    /// scanner made one.
    fn scan(text: &str) -> (bool, Option<String>) {
        let mut skip = Scanner::new(text);
        let valid = skip.skip().is_some() && skip.at_end();
        let mut copy = Scanner::new(text);
        let mut out = String::new();
        let copied = (copy.copy(&mut out).is_some() && copy.at_end()).then_some(out);
        (valid, copied)
    }

    #[test]
    fn scanner_copies_canonical_text_and_leaves_the_rest() {
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"x\n\"y\""}}"#,
            r#" { "a" : -12 , "b" : [ ] , "c" : { } } "#,
            "123456789012345",
            r#""\b\f\t\r""#,
        ] {
            assert_eq!(scan(text), (true, Some(canon_text(text))), "{text}");
        }
        // Valid, but not canonical as written: left to the parser.
        for text in [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            "1.0",
            "1e3",
            "-0",
            "1234567890123456",
            r#""\u0041""#,
            r#""a\/b""#,
            r#"{"\u0061":1}"#,
        ] {
            assert_eq!(scan(text), (true, None), "{text}");
        }
        // Not JSON at all.
        for text in [
            "",
            "{",
            "}",
            "[1,]",
            "{\"a\"}",
            "{\"a\":}",
            "01",
            "1.",
            "1e",
            "-",
            "+1",
            "tru",
            "\"\\x\"",
            "\"\\u12g4\"",
            "\"a\u{1}\"",
            "[1 2]",
            "{\"a\":1,}",
            "nul",
            "\"open",
        ] {
            assert_eq!(scan(text), (false, None), "{text:?}");
        }
        let deep = "[".repeat(SCAN_DEPTH + 2) + &"]".repeat(SCAN_DEPTH + 2);
        assert_eq!(
            scan(&deep),
            (false, None),
            "too deep for the scanner: the parser decides"
        );
        let mut out = String::new();
        let mut s = Scanner::new(r#"{"_meta":{"z":1.5},"b":2,"cursor":"c","a":1}"#);
        assert!(
            s.copy_object_without(&mut out, &["_meta", "cursor"])
                .is_none(),
            "a after b"
        );
        out.clear();
        let mut s = Scanner::new(r#"{"_meta":{"z":1.5},"a":2,"cursor":"\u0063","b":1}"#);
        assert!(
            s.copy_object_without(&mut out, &["_meta", "cursor"])
                .is_some()
        );
        assert_eq!(out, r#"{"a":2,"b":1}"#);
    }

    #[test]
    fn special_bytes_are_found_at_every_offset() {
        for len in 0..40 {
            for stop in [b'"', b'\\', 0x01, 0x1f] {
                let mut bytes = vec![b'a'; len];
                bytes.extend_from_slice(&[stop, b'"', 0x80, b'x']);
                assert_eq!(special(&bytes), Some(len), "{len} {stop}");
            }
            let plain: Vec<u8> = "é ~\u{7f}".bytes().cycle().take(len).collect();
            assert_eq!(special(&plain), None, "{len}");
        }
    }

    proptest! {
        #[test]
        fn text_and_value_views_agree(v in json()) {
            let text = v.to_string();
            prop_assert_eq!(canon_text(&text), canon_value(&text));
        }

        /// The scanner accepts exactly the JSON the parser accepts, and a canonical copy it makes
        /// is the canonical text.
        #[test]
        fn scanner_agrees_with_the_parser(v in json(), pretty in any::<bool>(), cut in any::<prop::sample::Index>(), junk in "[\\[\\]{}\",:0-9a-z .\\\\-]{0,3}") {
            let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            let (valid, copied) = scan(&text);
            prop_assert!(valid, "valid JSON refused: {}", text);
            if let Some(copied) = copied {
                prop_assert_eq!(copied, canon_text(&text));
            }
            // A damaged text is refused whenever the parser refuses it.
            let chars: Vec<char> = text.chars().collect();
            let at = cut.index(chars.len() + 1);
            let damaged: String = chars[..at]
                .iter()
                .chain(junk.chars().collect::<Vec<_>>().iter())
                .chain(chars.get(at + 1..).unwrap_or_default())
                .collect();
            let parsed = serde_json::from_str::<Value>(&damaged).is_ok();
            let (valid, copied) = scan(&damaged);
            prop_assert_eq!(valid, parsed, "scanner and parser disagree on {:?}", damaged);
            if let Some(copied) = copied {
                prop_assert_eq!(copied, canon_text(&damaged));
            }
        }

        /// Integers and plain strings under sorted keys — what clients send — take the fast path.
        #[test]
        fn canonical_shapes_are_copied(
            m in prop::collection::btree_map("[a-z_]{1,6}", prop_oneof![
                (-999_999_999_999_999i64..=999_999_999_999_999).prop_map(Value::from),
                "[^\"\\\\\\x00-\\x1f]{0,12}".prop_map(Value::String),
                any::<bool>().prop_map(Value::Bool),
            ], 0..6)
        ) {
            let v = Value::Object(m.into_iter().collect());
            let text = v.to_string();
            let (valid, copied) = scan(&text);
            prop_assert!(valid);
            prop_assert_eq!(copied, Some(canon_text(&text)));
        }
    }
}
