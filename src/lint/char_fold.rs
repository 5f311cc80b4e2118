//! How one non-ASCII character folds for the second-stage rules (docs/check.md,
//! "Normalisation"): compatibility decomposition, lowercase, homoglyph folding, a combining mark
//! after a Latin letter dropped. `normalise` walks a text and asks here about each character
//! that is not ASCII.
//!
//! Asking Unicode's tables one character at a time (a decomposition lookup, a lowercase search,
//! the homoglyph table) is the costly part of folding Cyrillic, Greek or Arabic prose. What
//! each character of the two-byte UTF-8 range (U+0080 to U+07FF: Latin-1 and Latin Extended,
//! Greek, Cyrillic, Armenian, Hebrew, Arabic) folds to is therefore computed once, the plain
//! way, into a table; a test compares the table with the plain way for every character there.

use std::sync::LazyLock;

use unicode_normalization::char::{decompose_compatible, is_combining_mark};

use super::normalise::Reveal;

/// How `c` folds, appended to `out`: the reveals it makes, and whether the folded text ends in
/// a Latin letter after it. `prev_latin`: the folded text ended in one before `c`;
/// `next_latin`: an ASCII letter follows `c` in the original text. The plain way: one Unicode
/// lookup after another.
pub(super) fn fold_plain(
    c: char,
    mut prev_latin: bool,
    next_latin: bool,
    out: &mut String,
) -> (Reveal, bool) {
    let mut reveal = Reveal::default();
    let mut changed = false;
    decompose_compatible(c, |d| {
        if d != c {
            changed = true;
        }
        if is_combining_mark(d) && prev_latin {
            changed = true;
            return;
        }
        for l in d.to_lowercase() {
            match confusable(l) {
                Some(latin) => {
                    if prev_latin || next_latin {
                        reveal.add(Reveal::CONFUSABLE);
                    }
                    out.push(latin);
                    prev_latin = true;
                }
                None => {
                    out.push(l);
                    prev_latin = l.is_ascii_alphabetic();
                }
            }
        }
    });
    // An accented Latin letter losing its accent is ordinary spelling, not a reveal.
    if changed && !matches!(c, '\u{C0}'..='\u{24F}') {
        reveal.add(Reveal::COMPAT);
    }
    (reveal, prev_latin)
}

/// The table of the two-byte range, for [`fold_two_byte`]: looked up once per text, not once
/// per character.
pub(super) fn two_byte_table() -> &'static Table {
    &TWO_BYTE
}

/// [`fold_plain`], from the table, for a character of the two-byte range given by its code
/// point (`0x80..0x800`, as two UTF-8 bytes spell it), where the table also answers whether
/// it is invisible: `None` then, and nothing is appended. The walk of a text reads such
/// characters from their two bytes instead of decoding them (Cyrillic, Greek and Arabic prose
/// is mostly made of them); every other character is folded the plain way.
pub(super) fn fold_two_byte(
    table: &Table,
    code_point: u32,
    prev_latin: bool,
    next_latin: bool,
    out: &mut String,
) -> Option<(Reveal, bool)> {
    let pair = (code_point as usize)
        .checked_sub(TABLED_START)
        .and_then(|i| table.entries.get(i));
    let Some(pair) = pair else {
        // Not in the range: the plain way, for whatever character it is.
        let c = char::from_u32(code_point).unwrap_or_default();
        return (!is_invisible(c)).then(|| fold_plain(c, prev_latin, next_latin, out));
    };
    let e = &pair[usize::from(prev_latin)];
    if e.invisible {
        return None;
    }
    // Most characters fold to one, pushed as a character: a slice of a few bytes cost a
    // `memcpy` call.
    match e.one {
        Some(one) => out.push(one),
        None => match table.text.get(e.start as usize..e.end as usize) {
            Some(text) => out.push_str(text),
            None => {
                let c = char::from_u32(code_point).unwrap_or_default();
                return Some(fold_plain(c, prev_latin, next_latin, out));
            }
        },
    }
    Some((e.reveal[usize::from(next_latin)], e.latin_after))
}

/// The two-byte range of UTF-8, where the table applies.
const TABLED_START: usize = 0x80;
const TABLED_END: usize = 0x800;

/// What [`fold_plain`] makes of each character of the two-byte range, for either `prev_latin`.
pub(super) struct Table {
    /// Every folded character end to end.
    text: String,
    /// Per character (from [`TABLED_START`]), for `prev_latin` false and true.
    entries: Vec<[Entry; 2]>,
}

struct Entry {
    /// Where the folded character is in [`Table::text`].
    start: u32,
    end: u32,
    /// The folded text when it is one character.
    one: Option<char>,
    /// The reveals when no ASCII letter follows, and when one does.
    reveal: [Reveal; 2],
    latin_after: bool,
    /// The character is one [`is_invisible`] names (the walk drops it and says so).
    invisible: bool,
}

static TWO_BYTE: LazyLock<Table> = LazyLock::new(|| {
    let mut table = Table {
        text: String::new(),
        entries: Vec::with_capacity(TABLED_END - TABLED_START),
    };
    for cp in TABLED_START..TABLED_END {
        // No surrogate lies in this range: every code point is a character.
        let c = char::from_u32(cp as u32).unwrap_or_default();
        let entry = |prev_latin: bool, text: &mut String| {
            let start = text.len();
            let (alone, latin_after) = fold_plain(c, prev_latin, false, text);
            // The folded text does not depend on what follows, only the reveals do.
            let (before_latin, _) = fold_plain(c, prev_latin, true, &mut String::new());
            let mut chars = text[start..].chars();
            let one = chars.next().filter(|_| chars.next().is_none());
            Entry {
                start: start as u32,
                end: text.len() as u32,
                one,
                reveal: [alone, before_latin],
                latin_after,
                invisible: is_invisible(c),
            }
        };
        let pair = [entry(false, &mut table.text), entry(true, &mut table.text)];
        table.entries.push(pair);
    }
    table
});

/// Latin letters that Cyrillic and Greek lowercase letters are drawn like.
fn confusable(c: char) -> Option<char> {
    Some(match c {
        'а' => 'a',
        'в' => 'b',
        'с' => 'c',
        'ԁ' => 'd',
        'е' | 'ё' => 'e',
        'һ' | 'н' => 'h',
        'і' | 'ї' => 'i',
        'ј' => 'j',
        'к' => 'k',
        'ӏ' => 'l',
        'м' => 'm',
        'о' => 'o',
        'р' => 'p',
        'ԛ' => 'q',
        'ѕ' => 's',
        'т' => 't',
        'у' => 'y',
        'ѵ' => 'v',
        'ԝ' => 'w',
        'х' => 'x',
        'α' => 'a',
        'β' => 'b',
        'ϲ' => 'c',
        'ε' => 'e',
        'η' => 'n',
        'ι' => 'i',
        'κ' => 'k',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'τ' => 't',
        'υ' => 'u',
        'χ' => 'x',
        _ => return None,
    })
}

/// Format characters that render as nothing: removed before matching.
pub(super) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Scripts whose letters have no compatibility decomposition worth reading: copied as they
/// are (lowercased), which keeps Chinese, Japanese, Korean and Hindi text cheap to fold.
///
/// The four ranges are tested without a branch between them (`|`, not `||`): the fold asks
/// this of every character of a run, and in Japanese, whose kana and kanji alternate, the
/// branches of a `matches!` were mispredicted at nearly every character. A test holds this
/// equal to the `matches!` of the ranges.
pub(super) fn is_plain_script(c: char) -> bool {
    let cp = u32::from(c);
    (cp.wrapping_sub(0x0900) <= 0x097F - 0x0900)
        | (cp.wrapping_sub(0x3040) <= 0x30FF - 0x3040)
        | (cp.wrapping_sub(0x4E00) <= 0x9FFF - 0x4E00)
        | (cp.wrapping_sub(0xAC00) <= 0xD7A3 - 0xAC00)
}

/// End (exclusive) of the code points [`folds_to_itself`] has a table for: Latin-1 to Syriac
/// and Thaana, and general punctuation to the CJK symbols, the ranges of ordinary non-ASCII
/// prose that [`is_plain_script`] does not cover.
pub(super) const SELF_FOLDING_END: usize = 0x3400;

/// Per code point below [`SELF_FOLDING_END`], whether the fold copies it unchanged.
static SELF_FOLDING: LazyLock<Vec<u64>> = LazyLock::new(|| {
    let mut bits = vec![0u64; SELF_FOLDING_END / 64];
    for cp in 0x80..SELF_FOLDING_END {
        if char::from_u32(cp as u32).is_some_and(folds_to_itself_by_definition) {
            bits[cp / 64] |= 1 << (cp % 64);
        }
    }
    bits
});

/// A character the fold copies as it is: not removed, no compatibility or canonical
/// decomposition, its own lowercase, no homoglyph, not a combining mark (which is dropped
/// after a Latin letter). Most letters of Cyrillic, Greek, Hebrew and Arabic prose, and most
/// punctuation, are; for them the full fold's per-character work is one table lookup.
pub(super) fn folds_to_itself(c: char) -> bool {
    let cp = c as usize;
    cp < SELF_FOLDING_END
        && SELF_FOLDING
            .get(cp / 64)
            .is_some_and(|bits| bits & (1 << (cp % 64)) != 0)
}

fn folds_to_itself_by_definition(c: char) -> bool {
    if is_invisible(c) || is_combining_mark(c) || confusable(c).is_some() {
        return false;
    }
    let (mut parts, mut same) = (0, true);
    decompose_compatible(c, |d| {
        parts += 1;
        same &= d == c;
    });
    let mut lower = c.to_lowercase();
    parts == 1 && same && lower.next() == Some(c) && lower.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branch-free range test is the plain one, for every character.
    #[test]
    fn plain_script_is_the_four_ranges() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let plain = matches!(c, '\u{0900}'..='\u{097F}' | '\u{3040}'..='\u{30FF}'
                | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7A3}');
            assert_eq!(is_plain_script(c), plain, "{c:?}");
        }
    }

    /// The table gives what the plain way gives, for every character it holds, after and not
    /// after a Latin letter, before and not before an ASCII one.
    #[test]
    fn the_table_folds_as_the_plain_way() {
        for c in (TABLED_START as u32..TABLED_END as u32).filter_map(char::from_u32) {
            for prev_latin in [false, true] {
                for next_latin in [false, true] {
                    let (mut plain, mut tabled) = (String::from("x"), String::from("x"));
                    let want = fold_plain(c, prev_latin, next_latin, &mut plain);
                    let got = fold_two_byte(
                        two_byte_table(),
                        u32::from(c),
                        prev_latin,
                        next_latin,
                        &mut tabled,
                    );
                    // An invisible character is the walk's to drop: the table only says so.
                    if is_invisible(c) {
                        assert_eq!((got, tabled.as_str()), (None, "x"), "{c:?}");
                        continue;
                    }
                    assert_eq!(
                        (got, &tabled),
                        (Some(want), &plain),
                        "{c:?} {prev_latin} {next_latin}"
                    );
                }
            }
        }
        // Beyond the range the plain way answers.
        let mut out = String::new();
        assert_eq!(
            fold_two_byte(two_byte_table(), 0xFF49, false, false, &mut out).map(|r| r.0),
            Some(Reveal::COMPAT)
        );
        assert_eq!(out, "i");
    }
}
