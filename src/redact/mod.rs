//! Redaction (temporary pass-through while the real rules land on their own branch).

use crate::jsonrpc::Frame;

#[derive(Clone, Debug, Default)]
pub struct Redactor;

#[derive(Debug)]
pub struct RedactConfig;

#[derive(Debug, thiserror::Error)]
#[error("redaction config error")]
pub struct ConfigError;

impl RedactConfig {
    pub fn load(_path: &std::path::Path) -> Result<RedactConfig, ConfigError> {
        Ok(RedactConfig)
    }
    pub fn hash(&self) -> Option<String> {
        None
    }
}

impl Redactor {
    pub fn builtin() -> Redactor {
        Redactor
    }
    pub fn with_config(_config: &RedactConfig) -> Redactor {
        Redactor
    }
    pub fn config_hash(&self) -> Option<&str> {
        None
    }
    pub fn redact_frame(&self, _frame: &Frame) -> Option<(Frame, usize)> {
        None
    }
    pub fn redact_raw_line(&self, line: &str) -> (String, usize) {
        (line.to_owned(), 0)
    }
    pub fn redact_text(&self, text: &str) -> (String, usize) {
        (text.to_owned(), 0)
    }
    pub fn redact_value(&self, value: &serde_json::Value) -> (serde_json::Value, usize) {
        (value.clone(), 0)
    }
}

/// Why a replay's redaction config does not match the one a cassette was recorded under.
#[derive(Debug, thiserror::Error)]
pub enum HashMismatch {
    #[error(
        "this replay was given a redaction config, but the cassette was recorded without one; drop --redact-config, or re-record with it"
    )]
    UnexpectedConfig,
    #[error(
        "the cassette was recorded with a redaction config this replay was not given; pass the same --redact-config the recording used"
    )]
    MissingConfig,
    #[error(
        "the cassette was recorded with a different redaction config than this replay was given"
    )]
    DifferentConfig,
}

/// Compares the hash a cassette records with the hash of the config given now.
pub fn check_config_hash(recorded: Option<&str>, given: Option<&str>) -> Result<(), HashMismatch> {
    match (recorded, given) {
        (a, b) if a == b => Ok(()),
        (None, Some(_)) => Err(HashMismatch::UnexpectedConfig),
        (Some(_), None) => Err(HashMismatch::MissingConfig),
        _ => Err(HashMismatch::DifferentConfig),
    }
}
