//! The server command line (docs/redaction.md, "Raw lines, command and URL"): values of
//! sensitive flags (`--api-key=X`, `--api-key X`, `-p X` is not one: only names the key rules
//! call sensitive) and `NAME=value` assignments with a sensitive name are secrets whatever they
//! look like; every other argument goes through the shape rules.
//!
//! A flag's value is taken whatever its length: its position says what it is, so there is no
//! prose to protect from a false positive. A value a shape rule recognises keeps that rule's
//! placeholder (`--token=ghp_…` stays `[REDACTED:github:…]`, as before this rule existed).

use super::echo::Echoes;
use super::placeholder::{KEYCTX, contains_placeholder, placeholder};
use super::walk::{Inner, no_path};

/// What an argument says about itself.
enum Arg<'a> {
    /// `--name=value` or `NAME=value`: the name and where the value starts.
    Assign(&'a str, usize),
    /// `--name` (or `-name`) alone: the next argument may be its value.
    Flag(&'a str),
    Other,
}

fn classify(arg: &str) -> Arg<'_> {
    let dashes = arg.bytes().take_while(|b| *b == b'-').count();
    let body = &arg[dashes..];
    let name_len = body
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    let starts_alpha = body
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !starts_alpha || dashes > 2 {
        return Arg::Other;
    }
    let name = &body[..name_len];
    match body.as_bytes().get(name_len) {
        Some(b'=') if dashes > 0 || !name.contains(['-', '.']) => {
            Arg::Assign(name, dashes + name_len + 1)
        }
        None if dashes > 0 => Arg::Flag(name),
        _ => Arg::Other,
    }
}

impl Inner {
    /// Redacts each argument; `None` when nothing changed. `hit` gets the argument's index.
    pub(super) fn command(
        &self,
        args: &[String],
        mut echoes: Option<&mut Echoes>,
        hit: &mut dyn FnMut(usize, &str, &str),
    ) -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::with_capacity(args.len());
        let mut changed = false;
        let mut value_next = false;
        for (i, arg) in args.iter().enumerate() {
            let taking = std::mem::replace(&mut value_next, false);
            let (prefix, value) = match classify(arg) {
                _ if taking && !arg.starts_with('-') => (0, arg.as_str()),
                Arg::Assign(name, at) if self.keys.classify(name).sensitive => (at, &arg[at..]),
                Arg::Flag(name) => {
                    value_next = self.keys.classify(name).sensitive;
                    (arg.len(), "")
                }
                _ => (arg.len(), ""),
            };
            let secret_value =
                !value.is_empty() && !contains_placeholder(value) && !self.allow.contains(value);
            let mut learned: Vec<(String, String)> = Vec::new();
            let mut note = |r: &str, s: &str, _: &super::walk::PathFn<'_>| {
                learned.push((r.to_owned(), s.to_owned()));
            };
            let new = if secret_value {
                let shaped = self.text(value, &mut note);
                let replaced = shaped.unwrap_or_else(|| {
                    note(KEYCTX, value, &no_path);
                    placeholder(KEYCTX, value)
                });
                Some(format!("{}{replaced}", &arg[..prefix]))
            } else {
                self.text(arg, &mut note)
            };
            for (rule, secret) in &learned {
                hit(i, rule, secret);
                if let Some(e) = echoes.as_deref_mut() {
                    e.learn(rule, secret);
                }
            }
            out.push(new.unwrap_or_else(|| arg.clone()));
            changed |= out[i] != *arg;
        }
        // Echoes last, once every argument taught the set what it holds: `--token X` then a
        // `--header "x-token: X"` later in the line.
        if let Some(e) = echoes {
            for (i, arg) in out.iter_mut().enumerate() {
                if let Some(new) = e.apply(arg, &mut |r, s| hit(i, r, s)) {
                    *arg = new;
                    changed = true;
                }
            }
        }
        changed.then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::redact::{Echoes, Redactor, placeholder};

    fn run(args: &[&str]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let mut e = Echoes::new();
        Redactor::builtin().redact_command(&args, &mut e).0
    }

    #[test]
    fn sensitive_flags_and_assignments() {
        let ph = |s: &str| placeholder("keyctx", s);
        assert_eq!(
            run(&[
                "srv",
                "--api-key=abc",
                "--token",
                "hunter2-x",
                "API_TOKEN=zz9"
            ]),
            vec![
                "srv".to_owned(),
                format!("--api-key={}", ph("abc")),
                "--token".to_owned(),
                ph("hunter2-x"),
                format!("API_TOKEN={}", ph("zz9")),
            ]
        );
        assert_eq!(
            run(&["--password", "--verbose", "--port", "8080", "PATH=/usr/bin"]),
            vec!["--password", "--verbose", "--port", "8080", "PATH=/usr/bin"]
        );
        assert_eq!(
            run(&["--token=ghp_NOTAREALTOKENFORTESTSONLY0000000000"]),
            vec![format!(
                "--token={}",
                placeholder("github", "ghp_NOTAREALTOKENFORTESTSONLY0000000000")
            )]
        );
        // An echo later in the line.
        let out = run(&[
            "--secret",
            "correct-horse-9",
            "--header",
            "x: correct-horse-9",
        ]);
        assert_eq!(out[3], format!("x: {}", ph("correct-horse-9")));
        // Idempotent.
        let again = run(&out.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(again, out);
    }
}
