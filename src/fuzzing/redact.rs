//! The redactor: idempotent on every path, agreeing between its text walk and its tree walk,
//! and growing a text by a bounded factor at most.

use std::sync::LazyLock;

use serde_json::Value;

use crate::json::Node;
use crate::jsonrpc::Frame;
use crate::redact::{RedactConfig, Redactor};

/// A config whose patterns can read placeholders and short enough to hit often: the hard case
/// for idempotence (its shortest match is three characters).
static WITH_CONFIG: LazyLock<Redactor> = LazyLock::new(|| {
    let config = RedactConfig::parse(
        r#"{"patterns":[{"name":"hex","regex":"\\b[0-9a-f]{8}\\b"},{"name":"word","regex":"bearer|REDACTED|[a-z]+:[0-9]","flags":"i"}],"keys":["name"],"allow":["public-value"]}"#,
        "fuzz",
    )
    .expect("the fuzz config is valid");
    Redactor::with_config(&config)
});

/// The input is read as a raw line, as plain text, as a frame when it is one and as a JSON value
/// when it is one, under the built-in rules and under [`WITH_CONFIG`]. Holds: a second pass
/// changes nothing and counts nothing; a frame's text walk gives the value the tree walk gives,
/// with the same count (built-ins); a redacted frame keeps its kind; the output is at most
/// twelve times the input plus a placeholder (a three-character secret becomes a 30-character
/// placeholder).
pub fn redactor(data: &[u8]) {
    let Some(text) = super::text(data) else {
        return;
    };
    let bound = 12 * text.len() + 64;
    for (builtin, r) in [(true, &Redactor::builtin()), (false, &*WITH_CONFIG)] {
        let (once, _) = r.redact_raw_line(text);
        assert!(once.len() <= bound, "raw line grew to {} bytes", once.len());
        assert_eq!(
            r.redact_raw_line(&once),
            (once.clone(), 0),
            "raw line: {text:?}"
        );

        let (once, _) = r.redact_text(text);
        assert!(once.len() <= bound, "text grew to {} bytes", once.len());
        assert_eq!(r.redact_text(&once), (once.clone(), 0), "text: {text:?}");

        if let Some(frame) = Frame::parse(text) {
            let (tree, n) = r.redact_value(&frame.value());
            match r.redact_frame(&frame) {
                None => {
                    if builtin && !repeats_a_key(text) {
                        assert_eq!(n, 0, "the tree walk found secrets the text walk did not");
                    }
                }
                Some((redacted, m)) => {
                    assert!(redacted.text().len() <= bound);
                    assert_eq!(redacted.kind(), frame.kind());
                    assert!(
                        r.redact_frame(&redacted).is_none(),
                        "second pass changed {}",
                        redacted.text()
                    );
                    // A repeated key is redacted at each occurrence in the text, while the
                    // tree keeps only the last: counts compare only without repeats.
                    if builtin && !repeats_a_key(text) {
                        assert_eq!(m, n, "text and tree walks count differently");
                        assert_eq!(redacted.value(), tree, "text and tree walks differ");
                    }
                }
            }
        }
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            let (once, _) = r.redact_value(&value);
            assert_eq!(r.redact_value(&once), (once.clone(), 0), "value: {text:?}");
        }
    }
}

/// Whether some object in the JSON text holds a key twice.
fn repeats_a_key(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).trim();
    // Read as the frame's value is: a number past a double (which the parser refuses) as null.
    let tolerant = crate::json::number::with_infinities_as_null(text);
    let Ok(root) = Node::parse(tolerant.as_deref().unwrap_or(text)) else {
        return false;
    };
    let mut stack = vec![&root];
    while let Some(node) = stack.pop() {
        match node {
            Node::Arr(items) => stack.extend(items),
            Node::Obj(members) => {
                let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_ref()).collect();
                keys.sort_unstable();
                if keys.windows(2).any(|w| w[0] == w[1]) {
                    return true;
                }
                stack.extend(members.iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
    false
}
