//! The second stage: phrase families in ten languages over normalised text, and the intent
//! reader. CAS-L018 … CAS-L024 are thin views of the one [`Analysis`] computed here per text.
//!
//! # Families
//!
//! `phrases.txt` lists, per family and language, phrases of two roles (for instruction
//! override: a verb such as "disregard", and an object such as "guidance you were given").
//! A family fires when a phrase of each role occurs within [`WINDOW`] bytes of folded text, in
//! either order (word order differs between the languages). Phrases are found in one pass
//! over the text's main view (see `normalise`) and over each decoded view: at each position
//! a phrase may start (a word start, found 64 bytes at a time), the next eight bytes are read
//! once and 8 KiB hashed sets are asked whether a phrase begins with them (long phrases by
//! eight bytes, shorter ones by six or four: see [`PrefixIndex`]); only where one does are the
//! phrases filed under those bytes compared. Every phrase is at most a few dozen bytes, so the
//! pass is linear whatever the number of phrases.
//!
//! # Intent
//!
//! The intent reader (CAS-L024) looks for a sentence *addressed to the model* (second-person
//! imperatives, "the assistant", "before replying", in any of the ten languages) that also
//! names a *sensitive object* (credentials, keys, the conversation, other tools), and fires
//! unless the text's first sentence, which states the tool's purpose, is about that domain
//! (a credentials manager naming `~/.aws/credentials` is doing its job). It reads only the
//! text it is given: a schema field is judged on its own words, and the tool's name is not
//! read. See docs/check.md for its limits.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};

use super::super::byte_class;
use super::super::normalise::{self, Decoded, View};
use super::super::text::excerpt_around;

/// The phrase lists (see the file's header for the format).
const PHRASES: &str = include_str!("phrases.txt");

/// How close (bytes of folded text) the two roles of a family must be.
const WINDOW: usize = 200;

/// Longest purpose sentence read (bytes).
const PURPOSE_MAX: usize = 400;

/// The families, in the order of their rules (CAS-L018 …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Override,
    Conceal,
    Exfil,
    Role,
    Shadow,
    Memory,
    /// Text addressed to the model (intent stage).
    Addr,
    /// A sensitive object (intent stage).
    Act,
    /// Words of a purpose that explains acting on sensitive objects (intent stage).
    Purpose,
}

/// Families that fire on their own (everything but the intent stage's parts).
pub(crate) const PHRASE_FAMILIES: usize = 6;

impl Family {
    fn parse(name: &str) -> Option<Family> {
        Some(match name {
            "override" => Family::Override,
            "conceal" => Family::Conceal,
            "exfil" => Family::Exfil,
            "role" => Family::Role,
            "shadow" => Family::Shadow,
            "memory" => Family::Memory,
            "addr" => Family::Addr,
            "act" => Family::Act,
            "purpose" => Family::Purpose,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }
}

const ROLE_A: u8 = 1;
const ROLE_B: u8 = 2;

/// One phrase of one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    family: Family,
    roles: u8,
    /// Needs a word boundary before / after it.
    start_boundary: bool,
    end_boundary: bool,
}

struct Table {
    /// Families' and intent phrases (all but purpose words), folded.
    patterns: Vec<String>,
    /// Per pattern, the entries it stands for.
    entries: Vec<Vec<Entry>>,
    /// Pattern indexes by their first bytes, each with its gate: patterns shorter than
    /// [`MIDDLE_KEY`] by four bytes, those shorter than [`LONG_KEY`] by six, the others by
    /// eight.
    short: PrefixIndex,
    middle: PrefixIndex,
    long: PrefixIndex,
    /// The first gate of every position: the case-blind first four bytes of every pattern,
    /// whatever its length. Most positions fail it, and then no index's gate is asked.
    first: Gate,
    /// Purpose words, matched on the purpose sentence only.
    purpose: AhoCorasick,
    purpose_entries: Vec<Vec<Entry>>,
    /// Every (family, role, language, phrase) line read, for tests.
    #[cfg(test)]
    lines: Vec<(Family, u8, String, Vec<String>)>,
}

/// Whether a character is a letter of a script written with spaces between words: a phrase
/// beginning or ending on one needs a word boundary there.
fn is_spaced_letter(c: char) -> bool {
    c.is_alphanumeric() && !is_unspaced(c)
}

/// Chinese, Japanese and Korean letters, whose words are not separated by spaces (Korean is,
/// but particles attach to the word, so its phrases are stems).
fn is_unspaced(c: char) -> bool {
    matches!(c, '\u{1100}'..='\u{11FF}' | '\u{3040}'..='\u{30FF}' | '\u{3130}'..='\u{318F}'
        | '\u{3400}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}')
}

/// Parse `phrases.txt`. Malformed lines are a bug in this crate, caught by the tests (which
/// check every line parses), and skipped here rather than panicking at run time.
fn parse(source: &str) -> Vec<(Family, u8, String, Vec<String>)> {
    let mut out = Vec::new();
    for line in source.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((head, body)) = line.split_once(':') else {
            continue;
        };
        let mut parts = head.split_whitespace();
        let (Some(family), Some(role), Some(lang)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some(family) = Family::parse(family) else {
            continue;
        };
        let roles = match role {
            "a" => ROLE_A,
            "b" => ROLE_B,
            "ab" => ROLE_A | ROLE_B,
            _ => continue,
        };
        let phrases = body
            .split('|')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        out.push((family, roles, lang.to_owned(), phrases));
    }
    out
}

fn build(
    lines: &[(Family, u8, String, Vec<String>)],
    purpose: bool,
) -> (Vec<Vec<Entry>>, Vec<String>) {
    let mut patterns: Vec<String> = Vec::new();
    let mut entries: Vec<Vec<Entry>> = Vec::new();
    for (family, roles, _, phrases) in lines {
        if (*family == Family::Purpose) != purpose {
            continue;
        }
        for phrase in phrases {
            let Some((folded, entry)) = entry_of(*family, *roles, phrase) else {
                continue;
            };
            match patterns.iter().position(|p| *p == folded) {
                // A phrase listed again with the same family, role and boundaries (`root` is
                // a role word in ten languages) would only add the same hit again wherever it
                // occurs: one entry is kept.
                Some(i) if entries[i].contains(&entry) => {}
                Some(i) => entries[i].push(entry),
                None => {
                    patterns.push(folded);
                    entries.push(vec![entry]);
                }
            }
        }
    }
    (entries, patterns)
}

/// One listed phrase (a trailing `*` marks a stem), folded, and its entry; `None` for one too
/// short to be filed.
fn entry_of(family: Family, roles: u8, phrase: &str) -> Option<(String, Entry)> {
    let (raw, stem) = match phrase.strip_suffix('*') {
        Some(stem) => (stem, true),
        None => (phrase, false),
    };
    let folded = normalise::fold_phrase(raw);
    // Every family phrase is at least four bytes long (a test checks): the short index's keys
    // are four bytes. Purpose words go to an automaton instead.
    if folded.is_empty() || (family != Family::Purpose && folded.len() < MIN_PHRASE) {
        return None;
    }
    let first = folded.chars().next().unwrap_or(' ');
    let last = folded.chars().next_back().unwrap_or(' ');
    let entry = Entry {
        family,
        roles,
        start_boundary: is_spaced_letter(first),
        end_boundary: !stem && is_spaced_letter(last),
    };
    Some((folded, entry))
}

/// The purpose-word automaton (a few hundred short words, searched only in a purpose
/// sentence). Constant patterns; the tests build this table.
fn purpose_automaton(patterns: &[String]) -> AhoCorasick {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(patterns)
        .expect("purpose automaton builds")
}

/// Bits of each index's gate (8 KiB, so it stays in cache).
const GATE_BITS: usize = 1 << 16;
/// Shortest phrase: the short index's keys are four bytes (a test checks every phrase is this
/// long).
const MIN_PHRASE: usize = 4;

/// Buckets of each prefix index (a power of two).
const PREFIX_BUCKETS: usize = 1 << 12;

/// Patterns of at least this many bytes are filed under their first eight bytes, shorter ones
/// under their first six or four (see [`MIDDLE_KEY`]).
const LONG_KEY: usize = 8;

/// Patterns of at least this many bytes (and shorter than [`LONG_KEY`]) are filed under their
/// first six bytes, shorter ones under their first four. Most short phrases have six or seven
/// bytes, and several begin with a common word (`the ai`, `the llm`): under four bytes, every
/// `the ` of prose passed the short index's gate and cost a lookup that found nothing.
const MIDDLE_KEY: usize = 6;

/// Pattern ids by their first bytes (the key: four, six or eight of them): a bucket table indexed
/// by a hash of the key, then the key compared. At each admitted position this is two array
/// reads and a compare or two, where a hash map lookup cost several times that in a pass that
/// visits every word of every text. Each key also holds the pattern's next eight bytes and its
/// length, so most candidates are decided without reading the pattern itself.
///
/// There are three of these (see [`Table`]): a four-byte key is shared by many phrases (`the `
/// begins a dozen, in several families), and every one of them was compared wherever the text
/// read `the `: six candidates per admitted position on prose, nearly all rejected. Eight
/// bytes tell them apart, so a position of ordinary text has no candidate at all; six do the
/// same for the phrases of six or seven bytes.
struct PrefixIndex {
    /// Bytes of the key: 4, [`MIDDLE_KEY`] or [`LONG_KEY`].
    key_len: usize,
    /// The key's bytes of a little-endian word (`low_bytes(u64::MAX, key_len)`), kept so that
    /// taking a position's key is one `and`.
    key_mask: u64,
    /// A necessary condition for one of the patterns to start at a position, checked in one
    /// lookup that stays in cache: the hash of the position's key is in this set of the
    /// patterns' keys. Only where it holds is the bucket read. It can only skip work: every
    /// phrase passes its own gate (a test checks).
    gate: Gate,
    /// `keys[starts[b]..starts[b + 1]]` is bucket `b`.
    starts: Vec<u32>,
    /// Each key's first bytes, case-blind (see [`blind`]), apart from the rest of the key: a
    /// bucket is scanned through this array only.
    firsts: Vec<u64>,
    /// Grouped by bucket, in pattern order within a bucket.
    keys: Vec<PrefixKey>,
}

#[derive(Debug, Clone, Copy)]
struct PrefixKey {
    /// The pattern's key bytes exactly (ASCII lowercase, little-endian, zero past the key).
    first: u64,
    id: u32,
    /// The pattern's length in bytes.
    len: u32,
    /// The eight bytes of the pattern after its key, little-endian, zero past its end;
    /// `next_mask` covers the bytes it has.
    next: u64,
    next_mask: u64,
}

/// The key's hash: its top bits pick the gate's bit, lower ones the bucket.
fn key_hash(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn gate_bit(key: u64) -> usize {
    (key_hash(key) >> 48) as usize % GATE_BITS
}

fn bucket(key: u64) -> usize {
    (key_hash(key) >> 32) as usize % PREFIX_BUCKETS
}

/// Eight bytes with the `0x20` bit of each set: ASCII letters of either case become one value
/// (and some other bytes with them), so a case-blind key costs one `or` at each word start,
/// where lowercasing exactly costs a dozen operations. What the blind key lets through, the
/// exact key of the candidate then decides.
fn blind(x: u64) -> u64 {
    x | 0x2020_2020_2020_2020
}

/// The low `n` bytes of a little-endian word (`n` ≤ 8).
fn low_bytes(x: u64, n: usize) -> u64 {
    if n >= 8 {
        x
    } else {
        x & ((1u64 << (8 * n)) - 1)
    }
}

/// A set of case-blind keys as bits indexed by their hash ([`GATE_BITS`] of them): whether a
/// key may be in the set, in one lookup. A key of the set is always admitted; another key is
/// admitted when its bit is shared.
///
/// The bits are an array of a fixed size, not a `Vec`: [`gate_bit`] is below [`GATE_BITS`] by
/// its `%`, so the compiler sees every lookup in bounds, and the first gate, asked at every
/// word start, loads no length and tests no bound.
struct Gate(Box<[u64; GATE_BITS / 64]>);

impl Gate {
    fn of(keys: impl IntoIterator<Item = u64>) -> Gate {
        let mut bits = Box::new([0u64; GATE_BITS / 64]);
        for key in keys {
            let i = gate_bit(key);
            bits[i / 64] |= 1 << (i % 64);
        }
        Gate(bits)
    }

    #[inline]
    fn admits(&self, key: u64) -> bool {
        let i = gate_bit(key);
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
}

impl PrefixIndex {
    /// The index of the patterns whose length `keyed` accepts, under keys of `key_len` bytes.
    fn new(patterns: &[String], key_len: usize, keyed: impl Fn(usize) -> bool) -> Self {
        let mut keys: Vec<(usize, u64, PrefixKey)> = patterns
            .iter()
            .enumerate()
            .filter(|(_, p)| keyed(p.len()))
            .filter_map(|(id, p)| {
                let bytes = p.as_bytes();
                let first = low_bytes(byte_class::load(bytes), key_len);
                let blind_first = blind(first) & low_bytes(u64::MAX, key_len);
                let next_bytes = bytes.get(key_len..).unwrap_or_default();
                let next_mask = low_bytes(u64::MAX, next_bytes.len());
                let key = PrefixKey {
                    first,
                    id: u32::try_from(id).ok()?,
                    len: u32::try_from(bytes.len()).ok()?,
                    next: byte_class::load(next_bytes) & next_mask,
                    next_mask,
                };
                Some((bucket(blind_first), blind_first, key))
            })
            .collect();
        // Stable: ids stay in pattern order inside a bucket.
        keys.sort_by_key(|&(b, _, _)| b);
        let mut starts = vec![0u32; PREFIX_BUCKETS + 1];
        for &(b, _, _) in &keys {
            if let Some(next) = starts.get_mut(b + 1) {
                *next += 1;
            }
        }
        for b in 0..PREFIX_BUCKETS {
            starts[b + 1] += starts[b];
        }
        let gate = Gate::of(keys.iter().map(|&(_, first, _)| first));
        PrefixIndex {
            key_len,
            key_mask: low_bytes(u64::MAX, key_len),
            gate,
            starts,
            firsts: keys.iter().map(|&(_, first, _)| first).collect(),
            keys: keys.into_iter().map(|(_, _, key)| key).collect(),
        }
    }

    /// The case-blind key of the text whose eight bytes at a position are `head`.
    fn key(&self, head: u64) -> u64 {
        blind(head) & self.key_mask
    }

    /// Whether one of its patterns may start where the text's key is `key`.
    #[inline]
    fn admits(&self, key: u64) -> bool {
        self.gate.admits(key)
    }

    /// Calls `found(id, end)` for each of its patterns that occurs at `p` in `b` (ASCII case
    /// folded), in pattern order, where the text's eight bytes are `head` and its case-blind
    /// key is `key`. Whether any occurred.
    fn find_at(
        &self,
        patterns: &[String],
        (b, p, head): (&[u8], usize, u64),
        key: u64,
        mut found: impl FnMut(usize, usize),
    ) -> bool {
        let bk = bucket(key);
        let (Some(&from), Some(&to)) = (self.starts.get(bk), self.starts.get(bk + 1)) else {
            return false;
        };
        let from = from as usize;
        let mut any = false;
        // The text's eight bytes after the key, lowercased: read once, when first needed.
        let mut next = None;
        let firsts = self.firsts.get(from..to as usize).unwrap_or_default();
        for (i, _) in firsts
            .iter()
            .enumerate()
            .filter(|&(_, &first)| first == key)
        {
            let Some(k) = self.keys.get(from + i) else {
                continue;
            };
            let id = k.id as usize;
            let end = p + k.len as usize;
            let Some(pattern) = patterns.get(id) else {
                continue;
            };
            if end > b.len() || byte_class::ascii_lowercase(head) & self.key_mask != k.first {
                continue;
            }
            let after = self.key_len;
            let next = *next.get_or_insert_with(|| {
                byte_class::ascii_lowercase(byte_class::load(
                    b.get(p + after..).unwrap_or_default(),
                ))
            });
            if next & k.next_mask != k.next {
                continue;
            }
            // The key and the next eight bytes are equal; compare what is left byte by byte,
            // leaving at the first difference.
            let same = b[p..end]
                .iter()
                .zip(pattern.as_bytes())
                .skip(after + 8)
                .all(|(t, q)| t.to_ascii_lowercase() == *q);
            if same {
                found(id, end);
                any = true;
            }
        }
        any
    }
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let lines = parse(PHRASES);
    let (entries, patterns) = build(&lines, false);
    let (purpose_entries, purpose_patterns) = build(&lines, true);
    let purpose = purpose_automaton(&purpose_patterns);
    let short = PrefixIndex::new(&patterns, MIN_PHRASE, |len| len < MIDDLE_KEY);
    let middle = PrefixIndex::new(&patterns, MIDDLE_KEY, |len| {
        (MIDDLE_KEY..LONG_KEY).contains(&len)
    });
    let long = PrefixIndex::new(&patterns, LONG_KEY, |len| len >= LONG_KEY);
    let first = Gate::of(
        patterns
            .iter()
            .map(|p| short.key(byte_class::load(p.as_bytes()))),
    );
    Table {
        patterns,
        entries,
        short,
        middle,
        long,
        first,
        purpose,
        purpose_entries,
        #[cfg(test)]
        lines,
    }
});

/// Whether `text[start..end]` sits on the word boundaries its entry asks for.
fn bounded(text: &str, start: usize, end: usize, entry: &Entry) -> bool {
    let before_ok = !entry.start_boundary
        || text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
    let after_ok = !entry.end_boundary
        || text[end..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
    before_ok && after_ok
}

/// One phrase occurrence in a view.
#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    end: usize,
    /// The phrase's index in [`Table::patterns`].
    pattern: usize,
    family: Family,
    roles: u8,
}

/// Every phrase occurrence, in order of start, then of pattern, into `out` (emptied first): at
/// each position a phrase may start, the indexes' gates are asked, and the phrases filed under
/// the position's first bytes are compared there.
///
/// `blocks`: the byte classes of `text` when they are known already (see
/// [`byte_class::text_classes`]); else the text is classified here.
fn hits_into(text: &str, out: &mut Vec<Hit>, blocks: Option<&[byte_class::Block]>) {
    let table = &*TABLE;
    let b = text.as_bytes();
    out.clear();
    let last = (b.len() + 1).saturating_sub(MIN_PHRASE);
    let at = |p: usize| {
        if p >= last {
            return;
        }
        let head = byte_class::load(&b[p..]);
        let short = table.short.key(head);
        if !table.first.admits(short) {
            return;
        }
        let (middle, long) = (table.middle.key(head), table.long.key(head));
        let short_may = table.short.admits(short);
        let middle_may = table.middle.admits(middle);
        let long_may = table.long.admits(long);
        if !short_may && !middle_may && !long_may {
            return;
        }
        let from = out.len();
        let mut push = |pattern: usize, end: usize| {
            for entry in table.entries.get(pattern).into_iter().flatten() {
                if bounded(text, p, end, entry) {
                    out.push(Hit {
                        start: p,
                        end,
                        pattern,
                        family: entry.family,
                        roles: entry.roles,
                    });
                }
            }
        };
        let at = (b, p, head);
        let short = short_may && table.short.find_at(&table.patterns, at, short, &mut push);
        let middle = middle_may && table.middle.find_at(&table.patterns, at, middle, &mut push);
        let long = long_may && table.long.find_at(&table.patterns, at, long, &mut push);
        if u8::from(short) + u8::from(middle) + u8::from(long) > 1 {
            // Each index reports in pattern order; one start's hits are read in that order.
            if let Some(here) = out
                .get_mut(from..)
                .filter(|h| !h.is_sorted_by_key(|h| h.pattern))
            {
                here.sort_by_key(|h| h.pattern);
            }
        }
    };
    // One loop for either source of masks (a trait object, asked once per 64 bytes): the
    // closure above is the hot part, and two copies of the loop kept it from being inlined.
    let (mut given, mut fresh);
    let masks: &mut dyn Iterator<Item = byte_class::Masks> = match blocks {
        Some(blocks) => {
            given = blocks.iter().map(|b| b.masks());
            &mut given
        }
        None => {
            fresh = b.chunks(64).map(byte_class::phrase_masks);
            &mut fresh
        }
    };
    for_each_start_in(masks, at);
}

/// [`hits_into`] a list of its own.
#[cfg(test)]
fn hits(text: &str) -> Vec<Hit> {
    let mut out = Vec::new();
    hits_into(text, &mut out, None);
    out
}

thread_local! {
    /// The hits of the view being read, kept from one text to the next: a text with any hit
    /// has several (seven on average on the benchmark), and a fresh list cost an allocation
    /// and a regrowth or two per text.
    static HITS: Cell<Vec<Hit>> = const { Cell::new(Vec::new()) };
}

/// Most hits a kept list has room for between texts.
const HITS_KEEP: usize = 1024;

/// Call `f` at every position a phrase may start: a word start (an ASCII letter or digit
/// after anything else), one of the punctuation bytes phrases begin with (`.`, `~`, `/`), or
/// a non-ASCII lead byte. The masks are computed 64 bytes at a time, eight bytes per integer
/// operation (`byte_class`); only set bits are visited.
#[cfg(test)]
fn for_each_start(b: &[u8], f: impl FnMut(usize)) {
    for_each_start_in(&mut b.chunks(64).map(byte_class::phrase_masks), f);
}

/// [`for_each_start`], given the masks of each 64-byte block of the text.
fn for_each_start_in(
    blocks: &mut dyn Iterator<Item = byte_class::Masks>,
    mut f: impl FnMut(usize),
) {
    let mut carry = 0u64;
    for (block, masks) in blocks.enumerate() {
        let alnum = masks.alnum;
        let mut starts = (alnum & !(alnum << 1 | carry)) | masks.phrase_lead;
        carry = alnum >> 63;
        while starts != 0 {
            let i = starts.trailing_zeros() as usize;
            starts &= starts - 1;
            f(block * 64 + i);
        }
    }
}

/// For each phrase family, the first folded span where both roles meet.
fn family_spans(hits: &[Hit]) -> [Option<(usize, usize)>; PHRASE_FAMILIES] {
    let mut found = [None; PHRASE_FAMILIES];
    // Last end of role a and role b seen, per family.
    let mut last: [[Option<(usize, usize)>; 2]; PHRASE_FAMILIES] = [[None; 2]; PHRASE_FAMILIES];
    for hit in hits {
        let f = hit.family.index();
        if f >= PHRASE_FAMILIES || found[f].is_some() {
            continue;
        }
        if hit.roles == ROLE_A | ROLE_B {
            found[f] = Some((hit.start, hit.end));
            continue;
        }
        let (mine, other) = if hit.roles == ROLE_A { (0, 1) } else { (1, 0) };
        if let Some((s, e)) = last[f][other] {
            // Overlapping phrases are one phrase read twice, not two roles.
            if e <= hit.start || hit.end <= s {
                let gap = hit.start.saturating_sub(e);
                if gap <= WINDOW {
                    found[f] = Some((s.min(hit.start), e.max(hit.end)));
                    continue;
                }
            }
        }
        last[f][mine] = Some((hit.start, hit.end));
    }
    found
}

/// Sentence ends in folded text: `.`, `!`, `?`, `;` followed by white space or the end, a
/// newline, and the full stops of Chinese, Japanese and Hindi.
fn sentence_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '.' | '!' | '?' | ';' => chars.peek().is_none_or(|&(_, n)| n.is_whitespace()),
            '\n' | '。' | '！' | '？' | '；' | '।' => true,
            _ => false,
        };
        if end {
            ends.push(i + c.len_utf8());
        }
    }
    ends
}

fn sentence_of(ends: &[usize], at: usize) -> usize {
    ends.partition_point(|&e| e <= at)
}

/// The intent stage over one view: the folded span of a model-addressed phrase whose sentence
/// names a sensitive object the purpose sentence does not explain.
fn intent_span(text: &str, hits: &[Hit]) -> Option<(usize, usize)> {
    if !hits.iter().any(|h| h.family == Family::Addr)
        || !hits.iter().any(|h| h.family == Family::Act)
    {
        return None;
    }
    let ends = sentence_ends(text);
    let first_end = ends.first().copied().unwrap_or(text.len());
    let addressed_first = hits
        .iter()
        .any(|h| h.family == Family::Addr && h.start < first_end);
    let purpose = if addressed_first {
        ""
    } else {
        let mut cut = first_end.min(PURPOSE_MAX);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        &text[..cut]
    };
    if explains(purpose) {
        return None;
    }
    // The first model-addressed phrase of each sentence, found in one walk: hits come in
    // order of start, so sentence numbers only grow. Looking the sentence's phrase up again
    // for every sensitive object would be quadratic in a text dense with both.
    let mut first_addr: Vec<Option<&Hit>> = vec![None; ends.len() + 1];
    for addr in hits.iter().filter(|h| h.family == Family::Addr) {
        if let Some(slot) = first_addr.get_mut(sentence_of(&ends, addr.start)) {
            slot.get_or_insert(addr);
        }
    }
    for act in hits.iter().filter(|h| h.family == Family::Act) {
        let sentence = sentence_of(&ends, act.start);
        if sentence == 0 && !addressed_first {
            continue;
        }
        let Some(addr) = first_addr.get(sentence).copied().flatten() else {
            continue;
        };
        if purpose.contains(&text[act.start..act.end]) {
            continue;
        }
        return Some((addr.start.min(act.start), addr.end.max(act.end)));
    }
    None
}

/// Whether a purpose sentence is about credentials, secrets, conversations or routing.
fn explains(purpose: &str) -> bool {
    if purpose.is_empty() {
        return false;
    }
    let table = &*TABLE;
    table.purpose.find_overlapping_iter(purpose).any(|m| {
        table
            .purpose_entries
            .get(m.pattern().as_usize())
            .is_some_and(|entries| {
                entries
                    .iter()
                    .any(|e| bounded(purpose, m.start(), m.end(), e))
            })
    })
}

/// Index of the intent stage in [`Analysis::evidence`].
pub(crate) const INTENT: usize = PHRASE_FAMILIES;

/// Per family (then the intent stage), the evidence of its first occurrence.
type Evidence = [Option<String>; PHRASE_FAMILIES + 1];

/// What the second stage found in one text.
///
/// The evidence is boxed, and only when there is some: nearly every text has none, and the
/// eight empty slots inline (192 bytes) were written, moved into the text's cell and dropped
/// for each one (about 250 instructions a text, measured under callgrind).
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    found: Option<Box<Evidence>>,
}

impl Analysis {
    /// The evidence of `slot` (a family's index, or [`INTENT`]), if the second stage found some.
    pub(crate) fn evidence(&self, slot: usize) -> Option<&String> {
        self.found.as_ref()?.get(slot)?.as_ref()
    }

    /// Whether any slot holds evidence.
    pub(crate) fn found_any(&self) -> bool {
        self.found.is_some()
    }
}

/// Run the second stage over a text: its main view, then its decoded views.
///
/// The text is classified once (see [`byte_class::text_classes`]) for the passes that read it:
/// the fold screen, the phrase pass when the main view is the text itself, and the search for
/// encoded runs.
pub(crate) fn analyse(s: &str, ascii: bool) -> Analysis {
    let mut analysis = Evidence::default();
    let mut blocks = BLOCKS.take();
    byte_class::classify_into(s.as_bytes(), &mut blocks);
    let view = normalise::fold_classified(s, &blocks, ascii);
    let itself = matches!(&view.text, Cow::Borrowed(t) if t.len() == s.len());
    read_view(s, &view, None, &mut analysis, itself.then_some(&blocks[..]));
    let mut budget = normalise::MAX_DECODED;
    decode_into(s, None, 0, &mut budget, &mut analysis, Some(&blocks));
    if blocks.capacity() <= BLOCKS_KEEP {
        BLOCKS.set(blocks);
    }
    Analysis {
        found: analysis
            .iter()
            .any(Option::is_some)
            .then(|| Box::new(analysis)),
    }
}

thread_local! {
    /// The byte classes of the text being analysed, kept from one text to the next.
    static BLOCKS: Cell<Vec<byte_class::Block>> = const { Cell::new(Vec::new()) };
}

/// Most blocks a kept list of classes has room for between texts (64 KiB of text).
const BLOCKS_KEEP: usize = 1024;

/// Where a decoded view came from: the encoded run in the original text and its encoding.
struct Origin<'o> {
    run: &'o str,
    encoding: &'static str,
}

fn read_view(
    original: &str,
    view: &View<'_>,
    origin: Option<&Origin<'_>>,
    analysis: &mut Evidence,
    blocks: Option<&[byte_class::Block]>,
) {
    let text = view.text.as_ref();
    let mut hits = HITS.take();
    hits_into(text, &mut hits, blocks);
    read_hits(original, view, origin, analysis, &hits);
    if hits.capacity() <= HITS_KEEP {
        HITS.set(hits);
    }
}

/// What one view's hits say: the first evidence of each family, and of the intent stage.
fn read_hits(
    original: &str,
    view: &View<'_>,
    origin: Option<&Origin<'_>>,
    analysis: &mut Evidence,
    hits: &[Hit],
) {
    if hits.is_empty() {
        return;
    }
    let text = view.text.as_ref();
    let spans = family_spans(hits);
    for (slot, span) in analysis.iter_mut().zip(spans) {
        if slot.is_none() {
            if let Some((start, end)) = span {
                *slot = Some(evidence(original, view, origin, start, end));
            }
        }
    }
    if analysis[INTENT].is_none() {
        if let Some((start, end)) = intent_span(text, hits) {
            analysis[INTENT] = Some(evidence(original, view, origin, start, end));
        }
    }
}

/// The original text around the match, and what revealed it.
fn evidence(
    original: &str,
    view: &View<'_>,
    origin: Option<&Origin<'_>>,
    start: usize,
    end: usize,
) -> String {
    let at = view.original(start).min(original.len());
    let mut at = at;
    while !original.is_char_boundary(at) {
        at -= 1;
    }
    let quote = excerpt_around(original, at);
    let reveal = view.reveal(start, end);
    match origin {
        Some(origin) => {
            let head: String = origin.run.chars().take(40).collect();
            let more = if origin.run.len() > head.len() {
                "..."
            } else {
                ""
            };
            format!(
                "{head}{more} [decoded from {}: \"{quote}\"]",
                origin.encoding
            )
        }
        None if reveal.is_empty() => quote,
        None => format!("{quote} [revealed by: {}]", reveal.describe()),
    }
}

fn decode_into(
    s: &str,
    origin: Option<&Origin<'_>>,
    depth: usize,
    budget: &mut usize,
    analysis: &mut Evidence,
    blocks: Option<&[byte_class::Block]>,
) {
    if depth >= normalise::MAX_DEPTH || *budget == 0 {
        return;
    }
    let decoded: Vec<Decoded> = normalise::decode_embedded_in(s, *budget, blocks);
    *budget = budget.saturating_sub(decoded.len());
    for d in &decoded {
        // A nested decoding keeps pointing at the outermost run: that is what the server sent.
        let here = Origin {
            run: &s[d.start..d.end],
            encoding: d.encoding,
        };
        let origin = origin.unwrap_or(&here);
        let view = normalise::fold(&d.text);
        read_view(&d.text, &view, Some(origin), analysis, None);
        decode_into(&d.text, Some(origin), depth + 1, budget, analysis, None);
    }
}

/// The help text of a family rule (CAS-L018…L024): its own head, overlap and references
/// around the paragraphs they all share (normalisation, evidence, surfaces, level), written once.
macro_rules! family_help {
    (head: $head:expr, overlap: $overlap:expr, references: $references:expr $(,)?) => {
        concat!(
            $head,
            "\n\n",
            "**Normalisation.** Matched after the second-stage normalisation: compatibility (NFKC) and \
homoglyph folding, invisible characters removed, leetspeak undone, letter-spacing \
collapsed, comments marked, and base64, hex and percent-encoded runs decoded (bounded).

**Evidence.** The original text around the match (20 characters before it, 60 in all), \
then which normalisation revealed it (`[revealed by: leetspeak undone]`), or for an encoded \
run its first 40 characters and the decoded text (`[decoded from base64: \"…\"]`).",
            "\n\n",
            $overlap,
            "\n\n",
            "**Surfaces.** Tool (description, title, annotations, and every schema text: `description`, \
`title`, `default`, `const`, `enum`, `examples`, nested and under `$defs`), prompt, resource, \
resource name. Not recorded output.

**Level.** Warn: a new rule starts at warn and graduates later (docs/check.md), so no gate \
changes on upgrade.",
            "\n\n",
            $references
        )
    };
}
pub(super) use family_help;

#[cfg(test)]
mod tests;
