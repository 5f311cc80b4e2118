//! `verify`: re-fire a cassette's recorded requests at the live server and report what drifted
//! (docs/verify.md). The pairing, following and classification are `crate::verify`'s; this file
//! drives the one MCP client through them, prints, and picks the exit code.
//!
//! Exit codes: 0 every pair matched or its change was waived, 1 anything else (a pair that
//! could not be answered included, e.g. after the server died), 2 nothing was fired: bad flags,
//! a file that is not a cassette or holds nothing to verify, a server that cannot be reached.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::value::RawValue;

use crate::cli::VerifyArgs;
use crate::client::{Client, ClientOptions, Endpoint, EraChoice, Target};
use crate::protocol::Era;
use crate::report::style::count;
use crate::report::terminal::{escape, escape_lines};
use crate::verify::{Live, Options, Outcome, Plan, Summary, Verifier, headers, render};

/// Progress is shown (on a terminal) from this many pairs up.
const PROGRESS_FROM: usize = 50;

pub fn run(args: VerifyArgs) -> ExitCode {
    match verify(&args) {
        Ok(passed) => ExitCode::from(if passed { 0 } else { 1 }),
        Err(err) => {
            eprintln!("verify failed: {}", escape_lines(&super::error_text(&err)));
            ExitCode::from(2)
        }
    }
}

/// Runs the whole verification; `Ok(passed)` once a report was printed.
fn verify(args: &VerifyArgs) -> anyhow::Result<bool> {
    super::check_timeout_env().map_err(anyhow::Error::msg)?;
    let options = Options::new(
        &args.ignore,
        &args.allow_changed_paths,
        args.allow_all_changes,
    )?;
    let mut target = Target::from_command(&args.command, args.url.as_deref(), &args.era)?;
    let plan = Plan::open(&args.cassette)?;
    // `--era auto` speaks the era the cassette says it was recorded in: its answers were given
    // in that era's shapes (docs/verify.md, "Eras").
    if target.era() == EraChoice::Auto {
        if let Some(era) = plan.era {
            target = Target::from_command(&args.command, args.url.as_deref(), era.as_str())?;
            eprintln!(
                "mcp-cassette: speaking {}, the era the cassette was recorded in (--era chooses another)",
                era.as_str()
            );
        }
    }
    for note in &plan.notes {
        eprintln!("{}", escape(note));
    }
    if plan.unanswered > 0 {
        eprintln!(
            "mcp-cassette: {} without a recorded answer {} not re-fired",
            count(plan.unanswered, "recorded request", "recorded requests"),
            if plan.unanswered == 1 { "is" } else { "are" }
        );
    }
    if let Some((_, n)) = plan
        .skipped
        .iter()
        .find(|(m, _)| m == "subscriptions/listen")
    {
        eprintln!(
            "mcp-cassette: {} not re-fired (a subscription has no single answer to compare)",
            count(
                *n,
                "subscriptions/listen request is",
                "subscriptions/listen requests are"
            )
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let outcomes = runtime.block_on(fire(&target, &plan, &options))?;
    let report = if args.json {
        render::json(&plan, &outcomes)
    } else {
        render::text(&plan, &outcomes)
    };
    let mut stdout = std::io::stdout().lock();
    // A reader that went away (`| head`) is not a reason to change the verdict.
    let _ = stdout
        .write_all(report.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(Summary::of(&outcomes).passed())
}

/// Connects and re-fires every pair in order. Only the connection can fail the run; a pair
/// whose request fails is MISSING, and once the server is gone the rest are too.
async fn fire(target: &Target, plan: &Plan, options: &Options) -> anyhow::Result<Vec<Outcome>> {
    let mut client = Client::connect(target, ClientOptions::default()).await?;
    let called = headers::called_tools(plan);
    if matches!(target.endpoint(), Endpoint::Url(_))
        && client.era() == Era::Modern
        && !called.is_empty()
    {
        // One listing, so the client knows the tools' x-mcp-header declarations before the
        // first recorded call (docs/verify.md, "`--url`").
        match client.list_all("tools/list", "tools").await {
            Ok(tools) => {
                for note in headers::invalid_declarations(&tools, &called) {
                    eprintln!("{}", escape(&note));
                }
            }
            Err(err) => eprintln!("{}", escape(&headers::listing_failed(&err.to_string()))),
        }
    }
    let mut verifier = Verifier::new(plan, options);
    let total = plan.pairs.len();
    let progress = total >= PROGRESS_FROM && std::io::stderr().is_terminal();
    let mut gone: Option<String> = None;
    let mut sent_at = tokio::time::Instant::now();
    let mut outcomes = Vec::with_capacity(total);
    for index in 0..total {
        let prepared = verifier.prepare(index, client.era());
        let live = match &gone {
            Some(why) => Live::Failed(format!("not sent: {why}")),
            None => {
                let method = &plan.pairs[index].method;
                let params = match prepared.params.map(RawValue::from_string).transpose() {
                    Ok(params) => params,
                    Err(err) => {
                        outcomes.push(verifier.answer(
                            index,
                            prepared.followed,
                            Live::Failed(format!("its params cannot be sent: {err}")),
                        ));
                        continue;
                    }
                };
                if let Some(pause) = plan.pause_before(index) {
                    tokio::time::sleep_until(sent_at + pause).await;
                }
                sent_at = tokio::time::Instant::now();
                match client.forward(method, params.as_deref()).await {
                    Ok(line) => Live::Answer(line),
                    Err(err) => {
                        let message = err.to_string();
                        if err.is_fatal() {
                            gone = Some(message.clone());
                        }
                        Live::Failed(message)
                    }
                }
            }
        };
        outcomes.push(verifier.answer(index, prepared.followed, live));
        if progress && (index + 1 == total || (index + 1) % 25 == 0) {
            eprint!("\rverify: {}/{total}", index + 1);
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    client.close().await;
    Ok(outcomes)
}
