//! CAS-L009 — bidirectional override or unbalanced embedding (Trojan Source). The help text
//! below is this rule's header: it is written once and shown by `rules --explain` and in SARIF.
//!
//! The controls are listed by hand: `Bidi_Control` would also take in the marks (U+200E,
//! U+200F, U+061C) that ordinary right-to-left text uses, which is the opposite of the point.

use memchr::memchr_iter;

use super::super::text::{Text, code_point_label};
use super::super::{Evidence, Level, RuleDoc, Surface};
use super::{Needs, Special, char_at, holds_special};

const HELP: &str = "\
**CAS-L009 — bidirectional override or unbalanced embedding (Trojan Source)** (shape, error)

**What it flags.** An explicit direction override, U+202D (LRO) or U+202E (RLO); otherwise, \
a text whose embedding and isolate openers (U+202A, U+202B, U+2066, U+2067, U+2068) do not \
balance its closers (U+202C, U+2069).

**Why it matters.** Overrides exist to make the order a reader sees differ from the order \
the text is stored in, so a reviewer approves one sentence while the model reads another. \
Arabic, Hebrew and mixed-direction prose need none of these controls: the bidirectional \
algorithm orders them on its own, so this rule never fires on ordinary right-to-left text.

**Example.** `Reads a file.` + U+202E + `gnp.exe` (displays as `exe.png`).

**Evidence.** `contains U+202E (bidi override)`, or `<o> bidi embedding(s) opened, <c> closed`.

**Surfaces.** Tool, prompt, resource, resource name, and recorded output.

**References.** OWASP MCP03:2025 (tool poisoning); SAFE-MCP SAFE-T1402 (instruction \
steganography).";

pub(super) const DOC: RuleDoc = RuleDoc {
    id: "CAS-L009",
    describe: "bidirectional override or unbalanced embedding (Trojan Source)",
    title: "bidi override or unbalanced embedding",
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

/// What the text must hold before [`find`] can fire (every code point it looks for is above U+007F).
pub(super) const NEEDS: Needs = Needs::NonAscii;

/// The controls this rule counts: embeddings, overrides, isolates and their ends.
pub(super) fn is_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    if !holds_special(text, Special::Bidi) {
        return None;
    }
    let s = text.s;
    let (mut opened, mut closed) = (0usize, 0usize);
    // Every control here is U+202x or U+206x: lead byte 0xE2.
    for c in memchr_iter(0xE2, s.as_bytes()).filter_map(|at| char_at(s, at)) {
        match c {
            '\u{202D}' | '\u{202E}' => {
                return Some(format!("contains {} (bidi override)", code_point_label(c)));
            }
            '\u{202A}' | '\u{202B}' | '\u{2066}' | '\u{2067}' | '\u{2068}' => opened += 1,
            '\u{202C}' | '\u{2069}' => closed += 1,
            _ => {}
        }
    }
    (opened != closed).then(|| format!("{opened} bidi embedding(s) opened, {closed} closed"))
}

#[cfg(test)]
mod tests {
    use super::super::fixture::fires;
    use super::find;

    #[test]
    fn attack_fires() {
        assert_eq!(
            fires(find, "Reads a file.\u{202E}gnp.exe").as_deref(),
            Some("contains U+202E (bidi override)")
        );
        // An override anywhere wins over a count taken earlier.
        assert_eq!(
            fires(find, "\u{2066}x\u{2069} \u{202D}y").as_deref(),
            Some("contains U+202D (bidi override)")
        );
        assert_eq!(
            fires(find, "a \u{2067}b \u{202B}c\u{202C}").as_deref(),
            Some("2 bidi embedding(s) opened, 1 closed")
        );
        // Isolates alone, opened and never closed, and closed and never opened.
        assert_eq!(
            fires(find, "name: \u{2068}x").as_deref(),
            Some("1 bidi embedding(s) opened, 0 closed")
        );
        assert_eq!(
            fires(find, "x\u{2069}").as_deref(),
            Some("0 bidi embedding(s) opened, 1 closed")
        );
    }

    #[test]
    fn legitimate_is_silent() {
        assert!(fires(find, "يقرأ ملفًا من القرص ويعيد محتواه").is_none());
        assert!(fires(find, "קורא קובץ מהדיסק ומחזיר את תוכנו").is_none());
        assert!(fires(find, "name: \u{2067}שלום\u{2069} — balanced isolate").is_none());
    }
}
