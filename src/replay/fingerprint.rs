//! What a request is matched on: its fingerprint.
//!
//! Components are joined with U+0000, which can appear neither in a method name nor in JSON text,
//! so no crafted tool name or argument can make two different requests collide. Canonical JSON
//! (sorted keys, numbers as JavaScript spells them) makes `{"a":1.0,"b":2}` and `{"b":2,"a":1}`
//! the same request, as they are to the reference.
//!
//! | method | fingerprint |
//! |---|---|
//! | `initialize`, `ping`, `tools/list`, `resources/list`, `prompts/list`, `resources/templates/list` | the method alone |
//! | `tools/call` | name and arguments, plus the MRTR retry fields when present |
//! | anything else | method and params without top-level `_meta` and `cursor` |
//!
//! Callers hand in params that were already redacted (when the cassette was) and had declared
//! volatile fields dropped: the order the recorder applied them in.

use serde_json::{Map, Value};

use crate::json::{Node, Scanner, canonical};

/// Methods matched on their name alone: their params (client info, cursors) say nothing about
/// which answer the client wants.
pub const METHOD_ONLY: [&str; 6] = [
    "initialize",
    "ping",
    "tools/list",
    "resources/list",
    "prompts/list",
    "resources/templates/list",
];

/// Reads with no side effect whose last recording stays a true answer however often a client asks
/// again (beyond the reference, which misses on the second `tools/list`).
pub const IDEMPOTENT: [&str; 6] = [
    "initialize",
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// The MRTR fields a retry carries beside its ordinary params.
pub const MRTR_FIELDS: [&str; 2] = ["inputResponses", "requestState"];

pub const TOOLS_CALL: &str = "tools/call";
pub const TASKS_GET: &str = "tasks/get";

const SEP: char = '\u{0}';

/// The fingerprint of a request whose params are already in matching shape.
pub fn fingerprint(method: &str, params: Option<&Value>) -> String {
    if METHOD_ONLY.contains(&method) {
        return method.to_owned();
    }
    let node = params.map(Node::from_value);
    fingerprint_node(method, node.as_ref())
}

/// The fingerprint of a request read straight from its params' JSON text (the hot path: no
/// [`Value`] is built). `None` when the text is not JSON.
pub fn fingerprint_text(method: &str, params: Option<&str>) -> Option<String> {
    if METHOD_ONLY.contains(&method) {
        return Some(method.to_owned());
    }
    let node = match params {
        Some(text) => Some(Node::parse(text).ok()?),
        None => None,
    };
    Some(fingerprint_node(method, node.as_ref()))
}

/// Appends the fingerprint of a request to `out` straight from its params' text, as
/// [`fingerprint_text`] would compute it, without building a tree: the hot path for requests sent
/// in canonical shape (what SDK clients send). `false` when the text is not in that shape (see
/// [`Scanner`]), and the caller computes it the slow way.
pub fn fingerprint_into(method: &str, params: Option<&str>, out: &mut String) -> bool {
    match params {
        None => {
            absent_params_into(method, out);
            true
        }
        Some(text) => {
            let mut scan = Scanner::new(text);
            scan_params_into(method, &mut scan, out, &mut PartSpans::default()).is_some()
                && scan.at_end()
        }
    }
}

/// [`fingerprint_into`] over the params value `scan` is at, reading past it: the request's line
/// is read once, fingerprint included. `None` leaves `scan` anywhere and `out` meaningless.
pub fn scan_params_into(
    method: &str,
    scan: &mut Scanner<'_>,
    out: &mut String,
    parts: &mut PartSpans,
) -> Option<()> {
    *parts = PartSpans::default();
    if scan.peek()? == b'n' {
        scan.skip()?;
        absent_params_into(method, out);
        return Some(());
    }
    if METHOD_ONLY.contains(&method) {
        out.push_str(method);
        return scan.skip();
    }
    if method == TOOLS_CALL {
        return tools_call_into(scan, out, parts);
    }
    out.push_str(method);
    out.push(SEP);
    let copied = Copied::start(scan, out);
    scan.copy_object_without(out, &["_meta", "cursor"])?;
    parts.note(1, copied.verbatim(scan, out));
    Some(())
}

/// Where the fingerprint's parts after the method (the params; or a tool's name and arguments)
/// were read in the text the scanner went through, for those copied into the fingerprint byte
/// for byte. Request shapes cut their holes there (see `crate::replay::shape`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartSpans {
    /// Parts 1 and 2: where each starts in the text, and its length.
    spans: [Option<(usize, usize)>; 2],
}

impl PartSpans {
    fn note(&mut self, part: usize, span: Option<(usize, usize)>) {
        if let Some(slot) = self.spans.get_mut(part - 1) {
            *slot = span;
        }
    }

    /// Part `part` (1 or 2) of the fingerprint: where it starts in the text, and its length.
    pub fn get(&self, part: usize) -> Option<(usize, usize)> {
        *self.spans.get(part.checked_sub(1)?)?
    }

    /// The parts found, numbered as in the fingerprint.
    pub fn iter(&self) -> impl Iterator<Item = (u8, (usize, usize))> + '_ {
        (1..=2_u8).filter_map(|k| Some((k, self.get(usize::from(k))?)))
    }
}

/// A value about to be copied into a fingerprint: where it started in the text and in the copy.
struct Copied {
    text: usize,
    out: usize,
}

impl Copied {
    fn start(scan: &mut Scanner<'_>, out: &str) -> Copied {
        // The value starts after any whitespace; so does its copy.
        let _ = scan.peek();
        Copied {
            text: scan.pos(),
            out: out.len(),
        }
    }

    /// Where the value stands in the text, when its copy is the same bytes.
    fn verbatim(&self, scan: &Scanner<'_>, out: &str) -> Option<(usize, usize)> {
        let read = scan.text().get(self.text..scan.pos())?;
        (out.get(self.out..)? == read).then_some((self.text, read.len()))
    }
}

fn absent_params_into(method: &str, out: &mut String) {
    out.push_str(method);
    if !METHOD_ONLY.contains(&method) {
        out.push(SEP);
        out.push_str("{}");
    }
}

/// `tools/call` params with `name` (a plain string) before `arguments`, no MRTR fields.
fn tools_call_into(scan: &mut Scanner<'_>, out: &mut String, parts: &mut PartSpans) -> Option<()> {
    if !scan.eat(b'{') {
        return None;
    }
    let (mut name, mut arguments) = (None, false);
    if !scan.eat(b'}') {
        loop {
            let key = scan.plain_str()?;
            if !scan.eat(b':') {
                return None;
            }
            match key {
                "name" if name.is_none() => {
                    let read = scan.plain_str()?;
                    let at = read.as_ptr() as usize - scan.text().as_ptr() as usize;
                    parts.note(1, Some((at, read.len())));
                    name = Some(read);
                }
                "arguments" if !arguments => {
                    arguments = true;
                    out.push_str(TOOLS_CALL);
                    out.push(SEP);
                    out.push_str(name?);
                    out.push(SEP);
                    if scan.peek()? == b'n' {
                        scan.skip()?;
                        out.push_str("{}");
                    } else {
                        let copied = Copied::start(scan, out);
                        scan.copy(out)?;
                        parts.note(2, copied.verbatim(scan, out));
                    }
                }
                "name" | "arguments" => return None,
                _ if MRTR_FIELDS.contains(&key) => return None,
                _ => scan.skip()?,
            }
            if scan.eat(b'}') {
                break;
            }
            if !scan.eat(b',') {
                return None;
            }
        }
    }
    if !arguments {
        out.push_str(TOOLS_CALL);
        out.push(SEP);
        out.push_str(name?);
        out.push(SEP);
        out.push_str("{}");
    }
    Some(())
}

/// The fingerprint over a borrowed tree of params already in matching shape.
pub fn fingerprint_node(method: &str, params: Option<&Node<'_>>) -> String {
    if METHOD_ONLY.contains(&method) {
        return method.to_owned();
    }
    let mut fp = String::with_capacity(64);
    if method == TOOLS_CALL {
        if let Some(p @ Node::Obj(members)) = params {
            fp.push_str(TOOLS_CALL);
            fp.push(SEP);
            match p.get("name") {
                Some(Node::Str(name)) => fp.push_str(name),
                Some(name) => fp.push_str(&name.js_string()),
                None => fp.push_str("undefined"),
            }
            fp.push(SEP);
            match p.get("arguments") {
                None | Some(Node::Null) => fp.push_str("{}"),
                Some(args) => canonical::write(args, &mut fp),
            }
            if members
                .iter()
                .any(|(k, _)| MRTR_FIELDS.contains(&k.as_ref()))
            {
                fp.push(SEP);
                canonical::write_members(
                    members
                        .iter()
                        .filter(|(k, _)| MRTR_FIELDS.contains(&k.as_ref()))
                        .map(|(k, v)| (k.as_ref(), v)),
                    &mut fp,
                );
            }
            return fp;
        }
    }
    fp.push_str(method);
    fp.push(SEP);
    let kept = |k: &str| k != "_meta" && k != "cursor";
    match params {
        Some(Node::Obj(members)) => canonical::write_members(
            members
                .iter()
                .filter(|(k, _)| kept(k))
                .map(|(k, v)| (k.as_ref(), v)),
            &mut fp,
        ),
        // The reference spreads params into an object, so an array is keyed by index.
        Some(Node::Arr(items)) => {
            let keys: Vec<String> = (0..items.len()).map(|i| i.to_string()).collect();
            canonical::write_members(keys.iter().map(String::as_str).zip(items.iter()), &mut fp);
        }
        _ => fp.push_str("{}"),
    }
    fp
}

/// The retry part of params (`inputResponses`, `requestState` as present); `None` when the request
/// is not an MRTR retry.
pub fn mrtr_part(params: Option<&Value>) -> Option<Value> {
    let Some(Value::Object(p)) = params else {
        return None;
    };
    let mut part = Map::new();
    for key in MRTR_FIELDS {
        if let Some(v) = p.get(key) {
            part.insert(key.to_owned(), v.clone());
        }
    }
    (!part.is_empty()).then_some(Value::Object(part))
}

/// Whether a request is an MRTR retry (it carries either retry field).
pub fn is_mrtr_retry(params: Option<&Value>) -> bool {
    matches!(params, Some(Value::Object(p)) if MRTR_FIELDS.iter().any(|k| p.contains_key(*k)))
}

/// The display form of a fingerprint (NUL shown as `␀`), for messages.
pub fn display(fp: &str) -> String {
    fp.replace(SEP, "␀")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fp(method: &str, params: Value) -> String {
        display(&fingerprint(method, Some(&params)))
    }

    #[test]
    fn method_only() {
        assert_eq!(fp("tools/list", json!({"cursor": "x"})), "tools/list");
        assert_eq!(fingerprint("initialize", None), "initialize");
    }

    #[test]
    fn tools_call_is_canonical() {
        let a = fp(
            "tools/call",
            json!({"name": "add", "arguments": {"b": 2, "a": 1.0}, "_meta": {"progressToken": 4}}),
        );
        let b = fp(
            "tools/call",
            json!({"arguments": {"a": 1, "b": 2}, "name": "add"}),
        );
        assert_eq!(a, b);
        assert_eq!(a, r#"tools/call␀add␀{"a":1,"b":2}"#);
        assert_eq!(fp("tools/call", json!({"name": "x"})), "tools/call␀x␀{}");
        assert_eq!(
            fp("tools/call", json!({"name": "x", "arguments": null})),
            "tools/call␀x␀{}"
        );
        assert_eq!(
            fp("tools/call", json!({"arguments": {}})),
            "tools/call␀undefined␀{}"
        );
    }

    #[test]
    fn retries_differ_from_their_call() {
        let call = fp("tools/call", json!({"name": "x", "arguments": {}}));
        let retry = fp(
            "tools/call",
            json!({"name": "x", "arguments": {}, "inputResponses": {"k": 1}}),
        );
        assert_ne!(call, retry);
        assert_eq!(retry, r#"tools/call␀x␀{}␀{"inputResponses":{"k":1}}"#);
        assert!(is_mrtr_retry(Some(&json!({"requestState": "s"}))));
        assert!(!is_mrtr_retry(Some(&json!({"name": "x"}))));
    }

    #[test]
    fn generic_drops_meta_and_cursor() {
        assert_eq!(
            fp(
                "resources/read",
                json!({"uri": "a", "_meta": {"x": 1}, "cursor": "c"})
            ),
            r#"resources/read␀{"uri":"a"}"#
        );
        assert_eq!(display(&fingerprint("custom/x", None)), "custom/x␀{}");
        assert_eq!(fp("custom/x", json!({})), "custom/x␀{}");
        // A tools/call with no params object falls to the generic rule, as in the reference.
        assert_eq!(display(&fingerprint("tools/call", None)), "tools/call␀{}");
    }

    #[test]
    fn text_and_value_paths_agree() {
        for (method, params) in [
            (
                "tools/call",
                r#"{"name":"a","arguments":{"y":[1.0,{"b":null,"a":"\u00e9"}],"x":true},"_meta":{"p":1}}"#,
            ),
            (
                "tools/call",
                r#"{"name":7,"requestState":"s","inputResponses":{"k":{"z":1,"a":2}}}"#,
            ),
            ("resources/read", r#"{"uri":"x","cursor":"c","_meta":{}}"#),
            ("custom", r#"[1,{"a":2}]"#),
            ("custom", "5"),
        ] {
            let v: Value = serde_json::from_str(params).unwrap();
            assert_eq!(
                fingerprint_text(method, Some(params)).unwrap(),
                fingerprint(method, Some(&v)),
                "{params}"
            );
        }
        assert_eq!(
            fingerprint_text("custom", None).unwrap(),
            fingerprint("custom", None)
        );
        assert!(fingerprint_text("custom", Some("{")).is_none());
    }

    /// The line-level fast path (`quick_request` fingerprinting on the way, or
    /// `fingerprint_into` afterwards) either declines or agrees with the parsed path.
    fn fast_agrees(method: &str, params: &str) -> bool {
        let expected = fingerprint_text(method, Some(params)).unwrap();
        let mut out = String::new();
        let direct = fingerprint_into(method, Some(params), &mut out);
        if direct {
            assert_eq!(display(&out), display(&expected), "{method} {params}");
        }
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":{},"params":{params}}}"#,
            json!(method)
        );
        let mut fp = String::new();
        let quick = crate::replay::wire::quick_request(&line, &mut fp, |_| true).unwrap();
        assert_eq!(quick.params, Some(params).filter(|p| *p != "null"));
        assert_eq!(quick.fingerprinted, direct, "{line}");
        if quick.fingerprinted {
            assert_eq!(display(&fp), display(&expected), "{line}");
            // Where the parts were read, the line holds their very bytes: request shapes cut
            // their holes there.
            for (k, (at, len)) in quick.parts.iter() {
                assert_eq!(
                    line.get(at..at + len),
                    fp.split(SEP).nth(usize::from(k)),
                    "part {k} of {line}"
                );
            }
        }
        direct
    }

    #[test]
    fn fast_path_agrees_or_declines() {
        for (method, params, fast) in [
            (
                "tools/call",
                r#"{"name":"echo","arguments":{"a":1,"b":"x"}}"#,
                true,
            ),
            (
                "tools/call",
                r#"{"_meta":{"progressToken":1.5},"name":"echo","arguments":{"a":1}}"#,
                true,
            ),
            ("tools/call", r#"{"name":"echo"}"#, true),
            ("tools/call", r#"{"name":"echo","arguments":null}"#, true),
            (
                "tools/call",
                r#"{"arguments":{"a":1},"name":"echo"}"#,
                false,
            ),
            (
                "tools/call",
                r#"{"name":"echo","arguments":{"b":1,"a":2}}"#,
                false,
            ),
            (
                "tools/call",
                r#"{"name":"echo","arguments":{"a":1.5}}"#,
                false,
            ),
            (
                "tools/call",
                r#"{"name":"e\u0063ho","arguments":{}}"#,
                false,
            ),
            (
                "tools/call",
                r#"{"name":"echo","arguments":{},"requestState":"s"}"#,
                false,
            ),
            (
                "tools/call",
                r#"{"name":"echo","name":"other","arguments":{}}"#,
                false,
            ),
            ("tools/call", r#"{"name":7,"arguments":{}}"#, false),
            ("tools/call", "null", true),
            ("tools/list", r#"{"cursor":"abc"}"#, true),
            (
                "initialize",
                r#"{"protocolVersion":"2025-06-18","capabilities":{"x":1.5}}"#,
                true,
            ),
            (
                "resources/read",
                r#"{"uri":"file:///a","_meta":{"k":[1.5]},"cursor":"c"}"#,
                true,
            ),
            ("resources/read", r#"{"uri":"file:///a","a":1}"#, false),
            ("custom", "[1,2]", false),
            ("custom", "5", false),
        ] {
            assert_eq!(fast_agrees(method, params), fast, "{method} {params}");
        }
    }

    proptest::proptest! {
        #[test]
        fn fast_path_on_any_arguments(v in proptest::collection::btree_map("[a-z_]{1,4}", proptest::prelude::any::<i32>(), 0..5), name in "[a-z/_-]{1,8}", meta_first in proptest::prelude::any::<bool>()) {
            let args = Value::Object(v.into_iter().map(|(k, n)| (k, json!(n))).collect());
            let params = if meta_first {
                format!(r#"{{"_meta":{{"progressToken":"t"}},"name":{},"arguments":{args}}}"#, json!(name))
            } else {
                format!(r#"{{"name":{},"arguments":{args}}}"#, json!(name))
            };
            proptest::prop_assert!(fast_agrees("tools/call", &params));
            proptest::prop_assert!(fast_agrees("resources/read", &args.to_string()));
        }

        /// Key order, `_meta` and `1` versus `1.0` never change a fingerprint; the arguments do.
        #[test]
        fn fingerprint_invariants(
            keys in proptest::collection::btree_set("[a-z]{1,6}", 1..6),
            n in 0i64..1_000_000,
            meta in "[a-z]{0,8}",
        ) {
            let keys: Vec<String> = keys.into_iter().collect();
            let mut forward = Map::new();
            let mut backward = Map::new();
            for (i, k) in keys.iter().enumerate() {
                forward.insert(k.clone(), json!(i as i64 + n));
            }
            for (i, k) in keys.iter().enumerate().rev() {
                backward.insert(k.clone(), json!((i as i64 + n) as f64));
            }
            let a = json!({"name": "t", "arguments": forward, "_meta": {"progressToken": meta}});
            let b = json!({"_meta": {}, "arguments": backward, "name": "t"});
            proptest::prop_assert_eq!(fingerprint("tools/call", Some(&a)), fingerprint("tools/call", Some(&b)));
            let text = fingerprint_text("tools/call", Some(&b.to_string())).unwrap();
            proptest::prop_assert_eq!(text, fingerprint("tools/call", Some(&a)));
            let mut c = a.clone();
            c["arguments"][&keys[0]] = json!("changed");
            proptest::prop_assert_ne!(fingerprint("tools/call", Some(&c)), fingerprint("tools/call", Some(&a)));
        }
    }
}
