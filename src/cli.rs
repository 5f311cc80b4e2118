//! Command-line types, and nothing else: clap parses, `commands` validates and runs.
//!
//! Enumerated flags (`--mode`, `--on-miss`, `--era`, `--format`, …) are taken as plain strings on
//! purpose: the reference answers an unknown value with a command-specific sentence and exit code
//! (record/replay exit 1, check exit 2), which clap's generic "invalid value" error cannot give.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, FromArgMatches, Parser, Subcommand};

/// Record, replay, check and lint Model Context Protocol sessions.
#[derive(Debug, Parser)]
#[command(name = "mcp-cassette", version = VERSION, about, long_about = None)]
pub struct Cli {
    /// Colour in text output: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(
        long = "color",
        value_name = "when",
        value_enum,
        global = true,
        default_value_t = ColorChoice::Auto
    )]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

/// `--color`: whether text output is coloured (docs/cli.md, "Colour").
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On when the output is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    Always,
    Never,
}

impl Cli {
    /// Parses the process's arguments; on `--help`, `--version` or a usage error, prints what
    /// clap prints and exits with its status.
    pub fn from_env() -> Self {
        let args: Vec<OsString> = std::env::args_os().collect();
        if let Some(cli) = Self::replay_only(&args) {
            return cli;
        }
        match Self::try_parse_from(&args) {
            Ok(cli) => cli,
            Err(err) if !err.use_stderr() => err.exit(),
            Err(err) => {
                let _ = err.print();
                std::process::exit(usage_exit_code(verb_of(&args)))
            }
        }
    }

    /// `mcp-cassette replay …` parsed by a command that knows only replay's arguments.
    ///
    /// Test suites spawn `replay` once per test, so its start-up is on their clock, and building
    /// the whole command line (every subcommand's arguments) was a tenth of that start-up.
    /// Only a command line that parses cleanly is taken from here; anything else (help,
    /// version, a usage error) returns `None` and is parsed again by the whole command line,
    /// so what the user sees and the exit status are the same either way. A test holds the two
    /// parsers to the same result.
    fn replay_only(args: &[OsString]) -> Option<Self> {
        if args.get(1)? != "replay" {
            return None;
        }
        let parser = ReplayArgs::augment_args(clap::Command::new("replay"));
        let matches = parser.try_get_matches_from(&args[1..]).ok()?;
        let replay = ReplayArgs::from_arg_matches(&matches).ok()?;
        Some(Self {
            color: ColorChoice::Auto,
            command: Command::Replay(replay),
        })
    }
}

/// `--version`: ours, then what it reads and writes and whose behaviour it follows, so a bug
/// report or a CI log says what a cassette made with it can be opened by.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (cassette format v1-v2, writes v2; contract snapshot v1; MCP 2024-11-05 to 2026-07-28;",
    " compatible with the TypeScript mcp-cassette 0.10)"
);

/// The subcommand named on a command line: its first word that is one (a global flag such as
/// `--color never` may come first); `""` when there is none.
fn verb_of(args: &[OsString]) -> &str {
    args.iter()
        .skip(1)
        .filter_map(|arg| arg.to_str())
        .find(|arg| VERBS.contains(arg))
        .unwrap_or("")
}

/// Every subcommand's name.
pub const VERBS: [&str; 9] = [
    "record", "replay", "check", "snapshot", "verify", "lint", "redact", "rules", "exec",
];

/// The exit code of a usage error (unknown flag, missing or malformed value), per command: the
/// code each command already gives its other refusals, as the reference does, so a script
/// tells "you called me wrong" apart from a verdict the same way for every kind of mistake
/// (docs/cli.md). Help and `--version` exit 0.
pub fn usage_exit_code(verb: &str) -> i32 {
    match verb {
        "check" | "snapshot" | "verify" | "redact" | "rules" => 2,
        // exec's own failures are 125, apart from any code the test command returns.
        "exec" => 125,
        // record, replay, lint, and a command line with no known command (as the reference's
        // argument parser exits).
        _ => 1,
    }
}

// What each subcommand's `--help` ends with: examples, then its exit codes. The codes are the
// table in docs/cli.md ("Exit codes"), which a test holds every `--help` to.

const RECORD_HELP: &str = "\
Examples:
  mcp-cassette record -o session.jsonl -- node server.js
  mcp-cassette record -o session.jsonl python3 server.py --port 0
  mcp-cassette record -o session.jsonl --mode append -- ./server
  mcp-cassette record -o web.jsonl --http http://127.0.0.1:3000/mcp --listen 127.0.0.1:0

Started by hand, the recorder waits for an MCP client on stdin; point a client at it instead
(its command becomes `mcp-cassette record -o <file> -- <server command>`).

Exit codes:
  0  the session ended and the server exited 0, or `--http` was stopped by Ctrl-C/SIGTERM
  1  refused (a flag, a file at -o that is not ours), the cassette could not be written, or
     the server could not be started
  N  otherwise the server's own exit code (128 + the signal for a server killed by a signal
     the recorder did not send)
";

const REPLAY_HELP: &str = "\
Examples:
  mcp-cassette replay session.jsonl
  mcp-cassette replay session.jsonl --on-miss warn
  mcp-cassette replay session.jsonl --on-miss passthrough -- node server.js
  mcp-cassette replay web.jsonl --listen 127.0.0.1:0

On stdio the replayer waits for an MCP client on stdin and ends when stdin closes; with
--listen it serves until Ctrl-C/SIGTERM. Either way it prints its summary before it exits.

Exit codes:
  0  the session ended with no miss (or under --on-miss warn, or no forward failed)
  1  a miss under --on-miss error, a failed forward under passthrough, or a startup error
     (a flag, an unreadable cassette, a redaction config that does not match)
  3  --fail-on-unused: a recorded answer was never used, and nothing else failed
";

const CHECK_HELP: &str = "\
Examples:
  mcp-cassette check --stdio \"node server.js\"
  mcp-cassette check --url http://127.0.0.1:3000/mcp --fail-on warn
  mcp-cassette check --stdio \"python3 server.py\" --format sarif > check.sarif
  mcp-cassette check --stdio \"./server\" --lint-fail-on never --client-capabilities all

Exit codes:
  0  no finding at or above its gate
  1  a finding at or above its gate
  2  the server could not be inspected, or the command line is wrong
";

const SNAPSHOT_HELP: &str = "\
Examples:
  mcp-cassette snapshot --stdio \"node server.js\"
  mcp-cassette snapshot --stdio \"node server.js\" --check
  mcp-cassette snapshot --stdio \"node server.js\" --check --fail-on dangerous --format markdown
  mcp-cassette snapshot --url http://127.0.0.1:3000/mcp -f contract.json --update

Exit codes:
  0  the snapshot was written, or no change at or above the gate
  1  a change at or above the gate (--check)
  2  nothing was compared: a bad flag, no snapshot, an unreadable one, or a server that could
     not be inspected
";

const VERIFY_HELP: &str = "\
Examples:
  mcp-cassette verify session.jsonl -- node server.js
  mcp-cassette verify session.jsonl --ignore /result/content/0/text -- node server.js
  mcp-cassette verify web.jsonl --url http://127.0.0.1:3000/mcp --json

Exit codes:
  0  every answer matched, or its change was allowed
  1  an answer changed, changed its error shape, or never came
  2  nothing was verified: a bad flag, a file that is not a cassette, a server that could not
     be reached
";

const LINT_HELP: &str = "\
Examples:
  mcp-cassette lint session.jsonl
  mcp-cassette lint session.jsonl --fail-on warn
  mcp-cassette lint session.jsonl --json

Exit codes:
  0  the header agrees with the frames (and, under --fail-on warn, nothing was found)
  1  a header contradiction, any finding under --fail-on warn, a bad flag, or a file that
     could not be read as a cassette
";

const REDACT_HELP: &str = "\
Examples:
  mcp-cassette redact session.jsonl -o clean.jsonl
  mcp-cassette redact session.jsonl -o session.jsonl
  mcp-cassette redact session.jsonl --scan
  mcp-cassette redact --redact-config redaction.json --check-config

Exit codes:
  0  written, nothing found (--scan), or every pattern proven (--check-config)
  1  --scan found a secret, or no cassette was given
  2  nothing was done: a bad flag or combination, an unreadable cassette or config
";

const RULES_HELP: &str = "\
Examples:
  mcp-cassette rules
  mcp-cassette rules CAS-L001
  mcp-cassette rules --json

Exit codes:
  0  the catalogue or the rule was printed
  2  no rule has that id, or the command line is wrong
";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record a live MCP session through a proxy into a JSONL cassette.
    #[command(after_help = RECORD_HELP)]
    Record(RecordArgs),
    /// Serve a cassette back as an MCP server (stdio, or Streamable HTTP with --listen).
    #[command(after_help = REPLAY_HELP)]
    Replay(ReplayArgs),
    /// Connect to a live server, check what it publishes and lint every model-facing text.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Write or check the tool contract snapshot (mcp-contract.snapshot.json).
    #[command(after_help = SNAPSHOT_HELP)]
    Snapshot(SnapshotArgs),
    /// Re-fire a cassette's recorded requests at a live server and diff the answers.
    #[command(after_help = VERIFY_HELP)]
    Verify(VerifyArgs),
    /// Lint a cassette: header contradictions and prompt injection in recorded answers.
    #[command(after_help = LINT_HELP)]
    Lint(LintArgs),
    /// Redact secrets from a cassette, audit one, or check a redaction config.
    #[command(after_help = REDACT_HELP)]
    Redact(RedactArgs),
    /// List the lint rules, or print one rule's documentation.
    #[command(after_help = RULES_HELP)]
    Rules(RulesArgs),
    /// Serve a cassette to a test command (any language), then fail it on a miss.
    #[command(after_help = EXEC_HELP)]
    Exec(ExecArgs),
}

const EXEC_HELP: &str = "\
Examples:
  mcp-cassette exec --cassette web.jsonl -- go test ./...
  mcp-cassette exec --cassette session.jsonl -- sh -c 'my-client --server \"$MCP_CASSETTE_COMMAND\"'
  mcp-cassette exec --cassette web.jsonl --fail-on-unused -- pytest -q

An HTTP cassette is served in-process at $MCP_CASSETTE_URL; for a stdio cassette,
`sh -c \"$MCP_CASSETTE_COMMAND\"` starts its replay. SIGINT and SIGTERM go to the command.

Exit codes:
  0    the command passed, no miss (and nothing unused under --fail-on-unused)
  N    the command's own non-zero exit code (128 + the signal when a signal killed it)
  3    the command passed, no miss, but a recording was never used (--fail-on-unused)
  4    the command passed but a request missed (--on-miss error)
  5    the command passed but left a stdio replay running (exec stopped it)
  125  exec could not start: a bad flag, an unreadable cassette, a port that cannot be bound
  126  the command was found but could not be run
  127  the command was not found
";

/// `exec`: a cassette served to a test command (docs/exec.md).
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The cassette to serve.
    #[arg(long = "cassette", value_name = "file")]
    pub cassette: PathBuf,
    /// error (default: a miss fails the run) or warn (borrow a same-method recording).
    #[arg(long = "on-miss", value_name = "mode", default_value = "error")]
    pub on_miss: String,
    /// A JSON Pointer into request params to ignore when matching, optionally `method:`-scoped.
    #[arg(long = "volatile", value_name = "decl")]
    pub volatile: Vec<String>,
    /// Exit 3 when a recorded answer was never used and nothing else failed.
    #[arg(long = "fail-on-unused")]
    pub fail_on_unused: bool,
    /// The redaction config the cassette was recorded with.
    #[arg(long = "redact-config", value_name = "file")]
    pub redact_config: Option<PathBuf>,
    /// Where an HTTP cassette is served [default: 127.0.0.1:0, a free port].
    #[arg(long = "listen", value_name = "host:port")]
    pub listen: Option<String>,
    /// The test command, after `--`.
    #[arg(trailing_var_arg = true, required = true, value_name = "command")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Cassette path to write.
    #[arg(short = 'o', long = "out", value_name = "file")]
    pub out: PathBuf,
    /// Write secrets verbatim (the header records `"redaction":{"applied":false}`).
    #[arg(long = "no-redact")]
    pub no_redact: bool,
    /// Extra redaction rules (patterns, keys, allow) from a JSON file.
    #[arg(long = "redact-config", value_name = "file")]
    pub redact_config: Option<PathBuf>,
    /// once (refuse to overwrite), all (re-record), append (add this session; stdio only).
    #[arg(long = "mode", value_name = "mode", default_value = "once")]
    pub mode: String,
    /// Record a Streamable HTTP server through a local reverse proxy (stop it with Ctrl-C).
    #[arg(long = "http", value_name = "url")]
    pub http: Option<String>,
    /// Bind address of the HTTP recording proxy [default: 127.0.0.1:6402; port 0 takes a free one].
    #[arg(long = "listen", value_name = "host:port")]
    pub listen: Option<String>,
    /// The stdio server command, after `--` or simply last (everything from its first word on
    /// belongs to the server, flags included), as the reference accepts it.
    #[arg(trailing_var_arg = true, value_name = "command")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The cassette to serve.
    pub cassette: PathBuf,
    /// Serve an HTTP cassette over Streamable HTTP at host:port.
    #[arg(long = "listen", value_name = "host:port")]
    pub listen: Option<String>,
    /// none (back to back) or recorded (spaced as recorded); HTTP streams only.
    #[arg(long = "timing", value_name = "mode", default_value = "none")]
    pub timing: String,
    /// error (default), warn (borrow a same-method recording) or passthrough (ask the real server).
    #[arg(long = "on-miss", value_name = "mode", default_value = "error")]
    pub on_miss: String,
    /// The redaction config the cassette was recorded with.
    #[arg(long = "redact-config", value_name = "file")]
    pub redact_config: Option<PathBuf>,
    /// A JSON Pointer into request params to ignore when matching, optionally `method:`-scoped.
    #[arg(long = "volatile", value_name = "decl")]
    pub volatile: Vec<String>,
    /// With --listen: serve the miss channel test adapters drain, behind the token in
    /// $MCP_CASSETTE_CONTROL_TOKEN (docs/adapters.md).
    #[arg(long = "control")]
    pub control: bool,
    /// Exit 3 when a recorded answer was never used and nothing else failed (docs/replay.md).
    #[arg(long = "fail-on-unused")]
    pub fail_on_unused: bool,
    /// Append misses and usage counts to a file in this directory, for `exec` (docs/exec.md).
    #[arg(long = "exec-report", value_name = "dir")]
    pub exec_report: Option<PathBuf>,
    /// The real server (command, or an http(s) URL over --listen) for --on-miss passthrough,
    /// after `--` or simply after the cassette.
    #[arg(trailing_var_arg = true, value_name = "command")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Server command to spawn over stdio (quoted; split on whitespace honouring quotes).
    #[arg(long = "stdio", value_name = "command")]
    pub stdio: Option<String>,
    /// Streamable HTTP endpoint of the server (experimental).
    #[arg(long = "url", value_name = "url")]
    pub url: Option<String>,
    /// Lifecycle era: legacy, modern or auto.
    #[arg(long = "era", value_name = "era", default_value = "auto")]
    pub era: String,
    /// Client capabilities to declare: roots, sampling, elicitation (comma-separated), all or
    /// none [default: none, as the reference, so snapshots stay comparable].
    #[arg(
        long = "client-capabilities",
        value_name = "list",
        value_delimiter = ','
    )]
    pub client_capabilities: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// text, json, sarif or markdown.
    #[arg(long = "format", value_name = "format", default_value = "text")]
    pub format: String,
    /// Same as --format json (takes precedence).
    #[arg(long = "json")]
    pub json: bool,
    /// Lowest finding level that fails: error or warn.
    #[arg(long = "fail-on", value_name = "level", default_value = "error")]
    pub fail_on: String,
    /// Gate for CAS-L findings only: error, warn or never (default: --fail-on).
    #[arg(long = "lint-fail-on", value_name = "level")]
    pub lint_fail_on: Option<String>,
    /// File that SARIF results are anchored to.
    #[arg(long = "sarif-location", value_name = "file")]
    pub sarif_location: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Snapshot path.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "file",
        default_value = "mcp-contract.snapshot.json"
    )]
    pub file: PathBuf,
    /// Compare the live server with the stored snapshot instead of writing it.
    #[arg(long = "check")]
    pub check: bool,
    /// Overwrite an existing snapshot.
    #[arg(long = "update")]
    pub update: bool,
    /// breaking or dangerous.
    #[arg(long = "fail-on", value_name = "tier", default_value = "breaking")]
    pub fail_on: String,
    /// Machine-readable diff (with --check).
    #[arg(long = "json")]
    pub json: bool,
    /// text, json or markdown (with --check; --json takes precedence).
    #[arg(long = "format", value_name = "format", default_value = "text")]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The cassette whose requests are re-fired.
    pub cassette: PathBuf,
    /// JSON Pointer to ignore when comparing answers (repeatable).
    #[arg(long = "ignore", value_name = "ptr")]
    pub ignore: Vec<String>,
    /// JSON Pointer prefix whose changes are allowed (repeatable).
    #[arg(long = "allow-changed-paths", value_name = "ptr")]
    pub allow_changed_paths: Vec<String>,
    /// Report changes without failing on them.
    #[arg(long = "allow-all-changes")]
    pub allow_all_changes: bool,
    /// Streamable HTTP endpoint of the live server.
    #[arg(long = "url", value_name = "url")]
    pub url: Option<String>,
    /// Lifecycle era: legacy, modern or auto.
    #[arg(long = "era", value_name = "era", default_value = "auto")]
    pub era: String,
    /// One JSON object (pairs, changed paths, followed values, summary) instead of text.
    #[arg(long = "json")]
    pub json: bool,
    /// The live server command, after `--`.
    #[arg(last = true, value_name = "command")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// The cassette to lint.
    pub cassette: PathBuf,
    /// Machine-readable findings.
    #[arg(long = "json")]
    pub json: bool,
    /// What fails the run: error (header contradictions, the default) or warn (any finding,
    /// recorded-output prompt injection included).
    #[arg(long = "fail-on", value_name = "level", default_value = "error")]
    pub fail_on: String,
}

#[derive(Debug, Args)]
pub struct RedactArgs {
    /// The cassette to redact or scan.
    pub cassette: Option<PathBuf>,
    /// Write the redacted cassette here.
    #[arg(short = 'o', long = "out", value_name = "file")]
    pub out: Option<PathBuf>,
    /// Report every secret found and write nothing (exit 1 when any is found).
    #[arg(long = "scan")]
    pub scan: bool,
    /// Extra redaction rules (patterns, keys, allow) from a JSON file.
    #[arg(long = "redact-config", value_name = "file")]
    pub redact_config: Option<PathBuf>,
    /// Prove every pattern of --redact-config runs in linear time, and write nothing.
    #[arg(long = "check-config")]
    pub check_config: bool,
    /// Kept for scripts that pass it: -o naming the input cassette replaces it atomically
    /// without it.
    #[arg(long = "in-place")]
    pub in_place: bool,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// A rule id (e.g. CAS-L001) to explain; without one, the catalogue is listed.
    pub id: Option<String>,
    /// Machine-readable catalogue.
    #[arg(long = "json")]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        std::iter::once("mcp-cassette")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// Whatever the replay-only parser accepts, the whole command line parses to the same
    /// value; whatever it refuses is left to the whole command line.
    #[test]
    fn the_replay_only_parser_agrees_with_the_whole_command_line() {
        let accepted: &[&[&str]] = &[
            &["replay", "a.jsonl"],
            &["replay", "--on-miss", "warn", "a.jsonl"],
            &[
                "replay",
                "a.jsonl",
                "--on-miss=passthrough",
                "--",
                "node",
                "server.js",
                "--x",
            ],
            &[
                "replay",
                "a.jsonl",
                "--volatile",
                "/a",
                "--volatile",
                "tools/call:/b",
            ],
            &[
                "replay",
                "--listen",
                "127.0.0.1:0",
                "--timing",
                "recorded",
                "a.jsonl",
            ],
            &["replay", "a.jsonl", "--redact-config", "r.json"],
            &["replay", "-"],
            &["replay", "a.jsonl", "node", "server.js", "--port", "3"],
            &["replay", "--", "a.jsonl"],
            &["replay", "a.jsonl", "b.jsonl"],
            &[
                "replay",
                "a.jsonl",
                "--on-miss",
                "passthrough",
                "--",
                "node",
                "s.js",
            ],
        ];
        for words in accepted {
            let args = args(words);
            let fast = Cli::replay_only(&args).unwrap_or_else(|| panic!("{words:?} refused"));
            let whole = Cli::try_parse_from(&args).expect("the whole command line parses it");
            assert_eq!(format!("{fast:?}"), format!("{whole:?}"), "{words:?}");
        }
        let refused: &[&[&str]] = &[
            &["replay"],
            &["replay", "--help"],
            &["replay", "-h"],
            &["replay", "--version"],
            &["replay", "-V"],
            &["replay", "a.jsonl", "--on-miss"],
            &["replay", "a.jsonl", "--listen", "a", "--listen", "b"],
            &["replay", "a.jsonl", "--no-such-flag"],
            &["--version"],
            &["help", "replay"],
            &["record", "-o", "a.jsonl", "--", "node"],
            &[],
        ];
        for words in refused {
            let args = args(words);
            assert!(Cli::replay_only(&args).is_none(), "{words:?} accepted");
        }
    }
}
