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

/// Compile a phrase pattern written in the reference's JavaScript dialect: `\s` becomes
/// JavaScript's whitespace set and `\b` the ASCII word boundary (a JS regex without the `u`
/// flag has no other). Literal words are written inside `(?i-u:…)` groups so case folding is
/// ASCII-only, as in the reference, and the literal prefilter stays small and fast.
pub(super) fn phrase_regex(pattern: &str) -> Regex {
    let translated = pattern
        .replace(r"\s", JS_SPACE_CLASS)
        .replace(r"\b", r"(?-u:\b)");
    // A constant pattern, and a unit test compiles every one: failing here is a bug in this
    // file, never a reaction to input.
    Regex::new(&translated).expect("lint rule pattern compiles")
}

/// The evidence of a phrase rule: the text around its leftmost match.
pub(super) fn phrase_evidence(re: &Regex, text: &Text<'_>) -> Option<String> {
    re.find(text.s).map(|m| excerpt_around(text.s, m.start()))
}

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
    for colon in memmem::find_iter(bytes, b"://") {
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
