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

pub mod config;
pub mod json;
pub mod keys;
mod pattern;
pub mod placeholder;
mod raw_line;
pub mod rules;
pub mod scan;

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde_json::Value;

pub use config::{ConfigError, PatternSpec, RedactConfig};
pub use placeholder::{hash8, is_placeholder, mask_secret, placeholder, placeholder_spans};
pub use scan::{CassetteScanner, Hit, ScanHit};

use crate::cassette::{Entry, EntryKind, Header};
use crate::json::quote;
use crate::jsonrpc::Frame;
use json::{NotJson, Scalar};
use keys::{KeyCtx, KeyRules, MIN_SECRET_LEN, is_string_secret, numeric_secret};
use placeholder::KEYCTX;
use rules::{SHAPE_TRIGGERS, Shapes, UserPattern};

fn compile_static(src: &str) -> Regex {
    match Regex::new(src) {
        Ok(r) => r,
        Err(e) => panic!("built-in redaction prefilter does not compile: {e}"),
    }
}

/// Where a shape rule could start matching: a string with none of these inside needs no shape pass.
static SHAPE_TRIGGER_RE: LazyLock<Regex> = LazyLock::new(|| {
    let src: Vec<String> = SHAPE_TRIGGERS.iter().map(|t| regex::escape(t)).collect();
    compile_static(&src.join("|"))
});

static BUILTIN: LazyLock<Redactor> = LazyLock::new(|| Redactor {
    inner: Arc::new(Inner {
        user: Vec::new(),
        keys: KeyRules::default(),
        allow: HashSet::new(),
        hash: None,
    }),
});

/// The redaction rules in force: built-ins plus an optional user config. Cheap to clone, and
/// `Send + Sync`.
#[derive(Clone, Debug)]
pub struct Redactor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    user: Vec<UserPattern>,
    keys: KeyRules,
    allow: HashSet<String>,
    hash: Option<String>,
}

/// Where a secret was found, rendered only when a report asks.
type PathFn<'a> = dyn Fn() -> String + 'a;

/// Receives each secret found: rule name, secret text, and where it was.
type HitFn<'a> = dyn FnMut(&str, &str, &PathFn<'_>) + 'a;

fn no_path() -> String {
    String::new()
}

impl Inner {
    fn shapes(&self) -> Shapes<'_> {
        Shapes {
            user: &self.user,
            allow: &self.allow,
        }
    }

    /// The replacement for a string value under `ctx`, if any.
    fn string(
        &self,
        value: &str,
        ctx: KeyCtx,
        path: &PathFn<'_>,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        if is_string_secret(ctx, value, &self.allow) {
            hit(KEYCTX, value, path);
            return Some(placeholder(KEYCTX, value));
        }
        self.shapes()
            .apply(value, &mut |rule, secret| hit(rule, secret, path))
    }

    /// The placeholder for a number under `ctx`, if it is a secret.
    fn number(
        &self,
        n: f64,
        ctx: KeyCtx,
        path: &PathFn<'_>,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        let text = numeric_secret(ctx, n, &self.allow)?;
        hit(KEYCTX, &text, path);
        Some(placeholder(KEYCTX, &text))
    }

    /// Redacts a frame's JSON text in place of its secrets. `Ok(None)` when nothing changed.
    ///
    /// The fast path: one vectorised literal search for where a shape rule could start, and one
    /// walk over the text whose keys are rejected by a trigram test; a string is decoded and
    /// matched only when it sits under a sensitive key or holds a trigger.
    fn json_text(&self, text: &str, hit: &mut HitFn<'_>) -> Result<Option<String>, NotJson> {
        let triggers: Vec<usize> = if self.user.is_empty() {
            SHAPE_TRIGGER_RE
                .find_iter(text)
                .map(|m| m.start())
                .collect()
        } else {
            Vec::new()
        };
        let mut next = 0;
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        json::walk(
            text,
            &self.keys,
            true,
            |span, scalar, ctx, path| match scalar {
                Scalar::Str { content, escaped } => {
                    // Escapes only shorten a string, so a short spelling is a short value.
                    let maybe_keyctx = ctx.sensitive && content.len() >= MIN_SECRET_LEN;
                    let shape_needed = if self.user.is_empty() {
                        while next < triggers.len() && triggers[next] < span.start {
                            next += 1;
                        }
                        (next < triggers.len() && triggers[next] < span.end)
                            || (escaped && may_spell_trigger(content))
                    } else {
                        true
                    };
                    if !maybe_keyctx && !shape_needed {
                        return;
                    }
                    let value = Scalar::string_value(content, escaped);
                    if let Some(new) = self.string(&value, ctx, &|| path.render(), hit) {
                        edits.push((span, quote(&new)));
                    }
                }
                Scalar::Num(n) => {
                    if ctx.sensitive {
                        if let Some(new) = n
                            .parse::<f64>()
                            .ok()
                            .and_then(|f| self.number(f, ctx, &|| path.render(), hit))
                        {
                            edits.push((span, quote(&new)));
                        }
                    }
                }
            },
        )?;
        Ok(splice(text, &edits))
    }

    /// Redacts a parsed value (a copy), walking with an explicit stack.
    fn value(&self, root: &mut Value, hit: &mut HitFn<'_>) {
        let mut stack: Vec<(&mut Value, KeyCtx)> = vec![(root, KeyCtx::NONE)];
        while let Some((v, ctx)) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Some(new) = self.string(s, ctx, &no_path, hit) {
                        *s = new;
                    }
                }
                Value::Number(n) => {
                    if ctx.sensitive {
                        if let Some(new) =
                            n.as_f64().and_then(|f| self.number(f, ctx, &no_path, hit))
                        {
                            *v = Value::String(new);
                        }
                    }
                }
                Value::Array(items) => {
                    for item in items.iter_mut().rev() {
                        stack.push((item, ctx));
                    }
                }
                Value::Object(map) => {
                    for (key, item) in map.iter_mut().rev() {
                        let c = self.keys.classify(key);
                        stack.push((item, c));
                    }
                }
                Value::Null | Value::Bool(_) => {}
            }
        }
    }

    fn frame(&self, frame: &Frame, hit: &mut HitFn<'_>) -> Option<Frame> {
        match self.json_text(frame.text(), hit) {
            Ok(None) => None,
            Ok(Some(text)) => Frame::parse(&text),
            // A parsed frame is JSON; this only guards against the two parsers disagreeing.
            Err(NotJson) => {
                let mut v = frame.value();
                let mut changed = false;
                self.value(&mut v, &mut |r, s, p| {
                    changed = true;
                    hit(r, s, p);
                });
                if changed { Frame::from_value(&v) } else { None }
            }
        }
    }

    fn text(&self, text: &str, hit: &mut HitFn<'_>) -> Option<String> {
        self.shapes()
            .apply(text, &mut |rule, secret| hit(rule, secret, &no_path))
    }
}

/// Whether escaped string content has an escape that could spell part of a trigger: `\uXXXX`
/// can spell any character, `\/` the slashes of `://`. (The others spell quotes, backslashes
/// and control characters, which no trigger holds.)
fn may_spell_trigger(content: &str) -> bool {
    static UNICODE: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
    static SLASH: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"\\/"));
    content.len() >= 8
        && (UNICODE.find(content.as_bytes()).is_some() || SLASH.find(content.as_bytes()).is_some())
}

/// Applies non-overlapping, ordered byte-range edits.
fn splice(text: &str, edits: &[(Range<usize>, String)]) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + edits.len() * 32);
    let mut last = 0;
    for (range, new) in edits {
        out.push_str(&text[last..range.start]);
        out.push_str(new);
        last = range.end;
    }
    out.push_str(&text[last..]);
    Some(out)
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
            inner: Arc::new(Inner {
                user: config.compiled().to_vec(),
                keys: KeyRules::new(config.keys()),
                allow: config.allow().iter().cloned().collect(),
                hash: config.hash(),
            }),
        }
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
        let mut count = 0;
        let mut hit = |_: &str, _: &str, _: &PathFn<'_>| count += 1;
        match &entry.kind {
            EntryKind::Frame(frame) => {
                if let Some(new) = self.inner.frame(frame, &mut hit) {
                    entry.set_frame(new);
                }
            }
            EntryKind::Raw(data) => {
                if let Some(new) = raw_line::redact(&self.inner, data, &mut hit) {
                    entry.set_data(new);
                }
            }
            EntryKind::Chunks { chunks, .. } => {
                let mut changed = false;
                let frames: Vec<Frame> = chunks
                    .iter()
                    .map(|c| match self.inner.frame(&c.frame, &mut hit) {
                        Some(f) => {
                            changed = true;
                            f
                        }
                        None => c.frame.clone(),
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
        let mut count = 0;
        let mut hit = |_: &str, _: &str, _: &PathFn<'_>| count += 1;
        if let Some(command) = header.command() {
            let mut changed = false;
            let redacted: Vec<String> = command
                .iter()
                .map(|arg| match self.inner.text(arg, &mut hit) {
                    Some(new) => {
                        changed = true;
                        new
                    }
                    None => arg.clone(),
                })
                .collect();
            if changed {
                header.set_command(redacted);
            }
        }
        if let Some(url) = header.url() {
            if let Some(new) = self.inner.text(url, &mut hit) {
                header.set_url(&new);
            }
        }
        count
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

    fn hit(&self, rule: &str, secret: &str, path: &str) -> Hit {
        // A key can be secret-shaped too; a report must not print it.
        let path = if SHAPE_TRIGGER_RE.is_match(path) {
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
pub enum HashMismatch {
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
    pub fn replay_message(&self) -> String {
        format!(
            "mcp-cassette: {self}. Redaction runs before matching, so replay must use the rules the recording used"
        )
    }

    /// The message `redact` fails with, or `None` when `redact` accepts the pair (an
    /// unconfigured cassette may take a config).
    pub fn redact_message(&self) -> Option<&'static str> {
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
pub fn check_config_hash(recorded: Option<&str>, given: Option<&str>) -> Result<(), HashMismatch> {
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
