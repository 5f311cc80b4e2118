//! The rules, one file each, in catalogue order: the sixteen of the first stage (CAS-L001 …
//! CAS-L016, literal phrasings and code points), CAS-L017 (terminal control sequences), then
//! the second stage (CAS-L018 onward: phrase families over normalised text and the intent
//! reader, see `families`).
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
//!
//! Speed comes from a shared gate. Each regex rule (and the URL scan) declares
//! [`Anchors`]: literals its pattern cannot match without. Three packed SIMD searches per text
//! (short literals, and the long ones in two halves: `packed_parts` in the `anchors` module)
//! find which anchors occur, and a rule's regex runs only on text holding its anchors, so a
//! clean description costs the anchor searches plus a few `memchr`-speed checks instead of
//! eight regex searches.
//! The gate can only skip work, never change a result: a test feeds every alternative of every
//! pattern through the gated finders.

use std::sync::LazyLock;

use regex::Regex;

use super::RuleDoc;
use super::text::{JS_SPACE_CLASS, Text, back_utf16, excerpt_around};
#[cfg(test)]
use anchors::{
    ANCHOR_SCAN, AnchorSearch, Context, PHRASES, fold_byte, fold_into, fold_into_portable,
};
use anchors::{Anchors, URL_GATE, anchor_groups, required_groups};

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
mod l017_terminal_control;
mod l018_override_beyond_catalogue;
mod l019_concealment_beyond_catalogue;
mod l020_exfiltration_beyond_catalogue;
mod l021_role_claim_beyond_catalogue;
mod l022_tool_shadowing;
mod l023_memory_persistence;
mod l024_unexplained_directive;

mod anchors;
pub(crate) mod families;

/// A rule's matcher: the evidence string when it fires on this text.
pub(crate) type Finder = fn(&Text<'_>) -> Option<String>;

/// What a rule's finders (declared and recorded-output alike) need a text to hold before they
/// can find anything: each finder returns `None` at once otherwise, and [`super::scan_text`]
/// asks here first instead of calling it. A call costs a few dozen instructions even when the
/// finder returns at once, and most rules do on most texts. A test holds every rule to what it
/// declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// Nothing checked up front.
    Anything,
    /// The anchor groups of its own phrase pattern (see [`Anchors`]).
    Anchors,
    /// The anchor group of the URL-anchored scan (`://`).
    Url,
    /// A byte that is not ASCII: every code point the rule looks for is above U+007F.
    NonAscii,
    /// Second-stage evidence in this slot (a family, or the intent stage): what the rule reports.
    Evidence(usize),
}

/// A rule's [`Needs`] worked out once: the anchor groups the text must hold (none when zero),
/// whether it must hold a byte that is not ASCII, and which second-stage slot must hold
/// evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Gate {
    groups: u32,
    non_ascii: bool,
    /// The second-stage slot that must hold evidence.
    evidence: Option<usize>,
}

impl Gate {
    /// The gate of rule `index` (catalogue order).
    pub(crate) fn of(index: usize) -> Gate {
        let (Some(doc), Some(needs)) = (DOCS.get(index), NEEDS.get(index)) else {
            return Gate::default();
        };
        let none = Gate::default();
        match *needs {
            Needs::Anything => none,
            Needs::Anchors => Gate {
                groups: required_groups(doc.id).unwrap_or(0),
                ..none
            },
            Needs::Url => Gate {
                groups: (*URL_REQUIRED).unwrap_or(0),
                ..none
            },
            Needs::NonAscii => Gate {
                non_ascii: true,
                ..none
            },
            Needs::Evidence(slot) => Gate {
                evidence: Some(slot),
                ..none
            },
        }
    }

    /// Whether the text may hold what the rule looks for; `false` only when its finders would
    /// return `None`. The plain definition: [`SurfaceRules::admitted`] answers for every rule
    /// of a surface at once, and the tests hold the two equal.
    #[cfg(test)]
    pub(crate) fn admits(self, text: &Text<'_>) -> bool {
        if self.non_ascii && text.ascii() {
            return false;
        }
        if let Some(slot) = self.evidence {
            return analysis(text).evidence(slot).is_some();
        }
        self.groups == 0 || anchor_groups(text) & self.groups == self.groups
    }
}

/// The rules one surface reads, with their gates folded into bit masks so that a text is
/// admitted to all of them at once: a rule that needs nothing, or a byte that is not ASCII,
/// costs one `or` per text instead of a gate check and a test, and only the admitted rules'
/// finders are called. Bit `i` stands for `finders[i]`; [`SurfaceRules::admitted`] gives what
/// [`Gate::admits`] gives for each rule (a test holds the two equal).
pub(crate) struct SurfaceRules {
    /// Each rule's place in the catalogue and its finder, in catalogue order.
    pub(crate) finders: Vec<(usize, Finder)>,
    /// Rules admitted whatever the text.
    always: u64,
    /// Rules admitted when the text holds a byte that is not ASCII.
    non_ascii: u64,
    /// Rules admitted when the text holds every anchor group of theirs.
    anchored: Vec<(u32, u64)>,
    /// Rules admitted when the second stage found evidence in their slot.
    evidence: Vec<(usize, u64)>,
}

/// Most rules one surface may read: [`SurfaceRules`] keeps them in a `u64`.
pub(crate) const MAX_SURFACE_RULES: usize = 64;

impl SurfaceRules {
    /// The rules of `finders` (catalogue index and finder, in catalogue order); `None` past
    /// [`MAX_SURFACE_RULES`], which a test rules out.
    pub(crate) fn new(finders: Vec<(usize, Finder)>) -> Option<SurfaceRules> {
        if finders.len() > MAX_SURFACE_RULES {
            return None;
        }
        let mut rules = SurfaceRules {
            finders: Vec::new(),
            always: 0,
            non_ascii: 0,
            anchored: Vec::new(),
            evidence: Vec::new(),
        };
        for (i, &(index, _)) in finders.iter().enumerate() {
            let bit = 1u64 << i;
            let gate = Gate::of(index);
            // A gate has one condition at most (see `Gate::of`).
            if gate.non_ascii {
                rules.non_ascii |= bit;
            } else if let Some(slot) = gate.evidence {
                rules.evidence.push((slot, bit));
            } else if gate.groups != 0 {
                rules.anchored.push((gate.groups, bit));
            } else {
                rules.always |= bit;
            }
        }
        rules.finders = finders;
        Some(rules)
    }

    /// The rules `text` may trip, as bits of [`SurfaceRules::finders`].
    #[inline]
    pub(crate) fn admitted(&self, text: &Text<'_>) -> u64 {
        let mut admitted = self.always;
        if !text.ascii() {
            admitted |= self.non_ascii;
        }
        if !self.anchored.is_empty() {
            let found = anchor_groups(text);
            for &(groups, bit) in &self.anchored {
                if found & groups == groups {
                    admitted |= bit;
                }
            }
        }
        if !self.evidence.is_empty() {
            let analysis = analysis(text);
            if analysis.found_any() {
                for &(slot, bit) in &self.evidence {
                    if analysis.evidence(slot).is_some() {
                        admitted |= bit;
                    }
                }
            }
        }
        admitted
    }
}

/// The catalogue, in the order findings are produced for each field.
pub(crate) static DOCS: [RuleDoc; 24] = [
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
    l017_terminal_control::DOC,
    l018_override_beyond_catalogue::DOC,
    l019_concealment_beyond_catalogue::DOC,
    l020_exfiltration_beyond_catalogue::DOC,
    l021_role_claim_beyond_catalogue::DOC,
    l022_tool_shadowing::DOC,
    l023_memory_persistence::DOC,
    l024_unexplained_directive::DOC,
];

/// How many rules the first stage has (CAS-L001 … CAS-L016). The rug-pull comparison of
/// `contract` reads these only, so upgrading does not change which drifts are dangerous.
pub(crate) const FIRST_STAGE: usize = 16;

/// The finders for declared surfaces (tool, prompt, resource, name), index-aligned with
/// [`DOCS`] (a test checks the alignment through each rule's own fixtures).
pub(crate) static FINDERS: [Finder; 24] = [
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
    l017_terminal_control::find,
    l018_override_beyond_catalogue::find,
    l019_concealment_beyond_catalogue::find,
    l020_exfiltration_beyond_catalogue::find,
    l021_role_claim_beyond_catalogue::find,
    l022_tool_shadowing::find,
    l023_memory_persistence::find,
    l024_unexplained_directive::find,
];

/// Each rule's [`Needs`], in catalogue order.
pub(crate) static NEEDS: [Needs; 24] = [
    l001_instruction_override::NEEDS,
    l002_hidden_markers::NEEDS,
    l003_concealment::NEEDS,
    l004_exfiltration::NEEDS,
    l005_sensitive_material::NEEDS,
    l006_invisible_unicode::NEEDS,
    l007_opaque_blob::NEEDS,
    l008_oversized::NEEDS,
    l009_bidi_override::NEEDS,
    l010_variation_selectors::NEEDS,
    l011_tool_priority::NEEDS,
    l012_command_execution::NEEDS,
    l013_role_impersonation::NEEDS,
    l014_credential_request::NEEDS,
    l015_mixed_script::NEEDS,
    l016_unpinned_fetch::NEEDS,
    l017_terminal_control::NEEDS,
    l018_override_beyond_catalogue::NEEDS,
    l019_concealment_beyond_catalogue::NEEDS,
    l020_exfiltration_beyond_catalogue::NEEDS,
    l021_role_claim_beyond_catalogue::NEEDS,
    l022_tool_shadowing::NEEDS,
    l023_memory_persistence::NEEDS,
    l024_unexplained_directive::NEEDS,
];

/// The second-stage evidence of `slot` (a family, or the intent stage) on this text, unless
/// one of `covered_by` (the first-stage rules of the same family) already fires on it: one
/// sentence is reported once, under the rule a user already knows.
pub(super) fn second_stage(text: &Text<'_>, slot: usize, covered_by: &[Finder]) -> Option<String> {
    let evidence = analysis(text).evidence(slot)?;
    if covered_by.iter().any(|find| find(text).is_some()) {
        return None;
    }
    Some(evidence.clone())
}

/// What the second stage found in the text, worked out the first time a rule asks.
fn analysis<'t>(text: &'t Text<'_>) -> &'t families::Analysis {
    text.second
        .get_or_init(|| families::analyse(text.s, text.ascii()))
}

/// What silences the intent reader: every phrase rule of both stages.
const COVERING_INTENT: &[Finder] = &[
    l001_instruction_override::find,
    l002_hidden_markers::find,
    l003_concealment::find,
    l004_exfiltration::find,
    l005_sensitive_material::find,
    l011_tool_priority::find,
    l012_command_execution::find,
    l013_role_impersonation::find,
    l014_credential_request::find,
    l018_override_beyond_catalogue::find,
    l019_concealment_beyond_catalogue::find,
    l020_exfiltration_beyond_catalogue::find,
    l021_role_claim_beyond_catalogue::find,
    l022_tool_shadowing::find,
    l023_memory_persistence::find,
];

/// The finder a rule uses on recorded output. CAS-L006 (narrowed to runs and Tags code points)
/// and CAS-L017 (narrowed to sequences that hide text or act on the terminal) differ from their
/// declared-surface finders (docs/lint.md).
pub(crate) fn output_finder(index: usize) -> Option<Finder> {
    let doc = DOCS.get(index)?;
    if !doc.surfaces.contains(&super::Surface::Output) {
        return None;
    }
    if doc.id == l006_invisible_unicode::DOC.id {
        return Some(l006_invisible_unicode::find_output);
    }
    if doc.id == l017_terminal_control::DOC.id {
        return Some(l017_terminal_control::find_output);
    }
    FINDERS.get(index).copied()
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
pub(super) fn phrase_evidence(
    required: Option<u32>,
    re: &Regex,
    text: &Text<'_>,
) -> Option<String> {
    let required = required?;
    if anchor_groups(text) & required != required {
        return None;
    }
    re.find(text.s).map(|m| excerpt_around(text.s, m.start()))
}

static URL_REQUIRED: LazyLock<Option<u32>> = LazyLock::new(|| required_groups(URL_GATE));

/// Where `://` occurs in `bytes`: at each `:` (rare in prose, found by `memchr`) followed by
/// `//`. A substring searcher cost about 470 instructions a call to set up and run over a
/// description of a few hundred bytes; the colons of a description are a handful. (`://`
/// cannot overlap itself, so these are all its occurrences.)
fn scheme_separators(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b':', bytes).filter(|&colon| {
        bytes
            .get(colon + 1..colon + 3)
            .is_some_and(|slashes| slashes == b"//")
    })
}

/// How far back from a URL a verb still reads as an instruction about it (UTF-16 units).
const URL_LOOK_BACK: usize = 60;

/// The URL-anchored rules, as indexes of [`URL_VERBS`] and of what [`url_directives`] finds.
#[derive(Debug, Clone, Copy)]
pub(super) enum UrlRule {
    /// CAS-L004's sending verbs.
    Exfiltration = 0,
    /// CAS-L016's fetching verbs.
    UnpinnedFetch = 1,
}

/// The verbs of each [`UrlRule`].
pub(super) const URL_VERBS: [&[&str]; 2] = [l004_exfiltration::VERBS, l016_unpinned_fetch::VERBS];

/// Where each [`UrlRule`] first fires in a text: the start of its URL.
pub(crate) type UrlDirectives = [Option<usize>; 2];

/// The URL-anchored scan shared by CAS-L004 and CAS-L016: for each `http://`/`https://`
/// (any case), take the 60 units before it, keep only what follows the last `.` there (a
/// sentence boundary breaks the link between verb and URL), and fire when that clause
/// contains one of the rule's verbs as a substring, case-insensitively. Each URL costs a
/// bounded look-back, so the whole scan is linear. The scan runs once per text for both
/// rules (a text with a URL in it asked for it twice).
pub(super) fn url_directive(text: &Text<'_>, rule: UrlRule) -> Option<String> {
    let required = (*URL_REQUIRED)?;
    if anchor_groups(text) & required != required {
        return None;
    }
    let found = text.urls.get_or_init(|| url_directives(text.s, URL_VERBS));
    found[rule as usize].map(|start| excerpt_around(text.s, start))
}

/// For each list of verbs, where the first URL whose clause holds one of them starts (see
/// [`url_directive`]).
pub(super) fn url_directives<const N: usize>(s: &str, lists: [&[&str]; N]) -> [Option<usize>; N] {
    let mut found = [None; N];
    let bytes = s.as_bytes();
    for colon in scheme_separators(bytes) {
        let start = if colon >= 5 && bytes[colon - 5..colon].eq_ignore_ascii_case(b"https") {
            colon - 5
        } else if colon >= 4 && bytes[colon - 4..colon].eq_ignore_ascii_case(b"http") {
            colon - 4
        } else {
            continue;
        };
        let window = &s[back_utf16(s, start, URL_LOOK_BACK)..start];
        let clause = window.rfind('.').map_or(window, |dot| &window[dot + 1..]);
        for (slot, verbs) in found.iter_mut().zip(lists) {
            if slot.is_none() && contains_any_ascii_ci(clause, verbs) {
                *slot = Some(start);
            }
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found
}

/// Whether `haystack` contains one of `needles` (lowercase ASCII), ignoring ASCII case.
/// Lowercasing non-ASCII text the way JavaScript does can never produce one of the ASCII
/// verbs, so this is exact.
///
/// One walk over the haystack: only at a byte that begins a needle (in either case) are the
/// needles compared. A window comparison per needle at every offset of the clause cost the
/// URL scan several times as much, on every URL of every text (a test holds the two equal).
fn contains_any_ascii_ci(haystack: &str, needles: &[&str]) -> bool {
    if needles.iter().any(|n| n.is_empty()) {
        return true;
    }
    // Bit `b` for each byte `b` a needle begins with (needles are ASCII: below 128).
    let firsts = needles
        .iter()
        .filter_map(|n| n.as_bytes().first())
        .fold(0u128, |set, &b| set | 1u128 << (b & 0x7F));
    let h = haystack.as_bytes();
    h.iter().enumerate().any(|(i, &b)| {
        let lower = b.to_ascii_lowercase();
        lower < 0x80
            && firsts >> lower & 1 != 0
            && needles.iter().any(|n| {
                h.get(i..i + n.len())
                    .is_some_and(|w| w.eq_ignore_ascii_case(n.as_bytes()))
            })
    })
}

/// The kinds of format character CAS-L006, CAS-L009 and CAS-L010 look for, as bits of
/// [`special_kinds`]. Each rule scanned the text for its lead bytes on its own (four passes,
/// one of them twice), decoding every candidate, though honest text (a quotation mark, a dash,
/// a fullwidth comma) shares their lead bytes and holds none of them.
#[derive(Debug, Clone, Copy)]
pub(super) enum Special {
    /// CAS-L006's invisible code points.
    Invisible = 1,
    /// CAS-L009's bidi embeddings, overrides and isolates.
    Bidi = 2,
    /// CAS-L010's variation selectors.
    Selector = 4,
}

/// Which [`Special`] kinds the text holds: one scan over the lead bytes all three kinds start
/// with (0xE2 for U+2xxx, 0xEF for U+FExx, 0xF3 for plane 14), kept for the other rules.
pub(super) fn special_kinds(text: &Text<'_>) -> u8 {
    *text.specials.get_or_init(|| {
        let s = text.s;
        memchr::memchr3_iter(0xE2, 0xEF, 0xF3, s.as_bytes())
            .filter_map(|at| char_at(s, at))
            .fold(0, |kinds, c| kinds | special_kind_of(c))
    })
}

/// The [`Special`] kinds `c` is (bits).
pub(super) fn special_kind_of(c: char) -> u8 {
    let kind = |is: bool, kind: Special| if is { kind as u8 } else { 0 };
    kind(l006_invisible_unicode::is_invisible(c), Special::Invisible)
        | kind(l009_bidi_override::is_control(c), Special::Bidi)
        | kind(l010_variation_selectors::is_selector(c), Special::Selector)
}

/// Whether the text holds a character of `kind` (the first rule to ask scans for all kinds).
pub(super) fn holds_special(text: &Text<'_>, kind: Special) -> bool {
    !text.ascii() && special_kinds(text) & kind as u8 != 0
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

    /// Texts made of up to `most` of `pieces`, run together in any order.
    pub(crate) fn pieces_joined(
        pieces: Vec<String>,
        most: usize,
    ) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        proptest::collection::vec(proptest::sample::select(pieces), 0..most)
            .prop_map(|parts| parts.concat())
    }
}

#[cfg(test)]
mod tests;
