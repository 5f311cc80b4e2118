//! Which recorded answers a replay used, across every session it served (docs/replay.md,
//! "Unused recordings").
//!
//! A cassette that only grows hides a test that stopped asking what it recorded. A replay
//! therefore counts, per fingerprint, how many times a request with that fingerprint was
//! answered from its pool, over all sessions (an HTTP replay serves many sessions from one
//! index; `exec` adds up the counts of the stdio replays a test command spawned). Of the `n`
//! answers recorded under one fingerprint, the first `min(asked, n)` in recorded order are used;
//! the rest are unused. Counting rather than flagging the exact answer served matters when a
//! recording holds two sessions that each asked the same thing once: each replayed session
//! takes the first recording again, yet the two questions cover both answers.
//!
//! What counts as asking:
//! - an answer served from the pool, an idempotent read or a finished task's poll served again,
//!   and an answer borrowed under `--on-miss warn` (counted against the fingerprint it was
//!   recorded under: it was served, and the borrow itself is reported as a miss);
//! - a `subscriptions/listen` acknowledged from a recorded listen (listens are counted apart).
//!
//! Requests recorded without an answer are not answers and never reported; neither are the
//! server-initiated frames (the session summary counts those it could not deliver).
//!
//! Counting is one relaxed atomic add per answer, so sessions on any thread share one
//! [`Usage`] without a lock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::index::Index;

/// How many unused recordings an end-of-run summary names one by one; the rest are counted.
pub const SHOWN: usize = 20;

/// Answers asked for, per fingerprint, over every session of one replay.
#[derive(Debug)]
pub struct Usage {
    index: Arc<Index>,
    /// By fingerprint: answers served from its pool.
    served: Box<[AtomicU32]>,
    /// By fingerprint: recorded listens acknowledged.
    listened: Box<[AtomicU32]>,
}

/// A recording nothing asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unused {
    /// The cassette line of the recorded request.
    pub line: u32,
    pub method: String,
    /// The tool a `tools/call` named.
    pub tool: Option<String>,
}

impl Unused {
    /// The record as the control channel and `exec`'s report file carry it.
    pub fn to_json(&self) -> Value {
        json!({ "line": self.line, "method": self.method, "tool": self.tool })
    }

    /// `tools/call "echo" (line 7)`, as the stderr summary names it.
    pub fn describe(&self) -> String {
        match &self.tool {
            Some(tool) => format!(
                "{} {} (line {})",
                self.method,
                Value::String(tool.clone()),
                self.line
            ),
            None => format!("{} (line {})", self.method, self.line),
        }
    }
}

/// Counts keyed by the cassette line of each pool's first recording: how one process hands its
/// counts to another that built its own index of the same cassette (lines survive appends, where
/// fingerprint numbers need not).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub served: Vec<(u32, u32)>,
    pub listened: Vec<(u32, u32)>,
}

impl Counts {
    pub fn to_json(&self) -> Value {
        json!({ "served": self.served, "listened": self.listened })
    }

    /// Reads [`Counts::to_json`] back; anything malformed is skipped.
    pub fn from_json(value: &Value) -> Counts {
        let read = |key: &str| -> Vec<(u32, u32)> {
            value
                .get(key)
                .and_then(Value::as_array)
                .map(|pairs| {
                    pairs
                        .iter()
                        .filter_map(|p| serde_json::from_value::<(u32, u32)>(p.clone()).ok())
                        .collect()
                })
                .unwrap_or_default()
        };
        Counts {
            served: read("served"),
            listened: read("listened"),
        }
    }
}

impl Usage {
    pub fn new(index: Arc<Index>) -> Usage {
        let fps = index.fp_info.len();
        let zeros = |n: usize| (0..n).map(|_| AtomicU32::new(0)).collect();
        Usage {
            served: zeros(fps),
            listened: zeros(fps),
            index,
        }
    }

    /// The index whose answers are counted.
    pub fn index_ref(&self) -> &Arc<Index> {
        &self.index
    }

    /// Recorded pair `pair` was served.
    pub fn answered(&self, pair: usize) {
        if let Some(p) = self.index.pairs.get(pair) {
            bump(&self.served, p.fp as usize, 1);
        }
    }

    /// Recorded listen `listen` was acknowledged.
    pub fn listened(&self, listen: usize) {
        if let Some(l) = self.index.listens.get(listen) {
            bump(&self.listened, l.fp, 1);
        }
    }

    /// The counts, keyed for another process (see [`Counts`]); fingerprints never asked for are
    /// left out.
    pub fn counts(&self) -> Counts {
        let keyed = |counts: &[AtomicU32], first: &dyn Fn(usize) -> Option<u32>| {
            counts
                .iter()
                .enumerate()
                .filter_map(|(fp, c)| {
                    let c = c.load(Ordering::Relaxed);
                    (c > 0).then(|| first(fp).map(|line| (line, c))).flatten()
                })
                .collect()
        };
        let index = &*self.index;
        Counts {
            served: keyed(&self.served, &|fp| {
                index
                    .pool(fp)
                    .first()
                    .map(|&p| index.pairs[p as usize].line)
            }),
            listened: keyed(&self.listened, &|fp| {
                index
                    .listen_pool(fp)
                    .first()
                    .map(|&l| index.listens[l as usize].line)
            }),
        }
    }

    /// Adds the counts other processes reported (one [`Counts`] each). Lines this index does not
    /// start a pool with (the cassette changed in between) are skipped.
    pub fn add<'c>(&self, reports: impl IntoIterator<Item = &'c Counts>) {
        let index = &*self.index;
        let mut pool_at = std::collections::HashMap::new();
        let mut listen_at = std::collections::HashMap::new();
        for fp in 0..index.fp_info.len() {
            if let Some(&p) = index.pool(fp).first() {
                pool_at.insert(index.pairs[p as usize].line, fp);
            }
            if let Some(&l) = index.listen_pool(fp).first() {
                listen_at.insert(index.listens[l as usize].line, fp);
            }
        }
        for counts in reports {
            for &(line, n) in &counts.served {
                if let Some(&fp) = pool_at.get(&line) {
                    bump(&self.served, fp, n);
                }
            }
            for &(line, n) in &counts.listened {
                if let Some(&fp) = listen_at.get(&line) {
                    bump(&self.listened, fp, n);
                }
            }
        }
    }

    /// Every recording nothing asked for, in cassette order.
    pub fn unused(&self) -> Vec<Unused> {
        let index = &*self.index;
        let mut unused = Vec::new();
        for fp in 0..index.fp_info.len() {
            let served = self.served[fp].load(Ordering::Relaxed) as usize;
            for &p in index.pool(fp).iter().skip(served) {
                let pair = &index.pairs[p as usize];
                unused.push(Unused {
                    line: pair.line,
                    method: pair.method(index).to_string(),
                    tool: index.recorded_tool(pair.method(index), fp),
                });
            }
            let listened = self.listened[fp].load(Ordering::Relaxed) as usize;
            for &l in index.listen_pool(fp).iter().skip(listened) {
                unused.push(Unused {
                    line: index.listens[l as usize].line,
                    method: crate::protocol::LISTEN_METHOD.to_owned(),
                    tool: None,
                });
            }
        }
        unused.sort_by_key(|u| u.line);
        unused
    }
}

fn bump(counts: &[AtomicU32], fp: usize, n: u32) {
    if let Some(c) = counts.get(fp) {
        // Saturating: a count past four billion changes nothing about what is unused.
        let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_add(n))
        });
    }
}

/// The stderr summary of `unused` (without a prefix): a count, then the first [`SHOWN`] by
/// method, tool and line, then how many more. Empty when nothing is unused.
pub fn summary(unused: &[Unused]) -> Vec<String> {
    if unused.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "{} recorded answer(s) were never used (docs/replay.md, \"Unused recordings\"):",
        unused.len()
    )];
    lines.extend(
        unused
            .iter()
            .take(SHOWN)
            .map(|u| format!("  unused: {}", u.describe())),
    );
    if unused.len() > SHOWN {
        lines.push(format!("  … and {} more", unused.len() - SHOWN));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Reader;
    use crate::replay::session::{Rules, Session};
    use crate::replay::{OnMiss, Outcome};
    use std::path::Path;

    const HEADER: &str = r#"{"type":"header","cassetteVersion":2,"recorder":"t","startedAt":"2026-01-01T00:00:00Z","transport":"stdio"}"#;

    fn request(id: u32, method: &str, params: &str) -> String {
        format!(
            r#"{{"type":"frame","t":0,"dir":"c2s","frame":{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}}}"#
        )
    }

    fn answer(id: u32, result: &str) -> String {
        format!(
            r#"{{"type":"frame","t":0,"dir":"s2c","frame":{{"jsonrpc":"2.0","id":{id},"result":{result}}}}}"#
        )
    }

    /// Lines 2-3: tools/list; 4-5 and 6-7: call "a" twice; 8-9: call "b"; 10-11: resources/read.
    fn index() -> Arc<Index> {
        let lines = [
            HEADER.to_owned(),
            request(1, "tools/list", "{}"),
            answer(1, r#"{"tools":[]}"#),
            request(2, "tools/call", r#"{"name":"a","arguments":{"n":1}}"#),
            answer(2, r#"{"content":[]}"#),
            request(3, "tools/call", r#"{"name":"a","arguments":{"n":1}}"#),
            answer(3, r#"{"content":[]}"#),
            request(4, "tools/call", r#"{"name":"b","arguments":{}}"#),
            answer(4, r#"{"content":[]}"#),
            request(5, "resources/read", r#"{"uri":"demo://x"}"#),
            answer(5, r#"{"contents":[]}"#),
        ];
        let text = lines.join("\n") + "\n";
        let path = Path::new("t.jsonl");
        let reader = Reader::new(text.as_bytes(), path).unwrap();
        let header = reader.header().clone();
        Arc::new(Index::build(header, reader, &[], path).unwrap())
    }

    fn ask(session: &mut Session, id: u32, method: &str, params: &str) -> Outcome {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        session.handle_text(&line).unwrap().exchange.outcome
    }

    fn session(usage: &Arc<Usage>, on_miss: OnMiss) -> Session {
        Session::new(Arc::clone(usage.index_ref()), Rules::new(None), on_miss)
            .tracking(Arc::clone(usage))
    }

    fn lines(usage: &Usage) -> Vec<u32> {
        usage.unused().iter().map(|u| u.line).collect()
    }

    #[test]
    fn nothing_asked_leaves_every_answer_unused() {
        let usage = Usage::new(index());
        let unused = usage.unused();
        assert_eq!(lines(&usage), [2, 4, 6, 8, 10]);
        assert_eq!(unused[1].tool.as_deref(), Some("a"));
        assert_eq!(unused[4].tool, None);
        assert_eq!(unused[1].describe(), "tools/call \"a\" (line 4)");
    }

    #[test]
    fn repeated_calls_use_answers_in_recorded_order() {
        let usage = Arc::new(Usage::new(index()));
        let mut s = session(&usage, OnMiss::Error);
        ask(
            &mut s,
            1,
            "tools/call",
            r#"{"name":"a","arguments":{"n":1}}"#,
        );
        assert_eq!(lines(&usage), [2, 6, 8, 10]);
        ask(
            &mut s,
            2,
            "tools/call",
            r#"{"name":"a","arguments":{"n":1}}"#,
        );
        // A third identical call misses; it uses nothing more.
        ask(
            &mut s,
            3,
            "tools/call",
            r#"{"name":"a","arguments":{"n":1}}"#,
        );
        assert_eq!(lines(&usage), [2, 8, 10]);
    }

    #[test]
    fn sessions_add_up() {
        // Two sessions each calling "a" once cover both recordings of it.
        let usage = Arc::new(Usage::new(index()));
        for _ in 0..2 {
            let mut s = session(&usage, OnMiss::Error);
            ask(
                &mut s,
                1,
                "tools/call",
                r#"{"name":"a","arguments":{"n":1}}"#,
            );
        }
        assert_eq!(lines(&usage), [2, 8, 10]);
    }

    #[test]
    fn idempotent_reads_asked_again_count_once_per_recording() {
        let usage = Arc::new(Usage::new(index()));
        let mut s = session(&usage, OnMiss::Error);
        for id in 0..3 {
            ask(&mut s, id, "tools/list", "{}");
        }
        assert_eq!(lines(&usage), [4, 6, 8, 10]);
    }

    #[test]
    fn a_borrowed_answer_is_used() {
        let usage = Arc::new(Usage::new(index()));
        let mut s = session(&usage, OnMiss::Warn);
        let outcome = ask(&mut s, 1, "resources/read", r#"{"uri":"demo://other"}"#);
        assert!(matches!(outcome, Outcome::Borrowed { .. }));
        assert_eq!(lines(&usage), [2, 4, 6, 8]);
    }

    #[test]
    fn a_miss_uses_nothing() {
        let usage = Arc::new(Usage::new(index()));
        let mut s = session(&usage, OnMiss::Error);
        ask(&mut s, 1, "tools/call", r#"{"name":"c","arguments":{}}"#);
        assert_eq!(lines(&usage), [2, 4, 6, 8, 10]);
    }

    #[test]
    fn counts_travel_between_processes() {
        let one = Arc::new(Usage::new(index()));
        let mut s = session(&one, OnMiss::Error);
        ask(
            &mut s,
            1,
            "tools/call",
            r#"{"name":"a","arguments":{"n":1}}"#,
        );
        ask(&mut s, 2, "tools/list", "{}");
        let counts = Counts::from_json(&one.counts().to_json());
        assert_eq!(counts, one.counts());
        let merged = Usage::new(index());
        // Unknown lines are skipped.
        let stranger = Counts {
            served: vec![(999, 1), (5, 1)],
            listened: vec![(2, 1)],
        };
        merged.add([&counts, &counts, &stranger]);
        assert_eq!(lines(&merged), [8, 10]);
    }

    #[test]
    fn the_summary_is_bounded() {
        let unused: Vec<Unused> = (0..SHOWN as u32 + 5)
            .map(|line| Unused {
                line,
                method: "tools/list".into(),
                tool: None,
            })
            .collect();
        let lines = summary(&unused);
        assert_eq!(lines.len(), SHOWN + 2);
        assert!(lines[0].starts_with(&format!("{} recorded answer(s)", SHOWN + 5)));
        assert_eq!(lines.last().unwrap(), "  … and 5 more");
        assert!(summary(&[]).is_empty());
    }
}
