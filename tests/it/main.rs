//! The one integration-test binary: drives the real `mcp-cassette` executable.

mod action;
mod adapters;
mod ajv;
mod check;
mod cli;
mod contract;
mod exec;
mod fixtures;
mod fuzz_corpus;
mod http_client;
mod interop;
mod leaks;
mod lint;
mod lint_cassette;
mod npm;
mod readme;
mod record;
mod record_http;
mod redact;
mod replay;
mod replay_http;
mod sarif;
mod testing_api;
mod verify;
