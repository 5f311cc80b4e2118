//! The one integration-test binary: drives the real `mcp-cassette` executable.

mod ajv;
mod check;
mod contract;
mod fixtures;
mod interop;
mod leaks;
mod lint;
mod lint_cassette;
mod readme;
mod record;
mod redact;
mod replay;
mod sarif;
mod verify;
