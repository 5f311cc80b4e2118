//! Echoes: a value recognised as secret once (by key context or by shape) is redacted wherever
//! it appears again in the same session — echoed in a result's text, quoted in an error
//! message, carried by a notification or a later request — where neither its key nor its shape
//! would give it away.
//!
//! The set is bounded so that a session with many secrets cannot grow memory or matching time
//! without end, and only values of at least [`MIN_ECHO_LEN`] characters are remembered, so that a
//! short value under a sensitive key (`"password": "hunter2x"` is remembered, `"pin": "1234"` is
//! not) cannot turn every occurrence of a common word into a placeholder. Matching uses one
//! Aho-Corasick automaton over every remembered value (leftmost-longest), a DFA while its table
//! is small (see [`searcher`]); values learned since it was built are searched one by one until
//! there are [`PENDING`] of them (fewer for a small set), and only then is it built again.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

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
/// How many secrets learned since the automaton was built are searched for one by one, at most,
/// before it is built again with them; fewer while the automaton holds few (an eighth of them),
/// so that a session with a handful of secrets searches each text once, as it always did.
const PENDING: usize = 8;

/// The secrets seen so far in one session (or one cassette), with the placeholder each became.
#[derive(Debug, Default, Clone)]
pub struct Echoes {
    /// Secret -> its placeholder (the rule that first found it names it).
    by_secret: HashMap<String, String>,
    /// Secrets in pattern order for the automaton.
    secrets: Vec<String>,
    /// Finds the first `searched` secrets; the ones learned since are searched one by one
    /// until there are [`PENDING`] of them (see [`Echoes::hits`]).
    automaton: Option<AhoCorasick>,
    searched: usize,
    /// A search for each secret after the first `searched`.
    pending: Vec<memchr::memmem::Finder<'static>>,
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
        self.pending
            .push(memchr::memmem::Finder::new(secret.as_bytes()).into_owned());
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
            automaton: searcher(&patterns, MatchKind::Standard),
            at,
            last: self.learned_at.iter().copied().max(),
        }
    }

    /// The automaton over every secret, built again if some were learned since.
    fn automaton(&mut self) -> Option<&AhoCorasick> {
        if self.searched < self.secrets.len() {
            self.searched = self.secrets.len();
            self.pending.clear();
            // The old one goes first: two at once would double the memory the bound allows.
            self.automaton = None;
            self.automaton = searcher(&self.secrets, MatchKind::LeftmostLongest);
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
        // Building the automaton again costs as much as searching megabytes with it, and a
        // large cassette teaches a secret every few thousand frames: the newest few are looked
        // for one at a time (a vectorised search each) until there are enough to be worth it.
        if self.pending.len() >= (self.searched / 8).clamp(1, PENDING) {
            self.automaton();
        }
        let bytes = text.as_bytes();
        self.pending.iter().any(|f| f.find(bytes).is_some())
            || self.automaton.as_ref().is_some_and(|ac| ac.is_match(text))
    }

    /// Replaces every remembered secret in `text` that does not overlap a placeholder; `None`
    /// when nothing changed. `hit(placeholder_rule_text, secret)` is called per replacement.
    pub fn apply(&mut self, text: &str, hit: &mut dyn FnMut(&str, &str)) -> Option<String> {
        // Most texts hold none, which `hits` tells without building the automaton again.
        if !self.hits(text) {
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

/// The most a search automaton's transition table may take for it to be a DFA (see
/// [`searcher`]).
const DFA_BYTES: usize = 4 << 20;

/// An automaton finding `patterns` with `kind` semantics. The `aho-corasick` crate builds a DFA
/// for up to a hundred patterns and a slower NFA for more, whatever their length; a DFA's table
/// grows with the patterns' bytes, not their number, so this asks for a DFA whenever its table
/// is sure to stay under [`DFA_BYTES`]: a state per pattern byte at most, a column per byte
/// value the patterns use (plus one for all the others) rounded up to a power of two, as the
/// crate lays its rows out, and four bytes a cell. On a 210 MB cassette with 174 secrets
/// (3.1 MB of table) the NFA made `redact --scan` take 2.2 s, where its first half took 0.45 s
/// (docs/benchmarks.md).
fn searcher(patterns: &[String], kind: MatchKind) -> Option<AhoCorasick> {
    let mut used = [false; 256];
    let mut states = 1;
    for p in patterns {
        states += p.len();
        for &b in p.as_bytes() {
            used[usize::from(b)] = true;
        }
    }
    let columns = (used.iter().filter(|&&u| u).count() + 1).next_power_of_two();
    let small = states.saturating_mul(columns).saturating_mul(4) <= DFA_BYTES;
    // Otherwise an NFA, even for a hundred patterns or fewer, where the crate would build a DFA
    // however large (its table then bounded by nothing but the set's bounds).
    let mut builder = AhoCorasickBuilder::new();
    builder.match_kind(kind).kind(Some(if small {
        AhoCorasickKind::DFA
    } else {
        AhoCorasickKind::ContiguousNFA
    }));
    builder
        .build(patterns)
        .or_else(|_| builder.kind(None).build(patterns))
        .ok()
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
    fn the_automaton_is_a_dfa_while_its_table_is_small() {
        let few: Vec<String> = (0..200).map(|i| format!("secret-value-{i:08}")).collect();
        let dfa = searcher(&few, MatchKind::LeftmostLongest).unwrap();
        assert_eq!(
            dfa.kind(),
            AhoCorasickKind::DFA,
            "over a hundred, under the budget"
        );
        // The most the bounds let through, spread over every byte value a string can hold.
        let alphabet: Vec<char> = (' '..='~').collect();
        let many: Vec<String> = (0..MAX_ECHOES)
            .map(|i| {
                (0..MAX_ECHO_TOTAL / MAX_ECHOES)
                    .map(|j| alphabet[(i * 7 + j * 13) % alphabet.len()])
                    .collect()
            })
            .collect();
        let nfa = searcher(&many, MatchKind::LeftmostLongest).unwrap();
        assert_ne!(nfa.kind(), AhoCorasickKind::DFA);
        assert!(nfa.memory_usage() < DFA_BYTES);
        assert!(nfa.is_match(&format!("x{}y", many[MAX_ECHOES - 1])));
        // Under a hundred but long: the crate alone would build a DFA of tens of MB.
        let long: Vec<String> = many.chunks(16).take(60).map(|c| c.concat()).collect();
        let nfa = searcher(&long, MatchKind::Standard).unwrap();
        assert_ne!(nfa.kind(), AhoCorasickKind::DFA);
        assert!(nfa.memory_usage() < DFA_BYTES);
    }

    proptest::proptest! {
        /// Learning and searching interleaved, the newest secrets searched one by one and the
        /// rest by the automaton: `hits` says what a plain substring test over every secret
        /// says, and `apply` replaces what it replaces on a set that learned them all first.
        #[test]
        fn searches_agree_with_the_plain_way(
            // Forty secrets, some a prefix of others: enough that the automaton holds sixteen
            // and more, and the newest are searched one by one.
            steps in proptest::collection::vec((proptest::bool::ANY, 0usize..40), 1..120),
            filler in "[a-z -]{0,12}",
        ) {
            let pool: Vec<String> = (0..40)
                .map(|i| match i % 10 {
                    9 => format!("secret-{:02}-value", i - 1),
                    _ => format!("secret-{i:02}-value-x"),
                })
                .collect();
            let mut echoes = Echoes::new();
            let mut learned: Vec<&str> = Vec::new();
            for (learn, i) in steps {
                let secret = pool[i].as_str();
                if learn {
                    echoes.learn("keyctx", secret);
                    if !learned.contains(&secret) {
                        learned.push(secret);
                    }
                }
                let text = format!("{filler}{secret}{filler}");
                let plain = learned.iter().any(|s| text.contains(s));
                proptest::prop_assert_eq!(echoes.hits(&text), plain);
                let mut all_first = Echoes::new();
                for s in &learned {
                    all_first.learn("keyctx", s);
                }
                all_first.automaton();
                let apply = |e: &mut Echoes| e.apply(&text, &mut |_, _| {});
                proptest::prop_assert_eq!(apply(&mut echoes), apply(&mut all_first));
            }
        }
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
