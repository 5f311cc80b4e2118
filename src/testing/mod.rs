//! Cassettes in cargo tests: serve a recorded MCP session to the client under test, and fail the
//! test when the client asked for something the recording does not hold.
//!
//! This module is the crate's semver-minded surface for tests (docs/testing-api.md says what is
//! stable): everything here is re-exported from private submodules, option and result types are
//! `#[non_exhaustive]`, and options are set by chaining on [`Cassette`].
//!
//! - An **HTTP cassette** is served inside the test process by [`Cassette::serve_http`], on
//!   `127.0.0.1` and a free port, on a thread of its own with its own single-threaded tokio
//!   runtime. It works the same from a plain `#[test]` and from `#[tokio::test]` (either
//!   flavour): the caller's runtime, if any, is never used, so a current-thread test runtime
//!   that waits on the server cannot deadlock it.
//! - A **stdio cassette** is served by a child process the client spawns:
//!   [`Cassette::stdio_command`] hands back the command (this crate's `mcp-cassette` binary as
//!   `replay <absolute path> …`; see there for where the binary is found). Every replay the
//!   client starts with it reports its misses and what it used back to the handle.
//!
//! A miss (a request no recording answers) reaches the client as a JSON-RPC error, which client
//! code may swallow; the handle keeps each miss as a typed [`Miss`], returned by
//! `drain_misses()`. `finish()` stops serving and returns `Err(Error::Failed)` when misses are
//! left (and, with [`Cassette::fail_on_unused`], when recordings were never used); dropping the
//! handle without `finish` panics with the same message instead, unless the test is already
//! panicking. Both handles, [`HttpReplay`] and [`StdioReplay`], work this way.
//!
//! ```
//! use mcp_cassette::testing::Cassette;
//! use rmcp::ServiceExt as _;
//! use rmcp::model::CallToolRequestParams;
//! use rmcp::transport::StreamableHttpClientTransport;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let replay = Cassette::open("tests/fixtures/http/everything.cassette.jsonl")?.serve_http()?;
//! let runtime = tokio::runtime::Builder::new_current_thread()
//!     .enable_all()
//!     .build()?;
//! runtime.block_on(async {
//!     let client = ().serve(StreamableHttpClientTransport::from_uri(replay.url())).await?;
//!     let tools = client.list_all_tools().await?;
//!     assert!(tools.iter().any(|tool| tool.name == "get-sum"));
//!     let arguments = serde_json::json!({ "a": 2, "b": 40 });
//!     let sum = client
//!         .call_tool(
//!             CallToolRequestParams::new("get-sum")
//!                 .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
//!         )
//!         .await?;
//!     assert!(format!("{:?}", sum.content).contains("42"));
//!     client.cancel().await?;
//!     Ok::<_, Box<dyn std::error::Error>>(())
//! })?;
//! // Fails, naming each one, when a request missed.
//! replay.finish()?;
//! # Ok(())
//! # }
//! ```

mod cassette;
mod error;
mod http;
mod miss;
mod stdio;
mod unused;

pub use cassette::{Cassette, OnMiss, Transport};
pub use error::{Error, Failure};
pub use http::HttpReplay;
pub use miss::{Change, Handling, Miss, MissReason};
pub use stdio::StdioReplay;
pub use unused::Unused;
