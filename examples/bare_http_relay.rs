//! The floor for any HTTP recording proxy: a hyper reverse proxy on the same plumbing as
//! `record --http` (the shared listener and pooled outbound client, one current-thread runtime)
//! that forwards requests and relays answers frame by frame, capturing nothing.
//! `scripts/bench-record-http.sh` runs it beside `record --http`, so the recorder's own cost is
//! told apart from what any proxy on the path costs (one more hop per request).
//!
//! ```text
//! bare_http_relay <listen host:port> <upstream url> [--idle-thread]
//! ```
//!
//! `--idle-thread` starts one more thread that only sleeps: a control for what a second thread
//! costs the relaying one by its mere existence (glibc takes its locked allocator paths once a
//! process has two threads), since any recorder has at least one for its capture.

use std::convert::Infallible;
use std::pin::Pin;
use std::process::ExitCode;
use std::task::{Context, Poll};

use bytes::Bytes;

use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming, SizeHint};
use mcp_cassette::transport::http::inbound::{self, Body, Shutdown};
use mcp_cassette::transport::http::outbound::{Outbound, parse_url};
use mcp_cassette::transport::http::{is_hop_by_hop, remove_hop_by_hop};

async fn relay(out: &Outbound, upstream: &http::Uri, request: Request<Incoming>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let Ok(body) = inbound::read_body(body, 32 * 1024 * 1024).await else {
        let mut r = Response::new(inbound::empty());
        *r.status_mut() = http::StatusCode::PAYLOAD_TOO_LARGE;
        return r;
    };
    let mut forward = Request::new(Full::new(body));
    *forward.method_mut() = parts.method;
    *forward.uri_mut() = upstream.clone();
    for (name, value) in &parts.headers {
        if !is_hop_by_hop(name.as_str()) {
            forward.headers_mut().append(name.clone(), value.clone());
        }
    }
    match out.send(forward).await {
        Ok(answer) => {
            let (mut head, body) = answer.into_parts();
            remove_hop_by_hop(&mut head.headers);
            Response::from_parts(head, EndOnError(body).boxed())
        }
        Err(e) => {
            let mut r = Response::new(inbound::full(e.to_string()));
            *r.status_mut() = http::StatusCode::BAD_GATEWAY;
            r
        }
    }
}

/// The upstream body relayed frame by frame; an upstream failure mid-body ends the answer, as
/// the recorder's relay does.
struct EndOnError(Incoming);

impl hyper::body::Body for EndOnError {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match Pin::new(&mut self.0).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(Ok(frame))),
            Poll::Ready(Some(Err(_)) | None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (listen, upstream, idle_thread) = match args.as_slice() {
        [listen, upstream] => (listen, upstream, false),
        [listen, upstream, flag] if flag == "--idle-thread" => (listen, upstream, true),
        _ => {
            eprintln!("usage: bare_http_relay <listen host:port> <upstream url> [--idle-thread]");
            return ExitCode::from(2);
        }
    };
    if idle_thread {
        // Never joined: it sleeps until the process exits.
        std::thread::spawn(|| {
            loop {
                std::thread::park();
            }
        });
    }
    let Ok(upstream) = parse_url(upstream) else {
        eprintln!("bare_http_relay: not an http(s) URL: {upstream}");
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let listening = match inbound::bind(listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("bare_http_relay: {e}");
                return ExitCode::from(1);
            }
        };
        eprintln!("bare_http_relay: relaying {} → {upstream}", listening.url());
        let out = Outbound::for_url(&upstream).expect("client");
        let shutdown = Shutdown::new();
        {
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let mut term = signal(SignalKind::terminate()).expect("signal");
                let mut int = signal(SignalKind::interrupt()).expect("signal");
                tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
                shutdown.trigger();
            });
        }
        inbound::serve(listening.listener, shutdown, move |request| {
            let (out, upstream) = (out.clone(), upstream.clone());
            async move { relay(&out, &upstream, request).await }
        })
        .await;
        ExitCode::SUCCESS
    })
}
