use std::path::Path;

use serde_json::Value;

use super::*;

const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"mcp-cassette@0.1.0","startedAt":"2026-01-01T00:00:00.000Z","transport":"http","url":"http://127.0.0.1:1/mcp","redaction":{"applied":true}}"#;

fn page(lines: &[&str]) -> (String, Summary) {
    let text = format!("{HEADER}\n{}\n", lines.join("\n"));
    let reader = Reader::new(text.as_bytes(), Path::new("s.jsonl")).unwrap();
    let mut out = Vec::new();
    let summary = write_page(reader, "s.jsonl", &mut out).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

/// The data block of a page, parsed.
fn data(html: &str) -> Value {
    let start = html.find("id=\"mc-data\">").unwrap() + "id=\"mc-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn answers_link_to_requests_and_tasks_and_streams_are_grouped() {
    let (html, summary) = page(&[
        r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build"}}}"#,
        r#"{"type":"frame","t":2,"dir":"s2c","frame":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}}"#,
        r#"{"type":"frame","t":3,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"T1"}}}"#,
        r#"{"type":"frame","t":4,"dir":"c2s","frame":{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":"T1"}}}"#,
        r#"{"type":"chunks","t":5,"dir":"s2c","id":"g","chunks":[{"t":5,"frame":{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"[REDACTED:github:0123abcd]"}}},{"t":6,"frame":{"jsonrpc":"2.0","id":"g","error":{"code":-1,"message":"no"}}}]}"#,
        r#"{"type":"chunks","t":7,"dir":"s2c","via":"get","chunks":[{"t":8,"frame":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}]}"#,
        r#"{"type":"raw","t":9,"dir":"s2c","data":"log line"}"#,
        r#"{"type":"hologram","t":10}"#,
    ]);
    assert_eq!(
        summary,
        Summary {
            entries: 8,
            rows: 11
        }
    );
    let rows = data(&html)["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 11);
    let kinds: Vec<&str> = rows.iter().map(|r| r["k"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "req", "note", "res", "req", "stream", "note", "err", "stream", "note", "raw",
            "unknown"
        ]
    );
    // The result of the tools/call answers row 0, carries its method and tool, and names the task.
    assert_eq!(rows[2]["re"], 0);
    assert_eq!(rows[2]["m"], "tools/call");
    assert_eq!(rows[2]["tool"], "build");
    assert_eq!(rows[2]["g"], "task:T1");
    assert_eq!(rows[0]["tool"], "build");
    // The streamed answer: the stream and its error chunk both point at the tasks/get.
    assert_eq!(rows[3]["g"], "task:T1");
    assert_eq!(rows[4]["re"], 3);
    assert_eq!(rows[6]["re"], 3);
    assert_eq!(rows[6]["p"], 4);
    assert_eq!(rows[5]["g"], "task:T1");
    assert_eq!(rows[5]["r"], 1);
    // The listen stream is a group of its own.
    assert_eq!(rows[7]["g"], "get:1");
    assert_eq!(rows[8]["g"], "get:1");
    assert_eq!(rows[8]["p"], 7);
    assert_eq!(rows[9]["f"], "log line");
    assert_eq!(rows[10]["m"], "hologram");
    // The frame text travels as recorded.
    assert_eq!(
        rows[0]["f"],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build"}}"#
    );
}

#[test]
fn hostile_text_cannot_leave_the_data_block() {
    let (html, _) = page(&[
        r#"{"type":"frame","t":1,"dir":"s2c","frame":{"jsonrpc":"2.0","method":"</script><script>document.title='x'</script>","params":{"a":"<img src=x onerror=alert(1)>","b":"<!--<script>","c":"\u2028&amp;"}}}"#,
        r#"{"type":"raw","t":2,"dir":"s2c","data":"</SCRIPT><script>alert(1)</script>"}"#,
    ]);
    // One script-ending tag after the data block and one after our script: nothing else.
    assert_eq!(html.to_ascii_lowercase().matches("</script").count(), 2);
    assert!(!html.contains("<img"));
    assert!(!html.contains("<!--<"));
    assert!(!html.contains('\u{2028}'));
    let rows = data(&html)["rows"].as_array().unwrap().clone();
    assert_eq!(rows[0]["m"], "</script><script>document.title='x'</script>");
    assert_eq!(rows[1]["f"], "</SCRIPT><script>alert(1)</script>");
    assert!(
        rows[0]["f"]
            .as_str()
            .unwrap()
            .contains("<img src=x onerror=alert(1)>")
    );
}

#[test]
fn the_page_is_self_contained() {
    let (html, _) = page(&[]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&content_security_policy()));
    let lower = html.to_ascii_lowercase();
    for outside in ["http://", "https://", "src=", "<link", "@import", "url("] {
        // The cassette header names its server URL inside the data block, escaped; nothing
        // of ours refers outside the page.
        let ours = lower.replace("http://127.0.0.1:1/mcp", "");
        assert!(!ours.contains(outside), "{outside}");
    }
    let rows = data(&html)["rows"].as_array().unwrap().len();
    assert_eq!(rows, 0);
    assert_eq!(data(&html)["header"], HEADER);
}

#[test]
fn a_bad_line_is_the_readers_error() {
    let text = format!("{HEADER}\n{{\"type\":\"frame\",\"t\":\"soon\",\"dir\":\"c2s\"}}\n");
    let reader = Reader::new(text.as_bytes(), Path::new("s.jsonl")).unwrap();
    let err = write_page(reader, "s.jsonl", &mut Vec::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.jsonl:2: field \"t\" must be a number of milliseconds"
    );
}

#[test]
fn server_requests_pair_with_the_clients_answers() {
    let (html, _) = page(&[
        r#"{"type":"frame","t":1,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}}"#,
        r#"{"type":"frame","t":2,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}}"#,
        r#"{"type":"frame","t":3,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"result":{"role":"assistant"}}}"#,
        r#"{"type":"frame","t":4,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{"content":[]}}}"#,
        r#"{"type":"frame","t":5,"dir":"s2c","frame":{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}}"#,
    ]);
    let rows = data(&html)["rows"].as_array().unwrap().clone();
    // Same id both ways: each answer pairs with the request that went the other way.
    assert_eq!(rows[2]["re"], 0);
    assert_eq!(rows[2]["m"], "sampling/createMessage");
    assert_eq!(rows[3]["re"], 1);
    assert_eq!(rows[3]["tool"], "t");
    // A null id answers nothing in particular.
    assert_eq!(rows[4]["k"], "err");
    assert!(rows[4].get("re").is_none());
}
