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
#[derive(Debug, Default)]
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
    pub(crate) fn request(&mut self, pair: usize, params: Option<&Value>) {
        self.followed_now.clear();
        let Some(params) = params else { return };
        let Linker {
            client_strings,
            minted,
            source_index,
            links,
            followed_now,
        } = self;
        string_leaves(params, &mut Steps(Vec::new()), &mut |steps, text| {
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
    pub(crate) fn response(&mut self, pair: usize, method: &str, result: &Value) {
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
            if let Some(cursor) = result.get("nextCursor").and_then(Value::as_str) {
                mint(&Steps(vec![Step::Key("nextCursor")]), cursor);
            }
        } else {
            string_leaves(result, &mut Steps(Vec::new()), &mut mint);
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

/// Calls `each` with every string leaf of `value` and the steps to it, in document order.
fn string_leaves<'v>(
    value: &'v Value,
    path: &mut Steps<'v>,
    each: &mut impl FnMut(&Steps<'v>, &'v str),
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

    fn links(pairs: &[(Value, Value)]) -> Links {
        let mut linker = Linker::default();
        for (i, (params, result)) in pairs.iter().enumerate() {
            linker.request(i, Some(params));
            linker.response(i, "tools/call", result);
        }
        linker.finish()
    }

    #[test]
    fn listings_mint_only_their_cursor() {
        let mut linker = Linker::default();
        linker.request(0, None);
        linker.response(
            0,
            "resources/list",
            &json!({"resources": [{"uri": "tiny://readme"}], "nextCursor": "c-2"}),
        );
        linker.request(1, Some(&json!({"uri": "tiny://readme"})));
        linker.request(2, Some(&json!({"cursor": "c-2"})));
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
