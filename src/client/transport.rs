//! What the client needs from a transport: send one message, receive the next, close.
//!
//! The client owns the lifecycle (handshake, ids, timeouts, pagination); a transport only moves
//! messages. stdio implements it here over [`crate::transport::stdio`]; the Streamable HTTP
//! transport implements the same trait (a POST per `send`, its answer queued for `receive`).
//! Failures come back as [`TransportError`], which holds no transport's own types: a server
//! that went away is a [`Gone`] in words, so the client's errors read alike over either.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::message::RpcError;
use crate::protocol::Era;
use crate::transport::stdio::{self, Exit, StdioError, StdioTransport};

/// A boxed future that may cross threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which kind of transport, because era probing starts differently on each: HTTP asks modern
/// first, stdio legacy first (docs/check.md, "Eras").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    Stdio,
    Http,
}

/// One message as received, or a line too long to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    Message(Vec<u8>),
    TooLong { bytes: usize },
}

/// How a server that can no longer be talked to went away, in the words of the transport that
/// noticed: a stdio child's exit status and stderr, an HTTP connection's end. The client puts
/// the method it was waiting for between the two parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gone {
    /// One clause: `the server exited with status 7`, `the server closed its stdout`.
    pub reason: String,
    /// What follows the clause, starting with its own separator (`; its stderr ended with: …`,
    /// ` (nothing on its stderr)`); may be empty.
    pub detail: String,
}

impl fmt::Display for Gone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.reason, self.detail)
    }
}

impl From<Exit> for Gone {
    fn from(exit: Exit) -> Self {
        Gone {
            reason: exit.summary(),
            detail: exit.tail_note(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The server is gone; nothing more will arrive.
    #[error("{0}")]
    Gone(Gone),
    /// The transport could not be set up (spawn failed, empty command, bad URL).
    #[error("{0}")]
    Start(String),
    /// An HTTP answer whose status is not 2xx, with the JSON-RPC error its body carried
    /// (the reference's wording). Later requests may still succeed.
    #[error("HTTP {status} from server{}", status_detail(.error.as_deref()))]
    Status {
        status: u16,
        error: Option<Box<RpcError>>,
    },
    /// Anything else; `fatal` says whether later requests can still succeed.
    #[error("{message}")]
    Failed { message: String, fatal: bool },
}

fn status_detail(error: Option<&RpcError>) -> String {
    match error {
        Some(error) => format!(" ({}: {})", error.code, error.message),
        None => String::new(),
    }
}

impl TransportError {
    /// True when no further exchange can succeed, so a second era probe is pointless.
    pub fn is_fatal(&self) -> bool {
        match self {
            TransportError::Gone(_) | TransportError::Start(_) => true,
            TransportError::Status { .. } => false,
            TransportError::Failed { fatal, .. } => *fatal,
        }
    }
}

impl From<StdioError> for TransportError {
    fn from(err: StdioError) -> Self {
        match err {
            StdioError::Exited(exit) => TransportError::Gone(exit.into()),
            StdioError::EmptyCommand | StdioError::Spawn { .. } => {
                TransportError::Start(err.to_string())
            }
            StdioError::Read(_) => TransportError::Failed {
                message: err.to_string(),
                fatal: true,
            },
        }
    }
}

/// Moves messages to and from one server.
pub trait Transport: Send {
    fn kind(&self) -> TransportKind;

    /// Sends one message (a JSON text without a newline).
    fn send<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Result<(), TransportError>>;

    /// The next message from the server, whatever it answers.
    fn receive(&mut self) -> BoxFuture<'_, Result<Received, TransportError>>;

    /// The era the client settled on (HTTP changes headers with it; stdio does not care).
    fn set_era(&mut self, _era: Era) {}

    /// The protocol version in use (HTTP sends it as a header; stdio does not care).
    fn set_protocol_version(&mut self, _version: &str) {}

    /// Ends the session and releases the server.
    fn close(self: Box<Self>) -> BoxFuture<'static, ()>;
}

impl Transport for StdioTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn send<'a>(&'a mut self, message: &'a str) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move { self.send_line(message).await.map_err(TransportError::from) })
    }

    fn receive(&mut self) -> BoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            match self.next_line().await? {
                stdio::Received::Line(bytes) => Ok(Received::Message(bytes)),
                stdio::Received::TooLong { bytes } => Ok(Received::TooLong { bytes }),
            }
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            StdioTransport::close(*self).await;
        })
    }
}
