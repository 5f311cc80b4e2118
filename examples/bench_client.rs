//! A benchmark driver for anything that speaks newline-delimited JSON-RPC on stdio: it spawns a
//! command, sends `tools/call echo` requests and measures how fast the answers come back.
//!
//! ```text
//! bench_client [--pipelined|--sequential|--cold|--print-requests] [--count N] [--initialize]
//!              [--same] [--check] -- <command...>
//! ```
//!
//! - `--pipelined` (default): a writer thread sends all N requests while the main thread reads N
//!   answer lines; measures from the first request written to the last answer read.
//! - `--sequential`: one request, wait for its answer, the next.
//! - `--check` (with `--sequential`): each answer is also parsed as JSON and its `id` and
//!   `result` checked, as any client that uses its answers must; a bad answer ends the run with
//!   an error. Without it the answer line is only read up to its newline.
//! - `--cold`: from spawning the command to its exit, for a client that sends `initialize`,
//!   `notifications/initialized` and `tools/list`, then closes stdin (what a test suite spawning a
//!   server per test pays).
//! - `--print-requests`: print the requests the other modes send (with `--initialize`, the
//!   handshake first) and exit, to feed a recorder or `/usr/bin/time`.
//!
//! Requests carry `{"message": "bench-<i>"}`, or the same message every time with `--same`. Every
//! answer line is counted as one answer: the driver is meant for servers (and recordings of them)
//! that send nothing unprompted, and for a line-echo responder such as `cat`.
//!
//! Output: one JSON object, `{"mode":…,"count":…,"seconds":…,"rps":…}`.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::thread;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Pipelined,
    Sequential,
    Cold,
    Print,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Pipelined => "pipelined",
            Mode::Sequential => "sequential",
            Mode::Cold => "cold",
            Mode::Print => "print-requests",
        }
    }
}

struct Options {
    mode: Mode,
    count: usize,
    initialize: bool,
    same: bool,
    check: bool,
    command: Vec<String>,
}

const USAGE: &str = "usage: bench_client [--pipelined|--sequential|--cold|--print-requests] [--count N] [--initialize] [--same] [--check] -- <command...>";

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        mode: Mode::Pipelined,
        count: 5000,
        initialize: false,
        same: false,
        check: false,
        command: Vec::new(),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--pipelined" => options.mode = Mode::Pipelined,
            "--sequential" => options.mode = Mode::Sequential,
            "--cold" => options.mode = Mode::Cold,
            "--print-requests" => options.mode = Mode::Print,
            "--initialize" => options.initialize = true,
            "--same" => options.same = true,
            "--check" => options.check = true,
            "--count" => {
                let n = args.next().ok_or("--count needs a number")?;
                options.count = n
                    .parse()
                    .map_err(|_| format!("--count: not a number: {n}"))?;
            }
            "--" => {
                options.command = args.by_ref().collect();
                break;
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if options.check && options.mode != Mode::Sequential {
        return Err(format!("--check goes with --sequential\n{USAGE}"));
    }
    if options.command.is_empty() && options.mode != Mode::Print {
        return Err(format!("missing command after --\n{USAGE}"));
    }
    Ok(options)
}

fn initialize_line() -> String {
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}"#.to_owned()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call_line(i: usize, same: bool) -> String {
    let message = if same {
        "bench".to_owned()
    } else {
        format!("bench-{i}")
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{message}"}}}}}}"#,
        i + 1
    )
}

fn spawn(command: &[String]) -> io::Result<(Child, ChildStdin, BufReader<ChildStdout>)> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| io::Error::other("empty command"))?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout"))?;
    Ok((child, stdin, BufReader::with_capacity(1 << 16, stdout)))
}

fn read_answer(out: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<()> {
    line.clear();
    if out.read_until(b'\n', line)? == 0 {
        return Err(io::Error::other(
            "the command closed its output before answering",
        ));
    }
    Ok(())
}

/// Whether `line` is the result of request `id`: parsed, as a client that uses it would.
fn check_answer(line: &[u8], id: usize) -> io::Result<()> {
    let answer: serde_json::Value = serde_json::from_slice(line).map_err(io::Error::other)?;
    if answer.get("id").and_then(serde_json::Value::as_u64) != Some(id as u64)
        || answer.get("result").is_none()
    {
        return Err(io::Error::other(format!(
            "answer {id} is not its result: {}",
            String::from_utf8_lossy(line)
        )));
    }
    Ok(())
}

fn handshake(stdin: &mut impl Write, out: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<()> {
    writeln!(stdin, "{}", initialize_line())?;
    stdin.flush()?;
    read_answer(out, line)?;
    writeln!(stdin, "{INITIALIZED}")?;
    stdin.flush()
}

fn run(options: &Options) -> io::Result<f64> {
    if options.mode == Mode::Cold {
        let start = Instant::now();
        let (mut child, mut stdin, mut out) = spawn(&options.command)?;
        let mut line = Vec::new();
        handshake(&mut stdin, &mut out, &mut line)?;
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#)?;
        stdin.flush()?;
        read_answer(&mut out, &mut line)?;
        drop(stdin);
        child.wait()?;
        return Ok(start.elapsed().as_secs_f64());
    }
    let (mut child, mut stdin, mut out) = spawn(&options.command)?;
    let mut line = Vec::with_capacity(4096);
    if options.initialize {
        handshake(&mut stdin, &mut out, &mut line)?;
    }
    let requests: Vec<String> = (0..options.count)
        .map(|i| call_line(i, options.same))
        .collect();
    let elapsed = match options.mode {
        Mode::Sequential => {
            let start = Instant::now();
            for (i, request) in requests.iter().enumerate() {
                stdin.write_all(request.as_bytes())?;
                stdin.write_all(b"\n")?;
                stdin.flush()?;
                read_answer(&mut out, &mut line)?;
                if options.check {
                    check_answer(&line, i + 1)?;
                }
            }
            let elapsed = start.elapsed().as_secs_f64();
            drop(stdin);
            elapsed
        }
        _ => {
            let start = Instant::now();
            let writer = thread::spawn(move || -> io::Result<()> {
                let mut w = BufWriter::with_capacity(1 << 16, stdin);
                for request in &requests {
                    w.write_all(request.as_bytes())?;
                    w.write_all(b"\n")?;
                }
                w.flush()
            });
            for _ in 0..options.count {
                read_answer(&mut out, &mut line)?;
            }
            let elapsed = start.elapsed().as_secs_f64();
            writer
                .join()
                .map_err(|_| io::Error::other("the writer thread panicked"))??;
            elapsed
        }
    };
    child.wait()?;
    Ok(elapsed)
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("bench_client: {message}");
            return ExitCode::from(2);
        }
    };
    if options.mode == Mode::Print {
        let stdout = io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        if options.initialize {
            let _ = writeln!(out, "{}", initialize_line());
            let _ = writeln!(out, "{INITIALIZED}");
        }
        for i in 0..options.count {
            let _ = writeln!(out, "{}", call_line(i, options.same));
        }
        return ExitCode::SUCCESS;
    }
    match run(&options) {
        Ok(seconds) => {
            let count = if options.mode == Mode::Cold {
                1
            } else {
                options.count
            };
            let rps = if seconds > 0.0 {
                count as f64 / seconds
            } else {
                0.0
            };
            println!(
                "{{\"mode\":\"{}\",\"count\":{count},\"seconds\":{seconds:.6},\"rps\":{rps:.1}}}",
                options.mode.name()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench_client: {e}");
            ExitCode::from(1)
        }
    }
}
