//! The Rust testing API (`mcp_cassette::testing`, docs/testing-api.md) driven by the official
//! Rust SDK's client, `rmcp`: over Streamable HTTP against a cassette served in this process,
//! and over stdio through rmcp's child-process transport spawning the replay command.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mcp_cassette::testing::{
    Cassette, Error, Handling, MissReason, OnMiss, StdioReplay, Transport,
};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};

const HTTP: &str = "tests/fixtures/http/everything.cassette.jsonl";
const STDIO: &str = "tests/fixtures/reference/corpus-0.4/tiny.cassette.jsonl";

type Client = RunningService<RoleClient, ()>;

async fn http_client(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("the rmcp client connects to the replay")
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name).with_arguments(arguments)
}

/// The text of a tool result's content, joined.
fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

/// A runtime for the plain `#[test]`s, which have none.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Calls `echo` with arguments the recording does not hold: an `arguments-differ` miss.
async fn drift(url: &str) {
    let client = http_client(url).await;
    let answer = client
        .call_tool(call("echo", json!({ "message": "drifted" })))
        .await;
    assert!(answer.is_err(), "a miss is a JSON-RPC error: {answer:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_http_cassette_answers_the_rmcp_client_in_process() {
    let replay = Cassette::open(HTTP).unwrap().serve_http().unwrap();
    assert!(
        replay.url().starts_with("http://127.0.0.1:"),
        "{}",
        replay.url()
    );
    let client = http_client(replay.url()).await;
    let info = client.peer_info().expect("the recorded initialize answer");
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "mcp-servers/everything");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let sum = client
        .call_tool(call("get-sum", json!({ "a": 2, "b": 40 })))
        .await
        .unwrap();
    assert!(text(&sum).contains("42"), "{sum:?}");
    let echo = client
        .call_tool(call("echo", json!({ "message": "hello from ts" })))
        .await
        .unwrap();
    assert!(text(&echo).contains("hello from ts"), "{echo:?}");
    client.cancel().await.unwrap();
    assert!(replay.drain_misses().is_empty());
    replay.finish().unwrap();
}

#[test]
fn a_miss_fails_finish_with_the_typed_diff() {
    let replay = Cassette::open(HTTP).unwrap().serve_http().unwrap();
    runtime().block_on(drift(replay.url()));
    let Err(Error::Failed(failure)) = replay.finish() else {
        panic!("a miss fails the verdict")
    };
    let [miss] = failure.misses.as_slice() else {
        panic!("one miss: {:?}", failure.misses)
    };
    assert_eq!(miss.method, "tools/call");
    assert_eq!(miss.tool.as_deref(), Some("echo"));
    assert_eq!(miss.kind(), "arguments-differ");
    assert_eq!(miss.handling, Handling::Error);
    assert!(miss.reason.is_mismatch());
    let [change] = miss.changes() else {
        panic!("one change: {:?}", miss.changes())
    };
    assert_eq!(change.path, "/message");
    assert_eq!(change.recorded, Some(json!("hello from ts")));
    assert_eq!(change.live, Some(json!("drifted")));
    let message = Error::Failed(failure).to_string();
    assert!(
        message.starts_with("mcp-cassette: no recorded answer for \"tools/call\", ")
            && message.ends_with(". Re-record the cassette or adjust the interaction."),
        "{message}"
    );
    assert!(message.contains("/message"), "{message}");
}

#[test]
fn drained_misses_are_the_callers_to_judge() {
    let replay = Cassette::open(HTTP).unwrap().serve_http().unwrap();
    runtime().block_on(drift(replay.url()));
    let misses = replay.drain_misses();
    assert_eq!(misses.len(), 1);
    assert!(matches!(
        misses[0].reason,
        MissReason::ArgumentsDiffer { .. }
    ));
    assert!(replay.drain_misses().is_empty(), "a drain empties the log");
    replay.finish().unwrap();
}

#[test]
fn on_miss_warn_borrows_and_does_not_fail() {
    let replay = Cassette::open(HTTP)
        .unwrap()
        .on_miss(OnMiss::Warn)
        .serve_http()
        .unwrap();
    runtime().block_on(async {
        let client = http_client(replay.url()).await;
        client
            .call_tool(call("get-sum", json!({ "a": 1, "b": 1 })))
            .await
            .expect("another tools/call recording answers");
        client.cancel().await.unwrap();
    });
    let misses = replay.drain_misses();
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(misses[0].handling, Handling::Borrowed);
    replay.finish().unwrap();
}

#[test]
fn dropping_the_handle_panics_with_the_miss() {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let replay = Cassette::open(HTTP).unwrap().serve_http().unwrap();
        runtime().block_on(drift(replay.url()));
    }));
    let payload = outcome.expect_err("the drop panics");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("no recorded answer for \"tools/call\"") && message.contains("/message"),
        "{message}"
    );
}

#[test]
fn a_test_already_failing_keeps_its_own_panic() {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let replay = Cassette::open(HTTP).unwrap().serve_http().unwrap();
        runtime().block_on(drift(replay.url()));
        panic!("the test's own assertion");
    }));
    // A second panic in the handle's drop would have aborted the whole binary instead.
    let payload = outcome.expect_err("the test panicked");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"the test's own assertion")
    );
}

#[tokio::test]
async fn a_stdio_cassette_answers_the_rmcp_child_process_transport() {
    let replay = Cassette::open(STDIO).unwrap().stdio_command().unwrap();
    assert_eq!(replay.args()[0], "replay");
    assert!(std::path::Path::new(&replay.args()[1]).is_absolute());
    let client = stdio_client(&replay).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "add"), "{tools:?}");
    let sum = client
        .call_tool(call("add", json!({ "a": 20, "b": 22 })))
        .await
        .unwrap();
    assert!(text(&sum).contains("42"), "{sum:?}");
    client.cancel().await.unwrap();
    replay.finish().unwrap();
}

/// The rmcp client over the child-process transport, spawning `replay`'s command.
async fn stdio_client(replay: &StdioReplay) -> Client {
    // The replay's stderr notes would land in the middle of the test run's report.
    let (transport, _) =
        TokioChildProcess::builder(tokio::process::Command::from(replay.command()))
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the replay starts");
    ().serve(transport).await.expect("the rmcp client connects")
}

#[tokio::test]
async fn a_stdio_miss_reaches_the_handle_through_the_report_directory() {
    let replay = Cassette::open(STDIO).unwrap().stdio_command().unwrap();
    let client = stdio_client(&replay).await;
    let answer = client
        .call_tool(call("add", json!({ "a": 1, "b": 1 })))
        .await;
    assert!(answer.is_err(), "{answer:?}");
    // Written before the answer: already there while the client is still connected.
    let misses = replay.drain_misses();
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(misses[0].tool.as_deref(), Some("add"));
    assert_eq!(misses[0].kind(), "arguments-differ");
    let again = client
        .call_tool(call("add", json!({ "a": 2, "b": 2 })))
        .await;
    assert!(again.is_err(), "{again:?}");
    client.cancel().await.unwrap();
    let Err(Error::Failed(failure)) = replay.finish() else {
        panic!("the undrained miss fails the verdict")
    };
    assert_eq!(failure.misses.len(), 1, "{:?}", failure.misses);
    assert_eq!(failure.misses[0].changes()[0].live, Some(json!(2)));
}

#[test]
fn unused_recordings_fail_only_when_asked() {
    let run = |fail: bool| {
        let replay = Cassette::open(HTTP)
            .unwrap()
            .fail_on_unused(fail)
            .serve_http()
            .unwrap();
        runtime().block_on(async {
            let client = http_client(replay.url()).await;
            client.list_all_tools().await.unwrap();
            client.cancel().await.unwrap();
        });
        let unused = replay.unused();
        assert!(
            unused
                .iter()
                .any(|u| u.method == "tools/call" && u.tool.as_deref() == Some("get-sum")),
            "{unused:?}"
        );
        replay.finish()
    };
    run(false).unwrap();
    let Err(Error::Failed(failure)) = run(true) else {
        panic!("unused recordings fail the verdict")
    };
    assert!(failure.misses.is_empty());
    let message = Error::Failed(failure.clone()).to_string();
    assert!(
        message.contains("recorded answer(s) in ") && message.contains("were never used"),
        "{message}"
    );
    assert!(
        !failure.unused.iter().any(|u| u.method == "tools/list"),
        "tools/list was asked for: {:?}",
        failure.unused
    );
}

#[tokio::test]
async fn unused_recordings_of_stdio_replays_are_added_up() {
    let replay = Cassette::open(STDIO)
        .unwrap()
        .fail_on_unused(true)
        .stdio_command()
        .unwrap();
    // Two replays, each asking for one recorded call: together they used both.
    let client = stdio_client(&replay).await;
    client
        .call_tool(call("add", json!({ "a": 20, "b": 22 })))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    let client = stdio_client(&replay).await;
    client
        .call_tool(call("echo", json!({ "message": "hi" })))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    let Err(Error::Failed(failure)) = replay.finish() else {
        panic!("the cassette holds more than these calls")
    };
    let tools: Vec<_> = failure
        .unused
        .iter()
        .filter_map(|u| u.tool.as_deref())
        .collect();
    assert!(
        !tools.contains(&"echo") && tools.contains(&"count"),
        "{:?}",
        failure.unused
    );
    // The one `add` asked for used the first recorded `add`; the second (line 33) is unused.
    assert_eq!(
        tools.iter().filter(|t| **t == "add").count(),
        1,
        "{tools:?}"
    );
}

#[test]
fn the_wrong_transport_and_a_missing_file_are_named() {
    let http = Cassette::open(HTTP).unwrap();
    assert_eq!(http.transport(), Transport::Http);
    let err = http.stdio_command().unwrap_err().to_string();
    assert!(
        err.contains("was recorded over http") && err.contains("serve_http()"),
        "{err}"
    );
    let err = Cassette::open(STDIO)
        .unwrap()
        .serve_http()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("was recorded over stdio") && err.contains("stdio_command()"),
        "{err}"
    );
    let err = Cassette::open("tests/fixtures/no-such.jsonl")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("mcp-cassette: failed to open the cassette ")
            && err.contains("no-such.jsonl"),
        "{err}"
    );
    let err = Cassette::open(HTTP)
        .unwrap()
        .volatile("tools/call:/name")
        .serve_http()
        .unwrap_err();
    assert!(matches!(err, Error::Start { .. }), "{err}");
    assert!(err.to_string().contains("cannot declare"), "{err}");
}

#[test]
fn a_declared_volatile_field_is_left_out_of_matching() {
    let replay = Cassette::open(HTTP)
        .unwrap()
        .volatile("tools/call:/arguments/message")
        .serve_http()
        .unwrap();
    runtime().block_on(async {
        let client = http_client(replay.url()).await;
        let echo = client
            .call_tool(call("echo", json!({ "message": "drifted" })))
            .await
            .expect("the recording answers despite the drift");
        assert!(text(&echo).contains("hello from ts"), "{echo:?}");
        client.cancel().await.unwrap();
    });
    replay.finish().unwrap();
}
