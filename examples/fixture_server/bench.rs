//! Servers for overhead benchmarks, built so they are never the bottleneck being measured: one
//! reused line buffer, borrowed parsing, a locked buffered stdout flushed only when no more input
//! is already waiting (a pipelining client gets its answers in large writes, an interactive one
//! gets each answer at once).

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

/// Our own read buffer around stdin's: its reads are larger than stdin's internal buffer, so
/// that one stays empty and `buffer()` here tells the whole truth about waiting input.
fn input() -> BufReader<io::StdinLock<'static>> {
    BufReader::with_capacity(1 << 16, io::stdin().lock())
}

fn output() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<CallParams<'a>>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<EchoArguments<'a>>,
}

#[derive(Deserialize)]
struct EchoArguments<'a> {
    #[serde(borrow)]
    message: Option<&'a RawValue>,
}

const INITIALIZE: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"echo-bench","version":"1.0.0"}}"#;
const TOOLS: &str = r#"{"tools":[{"name":"echo","description":"Echo a message back.","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}"#;

/// `echo-bench`: `initialize`, `ping`, `tools/list` and `tools/call echo` (whose text is the
/// `message` argument, copied as raw JSON); other requests get a JSON-RPC error.
pub(crate) fn echo_bench() -> io::Result<u8> {
    let mut input = input();
    let mut out = output();
    let mut line = String::with_capacity(1 << 12);
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            out.flush()?;
            return Ok(0);
        }
        if let Ok(request) = serde_json::from_str::<Request<'_>>(&line) {
            answer(&request, &mut out)?;
        }
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
}

fn answer(request: &Request<'_>, out: &mut impl Write) -> io::Result<()> {
    let (Some(id), Some(method)) = (request.id, request.method.as_deref()) else {
        return Ok(());
    };
    out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
    out.write_all(id.get().as_bytes())?;
    let call = request.params.as_ref();
    match method {
        "initialize" => write!(out, r#","result":{INITIALIZE}}}"#)?,
        "ping" => out.write_all(br#","result":{}}"#)?,
        "tools/list" => write!(out, r#","result":{TOOLS}}}"#)?,
        "tools/call" if call.and_then(|call| call.name.as_deref()) == Some("echo") => {
            let message = call
                .and_then(|call| call.arguments.as_ref())
                .and_then(|arguments| arguments.message)
                .map_or(r#""""#, RawValue::get);
            out.write_all(br#","result":{"content":[{"type":"text","text":"#)?;
            out.write_all(message.as_bytes())?;
            out.write_all(b"}]}}")?;
        }
        "tools/call" => out.write_all(br#","error":{"code":-32602,"message":"unknown tool"}}"#)?,
        _ => out.write_all(br#","error":{"code":-32601,"message":"method not found"}}"#)?,
    }
    out.write_all(b"\n")
}

/// `null`: for every line carrying `"id":`, an empty result for that id; nothing else. The id is
/// cut out of the text without parsing the line (the first `"id":` is taken to be the request's,
/// which holds for clients that write `id` before `params`).
pub(crate) fn null() -> io::Result<u8> {
    let mut input = input();
    let mut out = output();
    let mut line = Vec::with_capacity(1 << 12);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            out.flush()?;
            return Ok(0);
        }
        if let Some(id) = id_text(&line) {
            out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
            out.write_all(id)?;
            out.write_all(b",\"result\":{}}\n")?;
        }
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
}

/// The raw JSON text of the first `"id":` member's value: a string (escapes honoured) or a bare
/// token up to the next delimiter.
fn id_text(line: &[u8]) -> Option<&[u8]> {
    const KEY: &[u8] = br#""id":"#;
    let at = line.windows(KEY.len()).position(|window| window == KEY)?;
    let rest = &line[at + KEY.len()..];
    let start = rest.iter().position(|byte| !byte.is_ascii_whitespace())?;
    let rest = &rest[start..];
    let end = if rest.first() == Some(&b'"') {
        let mut escaped = false;
        1 + rest[1..].iter().position(|&byte| {
            let closes = byte == b'"' && !escaped;
            escaped = byte == b'\\' && !escaped;
            closes
        })? + 1
    } else {
        rest.iter()
            .position(|byte| matches!(byte, b',' | b'}' | b']') || byte.is_ascii_whitespace())
            .unwrap_or(rest.len())
    };
    let id = &rest[..end];
    (!id.is_empty() && id != b"null").then_some(id)
}
