//! The `--stdio "<command>"` string, split into a program and its arguments.
//!
//! The rule is the reference's, kept exactly so a command line that worked there works here:
//! whitespace separates words, single or double quotes group (and are removed), and nothing
//! else is special: there are no backslash escapes, no variables, no globbing. A quote that is
//! never closed runs to the end of the string. Empty words vanish, so `""` alone names nothing.

/// Splits a command string into words, honouring single and double quotes.
pub fn tokenize(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for ch in command.chars() {
        match quote {
            Some(open) if ch == open => quote = None,
            Some(_) => current.push(ch),
            None if ch == '"' || ch == '\'' => quote = Some(ch),
            None if is_js_space(ch) => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            None => current.push(ch),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The quote character left open at the end of `command`, if one is: [`tokenize`] would run it
/// to the end of the string, which is never what was meant, so commands refuse it.
pub fn unclosed_quote(command: &str) -> Option<char> {
    let mut quote: Option<char> = None;
    for ch in command.chars() {
        match quote {
            Some(open) if ch == open => quote = None,
            Some(_) => {}
            None if ch == '"' || ch == '\'' => quote = Some(ch),
            None => {}
        }
    }
    quote
}

/// JavaScript's `\s`: Unicode white space plus the byte-order mark, which the reference's
/// tokenizer splits on and Rust's `char::is_whitespace` does not include.
fn is_js_space(ch: char) -> bool {
    ch == '\u{feff}' || (ch.is_whitespace() && ch != '\u{85}')
}

#[cfg(test)]
mod tests {
    use super::{tokenize, unclosed_quote};

    #[test]
    fn an_unclosed_quote_is_found() {
        assert_eq!(unclosed_quote("node \"my server.js"), Some('"'));
        assert_eq!(unclosed_quote("node 'a\"b"), Some('\''));
        assert_eq!(unclosed_quote("node \"a'b\" 'c\"d'"), None);
        assert_eq!(unclosed_quote("node server.js"), None);
    }

    fn words(command: &str) -> Vec<String> {
        tokenize(command)
    }

    #[test]
    fn splits_on_runs_of_whitespace() {
        assert_eq!(words("  npx  -y\tserver\n"), ["npx", "-y", "server"]);
    }

    #[test]
    fn quotes_group_and_are_removed() {
        assert_eq!(
            words(r#"node "my server.js" --name 'a b'"#),
            ["node", "my server.js", "--name", "a b"]
        );
        assert_eq!(words(r#"a"b c"d"#), ["ab cd"]);
        assert_eq!(words(r#"say "it's""#), ["say", "it's"]);
        assert_eq!(words(r#"say 'a "b"'"#), ["say", r#"a "b""#]);
    }

    #[test]
    fn no_backslash_escapes() {
        assert_eq!(words(r#"a\ b "c\"d"#), [r"a\", "b", r"c\d"]);
    }

    #[test]
    fn empty_words_vanish_and_open_quotes_run_to_the_end() {
        assert!(words("").is_empty());
        assert!(words(r#"  "" '' "#).is_empty());
        assert_eq!(words(r#"x "unclosed tail"#), ["x", "unclosed tail"]);
    }

    #[test]
    fn unicode_space_and_bom_separate() {
        assert_eq!(words("a\u{a0}b\u{feff}c\u{2003}d"), ["a", "b", "c", "d"]);
    }
}
