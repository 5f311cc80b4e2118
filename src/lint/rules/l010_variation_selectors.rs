//! CAS-L010 — variation selectors used as a data channel. The help text below is this rule's
//! header: it is written once and shown by `rules --explain` and in SARIF.
//!
//! The ranges are hand-typed on purpose: `Variation_Selector` also covers the Mongolian free
//! variation selectors, which Mongolian text uses legitimately.

use memchr::memchr2_iter;

use super::super::text::{Text, code_point_label};
use super::super::{Evidence, Level, RuleDoc, Surface};
use super::{Needs, Special, char_at, holds_special};

const HELP: &str = "\
**CAS-L010 — variation selectors used as a data channel** (shape, error)

**What it flags.** Any ideographic variation selector (U+E0100–U+E01EF); among the basic \
selectors U+FE00–U+FE0F, two in a row, or a single one other than the emoji presentation \
selectors U+FE0E/U+FE0F.

**Why it matters.** \"Emoji smuggling\" hides bytes in runs of variation selectors attached \
to one visible character: nothing renders, the model still receives every code point. A lone \
VS16 after an emoji (⚠️) is how ordinary text writes emoji and stays silent.

**Example.** `Reads a file` + U+FE00 U+FE01 U+FE02 U+FE03.

**Evidence.** `contains an ideographic variation selector (U+E0100+)`, \
`<n> consecutive variation selectors`, or \
`contains U+FE0x (not an emoji presentation selector)`.

**Surfaces.** Tool, prompt, resource, resource name, and recorded output.

**References.** OWASP MCP03:2025 (tool poisoning); SAFE-MCP SAFE-T1402 (instruction \
steganography).";

pub(super) const DOC: RuleDoc = RuleDoc {
    id: "CAS-L010",
    describe: "variation selectors used as a data channel",
    title: "variation selectors as a data channel",
    level: Level::Error,
    evidence: Evidence::Shape,
    owasp: &["MCP03:2025"],
    safe_mcp: Some("SAFE-T1402"),
    surfaces: &[
        Surface::Tool,
        Surface::Prompt,
        Surface::Resource,
        Surface::Name,
        Surface::Output,
    ],
    ceilings: &[],
    doc: HELP,
};

fn is_basic_selector(c: char) -> bool {
    ('\u{FE00}'..='\u{FE0F}').contains(&c)
}

fn is_ideographic_selector(c: char) -> bool {
    ('\u{E0100}'..='\u{E01EF}').contains(&c)
}

/// Any variation selector, basic or ideographic.
pub(super) fn is_selector(c: char) -> bool {
    is_basic_selector(c) || is_ideographic_selector(c)
}

/// Selector candidates: U+FExx starts with 0xEF, plane 14 with 0xF3.
fn selectors(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    memchr2_iter(0xEF, 0xF3, s.as_bytes())
        .filter_map(|at| char_at(s, at).map(|c| (at, c)))
        .filter(|&(_, c)| is_selector(c))
}

/// What the text must hold before [`find`] can fire (every code point it looks for is above U+007F).
pub(super) const NEEDS: Needs = Needs::NonAscii;

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    if !holds_special(text, Special::Selector) {
        return None;
    }
    if selectors(text.s).any(|(_, c)| is_ideographic_selector(c)) {
        return Some("contains an ideographic variation selector (U+E0100+)".to_owned());
    }
    let mut run = 0usize;
    let mut previous_end = None;
    for (at, c) in selectors(text.s) {
        run = if previous_end == Some(at) { run + 1 } else { 1 };
        previous_end = Some(at + c.len_utf8());
        // Two in a row carry no presentation meaning: that is payload.
        if run >= 2 {
            return Some(format!("{run} consecutive variation selectors"));
        }
        if c != '\u{FE0E}' && c != '\u{FE0F}' {
            return Some(format!(
                "contains {} (not an emoji presentation selector)",
                code_point_label(c)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::fixture::fires;
    use super::find;

    #[test]
    fn attack_fires() {
        assert_eq!(
            fires(find, "Reads a file\u{FE00}\u{FE01}\u{FE02}\u{FE03}").as_deref(),
            Some("contains U+FE00 (not an emoji presentation selector)")
        );
        assert_eq!(
            fires(find, "ok ⚠\u{FE0F}\u{FE0F}").as_deref(),
            Some("2 consecutive variation selectors")
        );
        assert_eq!(
            fires(find, "葛\u{E0100}").as_deref(),
            Some("contains an ideographic variation selector (U+E0100+)")
        );
    }

    #[test]
    fn legitimate_is_silent() {
        assert!(fires(find, "Reads a file and warns ⚠️ on failure").is_none());
        assert!(fires(find, "☎\u{FE0E} text style, ❤\u{FE0F} emoji style").is_none());
        assert!(fires(find, "Ｆｕｌｌｗｉｄｔｈ，中文标点。").is_none());
    }
}
