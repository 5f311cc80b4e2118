//! The modes that misbehave on cue, so tests can prove the tool survives servers that do: log on
//! stdout, crash, stay silent, print garbage, answer with someone else's id, or answer with more
//! than any sane client wants (a 20 MB list, a 10,000-level schema, a list that never ends).
//! Most wrap `tiny` and change one thing.

use std::fmt::Write as _;
use std::io;

use serde_json::{Value, json};

use crate::tiny::Tiny;
use crate::wire::{Emit, Flow, Incoming, Out, Server};

/// `stdout-log`: tiny, but it chats on stdout, which the stdio spec forbids and real servers do
/// anyway: a banner, a line before and after every answer, and once a JSON-RPC batch array.
pub(crate) struct StdoutLog {
    tiny: Tiny,
    batch_sent: bool,
}

impl StdoutLog {
    pub(crate) fn new() -> Self {
        Self {
            tiny: Tiny::from_env(),
            batch_sent: false,
        }
    }
}

impl Server for StdoutLog {
    fn start(&mut self, out: &mut Out) -> io::Result<()> {
        out.emit(&Emit::Raw("starting up...".to_owned()))
    }

    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        let emits = self.tiny.respond(&message);
        if emits.is_empty() {
            return Ok(Flow::Continue);
        }
        out.emit(&Emit::Raw(format!("[tiny] handling {}", message.method())))?;
        out.emit_all(&emits)?;
        out.emit(&Emit::Raw("[tiny] done".to_owned()))?;
        if !self.batch_sent {
            let batch = json!([
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "batched one"}},
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "batched two"}}
            ]);
            out.emit(&Emit::Json(batch))?;
            self.batch_sent = true;
        }
        Ok(Flow::Continue)
    }
}

/// `crash`: a working tiny server until the first `tools/call`, which kills it with status 3.
pub(crate) struct Crash {
    tiny: Tiny,
}

impl Crash {
    pub(crate) fn new() -> Self {
        Self {
            tiny: Tiny::from_env(),
        }
    }
}

impl Server for Crash {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        if message.request_id().is_some() && message.method() == "tools/call" {
            eprintln!("fixture_server crash: panicked while calling a tool (on purpose)");
            return Ok(Flow::Exit(3));
        }
        out.emit_all(&self.tiny.respond(&message))?;
        Ok(Flow::Continue)
    }
}

/// `silent`: reads (so the client's writes never block) and never says a word.
pub(crate) fn silent() -> io::Result<u8> {
    io::copy(&mut io::stdin().lock(), &mut io::sink())?;
    Ok(0)
}

/// `garbage`: every request gets a line that is not JSON (some of it JSON-RPC-shaped at first).
#[derive(Default)]
pub(crate) struct Garbage {
    count: usize,
}

impl Server for Garbage {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        if message.request_id().is_none() {
            return Ok(Flow::Continue);
        }
        const LINES: [&str; 3] = [
            "this is not json, it is garbage",
            r#"{"jsonrpc":"2.0","id":"#,
            "<<<%%% \u{fffd} garbage %%%>>>",
        ];
        out.emit(&Emit::Raw(LINES[self.count % LINES.len()].to_owned()))?;
        self.count += 1;
        Ok(Flow::Continue)
    }
}

/// `wrong-id`: tiny's answers, each addressed to an id the client never used.
pub(crate) struct WrongId {
    tiny: Tiny,
}

impl WrongId {
    pub(crate) fn new() -> Self {
        Self {
            tiny: Tiny::from_env(),
        }
    }
}

impl Server for WrongId {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        for mut emit in self.tiny.respond(&message) {
            if let Emit::Json(Value::Object(fields)) = &mut emit
                && let Some(id) = fields.get_mut("id")
            {
                *id = wrong(id);
            }
            out.emit(&emit)?;
        }
        Ok(Flow::Continue)
    }
}

fn wrong(id: &Value) -> Value {
    match id {
        Value::Number(number) => match number.as_i64() {
            Some(n) => json!(n.wrapping_add(1_000_000)),
            None => json!(-1),
        },
        Value::String(text) => json!(format!("{text}-not-yours")),
        _ => json!("not-yours"),
    }
}

/// `huge-list`: tiny, whose `tools/list` answer weighs about 20 MB (tiny's tools, then thousands
/// of filler tools with long, harmless descriptions).
pub(crate) struct HugeList {
    tiny: Tiny,
    /// The serialised `tools` array, built on first use and reused for every listing.
    tools_json: Option<String>,
}

/// The size the `tools/list` answer line reaches at least.
pub(crate) const HUGE_LIST_BYTES: usize = 20 * 1024 * 1024;

impl HugeList {
    pub(crate) fn new() -> Self {
        Self {
            tiny: Tiny::from_env(),
            tools_json: None,
        }
    }

    fn tools_json(&mut self) -> &str {
        let tiny = &self.tiny;
        self.tools_json.get_or_insert_with(|| {
            let mut text = String::with_capacity(HUGE_LIST_BYTES + (1 << 16));
            text.push('[');
            for tool in tiny.tools() {
                text.push_str(&tool.to_string());
                text.push(',');
            }
            let filler =
                "Returns the requested record from the archive, one page at a time. ".repeat(14);
            let mut index = 0_u32;
            while text.len() < HUGE_LIST_BYTES {
                index += 1;
                if index > 1 {
                    text.push(',');
                }
                // Plain formatting, not a `Value` per tool: the filler needs no escaping, and
                // building 20 MB this way stays fast even in a debug build.
                let _ = write!(
                    text,
                    r#"{{"name":"filler_{index:05}","description":"Filler tool {index}. {filler}","inputSchema":{{"type":"object","properties":{{"page":{{"type":"integer","description":"Page number"}}}}}}}}"#
                );
            }
            text.push(']');
            text
        })
    }
}

impl Server for HugeList {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        match message.request_id() {
            Some(id) if message.method() == "tools/list" => {
                let id = id.to_string();
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{}}}}}"#,
                    self.tools_json()
                );
                out.emit(&Emit::Raw(line))?;
            }
            _ => out.emit_all(&self.tiny.respond(&message))?,
        }
        Ok(Flow::Continue)
    }
}

/// `deep-schema`: tiny, plus a tool `deep` whose inputSchema nests this many schemas deep. The
/// text is built by string concatenation: a `Value` this deep could not be serialised without
/// deep recursion, and no JSON parser with a recursion limit could read it back.
pub(crate) const DEEP_SCHEMA_LEVELS: usize = 10_000;

pub(crate) struct DeepSchema {
    tiny: Tiny,
}

impl DeepSchema {
    pub(crate) fn new() -> Self {
        Self {
            tiny: Tiny::from_env(),
        }
    }
}

fn deep_schema_text() -> String {
    const OPEN: &str = r#"{"type":"object","properties":{"next":"#;
    const LEAF: &str = r#"{"type":"string","description":"the bottom"}"#;
    let mut text = String::with_capacity(DEEP_SCHEMA_LEVELS * (OPEN.len() + 2) + LEAF.len());
    for _ in 1..DEEP_SCHEMA_LEVELS {
        text.push_str(OPEN);
    }
    text.push_str(LEAF);
    for _ in 1..DEEP_SCHEMA_LEVELS {
        text.push_str("}}");
    }
    text
}

impl Server for DeepSchema {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        match message.request_id() {
            Some(id) if message.method() == "tools/list" => {
                let mut line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":["#);
                for tool in self.tiny.tools() {
                    let _ = write!(line, "{tool},");
                }
                line.push_str(
                    r#"{"name":"deep","description":"A tool whose input schema never seems to end.","inputSchema":"#,
                );
                line.push_str(&deep_schema_text());
                line.push_str("}]}}");
                out.emit(&Emit::Raw(line))?;
            }
            Some(id)
                if message.method() == "tools/call"
                    && message.str_param("/name") == Some("deep") =>
            {
                out.emit(&crate::wire::result(
                    id,
                    json!({"content": [{"type": "text", "text": "deep enough"}]}),
                ))?;
            }
            _ => out.emit_all(&self.tiny.respond(&message))?,
        }
        Ok(Flow::Continue)
    }
}

/// `paginate-forever`: tiny, whose `tools/list` always has another page. Page 0 (no cursor) holds
/// tiny's tools; page N holds one tool `more_N` and points at page N+1.
pub(crate) struct PaginateForever {
    tiny: Tiny,
}

impl PaginateForever {
    pub(crate) fn new() -> Self {
        Self {
            tiny: Tiny::from_env(),
        }
    }
}

impl Server for PaginateForever {
    fn handle(&mut self, message: Incoming, out: &mut Out) -> io::Result<Flow> {
        match message.request_id() {
            Some(id) if message.method() == "tools/list" => {
                let page = message
                    .str_param("/cursor")
                    .and_then(|cursor| cursor.strip_prefix("page-"))
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
                let tools = if page == 0 {
                    self.tiny.tools()
                } else {
                    vec![json!({
                        "name": format!("more_{page}"),
                        "description": format!("Tool found on page {page}."),
                        "inputSchema": {"type": "object"}
                    })]
                };
                let next = format!("page-{}", page.saturating_add(1));
                out.emit(&crate::wire::result(
                    id,
                    json!({"tools": tools, "nextCursor": next}),
                ))?;
            }
            _ => out.emit_all(&self.tiny.respond(&message))?,
        }
        Ok(Flow::Continue)
    }
}

/// `flood`: never reads, and writes 1 MiB notifications to stdout without end, each a JSON
/// array of zeros that a client has to parse through, so a reader that queued whatever arrived
/// would fall ever further behind. Stops when stdout goes away.
pub(crate) fn flood() -> io::Result<u8> {
    let mut line = String::from(
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[0"#,
    );
    while line.len() < (1 << 20) - 8 {
        line.push_str(",0");
    }
    line.push_str("]}}\n");
    write_forever(line.as_bytes())
}

/// `flood-endless`: never reads, and writes one line to stdout that never ends.
pub(crate) fn flood_endless() -> io::Result<u8> {
    write_forever(&[b'x'; 64 * 1024])
}

fn write_forever(bytes: &[u8]) -> io::Result<u8> {
    use std::io::Write as _;
    let mut out = io::stdout().lock();
    loop {
        if out.write_all(bytes).is_err() {
            // The reader is gone: the point was made.
            return Ok(0);
        }
    }
}

/// `pester`: never reads, and sends `ping` requests without end, so a client that answers each
/// one fills the server's stdin pipe and then finds its write blocked for good. Stops when
/// stdout goes away.
pub(crate) fn pester() -> io::Result<u8> {
    use std::io::Write as _;
    let mut out = io::stdout().lock();
    for id in 0u64.. {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"pester-{id}\",\"method\":\"ping\"}}\n");
        if out.write_all(line.as_bytes()).is_err() {
            return Ok(0);
        }
    }
    Ok(0)
}
