//! `snapshot`: write the server's tool contract to a file, or with `--check` compare the live
//! server with the committed file and fail on drift at or above `--fail-on`.
//!
//! Exit codes (docs/contract.md): 0 written, or no change at or above the gate; 1 a gating change;
//! 2 anything that stopped the comparison (bad flag, missing or unreadable snapshot, a server
//! that could not be inspected), printed as `snapshot failed: <why>` unless the reference has
//! a sentence of its own for it.
//!
//! One difference in order from the reference, deliberately: the snapshot file is checked
//! (present for `--check`, absent or `--update` for writing, readable) *before* the server is
//! started, so a refusal never spawns a server first. The messages and codes are the same.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{Context as _, bail};

use crate::atomic_file::{self, AtomicFile, Permissions};
use crate::cli::SnapshotArgs;
use crate::client::{Client, ClientCapabilities, ClientOptions, Target};
use crate::contract::{FailOn, Snapshot, diff_contracts, should_fail};
use crate::report::drift::{json_report, text_report};
use crate::report::markdown::drift_section;
use crate::report::style::{Palette, count};
use crate::report::terminal::escape_lines;

/// Output formats of `snapshot --check`.
enum Format {
    Text,
    Json,
    /// A section of the GitHub Action's pull-request comment (docs/action.md).
    Markdown,
}

pub(crate) fn run(args: SnapshotArgs, palette: Palette) -> ExitCode {
    match run_inner(&args, palette) {
        Ok(code) => code,
        Err(err) => {
            eprintln!(
                "snapshot failed: {}",
                escape_lines(&super::error_text(&err))
            );
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &SnapshotArgs, palette: Palette) -> anyhow::Result<ExitCode> {
    let Some(fail_on) = FailOn::parse(&args.fail_on) else {
        bail!(
            "--fail-on must be \"breaking\" or \"dangerous\" (got \"{}\")",
            args.fail_on
        );
    };
    let format = match (args.json, args.format.as_str()) {
        (true, _) | (false, "json") => Format::Json,
        (false, "text") => Format::Text,
        (false, "markdown") => Format::Markdown,
        (false, other) => {
            bail!("--format must be \"text\", \"json\" or \"markdown\" (got \"{other}\")")
        }
    };
    let t = &args.target;
    super::check_stdio_quotes(t.stdio.as_deref())
        .and_then(|()| super::check_timeout_env())
        .map_err(anyhow::Error::msg)?;
    let capabilities =
        super::client_capabilities(&t.client_capabilities).map_err(anyhow::Error::msg)?;
    let target = Target::from_flags(t.stdio.as_deref(), t.url.as_deref(), &t.era)?;
    let file = args.file.as_path();
    if file.is_dir() {
        bail!(
            "-f {} is a directory; name the snapshot file inside it (e.g. {})",
            file.display(),
            file.join("mcp-contract.snapshot.json").display()
        );
    }
    let stored = if args.check {
        if args.update {
            // Said, not refused: the reference runs the comparison, and so do we.
            eprintln!(
                "mcp-cassette: --update has no effect with --check, which only compares; the snapshot is not rewritten"
            );
        }
        if !file.exists() {
            eprintln!(
                "snapshot --check: no snapshot at {} (run snapshot first)",
                file.display()
            );
            return Ok(ExitCode::from(2));
        }
        Some(Snapshot::read(file)?)
    } else {
        if file.exists() && !args.update {
            eprintln!(
                "snapshot: {} already exists. Use --check to compare or --update to overwrite",
                file.display()
            );
            return Ok(ExitCode::from(2));
        }
        None
    };
    // Where the snapshot goes is proven writable (a temporary file made beside it, and
    // dropped, which removes it) before the server is started: a missing directory or a
    // read-only one is refused up front.
    if stored.is_none() {
        drop(AtomicFile::create(file, Permissions::Default)?);
    }
    let live = capture(&target, capabilities)?;
    let mut stdout = std::io::stdout().lock();
    match stored {
        Some(stored) => {
            let changes = diff_contracts(&stored, &live);
            let failed = should_fail(&changes, fail_on);
            let body = match format {
                Format::Text => text_report(&changes, fail_on, palette),
                Format::Json => json_report(&changes, fail_on),
                Format::Markdown => drift_section(&changes, fail_on, &file.display().to_string()),
            };
            // A reader that went away (`| head`) does not change the verdict.
            let _ = stdout
                .write_all(body.as_bytes())
                .and_then(|()| stdout.flush());
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        None => {
            // Written beside the committed file and renamed over it: an interrupted run never
            // leaves a half-written snapshot where the committed one was.
            atomic_file::write(file, live.to_text().as_bytes(), Permissions::Default)?;
            let _ = writeln!(
                stdout,
                "wrote {} ({})",
                file.display(),
                count(live.tools.len(), "tool", "tools")
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Connects, lists every tool (all pages) and builds the live contract.
fn capture(target: &Target, capabilities: ClientCapabilities) -> anyhow::Result<Snapshot> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let (tools, server, protocol) = runtime.block_on(async {
        let options = ClientOptions {
            capabilities,
            ..ClientOptions::default()
        };
        let mut client = Client::connect(target, options).await?;
        let listed = client.list_all("tools/list", "tools").await;
        let server = client.server_info().cloned();
        let protocol = client.protocol_version().map(str::to_owned);
        client.close().await;
        anyhow::Ok((listed?, server, protocol))
    })?;
    Ok(Snapshot::from_listing(
        &tools,
        server,
        protocol,
        crate::cassette::now_iso(),
    )?)
}
