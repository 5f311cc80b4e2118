//! `view`: a cassette as one self-contained HTML page (docs/view.md).
//!
//! Pure: the page is written to the [`Write`] it is handed while the cassette is read, entry by
//! entry, so neither the cassette nor the page is ever whole in memory. Three steps:
//!
//! - [`model`]: each entry becomes one or more timeline rows (a streamed answer is a row for
//!   the stream and one per chunk), each answer linked to the row of its request, tasks and
//!   listen streams given a group;
//! - [`script_json`]: the rows as JSON that can sit inside a `<script>` element whatever the
//!   cassette holds (`<`, `>`, `&`, U+2028 and U+2029 are written as `\u` escapes);
//! - [`page`]: the HTML around them, with the page's own script and style inline (from
//!   `assets/`) and a Content-Security-Policy that lets only that script run.
//!
//! The page renders cassette text only through `textContent` and `createElement`, never as
//! markup, so a hostile cassette shows as text (docs/view.md, "Safety").

mod model;
mod page;
mod script_json;

use std::io::{self, Read, Write};

use crate::cassette::{CassetteError, Reader};

#[cfg(test)]
use page::content_security_policy;

/// Why a page could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ViewError {
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    #[error("failed to write the page: {0}")]
    Write(#[from] io::Error),
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Summary {
    /// Cassette entries read.
    pub(crate) entries: u64,
    /// Timeline rows written (an entry of streamed chunks is a row per chunk and one more).
    pub(crate) rows: u64,
}

/// Writes the page for the cassette `reader` reads; `name` is what the page calls it.
pub(crate) fn write_page<R: Read, W: Write>(
    reader: Reader<R>,
    name: &str,
    out: &mut W,
) -> Result<Summary, ViewError> {
    let header_line = reader.header().to_line();
    page::write_head(out, name, &header_line)?;
    let mut rows = model::Rows::default();
    let mut summary = Summary::default();
    let mut buffer = Vec::new();
    for entry in reader {
        let entry = entry?;
        summary.entries += 1;
        buffer.clear();
        let written = rows.push(&entry, &mut buffer);
        summary.rows += written;
        out.write_all(&buffer)?;
    }
    page::write_tail(out)?;
    Ok(summary)
}

#[cfg(test)]
mod tests;
