//! The sixteen rules, one file each, in catalogue order.
//!
//! Each file holds the rule's [`RuleDoc`] (id, wording, level, evidence class, OWASP and
//! SAFE-MCP references, declared surfaces, help text) and its finder: a function from one
//! field's text to the evidence excerpt, or `None`. Nothing here knows about tools, prompts or
//! reports; `super` decides which fields a rule reads and what a finding looks like.
//!
//! Every pattern is compiled by the `regex` crate, which runs in time linear in the text by
//! construction, so the reference's `recheck` proofs (and its one polynomial pattern, the
//! original CAS-L004) have no counterpart to worry about here. The URL-anchored scan of
//! CAS-L004/CAS-L016 is kept anyway because it is also the cheapest way to do the job.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind, Span, packed};
use memchr::memmem;
use regex::Regex;

use super::RuleDoc;
use super::text::{JS_SPACE_CLASS, Text, back_utf16, excerpt_around};

mod l001_instruction_override;
mod l002_hidden_markers;
mod l003_concealment;
mod l004_exfiltration;
mod l005_sensitive_material;
mod l006_invisible_unicode;
mod l007_opaque_blob;
mod l008_oversized;
mod l009_bidi_override;
mod l010_variation_selectors;
mod l011_tool_priority;
mod l012_command_execution;
mod l013_role_impersonation;
mod l014_credential_request;
mod l015_mixed_script;
mod l016_unpinned_fetch;

/// A rule's matcher: the evidence string when it fires on this text.
pub(crate) type Finder = fn(&Text<'_>) -> Option<String>;

/// The catalogue, in the order findings are produced for each field.
pub(crate) static DOCS: [RuleDoc; 16] = [
    l001_instruction_override::DOC,
    l002_hidden_markers::DOC,
    l003_concealment::DOC,
    l004_exfiltration::DOC,
    l005_sensitive_material::DOC,
    l006_invisible_unicode::DOC,
    l007_opaque_blob::DOC,
    l008_oversized::DOC,
    l009_bidi_override::DOC,
    l010_variation_selectors::DOC,
    l011_tool_priority::DOC,
    l012_command_execution::DOC,
    l013_role_impersonation::DOC,
    l014_credential_request::DOC,
    l015_mixed_script::DOC,
    l016_unpinned_fetch::DOC,
];

/// The finders for declared surfaces (tool, prompt, resource, name), index-aligned with
/// [`DOCS`] (a test checks the alignment through each rule's own fixtures).
pub(crate) static FINDERS: [Finder; 16] = [
    l001_instruction_override::find,
    l002_hidden_markers::find,
    l003_concealment::find,
    l004_exfiltration::find,
    l005_sensitive_material::find,
    l006_invisible_unicode::find,
    l007_opaque_blob::find,
    l008_oversized::find,
    l009_bidi_override::find,
    l010_variation_selectors::find,
    l011_tool_priority::find,
    l012_command_execution::find,
    l013_role_impersonation::find,
    l014_credential_request::find,
    l015_mixed_script::find,
    l016_unpinned_fetch::find,
];

/// The finder a rule uses on recorded output. Only CAS-L006 differs from its declared-surface
/// finder (narrowed to runs and Tags code points, §9.3).
pub(crate) fn output_finder(index: usize) -> Option<Finder> {
    let doc = DOCS.get(index)?;
    if !doc.surfaces.contains(&super::Surface::Output) {
        return None;
    }
    if doc.id == l006_invisible_unicode::DOC.id {
        return Some(l006_invisible_unicode::find_output);
    }
    FINDERS.get(index).copied()
}

/// A phrase rule's anchors: groups of literal substrings (ASCII case-insensitive) such that
/// every match of the rule's pattern contains at least one literal of *each* group. They are
/// necessary conditions, never sufficient ones: the pattern still decides.
pub(super) type Anchors = &'static [&'static [&'static str]];

/// The phrase rules (one regex each), by id, with their anchors.
const PHRASES: [(&str, Anchors); 8] = [
    (
        l001_instruction_override::DOC.id,
        l001_instruction_override::ANCHORS,
    ),
    (l002_hidden_markers::DOC.id, l002_hidden_markers::ANCHORS),
    (l003_concealment::DOC.id, l003_concealment::ANCHORS),
    (
        l005_sensitive_material::DOC.id,
        l005_sensitive_material::ANCHORS,
    ),
    (l011_tool_priority::DOC.id, l011_tool_priority::ANCHORS),
    (
        l012_command_execution::DOC.id,
        l012_command_execution::ANCHORS,
    ),
    (
        l013_role_impersonation::DOC.id,
        l013_role_impersonation::ANCHORS,
    ),
    (
        l014_credential_request::DOC.id,
        l014_credential_request::ANCHORS,
    ),
];

/// Every anchor of every phrase rule, searched in one pass; for each literal, the groups
/// (bit = position among all groups, see [`required_groups`]) its presence satisfies.
struct AnchorScan {
    search: AnchorSearch,
    /// Group bits per literal, indexed by pattern id. Closed under substrings: a literal also
    /// carries the bits of every shorter literal it contains (see [`AnchorScan::groups`]).
    literal_groups: Vec<u32>,
    /// Single-byte anchors (`<`, `|`), found with `memchr` instead.
    byte_groups: Vec<(u8, u32)>,
}

enum AnchorSearch {
    /// SIMD (Teddy) search over an ASCII-lowercased copy of the text.
    Packed(packed::Searcher),
    /// Portable fallback where Teddy is unavailable: case-insensitive automaton, overlapping.
    Automaton(AhoCorasick),
}

static ANCHOR_SCAN: LazyLock<AnchorScan> = LazyLock::new(|| {
    let mut literals: Vec<(String, u32)> = Vec::new();
    let mut bit = 0u32;
    for (_, anchors) in PHRASES {
        for group in anchors {
            for literal in *group {
                let literal = literal.to_ascii_lowercase();
                match literals.iter_mut().find(|(l, _)| *l == literal) {
                    Some((_, groups)) => *groups |= 1 << bit,
                    None => literals.push((literal, 1 << bit)),
                }
            }
            bit += 1;
        }
    }
    let (bytes, literals): (Vec<_>, Vec<_>) = literals.into_iter().partition(|(l, _)| l.len() == 1);
    let byte_groups = bytes
        .into_iter()
        .filter_map(|(l, groups)| l.bytes().next().map(|b| (b, groups)))
        .collect();
    let literal_groups = literals
        .iter()
        .map(|(outer, groups)| {
            literals
                .iter()
                .filter(|(inner, _)| outer.contains(inner.as_str()))
                .fold(*groups, |all, (_, inner_groups)| all | inner_groups)
        })
        .collect();

    let patterns: Vec<&str> = literals.iter().map(|(l, _)| l.as_str()).collect();
    let mut config = packed::Config::new();
    config.match_kind(packed::MatchKind::LeftmostLongest);
    let mut builder = config.builder();
    builder.extend(&patterns);
    let search = match builder.build() {
        Some(searcher) => AnchorSearch::Packed(searcher),
        None => AnchorSearch::Automaton(
            // Constant literals; `every_pattern_compiles` builds this.
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .expect("anchor automaton builds"),
        ),
    };
    AnchorScan {
        search,
        literal_groups,
        byte_groups,
    }
});

impl AnchorScan {
    /// The anchor groups present in `s`.
    ///
    /// The packed search reports, at each start, only the longest literal beginning there,
    /// and is resumed one byte after that start, so every start position holding a literal is
    /// visited. A shorter literal at the same start is a prefix of the reported one, whose bits
    /// include it by the substring closure, so no occurrence is lost.
    fn groups(&self, s: &str) -> u32 {
        let mut bits = 0u32;
        for &(byte, groups) in &self.byte_groups {
            let upper = byte.to_ascii_uppercase();
            if memchr::memchr2(byte, upper, s.as_bytes()).is_some() {
                bits |= groups;
            }
        }
        let groups_of = |id: usize| self.literal_groups.get(id).copied().unwrap_or(0);
        match &self.search {
            AnchorSearch::Packed(searcher) => {
                let lower = s.to_ascii_lowercase();
                let haystack = lower.as_bytes();
                let mut at = 0;
                while at < haystack.len() {
                    let Some(m) = searcher.find_in(haystack, Span::from(at..haystack.len())) else {
                        break;
                    };
                    bits |= groups_of(m.pattern().as_usize());
                    at = m.start() + 1;
                }
            }
            AnchorSearch::Automaton(automaton) => {
                for m in automaton.find_overlapping_iter(s) {
                    bits |= groups_of(m.pattern().as_usize());
                }
            }
        }
        bits
    }
}

/// The bits of the anchor groups `id` needs, in [`AnchorScan`] numbering.
fn required_groups(id: &str) -> Option<u32> {
    let mut bit = 0u32;
    for (phrase_id, anchors) in PHRASES {
        let width = u32::try_from(anchors.len()).ok()?;
        if phrase_id == id {
            return Some(((1u32 << width) - 1) << bit);
        }
        bit += width;
    }
    None
}

/// Which anchor groups occur in the text: one search, shared by all phrase rules.
fn anchor_groups(text: &Text<'_>) -> u32 {
    *text.phrase_hits.get_or_init(|| ANCHOR_SCAN.groups(text.s))
}

/// Rewrite a pattern written in the reference's JavaScript dialect: `\s` becomes JavaScript's
/// whitespace set and `\b` the ASCII word boundary (a JS regex without the `u` flag has no
/// other). Literal words are written inside `(?i-u:…)` groups so case folding is ASCII-only,
/// as in the reference, and the automaton stays small.
fn translate(source: &str) -> String {
    source
        .replace(r"\s", JS_SPACE_CLASS)
        .replace(r"\b", r"(?-u:\b)")
}

/// Compile one phrase rule's pattern (see [`translate`]).
pub(super) fn phrase_regex(source: &str) -> Regex {
    // A constant pattern, and a unit test compiles every one: failing here is a bug in this
    // file, never a reaction to input.
    Regex::new(&translate(source)).expect("lint rule pattern compiles")
}

/// The evidence of a phrase rule: the text around its leftmost match. The pattern runs only
/// when the text holds every anchor group the rule declares, which on ordinary prose spares
/// almost every regex search.
pub(super) fn phrase_evidence(id: &str, re: &Regex, text: &Text<'_>) -> Option<String> {
    let required = required_groups(id)?;
    if anchor_groups(text) & required != required {
        return None;
    }
    re.find(text.s).map(|m| excerpt_around(text.s, m.start()))
}

/// `://`, searched once per text with a prebuilt SIMD searcher.
static SCHEME_SEPARATOR: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"://"));

/// How far back from a URL a verb still reads as an instruction about it (UTF-16 units).
const URL_LOOK_BACK: usize = 60;

/// The URL-anchored scan shared by CAS-L004 and CAS-L016: for each `http://`/`https://`
/// (any case), take the 60 units before it, keep only what follows the last `.` there (a
/// sentence boundary breaks the link between verb and URL), and fire when that clause
/// contains one of `verbs` as a substring, case-insensitively. Each URL costs a bounded
/// look-back, so the whole scan is linear.
pub(super) fn url_directive(text: &Text<'_>, verbs: &[&str]) -> Option<String> {
    let s = text.s;
    let bytes = s.as_bytes();
    for colon in SCHEME_SEPARATOR.find_iter(bytes) {
        let start = if colon >= 5 && bytes[colon - 5..colon].eq_ignore_ascii_case(b"https") {
            colon - 5
        } else if colon >= 4 && bytes[colon - 4..colon].eq_ignore_ascii_case(b"http") {
            colon - 4
        } else {
            continue;
        };
        let window = &s[back_utf16(s, start, URL_LOOK_BACK)..start];
        let clause = window.rfind('.').map_or(window, |dot| &window[dot + 1..]);
        if verbs.iter().any(|verb| contains_ascii_ci(clause, verb)) {
            return Some(excerpt_around(s, start));
        }
    }
    None
}

/// Substring test ignoring ASCII case; `needle` is lowercase ASCII. Lowercasing non-ASCII
/// text the way JavaScript does can never produce one of the ASCII verbs, so this is exact.
fn contains_ascii_ci(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Decode the char starting at byte `at` (a lead byte found by a byte search).
pub(super) fn char_at(s: &str, at: usize) -> Option<char> {
    s.get(at..).and_then(|rest| rest.chars().next())
}

#[cfg(test)]
pub(super) mod fixture {
    //! Shared test helpers: run one rule on one text.
    use super::super::text::Text;
    use super::Finder;

    pub(crate) fn fires(find: Finder, s: &str) -> Option<String> {
        find(&Text::new(s))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Evidence, Level};
    use super::*;

    #[test]
    fn ids_are_in_catalogue_order() {
        for (i, doc) in DOCS.iter().enumerate() {
            assert_eq!(doc.id, format!("CAS-L{:03}", i + 1));
        }
    }

    #[test]
    fn intent_rules_are_warn() {
        for doc in &DOCS {
            if doc.evidence == Evidence::Intent {
                assert_eq!(doc.level, Level::Warn, "{}", doc.id);
                assert!(doc.describe.ends_with(", verify intended"), "{}", doc.id);
            }
        }
    }

    #[test]
    fn help_cites_its_references() {
        for doc in &DOCS {
            assert!(doc.doc.contains(doc.id), "{} help names its id", doc.id);
            for owasp in doc.owasp {
                assert!(doc.doc.contains(owasp), "{} help cites {owasp}", doc.id);
            }
            if let Some(safe) = doc.safe_mcp {
                assert!(doc.doc.contains(safe), "{} help cites {safe}", doc.id);
            }
            for section in ["**What it flags.**", "**Why it matters.**", "**Example.**"] {
                assert!(doc.doc.contains(section), "{} help has {section}", doc.id);
            }
        }
    }

    #[test]
    fn url_scan_respects_sentence_and_window() {
        let t = Text::new("Send the log to HTTPS://x.example/a");
        assert!(url_directive(&t, &["send"]).is_some());
        let t = Text::new("Send the log. Then open https://x.example/a");
        assert!(url_directive(&t, &["send"]).is_none());
        let far = format!("send {} https://x.example", "x".repeat(60));
        assert!(url_directive(&Text::new(&far), &["send"]).is_none());
        let t = Text::new("ftp://a send http:/ nope");
        assert!(url_directive(&t, &["send"]).is_none());
    }

    #[test]
    fn output_finders_cover_exactly_the_output_rules() {
        let ids: Vec<&str> = (0..DOCS.len())
            .filter(|&i| output_finder(i).is_some())
            .map(|i| DOCS[i].id)
            .collect();
        assert_eq!(
            ids,
            [
                "CAS-L001", "CAS-L003", "CAS-L006", "CAS-L009", "CAS-L010", "CAS-L013"
            ]
        );
    }
}
