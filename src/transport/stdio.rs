//! A server run as a child process, speaking newline-delimited messages over its pipes.
//!
//! Three things set this apart from a plain `Command::spawn`:
//!
//! * **Bounded lines, bounded queue.** Stdout is read on its own task into lines of at most
//!   [`StdioOptions::max_line`] bytes (64 MiB by default: a 20 MB `tools/list` is fine, an
//!   endless line is not). A longer line is dropped as it streams in and reported by size. The
//!   lines read ahead of the consumer hold at most [`StdioOptions::queue_bytes`] (16 MiB by
//!   default; one line is always let through, however long): past that the task stops reading
//!   and the server blocks on its full pipe until lines are taken. So memory stays bounded
//!   whatever the server prints, however fast (docs/check.md states the bound).
//! * **Prompt death notice.** When stdout closes, the next read does not wait out a request
//!   timeout: it reaps the child (for at most a second), and reports its exit status with the
//!   tail of its stderr.
//! * **Stderr kept and passed on.** The child's stderr goes through a pipe: every byte is
//!   copied to our stderr as it arrives (the user sees the server's own diagnostics, as with an
//!   inherited stderr) and the last [`StdioOptions::stderr_tail`] bytes are kept for the error
//!   message when the server dies.
//!
//! Shutting down follows the stdio transport's rules: end stdin, give the server a moment to
//! leave on its own, then SIGTERM, then SIGKILL after two seconds. A well-behaved server that
//! exits on end-of-input is never waited on longer than it takes to exit.

use std::collections::VecDeque;
use std::fmt;
use std::io::Write as _;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use super::child::{Signal, send_signal};
use super::line::fill_from;
use crate::line::{Line, LineBuffer, OverLimit};

/// Default bound on one stdout line.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// Default bound on the bytes of stdout lines read ahead of the consumer.
pub const QUEUE_BYTES: usize = 16 * 1024 * 1024;

/// Default amount of stderr kept for error messages.
pub const STDERR_TAIL: usize = 4 * 1024;

/// How long a server gets to exit on its own once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_millis(100);
/// How long a server gets to honour SIGTERM.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long a server whose stdout closed gets to report an exit status.
const REAP_WAIT: Duration = Duration::from_secs(1);
/// How long the stderr pump gets to drain once the server is gone.
const STDERR_DRAIN: Duration = Duration::from_millis(250);
/// Stdout lines buffered ahead of the reader, at most, however short.
const LINE_QUEUE: usize = 4096;
/// What a queued line costs beyond its bytes (its slot and allocation), so that a flood of
/// empty lines is bounded by the byte budget too.
const LINE_OVERHEAD: usize = 64;

/// Knobs of [`StdioTransport::spawn`].
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// Longest stdout line accepted, in bytes (without its newline).
    pub max_line: usize,
    /// Bytes of stdout lines held ahead of the consumer before reading pauses (one line is
    /// always let through, however long).
    pub queue_bytes: usize,
    /// Bytes of stderr kept for [`Exit::stderr_tail`].
    pub stderr_tail: usize,
    /// Copy the child's stderr to ours as it arrives.
    pub echo_stderr: bool,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line: MAX_LINE,
            queue_bytes: QUEUE_BYTES,
            stderr_tail: STDERR_TAIL,
            echo_stderr: true,
        }
    }
}

/// One line of the child's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// The bytes of a line, without its `\n` (and without one `\r` before it).
    Line(Vec<u8>),
    /// A line longer than the bound, dropped; `bytes` is how long it was.
    TooLong { bytes: usize },
}

/// How a server that stopped talking ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// `None` when stdout closed but the process had not exited a second later.
    pub status: Option<ExitStatus>,
    /// The last few KiB of its stderr, lossily decoded, trailing whitespace trimmed.
    pub stderr_tail: String,
    /// The stderr was copied to ours as it arrived ([`StdioOptions::echo_stderr`]), so a
    /// message points at it instead of printing it a second time.
    pub stderr_echoed: bool,
}

impl Exit {
    /// One sentence: `the server exited with status 7`, `the server was killed by signal 9`,
    /// or `the server closed its stdout`.
    pub fn summary(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("the server exited with status {code}"),
                (None, Some(signal)) => format!("the server was killed by signal {signal}"),
                (None, None) => "the server exited".to_owned(),
            },
            None => "the server closed its stdout".to_owned(),
        }
    }

    /// What follows [`Exit::summary`] in a message: `; its stderr ended with:` and the tail, or
    /// ` (nothing on its stderr)`.
    pub fn tail_note(&self) -> String {
        let mut note = String::new();
        let _ = write_tail(&mut note, &self.stderr_tail, self.stderr_echoed);
        note
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())?;
        write_tail(f, &self.stderr_tail, self.stderr_echoed)
    }
}

/// Appends `; its stderr ended with:` and the tail, indented, when there is one; when the
/// stderr was already shown as it arrived, only says so (a crashing server's last words appear
/// once).
pub fn write_tail(f: &mut impl fmt::Write, tail: &str, echoed: bool) -> fmt::Result {
    if tail.is_empty() {
        return f.write_str(" (nothing on its stderr)");
    }
    if echoed {
        return f.write_str(" (its stderr is above)");
    }
    f.write_str("; its stderr ended with:")?;
    for line in tail.lines() {
        write!(f, "\n  | {line}")?;
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The command has no program (the reference's wording).
    #[error("stdio target: empty command")]
    EmptyCommand,
    #[error("failed to start {program:?}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    /// The server is gone (stdout closed, or stdin refused our write).
    #[error("{0}")]
    Exited(Exit),
    #[error("failed to read the server's stdout: {0}")]
    Read(std::io::Error),
}

enum Event {
    /// A line, with its share of the queue's byte budget (given back when it is taken).
    Line(Vec<u8>, OwnedSemaphorePermit),
    TooLong(usize),
    Failed(std::io::Error),
    Closed,
}

/// The last bytes of a stream, up to a capacity.
struct Tail {
    bytes: VecDeque<u8>,
    capacity: usize,
    dropped: bool,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let overflow = (self.bytes.len() + chunk.len()).saturating_sub(self.capacity);
        if overflow > 0 {
            self.bytes.drain(..overflow);
            self.dropped = true;
        }
        self.bytes.extend(chunk);
    }

    fn text(&self) -> String {
        let bytes: Vec<u8> = self.bytes.iter().copied().collect();
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if self.dropped {
            // The first line was cut somewhere in the middle; start at a whole one.
            if let Some(newline) = text.find('\n') {
                text.drain(..=newline);
            }
        }
        text.trim_end().to_owned()
    }
}

/// A running child server with line-framed stdout and captured stderr.
pub struct StdioTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<Event>,
    stdout_task: JoinHandle<()>,
    stderr_task: Option<JoinHandle<()>>,
    tail: Arc<Mutex<Tail>>,
    stderr_echoed: bool,
    exit: Option<Exit>,
    /// The queue's byte budget, and what of it is free (the reading task has its own handle).
    #[cfg(test)]
    queue: Queue,
}

impl StdioTransport {
    /// Spawns `argv` (program first) with all three standard streams piped. Must be called
    /// within a tokio runtime (with I/O and time enabled).
    pub fn spawn(argv: &[String], options: &StdioOptions) -> Result<Self, StdioError> {
        let (program, args) = argv.split_first().ok_or(StdioError::EmptyCommand)?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| StdioError::Spawn {
                program: program.clone(),
                error,
            })?;
        let stdin = child.stdin.take();
        let (sender, events) = mpsc::channel(LINE_QUEUE);
        let queue = Queue::new(options.queue_bytes);
        let stdout_task = match child.stdout.take() {
            Some(stdout) => {
                tokio::spawn(read_lines(stdout, options.max_line, queue.clone(), sender))
            }
            None => tokio::spawn(async move {
                let _ = sender.send(Event::Closed).await;
            }),
        };
        let tail = Arc::new(Mutex::new(Tail {
            bytes: VecDeque::with_capacity(options.stderr_tail),
            capacity: options.stderr_tail,
            dropped: false,
        }));
        let stderr_task = child.stderr.take().map(|stderr| {
            tokio::spawn(pump_stderr(stderr, Arc::clone(&tail), options.echo_stderr))
        });
        Ok(Self {
            child,
            stdin,
            events,
            stdout_task,
            stderr_task,
            tail,
            stderr_echoed: options.echo_stderr,
            exit: None,
            #[cfg(test)]
            queue,
        })
    }

    /// Bytes of stdout lines queued and not yet taken (with their overhead).
    #[cfg(test)]
    fn queued_bytes(&self) -> usize {
        self.queue.total - self.queue.free.available_permits()
    }

    /// The child's process id, while it has one.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// How the server ended, once that is known.
    pub fn exit(&self) -> Option<&Exit> {
        self.exit.as_ref()
    }

    /// The stderr kept so far.
    pub fn stderr_tail(&self) -> String {
        self.tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .text()
    }

    /// Writes one message and its newline. A server that is gone answers with
    /// [`StdioError::Exited`].
    pub async fn send_line(&mut self, line: &str) -> Result<(), StdioError> {
        if let Some(exit) = &self.exit {
            return Err(StdioError::Exited(exit.clone()));
        }
        let written = match self.stdin.as_mut() {
            Some(stdin) => write_line(stdin, line).await,
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        match written {
            Ok(()) => Ok(()),
            Err(_) => Err(StdioError::Exited(self.reap().await)),
        }
    }

    /// The next stdout line. When stdout has closed, waits (briefly) for the exit status and
    /// answers [`StdioError::Exited`], now and on every later call.
    pub async fn next_line(&mut self) -> Result<Received, StdioError> {
        if let Some(exit) = &self.exit {
            return Err(StdioError::Exited(exit.clone()));
        }
        match self.events.recv().await {
            // The permit goes back as the line leaves the queue.
            Some(Event::Line(bytes, _permit)) => Ok(Received::Line(bytes)),
            Some(Event::TooLong(bytes)) => Ok(Received::TooLong { bytes }),
            Some(Event::Failed(err)) => Err(StdioError::Read(err)),
            Some(Event::Closed) | None => Err(StdioError::Exited(self.reap().await)),
        }
    }

    /// The server stopped talking: collect its status (if it exits within a second) and let
    /// its stderr drain, so the tail holds its last words.
    async fn reap(&mut self) -> Exit {
        if let Some(exit) = &self.exit {
            return exit.clone();
        }
        self.stdin = None;
        let status = tokio::time::timeout(REAP_WAIT, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        if status.is_some() {
            self.drain_stderr().await;
        }
        let exit = Exit {
            status,
            stderr_tail: self.stderr_tail(),
            stderr_echoed: self.stderr_echoed,
        };
        self.exit = Some(exit.clone());
        exit
    }

    async fn drain_stderr(&mut self) {
        if let Some(task) = self.stderr_task.as_mut() {
            if tokio::time::timeout(STDERR_DRAIN, &mut *task)
                .await
                .is_err()
            {
                // A grandchild may hold the pipe open; what arrived so far will do.
                task.abort();
            }
            self.stderr_task = None;
        }
    }

    /// Ends the session: closes stdin, lets the server exit on its own for a moment, then
    /// SIGTERM, then SIGKILL two seconds later. Returns the exit status when one was seen.
    pub async fn close(mut self) -> Option<ExitStatus> {
        self.stdin = None;
        let status = match self.child.try_wait() {
            Ok(Some(status)) => Some(status),
            _ => self.stop().await,
        };
        self.drain_stderr().await;
        self.stdout_task.abort();
        status.or_else(|| self.exit.as_ref().and_then(|exit| exit.status))
    }

    async fn stop(&mut self) -> Option<ExitStatus> {
        if let Ok(Ok(status)) = tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            return Some(status);
        }
        if let Some(pid) = self.child.id() {
            send_signal(pid, Signal::Terminate);
        }
        if let Ok(Ok(status)) = tokio::time::timeout(TERM_GRACE, self.child.wait()).await {
            return Some(status);
        }
        let _ = self.child.start_kill();
        self.child.wait().await.ok()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.stdout_task.abort();
        if let Some(task) = &self.stderr_task {
            task.abort();
        }
    }
}

async fn write_line(stdin: &mut ChildStdin, line: &str) -> std::io::Result<()> {
    // One write per message: a server reading line by line wakes once, not twice.
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    stdin.write_all(&bytes).await?;
    stdin.flush().await
}

/// The byte budget of the stdout queue: a permit per byte, taken by the reading task for each
/// line it queues and given back when the consumer takes the line.
#[derive(Clone)]
struct Queue {
    total: usize,
    free: Arc<Semaphore>,
}

impl Queue {
    fn new(bytes: usize) -> Queue {
        let total = bytes.clamp(1, u32::MAX as usize);
        Queue {
            total,
            free: Arc::new(Semaphore::new(total)),
        }
    }

    /// Waits until a line of `len` bytes fits; a line larger than the whole budget waits for
    /// an empty queue. `None` once the transport is gone.
    async fn admit(&self, len: usize) -> Option<OwnedSemaphorePermit> {
        let cost = len.saturating_add(LINE_OVERHEAD).min(self.total);
        let cost = u32::try_from(cost).unwrap_or(u32::MAX);
        Arc::clone(&self.free).acquire_many_owned(cost).await.ok()
    }
}

/// Splits stdout into lines of at most `max` bytes and queues them within the byte budget,
/// reading no further while the queue is full. An over-long line is dropped as it streams in
/// and reported with its length.
async fn read_lines(
    mut stdout: impl AsyncRead + Unpin,
    max: usize,
    queue: Queue,
    sender: mpsc::Sender<Event>,
) {
    let mut lines = LineBuffer::new(max, OverLimit::Skip { keep: 0 });
    loop {
        let event = match lines.advance().map(|found| lines.get(found)) {
            // A last line that is empty (a lone `\r` before the end) is no line.
            Some(Line::Whole {
                bytes: [],
                terminated: false,
            }) => continue,
            Some(Line::Whole { bytes, .. }) => {
                let line = bytes.to_vec();
                let Some(permit) = queue.admit(line.len()).await else {
                    return;
                };
                Event::Line(line, permit)
            }
            Some(Line::TooLong { len, .. }) => Event::TooLong(len),
            None if lines.is_finished() => {
                let _ = sender.send(Event::Closed).await;
                return;
            }
            None => match fill_from(&mut lines, &mut stdout).await {
                Ok(_) => continue,
                Err(err) => {
                    let _ = sender.send(Event::Failed(err)).await;
                    return;
                }
            },
        };
        if sender.send(event).await.is_err() {
            return;
        }
    }
}

/// Copies the child's stderr to ours as it arrives and keeps its tail.
async fn pump_stderr(mut stderr: impl AsyncRead + Unpin, tail: Arc<Mutex<Tail>>, echo: bool) {
    let mut buf = vec![0_u8; 8 * 1024];
    loop {
        let read = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let chunk = &buf[..read];
        if echo {
            // A blocking write of a few KiB to our own stderr, in order with our notes.
            let _ = std::io::stderr().write_all(chunk);
        }
        tail.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    fn quiet() -> StdioOptions {
        StdioOptions {
            echo_stderr: false,
            ..StdioOptions::default()
        }
    }

    #[test]
    fn lines_are_split_and_cr_stripped() {
        runtime().block_on(async {
            let mut t =
                StdioTransport::spawn(&sh("printf 'a\\r\\nbb\\n\\nlast'"), &quiet()).unwrap();
            let mut got = Vec::new();
            while let Ok(Received::Line(line)) = t.next_line().await {
                got.push(String::from_utf8(line).unwrap());
            }
            assert_eq!(got, ["a", "bb", "", "last"]);
            assert_eq!(
                t.exit().unwrap().summary(),
                "the server exited with status 0"
            );
            t.close().await;
        });
    }

    #[test]
    fn over_long_lines_are_dropped_and_measured() {
        runtime().block_on(async {
            let options = StdioOptions {
                max_line: 10,
                ..quiet()
            };
            let script =
                "printf 'short\\n'; head -c 100000 /dev/zero | tr '\\0' x; printf '\\nafter\\n'";
            let mut t = StdioTransport::spawn(&sh(script), &options).unwrap();
            assert_eq!(
                t.next_line().await.unwrap(),
                Received::Line(b"short".to_vec())
            );
            assert_eq!(
                t.next_line().await.unwrap(),
                Received::TooLong { bytes: 100_000 }
            );
            assert_eq!(
                t.next_line().await.unwrap(),
                Received::Line(b"after".to_vec())
            );
            assert!(matches!(t.next_line().await, Err(StdioError::Exited(_))));
        });
    }

    #[test]
    fn the_queue_is_bounded_in_bytes_and_loses_nothing() {
        runtime().block_on(async {
            let budget = 64 * 1024;
            let options = StdioOptions {
                queue_bytes: budget,
                ..quiet()
            };
            // About 1.3 MB of short lines, twenty times the budget, written as fast as it can.
            let mut t = StdioTransport::spawn(&sh("seq 1 200000"), &options).unwrap();
            // The reader fills the queue up to its budget, then waits for the consumer.
            let full = budget - (LINE_OVERHEAD + 8);
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while t.queued_bytes() < full && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            for _ in 0..10 {
                assert!(t.queued_bytes() <= budget, "{}", t.queued_bytes());
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert!(t.queued_bytes() >= full, "{}", t.queued_bytes());
            for n in 1..=200_000_u32 {
                assert_eq!(
                    t.next_line().await.unwrap(),
                    Received::Line(n.to_string().into_bytes())
                );
                assert!(t.queued_bytes() <= budget);
            }
            assert!(matches!(t.next_line().await, Err(StdioError::Exited(_))));
        });
    }

    #[test]
    fn death_is_reported_with_status_and_stderr_tail() {
        runtime().block_on(async {
            let script = "echo starting >&2; head -c 9000 /dev/zero | tr '\\0' y >&2; echo >&2; echo 'fatal: no config' >&2; exit 7";
            let mut t = StdioTransport::spawn(&sh(script), &quiet()).unwrap();
            let started = std::time::Instant::now();
            let err = loop {
                match t.next_line().await {
                    Ok(_) => {}
                    Err(err) => break err,
                }
            };
            assert!(started.elapsed() < Duration::from_secs(2));
            let StdioError::Exited(exit) = err else {
                panic!("{err}")
            };
            assert_eq!(exit.summary(), "the server exited with status 7");
            assert!(exit.stderr_tail.ends_with("fatal: no config"), "{}", exit.stderr_tail);
            assert!(exit.stderr_tail.len() <= STDERR_TAIL);
            assert!(!exit.stderr_tail.contains("starting"));
            let text = exit.to_string();
            assert!(text.ends_with("\n  | fatal: no config"), "{text}");
            // Later writes and reads report the same death.
            assert!(matches!(t.send_line("{}").await, Err(StdioError::Exited(_))));
            assert!(matches!(t.next_line().await, Err(StdioError::Exited(_))));
        });
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        runtime().block_on(async {
            let err = StdioTransport::spawn(&["/nonexistent/server".to_owned()], &quiet())
                .err()
                .unwrap();
            assert!(
                err.to_string()
                    .starts_with("failed to start \"/nonexistent/server\""),
                "{err}"
            );
            assert!(matches!(
                StdioTransport::spawn(&[], &quiet()),
                Err(StdioError::EmptyCommand)
            ));
        });
    }

    #[test]
    fn close_is_quick_for_a_server_that_leaves_on_eof() {
        runtime().block_on(async {
            let mut t = StdioTransport::spawn(&["cat".to_owned()], &quiet()).unwrap();
            t.send_line("hello").await.unwrap();
            assert_eq!(
                t.next_line().await.unwrap(),
                Received::Line(b"hello".to_vec())
            );
            let started = std::time::Instant::now();
            let status = t.close().await.unwrap();
            assert!(status.success());
            assert!(started.elapsed() < Duration::from_millis(100));
        });
    }

    #[test]
    fn close_terminates_a_server_that_ignores_eof() {
        runtime().block_on(async {
            let t = StdioTransport::spawn(&sh("trap '' HUP; while :; do sleep 1; done"), &quiet())
                .unwrap();
            let started = std::time::Instant::now();
            let status = t.close().await.unwrap();
            assert!(!status.success());
            assert!(started.elapsed() < Duration::from_secs(1));
        });
    }
}
