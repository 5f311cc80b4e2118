//! `view <cassette> -o <page>`: the page in a real browser (headless Chromium from the OS
//! packages: the DOM it draws, a screenshot, a hostile cassette whose text must stay text), and
//! the command's refusals and exit codes.
//!
//! The browser tests skip, saying so, only when no Chromium is installed; `.ci/run` installs it.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn view(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-cassette"))
        .arg("view")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-cassette view")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Writes the page for `cassette` into `dir` and returns its path.
fn page(dir: &Path, cassette: &Path) -> PathBuf {
    let out = dir.join("page.html");
    let o = view(&[cassette.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    out
}

/// The installed Chromium, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Runs headless Chromium on `page` (with `fragment` after `#`) with `extra` flags and a fresh
/// profile; `None` (after saying why) when there is no Chromium.
fn browse(page: &Path, fragment: &str, extra: &[&str]) -> Option<Output> {
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipping the browser part of a view test: no chromium on PATH (apt-get install chromium)"
        );
        return None;
    };
    let profile = tempfile::tempdir().unwrap();
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--window-size=1280,800",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    // Chromium's sandbox refuses to start as root; anyone else keeps it.
    if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        command.arg("--no-sandbox");
    }
    let url = format!("file://{}#{fragment}", page.display());
    let mut child = command
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    // A browser that hangs must not hang the suite.
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(child.wait_with_output().unwrap())
}

/// The DOM Chromium ends up with after the page's script ran.
fn dump_dom(page: &Path, fragment: &str) -> Option<String> {
    let out = browse(page, fragment, &["--dump-dom"])?;
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-t-render="),
        "the page's script did not run:\n{dom}"
    );
    Some(dom)
}

/// The `data-row` numbers of the timeline rows drawn in `dom`, in order.
fn drawn_rows(dom: &str) -> Vec<usize> {
    dom.match_indices("role=\"listitem\" data-row=\"")
        .map(|(at, m)| {
            let rest = &dom[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

/// The markup of the row element for `row` in `dom`.
fn row_markup(dom: &str, row: usize) -> &str {
    let at = dom
        .find(&format!("role=\"listitem\" data-row=\"{row}\""))
        .unwrap_or_else(|| panic!("row {row} is not drawn"));
    let start = dom[..at].rfind("<div").unwrap();
    let end = start + dom[start..].find("</div>").unwrap();
    &dom[start..end]
}

#[test]
fn the_page_draws_a_linked_timeline_and_filters_from_the_fragment() {
    let dir = tempfile::tempdir().unwrap();
    let page = page(dir.path(), &fixture("verify/tasks.cassette.jsonl"));
    let Some(dom) = dump_dom(&page, "") else {
        return;
    };
    assert!(dom.contains("data-rows=\"14\""), "{dom}");
    assert_eq!(drawn_rows(&dom), (0..14).collect::<Vec<_>>());
    // Row 2 is the tools/call; row 3 its answer, which created the task: they link both ways
    // and both belong to the task's group, as the tasks/get polls do.
    let request = row_markup(&dom, 2);
    assert!(request.contains("tools/call"), "{request}");
    assert!(request.contains("href=\"#row=3\""), "{request}");
    assert!(request.contains("task:task-recorded-77"), "{request}");
    let answer = row_markup(&dom, 3);
    assert!(answer.contains("href=\"#row=2\""), "{answer}");
    assert!(
        dom.contains("<option value=\"task:task-recorded-77\">"),
        "{dom}"
    );

    // Filters come from the fragment, in either spelling, and so does the opened row.
    let Some(dom) = dump_dom(&page, "method=tasks/get&dir=c2s") else {
        return;
    };
    let rows = drawn_rows(&dom);
    assert_eq!(rows.len(), 4, "{dom}");
    for row in rows {
        let markup = row_markup(&dom, row);
        assert!(
            markup.contains("<span class=\"method\">tasks/get</span>"),
            "{markup}"
        );
        assert!(markup.contains("dir-c2s"), "{markup}");
    }
    let Some(dom) = dump_dom(&page, "filter=tool:build&row=3") else {
        return;
    };
    assert_eq!(drawn_rows(&dom), [2, 3], "{dom}");
    assert!(row_markup(&dom, 3).contains("selected"));
    // The opened answer: its request linked, its JSON drawn with a pointer per node.
    let detail = &dom[dom.find("id=\"detail\"").unwrap()..];
    assert!(detail.contains("href=\"#row=2\""), "{detail}");
    assert!(
        detail.contains("data-pointer=\"/result/taskId\""),
        "{detail}"
    );
    assert!(detail.contains("\"task-recorded-77\""), "{detail}");
}

#[test]
fn streams_chunks_and_redaction_placeholders_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("s.cassette.jsonl");
    std::fs::write(
        &cassette,
        concat!(
            r#"{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00.000Z","transport":"http","url":"http://127.0.0.1:9/mcp","redaction":{"applied":true}}"#,
            "\n",
            r#"{"type":"frame","t":1,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"[REDACTED:github:0123abcd]"}}}}"#,
            "\n",
            r#"{"type":"chunks","t":2,"dir":"s2c","id":1,"chunks":[{"t":3,"frame":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}},{"t":4,"frame":{"jsonrpc":"2.0","id":1,"result":{"content":[]}}}]}"#,
            "\n",
            r#"{"type":"chunks","t":5,"dir":"s2c","via":"get","chunks":[{"t":6,"frame":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let page = page(dir.path(), &cassette);
    let Some(dom) = dump_dom(&page, "row=0") else {
        return;
    };
    assert_eq!(drawn_rows(&dom), [0, 1, 2, 3, 4, 5], "{dom}");
    // The request links to the chunk holding its result, not to the stream around it.
    assert!(row_markup(&dom, 0).contains("href=\"#row=3\""));
    assert!(row_markup(&dom, 2).contains("row kind-note dir-s2c chunk"));
    assert!(row_markup(&dom, 5).contains("get:1"));
    assert!(dom.contains("<option value=\"get:1\">"), "{dom}");
    // The placeholder is a badge, in the row and in the opened frame.
    assert!(
        dom.contains("<span class=\"redacted\" title=\"redacted: rule github\">[REDACTED:github:0123abcd]</span>"),
        "{dom}"
    );
    assert!(row_markup(&dom, 0).contains("REDACTED ×1"));
}

#[test]
fn a_screenshot_of_the_page_has_something_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let page = page(dir.path(), &fixture("http/everything.cassette.jsonl"));
    let png = dir.path().join("shot.png");
    let shot = format!("--screenshot={}", png.display());
    if browse(&page, "row=5", &[&shot]).is_none() {
        return;
    }
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    // A blank 1280x800 page compresses to a few kilobytes; a drawn timeline does not.
    assert!(bytes.len() > 30_000, "{} bytes", bytes.len());
}

/// Strings built to run script if the page ever treated cassette text as markup or as a URL.
/// Each would mark the document (its title, or a `data-pwned` attribute) when run.
const PAYLOADS: [&str; 5] = [
    "</script><script>document.title='PWNED';document.documentElement.setAttribute('data-pwned','1')</script>",
    "<img src=x onerror=\"document.title='PWNED';document.documentElement.setAttribute('data-pwned','2')\">",
    "javascript:document.documentElement.setAttribute('data-pwned','3')",
    "<!--<script>document.documentElement.setAttribute('data-pwned','4')</script>-->",
    "<svg onload=\"document.documentElement.setAttribute('data-pwned','5')\"></svg>",
];

#[test]
fn a_hostile_cassette_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("hostile.cassette.jsonl");
    let quoted: Vec<String> = PAYLOADS
        .iter()
        .map(|p| serde_json::to_string(p).unwrap())
        .collect();
    let [p0, p1, p2, p3, p4] = &quoted[..] else {
        unreachable!()
    };
    let lines = [
        format!(
            r#"{{"type":"header","cassetteVersion":2,"startedAt":"2026-01-01T00:00:00.000Z","transport":"stdio","command":[{p0},{p1}],"redaction":{{"applied":true}}}}"#
        ),
        format!(
            r#"{{"type":"frame","t":1,"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{p0},"method":"tools/call","params":{{"name":{p1},"arguments":{{{p2}:{p3}}}}}}}}}"#
        ),
        format!(
            r#"{{"type":"frame","t":2,"dir":"s2c","frame":{{"jsonrpc":"2.0","id":{p0},"result":{{"content":[{{"type":"resource_link","uri":{p2},"name":{p4}}}]}}}}}}"#
        ),
        format!(
            r#"{{"type":"frame","t":3,"dir":"s2c","frame":{{"jsonrpc":"2.0","method":{p4}}}}}"#
        ),
        format!(r#"{{"type":"raw","t":4,"dir":"s2c","data":{p0}}}"#),
        format!(r#"{{"type":{p1},"t":5,"dir":"s2c"}}"#),
    ];
    std::fs::write(&cassette, lines.join("\n") + "\n").unwrap();
    let page = page(dir.path(), &cassette);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.to_ascii_lowercase().matches("</script").count(), 2);
    // The list, every row opened in turn, and the overview (header command) each stay inert.
    for fragment in ["", "row=0", "row=1", "row=2", "row=3", "row=4", "tool=x"] {
        let Some(dom) = dump_dom(&page, fragment) else {
            return;
        };
        // The payloads' own text names the marks; only an attribute or a title set by a
        // payload that ran would appear in markup.
        assert!(!dom.contains("data-pwned=\""), "#{fragment}:\n{dom}");
        assert!(!dom.contains("<title>PWNED"), "#{fragment}:\n{dom}");
        assert!(dom.contains("<title>hostile.cassette.jsonl — mcp-cassette view</title>"));
        let body = &dom[dom.find("<header>").unwrap()..];
        for element in ["<img", "<svg", "<script", "href=\"javascript:", "src=\"x\""] {
            assert!(!body.contains(element), "#{fragment}: {element} in\n{body}");
        }
        // The payloads are there, as text.
        assert!(
            body.contains("&lt;img src=x onerror="),
            "#{fragment}:\n{body}"
        );
    }
}

#[test]
fn view_writes_atomically_and_refuses_to_replace_a_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let source = fixture("verify/tasks.cassette.jsonl");
    let cassette = dir.path().join("s.cassette.jsonl");
    std::fs::copy(&source, &cassette).unwrap();
    let before = std::fs::read(&cassette).unwrap();
    let c = cassette.to_str().unwrap();

    // -o naming the cassette itself, or another cassette: refused, nothing touched.
    let o = view(&[c, "-o", c]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is the cassette being read"),
        "{}",
        stderr(&o)
    );
    let other = dir.path().join("other.jsonl");
    std::fs::copy(&source, &other).unwrap();
    let o = view(&[c, "-o", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a cassette; refusing"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&other).unwrap(), before);
    assert_eq!(std::fs::read(&cassette).unwrap(), before);

    // -o -: the page on stdout, and nothing else there.
    let o = view(&[c, "-o", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));

    // A page is written private (it holds what the cassette holds), and replaced whole.
    let out = dir.path().join("s.html");
    std::fs::write(&out, "old page").unwrap();
    let o = view(&[c, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(14 entries, 14 timeline rows)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), html);
    assert_eq!(std::fs::metadata(&out).unwrap().mode() & 0o077, 0);

    // An unreadable line: the reader's file:line:field message, exit 2, the old page kept,
    // no temporary file left.
    let bad = dir.path().join("bad.jsonl");
    let mut text = std::fs::read_to_string(&cassette).unwrap();
    text.push_str("{\"type\":\"frame\",\"t\":\"soon\",\"dir\":\"c2s\"}\n");
    std::fs::write(&bad, text).unwrap();
    let o = view(&[bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.jsonl:16: field \"t\" must be a number of milliseconds"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), html);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");

    // No such cassette, or no -o: exit 2.
    let o = view(&[dir.path().join("absent.jsonl").to_str().unwrap(), "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("view: failed to read"),
        "{}",
        stderr(&o)
    );
    let o = view(&[c]);
    assert_eq!(o.status.code(), Some(2));
}
