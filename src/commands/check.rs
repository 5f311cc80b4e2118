//! `check`: connect to a live server, read what it publishes, run the structural checks and the
//! safety lint, print a report, and gate.
//!
//! Exit codes: 0 clean, 1 a finding at or above its gate, 2 the server could not be inspected
//! or the command line is wrong. Flag problems are reported the reference's way, in its order:
//! `--fail-on`, `--lint-fail-on` and `--format` as `check: …`; the target and `--era` as
//! `check failed: …`, like every failure to inspect.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::cli::CheckArgs;
use crate::client::{Client, ClientCapabilities, ClientOptions, Target};
use crate::inspect;
use crate::report::style::Palette;
use crate::report::terminal::escape_lines;
use crate::report::{self, CheckReport, Gate, ReportHead};

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Sarif,
    /// A section of the GitHub Action's pull-request comment (docs/action.md).
    Markdown,
}

/// The validated gates and format.
struct Settings {
    format: Format,
    capabilities: ClientCapabilities,
    fail_on: Gate,
    lint_fail_on: Gate,
}

pub(crate) fn run(args: CheckArgs, palette: Palette) -> ExitCode {
    let settings = match settings(&args) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    if let Err(why) = super::check_stdio_quotes(args.target.stdio.as_deref())
        .and_then(|()| super::check_timeout_env())
    {
        eprintln!("check failed: {}", escape_lines(&why));
        return ExitCode::from(2);
    }
    let target = match Target::from_flags(
        args.target.stdio.as_deref(),
        args.target.url.as_deref(),
        &args.target.era,
    ) {
        Ok(target) => target,
        Err(err) => {
            eprintln!("check failed: {}", escape_lines(&err.to_string()));
            return ExitCode::from(2);
        }
    };
    // The SARIF anchor is found before the server is started: a bad --sarif-location is a
    // refusal that costs nothing, not a report thrown away after a whole inspection.
    let anchor = match settings.format {
        Format::Sarif => match sarif_anchor(&args, &target) {
            Ok(anchor) => Some(anchor),
            Err(err) => {
                eprintln!("check failed: {}", escape_lines(&super::error_text(&err)));
                return ExitCode::from(2);
            }
        },
        _ => {
            if args.sarif_location.is_some() {
                eprintln!(
                    "mcp-cassette: --sarif-location anchors SARIF results; without --format sarif it does nothing"
                );
            }
            None
        }
    };
    match inspect_target(&target, &settings) {
        Ok(report) => {
            let text = match settings.format {
                Format::Text => report::text::render(&report, palette),
                Format::Json => report::json::render(&report),
                Format::Markdown => report::markdown::check_section(
                    &report,
                    &report::text::render(&report, Palette::PLAIN),
                ),
                Format::Sarif => {
                    let (cwd, anchor) = anchor.unwrap_or_default();
                    report::sarif::render_report(&report, &cwd, anchor.as_ref())
                }
            };
            let mut stdout = std::io::stdout().lock();
            // A reader that went away (`| head`) is not a reason to change the verdict.
            let _ = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::from(report.exit_code())
        }
        Err(err) => {
            eprintln!("check failed: {}", escape_lines(&super::error_text(&err)));
            ExitCode::from(2)
        }
    }
}

/// The working directory and the file SARIF results are anchored to, as docs/sarif.md
/// describes (a bad `--sarif-location` is an error; no anchor at all is a warning).
fn sarif_anchor(
    args: &CheckArgs,
    target: &Target,
) -> anyhow::Result<(PathBuf, Option<report::sarif::Anchor>)> {
    let cwd = std::env::current_dir().context("failed to read the working directory")?;
    let anchor =
        report::sarif::resolve_anchor(args.sarif_location.as_deref(), target.argv(), &cwd)?;
    if anchor.is_none() {
        eprint!("{}", report::sarif::NO_ANCHOR_WARNING);
    }
    Ok((cwd, anchor))
}

/// `--fail-on`, `--lint-fail-on` (default: `--fail-on`) and `--format`/`--json`, checked in the
/// reference's order with its messages.
fn settings(args: &CheckArgs) -> Result<Settings, String> {
    let fail_on = match Gate::parse(&args.fail_on) {
        Some(gate @ (Gate::Error | Gate::Warn)) => gate,
        _ => {
            return Err(format!(
                "check: --fail-on must be error or warn (got '{}')",
                args.fail_on
            ));
        }
    };
    let lint_fail_on = match &args.lint_fail_on {
        None => fail_on,
        Some(text) => Gate::parse(text).ok_or_else(|| {
            format!("check: --lint-fail-on must be error, warn or never (got '{text}')")
        })?,
    };
    let format = match (args.json, args.format.as_str()) {
        (true, _) | (false, "json") => Format::Json,
        (false, "text") => Format::Text,
        (false, "sarif") => Format::Sarif,
        (false, "markdown") => Format::Markdown,
        (false, other) => {
            return Err(format!(
                "check: --format must be text, json, sarif or markdown (got '{other}')"
            ));
        }
    };
    let capabilities = super::client_capabilities(&args.target.client_capabilities)
        .map_err(|why| format!("check: {why}"))?;
    Ok(Settings {
        format,
        capabilities,
        fail_on,
        lint_fail_on,
    })
}

fn inspect_target(target: &Target, settings: &Settings) -> anyhow::Result<CheckReport> {
    // Compile the lint patterns and meta-schemas while the server starts up.
    std::thread::spawn(inspect::warm_up);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let (head, surface) = runtime.block_on(async {
        let options = ClientOptions {
            capabilities: settings.capabilities,
            ..ClientOptions::default()
        };
        let mut client = Client::connect(target, options).await?;
        let surface = inspect::collect(&mut client).await;
        let head = ReportHead {
            target: target.to_string(),
            server: client.server_info().cloned(),
            protocol_version: client.protocol_version().map(str::to_owned),
            tool_count: 0,
            resource_count: None,
            prompt_count: None,
        };
        client.close().await;
        anyhow::Ok((head, surface?))
    })?;
    let head = ReportHead {
        tool_count: surface.tools.len(),
        resource_count: surface.resource_count(),
        prompt_count: surface.prompt_count(),
        ..head
    };
    let findings = inspect::inspect(&surface);
    Ok(CheckReport::new(
        head,
        findings,
        settings.fail_on,
        settings.lint_fail_on,
    ))
}
