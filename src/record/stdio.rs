//! The stdio recording proxy.
//!
//! Three threads move bytes: client stdin → server stdin, server stdout → client stdout, and a
//! capture thread that turns copies of those bytes into cassette entries. Forwarding never waits
//! for capture (parsing, redaction and disk writes happen on the capture thread), which is what
//! keeps the proxy's cost close to that of the pipes themselves. The main thread waits for the
//! server to exit and forwards SIGINT/SIGTERM to it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use crate::cassette::{Dir, Entry, Header};
use crate::protocol::Era;
use crate::record::append::{self, AppendRefusal, AppendTarget};
use crate::record::capture::{self, Capture};
use crate::record::sink::StreamSink;
use crate::redact::Redactor;
use crate::transport::child::{self, Signal};

/// Where the session goes.
#[derive(Debug)]
pub enum Target {
    /// A file opened for streaming (once/all): created or truncated by the caller's rules.
    Stream { path: PathBuf, create_new: bool },
    /// Held in memory and appended at the end.
    Append(AppendTarget),
}

/// A recording to run.
#[derive(Debug)]
pub struct Recording {
    pub argv: Vec<String>,
    pub header: Header,
    pub redactor: Option<Redactor>,
    pub target: Target,
    pub started: time::OffsetDateTime,
}

/// What went wrong, for the command to print.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("record: failed to start server command: {0}")]
    Spawn(#[source] io::Error),
    #[error("record: failed to write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Append(#[from] AppendRefusal),
    #[error("record: {0}")]
    Runtime(#[source] io::Error),
}

/// How the session ended.
#[derive(Debug)]
pub struct Outcome {
    pub exit_code: u8,
    pub entries: usize,
    pub secrets: usize,
    pub era: Option<Era>,
}

enum Msg {
    Data(Dir, u64, Vec<u8>),
    Eof(Dir),
    Finish,
}

enum Sink {
    Stream(Box<StreamSink>),
    Memory(Vec<Entry>),
}

/// Runs the proxy until the server exits; returns its exit code.
pub fn run(rec: Recording) -> Result<Outcome, RecordError> {
    let mut server = child::spawn_piped(&rec.argv).map_err(RecordError::Spawn)?;
    let pid = server.id();
    let (Some(server_in), Some(server_out)) = (server.stdin.take(), server.stdout.take()) else {
        child::send_signal(pid, Signal::Kill);
        return Err(RecordError::Spawn(io::Error::other(
            "the server's stdio was not piped",
        )));
    };

    let sink = match &rec.target {
        Target::Stream { path, create_new } => {
            let opened = if *create_new {
                OpenOptions::new().write(true).create_new(true).open(path)
            } else {
                File::create(path)
            };
            match opened {
                Ok(file) => Sink::Stream(Box::new(StreamSink::new(file, rec.header.clone()))),
                Err(source) => {
                    child::send_signal(pid, Signal::Kill);
                    let _ = server.wait();
                    return Err(RecordError::Write {
                        path: path.display().to_string(),
                        source,
                    });
                }
            }
        }
        Target::Append(_) => Sink::Memory(Vec::new()),
    };

    let clock = Instant::now();
    let (tx, rx) = mpsc::channel::<Msg>();
    let capture = Capture::new(rec.redactor.clone());
    let queue = CaptureQueue {
        tx,
        backlog: Arc::new(Backlog::default()),
    };
    let capture_backlog = Arc::clone(&queue.backlog);
    let capture_thread = thread::spawn(move || {
        let _closed = BacklogClosed(&capture_backlog);
        // Capture should not take a CPU from the forwarders, the client or the server when
        // they wake: it trails behind (its queue is the buffer) rather than delay a message.
        child::make_current_thread_batch();
        capture_loop(rx, capture, sink, &capture_backlog)
    });

    // Client → server. Not joined: a client that never closes stdin must not keep us alive
    // after the server is gone.
    {
        let queue = queue.clone();
        thread::spawn(move || pump(io::stdin().lock(), server_in, Dir::C2s, clock, &queue));
    }
    // Server → client.
    let (out_done_tx, out_done_rx) = mpsc::channel::<()>();
    {
        let queue = queue.clone();
        thread::spawn(move || {
            pump(server_out, io::stdout().lock(), Dir::S2c, clock, &queue);
            let _ = out_done_tx.send(());
        });
    }

    let (status, forwarded) = wait_forwarding_signals(server)?;
    // The server is gone; give its stdout pipe a moment to drain (a grandchild may still hold
    // it open, and then we stop waiting).
    let _ = out_done_rx.recv_timeout(Duration::from_secs(2));
    queue.send(Msg::Finish);
    let captured = capture_thread
        .join()
        .map_err(|_| RecordError::Runtime(io::Error::other("the capture thread failed")))?;
    let captured = captured.map_err(|source| RecordError::Write {
        path: target_path(&rec.target),
        source,
    })?;

    let exit_code = child::exit_code(status, &forwarded);
    let entries = match (rec.target, captured.entries) {
        (Target::Append(target), Some(entries)) => append::commit(
            target,
            append::Session {
                header: rec.header,
                entries,
                saw_initialize: captured.saw_initialize,
                era: captured.era,
                started: rec.started,
            },
        )?,
        _ => captured.count,
    };
    Ok(Outcome {
        exit_code,
        entries,
        secrets: captured.secrets,
        era: captured.era,
    })
}

fn target_path(target: &Target) -> String {
    match target {
        Target::Stream { path, .. } => path.display().to_string(),
        Target::Append(_) => "the cassette".to_owned(),
    }
}

/// Bytes handed to the capture thread and not yet taken in. Forwarding never waits for capture
/// while this stays under [`CAPTURE_BUDGET`]; above it (a flood the disk or the redactor cannot
/// keep up with) the forwarders pause, so the recorder's memory stays bounded whatever the
/// session.
#[derive(Default)]
struct Backlog {
    bytes: AtomicUsize,
    /// The capture thread has ended: nobody will take the backlog in any more.
    closed: AtomicBool,
}

/// Marks the backlog closed when the capture thread ends, however it ends.
struct BacklogClosed<'a>(&'a Backlog);

impl Drop for BacklogClosed<'_> {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Release);
    }
}

/// Capture backlog above which the forwarders wait for the capture thread.
const CAPTURE_BUDGET: usize = 4 * 1024 * 1024;

/// The way to the capture thread, with the count of what is still waiting there.
#[derive(Clone)]
struct CaptureQueue {
    tx: mpsc::Sender<Msg>,
    backlog: Arc<Backlog>,
}

impl CaptureQueue {
    /// Queues a message; `false` when the capture thread is gone.
    fn send(&self, msg: Msg) -> bool {
        self.tx.send(msg).is_ok()
    }

    /// Queues a copy of `bytes`, then waits while the backlog is over budget.
    fn send_data(&self, dir: Dir, t: u64, bytes: &[u8]) -> bool {
        self.backlog.bytes.fetch_add(bytes.len(), Ordering::AcqRel);
        if !self.send(Msg::Data(dir, t, bytes.to_vec())) {
            return false;
        }
        while self.backlog.bytes.load(Ordering::Acquire) > CAPTURE_BUDGET
            && !self.backlog.closed.load(Ordering::Acquire)
        {
            thread::sleep(Duration::from_millis(1));
        }
        true
    }
}

fn pump(mut from: impl Read, mut to: impl Write, dir: Dir, clock: Instant, queue: &CaptureQueue) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut forwarding = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let t = clock.elapsed().as_millis() as u64;
        // Queue the copy before forwarding: an answer can only be read after its request was
        // forwarded, so the transcript always holds a request ahead of the answer it caused.
        if !queue.send_data(dir, t, &buf[..n]) {
            break;
        }
        if forwarding && (to.write_all(&buf[..n]).is_err() || to.flush().is_err()) {
            // The other side is gone; keep reading so the transcript stays whole and the
            // writer on this side never blocks on a full pipe.
            forwarding = false;
        }
    }
    drop(to);
    queue.send(Msg::Eof(dir));
}

/// How long the capture thread naps between batches while traffic flows. Bounds how far the
/// transcript trails the wire (and how much the queue holds) during a burst.
const CAPTURE_NAP: Duration = Duration::from_millis(20);

struct Captured {
    count: usize,
    entries: Option<Vec<Entry>>,
    secrets: usize,
    era: Option<Era>,
    saw_initialize: bool,
}

fn capture_loop(
    rx: mpsc::Receiver<Msg>,
    mut capture: Capture,
    mut sink: Sink,
    backlog: &Backlog,
) -> io::Result<Captured> {
    let mut c2s = capture::line_buffer();
    let mut s2c = capture::line_buffer();
    let mut count = 0usize;
    let mut last_t = [0u64; 2];
    let slot = |dir: Dir| usize::from(dir == Dir::S2c);
    let mut failure: Option<io::Error> = None;
    let mut msg = rx.recv().ok();
    while let Some(current) = msg.take() {
        let mut entries = Vec::new();
        let finish = match current {
            Msg::Data(dir, t, bytes) => {
                last_t[slot(dir)] = t;
                let splitter = if dir == Dir::C2s { &mut c2s } else { &mut s2c };
                splitter.feed(&bytes, |line| entries.extend(capture.piece(t, dir, line)));
                backlog.bytes.fetch_sub(bytes.len(), Ordering::AcqRel);
                false
            }
            Msg::Eof(dir) => {
                let splitter = if dir == Dir::C2s { &mut c2s } else { &mut s2c };
                let t = last_t[slot(dir)];
                splitter.finish_with(|line| entries.extend(capture.piece(t, dir, line)));
                false
            }
            Msg::Finish => true,
        };
        for warning in capture.take_warnings() {
            eprintln!("{warning}");
        }
        for entry in entries {
            count += 1;
            match &mut sink {
                Sink::Stream(s) if failure.is_none() => {
                    if let Err(e) = s.push(&entry, capture.era()) {
                        failure = Some(e);
                    }
                }
                Sink::Stream(_) => {}
                Sink::Memory(v) => v.push(entry),
            }
        }
        if finish {
            break;
        }
        msg = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(mpsc::TryRecvError::Empty) => {
                // Caught up. Blocking in `recv` now would make every chunk the forwarders
                // queue a wake-up of this thread, a context switch on the forwarding path of
                // each message. While traffic flows, nap instead and take what piled up in
                // one go; only after a quiet nap, flush to the OS and block.
                thread::sleep(CAPTURE_NAP);
                match rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(mpsc::TryRecvError::Empty) => {
                        if let (Sink::Stream(s), None) = (&mut sink, &failure) {
                            if let Err(e) = s.flush() {
                                failure = Some(e);
                            }
                        }
                        rx.recv().ok()
                    }
                    Err(mpsc::TryRecvError::Disconnected) => None,
                }
            }
            Err(mpsc::TryRecvError::Disconnected) => None,
        };
    }
    // Lines still open when the pipes closed (a last line without its newline).
    let mut tail = Vec::new();
    c2s.finish_with(|p| tail.extend(capture.piece(last_t[0], Dir::C2s, p)));
    s2c.finish_with(|p| tail.extend(capture.piece(last_t[1], Dir::S2c, p)));
    let era = capture.era();
    let entries = match sink {
        Sink::Stream(mut s) => {
            for entry in &tail {
                count += 1;
                if failure.is_none() {
                    if let Err(e) = s.push(entry, era) {
                        failure = Some(e);
                    }
                }
            }
            if let Some(e) = failure {
                return Err(e);
            }
            s.finish(era)?;
            None
        }
        Sink::Memory(mut v) => {
            v.extend(tail);
            Some(v)
        }
    };
    Ok(Captured {
        count,
        entries,
        secrets: capture.secrets(),
        era,
        saw_initialize: capture.saw_initialize(),
    })
}

/// Waits for the server, forwarding SIGINT and SIGTERM to it meanwhile.
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
        let mut forwarded = Vec::new();
        loop {
            tokio::select! {
                status = &mut done_rx => {
                    let status = status
                        .map_err(|_| RecordError::Runtime(io::Error::other("lost the server's exit status")))?
                        .map_err(RecordError::Runtime)?;
                    return Ok((status, forwarded));
                }
                _ = interrupt.recv() => {
                    child::send_signal(pid, Signal::Interrupt);
                    forwarded.push(Signal::Interrupt);
                }
                _ = terminate.recv() => {
                    child::send_signal(pid, Signal::Terminate);
                    forwarded.push(Signal::Terminate);
                }
            }
        }
    })
}
