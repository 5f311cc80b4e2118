//! CAS-L006 — invisible or steganographic Unicode. The help text below is this rule's header:
//! it is written once and shown by `rules --explain` and in SARIF.
//!
//! The code points are listed by hand because no Unicode property names exactly this set
//! (`Default_Ignorable_Code_Point` is far wider and takes in ordinary joiners and selectors).

use memchr::memchr3_iter;

use super::super::text::{Text, code_point_label};
use super::super::{Evidence, Level, RuleDoc, Surface};
use super::{Needs, Special, char_at, holds_special};

const HELP: &str = "\
**CAS-L006 — invisible or steganographic Unicode** (shape, error)

**What it flags.** On declarations: any one of the zero-width and joiner characters \
U+200B–U+200F, the word joiner U+2060, U+FEFF, or any code point of the Tags block \
U+E0000–U+E007F. On recorded output the rule is narrowed: a run of two or more of those \
characters in a row, or any single Tags code point.

**Why it matters.** These characters render as nothing, yet models read them. Zero-width \
binary (one character per bit) and Tags-block text (one Tags code point per ASCII letter) \
smuggle whole instructions past a human reviewer. A declaration has no use for them. Returned \
data is different: a lone U+200B left by a web editor, a byte-order mark at the start of a \
file, or the joiner inside an emoji sequence are ordinary, and neither smuggling scheme fits \
in a single non-Tags character, so the output variant asks for a run.

**Example.** `Returns the time.` followed by U+E0049 U+E0067 U+E006E … (\"Ign…\" in Tags).

**Evidence.** `contains U+XXXX` naming the first such code point; on output \
`contains U+XXXX (<n> invisible code point(s) in a row)`.

**Surfaces.** Tool, prompt, resource, resource name, and (narrowed) recorded output.

**References.** OWASP MCP03:2025 (tool poisoning); SAFE-MCP SAFE-T1402 (instruction \
steganography).";

pub(super) const DOC: RuleDoc = RuleDoc {
    id: "CAS-L006",
    describe: "invisible/steganographic Unicode in description",
    title: "invisible/steganographic Unicode",
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

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

pub(super) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}' | '\u{FEFF}') || is_tag(c)
}

/// Every invisible code point starts with one of these UTF-8 lead bytes (U+2xxx, U+FEFF,
/// plane 14), so the scan jumps between them instead of decoding every character.
fn invisible_at(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    memchr3_iter(0xE2, 0xEF, 0xF3, s.as_bytes())
        .filter_map(|at| char_at(s, at).map(|c| (at, c)))
        .filter(|&(_, c)| is_invisible(c))
}

/// What the text must hold before [`find`] can fire (every code point it looks for is above U+007F).
pub(super) const NEEDS: Needs = Needs::NonAscii;

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    if !holds_special(text, Special::Invisible) {
        return None;
    }
    let (_, c) = invisible_at(text.s).next()?;
    Some(format!("contains {}", code_point_label(c)))
}

/// The recorded-output variant: a run of two or more, or a single Tags code point.
pub(super) fn find_output(text: &Text<'_>) -> Option<String> {
    if !holds_special(text, Special::Invisible) {
        return None;
    }
    for (at, first) in invisible_at(text.s) {
        let run = text.s[at..]
            .chars()
            .take_while(|&c| is_invisible(c))
            .count();
        if run >= 2 || is_tag(first) {
            let noun = if run == 1 {
                "code point"
            } else {
                "code points"
            };
            return Some(format!(
                "contains {} ({run} invisible {noun} in a row)",
                code_point_label(first)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::fixture::fires;
    use super::{find, find_output};

    #[test]
    fn attack_fires() {
        assert_eq!(
            fires(find, "Returns\u{200B} the time").as_deref(),
            Some("contains U+200B")
        );
        assert_eq!(
            fires(find, "ok \u{E0049}\u{E0067}").as_deref(),
            Some("contains U+E0049")
        );
        assert_eq!(
            fires(find, "\u{FEFF}BOM").as_deref(),
            Some("contains U+FEFF")
        );
    }

    #[test]
    fn legitimate_is_silent() {
        assert!(fires(find, "Returns the time — in “quotes” ⚠️ 日本語").is_none());
        assert!(fires(find, "plain ascii").is_none());
    }

    #[test]
    fn output_variant_needs_a_run_or_a_tag() {
        assert!(fires(find_output, "a lone \u{200B} zero width").is_none());
        assert!(fires(find_output, "\u{FEFF}file body").is_none());
        assert!(fires(find_output, "family 👨\u{200D}👩\u{200D}👧").is_none());
        assert_eq!(
            fires(
                find_output,
                "x\u{200B} then Welcome.\u{200B}\u{200C}\u{200B}\u{200B}\u{200C}end"
            )
            .as_deref(),
            Some("contains U+200B (5 invisible code points in a row)")
        );
        assert_eq!(
            fires(find_output, "tag \u{E0041} here").as_deref(),
            Some("contains U+E0041 (1 invisible code point in a row)")
        );
    }
}
