//! The transport-neutral half of recording: what happens to the copies a front-end hands over.
//!
//! A front-end (the stdio proxy today; an HTTP one beside it) moves bytes between client and
//! server untouched and gives the [`Recorder`] a copy of what crossed, through a [`Tap`]. The
//! recorder does everything else on its own thread: line framing, frame/raw classification,
//! redaction, the passive era decision, the sink (streamed behind a deferred header for
//! `--mode once`/`all`, held for `--mode append`) and, at the end, the append. Forwarding never
//! waits for any of it while the capture keeps up (see [`Tap::bytes`]), which is what keeps a
//! recording proxy's cost close to that of the pipes themselves.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use crate::cassette::{Chunk, Dir, Entry, Header, Transport};
use crate::jsonrpc::Id;
use crate::protocol::Era;
use crate::record::append::{self, AppendRefusal, AppendTarget};
use crate::record::capture::{self, Capture};
use crate::record::exchange::{Exchanges, Sent};
use crate::record::output::{Output, Placement};
use crate::record::queue::{Batch, Queue, Span};
use crate::record::sink::StreamSink;
use crate::redact::Redactor;
use crate::transport::child;

/// Where the session goes.
#[derive(Debug)]
pub(crate) enum Target {
    /// A file streamed into (once/all), reached as `placement` says.
    Stream { path: PathBuf, placement: Placement },
    /// Held in memory and appended at the end.
    Append(AppendTarget),
}

/// A recording to make, whatever the transport.
#[derive(Debug)]
pub(crate) struct Recording {
    pub header: Header,
    pub redactor: Option<Redactor>,
    pub target: Target,
    pub started: time::OffsetDateTime,
}

/// What went wrong, for the command to print.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
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

/// What the recorder made of the session.
#[derive(Debug)]
pub(crate) struct Summary {
    /// Entries written (or appended).
    pub entries: usize,
    pub secrets: usize,
    pub era: Option<Era>,
    /// The file at the path was kept because the server said nothing this session
    /// ([`Placement::Beside`] only).
    pub kept_previous: bool,
}

/// What a front-end hands the capture thread; a [`Span`] is where the message's bytes are in
/// the batch it is taken with.
enum Msg {
    /// Part of a byte stream, split into lines on the capture thread.
    Data(Dir, u64, Span),
    /// The body of HTTP exchange `exchange`'s request, one whole message.
    Request {
        t: u64,
        exchange: u64,
        body: Span,
    },
    /// The body of exchange `exchange`'s answer, one whole message, and its HTTP status.
    Answer {
        t: u64,
        exchange: u64,
        body: Span,
        status: u16,
    },
    /// A streamed answer opened (an HTTP front-end's SSE response): `key` names it until it
    /// ends; `exchange` is the POST it answers (none for a standalone GET stream).
    StreamOpen {
        key: u64,
        t: u64,
        exchange: Option<u64>,
        via_get: bool,
    },
    /// The data of one event of an open stream.
    StreamEvent {
        key: u64,
        t: u64,
        data: Span,
    },
    /// The stream ended (or was cut): its one `chunks` entry is written now.
    StreamEnd {
        key: u64,
    },
    /// The server minted a session id; the header says so if it is not written yet.
    Sessioned,
    Eof(Dir),
    Finish,
}

enum Sink {
    Stream(Box<StreamSink>),
    Memory(Vec<Entry>),
}

/// The recorder of one session: its capture thread, and what the end of the session needs.
pub(crate) struct Recorder {
    tap: Tap,
    thread: thread::JoinHandle<io::Result<Captured>>,
    header: Header,
    target: Target,
    started: time::OffsetDateTime,
}

impl Recorder {
    /// Opens the target (a stream file is created or truncated now) and starts the capture
    /// thread; the session's clock starts here.
    pub(crate) fn start(rec: Recording) -> Result<Recorder, RecordError> {
        let sink = match &rec.target {
            Target::Stream { path, placement } => {
                let file = Output::open(path, *placement).map_err(|source| RecordError::Write {
                    path: path.display().to_string(),
                    source,
                })?;
                Sink::Stream(Box::new(StreamSink::new(file, rec.header.clone())))
            }
            Target::Append(_) => Sink::Memory(Vec::new()),
        };
        let tap = Tap {
            queue: Arc::default(),
            clock: Instant::now(),
        };
        let capture = Capture::new(rec.redactor);
        let queue = Arc::clone(&tap.queue);
        // The HTTP recorder says on stderr when the era is decided (docs/record.md).
        let announce = rec.header.transport() == Transport::Http;
        let thread = thread::spawn(move || {
            let _closed = QueueClosed(&queue);
            // Capture should not take a CPU from the forwarders, the client or the server when
            // they wake: it trails behind (its queue is the buffer) rather than delay a message.
            child::make_current_thread_batch();
            capture_loop(&queue, capture, sink, announce)
        });
        Ok(Recorder {
            tap,
            thread,
            header: rec.header,
            target: rec.target,
            started: rec.started,
        })
    }

    /// A handle for a forwarding thread.
    pub(crate) fn tap(&self) -> Tap {
        self.tap.clone()
    }

    /// Ends the session: captures what is still queued, then finishes the file (the deferred
    /// header, a sync) or appends the session to it.
    pub(crate) fn finish(self) -> Result<Summary, RecordError> {
        self.tap.send(Msg::Finish);
        let captured = self
            .thread
            .join()
            .map_err(|_| RecordError::Runtime(io::Error::other("the capture thread failed")))?;
        let mut captured = captured.map_err(|source| RecordError::Write {
            path: target_path(&self.target),
            source,
        })?;
        // A file beside the path replaces it only when the server said something: a server that
        // died at start-up leaves the previous recording as it was.
        let mut kept_previous = false;
        if let Some(output) = captured.output.take() {
            let placed =
                output
                    .finish(captured.from_server > 0)
                    .map_err(|source| RecordError::Write {
                        path: target_path(&self.target),
                        source,
                    })?;
            kept_previous = !placed;
        }
        let entries = match (self.target, captured.entries) {
            (Target::Append(target), Some(entries)) => append::commit(
                target,
                append::Session {
                    header: self.header,
                    entries,
                    saw_initialize: captured.saw_initialize,
                    era: captured.era,
                    started: self.started,
                },
            )?,
            _ => captured.count,
        };
        Ok(Summary {
            entries,
            secrets: captured.secrets,
            era: captured.era,
            kept_previous,
        })
    }
}

fn target_path(target: &Target) -> String {
    match target {
        Target::Stream { path, .. } => path.display().to_string(),
        Target::Append(_) => "the cassette".to_owned(),
    }
}

/// Closes the queue when the capture thread ends, however it ends: the forwarders stop
/// handing it copies (and stop waiting for it to catch up).
struct QueueClosed<'a>(&'a Queue<Msg>);

impl Drop for QueueClosed<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Bytes queued for the capture thread above which the forwarders wait for it. Forwarding never
/// waits while the capture keeps up; in a flood the disk or the redactor cannot keep up with,
/// the forwarders pause, so the copies held are bounded: this much queued, and at most as much
/// (plus one message) in the batch the capture thread is working through (docs/record.md).
/// A 200,000-call flood peaks at the same RSS as when 4 MiB bounded the copies one by one.
const CAPTURE_BUDGET: usize = 1024 * 1024;

/// What a front-end hands the recorder: copies of the bytes that crossed, stamped with the
/// session's clock. Cheap to clone, one per forwarding thread.
#[derive(Clone)]
pub(crate) struct Tap {
    queue: Arc<Queue<Msg>>,
    clock: Instant,
}

impl Tap {
    /// Queues a message that carries no bytes; `false` when the capture thread is gone.
    fn send(&self, msg: Msg) -> bool {
        self.queue.push(&[], |_| msg).is_some()
    }

    /// Hands the capture a copy of `bytes` of the byte stream going `dir` (split into lines
    /// there), then waits while the queue is over budget. `false` when the capture is gone.
    ///
    /// Call it before forwarding the bytes: an answer can only be read after its request was
    /// forwarded, so the transcript then always holds a request ahead of the answer it caused.
    pub(crate) fn bytes(&self, dir: Dir, bytes: &[u8]) -> bool {
        let t = self.now();
        self.queue_copy(bytes, |span| Msg::Data(dir, t, span))
    }

    /// Hands the capture the body of HTTP exchange `exchange`'s request (numbered by the
    /// front-end, unique in the session), one whole message, with the same ordering rule and
    /// waiting as [`Tap::bytes`]. The capture reads it, for its entry and for what the
    /// exchange's answer implies ([`Exchanges`]); the front-end need not.
    pub(crate) fn request(&self, exchange: u64, body: &[u8]) -> bool {
        let t = self.now();
        self.queue_copy(body, |body| Msg::Request { t, exchange, body })
    }

    /// The body of exchange `exchange`'s answer, one whole message, and the status it came
    /// with: recorded beside the frame as `http.status` when it is not the one the request
    /// implies.
    pub(crate) fn answer(&self, exchange: u64, body: &[u8], status: u16) -> bool {
        let t = self.now();
        self.queue_copy(body, |body| Msg::Answer {
            t,
            exchange,
            body,
            status,
        })
    }

    /// A streamed server answer opened: `key` (unique in the session) names it in
    /// [`Tap::stream_event`] and [`Tap::stream_end`]; `exchange` is the POST it answers, whose
    /// request id its entry names; `via_get` marks a standalone GET stream. Its entry takes
    /// this moment as its time.
    pub(crate) fn stream_open(&self, key: u64, exchange: Option<u64>, via_get: bool) -> bool {
        let t = self.now();
        self.send(Msg::StreamOpen {
            key,
            t,
            exchange,
            via_get,
        })
    }

    /// The data of one event of stream `key`, as it arrived; same ordering rule and waiting as
    /// [`Tap::bytes`].
    pub(crate) fn stream_event(&self, key: u64, data: &[u8]) -> bool {
        let t = self.now();
        self.queue_copy(data, |data| Msg::StreamEvent { key, t, data })
    }

    /// Stream `key` ended, whole or cut: its `chunks` entry holds the events seen so far.
    pub(crate) fn stream_end(&self, key: u64) {
        self.send(Msg::StreamEnd { key });
    }

    /// The server gave the session an id (`Mcp-Session-Id`); the header records the fact
    /// (never the value) if it is not written yet.
    pub(crate) fn sessioned(&self) {
        self.send(Msg::Sessioned);
    }

    fn now(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    /// Queues a copy of `bytes` in the message `make` builds, then waits while the queue is
    /// over budget.
    fn queue_copy(&self, bytes: &[u8], make: impl FnOnce(Span) -> Msg) -> bool {
        let Some(queued) = self.queue.push(bytes, make) else {
            return false;
        };
        if queued > CAPTURE_BUDGET {
            while self.queue.over(CAPTURE_BUDGET) {
                thread::sleep(Duration::from_millis(1));
            }
        }
        true
    }

    /// The byte stream going `dir` ended: a last line without its newline is captured.
    pub(crate) fn end(&self, dir: Dir) {
        self.send(Msg::Eof(dir));
    }
}

/// How long the capture thread naps between batches while traffic flows. Bounds how far the
/// transcript trails the wire (and how much the queue holds) during a burst.
const CAPTURE_NAP: Duration = Duration::from_millis(20);

struct Captured {
    count: usize,
    /// Entries the server sent.
    from_server: usize,
    /// The streamed file, flushed and not yet made durable.
    output: Option<Output>,
    entries: Option<Vec<Entry>>,
    secrets: usize,
    era: Option<Era>,
    saw_initialize: bool,
}

/// A streamed answer still open: its entry is written when it closes.
struct OpenStream {
    t: u64,
    id: Option<Id>,
    via_get: bool,
    chunks: Vec<Chunk>,
}

impl OpenStream {
    fn into_entry(self) -> Entry {
        Entry::new_chunks(self.t, Dir::S2c, self.id, self.via_get, self.chunks)
    }
}

fn capture_loop(
    queue: &Arc<Queue<Msg>>,
    mut capture: Capture,
    mut sink: Sink,
    announce: bool,
) -> io::Result<Captured> {
    // Ordered by key, which front-ends hand out in opening order: streams still open at the
    // end are written in that order.
    let mut streams: BTreeMap<u64, OpenStream> = BTreeMap::new();
    let mut exchanges = Exchanges::default();
    let mut announced = false;
    let mut c2s = capture::line_buffer();
    let mut s2c = capture::line_buffer();
    let mut count = 0usize;
    let mut from_server = 0usize;
    let mut last_t = [0u64; 2];
    let slot = |dir: Dir| usize::from(dir == Dir::S2c);
    let mut failure: Option<io::Error> = None;
    let mut batch: Batch<Msg> = Batch::default();
    // What one message gave, emptied into the sink after each: one list for the whole session,
    // not an allocation per message.
    let mut entries: Vec<Entry> = Vec::new();
    let mut more = queue.take_waiting(&mut batch);
    'session: while more {
        let Batch { messages, bytes } = &mut batch;
        for current in messages.drain(..) {
            let finish = match current {
                Msg::Data(dir, t, span) => {
                    last_t[slot(dir)] = t;
                    let splitter = if dir == Dir::C2s { &mut c2s } else { &mut s2c };
                    splitter.feed(&bytes[span], |line| {
                        entries.extend(capture.piece(t, dir, line));
                    });
                    false
                }
                Msg::Request { t, exchange, body } => {
                    last_t[slot(Dir::C2s)] = t;
                    let entry = capture.piece(t, Dir::C2s, capture::message_line(&bytes[body]));
                    exchanges.sent(exchange, Sent::of(entry.as_ref()));
                    entries.extend(entry);
                    false
                }
                Msg::Answer {
                    t,
                    exchange,
                    body,
                    status,
                } => {
                    last_t[slot(Dir::S2c)] = t;
                    let expected = exchanges.answered(exchange).expected;
                    let mut entry = capture.piece(t, Dir::S2c, capture::message_line(&bytes[body]));
                    if let (Some(entry), true) = (&mut entry, status != expected) {
                        entry.set_member("http", &HttpStatus { status });
                    }
                    entries.extend(entry);
                    false
                }
                Msg::StreamOpen {
                    key,
                    t,
                    exchange,
                    via_get,
                } => {
                    let id = exchange.and_then(|n| exchanges.answered(n).id);
                    streams.insert(
                        key,
                        OpenStream {
                            t,
                            id,
                            via_get,
                            chunks: Vec::new(),
                        },
                    );
                    false
                }
                Msg::StreamEvent { key, t, data } => {
                    last_t[1] = t;
                    let frame = capture.event_frame(Dir::S2c, &bytes[data]);
                    if let (Some(stream), Some(frame)) = (streams.get_mut(&key), frame) {
                        stream.chunks.push(Chunk { t, frame });
                    }
                    false
                }
                Msg::StreamEnd { key } => {
                    entries.extend(streams.remove(&key).map(OpenStream::into_entry));
                    false
                }
                Msg::Sessioned => {
                    if let Sink::Stream(s) = &mut sink {
                        s.set_sessioned();
                    }
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
            if announce && !announced {
                if let (Some(era), Some(method)) = (capture.era(), capture.decided_by()) {
                    eprintln!("mcp-cassette: recording as {era} (decided by \"{method}\")");
                    announced = true;
                }
            }
            for entry in entries.drain(..) {
                count += 1;
                from_server += usize::from(entry.dir == Some(Dir::S2c));
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
                break 'session;
            }
        }
        queue.take(&mut batch);
        if batch.messages.is_empty() {
            // Caught up. Waiting on the queue now would make every message the forwarders
            // queue a wake-up of this thread, a context switch on the forwarding path of
            // each. While traffic flows, nap instead and take what piled up in one go; only
            // after a quiet nap, flush to the OS and wait.
            thread::sleep(CAPTURE_NAP);
            queue.take(&mut batch);
            if batch.messages.is_empty() {
                if let (Sink::Stream(s), None) = (&mut sink, &failure) {
                    if let Err(e) = s.flush() {
                        failure = Some(e);
                    }
                }
                more = queue.take_waiting(&mut batch);
            }
        }
    }
    // Lines still open when the pipes closed (a last line without its newline), and streams
    // still open at the end, with the events seen so far.
    let mut tail: Vec<Entry> = streams.into_values().map(OpenStream::into_entry).collect();
    c2s.finish_with(|p| tail.extend(capture.piece(last_t[0], Dir::C2s, p)));
    s2c.finish_with(|p| tail.extend(capture.piece(last_t[1], Dir::S2c, p)));
    let era = capture.era();
    let (entries, output) = match sink {
        Sink::Stream(mut s) => {
            for entry in &tail {
                count += 1;
                from_server += usize::from(entry.dir == Some(Dir::S2c));
                if failure.is_none() {
                    if let Err(e) = s.push(entry, era) {
                        failure = Some(e);
                    }
                }
            }
            if let Some(e) = failure {
                return Err(e);
            }
            (None, Some(s.finish(era)?))
        }
        Sink::Memory(mut v) => {
            v.extend(tail);
            (Some(v), None)
        }
    };
    Ok(Captured {
        count,
        from_server,
        output,
        entries,
        secrets: capture.secrets(),
        era,
        saw_initialize: capture.saw_initialize(),
    })
}

/// The `http` member of an entry.
#[derive(serde::Serialize)]
struct HttpStatus {
    status: u16,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{EntryKind, Reader};

    #[test]
    fn a_front_end_hands_copies_and_gets_a_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.cassette.jsonl");
        let recorder = Recorder::start(Recording {
            header: Header::new("test", "2026-01-01T00:00:00.000Z", Transport::Stdio),
            redactor: None,
            target: Target::Stream {
                path: path.clone(),
                placement: Placement::New,
            },
            started: time::OffsetDateTime::UNIX_EPOCH,
        })
        .unwrap();
        let tap = recorder.tap();
        // A stream cut mid-line, as a pipe delivers it; then a message framed by its front-end.
        assert!(tap.bytes(Dir::C2s, br#"{"jsonrpc":"2.0","id":1,"meth"#));
        assert!(tap.bytes(Dir::C2s, b"od\":\"initialize\",\"params\":{}}\n"));
        assert!(tap.answer(0, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, 200));
        tap.end(Dir::C2s);
        let summary = recorder.finish().unwrap();
        assert_eq!(summary.entries, 2);
        assert_eq!(summary.era, Some(Era::Legacy));
        let reader = Reader::open(&path).unwrap();
        assert_eq!(reader.header().era(), Some(Era::Legacy));
        let frames: Vec<String> = reader
            .map(|e| match e.unwrap().kind {
                EntryKind::Frame(f) => f.text().to_owned(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            frames,
            [
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
            ]
        );
    }

    #[test]
    fn an_http_front_end_records_streams_statuses_and_the_session_fact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.cassette.jsonl");
        let recorder = Recorder::start(Recording {
            header: Header::new("test", "2026-01-01T00:00:00.000Z", Transport::Http),
            redactor: None,
            target: Target::Stream {
                path: path.clone(),
                placement: Placement::New,
            },
            started: time::OffsetDateTime::UNIX_EPOCH,
        })
        .unwrap();
        let tap = recorder.tap();
        assert!(tap.request(1, br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#));
        tap.sessioned();
        // The status a request implies is not recorded.
        assert!(tap.answer(1, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, 200));
        assert!(tap.request(2, br#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#));
        // The stream answers exchange 2: its entry names the request's id.
        assert!(tap.stream_open(0, Some(2), false));
        assert!(tap.stream_open(1, None, true));
        assert!(tap.stream_event(0, br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#));
        assert!(tap.stream_event(0, b"not json"));
        assert!(tap.stream_event(1, br#"{"jsonrpc":"2.0","method":"notifications/message"}"#));
        assert!(tap.stream_event(0, br#"{"jsonrpc":"2.0","id":2,"result":{}}"#));
        tap.stream_end(0);
        // An answer to an exchange not seen: a request is assumed, and 400 is not its status.
        assert!(tap.answer(
            3,
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}"#,
            400
        ));
        // Stream 1 is still open at the end: it is written with what it carried.
        let summary = recorder.finish().unwrap();
        assert_eq!(summary.era, Some(Era::Legacy));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains(r#""sessioned":true"#), "{}", lines[0]);
        assert!(lines[0].contains(r#""era":"legacy""#), "{}", lines[0]);
        assert!(
            lines[4].starts_with(r#"{"type":"chunks","t":"#)
                && lines[4].contains(r#""dir":"s2c","id":2,"chunks":[{"t":"#)
                && lines[4].matches(r#""frame":"#).count() == 2,
            "{}",
            lines[4]
        );
        assert!(
            lines[5].ends_with(r#","http":{"status":400}}"#),
            "{}",
            lines[5]
        );
        assert!(
            lines[6].contains(r#""via":"get","chunks":[{"#),
            "{}",
            lines[6]
        );
        assert_eq!(lines.len(), 7);
        let entries: Vec<_> = Reader::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(matches!(
            &entries[5].kind,
            EntryKind::Chunks { via_get: true, id: None, chunks } if chunks.len() == 1
        ));
    }
}
