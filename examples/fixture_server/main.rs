//! Scripted MCP servers for the integration tests and benchmarks, one binary, mode chosen by the
//! first argument (`fixture_server tiny`, `fixture_server pushy`, ...), variants by environment
//! variables, as the reference's Node fixtures choose them.
//!
//! These servers stand in for the real ones a user points the tool at, so they are deliberately
//! independent of the crate under test: they speak newline-delimited JSON-RPC with nothing but
//! `serde_json` and `std`, and several misbehave on cue (crash, stay silent, print garbage, answer
//! with the wrong id, flood) to prove the tool survives servers that do.
//!
//! Every mode reads stdin, writes one message per line to stdout, logs to stderr only, and exits 0
//! when stdin closes, unless the mode's whole point is to do otherwise.

mod bench;
mod header_params;
mod misbehave;
mod pushy;
mod script;
mod tasking;
mod tiny;
mod wire;

use std::process::ExitCode;

const USAGE: &str = "usage: fixture_server <mode>
modes:
  tiny              classic stdio server: echo, add, slugify, ping, block
                    (env TINY_EVIL, TINY_POISONED, TINY_V2, TINY_SECRETS, TINY_SURFACES, TINY_PROGRESS)
  stdout-log        tiny, plus non-JSON log lines and one batch array on stdout
  crash             answers initialize and tools/list, exits 3 on the first tools/call
  silent            reads stdin forever, never answers
  exit-now          exits 7 at once without reading
  garbage           answers every request with a line that is not JSON
  wrong-id          answers every request with an id that is not the request's
  huge-list         tiny, with a tools/list answer of about 20 MB
  deep-schema       tiny, plus a tool whose inputSchema nests 10000 levels deep
  paginate-forever  tiny, whose tools/list always returns a nextCursor
  flood             never reads; writes 1 MiB notifications to stdout without end
  flood-endless     never reads; writes one stdout line that never ends
  pester            never reads; sends ping requests without end
  pushy             speaks on its own (env PUSHY_ERA=legacy|modern)
  tasking           2026-07-28 tasks-extension server (env TASKING_STALL)
  header-params     tools that declare x-mcp-header, one of them invalid
  echo-bench        minimal fast echo server for overhead benchmarks
  null              answers every line carrying an id with an empty result
  script            on the first stdin line, writes the lines of $SCRIPT_FILE ({{PAD:N}} = N x's)";

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let outcome = match mode.as_str() {
        "tiny" => wire::serve(&mut tiny::Tiny::from_env()),
        "stdout-log" => wire::serve(&mut misbehave::StdoutLog::new()),
        "crash" => wire::serve(&mut misbehave::Crash::new()),
        "silent" => misbehave::silent(),
        "exit-now" => std::process::exit(7),
        "garbage" => wire::serve(&mut misbehave::Garbage::default()),
        "wrong-id" => wire::serve(&mut misbehave::WrongId::new()),
        "huge-list" => wire::serve(&mut misbehave::HugeList::new()),
        "deep-schema" => wire::serve(&mut misbehave::DeepSchema::new()),
        "paginate-forever" => wire::serve(&mut misbehave::PaginateForever::new()),
        "flood" => misbehave::flood(),
        "flood-endless" => misbehave::flood_endless(),
        "pester" => misbehave::pester(),
        "pushy" => wire::serve(&mut pushy::Pushy::from_env()),
        "tasking" => wire::serve(&mut tasking::Tasking::from_env()),
        "header-params" => wire::serve(&mut header_params::HeaderParams),
        "echo-bench" => bench::echo_bench(),
        "null" => bench::null(),
        "script" => script::run(),
        _ => {
            eprintln!("fixture_server: unknown mode {mode:?}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("fixture_server {mode}: {err}");
            ExitCode::from(1)
        }
    }
}
