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
//! (short literals, and the long ones in two halves, see [`packed_parts`]) find which anchors
//! occur, and a rule's regex runs only on text holding its anchors, so a clean description
//! costs the anchor searches plus a few `memchr`-speed checks instead of eight regex searches.
//! The gate can only skip work, never change a result: a test feeds every alternative of every
//! pattern through the gated finders.

use std::cell::RefCell;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind, Span, packed};
use regex::Regex;

use super::RuleDoc;
use super::byte_class;
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
mod l017_terminal_control;
mod l018_override_beyond_catalogue;
mod l019_concealment_beyond_catalogue;
mod l020_exfiltration_beyond_catalogue;
mod l021_role_claim_beyond_catalogue;
mod l022_tool_shadowing;
mod l023_memory_persistence;
mod l024_unexplained_directive;

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

/// A gated rule's anchors: groups of literal substrings (ASCII case-insensitive) such that
/// every match of the rule's pattern contains at least one literal of *each* group. They are
/// necessary conditions, never sufficient ones: the pattern still decides. All anchors share
/// the packed (SIMD) searches, whose cost grows with how often a literal's first bytes occur,
/// so literals are cut from the pattern to begin on rare letters (`edential`, not
/// `credential`), and one literal per alternative is preferred to a conjunction of common ones.
///
/// A literal may also say what its pattern puts before it (see [`Context`]): `\snot` after
/// white space, `\bact` after an ASCII word boundary, `[i_-]key` after one of the bytes in
/// the brackets. A three-byte word is found inside many others (`act` in `characters`), and
/// each such find let the rule's whole pattern run on an honest text.
pub(super) type Anchors = &'static [&'static [&'static str]];

/// What an anchor's pattern requires just before it, read off the byte before the literal in
/// the text: a necessary condition, like the literal itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Context {
    /// Nothing.
    Any,
    /// White space (`\s`): an ASCII space, tab, line feed, vertical tab, form feed or carriage
    /// return, or the last byte of a character that is not ASCII (every other character
    /// JavaScript counts as white space is one).
    Space,
    /// An ASCII word boundary (`\b` before a letter): the start of the text or a byte that is
    /// not an ASCII letter, digit or `_`.
    WordStart,
    /// One of these bytes (ASCII, either case).
    After(&'static str),
}

impl Context {
    /// A written anchor's context and its literal (see [`Anchors`]).
    pub(super) fn of(written: &'static str) -> (Context, &'static str) {
        if let Some(literal) = written.strip_prefix("\\s") {
            return (Context::Space, literal);
        }
        if let Some(literal) = written.strip_prefix("\\b") {
            return (Context::WordStart, literal);
        }
        if let Some((set, literal)) = written
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']'))
        {
            return (Context::After(set), literal);
        }
        (Context::Any, written)
    }

    /// Whether the context holds before byte `at` of `text`.
    pub(super) fn holds(self, text: &[u8], at: usize) -> bool {
        let before = at.checked_sub(1).and_then(|i| text.get(i)).copied();
        match self {
            Context::Any => true,
            Context::Space => {
                before.is_some_and(|b| matches!(b, b'\t'..=b'\r' | b' ') || b >= 0x80)
            }
            Context::WordStart => before.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_')),
            Context::After(set) => {
                before.is_some_and(|b| set.bytes().any(|s| s.eq_ignore_ascii_case(&b)))
            }
        }
    }
}

/// The gate of the URL-anchored rules (CAS-L004, CAS-L016): no `://` after a `p` or an `s`
/// (`http://`, `https://`), no URL.
const URL_GATE: &str = "url";

/// Every gated rule, by id, with its anchors: the phrase rules (one regex each) and the
/// URL-anchored scan, which shares one gate for both of its rules.
const PHRASES: [(&str, Anchors); 9] = [
    (URL_GATE, &[&["[ps]://"]]),
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

/// Every anchor of every gated rule, searched together; for each literal, the groups
/// (bit = position among all groups, see [`required_groups`]) its presence satisfies.
struct AnchorScan {
    search: AnchorSearch,
    /// Group bits per literal, indexed by pattern id, of the readings of it (and of the
    /// literals inside it) that need no context. Closed under substrings: a literal also
    /// carries the bits of every shorter literal it contains (see [`AnchorScan::groups`]).
    literal_groups: Vec<u32>,
    /// Per literal, the readings of it and of the literals inside it that need a context
    /// ([`Context`]): their groups, their context, and where they start in the literal.
    /// Checked against the text at each find.
    context_groups: Vec<Vec<(u32, Context, usize)>>,
    /// Single-byte anchors (`<`, `|`), found with `memchr` instead: a one-byte literal would
    /// blunt the packed search's fingerprints for every other literal.
    byte_groups: Vec<(u8, u32)>,
    /// The distinct bytes (both cases) of `byte_groups`.
    byte_needles: Vec<u8>,
    /// Each needle with the groups it satisfies, when every needle is one of the bytes a
    /// prepared text tracks ([`byte_class::TRACKED`]): then the text's [`byte_class::Seen`]
    /// answers for them without a search. Worked out once, not per text.
    tracked_groups: Option<Vec<(u8, u32)>>,
}

enum AnchorSearch {
    /// SIMD (Teddy) searches over a folded copy of the text (see [`fold_byte`]), one per
    /// [`Packed`] part, with the literal ids each part's pattern ids stand for.
    Packed(Vec<Part>),
    /// Portable fallback where Teddy is unavailable: case-insensitive automaton, overlapping.
    Automaton(AhoCorasick),
}

/// One packed search of some of the anchors: its searcher, the literal ids its pattern ids
/// stand for, and when it is needed.
struct Part {
    searcher: packed::Searcher,
    ids: Vec<usize>,
    /// `None`: always searched. Else searched only when, for one of these masks, every group
    /// in it was found by the parts before: the part's literals only complete rules whose
    /// other groups are those (see [`packed_parts`]).
    needs: Option<Vec<u32>>,
}

static ANCHOR_SCAN: LazyLock<AnchorScan> = LazyLock::new(|| {
    // Each distinct literal with its readings: the groups it satisfies, in a context.
    let mut literals: Vec<(String, Vec<(u32, Context)>)> = Vec::new();
    let mut bit = 0u32;
    for (_, anchors) in PHRASES {
        for group in anchors {
            for written in *group {
                let (context, literal) = Context::of(written);
                let literal = literal.to_ascii_lowercase();
                let reading = (1 << bit, context);
                match literals.iter_mut().find(|(l, _)| *l == literal) {
                    Some((_, readings)) => readings.push(reading),
                    None => literals.push((literal, vec![reading])),
                }
            }
            bit += 1;
        }
    }
    let (bytes, literals): (Vec<_>, Vec<_>) = literals.into_iter().partition(|(l, _)| l.len() == 1);
    // A one-byte anchor is found by a byte search, which checks no context (a test holds
    // that none asks for one).
    let byte_groups: Vec<(u8, u32)> = bytes
        .into_iter()
        .filter_map(|(l, readings)| {
            let groups = readings.iter().fold(0, |all, &(groups, _)| all | groups);
            l.bytes().next().map(|b| (b, groups))
        })
        .collect();
    // Every reading of every literal inside each literal (itself included), and where it
    // starts there.
    let closure: Vec<Vec<(u32, Context, usize)>> = literals
        .iter()
        .map(|(outer, _)| {
            literals
                .iter()
                .flat_map(|(inner, readings)| {
                    // Every start, overlapping ones included: each may meet its context.
                    (0..outer.len())
                        .filter(|&at| outer[at..].starts_with(inner.as_str()))
                        .flat_map(move |at| {
                            readings
                                .iter()
                                .map(move |&(groups, context)| (groups, context, at))
                        })
                })
                .collect()
        })
        .collect();
    let literal_groups: Vec<u32> = closure
        .iter()
        .map(|readings| {
            readings
                .iter()
                .filter(|&&(_, context, _)| context == Context::Any)
                .fold(0, |all, &(groups, _, _)| all | groups)
        })
        .collect();
    let context_groups: Vec<Vec<(u32, Context, usize)>> = closure
        .into_iter()
        .map(|readings| {
            readings
                .into_iter()
                .filter(|&(_, context, _)| context != Context::Any)
                .collect()
        })
        .collect();

    let patterns: Vec<&str> = literals.iter().map(|(l, _)| l.as_str()).collect();
    let closure_groups: Vec<u32> = literal_groups
        .iter()
        .zip(&context_groups)
        .map(|(&plain, readings): (&u32, &Vec<(u32, Context, usize)>)| {
            readings
                .iter()
                .fold(plain, |all, &(groups, _, _)| all | groups)
        })
        .collect();
    let search = match packed_parts(&patterns, &closure_groups) {
        Some(parts) => AnchorSearch::Packed(parts),
        None => AnchorSearch::Automaton(
            // Constant literals; `every_pattern_compiles` builds this.
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .expect("anchor automaton builds"),
        ),
    };
    let mut byte_needles: Vec<u8> = byte_groups
        .iter()
        .flat_map(|&(b, _): &(u8, u32)| [b.to_ascii_lowercase(), b.to_ascii_uppercase()])
        .collect();
    byte_needles.sort_unstable();
    byte_needles.dedup();
    let tracked_groups = byte_needles
        .iter()
        .all(|&needle| byte_class::Seen::default().holds(needle).is_some())
        .then(|| {
            byte_needles
                .iter()
                .map(|&needle| {
                    let groups = byte_groups
                        .iter()
                        .filter(|(byte, _)| needle.eq_ignore_ascii_case(byte))
                        .fold(0, |all, &(_, groups)| all | groups);
                    (needle, groups)
                })
                .collect()
        });
    AnchorScan {
        search,
        literal_groups,
        context_groups,
        byte_groups,
        byte_needles,
        tracked_groups,
    }
});

/// The packed searches of the anchors, or `None` where Teddy is unavailable: literals of three
/// bytes in one, the longer ones in two more.
///
/// Why apart: Teddy fingerprints a candidate by as many leading bytes as its shortest literal
/// has, at most four. In one search, the seven three-byte anchors (`://`, `not`, `you`…) held
/// every literal to three-byte fingerprints, which English prose hits often, and the forty
/// literals took the slower "fat" layout (sixteen buckets, 16 bytes a step). Split, each part
/// has at most 32 literals and uses the 32-byte layout, and the longer literals are
/// fingerprinted by four bytes. The thirty-odd longer ones share eight buckets in one search,
/// four to a bucket, and the union of a bucket's fingerprints let through a candidate to
/// verify every few bytes of prose; in two searches of half as many, the second scan costs
/// less than the verifying it spares (1,602 → 1,576 M instructions for `bench_lint 1`; three
/// searches: 1,616 M).
///
/// How the longer ones are split: the literals that only complete a rule whose other groups
/// are all found by the three-byte or byte search (`tell`, `show`… of CAS-L003, which also
/// needs `not`; the role words of CAS-L013, which also need `you` or `act`; the marker words
/// of CAS-L002, which also need `<`) go last, searched only when one of those rules has its
/// other groups; the rest first (`closure_groups`: each literal's groups, the literals inside
/// it included). Most prose has neither `not` after a space, nor `you` or `act` as a word,
/// nor `<`, and is spared the last search. What a rule's gate
/// admits is what one search over all literals gives (`gates_admit_what_the_plain_groups_do`).
fn packed_parts(patterns: &[&str], closure_groups: &[u32]) -> Option<Vec<Part>> {
    let short_only = |id: usize| patterns[id].len() < 4;
    let (short, long): (Vec<usize>, Vec<usize>) =
        (0..patterns.len()).partition(|&id| short_only(id));
    // Each multi-group rule's groups that the three-byte search (or the byte search) settles
    // alone, and the ones it does not.
    let mut settled_by_short: Vec<(u32, u32)> = Vec::new();
    let mut bit = 0u32;
    for (_, anchors) in PHRASES {
        let (mut short_groups, mut other_groups) = (0u32, 0u32);
        for group in anchors {
            let all_short = group.iter().all(|written| Context::of(written).1.len() < 4);
            if all_short {
                short_groups |= 1 << bit;
            } else {
                other_groups |= 1 << bit;
            }
            bit += 1;
        }
        if short_groups != 0 && other_groups != 0 {
            settled_by_short.push((short_groups, other_groups));
        }
    }
    // A longer literal waits when every group it satisfies is one such rule's other group.
    let deferrable = |id: usize| {
        let groups = closure_groups.get(id).copied().unwrap_or(0);
        groups != 0
            && (0..32).filter(|b| groups >> b & 1 == 1).all(|b| {
                settled_by_short
                    .iter()
                    .any(|&(_, other)| other >> b & 1 == 1)
            })
    };
    let (last, first): (Vec<usize>, Vec<usize>) = long.into_iter().partition(|&id| deferrable(id));
    let needs: Vec<u32> = settled_by_short.iter().map(|&(short, _)| short).collect();
    [(short, None), (first, None), (last, Some(needs))]
        .into_iter()
        .filter(|(ids, _)| !ids.is_empty())
        .map(|(ids, needs)| {
            let mut config = packed::Config::new();
            config.match_kind(packed::MatchKind::LeftmostLongest);
            let mut builder = config.builder();
            builder.extend(
                ids.iter()
                    .map(|&id| patterns[id].bytes().map(fold_byte).collect::<Vec<u8>>()),
            );
            builder.build().map(|searcher| Part {
                searcher,
                ids,
                needs,
            })
        })
        .collect()
}

impl AnchorScan {
    /// The anchor groups present in `s`, except those of a rule whose other groups are
    /// absent (see [`packed_parts`]): the gates admit what they would with every group.
    ///
    /// Each packed search reports, at each start, only the longest of its literals beginning
    /// there, and is resumed one byte after that start, so every start position holding one
    /// of its literals is visited. A shorter literal at the same start is a prefix of the
    /// reported one, whose bits include it by the substring closure, so no occurrence is lost;
    /// and since each part visits every start of its own literals, the union of the parts'
    /// bits is what one search over all literals would find, for every part searched
    /// (`gates_admit_what_the_plain_groups_do`).
    fn groups(&self, s: &str, seen: Option<byte_class::Seen>) -> u32 {
        let mut bits = self.byte_bits(s.as_bytes(), seen);
        let bytes = s.as_bytes();
        // The groups a find of literal `id` at `at` satisfies: those needing no context, and
        // those whose context holds there.
        let groups_of = |id: usize, at: usize| {
            let plain = self.literal_groups.get(id).copied().unwrap_or(0);
            self.context_groups
                .get(id)
                .into_iter()
                .flatten()
                .filter(|&&(_, context, offset)| context.holds(bytes, at + offset))
                .fold(plain, |all, &(groups, _, _)| all | groups)
        };
        match &self.search {
            AnchorSearch::Packed(parts) => FOLDED.with_borrow_mut(|folded| {
                fold_into(s.as_bytes(), folded);
                let haystack = folded.as_slice();
                for Part {
                    searcher,
                    ids,
                    needs,
                } in parts
                {
                    if needs
                        .as_ref()
                        .is_some_and(|masks| !masks.iter().any(|&m| m & !bits == 0))
                    {
                        continue;
                    }
                    let mut at = 0;
                    while at < haystack.len() {
                        let span = Span::from(at..haystack.len());
                        let Some(m) = searcher.find_in(haystack, span) else {
                            break;
                        };
                        if let Some(&id) = ids.get(m.pattern().as_usize()) {
                            bits |= groups_of(id, m.start());
                        }
                        at = m.start() + 1;
                    }
                }
                // A text is linted once; keep only a modest buffer between texts.
                if folded.capacity() > FOLDED_KEEP {
                    *folded = Vec::new();
                }
            }),
            AnchorSearch::Automaton(automaton) => {
                for m in automaton.find_overlapping_iter(s) {
                    bits |= groups_of(m.pattern().as_usize(), m.start());
                }
            }
        }
        bits
    }
}

impl AnchorScan {
    /// Group bits of the single-byte anchors present. When the pass that prepared the text
    /// tracked every such byte (`seen`, see [`byte_class::TRACKED`]), it answers; else one
    /// `memchr` pass for up to three distinct bytes (both cases), a plain loop beyond that.
    fn byte_bits(&self, haystack: &[u8], seen: Option<byte_class::Seen>) -> u32 {
        if let (Some(seen), Some(tracked)) = (seen, &self.tracked_groups) {
            return tracked
                .iter()
                .filter(|&&(needle, _)| seen.holds(needle) == Some(true))
                .fold(0, |bits, &(_, groups)| bits | groups);
        }
        let mut bits = 0u32;
        let mut add = |found: u8| {
            for &(byte, groups) in &self.byte_groups {
                if found.eq_ignore_ascii_case(&byte) {
                    bits |= groups;
                }
            }
        };
        match *self.byte_needles.as_slice() {
            [] => {}
            [a] => memchr::memchr_iter(a, haystack).for_each(|at| add(haystack[at])),
            [a, b] => memchr::memchr2_iter(a, b, haystack).for_each(|at| add(haystack[at])),
            [a, b, c] => memchr::memchr3_iter(a, b, c, haystack).for_each(|at| add(haystack[at])),
            _ => haystack
                .iter()
                .filter(|b| self.byte_needles.contains(b))
                .for_each(|&b| add(b)),
        }
        bits
    }
}

thread_local! {
    /// The folded copy the packed search reads, reused across texts.
    static FOLDED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Largest folded buffer kept between texts (bytes).
const FOLDED_KEEP: usize = 1 << 16;

/// Case-fold a byte and scatter it: ASCII-lowercase, then XOR the low nibble into the high
/// one (a bijection: the low nibble is kept, so the high one can be recovered); every
/// non-ASCII byte becomes 0, which no literal contains (they are ASCII and NUL-free) and which
/// therefore still separates words. Text and literals are folded alike, so a literal matches
/// the folded text exactly where it matches the original ASCII-case-insensitively. The
/// scatter is for speed only: the packed searcher fingerprints bytes by their high and low
/// nibbles, every lowercase letter shares a high nibble (6 or 7), and unscattered English
/// prose looks like a candidate almost everywhere. Shifts, XOR and masks keep the copy loop
/// vectorizable.
const fn fold_byte(b: u8) -> u8 {
    let lower = b.to_ascii_lowercase();
    let scattered = lower ^ (lower << 4);
    scattered & ((b >> 7) ^ 1).wrapping_neg()
}

/// `bytes` folded (see [`fold_byte`]) into `out`, emptied first.
///
/// Sixteen bytes at a time through a fixed-size array, which the compiler folds with a few
/// vector operations, and the last few bytes through a padded one: folding the text as one
/// iterator vectorized the bulk but took the tail of every text (half a vector on average,
/// the texts being short) a byte at a time.
fn fold_into(bytes: &[u8], out: &mut Vec<u8>) {
    // Thirty-two bytes per operation where the CPU has AVX2 (`byte_class`).
    if !byte_class::fold_for_anchors(bytes, out) {
        fold_into_portable(bytes, out);
    }
}

/// [`fold_into`] on any CPU.
fn fold_into_portable(bytes: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(bytes.len());
    let mut chunks = bytes.chunks_exact(16);
    for chunk in &mut chunks {
        if let Some(sixteen) = chunk.first_chunk::<16>() {
            out.extend_from_slice(&fold_sixteen(sixteen));
        }
    }
    let rest = chunks.remainder();
    let mut padded = [0u8; 16];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    out.extend_from_slice(fold_sixteen(&padded).get(..rest.len()).unwrap_or_default());
}

/// Sixteen bytes folded, in a loop of fixed length the compiler turns into vector operations.
#[inline(always)]
fn fold_sixteen(bytes: &[u8; 16]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, &b) in out.iter_mut().zip(bytes) {
        *o = fold_byte(b);
    }
    out
}

/// The bits of the anchor groups the gated rule `id` needs, in [`AnchorScan`] numbering. Rules
/// look this up once (a `LazyLock` each) and pass it to [`phrase_evidence`]; `None` (an id
/// with no anchors) can only come from a rule file wired wrong, and a test calls every rule.
pub(super) fn required_groups(id: &str) -> Option<u32> {
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
    *text
        .phrase_hits
        .get_or_init(|| ANCHOR_SCAN.groups(text.s, Some(text.seen)))
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

/// The URL-anchored scan shared by CAS-L004 and CAS-L016: for each `http://`/`https://`
/// (any case), take the 60 units before it, keep only what follows the last `.` there (a
/// sentence boundary breaks the link between verb and URL), and fire when that clause
/// contains one of `verbs` as a substring, case-insensitively. Each URL costs a bounded
/// look-back, so the whole scan is linear.
pub(super) fn url_directive(text: &Text<'_>, verbs: &[&str]) -> Option<String> {
    let required = (*URL_REQUIRED)?;
    if anchor_groups(text) & required != required {
        return None;
    }
    let s = text.s;
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
        if contains_any_ascii_ci(clause, verbs) {
            return Some(excerpt_around(s, start));
        }
    }
    None
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
