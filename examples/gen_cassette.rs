//! Writes a synthetic cassette for the redaction benchmark: a realistic mix of MCP traffic
//! (tool calls and results with prose, code and URLs, tool listings with schemas, progress
//! notifications carrying `progressToken`, streamed answers, raw log lines) with a secret in
//! roughly one entry in 400. Deterministic for a given seed.
//!
//! Usage: `cargo run --release --example gen_cassette -- <out.jsonl> [megabytes=100] [seed=1]`

use std::fs::File;
use std::io::{BufWriter, Write};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the",
    "server",
    "returns",
    "a",
    "list",
    "of",
    "files",
    "in",
    "directory",
    "with",
    "their",
    "sizes",
    "and",
    "modification",
    "times",
    "each",
    "entry",
    "is",
    "separated",
    "by",
    "newline",
    "weather",
    "forecast",
    "for",
    "tomorrow",
    "shows",
    "light",
    "rain",
    "temperature",
    "around",
    "degrees",
    "user",
    "asked",
    "about",
    "invoice",
    "total",
    "amount",
    "due",
    "on",
    "date",
    "repository",
    "contains",
    "several",
    "modules",
    "tests",
    "passed",
    "build",
    "succeeded",
    "model",
    "context",
    "protocol",
    "tool",
    "call",
    "result",
    "content",
    "resource",
    "prompt",
    "schema",
    "argument",
    "value",
    "query",
    "database",
    "rows",
    "selected",
    "from",
    "table",
];

const SECRETS: &[&str] = &[
    "ghp_NOTAREALTOKENFORTESTSONLY0000000000",
    "AKIANOTAREALKEYXXX00",
    "sk-NOT-A-REAL-OPENAI-KEY-000000",
    "xoxb-NOT-A-REAL-SLACK-TOKEN-FIXTURE",
    "AIzaNOT-A-REAL-GOOGLE-API-KEY-000000000",
];

fn prose(rng: &mut Rng, words: usize) -> String {
    let mut s = String::with_capacity(words * 7);
    for i in 0..words {
        if i > 0 {
            s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
        }
        s.push_str(rng.pick(WORDS));
    }
    s
}

struct Out {
    file: BufWriter<File>,
    written: u64,
}

impl Out {
    fn line(&mut self, text: String) -> std::io::Result<()> {
        self.written += text.len() as u64 + 1;
        self.file.write_all(text.as_bytes())?;
        self.file.write_all(b"\n")
    }
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(out) = args.get(1) else {
        eprintln!("usage: gen_cassette <out.jsonl> [megabytes=100] [seed=1]");
        std::process::exit(2);
    };
    let megabytes: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let target = megabytes * 1_000_000;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut w = Out {
        file: BufWriter::new(File::create(out)?),
        written: 0,
    };
    w.line(
        r#"{"type":"header","cassetteVersion":2,"recorder":"mcp-cassette@bench","startedAt":"2026-08-16T00:00:00.000Z","transport":"stdio","command":["npx","-y","bench-server"],"redaction":{"applied":false}}"#.to_owned(),
    )?;
    let mut t = 0u64;
    let mut id = 0u64;
    while w.written < target {
        id += 1;
        t += 1 + rng.below(40);
        let secret = if rng.below(400) == 0 {
            Some(SECRETS[rng.below(SECRETS.len() as u64) as usize])
        } else {
            None
        };
        match rng.below(100) {
            0..=54 => {
                // A tool call and its answer.
                let with_progress = rng.below(3) == 0;
                let meta = if with_progress {
                    format!(r#","_meta":{{"progressToken":{id}}}"#)
                } else {
                    String::new()
                };
                let arg = match secret {
                    Some(s) if rng.below(2) == 0 => format!(r#","apiKey":{}"#, quote(s)),
                    _ => String::new(),
                };
                w.line(format!(
                    r#"{{"type":"frame","t":{t},"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{}","arguments":{{"query":{},"limit":{}{arg}}}{meta}}}}}}}"#,
                    rng.pick(&["search_files", "get_weather", "run_query", "read_page"]),
                    quote(&prose(&mut rng, 6)),
                    rng.below(100),
                ))?;
                if with_progress {
                    for step in 1..=2 {
                        w.line(format!(
                            r#"{{"type":"frame","t":{t},"dir":"s2c","frame":{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":{step},"total":2}}}}}}"#
                        ))?;
                    }
                }
                let words = 100 + rng.below(900) as usize;
                let mut text = prose(&mut rng, words);
                if rng.below(8) == 0 {
                    text.push_str(" see https://docs.example.com/guide/page?ref=bench for details");
                }
                if let Some(s) = secret {
                    text.push_str(&format!(" leaked {s} here"));
                }
                w.line(format!(
                    r#"{{"type":"frame","t":{},"dir":"s2c","frame":{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{}}}],"isError":false}}}}}}"#,
                    t + 3,
                    quote(&text),
                ))?;
            }
            55..=69 => {
                // A resource read answered with a JSON document.
                w.line(format!(
                    r#"{{"type":"frame","t":{t},"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///srv/data/{id}.json"}}}}}}"#
                ))?;
                let mut rows = Vec::new();
                for r in 0..(5 + rng.below(40)) {
                    rows.push(format!(
                        r#"{{"id":{r},"name":{},"score":{}.{},"tags":["a","b"]}}"#,
                        quote(&prose(&mut rng, 2)),
                        rng.below(100),
                        rng.below(1000)
                    ));
                }
                let doc = format!("[{}]", rows.join(","));
                w.line(format!(
                    r#"{{"type":"frame","t":{},"dir":"s2c","frame":{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"file:///srv/data/{id}.json","mimeType":"application/json","text":{}}}]}}}}}}"#,
                    t + 2,
                    quote(&doc)
                ))?;
            }
            70..=79 => {
                // A tool listing with input schemas.
                w.line(format!(
                    r#"{{"type":"frame","t":{t},"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}}}"#
                ))?;
                let mut tools = Vec::new();
                for n in 0..(3 + rng.below(10)) {
                    tools.push(format!(
                        r#"{{"name":"tool_{n}","description":{},"inputSchema":{{"type":"object","properties":{{"path":{{"type":"string","description":{}}},"limit":{{"type":"integer","minimum":1}}}},"required":["path"]}}}}"#,
                        quote(&prose(&mut rng, 20)),
                        quote(&prose(&mut rng, 8))
                    ));
                }
                w.line(format!(
                    r#"{{"type":"frame","t":{},"dir":"s2c","frame":{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]}}}}}}"#,
                    t + 1,
                    tools.join(",")
                ))?;
            }
            80..=91 => {
                // A streamed answer.
                let mut chunks = Vec::new();
                for c in 0..3 {
                    chunks.push(format!(
                        r#"{{"t":{},"frame":{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":{}}}}}}}"#,
                        t + c,
                        quote(&prose(&mut rng, 30))
                    ));
                }
                let tail = match secret {
                    Some(s) => format!(" Authorization: Bearer {s}"),
                    None => String::new(),
                };
                chunks.push(format!(
                    r#"{{"t":{},"frame":{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{}}}]}}}}}}"#,
                    t + 4,
                    quote(&format!("{}{tail}", prose(&mut rng, 200)))
                ));
                w.line(format!(
                    r#"{{"type":"chunks","t":{t},"dir":"s2c","id":{id},"chunks":[{}]}}"#,
                    chunks.join(",")
                ))?;
            }
            _ => {
                // A log line the server printed on stdout, sometimes structured.
                let data = match (rng.below(2), secret) {
                    (0, Some(s)) => format!(
                        r#"{{"level":"debug","password":{},"msg":"login"}}"#,
                        quote(s)
                    ),
                    (0, None) => format!(
                        r#"{{"level":"debug","msg":{}}}"#,
                        quote(&prose(&mut rng, 12))
                    ),
                    (_, Some(s)) => format!("[debug] using credential {s}"),
                    (_, None) => format!("[info] {}", prose(&mut rng, 12)),
                };
                w.line(format!(
                    r#"{{"type":"raw","t":{t},"dir":"s2c","data":{}}}"#,
                    quote(&data)
                ))?;
            }
        }
    }
    w.file.flush()
}
