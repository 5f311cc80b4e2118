//! `redact`: write a redacted copy of a cassette (`-o`), audit one (`--scan`), or check a
//! redaction config (`--check-config`).
//!
//! Both cassette modes stream, so any file size runs in the same memory: one entry is worked on
//! at a time while a second thread parses the lines after it, a bounded batch ahead
//! ([`cassette::for_each_entry`]). `-o` writes to a temporary file beside the output and renames it into place only once
//! every line is written, so a failure leaves no half-written file and never touches the input.
//! Exit codes and messages are the reference's (docs/redaction.md): 0 done or clean, 1 secrets found
//! (or no cassette given), 2 usage errors and failures, reported as `redact failed: <why>`.

use std::collections::HashSet;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::ExitCode;

use anyhow::anyhow;

use crate::atomic_file::{AtomicFile, CASSETTE_MODE, Permissions};
use crate::cassette::{self, EntryKind, Reader, Writer};
use crate::cli::RedactArgs;
use crate::line::{Line, LineBuffer, OverLimit};
use crate::redact::scan::result_line;
use crate::redact::{CassetteScanner, Echoes, RedactConfig, Redactor, check_config_hash};
use crate::report::style::count as count_of;

/// How much of a scan report is held before it is written out. The report is written in one
/// piece up to this size (a failure part-way then prints no partial report); beyond it, memory
/// stays bounded and the report is written as it grows.
const REPORT_BUFFER: usize = 8 * 1024 * 1024;

pub fn run(args: RedactArgs) -> ExitCode {
    match execute(&args) {
        Ok(code) => code,
        Err(e) => {
            // Messages may quote config values or cassette text; none may print a secret.
            let (message, _) = Redactor::builtin().redact_text(&super::error_text(&e));
            eprintln!("redact failed: {message}");
            ExitCode::from(2)
        }
    }
}

fn usage(message: &str, code: u8) -> anyhow::Result<ExitCode> {
    eprintln!("{message}");
    Ok(ExitCode::from(code))
}

fn execute(args: &RedactArgs) -> anyhow::Result<ExitCode> {
    let config = match &args.redact_config {
        Some(path) => Some(RedactConfig::load(path)?),
        None => None,
    };
    if args.check_config && (args.cassette.is_some() || args.scan || args.out.is_some()) {
        return usage(
            "redact: --check-config reads the config and writes nothing. Drop the cassette, --scan and -o, or drop --check-config",
            2,
        );
    }
    if args.check_config {
        return match &config {
            Some(config) => check_config(config),
            None => usage(
                "redact --check-config: pass --redact-config <file>, there is nothing else to check",
                2,
            ),
        };
    }
    let Some(input) = &args.cassette else {
        return usage(
            "redact: pass a cassette, or --check-config with --redact-config",
            1,
        );
    };
    if args.scan && args.out.is_some() {
        return usage("redact: --scan writes nothing. Drop -o, or drop --scan", 2);
    }
    let redactor = match &config {
        Some(c) => Redactor::with_config(c),
        None => Redactor::builtin(),
    };
    // Opened once here so that a missing or header-less file fails before anything else.
    drop(Reader::open(input)?);
    if args.scan {
        return scan(input, &redactor);
    }
    let Some(out) = &args.out else {
        return usage(
            "redact: pass -o <file> to write a redacted cassette, or --scan to audit",
            2,
        );
    };
    let count = write_redacted(input, &redactor, out)?;
    println!(
        "wrote {} ({} redacted)",
        out.display(),
        count_of(count, "secret", "secrets")
    );
    Ok(ExitCode::SUCCESS)
}

/// `--check-config`: every pattern the `regex` crate accepted runs in linear time, by construction.
fn check_config(config: &RedactConfig) -> anyhow::Result<ExitCode> {
    let patterns = config.patterns();
    if patterns.is_empty() {
        println!(
            "redact --check-config: the config declares no patterns, so there is nothing to analyse"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let width = patterns
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut report = String::new();
    for p in patterns {
        report.push_str(&format!(
            "{:<width$}  {:<10}  linear, via the regex crate (finite automata, no backtracking: time grows with the input length, never faster)\n",
            p.name, "safe"
        ));
    }
    report.push_str(&format!(
        "result: {} proven free of super-linear blowup\n",
        count_of(patterns.len(), "pattern", "patterns")
    ));
    write_stdout(report.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A reader that went away (`| head`) is not our failure.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `--scan`: what `-o` would replace, found the way `-o` finds it. Secrets are remembered as
/// the file streams by, so a later echo of one is reported; an echo *before* the secret's first
/// recognisable appearance needs the whole set, so when a cheap literal pass finds one, the scan
/// runs again with every secret known from the start (docs/redaction.md, "Echoes").
fn scan(input: &Path, redactor: &Redactor) -> anyhow::Result<ExitCode> {
    let first = scan_pass(input, redactor, redactor.echoes(), true, true)?;
    let (mut report, found) = match first {
        ScanPass::Done { report, found } => (report, found),
        ScanPass::Streamed { found, echoes } => {
            if has_early_echo(input, &echoes)? {
                // A report past REPORT_BUFFER is already out and cannot be taken back: the
                // second pass only counts, so the verdict and total still agree with `-o`.
                match scan_pass(input, redactor, echoes, false, false)? {
                    ScanPass::Done { found, .. } | ScanPass::Streamed { found, .. } => {
                        (String::new(), found)
                    }
                }
            } else {
                (String::new(), found)
            }
        }
    };
    report.push_str(&result_line(found));
    report.push('\n');
    write_stdout(report.as_bytes())?;
    Ok(if found == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

enum ScanPass {
    /// The report is held whole; `found` counts its lines.
    Done { report: String, found: usize },
    /// The report outgrew [`REPORT_BUFFER`] and was written out as it grew.
    Streamed { found: usize, echoes: Echoes },
}

/// One pass of `--scan`. With `check_early`, a held report is only final when no secret appears
/// before the place it was learned; otherwise the caller is told to run a second pass.
fn scan_pass(
    input: &Path,
    redactor: &Redactor,
    echoes: Echoes,
    check_early: bool,
    emit: bool,
) -> anyhow::Result<ScanPass> {
    let reader = Reader::open(input)?;
    let mut scanner = CassetteScanner::with_echoes(redactor, echoes);
    let mut report = String::new();
    let mut found = 0usize;
    let mut streamed = false;
    let mut warned: HashSet<String> = HashSet::new();
    let path = reader.path().to_owned();
    for hit in scanner.header(reader.header()) {
        found += 1;
        report.push_str(&hit.to_string());
        report.push('\n');
    }
    // The file is parsed on a second thread while this one scans (the scan must stay in file
    // order: what it learns from one entry applies to the next).
    let mut failed: Option<io::Error> = None;
    cassette::for_each_entry(reader, |entry| {
        if let EntryKind::Unknown(kind) = &entry.kind {
            if check_early && warned.insert(kind.clone()) {
                eprintln!("{}", cassette::unknown_entry_warning(kind, &path));
            }
        }
        for hit in scanner.entry(entry) {
            found += 1;
            if emit {
                report.push_str(&hit.to_string());
                report.push('\n');
            }
        }
        if report.len() > REPORT_BUFFER {
            if let Err(e) = write_stdout(report.as_bytes()) {
                failed = Some(e);
                return ControlFlow::Break(());
            }
            report.clear();
            streamed = true;
        }
        ControlFlow::Continue(())
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let echoes = scanner.into_echoes();
    if check_early && !streamed && has_early_echo(input, &echoes)? {
        return scan_pass(input, redactor, echoes, false, emit);
    }
    Ok(if streamed {
        write_stdout(report.as_bytes())?;
        ScanPass::Streamed { found, echoes }
    } else {
        ScanPass::Done { report, found }
    })
}

/// Whether any line of the file holds a remembered secret before the line it was learned from
/// (a literal search over the raw lines, much cheaper than a redaction pass). Positions count
/// the non-blank lines, header first, as the cassette reader does.
fn has_early_echo(input: &Path, echoes: &Echoes) -> anyhow::Result<bool> {
    if echoes.is_empty() {
        return Ok(false);
    }
    let check = echoes.early_check();
    let file = fs::File::open(input)
        .map_err(|e| anyhow!(e).context(format!("failed to read {}", input.display())))?;
    let mut lines = LineBuffer::with_capacity(256 * 1024, usize::MAX, OverLimit::Stop);
    let mut reader = io::BufReader::with_capacity(256 * 1024, file);
    let mut position = 0usize;
    while let Some(line) = lines
        .next_from(&mut reader)
        .map_err(|e| anyhow!(e).context(format!("failed to read {}", input.display())))?
    {
        let bytes = match line {
            Line::Whole { bytes, .. } => bytes,
            Line::TooLong { head, .. } => head,
        };
        // Valid UTF-8 (every line the reader accepts) is borrowed after the fast check; only a
        // line that is not pays for the lossy decoding.
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        if text.trim().is_empty() {
            continue;
        }
        if check.is_early(position, &text) {
            return Ok(true);
        }
        position += 1;
    }
    Ok(false)
}

/// `-o`: a streaming pass that remembers secrets as it goes; when a cheap literal pass finds one
/// appearing before it was learned, the file is written again with every secret known from the
/// start (docs/redaction.md, "Echoes").
fn write_redacted(input: &Path, redactor: &Redactor, out: &Path) -> anyhow::Result<usize> {
    let (count, echoes, temp) = write_pass(input, redactor, redactor.echoes(), out)?;
    if has_early_echo(input, &echoes)? {
        drop(temp);
        let (count, _, temp) = write_pass(input, redactor, echoes, out)?;
        temp.commit()?;
        return Ok(count);
    }
    temp.commit()?;
    Ok(count)
}

fn write_pass(
    input: &Path,
    redactor: &Redactor,
    mut echoes: Echoes,
    out: &Path,
) -> anyhow::Result<(usize, Echoes, AtomicFile)> {
    let reader = Reader::open(input)?;
    let mut header = reader.header().clone();
    if let Err(mismatch) = check_config_hash(header.config_hash(), redactor.config_hash()) {
        if let Some(message) = mismatch.redact_message() {
            return Err(anyhow!(message));
        }
    }
    // Written beside the output and renamed into place once complete (with the output's
    // mode when it exists): a failure leaves no half-written file and no temporary one.
    let mut temp = AtomicFile::create(out, Permissions::KeepTargetOr(CASSETTE_MODE))?;
    let write_err = |e: io::Error| anyhow!(e).context(format!("failed to write {}", out.display()));
    let mut writer = Writer::new(BufWriter::with_capacity(256 * 1024, &mut temp));
    echoes.set_position(0);
    let mut count = redactor.redact_header_echoing(&mut header, &mut echoes);
    header.set_redaction(true, redactor.config_hash());
    writer.write_header(&header).map_err(write_err)?;
    // Parsed on a second thread while this one redacts and writes, in file order.
    let mut position = 0;
    let mut failed: Option<io::Error> = None;
    cassette::for_each_entry(reader, |entry| {
        position += 1;
        echoes.set_position(position);
        count += redactor.redact_entry_echoing(entry, &mut echoes);
        match writer.write_entry(entry) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(write_err(e));
    }
    writer
        .into_inner()
        .into_inner()
        .map_err(|e| write_err(e.into_error()))?;
    Ok((count, echoes, temp))
}
