//! The placeholder a secret becomes, `[REDACTED:<rule>:<hash8>]`, and the few facts about text
//! that the rules share: where placeholders already sit, how long a string is in the reference's
//! units (UTF-16 code units), and how a secret is masked in a report.
//!
//! `hash8` is the first 8 lowercase hex digits of the SHA-256 of the secret's UTF-8 bytes. It must
//! stay exactly that: replay redacts a live request and expects the placeholder the recording
//! holds, and cassettes written by the reference carry the same digest.

use std::fmt::Write as _;
use std::ops::Range;

use sha2::{Digest, Sha256};

/// The rule name written for a value found by key context.
pub(crate) const KEYCTX: &str = "keyctx";

/// First 8 hex digits of SHA-256 over the secret's UTF-8 bytes.
pub(crate) fn hash8(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let mut out = String::with_capacity(8);
    for byte in &digest[..4] {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// `[REDACTED:<rule>:<hash8>]`.
pub(crate) fn placeholder(rule: &str, secret: &str) -> String {
    format!("[REDACTED:{rule}:{}]", hash8(secret))
}

const OPEN: &str = "[REDACTED:";

/// Length of a placeholder starting at `at` (which must hold `[REDACTED:`), if one does.
fn placeholder_len_at(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + OPEN.len();
    let name_start = i;
    while i < bytes.len() && bytes[i].is_ascii_lowercase() {
        i += 1;
    }
    if i == name_start || bytes.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    let hex = bytes.get(i..i + 8)?;
    if !hex
        .iter()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    {
        return None;
    }
    i += 8;
    (bytes.get(i) == Some(&b']')).then_some(i + 1 - at)
}

/// Whether the whole string is one placeholder (our own output, never redacted again); the
/// redactor itself asks per position ([`placeholder_spans`]), the tests ask this.
#[cfg(test)]
pub(crate) fn is_placeholder(s: &str) -> bool {
    s.starts_with(OPEN) && placeholder_len_at(s.as_bytes(), 0) == Some(s.len())
}

/// Whether the string holds a placeholder anywhere.
pub(crate) fn contains_placeholder(s: &str) -> bool {
    !placeholder_spans(s).is_empty()
}

/// Byte ranges of every placeholder in `s`, in order.
pub(crate) fn placeholder_spans(s: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(found) = s[from..].find(OPEN) {
        let at = from + found;
        match placeholder_len_at(bytes, at) {
            Some(len) => {
                spans.push(at..at + len);
                from = at + len;
            }
            None => from = at + 1,
        }
    }
    spans
}

/// Whether `range` overlaps any of the (sorted) spans.
pub(crate) fn overlaps(spans: &[Range<usize>], range: &Range<usize>) -> bool {
    // Spans are few (usually none); a linear pass is cheaper than a search.
    spans
        .iter()
        .any(|s| range.start < s.end && s.start < range.end)
}

/// Length in UTF-16 code units: the reference's `string.length`, which its thresholds and
/// excerpts count in.
pub(crate) fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char::len_utf16).sum()
}

/// How many leading characters of a rule's match are its fixed literal prefix (`ghp_`, `AKIA`,
/// `eyJ`, `sk-`): all a report may show, since they say which kind of secret it is and nothing of
/// it. Rules whose match is arbitrary (key context, bearer, URL passwords, user patterns, whose
/// start may be anything) show nothing.
fn literal_prefix(rule: &str) -> usize {
    match rule {
        "jwt" | "openai" => 3,
        "github" | "anthropic" | "slack" | "aws" | "google" | "privatekey" => 4,
        _ => 0,
    }
}

/// The excerpt a scan prints: the rule's literal prefix (see [`literal_prefix`]), then up to 16
/// `*`, then the length.
pub(crate) fn mask_secret(secret: &str, rule: &str) -> String {
    let total = utf16_len(secret);
    let mut visible = String::new();
    let mut visible_units = 0;
    let shown = literal_prefix(rule);
    for c in secret.chars() {
        if visible_units + c.len_utf16() > shown {
            break;
        }
        visible_units += c.len_utf16();
        visible.push(c);
    }
    let hidden = total.saturating_sub(visible_units).min(16);
    format!("{visible}{} ({total} chars)", "*".repeat(hidden))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_sha256_prefix() {
        // sha256("abc") = ba7816bf...
        assert_eq!(hash8("abc"), "ba7816bf");
        assert_eq!(placeholder("aws", "abc"), "[REDACTED:aws:ba7816bf]");
    }

    #[test]
    fn recognises_placeholders() {
        assert!(is_placeholder("[REDACTED:keyctx:0123abcd]"));
        assert!(!is_placeholder("[REDACTED:keyctx:0123abcd] "));
        assert!(!is_placeholder("[REDACTED:Key:0123abcd]"));
        assert!(!is_placeholder("[REDACTED:key:0123abcg]"));
        assert!(!is_placeholder("[REDACTED::0123abcd]"));
        let s = "a [REDACTED:x:00000000][REDACTED:y:11111111] [REDACTED:z:1] b";
        assert_eq!(placeholder_spans(s), vec![2..23, 23..44]);
        assert!(overlaps(&placeholder_spans(s), &(22..23)));
        assert!(!overlaps(&placeholder_spans(s), &(44..46)));
    }

    #[test]
    fn masks() {
        assert_eq!(mask_secret("hunter22", "keyctx"), "******** (8 chars)");
        assert_eq!(
            mask_secret("abcd1234efgh", "bearer"),
            "************ (12 chars)"
        );
        assert_eq!(
            mask_secret("ghp_NOTAREALTOKENFORTESTSONLY0000000000", "github"),
            "ghp_**************** (39 chars)"
        );
        // A user pattern's match may start anywhere in a secret: nothing of it is shown.
        assert_eq!(mask_secret("ab", "x"), "** (2 chars)");
        assert_eq!(
            mask_secret("sk-abcdefgh", "openai"),
            "sk-******** (11 chars)"
        );
        assert_eq!(utf16_len("a😀"), 3);
    }
}
