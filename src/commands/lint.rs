//! `lint <cassette> [--json] [--fail-on error|warn]`: header-versus-frames contradictions (exit
//! 1), newer header fields and prompt injection in recorded answers (reported at warn, gating
//! only under `--fail-on warn`). The cassette is
//! streamed entry by entry; an unreadable one prints the reader's error and exits 1.
//!
//! There is deliberately no SARIF here: a cassette has no server, tool count or gate to put in
//! one.

use std::io::Write;
use std::process::ExitCode;

use crate::cassette::Reader;
use crate::cli::LintArgs;
use crate::lint::cassette::lint_cassette;
use crate::report::cassette::{json_report, text_report};
use crate::report::style::Palette;
use crate::report::terminal::escape_lines;
use crate::severity::Level;

pub(crate) fn run(args: LintArgs, palette: Palette) -> ExitCode {
    let fail_on = match args.fail_on.as_str() {
        "error" => Level::Error,
        "warn" => Level::Warn,
        other => {
            eprintln!(
                "lint: --fail-on must be error or warn (got '{}')",
                escape_lines(other)
            );
            return ExitCode::from(1);
        }
    };
    let label = args.cassette.display().to_string();
    let result = Reader::open(&args.cassette).and_then(|reader| {
        lint_cassette(reader, |note| {
            eprintln!("{}", escape_lines(&note.to_string()))
        })
    });
    let lint = match result {
        Ok(lint) => lint,
        Err(e) => {
            eprintln!("{}", escape_lines(&e.to_string()));
            return ExitCode::from(1);
        }
    };
    let body = if args.json {
        json_report(&label, &lint, lint.passes(fail_on))
    } else {
        text_report(&label, &lint, fail_on == Level::Warn, palette)
    };
    // One write, so a long report survives a pipe that closes late; a reader that went away
    // (`| head`) does not change the verdict.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(body.as_bytes()).and_then(|()| out.flush());
    if lint.passes(fail_on) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
