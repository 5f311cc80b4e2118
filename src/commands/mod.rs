//! One file per verb. Commands are the async shell: they read files, spawn processes, print, and
//! decide exit codes; everything they call below them returns values and errors.
//!
//! Exit codes follow the reference, command by command (each command's page under docs/ has its exit-code table): findings are outcomes
//! (0 ok, 1 gate failed), failures to inspect or bad usage are 2 for check/snapshot/redact and 1
//! for record/replay/lint.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use crate::cli::{Cli, ColorChoice, Command};
use crate::report::style::Palette;

pub mod check;
pub mod exec;
pub mod lint;
pub mod record;
pub mod redact;
pub mod replay;
pub mod rules;
pub mod snapshot;
pub mod verify;

/// Runs one parsed command to completion and returns the process exit status.
pub fn run(cli: Cli) -> ExitCode {
    let palette = stdout_palette(cli.color);
    match cli.command {
        Command::Record(args) => record::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Check(args) => check::run(args, palette),
        Command::Snapshot(args) => snapshot::run(args, palette),
        Command::Verify(args) => verify::run(args),
        Command::Lint(args) => lint::run(args, palette),
        Command::Redact(args) => redact::run(args),
        Command::Rules(args) => rules::run(args, palette),
        Command::Exec(args) => exec::run(args),
    }
}

/// Whether what goes to stdout is coloured (docs/cli.md, "Colour"): `--color always` or
/// `never` as said; `auto` colours a terminal, unless `NO_COLOR` is set to anything but the
/// empty string (no-color.org) or `TERM` is `dumb`.
fn stdout_palette(choice: ColorChoice) -> Palette {
    Palette::new(match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
        }
    })
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

/// A `--stdio` command whose quote is never closed, refused in words (the reference runs the
/// quote to the end of the string, which swallows every argument after it).
fn check_stdio_quotes(stdio: Option<&str>) -> Result<(), String> {
    let Some(command) = stdio else {
        return Ok(());
    };
    match crate::transport::command_line::unclosed_quote(command) {
        Some(quote) => Err(format!(
            "--stdio: the {quote} quote in {command:?} is never closed; close it (quotes group words and are removed, there are no backslash escapes)"
        )),
        None => Ok(()),
    }
}

/// The longest `MCP_CASSETTE_TIMEOUT_MS` accepted: a day.
const TIMEOUT_MS_MAX: u64 = 86_400_000;

/// `MCP_CASSETTE_TIMEOUT_MS`, when set, must be a whole number of milliseconds from 1 to a
/// day: anything else is refused by the commands that start a client (docs/cli.md,
/// "Environment"), where the reference would fall back to 15 s without a word.
fn check_timeout_env() -> Result<(), String> {
    let Some(value) = std::env::var_os(crate::client::TIMEOUT_ENV) else {
        return Ok(());
    };
    let text = value.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(ms) if (1..=TIMEOUT_MS_MAX).contains(&ms) => Ok(()),
        _ => Err(format!(
            "{} must be a whole number of milliseconds from 1 to {TIMEOUT_MS_MAX} (got {:?})",
            crate::client::TIMEOUT_ENV,
            text
        )),
    }
}

/// `--client-capabilities`: a comma-separated list of `roots`, `sampling`, `elicitation`, or
/// `all` / `none` (docs/cli.md, "Client capabilities").
fn client_capabilities(words: &[String]) -> Result<crate::client::ClientCapabilities, String> {
    let mut capabilities = crate::client::ClientCapabilities::default();
    for word in words {
        match word.trim() {
            "roots" => capabilities.roots = true,
            "sampling" => capabilities.sampling = true,
            "elicitation" => capabilities.elicitation = true,
            "all" => capabilities = crate::client::ClientCapabilities::ALL,
            "none" | "" => {}
            other => {
                return Err(format!(
                    "--client-capabilities takes roots, sampling, elicitation, all or none, comma-separated (got {other:?})"
                ));
            }
        }
    }
    Ok(capabilities)
}
