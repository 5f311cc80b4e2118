//! CAS-L015 — mixed-script word (homoglyph obfuscation). The help text below is this rule's
//! header: it is written once and shown by `rules --explain` and in SARIF.

use std::sync::LazyLock;

use regex::Regex;

use super::super::text::Text;
use super::super::{Evidence, Level, RuleDoc, Surface};
use super::Needs;

const HELP: &str = "\
**CAS-L015 — mixed-script word (homoglyph obfuscation)** (shape, warn)

**What it flags.** A Latin letter directly next to a Cyrillic or Greek letter, in either \
order (Unicode `Script` property).

**Why it matters.** Cyrillic а and Greek ο look exactly like Latin a and o. A word that mixes \
them reads as a familiar name to a reviewer while matching nothing a filter or allow-list \
looks for, and it can impersonate a trusted tool or brand. Only the two scripts whose letters \
are confusable with Latin are checked: Han, Kana, Hangul or Arabic beside Latin (as in \
`使用Google搜索`, ordinary Chinese without spaces) is silent.

**Example.** `Opens the pаypal dashboard` with a Cyrillic а.

**Evidence.** The whole space-delimited word: `\"pаypal\" mixes Latin with Cyrillic or Greek \
letters`. A \"word\" over 200 bytes (a run with no space) is quoted as the 30 characters either \
side of the mixed letters, each cut marked with `…`.

**Surfaces.** Tool, prompt, resource, resource name. Not recorded output: unit symbols such \
as `842 μs` are ordinary there.

**References.** OWASP MCP03:2025 (tool poisoning); SAFE-MCP SAFE-T1405 (tool obfuscation).";

pub(super) const DOC: RuleDoc = RuleDoc {
    id: "CAS-L015",
    describe: "mixed-script word (homoglyph obfuscation)",
    title: "mixed-script word",
    level: Level::Warn,
    evidence: Evidence::Shape,
    owasp: &["MCP03:2025"],
    safe_mcp: Some("SAFE-T1405"),
    surfaces: &[
        Surface::Tool,
        Surface::Prompt,
        Surface::Resource,
        Surface::Name,
    ],
    ceilings: &[],
    doc: HELP,
};

static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    // A constant pattern, compiled by this file's tests.
    Regex::new(
        r"\p{sc=Latin}[\p{sc=Cyrillic}\p{sc=Greek}]|[\p{sc=Cyrillic}\p{sc=Greek}]\p{sc=Latin}",
    )
    .expect("mixed-script pattern compiles")
});

/// Where the bytes may hold a Cyrillic or Greek code point: the first and the last byte that
/// may lead one, a necessary condition read off the UTF-8 encoding (lead byte, and for three-
/// and four-byte forms the second byte); `None` when none may. It lets Chinese, Japanese,
/// Arabic or Hindi text skip the pattern entirely, and the pattern read only the part of a
/// text where the Cyrillic or Greek is. The table is derived from the same Unicode properties
/// the pattern uses, and a test re-derives it over every code point so a Unicode update cannot
/// silently narrow it.
fn cyrillic_or_greek_span(bytes: &[u8]) -> Option<(usize, usize)> {
    // Blocks are screened with a branch-free test the compiler vectorizes; only a block
    // holding a candidate lead byte is looked at closely, from the front for the first lead
    // and from the back for the last.
    const BLOCK: usize = 64;
    let screen = |chunk: &[u8]| {
        chunk.iter().fold(0u8, |seen, &b| {
            seen | u8::from(b.wrapping_sub(0xCD) < 8)
                | u8::from(b == 0xE1)
                | u8::from(b == 0xE2)
                | u8::from(b == 0xEA)
                | u8::from(b == 0xEF)
                | u8::from(b == 0xF0)
        }) != 0
    };
    // The candidate lead bytes of one block (the block's last byte may lead into the next,
    // hence the look at `bytes` for the second byte).
    fn leads(bytes: &[u8], block: usize) -> impl DoubleEndedIterator<Item = usize> + '_ {
        let chunk = bytes
            .get(block * BLOCK..)
            .map_or(&[][..], |rest| &rest[..rest.len().min(BLOCK)]);
        chunk
            .iter()
            .enumerate()
            .filter(move |&(i, &lead)| match lead {
                0xCD..=0xD4 => true,
                0xE1 | 0xE2 | 0xEA | 0xEF | 0xF0 => bytes
                    .get(block * BLOCK + i + 1)
                    .is_some_and(|&next| second_byte_fits(lead, next)),
                _ => false,
            })
            .map(move |(i, _)| block * BLOCK + i)
    }
    let first = bytes
        .chunks(BLOCK)
        .enumerate()
        .filter(|(_, chunk)| screen(chunk))
        .find_map(|(block, _)| leads(bytes, block).next())?;
    let last = bytes
        .chunks(BLOCK)
        .enumerate()
        .rev()
        .filter(|(_, chunk)| screen(chunk))
        .find_map(|(block, _)| leads(bytes, block).next_back())
        .unwrap_or(first);
    Some((first, last))
}

fn second_byte_fits(lead: u8, next: u8) -> bool {
    match lead {
        0xE1 => matches!(next, 0xB2 | 0xB4..=0xB6 | 0xBC..=0xBF),
        0xE2 => matches!(next, 0x84 | 0xB7),
        0xEA => matches!(next, 0x99 | 0x9A | 0xAD),
        0xEF => next == 0xB8,
        0xF0 => matches!(next, 0x90 | 0x9D | 0x9E),
        _ => false,
    }
}

/// What the text must hold before [`find`] can fire (every code point it looks for is above U+007F).
pub(super) const NEEDS: Needs = Needs::NonAscii;

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    // Cyrillic and Greek letters are never ASCII.
    if text.ascii() {
        return None;
    }
    let at = first_mix(text.s)?;
    // Name the word, not the two letters: the word is what looked normal.
    let start = text.s[..at].rfind(' ').map_or(0, |i| i + 1);
    let end = text.s[at..].find(' ').map_or(text.s.len(), |i| at + i);
    Some(format!(
        "\"{}\" mixes Latin with Cyrillic or Greek letters",
        word_excerpt(text.s, start..end, at)
    ))
}

/// Where the pattern first matches in `s`, read only around the Cyrillic and Greek: a match
/// is a Cyrillic or Greek letter and a Latin one beside it, so it starts at most one character
/// (four bytes) before the first such letter and ends at most one character after the last.
/// In a description with one Russian sentence the pattern reads that sentence, not the whole
/// description (a test holds this equal to searching the whole text).
fn first_mix(s: &str) -> Option<usize> {
    let (first, last) = cyrillic_or_greek_span(s.as_bytes())?;
    let mut start = first.saturating_sub(4);
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    // The lead's character is at most four bytes, and the one after it as many.
    let mut end = (last + 8).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    Some(PATTERN.find_at(s.get(..end)?, start)?.start())
}

/// Longest word quoted whole, in bytes. A longer "word" (a run with no space: a blob, a hostile
/// description) is quoted as [`WORD_SIDE`] characters either side of the mixed letters, each cut
/// marked with `…`, so the finding's size does not grow with the text.
const MAX_WORD: usize = 200;
const WORD_SIDE: usize = 30;

fn word_excerpt(s: &str, word: std::ops::Range<usize>, at: usize) -> String {
    if word.len() <= MAX_WORD {
        return s[word].to_owned();
    }
    let from = s[word.start..at]
        .char_indices()
        .rev()
        .nth(WORD_SIDE - 1)
        .map_or(word.start, |(i, _)| word.start + i);
    let to = s[at..word.end]
        .char_indices()
        .nth(WORD_SIDE)
        .map_or(word.end, |(i, _)| at + i);
    let mut out = String::new();
    if from > word.start {
        out.push('…');
    }
    out.push_str(&s[from..to]);
    if to < word.end {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::fixture::fires;
    use super::{PATTERN, find, first_mix};

    /// Characters of every kind the span treats apart: ASCII letters and not, Latin, Cyrillic
    /// and Greek of two and three bytes, marks, Chinese, an emoji, and long ASCII runs, so
    /// that the span's blocks of 64 bytes are crossed.
    fn mixed_text() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a",
            "Z",
            " ",
            ".",
            "é",
            "ß",
            "\u{1E9E}",
            "Ａ",
            "а",
            "Ж",
            "\u{0485}",
            "\u{1C80}",
            "\u{A640}",
            "ο",
            "Ω",
            "\u{1F00}",
            "\u{0300}",
            "\u{2C80}",
            "中",
            "😀",
            "—",
            "Returns the weather for a city, with humidity and wind. ",
        ]);
        prop::collection::vec(pieces, 0..24).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn the_span_finds_the_whole_text_s_first_match(s in mixed_text()) {
            prop_assert_eq!(first_mix(&s), PATTERN.find(&s).map(|m| m.start()));
        }
    }

    #[test]
    fn attack_fires() {
        assert_eq!(
            fires(find, "Opens the p\u{0430}ypal dashboard").as_deref(),
            Some("\"p\u{0430}ypal\" mixes Latin with Cyrillic or Greek letters")
        );
        assert!(fires(find, "g\u{03BF}\u{03BF}gle").is_some());
        assert!(fires(find, "\u{0441}lick").is_some());
    }

    #[test]
    fn prefilter_never_hides_a_cyrillic_or_greek_code_point() {
        // Every code point the prefilter rejects, in one string; the property class must
        // find none of them.
        let class = regex::Regex::new(r"[\p{sc=Cyrillic}\p{sc=Greek}]");
        let Ok(class) = class else {
            panic!("class compiles");
        };
        let mut rejected = String::new();
        let mut buf = [0u8; 4];
        for c in (0x80u32..=0x10FFFF).filter_map(char::from_u32) {
            if super::cyrillic_or_greek_span(c.encode_utf8(&mut buf).as_bytes()).is_none() {
                rejected.push(c);
            }
        }
        assert!(rejected.len() > 1_000_000);
        assert_eq!(class.find(&rejected).map(|m| m.as_str().to_owned()), None);
        assert!(super::cyrillic_or_greek_span("使用谷歌，搜索。".as_bytes()).is_none());
    }

    #[test]
    fn a_long_word_is_quoted_around_the_mix() {
        let word = format!("{}p\u{0430}ypal{}", "x".repeat(500), "y".repeat(500));
        let text = format!("Opens {word} now");
        let Some(found) = find(&crate::lint::text::Text::new(&text)) else {
            panic!("fires");
        };
        assert_eq!(
            found,
            format!(
                "\"…{}p\u{0430}ypal{}…\" mixes Latin with Cyrillic or Greek letters",
                "x".repeat(30),
                "y".repeat(24)
            )
        );
    }

    #[test]
    fn legitimate_is_silent() {
        assert!(fires(find, "使用Google搜索并返回结果").is_none());
        assert!(fires(find, "Поиск по Google и Yandex").is_none());
        assert!(fires(find, "Αναζήτηση στο Google").is_none());
        assert!(fires(find, "Café naïve résumé").is_none());
    }
}
