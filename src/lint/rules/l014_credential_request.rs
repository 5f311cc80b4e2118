//! CAS-L014 — asks for a credential in its input (intent). The help text below is this rule's
//! header: it is written once and shown by `rules --explain` and in SARIF.

use std::sync::LazyLock;

use regex::Regex;

use super::super::text::Text;
use super::super::{Evidence, Level, RuleDoc, Surface};
use super::{Anchors, Needs, phrase_evidence, phrase_regex, required_groups};

const HELP: &str = "\
**CAS-L014 — tool asks for a credential in its input, verify intended** (intent, warn)

**What it flags.** include / attach / provide / supply / pass / paste, an optional \"your\" or \
\"the\", then an API key (`api key`, `api_key`, `api-key`, `apikey`), an access token, a \
password, a secret or credential(s).

**Why it matters.** A secret passed as a tool argument lands in the model's context, in \
transcripts and logs, and in the hands of whichever server receives the call. Servers \
should take credentials from their own configuration. Some integrations do ask for a key \
in-band, so this reports the request and asks you to confirm it.

**Example.** `Include your API key in the token field.` A legitimate \
`Provide your API key to authenticate with the service.` fires too, at warn.

**Evidence.** The text around the match (20 characters before it, 60 in all).

**Surfaces.** Tool, prompt, resource, resource name.

**References.** OWASP MCP01:2025 (token mismanagement and secret exposure) and MCP07:2025 \
(insufficient authentication and authorization); SAFE-MCP SAFE-T1001 (tool poisoning attack).";

pub(super) const DOC: RuleDoc = RuleDoc {
    id: "CAS-L014",
    describe: "tool asks for a credential in its input, verify intended",
    title: "asks for a credential in its input",
    level: Level::Warn,
    evidence: Evidence::Intent,
    owasp: &["MCP01:2025", "MCP07:2025"],
    safe_mcp: Some("SAFE-T1001"),
    surfaces: &[
        Surface::Tool,
        Surface::Prompt,
        Surface::Resource,
        Surface::Name,
    ],
    ceilings: &[],
    doc: HELP,
};

/// The pattern in the reference's JavaScript dialect (see `phrase_regex`).
pub(super) const SOURCE: &str = r"\b(?i-u:include|attach|provide|supply|pass|paste)\s+(?:(?i-u:your|the)\s+)?(?i-u:api[_ -]?key|access[_ -]?token|password|secret|credentials?)\b";

/// Literals the pattern cannot match without (see `Anchors`). Every credential noun the pattern
/// accepts holds one of these (cut to start on rarer letters; `key` right after `i`, `_`, a
/// space or `-`, as in `api key`).
pub(super) const ANCHORS: Anchors = &[&["[i_ -]key", "token", "ssword", "ecret", "edential"]];

static PATTERN: LazyLock<Regex> = LazyLock::new(|| phrase_regex(SOURCE));

static GATE: LazyLock<Option<u32>> = LazyLock::new(|| required_groups(DOC.id));

/// What the text must hold before [`find`] can fire (its pattern cannot match without its anchors).
pub(super) const NEEDS: Needs = Needs::Anchors;

pub(super) fn find(text: &Text<'_>) -> Option<String> {
    phrase_evidence(*GATE, &PATTERN, text)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::fires;
    use super::find;

    #[test]
    fn attack_fires() {
        assert!(fires(find, "Include your API key in the token field").is_some());
        assert!(fires(find, "paste the access_token here").is_some());
        assert!(fires(find, "SUPPLY PASSWORD").is_some());
    }

    #[test]
    fn legitimate_fires_at_warn() {
        assert!(
            fires(
                find,
                "Provide your API key to authenticate with the service."
            )
            .is_some()
        );
        assert_eq!(super::DOC.level, super::super::super::Level::Warn);
    }

    #[test]
    fn unrelated_prose_is_silent() {
        assert!(
            fires(
                find,
                "Never include secrets; the server reads its own config."
            )
            .is_none()
        );
        assert!(fires(find, "Passes the password policy check result").is_none());
    }
}
