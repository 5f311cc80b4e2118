//! `record --mode append`: one more session added to an existing cassette, or a new cassette
//! created by the first session. The header is never rewritten, so every way this session could
//! contradict it is a refusal that leaves the file byte-identical; the session's lines reach the
//! file in one `O_APPEND` write so that overlapping recorders never interleave inside a line.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::atomic_file::{AtomicFile, AtomicFileError, CASSETTE_MODE, Permissions};
use crate::cassette::{Entry, EntryKind, Header, Reader, parse_iso};
use crate::jsonrpc::{Frame, Id};
use crate::protocol::{Era, SUBSCRIPTION_ID_KEY};
use crate::record::output::{self, Found};

/// Why a session cannot be appended. `Display` is the full stderr message.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AppendRefusal {
    #[error("record --mode append: {path} {why}")]
    Contradicts { path: String, why: String },
    #[error(
        "record --mode append: {path} could not be read as a cassette ({detail}); it was left untouched"
    )]
    Unreadable { path: String, detail: String },
    #[error(
        "record --mode append: failed to write {path}: {source}; it was left as it was before this session"
    )]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    /// The path holds something this session may not write to (see `record::output`).
    #[error("record --mode append: {0}; it was left untouched")]
    NotOurs(String),
    /// The append failed and cutting the file back to its length failed too.
    #[error(
        "record --mode append: failed to write {path}: {source}; restoring its previous length of {len} bytes failed too ({restore}), so it now ends with a cut-off line"
    )]
    Damaged {
        path: String,
        len: u64,
        #[source]
        source: io::Error,
        restore: io::Error,
    },
}

/// What is already at the path.
#[derive(Debug)]
pub(crate) struct Current {
    header: Header,
    next_live: u64,
    ends_with_newline: bool,
}

/// The target of an appending session, inspected before the server is spawned.
#[derive(Debug)]
pub(crate) struct AppendTarget {
    path: PathBuf,
    existing: Option<Current>,
    /// An empty file is at the path (it is replaced by a new cassette).
    leftover: bool,
}

impl AppendTarget {
    pub(crate) fn leftover(&self) -> bool {
        self.leftover
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// Reads what is at `path` and checks it against this session's header.
pub(crate) fn inspect(path: &Path, session: &Header) -> Result<AppendTarget, AppendRefusal> {
    let state = output::examine(path).map_err(|e| AppendRefusal::Unreadable {
        path: display(path),
        detail: e.to_string(),
    })?;
    match state {
        Found::Absent => Ok(AppendTarget {
            path: path.to_owned(),
            existing: None,
            leftover: false,
        }),
        Found::Empty => Ok(AppendTarget {
            path: path.to_owned(),
            existing: None,
            leftover: true,
        }),
        Found::Symlink | Found::NotAFile => {
            Err(AppendRefusal::NotOurs(output::unwritable(path, state)))
        }
        Found::Foreign => Err(AppendRefusal::NotOurs(format!(
            "{} exists and is not a cassette (its first line is not a cassette header)",
            display(path)
        ))),
        Found::Cassette => {
            let existing = read_existing(path)?;
            check_header(path, &existing.header, session)?;
            Ok(AppendTarget {
                path: path.to_owned(),
                existing: Some(existing),
                leftover: false,
            })
        }
    }
}

fn read_existing(path: &Path) -> Result<Current, AppendRefusal> {
    let unreadable = |detail: String| AppendRefusal::Unreadable {
        path: display(path),
        detail,
    };
    let mut reader = Reader::open(path).map_err(|e| unreadable(e.to_string()))?;
    let header = reader.header().clone();
    let mut max_live = 0u64;
    for entry in reader.by_ref() {
        let entry = entry.map_err(|e| unreadable(e.to_string()))?;
        let mut note = |id: Option<&Id>| {
            if let Some(Id::Str(s)) = id {
                if let Some(n) = s.strip_prefix("live-").and_then(|n| n.parse::<u64>().ok()) {
                    max_live = max_live.max(n);
                }
            }
        };
        match &entry.kind {
            EntryKind::Frame(f) => note(f.id()),
            EntryKind::Chunks { id, chunks, .. } => {
                note(id.as_ref());
                for c in chunks {
                    note(c.frame.id());
                }
            }
            _ => {}
        }
    }
    Ok(Current {
        header,
        next_live: max_live + 1,
        ends_with_newline: reader.ended_with_newline(),
    })
}

fn check_header(path: &Path, file: &Header, session: &Header) -> Result<(), AppendRefusal> {
    let refuse = |why: String| AppendRefusal::Contradicts {
        path: display(path),
        why,
    };
    if file.transport() != session.transport() {
        return Err(refuse(format!(
            "is a {} recording and this session is a {} one; one cassette holds one transport",
            file.transport().as_str(),
            session.transport().as_str()
        )));
    }
    if file.started_at().and_then(parse_iso).is_none() {
        let shown = match file.object().get("startedAt") {
            Some(raw) => raw.to_owned(),
            None => "absent".to_owned(),
        };
        return Err(refuse(format!(
            "has no readable `startedAt` in its header ({shown}), so the appended frames have no time origin"
        )));
    }
    if file.command() != session.command() {
        let json = |c: Option<&[String]>| serde_json::to_string(&c).unwrap_or_default();
        return Err(refuse(format!(
            "records {} and this session runs {}; the header names the one server that produced the file",
            json(file.command()),
            json(session.command())
        )));
    }
    if file.redaction_applied() != session.redaction_applied() {
        let word = |on: bool| if on { "on" } else { "off" };
        return Err(refuse(format!(
            "was recorded with redaction {} and this session has it {}; replay matches on the redacted text, so one cassette cannot hold both",
            word(file.redaction_applied()),
            word(session.redaction_applied())
        )));
    }
    if file.config_hash() != session.config_hash() {
        return Err(refuse(
            "was recorded under a different --redact-config; replay refuses a cassette whose recorded hash is not the config's".to_owned(),
        ));
    }
    Ok(())
}

/// The session as recorded, ready to be appended.
#[derive(Debug)]
pub(crate) struct Session {
    pub header: Header,
    pub entries: Vec<Entry>,
    pub saw_initialize: bool,
    pub era: Option<Era>,
    /// This session's start, for shifting its offsets onto the file's timeline.
    pub started: time::OffsetDateTime,
}

/// Appends the session (or creates the cassette). Returns how many entries were written.
pub(crate) fn commit(target: AppendTarget, mut session: Session) -> Result<usize, AppendRefusal> {
    if session.entries.is_empty() && target.existing.is_some() {
        return Ok(0);
    }
    // The file may have changed while the server ran (a sibling recorder): look again.
    let fresh = inspect(&target.path, &session.header)?;
    match fresh.existing {
        None => match create(&target.path, &mut session, fresh.leftover) {
            Ok(n) => Ok(n),
            Err(CreateError::Exists) => {
                // A sibling created it first: append under its header instead, once.
                let again = inspect(&target.path, &session.header)?;
                match again.existing {
                    Some(existing) => append(&target.path, existing, session),
                    None => Err(AppendRefusal::Io {
                        path: display(&target.path),
                        source: io::Error::other("the file appeared and vanished while appending"),
                    }),
                }
            }
            Err(CreateError::Io(e)) => Err(AppendRefusal::Io {
                path: display(&target.path),
                source: match e {
                    AtomicFileError::Create { cause, .. }
                    | AtomicFileError::Write { cause, .. } => cause,
                    AtomicFileError::Exists { .. } => io::ErrorKind::AlreadyExists.into(),
                },
            }),
        },
        Some(existing) => append(&target.path, existing, session),
    }
}

enum CreateError {
    Exists,
    Io(AtomicFileError),
}

fn create(path: &Path, session: &mut Session, leftover: bool) -> Result<usize, CreateError> {
    if let Some(era) = session.era {
        session.header.set_era(era);
    }
    let mut block = session.header.to_line();
    block.push('\n');
    for e in &session.entries {
        block.push_str(&e.to_line());
        block.push('\n');
    }
    // Written beside the path and put in place whole, so that no reader ever sees a
    // half-written cassette, and a failure (a full disk) leaves nothing behind. An empty
    // leftover is replaced; otherwise the cassette is only created if nothing appeared there
    // meanwhile (a sibling recorder), which the caller then appends to instead.
    let mut file =
        AtomicFile::create(path, Permissions::Mode(CASSETTE_MODE)).map_err(CreateError::Io)?;
    file.write_all(block.as_bytes()).map_err(|cause| {
        CreateError::Io(AtomicFileError::Write {
            path: path.to_owned(),
            cause,
        })
    })?;
    let placed = if leftover {
        file.commit()
    } else {
        file.commit_new()
    };
    match placed {
        Ok(()) => Ok(session.entries.len()),
        Err(AtomicFileError::Exists { .. }) => Err(CreateError::Exists),
        Err(e) => Err(CreateError::Io(e)),
    }
}

fn append(path: &Path, existing: Current, session: Session) -> Result<usize, AppendRefusal> {
    if existing.header.era() == Some(Era::Modern) && session.saw_initialize {
        return Err(AppendRefusal::Contradicts {
            path: display(path),
            why: "declares the modern era, which has no handshake, and this session recorded an `initialize` request. Record it into a file of its own".to_owned(),
        });
    }
    if session.entries.is_empty() {
        return Ok(0);
    }
    let origin = existing
        .header
        .started_at()
        .and_then(parse_iso)
        .unwrap_or(session.started);
    let shift = (session.started - origin).whole_milliseconds().max(0) as u64;
    let mut ids = LiveIds::new(existing.next_live);
    let mut block = String::new();
    if !existing.ends_with_newline {
        block.push('\n');
    }
    let count = session.entries.len();
    for mut entry in session.entries {
        entry.set_t(entry.t.saturating_add(shift));
        if let EntryKind::Frame(frame) = &entry.kind {
            if let Some(rekeyed) = ids.rekey(frame) {
                entry.set_frame(rekeyed);
            }
        }
        block.push_str(&entry.to_line());
        block.push('\n');
    }
    let io_error = |source| AppendRefusal::Io {
        path: display(path),
        source,
    };
    let mut file = OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io_error)?;
    let len = file.metadata().map_err(io_error)?.len();
    let written = file
        .write_all(block.as_bytes())
        .and_then(|()| file.sync_data());
    if let Err(source) = written {
        // A part of the block may have reached the file (a full disk takes what fits): cut it
        // off, so that the file reads as it did and later appends and replays accept it. A
        // sibling recorder appending in the same instant would lose its block too; the window
        // is one failed write wide.
        return Err(match file.set_len(len).and_then(|()| file.sync_data()) {
            Ok(()) => io_error(source),
            Err(restore) => AppendRefusal::Damaged {
                path: display(path),
                len,
                source,
                restore,
            },
        });
    }
    Ok(count)
}

/// Mints `live-N` ids, one per original id, so an appended session cannot collide with the ids
/// of the sessions already in the file (replay pairs requests and answers by id).
struct LiveIds {
    next: u64,
    map: HashMap<String, String>,
}

impl LiveIds {
    fn new(next: u64) -> LiveIds {
        LiveIds {
            next,
            map: HashMap::new(),
        }
    }

    fn mint(&mut self, original: &Id) -> String {
        let key = original.to_json();
        if let Some(live) = self.map.get(&key) {
            return live.clone();
        }
        let live = format!("live-{}", self.next);
        self.next += 1;
        self.map.insert(key, live.clone());
        live
    }

    /// The frame with its id (and any subscription tag) minted; `None` when it has neither.
    fn rekey(&mut self, frame: &Frame) -> Option<Frame> {
        let mut value = frame.value();
        let mut changed = false;
        if let Some(id) = frame.id() {
            if *id != Id::Null {
                let live = self.mint(id);
                value["id"] = Value::String(live);
                changed = true;
            }
        }
        for member in ["params", "result"] {
            let tag = value
                .get(member)
                .and_then(|m| m.get("_meta"))
                .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
                .and_then(Id::from_value);
            if let Some(tag) = tag {
                let live = self.mint(&tag);
                value[member]["_meta"][SUBSCRIPTION_ID_KEY] = Value::String(live);
                changed = true;
            }
        }
        if changed {
            Frame::from_value(&value)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_minted_once_per_original() {
        let mut ids = LiveIds::new(3);
        let req =
            Frame::parse(r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}"#).unwrap();
        let ack = Frame::parse(r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}"#).unwrap();
        assert_eq!(
            ids.rekey(&req).unwrap().id(),
            Some(&Id::Str("live-3".into()))
        );
        let ack = ids.rekey(&ack).unwrap();
        assert!(
            ack.text()
                .contains(r#""io.modelcontextprotocol/subscriptionId":"live-3""#)
        );
        let other = Frame::parse(r#"{"jsonrpc":"2.0","id":"1","method":"x"}"#).unwrap();
        assert_eq!(
            ids.rekey(&other).unwrap().id(),
            Some(&Id::Str("live-4".into()))
        );
    }
}
