//! Recording: a proxy between an MCP client and a real server that forwards bytes untouched and
//! writes a redacted transcript beside them. `recorder` is the transport-neutral core (capture,
//! era decision, sink, deferred header, append); `stdio` is a front-end that moves bytes and
//! hands the recorder copies.

pub(crate) mod append;
pub(crate) mod capture;
pub(crate) mod exchange;
pub(crate) mod http;
pub(crate) mod output;
pub(crate) mod queue;
pub(crate) mod recorder;
pub(crate) mod sink;
pub(crate) mod stdio;

/// How `-o` is treated when something is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Refuse to overwrite anything but an empty file.
    Once,
    /// Re-record over a file, replacing it once the new session has something in it.
    All,
    /// Add this session to the cassette (stdio only).
    Append,
}

impl Mode {
    pub(crate) fn parse(s: &str) -> Option<Mode> {
        match s {
            "once" => Some(Mode::Once),
            "all" => Some(Mode::All),
            "append" => Some(Mode::Append),
            _ => None,
        }
    }
}

/// The `recorder` member of headers this build writes.
pub(crate) fn recorder_id() -> String {
    format!("mcp-cassette@{}", env!("CARGO_PKG_VERSION"))
}
