//! The MCP client, the only one: `check`, `snapshot`, `verify` and replay passthrough all use
//! it. It connects to a [`Target`] in either lifecycle era, sends requests one at a time with a
//! per-request timeout, follows pagination, and relays requests for someone else
//! ([`Client::forward`], raw params in, the raw answer line out). It knows nothing about how
//! bytes travel ([`Transport`] does that).
//!
//! # Eras
//!
//! * **legacy** (≤ 2025-11-25): `initialize` asking for `2025-06-18` with empty capabilities,
//!   then `notifications/initialized`.
//! * **modern** (2026-07-28): no handshake; `server/discover` says who the server is, and every
//!   request carries `_meta` with our protocol version, identity and (empty) capabilities. A
//!   `-32022` answer naming supported versions is retried once at the first of them; `-32020`
//!   or `-32021` settle the era as modern and fail.
//! * **auto**: stdio asks legacy first (an unknown pre-handshake request can stall a classic
//!   server), HTTP asks modern first. When the first probe fails the other is tried, unless the
//!   server is gone, in which case its exit is the answer. Probe outcomes go to stderr.
//!
//! # Robustness
//!
//! Lines that are not JSON-RPC are skipped with a note on stderr (the first few only). Answers
//! with an id we never sent are ignored and counted; a request that then times out says so.
//! Server requests are answered (`ping` with `{}`, a declared capability's requests as
//! [`ClientCapabilities`] says, anything else with `-32601`) so a legacy server waiting on us is
//! not left hanging. A server that goes away is reported at once, in
//! its transport's words (a stdio server: its exit status and the tail of its stderr). Results stay raw until a caller asks for a value, so an
//! answer nested too deep to parse is an error naming the method, never a crash.
//!
//! The timeout is 15 s per request, as in the reference; `MCP_CASSETTE_TIMEOUT_MS` overrides
//! it (in milliseconds) wherever [`ClientOptions::default`] is used.
//!
//! # Errors
//!
//! [`ClientError`] is the same whatever the transport: a server that went away is
//! [`ClientError::ServerGone`] with the transport's own account of how ([`Gone`]): a stdio
//! child's exit, an HTTP server that cannot be reached ([`HttpTransport`]). An HTTP answer
//! whose status is not 2xx is [`TransportError::Status`]; when its body carries a modern
//! lifecycle error (`-32022` and the like), discovery reads it as it reads an error answer.

mod capabilities;
mod error;
mod http;
mod lifecycle;
mod message;
#[cfg(test)]
pub(crate) mod scripted;
mod target;
mod transport;

use std::collections::HashSet;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

pub use capabilities::ClientCapabilities;
pub use error::ClientError;
pub use http::HttpTransport;
pub use message::{Outcome, RawMembers, Response, RpcError};
pub use target::{Endpoint, EraChoice, Target, TargetError};
pub use transport::{BoxFuture, Gone, Received, Transport, TransportError, TransportKind};

use crate::jsonrpc::Id;
use crate::protocol::Era;
use crate::transport::stdio::{StdioOptions, StdioTransport};
use lifecycle::MetaPrecedence;
use message::Incoming;

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
/// Environment variable overriding the timeout, in milliseconds.
pub const TIMEOUT_ENV: &str = "MCP_CASSETTE_TIMEOUT_MS";
/// Most pages a listing follows.
pub const MAX_PAGES: usize = 100;

/// Notes about skipped lines printed before falling silent.
const NOISE_NOTES: usize = 3;

/// How the client behaves whatever it connects to (the era is the [`Target`]'s).
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Per request: from sending it to its answer.
    pub timeout: Duration,
    /// What the client declares it can do (nothing by default).
    pub capabilities: ClientCapabilities,
}

impl Default for ClientOptions {
    /// 15 s unless `MCP_CASSETTE_TIMEOUT_MS` says otherwise.
    fn default() -> Self {
        Self {
            timeout: timeout_from_env().unwrap_or(DEFAULT_TIMEOUT),
            capabilities: ClientCapabilities::default(),
        }
    }
}

/// `MCP_CASSETTE_TIMEOUT_MS`, when set to a positive whole number of milliseconds.
pub fn timeout_from_env() -> Option<Duration> {
    let text = std::env::var(TIMEOUT_ENV).ok()?;
    let ms: u64 = text.trim().parse().ok()?;
    (ms > 0).then(|| Duration::from_millis(ms))
}

/// A connected MCP session.
pub struct Client {
    transport: Box<dyn Transport>,
    timeout: Duration,
    client_capabilities: ClientCapabilities,
    next_id: u64,
    era: Era,
    protocol_version: Option<String>,
    server_info: Option<Value>,
    capabilities: Value,
    instructions: Option<String>,
    noise_notes: usize,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("transport", &self.transport.kind())
            .field("era", &self.era)
            .field("protocol_version", &self.protocol_version)
            .field("server_info", &self.server_info)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Reaches the target (spawning a stdio server) and opens a session in its era. Must be
    /// called within a tokio runtime with I/O and time enabled.
    pub async fn connect(target: &Target, options: ClientOptions) -> Result<Client, ClientError> {
        let transport: Box<dyn Transport> = match target.endpoint() {
            Endpoint::Stdio { argv, .. } => Box::new(
                StdioTransport::spawn(argv, &StdioOptions::default())
                    .map_err(|err| ClientError::Transport(err.into()))?,
            ),
            Endpoint::Url(url) => {
                Box::new(HttpTransport::new(url).map_err(ClientError::Transport)?)
            }
        };
        Client::over(transport, target.era(), options).await
    }

    /// Opens a session over a transport already set up. On failure the transport is closed (a
    /// spawned server is not left behind).
    pub async fn over(
        transport: Box<dyn Transport>,
        era: EraChoice,
        options: ClientOptions,
    ) -> Result<Client, ClientError> {
        let kind = transport.kind();
        let mut client = Client {
            transport,
            timeout: options.timeout,
            client_capabilities: options.capabilities,
            next_id: 1,
            era: Era::Legacy,
            protocol_version: None,
            server_info: None,
            capabilities: Value::Object(Map::new()),
            instructions: None,
            noise_notes: 0,
        };
        let opened = match era {
            EraChoice::Legacy => client.initialize().await,
            EraChoice::Modern => client.discover().await,
            EraChoice::Auto => client.probe(kind).await,
        };
        match opened {
            Ok(()) => Ok(client),
            Err(err) => {
                client.close().await;
                Err(err)
            }
        }
    }

    pub fn era(&self) -> Era {
        self.era
    }

    /// `serverInfo.name` (legacy) or `_meta` server info's name (modern), when a string.
    pub fn server_name(&self) -> Option<&str> {
        self.server_info.as_ref()?.get("name")?.as_str()
    }

    pub fn server_version(&self) -> Option<&str> {
        self.server_info.as_ref()?.get("version")?.as_str()
    }

    /// The server's identity object as it sent it.
    pub fn server_info(&self) -> Option<&Value> {
        self.server_info.as_ref()
    }

    /// The negotiated (legacy) or chosen (modern) protocol version.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// The server's capabilities (`{}` when it stated none).
    pub fn capabilities(&self) -> &Value {
        &self.capabilities
    }

    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Sends a request and returns its `result`. An error answer is [`ClientError::Rpc`]; an
    /// `input_required` result is [`ClientError::InputRequired`].
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let raw = self.request_raw(method, params).await?;
        parse_value(method, &raw)
    }

    /// [`Client::request`], with the result left as raw JSON text.
    pub async fn request_raw(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Box<RawValue>, ClientError> {
        let response = self.exchange(method, params).await?;
        match response.outcome {
            Outcome::Error(error) => Err(ClientError::Rpc {
                method: method.to_owned(),
                error: Box::new(error),
            }),
            Outcome::Result(raw) => {
                if let Some(input_requests) = input_required(&raw) {
                    return Err(ClientError::InputRequired {
                        method: method.to_owned(),
                        input_requests,
                    });
                }
                Ok(raw)
            }
        }
    }

    /// Sends a request and returns the answer as it came, error or result (`input_required`
    /// included), for callers that compare answers (verify).
    pub async fn exchange(&mut self, method: &str, params: Value) -> Result<Response, ClientError> {
        let id = self.take_id();
        let params = match self.era {
            Era::Modern => Some(self.with_meta(params, MetaPrecedence::Ours)),
            Era::Legacy => (!params.is_null()).then_some(params),
        };
        let mut frame = Map::new();
        frame.insert("jsonrpc".into(), json!("2.0"));
        frame.insert("id".into(), json!(id));
        frame.insert("method".into(), json!(method));
        if let Some(params) = params {
            frame.insert("params".into(), params);
        }
        let text = Value::Object(frame).to_string();
        let (line, response) = self.round_trip(method, id, &text, true).await?;
        // Asked for, the reading is always there; a line without one is reported, not trusted.
        response.ok_or_else(|| ClientError::Malformed {
            method: method.to_owned(),
            detail: format!("could not be read: {}", preview(&line)),
        })
    }

    /// Relays a request on someone else's behalf (replay passthrough) and returns the server's
    /// answer line as it arrived, error or result (`input_required` included), with this
    /// client's id in it. `params` is raw JSON text (absent: none); in the legacy era it goes out
    /// byte for byte. In the modern era the request must carry `_meta` identity: keys the
    /// requester already put in its `_meta` are kept (they speak for the real client), and only
    /// the missing ones are filled in from this session.
    pub async fn forward(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<String, ClientError> {
        let modern_params;
        let params = match self.era {
            Era::Legacy => params.map(RawValue::get),
            Era::Modern => {
                let value = match params {
                    None => Value::Null,
                    Some(raw) => {
                        serde_json::from_str(raw.get()).map_err(|err| ClientError::Unsendable {
                            method: method.to_owned(),
                            detail: format!("its params cannot be read: {err}"),
                        })?
                    }
                };
                modern_params = self.with_meta(value, MetaPrecedence::Callers).to_string();
                Some(modern_params.as_str())
            }
        };
        let id = self.take_id();
        let mut text = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":{}",
            Value::String(method.to_owned())
        );
        if let Some(params) = params {
            text.push_str(",\"params\":");
            text.push_str(params);
        }
        text.push('}');
        let (line, _) = self.round_trip(method, id, &text, false).await?;
        Ok(match String::from_utf8(line) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        })
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends one request (`text`, whose id is `id`) and waits, within the timeout, for the
    /// answer carrying that id; returns the answer's line and, when `want_response`, its
    /// reading (a relay wants the line only, and is spared the copy). Everything else the
    /// server sends meanwhile is dealt with on the way: its requests answered, its
    /// notifications dropped, stray answers and noise counted.
    async fn round_trip(
        &mut self,
        method: &str,
        id: u64,
        text: &str,
        want_response: bool,
    ) -> Result<(Vec<u8>, Option<Response>), ClientError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut strays = (0_usize, 0_usize);
        let ms = self.timeout.as_millis();
        let timeout = |strays: (usize, usize)| ClientError::Timeout {
            method: method.to_owned(),
            ms,
            unknown_ids: strays.0,
            not_json: strays.1,
        };
        match tokio::time::timeout_at(deadline, self.transport.send(text)).await {
            Err(_) => return Err(timeout(strays)),
            Ok(sent) => sent.map_err(|err| transport_error(method, err))?,
        }
        loop {
            let received = match tokio::time::timeout_at(deadline, self.transport.receive()).await {
                Err(_) => return Err(timeout(strays)),
                Ok(received) => received.map_err(|err| transport_error(method, err))?,
            };
            let line = match received {
                Received::Message(line) => line,
                Received::TooLong { bytes } => {
                    strays.1 += 1;
                    self.note_noise(&format!(
                        "skipping a {bytes}-byte line from the server, longer than this client reads"
                    ));
                    continue;
                }
            };
            let answer = match message::classify(&line) {
                Incoming::Response(reply) if reply.answers(id) => {
                    Some(want_response.then(|| reply.to_response()))
                }
                Incoming::Response(_) => {
                    strays.0 += 1;
                    None
                }
                Incoming::Request { id, method } => {
                    if !self.answer_server_request(&id, &method, deadline).await {
                        return Err(timeout(strays));
                    }
                    None
                }
                Incoming::Notification => None,
                Incoming::NotJsonRpc if line.trim_ascii().is_empty() => None,
                Incoming::NotJsonRpc => {
                    strays.1 += 1;
                    self.note_noise(&format!(
                        "skipping a line from the server that is not JSON-RPC: {}",
                        preview(&line)
                    ));
                    None
                }
            };
            if let Some(response) = answer {
                return Ok((line, response));
            }
        }
    }

    /// Sends a notification (no answer expected).
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        let mut frame = Map::new();
        frame.insert("jsonrpc".into(), json!("2.0"));
        frame.insert("method".into(), json!(method));
        if !params.is_null() {
            frame.insert("params".into(), params);
        }
        let text = Value::Object(frame).to_string();
        match tokio::time::timeout(self.timeout, self.transport.send(&text)).await {
            Err(_) => Err(ClientError::Timeout {
                method: method.to_owned(),
                ms: self.timeout.as_millis(),
                unknown_ids: 0,
                not_json: 0,
            }),
            Ok(sent) => sent.map_err(|err| transport_error(method, err)),
        }
    }

    /// Every item of a paginated listing (`tools/list` + `tools`, …), each parsed.
    pub async fn list_all(&mut self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        self.list_all_raw(method, key)
            .await?
            .iter()
            .map(|item| parse_value(method, item))
            .collect()
    }

    /// Every item of a paginated listing, each left as raw JSON text, so one item too deep to
    /// parse does not sink the rest. Follows `nextCursor` for at most [`MAX_PAGES`] pages; a
    /// listing still going after that, or repeating a cursor, is an error rather than a
    /// silently truncated surface.
    pub async fn list_all_raw(
        &mut self,
        method: &str,
        key: &str,
    ) -> Result<Vec<Box<RawValue>>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let raw = self.request_raw(method, params).await?;
            let malformed = |detail: &str| ClientError::Malformed {
                method: method.to_owned(),
                detail: detail.to_owned(),
            };
            let page = RawMembers::parse(raw.get()).ok_or_else(|| malformed("is not an object"))?;
            if let Some(list) = page.get(key) {
                if list.get() != "null" {
                    let list: Vec<Box<RawValue>> = serde_json::from_str(list.get())
                        .map_err(|_| malformed(&format!("has a \"{key}\" that is not an array")))?;
                    items.extend(list);
                }
            }
            let next = page
                .get("nextCursor")
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .filter(js_truthy);
            let Some(next) = next else {
                return Ok(items);
            };
            if !seen.insert(next.to_string()) {
                return Err(ClientError::Pagination {
                    method: method.to_owned(),
                    detail: format!(
                        "returned the cursor {next} a second time; the listing would never end"
                    ),
                });
            }
            cursor = Some(next);
        }
        Err(ClientError::Pagination {
            method: method.to_owned(),
            detail: format!(
                "was still paginating after {MAX_PAGES} pages; refusing an endless listing"
            ),
        })
    }

    /// Ends the session (for stdio: end stdin, then SIGTERM, then SIGKILL).
    pub async fn close(self) {
        self.transport.close().await;
    }

    /// Legacy servers may ask us things; a short answer keeps them from waiting on us. The write
    /// is bounded by the request's `deadline`: a server that asks without ever reading fills its
    /// input pipe, and the write would wait forever. `false` when the deadline passed.
    async fn answer_server_request(
        &mut self,
        id: &Id,
        method: &str,
        deadline: tokio::time::Instant,
    ) -> bool {
        let (member, value) = self.client_capabilities.answer(method);
        let answer = json!({"jsonrpc": "2.0", "id": id.to_value(), member: value});
        // A failed write shows up on the next read; nothing to do here.
        tokio::time::timeout_at(deadline, self.transport.send(&answer.to_string()))
            .await
            .is_ok()
    }

    fn note_noise(&mut self, note: &str) {
        self.noise_notes += 1;
        if self.noise_notes <= NOISE_NOTES {
            eprintln!("mcp-cassette: {note}");
        }
        if self.noise_notes == NOISE_NOTES {
            eprintln!(
                "mcp-cassette: further lines that are not JSON-RPC are skipped without a note"
            );
        }
    }
}

fn transport_error(method: &str, err: TransportError) -> ClientError {
    match err {
        TransportError::Gone(gone) => ClientError::ServerGone {
            method: method.to_owned(),
            gone,
        },
        other => ClientError::Transport(other),
    }
}

/// JavaScript truthiness, which decides whether a cursor or capability counts.
pub fn js_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `Some(inputRequests)` when the result says `resultType: "input_required"`.
fn input_required(raw: &RawValue) -> Option<Option<Value>> {
    let members = RawMembers::parse(raw.get())?;
    let kind = members.get("resultType")?;
    if kind.get() != "\"input_required\"" {
        return None;
    }
    Some(
        members
            .get("inputRequests")
            .and_then(|raw| serde_json::from_str(raw.get()).ok()),
    )
}

fn parse_value(method: &str, raw: &RawValue) -> Result<Value, ClientError> {
    serde_json::from_str(raw.get()).map_err(|err| ClientError::Malformed {
        method: method.to_owned(),
        detail: if err.to_string().contains("recursion limit") {
            "nests deeper than 128 levels, more than this client reads".to_owned()
        } else {
            format!("could not be read: {err}")
        },
    })
}

/// The first 120 characters of a line, for a note.
fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut preview: String = text.chars().take(120).collect();
    if preview.len() < text.len() {
        preview.push('…');
    }
    preview
}

#[cfg(test)]
mod tests {
    use super::scripted::{self, Sent, error, legacy_init, result};
    use super::*;
    use crate::protocol::error_code::{MISSING_CAPABILITY, UNSUPPORTED_VERSION};
    use crate::protocol::meta::{
        CLIENT_CAPABILITIES as META_CLIENT_CAPABILITIES, CLIENT_INFO as META_CLIENT_INFO,
        PROTOCOL_VERSION as META_PROTOCOL_VERSION, SERVER_INFO as META_SERVER_INFO,
    };

    fn connect(
        era: EraChoice,
        script: impl FnMut(&Value) -> Vec<String> + Send + 'static,
    ) -> (Result<Client, ClientError>, Sent, tokio::runtime::Runtime) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (transport, sent) = scripted::transport(script);
        let options = ClientOptions {
            timeout: Duration::from_millis(200),
            capabilities: ClientCapabilities::default(),
        };
        let client = runtime.block_on(Client::over(transport, era, options));
        (client, sent, runtime)
    }

    #[test]
    fn legacy_handshake_and_pagination() {
        let (client, sent, runtime) = connect(EraChoice::Legacy, |request| match request["method"]
            .as_str()
            .unwrap_or("")
        {
            "initialize" => legacy_init(request),
            "tools/list" => match request["params"]["cursor"].as_str() {
                None => vec![result(
                    request,
                    json!({"tools": [{"name": "a"}], "nextCursor": "p2"}),
                )],
                Some("p2") => vec![result(
                    request,
                    json!({"tools": [{"name": "b"}], "nextCursor": ""}),
                )],
                Some(_) => Vec::new(),
            },
            _ => Vec::new(),
        });
        let mut client = client.unwrap();
        assert_eq!(client.era(), Era::Legacy);
        assert_eq!(client.server_name(), Some("s"));
        assert_eq!(client.server_version(), Some("1"));
        assert_eq!(client.protocol_version(), Some("2025-06-18"));
        assert_eq!(client.capabilities(), &json!({"tools": {}}));
        let tools = runtime
            .block_on(client.list_all("tools/list", "tools"))
            .unwrap();
        assert_eq!(tools, [json!({"name": "a"}), json!({"name": "b"})]);
        let sent = sent.values();
        assert_eq!(
            sent[0],
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "mcp-cassette", "version": env!("CARGO_PKG_VERSION")}
            }})
        );
        assert_eq!(
            sent[1],
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        assert_eq!(sent[2]["params"], json!({}));
        assert_eq!(sent[3]["params"], json!({"cursor": "p2"}));
    }

    #[test]
    fn modern_discovery_retries_an_unsupported_version_and_sends_meta() {
        let (client, sent, runtime) = connect(EraChoice::Modern, |request| {
            let version = request["params"]["_meta"][META_PROTOCOL_VERSION].clone();
            match request["method"].as_str().unwrap_or("") {
                "server/discover" if version == "2026-07-28" => vec![error(
                    request,
                    UNSUPPORTED_VERSION,
                    "unsupported",
                    json!({"supported": ["2027-01-01"], "requested": version}),
                )],
                "server/discover" => vec![result(
                    request,
                    json!({
                        "resultType": "complete",
                        "supportedVersions": ["2027-01-01"],
                        "capabilities": {"tools": {}, "prompts": {}},
                        "_meta": {META_SERVER_INFO: {"name": "m", "version": "2"}}
                    }),
                )],
                "tools/list" => vec![result(
                    request,
                    json!({"resultType": "complete", "tools": []}),
                )],
                _ => Vec::new(),
            }
        });
        let mut client = client.unwrap();
        assert_eq!(client.era(), Era::Modern);
        assert_eq!(client.protocol_version(), Some("2027-01-01"));
        assert_eq!(client.server_name(), Some("m"));
        let tools = runtime
            .block_on(client.request("tools/list", json!({"_meta": {"progressToken": 5}})))
            .unwrap();
        assert_eq!(tools["tools"], json!([]));
        let sent = sent.values();
        assert_eq!(sent.len(), 3, "no initialize, no initialized: {sent:?}");
        assert_eq!(
            sent[2]["params"]["_meta"],
            json!({
                "progressToken": 5,
                META_PROTOCOL_VERSION: "2027-01-01",
                META_CLIENT_INFO: {"name": "mcp-cassette", "version": env!("CARGO_PKG_VERSION")},
                META_CLIENT_CAPABILITIES: {}
            })
        );
    }

    #[test]
    fn modern_rejections_do_not_fall_back() {
        let (client, sent, _runtime) = connect(EraChoice::Modern, |request| {
            vec![error(
                request,
                MISSING_CAPABILITY,
                "needs sampling",
                json!({}),
            )]
        });
        let err = client.err().unwrap();
        assert_eq!(err.to_string(), "server/discover rejected: needs sampling");
        assert_eq!(sent.values().len(), 1);
    }

    #[test]
    fn auto_falls_back_to_modern_and_reports_both_failures() {
        let (client, _, _runtime) = connect(EraChoice::Auto, |request| {
            match request["method"].as_str() {
                Some("initialize") => vec![error(request, -32601, "no initialize", json!(null))],
                Some("server/discover") => vec![result(request, json!({"capabilities": {}}))],
                _ => Vec::new(),
            }
        });
        let client = client.unwrap();
        assert_eq!(client.era(), Era::Modern);
        assert_eq!(client.protocol_version(), Some("2026-07-28"));

        let (client, _, _runtime) = connect(EraChoice::Auto, |_| Vec::new());
        assert_eq!(
            client.err().unwrap().to_string(),
            "server answered neither era. legacy: initialize failed: timeout after 200ms waiting for \"initialize\"; modern: timeout after 200ms waiting for \"server/discover\""
        );
    }

    #[test]
    fn noise_unknown_ids_and_server_requests() {
        let (client, sent, runtime) = connect(EraChoice::Legacy, |request| match request["method"]
            .as_str()
        {
            Some("initialize") => {
                let mut lines = vec![
                    "booting...".to_owned(),
                    String::new(),
                    json!({"jsonrpc": "2.0", "id": 99, "result": {}}).to_string(),
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
                        .to_string(),
                    json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"}).to_string(),
                    json!({"jsonrpc": "2.0", "id": "s2", "method": "roots/list"}).to_string(),
                ];
                lines.extend(legacy_init(request));
                lines
            }
            Some("tools/list") => vec![
                json!({"jsonrpc": "2.0", "id": 12345, "result": {"tools": []}}).to_string(),
                "{\"broken".to_owned(),
            ],
            _ => Vec::new(),
        });
        let mut client = client.unwrap();
        let answers: Vec<Value> = sent
            .values()
            .into_iter()
            .filter(|m| m.get("method").is_none())
            .collect();
        assert_eq!(
            answers,
            [
                json!({"jsonrpc": "2.0", "id": "s1", "result": {}}),
                json!({"jsonrpc": "2.0", "id": "s2", "error": {"code": -32601, "message": "mcp-cassette does not serve roots/list"}}),
            ]
        );
        let err = runtime
            .block_on(client.list_all("tools/list", "tools"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "timeout after 200ms waiting for \"tools/list\"; meanwhile the server sent 1 answer(s) with an id this client never sent and 1 line(s) that are not JSON-RPC"
        );
    }

    #[test]
    fn input_required_errors_and_odd_listings() {
        let (client, _, runtime) = connect(EraChoice::Legacy, |request| {
            match request["method"].as_str() {
                Some("initialize") => legacy_init(request),
                Some("prompts/get") => vec![result(
                    request,
                    json!({"resultType": "input_required", "inputRequests": {"a": {}}}),
                )],
                Some("resources/list") => vec![error(request, -32603, "boom", json!(null))],
                Some("prompts/list") => {
                    vec![result(request, json!({"prompts": {"not": "a list"}}))]
                }
                Some("tools/list") => {
                    vec![result(request, json!({"tools": [], "nextCursor": "same"}))]
                }
                Some("resources/templates/list") => vec![result(request, json!([1]))],
                _ => Vec::new(),
            }
        });
        let mut client = client.unwrap();
        let err = runtime
            .block_on(client.request("prompts/get", json!({"name": "p"})))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"prompts/get\" needs client input (MRTR); mcp-cassette runs non-interactively"
        );
        assert!(matches!(
            err,
            ClientError::InputRequired {
                input_requests: Some(_),
                ..
            }
        ));
        let answer = runtime
            .block_on(client.exchange("prompts/get", json!({})))
            .unwrap();
        assert!(matches!(answer.outcome, Outcome::Result(_)));

        let err = runtime
            .block_on(client.list_all("resources/list", "resources"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "resources/list returned error -32603: boom"
        );
        let err = runtime
            .block_on(client.list_all("prompts/list", "prompts"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the answer to \"prompts/list\" has a \"prompts\" that is not an array"
        );
        let err = runtime
            .block_on(client.list_all("tools/list", "tools"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "tools/list returned the cursor \"same\" a second time; the listing would never end"
        );
        let err = runtime
            .block_on(client.list_all("resources/templates/list", "resourceTemplates"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the answer to \"resources/templates/list\" is not an object"
        );
    }

    #[test]
    fn forward_keeps_legacy_params_byte_for_byte_and_returns_the_answer_line() {
        let (client, sent, runtime) = connect(EraChoice::Legacy, |request| {
            match request["method"].as_str() {
                Some("initialize") => legacy_init(request),
                Some("tools/call") => vec![
                    // A legacy server may ping while it works: answered `{}`, not refused.
                    json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"}).to_string(),
                    format!(
                        r#"{{"jsonrpc":"2.0", "id":{},"result":{{"n":1.0}}}}"#,
                        request["id"]
                    ),
                ],
                _ => Vec::new(),
            }
        });
        let mut client = client.unwrap();
        let params = RawValue::from_string(r#"{ "name":"echo", "x": 1.50 }"#.to_owned()).unwrap();
        let answer = runtime
            .block_on(client.forward("tools/call", Some(&params)))
            .unwrap();
        assert_eq!(answer, r#"{"jsonrpc":"2.0", "id":2,"result":{"n":1.0}}"#);
        let texts = sent.texts();
        assert_eq!(
            texts[2],
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{ "name":"echo", "x": 1.50 }}"#
        );
        assert_eq!(
            sent.values()[3],
            json!({"jsonrpc": "2.0", "id": "p1", "result": {}})
        );

        let err = runtime
            .block_on(client.forward("never/answered", None))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "timeout after 200ms waiting for \"never/answered\""
        );
    }

    #[test]
    fn forward_in_the_modern_era_fills_in_only_the_meta_the_requester_left_out() {
        let (client, sent, runtime) = connect(EraChoice::Modern, |request| {
            vec![result(request, json!({"resultType": "complete"}))]
        });
        let mut client = client.unwrap();
        let params = RawValue::from_string(
            json!({"name": "t", "_meta": {META_CLIENT_INFO: {"name": "real-client"}, "progressToken": 1}})
                .to_string(),
        )
        .unwrap();
        runtime
            .block_on(client.forward("tools/call", Some(&params)))
            .unwrap();
        runtime
            .block_on(client.forward("tools/list", None))
            .unwrap();
        let sent = sent.values();
        assert_eq!(
            sent[1]["params"],
            json!({"name": "t", "_meta": {
                META_CLIENT_INFO: {"name": "real-client"},
                "progressToken": 1,
                META_PROTOCOL_VERSION: "2026-07-28",
                META_CLIENT_CAPABILITIES: {}
            }})
        );
        assert_eq!(
            sent[2]["params"]["_meta"][META_CLIENT_INFO]["name"],
            "mcp-cassette"
        );
    }

    #[test]
    fn a_url_nobody_listens_on_is_gone_at_once() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // A port that was free a moment ago: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let target = Target::from_flags(None, Some(&url), "auto").unwrap();
        let err = runtime
            .block_on(Client::connect(&target, ClientOptions::default()))
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("the server at {url} could not be reached (")),
            "{text}"
        );
        assert!(
            text.ends_with("while waiting for \"server/discover\""),
            "{text}"
        );
        assert!(err.is_fatal());
    }

    #[test]
    fn a_server_gone_reads_the_same_whatever_the_transport() {
        let gone = ClientError::ServerGone {
            method: "initialize".into(),
            gone: Gone {
                reason: "the server exited with status 7".into(),
                detail: " (nothing on its stderr)".into(),
            },
        };
        assert_eq!(
            gone.to_string(),
            "the server exited with status 7 while waiting for \"initialize\" (nothing on its stderr)"
        );
    }

    #[test]
    fn js_truthiness() {
        for falsy in [json!(null), json!(false), json!(0), json!(0.0), json!("")] {
            assert!(!js_truthy(&falsy), "{falsy}");
        }
        for truthy in [json!({}), json!([]), json!("x"), json!(1), json!(true)] {
            assert!(js_truthy(&truthy), "{truthy}");
        }
    }
}
