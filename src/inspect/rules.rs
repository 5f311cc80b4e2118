//! The structural rules CAS-C001 … CAS-C008: ids, levels, short titles and help text, for
//! `rules`, `--explain` and SARIF. Like the lint ids, these ids are forever: never renamed,
//! never reused.

use crate::severity::Level;

/// One structural rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StructuralRule {
    pub id: &'static str,
    pub level: Level,
    /// Short description (SARIF `shortDescription`, the `rules` listing).
    pub title: &'static str,
    /// What it checks, as markdown.
    pub doc: &'static str,
}

/// The catalogue, in id order.
pub fn catalogue() -> &'static [StructuralRule] {
    &RULES
}

/// Looks a rule up by exact id.
pub fn rule(id: &str) -> Option<&'static StructuralRule> {
    RULES.iter().find(|rule| rule.id == id)
}

static RULES: [StructuralRule; 8] = [
    StructuralRule {
        id: "CAS-C001",
        level: Level::Error,
        title: "duplicate tool name",
        doc: "\
**CAS-C001 — duplicate tool name** (structural, error)

**What it flags.** Two or more tools in one `tools/list` answer (all pages together) sharing a \
name. Reported once per name, with the number of occurrences.

**Why it matters.** A client calls a tool by name. With two definitions behind one name, which \
description the model read and which schema the call is checked against depend on the client, \
and one of the two can shadow the other unnoticed.

**Example.** Two entries named `search`, one from a plugin loaded twice.",
    },
    StructuralRule {
        id: "CAS-C002",
        level: Level::Warn,
        title: "tool name outside the recommended charset or length",
        doc: "\
**CAS-C002 — tool name outside the recommended charset or length** (structural, warn)

**What it flags.** A tool name that is not 1 to 128 characters of `A-Z a-z 0-9 _ . -`, or a \
tool with no string name at all.

**Why it matters.** The MCP specification recommends this alphabet. Many clients and model \
APIs accept nothing else in a function name, so such a tool may be renamed, dropped or refused \
downstream.

**Example.** `get weather` (a space), `wetter/abrufen` (a slash), a 200-character name.",
    },
    StructuralRule {
        id: "CAS-C003",
        level: Level::Warn,
        title: "missing description",
        doc: "\
**CAS-C003 — missing description** (structural, warn)

**What it flags.** A tool whose `description` is absent, not a string, or only white space.

**Why it matters.** The description is what a model selects tools by. Without one the model \
guesses from the name, and picks the wrong tool or none.",
    },
    StructuralRule {
        id: "CAS-C004",
        level: Level::Error,
        title: "missing inputSchema",
        doc: "\
**CAS-C004 — missing inputSchema** (structural, error)

**What it flags.** A tool with no `inputSchema` member.

**Why it matters.** The MCP specification requires one, even for a tool without arguments \
(`{\"type\": \"object\"}`). Clients that validate listings reject the tool, or the whole list.",
    },
    StructuralRule {
        id: "CAS-C005",
        level: Level::Error,
        title: "inputSchema is not valid JSON Schema",
        doc: "\
**CAS-C005 — inputSchema is not valid JSON Schema** (structural, error)

**What it flags.** An `inputSchema` that does not compile: it breaks its dialect's meta-schema \
(a misspelt type, `required` given as a string), holds a `$ref` that does not resolve inside \
the document, or nests deeper than 128 levels. The dialect is draft-07 when `$schema` mentions \
`draft-07`, otherwise the one `$schema` names, otherwise JSON Schema 2020-12. Nothing is \
fetched: a remote `$ref` is a finding.

**Why it matters.** Clients validate arguments against this schema, and model providers turn \
it into a function signature. A schema that does not compile breaks the tool for every caller \
that checks, and silently unchecks it for every caller that does not.

**Example.** `{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"strang\"}}}`.",
    },
    StructuralRule {
        id: "CAS-C006",
        level: Level::Warn,
        title: "advertised capability failed to list",
        doc: "\
**CAS-C006 — advertised capability failed to list** (structural, warn)

**What it flags.** A server that advertises the `resources` capability but answers \
`resources/list` with an error, a timeout or something unreadable. (A failing \
`resources/templates/list` is not reported: having no templates is not a fault.)

**Why it matters.** A client that trusts the capability will ask, and fail the same way.",
    },
    StructuralRule {
        id: "CAS-C007",
        level: Level::Warn,
        title: "advertised capability failed to list",
        doc: "\
**CAS-C007 — advertised capability failed to list** (structural, warn)

**What it flags.** A server that advertises the `prompts` capability but answers \
`prompts/list` with an error, a timeout or something unreadable.

**Why it matters.** A client that trusts the capability will ask, and fail the same way.",
    },
    StructuralRule {
        id: "CAS-C008",
        level: Level::Warn,
        title: "invalid x-mcp-header declaration",
        doc: "\
**CAS-C008 — invalid x-mcp-header declaration** (structural, warn)

**What it flags.** A tool whose `inputSchema` declares `x-mcp-header` (the 2026-07-28 request \
to mirror an argument into an `Mcp-Param-<Name>` HTTP header) in a way the specification \
forbids: a value that is not a non-empty string or not an HTTP token, a declaration not \
reachable from the root through `properties` alone (under `items`, `anyOf`, `$defs`, …), a name \
repeated ignoring case, or a property that is not typed string, integer or boolean.

**Why it matters.** A conforming Streamable HTTP client must refuse the whole tool, so it \
disappears for every HTTP user, whatever transport it is tested over today. Reported on every \
transport, stdio included; the tool is still linted and counted.

**Example.** `\"tenant\": {\"type\": \"string\", \"x-mcp-header\": \"Tenant Id\"}` (a space is \
not allowed in a header name).

**Level.** Ships at warn; it may become an error in a later minor release.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_frozen() {
        let ids: Vec<_> = catalogue().iter().map(|rule| rule.id).collect();
        assert_eq!(
            ids,
            [
                "CAS-C001", "CAS-C002", "CAS-C003", "CAS-C004", "CAS-C005", "CAS-C006", "CAS-C007",
                "CAS-C008"
            ]
        );
        for rule in catalogue() {
            assert!(
                rule.doc.starts_with(&format!("**{} — ", rule.id)),
                "{}",
                rule.id
            );
        }
        assert_eq!(rule("CAS-C005").map(|r| r.level), Some(Level::Error));
        assert!(rule("CAS-C009").is_none());
    }
}
