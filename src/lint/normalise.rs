//! Normalisation before matching: the views of one text that the second-stage rules
//! (CAS-L018 onward) read, and the way back from a view to the text the server sent.
//!
//! A poisoned description rarely spells its instruction the way a phrase list does. Before the
//! families of `rules::families` are matched, a text is folded into one *main view*:
//!
//! * compatibility decomposition (what NFKC does first: fullwidth `ｉｇｎｏｒｅ`, mathematical
//!   `𝐢𝐠𝐧𝐨𝐫𝐞`, circled and ligature forms become plain letters), diacritics on Latin letters
//!   dropped (`précédentes` reads as `precedentes`), then lowercase;
//! * confusable folding: Cyrillic and Greek letters that look like Latin ones become those
//!   Latin letters (a compact table, not the whole Unicode confusables list);
//! * invisible and bidirectional format characters removed (`ig\u{200B}nore`);
//! * leetspeak undone inside words that mix letters with `0 1 3 4 5 7 @ $` (`1gn0r3`);
//! * letter-spacing collapsed: three or more single characters in a row, each followed by one
//!   space, dot, dash, underscore or asterisk (`i g n o r e`), are joined (ASCII text is
//!   folded at all only when it holds a run of four);
//! * HTML comments (`<!-- … -->`) and Markdown comments (`[//]: # (…)`) are marked, so a
//!   finding inside one says so.
//!
//! Embedded encodings are decoded into *decoded views* of their own: base64 and hex runs of at
//! least 16 characters, and percent-encoded runs with at least three escapes, when they decode
//! to readable text. Decoding is bounded: at most [`MAX_DECODED`] views per text, each at most
//! [`MAX_DECODED_BYTES`] long, nested at most [`MAX_DEPTH`] deep.
//!
//! Every step is one pass over the text (or over one token of it), so the whole preparation is
//! linear. Plain ASCII prose with none of the features above (the common case) is not copied:
//! the main view borrows it, and phrases are matched against it ASCII-case-insensitively.
//! Folding is applied to the phrase lists exactly as to the text, so a phrase matches whatever
//! the fold makes of it.

use std::borrow::Cow;
use std::cell::OnceCell;

use super::byte_class;
use super::char_fold::{self, folds_to_itself, is_invisible, is_plain_script};
#[cfg(test)]
pub(crate) use super::decode::decode_embedded;
pub(crate) use super::decode::{Decoded, decode_embedded_in};

/// Which normalisation revealed a match; several may combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Reveal(u8);

impl Reveal {
    pub(crate) const COMPAT: Reveal = Reveal(1);
    pub(crate) const CONFUSABLE: Reveal = Reveal(2);
    pub(crate) const INVISIBLE: Reveal = Reveal(4);
    pub(crate) const LEET: Reveal = Reveal(8);
    pub(crate) const SPACING: Reveal = Reveal(16);
    pub(crate) const COMMENT: Reveal = Reveal(32);

    const NAMES: [(Reveal, &'static str); 6] = [
        (Reveal::COMPAT, "compatibility (NFKC) folding"),
        (Reveal::CONFUSABLE, "homoglyph folding"),
        (Reveal::INVISIBLE, "invisible characters removed"),
        (Reveal::LEET, "leetspeak undone"),
        (Reveal::SPACING, "letter-spacing collapsed"),
        (Reveal::COMMENT, "inside a comment"),
    ];

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub(super) fn add(&mut self, other: Reveal) {
        self.0 |= other.0;
    }

    fn has(self, other: Reveal) -> bool {
        self.0 & other.0 != 0
    }

    /// `leetspeak undone, letter-spacing collapsed`.
    pub(crate) fn describe(self) -> String {
        Reveal::NAMES
            .iter()
            .filter(|(flag, _)| self.has(*flag))
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A view of a text, in folded form, with the way back to the original.
///
/// The way back (the offset map and what each normalisation revealed) is wanted only for the
/// evidence of a finding, which few texts have: it is not kept while folding, but worked out
/// by folding the same text again, keeping track, the first time it is asked for. The fold is
/// deterministic, so this is the trace the first fold would have kept (a property test holds
/// the two equal).
pub(crate) struct View<'a> {
    /// The folded text phrases are matched in; the original itself (borrowed) when folding
    /// would change nothing but ASCII case, which phrase matching ignores.
    pub(crate) text: Cow<'a, str>,
    /// What was folded (the text, cut at [`MAX_FOLD`]).
    source: &'a str,
    trace: OnceCell<Trace>,
}

/// The way back from a view to the text it was folded from.
#[derive(Debug, Default, PartialEq, Eq)]
struct Trace {
    /// Offset checkpoints `(folded, original)`: from each checkpoint on, offsets advance
    /// together until the next one. Empty when the view is the original.
    map: Vec<(u32, u32)>,
    /// Folded ranges and the normalisation that produced them.
    reveals: Vec<(u32, u32, Reveal)>,
}

impl View<'_> {
    fn trace(&self) -> &Trace {
        self.trace.get_or_init(|| match self.text {
            Cow::Borrowed(_) => {
                let mut reveals = Vec::new();
                mark_comments(self.source, &mut reveals);
                Trace {
                    map: Vec::new(),
                    reveals,
                }
            }
            Cow::Owned(_) => full_fold_with(self.source, false, true, None).1,
        })
    }

    /// The original byte offset of folded offset `at`.
    pub(crate) fn original(&self, at: usize) -> usize {
        let map = &self.trace().map;
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        let i = map.partition_point(|&(folded, _)| folded <= at);
        match i.checked_sub(1).and_then(|i| map.get(i)) {
            Some(&(folded, original)) => (original + (at - folded)) as usize,
            None => at as usize,
        }
    }

    /// The normalisations that touched folded range `start..end`.
    pub(crate) fn reveal(&self, start: usize, end: usize) -> Reveal {
        let (start, end) = (start as u32, end as u32);
        let mut reveal = Reveal::default();
        for &(s, e, r) in &self.trace().reveals {
            if s < end && start < e {
                reveal.add(r);
            }
        }
        reveal
    }
}

/// Texts longer than this are folded only up to here (bytes, cut at a char boundary): the
/// oversized-description rule already reports them, and the cap bounds the copy.
pub(crate) const MAX_FOLD: usize = 1 << 20;
/// Decoded views per text, all depths together.
pub(crate) const MAX_DECODED: usize = 16;
/// Longest encoded run decoded (bytes of encoded text).
pub(crate) const MAX_DECODED_BYTES: usize = 4096;
/// Decoded text is searched for further encodings this many times.
pub(crate) const MAX_DEPTH: usize = 2;
/// Shortest base64 or hex run worth decoding.
pub(super) const MIN_ENCODED: usize = 16;

/// The main view of `s`.
pub(crate) fn fold(s: &str) -> View<'_> {
    fold_classified(
        s,
        &byte_class::text_classes(cut(s, MAX_FOLD).as_bytes()),
        s.is_ascii(),
    )
}

/// [`fold`], given the byte classes of `s` (see [`byte_class::text_classes`]), which the fold
/// screen reads instead of classifying the text again, and whether `s` is ASCII, which the
/// text's preparation already found (a pass over the text fewer).
pub(crate) fn fold_classified<'a>(
    s: &'a str,
    blocks: &[byte_class::Block],
    ascii: bool,
) -> View<'a> {
    let whole = s.len();
    let s = cut(s, MAX_FOLD);
    // Classes of a text cut short cover bytes past the cut: classify the cut text afresh.
    let fresh;
    let blocks = if s.len() == whole {
        blocks
    } else {
        fresh = byte_class::text_classes(s.as_bytes());
        &fresh
    };
    // A text cut short may be ASCII up to the cut.
    let ascii = if s.len() == whole {
        ascii
    } else {
        s.is_ascii()
    };
    if ascii && !ascii_needs_fold_in(s.as_bytes(), blocks) {
        return View {
            text: Cow::Borrowed(s),
            source: s,
            trace: OnceCell::new(),
        };
    }
    View {
        text: Cow::Owned(full_fold_with(s, false, false, Some(blocks)).0),
        source: s,
        trace: OnceCell::new(),
    }
}

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Byte classes for the ASCII screen.
const LETTER: u8 = 1;
const LEET: u8 = 2;
const SEPARATOR: u8 = 4;

const fn class_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0usize;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() {
            LETTER
        } else if matches!(c, b'0' | b'1' | b'3' | b'4' | b'5' | b'7' | b'@' | b'$') {
            LEET
        } else if matches!(c, b' ' | b'.' | b'-' | b'_' | b'*') {
            SEPARATOR
        } else {
            0
        };
        b += 1;
    }
    t
}

static CLASS: [u8; 256] = class_table();

fn is_word_byte(b: u8) -> bool {
    CLASS[b as usize] & (LETTER | LEET) != 0 || b.is_ascii_digit()
}

/// Whether ASCII text holds a word mixing letters with leetspeak characters, or a run of
/// spaced single characters: the two ASCII features only the full fold undoes.
///
/// One pass of eight-byte classification (`byte_class`): only the words holding a leetspeak
/// character are looked at, and the exact spacing check runs only where the pattern it needs
/// (`x x x`-style windows) occurs. [`ascii_needs_fold_exact`] is the plain definition; a
/// property test holds the two equal.
#[cfg(test)]
fn ascii_needs_fold(bytes: &[u8]) -> bool {
    ascii_needs_fold_in(bytes, &byte_class::text_classes(bytes))
}

/// [`ascii_needs_fold`], given the byte classes of `bytes`.
fn ascii_needs_fold_in(bytes: &[u8], blocks: &[byte_class::Block]) -> bool {
    let screen = screen_in(bytes, blocks.iter().map(|b| b.fold_masks()));
    screen.leet_word || (screen.spaced_singles && ascii_needs_fold_exact(bytes))
}

/// What one classification pass over a text found.
#[derive(Debug, Default)]
struct Screen {
    /// Some word is leetspeak ([`Word::is_leet`]).
    leet_word: bool,
    /// Two single word characters in a row, each between non-word bytes (`. x x `):
    /// necessary for four spaced singles, the ASCII fold's spacing test.
    spaced_singles: bool,
    /// Three word characters joined by single non-word bytes, the first after a non-word
    /// byte or the start (` x x x`): necessary for a spaced run ([`spaced_run`]), whose first
    /// two characters are single. An article between two words (`for a city`) is not one.
    spaced_run: bool,
}

/// One pass: leetspeak words exactly, and the windows the spacing rules need. Windows are
/// tested on block masks shifted with the previous block's bits carried in, so a window
/// across two blocks is seen.
fn screen(bytes: &[u8]) -> Screen {
    screen_in(bytes, bytes.chunks(64).map(byte_class::fold_masks))
}

/// [`screen`], given the fold masks of each 64-byte block of `bytes`.
fn screen_in(bytes: &[u8], masks: impl Iterator<Item = byte_class::FoldMasks>) -> Screen {
    let mut out = Screen::default();
    let mut checked_to = 0usize;
    let mut prev = byte_class::FoldMasks::default();
    // `cur << k` with the top `k` bits of the previous block's mask shifted in.
    let back = |cur: u64, prev: u64, k: u32| (cur << k) | (prev >> (64 - k));
    for ((block, chunk), m) in bytes.chunks(64).enumerate().zip(masks) {
        let mut leet = m.leet;
        while leet != 0 && !out.leet_word {
            let at = block * 64 + leet.trailing_zeros() as usize;
            leet &= leet - 1;
            if at < checked_to {
                continue;
            }
            let (start, end) = word_around(bytes, at);
            out.leet_word = word_of(&bytes[start..end]).is_leet();
            checked_to = end;
        }
        // Word bytes are letters, digits, `@` and `$` (`@` and `$` are in the leet mask). The
        // windows ask for a non-word byte where the rules want a separator: a weaker, still
        // necessary condition, and one mask fewer to compute.
        let valid = u64::MAX >> (64 - chunk.len());
        let (w, pw) = (m.alnum | m.leet, prev.alnum | prev.leet);
        // Before the first block, the start of the text counts as a non-word byte.
        let (sep, ps) = (!w & valid, if block == 0 { 1 << 63 } else { !pw });
        // Bit p: a window ending at byte p.
        let singles = sep & back(w, pw, 1) & back(sep, ps, 2) & back(w, pw, 3) & back(sep, ps, 4);
        let run = w
            & back(sep, ps, 1)
            & back(w, pw, 2)
            & back(sep, ps, 3)
            & back(w, pw, 4)
            & back(sep, ps, 5);
        out.spaced_singles |= singles != 0;
        out.spaced_run |= run != 0;
        prev = m;
    }
    out
}

/// The word (maximal run of word bytes) around byte `at`.
fn word_around(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = bytes[..at]
        .iter()
        .rposition(|&b| !is_word_byte(b))
        .map_or(0, |i| i + 1);
    let end = bytes[at..]
        .iter()
        .position(|&b| !is_word_byte(b))
        .map_or(bytes.len(), |n| at + n);
    (start, end)
}

fn word_of(bytes: &[u8]) -> Word {
    let mut word = Word::default();
    for &b in bytes {
        word.push(CLASS[b as usize]);
    }
    word
}

/// [`ascii_needs_fold`] by its definition, one byte at a time.
fn ascii_needs_fold_exact(bytes: &[u8]) -> bool {
    let mut word = Word::default();
    let mut singles = 0usize;
    for &b in bytes {
        let class = CLASS[b as usize];
        if is_word_byte(b) {
            word.push(class);
            continue;
        }
        if word.is_leet() {
            return true;
        }
        // A single character followed by exactly one separator extends a spaced run.
        if word.len == 1 && class == SEPARATOR {
            singles += 1;
            if singles >= 4 {
                return true;
            }
        } else {
            singles = 0;
        }
        word = Word::default();
    }
    word.is_leet()
}

/// What a word (a run of word bytes) is made of, for the leetspeak decision.
#[derive(Default)]
struct Word {
    len: usize,
    letters: usize,
    leets: usize,
    starts_leet: bool,
}

impl Word {
    fn push(&mut self, class: u8) {
        if self.len == 0 {
            self.starts_leet = class == LEET;
        }
        self.len += 1;
        self.letters += usize::from(class == LETTER);
        self.leets += usize::from(class == LEET);
    }

    /// Letters mixed with two leetspeak characters, or led by one (`4ll`, `1gn0r3`), in a
    /// word of three or more: `md5`, `sha1`, `ipv4`, `x86` and `s3` stay as they are.
    fn is_leet(&self) -> bool {
        self.len >= 3
            && self.letters > 0
            && (self.leets >= 2 || (self.starts_leet && self.leets >= 1))
    }
}

/// Comment ranges of a borrowed (identity) view.
fn mark_comments(s: &str, reveals: &mut Vec<(u32, u32, Reveal)>) {
    for (start, end) in comment_ranges(s) {
        reveals.push((start as u32, end as u32, Reveal::COMMENT));
    }
}

/// `<!-- … -->` (an unclosed one runs to the end) and `[//]: # …` to the end of its line.
pub(crate) fn comment_ranges(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    // Both openers start with `<` or `[`: most texts hold neither.
    if memchr::memchr2(b'<', b'[', bytes).is_none() {
        return out;
    }
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&bytes[at..], b"<!--") {
        let start = at + i;
        let end = memchr::memmem::find(&bytes[start + 4..], b"-->")
            .map_or(s.len(), |j| start + 4 + j + 3);
        out.push((start, end));
        at = end;
        if at >= bytes.len() {
            break;
        }
    }
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&bytes[at..], b"[//]:") {
        let start = at + i;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(s.len(), |j| start + j);
        out.push((start, end));
        at = end;
    }
    out
}

struct Folder {
    out: String,
    /// Whether the trace is kept (see [`View`]); without, `map` and `reveals` stay empty.
    track: bool,
    map: Vec<(u32, u32)>,
    reveals: Vec<(u32, u32, Reveal)>,
    /// `original - folded` at the last checkpoint.
    delta: i64,
}

impl Folder {
    fn checkpoint(&mut self, original: usize) {
        if !self.track {
            return;
        }
        let folded = self.out.len();
        let delta = original as i64 - folded as i64;
        if delta != self.delta || self.map.is_empty() {
            self.map.push((folded as u32, original as u32));
            self.delta = delta;
        }
    }

    fn reveal(&mut self, start: usize, reveal: Reveal) {
        if !self.track {
            return;
        }
        let end = self.out.len();
        if let Some(last) = self.reveals.last_mut() {
            if last.1 as usize >= start && last.2 == reveal {
                last.1 = end as u32;
                return;
            }
        }
        self.reveals.push((start as u32, end as u32, reveal));
    }
}

fn full_fold(s: &str) -> View<'_> {
    View {
        text: Cow::Owned(full_fold_with(s, false, false, None).0),
        source: s,
        trace: OnceCell::new(),
    }
}

/// [`full_fold`]'s text, and with `track` its trace. `exhaustive` looks for spaced runs at
/// every byte instead of only where the screen allows one, and decomposes every character
/// [`folds_to_itself`] would copy or `char_fold`'s table would answer for (the tests compare
/// the two). `blocks`: the byte classes of `s`, when known.
fn full_fold_with(
    s: &str,
    exhaustive: bool,
    track: bool,
    blocks: Option<&[byte_class::Block]>,
) -> (String, Trace) {
    let mut f = Folder {
        out: String::with_capacity(s.len()),
        track,
        map: Vec::new(),
        reveals: Vec::new(),
        delta: 0,
    };
    if track {
        f.map.push((0, 0));
    }
    let bytes = s.as_bytes();
    // Without an `x x x` window anywhere no spaced run can start, and ASCII runs are copied
    // without looking at each byte.
    let spacing = exhaustive
        || match blocks {
            Some(blocks) => screen_in(bytes, blocks.iter().map(|b| b.fold_masks())).spaced_run,
            None => screen(bytes).spaced_run,
        };
    let mut prev_latin = false;
    let two_byte = char_fold::two_byte_table();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii() {
            // The gap between two words of a script that is not ASCII (a space, a comma and
            // a space) is copied in place: the bulk copy below cost a search and a `memcpy`
            // call, about 90 instructions, for each of them.
            if let Some(end) = short_ascii_run(bytes, at).filter(|_| !spacing) {
                f.checkpoint(at);
                for &b in &bytes[at..end] {
                    f.out.push(char::from(b.to_ascii_lowercase()));
                }
                prev_latin = bytes[end - 1].is_ascii_alphabetic();
                at = end;
                continue;
            }
            // ASCII runs are copied in bulk and lowercased in place; only spaced runs are
            // rebuilt character by character.
            let end = byte_class::first_non_ascii(&bytes[at..]).map_or(bytes.len(), |n| at + n);
            if spacing {
                fold_ascii(&mut f, s, at, end);
            } else {
                copy_lower(&mut f, s, at, end);
            }
            prev_latin = bytes[end - 1].is_ascii_alphabetic();
            at = end;
            continue;
        }
        // A character of the two-byte range (Latin-1 to Arabic), of which Cyrillic, Greek and
        // Arabic prose is mostly made: read from its two bytes and folded by `char_fold`'s
        // table, which also says whether it is invisible. The general way below decodes each
        // character and asks it three questions; the tests hold the two equal. Such a
        // character goes here even when it copies itself: one lookup, where a run copy tests
        // each character twice, and runs of Cyrillic, Greek or Arabic prose are short (a
        // homoglyph or an ASCII space ends each).
        if let Some((code_point, next_at)) = two_byte_at(bytes, at).filter(|_| !exhaustive) {
            let next_latin = bytes.get(next_at).is_some_and(u8::is_ascii_alphabetic);
            let start = f.out.len();
            match char_fold::fold_two_byte(two_byte, code_point, prev_latin, next_latin, &mut f.out)
            {
                None => {
                    f.checkpoint(next_at);
                    f.reveal(start, Reveal::INVISIBLE);
                }
                Some((reveal, latin)) => {
                    prev_latin = latin;
                    f.checkpoint(next_at);
                    if !reveal.is_empty() {
                        f.reveal(start, reveal);
                    }
                }
            }
            at = next_at;
            continue;
        }
        let Some(c) = s[at..].chars().next() else {
            break;
        };
        // Such a character is never invisible (see `folds_to_itself_by_definition`; the plain
        // scripts hold none). It and the ones after it that copy themselves go in one copy: a
        // run of Chinese or Japanese is nothing else, and offsets advance together over it.
        let copies_itself = |c: char| is_plain_script(c) || (!exhaustive && folds_to_itself(c));
        if copies_itself(c) {
            let run_end = s[at..]
                .char_indices()
                .find(|&(_, n)| !copies_itself(n))
                .map_or(s.len(), |(i, _)| at + i);
            f.out.push_str(&s[at..run_end]);
            prev_latin = false;
            at = run_end;
            continue;
        }
        let next_at = at + c.len_utf8();
        let next_latin = bytes.get(next_at).is_some_and(u8::is_ascii_alphabetic);
        let char_at = at;
        at = next_at;
        let at = char_at;
        let start = f.out.len();
        if is_invisible(c) {
            f.checkpoint(at + c.len_utf8());
            f.reveal(start, Reveal::INVISIBLE);
            continue;
        }
        // The two-byte range went the table's way above; what reaches here has no entry.
        let (reveal, latin) = char_fold::fold_plain(c, prev_latin, next_latin, &mut f.out);
        prev_latin = latin;
        f.checkpoint(at + c.len_utf8());
        if !reveal.is_empty() {
            f.reveal(start, reveal);
        }
    }
    leet_fold(&mut f);
    if !track {
        return (f.out, Trace::default());
    }
    let reveals = with_comments(s, f.reveals, &f.map);
    let trace = Trace {
        map: f.map,
        reveals,
    };
    (f.out, trace)
}

/// Longest ASCII run [`short_ascii_run`] finds.
const SHORT_RUN: usize = 8;

/// Where the ASCII run starting at `at` ends, when it ends within [`SHORT_RUN`] bytes (at a
/// byte that is not ASCII, or at the end of the text).
fn short_ascii_run(bytes: &[u8], at: usize) -> Option<usize> {
    let max = bytes.len().min(at + SHORT_RUN);
    let mut end = at;
    while end < max && bytes[end].is_ascii() {
        end += 1;
    }
    (end < max || end == bytes.len()).then_some(end)
}

/// The code point of the two-byte UTF-8 character at `at` of `bytes` (valid UTF-8), and where
/// the next character starts; `None` when the character there is not two bytes long.
fn two_byte_at(bytes: &[u8], at: usize) -> Option<(u32, usize)> {
    let (&lead, &next) = (bytes.get(at)?, bytes.get(at + 1)?);
    (0xC2..=0xDF).contains(&lead).then(|| {
        (
            (u32::from(lead & 0x1F) << 6) | u32::from(next & 0x3F),
            at + 2,
        )
    })
}

/// Copy `s[start..end]` (ASCII) lowercased, collapsing letter-spaced runs.
fn fold_ascii(f: &mut Folder, s: &str, start: usize, end: usize) {
    let bytes = s.as_bytes();
    let mut copy_from = start;
    let mut i = start;
    while i < end {
        let b = bytes[i];
        let single = is_word_byte(b)
            && (i == 0 || !is_word_byte(bytes[i - 1]))
            && bytes
                .get(i + 1)
                .is_some_and(|&n| CLASS[n as usize] == SEPARATOR);
        if let Some(run_end) = single.then(|| spaced_run(bytes, i)).flatten() {
            copy_lower(f, s, copy_from, i);
            f.checkpoint(i);
            let out_start = f.out.len();
            for (k, &rb) in bytes.iter().enumerate().take(run_end).skip(i) {
                if is_word_byte(rb) {
                    f.checkpoint(k);
                    f.out.push(rb.to_ascii_lowercase() as char);
                }
            }
            f.reveal(out_start, Reveal::SPACING);
            f.checkpoint(run_end);
            i = run_end;
            copy_from = run_end;
            continue;
        }
        i += 1;
    }
    copy_lower(f, s, copy_from, end);
}

fn copy_lower(f: &mut Folder, s: &str, start: usize, end: usize) {
    if start >= end {
        return;
    }
    f.checkpoint(start);
    let from = f.out.len();
    f.out.push_str(&s[start..end]);
    f.out[from..].make_ascii_lowercase();
}

/// Comment ranges found in the original, translated to folded offsets.
fn with_comments(
    s: &str,
    mut reveals: Vec<(u32, u32, Reveal)>,
    map: &[(u32, u32)],
) -> Vec<(u32, u32, Reveal)> {
    for (start, end) in comment_ranges(s) {
        reveals.push((folded_of(map, start), folded_of(map, end), Reveal::COMMENT));
    }
    reveals
}

/// The folded offset of original offset `at` (the inverse of [`View::original`], rounded
/// down inside a changed character).
fn folded_of(map: &[(u32, u32)], at: usize) -> u32 {
    let at = at as u32;
    let i = map.partition_point(|&(_, original)| original <= at);
    match i.checked_sub(1).and_then(|i| map.get(i)) {
        Some(&(folded, original)) => folded + (at - original),
        None => at,
    }
}

/// The end of a spaced run starting at `at` (three or more single word characters, each
/// followed by one separator, the last possibly by nothing), or `None`.
fn spaced_run(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    let mut singles = 0;
    loop {
        if i >= bytes.len() || !is_word_byte(bytes[i]) {
            break;
        }
        let next = bytes.get(i + 1).copied();
        match next {
            None => {
                singles += 1;
                i += 1;
                break;
            }
            Some(n) if is_word_byte(n) => break,
            Some(n) if CLASS[n as usize] == SEPARATOR => {
                singles += 1;
                // Continue only into another single character; a longer word after the
                // separator is not part of the run, and the separator stays with it.
                let after = bytes.get(i + 2).copied();
                let after_single = !bytes.get(i + 3).copied().is_some_and(is_word_byte);
                if after.is_some_and(is_word_byte) && after_single {
                    i += 2;
                } else {
                    i += 1;
                    break;
                }
            }
            Some(_) => {
                singles += 1;
                i += 1;
                break;
            }
        }
    }
    (singles >= 3).then_some(i)
}

/// Undo leetspeak inside words (ASCII runs of letters, digits, `@`, `$`) that [`Word::is_leet`]
/// accepts; pure numbers and ordinary technical names are left alone. Same length, so offsets
/// are unchanged. Only words holding a leetspeak character are looked at, and a text with no
/// leetspeak word is left as it is.
fn leet_fold(f: &mut Folder) {
    let words = leet_words(f.out.as_bytes());
    if words.is_empty() {
        return;
    }
    let mut bytes = std::mem::take(&mut f.out).into_bytes();
    for (start, end) in words {
        for b in &mut bytes[start..end] {
            *b = match *b {
                b'0' => b'o',
                b'1' => b'i',
                b'3' => b'e',
                b'4' | b'@' => b'a',
                b'5' | b'$' => b's',
                b'7' => b't',
                other => other,
            };
        }
        if f.track {
            f.reveals.push((start as u32, end as u32, Reveal::LEET));
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, so the buffer is still UTF-8.
    f.out = String::from_utf8(bytes).unwrap_or_default();
}

/// The leetspeak words of `bytes`, in order: the words around leetspeak characters that
/// [`Word::is_leet`] accepts.
fn leet_words(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut checked_to = 0usize;
    for (block, chunk) in bytes.chunks(64).enumerate() {
        let mut leet = byte_class::fold_masks(chunk).leet;
        while leet != 0 {
            let at = block * 64 + leet.trailing_zeros() as usize;
            leet &= leet - 1;
            if at < checked_to {
                continue;
            }
            let (start, end) = word_around(bytes, at);
            if word_of(&bytes[start..end]).is_leet() {
                out.push((start, end));
            }
            checked_to = end;
        }
    }
    out
}

/// Fold a phrase from the lists exactly as text is folded.
pub(crate) fn fold_phrase(phrase: &str) -> String {
    full_fold(phrase).text.into_owned()
}

#[cfg(test)]
mod tests;
