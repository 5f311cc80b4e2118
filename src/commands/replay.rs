//! `replay`: validate flags, build the index, serve it on stdio (or over Streamable HTTP with
//! `--listen`), report, map the outcome to an exit code (1 for a startup error; then per
//! `--on-miss`).

use std::io::{IsTerminal as _, Read};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, mpsc};

use anyhow::{anyhow, bail};

use crate::cassette::{Reader, Transport};
use crate::cli::ReplayArgs;
use crate::client::{ClientOptions, EraChoice, Target};
use crate::protocol::era::Era;
use crate::redact::{RedactConfig, check_config_hash};
use crate::replay::fault::{self, Fault, Injector};
use crate::replay::handoff::Handoff;
use crate::replay::http::control::MissRecord;
use crate::replay::http::control::{self, Control};
use crate::replay::http::headers::Notes;
use crate::replay::http::{self, BODY_LIMIT, Options, Replay};
use crate::replay::passthrough::{Appender, Passthrough};
use crate::replay::session::Rules;
use crate::replay::usage::{self, Unused, Usage};
use crate::replay::{Index, OnMiss, Session, stdio};
use crate::report::terminal::escape;
use crate::transport::http::inbound::{self, Shutdown};

pub fn run(args: ReplayArgs) -> ExitCode {
    // Faults are ours, beyond the reference, so a bad one takes the usage code the commands of
    // our own design use (docs/replay.md, "Fault injection").
    let faults = match faults(&args) {
        Ok(faults) => faults,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match replay(args, faults) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(1)
        }
    }
}

/// The `--fault`s, parsed and checked against the transport, with their seed said on stderr
/// so a failing run can be repeated.
fn faults(args: &ReplayArgs) -> Result<Option<Injector>, String> {
    if args.fault.is_empty() {
        return match args.fault_seed {
            Some(_) => Err(
                "replay: --fault-seed does nothing without --fault; add the faults it should decide"
                    .to_owned(),
            ),
            None => Ok(None),
        };
    }
    let faults = args
        .fault
        .iter()
        .map(|spec| Fault::parse(spec))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let injector = Injector::new(faults, args.fault_seed.unwrap_or_else(fault::fresh_seed));
    if args.listen.is_none() {
        if let Some(f) = injector.http_only() {
            return Err(format!(
                "replay: --fault \"{}\" needs an HTTP replay (--listen); on stdio there is no HTTP status and no event stream",
                f.spec
            ));
        }
    }
    eprintln!(
        "mcp-cassette replay: injecting {} fault(s) with --fault-seed {} (pass it again to repeat them)",
        args.fault.len(),
        injector.seed()
    );
    Ok(Some(injector))
}

fn replay(args: ReplayArgs, faults: Option<Injector>) -> anyhow::Result<u8> {
    let Ok(on_miss) = args.on_miss.parse::<OnMiss>() else {
        bail!(
            "replay: unknown --on-miss \"{}\" (expected error, warn, or passthrough)",
            args.on_miss
        );
    };
    if args.timing != "none" && args.timing != "recorded" {
        bail!(
            "replay: unknown --timing \"{}\" (expected none or recorded)",
            args.timing
        );
    }
    if on_miss == OnMiss::Passthrough {
        super::check_timeout_env().map_err(|why| anyhow!("replay: {why}"))?;
    }
    if args.exec_report.is_some() && args.listen.is_some() {
        bail!(
            "replay --exec-report is for the stdio replays exec hands out (docs/exec.md); exec serves an HTTP cassette itself"
        );
    }
    if let Some(listen) = args.listen.clone() {
        let reader = Reader::open(&args.cassette)?;
        if reader.header().transport() == Transport::Stdio {
            bail!(
                "replay --listen serves HTTP cassettes; {} was recorded over stdio. Replay it without --listen to serve it on stdio",
                args.cassette.display()
            );
        }
        drop(reader);
        return replay_http(args, &listen, on_miss, faults);
    }
    if args.control {
        bail!(
            "replay --control serves the miss channel next to an HTTP replay; add --listen (docs/adapters.md)"
        );
    }
    if args.timing != "none" {
        bail!(
            "replay --timing applies to streamed answers, which only --listen serves. Add --listen or drop --timing"
        );
    }
    // The live server's target: a command after `--`, spoken to in whichever era answers.
    let live_target = if on_miss == OnMiss::Passthrough {
        if args.command.is_empty() {
            bail!(
                "replay --on-miss passthrough needs the real server command: mcp-cassette replay <cassette> --on-miss passthrough -- <server command...>"
            );
        }
        Some(Target::stdio(&args.command, EraChoice::Auto)?)
    } else {
        if !args.command.is_empty() {
            // Said, not refused: the reference ignores it silently, and a misspelt --on-miss
            // should not pass unnoticed.
            eprintln!(
                "mcp-cassette replay: the server command after the cassette is only used by --on-miss passthrough; it is ignored"
            );
        }
        None
    };

    let (index, redactor) = load(&args)?;
    let mut passthrough = live_target.map(|target| passthrough(&args, &index, &redactor, target));
    let index = Arc::new(index);
    let usage = Arc::new(Usage::new(Arc::clone(&index)));
    let mut session = Session::new(index, redactor, on_miss).tracking(Arc::clone(&usage));
    let mut handoff = match &args.exec_report {
        Some(dir) => Some(Handoff::create(dir).map_err(|e| {
            anyhow!(
                "mcp-cassette replay: failed to open the exec report in {}: {e}",
                dir.display()
            )
        })?),
        None => None,
    };

    let mut diag = std::io::stderr();
    if std::io::stdin().is_terminal() {
        eprintln!(
            "mcp-cassette replay: serving {} on stdio; waiting for an MCP client's JSON-RPC lines on stdin (Ctrl-D ends the session)",
            args.cassette.display()
        );
    }
    let stdout = std::io::stdout();
    let mut to_exec = |record: MissRecord| {
        if let Some(handoff) = handoff.as_mut() {
            // Best effort: exec reports a replay that left no end line.
            let _ = handoff.miss(record.to_json());
        }
    };
    let observer: Option<&mut dyn FnMut(MissRecord)> = if args.exec_report.is_some() {
        Some(&mut to_exec)
    } else {
        None
    };
    let mut faults = faults;
    let served = stdio::serve_observed(
        &mut session,
        StoppableStdin::start(),
        stdout.lock(),
        &mut diag,
        passthrough.as_mut(),
        observer,
        faults.as_mut(),
    );
    served.map_err(|e| anyhow!("mcp-cassette replay: failed to read the client's input: {e}"))?;
    stdio::report(&session, passthrough.as_ref(), &mut diag);
    if let Some(faults) = &faults {
        eprintln!("mcp-cassette replay: {}", faults.summary());
    }
    let code = stdio::exit_code(&session, passthrough.as_ref());
    if let Some(handoff) = handoff.as_mut() {
        // exec adds up every replay's counts and reports the unused recordings once.
        let _ = handoff.end(&usage.counts());
        return Ok(code);
    }
    let unused = usage.unused();
    for line in usage::summary(&unused) {
        eprintln!("mcp-cassette replay: {}", escape(&line));
    }
    Ok(unused_code(code, args.fail_on_unused, &unused))
}

/// `--fail-on-unused`: 3 when a recording went unused and nothing else failed
/// (docs/replay.md, "Exit codes").
pub fn unused_code(code: u8, fail_on_unused: bool, unused: &[Unused]) -> u8 {
    if code == 0 && fail_on_unused && !unused.is_empty() {
        UNUSED_EXIT
    } else {
        code
    }
}

/// The exit code of a run that failed only because a recording went unused.
pub const UNUSED_EXIT: u8 = 3;

/// Standard input as the stdio session reads it, ended early by SIGINT or SIGTERM: a replay
/// stopped by a signal still reports its summary and exits with its miss code
/// (docs/replay.md, "Exit codes"), exactly as when the client closes stdin.
///
/// A thread reads stdin and hands the bytes over a channel; another waits for the signals and,
/// when one comes, sends the end of input. The session then ends the way it always does. The
/// handlers are installed before the first byte is read; a signal that arrives before that (the
/// first moments of the process) still ends the process the default way.
struct StoppableStdin {
    chunks: mpsc::Receiver<Vec<u8>>,
    /// What is left of the chunk being read.
    pending: Vec<u8>,
    at: usize,
    ended: bool,
}

impl StoppableStdin {
    fn start() -> Self {
        let (send, chunks) = mpsc::sync_channel::<Vec<u8>>(4);
        let reader = send.clone();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut buf = vec![0_u8; 64 * 1024];
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        buf.truncate(n);
                        if reader.send(buf).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = reader.send(Vec::new());
        });
        // The handlers are installed here, before serving starts, not on the waiting thread:
        // a harness may signal as soon as it has read the first answer.
        let watch = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .ok()
            .and_then(|runtime| {
                use tokio::signal::unix::{SignalKind, signal};
                let entered = runtime.enter();
                let int = signal(SignalKind::interrupt()).ok()?;
                let term = signal(SignalKind::terminate()).ok()?;
                drop(entered);
                Some((runtime, int, term))
            });
        if let Some((runtime, mut int, mut term)) = watch {
            std::thread::spawn(move || {
                runtime.block_on(async {
                    tokio::select! {
                        _ = int.recv() => {}
                        _ = term.recv() => {}
                    }
                });
                let _ = send.send(Vec::new());
            });
        }
        Self {
            chunks,
            pending: Vec::new(),
            at: 0,
            ended: false,
        }
    }
}

impl Read for StoppableStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.pending.len() {
            if self.ended {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(chunk) if !chunk.is_empty() => {
                    self.pending = chunk;
                    self.at = 0;
                }
                _ => {
                    self.ended = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The redaction rules and the index, with the index's warnings on stderr.
/// The live server misses go to, appending to the cassette (redacted as the recording was).
fn passthrough(args: &ReplayArgs, index: &Index, redactor: &Rules, target: Target) -> Passthrough {
    let recorded_redaction = index.redact_requests.then(|| redactor.clone());
    let appender = Appender::new(
        &args.cassette,
        index.header.started_at(),
        index.highest_live,
        recorded_redaction,
    );
    Passthrough::new(target, ClientOptions::default(), appender)
}

fn load(args: &ReplayArgs) -> anyhow::Result<(Index, Rules)> {
    load_cassette(
        &args.cassette,
        args.redact_config.as_deref(),
        &args.volatile,
    )
}

/// [`load`] from its parts (`exec` serves a cassette the same way).
pub(super) fn load_cassette(
    cassette: &Path,
    redact_config: Option<&Path>,
    volatile: &[String],
) -> anyhow::Result<(Index, Rules)> {
    let config = match redact_config {
        Some(path) => Some(RedactConfig::load(path).map_err(|e| anyhow!("{e}"))?),
        None => None,
    };
    let given_hash = config.as_ref().and_then(RedactConfig::hash);
    let redactor = Rules::new(config);
    let index = build_index(cassette, volatile, given_hash.as_deref())?;
    for warning in &index.warnings {
        if warning.starts_with("mcp-cassette") {
            eprintln!("{warning}");
        } else {
            eprintln!(
                "mcp-cassette replay: {}: {warning}; serving it anyway (mcp-cassette lint reports this as an error)",
                cassette.display()
            );
        }
    }
    Ok((index, redactor))
}

/// `replay --listen`: the cassette served over Streamable HTTP until SIGINT or SIGTERM.
fn replay_http(
    args: ReplayArgs,
    listen: &str,
    on_miss: OnMiss,
    faults: Option<Injector>,
) -> anyhow::Result<u8> {
    // Read before anything else, so a missing token is the first thing said.
    let control = args
        .control
        .then(|| Control::new(std::env::var(control::TOKEN_ENV).ok()))
        .transpose()?;
    let (index, redactor) = load(&args)?;
    let (era, era_name) = match index.header.effective_era() {
        Era::Legacy => (EraChoice::Legacy, "legacy"),
        Era::Modern => (EraChoice::Modern, "modern"),
    };
    // The live server: a lone http(s) URL is an HTTP endpoint, anything else a command.
    let live_target = if on_miss == OnMiss::Passthrough {
        match args.command.as_slice() {
            [] => bail!(
                "replay --listen --on-miss passthrough needs the real server command: mcp-cassette replay <cassette> --listen <host:port> --on-miss passthrough -- <server command...>"
            ),
            [url] if url.starts_with("http://") || url.starts_with("https://") => {
                Some(Target::from_command(&[], Some(url), era_name)?)
            }
            command => Some(Target::stdio(command, era)?),
        }
    } else {
        None
    };
    let passthrough = live_target.map(|target| passthrough(&args, &index, &redactor, target));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("replay: failed to start the async runtime: {e}"))?;
    let shutdown = Shutdown::new();
    if args.control {
        // The adapter that started this replay holds its stdin open for as long as it lives;
        // when it ends, however it ends, stdin reaches EOF and the replay stops, so no replay
        // outlives its test run (docs/adapters.md). A plain thread: a blocking read on the
        // runtime's pool would hold up the runtime's shutdown.
        let stop = shutdown.clone();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            stop.trigger();
        });
    }
    let options = Options {
        on_miss,
        paced: args.timing == "recorded",
        body_limit: BODY_LIMIT,
    };
    let mut replay = Replay::new(
        Arc::new(index),
        redactor,
        options,
        passthrough,
        Notes::new(Box::new(std::io::stderr())),
        shutdown.clone(),
    );
    if let Some(control) = control {
        replay = replay.with_control(control);
    }
    if let Some(faults) = faults {
        replay = replay.with_faults(faults);
    }
    let replay = Arc::new(replay);
    let path = args.cassette.display().to_string();
    runtime.block_on(async {
        // Handlers first: a harness may signal as soon as it has read the URL line.
        let stop = signals(shutdown)?;
        let listening = inbound::bind(listen)
            .await
            .map_err(|e| anyhow!("replay: {e}"))?;
        for line in replay.start_lines(&path, &listening) {
            replay.notes().note(&line);
        }
        tokio::spawn(stop);
        http::serve(listening, Arc::clone(&replay)).await;
        anyhow::Ok(())
    })?;
    drop(runtime);
    let finished = replay.finish();
    for line in finished
        .lines
        .iter()
        .chain(&usage::summary(&finished.unused))
    {
        replay.notes().note(line);
    }
    Ok(unused_code(
        finished.code,
        args.fail_on_unused,
        &finished.unused,
    ))
}

/// SIGINT or SIGTERM starts the shutdown. The handlers are installed here, at once; the
/// returned future waits for the first signal.
fn signals(shutdown: Shutdown) -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let install =
        |kind| signal(kind).map_err(|e| anyhow!("replay: failed to install a signal handler: {e}"));
    let mut int = install(SignalKind::interrupt())?;
    let mut term = install(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        shutdown.trigger();
    })
}

/// Reads the cassette and builds its index, refusing a redaction config that is not the one the
/// recording ran under.
fn build_index(
    path: &Path,
    volatile: &[String],
    given_hash: Option<&str>,
) -> anyhow::Result<Index> {
    let reader = Reader::open(path)?;
    let header = reader.header().clone();
    check_config_hash(header.config_hash(), given_hash)
        .map_err(|why| anyhow!(why.replay_message()))?;
    Ok(Index::build_from_file(header, reader, volatile, path)?)
}
