//! `--redact-config <file>`: the user's own patterns, sensitive keys and allowed values, validated
//! with messages that name the file and the field, and the canonical hash a cassette header
//! records so that record, replay and redact can tell whether they ran the same rules.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::pattern;
use super::rules::{BUILTIN_NAMES, UserPattern};

/// Why a redaction config cannot be used. Every message starts `mcp-cassette:` and names the
/// file (or "redaction config" for text without one) and, where it applies, the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("mcp-cassette: cannot read the redaction config {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("mcp-cassette: {label} is not valid JSON: {detail}")]
    NotJson { label: String, detail: String },
    #[error("mcp-cassette: {label}: {why}")]
    Invalid { label: String, why: String },
}

/// One user pattern as written in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternSpec {
    pub name: String,
    /// The JavaScript-syntax source, as written.
    pub regex: String,
    /// Flags as written (a subset of `iu`, no repeats).
    pub flags: String,
}

/// A validated redaction config.
#[derive(Debug, Clone)]
pub struct RedactConfig {
    patterns: Vec<PatternSpec>,
    compiled: Vec<UserPattern>,
    keys: Vec<String>,
    allow: Vec<String>,
}

impl RedactConfig {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<RedactConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        RedactConfig::parse(&text, &path.display().to_string())
    }

    /// Validates config text; `label` names it in messages (a path, or "redaction config").
    pub fn parse(text: &str, label: &str) -> Result<RedactConfig, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::NotJson {
            label: label.to_owned(),
            detail: e.to_string(),
        })?;
        RedactConfig::from_value(&value, label)
    }

    /// Validates a parsed config.
    pub fn from_value(value: &Value, label: &str) -> Result<RedactConfig, ConfigError> {
        let reject = |why: String| ConfigError::Invalid {
            label: label.to_owned(),
            why,
        };
        let Value::Object(map) = value else {
            return Err(reject("a redaction config must be a JSON object".into()));
        };
        for key in map.keys() {
            if !matches!(key.as_str(), "patterns" | "keys" | "allow") {
                return Err(reject(format!(
                    "unknown field \"{key}\" (expected \"patterns\", \"keys\" or \"allow\")"
                )));
            }
        }
        let string_list = |field: &str| -> Result<Vec<String>, ConfigError> {
            match map.get(field) {
                None => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| reject(format!("\"{field}\" must be a list of strings"))),
                Some(_) => Err(reject(format!("\"{field}\" must be a list of strings"))),
            }
        };
        let keys = string_list("keys")?;
        if keys.iter().any(|k| k.trim().is_empty()) {
            return Err(reject("\"keys\" holds an empty name".into()));
        }
        let allow = string_list("allow")?;
        let entries = match map.get("patterns") {
            None => &[][..],
            Some(Value::Array(items)) => &items[..],
            Some(_) => return Err(reject("\"patterns\" must be a list".into())),
        };
        let mut patterns = Vec::with_capacity(entries.len());
        let mut compiled: Vec<UserPattern> = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("patterns[{i}]");
            let Value::Object(fields) = entry else {
                return Err(reject(format!(
                    "{at} must be an object with \"name\" and \"regex\""
                )));
            };
            let (Some(Value::String(name)), Some(Value::String(regex))) =
                (fields.get("name"), fields.get("regex"))
            else {
                return Err(reject(format!(
                    "{at} must have a string \"name\" and a string \"regex\""
                )));
            };
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase()) {
                return Err(reject(format!(
                    "{at} name \"{name}\" must be lowercase letters only, because it is written into the placeholder"
                )));
            }
            if BUILTIN_NAMES.contains(&name.as_str()) {
                return Err(reject(format!(
                    "{at} name \"{name}\" is a built-in rule; a custom rule may not produce a built-in placeholder"
                )));
            }
            if compiled.iter().any(|p| &p.name == name) {
                return Err(reject(format!("{at} repeats the name \"{name}\"")));
            }
            let flags = match fields.get("flags") {
                None => String::new(),
                Some(Value::String(f)) if f.chars().all(|c| c == 'i' || c == 'u') => f.clone(),
                Some(other) => {
                    let shown = match other {
                        Value::String(f) => f.clone(),
                        v => v.to_string(),
                    };
                    return Err(reject(format!(
                        "{at} flags \"{shown}\" may only use \"i\" and \"u\"; \"g\" is always applied"
                    )));
                }
            };
            let distinct: std::collections::HashSet<char> = flags.chars().collect();
            if distinct.len() != flags.chars().count() {
                return Err(reject(format!("{at} repeats a flag in \"{flags}\"")));
            }
            let regex_compiled = pattern::compile(regex, flags.contains('i'))
                .map_err(|e| reject(format!("{at} regex does not compile: {}", e.0)))?;
            if regex_compiled.is_match("") {
                return Err(reject(format!(
                    "{at} regex matches the empty string, so it would redact every position of every value"
                )));
            }
            compiled.push(UserPattern {
                name: name.clone(),
                regex: regex_compiled,
            });
            patterns.push(PatternSpec {
                name: name.clone(),
                regex: regex.clone(),
                flags,
            });
        }
        Ok(RedactConfig {
            patterns,
            compiled,
            keys,
            allow,
        })
    }

    /// The patterns as written, in order.
    pub fn patterns(&self) -> &[PatternSpec] {
        &self.patterns
    }

    pub(crate) fn compiled(&self) -> &[UserPattern] {
        &self.compiled
    }

    /// Extra sensitive key names, lowercased.
    pub fn keys(&self) -> impl Iterator<Item = String> + '_ {
        self.keys.iter().map(|k| k.to_lowercase())
    }

    /// Allowed values, exact.
    pub fn allow(&self) -> &[String] {
        &self.allow
    }

    /// Whether the config declares anything at all.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty() && self.keys.is_empty() && self.allow.is_empty()
    }

    /// SHA-256 (lowercase hex) of the canonical form
    /// `{"patterns":[[name,regex,sortedFlags],…],"keys":[…],"allow":[…]}`: pattern order kept
    /// (it decides which rule claims an overlapping match), keys lowercased, deduplicated and
    /// sorted, allow deduplicated and sorted with case kept, sorting by UTF-16 code units as
    /// JavaScript does. `None` for a config that declares nothing.
    pub fn hash(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let patterns: Vec<Value> = self
            .patterns
            .iter()
            .map(|p| {
                let mut flags: Vec<char> = p.flags.chars().collect();
                flags.sort_unstable();
                Value::Array(vec![
                    Value::String(p.name.clone()),
                    Value::String(p.regex.clone()),
                    Value::String(flags.into_iter().collect()),
                ])
            })
            .collect();
        let canonical = format!(
            "{{\"patterns\":{},\"keys\":{},\"allow\":{}}}",
            Value::Array(patterns),
            string_set(self.keys()),
            string_set(self.allow.iter().cloned()),
        );
        let digest = Sha256::digest(canonical.as_bytes());
        Some(digest.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// A JSON array of the unique strings, sorted as JavaScript's default `sort()` orders them.
fn string_set(values: impl Iterator<Item = String>) -> Value {
    let mut v: Vec<String> = values.collect();
    v.sort_by(|a, b| js_order(a, b));
    v.dedup();
    Value::Array(v.into_iter().map(Value::String).collect())
}

fn js_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        RedactConfig::parse(text, "cfg.json")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn malformed_configs_named() {
        assert_eq!(
            err("[]"),
            "mcp-cassette: cfg.json: a redaction config must be a JSON object"
        );
        assert_eq!(
            err(r#"{"nope":1}"#),
            "mcp-cassette: cfg.json: unknown field \"nope\" (expected \"patterns\", \"keys\" or \"allow\")"
        );
        assert!(err(r#"{"keys":[1]}"#).ends_with("\"keys\" must be a list of strings"));
        assert!(err(r#"{"keys":[" "]}"#).ends_with("\"keys\" holds an empty name"));
        assert!(err(r#"{"allow":"x"}"#).ends_with("\"allow\" must be a list of strings"));
        assert!(err(r#"{"patterns":null}"#).ends_with("\"patterns\" must be a list"));
        assert!(
            err(r#"{"patterns":[1]}"#)
                .ends_with("patterns[0] must be an object with \"name\" and \"regex\"")
        );
        assert!(
            err(r#"{"patterns":[{"name":"acme"}]}"#)
                .ends_with("patterns[0] must have a string \"name\" and a string \"regex\"")
        );
        assert!(
            err(r#"{"patterns":[{"name":"acme","regex":"(["}]}"#)
                .contains("patterns[0] regex does not compile: ")
        );
        assert!(err("{ nope").starts_with("mcp-cassette: cfg.json is not valid JSON: "));
    }

    #[test]
    fn names_and_flags() {
        for name in ["ACME", "acme-2", "acme_x", "", "acme "] {
            let e = err(&format!(
                r#"{{"patterns":[{{"name":"{name}","regex":"x"}}]}}"#
            ));
            assert!(e.contains("must be lowercase letters only"), "{e}");
        }
        for name in ["bearer", "jwt", "keyctx", "openai"] {
            let e = err(&format!(
                r#"{{"patterns":[{{"name":"{name}","regex":"x"}}]}}"#
            ));
            assert!(e.contains("is a built-in rule"), "{e}");
        }
        let e = err(r#"{"patterns":[{"name":"acme","regex":"a"},{"name":"acme","regex":"b"}]}"#);
        assert!(e.ends_with("patterns[1] repeats the name \"acme\""), "{e}");
        let e = err(r#"{"patterns":[{"name":"acme","regex":"x","flags":"m"}]}"#);
        assert!(
            e.contains("may only use \"i\" and \"u\"; \"g\" is always applied"),
            "{e}"
        );
        let e = err(r#"{"patterns":[{"name":"acme","regex":"x","flags":"g"}]}"#);
        assert!(e.contains("\"g\" is always applied"), "{e}");
        let e = err(r#"{"patterns":[{"name":"acme","regex":"x","flags":"ii"}]}"#);
        assert!(e.contains("repeats a flag"), "{e}");
        for regex in ["a*", "", "[A-Z0-9-]*", "(?:)"] {
            let e = err(&format!(
                r#"{{"patterns":[{{"name":"x","regex":"{regex}"}}]}}"#
            ));
            assert!(e.contains("matches the empty string"), "{regex}: {e}");
        }
    }

    fn hash(text: &str) -> Option<String> {
        RedactConfig::parse(text, "x").unwrap().hash()
    }

    #[test]
    fn hash_stands_for_behaviour() {
        assert_eq!(hash("{}"), None);
        assert_eq!(hash(r#"{"patterns":[],"keys":[],"allow":[]}"#), None);
        assert_eq!(
            hash(r#"{"keys":["a","b"],"allow":["x","y"]}"#),
            hash(r#"{"keys":["b","a","A"],"allow":["y","x","x"]}"#)
        );
        assert_ne!(
            hash(r#"{"allow":["Value"]}"#),
            hash(r#"{"allow":["value"]}"#)
        );
        assert_ne!(hash(r#"{"keys":["a"]}"#), hash(r#"{"allow":["a"]}"#));
        assert_eq!(
            hash(r#"{"patterns":[{"name":"a","regex":"AAA-[0-9]{4}","flags":"iu"}]}"#),
            hash(r#"{"patterns":[{"name":"a","regex":"AAA-[0-9]{4}","flags":"ui"}]}"#)
        );
        let two = r#"{"patterns":[{"name":"one","regex":"AAA-[0-9]+"},{"name":"two","regex":"AAA-[0-9]{4}"}]}"#;
        let swapped = r#"{"patterns":[{"name":"two","regex":"AAA-[0-9]{4}"},{"name":"one","regex":"AAA-[0-9]+"}]}"#;
        assert_ne!(hash(two), hash(swapped));
        // The canonical text is what JavaScript's JSON.stringify would write.
        let h = hash(r#"{"patterns":[{"name":"acme","regex":"ACME-[A-Z0-9-]{10,}"}],"keys":["Handle"],"allow":["b","a"]}"#).unwrap();
        let canonical = r#"{"patterns":[["acme","ACME-[A-Z0-9-]{10,}",""]],"keys":["handle"],"allow":["a","b"]}"#;
        let want: String = Sha256::digest(canonical.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(h, want);
    }
}
