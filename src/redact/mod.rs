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

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, LazyLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};
use serde_json::Value;

pub(crate) use config::RedactConfig;
pub(crate) use echo::Echoes;
pub(crate) use placeholder::{mask_secret, placeholder};
pub(crate) use scan::{CassetteScanner, Hit};

use crate::cassette::{Entry, EntryKind, Header};
use crate::json::quote;
use crate::jsonrpc::Frame;
use json::{NotJson, Scalar};
use keys::{KeyCtx, KeyRules, MIN_SECRET_LEN, is_string_secret, numeric_secret};
use placeholder::KEYCTX;
use rules::{PAIR_TRIGGERS, SHAPE_TRIGGERS, Shapes, UserPattern};

/// Where a shape rule could start matching: a string with none of these inside needs no shape
/// pass. ASCII case is ignored, for the free-text pair rule's words (`Token:`, `PASSWORD=`); for
/// the other literals that only lets a few more strings through to the rules.
static SHAPE_TRIGGER_AC: LazyLock<AhoCorasick> = LazyLock::new(|| {
    match AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .build(SHAPE_TRIGGERS.iter().chain(PAIR_TRIGGERS.iter()))
    {
        Ok(ac) => ac,
        Err(e) => panic!("built-in redaction prefilter does not compile: {e}"),
    }
});

static BUILTIN: LazyLock<Redactor> = LazyLock::new(|| Redactor {
    inner: Arc::new(Inner {
        user: Vec::new(),
        keys: KeyRules::default(),
        allow: HashSet::new(),
        hash: None,
    }),
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
            keys: &self.keys,
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
        if looks_like_embedded_json(value) {
            // A JSON document inside a string (a tool's result text, a config blob): its keys
            // give context as a raw line's do; shapes run over all of it either way.
            return raw_line::redact(self, value, &mut |r, s, _| hit(r, s, path));
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
            SHAPE_TRIGGER_AC
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
                Scalar::Key { content, escaped } => {
                    // A key is never a secret by key context, only by shape (a token as a map key).
                    let shape_needed = if self.user.is_empty() {
                        while next < triggers.len() && triggers[next] < span.start {
                            next += 1;
                        }
                        (next < triggers.len() && triggers[next] < span.end)
                            || (escaped && may_spell_trigger(content))
                    } else {
                        true
                    };
                    if shape_needed {
                        let key = Scalar::string_value(content, escaped);
                        if let Some(new) = self.text_at(&key, &|| path.render(), hit) {
                            edits.push((span, quote(&new)));
                        }
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
        // Each value with its context and whether the object it is (if one) is a JSON Schema
        // map (`properties`, …), whose member keys name fields rather than hold values.
        let mut stack: Vec<(&mut Value, KeyCtx, bool)> = vec![(root, KeyCtx::NONE, false)];
        while let Some((v, ctx, schema_map)) = stack.pop() {
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
                        stack.push((item, ctx, false));
                    }
                }
                Value::Object(map) => {
                    if map
                        .keys()
                        .any(|k| SHAPE_TRIGGER_AC.is_match(k) || !self.user.is_empty())
                    {
                        rename_keys(map, |k| self.text(k, hit));
                    }
                    for (key, item) in map.iter_mut().rev() {
                        let own = self.keys.classify(key);
                        let mut c = own.within(ctx);
                        if schema_map && own.sensitive {
                            c = c.in_schema_map();
                        }
                        stack.push((item, c, keys::is_schema_map(key)));
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

    /// [`Inner::text`], reporting hits at `path`.
    fn text_at(&self, text: &str, path: &PathFn<'_>, hit: &mut HitFn<'_>) -> Option<String> {
        self.shapes()
            .apply(text, &mut |rule, secret| hit(rule, secret, path))
    }

    fn text(&self, text: &str, hit: &mut HitFn<'_>) -> Option<String> {
        self.shapes()
            .apply(text, &mut |rule, secret| hit(rule, secret, &no_path))
    }

    /// Replaces remembered secrets (docs/redaction.md, "Echoes") in every string of a JSON
    /// text, decoding escaped strings first so that a secret split by escapes (`\u0041`) is
    /// still found, and numbers whose text is a remembered secret. `Ok(None)` when nothing
    /// changed; `Err` when the text is not JSON.
    fn echo_json_text(
        &self,
        text: &str,
        echoes: &mut Echoes,
        hit: &mut HitFn<'_>,
    ) -> Result<Option<String>, NotJson> {
        if !echoes.may_hold(text) {
            // Valid or not, nothing in it can be an echo.
            return Ok(None);
        }
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        json::walk(
            text,
            &self.keys,
            false,
            |span, scalar, _ctx, path| match scalar {
                Scalar::Str { content, escaped } => {
                    if !escaped && !echoes.hits(content) {
                        return;
                    }
                    let value = Scalar::string_value(content, escaped);
                    if let Some(new) =
                        echoes.apply(&value, &mut |r, s| hit(r, s, &|| path.render()))
                    {
                        edits.push((span, quote(&new)));
                    }
                }
                Scalar::Key { content, escaped } => {
                    if !escaped && !echoes.hits(content) {
                        return;
                    }
                    let key = Scalar::string_value(content, escaped);
                    if let Some(new) = echoes.apply(&key, &mut |r, s| hit(r, s, &|| path.render()))
                    {
                        edits.push((span, quote(&new)));
                    }
                }
                Scalar::Num(n) => {
                    if let Some(ph) = echoes.exact(n) {
                        let ph = ph.to_owned();
                        hit(echo::rule_of(&ph), n, &|| path.render());
                        edits.push((span, quote(&ph)));
                    }
                }
            },
        )?;
        Ok(splice(text, &edits))
    }

    /// A frame redacted by the rules, then for echoes; its secrets are remembered first, so an
    /// echo inside the same frame is caught too.
    fn frame_echoing(
        &self,
        frame: &Frame,
        echoes: &mut Echoes,
        hit: &mut HitFn<'_>,
    ) -> Option<Frame> {
        let mut learned: Vec<(String, String)> = Vec::new();
        let first = self.frame(frame, &mut |r, s, p| {
            learned.push((r.to_owned(), s.to_owned()));
            hit(r, s, p);
        });
        for (rule, secret) in &learned {
            echoes.learn(rule, secret);
        }
        let text = first.as_ref().map_or(frame.text(), Frame::text);
        match self.echo_json_text(text, echoes, hit) {
            Ok(Some(new)) => Frame::parse(&new).or(first),
            _ => first,
        }
    }

    fn frame_with(
        &self,
        frame: &Frame,
        echoes: Option<&mut Echoes>,
        hit: &mut HitFn<'_>,
    ) -> Option<Frame> {
        match echoes {
            Some(e) => self.frame_echoing(frame, e, hit),
            None => self.frame(frame, hit),
        }
    }

    fn raw_with(
        &self,
        line: &str,
        echoes: Option<&mut Echoes>,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        match echoes {
            Some(e) => self.raw_echoing(line, e, hit),
            None => raw_line::redact(self, line, hit),
        }
    }

    fn text_with(
        &self,
        text: &str,
        echoes: Option<&mut Echoes>,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        match echoes {
            Some(e) => self.text_echoing(text, e, hit),
            None => self.text(text, hit),
        }
    }

    /// A raw line redacted by the rules, then for echoes (by JSON walk when it is JSON, over its
    /// text when not).
    fn raw_echoing(&self, line: &str, echoes: &mut Echoes, hit: &mut HitFn<'_>) -> Option<String> {
        let mut learned: Vec<(String, String)> = Vec::new();
        let first = raw_line::redact(self, line, &mut |r, s, p| {
            learned.push((r.to_owned(), s.to_owned()));
            hit(r, s, p);
        });
        for (rule, secret) in &learned {
            echoes.learn(rule, secret);
        }
        let text = first.as_deref().unwrap_or(line);
        let echoed = match self.echo_json_text(text, echoes, hit) {
            Ok(done) => done,
            Err(NotJson) => echoes.apply(text, &mut |r, s| hit(r, s, &|| "raw".to_owned())),
        };
        echoed.or(first)
    }

    /// A text (a header argument, a URL) redacted by the shape rules, then for echoes.
    fn text_echoing(&self, text: &str, echoes: &mut Echoes, hit: &mut HitFn<'_>) -> Option<String> {
        let mut learned: Vec<(String, String)> = Vec::new();
        let first = self.text(text, &mut |r, s, p| {
            learned.push((r.to_owned(), s.to_owned()));
            hit(r, s, p);
        });
        for (rule, secret) in &learned {
            echoes.learn(rule, secret);
        }
        let current = first.as_deref().unwrap_or(text);
        echoes
            .apply(current, &mut |r, s| hit(r, s, &no_path))
            .or(first)
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

/// Largest string walked as an embedded JSON document; a longer one gets the shape rules only.
const MAX_EMBEDDED_JSON: usize = 1024 * 1024;

/// Whether a string may hold a JSON object or array (checked properly by the walk).
fn looks_like_embedded_json(value: &str) -> bool {
    value.len() <= MAX_EMBEDDED_JSON
        && value.len() >= 2 * MIN_SECRET_LEN
        && matches!(value.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// Renames the keys `rename` changes, keeping member order. Two keys that become the same
/// placeholder keep the later value, as a parser keeps the last duplicate.
fn rename_keys(
    map: &mut serde_json::Map<String, Value>,
    mut rename: impl FnMut(&str) -> Option<String>,
) {
    let old = std::mem::take(map);
    for (key, value) in old {
        let key = rename(&key).unwrap_or(key);
        map.insert(key, value);
    }
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
        let mut learned: Vec<(String, String)> = Vec::new();
        self.inner.value(&mut out, &mut |r, s, _| {
            count += 1;
            learned.push((r.to_owned(), s.to_owned()));
        });
        for (rule, secret) in &learned {
            echoes.learn(rule, secret);
        }
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
