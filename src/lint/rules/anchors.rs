//! The anchors of the gated rules: literals a rule's pattern cannot match without, found in a
//! text by packed (SIMD) searches over a folded copy, so that a rule's regex runs only on text
//! holding them (see [`Anchors`]).

use std::cell::RefCell;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind, Span, packed};

use super::super::byte_class;
use super::super::text::Text;
use super::{
    l001_instruction_override, l002_hidden_markers, l003_concealment, l005_sensitive_material,
    l011_tool_priority, l012_command_execution, l013_role_impersonation, l014_credential_request,
};

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
pub(super) const URL_GATE: &str = "url";

/// Every gated rule, by id, with its anchors: the phrase rules (one regex each) and the
/// URL-anchored scan, which shares one gate for both of its rules.
pub(super) const PHRASES: [(&str, Anchors); 9] = [
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
pub(super) struct AnchorScan {
    pub(super) search: AnchorSearch,
    /// Group bits per literal, indexed by pattern id, of the readings of it (and of the
    /// literals inside it) that need no context. Closed under substrings: a literal also
    /// carries the bits of every shorter literal it contains (see [`AnchorScan::groups`]).
    pub(super) literal_groups: Vec<u32>,
    /// Per literal, the readings of it and of the literals inside it that need a context
    /// ([`Context`]): their groups, their context, and where they start in the literal.
    /// Checked against the text at each find.
    pub(super) context_groups: Vec<Vec<(u32, Context, usize)>>,
    /// Single-byte anchors (`<`, `|`), found with `memchr` instead: a one-byte literal would
    /// blunt the packed search's fingerprints for every other literal.
    pub(super) byte_groups: Vec<(u8, u32)>,
    /// The distinct bytes (both cases) of `byte_groups`.
    pub(super) byte_needles: Vec<u8>,
    /// Each needle with the groups it satisfies, when every needle is one of the bytes a
    /// prepared text tracks ([`byte_class::TRACKED`]): then the text's [`byte_class::Seen`]
    /// answers for them without a search. Worked out once, not per text.
    pub(super) tracked_groups: Option<Vec<(u8, u32)>>,
}

pub(super) enum AnchorSearch {
    /// SIMD (Teddy) searches over a folded copy of the text (see [`fold_byte`]), one per
    /// [`Part`], with the literal ids each part's pattern ids stand for.
    Packed(Vec<Part>),
    /// Portable fallback where Teddy is unavailable: case-insensitive automaton, overlapping.
    Automaton(AhoCorasick),
}

/// One packed search of some of the anchors: its searcher, the literal ids its pattern ids
/// stand for, and when it is needed.
pub(super) struct Part {
    pub(super) searcher: packed::Searcher,
    pub(super) ids: Vec<usize>,
    /// `None`: always searched. Else searched only when, for one of these masks, every group
    /// in it was found by the parts before: the part's literals only complete rules whose
    /// other groups are those (see [`packed_parts`]).
    pub(super) needs: Option<Vec<u32>>,
}

pub(super) static ANCHOR_SCAN: LazyLock<AnchorScan> = LazyLock::new(|| {
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
    pub(super) fn groups(&self, s: &str, seen: Option<byte_class::Seen>) -> u32 {
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
pub(super) const fn fold_byte(b: u8) -> u8 {
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
pub(super) fn fold_into(bytes: &[u8], out: &mut Vec<u8>) {
    // Thirty-two bytes per operation where the CPU has AVX2 (`byte_class`).
    if !byte_class::fold_for_anchors(bytes, out) {
        fold_into_portable(bytes, out);
    }
}

/// [`fold_into`] on any CPU.
pub(super) fn fold_into_portable(bytes: &[u8], out: &mut Vec<u8>) {
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
/// look this up once (a `LazyLock` each) and pass it to [`super::phrase_evidence`]; `None` (an id
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
pub(super) fn anchor_groups(text: &Text<'_>) -> u32 {
    *text
        .phrase_hits
        .get_or_init(|| ANCHOR_SCAN.groups(text.s, Some(text.seen)))
}
