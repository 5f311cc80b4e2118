//! Colour and counted nouns for the text reports (docs/cli.md, "Colour").
//!
//! Colour is decided once, by `commands` (a terminal, `--color`, `NO_COLOR`), and handed to a
//! renderer as a [`Palette`]; a renderer never looks at the environment. Only our own words
//! are painted (a label, a verdict): text a server or a cassette chose goes through
//! [`super::terminal::escape`] and is never wrapped in escape sequences of its own choosing.
//! A plain palette writes exactly the bytes the uncoloured report always had, so pipes, files
//! and tests see no difference.

use anstyle::{AnsiColor, Style};

/// What a word in a report means, which picks its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// A finding that fails its gate, a failed verdict, a breaking change.
    Fail,
    /// An error-level finding its gate waives (`--lint-fail-on never`).
    Waived,
    Warn,
    Info,
    /// A passing verdict, `[OK]`.
    Pass,
    /// A heading (`rules <ID>`).
    Heading,
    /// Code and ids.
    Code,
    /// Strong text from Markdown.
    Strong,
    /// Emphasis from Markdown.
    Emphasis,
}

impl Tone {
    fn style(self) -> Style {
        match self {
            Tone::Fail => AnsiColor::Red.on_default().bold(),
            Tone::Waived => AnsiColor::Red.on_default(),
            Tone::Warn => AnsiColor::Yellow.on_default(),
            Tone::Info => AnsiColor::Cyan.on_default(),
            Tone::Pass => AnsiColor::Green.on_default().bold(),
            Tone::Heading => Style::new().bold().underline(),
            Tone::Code => AnsiColor::Cyan.on_default(),
            Tone::Strong => Style::new().bold(),
            Tone::Emphasis => Style::new().italic(),
        }
    }
}

/// Whether reports are painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Palette {
    on: bool,
}

impl Palette {
    /// No colour: the report's bytes as they always were.
    pub(crate) const PLAIN: Palette = Palette { on: false };

    pub(crate) fn new(on: bool) -> Palette {
        Palette { on }
    }

    pub(crate) fn is_on(self) -> bool {
        self.on
    }

    /// `text` in the colour of `tone`, or `text` itself when the palette is plain.
    pub(crate) fn paint(self, tone: Tone, text: &str) -> String {
        if !self.on {
            return text.to_owned();
        }
        let style = tone.style();
        format!("{}{text}{}", style.render(), style.render_reset())
    }
}

/// `1 tool`, `2 tools`, `0 tools`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_is_the_text_itself() {
        assert_eq!(Palette::PLAIN.paint(Tone::Fail, "[FAIL]"), "[FAIL]");
    }

    #[test]
    fn painted_text_is_wrapped_and_reset() {
        let painted = Palette::new(true).paint(Tone::Fail, "[FAIL]");
        assert!(painted.starts_with("\u{1b}["), "{painted:?}");
        assert!(painted.contains("[FAIL]"));
        assert!(painted.ends_with("\u{1b}[0m"), "{painted:?}");
    }

    #[test]
    fn counted_nouns() {
        assert_eq!(count(0, "tool", "tools"), "0 tools");
        assert_eq!(count(1, "tool", "tools"), "1 tool");
        assert_eq!(count(2, "entry", "entries"), "2 entries");
    }
}
