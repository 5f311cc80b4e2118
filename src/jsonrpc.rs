//! JSON-RPC frames.
