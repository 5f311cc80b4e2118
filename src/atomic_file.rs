//! Writing a file so that readers see the old content or the new, never a part: the one atomic
//! file write, used by `snapshot`, `redact -o` and `record`.
//!
//! The new content goes to a temporary file created exclusively in the target's directory (a
//! rename is only atomic within one file system), is synced to disk, and is renamed over the
//! target; then the directory is synced, so the rename itself survives a crash. The temporary
//! file is removed on every path that does not end in the rename — a failed write (a full disk),
//! a failed sync, a failed rename, an error or a panic in the caller's writing code — because
//! removal happens when the [`AtomicFile`] is dropped uncommitted.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The mode a new cassette file gets: it may hold what redaction did not recognise
/// (docs/redaction.md, "Cassette files are private").
pub(crate) const CASSETTE_MODE: u32 = 0o600;

/// The mode a new file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permissions {
    /// `0o666` less the umask, as any newly created file.
    Default,
    /// These mode bits, less the umask (`0o600` for a file that may hold secrets).
    Mode(u32),
    /// The target's mode when it exists (a rewrite keeps what its owner set), else
    /// [`Permissions::Default`].
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "every writer now falls back to explicit bits; kept for its tests"
        )
    )]
    KeepTarget,
    /// The target's mode when it exists, else these bits less the umask (a cassette: `0o600`).
    KeepTargetOr(u32),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum AtomicFileError {
    #[error("failed to create a temporary file in {}: {cause}", dir.display())]
    Create { dir: PathBuf, cause: io::Error },
    #[error("failed to write {}: {cause}", path.display())]
    Write { path: PathBuf, cause: io::Error },
    /// [`AtomicFile::commit_new`] found the target already there.
    #[error("failed to create {}: it already exists", path.display())]
    Exists { path: PathBuf },
}

impl AtomicFileError {
    /// The operating system's error, when there was one (the tests check which).
    #[cfg(test)]
    pub(crate) fn io_error(&self) -> Option<&io::Error> {
        match self {
            AtomicFileError::Create { cause, .. } | AtomicFileError::Write { cause, .. } => {
                Some(cause)
            }
            AtomicFileError::Exists { .. } => None,
        }
    }
}

/// Tells apart the temporary files of threads of one process.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// A new version of a file being written beside it. Write to it (it is [`Write`]), then
/// [`AtomicFile::commit`]; dropped uncommitted, it removes itself and the target is untouched.
#[derive(Debug)]
pub(crate) struct AtomicFile {
    file: File,
    temp: PathBuf,
    target: PathBuf,
    dir: PathBuf,
    /// The temporary file is gone (renamed or linked into place): nothing to remove.
    placed: bool,
}

impl AtomicFile {
    /// Creates the temporary file beside `target`.
    pub(crate) fn create(
        target: &Path,
        permissions: Permissions,
    ) -> Result<AtomicFile, AtomicFileError> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".to_owned());
        let mode = match permissions {
            Permissions::Mode(mode) | Permissions::KeepTargetOr(mode) => mode,
            Permissions::Default | Permissions::KeepTarget => 0o666,
        };
        let pid = std::process::id();
        let mut last = None;
        for _ in 0..100 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let temp = dir.join(format!(".{name}.{pid}-{n}.tmp"));
            let opened = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&temp);
            match opened {
                Ok(file) => {
                    let atomic = AtomicFile {
                        file,
                        temp,
                        target: target.to_owned(),
                        dir,
                        placed: false,
                    };
                    if matches!(
                        permissions,
                        Permissions::KeepTarget | Permissions::KeepTargetOr(_)
                    ) {
                        atomic.keep_target_mode()?;
                    }
                    return Ok(atomic);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(cause) => return Err(AtomicFileError::Create { dir, cause }),
            }
        }
        Err(AtomicFileError::Create {
            dir,
            cause: last.unwrap_or_else(|| io::Error::other("no free temporary name")),
        })
    }

    fn keep_target_mode(&self) -> Result<(), AtomicFileError> {
        let Ok(meta) = fs::metadata(&self.target) else {
            return Ok(());
        };
        let mode = meta.permissions().mode() & 0o7777;
        self.file
            .set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|cause| self.write_error(cause))
    }

    fn write_error(&self, cause: io::Error) -> AtomicFileError {
        AtomicFileError::Write {
            path: self.target.clone(),
            cause,
        }
    }

    /// Syncs the content and renames it over the target, then syncs the directory.
    pub(crate) fn commit(mut self) -> Result<(), AtomicFileError> {
        self.file
            .sync_all()
            .map_err(|cause| self.write_error(cause))?;
        fs::rename(&self.temp, &self.target).map_err(|cause| self.write_error(cause))?;
        self.placed = true;
        sync_dir(&self.dir).map_err(|cause| self.write_error(cause))
    }

    /// As [`AtomicFile::commit`], but only when nothing is at the target yet
    /// ([`AtomicFileError::Exists`] otherwise): the content is linked into place, which fails
    /// rather than replace a file that appeared meanwhile.
    pub(crate) fn commit_new(mut self) -> Result<(), AtomicFileError> {
        self.file
            .sync_all()
            .map_err(|cause| self.write_error(cause))?;
        match fs::hard_link(&self.temp, &self.target) {
            Ok(()) => {
                // The content is in place under its name; the temporary name goes.
                let _ = fs::remove_file(&self.temp);
                self.placed = true;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(AtomicFileError::Exists {
                    path: self.target.clone(),
                });
            }
            Err(cause) => {
                // A file system without hard links: rename, which would replace a file that
                // appeared since this check (a narrow race, on such file systems only).
                if fs::symlink_metadata(&self.target).is_ok() {
                    return Err(AtomicFileError::Exists {
                        path: self.target.clone(),
                    });
                }
                fs::rename(&self.temp, &self.target).map_err(|_| self.write_error(cause))?;
                self.placed = true;
            }
        }
        sync_dir(&self.dir).map_err(|cause| self.write_error(cause))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.placed {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Makes a rename in `dir` durable. A file system that cannot sync a directory says so with
/// `EINVAL`; there is nothing more to do on it.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Replaces `target` with `bytes`, atomically.
pub(crate) fn write(
    target: &Path,
    bytes: &[u8],
    permissions: Permissions,
) -> Result<(), AtomicFileError> {
    write_with(target, permissions, |file| {
        file.write_all(bytes)
            .map_err(|cause| AtomicFileError::Write {
                path: target.to_owned(),
                cause,
            })
    })
}

/// Replaces `target` with what `fill` writes, atomically. The target is replaced only when
/// `fill` succeeds and the content reaches the disk; on any error, `fill`'s own included, the
/// target is untouched and no temporary file remains.
pub(crate) fn write_with<T, E: From<AtomicFileError>>(
    target: &Path,
    permissions: Permissions,
    fill: impl FnOnce(&mut AtomicFile) -> Result<T, E>,
) -> Result<T, E> {
    let mut file = AtomicFile::create(target, permissions)?;
    let value = fill(&mut file)?;
    file.commit()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A writer that accepts `room` bytes, then fails as a full disk does.
    struct Full<'a> {
        inner: &'a mut AtomicFile,
        room: usize,
    }

    impl Write for Full<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.inner.write(&buf[..n])
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A directory holding one file, `out.json`, that says "old".
    fn old_target() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        fs::write(&target, "old").unwrap();
        (dir, target)
    }

    #[test]
    fn replaces_the_target_and_leaves_nothing_else() {
        let (dir, target) = old_target();
        write(&target, b"new", Permissions::Default).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["out.json"]);
    }

    #[test]
    fn a_full_disk_midway_leaves_the_target_and_no_temporary() {
        let (dir, target) = old_target();
        let failed = write_with(&target, Permissions::Default, |file| {
            let mut full = Full {
                inner: file,
                room: 10,
            };
            full.write_all(&[b'x'; 100])
                .map_err(|cause| AtomicFileError::Write {
                    path: target.clone(),
                    cause,
                })
        });
        let err = failed.unwrap_err();
        assert_eq!(
            err.io_error().and_then(io::Error::raw_os_error),
            Some(libc::ENOSPC)
        );
        assert!(err.to_string().starts_with("failed to write "), "{err}");
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(names(dir.path()), ["out.json"]);
    }

    #[test]
    fn a_panic_while_writing_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        let outcome = std::panic::catch_unwind(|| {
            let _ = write_with(
                &target,
                Permissions::Default,
                |file| -> Result<(), AtomicFileError> {
                    file.write_all(b"part").unwrap();
                    panic!("the writer gives up");
                },
            );
        });
        assert!(outcome.is_err());
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory cannot be replaced by a file.
        let target = dir.path().join("taken");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside"), "x").unwrap();
        let err = write(&target, b"new", Permissions::Default).unwrap_err();
        assert!(err.to_string().starts_with("failed to write "), "{err}");
        assert_eq!(names(dir.path()), ["taken"]);
    }

    #[test]
    fn modes_requested_or_kept() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        write(&secret, b"s", Permissions::Mode(0o600)).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&secret), 0o600);
        let kept = dir.path().join("kept");
        fs::write(&kept, "old").unwrap();
        fs::set_permissions(&kept, fs::Permissions::from_mode(0o640)).unwrap();
        write(&kept, b"new", Permissions::KeepTarget).unwrap();
        assert_eq!(mode(&kept), 0o640);
    }

    #[test]
    fn commit_new_refuses_an_existing_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("c.jsonl");
        let mut first = AtomicFile::create(&target, Permissions::Default).unwrap();
        first.write_all(b"one").unwrap();
        first.commit_new().unwrap();
        let mut second = AtomicFile::create(&target, Permissions::Default).unwrap();
        second.write_all(b"two").unwrap();
        assert!(matches!(
            second.commit_new(),
            Err(AtomicFileError::Exists { .. })
        ));
        assert_eq!(fs::read_to_string(&target).unwrap(), "one");
        assert_eq!(names(dir.path()), ["c.jsonl"]);
    }
}
