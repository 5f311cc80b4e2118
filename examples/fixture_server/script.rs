//! `script`: a server that says exactly what a test file tells it to, for the redaction leak
//! tests. On the first line read from stdin it writes every line of the file named by
//! `SCRIPT_FILE` to stdout, verbatim, then reads stdin until it closes and exits 0. A line may
//! hold `{{PAD:N}}`, which is written as N `x` bytes (how a test makes a line over the capture
//! limit without shipping one).

use std::io::{self, BufRead, Write};

pub(crate) fn run() -> io::Result<u8> {
    let path = std::env::var("SCRIPT_FILE")
        .map_err(|_| io::Error::other("set SCRIPT_FILE to the lines to write"))?;
    let script = std::fs::read_to_string(path)?;
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    if lines.next().transpose()?.is_none() {
        return Ok(0);
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in script.lines() {
        write_expanded(&mut out, line)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    for line in lines {
        line?;
    }
    Ok(0)
}

fn write_expanded(out: &mut impl Write, line: &str) -> io::Result<()> {
    let mut rest = line;
    while let Some(at) = rest.find("{{PAD:") {
        out.write_all(&rest.as_bytes()[..at])?;
        let after = &rest[at + 6..];
        let Some(end) = after.find("}}") else {
            out.write_all(&rest.as_bytes()[at..])?;
            return Ok(());
        };
        let n: usize = after[..end].parse().unwrap_or(0);
        let chunk = [b'x'; 64 * 1024];
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.len());
            out.write_all(&chunk[..k])?;
            left -= k;
        }
        rest = &after[end + 2..];
    }
    out.write_all(rest.as_bytes())
}
