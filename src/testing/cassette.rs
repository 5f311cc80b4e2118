//! The cassette and its replay options, before it is served.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::Error;
use super::http::HttpReplay;
use super::stdio::StdioReplay;
use crate::cassette::{self, Reader};
use crate::redact::{RedactConfig, check_config_hash};
use crate::replay::Index;
use crate::replay::session::Rules;

/// What a miss becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnMiss {
    /// The client gets a JSON-RPC error and the replay's verdict fails (the default).
    #[default]
    Error,
    /// Another recording of the same method answers when one is left; the verdict does not
    /// fail. [`HttpReplay::drain_misses`] still reports each miss.
    Warn,
}

impl OnMiss {
    pub(crate) fn engine(self) -> crate::replay::OnMiss {
        match self {
            OnMiss::Error => crate::replay::OnMiss::Error,
            OnMiss::Warn => crate::replay::OnMiss::Warn,
        }
    }
}

/// The transport a cassette was recorded over, which decides how it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Served with [`Cassette::serve_http`].
    Http,
    /// Spawned with [`Cassette::stdio_command`].
    Stdio,
}

/// A cassette to replay, with its options. Build it with [`Cassette::open`], set options by
/// chaining, then serve it with [`Cassette::serve_http`] or [`Cassette::stdio_command`].
#[derive(Debug, Clone)]
#[must_use = "a cassette does nothing until it is served"]
pub struct Cassette {
    path: PathBuf,
    transport: Transport,
    on_miss: OnMiss,
    volatile: Vec<String>,
    redact_config: Option<PathBuf>,
    binary: Option<PathBuf>,
    fail_on_unused: bool,
}

impl Cassette {
    /// Reads the cassette's header. A relative path is taken from the working directory (the
    /// package root under `cargo test`). Fails when the file does not exist or is not a
    /// cassette.
    pub fn open(path: impl AsRef<Path>) -> Result<Cassette, Error> {
        let path = std::path::absolute(path.as_ref()).map_err(|e| Error::Open {
            path: path.as_ref().to_owned(),
            message: e.to_string(),
        })?;
        let reader = Reader::open(&path).map_err(|e| Error::Open {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let transport = match reader.header().transport() {
            cassette::Transport::Http => Transport::Http,
            cassette::Transport::Stdio => Transport::Stdio,
        };
        Ok(Cassette {
            path,
            transport,
            on_miss: OnMiss::default(),
            volatile: Vec::new(),
            redact_config: None,
            binary: None,
            fail_on_unused: false,
        })
    }

    /// What a miss becomes (default [`OnMiss::Error`]).
    pub fn on_miss(mut self, on_miss: OnMiss) -> Cassette {
        self.on_miss = on_miss;
        self
    }

    /// A request field to ignore when matching, as `replay --volatile` takes it
    /// (docs/replay.md, "Declared volatility"); call once per declaration. Added to the
    /// cassette header's own list; checked when the cassette is served.
    pub fn volatile(mut self, declaration: impl Into<String>) -> Cassette {
        self.volatile.push(declaration.into());
        self
    }

    /// The redaction config the cassette was recorded with (`--redact-config`); a relative
    /// path is taken from the working directory.
    pub fn redact_config(mut self, path: impl AsRef<Path>) -> Cassette {
        self.redact_config = Some(path.as_ref().to_owned());
        self
    }

    /// Whether recordings no request used fail the verdict, as `replay --fail-on-unused` does
    /// (default `false`; docs/replay.md, "Unused recordings"). A cassette that only grows hides
    /// a test that stopped asking what it recorded.
    pub fn fail_on_unused(mut self, fail: bool) -> Cassette {
        self.fail_on_unused = fail;
        self
    }

    /// The `mcp-cassette` binary a stdio replay runs, instead of looking it up
    /// ([`Cassette::stdio_command`] says where it looks).
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Cassette {
        self.binary = Some(path.into());
        self
    }

    /// The cassette's absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The transport it was recorded over.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Serves an HTTP cassette inside this process, on `127.0.0.1` and a free port, on a thread
    /// of its own (it needs no tokio runtime from the caller, and works inside one of any
    /// flavour). Returns once the port is bound.
    pub fn serve_http(self) -> Result<HttpReplay, Error> {
        if self.transport != Transport::Http {
            return Err(Error::Transport {
                path: self.path,
                recorded: "stdio",
                hint: "spawn it with stdio_command() instead of serve_http()",
            });
        }
        let (index, rules) = self.load()?;
        HttpReplay::start(
            self.path,
            Arc::new(index),
            rules,
            self.on_miss,
            self.fail_on_unused,
        )
    }

    /// The command a client spawns to talk to a stdio cassette: this crate's binary as
    /// `mcp-cassette replay <absolute path> [--volatile …] [--redact-config …] [--on-miss warn]
    /// --exec-report <dir>`, where every replay the client starts reports its misses and what
    /// it used, for [`StdioReplay::finish`].
    ///
    /// The binary is, in order: [`Cassette::binary`]; `$MCP_CASSETTE_BINARY`;
    /// `$CARGO_BIN_EXE_mcp-cassette` (what cargo sets for this package's own integration
    /// tests); `mcp-cassette` on `PATH`.
    pub fn stdio_command(self) -> Result<StdioReplay, Error> {
        if self.transport != Transport::Stdio {
            return Err(Error::Transport {
                path: self.path,
                recorded: "http",
                hint: "serve it with serve_http() instead of stdio_command()",
            });
        }
        // Checked here, where the caller can see it, rather than as a child that exits at once;
        // the index also tells, at the end, which recordings no child used.
        let (index, _) = self.load()?;
        let program = super::stdio::find_binary(self.binary.as_deref())?;
        let mut args: Vec<OsString> = vec!["replay".into(), self.path.clone().into()];
        for declaration in &self.volatile {
            args.push("--volatile".into());
            args.push(declaration.into());
        }
        if let Some(config) = &self.redact_config {
            args.push("--redact-config".into());
            args.push(absolute(config).into());
        }
        if self.on_miss == OnMiss::Warn {
            args.push("--on-miss".into());
            args.push("warn".into());
        }
        StdioReplay::new(
            self.path,
            program,
            args,
            Arc::new(index),
            self.on_miss,
            self.fail_on_unused,
        )
    }

    /// The index and the redaction rules, as `replay` builds them: the config must be the one
    /// the recording used (docs/redaction.md, "The config hash").
    fn load(&self) -> Result<(Index, Rules), Error> {
        let start = |message: String| Error::Start {
            path: self.path.clone(),
            message,
        };
        let config = match &self.redact_config {
            Some(path) => {
                Some(RedactConfig::load(&absolute(path)).map_err(|e| start(e.to_string()))?)
            }
            None => None,
        };
        let reader = Reader::open(&self.path).map_err(|e| Error::Open {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let header = reader.header().clone();
        let given = config.as_ref().and_then(RedactConfig::hash);
        check_config_hash(header.config_hash(), given.as_deref())
            .map_err(|why| start(why.replay_message()))?;
        let index = Index::build_from_file(header, reader, &self.volatile, &self.path)
            .map_err(|e| start(e.to_string()))?;
        for warning in &index.warnings {
            // Captured by the test harness: shown only with the output of a failing test.
            eprintln!(
                "mcp-cassette replay: {}: {warning}; serving it anyway",
                self.path.display()
            );
        }
        Ok((index, Rules::new(config)))
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}
