//! Shape rules: secrets recognised by what they look like, wherever they appear in a string.
//!
//! The built-in rules run in a fixed order (`bearer` first so an `Authorization` value becomes one
//! placeholder, `anthropic` before `openai` because `sk-ant-…` also fits `sk-…`); the user's
//! patterns run before all of them. Each rule replaces every non-overlapping match, leftmost
//! first, as the reference's global JavaScript regexes do. The patterns are the reference's,
//! spelled for the `regex` crate with JavaScript's meaning kept: `\b` is an ASCII word boundary
//! and `\s` is JavaScript's whitespace set.
//!
//! Two guards make a second pass a no-op: a match that overlaps a placeholder already in the
//! text is left alone (a user pattern for eight hex digits would otherwise eat a placeholder's
//! hash), and the chain is re-run on its own output until nothing changes, so a replacement that
//! opens a word boundary for an earlier rule is settled in the first pass, not the second.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::keys::{KeyRules, MIN_SECRET_LEN, next_trigram};
use super::placeholder::{KEYCTX, contains_placeholder, overlaps, placeholder, placeholder_spans};

/// JavaScript's `\s` as a class body (Unicode White_Space without U+0085, with U+FEFF).
pub(crate) const JS_SPACE: &str =
    r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Names of the built-in rules, in order, plus `keyctx`: a user pattern may not take them.
pub(crate) const BUILTIN_NAMES: [&str; 11] = [
    "privatekey",
    "bearer",
    "urlcreds",
    "jwt",
    "github",
    "anthropic",
    "openai",
    "slack",
    "aws",
    "google",
    "keyctx",
];

/// One built-in rule.
pub(crate) struct Builtin {
    pub name: &'static str,
    regex: Regex,
    /// Capture group holding the secret (the rest of the match is kept); `None` = whole match.
    group: Option<usize>,
    /// Literals one of which any match contains: a string with none of them is skipped without
    /// running the regex.
    needles: &'static [&'static str],
    /// What the match is: see [`Kind`].
    kind: Kind,
}

/// How a rule's match becomes a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The match (or its group) is the secret.
    Plain,
    /// A `name=value`, `name: value` or `--name value` pair: group 1, 3 or 4 names it, group 5 is
    /// the value, and it is a secret only when the key rules call the name sensitive (see
    /// [`pair_value`]).
    Pair,
}

fn builtin(
    name: &'static str,
    pattern: &str,
    group: Option<usize>,
    needles: &'static [&'static str],
) -> Builtin {
    let regex = match Regex::new(pattern) {
        Ok(r) => r,
        // The patterns are constants checked by the unit tests; a failure here is a build bug.
        Err(e) => panic!("built-in redaction rule {name} does not compile: {e}"),
    };
    Builtin {
        name,
        regex,
        group,
        needles,
        kind: Kind::Plain,
    }
}

/// The built-in rules, compiled once.
pub(crate) static BUILTINS: LazyLock<Vec<Builtin>> = LazyLock::new(|| {
    let b = r"(?-u:\b)";
    vec![
        // A PEM private-key block, armour lines included, to its END line or, cut short, as
        // far as it goes. First, so no other shape takes a piece of its body. The body never
        // holds a quote, and stopping at one (or at an escaped one) keeps a raw JSON line JSON.
        builtin(
            "privatekey",
            r#"-----BEGIN[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----(?:(?:[^"\\]|\\[^"])*?-----END[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----|(?:[^"\\]|\\[^"])*)"#,
            None,
            &["PRIVATE KEY"],
        ),
        builtin(
            "bearer",
            &format!(r"{b}Bearer[{JS_SPACE}]+([A-Za-z0-9._~+/=-]{{8,}})"),
            Some(1),
            &["Bearer"],
        ),
        // Any scheme: connection strings (postgres://, redis://, …) carry passwords too. The
        // scheme is capped at 32 characters, as in the reference, which keeps it cheap there.
        // The user may be empty (`redis://:pw@host`, Redis's usual form) and the password runs
        // to the last `@` before whitespace, `?`, `#` or a quote, so one holding `@`, `/` or `:`
        // is taken whole rather than cut at its first `@` (a cut password is a leaked half).
        // A "password" that is a port followed by a path (`host:8080/a@b`) is not one: see
        // [`is_port_and_path`]. Up to three single spaces may sit inside a password (`redis://
        // :my pass word@cache`); a port followed by a space is prose, not a password. The
        // pattern matches only the password's first character; [`PasswordRuns`] finds its `@`.
        builtin(
            "urlcreds",
            &format!(
                r#"{b}[a-zA-Z][a-zA-Z0-9+.-]{{0,31}}://[^{JS_SPACE}:/@]*:([^{JS_SPACE}?#"'<>`\\])"#
            ),
            Some(1),
            &["://"],
        ),
        // Open-ended: a JWT with a large payload (8 KiB and more) is one token, taken whole. The
        // reference caps the segments at 1024, 8192 and 1024 and so keeps a longer one in clear
        // (or cuts its signature); below the caps both give the same match and the same hash.
        builtin(
            "jwt",
            &format!(r"{b}eyJ[A-Za-z0-9_-]{{4,}}\.[A-Za-z0-9_-]{{4,}}\.[A-Za-z0-9_-]*"),
            None,
            &["eyJ"],
        ),
        builtin(
            "github",
            &format!(r"{b}(?:github_pat_[A-Za-z0-9_]{{20,}}|gh[pousr]_[A-Za-z0-9]{{16,}})"),
            None,
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        ),
        builtin(
            "anthropic",
            &format!(r"{b}sk-ant-[A-Za-z0-9_-]{{8,}}"),
            None,
            &["sk-ant-"],
        ),
        builtin(
            "openai",
            &format!(r"{b}sk-[A-Za-z0-9_-]{{16,}}"),
            None,
            &["sk-"],
        ),
        builtin(
            "slack",
            &format!(r"{b}xox[baprs]-[A-Za-z0-9-]{{10,}}"),
            None,
            &["xox"],
        ),
        builtin(
            "aws",
            &format!(r"{b}AKIA[0-9A-Z]{{16}}{b}"),
            None,
            &["AKIA"],
        ),
        builtin(
            "google",
            &format!(r"{b}AIza[0-9A-Za-z_-]{{35}}"),
            None,
            &["AIza"],
        ),
        // Last, so that a value another rule knows keeps that rule's placeholder.
        Builtin {
            kind: Kind::Pair,
            ..builtin(
                KEYCTX,
                &format!(
                    r#"(?:{b}([A-Za-z_][A-Za-z0-9_.-]{{0,63}})(?:\\?["'])?[ \t]*([:=])[ \t]*(?:\\?["'])?|(?:^|[ \t])(--)([A-Za-z][A-Za-z0-9_.-]{{0,63}})[ \t]+)([^{JS_SPACE}"'`\\&<>,;])"#
                ),
                Some(5),
                &[],
            )
        },
    ]
});

/// Lowercased words one of which every sensitive key in a free-text pair holds (the key rules'
/// substrings and the `auth`/`pass` segments): a text with none of them needs no pair pass.
pub(crate) const PAIR_TRIGGERS: [&str; 8] = [
    "token",
    "secret",
    "pass",
    "api_key",
    "api-key",
    "apikey",
    "auth",
    "credential",
];

/// How far before a word of its name a pair rule's match can start: a name is at most 64
/// characters (ASCII) and holds the three-letter word whole, and `--` and a space may precede it.
const PAIR_NAME_REACH: usize = 64;

/// The secret in a pair the [`Kind::Pair`] rule matched, and where the whole match ends, or
/// `None` when it is not one: the name must be sensitive, and the value, less trailing
/// punctuation, at least 8 characters. After a `:` (prose: "token: required") the value must
/// also hold a digit or a symbol. The rule's pattern matches only the value's first character;
/// the value runs on to the end of its run of value characters ([`ValueRuns`]).
fn pair_value(
    s: &str,
    caps: &regex::Captures<'_>,
    keys: &KeyRules,
    runs: &mut ValueRuns,
) -> Option<(std::ops::Range<usize>, usize)> {
    let name = caps.get(1).or_else(|| caps.get(4))?.as_str();
    if !keys.classify(name).sensitive {
        return None;
    }
    let start = caps.get(5)?.start();
    let (end, trimmed) = runs.run(s, start);
    // At least MIN_SECRET_LEN characters, counted no further than that.
    s[start..trimmed].chars().nth(MIN_SECRET_LEN - 1)?;
    let colon = caps.get(2).is_some_and(|m| m.as_str() == ":");
    if colon && !runs.has_symbol(s, start, trimmed) {
        return None;
    }
    Some((start..trimmed, end))
}

/// What ends a run a `urlcreds` password may span: whitespace, `?`, `#`, a quote, `<`, `>` or a
/// backslash.
static PASSWORD_END: LazyLock<Regex> =
    LazyLock::new(|| match Regex::new(&format!(r#"[{JS_SPACE}?#"'<>`\\]"#)) {
        Ok(r) => r,
        Err(e) => panic!("the password's end does not compile: {e}"),
    });

/// Where a `urlcreds` password ends. It runs over up to four runs of password characters joined
/// by single spaces, to the last `@` in them that has a character of its run before it (what
/// the greedy pattern `[^…]+(?: [^…]+){0,3}@` takes). Every candidate URL whose password starts
/// inside one run shares that answer, so it is remembered: a line of many URLs whose ports and
/// paths are no password (`http://h:8080/a@` repeated) costs one pass over each run instead of
/// one per URL.
#[derive(Debug, Default)]
struct PasswordRuns {
    /// The last run: its start and end, its last `@`, and the last fitting `@` of the runs
    /// after it.
    run: Option<(usize, usize, Option<usize>, Option<usize>)>,
}

impl PasswordRuns {
    /// The position of the `@` closing the password that starts at `at`, if there is one.
    fn end(&mut self, s: &str, at: usize) -> Option<usize> {
        let (_, _, own, later) = match self.run {
            Some(run) if run.0 <= at && at < run.1 => run,
            _ => {
                let run = password_runs(s, at);
                self.run = Some(run);
                run
            }
        };
        later.or(own.filter(|&q| q > at))
    }
}

fn password_runs(s: &str, at: usize) -> (usize, usize, Option<usize>, Option<usize>) {
    let bytes = s.as_bytes();
    let run_end = |from: usize| PASSWORD_END.find_at(s, from).map_or(s.len(), |m| m.start());
    let end = run_end(at);
    let own = memchr::memrchr(b'@', &bytes[at..end]).map(|i| at + i);
    let mut later = None;
    let mut last = end;
    for _ in 0..3 {
        // The next run: one space, then at least one password character.
        if bytes.get(last) != Some(&b' ') {
            break;
        }
        let next = last + 1;
        let next_end = if next < s.len() { run_end(next) } else { next };
        if next_end == next {
            break;
        }
        // The `@` must follow a character of its own run.
        if let Some(i) = memchr::memrchr(b'@', &bytes[next + 1..next_end]) {
            later = Some(next + 1 + i);
        }
        last = next_end;
    }
    (at, end, own, later)
}

/// What ends a pair's value: whitespace, a quote, a backslash, `&`, `,`, `;`, `<` or `>`.
static VALUE_END: LazyLock<Regex> =
    LazyLock::new(|| match Regex::new(&format!(r#"[{JS_SPACE}"'`\\&<>,;]"#)) {
        Ok(r) => r,
        Err(e) => panic!("the pair value's end does not compile: {e}"),
    });

/// The runs of value characters the pair rule has looked at, remembered: every candidate pair
/// whose value starts inside one run shares its end, its trimmed end and the place of its first
/// digit or symbol, so a line of many pairs (a hostile `token:token:token:…`) costs one pass
/// over each run instead of one per pair.
#[derive(Debug, Default)]
struct ValueRuns {
    /// The last run: where it starts, where it ends, and where its last character that is not
    /// trailing punctuation ends.
    run: Option<(usize, usize, usize)>,
    /// In that run: from this place, the first digit or symbol is at the second (the run's end
    /// when there is none).
    symbol: Option<(usize, usize)>,
}

impl ValueRuns {
    /// The end of the run holding `at`, and the end of a value starting at `at` less its
    /// trailing punctuation.
    fn run(&mut self, s: &str, at: usize) -> (usize, usize) {
        let (end, trimmed) = match self.run {
            Some((start, end, trimmed)) if start <= at && at < end => (end, trimmed),
            _ => {
                let end = VALUE_END.find_at(s, at).map_or(s.len(), |m| m.start());
                let trimmed = at
                    + s[at..end]
                        .trim_end_matches(['.', ':', ')', ']', '}', '!', '?'])
                        .len();
                self.run = Some((at, end, trimmed));
                self.symbol = None;
                (end, trimmed)
            }
        };
        (end, trimmed.max(at))
    }

    /// Whether `s[at..to]` (inside the current run) holds a digit or a symbol.
    fn has_symbol(&mut self, s: &str, at: usize, to: usize) -> bool {
        let first = match self.symbol {
            Some((from, first)) if from <= at && at <= first => first,
            _ => {
                let end = self.run.map_or(s.len(), |(_, end, _)| end);
                let first = s[at..end]
                    .find(|c: char| c.is_ascii_digit() || "-_+/=~!@#$%^*".contains(c))
                    .map_or(end, |i| at + i);
                self.symbol = Some((at, first));
                first
            }
        };
        first < to
    }
}

/// Literals one of which every built-in match contains. A JSON string whose text holds none of
/// them, and no `\u` or `\/` escape (which could spell one), needs no shape pass.
pub(crate) const SHAPE_TRIGGERS: [&str; 14] = [
    "PRIVATE KEY",
    "Bearer",
    "://",
    "eyJ",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "xox",
    "AKIA",
    "AIza",
];

/// A user pattern from `--redact-config`: the whole match is the secret.
#[derive(Debug, Clone)]
pub(crate) struct UserPattern {
    pub name: String,
    pub regex: Regex,
}

/// How many times the chain is re-run on its own output at most. Each round that changes
/// anything replaces a secret with a placeholder, which no rule touches again, so real input
/// settles in one or two rounds; the bound only stops a pathological pattern from looping.
const MAX_ROUNDS: usize = 8;

/// The shape rules as configured: user patterns, then the built-ins, with the allow list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shapes<'a> {
    pub user: &'a [UserPattern],
    pub allow: &'a HashSet<String>,
    /// Names the free-text pair rule takes values of.
    pub keys: &'a KeyRules,
}

impl Shapes<'_> {
    /// Runs the chain to a fixed point. `None` when nothing changed. `hit(rule, secret)` is
    /// called once per secret replaced.
    pub(crate) fn apply(&self, s: &str, hit: &mut dyn FnMut(&str, &str)) -> Option<String> {
        let mut current: Option<String> = None;
        for _ in 0..MAX_ROUNDS {
            let text = current.as_deref().unwrap_or(s);
            match self.round(text, hit) {
                Some(next) => current = Some(next),
                None => break,
            }
        }
        current
    }

    fn round(&self, s: &str, hit: &mut dyn FnMut(&str, &str)) -> Option<String> {
        let mut current: Option<String> = None;
        for rule in self.user {
            let text = current.as_deref().unwrap_or(s);
            // A user pattern runs first (as in the reference) but may not cut into what a
            // built-in would take: `r` in `Bearer`, or a few letters inside its token, would
            // otherwise leave the token in clear (docs/redaction.md, "User patterns").
            let claims = self.builtin_claims(text);
            let guard = Guard::Claims(&claims);
            if let Some(next) =
                self.apply_rule(text, &rule.name, &rule.regex, None, Kind::Plain, guard, hit)
            {
                current = Some(next);
            }
        }
        // Which rules' needles the current text holds: one search for all of them, redone only
        // after a rule changed the text.
        let mut present: Option<u64> = None;
        for (i, rule) in BUILTINS.iter().enumerate() {
            let text = current.as_deref().unwrap_or(s);
            let wanted = match rule.kind {
                Kind::Plain => *present.get_or_insert_with(|| needle_mask(text)) & (1 << i) != 0,
                Kind::Pair => {
                    may_hold_pair(text) && (self.keys.has_extra() || has_pair_trigger(text))
                }
            };
            if !wanted {
                continue;
            }
            let (regex, group, kind) = (&rule.regex, rule.group, rule.kind);
            if let Some(next) =
                self.apply_rule(text, rule.name, regex, group, kind, Guard::None, hit)
            {
                current = Some(next);
                present = None;
            }
        }
        current
    }

    /// What the built-ins would take from `s` if they ran on it now, rule by rule over the same
    /// text: each match's whole span and its secret. A superset of what the chain takes (a later
    /// rule's match may be gone once an earlier one replaced text), which only makes the guard
    /// stricter.
    fn builtin_claims(&self, s: &str) -> Vec<Claim> {
        let mut claims = Vec::new();
        let mut present: Option<u64> = None;
        for (i, rule) in BUILTINS.iter().enumerate() {
            let wanted = match rule.kind {
                Kind::Plain => *present.get_or_insert_with(|| needle_mask(s)) & (1 << i) != 0,
                Kind::Pair => may_hold_pair(s) && (self.keys.has_extra() || has_pair_trigger(s)),
            };
            if wanted {
                // A match whose secret is allowed, or already a placeholder, is still a claim:
                // its context is left as the rule reads it.
                let guard = Guard::Claiming;
                let found = self.matches(s, rule.name, &rule.regex, rule.group, rule.kind, guard);
                claims.extend(
                    found
                        .into_iter()
                        .map(|(whole, secret)| Claim { whole, secret }),
                );
            }
        }
        claims
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "a rule is spelled by its parts, built-in or user"
    )]
    fn apply_rule(
        &self,
        s: &str,
        name: &str,
        regex: &Regex,
        group: Option<usize>,
        kind: Kind,
        guard: Guard<'_>,
        hit: &mut dyn FnMut(&str, &str),
    ) -> Option<String> {
        let found = self.matches(s, name, regex, group, kind, guard);
        if found.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for (_, secret) in found {
            let text = &s[secret.clone()];
            hit(name, text);
            out.push_str(&s[last..secret.start]);
            out.push_str(&placeholder(name, text));
            last = secret.end;
        }
        out.push_str(&s[last..]);
        Some(out)
    }

    /// The matches of one rule that it would replace: non-overlapping, left to right, each as
    /// its whole span and its secret's span.
    fn matches(
        &self,
        s: &str,
        name: &str,
        regex: &Regex,
        group: Option<usize>,
        kind: Kind,
        guard: Guard<'_>,
    ) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
        let near_words = kind == Kind::Pair && !self.keys.has_extra();
        self.matches_from(s, name, regex, group, kind, guard, near_words)
    }

    /// [`Shapes::matches`]; with `near_words`, the pair rule's search skips ahead to where a
    /// sensitive name could be. Every name the key rules call sensitive (without configured
    /// keys) holds a [`next_trigram`] word, and the whole match starts at most
    /// [`PAIR_NAME_REACH`] bytes before it: a match starting further back has a name the rule
    /// turns down, so skipping it changes nothing (a property test holds the two equal). In a
    /// JSON document full of `"id":1` pairs this spares a capturing search per pair.
    #[expect(
        clippy::too_many_arguments,
        reason = "a rule is spelled by its parts, built-in or user"
    )]
    fn matches_from(
        &self,
        s: &str,
        name: &str,
        regex: &Regex,
        group: Option<usize>,
        kind: Kind,
        guard: Guard<'_>,
        near_words: bool,
    ) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
        let spans = placeholder_spans(s);
        let mut found = Vec::new();
        let mut runs = ValueRuns::default();
        let mut passwords = PasswordRuns::default();
        let mut at = 0;
        // Non-overlapping matches, left to right, as `find_iter` would give them; done by hand
        // so that a capped match can end early or be refused at its start.
        while at <= s.len() {
            if near_words {
                let Some(word) = next_trigram(s, at) else {
                    break;
                };
                let mut to = word.saturating_sub(PAIR_NAME_REACH);
                while !s.is_char_boundary(to) {
                    to -= 1;
                }
                at = at.max(to);
            }
            let (whole, secret) = match group {
                None => match regex.find_at(s, at) {
                    Some(m) => (m.range(), m.range()),
                    None => break,
                },
                Some(g) => {
                    let Some(found) = regex.captures_at(s, at) else {
                        break;
                    };
                    let Some(whole) = found.get(0) else {
                        break;
                    };
                    let secret = match kind {
                        Kind::Plain if name == "urlcreds" => found.get(g).and_then(|m| {
                            let at = passwords.end(s, m.start())?;
                            Some((m.start()..at, at + 1))
                        }),
                        Kind::Plain => found.get(g).map(|m| (m.range(), whole.end())),
                        Kind::Pair => pair_value(s, &found, self.keys, &mut runs),
                    };
                    let Some((secret, end)) = secret else {
                        // Not a secret here; look again from the next character (a shorter
                        // name may start inside this one's match).
                        at = next_boundary(s, whole.start());
                        continue;
                    };
                    (whole.start()..end, secret)
                }
            };
            at = if whole.is_empty() {
                next_boundary(s, whole.end)
            } else {
                whole.end
            };
            let text = &s[secret.clone()];
            if name == "urlcreds" && is_port_and_path(text) {
                at = next_boundary(s, whole.start);
                continue;
            }
            if matches!(guard, Guard::Claiming) {
                if !text.is_empty() {
                    found.push((whole, secret));
                }
                continue;
            }
            if text.is_empty()
                || overlaps(&spans, &whole)
                || overlaps(&spans, &secret)
                || contains_placeholder(text)
                || self.allow.contains(text)
                || guard.refuses(&secret)
            {
                continue;
            }
            found.push((whole, secret));
        }
        found
    }
}

/// A built-in's match as [`Shapes::builtin_claims`] found it.
#[derive(Debug, Clone)]
struct Claim {
    whole: std::ops::Range<usize>,
    secret: std::ops::Range<usize>,
}

/// Which matches a rule may not replace, beyond the placeholder and allow-list checks.
#[derive(Debug, Clone, Copy)]
enum Guard<'a> {
    None,
    /// Finding claims: every match counts, placeholder or allowed value included.
    Claiming,
    /// A user pattern's match that overlaps a built-in's match without covering that match's
    /// secret is refused: replacing it would break the built-in's match and leave its secret, or
    /// pieces of it, in clear. A match that covers the secret takes it (as in the reference).
    Claims(&'a [Claim]),
}

impl Guard<'_> {
    fn refuses(&self, range: &std::ops::Range<usize>) -> bool {
        match self {
            Guard::None | Guard::Claiming => false,
            Guard::Claims(claims) => claims.iter().any(|c| {
                let touches = range.start < c.whole.end && c.whole.start < range.end;
                let covers = range.start <= c.secret.start && c.secret.end <= range.end;
                touches && !covers
            }),
        }
    }
}

/// The built-in rules whose needles occur in `text`, as a bit per rule (bit `i` for
/// `BUILTINS[i]`): what `needles.iter().any(|n| text.contains(n))` says for each, in one search.
pub(crate) fn needle_mask(text: &str) -> u64 {
    static NEEDLES: LazyLock<(aho_corasick::AhoCorasick, Vec<usize>)> = LazyLock::new(|| {
        let mut rule_of = Vec::new();
        let mut needles = Vec::new();
        for (i, rule) in BUILTINS.iter().enumerate() {
            for n in rule.needles {
                needles.push(*n);
                rule_of.push(i);
            }
        }
        // Standard semantics, so that every needle is reported even where it overlaps another
        // (`sk-` inside `sk-ant-`).
        match aho_corasick::AhoCorasick::new(&needles) {
            Ok(ac) => (ac, rule_of),
            Err(e) => panic!("built-in rule needles do not compile: {e}"),
        }
    });
    let (ac, rule_of) = &*NEEDLES;
    let mut mask = 0u64;
    for m in ac.find_overlapping_iter(text) {
        mask |= 1 << rule_of[m.pattern().as_usize()];
    }
    mask
}

/// Whether a text has what every match of the free-text pair rule holds besides its name: a `:`
/// or `=` after the name, or the `--` of a flag. A cheap byte screen (one vectorised search)
/// before the case-insensitive trigger search and the rule's regex.
pub(crate) fn may_hold_pair(text: &str) -> bool {
    crate::json::delimiter::any_of3(b':', b'=', b'-', text.as_bytes()).is_some()
}

/// Whether a text holds one of [`PAIR_TRIGGERS`], in any ASCII case.
pub(crate) fn has_pair_trigger(text: &str) -> bool {
    static FINDER: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
        match aho_corasick::AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(PAIR_TRIGGERS)
        {
            Ok(ac) => ac,
            Err(e) => panic!("built-in pair triggers do not compile: {e}"),
        }
    });
    FINDER.is_match(text)
}

/// Whether what `urlcreds` took for a password is a port and a path (`8080/users/@alice` in
/// `https://host:8080/users/@alice`) or a port and prose (`8080 is down, mail admin@…`):
/// digits, then `/`, a space or the end.
fn is_port_and_path(text: &str) -> bool {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    (1..=5).contains(&digits) && matches!(text.as_bytes().get(digits), None | Some(b'/' | b' '))
}

/// The char boundary after `at` (or one past the end, which stops the search).
fn next_boundary(s: &str, at: usize) -> usize {
    s.get(at..)
        .and_then(|rest| rest.chars().next())
        .map_or(s.len() + 1, |c| at + c.len_utf8())
}

#[cfg(test)]
mod tests;
