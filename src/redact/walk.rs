//! The walk behind [`super::Redactor`]: how one JSON value, frame, raw line or text is
//! redacted (shape rules, key context, embedded JSON, echoes), kept apart from the public
//! entry points in `mod.rs` so each file reads as one thing.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Span, packed};
use serde_json::Value;

use super::echo::Echoes;
use super::json::{self, NotJson, Scalar};
use super::keys::{KeyCtx, KeyRules, MIN_SECRET_LEN, is_string_secret, numeric_secret};
use super::placeholder::{KEYCTX, placeholder};
use super::raw_line;
use super::rules::{
    PAIR_TRIGGERS, SHAPE_TRIGGERS, Shapes, UserPattern, has_pair_trigger, may_hold_pair,
};
use super::{echo, keys};
use crate::json::quote;
use crate::jsonrpc::Frame;

/// Where a shape rule could start matching: a string with none of these inside needs no shape
/// pass. ASCII case is ignored, for the free-text pair rule's words (`Token:`, `PASSWORD=`); for
/// the other literals that only lets a few more strings through to the rules.
pub(super) static SHAPE_TRIGGER_AC: LazyLock<AhoCorasick> = LazyLock::new(|| {
    // A full DFA: a few dozen short literals, built once, and every string of a cassette is
    // searched with it (the default contiguous NFA measured a quarter of `redact --scan`).
    match AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .build(SHAPE_TRIGGERS.iter().chain(PAIR_TRIGGERS.iter()))
    {
        Ok(ac) => ac,
        Err(e) => panic!("built-in redaction prefilter does not compile: {e}"),
    }
});

/// The shape rules' own literals ([`SHAPE_TRIGGERS`], case kept) in one packed (Teddy) search,
/// where the CPU has one: `None` elsewhere, and the literals are then searched one by one.
static SHAPE_TRIGGER_SEARCH: LazyLock<Option<packed::Searcher>> = LazyLock::new(|| {
    let mut config = packed::Config::new();
    config.match_kind(packed::MatchKind::LeftmostLongest);
    let mut builder = config.builder();
    builder.extend(SHAPE_TRIGGERS.iter());
    builder.build()
});

/// Where the shape rules' own literals ([`SHAPE_TRIGGERS`], case kept) occur in `text`, in
/// order: every match of a built-in rule other than the free-text pair rule holds one as
/// written, and a literal never spans a quote, so a JSON string holds one exactly when one of
/// these positions falls inside it. One packed search over all the literals, resumed one byte
/// after each start it reports, so every position where a literal starts is visited (a shorter
/// literal starting at the same place would be a prefix of the reported one; none of these is).
/// Where no packed search is available, one vectorised substring search per literal. Fourteen
/// searches were the first way, and on the short frames of a live session their per-call cost
/// was a sixth of the redacting thread's time (docs/benchmarks.md, redact).
pub(super) fn trigger_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let Some(searcher) = &*SHAPE_TRIGGER_SEARCH else {
        return trigger_starts_one_by_one(bytes);
    };
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Some(m) = searcher.find_in(bytes, Span::from(at..bytes.len())) else {
            break;
        };
        starts.push(m.start());
        at = m.start() + 1;
    }
    starts
}

/// [`trigger_starts`] where no packed search is available: one vectorised substring search per
/// literal, then the positions sorted.
fn trigger_starts_one_by_one(bytes: &[u8]) -> Vec<usize> {
    static FINDERS: LazyLock<Vec<memchr::memmem::Finder<'static>>> = LazyLock::new(|| {
        SHAPE_TRIGGERS
            .iter()
            .map(|t| memchr::memmem::Finder::new(t.as_bytes()))
            .collect()
    });
    let mut starts: Vec<usize> = Vec::new();
    for finder in FINDERS.iter() {
        // Overlapping occurrences too (`xox` twice in `xoxox`), as the packed search finds them.
        let mut at = 0;
        while let Some(found) = bytes.get(at..).and_then(|rest| finder.find(rest)) {
            starts.push(at + found);
            at += found + 1;
        }
    }
    starts.sort_unstable();
    starts
}

/// Whether a built-in rule could change `text`: it holds a shape rule's literal as written, or
/// a `:`, `=` or `-`, without which the free-text pair rule has no pair (whatever names a
/// config's keys make sensitive, so no pair word is asked for). Nothing else rewrites text when
/// there are no user patterns, so where this is false the built-in rules leave `text` as it is.
fn builtin_may_rewrite(text: &str) -> bool {
    has_shape_literal(text) || may_hold_pair(text)
}

/// Whether `text` holds one of [`SHAPE_TRIGGERS`] as written.
fn has_shape_literal(text: &str) -> bool {
    match &*SHAPE_TRIGGER_SEARCH {
        Some(searcher) => searcher.find(text).is_some(),
        None => SHAPE_TRIGGERS.iter().any(|t| text.contains(t)),
    }
}

/// Whether string content (as written, escapes and all) may hold a match of the free-text pair
/// rule: a `:`, `=` or `-` (a byte screen), then one of its trigger words in any case.
fn may_pair(content: &str) -> bool {
    may_hold_pair(content) && has_pair_trigger(content)
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) user: Vec<UserPattern>,
    pub(super) keys: KeyRules,
    pub(super) allow: HashSet<String>,
    pub(super) hash: Option<String>,
    /// [`Inner::key_ctx_plain`] of each of [`KNOWN_KEYS`] under these rules.
    known: HashMap<&'static str, KeyCtx, foldhash::fast::RandomState>,
}

/// Member names that nearly every MCP message carries. Judging a key asks the key rules and
/// searches it for every built-in rule's literal: a few hundred instructions, for each member of
/// each frame, twice when echoes are tracked (a fifth of a recorder's capture work on small
/// frames). For these names the answer is worked out once per rule set, by the same function,
/// when the rules are built, and found again by one hash lookup.
const KNOWN_KEYS: [&str; 44] = [
    "_meta",
    "annotations",
    "arguments",
    "capabilities",
    "clientInfo",
    "code",
    "completion",
    "content",
    "contents",
    "cursor",
    "data",
    "description",
    "elicitation",
    "error",
    "id",
    "inputSchema",
    "isError",
    "items",
    "level",
    "listChanged",
    "logger",
    "message",
    "messages",
    "method",
    "mimeType",
    "name",
    "nextCursor",
    "outputSchema",
    "params",
    "progress",
    "prompts",
    "properties",
    "protocolVersion",
    "required",
    "resources",
    "result",
    "serverInfo",
    "structuredContent",
    "text",
    "title",
    "tools",
    "type",
    "uri",
    "version",
];

/// Where a secret was found, rendered only when a report asks.
pub(super) type PathFn<'a> = dyn Fn() -> String + 'a;

/// Receives each secret found: rule name, secret text, and where it was.
pub(super) type HitFn<'a> = dyn FnMut(&str, &str, &PathFn<'_>) + 'a;

pub(super) fn no_path() -> String {
    String::new()
}

impl Inner {
    pub(super) fn new(
        user: Vec<UserPattern>,
        keys: KeyRules,
        allow: HashSet<String>,
        hash: Option<String>,
    ) -> Inner {
        let mut inner = Inner {
            user,
            keys,
            allow,
            hash,
            known: HashMap::default(),
        };
        inner.known = KNOWN_KEYS
            .iter()
            .map(|&key| (key, inner.key_ctx_plain(key)))
            .collect();
        inner
    }

    pub(super) fn shapes(&self) -> Shapes<'_> {
        Shapes {
            user: &self.user,
            allow: &self.allow,
            keys: &self.keys,
        }
    }

    /// The context a member's value gets from its key: judged on the key as sent and, when a
    /// rule rewrites the key, on the key as written too (without its placeholders, see
    /// [`KeyRules::is_sensitive`]). A second pass reads the key as written, so a value that
    /// pass would take as a secret is taken by the first, or redacting twice would change
    /// something (docs/fuzzing.md, bug 12).
    pub(super) fn key_ctx(&self, key: &str) -> KeyCtx {
        match self.known.get(key) {
            Some(&ctx) => ctx,
            None => self.key_ctx_plain(key),
        }
    }

    /// [`Inner::key_ctx`] worked out for `key`, without the table of known keys.
    fn key_ctx_plain(&self, key: &str) -> KeyCtx {
        let own = self.keys.classify(key);
        // Only a user pattern or a built-in rule can rewrite a key, and a built-in rule only one
        // holding its literal or, for the pair rule, a separator.
        if own.sensitive || (self.user.is_empty() && !builtin_may_rewrite(key)) {
            return own;
        }
        match self.text(key, &mut |_, _, _| {}) {
            Some(written) => self.keys.classify(&written),
            None => own,
        }
    }

    /// The replacement for a string value under `ctx`, if any.
    pub(super) fn string(
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
    pub(super) fn number(
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

    /// Whether [`Inner::json_text`] could change anything in `text`, judged from the whole text
    /// at once. Under the built-in rules alone (no user pattern, no configured key) the walk
    /// changes a value only when (a) it sits under a sensitive key, and every such key holds one
    /// of the key trigrams ([`keys::has_trigram`]); (b) it holds a shape literal as written;
    /// (c) it is escaped, and the escapes may spell a literal; (d) it may hold a `name=value`
    /// pair, whose trigger words all hold a key trigram too. A key is changed only by (b)–(d).
    /// Each of these leaves its mark on the text as a whole (a trigram, a literal, a
    /// backslash), so a text with none of them is left as it is: most short frames of a live
    /// session, which the walk would otherwise take apart for nothing (a capture's main cost,
    /// docs/benchmarks.md). A property test holds this equal to the walk.
    pub(super) fn json_may_change(&self, text: &str) -> bool {
        !self.user.is_empty()
            || !self.keys.is_builtin()
            || memchr::memchr(b'\\', text.as_bytes()).is_some()
            || keys::has_trigram(text)
            || has_shape_literal(text)
    }

    /// Redacts a frame's JSON text in place of its secrets. `Ok(None)` when nothing changed.
    ///
    /// The fast path: one vectorised literal search for where a shape rule could start, and one
    /// walk over the text whose keys are rejected by a trigram test; a string is decoded and
    /// matched only when it sits under a sensitive key, holds a trigger, or may hold a
    /// `name=value` pair with a sensitive-looking name ([`may_pair`]).
    ///
    /// `text` is a frame's, so JSON: where [`Inner::json_may_change`] rules everything out, the
    /// answer is `Ok(None)` without a walk, valid or not.
    pub(super) fn json_text(
        &self,
        text: &str,
        hit: &mut HitFn<'_>,
    ) -> Result<Option<String>, NotJson> {
        if !self.json_may_change(text) {
            return Ok(None);
        }
        self.json_text_walked(text, hit)
    }

    /// [`Inner::json_text`] the plain way: every string and key of the text visited.
    pub(super) fn json_text_walked(
        &self,
        text: &str,
        hit: &mut HitFn<'_>,
    ) -> Result<Option<String>, NotJson> {
        let triggers: Vec<usize> = if self.user.is_empty() {
            trigger_starts(text)
        } else {
            Vec::new()
        };
        let mut next = 0;
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        json::walk(
            text,
            &|k| self.key_ctx(k),
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
                            || may_pair(content)
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
                            || may_pair(content)
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
    pub(super) fn value(&self, root: &mut Value, hit: &mut HitFn<'_>) {
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
                    // Each member's context comes from its key as sent: a sensitive key whose
                    // name a rule rewrote (a user pattern matching `password`) still makes its
                    // value a secret.
                    let class = |key: &str| (self.key_ctx(key), keys::is_schema_map(key));
                    let mut classes: Vec<(KeyCtx, bool)> = Vec::with_capacity(map.len());
                    if map
                        .keys()
                        .any(|k| SHAPE_TRIGGER_AC.is_match(k) || !self.user.is_empty())
                    {
                        let old = std::mem::take(map);
                        for (key, value) in old {
                            let own = class(&key);
                            let key = self.text(&key, hit).unwrap_or(key);
                            match map.insert(key.clone(), value) {
                                None => classes.push(own),
                                // Two names that became one: the later value took the
                                // earlier member's place, and its context with it.
                                Some(_) => {
                                    let at = map.keys().position(|k| *k == key);
                                    if let Some(slot) = at.and_then(|i| classes.get_mut(i)) {
                                        *slot = own;
                                    }
                                }
                            }
                        }
                    } else {
                        classes.extend(map.keys().map(|k| class(k)));
                    }
                    let members: Vec<_> = map.values_mut().zip(classes).collect();
                    for (item, (own, schema_key)) in members.into_iter().rev() {
                        let mut c = own.within(ctx);
                        if schema_map && own.sensitive {
                            c = c.in_schema_map();
                        }
                        stack.push((item, c, schema_key));
                    }
                }
                Value::Null | Value::Bool(_) => {}
            }
        }
    }

    pub(super) fn frame(&self, frame: &Frame, hit: &mut HitFn<'_>) -> Option<Frame> {
        match self.json_text(frame.text(), hit) {
            Ok(None) => None,
            // The text pass may rename envelope members (`id` under a pattern for `d`): the
            // result must still be the same kind of message with the same id, or it is redone
            // member by member.
            Ok(Some(text)) => Frame::parse(&text)
                .filter(|out| out.kind() == frame.kind() && out.id() == frame.id())
                .or_else(|| self.frame_keeping_envelope(frame)),
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

    /// The frame redacted member by member with its envelope kept. Redacting the whole text can
    /// leave something that is no longer a JSON-RPC frame when a rule (in practice a user
    /// pattern) matches envelope text: the `jsonrpc` key or its `2.0`, `params` as a key. Keeping
    /// the original then would write every secret of the frame in clear, so the envelope
    /// (`jsonrpc`, `id` and the member names) is kept as it was and every other value, the
    /// method included, is redacted as usual. The hits were reported by the text pass.
    fn frame_keeping_envelope(&self, frame: &Frame) -> Option<Frame> {
        let original = frame.value();
        let Value::Object(members) = original.clone() else {
            return None;
        };
        let mut quiet = |_: &str, _: &str, _: &PathFn<'_>| {};
        let mut out = serde_json::Map::with_capacity(members.len());
        for (key, mut value) in members {
            match key.as_str() {
                "jsonrpc" | "id" => {}
                "method" | "params" | "result" | "error" => self.value(&mut value, &mut quiet),
                _ => {
                    // Not an envelope member: its name is redacted like any other key.
                    let mut one = Value::Object(serde_json::Map::from_iter([(key, value)]));
                    self.value(&mut one, &mut quiet);
                    if let Value::Object(one) = one {
                        out.extend(one);
                    }
                    continue;
                }
            }
            out.insert(key, value);
        }
        let out = Value::Object(out);
        // The text pass changes envelope text on every pass, redacted or not: only a change to
        // a value counts, so a second pass over this output is a no-op.
        if out == original {
            return None;
        }
        Frame::from_value(&out)
    }

    /// [`Inner::text`], reporting hits at `path`.
    pub(super) fn text_at(
        &self,
        text: &str,
        path: &PathFn<'_>,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        self.shapes()
            .apply(text, &mut |rule, secret| hit(rule, secret, path))
    }

    pub(super) fn text(&self, text: &str, hit: &mut HitFn<'_>) -> Option<String> {
        self.shapes()
            .apply(text, &mut |rule, secret| hit(rule, secret, &no_path))
    }

    /// Replaces remembered secrets (docs/redaction.md, "Echoes") in every string of a JSON
    /// text, decoding escaped strings first so that a secret split by escapes (`\u0041`) is
    /// still found, and numbers whose text is a remembered secret. `Ok(None)` when nothing
    /// changed; `Err` when the text is not JSON.
    pub(super) fn echo_json_text(
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
        // Echoes do not depend on key context.
        json::walk(
            text,
            &|_| KeyCtx::NONE,
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
    pub(super) fn frame_echoing(
        &self,
        frame: &Frame,
        echoes: &mut Echoes,
        hit: &mut HitFn<'_>,
    ) -> Option<Frame> {
        let first = learning(echoes, hit, |hit| self.frame(frame, hit));
        let text = first.as_ref().map_or(frame.text(), Frame::text);
        match self.echo_json_text(text, echoes, hit) {
            Ok(Some(new)) => Frame::parse(&new).or(first),
            _ => first,
        }
    }

    pub(super) fn frame_with(
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

    pub(super) fn raw_with(
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

    pub(super) fn text_with(
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
    pub(super) fn raw_echoing(
        &self,
        line: &str,
        echoes: &mut Echoes,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        let first = learning(echoes, hit, |hit| raw_line::redact(self, line, hit));
        let text = first.as_deref().unwrap_or(line);
        let echoed = match self.echo_json_text(text, echoes, hit) {
            Ok(done) => done,
            Err(NotJson) => echoes.apply(text, &mut |r, s| hit(r, s, &|| "raw".to_owned())),
        };
        echoed.or(first)
    }

    /// A text (a header argument, a URL) redacted by the shape rules, then for echoes.
    pub(super) fn text_echoing(
        &self,
        text: &str,
        echoes: &mut Echoes,
        hit: &mut HitFn<'_>,
    ) -> Option<String> {
        let first = learning(echoes, hit, |hit| self.text(text, hit));
        let current = first.as_deref().unwrap_or(text);
        echoes
            .apply(current, &mut |r, s| hit(r, s, &no_path))
            .or(first)
    }
}

/// Runs one redaction `pass`, passing each secret it finds on to `hit` and remembering it in
/// `echoes` once the pass is over, so the echo pass that follows knows it.
pub(super) fn learning<T>(
    echoes: &mut Echoes,
    hit: &mut HitFn<'_>,
    pass: impl FnOnce(&mut HitFn<'_>) -> T,
) -> T {
    let mut learned: Vec<(String, String)> = Vec::new();
    let out = pass(&mut |r, s, p| {
        learned.push((r.to_owned(), s.to_owned()));
        hit(r, s, p);
    });
    for (rule, secret) in &learned {
        echoes.learn(rule, secret);
    }
    out
}

/// Whether escaped string content has an escape that could spell part of a trigger: `\uXXXX`
/// can spell any character, `\/` the slashes of `://`. (The others spell quotes, backslashes
/// and control characters, which no trigger holds.)
pub(super) fn may_spell_trigger(content: &str) -> bool {
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
pub(super) fn looks_like_embedded_json(value: &str) -> bool {
    value.len() <= MAX_EMBEDDED_JSON
        && value.len() >= 2 * MIN_SECRET_LEN
        && matches!(value.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// Renames the keys `rename` changes, keeping member order. Two keys that become the same
/// placeholder keep the later value, as a parser keeps the last duplicate.
pub(super) fn rename_keys(
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
pub(super) fn splice(text: &str, edits: &[(Range<usize>, String)]) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The packed search, and the per-literal searches that stand in for it where there is
        /// none, find what a plain substring search finds, at every position, overlapping
        /// literals (`xox` inside `xoxox`) and repeats included.
        #[test]
        fn trigger_starts_are_the_literals_positions(
            parts in proptest::collection::vec(prop_oneof![
                Just("sk-ant-"), Just("xoxox"), Just("://"), Just("eyJ"), Just("ghp_"),
                Just("github_pat_"), Just("Bearer "), Just("AKIA"), Just("AIza"),
                Just("PRIVATE KEY"), Just("sk"), Just("-"), Just("é"), Just(" "), Just("\""),
                Just("a"), Just(":"),
            ], 0..40),
        ) {
            let text: String = parts.concat();
            let mut want: Vec<usize> = SHAPE_TRIGGERS
                .iter()
                .flat_map(|t| {
                    (0..text.len()).filter(|&at| text.as_bytes()[at..].starts_with(t.as_bytes()))
                })
                .collect();
            want.sort_unstable();
            prop_assert_eq!(trigger_starts_one_by_one(text.as_bytes()), want.clone());
            prop_assert_eq!(trigger_starts(&text), want);
        }
    }

    /// Keys built-in rules rewrite, and near misses: a middle (a secret of a built-in shape, a
    /// pair, a shape literal or pair word alone, a separator, nothing) between pieces of words,
    /// in either case.
    fn key_text() -> impl Strategy<Value = String> {
        let halves = [
            "", "pas", "pass", "to", "tok", "sec", "api_", "api", "auth", "x", "a-", "Bearer ",
        ];
        let middles: Vec<String> = [
            "",
            "ghp_0123456789abcdefghij0123456789ABCDEF",
            "sk-0123456789abcdefghij0123456789ABCDEFGHIJ",
            "AKIAABCDEFGHIJKLMNOP",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
            "xoxb-123456789012-abcdefghijkl",
            "token=hunter2-correct-horse",
            "name=hunter2-correct-horse",
            "session: hunter2-correct-horse",
            "SK-abc=hunter2-correct-horse",
            "https://user:hunter2-correct@example.com",
            ":",
            "=",
            "-",
        ]
        .into_iter()
        .map(str::to_owned)
        .chain(
            SHAPE_TRIGGERS
                .iter()
                .chain(PAIR_TRIGGERS.iter())
                .map(|t| (*t).to_owned()),
        )
        .collect();
        let tails = ["", "word", "sword", "ken", "ret", "key", "_key", "z", "=v"];
        (
            proptest::sample::select(halves.to_vec()),
            proptest::sample::select(middles),
            proptest::sample::select(tails.to_vec()),
            any::<bool>(),
        )
            .prop_map(|(head, middle, tail, upper)| {
                let key = format!("{head}{middle}{tail}");
                if upper { key.to_ascii_uppercase() } else { key }
            })
    }

    /// Every known key is in the table, and under every kind of rule set each gets the context
    /// the plain way gives it: the built-ins, extra sensitive keys naming known ones, patterns
    /// that rewrite them, and both.
    #[test]
    fn known_keys_get_the_plain_context() {
        let builtin = super::super::Redactor::builtin();
        assert_eq!(
            builtin.inner.known.len(),
            KNOWN_KEYS.len(),
            "a known key is listed twice"
        );
        let configs = [
            r#"{"keys":["text","name"]}"#,
            r#"{"patterns":[{"name":"word","regex":"(?i)method|id|me"}]}"#,
            r#"{"patterns":[{"name":"x","regex":"x"}],"keys":["content","data"]}"#,
        ];
        let mut redactors = vec![super::super::Redactor::builtin()];
        for c in configs {
            let config = super::super::RedactConfig::parse(c, "test").unwrap();
            redactors.push(super::super::Redactor::with_config(&config));
        }
        for r in &redactors {
            for key in KNOWN_KEYS {
                assert_eq!(r.inner.key_ctx(key), r.inner.key_ctx_plain(key), "{key}");
            }
        }
        // A config can make a known key sensitive: the table is per rule set, not fixed.
        assert!(
            redactors[1]
                .inner
                .known
                .get("text")
                .is_some_and(|ctx| ctx.sensitive)
        );
        assert!(
            redactors[0]
                .inner
                .known
                .get("text")
                .is_some_and(|ctx| !ctx.sensitive)
        );
        // Keys that are not known, and near misses, take the plain way.
        for key in ["", "tex", "texts", "Text", "token", "apiKey", "idx"] {
            for r in &redactors {
                assert_eq!(r.inner.key_ctx(key), r.inner.key_ctx_plain(key), "{key}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The screen in `key_ctx` only skips keys that no built-in rule rewrites, so judging
        /// a key as written is skipped only where it would read the key as sent.
        #[test]
        fn the_key_screen_skips_only_keys_no_rule_rewrites(key in key_text()) {
            let builtin = super::super::Redactor::builtin();
            if !builtin_may_rewrite(&key) {
                prop_assert_eq!(builtin.inner.text(&key, &mut |_, _, _| {}), None, "{:?}", key);
            }
            // With a config's keys (no patterns: with patterns every key is judged as written),
            // the pair rule also takes names the config makes sensitive, with no pair word
            // (`name=…`, `SK-abc=…`).
            let config = super::super::RedactConfig::parse(
                r#"{"keys":["name","session","sk-abc"]}"#,
                "test",
            )
            .expect("config parses");
            let configured = super::super::Redactor::with_config(&config);
            if !builtin_may_rewrite(&key) {
                prop_assert_eq!(configured.inner.text(&key, &mut |_, _, _| {}), None, "{:?}", key);
            }
        }
    }
}
