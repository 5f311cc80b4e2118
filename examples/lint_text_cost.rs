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
//! gives the fixed part (docs/check.md, "Cost").

use mcp_cassette::lint::{Surface, scan_text};

/// Lints `text` `count` times on the tool surface; the findings counted, so none is optimised
/// away.
#[inline(never)]
fn measured(count: usize, text: &str) -> usize {
    let mut total = 0;
    for _ in 0..count {
        total += scan_text(std::hint::black_box(text), Surface::Tool).len();
    }
    total
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(count) = args.next().and_then(|n| n.parse().ok()) else {
        eprintln!("usage: lint_text_cost <count> [file or text]");
        std::process::exit(2);
    };
    let given = args.next().unwrap_or_default();
    // A path names a file to read; anything else is the text itself.
    let text = std::fs::read_to_string(&given).unwrap_or(given);
    let warm = scan_text(&text, Surface::Tool).len();
    println!(
        "{warm} finding(s) per text; {} in all",
        measured(count, &text)
    );
}
