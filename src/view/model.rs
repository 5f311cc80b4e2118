//! Cassette entries as timeline rows, written as script-safe JSON objects as they come.
//!
//! A row carries what the page filters and links by, worked out here once so the page does not
//! parse every frame to draw the list: its kind, method (an answer takes its request's), tool
//! (a `tools/call`'s `name`, and its answer's), the row of the request an answer belongs to,
//! and a group: `task:<id>` for frames that name a task, `get:<n>` for the n-th standalone GET
//! (listen) stream. The frame itself goes along as its recorded text, which the page parses
//! only when a row is opened.
//!
//! Requests wait in a map keyed by direction and id (the replay's `String(id)` key) until their
//! answer comes; that map is the only state that grows with the cassette, one small record per
//! unanswered request.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write as _;

use serde::Deserialize;

use super::script_json::write_str;
use crate::cassette::{Dir, Entry, EntryKind};
use crate::jsonrpc::{Frame, FrameKind, Id};
use crate::redact::placeholder::placeholder_spans;

/// A request waiting for its answer.
#[derive(Debug)]
struct Pending {
    row: u64,
    method: String,
    tool: Option<String>,
    group: Option<String>,
}

/// The rows written so far and the requests still unanswered.
#[derive(Debug, Default)]
pub(super) struct Rows {
    next: u64,
    pending: HashMap<(Dir, String), Pending>,
    listen_streams: u64,
}

/// One timeline row.
#[derive(Debug, Default)]
struct Row<'a> {
    line: u64,
    t: u64,
    dir: Option<Dir>,
    kind: &'static str,
    method: Option<Cow<'a, str>>,
    tool: Option<String>,
    id: Option<String>,
    request: Option<u64>,
    group: Option<String>,
    parent: Option<u64>,
    text: Cow<'a, str>,
}

impl Rows {
    /// Appends the rows of `entry` to `out` (each preceded by a comma but the very first) and
    /// returns how many were written.
    pub(super) fn push(&mut self, entry: &Entry, out: &mut Vec<u8>) -> u64 {
        let before = self.next;
        match &entry.kind {
            EntryKind::Frame(frame) => {
                let dir = entry.dir.unwrap_or(Dir::C2s);
                let row = self.frame_row(frame, dir, entry.line, entry.t, None, None);
                self.write(&row, out);
            }
            EntryKind::Raw(data) => {
                let row = Row {
                    line: entry.line,
                    t: entry.t,
                    dir: entry.dir,
                    kind: "raw",
                    text: Cow::Borrowed(data),
                    ..Row::default()
                };
                self.write(&row, out);
            }
            EntryKind::Chunks {
                id,
                via_get,
                chunks,
            } => {
                let dir = entry.dir.unwrap_or(Dir::S2c);
                let waiting = id
                    .as_ref()
                    .and_then(|id| self.pending.get(&(dir.opposite(), id.key())));
                let group = if *via_get {
                    self.listen_streams += 1;
                    Some(format!("get:{}", self.listen_streams))
                } else {
                    waiting.and_then(|p| p.group.clone())
                };
                let stream = Row {
                    line: entry.line,
                    t: entry.t,
                    dir: entry.dir,
                    kind: "stream",
                    method: Some(Cow::Borrowed(if *via_get { "GET" } else { "POST" })),
                    tool: waiting.and_then(|p| p.tool.clone()),
                    id: id.as_ref().map(Id::to_json),
                    request: waiting.map(|p| p.row),
                    group: group.clone(),
                    text: Cow::Owned(format!("{} chunks", chunks.len())),
                    ..Row::default()
                };
                let parent = self.next;
                self.write(&stream, out);
                for chunk in chunks {
                    let row = self.frame_row(
                        &chunk.frame,
                        dir,
                        entry.line,
                        chunk.t,
                        Some(parent),
                        group.as_deref(),
                    );
                    self.write(&row, out);
                }
            }
            EntryKind::Unknown(kind) => {
                let row = Row {
                    line: entry.line,
                    t: entry.t,
                    dir: entry.dir,
                    kind: "unknown",
                    method: Some(Cow::Borrowed(kind)),
                    text: Cow::Owned(entry.to_line()),
                    ..Row::default()
                };
                self.write(&row, out);
            }
        }
        self.next - before
    }

    /// The row of one frame (a whole entry, or a chunk of a stream whose row is `parent`).
    fn frame_row<'a>(
        &mut self,
        frame: &'a Frame,
        dir: Dir,
        line: u64,
        t: u64,
        parent: Option<u64>,
        stream_group: Option<&str>,
    ) -> Row<'a> {
        let text = frame.text();
        let peek = Peek::of(frame);
        let mut row = Row {
            line,
            t,
            dir: Some(dir),
            parent,
            id: frame.id().map(Id::to_json),
            group: peek
                .task_id
                .map(|id| format!("task:{id}"))
                .or_else(|| stream_group.map(str::to_owned)),
            text: Cow::Borrowed(text),
            ..Row::default()
        };
        match frame.kind() {
            FrameKind::Request => {
                let method = frame.method().unwrap_or_default();
                row.kind = "req";
                row.method = Some(Cow::Borrowed(method));
                row.tool = peek.tool;
                if let Some(id) = frame.id().filter(|id| **id != Id::Null) {
                    self.pending.insert(
                        (dir, id.key()),
                        Pending {
                            row: self.next,
                            method: method.to_owned(),
                            tool: row.tool.clone(),
                            group: row.group.clone(),
                        },
                    );
                }
            }
            FrameKind::Notification => {
                row.kind = "note";
                row.method = frame.method().map(Cow::Borrowed);
            }
            FrameKind::Response | FrameKind::ErrorResponse => {
                row.kind = if frame.kind() == FrameKind::Response {
                    "res"
                } else {
                    "err"
                };
                let request = frame
                    .id()
                    .filter(|id| **id != Id::Null)
                    .and_then(|id| self.pending.remove(&(dir.opposite(), id.key())));
                if let Some(request) = request {
                    row.request = Some(request.row);
                    row.method = Some(Cow::Owned(request.method));
                    row.tool = request.tool;
                    row.group = row.group.or(request.group);
                }
            }
            FrameKind::Unclassified => row.kind = "frame",
        }
        row
    }

    fn write(&mut self, row: &Row<'_>, out: &mut Vec<u8>) {
        if self.next > 0 {
            out.push(b',');
        }
        self.next += 1;
        // Writing to a Vec cannot fail.
        let _ = write!(
            out,
            "{{\"l\":{},\"t\":{},\"k\":\"{}\"",
            row.line, row.t, row.kind
        );
        if let Some(dir) = row.dir {
            let _ = write!(out, ",\"d\":\"{dir}\"");
        }
        let strings = [
            ("m", row.method.as_deref()),
            ("tool", row.tool.as_deref()),
            ("id", row.id.as_deref()),
            ("g", row.group.as_deref()),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                let _ = write!(out, ",\"{key}\":");
                write_str(value, out);
            }
        }
        if let Some(request) = row.request {
            let _ = write!(out, ",\"re\":{request}");
        }
        if let Some(parent) = row.parent {
            let _ = write!(out, ",\"p\":{parent}");
        }
        if row.text.contains("[REDACTED:") {
            let count = placeholder_spans(&row.text).len();
            if count > 0 {
                let _ = write!(out, ",\"r\":{count}");
            }
        }
        out.extend_from_slice(b",\"f\":");
        write_str(&row.text, out);
        out.push(b'}');
    }
}

/// What a row needs from inside a frame: the tool a `tools/call` names, and the task a frame
/// is about (`params.taskId`, `result.taskId`, or `result.task.taskId` for the earlier
/// task-creation shape). Frames that cannot hold either are not parsed at all.
#[derive(Debug, Default)]
struct Peek {
    tool: Option<String>,
    task_id: Option<String>,
}

#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    params: Option<Fields<'a>>,
    #[serde(borrow, default)]
    result: Option<Fields<'a>>,
}

#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "taskId")]
    task_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    task: Option<TaskFields<'a>>,
}

#[derive(Deserialize)]
struct TaskFields<'a> {
    #[serde(borrow, default, rename = "taskId")]
    task_id: Option<Cow<'a, str>>,
}

impl Peek {
    fn of(frame: &Frame) -> Peek {
        let text = frame.text();
        let wants_tool = frame.method() == Some("tools/call");
        if !wants_tool && !text.contains("\"taskId\"") {
            return Peek::default();
        }
        // A member of an unexpected type makes the frame unreadable here; it then simply has
        // no tool or group in the timeline, and its text is still shown whole.
        let Ok(shape) = serde_json::from_str::<Shape<'_>>(text) else {
            return Peek::default();
        };
        let tool = if wants_tool {
            shape
                .params
                .as_ref()
                .and_then(|p| p.name.as_deref())
                .map(str::to_owned)
        } else {
            None
        };
        let task_id = [shape.params, shape.result]
            .into_iter()
            .flatten()
            .find_map(|fields| {
                fields
                    .task_id
                    .or_else(|| fields.task.and_then(|task| task.task_id))
            })
            .map(Cow::into_owned);
        Peek { tool, task_id }
    }
}
