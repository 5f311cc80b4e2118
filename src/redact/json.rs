//! A strict, allocation-light walk over JSON text that reports every scalar value with its byte
//! span, the key context it sits under and (on request) its dotted path. The tokens are read by
//! [`crate::json::token`]; what is redaction's own here is the walk: key contexts and paths.
//!
//! Redaction works on the text rather than on a parsed tree so that a frame keeps every byte it
//! was received with except the secrets themselves: numbers keep their spelling, members their
//! order and spacing. The walk is iterative (an explicit stack), so depth is bounded by memory,
//! not by the thread's stack, and it refuses anything that is not one JSON value.

use std::ops::Range;

#[cfg(test)]
use super::keys::KeyRules;
use super::keys::{KeyCtx, is_schema_map};
use crate::json::token::{self, Escapes};

/// The text is not a single JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotJson;

/// A scalar as it appears in the text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar<'t> {
    /// A string: its content between the quotes, still escaped if `escaped`.
    Str { content: &'t str, escaped: bool },
    /// A number, as written.
    Num(&'t str),
    /// An object member's key (its span includes the quotes), still escaped if `escaped`. A
    /// secret can be a key too: a token used as a map key.
    Key { content: &'t str, escaped: bool },
}

impl Scalar<'_> {
    /// The string's value with escapes resolved (a copy only when it had escapes).
    pub(crate) fn string_value(content: &str, escaped: bool) -> std::borrow::Cow<'_, str> {
        if escaped {
            std::borrow::Cow::Owned(token::decode(content))
        } else {
            std::borrow::Cow::Borrowed(content)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
}

#[derive(Clone, Copy)]
struct Level<'t> {
    kind: Kind,
    /// Objects: the current member's key (still escaped if `key_escaped`).
    key: &'t str,
    key_escaped: bool,
    /// Arrays: the current element's index.
    index: usize,
    /// Objects: held under a JSON Schema map key (`properties`, …), so member keys name fields.
    schema_map: bool,
    /// The context the container is held under: array elements inherit it, object members
    /// are sensitive under it whatever their own key.
    ctx: KeyCtx,
}

/// Where a value sits, rendered only when asked (a report needs it for hits, nothing else does).
pub(crate) struct Path<'a, 't> {
    levels: &'a [Level<'t>],
}

impl Path<'_, '_> {
    /// Dotted with `[i]` for elements: `params.arguments.token`, `result.content[0].text`,
    /// `[0].k` under a top-level array; empty for the top-level value.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        for level in self.levels {
            match level.kind {
                Kind::Object => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&Scalar::string_value(level.key, level.key_escaped));
                }
                Kind::Array => {
                    out.push('[');
                    out.push_str(&level.index.to_string());
                    out.push(']');
                }
            }
        }
        out
    }
}

struct Cursor<'t> {
    text: &'t str,
    bytes: &'t [u8],
    i: usize,
    /// The text is known to be valid JSON (a parsed frame): strings are skipped with a vector
    /// search for their closing quote instead of being checked byte by byte.
    trusted: bool,
}

impl<'t> Cursor<'t> {
    fn ws(&mut self) {
        self.i = token::skip_ws(self.bytes, self.i);
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), NotJson> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    /// Reads a string starting at the opening quote; answers its content and whether it has
    /// escapes.
    fn string(&mut self) -> Result<(&'t str, bool), NotJson> {
        let start = self.i;
        let (end, escaped) = if self.trusted && self.peek() == Some(b'"') {
            token::string_end_trusted(self.bytes, start)
        } else {
            token::string_end(self.bytes, start, Escapes::Any)
        }
        .ok_or(NotJson)?;
        self.i = end;
        Ok((&self.text[start + 1..end - 1], escaped))
    }

    fn number(&mut self) -> Result<&'t str, NotJson> {
        let start = self.i;
        self.i = token::number(self.bytes, start).ok_or(NotJson)?.end;
        Ok(&self.text[start..self.i])
    }

    fn literal(&mut self, word: &str) -> Result<(), NotJson> {
        self.i = token::literal_end(self.bytes, self.i, word).ok_or(NotJson)?;
        Ok(())
    }
}

/// Walks one JSON value; `classify` gives the context a member's value gets from its key.
/// `visit(span, scalar, ctx, path)` is called for every string and number
/// value, and for every key (with the context of the object holding it). `trusted` says the text already parsed as JSON (a frame), which lets
/// strings be skipped faster; untrusted text is checked strictly and refused with [`NotJson`]
/// unless it is exactly one JSON value.
pub(crate) fn walk<'t>(
    text: &'t str,
    classify: &dyn Fn(&str) -> KeyCtx,
    trusted: bool,
    mut visit: impl FnMut(Range<usize>, Scalar<'t>, KeyCtx, &Path<'_, 't>),
) -> Result<(), NotJson> {
    let mut c = Cursor {
        text,
        bytes: text.as_bytes(),
        i: 0,
        trusted,
    };
    let mut stack: Vec<Level<'t>> = Vec::new();
    let mut ctx = KeyCtx::NONE;
    c.ws();
    'value: loop {
        // A value is expected here, under `ctx`.
        match c.peek().ok_or(NotJson)? {
            b'{' => {
                c.i += 1;
                c.ws();
                if c.peek() == Some(b'}') {
                    c.i += 1;
                } else {
                    let schema_map = stack.last().is_some_and(|l| {
                        l.kind == Kind::Object
                            && is_schema_map(&Scalar::string_value(l.key, l.key_escaped))
                    });
                    let key_start = c.i;
                    let (key, key_escaped, member_ctx) = member_key(&mut c, classify)?;
                    stack.push(Level {
                        kind: Kind::Object,
                        key,
                        key_escaped,
                        index: 0,
                        schema_map,
                        ctx,
                    });
                    let key_span = key_start..key_start + key.len() + 2;
                    let scalar = Scalar::Key {
                        content: key,
                        escaped: key_escaped,
                    };
                    visit(key_span, scalar, ctx, &Path { levels: &stack });
                    ctx = member(member_ctx, ctx, schema_map);
                    continue 'value;
                }
            }
            b'[' => {
                c.i += 1;
                c.ws();
                if c.peek() == Some(b']') {
                    c.i += 1;
                } else {
                    stack.push(Level {
                        kind: Kind::Array,
                        key: "",
                        key_escaped: false,
                        index: 0,
                        schema_map: false,
                        ctx,
                    });
                    continue 'value;
                }
            }
            b'"' => {
                let start = c.i;
                let (content, escaped) = c.string()?;
                let path = Path { levels: &stack };
                visit(start..c.i, Scalar::Str { content, escaped }, ctx, &path);
            }
            b'-' | b'0'..=b'9' => {
                let start = c.i;
                let n = c.number()?;
                let path = Path { levels: &stack };
                visit(start..c.i, Scalar::Num(n), ctx, &path);
            }
            b't' => c.literal("true")?,
            b'f' => c.literal("false")?,
            b'n' => c.literal("null")?,
            _ => return Err(NotJson),
        }
        // After a value: close containers, or move to the next member or element.
        loop {
            c.ws();
            let Some(level) = stack.last_mut() else {
                return if c.i == c.bytes.len() {
                    Ok(())
                } else {
                    Err(NotJson)
                };
            };
            match (c.peek(), level.kind) {
                (Some(b','), Kind::Object) => {
                    c.i += 1;
                    c.ws();
                    let key_start = c.i;
                    let (key, key_escaped, member_ctx) = member_key(&mut c, classify)?;
                    level.key = key;
                    level.key_escaped = key_escaped;
                    let parent = level.ctx;
                    ctx = member(member_ctx, parent, level.schema_map);
                    let key_span = key_start..key_start + key.len() + 2;
                    let scalar = Scalar::Key {
                        content: key,
                        escaped: key_escaped,
                    };
                    visit(key_span, scalar, parent, &Path { levels: &stack });
                    continue 'value;
                }
                (Some(b','), Kind::Array) => {
                    c.i += 1;
                    c.ws();
                    level.index += 1;
                    ctx = level.ctx;
                    continue 'value;
                }
                (Some(b'}'), Kind::Object) | (Some(b']'), Kind::Array) => {
                    c.i += 1;
                    stack.pop();
                }
                _ => return Err(NotJson),
            }
        }
    }
}

/// The context of a member whose key gave `own`, in an object held under `parent`.
fn member(own: KeyCtx, parent: KeyCtx, schema_map: bool) -> KeyCtx {
    let ctx = own.within(parent);
    if schema_map && own.sensitive {
        ctx.in_schema_map()
    } else {
        ctx
    }
}

/// Reads `"key" :`; returns the key as written and the context its value gets.
fn member_key<'t>(
    c: &mut Cursor<'t>,
    classify: &dyn Fn(&str) -> KeyCtx,
) -> Result<(&'t str, bool, KeyCtx), NotJson> {
    let (content, escaped) = c.string()?;
    let ctx = classify(&Scalar::string_value(content, escaped));
    c.ws();
    c.expect(b':')?;
    c.ws();
    Ok((content, escaped, ctx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalars(text: &str) -> Result<Vec<(String, String, bool)>, NotJson> {
        let keys = KeyRules::default();
        let mut out = Vec::new();
        walk(text, &|k| keys.classify(k), false, |span, s, ctx, path| {
            if !matches!(s, Scalar::Key { .. }) {
                out.push((path.render(), text[span].to_owned(), ctx.sensitive));
            }
        })?;
        // The fast mode agrees with the strict one on valid JSON.
        let mut fast = Vec::new();
        walk(text, &|k| keys.classify(k), true, |span, s, ctx, path| {
            if let Scalar::Key { content, .. } = s {
                assert_eq!(&text[span], format!("\"{content}\""));
            } else {
                fast.push((path.render(), text[span].to_owned(), ctx.sensitive));
            }
        })?;
        assert_eq!(out, fast);
        Ok(out)
    }

    #[test]
    fn paths_and_contexts() {
        let got = scalars(
            r#"{"a":{"token":["x",{"b":"y"}],"n":-1.5e3},"c":[[1,2],[]],"d":true, "e" : null}"#,
        )
        .unwrap();
        let want = [
            ("a.token[0]", "\"x\"", true),
            ("a.token[1].b", "\"y\"", true),
            ("a.n", "-1.5e3", false),
            ("c[0][0]", "1", false),
            ("c[0][1]", "2", false),
        ];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1.as_str(), g.2), w);
        }
        assert_eq!(scalars(r#"[{"k":"v"}]"#).unwrap()[0].0, "[0].k");
        assert_eq!(scalars(r#""top""#).unwrap()[0].0, "");
    }

    #[test]
    fn rejects_what_is_not_json() {
        for bad in [
            "",
            "{",
            "{\"a\":1,}",
            "[1 2]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "\"\\x\"",
            "\"\u{1}\"",
            "{} {}",
            "tru",
            "{\"a\":1]",
            "[1}",
            "\"abc",
        ] {
            assert_eq!(scalars(bad), Err(NotJson), "{bad:?}");
        }
        for good in [
            "1",
            " [ ] ",
            "{}",
            "-0.5E+2",
            "\"\\u00e9\\n\"",
            "[[[[[]]]]]",
        ] {
            assert!(scalars(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert!(scalars(&deep).is_ok());
    }
}
