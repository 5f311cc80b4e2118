//! What the safety lint costs on one text, to be read under callgrind: `scan_text` over the
//! text once (building the automata and tables, which every later call reuses), then `count`
//! times inside `measured`, the function to collect.
//!
//! ```text
//! cargo build --release --example lint_text_cost
//! valgrind --tool=callgrind --toggle-collect='lint_text_cost::measured' \
//!     target/release/examples/lint_text_cost 10000 <file or text>
//! ```
//!
//! The instructions callgrind reports, divided by `count`, are one text's cost; an empty text
//! gives the fixed part (docs/check.md, "Cost"). Given a `.jsonl` file of texts (one JSON
//! string per line, as `BENCH_TEXTS=<file> bench_lint` writes the benchmark's), it lints all
//! of them, or only the ASCII ones or the others (a third argument, `ascii` or `other`).

use mcp_cassette::lint::{Surface, scan_text};

/// Lints each text `count` times on the tool surface; the findings counted, so none is
/// optimised away.
#[inline(never)]
fn measured(count: usize, texts: &[String]) -> usize {
    let mut total = 0;
    for _ in 0..count {
        for text in texts {
            total += scan_text(std::hint::black_box(text), Surface::Tool).len();
        }
    }
    total
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(count) = args.next().and_then(|n| n.parse().ok()) else {
        eprintln!("usage: lint_text_cost <count> [file or text] [all|ascii|other]");
        std::process::exit(2);
    };
    let given = args.next().unwrap_or_default();
    let which = args.next().unwrap_or_else(|| "all".to_owned());
    // A path names a file to read: one text, or (`.jsonl`) one JSON string per line, as
    // `BENCH_TEXTS` has `bench_lint` write them. Anything else is the text itself.
    let read = std::fs::read_to_string(&given).ok();
    let texts: Vec<String> = match read {
        Some(file) if given.ends_with(".jsonl") => file
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .filter(|t: &String| match which.as_str() {
                "ascii" => t.is_ascii(),
                "other" => !t.is_ascii(),
                _ => true,
            })
            .collect(),
        Some(file) => vec![file],
        None => vec![given],
    };
    // Once outside the measured function: the lazily built tables and patterns.
    let warm: usize = texts
        .iter()
        .map(|t| scan_text(t, Surface::Tool).len())
        .sum();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "{} text(s), {bytes} bytes, {warm} finding(s) per pass; {} in all",
        texts.len(),
        measured(count, &texts)
    );
}
