//! `record`: validate flags, build the header, run the proxy, map the outcome to an exit code.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use crate::cassette::{Header, Transport, format_iso};
use crate::cli::RecordArgs;
use crate::record::output::{self, Found, Placement};
use crate::record::recorder::{RecordError, Recording, Target};
use crate::record::{http, stdio};
use crate::transport::http::outbound;

/// Where the HTTP recording proxy listens unless `--listen` says otherwise.
const DEFAULT_LISTEN: &str = "127.0.0.1:6402";
use crate::record::{Mode, append, recorder_id};
use crate::redact::{RedactConfig, Redactor};

pub fn run(args: RecordArgs) -> ExitCode {
    match record(args) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn record(args: RecordArgs) -> Result<u8, String> {
    let Some(mode) = Mode::parse(&args.mode) else {
        return Err(format!(
            "record: unknown --mode \"{}\" (expected once, all or append)",
            args.mode
        ));
    };
    if args.no_redact && args.redact_config.is_some() {
        return Err("record: --no-redact removes every rule, so --redact-config would do nothing. Drop one of the two".to_owned());
    }
    match (&args.http, args.command.is_empty()) {
        (Some(_), false) => {
            return Err("record: use either --http or a server command, not both".to_owned());
        }
        (None, true) => {
            return Err(
                "record: missing target. Pass a server command after -- , or --http <url>"
                    .to_owned(),
            );
        }
        (Some(_), true) if mode == Mode::Append => {
            return Err(format!(
                "record --mode append is for stdio recordings: one HTTP proxy serves every connection of a run, so record {} with --mode once or all",
                args.out.display()
            ));
        }
        (Some(_), true) | (None, false) => {}
    }
    if args.listen.is_some() && args.http.is_none() {
        return Err("record: --listen is the address of the HTTP recording proxy; pass it with --http <url>".to_owned());
    }
    let upstream = match &args.http {
        Some(url) => Some(outbound::parse_url(url).map_err(|e| {
            format!("record: --http wants the server's Streamable HTTP endpoint: {e}")
        })?),
        None => None,
    };

    let redactor = if args.no_redact {
        None
    } else {
        Some(match &args.redact_config {
            Some(path) => {
                let config = RedactConfig::load(path).map_err(|e| e.to_string())?;
                Redactor::with_config(&config)
            }
            None => Redactor::builtin(),
        })
    };

    let started = time::OffsetDateTime::now_utc();
    let transport = if upstream.is_some() {
        Transport::Http
    } else {
        Transport::Stdio
    };
    // The command line's secrets are remembered, so a message repeating one is redacted too.
    let (command, redactor) = match redactor {
        Some(r) => {
            let mut echoes = r.echoes();
            let (command, _) = r.redact_command(&args.command, &mut echoes);
            (command, Some(r.with_echo_seed(echoes)))
        }
        None => (args.command.clone(), None),
    };
    let mut header = Header::new(&recorder_id(), &format_iso(started), transport);
    match &args.http {
        Some(url) => header.set_url(&match &redactor {
            Some(r) => r.redact_text(url).0,
            None => url.clone(),
        }),
        None => header.set_command(command),
    }
    match &redactor {
        Some(r) => header.set_redaction(true, r.config_hash()),
        None => header.set_redaction(false, None),
    }

    let out = args.out.clone();
    let found =
        output::examine(&out).map_err(|e| format!("record: cannot read {}: {e}", out.display()))?;
    let stream = |placement| Target::Stream {
        path: out.clone(),
        placement,
    };
    let target = match (mode, found) {
        (_, Found::Symlink | Found::NotAFile) => {
            return Err(format!("record: {}", output::unwritable(&out, found)));
        }
        (Mode::Once, Found::Cassette) => {
            return Err(format!(
                "record: {} already exists. Replay it, or pass --mode all to re-record over it",
                out.display()
            ));
        }
        (Mode::Once, Found::Foreign) => {
            return Err(format!(
                "record: {} exists and is not a cassette (its first line is not a cassette header); refusing to overwrite it. Choose another -o, or pass --mode all to replace it",
                out.display()
            ));
        }
        (Mode::Once | Mode::All, Found::Empty) => {
            eprintln!(
                "mcp-cassette: {} exists but is empty (a recording that never flushed); recording into it",
                out.display()
            );
            stream(Placement::IntoEmpty)
        }
        (Mode::Once | Mode::All, Found::Absent) => stream(Placement::New),
        (Mode::All, _) => stream(Placement::Beside),
        (Mode::Append, _) => {
            let target = append::inspect(&out, &header).map_err(|e| e.to_string())?;
            if target.leftover() {
                eprintln!(
                    "mcp-cassette: {} exists but is empty (a recording that never flushed); recording into it as a new cassette",
                    out.display()
                );
            }
            Target::Append(target)
        }
    };

    let recording = Recording {
        header,
        redactor,
        target,
        started,
    };
    let (exit_code, kept_previous, summary) = match upstream {
        Some(upstream) => {
            let proxy = http::Proxy {
                upstream,
                listen: args
                    .listen
                    .clone()
                    .unwrap_or_else(|| DEFAULT_LISTEN.to_owned()),
            };
            // Ended by SIGINT or SIGTERM: that is how an HTTP recording is meant to stop.
            let outcome = http::run(proxy, recording).map_err(|e| e.to_string())?;
            let summary = Summary {
                entries: outcome.entries,
                secrets: outcome.secrets,
                era: outcome.era,
                ending: "the proxy was stopped".to_owned(),
            };
            (0, outcome.kept_previous, summary)
        }
        None => {
            if std::io::stdin().is_terminal() {
                eprintln!(
                    "mcp-cassette: recording into {}; waiting for an MCP client's JSON-RPC lines on stdin (Ctrl-D ends the session; usually a client runs this command for you)",
                    out.display()
                );
            }
            let outcome = stdio::run(&args.command, recording).map_err(|e| match e {
                // The reference's sentence, with the program named: "No such file or
                // directory" alone does not say which file.
                RecordError::Spawn(why) => format!(
                    "record: failed to start server command: {:?}: {why}",
                    args.command[0]
                ),
                other => other.to_string(),
            })?;
            let summary = Summary {
                entries: outcome.entries,
                secrets: outcome.secrets,
                era: outcome.era,
                ending: format!("the server ended with exit code {}", outcome.exit_code),
            };
            (outcome.exit_code, outcome.kept_previous, summary)
        }
    };
    if kept_previous {
        eprintln!(
            "mcp-cassette: the server sent nothing this session, so {} was left as it was",
            out.display()
        );
    } else {
        eprintln!("mcp-cassette: {}", summary.line(&out));
    }
    Ok(exit_code)
}

/// What the end-of-recording line reports (docs/record.md, "The summary line").
struct Summary {
    entries: usize,
    secrets: usize,
    era: Option<crate::protocol::Era>,
    /// How the session ended, in words.
    ending: String,
}

impl Summary {
    fn line(&self, out: &std::path::Path) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let era = match self.era {
            Some(era) => format!("as {}", era.as_str()),
            None => "with no era decided".to_owned(),
        };
        format!(
            "recorded {} to {} {era}; {} redacted; {}",
            plural(self.entries, "entry", "entries"),
            out.display(),
            plural(self.secrets, "value", "values"),
            self.ending,
        )
    }
}
