//! Secret redaction: what turns a recording into a file that can be committed.
//!
//! Every string in a frame is matched against shape rules (bearer tokens, URL passwords, JWTs,
//! GitHub/OpenAI/Anthropic/Slack/AWS/Google keys, then the user's own patterns, which run first),
//! and every value under a sensitive key (`token`, `password`, a `pin` segment, configured keys…)
//! is taken whole. A secret becomes `[REDACTED:<rule>:<hash8>]`, deterministic so that replay,
//! which redacts live requests the same way, still matches. Redaction is idempotent: placeholders
//! are never rewritten, so a second pass produces the same bytes.
//!
//! Frames are redacted on their text, not on a re-serialised tree: everything but the secrets
//! keeps its bytes, and a frame with nothing to redact costs one pass of a literal prefilter
//! (`redact_frame` then returns `None` and the caller keeps the original). Raw lines get the
//! key-context walk when they hold JSON, then the shape rules over the whole line.
//!
//! Submodules: [`rules`] (shape rules), [`keys`] (key context), [`placeholder`], [`json`] (the
//! text walk), `raw_line`, [`config`] (`--redact-config` and its hash), `pattern` (JavaScript
//! regex syntax on the `regex` crate), [`scan`] (audit reports).

mod argv;
pub(crate) mod config;
pub(crate) mod echo;
pub(crate) mod json;
pub(crate) mod keys;
mod pattern;
pub(crate) mod placeholder;
mod raw_line;
pub(crate) mod rules;
pub(crate) mod scan;
mod walk;

use walk::{Inner, PathFn, SHAPE_TRIGGER_AC, learning, rename_keys};

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

pub(crate) use config::RedactConfig;
pub(crate) use echo::Echoes;
pub(crate) use placeholder::mask_secret;
// The tests build expected placeholders by this name.
#[cfg(test)]
pub(crate) use placeholder::placeholder;
pub(crate) use scan::{CassetteScanner, Hit};

use crate::cassette::{Entry, EntryKind, Header};
use crate::jsonrpc::Frame;
use keys::KeyRules;

static BUILTIN: LazyLock<Redactor> = LazyLock::new(|| Redactor {
    inner: Arc::new(Inner::new(
        Vec::new(),
        KeyRules::default(),
        HashSet::new(),
        None,
    )),
    seed: None,
});

/// The redaction rules in force: built-ins plus an optional user config. Cheap to clone, and
/// `Send + Sync`.
#[derive(Clone, Debug)]
pub struct Redactor {
    inner: Arc<Inner>,
    /// Secrets a session starts out knowing (the server command line's, found before the first
    /// frame), handed to every echo set made with [`Redactor::echoes`].
    seed: Option<Arc<Echoes>>,
}

impl Redactor {
    /// The built-in rules and nothing else.
    pub fn builtin() -> Redactor {
        BUILTIN.clone()
    }

    /// Built-ins plus a user config (its patterns run before the built-ins).
    pub fn with_config(config: &RedactConfig) -> Redactor {
        if config.is_empty() {
            return Redactor::builtin();
        }
        Redactor {
            inner: Arc::new(Inner::new(
                config.compiled().to_vec(),
                KeyRules::new(config.keys()),
                config.allow().iter().cloned().collect(),
                config.hash(),
            )),
            seed: None,
        }
    }

    /// These rules, with `seed` as the secrets every session's echo set starts from.
    pub fn with_echo_seed(mut self, seed: Echoes) -> Redactor {
        self.seed = (!seed.is_empty()).then(|| Arc::new(seed));
        self
    }

    /// A fresh echo set for one session (docs/redaction.md, "Echoes"), holding the seed.
    pub fn echoes(&self) -> Echoes {
        self.seed.as_deref().cloned().unwrap_or_default()
    }

    /// The config hash (docs/redaction.md, "The config hash") of the config in force; `None` without a (non-empty) config.
    pub fn config_hash(&self) -> Option<&str> {
        self.inner.hash.as_deref()
    }

    /// Redacts a JSON-RPC frame. `None` when nothing changed, so the caller keeps the original
    /// bytes; otherwise the redacted frame (every other byte kept) and the number of secrets.
    pub fn redact_frame(&self, frame: &Frame) -> Option<(Frame, usize)> {
        let mut count = 0;
        let out = self.inner.frame(frame, &mut |_, _, _| count += 1)?;
        Some((out, count))
    }

    /// Redacts a parsed JSON value (a copy); the count is the number of secrets replaced.
    pub fn redact_value(&self, value: &Value) -> (Value, usize) {
        let mut out = value.clone();
        let mut count = 0;
        self.inner.value(&mut out, &mut |_, _, _| count += 1);
        (out, count)
    }

    /// Redacts a line that is not a JSON-RPC frame (docs/redaction.md, "Raw lines, command and URL"): key context when it holds JSON, then
    /// the shape rules over the whole line; every other byte is kept.
    pub fn redact_raw_line(&self, line: &str) -> (String, usize) {
        let mut count = 0;
        let out = raw_line::redact(&self.inner, line, &mut |_, _, _| count += 1);
        (out.unwrap_or_else(|| line.to_owned()), count)
    }

    /// Shape rules only (header command arguments, header url).
    pub fn redact_text(&self, text: &str) -> (String, usize) {
        let mut count = 0;
        let out = self.inner.text(text, &mut |_, _, _| count += 1);
        (out.unwrap_or_else(|| text.to_owned()), count)
    }

    /// Redacts an entry in place: a frame, a raw line, or every frame of a chunks entry. Unknown
    /// entry types and every member other than those are left untouched. Returns the count.
    pub fn redact_entry(&self, entry: &mut Entry) -> usize {
        self.redact_entry_with(entry, None)
    }

    /// [`Redactor::redact_entry`], also replacing echoes of the secrets remembered in `echoes`
    /// and remembering this entry's (docs/redaction.md, "Echoes").
    pub fn redact_entry_echoing(&self, entry: &mut Entry, echoes: &mut Echoes) -> usize {
        self.redact_entry_with(entry, Some(echoes))
    }

    fn redact_entry_with(&self, entry: &mut Entry, mut echoes: Option<&mut Echoes>) -> usize {
        let mut count = 0;
        let mut hit = |_: &str, _: &str, _: &PathFn<'_>| count += 1;
        match &entry.kind {
            EntryKind::Frame(frame) => {
                if let Some(new) = self.inner.frame_with(frame, echoes, &mut hit) {
                    entry.set_frame(new);
                }
            }
            EntryKind::Raw(data) => {
                if let Some(new) = self.inner.raw_with(data, echoes, &mut hit) {
                    entry.set_data(new);
                }
            }
            EntryKind::Chunks { chunks, .. } => {
                let mut changed = false;
                let frames: Vec<Frame> = chunks
                    .iter()
                    .map(|c| {
                        match self
                            .inner
                            .frame_with(&c.frame, echoes.as_deref_mut(), &mut hit)
                        {
                            Some(f) => {
                                changed = true;
                                f
                            }
                            None => c.frame.clone(),
                        }
                    })
                    .collect();
                if changed {
                    entry.set_chunk_frames(frames);
                }
            }
            EntryKind::Unknown(_) => {}
        }
        count
    }

    /// Redacts the header's `command` (each argument) and `url` with the shape rules. The
    /// `redaction` member is the caller's to set. Returns the count.
    pub fn redact_header(&self, header: &mut Header) -> usize {
        self.redact_header_with(header, None)
    }

    /// [`Redactor::redact_header`] with echoes (docs/redaction.md, "Echoes").
    pub fn redact_header_echoing(&self, header: &mut Header, echoes: &mut Echoes) -> usize {
        self.redact_header_with(header, Some(echoes))
    }

    fn redact_header_with(&self, header: &mut Header, mut echoes: Option<&mut Echoes>) -> usize {
        let mut count = 0;
        if let Some(command) = header.command() {
            if let Some(new) = self
                .inner
                .command(command, echoes.as_deref_mut(), &mut |_, _, _| count += 1)
            {
                header.set_command(new);
            }
        }
        let mut hit = |_: &str, _: &str, _: &PathFn<'_>| count += 1;
        if let Some(url) = header.url() {
            if let Some(new) = self.inner.text_with(url, echoes, &mut hit) {
                header.set_url(&new);
            }
        }
        count
    }

    /// Redacts a server command line (docs/redaction.md, "Raw lines, command and URL"): values
    /// of sensitive flags and `NAME=value` assignments, and the shape rules over every argument.
    /// The secrets found are remembered in `echoes`, so they are redacted wherever a message
    /// repeats them. Returns the arguments and the count.
    pub fn redact_command(&self, args: &[String], echoes: &mut Echoes) -> (Vec<String>, usize) {
        let mut count = 0;
        let out = self
            .inner
            .command(args, Some(echoes), &mut |_, _, _| count += 1);
        (out.unwrap_or_else(|| args.to_vec()), count)
    }

    /// Hits in a command line as `(argument index, hit)`, echoes applied as in
    /// [`Redactor::redact_command`].
    pub fn scan_command(&self, args: &[String], echoes: &mut Echoes) -> Vec<(usize, Hit)> {
        let mut hits = Vec::new();
        self.inner.command(args, Some(echoes), &mut |i, r, s| {
            hits.push((i, self.hit(r, s, "")));
        });
        hits
    }

    /// [`Redactor::redact_frame`] with echoes (docs/redaction.md, "Echoes").
    pub fn redact_frame_echoing(
        &self,
        frame: &Frame,
        echoes: &mut Echoes,
    ) -> Option<(Frame, usize)> {
        let mut count = 0;
        let out = self
            .inner
            .frame_echoing(frame, echoes, &mut |_, _, _| count += 1)?;
        Some((out, count))
    }

    /// [`Redactor::redact_raw_line`] with echoes (docs/redaction.md, "Echoes").
    pub fn redact_raw_line_echoing(&self, line: &str, echoes: &mut Echoes) -> (String, usize) {
        let mut count = 0;
        let out = self
            .inner
            .raw_echoing(line, echoes, &mut |_, _, _| count += 1);
        (out.unwrap_or_else(|| line.to_owned()), count)
    }

    /// [`Redactor::redact_value`] with echoes: the value's own secrets are remembered, then every
    /// remembered secret is replaced in its strings (replay's matching, so that a live request
    /// collapses to what `record` wrote).
    pub fn redact_value_echoing(&self, value: &Value, echoes: &mut Echoes) -> (Value, usize) {
        let mut out = value.clone();
        let mut count = 0;
        learning(echoes, &mut |_, _, _| count += 1, |hit| {
            self.inner.value(&mut out, hit)
        });
        if echoes.is_empty() {
            return (out, count);
        }
        let mut stack: Vec<&mut Value> = vec![&mut out];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Some(new) = echoes.apply(s, &mut |_, _| count += 1) {
                        *s = new;
                    }
                }
                Value::Number(n) => {
                    if let Some(ph) = echoes.exact(&n.to_string()) {
                        count += 1;
                        *v = Value::String(ph.to_owned());
                    }
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => {
                    if map.keys().any(|k| echoes.hits(k)) {
                        rename_keys(map, |k| echoes.apply(k, &mut |_, _| count += 1));
                    }
                    stack.extend(map.values_mut());
                }
                Value::Null | Value::Bool(_) => {}
            }
        }
        (out, count)
    }

    /// Every secret a redaction pass would remove from this frame, with paths and masked excerpts.
    pub fn scan_frame(&self, frame: &Frame) -> Vec<Hit> {
        let mut hits = Vec::new();
        let _ = self.inner.json_text(frame.text(), &mut |r, s, p| {
            hits.push(self.hit(r, s, &p()));
        });
        hits
    }

    /// Every secret a redaction pass would remove from a raw line (keyctx hits carry their JSON
    /// path, shape hits the path `raw`).
    pub fn scan_raw_line(&self, line: &str) -> Vec<Hit> {
        let mut hits = Vec::new();
        raw_line::redact(&self.inner, line, &mut |r, s, p| {
            hits.push(self.hit(r, s, &p()));
        });
        hits
    }

    /// Every secret the shape rules would remove from a text (paths empty).
    pub fn scan_text(&self, text: &str) -> Vec<Hit> {
        let mut hits = Vec::new();
        self.inner
            .text(text, &mut |r, s, p| hits.push(self.hit(r, s, &p())));
        hits
    }

    /// [`Redactor::scan_frame`] with echoes: exactly the secrets
    /// [`Redactor::redact_frame_echoing`] replaces.
    pub fn scan_frame_echoing(&self, frame: &Frame, echoes: &mut Echoes) -> Vec<Hit> {
        let mut hits = Vec::new();
        self.inner.frame_echoing(frame, echoes, &mut |r, s, p| {
            hits.push(self.hit(r, s, &p()));
        });
        hits
    }

    /// [`Redactor::scan_raw_line`] with echoes.
    pub fn scan_raw_line_echoing(&self, line: &str, echoes: &mut Echoes) -> Vec<Hit> {
        let mut hits = Vec::new();
        self.inner.raw_echoing(line, echoes, &mut |r, s, p| {
            hits.push(self.hit(r, s, &p()));
        });
        hits
    }

    /// [`Redactor::scan_text`] with echoes.
    pub fn scan_text_echoing(&self, text: &str, echoes: &mut Echoes) -> Vec<Hit> {
        let mut hits = Vec::new();
        self.inner.text_echoing(text, echoes, &mut |r, s, p| {
            hits.push(self.hit(r, s, &p()));
        });
        hits
    }

    /// A text as a report may show it: shape rules, then every remembered secret, replaced;
    /// nothing is learned.
    pub fn mask_text(&self, text: &str, echoes: &mut Echoes) -> String {
        let shaped = self.inner.text(text, &mut |_, _, _| {});
        let current = shaped.as_deref().unwrap_or(text);
        match echoes.apply(current, &mut |_, _| {}) {
            Some(new) => new,
            None => shaped.unwrap_or_else(|| text.to_owned()),
        }
    }

    fn hit(&self, rule: &str, secret: &str, path: &str) -> Hit {
        // A key can be secret-shaped too; a report must not print it.
        let path = if SHAPE_TRIGGER_AC.is_match(path) {
            self.inner
                .text(path, &mut |_, _, _| {})
                .unwrap_or_else(|| path.to_owned())
        } else {
            path.to_owned()
        };
        Hit {
            rule: rule.to_owned(),
            path,
            excerpt: mask_secret(secret, rule),
        }
    }
}

/// Why a cassette's recorded config hash and the config given to this run disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HashMismatch {
    /// A config was given; the cassette was recorded without one.
    NotRecorded,
    /// The cassette was recorded with a config; none was given.
    NotGiven,
    /// Both have one, and they differ.
    Different,
}

impl fmt::Display for HashMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HashMismatch::NotRecorded => {
                "this replay was given a redaction config, but the cassette was recorded without one; drop --redact-config, or re-record with it"
            }
            HashMismatch::NotGiven => {
                "the cassette was recorded with a redaction config this replay was not given; pass the same --redact-config the recording used"
            }
            HashMismatch::Different => {
                "the cassette was recorded with a different redaction config than this replay was given"
            }
        })
    }
}

impl std::error::Error for HashMismatch {}

impl HashMismatch {
    /// The whole line replay prints before refusing to serve (exit 1).
    pub(crate) fn replay_message(&self) -> String {
        format!(
            "mcp-cassette: {self}. Redaction runs before matching, so replay must use the rules the recording used"
        )
    }

    /// The message `redact` fails with, or `None` when `redact` accepts the pair (an
    /// unconfigured cassette may take a config).
    pub(crate) fn redact_message(&self) -> Option<&'static str> {
        match self {
            HashMismatch::NotRecorded => None,
            HashMismatch::NotGiven => Some(
                "mcp-cassette: this cassette was redacted under a --redact-config and none was given; pass the same file the recording used, or re-record without one",
            ),
            HashMismatch::Different => Some(
                "mcp-cassette: this cassette was redacted under a different --redact-config than the one given; pass the file the recording used",
            ),
        }
    }
}

/// The refusal (docs/redaction.md, "The config hash") when a cassette's header hash and the given config disagree.
pub(crate) fn check_config_hash(
    recorded: Option<&str>,
    given: Option<&str>,
) -> Result<(), HashMismatch> {
    match (recorded, given) {
        (None, None) => Ok(()),
        (Some(r), Some(g)) if r == g => Ok(()),
        (Some(_), Some(_)) => Err(HashMismatch::Different),
        (Some(_), None) => Err(HashMismatch::NotGiven),
        (None, Some(_)) => Err(HashMismatch::NotRecorded),
    }
}

#[cfg(test)]
mod tests;
