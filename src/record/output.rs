//! What is at `-o` before a recording, and the file a recording streams into.
//!
//! The recorder only ever replaces what it can prove is its own (docs/record.md, "What `-o` may
//! hold"): nothing, an empty file (what a recording killed before its first entry leaves, since
//! the header waits for the era decision), or a cassette when the user asked for it
//! (`--mode all`). A symbolic link is never followed and anything that is not a regular file is
//! never written, in any mode.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::atomic_file::{AtomicFile, AtomicFileError, CASSETTE_MODE, Permissions};
use crate::cassette::{Existing, looks_like_cassette};

/// What the path holds, judged without following a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    Absent,
    /// A regular file of zero bytes.
    Empty,
    /// A regular file whose first line is a cassette header.
    Cassette,
    /// A regular file with something else in it: not ours.
    Foreign,
    /// A symbolic link (dangling or not).
    Symlink,
    /// A directory, a device, a pipe, a socket.
    NotAFile,
}

/// Looks at `path` without following a symbolic link.
pub(crate) fn examine(path: &Path) -> io::Result<Found> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Ok(Found::Symlink);
    }
    if !kind.is_file() {
        return Ok(Found::NotAFile);
    }
    if meta.len() == 0 {
        return Ok(Found::Empty);
    }
    Ok(match looks_like_cassette(path)? {
        Existing::Cassette => Found::Cassette,
        // Non-empty (checked above) and without a header line.
        Existing::Leftover | Existing::Absent => Found::Foreign,
    })
}

/// Why no mode writes to a path that is a [`Found::Symlink`] or a [`Found::NotAFile`].
pub(crate) fn unwritable(path: &Path, found: Found) -> String {
    match found {
        Found::Symlink => format!(
            "{} is a symbolic link; refusing to write through it. Pass the path of the file it points to if that is the one to record into",
            path.display()
        ),
        _ => format!(
            "{} is not a regular file; refusing to write to it",
            path.display()
        ),
    }
}

/// How a streaming recording (`--mode once` / `all`) reaches its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Nothing is there: the file is created (never through a link) and streamed into.
    New,
    /// An empty file is there: it is opened (never through a link) and streamed into.
    IntoEmpty,
    /// A file is there that stays until the session has something to replace it with: the
    /// session streams into a temporary file beside it, renamed over it at the end.
    Beside,
}

/// The file a streaming recording writes into.
#[derive(Debug)]
pub(crate) enum Output {
    Direct(File),
    Beside(AtomicFile),
}

impl Output {
    /// Opens the output at `path` as `placement` says.
    pub(crate) fn open(path: &Path, placement: Placement) -> io::Result<Output> {
        match placement {
            Placement::New => OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(CASSETTE_MODE)
                .open(path)
                .map(Output::Direct),
            Placement::IntoEmpty => {
                let file = OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(path)?;
                // Judged again on what was opened: it may have changed since it was examined.
                let meta = file.metadata()?;
                if !meta.is_file() || meta.len() != 0 {
                    return Err(io::Error::other(
                        "it changed since it was examined and is no longer an empty file",
                    ));
                }
                Ok(Output::Direct(file))
            }
            Placement::Beside => AtomicFile::create(path, Permissions::KeepTargetOr(CASSETTE_MODE))
                .map(Output::Beside)
                .map_err(into_io),
        }
    }

    /// Makes what was written durable; `replace` says whether a [`Output::Beside`] file takes
    /// the path (otherwise it is dropped and the file at the path is left as it was). Returns
    /// whether the path now holds this session.
    pub(crate) fn finish(self, replace: bool) -> io::Result<bool> {
        match self {
            Output::Direct(file) => file.sync_data().map(|()| true),
            Output::Beside(file) if replace => file.commit().map(|()| true).map_err(into_io),
            Output::Beside(_) => Ok(false),
        }
    }
}

fn into_io(e: AtomicFileError) -> io::Error {
    match e {
        AtomicFileError::Create { cause, .. } | AtomicFileError::Write { cause, .. } => cause,
        AtomicFileError::Exists { .. } => io::ErrorKind::AlreadyExists.into(),
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Direct(f) => f.write(buf),
            Output::Beside(f) => f.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Direct(f) => f.write_all(buf),
            Output::Beside(f) => f.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Direct(f) => f.flush(),
            Output::Beside(f) => f.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examine_tells_apart_what_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str| dir.path().join(name);
        assert_eq!(examine(&p("none")).unwrap(), Found::Absent);
        fs::write(p("empty"), "").unwrap();
        assert_eq!(examine(&p("empty")).unwrap(), Found::Empty);
        fs::write(p("notes.md"), "# notes\n").unwrap();
        assert_eq!(examine(&p("notes.md")).unwrap(), Found::Foreign);
        fs::write(p("c.jsonl"), "{\"type\":\"header\"}\n").unwrap();
        assert_eq!(examine(&p("c.jsonl")).unwrap(), Found::Cassette);
        std::os::unix::fs::symlink(p("c.jsonl"), p("link")).unwrap();
        assert_eq!(examine(&p("link")).unwrap(), Found::Symlink);
        std::os::unix::fs::symlink(p("none"), p("dangling")).unwrap();
        assert_eq!(examine(&p("dangling")).unwrap(), Found::Symlink);
        assert_eq!(examine(dir.path()).unwrap(), Found::NotAFile);
    }

    #[test]
    fn into_empty_never_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::write(&real, "").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(Output::open(&link, Placement::IntoEmpty).is_err());
        assert!(Output::open(&link, Placement::New).is_err());
    }
}
