//! Load driver for `replay --listen`: many client sessions at once, each a whole pass through the
//! recording, measuring every answer's latency (request sent → body read whole).
//!
//! Each session posts `initialize` (taking the minted `mcp-session-id` when the server sends
//! one), `notifications/initialized`, then `tools/call echo {"i": k}` for k in 0..calls — the
//! requests scripts/bench-replay-http.sh records into its cassette — one request at a time.
//! Sessions start staggered over one interval, and each keeps to a fixed timetable: its k-th
//! call is due `k × interval_ms` after its start, whenever the answer before it came (at once if
//! that answer came late). Pacing is what makes the figure a latency: 1,000 sessions sending
//! back to back would measure how long a request queues behind the 999 others, i.e. throughput.
//! The default, 100 ms, offers 10,000 requests/s in all, a fifth of the throughput target. All
//! sessions run concurrently on one thread (the replay is the process under test), and the
//! driver prints answers, wall time, answers per second and the p50/p99/max latency.
//!
//! Why a timetable rather than a pause after each answer: sessions whose answers the driver's
//! one thread reads in the same turn of its loop start their pauses at the same instant, end them
//! on the same timer tick, and from then on stay in step. More sessions fall into step every
//! round, and within seconds hundreds send at the same moment, bursts that a population of
//! independent clients does not produce. The figure then measured the queue behind each burst
//! (p50 2.8 ms, p99 10–49 ms at 1,000 sessions) rather than the server: with the timetable, the
//! same server answers the same load with p50 0.25 ms (docs/benchmarks.md).
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
        let first = tokio::time::Instant::now() + offset;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(first).await;
            session(&client, &uri, n, calls, first, interval).await
        }));
    }
    // Every answer, and apart the two handshake answers of each session (the first includes
    // opening its connection) and the calls.
    let mut latencies: Vec<Duration> = Vec::with_capacity(sessions * (calls + 2));
    let mut handshakes: Vec<Duration> = Vec::with_capacity(sessions * 2);
    let mut calls_only: Vec<Duration> = Vec::with_capacity(sessions * calls);
    let mut failed = 0usize;
    for task in tasks {
        match task.await? {
            Ok(times) => {
                handshakes.extend(times.iter().take(2));
                calls_only.extend(times.iter().skip(2));
                latencies.extend(times);
            }
            Err(err) => {
                failed += 1;
                if failed <= 5 {
                    eprintln!("session failed: {err}");
                }
            }
        }
    }
    let wall = started.elapsed();
    println!(
        "sessions: {sessions} ({failed} failed), answers: {}, wall: {:.2}s, {:.0} answers/s",
        latencies.len(),
        wall.as_secs_f64(),
        latencies.len() as f64 / wall.as_secs_f64()
    );
    println!("latency per answer: {}", percentiles(&mut latencies));
    println!("  the handshakes: {}", percentiles(&mut handshakes));
    println!("  the calls: {}", percentiles(&mut calls_only));
    anyhow::ensure!(failed == 0, "{failed} session(s) failed");
    Ok(())
}

/// p50, p99 and max of `times`, in words.
fn percentiles(times: &mut [Duration]) -> String {
    times.sort_unstable();
    let at = |q: f64| {
        times
            .get(((times.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3
    };
    format!(
        "p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        at(0.5),
        at(0.99),
        at(1.0)
    )
}

/// One client session; the latency of each of its answers.
async fn session(
    client: &Outbound,
    uri: &http::Uri,
    n: usize,
    calls: usize,
    first: tokio::time::Instant,
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
        tokio::time::sleep_until(first + interval * (k as u32 + 1)).await;
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
