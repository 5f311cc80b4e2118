//! What was recorded, by method and, for `tools/call`, by tool name: the miss diagnosis looks its
//! candidates up here instead of walking every recording.
//!
//! A miss names the nearest recording of the same method (and tool). Walking all recordings made
//! every miss cost time in proportion to the cassette (and parsing them all, memory too), so a
//! client missing repeatedly on a large cassette stalled. Here each method and tool keeps its
//! distinct fingerprints in file order, at most [`COMPARED`] of them: a miss compares with those
//! only. Identical fingerprints diff identically, so keeping one of each changes no diagnosis;
//! beyond the first [`COMPARED`] the nearest recording is the nearest among those (documented in
//! docs/replay.md).

use std::borrow::Cow;
use std::sync::Arc;

use super::params_from_fingerprint;
use crate::json::stringify::display as js_string;
use crate::replay::LookupMap;
use crate::replay::fingerprint::TOOLS_CALL;

/// How many recordings of one method (or one tool) a miss compares with, at most.
pub const COMPARED: usize = 64;

/// Recorded requests by method, then by tool.
#[derive(Debug, Default)]
pub struct Catalogue {
    methods: LookupMap<Arc<str>, Recordings>,
    /// Whether any request was recorded with an answer (or as a listen).
    answered: bool,
}

/// What one method was recorded with.
#[derive(Debug, Default)]
pub struct Recordings {
    /// Answered requests and listens of this method: their first distinct fingerprints, in file
    /// order.
    fps: Vec<u32>,
    /// Whether any was answered (or listened): `fps` can be empty only when none was.
    answered: bool,
    /// Whether any was recorded with no answer.
    unanswered: bool,
    /// `tools/call` only: the same, by tool name (as JavaScript's `String()` spells it).
    tools: LookupMap<Box<str>, Vec<u32>>,
}

impl Recordings {
    /// Candidate fingerprints of this method, at most [`COMPARED`].
    pub fn fps(&self) -> &[u32] {
        &self.fps
    }

    /// Candidate fingerprints of one tool, at most [`COMPARED`]; `None` when it was never
    /// recorded with an answer.
    pub fn tool(&self, name: &str) -> Option<&[u32]> {
        self.tools.get(name).map(Vec::as_slice)
    }

    /// Every recorded tool name.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(|k| &**k)
    }

    pub fn answered(&self) -> bool {
        self.answered
    }

    pub fn unanswered(&self) -> bool {
        self.unanswered
    }
}

impl Catalogue {
    /// What `method` was recorded with, if it was.
    pub fn method(&self, method: &str) -> Option<&Recordings> {
        self.methods.get(method)
    }

    /// Whether any request was recorded with an answer (or as a listen).
    pub fn any_answered(&self) -> bool {
        self.answered
    }

    /// Every recorded method (answered, listened or unanswered), in no particular order.
    pub fn method_names(&self) -> impl Iterator<Item = &str> {
        self.methods.keys().map(|k| &**k)
    }
}

/// The catalogue while phase 5 fills it, one recorded request at a time: recordings by method
/// number (the recording numbers its methods once), so no request hashes its method's name;
/// [`CatalogueBuilder::finish`] names them.
pub(super) struct CatalogueBuilder {
    methods: Vec<Option<Recordings>>,
    /// The number of `tools/call`, when it was recorded.
    tools_call: Option<u32>,
    answered: bool,
}

impl CatalogueBuilder {
    /// An empty catalogue of a recording whose methods are `names`, by number.
    pub(super) fn new(names: &[Arc<str>]) -> CatalogueBuilder {
        CatalogueBuilder {
            methods: (0..names.len()).map(|_| None).collect(),
            tools_call: names
                .iter()
                .position(|name| **name == *TOOLS_CALL)
                .map(|n| n as u32),
            answered: false,
        }
    }

    /// Notes a recorded request of method number `method` with fingerprint `fp` (text
    /// `fp_text`); `first` says whether this fingerprint was not noted as answered before.
    pub(super) fn note_answered(&mut self, method: u32, fp: usize, fp_text: &str, first: bool) {
        self.answered = true;
        let tools_call = self.tools_call == Some(method);
        let recordings = self.entry(method);
        recordings.answered = true;
        if !first {
            return;
        }
        if recordings.fps.len() < COMPARED {
            recordings.fps.push(fp as u32);
        }
        if tools_call {
            let name = tool_name(fp_text);
            let fps = match recordings.tools.get_mut(&*name) {
                Some(fps) => fps,
                None => recordings.tools.entry(name.into()).or_default(),
            };
            if fps.len() < COMPARED {
                fps.push(fp as u32);
            }
        }
    }

    pub(super) fn note_unanswered(&mut self, method: u32) {
        self.entry(method).unanswered = true;
    }

    fn entry(&mut self, method: u32) -> &mut Recordings {
        self.methods[method as usize].get_or_insert_with(Recordings::default)
    }

    /// The catalogue, each method under its name in `names` (the names given to `new`).
    pub(super) fn finish(self, names: &[Arc<str>]) -> Catalogue {
        let methods = names
            .iter()
            .zip(self.methods)
            .filter_map(|(name, recordings)| {
                let mut recordings = recordings?;
                recordings.fps.shrink_to_fit();
                for fps in recordings.tools.values_mut() {
                    fps.shrink_to_fit();
                }
                recordings.tools.shrink_to_fit();
                Some((Arc::clone(name), recordings))
            })
            .collect();
        Catalogue {
            methods,
            answered: self.answered,
        }
    }
}

/// The tool name a `tools/call` fingerprint holds, as the diagnosis compares it:
/// `String(params.name)`. The common form (`tools/call`, name, arguments, one separator each) is
/// read in place; any other (a retry part, a name holding the separator, params that were not an
/// object) is read back the way the diagnosis reads params.
fn tool_name(fp: &str) -> Cow<'_, str> {
    match plain_tool_name(fp) {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(js_string(
            params_from_fingerprint(TOOLS_CALL, fp)
                .as_ref()
                .and_then(|p| p.get("name")),
        )),
    }
}

/// The tool name of a `tools/call` fingerprint in the common form (`tools/call`, the name, an
/// object of arguments, one separator each), read in place; `None` for any other form. In that
/// form the params read back are `{"arguments": …, "name": <this>}`, so this is their `name`.
pub(super) fn plain_tool_name(fp: &str) -> Option<&str> {
    // The separators found with `memchr`: this runs for every recorded call while the index
    // is built, where `split_once` and `contains` cost a searcher each.
    let rest = fp.strip_prefix(TOOLS_CALL)?.strip_prefix('\u{0}')?;
    let cut = memchr::memchr(0, rest.as_bytes())?;
    let (name, args) = (&rest[..cut], &rest[cut + 1..]);
    (args.starts_with('{') && memchr::memchr(0, args.as_bytes()).is_none()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fingerprint::fingerprint;
    use serde_json::json;

    /// `tools/call` params in the common form and in every other: null and absent arguments,
    /// a name holding the separator, a retry part, a name that is no string, no name, params
    /// that are no object.
    fn cases() -> [serde_json::Value; 9] {
        [
            json!({"name": "echo", "arguments": {"x": 1}}),
            json!({"name": "echo", "arguments": null}),
            json!({"name": "echo"}),
            json!({"name": "a\u{0}b", "arguments": {"q": 1}}),
            json!({"name": "a", "arguments": {}, "requestState": "s"}),
            json!({"name": 7, "arguments": {}}),
            json!({"name": "é \"q\"", "arguments": {"k": [1, {"n": null}]}}),
            json!({"arguments": {}}),
            json!(["x"]),
        ]
    }

    #[test]
    fn tool_names_read_in_place_equal_the_params_read_back() {
        for params in cases() {
            let fp = fingerprint(TOOLS_CALL, Some(&params));
            let slow = js_string(
                params_from_fingerprint(TOOLS_CALL, &fp)
                    .as_ref()
                    .and_then(|p| p.get("name")),
            );
            assert_eq!(tool_name(&fp), slow, "{params}");
        }
        assert_eq!(
            tool_name(&fingerprint(TOOLS_CALL, None)),
            js_string(None),
            "absent params"
        );
    }

    /// Where the in-place read answers, it gives the string name the params read back hold
    /// (what the unused-recordings list shows); where it does not, the read-back decides.
    #[test]
    fn plain_tool_names_are_the_string_names_read_back() {
        let mut read_in_place = 0;
        for params in cases() {
            let fp = fingerprint(TOOLS_CALL, Some(&params));
            let read_back = params_from_fingerprint(TOOLS_CALL, &fp)
                .and_then(|p| p.get("name").and_then(|n| n.as_str().map(str::to_owned)));
            if let Some(name) = plain_tool_name(&fp) {
                read_in_place += 1;
                assert_eq!(Some(name.to_owned()), read_back, "{params}");
            }
        }
        assert!(read_in_place >= 3, "the common form is read in place");
    }
}
