//! In-process benchmark of replay's request path: builds the index of a cassette, then serves the
//! given client lines through `stdio::serve` into a sink, several rounds (a fresh session each),
//! and prints the best and median time per line. Isolates the replay's own work from pipes and
//! scheduling, which whole-process runs (scripts/bench-replay.sh) include.
//!
//! ```text
//! cargo run --release --example bench_serve -- <cassette> <requests.jsonl> [rounds]
//! ```

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use mcp_cassette::cassette::Reader;
use mcp_cassette::replay::session::Rules;
use mcp_cassette::replay::{Index, OnMiss, Session, stdio};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cassette, requests, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: bench_serve <cassette> <requests.jsonl> [rounds]");
    };
    let rounds: usize = rest.first().map_or(Ok(20), |r| r.parse())?;
    let input = std::fs::read(requests)?;
    let lines = input.iter().filter(|&&b| b == b'\n').count();
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let reader = Reader::open(Path::new(cassette))?;
        let header = reader.header().clone();
        let index = Index::build(header, reader, &[], Path::new(cassette))?;
        let mut session = Session::new(Arc::new(index), Rules::new(None), OnMiss::Error);
        let mut sink = io::sink();
        // Owned: the front-end may read its input on a thread of its own.
        let requests = io::Cursor::new(input.clone());
        let start = Instant::now();
        stdio::serve(&mut session, requests, &mut sink, &mut io::sink(), None)?;
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(session.stats().misses, 0, "every line should be answered");
    }
    times.sort_by(f64::total_cmp);
    let per = |t: f64| t / lines as f64 * 1e9;
    println!(
        "{{\"lines\":{lines},\"rounds\":{rounds},\"best_ns_per_line\":{:.0},\"median_ns_per_line\":{:.0}}}",
        per(times[0]),
        per(times[rounds / 2])
    );
    Ok(())
}
