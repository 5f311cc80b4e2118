//! The client's Streamable HTTP transport: one POST per message, the answer queued for
//! `receive` (docs/http.md, "Client").
//!
//! A POST carries `content-type: application/json` and `accept: application/json,
//! text/event-stream`, `mcp-protocol-version` once the client knows it, and in the legacy era the
//! `mcp-session-id` the server minted. In the modern era (2026-07-28) each request also carries
//! `Mcp-Method`, `Mcp-Name` for `tools/call`, `prompts/get` and `resources/read`, and the
//! `Mcp-Param-*` headers a tool's `x-mcp-header` declarations ask for; the declarations are
//! learnt from the `tools/list` answers that pass through here, and a tool whose declarations
//! are invalid is withheld from header resolution.
//!
//! An answer is `202` (nothing to read), one JSON object, or an event stream read by a task of
//! its own as it arrives, so a stream the server leaves open after its answer costs nothing.
//! Every message is bounded as a stdio line is (64 MiB), and what is read ahead of the client
//! is bounded in bytes too (16 MiB, one message always let through). A non-2xx status is
//! `HTTP <status> from server`, with the JSON-RPC error of the body when it has one. The
//! client's per-request timeout bounds every exchange; close sends `DELETE` with the session id
//! (two seconds at most) when a legacy server minted one.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use super::message::{self, Outcome, RpcError};
use super::{BoxFuture, Gone, Received, Transport, TransportError, TransportKind};
use crate::jsonrpc::Id;
use crate::protocol::Era;
use crate::protocol::header_param::{self, HeaderParam};
use crate::transport::http::SESSION_ID;
use crate::transport::http::outbound::{Outbound, OutboundError, parse_url};
use crate::transport::http::sse;
use crate::transport::stdio;

/// The longest message taken whole: the same bound as a stdio line.
pub(super) const MAX_MESSAGE: usize = stdio::MAX_LINE;
/// Bytes of messages read ahead of the client before the stream readers pause.
pub(super) const QUEUE_BYTES: usize = stdio::QUEUE_BYTES;
/// How much of an error answer's body is read to find a JSON-RPC error in it.
const ERROR_BODY: usize = 64 * 1024;
/// What a queued message costs beyond its bytes, so a flood of tiny events is bounded too.
const MESSAGE_OVERHEAD: usize = 64;
/// Messages queued ahead of the client, at most, however small.
const MESSAGE_QUEUE: usize = 4096;
/// How long the `DELETE` that ends a session may take.
const CLOSE_BOUND: Duration = Duration::from_secs(2);

const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// What the stream readers hand the client.
enum Item {
    /// One message, holding its share of the read-ahead budget until the client takes it.
    Message(Vec<u8>, Option<OwnedSemaphorePermit>),
    /// The stream broke (too large, reset): the pending request cannot be answered.
    Failed(TransportError),
    /// A stream ended; everything it carried was queued before this.
    End,
}

/// A Streamable HTTP session with one server endpoint.
pub struct HttpTransport {
    outbound: Outbound,
    uri: Uri,
    era: Era,
    protocol_version: Option<String>,
    /// Minted by the server (legacy era); echoed on legacy requests and ended by `DELETE`.
    session_id: Option<String>,
    /// Answers read whole (JSON bodies), ahead of anything the streams queued since.
    ready: VecDeque<Vec<u8>>,
    tx: mpsc::Sender<Item>,
    rx: mpsc::Receiver<Item>,
    budget: Arc<Semaphore>,
    streams: Vec<JoinHandle<()>>,
    open_streams: usize,
    /// The method of the last request sent, for messages about its answer.
    last_method: String,
    /// Ids of modern `tools/list` requests whose answers teach `x-mcp-header` declarations.
    listing_ids: HashSet<String>,
    /// Valid declarations by tool name (tools with none, or with invalid ones, are absent).
    header_params: HashMap<String, Vec<HeaderParam>>,
}

impl HttpTransport {
    /// A transport for `url` (an `http://` or `https://` endpoint). TLS roots are read here,
    /// so an unreadable extra CA file fails before anything is sent.
    pub fn new(url: &str) -> Result<HttpTransport, TransportError> {
        let uri = parse_url(url).map_err(|err| TransportError::Start(err.to_string()))?;
        let outbound =
            Outbound::for_url(&uri).map_err(|err| TransportError::Start(err.to_string()))?;
        let (tx, rx) = mpsc::channel(MESSAGE_QUEUE);
        Ok(HttpTransport {
            outbound,
            uri,
            era: Era::Legacy,
            protocol_version: None,
            session_id: None,
            ready: VecDeque::new(),
            tx,
            rx,
            budget: Arc::new(Semaphore::new(QUEUE_BYTES)),
            streams: Vec::new(),
            open_streams: 0,
            last_method: String::new(),
            listing_ids: HashSet::new(),
            header_params: HashMap::new(),
        })
    }

    /// The POST carrying `message`, with the headers its era and method call for, and whether
    /// it is a request (something the server answers).
    fn request_for(&mut self, message: &str) -> (Request<Full<Bytes>>, bool) {
        let parsed: Option<Value> = serde_json::from_str(message).ok();
        let method = parsed
            .as_ref()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str);
        let id = parsed
            .as_ref()
            .and_then(|m| m.get("id"))
            .and_then(Id::from_value);
        let is_request = method.is_some() && id.is_some();
        if let (Some(method), true) = (method, is_request) {
            method.clone_into(&mut self.last_method);
        }
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH);
        if let Some(version) = self.protocol_version.as_deref().and_then(header_value) {
            request = request.header(PROTOCOL_VERSION, version);
        }
        match self.era {
            Era::Legacy => {
                if let Some(session) = self.session_id.as_deref().and_then(header_value) {
                    request = request.header(&SESSION_ID, session);
                }
            }
            Era::Modern => {
                if let (Some(method), Some(parsed)) = (method, &parsed) {
                    if let (Some(id), "tools/list") = (&id, method) {
                        self.listing_ids.insert(id.key());
                    }
                    let params = parsed.get("params").unwrap_or(&Value::Null);
                    for (name, value) in self.modern_headers(method, params) {
                        if let (Ok(name), Ok(value)) = (
                            HeaderName::from_bytes(name.as_bytes()),
                            HeaderValue::from_str(&value),
                        ) {
                            request = request.header(name, value);
                        }
                    }
                }
            }
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(message.as_bytes())))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())));
        (request, is_request)
    }

    /// `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` for one modern request (docs/http.md,
    /// "Client"). A value that cannot be a header (a method name with control characters) is
    /// left out by the caller.
    fn modern_headers(&self, method: &str, params: &Value) -> Vec<(String, String)> {
        let mut headers = vec![(MCP_METHOD.to_owned(), method.to_owned())];
        let name_key = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" => Some("uri"),
            _ => None,
        };
        if let Some(name) = name_key
            .and_then(|key| params.get(key))
            .and_then(Value::as_str)
        {
            headers.push((MCP_NAME.to_owned(), header_param::encode_value(name)));
        }
        if method == "tools/call" {
            let declared = params
                .get("name")
                .and_then(Value::as_str)
                .and_then(|tool| self.header_params.get(tool));
            if let Some(declared) = declared {
                let arguments = params.get("arguments").unwrap_or(&Value::Null);
                headers.extend(header_param::param_headers(declared, arguments));
            }
        }
        headers
    }

    /// Learns the `x-mcp-header` declarations of a `tools/list` page we asked for.
    fn learn_declarations(&mut self, message: &[u8]) {
        let message::Incoming::Response(reply) = message::classify(message) else {
            return;
        };
        if !self.listing_ids.remove(&reply.key()) {
            return;
        }
        let Outcome::Result(raw) = reply.to_response().outcome else {
            return;
        };
        let Ok(page) = serde_json::from_str::<Value>(raw.get()) else {
            return;
        };
        let Some(tools) = page.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            match header_param::declarations(schema) {
                Ok(params) if !params.is_empty() => {
                    self.header_params.insert(name.to_owned(), params);
                }
                // No declarations, or invalid ones: the tool is withheld from header
                // resolution, so a bad declaration never breaks another tool.
                Ok(_) | Err(_) => {
                    self.header_params.remove(name);
                }
            }
        }
    }

    async fn post(&mut self, message: &str) -> Result<(), TransportError> {
        let (request, is_request) = self.request_for(message);
        let answer = self
            .outbound
            .send(request)
            .await
            .map_err(|err| self.request_failed(&err))?;
        if let Some(session) = answer
            .headers()
            .get(&SESSION_ID)
            .and_then(|v| v.to_str().ok())
        {
            if !session.is_empty() {
                self.session_id = Some(session.to_owned());
            }
        }
        let status = answer.status();
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        if !status.is_success() {
            let body = read_limited(answer.into_body(), ERROR_BODY).await;
            return Err(TransportError::Status {
                status: status.as_u16(),
                error: body.ok().and_then(|body| error_of(&body)).map(Box::new),
            });
        }
        let kind = media_type(answer.headers().get(CONTENT_TYPE));
        let declared_length = answer
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if kind == "text/event-stream" {
            let tx = self.tx.clone();
            let budget = Arc::clone(&self.budget);
            self.open_streams += 1;
            self.streams
                .push(tokio::spawn(pump(answer.into_body(), tx, budget)));
            return Ok(());
        }
        if !is_request {
            // A notification or an answer of ours expects nothing back; whatever a lenient
            // server put in a 2xx body ("ok", an empty object) is not a message to wait for.
            return Ok(());
        }
        if declared_length.is_some_and(|n| n > MAX_MESSAGE as u64) {
            return Err(self.too_large());
        }
        let body = match read_limited(answer.into_body(), MAX_MESSAGE).await {
            Ok(body) => body,
            Err(BodyFailure::TooLarge) => return Err(self.too_large()),
            Err(BodyFailure::Read(cause)) => {
                return Err(TransportError::Failed {
                    message: format!(
                        "the server's answer to \"{}\" broke off: {cause}",
                        self.last_method
                    ),
                    fatal: false,
                });
            }
        };
        if body.trim_ascii().is_empty() {
            return Ok(());
        }
        if kind != "application/json" && !kind.ends_with("+json") {
            let shown = if kind.is_empty() {
                "no content-type".to_owned()
            } else {
                kind
            };
            return Err(TransportError::Failed {
                message: format!(
                    "the server answered \"{}\" with {shown}, not JSON or an event stream",
                    self.last_method
                ),
                fatal: false,
            });
        }
        self.ready.push_back(body);
        Ok(())
    }

    fn too_large(&self) -> TransportError {
        TransportError::Failed {
            message: format!(
                "the server's answer to \"{}\" exceeds {} MiB, more than this client reads",
                self.last_method,
                MAX_MESSAGE / (1024 * 1024)
            ),
            fatal: false,
        }
    }

    /// A request that got no answer head. Not reaching the server at all (refused, DNS, TLS)
    /// means it is gone; anything later (a reset mid-request) may not recur.
    fn request_failed(&self, err: &OutboundError) -> TransportError {
        let text = err.to_string();
        // hyper-util says "client error (Connect)" for every failure before a connection
        // exists; the cause after it is what the user needs.
        match text.strip_prefix("client error (Connect)") {
            Some(cause) => {
                let cause = cause.trim_start_matches(": ");
                // Past TCP and DNS, an https connection can only fail in its handshake; rustls
                // names the cause but not the stage.
                let tls = self.uri.scheme_str() == Some("https")
                    && !cause.starts_with("tcp connect error")
                    && !cause.starts_with("dns error");
                TransportError::Gone(Gone {
                    reason: format!(
                        "the server at {} could not be reached ({}{cause})",
                        self.uri,
                        if tls { "TLS handshake failed: " } else { "" }
                    ),
                    detail: String::new(),
                })
            }
            None => TransportError::Failed {
                message: format!(
                    "the request \"{}\" to {} failed: {}",
                    self.last_method,
                    self.uri,
                    text.strip_prefix("client error (SendRequest): ")
                        .unwrap_or(&text)
                ),
                fatal: false,
            },
        }
    }

    async fn next(&mut self) -> Result<Received, TransportError> {
        loop {
            if let Some(body) = self.ready.pop_front() {
                self.notice(&body);
                return Ok(Received::Message(body));
            }
            if self.open_streams == 0 {
                return Err(TransportError::Failed {
                    message: format!(
                        "the server ended its answer to \"{}\" without a JSON-RPC response",
                        self.last_method
                    ),
                    fatal: false,
                });
            }
            match self.rx.recv().await {
                Some(Item::Message(bytes, _permit)) => {
                    self.notice(&bytes);
                    return Ok(Received::Message(bytes));
                }
                Some(Item::Failed(err)) => return Err(err),
                Some(Item::End) | None => self.open_streams = self.open_streams.saturating_sub(1),
            }
        }
    }

    /// Looks at a message on its way to the client: `tools/list` pages teach declarations.
    fn notice(&mut self, message: &[u8]) {
        if !self.listing_ids.is_empty() {
            self.learn_declarations(message);
        }
    }

    fn stop_streams(&mut self) {
        for stream in self.streams.drain(..) {
            stream.abort();
        }
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.stop_streams();
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn send<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(self.post(message))
    }

    fn receive(&mut self) -> BoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(self.next())
    }

    fn set_era(&mut self, era: Era) {
        if era != self.era {
            // A version chosen while probing the other era is not this era's.
            self.protocol_version = None;
        }
        self.era = era;
    }

    fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_owned());
    }

    fn close(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        self.stop_streams();
        // Sessions are a legacy-era thing; a modern server has none to end.
        let session = self.session_id.take().filter(|_| self.era == Era::Legacy);
        let version = self.protocol_version.clone();
        let outbound = self.outbound.clone();
        let uri = self.uri.clone();
        Box::pin(async move {
            let Some(session) = session.as_deref().and_then(header_value) else {
                return;
            };
            let mut request = Request::builder()
                .method(Method::DELETE)
                .uri(uri)
                .header(&SESSION_ID, session);
            if let Some(version) = version.as_deref().and_then(header_value) {
                request = request.header(PROTOCOL_VERSION, version);
            }
            let Ok(request) = request.body(Full::new(Bytes::new())) else {
                return;
            };
            // The server may refuse (405) or be gone; either way the session is over for us.
            let _ = tokio::time::timeout(CLOSE_BOUND, outbound.send(request)).await;
        })
    }
}

fn header_value(text: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(text).ok()
}

/// The media type of a `content-type` value, lowercased, without parameters.
fn media_type(value: Option<&HeaderValue>) -> String {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

enum BodyFailure {
    TooLarge,
    Read(String),
}

/// A whole body, refused past `limit` bytes without reading further.
async fn read_limited(mut body: Incoming, limit: usize) -> Result<Vec<u8>, BodyFailure> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|err| BodyFailure::Read(err.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(BodyFailure::TooLarge);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// The JSON-RPC error an error answer's body carries, whatever its id.
fn error_of(body: &[u8]) -> Option<RpcError> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?.as_object()?;
    Some(RpcError {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: match error.get("message") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        data: error.get("data").cloned(),
    })
}

/// Reads one event stream to its end, queuing each `message` event's data for the client.
async fn pump(mut body: Incoming, tx: mpsc::Sender<Item>, budget: Arc<Semaphore>) {
    let mut parser = sse::Parser::new(MAX_MESSAGE);
    let mut events = Vec::new();
    let failure = loop {
        let frame = match body.frame().await {
            None => break None,
            Some(Err(err)) => break Some(format!("the server's event stream broke off: {err}")),
            Some(Ok(frame)) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if let Err(err) = parser.feed(&data, &mut events) {
            break Some(format!(
                "the server's event stream has {}",
                err.to_string().trim_start_matches("an ")
            ));
        }
        for event in events.drain(..) {
            // Other event kinds are not MCP messages; an empty `data` primes resumption.
            if event.kind != "message" || event.data.is_empty() {
                continue;
            }
            let bytes = event.data.into_bytes();
            let cost = (bytes.len() + MESSAGE_OVERHEAD).min(QUEUE_BYTES);
            // The cost is at most QUEUE_BYTES, so it fits; the semaphore is never closed.
            let permit = match u32::try_from(cost) {
                Ok(cost) => Arc::clone(&budget).acquire_many_owned(cost).await.ok(),
                Err(_) => None,
            };
            if tx.send(Item::Message(bytes, permit)).await.is_err() {
                return;
            }
        }
    };
    if let Some(message) = failure {
        let _ = tx
            .send(Item::Failed(TransportError::Failed {
                message,
                fatal: false,
            }))
            .await;
    }
    let _ = tx.send(Item::End).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transport() -> HttpTransport {
        HttpTransport::new("http://127.0.0.1:1/mcp").unwrap()
    }

    fn header<'a>(request: &'a Request<Full<Bytes>>, name: &str) -> Option<&'a str> {
        request.headers().get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn legacy_requests_carry_the_session_and_no_modern_headers() {
        let mut http = transport();
        http.set_era(Era::Legacy);
        let (init, _) = http.request_for(r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#);
        assert_eq!(header(&init, "mcp-protocol-version"), None);
        assert_eq!(header(&init, "content-type"), Some("application/json"));
        assert_eq!(header(&init, "accept"), Some(ACCEPT_BOTH));
        http.session_id = Some("s-1".into());
        http.set_protocol_version("2025-06-18");
        let (call, _) = http
            .request_for(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#);
        let (_, is_request) =
            http.request_for(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(!is_request);
        assert_eq!(header(&call, "mcp-session-id"), Some("s-1"));
        assert_eq!(header(&call, "mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(header(&call, "mcp-method"), None);
        assert_eq!(header(&call, "mcp-name"), None);
    }

    #[test]
    fn modern_requests_carry_method_name_and_declared_parameters() {
        let mut http = transport();
        http.session_id = Some("minted-anyway".into());
        http.set_era(Era::Modern);
        http.set_protocol_version("2026-07-28");
        let (list, is_request) =
            http.request_for(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
        assert!(is_request);
        assert_eq!(header(&list, "mcp-method"), Some("tools/list"));
        assert_eq!(header(&list, "mcp-session-id"), None);
        let region = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "zone": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Zone"}}}
        }});
        let broken = json!({"type": "object", "properties": {
            "n": {"type": "number", "x-mcp-header": "N"}
        }});
        let answer = json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": [
            {"name": "weather", "inputSchema": region},
            {"name": "broken", "inputSchema": broken}
        ]}});
        http.learn_declarations(answer.to_string().as_bytes());
        let (call, _) = http.request_for(
            &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
                "name": "weather", "arguments": {"region": " 日本", "zone": {"id": 42}}
            }})
            .to_string(),
        );
        assert_eq!(header(&call, "mcp-method"), Some("tools/call"));
        assert_eq!(header(&call, "mcp-name"), Some("weather"));
        assert_eq!(
            header(&call, "mcp-param-region"),
            Some("=?base64?IOaXpeacrA==?=")
        );
        assert_eq!(header(&call, "mcp-param-zone"), Some("42"));
        assert_eq!(header(&call, "mcp-protocol-version"), Some("2026-07-28"));
        // An invalid declaration withholds the tool from header resolution, nothing more.
        let (call, _) = http.request_for(
            &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
                "name": "broken", "arguments": {"n": 1.5}
            }})
            .to_string(),
        );
        assert_eq!(header(&call, "mcp-name"), Some("broken"));
        assert_eq!(header(&call, "mcp-param-n"), None);
        let (read, _) = http.request_for(
            &json!({"jsonrpc": "2.0", "id": 10, "method": "resources/read", "params": {"uri": "note://a b"}})
                .to_string(),
        );
        assert_eq!(header(&read, "mcp-name"), Some("note://a b"));
        // Only answers to our own listings teach: a stray id changes nothing.
        let stray = json!({"jsonrpc": "2.0", "id": 99, "result": {"tools": [
            {"name": "weather", "inputSchema": {}}
        ]}});
        http.learn_declarations(stray.to_string().as_bytes());
        assert!(http.header_params.contains_key("weather"));
    }

    #[test]
    fn switching_era_forgets_the_other_eras_version() {
        let mut http = transport();
        http.set_era(Era::Modern);
        http.set_protocol_version("2026-07-28");
        http.set_era(Era::Legacy);
        let (init, _) = http.request_for(r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#);
        assert_eq!(header(&init, "mcp-protocol-version"), None);
    }

    #[test]
    fn error_bodies_and_media_types() {
        let error = error_of(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"no","data":{"supported":["x"]}}}"#,
        )
        .unwrap();
        assert_eq!(error.code, -32022);
        assert_eq!(error.data, Some(json!({"supported": ["x"]})));
        assert!(error_of(b"<html>").is_none());
        let status = TransportError::Status {
            status: 400,
            error: Some(Box::new(error)),
        };
        assert_eq!(status.to_string(), "HTTP 400 from server (-32022: no)");
        assert!(!status.is_fatal());
        let value = HeaderValue::from_static("Text/Event-Stream; charset=utf-8");
        assert_eq!(media_type(Some(&value)), "text/event-stream");
        assert_eq!(media_type(None), "");
    }
}
