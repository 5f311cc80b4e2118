//! What can go wrong talking to a server, in the same words over any transport.

use serde_json::Value;

use super::{Gone, RpcError, TransportError};
use crate::protocol::Era;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{0}")]
    Transport(TransportError),
    /// The server is gone; `method` is what we were waiting for.
    #[error("{} while waiting for \"{method}\"{}", .gone.reason, .gone.detail)]
    ServerGone { method: String, gone: Gone },
    #[error("timeout after {ms}ms waiting for \"{method}\"{}", stray_note(*.unknown_ids, *.not_json))]
    Timeout {
        method: String,
        ms: u128,
        /// Answers carrying ids this client never sent, seen while waiting.
        unknown_ids: usize,
        /// Lines that were not JSON-RPC, seen while waiting.
        not_json: usize,
    },
    /// A JSON-RPC error answer (the reference's wording).
    #[error("{method} returned error {}: {}", .error.code, .error.message)]
    Rpc {
        method: String,
        error: Box<RpcError>,
    },
    #[error("\"{method}\" needs client input (MRTR); mcp-cassette runs non-interactively")]
    InputRequired {
        method: String,
        input_requests: Option<Value>,
    },
    /// An answer this client cannot use (not an object, too deep to parse, a list not a list).
    #[error("the answer to \"{method}\" {detail}")]
    Malformed { method: String, detail: String },
    /// A listing that would not end.
    #[error("{method} {detail}")]
    Pagination { method: String, detail: String },
    /// A request that cannot be put on the wire (forwarded params too deep to add `_meta` to).
    #[error("cannot forward \"{method}\": {detail}")]
    Unsendable { method: String, detail: String },
    /// A modern server refused discovery with a modern error code (no fallback).
    #[error("server/discover rejected: {message}")]
    DiscoverRejected { code: i64, message: String },
    /// A handshake step failed for a reason other than an error answer.
    #[error("{step} failed: {cause}")]
    Handshake {
        step: &'static str,
        cause: Box<ClientError>,
    },
    #[error("server answered neither era. {first}: {first_error}; {second}: {second_error}")]
    NeitherEra {
        first: Era,
        first_error: Box<ClientError>,
        second: Era,
        second_error: Box<ClientError>,
    },
}

impl ClientError {
    /// True when the server can no longer be talked to at all.
    pub fn is_fatal(&self) -> bool {
        match self {
            ClientError::ServerGone { .. } => true,
            ClientError::Transport(err) => err.is_fatal(),
            ClientError::Handshake { cause, .. } => cause.is_fatal(),
            _ => false,
        }
    }
}

fn stray_note(unknown_ids: usize, not_json: usize) -> String {
    let mut parts = Vec::new();
    if unknown_ids > 0 {
        parts.push(format!(
            "{unknown_ids} answer(s) with an id this client never sent"
        ));
    }
    if not_json > 0 {
        parts.push(format!("{not_json} line(s) that are not JSON-RPC"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; meanwhile the server sent {}", parts.join(" and "))
    }
}
