//! `diff`: compare two cassettes interaction by interaction (docs/diff.md). The pairing and the
//! comparison are `crate::cassette::comparison`'s, keyed by replay's fingerprint; this file
//! reads the flags, prints the report and picks the exit code.
//!
//! Exit codes: 0 the recordings answer alike, 1 they differ, 2 nothing was compared (a bad
//! flag or pointer, an unreadable cassette, two eras).

use std::io::Write as _;
use std::process::ExitCode;

use crate::cassette::comparison::{self, Options};
use crate::cli::DiffArgs;
use crate::replay::fingerprint::fingerprint;
use crate::report::terminal::{escape, escape_lines};

/// The output form.
enum Format {
    Text,
    Json,
    Markdown,
}

pub fn run(args: DiffArgs) -> ExitCode {
    match diff(&args) {
        Ok(identical) => ExitCode::from(if identical { 0 } else { 1 }),
        Err(message) => {
            eprintln!("diff failed: {}", escape_lines(&message));
            ExitCode::from(2)
        }
    }
}

/// Compares and prints; `Ok(identical)` once a report was printed.
fn diff(args: &DiffArgs) -> Result<bool, String> {
    let format = match (args.json, args.format.as_str()) {
        (true, _) | (false, "json") => Format::Json,
        (false, "text") => Format::Text,
        (false, "markdown") => Format::Markdown,
        (false, other) => {
            return Err(format!(
                "--format must be text, json or markdown (got {other:?})"
            ));
        }
    };
    let options = Options::new(&args.ignore).map_err(|e| e.to_string())?;
    let comparison = comparison::compare_files(&args.a, &args.b, fingerprint, &options)
        .map_err(|e| e.to_string())?;
    for note in comparison.a.notes.iter().chain(&comparison.b.notes) {
        eprintln!("{}", escape(note));
    }
    let report = match format {
        Format::Text => crate::report::diff::text(&comparison),
        Format::Json => crate::report::diff::json(&comparison),
        Format::Markdown => crate::report::diff::markdown(&comparison),
    };
    let mut stdout = std::io::stdout().lock();
    // A reader that went away (`| head`) is not a reason to change the verdict.
    let _ = stdout
        .write_all(report.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(comparison.identical())
}
