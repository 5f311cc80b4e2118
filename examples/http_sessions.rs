//! Load driver for `replay --listen`: many client sessions at once, each a whole pass through the
//! recording, measuring every answer's latency (request sent → body read whole).
//!
//! Each session posts `initialize` (taking the minted `mcp-session-id` when the server sends
//! one), `notifications/initialized`, then `tools/call echo {"i": k}` for k in 0..calls — the
//! requests scripts/bench-replay-http.sh records into its cassette — one request at a time, each
//! session waiting `interval_ms` between its requests (sessions start staggered over one
//! interval). Pacing is what makes the figure a latency: 1,000 sessions sending back to back
//! would measure how long a request queues behind the 999 others, i.e. throughput. The default,
//! 100 ms, offers 10,000 requests/s in all, a fifth of the throughput target. All sessions run
//! concurrently on one thread (the replay is the process under test), and the driver prints
//! answers, wall time, answers per second and the p50/p99/max latency.
//!
//! ```text
//! cargo run --release --example http_sessions -- <url> [sessions] [calls] [interval_ms]
//! ```

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, header};
use http_body_util::{BodyExt, Full};
use mcp_cassette::transport::http::outbound::{Outbound, parse_url};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: http_sessions <url> [sessions] [calls]");
    };
    let sessions: usize = rest.first().map_or(Ok(1000), |s| s.parse())?;
    let calls: usize = rest.get(1).map_or(Ok(20), |s| s.parse())?;
    let interval = Duration::from_millis(rest.get(2).map_or(Ok(100), |s| s.parse())?);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(drive(url, sessions, calls, interval))
}

async fn drive(url: &str, sessions: usize, calls: usize, interval: Duration) -> anyhow::Result<()> {
    let uri = parse_url(url)?;
    let client = Outbound::for_url(&uri)?;
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(sessions);
    for n in 0..sessions {
        let client = client.clone();
        let uri = uri.clone();
        let offset = interval.mul_f64(n as f64 / sessions as f64);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(offset).await;
            session(&client, &uri, n, calls, interval).await
        }));
    }
    let mut latencies: Vec<Duration> = Vec::with_capacity(sessions * (calls + 2));
    let mut failed = 0usize;
    for task in tasks {
        match task.await? {
            Ok(mut times) => latencies.append(&mut times),
            Err(err) => {
                failed += 1;
                if failed <= 5 {
                    eprintln!("session failed: {err}");
                }
            }
        }
    }
    let wall = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "sessions: {sessions} ({failed} failed), answers: {}, wall: {:.2}s, {:.0} answers/s",
        latencies.len(),
        wall.as_secs_f64(),
        latencies.len() as f64 / wall.as_secs_f64()
    );
    println!(
        "latency per answer: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3
    );
    anyhow::ensure!(failed == 0, "{failed} session(s) failed");
    Ok(())
}

/// One client session; the latency of each of its answers.
async fn session(
    client: &Outbound,
    uri: &http::Uri,
    n: usize,
    calls: usize,
    interval: Duration,
) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(calls + 2);
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"bench-{n}","version":"1"}}}}}}"#
    );
    let (session_id, _) = post(client, uri, None, init, &mut times).await?;
    let notified = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    post(client, uri, session_id.as_deref(), notified, &mut times).await?;
    for k in 0..calls {
        tokio::time::sleep(interval).await;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"i":{k}}}}}}}"#,
            k + 1
        );
        let (_, body) = post(client, uri, session_id.as_deref(), call, &mut times).await?;
        anyhow::ensure!(
            !body.windows(8).any(|w| w == b"\"error\":"),
            "session {n}, call {k}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    Ok(times)
}

async fn post(
    client: &Outbound,
    uri: &http::Uri,
    session: Option<&str>,
    body: String,
    times: &mut Vec<Duration>,
) -> anyhow::Result<(Option<String>, Bytes)> {
    let mut request = Request::post(uri.clone())
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let request = request.body(Full::new(Bytes::from(body)))?;
    let sent = Instant::now();
    let answer = client.send(request).await?;
    let minted = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let status = answer.status();
    let body = answer.into_body().collect().await?.to_bytes();
    times.push(sent.elapsed());
    anyhow::ensure!(status.is_success(), "status {status}");
    Ok((minted, body))
}
