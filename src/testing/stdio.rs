//! A stdio cassette: the command a client spawns, and where the binary is found.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::cassette::OnMiss;
use super::error::{Error, Failure};
use super::miss::Miss;
use super::unused::Unused;
use crate::replay::Index;
use crate::replay::handoff::{self, Collected};
use crate::replay::usage::Usage;

/// The environment variable naming the binary to run, as the JavaScript adapter reads it.
pub(crate) const BINARY_ENV: &str = "MCP_CASSETTE_BINARY";
/// What cargo sets, at build and at run time, in this package's own integration tests.
const CARGO_BINARY_ENV: &str = "CARGO_BIN_EXE_mcp-cassette";
const BINARY_NAME: &str = "mcp-cassette";

/// The command that serves a stdio cassette: hand it to the client under test, which spawns it
/// (as often as it likes) and speaks MCP on its standard input and output.
///
/// Every replay the command starts writes its misses, as they happen, and at its end what it
/// used, into a report directory of this handle's (`--exec-report`, docs/exec.md), so the handle
/// can give a verdict over all of them: [`StdioReplay::drain_misses`] and
/// [`StdioReplay::finish`], and on drop as [`HttpReplay`](super::HttpReplay) does.
#[derive(Debug)]
#[must_use = "dropping the handle gives the verdict at once"]
pub struct StdioReplay {
    path: PathBuf,
    program: PathBuf,
    args: Vec<OsString>,
    index: Arc<Index>,
    on_miss: OnMiss,
    fail_on_unused: bool,
    /// The report directory, removed by the verdict.
    reports: Option<PathBuf>,
    /// The miss records drained so far (one replay's file can grow while another's appears).
    drained: Mutex<Vec<Value>>,
}

impl StdioReplay {
    pub(crate) fn new(
        path: PathBuf,
        program: PathBuf,
        mut args: Vec<OsString>,
        index: Arc<Index>,
        on_miss: OnMiss,
        fail_on_unused: bool,
    ) -> Result<StdioReplay, Error> {
        let reports = report_dir().map_err(|e| Error::Start {
            path: path.clone(),
            message: format!("failed to create a report directory: {e}"),
        })?;
        args.push("--exec-report".into());
        args.push(reports.clone().into());
        Ok(StdioReplay {
            path,
            program,
            args,
            index,
            on_miss,
            fail_on_unused,
            reports: Some(reports),
            drained: Mutex::new(Vec::new()),
        })
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

    /// What misses become in the replays the command runs.
    pub fn on_miss(&self) -> OnMiss {
        self.on_miss
    }

    /// The misses any replay of the command reported since the previous drain. A replay writes
    /// a miss before it answers, so once the client has the miss error a drain includes it.
    /// Drained misses are the caller's: [`StdioReplay::finish`] judges only those left.
    pub fn drain_misses(&self) -> Vec<Miss> {
        let collected = self.collect();
        let mut drained = self.drained.lock().unwrap_or_else(|p| p.into_inner());
        let mut fresh = Vec::new();
        // Files are read in name order and a new replay's file may sort before an old one's:
        // what is new is what was not drained before, counted as a multiset.
        let mut seen = drained.clone();
        for record in collected.misses {
            if let Some(at) = seen.iter().position(|r| *r == record) {
                seen.swap_remove(at);
            } else {
                drained.push(record.clone());
                fresh.extend(Miss::from_json(&record));
            }
        }
        fresh
    }

    /// Gives the verdict over every replay the command ran, and removes the report directory:
    /// `Err(Error::Failed)` when misses are left undrained under [`OnMiss::Error`], or
    /// recordings no replay used under
    /// [`Cassette::fail_on_unused`](super::Cassette::fail_on_unused). A replay still running
    /// (its client closed its input a moment ago) gets three seconds to end; one that never
    /// reports its end (killed, or still serving) counts as having used nothing.
    pub fn finish(mut self) -> Result<(), Error> {
        self.verdict()
    }

    fn collect(&self) -> Collected {
        self.reports
            .as_deref()
            .and_then(|dir| handoff::collect(dir).ok())
            .unwrap_or_default()
    }

    fn verdict(&mut self) -> Result<(), Error> {
        if self.reports.is_none() {
            return Ok(());
        }
        let deadline = Instant::now() + ENDING;
        while !self.collect().unfinished.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut misses = self.drain_misses();
        let usage = Usage::new(Arc::clone(&self.index));
        usage.add(&self.collect().counts);
        if let Some(dir) = self.reports.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        let unused: Vec<Unused> = if self.fail_on_unused {
            usage.unused().iter().map(Unused::from_engine).collect()
        } else {
            Vec::new()
        };
        if self.on_miss != OnMiss::Error {
            misses.clear();
        }
        if misses.is_empty() && unused.is_empty() {
            return Ok(());
        }
        Err(Error::Failed(Failure {
            path: self.path.clone(),
            misses,
            dropped: 0,
            unused,
        }))
    }
}

impl Drop for StdioReplay {
    fn drop(&mut self) {
        let verdict = self.verdict();
        if let Err(err) = verdict {
            // A second panic while unwinding would abort the whole test binary.
            if !std::thread::panicking() {
                panic!("{err}");
            }
        }
    }
}

/// How long [`StdioReplay::finish`] waits for replays that have not ended yet: a client that
/// closed the replay's input a moment ago is still waiting for it to exit.
const ENDING: Duration = Duration::from_secs(3);

/// A fresh directory only this user can enter, for the replays' reports.
fn report_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut builder = std::fs::DirBuilder::new();
    builder.mode(0o700);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("mcp-cassette-{}-{n}-{nanos:x}", std::process::id()));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
            Err(e) => return Err(e),
        }
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
