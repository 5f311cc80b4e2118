//! Lines that are not JSON-RPC frames (a batch array, JSON without `"jsonrpc":"2.0"`, a log line
//! on stdout). A line that holds JSON still has keys, so it gets the key-context walk: each
//! secret value is replaced where it stands, and its spelling is replaced wherever else it occurs
//! in the line (a log message that echoes a password). Then the shape rules run over the whole
//! line. Every other byte is kept — including for numeric secrets, which are swapped by position
//! (the reference re-serialises the whole line for those; positions make that unnecessary).

use std::ops::Range;

use super::json::{self, Scalar};
use super::keys::{MIN_SECRET_LEN, is_string_secret, numeric_secret};
use super::placeholder::{KEYCTX, overlaps, placeholder, placeholder_spans};
use super::walk::{HitFn, Inner, splice};
use crate::json::quote;

struct KeyHit {
    span: Range<usize>,
    secret: String,
    numeric: bool,
    path: String,
}

/// Passes over a line that keeps changing: the second is the one that matters (below), and a
/// bound keeps a pathological line from costing more.
const MAX_PASSES: usize = 4;

/// Redacts one raw line; `None` when nothing changed.
///
/// A pass can make a line readable that was not: a shape rule that takes out a secret holding a
/// control character leaves a line that is now JSON, and the key walk then finds what it could
/// not read before. The line is passed over again until nothing changes, so that redacting the
/// result once more changes nothing (docs/fuzzing.md, "Bugs found").
pub(super) fn redact(inner: &Inner, line: &str, hit: &mut HitFn<'_>) -> Option<String> {
    let mut out = redact_once(inner, line, hit)?;
    for _ in 1..MAX_PASSES {
        match redact_once(inner, &out, hit) {
            Some(next) => out = next,
            None => break,
        }
    }
    Some(out)
}

fn redact_once(inner: &Inner, line: &str, hit: &mut HitFn<'_>) -> Option<String> {
    let mut found: Vec<KeyHit> = Vec::new();
    let walked = json::walk(
        line,
        &|k| inner.key_ctx(k),
        false,
        |span, scalar, ctx, path| {
            if !ctx.sensitive {
                return;
            }
            match scalar {
                Scalar::Str { content, escaped } => {
                    if content.len() < MIN_SECRET_LEN {
                        return;
                    }
                    let value = Scalar::string_value(content, escaped);
                    if is_string_secret(ctx, &value, &inner.allow) {
                        found.push(KeyHit {
                            span,
                            secret: value.into_owned(),
                            numeric: false,
                            path: path.render(),
                        });
                    }
                }
                // Keys go through the shape rules over the whole line below.
                Scalar::Key { .. } => {}
                Scalar::Num(n) => {
                    if let Some(secret) = n
                        .parse::<f64>()
                        .ok()
                        .and_then(|f| numeric_secret(ctx, f, &inner.allow))
                    {
                        found.push(KeyHit {
                            span,
                            secret,
                            numeric: true,
                            path: path.render(),
                        });
                    }
                }
            }
        },
    );
    if walked.is_err() {
        found.clear();
    }
    // Numbers first, then strings: the order the reference reports them in.
    for numeric in [true, false] {
        for h in found.iter().filter(|h| h.numeric == numeric) {
            hit(KEYCTX, &h.secret, &|| h.path.clone());
        }
    }
    let edits: Vec<(Range<usize>, String)> = found
        .iter()
        .map(|h| (h.span.clone(), quote(&placeholder(KEYCTX, &h.secret))))
        .collect();
    let mut text = splice(line, &edits);
    let mut seen: Vec<&str> = Vec::new();
    for h in found.iter().filter(|h| !h.numeric) {
        if seen.contains(&h.secret.as_str()) {
            continue;
        }
        seen.push(&h.secret);
        // The spelling a JSON string gives the secret; the raw spelling differs only when the
        // secret holds characters JSON escapes, and swapping those raw would break the line.
        let quoted = quote(&h.secret);
        let spelled = &quoted[1..quoted.len() - 1];
        let current = text.as_deref().unwrap_or(line);
        if let Some(next) =
            replace_outside_placeholders(current, spelled, &placeholder(KEYCTX, &h.secret))
        {
            text = Some(next);
        }
    }
    let current = text.as_deref().unwrap_or(line);
    match inner.shapes().apply(current, &mut |rule, secret| {
        hit(rule, secret, &|| "raw".to_owned())
    }) {
        Some(shaped) => Some(shaped),
        None => text,
    }
}

/// Replaces every occurrence of `needle` that does not overlap a placeholder; `None` if none did.
fn replace_outside_placeholders(text: &str, needle: &str, with: &str) -> Option<String> {
    if needle.is_empty() || !text.contains(needle) {
        return None;
    }
    let spans = placeholder_spans(text);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut changed = false;
    for (at, _) in text.match_indices(needle) {
        let range = at..at + needle.len();
        if overlaps(&spans, &range) {
            continue;
        }
        out.push_str(&text[last..at]);
        out.push_str(with);
        last = range.end;
        changed = true;
    }
    if !changed {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use crate::redact::{RedactConfig, Redactor};

    #[test]
    fn a_line_made_json_by_a_pass_is_walked_in_the_same_call() {
        let config = RedactConfig::parse(r#"{"keys":["name"]}"#, "c").unwrap();
        let r = Redactor::with_config(&config);
        // The control character keeps the line from being JSON until its value is redacted.
        let line = "{\"name\":\"gzip\u{1}#-file\",\"arguments\":{\"name\":\"hello.txt.gz\"}}";
        let (once, n) = r.redact_raw_line(line);
        assert_eq!(n, 2, "{once}");
        assert!(!once.contains("hello.txt.gz"), "{once}");
        assert_eq!(r.redact_raw_line(&once), (once.clone(), 0));
    }
}
