//! Audit reports: what a redaction pass would remove, where, and a masked excerpt of it.
//!
//! A cassette is scanned entry by entry with [`CassetteScanner`], which also pairs each response
//! with the method of the request it answers. Ids are paired per direction (an `s2c` response
//! answers a `c2s` request and the other way round), because the client and the server number
//! their requests independently; the pairing table is bounded, since a response follows its
//! request closely and a long file must not grow memory without end.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use super::{Echoes, Redactor};
use crate::cassette::{Dir, Entry, EntryKind, Header};

/// One secret found in a frame, line or text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The rule that found it (`keyctx`, `bearer`, …, or a user pattern's name).
    pub rule: String,
    /// Dotted path with `[i]` for elements (`params.arguments.token`); `raw` for a shape hit in
    /// a raw line; empty for plain text.
    pub path: String,
    /// The masked excerpt (never the secret).
    pub excerpt: String,
}

/// One line of a cassette scan report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanHit {
    pub rule: String,
    /// `c2s`, `s2c` or `header`.
    pub dir: &'static str,
    /// The request's own method, or for a response the method of the request it answers.
    pub method: Option<String>,
    pub path: String,
    pub excerpt: String,
}

impl fmt::Display for ScanHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.rule, self.dir)?;
        if let Some(m) = &self.method {
            write!(f, " {m}")?;
        }
        write!(f, " {}: {}", self.path, self.excerpt)
    }
}

/// The closing line of a scan report.
pub(crate) fn result_line(found: usize) -> String {
    if found == 0 {
        "result: CLEAN (0 secrets detected)".to_owned()
    } else {
        format!("result: FOUND ({found} secret(s) detected)")
    }
}

/// Request methods by id, for one direction, oldest forgotten first.
#[derive(Debug, Default)]
struct Methods {
    by_id: HashMap<String, String>,
    order: VecDeque<String>,
}

/// How many unanswered-looking requests per direction are remembered.
const METHOD_MEMORY: usize = 16_384;

impl Methods {
    fn record(&mut self, id: String, method: &str) {
        if self.by_id.insert(id.clone(), method.to_owned()).is_none() {
            self.order.push_back(id);
            if self.order.len() > METHOD_MEMORY {
                if let Some(old) = self.order.pop_front() {
                    self.by_id.remove(&old);
                }
            }
        }
    }

    fn get(&self, id: &str) -> Option<&str> {
        self.by_id.get(id).map(String::as_str)
    }
}

/// Scans a cassette as it streams by.
#[derive(Debug)]
pub(crate) struct CassetteScanner {
    redactor: Redactor,
    c2s: Methods,
    s2c: Methods,
    /// The secrets found so far (docs/redaction.md, "Echoes"), so that the scan reports exactly
    /// what `redact -o` replaces.
    echoes: Echoes,
    /// Position of the next entry in the file (the header is 0).
    position: usize,
}

impl CassetteScanner {
    /// A scanner starting from a known set of secrets (a second pass over a file, with all of
    /// them).
    pub(crate) fn with_echoes(redactor: &Redactor, echoes: Echoes) -> CassetteScanner {
        CassetteScanner {
            redactor: redactor.clone(),
            c2s: Methods::default(),
            s2c: Methods::default(),
            echoes,
            position: 0,
        }
    }

    /// The secrets learned, each with the position it was learned at.
    pub(crate) fn into_echoes(self) -> Echoes {
        self.echoes
    }

    fn methods(&mut self, dir: Dir) -> &mut Methods {
        match dir {
            Dir::C2s => &mut self.c2s,
            Dir::S2c => &mut self.s2c,
        }
    }

    /// Hits in the header's `command` arguments (`command[i]`) and `url`.
    pub(crate) fn header(&mut self, header: &Header) -> Vec<ScanHit> {
        let mut out = Vec::new();
        self.echoes.set_position(0);
        self.position = 1;
        let header_hit = |h: super::Hit, path: String| ScanHit {
            rule: h.rule,
            dir: "header",
            method: None,
            path,
            excerpt: h.excerpt,
        };
        let command = header.command().unwrap_or_default();
        for (i, h) in self.redactor.scan_command(command, &mut self.echoes) {
            out.push(header_hit(h, format!("command[{i}]")));
        }
        if let Some(url) = header.url() {
            for h in self.redactor.scan_text_echoing(url, &mut self.echoes) {
                out.push(header_hit(h, "url".to_owned()));
            }
        }
        out
    }

    /// Hits in one entry. Unknown entry types have none.
    pub(crate) fn entry(&mut self, entry: &Entry) -> Vec<ScanHit> {
        self.echoes.set_position(self.position);
        self.position += 1;
        let Some(dir) = entry.dir else {
            return Vec::new();
        };
        if let EntryKind::Frame(frame) = &entry.kind {
            if let (Some(m), Some(id)) = (frame.method(), frame.id()) {
                self.methods(dir).record(id.key(), m);
            }
        }
        let hits = match &entry.kind {
            EntryKind::Frame(frame) => self.redactor.scan_frame_echoing(frame, &mut self.echoes),
            EntryKind::Raw(data) => self.redactor.scan_raw_line_echoing(data, &mut self.echoes),
            EntryKind::Chunks { chunks, .. } => {
                let mut hits = Vec::new();
                for c in chunks {
                    hits.extend(self.redactor.scan_frame_echoing(&c.frame, &mut self.echoes));
                }
                hits
            }
            EntryKind::Unknown(_) => Vec::new(),
        };
        if hits.is_empty() {
            return Vec::new();
        }
        // A request or notification names its own method; a response the one it answers.
        let method = match &entry.kind {
            EntryKind::Frame(frame) => match (frame.method(), frame.id()) {
                (Some(m), _) => Some(m.to_owned()),
                (None, Some(id)) => self
                    .methods(dir.opposite())
                    .get(&id.key())
                    .map(str::to_owned),
                (None, None) => None,
            },
            _ => None,
        };
        // A method name or a key on the path can be a secret too; the report shows neither.
        let method = method.map(|m| self.redactor.mask_text(&m, &mut self.echoes));
        hits.into_iter()
            .map(|h| ScanHit {
                rule: h.rule,
                dir: dir.as_str(),
                method: method.clone(),
                path: self.redactor.mask_text(&h.path, &mut self.echoes),
                excerpt: h.excerpt,
            })
            .collect()
    }
}
