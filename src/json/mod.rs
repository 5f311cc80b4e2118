//! The one JSON text toolkit: reading JSON text in place, writing canonical JSON, and spelling
//! numbers and values the way JavaScript does. Pure (no I/O), and below every other module:
//! `jsonrpc`, `protocol`, `redact`, `replay` and `contract` build on it.
//!
//! | file | what it owns |
//! |---|---|
//! | [`delimiter`] | vectorised searches for the wire's delimiters (newline, quote, backslash), SSE2 on x86-64 |
//! | [`token`] | the tokens of JSON text (whitespace, strings, numbers, literals), shallow walks over valid text, unescaping |
//! | [`scan`] | [`Scanner`]: the strict, allocation-free reader that copies already-canonical text (replay's hot path), and reads an object's members in one validating pass (cassette lines, frames) |
//! | [`node`] | [`Node`]: a JSON value borrowed from its text or from a [`serde_json::Value`] |
//! | [`canonical`] | canonical text: the one key order ([`key_cmp`]), the writer, string escaping |
//! | [`number`] | JavaScript's spelling of numbers |
//! | [`diff`] | the structural diff of two values as JSON Pointer paths (replay's miss diagnosis, `verify`), and pointer removal |
//! | [`stringify`] | `JSON.stringify` and `String(value)` as JavaScript prints them (property order, indentation) |
//!
//! **One key order.** Canonical text sorts object keys by UTF-16 code units: the order of
//! JavaScript's default `Array.prototype.sort()`, so the text is what a JavaScript implementation
//! that sorts `Object.keys()` writes (the reference tool is one; docs/replay.md, *Canonical JSON*,
//! states the rules for users). Replay's fingerprints used UTF-8 byte order
//! before; the two differ only between keys holding U+E000–U+FFFF and keys holding characters
//! above U+FFFF, and since fingerprints are never stored, only whether two texts are equal
//! matters to matching, which any total order answers the same way: no match changed.
//!
//! **Fast paths are proven.** The [`Scanner`] copies canonical text straight through and declines
//! everything else to the parser; [`Scanner::members`] reads cassette lines and frames and
//! leaves to serde_json whatever it cannot decide as serde_json would; the vectorised searches
//! stand in for plain loops. Property tests
//! beside each hold them equal to the slow path (serde_json, a byte-by-byte scan) on generated and
//! damaged input.

pub(crate) mod canonical;
pub(crate) mod delimiter;
pub(crate) mod diff;
pub(crate) mod node;
pub(crate) mod number;
pub(crate) mod scan;
pub(crate) mod stringify;
pub(crate) mod token;

pub(crate) use canonical::{key_cmp, quote, stable_stringify};
pub(crate) use node::Node;
pub(crate) use number::{js_number, js_number_text};
pub(crate) use scan::{Captured, Scanner};
