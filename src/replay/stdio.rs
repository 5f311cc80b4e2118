//! The stdio front-end: client messages on stdin, one per line; answers and the recorded server's
//! own frames on stdout; diagnostics on stderr.
//!
//! Lines are handled strictly in arrival order, a passthrough forward included. Output is buffered
//! and flushed whenever no more input is already waiting, so a pipelining client gets its answers
//! in large writes while an interactive one gets each answer before the replay blocks on its next
//! read. A line that is not a JSON-RPC message is answered with a JSON-RPC error (id `null` unless
//! its id was legible) and a stderr note, and serving goes on.

use std::io::{self, BufWriter, Read, Write};

use super::http::control::{self, Handling, MissRecord};
use super::passthrough::Passthrough;
use super::session::{Outcome, Session};
use super::wire::{Message, Outbound};
use super::{LISTEN_NOT_FORWARDED, OnMiss};
use crate::line::{Line, LineBuffer, OverLimit};
use crate::protocol::LISTEN_METHOD;
use crate::report::terminal::escape;

/// Longest client line accepted whole (a request may carry a large argument).
pub const MAX_LINE: usize = 256 * 1024 * 1024;
const PREFIX: &str = "mcp-cassette replay: ";
/// Malformed client lines noted one by one on stderr; the rest are counted, and the count is
/// noted when the input ends, so a client sending a million bad lines costs a few lines of
/// stderr rather than a hundred megabytes.
pub const MALFORMED_NOTES: u64 = 10;

/// Where diagnostics go, and how many malformed client lines there were.
struct Diagnostics<'a> {
    out: &'a mut dyn Write,
    malformed: u64,
    /// Told of every miss (see [`serve_observed`]).
    misses: Option<&'a mut dyn FnMut(MissRecord)>,
}

impl Diagnostics<'_> {
    fn note(&mut self, message: &str) {
        note(self.out, message);
    }

    /// A note about a malformed client line: the first [`MALFORMED_NOTES`] are written.
    fn malformed(&mut self, message: &str) {
        self.malformed += 1;
        if self.malformed <= MALFORMED_NOTES {
            note(self.out, message);
        }
        if self.malformed == MALFORMED_NOTES {
            note(
                self.out,
                "further malformed lines from the client are answered without a note; they are counted at the end",
            );
        }
    }

    /// The count of malformed lines that were not noted one by one.
    fn finish(&mut self) {
        if self.malformed > MALFORMED_NOTES {
            let unnoted = self.malformed - MALFORMED_NOTES;
            let all = self.malformed;
            note(
                self.out,
                &format!(
                    "{unnoted} more malformed line(s) from the client were answered with errors without a note ({all} in all)"
                ),
            );
        }
    }
}

/// Serves `session` over `input`/`output` until the input ends or the client stops reading.
/// Diagnostics go to `diag`. `passthrough` is required for `--on-miss passthrough`.
pub fn serve(
    session: &mut Session,
    input: impl Read,
    output: impl Write,
    diag: &mut dyn Write,
    passthrough: Option<&mut Passthrough>,
) -> io::Result<()> {
    serve_observed(session, input, output, diag, passthrough, None)
}

/// [`serve`], telling `misses` of every request the recording did not answer exactly, as the
/// HTTP front-end's control channel records it (what `exec` collects, docs/exec.md).
pub fn serve_observed<'a>(
    session: &mut Session,
    mut input: impl Read,
    output: impl Write,
    diag: &'a mut dyn Write,
    mut passthrough: Option<&mut Passthrough>,
    misses: Option<&'a mut dyn FnMut(MissRecord)>,
) -> io::Result<()> {
    let mut diag = Diagnostics {
        out: diag,
        malformed: 0,
        misses,
    };
    let served = serve_lines(
        session,
        &mut input,
        output,
        &mut diag,
        passthrough.as_deref_mut(),
    );
    diag.finish();
    if let Some(p) = passthrough {
        p.close();
    }
    served
}

fn serve_lines(
    session: &mut Session,
    mut input: impl Read,
    output: impl Write,
    diag: &mut Diagnostics<'_>,
    mut passthrough: Option<&mut Passthrough>,
) -> io::Result<()> {
    // A line is handled where it lies in the buffer it was read into: no copy on the way.
    let mut lines = LineBuffer::new(MAX_LINE, OverLimit::Skip { keep: 0 });
    let mut out = BufWriter::with_capacity(1 << 16, output);
    let mut line_no = 0u64;
    if session.server_requests() > 0 {
        diag.note(&format!(
            "{} server-initiated request(s) in the cassette are not replayed",
            session.server_requests()
        ));
    }
    let initial = session.take_initial();
    if write_all(&mut out, &initial)
        .and_then(|()| out.flush())
        .is_err()
    {
        return Ok(());
    }
    loop {
        let Some(found) = lines.advance() else {
            if lines.is_finished() {
                break;
            }
            // Nothing more is waiting: what was answered goes out before the read blocks.
            if !lines.has_buffered() && out.flush().is_err() {
                break;
            }
            lines.fill_from(&mut input)?;
            continue;
        };
        line_no += 1;
        let written = match lines.get(found) {
            Line::Whole { bytes, .. } => handle_bytes(
                session,
                bytes,
                line_no,
                &mut out,
                diag,
                passthrough.as_deref_mut(),
            ),
            Line::TooLong {
                len, terminated, ..
            } => {
                // Counted with its newline, as the limit's message has always said.
                let n = len + usize::from(terminated);
                diag.malformed(
                    &format!(
                        "line {line_no} from the client is {n} bytes, over the {MAX_LINE}-byte limit; answered with error -32600"
                    ),
                );
                let answer = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":-32600,\"message\":\"mcp-cassette replay: invalid request: a line of {n} bytes is over the {MAX_LINE}-byte limit\"}}}}"
                );
                write_all(&mut out, &[Outbound::Owned(answer)])
            }
        };
        // The client stopped reading: nothing more can reach it.
        if written.is_err() {
            break;
        }
    }
    let _ = out.flush();
    Ok(())
}

/// One line from the client (terminator removed), whatever its bytes.
fn handle_bytes(
    session: &mut Session,
    line: &[u8],
    line_no: u64,
    out: &mut BufWriter<impl Write>,
    diag: &mut Diagnostics<'_>,
    passthrough: Option<&mut Passthrough>,
) -> io::Result<()> {
    match std::str::from_utf8(line) {
        Err(_) => {
            diag.malformed(&format!(
                "line {line_no} from the client is not valid UTF-8; answered with error -32700"
            ));
            let answer = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"mcp-cassette replay: parse error: the line is not valid UTF-8\"}}";
            write_all(out, &[Outbound::Owned(answer.to_owned())])
        }
        Ok(text) if text.trim().is_empty() => Ok(()),
        Ok(text) => handle_line(session, text, line_no, out, diag, passthrough),
    }
}

fn handle_line(
    session: &mut Session,
    text: &str,
    line_no: u64,
    out: &mut BufWriter<impl Write>,
    diag: &mut Diagnostics<'_>,
    passthrough: Option<&mut Passthrough>,
) -> io::Result<()> {
    let handled = match session.handle_text(text) {
        Ok(h) => h,
        Err(bad) => {
            diag.malformed(
                &format!(
                    "line {line_no} from the client is not a JSON-RPC message ({}); answered with error {}",
                    bad.detail(),
                    bad.code()
                ),
            );
            return write_all(out, &[Outbound::Owned(bad.answer())]);
        }
    };
    let mut exchange = handled.exchange;
    let request = match handled.message.as_deref() {
        Some(Message::Request(r)) => Some(r),
        _ => None,
    };
    if let (Some(observe), Some(request)) = (diag.misses.as_deref_mut(), request) {
        let handling = match &exchange.outcome {
            Outcome::Missed { reason, diagnosis } => Some((
                if session.on_miss() == OnMiss::Passthrough {
                    Handling::Forwarded
                } else {
                    Handling::Error
                },
                reason,
                diagnosis,
            )),
            Outcome::Borrowed { reason, diagnosis } => {
                Some((Handling::Borrowed, reason, diagnosis))
            }
            _ => None,
        };
        if let Some((handling, reason, diagnosis)) = handling {
            observe(MissRecord {
                session: 1,
                session_id: None,
                id: request.id.clone(),
                method: request.method.clone(),
                tool: control::tool_of(request),
                handling,
                reason: reason.clone(),
                diagnosis: diagnosis.clone(),
            });
        }
    }
    match (&exchange.outcome, request) {
        (Outcome::Missed { diagnosis, .. }, Some(request)) => {
            let shown = session.redactor().redact_text(&request.method).0;
            diag.note(&format!("fingerprint miss for \"{shown}\": {diagnosis}"));
            if session.on_miss() == OnMiss::Passthrough {
                match passthrough {
                    Some(p) if request.method != LISTEN_METHOD => {
                        // Everything answered so far goes out before the wait.
                        out.flush()?;
                        exchange.answer = Some(p.forward(request, text));
                    }
                    _ => diag.note(LISTEN_NOT_FORWARDED),
                }
            }
        }
        (Outcome::Borrowed { diagnosis, .. }, Some(request)) => {
            let shown = session.redactor().redact_text(&request.method).0;
            diag.note(
                &format!(
                    "answered \"{shown}\" with another recording of the same method (--on-miss warn): {diagnosis}"
                ),
            );
        }
        (Outcome::Rejected { detail }, _) => {
            diag.malformed(&format!(
                "line {line_no} from the client was answered with error -32600: {detail}"
            ));
        }
        _ => {}
    }
    if !exchange.before.is_empty() && exchange.answer.is_some() {
        // What the server said before its answer (progress, log messages) goes out on its own,
        // and the answer a moment later, as on the wire. Some clients — the official TypeScript
        // SDK among them — run notification handlers on a later tick than responses, so a
        // progress notification that arrives in the same read as its request's answer finds
        // the request already settled and is dropped.
        for frame in exchange.before.iter().chain(&exchange.streamed) {
            frame.write_line(out)?;
        }
        out.flush()?;
        std::thread::sleep(BEFORE_ANSWER_PAUSE);
        for frame in exchange.answer.iter().chain(&exchange.after) {
            frame.write_line(out)?;
        }
        return Ok(());
    }
    for frame in exchange.frames() {
        frame.write_line(out)?;
    }
    Ok(())
}

/// The gap between frames recorded ahead of an answer and the answer itself (see `handle_line`).
const BEFORE_ANSWER_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

fn write_all(out: &mut impl Write, frames: &[Outbound]) -> io::Result<()> {
    for f in frames {
        f.write_line(out)?;
    }
    Ok(())
}

/// One diagnostic line. What the client sent and what the cassette holds is shown inert
/// (docs/replay.md, "Bad input"): the same escaping as every text report.
fn note(diag: &mut dyn Write, message: &str) {
    let _ = writeln!(diag, "{PREFIX}{}", escape(message));
}

/// The exit status a finished session earns: `error` fails on any miss, `warn` never, and
/// `passthrough` only when a forward failed.
pub fn exit_code(session: &Session, passthrough: Option<&Passthrough>) -> u8 {
    match session.on_miss() {
        OnMiss::Error if session.stats().misses > 0 => 1,
        OnMiss::Passthrough if passthrough.is_some_and(|p| p.failures > 0) => 1,
        _ => 0,
    }
}

/// Writes the end-of-session summary to `diag`.
pub fn report(session: &Session, passthrough: Option<&Passthrough>, diag: &mut dyn Write) {
    let path = passthrough.map(|p| p.path().display().to_string());
    let forwarded = passthrough
        .zip(path.as_deref())
        .map(|(p, path)| (p.appended, p.failures, path));
    for line in session.summary(forwarded) {
        note(diag, &line);
    }
}
