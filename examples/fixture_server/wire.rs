//! The little framework every scripted mode shares: the stdin line loop, the parsed view of an
//! incoming message, and helpers that build and write JSON-RPC lines.

use std::io::{self, BufRead, BufWriter, StdoutLock, Write};

use serde_json::{Value, json};

/// One message read from stdin. `id` is absent for notifications, `method` for responses.
pub(crate) struct Incoming {
    pub id: Option<Value>,
    pub method: Option<String>,
    pub params: Value,
}

impl Incoming {
    /// Accepts JSON objects only; anything else on stdin is not a message this loop answers.
    fn from_value(value: Value) -> Option<Self> {
        let Value::Object(mut fields) = value else {
            return None;
        };
        Some(Self {
            id: fields.remove("id"),
            method: match fields.remove("method") {
                Some(Value::String(method)) => Some(method),
                _ => None,
            },
            params: fields.remove("params").unwrap_or(Value::Null),
        })
    }

    /// The request id, or `None` for notifications and for responses the client sent.
    pub(crate) fn request_id(&self) -> Option<&Value> {
        self.method.as_ref()?;
        self.id.as_ref()
    }

    pub(crate) fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("")
    }

    /// A string at a JSON pointer below `params` (e.g. `/arguments/message`).
    pub(crate) fn str_param(&self, pointer: &str) -> Option<&str> {
        self.params.pointer(pointer).and_then(Value::as_str)
    }
}

/// What a mode wants written, in order: JSON-RPC messages, or raw lines a well-behaved server
/// would never print.
pub(crate) enum Emit {
    Json(Value),
    Raw(String),
}

pub(crate) fn result(id: &Value, result: Value) -> Emit {
    Emit::Json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

pub(crate) fn error(id: &Value, code: i64, message: &str) -> Emit {
    Emit::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

pub(crate) fn notification(method: &str, params: Value) -> Emit {
    Emit::Json(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// Buffered stdout; the loop flushes after each input line so an interactive client sees every
/// answer without waiting for the next request.
pub(crate) struct Out {
    writer: BufWriter<StdoutLock<'static>>,
}

impl Out {
    pub(crate) fn new() -> Self {
        Self {
            writer: BufWriter::with_capacity(1 << 16, io::stdout().lock()),
        }
    }

    pub(crate) fn emit(&mut self, emit: &Emit) -> io::Result<()> {
        match emit {
            Emit::Json(value) => serde_json::to_writer(&mut self.writer, value)?,
            Emit::Raw(line) => self.writer.write_all(line.as_bytes())?,
        }
        self.writer.write_all(b"\n")
    }

    pub(crate) fn emit_all(&mut self, emits: &[Emit]) -> io::Result<()> {
        emits.iter().try_for_each(|emit| self.emit(emit))
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// What the loop does after a message.
pub(crate) enum Flow {
    Continue,
    /// Stop reading and exit with this status (after flushing what was written).
    Exit(u8),
}

/// One scripted mode.
pub(crate) trait Server {
    /// Called once before the first read, for modes that speak before being spoken to.
    fn start(&mut self, _out: &mut Out) -> io::Result<()> {
        Ok(())
    }

    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow>;
}

/// Reads newline-delimited JSON from stdin until it closes (then exits 0). Blank lines, lines that
/// are not JSON and JSON that is not an object are skipped with a note on stderr, as the
/// TypeScript SDK's stdio transport skips them.
pub(crate) fn serve(server: &mut impl Server) -> io::Result<u8> {
    let mut input = io::stdin().lock();
    let mut out = Out::new();
    let mut line = Vec::new();
    server.start(&mut out)?;
    out.flush()?;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            out.flush()?;
            return Ok(0);
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let message = serde_json::from_slice(text)
            .ok()
            .and_then(Incoming::from_value);
        let Some(message) = message else {
            eprintln!("fixture_server: skipping a line that is not a JSON-RPC object");
            continue;
        };
        let flow = server.handle(message, &mut out)?;
        out.flush()?;
        if let Flow::Exit(code) = flow {
            return Ok(code);
        }
    }
}
