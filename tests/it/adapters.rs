//! The test adapters: the miss channel `replay --listen --control` serves them, and real vitest
//! and jest runs of `mcp-cassette/vitest` and `mcp-cassette/jest` (docs/adapters.md).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::record::bin;

const TOKEN: &str = "test-token-0123456789abcdef";
const DRAIN: &str = "/.mcp-cassette/misses/drain";
const TIMEOUT: Duration = Duration::from_secs(10);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tape() -> PathBuf {
    repo().join("tests/fixtures/reference/reference-0.4/tape.http.jsonl")
}

/// A `replay --listen 127.0.0.1:0` started with `args` and `$MCP_CASSETTE_CONTROL_TOKEN` = `token`.
struct Replay {
    child: Child,
    addr: String,
}

impl Replay {
    fn start(args: &[&str], token: Option<&str>) -> Replay {
        let mut cmd = Command::new(bin());
        cmd.arg("replay")
            .arg(tape())
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            cmd.env("MCP_CASSETTE_CONTROL_TOKEN", token);
        }
        let mut child = cmd.spawn().expect("replay starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let addr = loop {
            let line = rx.recv_timeout(TIMEOUT).expect("a URL line");
            if let Some((_, url)) = line.rsplit_once(" server at http://") {
                break url.trim_end_matches('/').to_owned();
            }
        };
        Replay { child, addr }
    }

    /// One request on its own connection: status and body.
    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, body.to_owned())
    }

    fn call(&self, id: u64, arguments: Value) -> Value {
        let frame = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":arguments}});
        let (status, body) = self.send(
            "POST",
            "/",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            &frame.to_string(),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    fn drain(&self, headers: &[(&str, &str)]) -> (u16, String) {
        self.send("POST", DRAIN, headers, "")
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

#[test]
fn a_drain_returns_the_misses_since_the_last_one() {
    let replay = Replay::start(&["--control"], Some(TOKEN));
    let auth = bearer();
    let auth = [("Authorization", auth.as_str())];
    let (status, body) = replay.drain(&auth);
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"misses":[],"dropped":0}"#)
    );

    // A hit is not a miss.
    let hit = replay.call(1, json!({"m":"recorded"}));
    assert_eq!(hit["result"]["content"][0]["text"], "recorded");
    // The client has the miss error in hand before it drains: the drain must hold the miss.
    let missed = replay.call(2, json!({"m":"drifted"}));
    assert_eq!(missed["error"]["code"], -32601);
    let (status, body) = replay.drain(&auth);
    assert_eq!(status, 200);
    let drained: Value = serde_json::from_str(&body).unwrap();
    let misses = drained["misses"].as_array().unwrap();
    assert_eq!(misses.len(), 1, "{drained}");
    let miss = &misses[0];
    assert_eq!(miss["method"], "tools/call");
    assert_eq!(miss["tool"], "echo");
    assert_eq!(miss["id"], 2);
    assert_eq!(miss["handling"], "error");
    assert_eq!(miss["session"], 1);
    assert_eq!(miss["reason"]["kind"], "arguments-differ");
    assert_eq!(
        miss["reason"]["changes"],
        json!([{"path":"/m","recorded":"recorded","live":"drifted"}])
    );
    assert_eq!(
        miss["diagnosis"],
        "method and tool match a recording, but arguments differ at: /m (recorded \"recorded\", got \"drifted\")"
    );

    // Drained means gone; a second miss is the only one in the next drain.
    replay.call(3, json!({"m":"other"}));
    let (_, body) = replay.drain(&auth);
    let drained: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(drained["misses"].as_array().unwrap().len(), 1);
    assert_eq!(drained["misses"][0]["id"], 3);
    let (_, body) = replay.drain(&auth);
    assert_eq!(body, r#"{"misses":[],"dropped":0}"#);
}

#[test]
fn the_drain_answers_only_its_token_and_only_from_home() {
    let replay = Replay::start(&["--control"], Some(TOKEN));
    replay.call(1, json!({"m":"drifted"}));
    assert_eq!(replay.drain(&[]).0, 404);
    assert_eq!(
        replay
            .drain(&[("Authorization", "Bearer test-token-0123456789abcdeX")])
            .0,
        404
    );
    assert_eq!(replay.drain(&[("Authorization", TOKEN)]).0, 404);
    let auth = bearer();
    let (status, _) = replay.drain(&[
        ("Authorization", auth.as_str()),
        ("Origin", "https://evil.example"),
    ]);
    assert_eq!(status, 403);
    let (status, _) = replay.send("GET", DRAIN, &[("Authorization", auth.as_str())], "");
    assert_eq!(status, 405);
    // None of the refused attempts drained anything.
    let (status, body) = replay.drain(&[("Authorization", auth.as_str())]);
    assert_eq!(status, 200);
    let drained: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(drained["misses"].as_array().unwrap().len(), 1);
}

#[test]
fn without_the_flag_there_is_no_drain() {
    let replay = Replay::start(&[], Some(TOKEN));
    replay.call(1, json!({"m":"drifted"}));
    let auth = bearer();
    let (status, body) = replay.drain(&[
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ]);
    // The path is just the MCP endpoint, and an empty body is not a JSON-RPC frame.
    assert_eq!(status, 400, "{body}");
    assert!(!body.contains("misses"), "{body}");
}

#[test]
fn the_flag_needs_a_token_and_listen() {
    let run = |args: &[&str], token: Option<&str>| {
        let mut cmd = Command::new(bin());
        cmd.arg("replay")
            .arg(tape())
            .args(args)
            .env_remove("MCP_CASSETTE_CONTROL_TOKEN")
            .stdin(Stdio::null());
        if let Some(token) = token {
            cmd.env("MCP_CASSETTE_CONTROL_TOKEN", token);
        }
        cmd.output().unwrap()
    };
    let out = run(&["--listen", "127.0.0.1:0", "--control"], None);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MCP_CASSETTE_CONTROL_TOKEN"), "{stderr}");
    let out = run(&["--listen", "127.0.0.1:0", "--control"], Some("short"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));
    let stdio = repo().join("tests/fixtures/reference/reference-0.4/stdio-tape.jsonl");
    let out = Command::new(bin())
        .args(["replay", "--control"])
        .arg(&stdio)
        .env("MCP_CASSETTE_CONTROL_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("add --listen"), "{stderr}");
    // The token is never echoed.
    assert!(!stderr.contains(TOKEN), "{stderr}");
}
