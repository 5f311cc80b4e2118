//! The one integration-test binary: drives the real `mcp-cassette` executable.

mod contract;
mod fixtures;
mod interop;
mod lint;
mod lint_cassette;
mod record;
mod redact;
mod replay;
mod sarif;
