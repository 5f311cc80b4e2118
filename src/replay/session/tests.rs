//! The session against hand-built cassettes.

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::cassette::Reader;
use crate::replay::wire::parse_message;

const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;

fn frame(t: u64, dir: &str, frame: Value) -> String {
    json!({"type": "frame", "t": t, "dir": dir, "frame": frame}).to_string()
}

fn req(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn res(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn build(header: &str, lines: &[String], volatile: &[&str], on_miss: OnMiss) -> Session {
    let text = format!("{header}\n{}\n", lines.join("\n"));
    let reader = Reader::new(text.as_bytes(), Path::new("t.jsonl")).unwrap();
    let header = reader.header().clone();
    let volatile: Vec<String> = volatile.iter().map(|s| s.to_string()).collect();
    let index = Index::build(header, reader, &volatile, Path::new("t.jsonl")).unwrap();
    Session::new(Arc::new(index), Rules::default(), on_miss)
}

fn session(lines: &[String]) -> Session {
    build(HEADER, lines, &[], OnMiss::Error)
}

fn send(s: &mut Session, message: Value) -> (Vec<Value>, Outcome) {
    let m = parse_message(&message.to_string()).unwrap();
    let ex = s.handle(&m);
    let frames = ex
        .frames()
        .map(|f| serde_json::from_str(&f.text()).unwrap())
        .collect();
    (frames, ex.outcome)
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

#[test]
fn exact_matches_fifo_rekeyed_then_exhausted() {
    let mut s = session(&[
        frame(
            1,
            "c2s",
            req(json!(1), "tools/call", call("echo", json!({"m": "a"}))),
        ),
        frame(2, "s2c", res(json!(1), json!({"n": 1}))),
        frame(
            3,
            "c2s",
            req(json!(2), "tools/call", call("echo", json!({"m": "a"}))),
        ),
        frame(4, "s2c", res(json!(2), json!({"n": 2}))),
    ]);
    let (f, o) = send(
        &mut s,
        req(json!("x"), "tools/call", call("echo", json!({"m": "a"}))),
    );
    assert_eq!(f, [res(json!("x"), json!({"n": 1}))]);
    assert_eq!(o, Outcome::Answered);
    let (f, _) = send(
        &mut s,
        req(
            json!(9),
            "tools/call",
            json!({"arguments": {"m": "a"}, "name": "echo"}),
        ),
    );
    assert_eq!(f, [res(json!(9), json!({"n": 2}))]);
    let (f, o) = send(
        &mut s,
        req(json!(10), "tools/call", call("echo", json!({"m": "a"}))),
    );
    assert!(
        matches!(
            o,
            Outcome::Missed {
                reason: MissReason::Exhausted { recorded: 2 },
                ..
            }
        ),
        "{o:?}"
    );
    assert_eq!(f[0]["error"]["code"], -32601);
    let message = f[0]["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "mcp-cassette replay: no recorded response for \"tools/call\" (fingerprint miss). Nearest recording: this exact fingerprint was recorded 2 time(s), but every recorded response was already consumed earlier in this session; the client is calling it more often than the recording did. Re-record the cassette or adjust the interaction."
    );
    assert_eq!(s.stats().misses, 1);
}

#[test]
fn answers_keep_recorded_bytes() {
    let text = r#"{"type":"frame","t":2,"dir":"s2c","frame":{"result":{"a":1.0,"u":"\u00e9"},"jsonrpc":"2.0","id":1}}"#;
    let mut s = session(&[
        frame(1, "c2s", req(json!(1), "ping", json!({}))),
        text.to_owned(),
    ]);
    let m = parse_message(r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#).unwrap();
    let ex = s.handle(&m);
    assert_eq!(
        ex.answer.unwrap().text(),
        r#"{"result":{"a":1.0,"u":"\u00e9"},"jsonrpc":"2.0","id":"abc"}"#
    );
}

#[test]
fn idempotent_reads_are_served_again_other_requests_are_not() {
    let mut s = session(&[
        frame(1, "c2s", req(json!(1), "tools/list", json!({}))),
        frame(2, "s2c", res(json!(1), json!({"tools": [1]}))),
        frame(
            3,
            "c2s",
            req(json!(2), "tools/list", json!({"cursor": "p2"})),
        ),
        frame(4, "s2c", res(json!(2), json!({"tools": [2]}))),
        frame(
            5,
            "c2s",
            req(json!(3), "resources/read", json!({"uri": "a"})),
        ),
        frame(6, "s2c", res(json!(3), json!({"contents": []}))),
    ]);
    for expect in [1, 2, 2, 2] {
        let (f, _) = send(&mut s, req(json!(7), "tools/list", json!({})));
        assert_eq!(f[0]["result"]["tools"][0], expect);
    }
    assert_eq!(s.stats().reserved_reads, 2);
    send(&mut s, req(json!(8), "resources/read", json!({"uri": "a"})));
    let (_, o) = send(&mut s, req(json!(9), "resources/read", json!({"uri": "a"})));
    assert!(matches!(o, Outcome::Missed { .. }));
    assert!(
        s.summary(None)
            .iter()
            .any(|l| l.contains("1 fingerprint miss(es)"))
    );
}

#[test]
fn ping_is_synthesized_when_not_recorded() {
    let mut s = session(&[]);
    let (f, o) = send(&mut s, req(json!(5), "ping", json!(null)));
    assert_eq!(f, [res(json!(5), json!({}))]);
    assert_eq!(o, Outcome::Synthesized);
    let (f, o) = send(&mut s, req(json!(6), "tools/list", json!(null)));
    assert!(matches!(
        o,
        Outcome::Missed {
            reason: MissReason::EmptyCassette,
            ..
        }
    ));
    assert!(
        f[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the cassette contains no request/response pairs at all")
    );
}

#[test]
fn diagnoses_name_the_nearest_recording() {
    let mut s = session(&[
        frame(
            1,
            "c2s",
            req(json!(1), "tools/call", call("add", json!({"a": 1, "b": 2}))),
        ),
        frame(2, "s2c", res(json!(1), json!({}))),
        frame(
            3,
            "c2s",
            req(
                json!(2),
                "tools/call",
                call("add", json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})),
            ),
        ),
        frame(4, "s2c", res(json!(2), json!({}))),
        frame(
            5,
            "c2s",
            req(
                json!(3),
                "resources/read",
                json!({"uri": "x", "_meta": {"k": 1}}),
            ),
        ),
        frame(6, "s2c", res(json!(3), json!({}))),
        frame(7, "c2s", req(json!(4), "prompts/get", json!({"name": "p"}))),
    ]);
    let diagnosis = |s: &mut Session, m: Value| match send(s, m).1 {
        Outcome::Missed { diagnosis, .. } => diagnosis,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        diagnosis(
            &mut s,
            req(json!(9), "tools/call", call("add", json!({"a": 5, "b": 5})))
        ),
        "method and tool match a recording, but arguments differ at: /a (recorded 1, got 5); /b (recorded 2, got 5)"
    );
    assert_eq!(
        diagnosis(
            &mut s,
            req(
                json!(9),
                "tools/call",
                call("add", json!({"a": 9, "b": 9, "c": 3, "d": 9, "e": 9}))
            )
        ),
        "method and tool match a recording, but arguments differ at: /a (recorded 1, got 9); /b (recorded 2, got 9); /d (recorded 4, got 9) and 1 more path(s)"
    );
    assert_eq!(
        diagnosis(
            &mut s,
            req(
                json!(9),
                "resources/read",
                json!({"uri": "y", "_meta": {"k": 2}})
            )
        ),
        "method and tool match a recording, but params differ at: /uri (recorded \"x\", got \"y\")"
    );
    assert_eq!(
        diagnosis(&mut s, req(json!(9), "prompts/get", json!({"name": "p"}))),
        "this exact request was recorded, but the recording holds no response for it: the server never answered it before the session ended, so replay has nothing to hand back"
    );
    assert_eq!(
        diagnosis(&mut s, req(json!(9), "prompts/get", json!({"name": "q"}))),
        "\"prompts/get\" was recorded, but no recording of it holds a response: the server never answered it before the session ended, so replay has nothing to hand back"
    );
    assert_eq!(
        diagnosis(&mut s, req(json!(9), "tools/call", call("sub", json!({})))),
        "no recorded tools/call for tool \"sub\". Recorded tools: add"
    );
    assert_eq!(
        diagnosis(&mut s, req(json!(9), "x/y", json!({}))),
        "no recorded request has method \"x/y\". Recorded methods: prompts/get, resources/read, tools/call"
    );
}

#[test]
fn warn_borrows_loudly_but_never_for_retries_or_polls() {
    let lines = [
        frame(
            1,
            "c2s",
            req(json!(1), "tools/call", call("echo", json!({"m": "a"}))),
        ),
        frame(2, "s2c", res(json!(1), json!({"n": "a"}))),
        frame(
            3,
            "c2s",
            req(
                json!(2),
                "tools/call",
                json!({"name": "echo", "arguments": {"m": "a"}, "inputResponses": {"k": 1}}),
            ),
        ),
        frame(4, "s2c", res(json!(2), json!({"n": "retry"}))),
        frame(
            5,
            "c2s",
            req(json!(3), "tasks/get", json!({"taskId": "t1"})),
        ),
        frame(6, "s2c", res(json!(3), json!({"status": "working"}))),
    ];
    let mut s = build(HEADER, &lines, &[], OnMiss::Warn);
    let (_, o) = send(
        &mut s,
        req(
            json!(9),
            "tools/call",
            json!({"name": "echo", "arguments": {"m": "a"}, "inputResponses": {"k": 2}}),
        ),
    );
    match o {
        Outcome::Missed { diagnosis, .. } => assert_eq!(
            diagnosis,
            "method and tool match a recording, but params differ at: /inputResponses/k (recorded 1, got 2)"
        ),
        other => panic!("{other:?}"),
    }
    let (_, o) = send(&mut s, req(json!(9), "tasks/get", json!({"taskId": "t2"})));
    assert!(matches!(o, Outcome::Missed { .. }));
    let (f, o) = send(
        &mut s,
        req(json!(9), "tools/call", call("echo", json!({"m": "zzz"}))),
    );
    assert!(matches!(o, Outcome::Borrowed { .. }), "{o:?}");
    assert_eq!(
        f[0]["result"]["n"], "a",
        "the plain call is lent, never the retry's answer"
    );
    let (_, o) = send(
        &mut s,
        req(json!(9), "tools/call", call("echo", json!({"m": "a"}))),
    );
    assert!(
        matches!(o, Outcome::Missed { .. }),
        "a borrowed recording is consumed"
    );
    assert_eq!(s.stats().borrowed, 1);
}

#[test]
fn task_polls_terminal_reserve_and_not_terminal_miss() {
    let poll = |id: i64, t: u64, status: &str, task: &str| {
        [
            frame(
                t,
                "c2s",
                req(json!(id), "tasks/get", json!({"taskId": task})),
            ),
            frame(
                t + 1,
                "s2c",
                res(json!(id), json!({"taskId": task, "status": status})),
            ),
        ]
    };
    let mut lines = Vec::new();
    lines.extend(poll(1, 10, "working", "done"));
    lines.extend(poll(2, 20, "completed", "done"));
    lines.extend(poll(3, 30, "working", "stuck"));
    lines.extend(poll(4, 40, "input_required", "stuck"));
    let mut s = session(&lines);
    let get = |task: &str| req(json!("p"), "tasks/get", json!({"taskId": task}));
    let statuses: Vec<Value> = (0..4)
        .map(|_| send(&mut s, get("done")).0[0]["result"]["status"].clone())
        .collect();
    assert_eq!(
        statuses,
        [
            json!("working"),
            json!("completed"),
            json!("completed"),
            json!("completed")
        ]
    );
    assert_eq!(s.stats().reserved_tasks, 2);
    send(&mut s, get("stuck"));
    send(&mut s, get("stuck"));
    match send(&mut s, get("stuck")).1 {
        Outcome::Missed { diagnosis, .. } => assert_eq!(
            diagnosis,
            "the recording holds 2 poll(s) for task \"stuck\" and ends with status \"input_required\", which is not terminal: the task was still running when recording stopped, so there is no later state to serve. Re-record until the task reaches completed, failed or cancelled"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn server_frames_follow_the_recording_they_belong_to() {
    let mut s = session(&[
        frame(0, "s2c", note("notifications/hello", json!({}))),
        frame(
            1,
            "c2s",
            req(json!(1), "tools/call", call("echo", json!({}))),
        ),
        frame(2, "s2c", note("notifications/progress", json!({"p": 1}))),
        frame(3, "s2c", res(json!(1), json!({"n": 1}))),
        frame(
            4,
            "s2c",
            note("notifications/tools/list_changed", json!({"after": 1})),
        ),
        frame(
            5,
            "c2s",
            req(json!(2), "tools/call", call("echo", json!({}))),
        ),
        frame(6, "s2c", res(json!(2), json!({"n": 2}))),
        frame(
            7,
            "s2c",
            note("notifications/tools/list_changed", json!({"after": 2})),
        ),
        frame(
            8,
            "c2s",
            req(json!(3), "tools/call", call("never", json!({}))),
        ),
        frame(9, "s2c", res(json!(3), json!({}))),
        frame(10, "s2c", note("notifications/lost", json!({}))),
        frame(
            11,
            "s2c",
            req(json!(0), "sampling/createMessage", json!({})),
        ),
    ]);
    assert_eq!(s.server_requests(), 1);
    let initial: Vec<String> = s
        .take_initial()
        .iter()
        .map(|f| f.text().into_owned())
        .collect();
    assert_eq!(initial.len(), 1);
    let (f, _) = send(&mut s, req(json!(1), "tools/call", call("echo", json!({}))));
    let methods: Vec<&str> = f
        .iter()
        .map(|v| v["method"].as_str().unwrap_or("answer"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "answer",
            "notifications/tools/list_changed"
        ]
    );
    assert_eq!(f[2]["params"]["after"], 1);
    let (f, _) = send(&mut s, req(json!(2), "tools/call", call("echo", json!({}))));
    assert_eq!(f.len(), 2);
    assert_eq!(f[1]["params"]["after"], 2);
    // The notification and the sampling request after the answer to "never" both wait for it.
    assert_eq!(s.pending_frames(), 2);
    assert_eq!(s.stats().pushed, 4, "the opening frame counts too");
    assert!(s.summary(None).iter().any(|l| l == "2 recorded server-initiated frame(s) were not replayed: the client never sent the request each one follows"));
}

fn tagged(method: &str, sub: Value, extra: Value) -> Value {
    let mut params = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": sub}});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    note(method, params)
}

#[test]
fn subscriptions_are_acknowledged_rekeyed_and_kept_apart() {
    let listen = |id: Value, what: &str| {
        req(
            id,
            "subscriptions/listen",
            json!({"notifications": {what: true}}),
        )
    };
    let mut s = session(&[
        frame(1, "c2s", listen(json!(10), "toolsListChanged")),
        frame(
            2,
            "s2c",
            tagged(
                "notifications/subscriptions/acknowledged",
                json!(10),
                json!({"notifications": {"toolsListChanged": true}}),
            ),
        ),
        frame(3, "c2s", listen(json!(11), "promptsListChanged")),
        frame(
            4,
            "s2c",
            tagged(
                "notifications/subscriptions/acknowledged",
                json!(11),
                json!({}),
            ),
        ),
        frame(
            5,
            "c2s",
            req(json!(12), "tools/call", call("add_tool", json!({}))),
        ),
        frame(6, "s2c", res(json!(12), json!({"ok": true}))),
        frame(
            7,
            "s2c",
            tagged("notifications/tools/list_changed", json!(10), json!({})),
        ),
        frame(
            8,
            "s2c",
            tagged("notifications/prompts/list_changed", json!(11), json!({})),
        ),
        frame(
            9,
            "c2s",
            req(json!(13), "tools/call", call("end_listen", json!({}))),
        ),
        frame(10, "s2c", res(json!(13), json!({"ended": true}))),
        frame(
            11,
            "s2c",
            res(
                json!(10),
                json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 10}}),
            ),
        ),
    ]);
    let (f, o) = send(&mut s, listen(json!("sub-a"), "toolsListChanged"));
    assert_eq!(o, Outcome::Subscribed);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        f[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-a"
    );
    let (f, _) = send(
        &mut s,
        req(json!(2), "tools/call", call("add_tool", json!({}))),
    );
    // The prompts subscription was never opened: its frame is held back.
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(f[1]["method"], "notifications/tools/list_changed");
    assert_eq!(
        f[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-a"
    );
    assert_eq!(s.stats().unopened, 1);
    let (f, _) = send(
        &mut s,
        req(json!(3), "tools/call", call("end_listen", json!({}))),
    );
    assert_eq!(f.len(), 2);
    assert_eq!(f[1]["id"], "sub-a");
    assert_eq!(
        f[1]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-a"
    );
    let (_, o) = send(&mut s, listen(json!(4), "toolsListChanged"));
    match o {
        Outcome::Missed { reason, .. } => {
            assert_eq!(reason, MissReason::SubscriptionExhausted { recorded: 1 })
        }
        other => panic!("{other:?}"),
    }
    let (_, o) = send(&mut s, listen(json!(5), "resourcesListChanged"));
    match o {
        Outcome::Missed { diagnosis, .. } => assert!(
            diagnosis.contains("params differ at: /notifications/"),
            "{diagnosis}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn listen_ids_are_the_clients() {
    // Same as above with a string listen id from the client, to pin the re-keying text.
    let mut s = session(&[
        frame(1, "c2s", req(json!(10), "subscriptions/listen", json!({}))),
        frame(
            2,
            "s2c",
            tagged(
                "notifications/subscriptions/acknowledged",
                json!(10),
                json!({}),
            ),
        ),
    ]);
    let m = parse_message(
        r#"{"jsonrpc":"2.0","id":"sub-a","method":"subscriptions/listen","params":{}}"#,
    )
    .unwrap();
    let ex = s.handle(&m);
    assert_eq!(
        ex.answer.unwrap().text(),
        r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub-a"}}}"#
    );
}

#[test]
fn cancelled_subscriptions_stop_receiving() {
    let mut s = session(&[
        frame(1, "c2s", req(json!(10), "subscriptions/listen", json!({}))),
        frame(
            2,
            "s2c",
            tagged(
                "notifications/subscriptions/acknowledged",
                json!(10),
                json!({}),
            ),
        ),
        frame(3, "c2s", req(json!(11), "tools/call", call("x", json!({})))),
        frame(4, "s2c", res(json!(11), json!({}))),
        frame(
            5,
            "s2c",
            tagged("notifications/tools/list_changed", json!(10), json!({})),
        ),
    ]);
    send(&mut s, req(json!(1), "subscriptions/listen", json!({})));
    send(
        &mut s,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    let (f, _) = send(&mut s, req(json!(2), "tools/call", call("x", json!({}))));
    assert_eq!(f.len(), 1);
    assert_eq!(s.stats().cancelled, 1);
}

#[test]
fn volatile_fields_are_ignored_on_both_sides() {
    let lines = [
        frame(
            1,
            "c2s",
            req(
                json!(1),
                "tools/call",
                call("echo", json!({"m": "hi", "at": "2026", "list": [1, 2, 3]})),
            ),
        ),
        frame(2, "s2c", res(json!(1), json!({"ok": 1}))),
    ];
    let mut s = build(
        HEADER,
        &lines,
        &["tools/call:/arguments/at", "/arguments/list/1"],
        OnMiss::Error,
    );
    let (f, _) = send(
        &mut s,
        req(
            json!(7),
            "tools/call",
            call("echo", json!({"m": "hi", "at": "2027", "list": [1, 9, 3]})),
        ),
    );
    assert_eq!(f[0]["result"]["ok"], 1);
    let (_, o) = send(
        &mut s,
        req(
            json!(8),
            "tools/call",
            call("echo", json!({"m": "ho", "at": "2028", "list": [1, 2]})),
        ),
    );
    match o {
        Outcome::Missed { diagnosis, .. } => assert_eq!(
            diagnosis,
            "method and tool match a recording, but arguments differ at: /list/2 (recorded 3, got (absent)); /m (recorded \"hi\", got \"ho\")"
        ),
        other => panic!("{other:?}"),
    }
    let header = r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"stdio","volatile":["/arguments/at"]}"#;
    let mut s = build(header, &lines, &["/arguments/list"], OnMiss::Error);
    let (f, _) = send(
        &mut s,
        req(
            json!(7),
            "tools/call",
            call("echo", json!({"m": "hi", "at": 0})),
        ),
    );
    assert_eq!(f[0]["result"]["ok"], 1);
}

#[test]
fn duplicate_ids_pair_in_order_and_streams_answer_over_stdio() {
    let header = r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"http","era":"modern"}"#;
    let chunks = json!({"type": "chunks", "t": 5, "dir": "s2c", "id": 1, "chunks": [
        {"t": 6, "frame": note("notifications/progress", json!({"progress": 1}))},
        {"t": 7, "frame": res(json!(1), json!({"streamed": true}))}
    ]})
    .to_string();
    let mut s = build(
        header,
        &[
            frame(1, "c2s", req(json!(1), "tools/call", call("a", json!({})))),
            frame(2, "c2s", req(json!(1), "tools/call", call("b", json!({})))),
            frame(3, "s2c", res(json!(1), json!({"for": "a"}))),
            frame(4, "s2c", res(json!(1), json!({"for": "b"}))),
            frame(5, "c2s", req(json!(1), "tools/call", call("c", json!({})))),
            chunks,
        ],
        &[],
        OnMiss::Error,
    );
    let (f, _) = send(&mut s, req(json!(1), "tools/call", call("b", json!({}))));
    assert_eq!(f[0]["result"]["for"], "b");
    let (f, _) = send(&mut s, req(json!(1), "tools/call", call("a", json!({}))));
    assert_eq!(f[0]["result"]["for"], "a");
    let (f, _) = send(&mut s, req(json!(77), "tools/call", call("c", json!({}))));
    assert_eq!(f.len(), 2);
    assert_eq!(f[0]["method"], "notifications/progress");
    assert_eq!(f[1], res(json!(77), json!({"streamed": true})));
}

#[test]
fn a_request_written_after_its_answer_still_precedes_it() {
    // One capture thread per direction can write the answer's line first, in the same ms.
    let mut s = session(&[
        frame(5, "s2c", res(json!(1), json!({"n": 1}))),
        frame(
            5,
            "s2c",
            note("notifications/tools/list_changed", json!({})),
        ),
        frame(
            5,
            "c2s",
            req(json!(1), "tools/call", call("add", json!({}))),
        ),
        frame(7, "c2s", req(json!(2), "tools/list", json!({}))),
        frame(
            8,
            "s2c",
            note("notifications/message", json!({"during": 2})),
        ),
        frame(9, "s2c", res(json!(2), json!({"tools": []}))),
    ]);
    let (f, _) = send(
        &mut s,
        req(json!("a"), "tools/call", call("add", json!({}))),
    );
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(f[1]["method"], "notifications/tools/list_changed");
    let (f, _) = send(&mut s, req(json!("b"), "tools/list", json!({})));
    assert_eq!(f[0]["params"]["during"], 2, "{f:?}");
    assert_eq!(s.pending_frames(), 0);
}

#[test]
fn repeated_lines_are_answered_in_recorded_order_whatever_path_they_take() {
    let a = call("echo", json!({"m": "a"}));
    let b = call("echo", json!({"m": "b"}));
    let lines = [
        frame(1, "c2s", req(json!(1), "tools/call", a.clone())),
        frame(2, "s2c", res(json!(1), json!({"n": "a1"}))),
        frame(3, "c2s", req(json!(2), "tools/call", b.clone())),
        frame(4, "s2c", res(json!(2), json!({"n": "b"}))),
        frame(5, "c2s", req(json!(3), "tools/call", a.clone())),
        frame(6, "s2c", res(json!(3), json!({"n": "a2"}))),
    ];
    let mut s = session(&lines);
    let line = |id: &str, params: &Value| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
    };
    let mut answer = |text: String| {
        let h = s.handle_text(&text).unwrap();
        h.exchange.answer.map(|a| a.text().into_owned())
    };
    // Out of order first: the recording expected next is `a`, the client asks for `b`.
    assert_eq!(
        answer(line("\"x\\\"y\"", &b)).as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":"x\"y","result":{"n":"b"}}"#)
    );
    // `a` twice: first recording first, whichever was expected.
    assert_eq!(
        answer(line("7", &a)).as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":7,"result":{"n":"a1"}}"#)
    );
    // The same request with other spacing is the same request.
    let spaced = line("8", &a).replace(",", " , ");
    assert_eq!(
        answer(spaced).as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":8,"result":{"n":"a2"}}"#)
    );
    let missed = answer(line("9", &a)).unwrap();
    assert!(missed.contains("-32601"), "{missed}");
}

#[test]
fn the_line_fast_path_answers_like_the_message_path() {
    let lines = [
        frame(
            1,
            "c2s",
            req(
                json!(1),
                "tools/call",
                call("echo", json!({"b": 1, "a": [1.0]})),
            ),
        ),
        frame(2, "s2c", res(json!(1), json!({"n": 1}))),
        frame(
            3,
            "c2s",
            req(
                json!(2),
                "tools/call",
                call("echo", json!({"b": 1, "a": [1.0]})),
            ),
        ),
        frame(4, "s2c", res(json!(2), json!({"n": 2}))),
    ];
    let mut s = session(&lines);
    let line = r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"arguments":{"a":[1],"b":1.0},"name":"echo"}}"#;
    let h = s.handle_text(line).unwrap();
    assert!(h.message.is_none(), "answered on the fast path");
    assert_eq!(
        h.exchange.answer.unwrap().text(),
        r#"{"jsonrpc":"2.0","id":1.0,"result":{"n":1}}"#
    );
    let h = s.handle_text(r#"{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"echo","arguments":{"a":[1],"b":1}}}"#).unwrap();
    assert_eq!(
        h.exchange.answer.unwrap().text(),
        r#"{"jsonrpc":"2.0","id":"\u0041","result":{"n":2}}"#
    );
    let h = s.handle_text(line).unwrap();
    assert!(matches!(h.message.as_deref(), Some(Message::Request(_))));
    assert!(matches!(h.exchange.outcome, Outcome::Missed { .. }));
    assert!(s.handle_text("{").is_err());
    let h = s
        .handle_text(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .unwrap();
    assert_eq!(h.exchange.outcome, Outcome::Silent);
}

#[test]
fn header_contradictions_become_warnings() {
    let header = r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00Z","transport":"stdio","era":"modern","url":"http://x"}"#;
    let s = build(
        header,
        &[frame(1, "c2s", req(json!(1), "initialize", json!({})))],
        &[],
        OnMiss::Error,
    );
    let w = &s.index().warnings;
    assert!(
        w.iter()
            .any(|m| m
                .starts_with("era is \"modern\" but the cassette records an `initialize` request")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|m| m == "transport is \"stdio\" but the header carries a `url`")
    );
}

// ---- One index, many sessions ----

fn shared_index(lines: &[String]) -> Arc<Index> {
    let text = format!("{HEADER}\n{}\n", lines.join("\n"));
    let reader = Reader::new(text.as_bytes(), Path::new("t.jsonl")).unwrap();
    let header = reader.header().clone();
    Arc::new(Index::build(header, reader, &[], Path::new("t.jsonl")).unwrap())
}

/// A handshake, a notification after it, and a call recorded twice, the first with progress.
fn handshake_and_calls() -> Vec<String> {
    vec![
        frame(
            1,
            "c2s",
            req(
                json!(1),
                "initialize",
                json!({"protocolVersion": "2025-06-18"}),
            ),
        ),
        frame(
            2,
            "s2c",
            res(json!(1), json!({"serverInfo": {"name": "s"}})),
        ),
        frame(
            3,
            "s2c",
            note("notifications/tools/list_changed", json!({})),
        ),
        frame(
            4,
            "c2s",
            req(json!(2), "tools/call", call("echo", json!({"m": "a"}))),
        ),
        frame(5, "s2c", note("notifications/progress", json!({"p": 1}))),
        frame(6, "s2c", res(json!(2), json!({"n": 1}))),
        frame(
            7,
            "c2s",
            req(json!(3), "tools/call", call("echo", json!({"m": "a"}))),
        ),
        frame(8, "s2c", res(json!(3), json!({"n": 2}))),
    ]
}

/// The client's side of [`handshake_and_calls`], through the front-end's entry point.
fn client_lines() -> Vec<String> {
    vec![
        req(
            json!(1),
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
        )
        .to_string(),
        req(json!(2), "tools/call", call("echo", json!({"m": "a"}))).to_string(),
        req(json!(3), "tools/call", call("echo", json!({"m": "a"}))).to_string(),
    ]
}

/// Every frame a client repeating the recording gets, in order; every request answered.
fn replay_whole(s: &mut Session) -> Vec<Value> {
    let mut frames: Vec<Value> = s
        .take_initial()
        .iter()
        .map(|f| serde_json::from_str(&f.text()).unwrap())
        .collect();
    for line in client_lines() {
        let handled = s.handle_text(&line).unwrap();
        assert_eq!(handled.exchange.outcome, Outcome::Answered, "{line}");
        frames.extend(
            handled
                .exchange
                .frames()
                .map(|f| serde_json::from_str::<Value>(&f.text()).unwrap()),
        );
    }
    frames
}

fn whole_recording() -> Vec<Value> {
    vec![
        res(json!(1), json!({"serverInfo": {"name": "s"}})),
        note("notifications/tools/list_changed", json!({})),
        note("notifications/progress", json!({"p": 1})),
        res(json!(2), json!({"n": 1})),
        res(json!(3), json!({"n": 2})),
    ]
}

#[test]
fn sessions_over_one_index_each_get_the_whole_recording() {
    let index = shared_index(&handshake_and_calls());
    let mut first = Session::new(Arc::clone(&index), Rules::default(), OnMiss::Error);
    assert_eq!(first.pending_frames(), 2);
    assert_eq!(replay_whole(&mut first), whole_recording());
    assert_eq!(first.pending_frames(), 0);

    // The first session consumed everything it was recorded with; the second starts afresh:
    // its `initialize` is the recording's own answer, not a miss or a re-served read.
    let mut second = Session::new(
        Arc::clone(first.shared_index()),
        Rules::default(),
        OnMiss::Error,
    );
    assert_eq!(second.pending_frames(), 2);
    assert_eq!(replay_whole(&mut second), whole_recording());
    assert_eq!(*second.stats(), *first.stats());
    assert_eq!(second.stats().misses, 0);
    assert_eq!(second.stats().pushed, 2);
}

#[test]
fn a_sessions_misses_stay_its_own() {
    let index = shared_index(&handshake_and_calls());
    let mut first = Session::new(Arc::clone(&index), Rules::default(), OnMiss::Error);
    let mut second = Session::new(Arc::clone(&index), Rules::default(), OnMiss::Error);
    replay_whole(&mut first);
    // One call too many, and one never recorded.
    for line in client_lines().into_iter().skip(2).chain([req(
        json!(9),
        "tools/call",
        call("other", json!({})),
    )
    .to_string()])
    {
        let handled = first.handle_text(&line).unwrap();
        assert!(
            matches!(handled.exchange.outcome, Outcome::Missed { .. }),
            "{line}"
        );
    }
    assert_eq!(first.stats().misses, 2);
    assert!(first.summary(None)[0].starts_with("2 fingerprint miss(es)"));

    assert_eq!(second.stats().misses, 0);
    assert_eq!(replay_whole(&mut second), whole_recording());
    assert_eq!(second.stats().misses, 0);
    assert!(
        second.summary(None).iter().all(|l| !l.contains("miss")),
        "{:?}",
        second.summary(None)
    );
}

#[test]
fn sessions_on_two_threads_share_one_index() {
    fn sendable<T: Send>() {}
    sendable::<Session>();
    let index = shared_index(&handshake_and_calls());
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let index = Arc::clone(&index);
                scope.spawn(move || {
                    (0..50)
                        .map(|_| {
                            let mut s =
                                Session::new(Arc::clone(&index), Rules::default(), OnMiss::Error);
                            let frames = replay_whole(&mut s);
                            (frames, s.stats().misses)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for run in runs {
            for (frames, misses) in run.join().unwrap() {
                assert_eq!(frames, whole_recording());
                assert_eq!(misses, 0);
            }
        }
    });
    // Nothing a session did is left in the index.
    let mut after = Session::new(index, Rules::default(), OnMiss::Error);
    assert_eq!(replay_whole(&mut after), whole_recording());
}

#[test]
fn progress_follows_the_live_requests_token() {
    let with_token = |id: Value, token: Value| {
        req(
            id,
            "tools/call",
            json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": token}}),
        )
    };
    let progress = |token: Value, n: u64| {
        note(
            "notifications/progress",
            json!({"progressToken": token, "progress": n, "total": 2}),
        )
    };
    let mut s = session(&[
        frame(1, "c2s", with_token(json!(1), json!("rec-1"))),
        frame(2, "s2c", progress(json!("rec-1"), 1)),
        frame(3, "s2c", progress(json!("someone-else"), 1)),
        frame(4, "s2c", progress(json!("rec-1"), 2)),
        frame(5, "s2c", res(json!(1), json!({"done": true}))),
    ]);
    let (f, o) = send(&mut s, with_token(json!(7), json!(7)));
    assert_eq!(o, Outcome::Answered);
    assert_eq!(
        f,
        [
            progress(json!(7), 1),
            progress(json!("someone-else"), 1),
            progress(json!(7), 2),
            res(json!(7), json!({"done": true})),
        ]
    );
}

#[test]
fn progress_is_left_as_recorded_when_the_client_asked_for_none() {
    let mut s = session(&[
        frame(
            1,
            "c2s",
            req(
                json!(1),
                "tools/call",
                json!({"name": "slow", "_meta": {"progressToken": "t"}}),
            ),
        ),
        frame(
            2,
            "s2c",
            note(
                "notifications/progress",
                json!({"progressToken": "t", "progress": 1}),
            ),
        ),
        frame(3, "s2c", res(json!(1), json!({}))),
    ]);
    let (f, _) = send(&mut s, req(json!(2), "tools/call", json!({"name": "slow"})));
    assert_eq!(f[0]["params"]["progressToken"], "t");
}

#[test]
fn progress_follows_the_live_token_on_the_fast_path_too() {
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "slow", "_meta": {"progressToken": id}}})
    };
    let mut s = session(&[
        frame(1, "c2s", call(1)),
        frame(
            2,
            "s2c",
            note(
                "notifications/progress",
                json!({"progressToken": 1, "progress": 1}),
            ),
        ),
        frame(3, "s2c", res(json!(1), json!({}))),
    ]);
    let handled = s.handle_text(&call(9).to_string()).unwrap();
    assert!(handled.message.is_none(), "answered on the fast path");
    let frames: Vec<Value> = handled
        .exchange
        .frames()
        .map(|f| serde_json::from_str(&f.text()).unwrap())
        .collect();
    assert_eq!(frames[0]["params"]["progressToken"], 9);
    assert_eq!(frames[1]["id"], 9);
}

#[test]
fn a_miss_costs_the_same_on_a_cassette_four_times_larger() {
    // Work counted, not timed: how many recordings the diagnoses read back to compare with.
    let work = |calls: usize| {
        let mut lines = Vec::new();
        for i in 0..calls {
            let id = json!(2 * i);
            let args = json!({"i": i, "tag": "x"});
            lines.push(frame(
                1,
                "c2s",
                req(id.clone(), "tools/call", call("t", args)),
            ));
            lines.push(frame(1, "s2c", res(id, json!({}))));
            let id = json!(2 * i + 1);
            let uri = format!("demo://{i}");
            lines.push(frame(
                1,
                "c2s",
                req(id.clone(), "resources/read", json!({"uri": uri})),
            ));
            lines.push(frame(1, "s2c", res(id, json!({}))));
        }
        let mut s = session(&lines);
        crate::replay::miss::READ_BACK.with(|n| n.set(0));
        let mut diagnoses = Vec::new();
        for message in [
            req(
                json!(1),
                "tools/call",
                call("t", json!({"i": 3, "tag": "y"})),
            ),
            req(json!(2), "resources/read", json!({"uri": "demo://nope"})),
            req(json!(3), "tools/call", call("u", json!({}))),
        ] {
            match send(&mut s, message).1 {
                Outcome::Missed { diagnosis, .. } => diagnoses.push(diagnosis),
                other => panic!("{other:?}"),
            }
        }
        (crate::replay::miss::READ_BACK.with(|n| n.get()), diagnoses)
    };
    let (small, small_said) = work(300);
    let (large, large_said) = work(1200);
    assert!(small > 0);
    assert!(large <= 5 * small, "{small} -> {large}");
    assert_eq!(small_said, large_said);
    assert_eq!(
        small_said[0],
        "method and tool match a recording, but arguments differ at: /tag (recorded \"x\", got \"y\")"
    );
    assert!(small_said[2].contains("no recorded tools/call for tool \"u\""));
}

/// A sampling request recorded inside a call, answered by the client, then the call's answer.
fn sampling_inside_a_call() -> Vec<String> {
    vec![
        frame(
            1,
            "c2s",
            req(
                json!(1),
                "initialize",
                json!({"protocolVersion": "2025-11-25"}),
            ),
        ),
        frame(2, "s2c", res(json!(1), json!({"capabilities": {}}))),
        frame(
            3,
            "c2s",
            req(json!(2), "tools/call", call("ask", json!({}))),
        ),
        frame(
            4,
            "s2c",
            note("notifications/progress", json!({"progress": 1})),
        ),
        frame(
            5,
            "s2c",
            req(json!(0), "sampling/createMessage", json!({"maxTokens": 5})),
        ),
        frame(
            6,
            "c2s",
            res(json!(0), json!({"model": "m", "text": "yes"})),
        ),
        frame(7, "s2c", res(json!(2), json!({"content": []}))),
    ]
}

fn initialize(capabilities: Value) -> Value {
    req(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities}),
    )
}

#[test]
fn a_request_from_the_server_goes_at_its_place_with_a_fresh_id() {
    let mut s = session(&sampling_inside_a_call());
    s.send_asks();
    send(&mut s, initialize(json!({"sampling": {}})));
    let m =
        parse_message(&req(json!(2), "tools/call", call("ask", json!({}))).to_string()).unwrap();
    let ex = s.handle(&m);
    // The progress notification, then the request, then (once answered) the call's answer.
    assert_eq!(ex.frames().count(), 2);
    assert_eq!(ex.asks.len(), 1);
    let asked = &ex.asks[0];
    assert_eq!(asked.at, 1);
    assert_eq!(asked.id, "mcp-cassette-replay-1");
    let sent: Value = serde_json::from_str(&asked.frame.text()).unwrap();
    assert_eq!(sent["id"], "mcp-cassette-replay-1");
    assert_eq!(sent["method"], "sampling/createMessage");
    assert_eq!(s.ask_method(asked), "sampling/createMessage");

    let same = json!({"jsonrpc": "2.0", "id": "mcp-cassette-replay-1", "result": {"text": "yes", "model": "m"}});
    assert_eq!(s.ask_answered(asked, &same), None);
    let other = json!({"jsonrpc": "2.0", "id": "mcp-cassette-replay-1", "result": {"text": "no", "model": "m"}});
    let diagnosis = s.ask_answered(asked, &other).unwrap();
    assert!(
        diagnosis.contains("/result/text (recorded \"yes\", got \"no\")"),
        "{diagnosis}"
    );
    assert_eq!(s.stats().asks_sent, 1);
    assert_eq!(s.stats().asks_differ, 1);
    assert_eq!(s.stats().ask_failures(), 1);
    assert!(s.ask_unanswered(asked));
    assert_eq!(s.stats().asks_unanswered, 1);
}

#[test]
fn a_request_needing_an_undeclared_capability_is_skipped() {
    let mut s = session(&sampling_inside_a_call());
    s.send_asks();
    send(&mut s, initialize(json!({"roots": {}})));
    let m =
        parse_message(&req(json!(2), "tools/call", call("ask", json!({}))).to_string()).unwrap();
    let ex = s.handle(&m);
    assert!(ex.asks.is_empty());
    assert_eq!(ex.frames().count(), 2);
    assert_eq!(s.stats().asks_skipped, 1);
    assert_eq!(s.stats().asks_sent, 0);
}

#[test]
fn a_front_end_that_does_not_send_requests_gets_none() {
    let mut s = session(&sampling_inside_a_call());
    send(&mut s, initialize(json!({"sampling": {}})));
    let (frames, _) = send(&mut s, req(json!(2), "tools/call", call("ask", json!({}))));
    assert_eq!(frames.len(), 2);
    assert!(
        frames
            .iter()
            .all(|f| f.get("method") != Some(&json!("sampling/createMessage")))
    );
    assert_eq!(s.stats().asks_skipped, 0);
}

#[test]
fn a_request_inside_a_recorded_stream_finds_the_answer_posted_while_it_was_open() {
    let header = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"http","era":"legacy"}"#;
    let lines = [
        frame(1, "c2s", initialize(json!({"sampling": {}}))),
        frame(2, "s2c", res(json!(1), json!({"capabilities": {}}))),
        frame(
            3,
            "c2s",
            req(json!(2), "tools/call", call("ask", json!({}))),
        ),
        // The recorder writes a stream's entry when the stream ends: the answer the client POSTed
        // while it was open comes first in the file.
        frame(
            5,
            "c2s",
            res(json!(0), json!({"model": "m", "text": "yes"})),
        ),
        json!({"type": "chunks", "t": 4, "dir": "s2c", "id": 2, "chunks": [
            {"t": 4, "frame": req(json!(0), "sampling/createMessage", json!({"maxTokens": 5}))},
            {"t": 6, "frame": res(json!(2), json!({"content": []}))},
        ]})
        .to_string(),
    ];
    let mut s = build(header, &lines, &[], OnMiss::Error);
    s.send_asks();
    send(&mut s, initialize(json!({"sampling": {}})));
    let m =
        parse_message(&req(json!(2), "tools/call", call("ask", json!({}))).to_string()).unwrap();
    let ex = s.handle(&m);
    assert_eq!(ex.asks.len(), 1);
    let asked = &ex.asks[0];
    assert!(asked.in_answer, "it goes out on the call's own stream");
    assert_eq!(asked.at, 0);
    let same = json!({"jsonrpc": "2.0", "id": asked.id, "result": {"text": "yes", "model": "m"}});
    assert_eq!(s.ask_answered(asked, &same), None);
    let other = json!({"jsonrpc": "2.0", "id": asked.id, "result": {"text": "no", "model": "m"}});
    assert!(
        s.ask_answered(asked, &other).is_some(),
        "compared with the recorded answer"
    );
    // A front-end that finds no stream to carry it takes it back.
    s.ask_undelivered(asked);
    assert_eq!(s.stats().asks_sent, 0);
}
