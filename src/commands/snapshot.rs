//! `snapshot`: write the server's tool contract to a file, or with `--check` compare the live
//! server with the committed file and fail on drift at or above `--fail-on`.
//!
//! Exit codes (spec §1.4): 0 written, or no change at or above the gate; 1 a gating change;
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

use crate::atomic_file::{self, Permissions};
use crate::cli::SnapshotArgs;
use crate::client::{Client, ClientOptions, EraChoice};
use crate::contract::{Change, FailOn, Snapshot, Tier, counts, diff_contracts, should_fail};
use crate::transport::command_line::tokenize;

pub fn run(args: SnapshotArgs) -> ExitCode {
    match run_inner(&args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("snapshot failed: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &SnapshotArgs) -> anyhow::Result<ExitCode> {
    let Some(fail_on) = FailOn::parse(&args.fail_on) else {
        bail!(
            "--fail-on must be \"breaking\" or \"dangerous\" (got \"{}\")",
            args.fail_on
        );
    };
    let (argv, era) = target(args)?;
    let file = args.file.as_path();
    let stored = if args.check {
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
    let live = capture(&argv, era)?;
    let mut stdout = std::io::stdout().lock();
    match stored {
        Some(stored) => {
            let changes = diff_contracts(&stored, &live);
            let failed = should_fail(&changes, fail_on);
            let body = if args.json {
                json_report(&changes, fail_on)
            } else {
                text_report(&changes, fail_on)
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
                "wrote {} ({} tools)",
                file.display(),
                live.tools.len()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The server command and era, validated with the reference's messages.
fn target(args: &SnapshotArgs) -> anyhow::Result<(Vec<String>, EraChoice)> {
    let t = &args.target;
    let stdio = t.stdio.as_deref().filter(|s| !s.is_empty());
    let url = t.url.as_deref().filter(|s| !s.is_empty());
    let command = match (stdio, url) {
        (Some(_), Some(_)) => bail!("use either --stdio or --url, not both"),
        (None, None) => bail!("missing target: pass --stdio \"<command>\" or --url <http-url>"),
        (None, Some(_)) => bail!("--url (Streamable HTTP) is not available in this build yet"),
        (Some(command), None) => command,
    };
    let Some(era) = EraChoice::parse(&t.era) else {
        bail!("--era must be legacy | modern | auto (got \"{}\")", t.era);
    };
    Ok((tokenize(command), era))
}

/// Connects, lists every tool (all pages) and builds the live contract.
fn capture(argv: &[String], era: EraChoice) -> anyhow::Result<Snapshot> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let (tools, server, protocol) = runtime.block_on(async {
        let options = ClientOptions {
            era,
            ..ClientOptions::default()
        };
        let mut client = Client::connect_stdio(argv, options).await?;
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

/// The text report: `[OK] contract unchanged`, or the changes grouped by tier, a blank line
/// and the verdict.
pub fn text_report(changes: &[Change], fail_on: FailOn) -> String {
    if changes.is_empty() {
        return "[OK] contract unchanged\n".to_owned();
    }
    let mut out = String::new();
    for tier in Tier::ALL {
        for c in changes.iter().filter(|c| c.kind == tier) {
            out.push_str(&format!(
                "[{}] {}: {} ({})\n",
                tier.label(),
                c.subject,
                c.message,
                c.rule
            ));
        }
    }
    let n = counts(changes);
    out.push_str(&format!(
        "\nresult: {} ({} breaking, {} dangerous, {} minor, {} info; gate: {})\n",
        if should_fail(changes, fail_on) {
            "FAIL"
        } else {
            "PASS"
        },
        n.breaking,
        n.dangerous,
        n.minor,
        n.info,
        fail_on.as_str()
    ));
    out
}

/// `{ok, failOn, counts, changes}`, 2-space indented.
pub fn json_report(changes: &[Change], fail_on: FailOn) -> String {
    let doc = serde_json::json!({
        "ok": !should_fail(changes, fail_on),
        "failOn": fail_on,
        "counts": counts(changes),
        "changes": changes,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
