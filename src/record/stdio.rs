//! The stdio recording front-end: a proxy between a client on our stdio and a server run as a
//! child process.
//!
//! Two threads move bytes, client stdin → server stdin and server stdout → client stdout, and
//! hand a copy of each read to the [`Recorder`], which does the rest on its own thread (see
//! `record::recorder`). The main thread waits for the server to exit, forwards SIGINT/SIGTERM
//! to it, and escalates to SIGTERM and SIGKILL when the server does not leave.

use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::cassette::Dir;
use crate::protocol::Era;
use crate::record::recorder::{RecordError, Recorder, Recording, Tap};
use crate::transport::child::{self, Signal};

/// How the session ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub exit_code: u8,
    pub entries: usize,
    pub secrets: usize,
    pub era: Option<Era>,
    /// The file at `-o` was kept: the server said nothing to replace it with.
    pub kept_previous: bool,
}

/// Runs `argv` as the server and proxies to it until it exits; returns its exit code.
pub(crate) fn run(argv: &[String], rec: Recording) -> Result<Outcome, RecordError> {
    let mut server = child::spawn_piped(argv).map_err(RecordError::Spawn)?;
    let pid = server.id();
    let (Some(server_in), Some(server_out)) = (server.stdin.take(), server.stdout.take()) else {
        child::send_signal(pid, Signal::Kill);
        return Err(RecordError::Spawn(io::Error::other(
            "the server's stdio was not piped",
        )));
    };
    let recorder = match Recorder::start(rec) {
        Ok(recorder) => recorder,
        Err(e) => {
            child::send_signal(pid, Signal::Kill);
            let _ = server.wait();
            return Err(e);
        }
    };

    // Client → server. Not joined: a client that never closes stdin must not keep us alive
    // after the server is gone.
    {
        let tap = recorder.tap();
        thread::spawn(move || pump(io::stdin().lock(), server_in, Dir::C2s, &tap));
    }
    // Server → client.
    let (out_done_tx, out_done_rx) = mpsc::channel::<()>();
    {
        let tap = recorder.tap();
        thread::spawn(move || {
            pump(server_out, io::stdout().lock(), Dir::S2c, &tap);
            let _ = out_done_tx.send(());
        });
    }

    let (status, forwarded) = wait_forwarding_signals(server)?;
    // The server is gone; give its stdout pipe a moment to drain (a grandchild may still hold
    // it open, and then we stop waiting).
    let _ = out_done_rx.recv_timeout(Duration::from_secs(2));
    let summary = recorder.finish()?;
    Ok(Outcome {
        exit_code: child::exit_code(status, &forwarded),
        entries: summary.entries,
        secrets: summary.secrets,
        era: summary.era,
        kept_previous: summary.kept_previous,
    })
}

fn pump(mut from: impl Read, mut to: impl Write, dir: Dir, tap: &Tap) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut forwarding = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // The copy goes to the recorder before the bytes go on (see `Tap::bytes`).
        if !tap.bytes(dir, &buf[..n]) {
            break;
        }
        if forwarding && (to.write_all(&buf[..n]).is_err() || to.flush().is_err()) {
            // The other side is gone; keep reading so the transcript stays whole and the
            // writer on this side never blocks on a full pipe.
            forwarding = false;
        }
    }
    drop(to);
    tap.end(dir);
}

/// How long a server gets to honour a forwarded SIGINT before it is sent SIGTERM.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// How long a server gets to honour SIGTERM before it is sent SIGKILL (as `check` allows).
const TERM_GRACE: Duration = Duration::from_secs(2);

/// The signals sent to the server so far, and the escalation they lead to.
#[derive(Debug, Default)]
struct Stopping {
    sent: Vec<Signal>,
    /// The next signal, and when it is due if the server is still there.
    next: Option<(tokio::time::Instant, Signal)>,
}

impl Stopping {
    /// The user sent us `signal`: the first is passed on as it is; any further one (a second
    /// Ctrl-C) escalates at once to the step after the strongest sent so far.
    fn on_user_signal(&mut self, pid: u32, signal: Signal) {
        let signal = match self.sent.last() {
            None => signal,
            Some(Signal::Interrupt) => Signal::Terminate,
            Some(Signal::Terminate | Signal::Kill) => Signal::Kill,
        };
        self.send(pid, signal);
    }

    /// The grace period of the last signal ran out.
    fn on_deadline(&mut self, pid: u32) {
        if let Some((_, signal)) = self.next.take() {
            self.send(pid, signal);
        }
    }

    fn send(&mut self, pid: u32, signal: Signal) {
        child::send_signal(pid, signal);
        self.sent.push(signal);
        let now = tokio::time::Instant::now();
        self.next = match signal {
            Signal::Interrupt => Some((now + INTERRUPT_GRACE, Signal::Terminate)),
            Signal::Terminate => Some((now + TERM_GRACE, Signal::Kill)),
            Signal::Kill => None,
        };
    }
}

/// Waits for the server, passing on SIGINT and SIGTERM meanwhile and escalating as `check`
/// does when the server does not leave: SIGINT, then SIGTERM after [`INTERRUPT_GRACE`], then
/// SIGKILL after [`TERM_GRACE`]; a second signal from the user takes the next step at once.
fn wait_forwarding_signals(
    mut server: std::process::Child,
) -> Result<(std::process::ExitStatus, Vec<Signal>), RecordError> {
    let pid = server.id();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RecordError::Runtime)?;
    runtime.block_on(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt()).map_err(RecordError::Runtime)?;
        let mut terminate = signal(SignalKind::terminate()).map_err(RecordError::Runtime)?;
        let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
        thread::spawn(move || {
            let _ = done_tx.send(server.wait());
        });
        let mut stopping = Stopping::default();
        loop {
            let deadline = stopping.next.map(|(at, _)| at);
            let escalation = async move {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                status = &mut done_rx => {
                    let status = status
                        .map_err(|_| RecordError::Runtime(io::Error::other("lost the server's exit status")))?
                        .map_err(RecordError::Runtime)?;
                    return Ok((status, stopping.sent));
                }
                _ = interrupt.recv() => stopping.on_user_signal(pid, Signal::Interrupt),
                _ = terminate.recv() => stopping.on_user_signal(pid, Signal::Terminate),
                () = escalation => stopping.on_deadline(pid),
            }
        }
    })
}
