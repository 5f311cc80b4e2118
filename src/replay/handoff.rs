//! What a stdio replay started by a test command hands back to the `exec` that gave it the
//! command line (docs/exec.md, "How stdio replays report back").
//!
//! `exec` cannot see inside the replays its test command spawns, and cannot count on the
//! environment reaching them (SDKs start servers with a filtered environment), so the command line
//! it hands out carries `--exec-report <dir>`, a directory only `exec` and its children can write.
//! Each replay writes one file there, `replay-<pid>.jsonl`, one JSON object a line:
//!
//! - `{"start":{"pid":N}}` when it starts serving;
//! - `{"miss":{…}}` for each miss, as it happens (the control channel's record, see
//!   docs/adapters.md), so a replay that is killed still leaves its misses;
//! - `{"end":{"served":[[line,n],…],"listened":[[line,n],…]}}` when it ends: its usage counts
//!   (see [`super::usage::Counts`]).
//!
//! A file with a start and no end names a replay that was still running, or died without its
//! summary; `exec` stops the first kind.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::usage::Counts;

/// One replay's report file, open for appending.
#[derive(Debug)]
pub struct Handoff {
    file: File,
    path: PathBuf,
}

impl Handoff {
    /// Creates this process's file in `dir` and writes its start line.
    pub fn create(dir: &Path) -> io::Result<Handoff> {
        let pid = std::process::id();
        let path = dir.join(format!("replay-{pid}.jsonl"));
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let mut handoff = Handoff { file, path };
        handoff.line(&json!({ "start": { "pid": pid } }))?;
        Ok(handoff)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A miss, as the control channel records it.
    pub fn miss(&mut self, record: Value) -> io::Result<()> {
        self.line(&json!({ "miss": record }))
    }

    /// The end of the replay, with its usage counts.
    pub fn end(&mut self, counts: &Counts) -> io::Result<()> {
        self.line(&json!({ "end": counts.to_json() }))
    }

    /// One whole line in one write, so a reader never sees half of it.
    fn line(&mut self, value: &Value) -> io::Result<()> {
        let mut text = value.to_string();
        text.push('\n');
        self.file.write_all(text.as_bytes())
    }
}

/// Everything the replays in one directory reported.
#[derive(Debug, Default)]
pub struct Collected {
    /// Miss records, file by file in name order, each file in its order.
    pub misses: Vec<Value>,
    /// The usage counts of every replay that ended.
    pub counts: Vec<Counts>,
    /// Replays that started and never wrote their end: their pids.
    pub unfinished: Vec<u32>,
    /// How many replays started.
    pub replays: usize,
}

/// Reads every report file in `dir`. Lines that are not ours (or cut short) are skipped.
pub fn collect(dir: &Path) -> io::Result<Collected> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("replay-") && n.ends_with(".jsonl"))
        })
        .collect();
    names.sort();
    let mut collected = Collected::default();
    for path in names {
        let mut pid = None;
        let mut ended = false;
        for line in BufReader::new(File::open(&path)?).lines() {
            let Ok(value) = serde_json::from_str::<Value>(&line?) else {
                continue;
            };
            if let Some(start) = value.get("start") {
                pid = start
                    .get("pid")
                    .and_then(Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok());
                collected.replays += 1;
            } else if let Some(miss) = value.get("miss") {
                collected.misses.push(miss.clone());
            } else if let Some(end) = value.get("end") {
                collected.counts.push(Counts::from_json(end));
                ended = true;
            }
        }
        if let (Some(pid), false) = (pid, ended) {
            collected.unfinished.push(pid);
        }
    }
    Ok(collected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut handoff = Handoff::create(dir.path()).unwrap();
        handoff
            .miss(json!({"method": "tools/call", "tool": "x"}))
            .unwrap();
        let unfinished = collect(dir.path()).unwrap();
        assert_eq!(unfinished.unfinished, [std::process::id()]);
        assert_eq!(unfinished.misses.len(), 1);
        let counts = Counts {
            served: vec![(4, 2)],
            listened: vec![],
        };
        handoff.end(&counts).unwrap();
        // A stranger's file and a cut line are skipped.
        std::fs::write(dir.path().join("other.txt"), "x").unwrap();
        std::fs::write(
            dir.path().join("replay-1.jsonl"),
            "{\"start\":{\"pid\":1}}\n{\"end",
        )
        .unwrap();
        let done = collect(dir.path()).unwrap();
        assert_eq!(done.replays, 2);
        assert_eq!(done.unfinished, [1]);
        assert_eq!(done.counts, [counts]);
        assert_eq!(done.misses[0]["tool"], "x");
    }
}
