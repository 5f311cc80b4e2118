//! `replay --fault` through the real binary (docs/replay.md, "Fault injection"): on stdio with
//! plain JSON lines, over HTTP with the small client of `replay_http`. Pauses are asserted as
//! lower bounds only (a contended machine may always be slower); error shares are asserted
//! exactly, for a fixed seed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::record::bin;
use crate::replay_http::Server;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/verify")
        .join(name)
}

/// `replay tiny.cassette.jsonl <args>` on stdio, fed `lines`.
fn replay(args: &[&str], lines: &[Value]) -> Output {
    let mut child = Command::new(bin())
        .arg("replay")
        .arg(fixture("tiny.cassette.jsonl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("replay starts");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let writer = std::thread::spawn(move || {
        // A replay that went away stops reading: a broken pipe here is expected.
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn echo(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}}})
}

fn answers(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The ids answered with an injected error, in order.
fn errored(out: &Output) -> Vec<u64> {
    answers(out)
        .iter()
        .filter(|a| a["error"]["code"] == -32603)
        .map(|a| a["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn latency_delays_the_matching_answers() {
    let started = Instant::now();
    let out = replay(
        &[
            "--fault",
            "latency=150ms..200ms:tools/call",
            "--fault-seed",
            "3",
        ],
        &[initialize(1), ping(2), echo(3)],
    );
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(elapsed >= Duration::from_millis(150), "{elapsed:?}");
    let answers = answers(&out);
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[2]["result"]["content"][0]["text"], "echo:hi #1");
    let err = stderr(&out);
    assert!(
        err.contains("mcp-cassette replay: injecting 1 fault(s) with --fault-seed 3 (pass it again to repeat them)"),
        "{err}"
    );
    assert!(
        err.contains("faults injected (--fault-seed 3): 0 error answer(s), 0 HTTP status answer(s), 1 delayed answer(s)"),
        "{err}"
    );
}

#[test]
fn an_error_share_is_reproducible_from_its_seed() {
    let mut lines = vec![initialize(1)];
    lines.extend((2..=61).map(ping));
    let args = |seed: &'static str| ["--fault", "error=-32603@0.25:ping", "--fault-seed", seed];
    let first = replay(&args("42"), &lines);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let hit = errored(&first);
    assert!(!hit.is_empty() && hit.len() < 60, "{hit:?}");
    assert_eq!(answers(&first).len(), 61, "every request is answered");
    assert_eq!(hit, errored(&replay(&args("42"), &lines)), "the same seed");
    assert_ne!(hit, errored(&replay(&args("43"), &lines)), "another seed");
    let message = &answers(&first)
        .into_iter()
        .find(|a| a["id"] == hit[0])
        .unwrap()["error"]["message"];
    assert_eq!(
        message,
        "mcp-cassette replay: injected fault (--fault error=-32603)"
    );
    assert!(stderr(&first).contains(&format!("{} error answer(s)", hit.len())));

    // The recording stays unconsumed: a retry of a failed call gets the recorded answer.
    let out = replay(
        &[
            "--fault",
            "error=-32603@0.5:tools/call:echo",
            "--fault-seed",
            "5",
        ],
        &[
            initialize(1),
            echo(2),
            echo(3),
            echo(4),
            echo(5),
            echo(6),
            echo(7),
            echo(8),
        ],
    );
    assert_eq!(
        errored(&out),
        [2, 3, 4, 5, 6],
        "seed 5 fails the first five tries"
    );
    let texts: Vec<Value> = answers(&out)
        .into_iter()
        .filter(|a| a.get("result").is_some() && a["id"] != 1)
        .map(|a| a["result"]["content"][0]["text"].clone())
        .collect();
    assert_eq!(
        texts.first(),
        Some(&json!("echo:hi #1")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn drop_after_ends_the_replay() {
    let out = replay(
        &["--fault", "drop-after=2"],
        &[initialize(1), ping(2), ping(3), ping(4)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ids: Vec<Value> = answers(&out).iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2)]);
    assert!(
        stderr(&out).contains("; went away at request 3"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_faults_are_refused_with_exit_2() {
    for (args, says) in [
        (
            vec!["--fault", "latency"],
            "no \"=\" between the kind and its value",
        ),
        (vec!["--fault", "jitter=5ms"], "unknown kind \"jitter\""),
        (vec!["--fault", "error=-1@2"], "is not a fraction above 0"),
        (
            vec!["--fault", "http-status=503"],
            "needs an HTTP replay (--listen)",
        ),
        (
            vec!["--fault", "slow-sse=10ms"],
            "needs an HTTP replay (--listen)",
        ),
        (
            vec!["--fault-seed", "4"],
            "--fault-seed does nothing without --fault",
        ),
    ] {
        let out = replay(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
}

fn http_fixture() -> PathBuf {
    fixture("tiny.http.cassette.jsonl")
}

#[test]
fn http_status_answers_in_place_of_the_recording() {
    let server = Server::start(
        &http_fixture(),
        &["--fault", "http-status=503:tools/call", "--fault-seed", "1"],
    );
    assert_eq!(server.post(&initialize(1), &[]).status, 200);
    let answer = server.post(&echo(2), &[]);
    assert_eq!(answer.status, 503);
    assert_eq!(answer.json()["id"], 2);
    assert_eq!(
        answer.json()["error"]["message"],
        "mcp-cassette replay: injected fault (--fault http-status=503)"
    );
    let (code, err) = server.stop();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 HTTP status answer(s)"), "{err}");
}

#[test]
fn slow_sse_spaces_the_events_of_a_stream() {
    let server = Server::start(&http_fixture(), &["--fault", "slow-sse=120ms"]);
    assert_eq!(server.post(&initialize(1), &[]).status, 200);
    let started = Instant::now();
    let answer = server.post(&echo(2), &[]);
    let elapsed = started.elapsed();
    let events = answer.events();
    assert_eq!(events.len(), 2, "{}", answer.text());
    assert_eq!(events[1]["result"]["content"][0]["text"], "echo:hi #1");
    assert!(elapsed >= Duration::from_millis(240), "{elapsed:?}");
    let _ = server.stop();
}

#[test]
fn http_drop_after_closes_without_an_answer_and_stops() {
    let mut child = Command::new(bin())
        .arg("replay")
        .arg(http_fixture())
        .args(["--listen", "127.0.0.1:0", "--fault", "drop-after=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("a URL line").unwrap();
        if let Some((_, url)) = line.rsplit_once(" server at http://") {
            break url.trim_end_matches('/').to_owned();
        }
    };
    let first =
        crate::replay_http::request(&addr, "POST", &[], initialize(1).to_string().as_bytes());
    assert_eq!(first.status, 200);
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let body = ping(2).to_string();
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        rest.iter().any(|l| l.ends_with("; went away at request 2")),
        "{rest:?}"
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn the_python_sdk_client_sees_an_injected_error_and_the_rest_as_recorded() {
    crate::interop::require_installed();
    let replay = vec![
        bin().to_owned(),
        "replay".to_owned(),
        fixture("tiny.cassette.jsonl").display().to_string(),
        "--fault".to_owned(),
        "error=-32050:tools/call:add".to_owned(),
        "--fault".to_owned(),
        "latency=100ms:tools/call:echo".to_owned(),
    ];
    let started = Instant::now();
    let seen = crate::interop::py_client("tiny", "legacy", &replay);
    assert!(started.elapsed() >= Duration::from_millis(100));
    let steps = seen["steps"].as_array().unwrap();
    assert_eq!(
        steps[0]["result"],
        json!(["add", "echo", "slugify"]),
        "{seen}"
    );
    assert_eq!(
        steps[1]["result"]["content"][0]["text"], "echo:hi #1",
        "{seen}"
    );
    let error = steps[2]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(
        error.contains("injected fault (--fault error=-32050)"),
        "{error}"
    );
}
