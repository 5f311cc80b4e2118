//! Which JSON Schema dialect a schema is checked under.

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    Draft4,
    Draft6,
    Draft7,
    Draft2019,
    Draft2020,
}

impl Dialect {
    /// The reference's choice: draft-07 whenever `$schema` mentions `draft-07` (Ajv's test),
    /// otherwise the dialect a json-schema.org meta-schema URI names, otherwise 2020-12, the MCP
    /// default. Any other URI names a meta-schema that would have to be fetched, which never
    /// happens: the schema cannot compile (as with the library this replaced).
    pub(super) fn of(schema: &Value) -> Result<Self, String> {
        let Some(declared) = schema.get("$schema") else {
            return Ok(Self::Draft2020);
        };
        // Not a string: the dialect stays the default, whose meta-schema then refuses it.
        let Some(uri) = declared.as_str() else {
            return Ok(Self::Draft2020);
        };
        if uri.contains("draft-07") {
            return Ok(Self::Draft7);
        }
        let dialect = match uri.trim_end_matches('#') {
            "http://json-schema.org/draft-04/schema"
            | "https://json-schema.org/draft-04/schema" => Self::Draft4,
            "http://json-schema.org/draft-06/schema"
            | "https://json-schema.org/draft-06/schema" => Self::Draft6,
            "http://json-schema.org/draft/2019-09/schema"
            | "https://json-schema.org/draft/2019-09/schema" => Self::Draft2019,
            "http://json-schema.org/draft/2020-12/schema"
            | "https://json-schema.org/draft/2020-12/schema"
            | "http://json-schema.org/schema"
            | "https://json-schema.org/schema" => Self::Draft2020,
            _ => {
                return Err(format!(
                    "/$schema: {} names a meta-schema mcp-cassette does not ship (it never \
                     fetches one)",
                    super::quote(uri)
                ));
            }
        };
        Ok(dialect)
    }

    /// Whether `true` and `false` are schemas.
    pub(super) fn boolean_schemas(self) -> bool {
        self != Self::Draft4
    }

    /// Whether `1.0` is an integer (draft-04 wants integers written as such).
    pub(super) fn integral_floats(self) -> bool {
        self != Self::Draft4
    }

    /// Up to draft-07 `$ref` replaces its siblings, so an `$id` beside it sets no base.
    pub(super) fn ref_hides_id(self) -> bool {
        matches!(self, Self::Draft4 | Self::Draft6 | Self::Draft7)
    }

    pub(super) fn id_keyword(self) -> &'static str {
        match self {
            Self::Draft4 => "id",
            _ => "$id",
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Dialect;

    #[test]
    fn dialects_by_schema_uri() {
        for (uri, dialect) in [
            ("http://json-schema.org/draft-07/schema#", Dialect::Draft7),
            ("https://example.com/my-draft-07-ish", Dialect::Draft7),
            ("http://json-schema.org/draft-04/schema#", Dialect::Draft4),
            ("https://json-schema.org/draft-06/schema", Dialect::Draft6),
            (
                "https://json-schema.org/draft/2019-09/schema",
                Dialect::Draft2019,
            ),
            (
                "https://json-schema.org/draft/2020-12/schema#",
                Dialect::Draft2020,
            ),
            ("http://json-schema.org/schema", Dialect::Draft2020),
        ] {
            assert_eq!(Dialect::of(&json!({"$schema": uri})), Ok(dialect), "{uri}");
        }
        assert_eq!(Dialect::of(&json!({})), Ok(Dialect::Draft2020));
        assert_eq!(Dialect::of(&json!({"$schema": 7})), Ok(Dialect::Draft2020));
        assert_eq!(Dialect::of(&json!(true)), Ok(Dialect::Draft2020));
        let err = Dialect::of(&json!({"$schema": "https://example.com/meta"})).unwrap_err();
        assert!(
            err.starts_with("/$schema: \"https://example.com/meta\" names"),
            "{err}"
        );
    }
}
