//! The one integration-test binary: drives the real `mcp-cassette` executable.

mod contract;
mod fixtures;
mod interop;
mod lint_cassette;
mod record;
mod sarif;
