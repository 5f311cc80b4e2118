//! One HTTP request in, one response out: the POST/GET/DELETE matrix (docs/http.md, "Replay
//! server").
//!
//! - a foreign `Origin` → 403, before anything else;
//! - POST: a body over the limit → 413; a body that is not one JSON-RPC message → 400 with a
//!   JSON-RPC parse error; a notification or a client's response → 202, empty (a response that
//!   answers a request from the server sets its waiting exchange going, see [`super::asks`]); a
//!   request → 200 (or the recorded status) with the re-keyed answer as JSON, or as an event
//!   stream when it was recorded as one, or as a held-open stream for a subscription; a miss →
//!   200 with the miss error (the transport worked);
//! - GET: the standalone stream of a legacy recording that has one, held open; otherwise 405;
//! - DELETE: a legacy recording whose server minted session ids → 200, the session ends;
//!   otherwise 405;
//! - any other method → 405, `Allow` naming what this recording serves.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;

use super::Replay;
use super::asks;
use super::control::{self, Control, Handling, MissRecord};
use super::headers::{self, session_warning};
use super::sessions::ClientSession;
use super::streams::{self, event};
use crate::jsonrpc::FrameKind;
use crate::protocol::LISTEN_METHOD;
use crate::replay::LISTEN_NOT_FORWARDED;
use crate::replay::OnMiss;
use crate::replay::fault::{self, Replace};
use crate::replay::index::{Answer, Pair};
use crate::replay::miss::MissReason;
use crate::replay::session::{Exchange, Outcome};
use crate::replay::wire::{Message, Outbound, Request as WireRequest};
use crate::transport::http::SESSION_ID;
use crate::transport::http::inbound::{self, Body, BodyError};

/// The 400 body for a POST that is not one JSON-RPC message.
pub const NOT_A_FRAME: &str = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"replay: body is not a JSON-RPC frame\"}}";

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

/// Answers one request.
pub async fn handle(replay: Arc<Replay>, request: Request<Incoming>) -> Response<Body> {
    if !inbound::origin_allowed(request.headers()) {
        return inbound::forbidden_origin();
    }
    if let Some(control) = &replay.control {
        if Control::routes(&request) {
            return control.handle(&request, replay.usage());
        }
    }
    match *request.method() {
        Method::POST => post(replay, request).await,
        Method::GET if replay.get_served => get(&replay, &request),
        Method::DELETE if replay.sessioned => delete(&replay, &request),
        _ => not_allowed(&replay),
    }
}

fn not_allowed(replay: &Replay) -> Response<Body> {
    let mut response = Response::new(inbound::empty());
    *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    response
        .headers_mut()
        .insert(header::ALLOW, replay.allow.clone());
    response
}

pub(super) fn json(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(inbound::full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, JSON);
    response
}

pub(super) fn event_stream(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, EVENT_STREAM);
    headers.insert(header::CACHE_CONTROL, NO_CACHE);
    response
}

/// 202 Accepted, empty: a notification or a client's response was taken.
pub(super) fn accepted() -> Response<Body> {
    let mut response = Response::new(inbound::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

fn session_header(request: &Request<Incoming>) -> Option<&str> {
    request
        .headers()
        .get(&SESSION_ID)
        .and_then(|v| v.to_str().ok())
}

async fn post(replay: Arc<Replay>, request: Request<Incoming>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let bytes = match inbound::read_body(body, replay.body_limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge { limit }) => {
            return json(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":-32600,\"message\":\"replay: the request body exceeds {limit} bytes\"}}}}"
                ),
            );
        }
        // The client went away mid-body: nobody reads what we answer.
        Err(BodyError::Read(_)) => return json(StatusCode::BAD_REQUEST, NOT_A_FRAME),
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return json(StatusCode::BAD_REQUEST, NOT_A_FRAME);
    };
    // What cannot be one JSON-RPC object is refused before it picks (or starts) a session.
    if !text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
    {
        return json(StatusCode::BAD_REQUEST, NOT_A_FRAME);
    }
    headers::check(&replay.notes, &replay.recorded, &parts.headers, text);
    if let Some(response) = inject(&replay, text).await {
        return response;
    }
    let handshake = is_handshake(text, replay.handshake);
    let named = parts.headers.get(&SESSION_ID).and_then(|v| v.to_str().ok());
    let (client, mismatch) = replay.sessions.for_request(handshake, named);
    if let Some(mismatch) = &mismatch {
        if !handshake {
            session_warning(&replay.notes, mismatch, client.label);
        }
    }
    let answered = answer(&replay, &client, text);
    let response = match answered {
        Answered::Now(response) => response,
        Answered::Forward(message) => forward(&replay, message, text.to_owned()).await,
        // The task sending the exchange dropped its end only if the runtime is going away.
        Answered::Later(response) => response.await.unwrap_or_else(|_| {
            json(
                StatusCode::SERVICE_UNAVAILABLE,
                "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"mcp-cassette replay: the replay stopped before the answer\"}}",
            )
        }),
    };
    match (&client.id, handshake) {
        (Some(id), true) if response.status() == StatusCode::OK => {
            let mut response = response;
            if let Ok(value) = HeaderValue::from_str(id) {
                response.headers_mut().insert(SESSION_ID, value);
            }
            response
        }
        _ => response,
    }
}

/// Carries out the `--fault`s that hit the request in `text` (docs/replay.md, "Fault
/// injection"): a pause, then an error or an HTTP status answered in place of the recording
/// (which stays unconsumed, so a retry is answered from the cassette), or the replay going
/// away: it stops listening and this request is never answered, its connection closed when the
/// replay ends. `None` when the recording answers as usual.
async fn inject(replay: &Replay, text: &str) -> Option<Response<Body>> {
    let faults = replay.faults.as_ref()?;
    let (id, method, tool) = fault::peek(text)?;
    let decision = faults
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .decide(&method, tool.as_deref());
    if decision.drop {
        replay.shutdown.trigger();
        std::future::pending::<()>().await;
    }
    if !decision.pause.is_zero() {
        tokio::time::sleep(decision.pause).await;
    }
    Some(match decision.replace? {
        Replace::Error(code) => json(StatusCode::OK, fault::error_frame(&id, code)),
        Replace::HttpStatus(status) => json(
            StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            fault::status_body(&id, status),
        ),
    })
}

/// Whether a body is the request that starts a session (`method` is `initialize` or
/// `server/discover`, whichever this recording's era uses). Looked for in the text first: the
/// whole body is parsed only when the name appears in it.
fn is_handshake(text: &str, method: &str) -> bool {
    if !text.contains(method) {
        return false;
    }
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Peek<'_>>(text)
        .is_ok_and(|p| p.id.is_some() && p.method.as_deref() == Some(method))
}

enum Answered {
    Now(Response<Body>),
    /// A miss to forward to the live server (passthrough).
    Forward(Box<Message>),
    /// An exchange holding requests from the server, sent by a task of its own: the response
    /// comes when it can go out.
    Later(tokio::sync::oneshot::Receiver<Response<Body>>),
}

/// Answers `text` from the client's session. The session's lock is held only here, while the
/// synchronous engine runs.
fn answer(replay: &Arc<Replay>, client: &Arc<ClientSession>, text: &str) -> Answered {
    let mut state = client.lock();
    if let Some(accepted) = asks::answer(replay, client.label, &mut state, text) {
        return Answered::Now(accepted);
    }
    let handled = match state.session.handle_text(text) {
        Ok(handled) => handled,
        Err(_) => return Answered::Now(json(StatusCode::BAD_REQUEST, NOT_A_FRAME)),
    };
    let exchange = handled.exchange;
    let message = handled.message;
    let request = match message.as_deref() {
        Some(Message::Request(r)) => Some(r),
        _ => None,
    };
    let label = client.label;
    let mut forward = false;
    match (&exchange.outcome, request) {
        (Outcome::Missed { reason, diagnosis }, Some(request)) => {
            let shown = state.session.redactor().redact_text(&request.method).0;
            replay.notes.note(&format!(
                "session {label}: fingerprint miss for \"{shown}\": {diagnosis}"
            ));
            if replay.on_miss == OnMiss::Passthrough {
                forward = request.method != LISTEN_METHOD && replay.passthrough.is_some();
                if !forward {
                    replay.notes.note(LISTEN_NOT_FORWARDED);
                }
            }
            let handling = if forward {
                Handling::Forwarded
            } else {
                Handling::Error
            };
            log_miss(replay, client, request, handling, reason, diagnosis);
        }
        (Outcome::Borrowed { reason, diagnosis }, Some(request)) => {
            let shown = state.session.redactor().redact_text(&request.method).0;
            replay.notes.note(&format!(
                "session {label}: answered \"{shown}\" with another recording of the same method (--on-miss warn): {diagnosis}"
            ));
            log_miss(
                replay,
                client,
                request,
                Handling::Borrowed,
                reason,
                diagnosis,
            );
        }
        (Outcome::Rejected { detail }, _) => {
            replay.notes.note(&format!(
                "session {label}: a request was answered with error -32600: {detail}"
            ));
        }
        _ => {}
    }
    if forward {
        if let Some(message) = message {
            // The forward waits on the live server: the session's lock is not held meanwhile.
            drop(state);
            return Answered::Forward(message);
        }
    }
    let get_served = replay.get_served;
    if let Some(Message::Notification { method, params }) = message.as_deref() {
        if method == "notifications/cancelled" {
            if let Some(id) = params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(crate::jsonrpc::Id::from_value)
            {
                state.streams.close_listen(&id.key());
            }
        }
    }
    if exchange.outcome == Outcome::Subscribed {
        let key = match request {
            Some(r) => r.id.key(),
            None => String::new(),
        };
        let body = state.streams.open_listen(key, exchange.answer.as_ref());
        if !exchange.asks.is_empty() {
            drop(state);
            asks::spawn(Arc::clone(replay), Arc::clone(client), exchange, None, None);
            return Answered::Now(event_stream(body));
        }
        state.streams.push(&exchange.before, get_served);
        state.streams.push(&exchange.after, get_served);
        return Answered::Now(event_stream(body));
    }
    if !exchange.asks.is_empty() {
        drop(state);
        let spacing = spacing(replay, &exchange);
        let (respond, response) = tokio::sync::oneshot::channel();
        asks::spawn(
            Arc::clone(replay),
            Arc::clone(client),
            exchange,
            spacing,
            Some(respond),
        );
        return Answered::Later(response);
    }
    state.streams.push(&exchange.before, get_served);
    let response = match &exchange.answer {
        None if request.is_none() => accepted(),
        // A request answered by nothing (a stream recorded empty): an empty stream.
        None => event_stream(inbound::empty()),
        Some(answer) => respond(replay, &exchange, answer),
    };
    state.streams.push(&exchange.after, get_served);
    Answered::Now(response)
}

/// Logs a miss on the control channel, when there is one. Runs before the answer's response is
/// built: a drain sent after the client saw the answer includes it (docs/adapters.md).
fn log_miss(
    replay: &Replay,
    client: &ClientSession,
    request: &WireRequest,
    handling: Handling,
    reason: &MissReason,
    diagnosis: &str,
) {
    let Some(control) = &replay.control else {
        return;
    };
    let tool = control::tool_of(request);
    control.record(MissRecord {
        session: client.label,
        session_id: client.id.as_deref().map(str::to_owned),
        id: request.id.clone(),
        method: request.method.clone(),
        tool,
        handling,
        reason: reason.clone(),
        diagnosis: diagnosis.to_owned(),
    });
}

/// The response carrying `answer`: JSON, or the recorded stream it ended.
fn respond(replay: &Replay, exchange: &Exchange, answer: &Outbound) -> Response<Body> {
    let pair = exchange.pair.map(|p| &replay.index.pairs[p]);
    match pair {
        Some(pair) if matches!(pair.answer, Answer::Stream(_)) => match spacing(replay, exchange) {
            Some(gaps) => {
                let chunks = exchange
                    .streamed
                    .iter()
                    .chain(std::iter::once(answer))
                    .zip(gaps)
                    .map(|(frame, gap)| (gap, event(frame)))
                    .collect();
                event_stream(streams::paced(chunks, replay.shutdown.clone()))
            }
            None => {
                let body = streams::events(exchange.streamed.iter().chain(std::iter::once(answer)));
                event_stream(inbound::full(body))
            }
        },
        _ => {
            let status = pair
                .and_then(Pair::status)
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::OK);
            let body = match answer.text() {
                std::borrow::Cow::Borrowed(text) => Bytes::copy_from_slice(text.as_bytes()),
                std::borrow::Cow::Owned(text) => Bytes::from(text),
            };
            json(status, body)
        }
    }
}

/// The pause before each event of a streamed answer (its streamed frames, then the answer) when
/// the events are spaced out: by their recorded gaps under `--timing recorded`, by a pause before
/// every event under `--fault slow-sse` (on top of any recorded pacing). `None` when they go out
/// back to back, or the answer is not a stream.
fn spacing(replay: &Replay, exchange: &Exchange) -> Option<Vec<Duration>> {
    let pair = &replay.index.pairs[exchange.pair?];
    let Answer::Stream(frames) = &pair.answer else {
        return None;
    };
    let slow = replay
        .faults
        .as_ref()
        .and_then(|f| f.lock().unwrap_or_else(|p| p.into_inner()).sse_gap())
        .unwrap_or_default();
    if !replay.paced && slow.is_zero() {
        return None;
    }
    // The times of the frames the stream carries: requests from the server are skipped, as the
    // session put them apart (they go out between these frames, without a pause of their own).
    let times: Vec<u64> = frames
        .iter()
        .zip(pair.chunk_t())
        .filter(|(f, _)| f.kind() != FrameKind::Request)
        .map(|(_, &t)| t)
        .collect();
    let mut previous = times.first().copied().unwrap_or(0);
    let fill = previous;
    let gaps = times
        .into_iter()
        .chain(std::iter::repeat(fill))
        .take(exchange.streamed.len() + 1)
        .map(|t| {
            let recorded = if replay.paced {
                Duration::from_millis(t.saturating_sub(previous))
            } else {
                Duration::ZERO
            };
            previous = t.max(previous);
            recorded + slow
        })
        .collect();
    Some(gaps)
}

/// A miss forwarded to the live server (passthrough). The forward blocks, so it runs on a
/// blocking thread; the live client is shared by every session, as one live server is.
async fn forward(replay: &Arc<Replay>, message: Box<Message>, text: String) -> Response<Body> {
    let Some(passthrough) = replay.passthrough.clone() else {
        return json(StatusCode::INTERNAL_SERVER_ERROR, NOT_A_FRAME);
    };
    let Message::Request(request) = *message else {
        return json(StatusCode::BAD_REQUEST, NOT_A_FRAME);
    };
    let answered = tokio::task::spawn_blocking(move || {
        let mut live = passthrough.lock().unwrap_or_else(|p| p.into_inner());
        live.forward(&request, &text).text().into_owned()
    })
    .await;
    match answered {
        Ok(body) => json(StatusCode::OK, body),
        Err(_) => json(
            StatusCode::INTERNAL_SERVER_ERROR,
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"mcp-cassette replay: passthrough to live server failed\"}}",
        ),
    }
}

fn get(replay: &Replay, request: &Request<Incoming>) -> Response<Body> {
    let (client, mismatch) = replay.sessions.named(session_header(request));
    let client = match client {
        Some(client) => client,
        // No session yet: the GET starts the current pass (a client may listen first).
        None => replay.sessions.for_request(false, None).0,
    };
    if let Some(mismatch) = &mismatch {
        session_warning(&replay.notes, mismatch, client.label);
    }
    let body = client.lock().streams.open_get();
    event_stream(body)
}

fn delete(replay: &Replay, request: &Request<Incoming>) -> Response<Body> {
    match session_header(request) {
        Some(id) if replay.sessions.delete(id) => {}
        Some(id) => replay.notes.header(&format!(
            "DELETE names mcp-session-id \"{id}\", which is not a live session of this replay"
        )),
        None => replay
            .notes
            .header("DELETE carries no mcp-session-id header: no session ended"),
    }
    Response::new(inbound::empty())
}
