//! Opening a session in either era: the legacy `initialize` handshake, the modern
//! `server/discover` (with its one retry at a version the server names), the `auto` probe that
//! tries one and then the other, and the `_meta` every modern request carries.

use serde_json::{Map, Value, json};

use super::{Client, ClientError, RpcError, TransportError, TransportKind};
use crate::protocol::error_code::{HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION};
use crate::protocol::{Era, meta, version};

impl Client {
    pub(super) async fn probe(&mut self, kind: TransportKind) -> Result<(), ClientError> {
        let first = match kind {
            TransportKind::Stdio => Era::Legacy,
            TransportKind::Http => Era::Modern,
        };
        let second = match first {
            Era::Legacy => Era::Modern,
            Era::Modern => Era::Legacy,
        };
        let first_error = match self.open(first).await {
            Ok(()) => return Ok(()),
            Err(err @ ClientError::DiscoverRejected { .. }) => return Err(err),
            Err(err) if err.is_fatal() => return Err(err),
            Err(err) => err,
        };
        eprintln!("mcp-cassette: {first} probe failed ({first_error}), trying {second}");
        match self.open(second).await {
            Ok(()) => Ok(()),
            Err(err) if err.is_fatal() => Err(err),
            Err(second_error) => Err(ClientError::NeitherEra {
                first,
                first_error: Box::new(first_error),
                second,
                second_error: Box::new(second_error),
            }),
        }
    }

    async fn open(&mut self, era: Era) -> Result<(), ClientError> {
        match era {
            Era::Legacy => self.initialize().await?,
            Era::Modern => self.discover().await?,
        }
        eprintln!(
            "mcp-cassette: connected as {era} (protocol {})",
            self.protocol_version.as_deref().unwrap_or("unstated")
        );
        Ok(())
    }

    pub(super) async fn initialize(&mut self) -> Result<(), ClientError> {
        self.set_era(Era::Legacy);
        let params = json!({
            "protocolVersion": version::LEGACY,
            "capabilities": self.client_capabilities.to_value(),
            "clientInfo": client_info(),
        });
        let result = match self.request("initialize", params).await {
            Ok(result) => result,
            Err(err @ (ClientError::Rpc { .. } | ClientError::ServerGone { .. })) => {
                return Err(err);
            }
            Err(err) => {
                return Err(ClientError::Handshake {
                    step: "initialize",
                    cause: Box::new(err),
                });
            }
        };
        self.protocol_version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(version) = self.protocol_version.clone() {
            self.transport.set_protocol_version(&version);
        }
        self.capabilities = capabilities_of(&result);
        self.server_info = result.get("serverInfo").filter(|v| !v.is_null()).cloned();
        self.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.notify("notifications/initialized", Value::Null).await
    }

    pub(super) async fn discover(&mut self) -> Result<(), ClientError> {
        self.set_era(Era::Modern);
        self.use_version(version::MODERN);
        let mut retried = false;
        let result = loop {
            let err = match self.request("server/discover", json!({})).await {
                Ok(result) => break result,
                Err(err) => err,
            };
            // Over stdio the refusal is an error answer; over HTTP it comes as a 400 whose
            // body carries it. Either way the server has spoken the modern era.
            let Some(error) = answered_error(&err) else {
                return Err(err);
            };
            if error.code == UNSUPPORTED_VERSION && !retried {
                let supported = error
                    .data
                    .as_ref()
                    .and_then(|data| data.get("supported"))
                    .and_then(Value::as_array)
                    .and_then(|list| list.first())
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let Some(version) = supported else {
                    return Err(ClientError::DiscoverRejected {
                        code: error.code,
                        message: format!("{} (server named no supported version)", error.message),
                    });
                };
                eprintln!(
                    "mcp-cassette: server rejected {}; retrying at {version}",
                    self.protocol_version.as_deref().unwrap_or(version::MODERN)
                );
                self.use_version(&version);
                retried = true;
                continue;
            }
            if matches!(
                error.code,
                HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION
            ) {
                return Err(ClientError::DiscoverRejected {
                    code: error.code,
                    message: error.message.clone(),
                });
            }
            return Err(err);
        };
        let versions: Vec<&str> = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let current = self.protocol_version.clone().unwrap_or_default();
        if let Some(first) = versions.first() {
            if !versions.contains(&current.as_str()) {
                let first = (*first).to_owned();
                self.use_version(&first);
            }
        }
        self.capabilities = capabilities_of(&result);
        self.server_info = result
            .get("_meta")
            .and_then(|result_meta| result_meta.get(meta::SERVER_INFO))
            .filter(|v| !v.is_null())
            .cloned();
        self.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(())
    }

    fn set_era(&mut self, era: Era) {
        self.era = era;
        self.transport.set_era(era);
    }

    fn use_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_owned());
        self.transport.set_protocol_version(version);
    }

    /// Modern requests carry version, identity and capabilities in `params._meta`; the caller's
    /// other `_meta` keys are kept, and `precedence` says whose wins where both set one.
    pub(super) fn with_meta(&self, params: Value, precedence: MetaPrecedence) -> Value {
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => return other,
        };
        let mut request_meta = match params.remove("_meta") {
            Some(Value::Object(request_meta)) => request_meta,
            _ => Map::new(),
        };
        let ours = [
            (
                meta::PROTOCOL_VERSION,
                json!(self.protocol_version.as_deref().unwrap_or(version::MODERN)),
            ),
            (meta::CLIENT_INFO, client_info()),
            (
                meta::CLIENT_CAPABILITIES,
                self.client_capabilities.to_value(),
            ),
        ];
        for (key, value) in ours {
            match precedence {
                MetaPrecedence::Ours => {
                    request_meta.insert(key.into(), value);
                }
                MetaPrecedence::Callers => {
                    request_meta.entry(key).or_insert(value);
                }
            }
        }
        params.insert("_meta".into(), Value::Object(request_meta));
        Value::Object(params)
    }
}

/// The JSON-RPC error a failed request was answered with: an error answer, or (HTTP) the error
/// in the body of a non-2xx answer.
fn answered_error(err: &ClientError) -> Option<&RpcError> {
    match err {
        ClientError::Rpc { error, .. } => Some(error),
        ClientError::Transport(TransportError::Status {
            error: Some(error), ..
        }) => Some(error),
        _ => None,
    }
}

/// Whose `_meta` keys win when a request already carries some of ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MetaPrecedence {
    /// Requests this client makes: the session's values.
    Ours,
    /// Requests relayed for someone else: theirs.
    Callers,
}

fn client_info() -> Value {
    json!({"name": "mcp-cassette", "version": env!("CARGO_PKG_VERSION")})
}

fn capabilities_of(result: &Value) -> Value {
    match result.get("capabilities") {
        Some(Value::Object(caps)) => Value::Object(caps.clone()),
        _ => Value::Object(Map::new()),
    }
}
