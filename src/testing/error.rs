//! What can go wrong, and the verdict a replay ends with.

use std::fmt;
use std::path::PathBuf;

use super::miss::Miss;
use super::unused::Unused;

/// Everything the testing API can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The cassette could not be read, or is not a cassette.
    #[error("mcp-cassette: failed to open the cassette {}: {message}", path.display())]
    #[non_exhaustive]
    Open { path: PathBuf, message: String },
    /// The cassette was recorded over the other transport.
    #[error("mcp-cassette: {} was recorded over {recorded}; {hint}", path.display())]
    #[non_exhaustive]
    Transport {
        path: PathBuf,
        recorded: &'static str,
        hint: &'static str,
    },
    /// The replay could not start: a volatile declaration or redaction config it refuses, a
    /// port it cannot bind.
    #[error("mcp-cassette: failed to serve {}: {message}", path.display())]
    #[non_exhaustive]
    Start { path: PathBuf, message: String },
    /// No `mcp-cassette` binary to run a stdio replay with.
    #[error(
        "mcp-cassette: no mcp-cassette binary found (tried {tried}); set $MCP_CASSETTE_BINARY to its path or put it on PATH (cargo install mcp-cassette)"
    )]
    #[non_exhaustive]
    BinaryNotFound { tried: String },
    /// The replay ended with misses (or unused recordings, when those fail it).
    #[error("{0}")]
    Failed(Failure),
}

/// What made a finished replay fail.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Failure {
    /// The cassette.
    pub path: PathBuf,
    /// The misses nobody drained, oldest first.
    pub misses: Vec<Miss>,
    /// Misses past the log's bound (10 000 between drains), counted but not kept.
    pub dropped: u64,
    /// The recordings no request used, when [`Cassette::fail_on_unused`] asked for them to
    /// fail the replay; empty otherwise.
    ///
    /// [`Cassette::fail_on_unused`]: super::Cassette::fail_on_unused
    pub unused: Vec<Unused>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.misses.first() else {
            if self.dropped > 0 {
                write!(
                    f,
                    "mcp-cassette: {} miss(es) in {} were counted but not kept",
                    self.dropped,
                    self.path.display()
                )?;
                if !self.unused.is_empty() {
                    f.write_str("\n")?;
                }
            }
            return self.write_unused(f);
        };
        // The JavaScript adapter's sentence (docs/adapters.md), so a failure reads the same in
        // every test runner.
        write!(
            f,
            "mcp-cassette: no recorded answer for \"{}\", {}. Re-record the cassette or adjust the interaction.",
            first.method, first.diagnosis
        )?;
        let further = self.misses.len() - 1 + usize::try_from(self.dropped).unwrap_or(usize::MAX);
        if further > 0 {
            write!(
                f,
                "\n(and {further} further miss(es) in {}:",
                self.path.display()
            )?;
            for miss in &self.misses[1..] {
                write!(f, "\n  - \"{}\": {}", miss.method, miss.diagnosis)?;
            }
            if self.dropped > 0 {
                write!(f, "\n  - {} more, counted but not kept", self.dropped)?;
            }
            write!(f, ")")?;
        }
        if !self.unused.is_empty() {
            f.write_str("\n")?;
        }
        self.write_unused(f)
    }
}

impl Failure {
    fn write_unused(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.unused.first() else {
            return Ok(());
        };
        write!(
            f,
            "mcp-cassette: {} recorded answer(s) in {} were never used, the first {}. Remove them from the cassette, or make the test ask for them.",
            self.unused.len(),
            self.path.display(),
            first.describe()
        )?;
        for unused in self.unused.iter().skip(1).take(SHOWN_UNUSED) {
            write!(f, "\n  - {}", unused.describe())?;
        }
        let more = self.unused.len().saturating_sub(SHOWN_UNUSED + 1);
        if more > 0 {
            write!(f, "\n  - and {more} more")?;
        }
        Ok(())
    }
}

/// Unused recordings named one by one in a failure message, after the first.
const SHOWN_UNUSED: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn miss(method: &str, diagnosis: &str) -> Miss {
        Miss::from_json(&json!({
            "method": method, "diagnosis": diagnosis, "reason": {"kind": "unknown-method"}
        }))
        .unwrap()
    }

    #[test]
    fn the_first_miss_is_the_adapters_sentence_and_the_rest_follow() {
        let one = Failure {
            path: "/t/a.jsonl".into(),
            misses: vec![miss("ping", "it was never recorded")],
            dropped: 0,
            unused: Vec::new(),
        };
        assert_eq!(
            one.to_string(),
            "mcp-cassette: no recorded answer for \"ping\", it was never recorded. Re-record the cassette or adjust the interaction."
        );
        let more = Failure {
            misses: vec![miss("ping", "a"), miss("tools/list", "b")],
            dropped: 2,
            ..one
        };
        let text = more.to_string();
        assert!(
            text.ends_with(
                "\n(and 3 further miss(es) in /t/a.jsonl:\n  - \"tools/list\": b\n  - 2 more, counted but not kept)"
            ),
            "{text}"
        );
        let unused = Failure {
            misses: Vec::new(),
            dropped: 0,
            unused: vec![
                Unused {
                    line: 7,
                    method: "tools/call".into(),
                    tool: Some("echo".into()),
                },
                Unused {
                    line: 9,
                    method: "ping".into(),
                    tool: None,
                },
            ],
            ..more
        };
        assert_eq!(
            unused.to_string(),
            "mcp-cassette: 2 recorded answer(s) in /t/a.jsonl were never used, the first tools/call \"echo\" (line 7). Remove them from the cassette, or make the test ask for them.\n  - ping (line 9)"
        );
    }
}
