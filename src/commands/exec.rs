//! `exec`: a cassette served to a test command in any language, which then fails on a miss
//! (docs/exec.md).
//!
//! An HTTP cassette is served in this process, on the same code as `replay --listen`, and the
//! command gets its URL in `$MCP_CASSETTE_URL`. A stdio cassette cannot be served from here (the
//! test's client spawns its server), so the command gets `$MCP_CASSETTE_COMMAND`, a shell-quoted
//! `replay` command line that reports its misses and usage back to a private directory
//! (`--exec-report`, see [`crate::replay::handoff`]). The command runs in a process group of its
//! own, which SIGINT and SIGTERM are forwarded to; when it exits, the misses and unused
//! recordings are summed up and mapped to the exit code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use serde_json::Value;

use super::replay::{UNUSED_EXIT, load_cassette};
use crate::cassette::Transport;
use crate::cli::ExecArgs;
use crate::replay::handoff::{self, Collected};
use crate::replay::http::control::{Control, MissRecord};
use crate::replay::http::headers::Notes;
use crate::replay::http::{self, BODY_LIMIT, Options, Replay};
use crate::replay::session::Rules;
use crate::replay::usage::{self, Usage};
use crate::replay::{Index, OnMiss};
use crate::report::terminal::escape;
use crate::transport::child::{self, Signal};
use crate::transport::http::inbound::{self, Shutdown};

/// The variable an HTTP cassette's URL is handed over in.
pub const URL_ENV: &str = "MCP_CASSETTE_URL";
/// The variable a stdio cassette's replay command line is handed over in.
pub const COMMAND_ENV: &str = "MCP_CASSETTE_COMMAND";

/// exec's own failures: it could not start (a flag, the cassette, the port).
const START_FAILED: u8 = 125;
/// The command was found but could not be run.
const NOT_RUNNABLE: u8 = 126;
/// The command was not found.
const NOT_FOUND: u8 = 127;
/// The command passed, but a request missed.
const MISSED: u8 = 4;
/// The command passed, but left a stdio replay running.
const LEFT_RUNNING: u8 = 5;
/// Misses named one by one in the summary; the rest are counted.
const MISSES_SHOWN: usize = 20;
/// How long a stdio replay may take to finish on its own after the command exited (its client
/// closing its stdin is usually already under way), then after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

const PREFIX: &str = "mcp-cassette exec: ";

pub fn run(args: ExecArgs) -> ExitCode {
    match exec(args) {
        Ok(code) => ExitCode::from(code),
        Err(Failure { code, error }) => {
            eprintln!("{PREFIX}{error}");
            ExitCode::from(code)
        }
    }
}

/// Why exec stopped before the command's verdict: the message and its exit code.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure {
            code: START_FAILED,
            error,
        }
    }
}

fn exec(args: ExecArgs) -> Result<u8, Failure> {
    let on_miss = match args.on_miss.parse::<OnMiss>() {
        Ok(mode @ (OnMiss::Error | OnMiss::Warn)) => mode,
        Ok(OnMiss::Passthrough) => {
            return Err(anyhow!(
                "--on-miss passthrough is not available under exec (it needs the real server); use replay --on-miss passthrough to extend the cassette first"
            )
            .into());
        }
        Err(()) => {
            return Err(anyhow!(
                "unknown --on-miss \"{}\" (expected error or warn)",
                args.on_miss
            )
            .into());
        }
    };
    let cassette = std::path::absolute(&args.cassette)
        .with_context(|| format!("failed to resolve {}", args.cassette.display()))?;
    let redact_config = args
        .redact_config
        .as_deref()
        .map(std::path::absolute)
        .transpose()
        .context("failed to resolve --redact-config")?;
    let (index, rules) = load_cassette(&cassette, redact_config.as_deref(), &args.volatile)?;
    let index = Arc::new(index);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("failed to start the async runtime: {e}"))?;
    let outcome = match index.header.transport() {
        Transport::Stdio => {
            let replay = StdioReplay {
                cassette: &cassette,
                redact_config: redact_config.as_deref(),
                args: &args,
                on_miss,
            };
            runtime.block_on(run_stdio(replay, &args.command, Arc::clone(&index)))?
        }
        _ => {
            let listen = args.listen.as_deref().unwrap_or("127.0.0.1:0");
            runtime.block_on(run_http(
                &cassette,
                index,
                rules,
                on_miss,
                listen,
                &args.command,
            ))?
        }
    };
    Ok(verdict(&outcome, on_miss, args.fail_on_unused))
}

/// What a run left to judge.
struct Outcome {
    status: ExitStatus,
    /// Miss records, as the control channel writes them.
    misses: Vec<Value>,
    unused: Vec<usage::Unused>,
    /// Stdio replays still running after the command exited (stopped since).
    left_running: Vec<u32>,
}

/// Prints the summary and picks the exit code (docs/exec.md, "Exit codes").
fn verdict(outcome: &Outcome, on_miss: OnMiss, fail_on_unused: bool) -> u8 {
    let failing: Vec<&Value> = outcome
        .misses
        .iter()
        .filter(|m| m["handling"] == "error")
        .collect();
    if !outcome.misses.is_empty() {
        eprintln!("{PREFIX}{} miss(es):", outcome.misses.len());
        for miss in outcome.misses.iter().take(MISSES_SHOWN) {
            eprintln!("{PREFIX}  {}", escape(&describe_miss(miss)));
        }
        if outcome.misses.len() > MISSES_SHOWN {
            eprintln!(
                "{PREFIX}  … and {} more",
                outcome.misses.len() - MISSES_SHOWN
            );
        }
    }
    for line in usage::summary(&outcome.unused) {
        eprintln!("{PREFIX}{}", escape(&line));
    }
    for pid in &outcome.left_running {
        eprintln!(
            "{PREFIX}the stdio replay (pid {pid}) was still running after the command exited; exec stopped it. Close the client's connection to its server before the test ends"
        );
    }
    let code = command_code(outcome.status);
    if code != 0 {
        use std::os::unix::process::ExitStatusExt as _;
        match outcome.status.signal() {
            Some(signal) => eprintln!(
                "{PREFIX}the command was killed by signal {signal}: exit {code} (128 + the signal)"
            ),
            None => eprintln!("{PREFIX}the command failed (exit code {code})"),
        }
        return code;
    }
    if !failing.is_empty() && on_miss == OnMiss::Error {
        eprintln!(
            "{PREFIX}the command passed, but {} request(s) missed: exit {MISSED}",
            failing.len()
        );
        return MISSED;
    }
    if !failing.is_empty() {
        eprintln!(
            "{PREFIX}the command passed, but {} request(s) found no recording to borrow: exit {MISSED}",
            failing.len()
        );
        return MISSED;
    }
    if !outcome.left_running.is_empty() {
        return LEFT_RUNNING;
    }
    if fail_on_unused && !outcome.unused.is_empty() {
        eprintln!(
            "{PREFIX}the command passed, but recordings went unused (--fail-on-unused): exit {UNUSED_EXIT}"
        );
        return UNUSED_EXIT;
    }
    0
}

/// `tools/call "echo": <diagnosis>`.
fn describe_miss(miss: &Value) -> String {
    let method = miss["method"].as_str().unwrap_or("?");
    let mut text = match miss["tool"].as_str() {
        Some(tool) => format!("{method} {}", Value::String(tool.to_owned())),
        None => method.to_owned(),
    };
    if miss["handling"] == "borrowed" {
        text.push_str(" (borrowed another recording)");
    }
    if let Some(diagnosis) = miss["diagnosis"].as_str() {
        text.push_str(": ");
        text.push_str(diagnosis);
    }
    text
}

/// The command's exit code: its own, or 128 + the signal that killed it.
fn command_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from((128 + signal) & 0xff).unwrap_or(1),
        (None, None) => 1,
    }
}

/// An HTTP cassette, served here while the command runs.
async fn run_http(
    path: &Path,
    index: Arc<Index>,
    rules: Rules,
    on_miss: OnMiss,
    listen: &str,
    command: &[String],
) -> Result<Outcome, Failure> {
    let shutdown = Shutdown::new();
    let options = Options {
        on_miss,
        paced: false,
        body_limit: BODY_LIMIT,
    };
    // The miss channel, read here in-process: its token is never handed out, so its endpoint
    // answers nobody else.
    let control = Control::new(Some(token())).map_err(|e| anyhow!("{e}"))?;
    let replay = Arc::new(
        Replay::new(
            index,
            rules,
            options,
            None,
            Notes::new(Box::new(std::io::stderr())),
            shutdown.clone(),
        )
        .with_control(control),
    );
    let listening = inbound::bind(listen)
        .await
        .map_err(|e| anyhow!("failed to serve the cassette: {e}"))?;
    let url = listening.url();
    for line in replay.start_lines(&path.display().to_string(), &listening) {
        replay.notes().note(&line);
    }
    let server = tokio::spawn(http::serve(listening, Arc::clone(&replay)));
    let status = run_command(command, &[(URL_ENV, url.into())]).await;
    shutdown.trigger();
    let _ = server.await;
    let (status, _) = status?;
    let finished = replay.finish();
    let misses = replay
        .control()
        .map(|c| c.drain().0)
        .unwrap_or_default()
        .iter()
        .map(MissRecord::to_json)
        .collect();
    Ok(Outcome {
        status,
        misses,
        unused: finished.unused,
        left_running: Vec::new(),
    })
}

/// What the stdio replay command line is built from.
struct StdioReplay<'a> {
    cassette: &'a Path,
    redact_config: Option<&'a Path>,
    args: &'a ExecArgs,
    on_miss: OnMiss,
}

/// A stdio cassette: the command spawns the replays, which report to a private directory.
async fn run_stdio(
    replay: StdioReplay<'_>,
    command: &[String],
    index: Arc<Index>,
) -> Result<Outcome, Failure> {
    if replay.args.listen.is_some() {
        return Err(anyhow!(
            "--listen serves an HTTP cassette; {} was recorded over stdio",
            replay.cassette.display()
        )
        .into());
    }
    let dir = ReportDir::create()?;
    let exe = std::env::current_exe()
        .map_err(|e| anyhow!("failed to find this program's own path: {e}"))?;
    let mut words: Vec<OsString> = vec![
        exe.into(),
        "replay".into(),
        replay.cassette.into(),
        "--on-miss".into(),
        replay.on_miss.as_str().into(),
    ];
    for decl in &replay.args.volatile {
        words.push("--volatile".into());
        words.push(decl.into());
    }
    if let Some(config) = replay.redact_config {
        words.push("--redact-config".into());
        words.push(config.into());
    }
    words.push("--exec-report".into());
    words.push(dir.path.clone().into());
    let line = shell_line(&words)?;
    let (status, group) = run_command(command, &[(COMMAND_ENV, line.into())]).await?;
    let (collected, left_running) = settle(&dir.path, group).await;
    let usage = Usage::new(index);
    usage.add(&collected.counts);
    if collected.replays == 0 {
        eprintln!("{PREFIX}the command never started the stdio replay (sh -c \"${COMMAND_ENV}\")");
    }
    Ok(Outcome {
        status,
        misses: collected.misses,
        unused: usage.unused(),
        left_running,
    })
}

/// Waits for the stdio replays to write their end, stopping those still running after
/// [`GRACE`]: SIGTERM first (a replay then reports as when stdin closes), with whatever else the
/// command left in its process group `group`, then SIGKILL after another [`GRACE`].
async fn settle(dir: &Path, group: u32) -> (Collected, Vec<u32>) {
    let read = || handoff::collect(dir).unwrap_or_default();
    let running = |c: &Collected| -> Vec<u32> {
        c.unfinished
            .iter()
            .copied()
            .filter(|&pid| child::is_running(pid))
            .collect()
    };
    let wait_out = |deadline: Instant| async move {
        loop {
            let collected = read();
            let pending = running(&collected);
            if pending.is_empty() || Instant::now() >= deadline {
                return (collected, pending);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (collected, pending) = wait_out(Instant::now() + GRACE).await;
    if pending.is_empty() {
        return (collected, pending);
    }
    for &pid in &pending {
        child::send_signal(pid, Signal::Terminate);
    }
    // What kept the replay's stdin open is most likely in the command's group too.
    child::send_group_signal(group, Signal::Terminate);
    let (collected, still) = wait_out(Instant::now() + GRACE).await;
    for &pid in &still {
        child::send_signal(pid, Signal::Kill);
    }
    (collected, pending)
}

/// Runs the command in a process group of its own with `env` added, forwarding SIGINT and
/// SIGTERM to the group, until it exits. Returns its status and its group.
async fn run_command(
    command: &[String],
    env: &[(&str, OsString)],
) -> Result<(ExitStatus, u32), Failure> {
    use tokio::signal::unix::{SignalKind, signal};
    let (program, rest) = command.split_first().ok_or_else(|| {
        anyhow!("no command to run: mcp-cassette exec --cassette <file> -- <command...>")
    })?;
    let install =
        |kind| signal(kind).map_err(|e| anyhow!("failed to install a signal handler: {e}"));
    let mut int = install(SignalKind::interrupt())?;
    let mut term = install(SignalKind::terminate())?;
    let mut spawned = tokio::process::Command::new(program);
    spawned.args(rest).process_group(0);
    for (name, value) in env {
        spawned.env(name, value);
    }
    let mut running = spawned.spawn().map_err(|e| spawn_failure(program, &e))?;
    let pgid = running.id().unwrap_or(0);
    loop {
        tokio::select! {
            status = running.wait() => {
                let status = status.map_err(|e| anyhow!("failed to wait for {program}: {e}"))?;
                return Ok((status, pgid));
            }
            _ = int.recv() => child::send_group_signal(pgid, Signal::Interrupt),
            _ = term.recv() => child::send_group_signal(pgid, Signal::Terminate),
        }
    }
}

/// Not found (127) or not runnable (126), as a shell says it.
fn spawn_failure(program: &str, error: &std::io::Error) -> Failure {
    let shown = escape(program);
    match error.kind() {
        std::io::ErrorKind::NotFound => Failure {
            code: NOT_FOUND,
            error: anyhow!("command not found: {shown}"),
        },
        std::io::ErrorKind::PermissionDenied => Failure {
            code: NOT_RUNNABLE,
            error: anyhow!("command cannot be run: {shown}: permission denied"),
        },
        _ => Failure {
            code: NOT_RUNNABLE,
            error: anyhow!("command cannot be run: {shown}: {error}"),
        },
    }
}

/// A fresh token for the in-process miss channel: 32 hex digits from the kernel's generator.
fn token() -> String {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // Never handed out, so a weaker value only matters to someone guessing the endpoint
        // from this machine within the run: time and pid still make it unpredictable enough.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The private directory stdio replays report to, removed when exec ends.
struct ReportDir {
    path: PathBuf,
}

impl ReportDir {
    fn create() -> anyhow::Result<ReportDir> {
        use std::os::unix::fs::DirBuilderExt as _;
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = base.join(format!("mcp-cassette-exec-{}-{nanos}", std::process::id()));
        // Created, never reused: a directory someone else made first is an error, not ours.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| anyhow!("failed to create {}: {e}", path.display()))?;
        Ok(ReportDir { path })
    }
}

impl Drop for ReportDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `words` as one POSIX shell command line (`sh -c` gives back exactly these words).
fn shell_line(words: &[OsString]) -> anyhow::Result<String> {
    let mut line = String::new();
    for word in words {
        let Some(word) = word.to_str() else {
            bail!(
                "cannot hand {} to a shell: it is not valid UTF-8",
                Path::new(word).display()
            );
        };
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&shell_quote(word));
    }
    Ok(line)
}

/// One word quoted for a POSIX shell: left bare when every character is safe, otherwise in
/// single quotes, where only `'` itself needs care (`'\''`).
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if safe {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_sh() {
        assert_eq!(
            shell_quote("/usr/bin/mcp-cassette"),
            "/usr/bin/mcp-cassette"
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("$HOME;`x`"), "'$HOME;`x`'");
        assert_eq!(shell_quote("tools/call:/a~b"), "'tools/call:/a~b'");
    }

    #[test]
    fn sh_gives_the_words_back() {
        let words = [
            "plain",
            "with space",
            "it's",
            "\"dq\"",
            "$x `y` \\z",
            "new\nline",
            "",
        ];
        let line = shell_line(&words.iter().map(OsString::from).collect::<Vec<_>>()).unwrap();
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s\\0' {line}")])
            .output()
            .unwrap();
        let back: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap()
            .split_terminator('\0')
            .collect();
        assert_eq!(back, words);
    }
}
