//! Both ends of the `record --http` benchmark (scripts/bench-record-http.sh): an upstream that
//! answers every JSON-RPC request at once, and a keep-alive client that times requests.
//!
//! ```text
//! bench_http serve <host:port>                      # prints the URL it serves on stderr
//! bench_http drive <url> [--count N] [--concurrency C]
//! ```
//!
//! `drive` sends `initialize`, then N `tools/call` requests, C at a time (C = 1: one after the
//! other on one connection), and prints `{"seconds":…,"p50_us":…,"p99_us":…}`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use mcp_cassette::jsonrpc::Frame;
use mcp_cassette::transport::http::inbound::{self, Body, Shutdown};
use mcp_cassette::transport::http::outbound::{Outbound, parse_url};

async fn answer(request: Request<Incoming>) -> Response<Body> {
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let frame = std::str::from_utf8(&body).ok().and_then(Frame::parse);
    let Some(id) = frame.as_ref().and_then(|f| f.id()) else {
        let mut r = Response::new(inbound::empty());
        *r.status_mut() = http::StatusCode::ACCEPTED;
        return r;
    };
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#,
        id.to_json()
    );
    let mut r = Response::new(inbound::full(text));
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}

async fn serve(listen: &str) {
    let listening = inbound::bind(listen).await.expect("bind");
    eprintln!("bench_http: serving {}mcp", listening.url());
    inbound::serve(listening.listener, Shutdown::new(), answer).await;
}

fn request(url: &http::Uri, id: u64, method: &str) -> Request<Full<Bytes>> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#
    );
    Request::post(url.clone())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

async fn one(out: &Outbound, request: Request<Full<Bytes>>) -> Duration {
    let start = Instant::now();
    let answer = out.send(request).await.expect("answer");
    assert!(answer.status().is_success(), "{}", answer.status());
    answer.into_body().collect().await.expect("body");
    start.elapsed()
}

async fn drive(url: &str, count: u64, concurrency: u64) {
    let url = parse_url(url).expect("url");
    let out = Outbound::for_url(&url).expect("client");
    one(&out, request(&url, 0, "initialize")).await;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..concurrency {
        let (out, url) = (out.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            let mut id = 1 + worker;
            while id <= count {
                times.push(one(&out, request(&url, id, "tools/call")).await);
                id += concurrency;
            }
            times
        }));
    }
    let mut times = Vec::new();
    for t in tasks {
        times.extend(t.await.expect("worker"));
    }
    let seconds = start.elapsed().as_secs_f64();
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize].as_micros();
    println!(
        r#"{{"seconds":{seconds},"p50_us":{},"p99_us":{}}}"#,
        at(0.5),
        at(0.99)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match args.first().map(String::as_str) {
        Some("serve") if args.len() == 2 => runtime.block_on(serve(&args[1])),
        Some("drive") if args.len() >= 2 => runtime.block_on(drive(
            &args[1],
            flag("--count", 5000),
            flag("--concurrency", 1).max(1),
        )),
        _ => {
            eprintln!(
                "usage: bench_http serve <host:port> | bench_http drive <url> [--count N] [--concurrency C]"
            );
            std::process::exit(2);
        }
    }
}
