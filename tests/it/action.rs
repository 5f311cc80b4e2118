//! The GitHub Action (docs/action.md): the Markdown sections the binary renders for its
//! pull-request comment, compared with the files under `tests/fixtures/markdown/` (rewrite them
//! with `UPDATE_MARKDOWN=1` and review the diff), and the comment script
//! (`action/comment.mjs`) against a local stand-in of the GitHub REST API.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fixtures::fixture_server;
use crate::record::bin;

fn markdown_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/markdown")
}

/// Runs the binary in `cwd` with a fixture server variant as the target; returns stdout with
/// the fixture server's path replaced by `<fixture-server>` (it differs per machine) and the
/// exit code.
fn run_markdown(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, Option<i32>) {
    let server = fixture_server().display().to_string();
    let target = format!("{server} tiny");
    let out = Command::new(bin())
        .current_dir(cwd)
        .args(args)
        .args(["--stdio", &target])
        .env_remove("TINY_EVIL")
        .env_remove("TINY_V2")
        .envs(env.iter().copied())
        .output()
        .expect("binary runs");
    let stdout = String::from_utf8(out.stdout).expect("Markdown is UTF-8");
    (
        stdout.replace(&server, "<fixture-server>"),
        out.status.code(),
    )
}

/// Compares `actual` with `tests/fixtures/markdown/<name>`, or writes it there when
/// `UPDATE_MARKDOWN` is set.
fn assert_snapshot(name: &str, actual: &str) {
    let path = markdown_dir().join(name);
    if std::env::var_os("UPDATE_MARKDOWN").is_some() {
        std::fs::create_dir_all(markdown_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err} (UPDATE_MARKDOWN=1 writes it)", path.display()));
    assert_eq!(
        actual,
        expected,
        "{} differs (UPDATE_MARKDOWN=1 rewrites it)",
        path.display()
    );
}

#[test]
fn check_markdown_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let (md, code) = run_markdown(tmp.path(), &["check", "--format", "markdown"], &[]);
    assert_eq!(code, Some(0), "{md}");
    assert_snapshot("check-clean.md", &md);
}

#[test]
fn check_markdown_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let (md, code) = run_markdown(
        tmp.path(),
        &["check", "--format", "markdown"],
        &[("TINY_EVIL", "1")],
    );
    assert_eq!(code, Some(1), "{md}");
    assert_snapshot("check-findings.md", &md);
}

#[test]
fn check_markdown_lint_waived_names_both_gates() {
    let tmp = tempfile::tempdir().unwrap();
    let (md, code) = run_markdown(
        tmp.path(),
        &[
            "check",
            "--format",
            "markdown",
            "--fail-on",
            "warn",
            "--lint-fail-on",
            "never",
        ],
        &[("TINY_EVIL", "1")],
    );
    // CAS-C005 on `broken` is structural: `never` does not waive it.
    assert_eq!(code, Some(1), "{md}");
    assert_snapshot("check-lint-never.md", &md);
}

/// A snapshot of the clean fixture server, written into `dir`.
fn write_snapshot(dir: &Path) {
    let (out, code) = run_markdown(dir, &["snapshot"], &[]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn snapshot_markdown_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    write_snapshot(tmp.path());
    let (md, code) = run_markdown(
        tmp.path(),
        &["snapshot", "--check", "--format", "markdown"],
        &[],
    );
    assert_eq!(code, Some(0), "{md}");
    assert_snapshot("drift-unchanged.md", &md);
}

#[test]
fn snapshot_markdown_drift_blocked_and_within_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    write_snapshot(tmp.path());
    let (md, code) = run_markdown(
        tmp.path(),
        &["snapshot", "--check", "--format", "markdown"],
        &[("TINY_V2", "1")],
    );
    assert_eq!(code, Some(1), "{md}");
    assert_snapshot("drift-blocked.md", &md);

    // A tool added since the snapshot is minor: reported, within the gate.
    let file = tmp.path().join("mcp-contract.snapshot.json");
    let mut snapshot: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    snapshot["tools"]
        .as_array_mut()
        .expect("a tools array")
        .retain(|tool| tool["name"] != "slugify");
    std::fs::write(&file, serde_json::to_string_pretty(&snapshot).unwrap()).unwrap();
    let (md, code) = run_markdown(
        tmp.path(),
        &["snapshot", "--check", "--format", "markdown"],
        &[],
    );
    assert_eq!(code, Some(0), "{md}");
    assert_snapshot("drift-within-gate.md", &md);
}

#[test]
fn snapshot_format_is_validated_and_json_wins() {
    let tmp = tempfile::tempdir().unwrap();
    write_snapshot(tmp.path());
    let out = Command::new(bin())
        .current_dir(tmp.path())
        .args([
            "snapshot", "--check", "--format", "xml", "--stdio", "unused",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "snapshot failed: --format must be \"text\", \"json\" or \"markdown\" (got \"xml\")\n"
    );
    let (json, code) = run_markdown(
        tmp.path(),
        &["snapshot", "--check", "--format", "markdown", "--json"],
        &[],
    );
    assert_eq!(code, Some(0));
    assert!(json.starts_with("{\n  \"ok\": true,"), "{json}");
}

/// A stand-in for the part of the GitHub REST API the comment script uses: list an issue's
/// comments (two per page, with `Link` headers, so finding the marker needs pagination),
/// create one, edit one. With `forbid_writes`, creating and editing answer 403 the way a fork's
/// read-only token is answered.
mod github {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};
    use std::thread;

    use serde_json::{Value, json};

    const PAGE: usize = 2;

    #[derive(Default)]
    pub struct State {
        /// (id, body) in creation order.
        pub comments: Vec<(u64, String)>,
        /// Every request seen, as `METHOD path`.
        pub requests: Vec<String>,
        pub forbid_writes: bool,
        /// The `Authorization` header of the last request.
        pub authorization: Option<String>,
    }

    pub struct Server {
        pub url: String,
        pub state: Arc<Mutex<State>>,
    }

    pub fn start(state: State) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(state));
        let shared = Arc::clone(&state);
        let base = url.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                let base = base.clone();
                thread::spawn(move || serve(stream, &state, &base));
            }
        });
        Server { url, state }
    }

    fn serve(stream: TcpStream, state: &Mutex<State>, base: &str) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or_default().to_owned();
        let mut length = 0;
        let mut authorization = None;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_owned()),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let mut state = state.lock().unwrap();
        state.requests.push(format!("{method} {path}"));
        state.authorization = authorization;
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let (status, link, answer) = match (method.as_str(), segments.as_slice()) {
            ("GET", ["repos", _, _, "issues", _, "comments"]) => {
                let page: usize = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("page="))
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1);
                let items: Vec<Value> = state
                    .comments
                    .iter()
                    .skip((page - 1) * PAGE)
                    .take(PAGE)
                    .map(|(id, body)| json!({"id": id, "body": body}))
                    .collect();
                let link = (page * PAGE < state.comments.len()).then(|| {
                    format!(
                        "<{base}{path}?per_page={PAGE}&page={}>; rel=\"next\"",
                        page + 1
                    )
                });
                (200, link, Value::Array(items))
            }
            ("POST" | "PATCH", _) if state.forbid_writes => (
                403,
                None,
                json!({"message": "Resource not accessible by integration"}),
            ),
            ("POST", ["repos", _, _, "issues", _, "comments"]) => {
                let id = 1000 + state.comments.len() as u64;
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                state.comments.push((id, text.clone()));
                (201, None, json!({"id": id, "body": text}))
            }
            ("PATCH", ["repos", _, _, "issues", "comments", id]) => {
                let id: u64 = id.parse().unwrap_or(0);
                let text = body["body"].as_str().unwrap_or_default().to_owned();
                match state.comments.iter_mut().find(|(cid, _)| *cid == id) {
                    Some(comment) => {
                        comment.1 = text.clone();
                        (200, None, json!({"id": id, "body": text}))
                    }
                    None => (404, None, json!({"message": "Not Found"})),
                }
            }
            _ => (404, None, json!({"message": "Not Found"})),
        };
        drop(state);
        let answer = answer.to_string();
        let link = link.map(|l| format!("Link: {l}\r\n")).unwrap_or_default();
        let mut stream = stream;
        let _ = write!(
            stream,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{link}Connection: close\r\n\r\n{answer}",
            answer.len()
        );
    }
}

/// Runs `node action/comment.mjs` as the action's report step would, for pull request 7 of
/// `octo/app` (or a push event with `pull_request: false`), with the Markdown sections from
/// `tests/fixtures/markdown/`. Returns the log and the job summary.
fn run_comment_script(
    api: &str,
    pull_request: bool,
    check: (&str, &str),
    drift: (&str, &str),
) -> (String, String) {
    run_comment_script_with_stderr(api, pull_request, check, drift, "")
}

/// [`run_comment_script`], with `drift_stderr` as what `snapshot --check` printed on stderr.
fn run_comment_script_with_stderr(
    api: &str,
    pull_request: bool,
    check: (&str, &str),
    drift: (&str, &str),
    drift_stderr: &str,
) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let event = tmp.path().join("event.json");
    let payload = if pull_request {
        r#"{"pull_request":{"number":7}}"#
    } else {
        r#"{"ref":"refs/heads/main"}"#
    };
    std::fs::write(&event, payload).unwrap();
    let summary = tmp.path().join("summary.md");
    let err = tmp.path().join("none.err");
    std::fs::write(&err, "").unwrap();
    let drift_err = tmp.path().join("drift.err");
    std::fs::write(&drift_err, drift_stderr).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("action/comment.mjs");
    let out = Command::new("node")
        .arg(script)
        .env("MCP_MODE", "both")
        .env("MCP_FAIL_ON", "breaking")
        .env("MCP_LINT_FAIL_ON", "error")
        .env("MCP_COMMENT", "true")
        .env("MCP_GITHUB_TOKEN", "test-token")
        .env("MCP_CHECK_STATUS", check.0)
        .env("MCP_CHECK_MD", markdown_dir().join(check.1))
        .env("MCP_CHECK_ERR", &err)
        .env("MCP_SNAPSHOT_STATUS", drift.0)
        .env("MCP_SNAPSHOT_MD", markdown_dir().join(drift.1))
        .env("MCP_SNAPSHOT_ERR", &drift_err)
        .env("GITHUB_API_URL", api)
        .env("GITHUB_REPOSITORY", "octo/app")
        .env(
            "GITHUB_EVENT_NAME",
            if pull_request { "pull_request" } else { "push" },
        )
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("RUNNER_TEMP", tmp.path())
        .output()
        .expect("node runs");
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{log}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&summary).unwrap();
    let copy = std::fs::read_to_string(tmp.path().join("mcp-cassette-report.md")).unwrap();
    assert_eq!(format!("{copy}\n"), written);
    (log, written)
}

fn require_node() {
    assert!(
        Command::new("node").arg("--version").output().is_ok(),
        "node is missing: install Node.js 20 or newer"
    );
}

const MARKER: &str = "<!-- mcp-cassette-action -->";

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn the_comment_is_created_once_then_edited_in_place() {
    require_node();
    let api = github::start(github::State {
        comments: vec![
            (1, "LGTM".to_owned()),
            (2, format!("> {MARKER}\n> quoting the bot is not the bot")),
            (3, "one more thing".to_owned()),
        ],
        ..Default::default()
    });
    let (log, summary) = run_comment_script(
        &api.url,
        true,
        ("1", "check-findings.md"),
        ("1", "drift-blocked.md"),
    );
    assert!(log.contains("created the pull-request comment"), "{log}");
    assert_snapshot("comment-fail.md", summary.strip_suffix('\n').unwrap());
    {
        let state = api.state.lock().unwrap();
        assert_eq!(state.comments.len(), 4);
        assert!(state.comments[3].1.starts_with(MARKER));
        assert_eq!(state.authorization.as_deref(), Some("Bearer test-token"));
    }

    // The next push: the comment (now on the second page) is found and edited, not repeated.
    let (log, _) = run_comment_script(
        &api.url,
        true,
        ("0", "check-clean.md"),
        ("0", "drift-unchanged.md"),
    );
    assert!(
        log.contains("updated the pull-request comment (id 1003)"),
        "{log}"
    );
    let state = api.state.lock().unwrap();
    assert_eq!(state.comments.len(), 4, "{:?}", state.requests);
    assert_snapshot("comment-pass.md", &state.comments[3].1);
    assert_eq!(
        state
            .requests
            .iter()
            .filter(|r| r.starts_with("POST"))
            .count(),
        1,
        "{:?}",
        state.requests
    );
    assert!(
        state
            .requests
            .iter()
            .any(|r| r == "PATCH /repos/octo/app/issues/comments/1003")
    );
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_read_only_token_is_a_warning_and_the_report_is_still_written() {
    require_node();
    let api = github::start(github::State {
        forbid_writes: true,
        ..Default::default()
    });
    let (log, summary) = run_comment_script(
        &api.url,
        true,
        ("1", "check-findings.md"),
        ("0", "drift-unchanged.md"),
    );
    assert!(
        log.contains(
            "::warning::mcp-cassette could not write the pull-request comment: POST /repos/octo/app/issues/7/comments answered 403: Resource not accessible by integration"
        ),
        "{log}"
    );
    assert!(summary.starts_with(&format!("{MARKER}\n### mcp-cassette: ❌ FAIL\n")));
    assert!(api.state.lock().unwrap().comments.is_empty());
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn outside_a_pull_request_no_comment_is_attempted() {
    require_node();
    let api = github::start(github::State::default());
    let (log, summary) = run_comment_script(
        &api.url,
        false,
        ("0", "check-clean.md"),
        ("0", "drift-unchanged.md"),
    );
    assert!(
        log.contains("mcp-cassette: no pull-request context, skipping the comment."),
        "{log}"
    );
    assert!(summary.contains("### mcp-cassette: ✅ PASS"));
    // Untrusted text reaches the log with workflow commands switched off around it.
    assert!(log.starts_with("::stop-commands::"), "{log}");
    assert!(api.state.lock().unwrap().requests.is_empty());
}

/// `action.yml` as the Marketplace and the house rules want it: a description under 125
/// characters, the branding, the inputs and output docs/action.md documents, no `${{ }}` inside
/// a script, and a default `version` that is this release's.
#[test]
fn action_metadata() {
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("action.yml"))
            .unwrap();
    let description = text
        .lines()
        .find_map(|l| l.strip_prefix("description: "))
        .expect("a top-level description");
    assert!(description.chars().count() < 125, "{description}");
    assert!(text.contains("branding:\n  icon: disc\n  color: purple\n"));
    for input in [
        "server-command",
        "snapshot-file",
        "mode",
        "fail-on",
        "lint-fail-on",
        "comment",
        "sarif-file",
        "version",
        "github-token",
    ] {
        assert!(text.contains(&format!("\n  {input}:\n")), "input {input}");
    }
    assert!(text.contains("outputs:\n  sarif-file:\n"));
    assert!(text.contains(&format!(
        "  version:\n    description: \"mcp-cassette version to run from npm, or local to build the binary from the action's own checkout.\"\n    required: false\n    default: \"{}\"\n",
        env!("CARGO_PKG_VERSION")
    )));
    // Every line of a `run: |` block, i.e. every line more indented than its `run:` key.
    let mut run_indent = None;
    for (number, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        if let Some(run) = run_indent {
            if line.trim().is_empty() || indent > run {
                assert!(
                    !line.contains("${{"),
                    "action.yml line {}: an expression inside a script: {line}",
                    number + 1
                );
                continue;
            }
            run_indent = None;
        }
        if line.trim_start().starts_with("run: |") {
            run_indent = Some(indent);
        }
    }
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn a_command_that_could_not_run_says_so_with_its_error_fenced() {
    require_node();
    let api = github::start(github::State::default());
    let (_, summary) = run_comment_script_with_stderr(
        &api.url,
        false,
        ("0", "check-clean.md"),
        ("2", "no-such-file.md"),
        "snapshot failed: a name with ``` inside\n",
    );
    assert!(summary.contains("### mcp-cassette: ❌ FAIL\n"), "{summary}");
    assert!(
        summary.contains(
            "**Contract drift**: ❌ could not run (exit 2).\n\n````text\nsnapshot failed: a name with ``` inside\n````\n"
        ),
        "{summary}"
    );
}
