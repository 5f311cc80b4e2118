//! The frame scanner: the JSON toolkit's fast readers and the JSON-RPC frame view, each held to
//! the slow path it stands in for (serde_json, a byte-by-byte search).

use serde_json::Value;

use crate::json::canonical::{stable_stringify, write};
use crate::json::{Node, Scanner, delimiter};
use crate::jsonrpc::{Frame, Line, classify};

/// How deep the [`Scanner`] follows nesting before declining (its own `SCAN_DEPTH`).
const SCAN_DEPTH: usize = 64;

/// Holds, for any input: the vectorised delimiter searches answer what a plain loop answers; the
/// scanner accepts only JSON the parser accepts, and everything the parser accepts unless it
/// nests deeper than the scanner follows; a canonical copy the scanner makes is the canonical
/// text, which is the same whether written from a borrowed tree or a parsed value; the shallow
/// frame reader used on cassette lines agrees with the validating one on kind, id, method and
/// text; a frame's text is the input minus a BOM and surrounding whitespace.
pub fn frame_scanner(data: &[u8]) {
    let data = super::bounded(data);
    delimiters(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = serde_json::from_str::<Value>(text);

    let mut skip = Scanner::new(text);
    let valid = skip.skip().is_some() && skip.at_end();
    match &parsed {
        Ok(_) if !valid => assert!(
            Node::parse(text).is_ok_and(|node| depth(&node) > SCAN_DEPTH),
            "the scanner refused JSON the parser accepts: {text:?}"
        ),
        Err(e) if valid => panic!("the scanner accepted what the parser refuses ({e}): {text:?}"),
        _ => {}
    }
    if let Ok(value) = &parsed {
        let node = Node::parse(text).expect("the parser accepted this text");
        let mut from_node = String::new();
        write(&node, &mut from_node);
        assert_eq!(
            from_node,
            stable_stringify(value),
            "canonical text differs between tree and value"
        );
        let mut copy = Scanner::new(text);
        let mut out = String::new();
        if copy.copy(&mut out).is_some() && copy.at_end() {
            assert_eq!(
                out, from_node,
                "the scanner's canonical copy is not canonical"
            );
        }
    }

    let frame = Frame::parse(text);
    if let Some(f) = &frame {
        let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text).trim();
        assert_eq!(f.text(), trimmed);
        assert!(matches!(classify(text), Line::Frame(_)));
    } else {
        assert!(matches!(classify(text), Line::Raw(ref raw) if raw == text));
    }
    if parsed.is_ok() {
        let shallow = Frame::from_valid_json(text);
        let view = |f: &Frame| {
            (
                f.kind(),
                f.id().cloned(),
                f.method().map(str::to_owned),
                f.text().to_owned(),
            )
        };
        assert_eq!(
            frame.as_ref().map(view),
            shallow.as_ref().map(view),
            "the shallow frame reader disagrees with the validating one on {text:?}"
        );
    }
}

/// How far below the root the deepest value sits (the root is 0, a member of it 1), as the
/// scanner counts before declining.
/// Read from the borrowed tree, which keeps repeated keys as the scanner sees them.
fn depth(node: &Node<'_>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(node, 0)];
    while let Some((n, d)) = stack.pop() {
        deepest = deepest.max(d);
        match n {
            Node::Arr(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Node::Obj(members) => stack.extend(members.iter().map(|(_, i)| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

fn delimiters(data: &[u8]) {
    let find = |stop: &dyn Fn(u8) -> bool| data.iter().position(|&b| stop(b));
    assert_eq!(delimiter::newline(data), find(&|b| b == b'\n'));
    assert_eq!(delimiter::quote(data), find(&|b| b == b'"'));
    assert_eq!(
        delimiter::quote_or_backslash(data),
        find(&|b| b == b'"' || b == b'\\')
    );
    assert_eq!(
        delimiter::plain_run_end(data),
        find(&|b| b == b'"' || b == b'\\' || b < 0x20)
    );
}
