//! Following server-minted values (docs/verify.md, "Followed values").
//!
//! A recorded session often hands a value from one answer back in a later request: a task id
//! from the `tools/call` that started the task, a created resource's URI, a pagination cursor,
//! an MRTR `requestState`. The live server mints its own value for the same thing, so re-firing
//! the recorded one asks about something that does not exist in this run.
//!
//! The rule, decided on the recording alone before anything is fired:
//!
//! - a **minted value** is a string leaf of a recorded *result* (at a JSON Pointer inside it)
//!   that looks like an identifier — at most [`MAX_MINTED_BYTES`] long, no whitespace, and not
//!   letters alone (so `task-0001`, a UUID, `tiny://item/7` or `p2`, but never `working` or
//!   `text`, which are vocabulary, not names) — and that no earlier request (nor the request it
//!   answers) carried: the server said it first. A listing (`tools/list`, `resources/list`,
//!   any method ending in `/list`) mints only its `nextCursor`: the names it lists are the
//!   server's published surface, stable by intent, so a renamed resource is drift to report,
//!   not a value to follow. An MRTR `requestState` is minted whatever it looks like;
//! - a later recorded request whose params hold that exact string (a whole string leaf, anywhere
//!   in params) **follows** it, from the latest pair whose answer minted it (an answer that
//!   repeats a value its own request followed does not mint it again);
//! - when re-firing, the follower carries the string the live server put at the same pointer of
//!   its own answer to the minting request. When the live answer has no string there, the
//!   recorded value is sent (and the output says it could not be followed), except for an MRTR
//!   `requestState`, which is left out: a retry carries the live server's state or none.
//!
//! Comparing answers, a followed recorded value is read as its live counterpart wherever it
//! appears in a recorded payload (the minting answer included): it names the same thing in
//! this run, so a different spelling of it is not drift.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::json::diff::escape_segment;
use crate::json::token;

/// An MRTR result's opaque state, minted by definition whatever it looks like: a retry must
/// carry the live server's own.
pub(crate) const REQUEST_STATE: &str = "requestState";

/// Longest string considered a minted value: ids, URIs and cursors are short; a long text that
/// happens to be repeated is content, and indexing every long text would cost memory.
pub(crate) const MAX_MINTED_BYTES: usize = 512;

/// Where a minted value came from: pair index and pointer in its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    pub pair: usize,
    pub pointer: Vec<String>,
}

/// One request field that follows a minted value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Use {
    /// Pointer into the request's params.
    pub pointer: Vec<String>,
    /// The recorded string.
    pub recorded: String,
    /// Index into [`Links::sources`].
    pub source: usize,
}

/// Every link found in a recording.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Links {
    pub sources: Vec<Source>,
    /// Per request pair: the fields that follow a minted value.
    pub uses: HashMap<usize, Vec<Use>>,
    /// Per minting pair: its sources.
    pub minted_by: HashMap<usize, Vec<usize>>,
}

/// Builds [`Links`] walking the pairs in order.
#[derive(Debug, Default)]
pub(crate) struct Linker {
    /// Every string a request carried so far.
    client_strings: HashSet<String>,
    /// Minted strings: the latest answer that minted each.
    minted: HashMap<String, Source>,
    /// Source index by (pair, pointer), so one source serves every follower.
    source_index: HashMap<(usize, Vec<String>), usize>,
    /// Minted values the latest request followed: its answer echoing one does not mint it again
    /// (a `tasks/get` answer names the task the `tools/call` minted).
    followed_now: HashSet<String>,
    links: Links,
}

impl Linker {
    /// A request (pair `pair`): its string leaves either follow a minted value or become
    /// client-said strings.
    pub(crate) fn request(&mut self, pair: usize, params: Option<Tree<'_>>) {
        self.followed_now.clear();
        let Some(params) = params else { return };
        let Linker {
            client_strings,
            minted,
            source_index,
            links,
            followed_now,
        } = self;
        params.leaves(&mut |steps, text| {
            let Some(source) = minted.get(text) else {
                if text.len() <= MAX_MINTED_BYTES {
                    client_strings.insert(text.to_owned());
                }
                return;
            };
            followed_now.insert(text.to_owned());
            let key = (source.pair, source.pointer.clone());
            let next = links.sources.len();
            let index = *source_index.entry(key).or_insert(next);
            if index == next {
                links.sources.push(source.clone());
                links.minted_by.entry(source.pair).or_default().push(index);
            }
            links.uses.entry(pair).or_default().push(Use {
                pointer: steps.segments(),
                recorded: text.to_owned(),
                source: index,
            });
        });
    }

    /// A recorded result (pair `pair`, answering `method`): strings the client never said are
    /// minted here.
    pub(crate) fn response(&mut self, pair: usize, method: &str, result: Tree<'_>) {
        let Linker {
            client_strings,
            minted,
            followed_now,
            ..
        } = self;
        let mut mint = |steps: &Steps<'_>, text: &str| {
            let state = steps.ends_with_key(REQUEST_STATE);
            if (state || looks_minted(text))
                && !client_strings.contains(text)
                && !followed_now.contains(text)
            {
                minted.insert(
                    text.to_owned(),
                    Source {
                        pair,
                        pointer: steps.segments(),
                    },
                );
            }
        };
        if method.ends_with("/list") {
            if let Some(cursor) = result.member_str("nextCursor") {
                mint(&Steps(vec![Step::Key("nextCursor")]), &cursor);
            }
        } else {
            result.leaves(&mut mint);
        }
    }

    pub(crate) fn finish(self) -> Links {
        self.links
    }
}

/// Whether a string can be a name the server made up (see the module docs): short, no
/// whitespace, and more than letters.
pub(crate) fn looks_minted(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_MINTED_BYTES
        && !text.chars().any(char::is_whitespace)
        && !text.chars().all(|c| c.is_ascii_alphabetic())
}

/// One step of the way to a string leaf, borrowed from the value walked: the pointer is only
/// spelled out ([`Steps::segments`]) for the few leaves that mint or follow something, not for
/// every string of every request and answer.
#[derive(Debug, Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// The steps from the root to the current leaf.
struct Steps<'v>(Vec<Step<'v>>);

impl Steps<'_> {
    /// The pointer as segments.
    fn segments(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|step| match step {
                Step::Key(key) => (*key).to_owned(),
                Step::Index(i) => i.to_string(),
            })
            .collect()
    }

    /// Whether the leaf is the member `key` of an object.
    fn ends_with_key(&self, key: &str) -> bool {
        matches!(self.0.last(), Some(Step::Key(k)) if *k == key)
    }
}

/// A JSON value whose string leaves the linker reads: parsed, or its text when
/// [`walkable`] (which spares building a value for every request and answer of a cassette).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tree<'a> {
    Value(&'a Value),
    /// Text that [`walkable`] accepted.
    Text(&'a str),
}

impl<'a> Tree<'a> {
    /// Calls `each` with every string leaf and the steps to it, in document order.
    fn leaves(self, each: &mut impl FnMut(&Steps<'_>, &str)) {
        match self {
            Tree::Value(value) => string_leaves(value, &mut Steps(Vec::new()), each),
            Tree::Text(text) => {
                walk_text(text, 0, 0, &mut Steps(Vec::new()), each);
            }
        }
    }

    /// The member `key` when this is an object and that member a string.
    pub(crate) fn member_str(self, key: &str) -> Option<std::borrow::Cow<'a, str>> {
        match self {
            Tree::Value(value) => value.get(key)?.as_str().map(std::borrow::Cow::Borrowed),
            Tree::Text(text) => {
                let mut found = None;
                token::for_each_member(text, |k, v| {
                    if k == key {
                        found = Some(v);
                    }
                    Some(())
                });
                let raw = found?.strip_prefix('"')?.strip_suffix('"')?;
                Some(if raw.contains('\\') {
                    std::borrow::Cow::Owned(token::decode(raw))
                } else {
                    std::borrow::Cow::Borrowed(raw)
                })
            }
        }
    }
}

/// Deepest nesting the text walk follows; deeper values are left to the parser (whose limit,
/// 128, decides whether they read at all).
const WALK_DEPTH: usize = 64;
/// Most members per object the text walk checks for repeated keys.
const WALK_MEMBERS: usize = 32;

/// Whether the JSON text `text` (valid JSON: a cassette member) can be walked in place with the
/// result a parsed value would give, and parses as a value at all. It cannot, and the caller
/// parses, when the text holds a key given twice (a parsed object keeps the last), an escaped
/// key, a `\u` escape (a lone surrogate fails the parse), a number with an exponent or more
/// than 18 integer digits (it may be out of range), nesting deeper than [`WALK_DEPTH`], or an
/// object of more than [`WALK_MEMBERS`] members.
pub(crate) fn walkable(text: &str) -> bool {
    walk_text(text, 0, 0, &mut Steps(Vec::new()), &mut |_, _| {})
        .is_some_and(|end| token::skip_ws(text.as_bytes(), end) == text.len())
}

/// Walks the value starting at `i` of `text`, calling `each` for its string leaves; answers the
/// index past it, or `None` where [`walkable`] says no.
fn walk_text<'t>(
    text: &'t str,
    i: usize,
    depth: usize,
    path: &mut Steps<'t>,
    each: &mut impl FnMut(&Steps<'_>, &str),
) -> Option<usize> {
    let b = text.as_bytes();
    let i = token::skip_ws(b, i);
    match *b.get(i)? {
        b'"' => {
            let (end, escaped) = token::string_end_trusted(b, i)?;
            let content = text.get(i + 1..end - 1)?;
            if escaped {
                if content.contains("\\u") {
                    return None;
                }
                each(path, &token::decode(content));
            } else {
                each(path, content);
            }
            Some(end)
        }
        b'{' => {
            if depth >= WALK_DEPTH {
                return None;
            }
            let mut keys = [""; WALK_MEMBERS];
            let mut count = 0;
            let mut j = token::skip_ws(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return Some(j + 1);
            }
            loop {
                if b.get(j) != Some(&b'"') {
                    return None;
                }
                let (end, escaped) = token::string_end_trusted(b, j)?;
                let key = text.get(j + 1..end - 1)?;
                if escaped || count == WALK_MEMBERS || keys[..count].contains(&key) {
                    return None;
                }
                keys[count] = key;
                count += 1;
                j = token::skip_ws(b, end);
                if b.get(j) != Some(&b':') {
                    return None;
                }
                path.0.push(Step::Key(key));
                let next = walk_text(text, j + 1, depth + 1, path, each);
                path.0.pop();
                j = token::skip_ws(b, next?);
                match *b.get(j)? {
                    b',' => j = token::skip_ws(b, j + 1),
                    b'}' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'[' => {
            if depth >= WALK_DEPTH {
                return None;
            }
            let mut j = token::skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Some(j + 1);
            }
            let mut index = 0;
            loop {
                path.0.push(Step::Index(index));
                let next = walk_text(text, j, depth + 1, path, each);
                path.0.pop();
                index += 1;
                j = token::skip_ws(b, next?);
                match *b.get(j)? {
                    b',' => j = token::skip_ws(b, j + 1),
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b't' => token::literal_end(b, i, "true"),
        b'f' => token::literal_end(b, i, "false"),
        b'n' => token::literal_end(b, i, "null"),
        _ => {
            let n = token::number(b, i)?;
            let spelled = text.get(i..n.end)?;
            (n.int_digits <= 18 && !spelled.contains(['e', 'E'])).then_some(n.end)
        }
    }
}

/// Calls `each` with every string leaf of `value` and the steps to it, in document order.
fn string_leaves<'v>(
    value: &'v Value,
    path: &mut Steps<'v>,
    each: &mut impl FnMut(&Steps<'_>, &str),
) {
    match value {
        Value::String(s) => each(path, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.0.push(Step::Index(i));
                string_leaves(item, path, each);
                path.0.pop();
            }
        }
        Value::Object(members) => {
            for (k, v) in members {
                path.0.push(Step::Key(k));
                string_leaves(v, path, each);
                path.0.pop();
            }
        }
        _ => {}
    }
}

/// The value at a pointer (given as segments).
pub(crate) fn get_at<'v>(value: &'v Value, segments: &[String]) -> Option<&'v Value> {
    segments.iter().try_fold(value, |here, seg| match here {
        Value::Object(map) => map.get(seg.as_str()),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn get_at_mut<'v>(value: &'v mut Value, segments: &[String]) -> Option<&'v mut Value> {
    segments.iter().try_fold(value, |here, seg| match here {
        Value::Object(map) => map.get_mut(seg.as_str()),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    })
}

/// A pointer's text from its segments.
pub(crate) fn pointer_text(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| format!("/{}", escape_segment(s)))
        .collect()
}

/// One followed field of a re-fired request, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Followed {
    /// Pointer into the request's params.
    pub pointer: String,
    pub recorded: String,
    /// What was sent instead; `None` when the live answer had no string to follow.
    pub live: Option<String>,
    /// The pair whose answer minted it, and where.
    pub source_pair: usize,
    pub source_pointer: String,
}

/// The run-time side: what the live server minted so far.
#[derive(Debug, Default)]
pub(crate) struct Follower {
    /// Per source: the live string, once its minting pair was answered.
    live: HashMap<usize, Option<String>>,
    /// Recorded value to live value, for every source followed so far.
    mapping: HashMap<String, String>,
}

impl Follower {
    /// Rewrites the fields of pair `pair`'s params that follow a minted value. Returns what was
    /// followed, and whether `params` changed.
    pub(crate) fn rewrite(
        &self,
        links: &Links,
        pair: usize,
        params: &mut Value,
    ) -> (Vec<Followed>, bool) {
        let Some(uses) = links.uses.get(&pair) else {
            return (Vec::new(), false);
        };
        let mut followed = Vec::new();
        let mut changed = false;
        for u in uses {
            let source = &links.sources[u.source];
            let live = self.live.get(&u.source).cloned().flatten();
            match &live {
                Some(live) if live != &u.recorded => {
                    if let Some(slot) = get_at_mut(params, &u.pointer) {
                        *slot = Value::String(live.clone());
                        changed = true;
                    }
                }
                Some(_) => continue,
                None if u.pointer.last().is_some_and(|k| k == REQUEST_STATE) => {
                    changed |= crate::json::diff::remove_pointer(params, &u.pointer);
                }
                None => {}
            }
            followed.push(Followed {
                pointer: pointer_text(&u.pointer),
                recorded: u.recorded.clone(),
                live,
                source_pair: source.pair,
                source_pointer: pointer_text(&source.pointer),
            });
        }
        (followed, changed)
    }

    /// Notes what the live server minted in its answer to pair `pair` (its result, if any).
    pub(crate) fn capture(
        &mut self,
        links: &Links,
        pair: usize,
        recorded: Option<&Value>,
        live: Option<&Value>,
    ) {
        let Some(sources) = links.minted_by.get(&pair) else {
            return;
        };
        for &index in sources {
            let pointer = &links.sources[index].pointer;
            let live_value = live
                .and_then(|v| get_at(v, pointer))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let recorded_value = recorded
                .and_then(|v| get_at(v, pointer))
                .and_then(Value::as_str);
            if let (Some(recorded), Some(live)) = (recorded_value, &live_value) {
                if recorded != live {
                    self.mapping.insert(recorded.to_owned(), live.clone());
                }
            }
            self.live.insert(index, live_value);
        }
    }

    /// Whether any recorded value is read as a live one ([`Follower::map_recorded`] would
    /// change something).
    pub(crate) fn maps_values(&self) -> bool {
        !self.mapping.is_empty()
    }

    /// Reads every followed recorded value in `value` as its live counterpart.
    pub(crate) fn map_recorded(&self, value: &mut Value) {
        if self.mapping.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Some(live) = self.mapping.get(s.as_str()) {
                    *s = live.clone();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.map_recorded(v)),
            Value::Object(members) => members.values_mut().for_each(|v| self.map_recorded(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The links of `pairs`, found on parsed values; the same found walking their text.
    fn links(pairs: &[(Value, Value)]) -> Links {
        let mut linker = Linker::default();
        let mut by_text = Linker::default();
        for (i, (params, result)) in pairs.iter().enumerate() {
            linker.request(i, Some(Tree::Value(params)));
            linker.response(i, "tools/call", Tree::Value(result));
            let (params, result) = (params.to_string(), result.to_string());
            assert!(walkable(&params) && walkable(&result));
            by_text.request(i, Some(Tree::Text(&params)));
            by_text.response(i, "tools/call", Tree::Text(&result));
        }
        let links = linker.finish();
        assert_eq!(links, by_text.finish());
        links
    }

    #[test]
    fn listings_mint_only_their_cursor() {
        let mut linker = Linker::default();
        linker.request(0, None);
        linker.response(
            0,
            "resources/list",
            Tree::Text(r#"{"resources": [{"uri": "tiny://readme"}], "nextCursor": "c-2"}"#),
        );
        linker.request(1, Some(Tree::Value(&json!({"uri": "tiny://readme"}))));
        linker.request(2, Some(Tree::Text(r#"{"cursor": "c-2"}"#)));
        let l = linker.finish();
        assert!(!l.uses.contains_key(&1));
        assert_eq!(l.uses[&2][0].recorded, "c-2");
        assert_eq!(l.sources[0].pointer, ["nextCursor"]);
    }

    #[test]
    fn minted_values_are_followed_and_echoes_are_not() {
        let l = links(&[
            (
                json!({"name": "echo", "arguments": {"m": "hi"}}),
                json!({"text": "hi", "id": "r-1"}),
            ),
            (
                json!({"name": "build"}),
                json!({"task": {"taskId": "t-rec", "status": "working"}}),
            ),
            (
                json!({"taskId": "t-rec"}),
                json!({"taskId": "t-rec", "status": "completed"}),
            ),
            (json!({"m": "hi", "again": "working"}), json!({})),
        ]);
        assert_eq!(
            l.sources,
            [Source {
                pair: 1,
                pointer: vec!["task".into(), "taskId".into()]
            }]
        );
        assert_eq!(l.uses[&2][0].pointer, ["taskId"]);
        // The tasks/get answer echoes the id; the source stays the tools/call.
        assert_eq!(l.sources.len(), 1);
        assert!(!l.uses.contains_key(&0));
        // "hi" was said by the client first; "working" is a word, not a name.
        assert!(!l.uses.contains_key(&3));
        assert!(looks_minted("p2") && looks_minted("tiny://x") && looks_minted("9f1c"));
        assert!(!looks_minted("completed") && !looks_minted("a b1") && !looks_minted(""));
    }

    #[test]
    fn the_live_value_is_sent_and_the_recorded_one_read_as_it() {
        let l = links(&[
            (
                json!({"name": "build"}),
                json!({"task": {"taskId": "t-rec"}}),
            ),
            (json!({"taskId": "t-rec"}), json!({"taskId": "t-rec"})),
        ]);
        let mut f = Follower::default();
        f.capture(
            &l,
            0,
            Some(&json!({"task": {"taskId": "t-rec"}})),
            Some(&json!({"task": {"taskId": "t-live"}})),
        );
        let mut params = json!({"taskId": "t-rec"});
        let (followed, changed) = f.rewrite(&l, 1, &mut params);
        assert!(changed);
        assert_eq!(params, json!({"taskId": "t-live"}));
        assert_eq!(
            followed,
            [Followed {
                pointer: "/taskId".into(),
                recorded: "t-rec".into(),
                live: Some("t-live".into()),
                source_pair: 0,
                source_pointer: "/task/taskId".into(),
            }]
        );
        let mut recorded = json!({"taskId": "t-rec", "other": ["t-rec"]});
        f.map_recorded(&mut recorded);
        assert_eq!(recorded, json!({"taskId": "t-live", "other": ["t-live"]}));
    }

    #[test]
    fn missing_live_values_keep_the_recorded_one_but_drop_request_state() {
        let l = links(&[
            (
                json!({"name": "a"}),
                json!({"requestState": "s-1", "id": "x-1"}),
            ),
            (
                json!({"name": "a", "requestState": "s-1", "ref": "x-1"}),
                json!({}),
            ),
        ]);
        let mut f = Follower::default();
        f.capture(&l, 0, None, Some(&json!({})));
        let mut params = json!({"name": "a", "requestState": "s-1", "ref": "x-1"});
        let (followed, changed) = f.rewrite(&l, 1, &mut params);
        assert!(changed);
        assert_eq!(params, json!({"name": "a", "ref": "x-1"}));
        assert_eq!(followed.len(), 2);
        assert!(followed.iter().all(|f| f.live.is_none()));
    }

    #[test]
    fn request_state_is_minted_whatever_it_looks_like() {
        let l = links(&[
            (
                json!({"name": "a"}),
                json!({"resultType": "input_required", "requestState": "opaque"}),
            ),
            (json!({"name": "a", "requestState": "opaque"}), json!({})),
        ]);
        assert_eq!(l.uses[&1][0].pointer, ["requestState"]);
    }

    #[test]
    fn unchanged_values_are_not_reported() {
        let l = links(&[
            (json!({}), json!({"nextCursor": "p2"})),
            (json!({"cursor": "p2"}), json!({})),
        ]);
        let mut f = Follower::default();
        f.capture(
            &l,
            0,
            Some(&json!({"nextCursor": "p2"})),
            Some(&json!({"nextCursor": "p2"})),
        );
        let mut params = json!({"cursor": "p2"});
        assert_eq!(f.rewrite(&l, 1, &mut params), (Vec::new(), false));
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// JSON text with what the text walk must refuse or read like the parser: repeated and
    /// escaped keys, escapes, exponents, long integers, deep nesting.
    fn text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("-12".to_owned()),
            Just("2.5".to_owned()),
            Just("1e400".to_owned()),
            Just("1E2".to_owned()),
            Just("1234567890123456789012".to_owned()),
            Just(r#""task-1""#.to_owned()),
            Just(r#""a\nb""#.to_owned()),
            Just(r#""\ud800""#.to_owned()),
            Just(r#""\u0041""#.to_owned()),
            Just(format!("{}{}", "[".repeat(70), "]".repeat(70))),
            "[a-z0-9 ]{0,6}".prop_map(|s| format!("\"{s}\"")),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[{}]", items.join(" , "))),
                prop::collection::vec(
                    (
                        prop::sample::select(vec![
                            "a",
                            "b",
                            "name",
                            "nextCursor",
                            "requestState",
                            "k\\u0061",
                            "x\\n",
                        ]),
                        inner
                    ),
                    0..5
                )
                .prop_map(|members| {
                    let members: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect();
                    format!("{{ {} }}", members.join(","))
                }),
            ]
        })
    }

    fn leaves(tree: Tree<'_>) -> Vec<(Vec<String>, String)> {
        let mut out = Vec::new();
        tree.leaves(&mut |steps, text| out.push((steps.segments(), text.to_owned())));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Text the walk accepts parses, and reads as the parsed value does.
        #[test]
        fn the_text_walk_reads_as_the_parsed_value(text in text()) {
            if walkable(&text) {
                let value: Value = serde_json::from_str(&text).expect("walkable text parses");
                prop_assert_eq!(leaves(Tree::Text(&text)), leaves(Tree::Value(&value)));
                for key in ["name", "nextCursor", "a"] {
                    prop_assert_eq!(
                        Tree::Text(&text).member_str(key),
                        Tree::Value(&value).member_str(key)
                    );
                }
            }
        }
    }

    #[test]
    fn the_walk_refuses_what_the_parser_decides_otherwise() {
        assert!(walkable(r#"{"a": [1, "x\ty", {"b": null}], "c": -2.5}"#));
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"{"\u0061":1}"#,
            r#""\ud800""#,
            "1e400",
            "12345678901234567890",
            r#"{"a":1} x"#,
        ] {
            assert!(!walkable(text), "{text}");
        }
    }
}
