//! Echoes: a value recognised as secret once (by key context or by shape) is redacted wherever
//! it appears again in the same session — echoed in a result's text, quoted in an error
//! message, carried by a notification or a later request — where neither its key nor its shape
//! would give it away.
//!
//! The set is bounded so that a session with many secrets cannot grow memory or matching time
//! without end, and only values of at least [`MIN_ECHO_LEN`] characters are remembered, so that a
//! short value under a sensitive key (`"password": "hunter2x"` is remembered, `"pin": "1234"` is
//! not) cannot turn every occurrence of a common word into a placeholder. Matching uses one
//! Aho-Corasick automaton over every remembered value (leftmost-longest), rebuilt only when the
//! set grows.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::placeholder::{contains_placeholder, overlaps, placeholder, placeholder_spans};

/// Shortest value remembered, in characters.
pub(crate) const MIN_ECHO_LEN: usize = 8;
/// Longest value remembered, in bytes: a longer one is still redacted where it was found.
pub(crate) const MAX_ECHO_BYTES: usize = 4 * 1024;
/// How many values are remembered at most; later ones are redacted where found, not echoed.
pub(crate) const MAX_ECHOES: usize = 1024;
/// How many bytes of values are remembered at most. With the count, this bounds the automaton's
/// memory and the cost of rebuilding it, whatever a hostile server sends.
pub(crate) const MAX_ECHO_TOTAL: usize = 64 * 1024;

/// The secrets seen so far in one session (or one cassette), with the placeholder each became.
#[derive(Debug, Default, Clone)]
pub struct Echoes {
    /// Secret -> its placeholder (the rule that first found it names it).
    by_secret: HashMap<String, String>,
    /// Secrets in pattern order for the automaton.
    secrets: Vec<String>,
    automaton: Option<AhoCorasick>,
    dirty: bool,
    /// Where in the file or session each secret was learned (parallel to `secrets`), for
    /// [`EarlyCheck`]; the caller moves [`Echoes::set_position`] along.
    learned_at: Vec<usize>,
    position: usize,
    /// Some secret is spelled differently inside a JSON string (it holds a quote, a backslash
    /// or a control character), so a literal search of JSON text can miss it.
    escapable: bool,
    /// Bytes of the values remembered.
    total: usize,
}

impl Echoes {
    pub fn new() -> Echoes {
        Echoes::default()
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    /// Remembers a secret a rule replaced, if it qualifies.
    pub fn learn(&mut self, rule: &str, secret: &str) {
        if self.secrets.len() >= MAX_ECHOES
            || secret.len() > MAX_ECHO_BYTES
            || self.total + secret.len() > MAX_ECHO_TOTAL
            || secret.chars().nth(MIN_ECHO_LEN - 1).is_none()
            || secret.trim().len() != secret.len()
            || contains_placeholder(secret)
            || self.by_secret.contains_key(secret)
        {
            return;
        }
        self.by_secret
            .insert(secret.to_owned(), placeholder(rule, secret));
        self.escapable |= secret
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control());
        self.total += secret.len();
        self.secrets.push(secret.to_owned());
        self.learned_at.push(self.position);
        self.dirty = true;
    }

    /// Says where what is learned next comes from (an entry's position in the file).
    pub fn set_position(&mut self, position: usize) {
        self.position = position;
    }

    /// The test for a remembered secret appearing before the place it was learned.
    pub fn early_check(&self) -> EarlyCheck {
        let mut patterns: Vec<String> = Vec::with_capacity(self.secrets.len() * 2);
        let mut at: Vec<usize> = Vec::with_capacity(self.secrets.len() * 2);
        for (secret, pos) in self.secrets.iter().zip(&self.learned_at) {
            // As written inside a JSON string, and as it is (a raw line that is not JSON).
            let quoted = crate::json::quote(secret);
            let spelled = &quoted[1..quoted.len() - 1];
            if spelled != secret {
                patterns.push(spelled.to_owned());
                at.push(*pos);
            }
            patterns.push(secret.clone());
            at.push(*pos);
        }
        EarlyCheck {
            automaton: AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok(),
            at,
            last: self.learned_at.iter().copied().max(),
        }
    }

    fn automaton(&mut self) -> Option<&AhoCorasick> {
        if self.dirty {
            self.dirty = false;
            self.automaton = AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&self.secrets)
                .ok();
        }
        self.automaton.as_ref()
    }

    /// The placeholder for a value that is exactly a remembered secret (a number's text).
    pub fn exact(&self, text: &str) -> Option<&str> {
        self.by_secret.get(text).map(String::as_str)
    }

    /// Whether JSON text may hold a remembered secret: literally, through a `\\u` or `\\/`
    /// escape that could spell part of one, or through any escape when a secret needs one.
    pub fn may_hold(&mut self, json_text: &str) -> bool {
        if self.secrets.is_empty() {
            return false;
        }
        if self.hits(json_text) {
            return true;
        }
        let bytes = json_text.as_bytes();
        memchr::memchr_iter(b'\\', bytes)
            .any(|i| self.escapable || matches!(bytes.get(i + 1), Some(b'u' | b'/')))
    }

    /// Whether `text` holds a remembered secret (a cheap test before decoding anything).
    pub fn hits(&mut self, text: &str) -> bool {
        if self.secrets.is_empty() {
            return false;
        }
        self.automaton().is_some_and(|ac| ac.is_match(text))
    }

    /// Replaces every remembered secret in `text` that does not overlap a placeholder; `None`
    /// when nothing changed. `hit(placeholder_rule_text, secret)` is called per replacement.
    pub fn apply(&mut self, text: &str, hit: &mut dyn FnMut(&str, &str)) -> Option<String> {
        if self.secrets.is_empty() {
            return None;
        }
        let ac = self.automaton()?.clone();
        let mut spans = None;
        let mut out = String::new();
        let mut last = 0;
        for m in ac.find_iter(text) {
            let spans = spans.get_or_insert_with(|| placeholder_spans(text));
            if overlaps(spans, &m.range()) || !text.is_char_boundary(m.start()) {
                continue;
            }
            let secret = &self.secrets[m.pattern().as_usize()];
            let Some(ph) = self.by_secret.get(secret) else {
                continue;
            };
            hit(rule_of(ph), secret);
            out.push_str(&text[last..m.start()]);
            out.push_str(ph);
            last = m.end();
        }
        if last == 0 {
            return None;
        }
        out.push_str(&text[last..]);
        Some(out)
    }
}

/// Finds lines that hold a remembered secret before the line it was learned from: a streaming
/// pass that learns as it goes misses those, and a second pass with the whole set must run.
#[derive(Debug)]
pub struct EarlyCheck {
    automaton: Option<AhoCorasick>,
    at: Vec<usize>,
    last: Option<usize>,
}

impl EarlyCheck {
    /// Whether the line at `position` may hold a secret learned after it. A line with a `\u`
    /// or `\/` escape may spell one in a way no literal search sees, so it counts when any
    /// secret was learned after it.
    pub fn is_early(&self, position: usize, line: &str) -> bool {
        let Some(last) = self.last else {
            return false;
        };
        if position >= last {
            return false;
        }
        if line.contains("\\u") || line.contains("\\/") {
            return true;
        }
        self.automaton.as_ref().is_some_and(|ac| {
            ac.find_overlapping_iter(line)
                .any(|m| self.at[m.pattern().as_usize()] > position)
        })
    }
}

/// The rule name inside a placeholder we made (`[REDACTED:<rule>:<hash8>]`).
pub(super) fn rule_of(ph: &str) -> &str {
    ph.get(10..ph.len().saturating_sub(10)).unwrap_or("echo")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_long_values_and_replaces_their_echoes() {
        let mut e = Echoes::new();
        e.learn("keyctx", "hunter2-correct");
        e.learn("keyctx", "short");
        assert_eq!(e.len(), 1);
        let mut n = 0;
        let out = e
            .apply("login with hunter2-correct failed", &mut |r, _| {
                assert_eq!(r, "keyctx");
                n += 1;
            })
            .unwrap();
        assert_eq!(
            out,
            format!(
                "login with {} failed",
                placeholder("keyctx", "hunter2-correct")
            )
        );
        assert_eq!(n, 1);
        assert_eq!(e.apply(&out, &mut |_, _| {}), None, "idempotent");
        assert_eq!(e.apply("short and sweet", &mut |_, _| {}), None);
    }

    #[test]
    fn the_set_is_bounded() {
        let mut e = Echoes::new();
        for i in 0..MAX_ECHOES + 10 {
            e.learn("keyctx", &format!("secret-value-{i:08}"));
        }
        assert_eq!(e.len(), MAX_ECHOES);
        let mut big = Echoes::new();
        for i in 0..100 {
            big.learn("keyctx", &format!("{i:04}{}", "x".repeat(4000)));
        }
        assert_eq!(big.len(), MAX_ECHO_TOTAL / 4004);
    }

    #[test]
    fn early_sightings_are_found() {
        let mut e = Echoes::new();
        e.set_position(5);
        e.learn("keyctx", "quote\"d-secret");
        e.set_position(9);
        e.learn("keyctx", "plain-secret-1");
        let check = e.early_check();
        assert!(check.is_early(3, "x plain-secret-1 y"));
        assert!(
            check.is_early(3, r#"{"a":"quote\"d-secret"}"#),
            "JSON spelling"
        );
        assert!(check.is_early(6, "x plain-secret-1 y"));
        assert!(!check.is_early(9, "x plain-secret-1 y"), "learned there");
        assert!(!check.is_early(6, "x quote\"d-secret y"), "learned before");
        assert!(check.is_early(1, r"a \u0041 b"), "an escape may spell one");
        assert!(!check.is_early(1, "nothing here"));
    }
}
