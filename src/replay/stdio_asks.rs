//! The stdio front-end's part in replaying the recorded server's own requests (docs/replay.md,
//! "Requests from the server"): each request goes out at its place among an exchange's frames as
//! a line on stdout, what follows it waits for the client's answer (a line on stdin, bounded by
//! `MCP_CASSETTE_TIMEOUT_MS`), and the answer is handed to the session to compare.
//!
//! While a request waits, the client's other lines are kept in arrival order and handled once it
//! is answered (or given up on): the frames after the request, the call's answer among them, go
//! out first, as they did in the recording.

use std::collections::VecDeque;
use std::io::{self, BufWriter, Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::server_request::answers;
use super::session::{Exchange, Session};
use super::stdio::{BEFORE_ANSWER_PAUSE, Diagnostics};
use super::wire::Outbound;
use crate::client::{DEFAULT_TIMEOUT, timeout_from_env};

/// The client's input: read directly, or (when requests from the server may have to wait for an
/// answer) on a thread of its own, so that a read can give up at a deadline.
pub(super) struct Input<R> {
    source: Source<R>,
    /// While a request from the server waits: when a read gives up, with
    /// [`io::ErrorKind::TimedOut`].
    pub(super) deadline: Option<Instant>,
}

enum Source<R> {
    Direct(R),
    Threaded {
        chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
        /// What is left of the chunk being read.
        pending: Vec<u8>,
        at: usize,
        ended: bool,
    },
}

impl<R: Read> Input<R> {
    pub(super) fn direct(input: R) -> Input<R> {
        Input {
            source: Source::Direct(input),
            deadline: None,
        }
    }
}

impl<R: Read + Send + 'static> Input<R> {
    /// Reads `input` on a thread. The thread is not joined: it ends at the end of the input, or
    /// at its next read once the session is over.
    pub(super) fn threaded(mut input: R) -> Input<R> {
        let (send, chunks) = mpsc::sync_channel::<io::Result<Vec<u8>>>(4);
        std::thread::spawn(move || {
            loop {
                let mut buf = vec![0_u8; 64 * 1024];
                let chunk = match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        buf.truncate(n);
                        Ok(buf)
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                if send.send(chunk).is_err() || failed {
                    break;
                }
            }
        });
        Input {
            source: Source::Threaded {
                chunks,
                pending: Vec::new(),
                at: 0,
                ended: false,
            },
            deadline: None,
        }
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (chunks, pending, at, ended) = match &mut self.source {
            Source::Direct(input) => return input.read(buf),
            Source::Threaded {
                chunks,
                pending,
                at,
                ended,
            } => (chunks, pending, at, ended),
        };
        if *at == pending.len() {
            if *ended {
                return Ok(0);
            }
            let next = match self.deadline {
                None => chunks.recv().ok(),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match chunks.recv_timeout(left) {
                        Ok(chunk) => Some(chunk),
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            return Err(io::ErrorKind::TimedOut.into());
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => None,
                    }
                }
            };
            match next {
                None => {
                    *ended = true;
                    return Ok(0);
                }
                Some(chunk) => {
                    *pending = chunk?;
                    *at = 0;
                }
            }
        }
        let n = buf.len().min(pending.len() - *at);
        buf[..n].copy_from_slice(&pending[*at..*at + n]);
        *at += n;
        Ok(n)
    }
}

/// An exchange sent up to a request from the server, waiting for the client's answer.
pub(super) struct Waiting {
    pub(super) deadline: Instant,
    exchange: Exchange,
    /// Frames of the exchange already written.
    written: usize,
    /// The request waited for (an index into the exchange's asks).
    ask: usize,
}

/// Requests from the server in flight on one stdio session.
pub(super) struct Asks {
    pub(super) waiting: Option<Waiting>,
    /// Client lines that came while a request waited, with their line numbers.
    pub(super) backlog: VecDeque<(u64, Vec<u8>)>,
    /// How long a request waits for its answer.
    pub(super) timeout: Duration,
}

impl Default for Asks {
    fn default() -> Asks {
        Asks {
            waiting: None,
            backlog: VecDeque::new(),
            timeout: timeout_from_env().unwrap_or(DEFAULT_TIMEOUT),
        }
    }
}

impl Asks {
    /// Sends an exchange holding requests from the server (`None`: the line was answered
    /// already), up to the first of them.
    pub(super) fn go_on(
        &mut self,
        exchange: Option<Exchange>,
        out: &mut BufWriter<impl Write>,
    ) -> io::Result<()> {
        let Some(exchange) = exchange else {
            return Ok(());
        };
        self.send(exchange, 0, 0, out)
    }

    /// Writes `exchange` from frame `written` and request `ask` on: the frames up to the next
    /// request, then the request, which then waits; or the rest, when no request is left.
    fn send(
        &mut self,
        exchange: Exchange,
        mut written: usize,
        ask: usize,
        out: &mut BufWriter<impl Write>,
    ) -> io::Result<()> {
        let frames: Vec<&Outbound> = exchange.frames().collect();
        let end = exchange.asks.get(ask).map_or(frames.len(), |a| a.at);
        // What the server said before its answer goes out on its own, the answer a moment later
        // (see the stdio front-end's `handle_line`, which does the same without requests).
        let answer_at = exchange.before.len() + exchange.streamed.len();
        let pause = exchange.answer.is_some() && answer_at > written && answer_at < end;
        for (i, frame) in frames.iter().enumerate().take(end).skip(written) {
            if pause && i == answer_at {
                out.flush()?;
                std::thread::sleep(BEFORE_ANSWER_PAUSE);
            }
            frame.write_line(out)?;
        }
        written = end;
        let Some(asked) = exchange.asks.get(ask) else {
            return Ok(());
        };
        asked.frame.write_line(out)?;
        out.flush()?;
        drop(frames);
        self.waiting = Some(Waiting {
            deadline: Instant::now() + self.timeout,
            exchange,
            written,
            ask,
        });
        Ok(())
    }

    /// A whole line from the client while a request waits: its answer, or a line for later.
    pub(super) fn arrived(
        &mut self,
        session: &mut Session,
        bytes: &[u8],
        line_no: u64,
        out: &mut BufWriter<impl Write>,
        diag: &mut Diagnostics<'_>,
    ) -> io::Result<()> {
        let Some(waiting) = self.waiting.as_ref() else {
            self.backlog.push_back((line_no, bytes.to_vec()));
            return Ok(());
        };
        let asked = &waiting.exchange.asks[waiting.ask];
        let message = serde_json::from_slice::<Value>(bytes).ok();
        let Some(message) = message.filter(|m| answers(m, asked)) else {
            self.backlog.push_back((line_no, bytes.to_vec()));
            return Ok(());
        };
        if let Some(diagnosis) = session.ask_answered(asked, &message) {
            let method = session.ask_method(asked).to_owned();
            diag.note(&format!(
                "client answer differs for \"{method}\": {diagnosis}"
            ));
        }
        self.resume(out)
    }

    /// Gives up on the request that waits (`why`: the timeout, the end of the input), and goes
    /// on with what followed it.
    pub(super) fn unanswered(
        &mut self,
        session: &mut Session,
        out: &mut BufWriter<impl Write>,
        diag: &mut Diagnostics<'_>,
        why: &str,
    ) -> io::Result<()> {
        let Some(waiting) = self.waiting.as_ref() else {
            return Ok(());
        };
        let asked = &waiting.exchange.asks[waiting.ask];
        let method = session.ask_method(asked).to_owned();
        if session.ask_unanswered(asked) {
            diag.note(&format!(
                "client answer missing for \"{method}\": {why}; the recording holds the client's answer"
            ));
        }
        self.resume(out)
    }

    /// Goes on after the request that waited.
    fn resume(&mut self, out: &mut BufWriter<impl Write>) -> io::Result<()> {
        let Some(waiting) = self.waiting.take() else {
            return Ok(());
        };
        self.send(waiting.exchange, waiting.written, waiting.ask + 1, out)
    }
}
