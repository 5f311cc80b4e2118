//! The npm distribution (docs/npm.md), through the real tarballs: `scripts/package-npm.sh` packs
//! the launcher package and a platform package around the binary under test (the debug build,
//! passed as a prebuilt binary, so the test never builds a release), an empty project installs
//! them offline from the tarball paths, and `npx mcp-cassette` runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::fixtures::fixture_server;
use crate::record::bin;

/// The `--stdio` string that runs a fixture mode.
fn stdio_target(mode: &str) -> String {
    format!("\"{}\" {mode}", fixture_server().display())
}

/// This machine's platform as Node and the package names spell it (`linux-x64`).
fn node_platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{cpu}")
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("command starts");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `npm install` of local tarballs with no registry: any attempt to reach one fails the test.
fn npm_install(project: &Path, cache: &Path, tarballs: &[PathBuf]) {
    run(Command::new("npm")
        .current_dir(project)
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg("--cache")
        .arg(cache)
        .args(tarballs)
        .env("npm_config_registry", "http://127.0.0.1:9/"));
}

/// `npx mcp-cassette <args>` in `project`, never installing anything.
fn npx(project: &Path, args: &[&str], binary_override: Option<&str>) -> Output {
    npx_env(project, args, binary_override, &[])
}

fn npx_env(
    project: &Path,
    args: &[&str],
    binary_override: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let mut cmd = Command::new("npx");
    cmd.current_dir(project)
        .envs(env.iter().copied())
        .args(["--no-install", "mcp-cassette"])
        .args(args)
        .env("npm_config_offline", "true")
        .env_remove("MCP_CASSETTE_BINARY");
    if let Some(path) = binary_override {
        cmd.env("MCP_CASSETTE_BINARY", path);
    }
    cmd.output().expect("npx starts")
}

#[test]
#[ignore = "needs the interop packages: scripts/install-interop.sh, then --include-ignored"]
fn npx_runs_the_binary_from_the_packed_tarballs() {
    crate::interop::require_installed();
    let tmp = tempfile::tempdir().unwrap();
    let tarballs = tmp.path().join("tarballs");
    let platform = node_platform();
    run(Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/package-npm.sh"
        ))
        .arg("--prebuilt")
        .arg(format!("{platform}={}", bin()))
        .arg("--out")
        .arg(&tarballs));
    let version = env!("CARGO_PKG_VERSION");
    let main = tarballs.join(format!("mcp-cassette-{version}.tgz"));
    let native = tarballs.join(format!("mcp-cassette-{platform}-{version}.tgz"));
    assert!(main.is_file() && native.is_file(), "tarballs missing");

    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), "{\"private\":true}\n").unwrap();
    let cache = tmp.path().join("npm-cache");

    // The launcher alone: its optional platform dependency cannot be fetched offline, and the
    // error says which package is missing and how to fix it.
    npm_install(&project, &cache, std::slice::from_ref(&main));
    let missing = npx(&project, &["--version"], None);
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the package @mcp-cassette/{platform} is not installed"
        )) && stderr.contains(&format!(
            "npm install --save-dev @mcp-cassette/{platform}@{version}"
        )) && stderr.contains("MCP_CASSETTE_BINARY"),
        "{stderr}"
    );

    // The override runs a binary of the user's choosing, even with no platform package.
    let overridden = npx(&project, &["--version"], Some(bin()));
    assert!(
        String::from_utf8_lossy(&overridden.stdout)
            .starts_with(&format!("mcp-cassette {version} (")),
        "{}",
        String::from_utf8_lossy(&overridden.stdout)
    );
    let nowhere = tmp.path().join("no-such-binary");
    let bad = npx(&project, &["--version"], Some(nowhere.to_str().unwrap()));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("MCP_CASSETTE_BINARY is set to"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );

    // With the platform package installed too, npx runs the binary it carries.
    npm_install(&project, &cache, &[native]);
    let version_out = npx(&project, &["--version"], None);
    assert!(version_out.status.success());
    assert!(
        String::from_utf8_lossy(&version_out.stdout)
            .starts_with(&format!("mcp-cassette {version} (")),
        "{}",
        String::from_utf8_lossy(&version_out.stdout)
    );
    let target = stdio_target("tiny");
    let check = npx(&project, &["check", "--stdio", &target], None);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("result: PASS (0 errors, 0 warnings, gate: error)"),
        "{stdout}"
    );

    // Exit codes pass through unchanged: a poisoned server fails the gate with 1.
    let evil = npx_env(
        &project,
        &["check", "--stdio", &target],
        None,
        &[("TINY_EVIL", "1")],
    );
    assert_eq!(
        evil.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&evil.stdout)
    );

    #[cfg(unix)]
    sigterm_reaches_the_binary(&project);
}

/// SIGTERM sent to the launcher stops the binary, and the launcher exits as the binary did.
/// The stdio protocol runs through it meanwhile: a ping is answered before the signal is sent,
/// which also proves the launcher is past installing its handlers.
#[cfg(unix)]
fn sigterm_reaches_the_binary(project: &Path) {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let demo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/demo/everything.cassette.jsonl"
    );
    let mut child = Command::new("node")
        .current_dir(project)
        .arg("node_modules/mcp-cassette/bin/mcp-cassette.js")
        .args(["replay", demo])
        .env_remove("MCP_CASSETTE_BINARY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    // replay ends a session stopped by SIGTERM with its summary and its usual exit code
    // (docs/cli.md, "Started by hand"): no miss here, so 0, which the launcher passes on.
    assert_eq!(status.code(), Some(0), "{status:?}");
    // The binary is gone too (not orphaned): its end of stdout is closed although our end of
    // its stdin is still open, which alone would keep replay running.
    let (done, eof) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut reader, &mut rest);
        let _ = done.send(());
    });
    assert!(
        eof.recv_timeout(std::time::Duration::from_secs(10)).is_ok(),
        "the binary outlived the launcher"
    );
    drop(stdin);
}
