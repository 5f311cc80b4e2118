//! `lint <cassette> [--json]`: header-versus-frames contradictions (exit 1), newer header fields
//! and prompt injection in recorded answers (reported at warn, never gating). The cassette is
//! streamed entry by entry; an unreadable one prints the reader's error and exits 1.
//!
//! There is deliberately no SARIF here: a cassette has no server, tool count or gate to put in
//! one.

use std::io::Write;
use std::process::ExitCode;

use crate::cassette::Reader;
use crate::cli::LintArgs;
use crate::lint::cassette::{CassetteLint, lint_cassette};

pub fn run(args: LintArgs) -> ExitCode {
    let label = args.cassette.display().to_string();
    let result = Reader::open(&args.cassette)
        .and_then(|reader| lint_cassette(reader, |note| eprintln!("{note}")));
    let lint = match result {
        Ok(lint) => lint,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let body = if args.json {
        json_report(&label, &lint)
    } else {
        text_report(&label, &lint)
    };
    // One write, so a long report survives a pipe that closes late; a reader that went away
    // (`| head`) does not change the verdict.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(body.as_bytes()).and_then(|()| out.flush());
    if lint.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The text report of spec §9.4.
pub fn text_report(label: &str, lint: &CassetteLint) -> String {
    let mut out = String::new();
    for f in &lint.header {
        if f.severity == crate::lint::Level::Error {
            out.push_str(&format!("{}: {}\n", f.rule, f.message));
        } else {
            out.push_str(&format!("[WARN] {}: {}\n", f.rule, f.message));
        }
    }
    for f in &lint.output {
        out.push_str(&format!(
            "[WARN] {} {} #{} {}: {}\n",
            f.rule,
            f.method,
            f.request_label(),
            f.path,
            f.message
        ));
        if let Some(excerpt) = &f.excerpt {
            out.push_str(&format!("       evidence: \"{excerpt}\"\n"));
        }
    }
    let errors = lint.errors();
    if errors == 0 {
        out.push_str(&format!("{label}: header and frames agree\n"));
    } else {
        out.push_str(&format!("{label}: {errors} inconsistency(ies)\n"));
    }
    let warnings = lint.warnings();
    if warnings > 0 {
        out.push_str(&format!(
            "{label}: {warnings} warning(s) (reported, not gated)\n"
        ));
    }
    out
}

/// `{cassette, ok, header, output}`, 2-space indented.
pub fn json_report(label: &str, lint: &CassetteLint) -> String {
    let doc = serde_json::json!({
        "cassette": label,
        "ok": lint.ok(),
        "header": lint.header,
        "output": lint.output,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}
