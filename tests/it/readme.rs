//! The README's first command, minus the install: check a replay of the shipped demo cassette.

use std::process::Command;

use crate::record::bin;

#[test]
fn the_readme_demo_runs() {
    let demo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/demo/everything.cassette.jsonl"
    );
    let out = Command::new(bin())
        .args(["check", "--stdio", &format!("{} replay {demo}", bin())])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("server: mcp-servers/everything@2.0.0  protocol: 2025-06-18"),
        "{stdout}"
    );
    assert!(
        stdout.contains("surface: 13 tools, 7 resources, 4 prompts"),
        "{stdout}"
    );
    assert!(
        stdout.contains("result: PASS (0 errors, 0 warnings, gate: error)"),
        "{stdout}"
    );
}
