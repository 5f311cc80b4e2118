//! The one integration-test binary: drives the real `mcp-cassette` executable.

mod fixtures;
mod interop;
mod record;
mod replay;
