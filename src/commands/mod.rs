//! One file per verb. Commands are the async shell: they read files, spawn processes, print, and
//! decide exit codes; everything they call below them returns values and errors.
//!
//! Exit codes follow the reference, command by command (each command's page under docs/ has its exit-code table): findings are outcomes
//! (0 ok, 1 gate failed), failures to inspect or bad usage are 2 for check/snapshot/redact and 1
//! for record/replay/lint.

use std::process::ExitCode;

use crate::cli::Command;

pub mod check;
pub mod lint;
pub mod record;
pub mod redact;
pub mod replay;
pub mod rules;
pub mod snapshot;
pub mod verify;

/// Runs one parsed command to completion and returns the process exit status.
pub fn run(command: Command) -> ExitCode {
    match command {
        Command::Record(args) => record::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Check(args) => check::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Redact(args) => redact::run(args),
        Command::Rules(args) => rules::run(args),
    }
}

/// An error and its causes on one line, `: `-separated, each cause once: an error whose own
/// message already quotes its source (`failed to read x: No such file or directory (os error
/// 2)`) would otherwise print the OS error twice, as `{:#}` does.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}
