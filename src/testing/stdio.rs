//! A stdio cassette: the command a client spawns, and where the binary is found.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::cassette::OnMiss;
use super::error::Error;

/// The environment variable naming the binary to run, as the JavaScript adapter reads it.
pub(crate) const BINARY_ENV: &str = "MCP_CASSETTE_BINARY";
/// What cargo sets, at build and at run time, in this package's own integration tests.
const CARGO_BINARY_ENV: &str = "CARGO_BIN_EXE_mcp-cassette";
const BINARY_NAME: &str = "mcp-cassette";

/// The command that serves a stdio cassette: hand it to the client under test, which spawns it
/// and speaks MCP on its standard input and output.
#[derive(Debug, Clone)]
pub struct StdioReplay {
    path: PathBuf,
    program: PathBuf,
    args: Vec<OsString>,
    on_miss: OnMiss,
}

impl StdioReplay {
    pub(crate) fn new(
        path: PathBuf,
        program: PathBuf,
        args: Vec<OsString>,
        on_miss: OnMiss,
    ) -> StdioReplay {
        StdioReplay {
            path,
            program,
            args,
            on_miss,
        }
    }

    /// The binary to run.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Its arguments: `replay <absolute path> …`.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// A [`Command`] running [`StdioReplay::program`] with [`StdioReplay::args`]; standard
    /// streams are left for the client to set. `tokio::process::Command::from` turns it into
    /// what async clients spawn.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }

    /// The cassette's absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What misses become in the replay the command runs.
    pub fn on_miss(&self) -> OnMiss {
        self.on_miss
    }
}

/// The binary: `given`; `$MCP_CASSETTE_BINARY`; `$CARGO_BIN_EXE_mcp-cassette`; `mcp-cassette`
/// on `PATH`. A named path that is not a file is an error, not a reason to look further: a
/// typo should not silently run another binary.
pub(crate) fn find_binary(given: Option<&Path>) -> Result<PathBuf, Error> {
    let named = given
        .map(|p| (p.to_owned(), "the binary given"))
        .or_else(|| {
            std::env::var_os(BINARY_ENV).map(|p| (PathBuf::from(p), "$MCP_CASSETTE_BINARY"))
        })
        .or_else(|| {
            std::env::var_os(CARGO_BINARY_ENV)
                .map(|p| (PathBuf::from(p), "$CARGO_BIN_EXE_mcp-cassette"))
        });
    if let Some((path, from)) = named {
        if path.is_file() {
            return Ok(std::path::absolute(&path).unwrap_or(path));
        }
        return Err(Error::BinaryNotFound {
            tried: format!("{from}, {}, which is not a file", path.display()),
        });
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(BINARY_NAME))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| Error::BinaryNotFound {
            tried: format!("${BINARY_ENV}, ${CARGO_BINARY_ENV} and {BINARY_NAME} on PATH"),
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_binary_that_is_not_a_file_is_refused_not_skipped() {
        let missing = Path::new("/no/such/mcp-cassette");
        let err = find_binary(Some(missing)).unwrap_err().to_string();
        assert!(
            err.contains("the binary given, /no/such/mcp-cassette, which is not a file"),
            "{err}"
        );
        let here = std::env::current_exe().unwrap();
        assert_eq!(find_binary(Some(&here)).unwrap(), here);
    }
}
