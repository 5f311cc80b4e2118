//! CAS-L015 — mixed-script word (homoglyph obfuscation). The help text below is this rule's
//! header: it is written once and shown by `rules --explain` and in SARIF.

use std::sync::LazyLock;

use regex::Regex;

use super::super::text::Text;
use super::super::{Evidence, Level, RuleDoc, Surface};

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
letters`.

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

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    // Cyrillic and Greek letters are never ASCII.
    if text.ascii {
        return None;
    }
    let at = PATTERN.find(text.s)?.start();
    // Name the word, not the two letters: the word is what looked normal.
    let start = text.s[..at].rfind(' ').map_or(0, |i| i + 1);
    let end = text.s[at..].find(' ').map_or(text.s.len(), |i| at + i);
    Some(format!(
        "\"{}\" mixes Latin with Cyrillic or Greek letters",
        &text.s[start..end]
    ))
}

#[cfg(test)]
mod tests {
    use super::super::fixture::fires;
    use super::find;

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
    fn legitimate_is_silent() {
        assert!(fires(find, "使用Google搜索并返回结果").is_none());
        assert!(fires(find, "Поиск по Google и Yandex").is_none());
        assert!(fires(find, "Αναζήτηση στο Google").is_none());
        assert!(fires(find, "Café naïve résumé").is_none());
    }
}
