//! User patterns are written in JavaScript's regex syntax (the reference's config files must keep
//! working) and run on the `regex` crate. This module translates one into the other, keeping
//! JavaScript's meaning where the two differ (`\d`, `\w`, `\b` and `\s` are ASCII/JS sets, `.`
//! stops at every JS line terminator, a stray `{` is a literal), and refuses — naming the
//! construct — what the `regex` crate does not have: look-around and backreferences. Those need a
//! backtracking engine, and a backtracking engine is what lets a pattern take exponential time on
//! attacker-controlled text; the `regex` crate runs every pattern it accepts in time linear in the
//! input, which is why `redact --check-config` can prove every accepted pattern safe.

use regex::{Regex, RegexBuilder};

use super::rules::JS_SPACE;

/// Compiled-program bound for one user pattern; keeps memory and per-byte cost bounded.
const SIZE_LIMIT: usize = 8 * 1024 * 1024;

/// Why a pattern cannot be used. The message never quotes the pattern (it may spell a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PatternError(pub String);

/// Compiles a JavaScript-syntax pattern with flags already validated to be a subset of `iu`.
pub(super) fn compile(source: &str, case_insensitive: bool) -> Result<Regex, PatternError> {
    let translated = translate(source)?;
    if let Err(e) = regex_syntax::ast::parse::Parser::new().parse(&translated) {
        return Err(PatternError(e.kind().to_string()));
    }
    RegexBuilder::new(&translated)
        .case_insensitive(case_insensitive)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => PatternError(format!(
                "the compiled pattern is larger than the {limit}-byte limit; simplify it (large counted repetitions such as {{1000}} multiply its size)"
            )),
            other => PatternError(
                other
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or("invalid pattern")
                    .trim()
                    .trim_start_matches("error: ")
                    .to_owned(),
            ),
        })
}

fn unsupported(construct: &str) -> PatternError {
    PatternError(format!(
        "it uses {construct}, which this build does not support: its regex engine guarantees linear-time matching on any input, and that guarantee excludes look-around and backreferences. Rewrite the pattern without it (match the surrounding text instead, or use a character class)"
    ))
}

/// JavaScript regex source → `regex` crate source with the same meaning.
pub(super) fn translate(source: &str) -> Result<String, PatternError> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 16);
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            let Some(&e) = chars.get(i + 1) else {
                return Err(PatternError(
                    "the pattern ends with a lone backslash".into(),
                ));
            };
            i += 2;
            match e {
                'd' => out.push_str(if in_class { "0-9" } else { "[0-9]" }),
                'D' => out.push_str("[^0-9]"),
                'w' => out.push_str(if in_class {
                    "0-9A-Za-z_"
                } else {
                    "[0-9A-Za-z_]"
                }),
                'W' => out.push_str("[^0-9A-Za-z_]"),
                's' => {
                    if in_class {
                        out.push_str(JS_SPACE);
                    } else {
                        out.push('[');
                        out.push_str(JS_SPACE);
                        out.push(']');
                    }
                }
                'S' => {
                    out.push_str("[^");
                    out.push_str(JS_SPACE);
                    out.push(']');
                }
                'b' => out.push_str(if in_class { r"\x08" } else { r"(?-u:\b)" }),
                'B' => out.push_str(if in_class { "B" } else { r"(?-u:\B)" }),
                '1'..='9' => return Err(unsupported(&format!("a backreference (\\{e})"))),
                'k' if chars.get(i) == Some(&'<') => {
                    return Err(unsupported("a named backreference (\\k<…>)"));
                }
                '0' => out.push_str(r"\x00"),
                'c' => match chars.get(i) {
                    Some(&l) if l.is_ascii_alphabetic() => {
                        out.push_str(&format!(r"\x{{{:X}}}", (l as u32) % 32));
                        i += 1;
                    }
                    _ => out.push_str(r"\\c"),
                },
                'x' => {
                    let hex: String = chars.iter().skip(i).take(2).collect();
                    if hex.len() == 2 && hex.chars().all(|h| h.is_ascii_hexdigit()) {
                        out.push_str(&format!(r"\x{{{hex}}}"));
                        i += 2;
                    } else {
                        out.push('x');
                    }
                }
                'u' => {
                    if chars.get(i) == Some(&'{') {
                        let close = chars[i..].iter().position(|&ch| ch == '}');
                        let hex: Option<String> =
                            close.map(|n| chars[i + 1..i + n].iter().collect());
                        match (close, hex) {
                            (Some(n), Some(h))
                                if !h.is_empty() && h.chars().all(|d| d.is_ascii_hexdigit()) =>
                            {
                                out.push_str(&format!(r"\x{{{h}}}"));
                                i += n + 1;
                            }
                            _ => out.push('u'),
                        }
                    } else {
                        let hex: String = chars.iter().skip(i).take(4).collect();
                        if hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()) {
                            let unit = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                            if (0xD800..=0xDFFF).contains(&unit) {
                                return Err(PatternError(
                                    "a \\u escape names a UTF-16 surrogate; write the character, or \\u{…} with its code point".into(),
                                ));
                            }
                            out.push_str(&format!(r"\x{{{hex}}}"));
                            i += 4;
                        } else {
                            out.push('u');
                        }
                    }
                }
                'p' | 'P' => {
                    out.push('\\');
                    out.push(e);
                }
                'f' => out.push_str(r"\x0C"),
                'v' => out.push_str(r"\x0B"),
                'n' => out.push_str(r"\n"),
                'r' => out.push_str(r"\r"),
                't' => out.push_str(r"\t"),
                _ if e.is_ascii_punctuation() => push_literal(&mut out, e),
                // JavaScript reads any other escaped character as itself (`\a` is `a`), where the
                // regex crate gives some of them a meaning (`\A`, `\z`).
                _ => push_literal(&mut out, e),
            }
            continue;
        }
        if in_class {
            match c {
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                // Nested classes and set operators exist here, not in JavaScript.
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                }
                '-' if chars.get(i + 1) == Some(&'-') => out.push_str(r"\-"),
                _ => out.push(c),
            }
            i += 1;
            continue;
        }
        match c {
            '[' => {
                if chars.get(i + 1) == Some(&'^') && chars.get(i + 2) == Some(&']') {
                    out.push_str("(?s:.)");
                    i += 3;
                    continue;
                }
                in_class = true;
                out.push('[');
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                // A `]` right after `[` or `[^` closes an empty class in JavaScript.
                if chars.get(i + 1) == Some(&']') {
                    return Err(PatternError(
                        "an empty character class ([] or [^]) other than [^] is not supported"
                            .into(),
                    ));
                }
            }
            '(' if chars.get(i + 1) == Some(&'?') => {
                let next: String = chars.iter().skip(i + 2).take(2).collect();
                if next.starts_with('=') {
                    return Err(unsupported("a look-ahead ((?=…))"));
                }
                if next.starts_with('!') {
                    return Err(unsupported("a negative look-ahead ((?!…))"));
                }
                if next == "<=" {
                    return Err(unsupported("a look-behind ((?<=…))"));
                }
                if next == "<!" {
                    return Err(unsupported("a negative look-behind ((?<!…))"));
                }
                out.push('(');
            }
            '.' => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '{' => {
                // A quantifier only when it reads {n}, {n,} or {n,m}; otherwise a literal brace.
                let rest: String = chars[i..].iter().take(32).collect();
                let quantifier = rest.find('}').filter(|&end| {
                    let body = &rest[1..end];
                    let mut parts = body.splitn(2, ',');
                    let lo = parts.next().unwrap_or("");
                    let hi = parts.next();
                    !lo.is_empty()
                        && lo.bytes().all(|b| b.is_ascii_digit())
                        && hi.is_none_or(|h| h.bytes().all(|b| b.is_ascii_digit()))
                });
                match quantifier {
                    Some(end) => {
                        out.push_str(&rest[..=end]);
                        i += rest[..=end].chars().count();
                        continue;
                    }
                    None => out.push_str(r"\{"),
                }
            }
            '}' => out.push_str(r"\}"),
            ']' => out.push_str(r"\]"),
            _ => out.push(c),
        }
        i += 1;
    }
    if in_class {
        return Err(PatternError("a character class is not closed".into()));
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
    }
    out.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(src: &str, text: &str) -> Option<String> {
        compile(src, false)
            .unwrap()
            .find(text)
            .map(|x| x.as_str().to_owned())
    }

    #[test]
    fn javascript_meanings_kept() {
        assert_eq!(m(r"\d+", "٣45"), Some("45".into()));
        assert_eq!(m(r"\bab\b", "éab ab"), Some("ab".into()));
        assert_eq!(m(r"a.c", "a\rc abc"), Some("abc".into()));
        assert_eq!(m(r"x{", "ax{"), Some("x{".into()));
        assert_eq!(m(r"a{2}", "aaa"), Some("aa".into()));
        assert_eq!(m(r"[a[]+", "x[a["), Some("[a[".into()));
        assert_eq!(m(r"\/\-\a", "/-a"), Some("/-a".into()));
        assert_eq!(m(r"[^]", "\n"), Some("\n".into()));
        assert_eq!(m(r"\u0041\x42\u{43}", "ABC"), Some("ABC".into()));
        assert_eq!(
            m(r"ACME-[A-Z0-9-]{10,}", "ACME-NOT-A-REAL-00"),
            Some("ACME-NOT-A-REAL-00".into())
        );
        assert_eq!(m(r"(?<year>\d{4})", "in 2024"), Some("2024".into()));
        assert!(compile("acme-[a-z]+", true).unwrap().is_match("ACME-X"));
    }

    #[test]
    fn backtracking_constructs_named() {
        for (src, what) in [
            ("a(?=b)", "look-ahead"),
            ("a(?!b)", "negative look-ahead"),
            ("(?<=x)a", "look-behind"),
            ("(?<!x)a", "negative look-behind"),
            (r"(a)\1", "backreference (\\1)"),
            (r"(?<n>a)\k<n>", "named backreference"),
        ] {
            let e = compile(src, false).unwrap_err();
            assert!(e.0.contains(what), "{src}: {}", e.0);
            assert!(e.0.contains("linear-time"), "{}", e.0);
        }
    }

    #[test]
    fn syntax_errors_do_not_quote_the_pattern() {
        let e = compile("SECRETVALUE([", false).unwrap_err();
        assert!(!e.0.contains("SECRETVALUE"), "{}", e.0);
        let e = compile("(SECRETVALUE", false).unwrap_err();
        assert!(!e.0.contains("SECRETVALUE"), "{}", e.0);
        assert!(compile("a{1000}{1000}{1000}", false).is_err());
    }
}
