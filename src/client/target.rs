//! What a client connects to: a server command spoken to over stdio, or a Streamable HTTP URL,
//! with the lifecycle era to speak. Parsed and validated here once, for `check`, `snapshot`,
//! `verify` and replay passthrough, so every command refuses a bad target with the same words.
//!
//! Validation messages name the flag and are the reference's where it has one (`use either
//! --stdio or --url, not both`, `missing target: …`, `stdio target: empty command`). An empty
//! `--stdio ""` or `--url ""` names no target, as in the reference.

use std::fmt;

use crate::transport::command_line::tokenize;
use crate::transport::http::outbound::{UrlError, parse_url};

/// Which lifecycle to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraChoice {
    Legacy,
    Modern,
    Auto,
}

impl EraChoice {
    /// `legacy`, `modern` or `auto`; `None` otherwise.
    pub fn parse(text: &str) -> Option<EraChoice> {
        match text {
            "legacy" => Some(EraChoice::Legacy),
            "modern" => Some(EraChoice::Modern),
            "auto" => Some(EraChoice::Auto),
            _ => None,
        }
    }
}

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A command to spawn: `argv` is the program and its arguments (never empty); `text` is the
    /// command as the user wrote it, for reports.
    Stdio { argv: Vec<String>, text: String },
    /// A Streamable HTTP endpoint, as given.
    Url(String),
}

/// A validated target: an endpoint and the era to speak to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    endpoint: Endpoint,
    era: EraChoice,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("use either --stdio or --url, not both")]
    BothFlags,
    #[error("missing target: pass --stdio \"<command>\" or --url <http-url>")]
    MissingFlag,
    #[error("use either --url or a server command after --, not both")]
    BothCommandAndUrl,
    #[error("missing target: pass --url <http-url> or a server command after --")]
    MissingCommand,
    /// A command that splits into no words (the reference's wording).
    #[error("stdio target: empty command")]
    EmptyCommand,
    #[error("--era must be legacy | modern | auto (got \"{0}\")")]
    Era(String),
    /// A `--url` that is not an absolute http(s) URL with a host.
    #[error("--url: {0}")]
    Url(UrlError),
}

impl Target {
    /// `check` and `snapshot`: `--stdio "<command line>"` (split once here) or `--url`, and
    /// `--era`, checked in that order.
    pub fn from_flags(
        stdio: Option<&str>,
        url: Option<&str>,
        era: &str,
    ) -> Result<Target, TargetError> {
        let stdio = stdio.filter(|s| !s.is_empty());
        let url = url.filter(|s| !s.is_empty());
        let endpoint = match (stdio, url) {
            (Some(_), Some(_)) => return Err(TargetError::BothFlags),
            (None, None) => return Err(TargetError::MissingFlag),
            (None, Some(url)) => Endpoint::Url(url.to_owned()),
            (Some(command), None) => Endpoint::Stdio {
                argv: tokenize(command),
                text: command.to_owned(),
            },
        };
        Target::validated(endpoint, era)
    }

    /// `verify` (and an HTTP replay's passthrough): a command after `--`, already split by the
    /// shell, or `--url`, and `--era`.
    pub fn from_command(
        command: &[String],
        url: Option<&str>,
        era: &str,
    ) -> Result<Target, TargetError> {
        let url = url.filter(|s| !s.is_empty());
        let endpoint = match (command.is_empty(), url) {
            (false, Some(_)) => return Err(TargetError::BothCommandAndUrl),
            (true, None) => return Err(TargetError::MissingCommand),
            (true, Some(url)) => Endpoint::Url(url.to_owned()),
            (false, None) => Endpoint::Stdio {
                argv: command.to_vec(),
                text: command.join(" "),
            },
        };
        Target::validated(endpoint, era)
    }

    /// A command after `--` spoken to in `era` (replay passthrough on stdio: `auto`).
    pub fn stdio(command: &[String], era: EraChoice) -> Result<Target, TargetError> {
        let endpoint = Endpoint::Stdio {
            argv: command.to_vec(),
            text: command.join(" "),
        };
        Target::checked(endpoint, era)
    }

    fn validated(endpoint: Endpoint, era: &str) -> Result<Target, TargetError> {
        let era = EraChoice::parse(era).ok_or_else(|| TargetError::Era(era.to_owned()))?;
        Target::checked(endpoint, era)
    }

    fn checked(endpoint: Endpoint, era: EraChoice) -> Result<Target, TargetError> {
        match &endpoint {
            Endpoint::Stdio { argv, .. } if argv.is_empty() => {
                return Err(TargetError::EmptyCommand);
            }
            Endpoint::Url(url) => {
                parse_url(url).map_err(TargetError::Url)?;
            }
            Endpoint::Stdio { .. } => {}
        }
        Ok(Target { endpoint, era })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn era(&self) -> EraChoice {
        self.era
    }

    /// The program and its arguments of a stdio target; empty for a URL.
    pub fn argv(&self) -> &[String] {
        match &self.endpoint {
            Endpoint::Stdio { argv, .. } => argv,
            Endpoint::Url(_) => &[],
        }
    }
}

impl fmt::Display for Target {
    /// The target as the user wrote it: the command line, or the URL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.endpoint {
            Endpoint::Stdio { text, .. } => f.write_str(text),
            Endpoint::Url(url) => f.write_str(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn flags_are_checked_in_the_reference_order() {
        let t = Target::from_flags(Some("node 'my server.js' -v"), None, "legacy").unwrap();
        assert_eq!(t.argv(), words(&["node", "my server.js", "-v"]));
        assert_eq!(t.era(), EraChoice::Legacy);
        assert_eq!(t.to_string(), "node 'my server.js' -v");

        let url = Target::from_flags(Some(""), Some("http://127.0.0.1:9/mcp"), "auto").unwrap();
        assert_eq!(
            url.endpoint(),
            &Endpoint::Url("http://127.0.0.1:9/mcp".into())
        );
        assert!(url.argv().is_empty());

        let cases = [
            (
                Some("x"),
                Some("http://h/"),
                "bogus",
                TargetError::BothFlags,
            ),
            (None, None, "bogus", TargetError::MissingFlag),
            (Some(""), Some(""), "auto", TargetError::MissingFlag),
            (Some("  "), None, "auto", TargetError::EmptyCommand),
            (Some("x"), None, "future", TargetError::Era("future".into())),
            (
                None,
                Some("ftp://h/x"),
                "auto",
                TargetError::Url(UrlError::Scheme("ftp://h/x".into())),
            ),
            (
                None,
                Some("http://h/"),
                "future",
                TargetError::Era("future".into()),
            ),
        ];
        for (stdio, url, era, want) in cases {
            assert_eq!(Target::from_flags(stdio, url, era).unwrap_err(), want);
        }
        assert_eq!(
            Target::from_flags(None, Some("localhost:8080/mcp"), "auto")
                .unwrap_err()
                .to_string(),
            "--url: \"localhost:8080/mcp\" is not a URL"
        );
        assert_eq!(
            TargetError::Era("future".into()).to_string(),
            "--era must be legacy | modern | auto (got \"future\")"
        );
    }

    #[test]
    fn a_command_after_the_double_dash_or_a_url() {
        let t = Target::from_command(&words(&["srv", "a b"]), None, "modern").unwrap();
        assert_eq!(t.argv(), words(&["srv", "a b"]));
        assert_eq!(t.era(), EraChoice::Modern);
        assert_eq!(
            Target::from_command(&words(&["srv"]), Some("http://h/"), "auto").unwrap_err(),
            TargetError::BothCommandAndUrl
        );
        assert_eq!(
            Target::from_command(&[], Some(""), "auto").unwrap_err(),
            TargetError::MissingCommand
        );
        assert_eq!(
            Target::stdio(&[], EraChoice::Auto).unwrap_err(),
            TargetError::EmptyCommand
        );
    }
}
