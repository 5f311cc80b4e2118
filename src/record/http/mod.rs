//! The HTTP recording front-end (`record --http <url>`): a reverse proxy on `--listen` that
//! forwards every request to the one upstream URL and every answer back, and hands the
//! [`Recorder`] copies of what a cassette keeps (docs/http.md, "Record proxy").
//!
//! - A POST body is read whole (bounded: past [`MAX_REQUEST_BODY`] the client gets 413 and
//!   nothing goes upstream) and captured as a `c2s` message before it is forwarded.
//! - A JSON answer is relayed as it arrives and captured as one `s2c` message, with
//!   `http.status` when the status is not the one the exchange implies.
//! - An SSE answer (to a POST, or a standalone GET stream) is relayed as it streams while an
//!   incremental parser hands each event to the recorder; it becomes one `chunks` entry when
//!   it ends, however it ends.
//! - DELETE, other methods, and answers that are neither JSON nor SSE are relayed, not captured.
//! - Header values never reach the recorder; the only header fact kept is that the server
//!   minted a session id.
//!
//! One current-thread runtime serves every connection; the recorder's own thread does the
//! capture work, reading each request included (exchanges are numbered here and paired there),
//! so forwarding never waits for parsing, redaction or the disk.

mod body;
mod deadline;
mod headers;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

use crate::protocol::Era;
use crate::record::recorder::{RecordError, Recorder, Recording, Tap};
use crate::transport::http::inbound::{self, BindError, Body, BodyError, Shutdown};
use crate::transport::http::outbound::{Outbound, OutboundError};

use self::body::{EventStream, Ignore, JsonAnswer, Relay, Stop};
use self::deadline::Deadlines;
use self::headers::{AnswerHead, BodyKind};

/// Largest request body forwarded; a larger one is answered 413 without reaching upstream.
pub(crate) const MAX_REQUEST_BODY: usize = 32 * 1024 * 1024;

/// How long the upstream gets to start answering (status and headers) before the client gets
/// 502. A streamed answer, once started, may stay open as long as the upstream keeps it.
pub(crate) const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);

/// Overrides [`UPSTREAM_TIMEOUT`], in milliseconds (docs/record.md).
pub(crate) const UPSTREAM_TIMEOUT_VAR: &str = "MCP_CASSETTE_UPSTREAM_TIMEOUT_MS";

/// What to proxy.
#[derive(Debug, Clone)]
pub(crate) struct Proxy {
    /// The upstream endpoint, already validated as an http(s) URL.
    pub upstream: Uri,
    /// `host:port` to listen on.
    pub listen: String,
}

/// How the session ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub entries: usize,
    pub secrets: usize,
    pub era: Option<Era>,
    /// The file at `-o` was kept: the server said nothing to replace it with.
    pub kept_previous: bool,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ProxyError {
    #[error("record: {0}")]
    Listen(#[from] BindError),
    #[error("record: {0}")]
    Upstream(#[from] OutboundError),
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// What every request handler shares.
struct State {
    tap: Tap,
    outbound: Outbound,
    upstream: Uri,
    deadlines: Deadlines,
    shutdown: Shutdown,
    /// Names streams for the recorder, in opening order.
    next_stream: AtomicU64,
    /// Numbers exchanges for the recorder, which ties each answer to its request.
    next_exchange: AtomicU64,
    /// The recorder was told about a session id already.
    sessioned: AtomicBool,
    /// The compressed-answer warning was printed already.
    warned_coding: AtomicBool,
}

/// Binds, proxies until SIGINT or SIGTERM, then finishes the cassette. Nothing is created at
/// `-o` unless the address could be bound.
pub(crate) fn run(proxy: Proxy, rec: Recording) -> Result<Outcome, ProxyError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ProxyError::Record(RecordError::Runtime(e)))?;
    let outbound = Outbound::for_url(&proxy.upstream)?;
    let deadlines = Deadlines::start(upstream_timeout()).map_err(RecordError::Runtime)?;
    let recorder = runtime.block_on(async {
        let listening = inbound::bind(&proxy.listen).await?;
        // Signals are caught from here on, before a client can be told where we listen.
        let shutdown = Shutdown::new();
        watch_signals(shutdown.clone()).map_err(RecordError::Runtime)?;
        let recorder = Recorder::start(rec)?;
        eprintln!(
            "mcp-cassette: recording {} → {}",
            listening.url(),
            proxy.upstream
        );
        if !listening.is_loopback() {
            eprintln!(
                "mcp-cassette record: WARNING listening on {}: reachable beyond this machine",
                listening.host
            );
        }
        let state = Arc::new(State {
            tap: recorder.tap(),
            outbound,
            upstream: proxy.upstream.clone(),
            deadlines,
            shutdown: shutdown.clone(),
            next_stream: AtomicU64::new(0),
            next_exchange: AtomicU64::new(0),
            sessioned: AtomicBool::new(false),
            warned_coding: AtomicBool::new(false),
        });
        inbound::serve(listening.listener, shutdown, move |request| {
            let state = Arc::clone(&state);
            async move { handle(&state, request).await }
        })
        .await;
        Ok::<_, ProxyError>(recorder)
    })?;
    // Dropping the runtime drops every answer still in flight; each tells the recorder its
    // stream ended, so streams still open are written with what they carried so far.
    drop(runtime);
    let summary = recorder.finish()?;
    Ok(Outcome {
        entries: summary.entries,
        secrets: summary.secrets,
        era: summary.era,
        kept_previous: summary.kept_previous,
    })
}

fn upstream_timeout() -> Duration {
    std::env::var(UPSTREAM_TIMEOUT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(UPSTREAM_TIMEOUT, Duration::from_millis)
}

/// SIGINT and SIGTERM start the shutdown.
fn watch_signals(shutdown: Shutdown) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        shutdown.trigger();
    });
    Ok(())
}

async fn handle(state: &State, request: Request<Incoming>) -> Response<Body> {
    if !inbound::origin_allowed(request.headers()) {
        return inbound::forbidden_origin();
    }
    let (parts, incoming) = request.into_parts();
    // A body announced over the limit is refused on its `content-length`, before a byte of it
    // is read (`read_body` sees the length hyper parsed).
    let body = match inbound::read_body(incoming, MAX_REQUEST_BODY).await {
        Ok(body) => body,
        Err(err @ BodyError::TooLarge { .. }) => {
            return plain(StatusCode::PAYLOAD_TOO_LARGE, format!("{err}\n"));
        }
        Err(err) => return plain(StatusCode::BAD_REQUEST, format!("{err}\n")),
    };
    let post = parts.method == Method::POST;
    let get = parts.method == Method::GET;
    let exchange = state.next_exchange.fetch_add(1, Ordering::Relaxed);
    if post && !body.is_empty() {
        // Queued before the request goes on: its answer can only come after it. The capture
        // thread reads it, for its entry and for what its answer implies; this thread only
        // numbers the exchange, so reading the request costs the forwarding path nothing.
        state.tap.request(exchange, &body[..]);
    }

    let mut upstream = Request::new(Full::new(body));
    *upstream.method_mut() = parts.method;
    *upstream.uri_mut() = state.upstream.clone();
    let mut upstream_headers = parts.headers;
    headers::upstream_request(&mut upstream_headers);
    *upstream.headers_mut() = upstream_headers;
    let sending = std::pin::pin!(state.outbound.send(upstream));
    let answer = match state.deadlines.within(sending).await {
        Some(Ok(answer)) => answer,
        Some(Err(err)) => return upstream_failed(&err.to_string()),
        None => {
            return upstream_failed(&format!(
                "no answer within {} ms",
                state.deadlines.timeout().as_millis()
            ));
        }
    };

    let (mut head, upstream_body) = answer.into_parts();
    let AnswerHead {
        kind,
        coded: coding,
        says_identity,
        sessioned,
    } = AnswerHead::read(&head.headers);
    if sessioned && !state.sessioned.swap(true, Ordering::AcqRel) {
        state.tap.sessioned();
    }
    if coding
        && (post || get)
        && kind != BodyKind::Other
        && !state.warned_coding.swap(true, Ordering::AcqRel)
    {
        eprintln!(
            "mcp-cassette: the upstream compressed an answer although asked not to; it was relayed as it came and not recorded"
        );
    }
    let status = head.status.as_u16();
    let stop = || -> Stop {
        let shutdown = state.shutdown.clone();
        Box::pin(async move { shutdown.wait().await })
    };
    let body = match (kind, coding) {
        (BodyKind::EventStream, false) if post || get => {
            let key = state.next_stream.fetch_add(1, Ordering::Relaxed);
            state.tap.stream_open(key, post.then_some(exchange), get);
            let observer = EventStream::new(state.tap.clone(), key);
            Relay::new(upstream_body, observer, Some(stop())).boxed()
        }
        (BodyKind::Json, false) if post => {
            let observer = JsonAnswer::new(state.tap.clone(), exchange, status);
            Relay::new(upstream_body, observer, None).boxed()
        }
        (BodyKind::EventStream, _) => Relay::new(upstream_body, Ignore, Some(stop())).boxed(),
        _ => Relay::new(upstream_body, Ignore, None).boxed(),
    };
    // Only the status and headers cross: the upstream's HTTP version and extensions belong to
    // its connection, not to the client's.
    headers::client_response(&mut head.headers, says_identity);
    let mut response = Response::new(body);
    *response.status_mut() = head.status;
    *response.headers_mut() = head.headers;
    response
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(inbound::full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The 502 a client gets when the upstream could not be reached or did not answer in time,
/// with a JSON-RPC error body its SDK can show.
fn upstream_failed(message: &str) -> Response<Body> {
    eprintln!("mcp-cassette: upstream request failed: {message}");
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32603, "message": message},
    });
    let mut response = Response::new(inbound::full(Bytes::from(body.to_string())));
    *response.status_mut() = StatusCode::BAD_GATEWAY;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
