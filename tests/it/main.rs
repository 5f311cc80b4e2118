//! The one integration-test binary: drives the real `mcp-cassette` executable.

mod check;
mod fixtures;
mod interop;
mod lint;
mod record;
mod redact;
