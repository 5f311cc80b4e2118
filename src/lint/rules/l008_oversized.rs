//! CAS-L008 — oversized description. The help text below is this rule's header: it is written
//! once and shown by `rules --explain` and in SARIF.

use super::super::text::{Text, utf16_len};
use super::super::{Evidence, Level, RuleDoc, Surface};
use super::Needs;

const HELP: &str = "\
**CAS-L008 — oversized description (context-window bloat)** (shape, warn)

**What it flags.** A text longer than 1500 characters (counted as UTF-16 code units, as a \
JavaScript client measures it).

**Why it matters.** Every tool description is sent to the model on every turn. A very long \
one crowds out the user's own context, raises cost, and gives an attacker room to bury \
instructions where no reviewer reads. A description that needs more than 1500 characters \
usually wants documentation elsewhere.

**Example.** A search tool whose description pastes its entire API reference.

**Evidence.** `<length> chars (recommended < 1500)`.

**Surfaces.** Tool, prompt, resource. Not names, and not recorded output, where long \
documents are the point.

**References.** OWASP MCP10:2025 (context injection and over-sharing). No SAFE-MCP technique: \
this is a length limit, not an attack shape, so the snapshot rug-pull rule ignores it.";

pub(super) const DOC: RuleDoc = RuleDoc {
    id: "CAS-L008",
    describe: "oversized description (context-window bloat)",
    title: "oversized description",
    level: Level::Warn,
    evidence: Evidence::Shape,
    owasp: &["MCP10:2025"],
    safe_mcp: None,
    surfaces: &[Surface::Tool, Surface::Prompt, Surface::Resource],
    ceilings: &[],
    doc: HELP,
};

const LIMIT: usize = 1500;

/// Nothing is checked before [`find`] runs.
pub(super) const NEEDS: Needs = Needs::Anything;

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    // Byte length bounds UTF-16 length from above, so short texts skip the count.
    if text.s.len() <= LIMIT {
        return None;
    }
    let len = if text.ascii() {
        text.s.len()
    } else {
        utf16_len(text.s)
    };
    (len > LIMIT).then(|| format!("{len} chars (recommended < {LIMIT})"))
}

#[cfg(test)]
mod tests {
    use super::super::fixture::fires;
    use super::find;

    #[test]
    fn attack_fires() {
        assert_eq!(
            fires(find, &"a".repeat(1501)).as_deref(),
            Some("1501 chars (recommended < 1500)")
        );
        // 751 astral characters are 1502 UTF-16 units.
        assert!(fires(find, &"𝒜".repeat(751)).is_some());
    }

    #[test]
    fn legitimate_is_silent() {
        assert!(fires(find, &"a".repeat(1500)).is_none());
        // 1000 CJK characters are 3000 bytes but 1000 units.
        assert!(fires(find, &"語".repeat(1000)).is_none());
    }
}
