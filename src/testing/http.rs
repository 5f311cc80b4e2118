//! An HTTP cassette served inside the test process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cassette::OnMiss;
use super::error::{Error, Failure};
use super::miss::Miss;
use super::unused::Unused;
use crate::replay::Index;
use crate::replay::http::background::Background;
use crate::replay::http::control::Control;
use crate::replay::http::headers::Notes;
use crate::replay::http::{BODY_LIMIT, Options, Replay};
use crate::replay::session::Rules;
use crate::replay::usage;
use crate::transport::http::inbound::Shutdown;

/// A running in-process replay of an HTTP cassette. Point an MCP client at [`HttpReplay::url`].
///
/// When dropped without [`HttpReplay::finish`], it stops the server and panics if the verdict
/// fails, unless the thread is already panicking (a failed assertion earlier in the test), so a
/// test that failed for another reason reports that reason and is not aborted.
#[derive(Debug)]
#[must_use = "dropping the handle stops the server at once"]
pub struct HttpReplay {
    server: Option<Background>,
    url: String,
    path: PathBuf,
    on_miss: OnMiss,
    fail_on_unused: bool,
}

impl HttpReplay {
    pub(crate) fn start(
        path: PathBuf,
        index: Arc<Index>,
        rules: Rules,
        on_miss: OnMiss,
        fail_on_unused: bool,
    ) -> Result<HttpReplay, Error> {
        let options = Options {
            on_miss: on_miss.engine(),
            paced: false,
            body_limit: BODY_LIMIT,
        };
        let replay = Replay::new(
            index,
            rules,
            options,
            None,
            Notes::new(Box::new(CapturedStderr)),
            Shutdown::new(),
        )
        .with_control(Control::in_process());
        let shown = path.display().to_string();
        let server =
            Background::start(replay, "127.0.0.1:0", &shown).map_err(|e| Error::Start {
                path: path.clone(),
                message: e.to_string(),
            })?;
        Ok(HttpReplay {
            url: server.url().to_owned(),
            server: Some(server),
            path,
            on_miss,
            fail_on_unused,
        })
    }

    /// The server's base URL, `http://127.0.0.1:<port>/`: the Streamable HTTP endpoint (any
    /// path on it serves the cassette).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The cassette's absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The misses since the previous drain, oldest first. A miss is logged before the client
    /// gets its answer, so once the client has seen the miss error a drain includes it.
    /// Drained misses are the caller's: [`HttpReplay::finish`] judges only those left.
    pub fn drain_misses(&self) -> Vec<Miss> {
        self.drain().0
    }

    /// The recordings no request has used so far, in cassette order (docs/replay.md, "Unused
    /// recordings").
    pub fn unused(&self) -> Vec<Unused> {
        self.server
            .as_ref()
            .map(|s| {
                s.replay()
                    .usage()
                    .unused()
                    .iter()
                    .map(Unused::from_engine)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Stops the server and gives the verdict: `Err(Error::Failed)` when misses are left
    /// undrained under [`OnMiss::Error`], or recordings were never used under
    /// [`Cassette::fail_on_unused`](super::Cassette::fail_on_unused).
    pub fn finish(mut self) -> Result<(), Error> {
        self.verdict()
    }

    fn drain(&self) -> (Vec<Miss>, u64) {
        let Some(control) = self.server.as_ref().and_then(|s| s.replay().control()) else {
            return (Vec::new(), 0);
        };
        let (records, dropped) = control.drain();
        let misses = records
            .iter()
            .filter_map(|record| Miss::from_json(&record.to_json()))
            .collect();
        (misses, dropped)
    }

    fn verdict(&mut self) -> Result<(), Error> {
        if self.server.is_none() {
            return Ok(());
        }
        let (mut misses, mut dropped) = self.drain();
        let mut unused = Vec::new();
        if let Some(server) = self.server.take() {
            // The replay's own summary, as `replay --listen` writes it when it stops.
            let finished = server.stop();
            let notes = Notes::new(Box::new(CapturedStderr));
            for line in finished
                .lines
                .iter()
                .chain(&usage::summary(&finished.unused))
            {
                notes.note(line);
            }
            if self.fail_on_unused {
                unused = finished.unused.iter().map(Unused::from_engine).collect();
            }
        }
        if self.on_miss != OnMiss::Error {
            misses.clear();
            dropped = 0;
        }
        if misses.is_empty() && dropped == 0 && unused.is_empty() {
            return Ok(());
        }
        Err(Error::Failed(Failure {
            path: self.path.clone(),
            misses,
            dropped,
            unused,
        }))
    }
}

impl Drop for HttpReplay {
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

/// The replay's diagnostics, through `eprint!` rather than the raw stderr handle: the test
/// harness captures that (on the server thread too, which inherits the capture), so they show
/// with the output of a failing test and stay quiet otherwise.
pub(crate) struct CapturedStderr;

impl Write for CapturedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        eprint!("{}", String::from_utf8_lossy(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
