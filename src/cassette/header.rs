//! Line 1 of a cassette.

use std::path::Path;

use serde::Deserialize;

use super::{CassetteError, Location, RawObject, SUPPORTED_VERSIONS, WRITE_VERSION};
use crate::protocol::Era;

/// How the recorded session was carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// The header's `redaction` member.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Redaction {
    pub applied: bool,
    #[serde(rename = "configHash", default)]
    pub config_hash: Option<String>,
}

/// The cassette header: every member as read (or written), plus a validated view.
#[derive(Debug, Clone)]
pub struct Header {
    object: RawObject,
    version: u64,
    transport: Transport,
    era: Option<Era>,
    command: Option<Vec<String>>,
    url: Option<String>,
    started_at: Option<String>,
    redaction: Option<Redaction>,
    sessioned: bool,
}

impl Header {
    /// A header for a new recording. Members are written in this order; more may be set later.
    pub fn new(recorder: &str, started_at: &str, transport: Transport) -> Header {
        let mut object = RawObject::new();
        object.set("type", "header");
        object.set("cassetteVersion", &WRITE_VERSION);
        object.set("recorder", recorder);
        object.set("startedAt", started_at);
        object.set("transport", transport.as_str());
        Header {
            object,
            version: WRITE_VERSION,
            transport,
            era: None,
            command: None,
            url: None,
            started_at: Some(started_at.to_owned()),
            redaction: None,
            sessioned: false,
        }
    }

    /// Validates a parsed first line. `path` is used in messages only.
    pub fn from_object(object: RawObject, path: &Path) -> Result<Header, CassetteError> {
        let at = Location { path, line: 1 };
        match object.get_as::<String>("type") {
            Some(Ok(t)) if t == "header" => {}
            _ => {
                return Err(CassetteError::NoHeader {
                    path: path.to_owned(),
                });
            }
        }
        let version = match object.get("cassetteVersion") {
            Some(raw) => match serde_json::from_str::<u64>(raw) {
                Ok(v) if SUPPORTED_VERSIONS.contains(&v) => v,
                Ok(v) if v > WRITE_VERSION => {
                    return Err(CassetteError::NewerVersion {
                        version: v,
                        path: path.to_owned(),
                    });
                }
                _ => {
                    return Err(CassetteError::UnsupportedVersion {
                        version: raw.to_owned(),
                        path: path.to_owned(),
                    });
                }
            },
            None => {
                return Err(CassetteError::UnsupportedVersion {
                    version: "(none)".to_owned(),
                    path: path.to_owned(),
                });
            }
        };
        let transport = match object.get_as::<String>("transport") {
            None => Transport::Stdio,
            Some(Ok(t)) if t == "stdio" => Transport::Stdio,
            Some(Ok(t)) if t == "http" => Transport::Http,
            Some(_) => return Err(at.bad_field("transport", "must be \"stdio\" or \"http\"")),
        };
        // A v1 file is stdio and legacy by definition; a missing era means legacy.
        let era = match object.get_as::<Option<String>>("era") {
            None | Some(Ok(None)) => None,
            Some(Ok(Some(e))) => Some(
                e.parse::<Era>()
                    .map_err(|()| at.bad_field("era", "must be \"legacy\" or \"modern\""))?,
            ),
            Some(Err(_)) => return Err(at.bad_field("era", "must be \"legacy\" or \"modern\"")),
        };
        let command = match object.get_as::<Vec<String>>("command") {
            None => None,
            Some(Ok(c)) => Some(c),
            Some(Err(_)) => return Err(at.bad_field("command", "must be a list of strings")),
        };
        let url = match object.get_as::<String>("url") {
            None => None,
            Some(Ok(u)) => Some(u),
            Some(Err(_)) => return Err(at.bad_field("url", "must be a string")),
        };
        let started_at = match object.get_as::<String>("startedAt") {
            Some(Ok(s)) => Some(s),
            _ => None,
        };
        let redaction = match object.get_as::<Option<Redaction>>("redaction") {
            None | Some(Ok(None)) => None,
            Some(Ok(r)) => r,
            Some(Err(_)) => {
                return Err(at.bad_field(
                    "redaction",
                    "must be an object {\"applied\": boolean, \"configHash\"?: string}",
                ));
            }
        };
        let sessioned = matches!(object.get_as::<bool>("sessioned"), Some(Ok(true)));
        Ok(Header {
            object,
            version,
            transport,
            era,
            command,
            url,
            started_at,
            redaction,
            sessioned,
        })
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The declared era, if any (`None` reads as legacy, see [`Header::effective_era`]).
    pub fn era(&self) -> Option<Era> {
        self.era
    }

    /// The era replay serves: the declared one, legacy when absent. Never re-derived from frames.
    pub fn effective_era(&self) -> Era {
        self.era.unwrap_or(Era::Legacy)
    }

    pub fn command(&self) -> Option<&[String]> {
        self.command.as_deref()
    }

    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    pub fn started_at(&self) -> Option<&str> {
        self.started_at.as_deref()
    }

    pub fn redaction(&self) -> Option<&Redaction> {
        self.redaction.as_ref()
    }

    /// Whether frames were redacted when written (absent = not applied).
    pub fn redaction_applied(&self) -> bool {
        self.redaction.as_ref().is_some_and(|r| r.applied)
    }

    /// The `configHash` of the redaction config the frames were redacted under.
    pub fn config_hash(&self) -> Option<&str> {
        self.redaction
            .as_ref()
            .and_then(|r| r.config_hash.as_deref())
    }

    pub fn sessioned(&self) -> bool {
        self.sessioned
    }

    /// The `volatile` member as raw JSON (`null` reads as absent); validated by replay.
    pub fn volatile(&self) -> Option<serde_json::Value> {
        match self.object.get_as::<serde_json::Value>("volatile") {
            Some(Ok(serde_json::Value::Null)) | None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(_)) => None,
        }
    }

    /// Every member, as read or set.
    pub fn object(&self) -> &RawObject {
        &self.object
    }

    pub fn set_command(&mut self, command: Vec<String>) {
        self.object.set("command", &command);
        self.command = Some(command);
    }

    pub fn set_url(&mut self, url: &str) {
        self.object.set("url", url);
        self.url = Some(url.to_owned());
    }

    pub fn set_era(&mut self, era: Era) {
        self.object.set("era", era.as_str());
        self.era = Some(era);
    }

    pub fn set_sessioned(&mut self, sessioned: bool) {
        self.object.set("sessioned", &sessioned);
        self.sessioned = sessioned;
    }

    pub fn set_redaction(&mut self, applied: bool, config_hash: Option<&str>) {
        let json = match config_hash {
            Some(h) => serde_json::json!({ "applied": applied, "configHash": h }),
            None => serde_json::json!({ "applied": applied }),
        };
        self.object.set("redaction", &json);
        self.redaction = Some(Redaction {
            applied,
            config_hash: config_hash.map(str::to_owned),
        });
    }

    /// Sets any other member (e.g. a future field carried by a tool), raw.
    pub fn set_member<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        self.object.set(key, value);
    }

    /// The header line, without its newline.
    pub fn to_line(&self) -> String {
        self.object.to_json()
    }
}
