//! A replay server on a thread of its own, for a caller that is not a `replay --listen` process:
//! the testing API (docs/testing-api.md) serves a cassette inside a test process this way.
//!
//! The thread runs its own single-threaded tokio runtime, so the caller needs no runtime and may
//! be inside one of any flavour: a `#[tokio::test]` on a current-thread runtime that blocks on
//! the server's answers would deadlock if the server shared that runtime.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::{Finished, Replay, serve};
use crate::transport::http::inbound::{self, BindError};

/// Why a background replay did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("failed to start the replay thread: {0}")]
    Thread(std::io::Error),
    #[error("failed to start the replay's async runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error("the replay thread ended before it was listening")]
    Vanished,
}

/// A replay serving on its own thread until [`Background::stop`] (or drop).
#[derive(Debug)]
pub struct Background {
    url: String,
    local: SocketAddr,
    replay: Arc<Replay>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Binds `listen` and serves `replay` there; returns once the port is bound, so the URL is
    /// ready for a client. `path` is the cassette as the start-up notes name it.
    pub fn start(replay: Replay, listen: &str, path: &str) -> Result<Background, StartError> {
        let replay = Arc::new(replay);
        let (ready, started) = mpsc::sync_channel::<Result<(String, SocketAddr), StartError>>(1);
        let served = Arc::clone(&replay);
        let listen = listen.to_owned();
        let path = path.to_owned();
        let thread = std::thread::Builder::new()
            .name("mcp-cassette-replay".to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready.send(Err(StartError::Runtime(e)));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let listening = match inbound::bind(&listen).await {
                        Ok(listening) => listening,
                        Err(e) => {
                            let _ = ready.send(Err(e.into()));
                            return;
                        }
                    };
                    for line in served.start_lines(&path, &listening) {
                        served.notes().note(&line);
                    }
                    let _ = ready.send(Ok((listening.url(), listening.local)));
                    serve(listening, served).await;
                });
            })
            .map_err(StartError::Thread)?;
        match started.recv() {
            Ok(Ok((url, local))) => Ok(Background {
                url,
                local,
                replay,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(StartError::Vanished)
            }
        }
    }

    /// The base URL clients are pointed at: `http://<host>:<port>/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bound address (port 0 resolved).
    pub fn local(&self) -> SocketAddr {
        self.local
    }

    pub fn replay(&self) -> &Replay {
        &self.replay
    }

    /// Stops serving (held-open streams end, connections get [`inbound::DRAIN`] to finish),
    /// waits for the thread, and sums up as `replay --listen` does when it stops.
    pub fn stop(mut self) -> Finished {
        self.halt();
        self.replay.finish()
    }

    fn halt(&mut self) {
        self.replay.shutdown.trigger();
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been reported there; the caller's
            // verdict comes from the logs either way.
            let _ = thread.join();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.halt();
    }
}
