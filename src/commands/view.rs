//! `view <cassette> -o <page.html>`: the cassette as one self-contained HTML page
//! (docs/view.md). `-o -` writes the page to stdout.
//!
//! The cassette is streamed into the page: into a temporary file beside the output, renamed
//! into place only once the last entry is written (the one atomic write), so an unreadable
//! line leaves no half page and an earlier page untouched. `-o` never replaces a cassette, the
//! one being read included. Exit codes (docs/cli.md): 0 written, 2 nothing written.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, anyhow};

use crate::atomic_file::{self, CASSETTE_MODE, Permissions};
use crate::cassette::{Existing, Reader, looks_like_cassette};
use crate::cli::ViewArgs;
use crate::report::terminal::escape_lines;
use crate::view::{Summary, ViewError, write_page};

pub(crate) fn run(args: ViewArgs) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("view: {}", escape_lines(&super::error_text(&e)));
            ExitCode::from(2)
        }
    }
}

fn execute(args: &ViewArgs) -> anyhow::Result<()> {
    let to_stdout = args.out.as_os_str() == "-";
    if !to_stdout {
        refuse_cassette_target(&args.cassette, &args.out)?;
    }
    let reader = Reader::open(&args.cassette)?;
    let name = args
        .cassette
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| args.cassette.display().to_string());
    if to_stdout {
        let stdout = io::stdout().lock();
        let mut out = BufWriter::with_capacity(256 * 1024, stdout);
        write_page(reader, &name, &mut out)?;
        return out.flush().context("failed to write the page to stdout");
    }
    // The page holds everything the cassette holds, so it gets a cassette's mode.
    let summary = atomic_file::write_with(&args.out, Permissions::Mode(CASSETTE_MODE), |file| {
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        let summary = write_page(reader, &name, &mut out)?;
        out.flush().map_err(ViewError::Write)?;
        Ok::<Summary, anyhow::Error>(summary)
    })?;
    eprintln!(
        "view: wrote {} ({} entries, {} timeline rows)",
        escape_lines(&args.out.display().to_string()),
        summary.entries,
        summary.rows
    );
    Ok(())
}

/// The page must not take the place of a cassette: neither the one being read (by any path
/// to it) nor any other file that starts with a cassette header.
fn refuse_cassette_target(input: &Path, out: &Path) -> anyhow::Result<()> {
    if same_file(input, out) {
        return Err(anyhow!(
            "-o {} is the cassette being read; name a new .html file",
            out.display()
        ));
    }
    match looks_like_cassette(out) {
        Ok(Existing::Cassette) => Err(anyhow!(
            "-o {} is a cassette; refusing to overwrite it with a page (name a .html file)",
            out.display()
        )),
        Ok(_) => Ok(()),
        // A path that cannot be read here is reported by the write itself.
        Err(_) => Ok(()),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}
