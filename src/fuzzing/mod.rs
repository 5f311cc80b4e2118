//! Fuzz entry points: one `fn(&[u8])` per parser, each driving the real code path and asserting
//! its invariants (no panic, bounded output, and the round trips and agreements listed on each).
//!
//! The cargo-fuzz targets under `fuzz/` are one-line wrappers around these, built on nightly;
//! `tests/it/fuzz_corpus.rs` replays every committed corpus and regression file through the same
//! functions on stable, so the test command is also a regression pass. docs/fuzzing.md lists the
//! targets, how to run them and what they found.
//!
//! Hidden from the docs and not part of any supported interface: it is `pub` only so that the
//! fuzz crate and the integration test, both outside this crate, can call it.
#![doc(hidden)]

mod cassette;
mod frame;
mod lint;
mod redact;
mod redact_config;
mod schema;
mod sse;

pub use cassette::cassette_reader;
pub use frame::frame_scanner;
pub use lint::lint_engine;
pub use redact::redactor;
pub use redact_config::redact_config;
pub use schema::json_schema;
pub use sse::sse;

/// A fuzz entry point: any bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// Every target, by the name its fuzz/ binary, corpus and regression folders carry.
pub const TARGETS: [(&str, Target); 7] = [
    ("cassette_reader", cassette_reader),
    ("frame_scanner", frame_scanner),
    ("redactor", redactor),
    ("lint_engine", lint_engine),
    ("redact_config", redact_config),
    ("json_schema", json_schema),
    ("sse", sse),
];

/// Inputs longer than this are cut: every invariant here is about shape, not size, and a short
/// input keeps each execution fast (size is what the scaling tests are for).
const MAX_INPUT: usize = 64 * 1024;

fn bounded(data: &[u8]) -> &[u8] {
    &data[..data.len().min(MAX_INPUT)]
}

/// The input as text, when it is UTF-8 (most parsers here take `&str`).
fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(bounded(data)).ok()
}
