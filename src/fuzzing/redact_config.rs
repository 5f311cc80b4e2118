//! The redaction-config parser (`--redact-config`), and the user patterns it compiles.

use serde_json::{Value, json};

use crate::jsonrpc::Frame;
use crate::redact::placeholder::placeholder_spans;
use crate::redact::{RedactConfig, Redactor};

/// Text every accepted config is run over: secrets of the built-in shapes, key context, a
/// placeholder already in place and plain words a user pattern may claim.
const SAMPLE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"user":"ada","password":"correct-horse-battery","note":"Bearer abcdefghijklmnop [REDACTED:github:0123abcd] key: 12345678 public-value"}}}"#;

/// Parses the input as a config. When it is accepted: the hash is 64 lowercase hex digits
/// exactly when the config declares something; the config rebuilt from what it reports (its
/// patterns as written, its keys lowercased) parses to the same hash; and redaction under it is
/// idempotent on a sample frame and on the input itself.
pub fn redact_config(data: &[u8]) {
    let Some(text) = super::text(data) else {
        return;
    };
    let Ok(config) = RedactConfig::parse(text, "fuzz") else {
        return;
    };
    let hash = config.hash();
    match &hash {
        None => assert!(config.is_empty()),
        Some(h) => {
            assert!(!config.is_empty());
            assert!(
                h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{h}"
            );
        }
    }
    let patterns: Vec<Value> = config
        .patterns()
        .iter()
        .map(|p| json!({"name": p.name, "regex": p.regex, "flags": p.flags}))
        .collect();
    let rebuilt = json!({
        "patterns": patterns,
        "keys": config.keys().collect::<Vec<_>>(),
        "allow": config.allow(),
    });
    let again = RedactConfig::from_value(&rebuilt, "fuzz")
        .unwrap_or_else(|e| panic!("a config rebuilt from an accepted one is refused: {e}"));
    assert_eq!(again.hash(), hash, "the hash depends on spelling");

    let r = Redactor::with_config(&config);
    assert_eq!(r.config_hash(), hash.as_deref());
    let frame = Frame::parse(SAMPLE).expect("the sample is a frame");
    if let Some((redacted, _)) = r.redact_frame(&frame) {
        if let Some((again, _)) = r.redact_frame(&redacted) {
            // As for raw lines below: only a pattern that peels a run past the round cap.
            only_adds_placeholders(redacted.text(), again.text(), SAMPLE);
        }
    }
    for line in [SAMPLE, text] {
        let (once, _) = r.redact_raw_line(line);
        let (twice, _) = r.redact_raw_line(&once);
        if twice != once {
            // Only a user pattern whose placeholder opens its own next match, peeling a run one
            // character per round past the round cap, may leave work for a second pass: and
            // that pass may only add placeholders (docs/redaction.md, "Redacting twice changes nothing").
            only_adds_placeholders(&once, &twice, line);
        }
    }
}

/// `after` is `before` with some of its plain text replaced by placeholders: every placeholder
/// of `before` is kept, in order, and the plain text left is a subsequence of `before`'s.
fn only_adds_placeholders(before: &str, after: &str, line: &str) {
    let split = |s: &str| {
        let spans = placeholder_spans(s);
        let holders: Vec<String> = spans.iter().map(|r| s[r.clone()].to_owned()).collect();
        let mut plain = String::new();
        let mut last = 0;
        for r in &spans {
            plain.push_str(&s[last..r.start]);
            last = r.end;
        }
        plain.push_str(&s[last..]);
        (holders, plain)
    };
    let (held_before, plain_before) = split(before);
    let (held_after, plain_after) = split(after);
    let mut kept = held_after.iter();
    assert!(
        held_before.iter().all(|h| kept.any(|a| a == h)),
        "a second pass changed a placeholder: {line:?}"
    );
    let mut left = plain_before.chars();
    assert!(
        plain_after.chars().all(|c| left.any(|b| b == c)),
        "a second pass exposed text: {line:?}"
    );
}
