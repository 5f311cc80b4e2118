//! Request shapes: how a client writes its requests, learnt from the recording.
//!
//! A client that repeats its recorded session sends, request after request, the very bytes it
//! sent while recording — except the id. A shape is a recorded request's text cut into literal
//! pieces around holes: the id, and the parts of the fingerprint that appear in the text verbatim
//! (a tool's name, its canonical arguments). Requests that differ only in those parts share one
//! shape, so the index keeps a handful of shapes, not a copy of every request.
//!
//! Matching a line against the shape of the recording expected next is a few byte comparisons:
//! no parsing, no canonical copy, no hash lookup. It is exact, not a heuristic: a shape is kept for
//! a recording only after checking that filling its holes with that recording's own id and
//! fingerprint parts gives back the recorded text byte for byte; so a line that matches the shape
//! filled with the same parts is the recorded text with another id token in the id's place —
//! valid JSON (the id is checked to be a JSON string or number) with the same method and params,
//! and so the same fingerprint. Anything else falls through to the scanner.

use super::LookupMap;
use super::fingerprint::{PartSpans, scan_params_into};
use super::wire::quick_request;
use crate::json::Scanner;
use crate::jsonrpc::Frame;

/// Recorded requests longer than this are not shaped (their shape would be mostly literal).
const MAX_FRAME: usize = 16 * 1024;
/// Bytes of literal pieces kept over all shapes: a bound on the memory shapes may take when
/// every request looks different (a progress token per request, say).
const MAX_PIECE_BYTES: usize = 1 << 20;
/// Fingerprint parts shorter than this stay literal: a hole for `{}` saves nothing, and a short
/// text is more likely to be found in the wrong place.
const MIN_PART: usize = 3;

/// A recorded request's shape, if it has one: a `u32` with a reserved value for none, so that it
/// sits in the padding of the index's per-request record (an `Option<u32>` would add 8 bytes per
/// recorded request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeRef(u32);

impl ShapeRef {
    pub const NONE: ShapeRef = ShapeRef(u32::MAX);

    pub fn get(self) -> Option<u32> {
        (self != ShapeRef::NONE).then_some(self.0)
    }
}

impl From<Option<u32>> for ShapeRef {
    fn from(n: Option<u32>) -> ShapeRef {
        n.map_or(ShapeRef::NONE, ShapeRef)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Hole {
    /// The request's id token.
    Id,
    /// Part `n` of the fingerprint text (parts are separated by U+0000; part 0 is the method).
    Part(u8),
}

/// A recorded request's text, cut around its holes: `pieces[0] hole[0] pieces[1] … pieces[n]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    pieces: Box<[Box<str>]>,
    holes: Box<[Hole]>,
}

/// The shapes of one recording, each stored once.
#[derive(Debug, Default)]
pub struct Shapes {
    list: Vec<Shape>,
    /// Shapes by the hash of their pieces and holes (see [`Shapes::learn`]).
    known: LookupMap<u64, Vec<u32>>,
    hasher: foldhash::fast::RandomState,
    piece_bytes: usize,
    /// The fingerprint the scanner computes for each recorded request, built here.
    scanned: String,
    /// The shape interned last: a recording's requests mostly repeat the one before, and
    /// comparing with it spares hashing every piece.
    last: Option<u32>,
}

/// Where a hole sits in a recorded request's text.
type Cut = (std::ops::Range<usize>, Hole);

/// A scanned request: where its id stands, and where its fingerprint's parts were read.
type ScannedRequest = (std::ops::Range<usize>, PartSpans);

/// Holes one shape may have: the id and the parts of a `tools/call` fingerprint (method, name,
/// arguments — the method stays literal).
const MAX_CUTS: usize = 3;

impl Shapes {
    /// Learns the shape of a recorded request whose text is `frame` and whose fingerprint text is
    /// `fp`, as computed by the index for it. `None` when the request cannot be matched by shape:
    /// not a request the scanner reads, a fingerprint it does not reproduce, or past the bounds.
    /// Runs once per recorded request, so it allocates only for a shape not seen before.
    pub fn learn(&mut self, frame: &str, fp: &str) -> Option<u32> {
        let scanned = self.scan(frame)?;
        // The fast path would compute exactly this fingerprint for this text.
        if self.scanned != fp {
            return None;
        }
        self.learn_scanned(frame, scanned)
    }

    /// As [`Shapes::learn`], for a request whose fingerprint the index takes from the scanner:
    /// the fingerprint the fast path computes for `frame` (the one the parser computes, where the
    /// scanner gives one: see the property tests) and its shape. `None` when the scanner leaves
    /// the request to the parser. Reads the request once instead of twice. The fingerprint is
    /// the scan's buffer, which stays here for the next request: the caller copies out what it
    /// keeps.
    pub fn fingerprint_and_learn(&mut self, frame: &Frame) -> Option<(&str, Option<u32>)> {
        let text = frame.text();
        let scanned = match self.scan_laid_out(frame) {
            Some(decided) => decided?,
            None => self.scan(text)?,
        };
        let shape = self.learn_scanned(text, scanned);
        Some((&self.scanned, shape))
    }

    /// [`Shapes::scan`] for a frame whose reader noted where its id and params stand (see
    /// [`Frame::layout`]): the reader validated the whole frame and refused repeated envelope
    /// members then, so only the params are read here, from where they stand. `Some(answer)` is
    /// what [`Shapes::scan`] would answer (a property test holds the two equal); `None` when the
    /// layout does not settle it (no layout, no params, the method written with escapes or after
    /// the params, which the one-pass scan declines), and the text is then scanned whole.
    fn scan_laid_out(&mut self, frame: &Frame) -> Option<Option<ScannedRequest>> {
        let text = frame.text();
        let layout = frame.layout()?;
        let (id, params) = (layout.id()?, layout.params()?);
        let method = frame.method_span()?;
        if method.end > params.start {
            return None;
        }
        if text.len() > MAX_FRAME
            || !matches!(
                text.as_bytes().get(id.start),
                Some(b'"' | b'-' | b'0'..=b'9')
            )
        {
            return Some(None);
        }
        self.scanned.clear();
        let mut parts = PartSpans::default();
        let mut scan = Scanner::starting_at(text.get(..params.end)?, params.start);
        let read = scan_params_into(text.get(method)?, &mut scan, &mut self.scanned, &mut parts);
        Some((read.is_some() && scan.at_end()).then_some((id, parts)))
    }

    /// Scans a recorded request into `scanned`, returning where its id stands and where the
    /// fingerprint's parts were read; `None` when the scanner does not compute its fingerprint.
    fn scan(&mut self, frame: &str) -> Option<ScannedRequest> {
        if frame.len() > MAX_FRAME {
            return None;
        }
        self.scanned.clear();
        let quick = quick_request(frame, &mut self.scanned, |_| true)?;
        if !quick.fingerprinted {
            return None;
        }
        let id_start = quick.id.as_ptr() as usize - frame.as_ptr() as usize;
        Some((id_start..id_start + quick.id.len(), quick.parts))
    }

    /// Learns the shape of `frame`, whose id stands at `id` and whose fingerprint parts the
    /// scanner read where `parts` says (each the same bytes as in the fingerprint).
    fn learn_scanned(&mut self, frame: &str, (id, parts): ScannedRequest) -> Option<u32> {
        let mut cuts: [Cut; MAX_CUTS] = std::array::from_fn(|_| (0..0, Hole::Id));
        cuts[0] = (id, Hole::Id);
        let mut n = 1;
        // Each hole is cut where the scanner read its part: the id and the parts are distinct
        // members of the request, so no two cuts overlap.
        for (k, (at, len)) in parts.iter() {
            if len < MIN_PART {
                continue;
            }
            cuts[n] = (at..at + len, Hole::Part(k));
            n += 1;
        }
        let cuts = &mut cuts[..n];
        cuts.sort_by_key(|(range, _)| range.start);
        // Each hole was cut where its own text stands, so filling the shape with this request's
        // id and parts gives its text back (checked in the tests).
        let pieces = || {
            let starts = std::iter::once(0).chain(cuts.iter().map(|(range, _)| range.end));
            let ends = cuts
                .iter()
                .map(|(range, _)| range.start)
                .chain([frame.len()]);
            starts.zip(ends).map(|(start, end)| &frame[start..end])
        };
        let holes = || cuts.iter().map(|(_, hole)| *hole);
        self.intern(pieces, holes)
    }

    /// The number of the shape with these pieces and holes, added when new; `None` past the
    /// bound on piece bytes.
    fn intern<'p, P, H>(&mut self, pieces: impl Fn() -> P, holes: impl Fn() -> H) -> Option<u32>
    where
        P: Iterator<Item = &'p str>,
        H: Iterator<Item = Hole>,
    {
        let same = |shape: &Shape| {
            shape.pieces.iter().map(|p| &**p).eq(pieces())
                && shape.holes.iter().copied().eq(holes())
        };
        // Shapes are stored once each, so an equal last shape is the one the lookup would find.
        if let Some(last) = self.last {
            if self.list.get(last as usize).is_some_and(same) {
                return Some(last);
            }
        }
        let key = {
            use std::hash::{BuildHasher, Hash, Hasher};
            let mut h = self.hasher.build_hasher();
            pieces().for_each(|p| p.hash(&mut h));
            holes().for_each(|hole| hole.hash(&mut h));
            h.finish()
        };
        let candidates = self.known.entry(key).or_default();
        for &c in candidates.iter() {
            if same(&self.list[c as usize]) {
                self.last = Some(c);
                return Some(c);
            }
        }
        let bytes: usize = pieces().map(str::len).sum();
        if self.piece_bytes + bytes > MAX_PIECE_BYTES {
            return None;
        }
        let n = u32::try_from(self.list.len())
            .ok()
            .filter(|&n| n != u32::MAX)?;
        self.piece_bytes += bytes;
        candidates.push(n);
        self.last = Some(n);
        self.list.push(Shape {
            pieces: pieces().map(Box::from).collect(),
            holes: holes().collect(),
        });
        Some(n)
    }

    /// How many shapes are known.
    pub fn count(&self) -> usize {
        self.list.len()
    }

    /// The shapes learnt after the first `from`, for another [`Shapes`] to [`adopt`](Shapes::adopt).
    pub fn since(&self, from: usize) -> Vec<Shape> {
        self.list.get(from..).unwrap_or_default().to_vec()
    }

    /// The number of `shape` here (one learnt by another [`Shapes`], as on another thread),
    /// added when new; `None` past the bound on piece bytes.
    pub fn adopt(&mut self, shape: &Shape) -> Option<u32> {
        self.intern(
            || shape.pieces.iter().map(|p| &**p),
            || shape.holes.iter().copied(),
        )
    }

    pub fn get(&self, n: u32) -> Option<&Shape> {
        self.list.get(n as usize)
    }

    /// Drops what only learning needs, once the index is built.
    pub fn finish(&mut self) {
        self.known = LookupMap::default();
        self.scanned = String::new();
        self.list.shrink_to_fit();
    }
}

impl Shape {
    /// When `line` is this shape with its holes filled from the fingerprint text `fp` and some id
    /// (a JSON string or number), that id's text.
    pub fn matches<'a>(&self, line: &'a str, fp: &str) -> Option<&'a str> {
        let mut id = None;
        let mut at = 0;
        for (piece, hole) in self.pieces.iter().zip(self.holes.iter()) {
            at = expect(line, at, piece)?;
            match *hole {
                Hole::Id => {
                    let rest = line.get(at..)?;
                    if !matches!(rest.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9')) {
                        return None;
                    }
                    let mut scan = Scanner::new(rest);
                    scan.skip()?;
                    id = Some(&rest[..scan.pos()]);
                    at += scan.pos();
                }
                Hole::Part(n) => at = expect(line, at, part(fp, n)?)?,
            }
        }
        let last = self.pieces.last()?;
        (expect(line, at, last)? == line.len()).then_some(id?)
    }

    /// This shape with its holes filled.
    #[cfg(test)]
    fn fill(&self, id: &str, fp: &str) -> String {
        let mut out = String::new();
        for (piece, hole) in self.pieces.iter().zip(self.holes.iter()) {
            out.push_str(piece);
            match *hole {
                Hole::Id => out.push_str(id),
                Hole::Part(n) => out.push_str(part(fp, n).unwrap_or_default()),
            }
        }
        if let Some(last) = self.pieces.last() {
            out.push_str(last);
        }
        out
    }
}

/// The position after `text` when `line` has it at `at`.
fn expect(line: &str, at: usize, text: &str) -> Option<usize> {
    line.as_bytes()
        .get(at..)?
        .starts_with(text.as_bytes())
        .then_some(at + text.len())
}

/// Part `n` of a fingerprint text (byte by byte: fingerprints are short, and this runs per line).
fn part(fp: &str, n: u8) -> Option<&str> {
    let mut start = 0;
    let mut k = 0;
    for (i, &b) in fp.as_bytes().iter().enumerate() {
        if b == 0 {
            if k == n {
                return fp.get(start..i);
            }
            k += 1;
            start = i + 1;
        }
    }
    (k == n).then(|| fp.get(start..)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::fingerprint::fingerprint_text;

    fn fp_of(line: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let params = v.get("params").map(|p| p.to_string());
        fingerprint_text(v["method"].as_str().unwrap(), params.as_deref()).unwrap()
    }

    #[test]
    fn requests_differing_in_id_name_and_arguments_share_a_shape() {
        let mut shapes = Shapes::default();
        let a = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"one"}}}"#;
        let b = r#"{"jsonrpc":"2.0","id":"x-2","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
        let (fa, fb) = (fp_of(a), fp_of(b));
        let sa = shapes.learn(a, &fa).unwrap();
        assert_eq!(shapes.learn(b, &fb), Some(sa), "one shape for both");
        let shape = shapes.get(sa).unwrap();
        assert_eq!(shape.fill("1", &fa), a);
        assert_eq!(shape.fill("\"x-2\"", &fb), b);
        assert_eq!(shape.matches(a, &fa), Some("1"));
        let again = a.replace(r#""id":1"#, r#""id":"abc\"d""#);
        assert_eq!(shape.matches(&again, &fa), Some(r#""abc\"d""#));
        // Another recording's parts, another text, a bad id, trailing bytes: no match.
        assert_eq!(shape.matches(a, &fb), None);
        assert_eq!(shape.matches(&a.replace("one", "two"), &fa), None);
        assert_eq!(
            shape.matches(&a.replace(r#""id":1"#, r#""id":null"#), &fa),
            None
        );
        assert_eq!(
            shape.matches(&a.replace(r#""id":1"#, r#""id":01"#), &fa),
            None
        );
        assert_eq!(
            shape.matches(&a.replace(r#""id":1"#, r#""id":"x"#), &fa),
            None
        );
        assert_eq!(shape.matches(&format!("{a} "), &fa), None);
        assert_eq!(shape.matches(&a[..a.len() - 1], &fa), None);
    }

    #[test]
    fn holes_are_cut_where_the_parts_were_read() {
        // The tool's name is also the `jsonrpc` member's text: the hole is the name's.
        let mut shapes = Shapes::default();
        let a = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"2.0","arguments":{"x":"2.0"}}}"#;
        let b = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"y":1}}}"#;
        let (fa, fb) = (fp_of(a), fp_of(b));
        let sa = shapes.learn(a, &fa).unwrap();
        assert_eq!(shapes.learn(b, &fb), Some(sa), "one shape for both");
        let shape = shapes.get(sa).unwrap();
        assert_eq!(shape.fill("1", &fa), a);
        assert_eq!(shape.fill("2", &fb), b);
        assert_eq!(shape.matches(b, &fb), Some("2"));
        // Arguments written with spaces are not the fingerprint's bytes: they stay literal.
        let spaced = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"y": 1}}}"#;
        let fs = fp_of(spaced);
        if let Some(s) = shapes.learn(spaced, &fs) {
            assert_ne!(s, sa);
            assert_eq!(shapes.get(s).unwrap().fill("3", &fs), spaced);
        }
    }

    #[test]
    fn id_last_and_method_only_requests() {
        let mut shapes = Shapes::default();
        let ts = r#"{"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"}},"jsonrpc":"2.0","id":12}"#;
        let f = fp_of(ts);
        let s = shapes.learn(ts, &f).unwrap();
        assert_eq!(
            shapes
                .get(s)
                .unwrap()
                .matches(&ts.replace("12}", "13}"), &f),
            Some("13")
        );
        let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c"}}"#;
        let f = fp_of(list);
        let s = shapes.learn(list, &f).unwrap();
        assert_eq!(shapes.get(s).unwrap().matches(list, &f), Some("3"));
        assert_eq!(
            shapes
                .get(s)
                .unwrap()
                .matches(&list.replace("\"c\"", "\"d\""), &f),
            None,
            "literal params are compared too"
        );
    }

    /// Request texts of every shape the one-pass scan meets: members in any order (repeated
    /// too), ids of every kind, methods and keys with and without escapes, params canonical or
    /// not, white space or none.
    fn request_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let id = prop_oneof![
            Just("7"),
            Just("-3"),
            Just("1.5"),
            Just("\"a\\\"b\""),
            Just("null"),
            Just("true")
        ];
        let method = prop_oneof![
            Just("\"tools/call\""),
            Just("\"t\\u006fols/call\""),
            Just("\"x/y\"")
        ];
        let params = prop_oneof![
            Just(r#"{"name":"echo","arguments":{"message":"bench-0"}}"#),
            Just(r#"{ "name" : "echo" , "arguments" : { "a" : [1, 2] } }"#),
            Just(r#"{"arguments":{},"name":"e"}"#),
            Just(r#"{"name":"e","arguments":{"b":1,"a":2}}"#),
            Just(r#"{"name":"e\"q","arguments":{"x":1.5}}"#),
            Just(r#"{"name":"a","arguments":{},"requestState":"s"}"#),
            Just(r#"{"name":"ab","arguments":{"k":"v"},"_meta":{"progressToken":1}}"#),
            Just(r#"{"cursor":"c","a":null}"#),
            Just("[1]"),
            Just("null"),
        ];
        let member = prop_oneof![
            Just(("jsonrpc", "\"2.0\"")),
            id.prop_map(|v| ("id", v)),
            method.prop_map(|v| ("method", v)),
            params.prop_map(|v| ("params", v)),
            Just(("z", "[{\"id\":1}]")),
            Just(("p\\u0061rams", "{}")),
        ];
        let ws = prop_oneof![Just(""), Just(" ")];
        (proptest::collection::vec(member, 0..6), ws).prop_map(|(members, ws)| {
            let body: Vec<String> = std::iter::once(("jsonrpc", "\"2.0\""))
                .chain(members)
                .map(|(k, v)| format!("{ws}\"{k}\"{ws}:{ws}{v}"))
                .collect();
            format!("{{{}{ws}}}", body.join(","))
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// Reading only the params where the frame's reader saw them gives the fingerprint and
        /// the shape that scanning the whole text gives, for frames scanned and frames the
        /// cassette reader captured while validating their line.
        #[test]
        fn a_laid_out_request_fingerprints_as_its_whole_text(text in request_text()) {
            let captured = crate::cassette::frame_as_read(&text);
            for frame in [Frame::parse(&text), captured].iter().flatten() {
                let mut whole = Shapes::default();
                let scanned = whole.scan(frame.text());
                let expected = scanned.map(|scanned| {
                    let fp = whole.scanned.clone();
                    let shape = whole.learn_scanned(frame.text(), scanned);
                    (fp, shape.and_then(|s| whole.get(s)).cloned())
                });
                let mut laid_out = Shapes::default();
                let got = laid_out
                    .fingerprint_and_learn(frame)
                    .map(|(fp, shape)| (fp.to_owned(), shape));
                let got = got.map(|(fp, shape)| (fp, shape.and_then(|s| laid_out.get(s)).cloned()));
                proptest::prop_assert_eq!(got, expected, "{}", text);
            }
        }
    }

    #[test]
    fn a_request_read_by_its_layout_skips_the_envelope() {
        let text = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"}}}"#;
        let frame = Frame::parse(text).expect("frame");
        let mut shapes = Shapes::default();
        let scanned = shapes
            .scan_laid_out(&frame)
            .expect("decided")
            .expect("fingerprinted");
        assert_eq!(&text[scanned.0], "3");
        assert_eq!(shapes.scanned, "tools/call\u{0}echo\u{0}{\"m\":\"x\"}");
        // The method after the params: left to the whole scan, which declines it.
        let late = r#"{"jsonrpc":"2.0","id":3,"params":{"name":"echo","arguments":{}},"method":"tools/call"}"#;
        let frame = Frame::parse(late).expect("frame");
        assert!(shapes.scan_laid_out(&frame).is_none());
        assert!(shapes.fingerprint_and_learn(&frame).is_none());
    }

    #[test]
    fn texts_the_scanner_leaves_to_the_parser_are_not_shaped() {
        let mut shapes = Shapes::default();
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"b":1,"a":2}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{},"name":"e"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1.5}}"#,
        ] {
            assert_eq!(shapes.learn(line, &fp_of(line)), None, "{line}");
        }
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
        assert_eq!(shapes.learn(line, "tools/call\u{0}other\u{0}{}"), None);
    }
}
