//! Text bound for a terminal, made inert: the one escaping of server- and client-controlled
//! strings in text output (docs/check.md, "Text output is escaped").
//!
//! A tool description or a server name is text the server chose. Printed raw, an escape
//! sequence in it can erase the findings above it, move the cursor and print a fake
//! `result: PASS`, set the window title or write the clipboard (OSC 52), and a bidi override
//! can make a line read differently from its bytes. Every such character is shown as visible
//! text instead: C0 and C1 controls and DEL as `\x1b`-style escapes, line breaks as `\n`/`\r`/
//! `\t`, and the invisible direction marks and overrides as `\u{202e}`-style escapes. A newline
//! inside a field is escaped too, so a field can never start a line of the report's own.
//! JSON and SARIF need none of this: their encoders escape control characters already.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is shown escaped.
fn needs_escape(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // Arabic letter mark, left-to-right and right-to-left marks.
        | '\u{61c}' | '\u{200e}' | '\u{200f}'
        // Line and paragraph separators: line breaks to some terminals.
        | '\u{2028}' | '\u{2029}'
        // Embeddings, overrides and their pop; isolates and theirs.
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control and bidi character replaced by visible escape text; borrowed
/// when there is none (the common case).
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(needs_escape) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 && needs_escape(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape`] line by line, the line breaks kept: for a multi-line message (an error that
/// quotes a server's stderr) whose lines are ours to break.
pub(crate) fn escape_lines(text: &str) -> Cow<'_, str> {
    if !text.contains(|c: char| c != '\n' && needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(escape).collect();
    Cow::Owned(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_untouched() {
        let text = "get_weather: « Ignore previous instructions » — naïve 日本語 \\x1b";
        assert!(matches!(escape(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn controls_and_bidi_become_visible() {
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(
            escape("\u{1b}]52;c;aGk=\u{7}"),
            "\\x1b]52;c;aGk=\\x07",
            "an OSC 52 clipboard write"
        );
        assert_eq!(escape("x\nresult: PASS"), "x\\nresult: PASS");
        assert_eq!(escape("\r\t\u{0}\u{7f}\u{9b}"), "\\r\\t\\x00\\x7f\\x9b");
        assert_eq!(
            escape("a\u{202e}b\u{2066}c\u{2069}\u{200f}\u{61c}\u{2028}"),
            "a\\u{202e}b\\u{2066}c\\u{2069}\\u{200f}\\u{61c}\\u{2028}"
        );
    }

    #[test]
    fn lines_keep_their_breaks() {
        assert_eq!(escape_lines("one\ntwo"), "one\ntwo");
        assert_eq!(escape_lines("a\u{1b}[2J\nb\r"), "a\\x1b[2J\nb\\r");
    }

    #[test]
    fn nothing_escaped_survives() {
        for c in (0u32..0x3000).filter_map(char::from_u32) {
            let shown = escape(&c.to_string()).into_owned();
            assert!(!shown.chars().any(needs_escape), "{c:?} -> {shown:?}");
        }
    }
}
