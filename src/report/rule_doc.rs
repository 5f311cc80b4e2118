//! A rule's documentation, written in a small Markdown subset, laid out for a terminal
//! (`rules <ID>`, docs/cli.md "`rules`").
//!
//! The subset is what the rule docs use: paragraphs separated by a blank line, `- ` list
//! items, `**strong**`, `*emphasis*` and `` `code` ``. The first paragraph, a line of strong
//! text, is the heading. Markers are removed and paragraphs are wrapped to the width given;
//! with colour the heading is bold and underlined, strong text bold, emphasis italic and code
//! cyan. Without colour, code keeps its backticks, so `get weather` still reads as one name.

use super::style::{Palette, Tone};

/// `markdown` laid out in `width` columns, ending with a newline.
pub(crate) fn render(markdown: &str, palette: Palette, width: usize) -> String {
    let width = width.max(20);
    let mut out = String::new();
    for (n, paragraph) in markdown.trim().split("\n\n").enumerate() {
        let paragraph = paragraph.trim();
        if paragraph.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        let items = list_items(paragraph);
        if n == 0 && items.is_none() {
            // The heading: one style throughout, whatever its markers said.
            let heading: Vec<(String, Option<Tone>)> = runs(paragraph, Palette::PLAIN)
                .into_iter()
                .map(|(text, _)| (text, Some(Tone::Heading)))
                .collect();
            wrap(&mut out, &heading, palette, width, "", "");
            continue;
        }
        match items {
            Some(items) => {
                for item in items {
                    wrap(
                        &mut out,
                        &runs(&item, palette),
                        palette,
                        width,
                        "  - ",
                        "    ",
                    );
                }
            }
            None => wrap(&mut out, &runs(paragraph, palette), palette, width, "", ""),
        }
    }
    out
}

/// The items of a paragraph that is a list (every line starts a `- ` or `* ` item or continues
/// one), each item's lines joined; `None` for prose.
fn list_items(paragraph: &str) -> Option<Vec<String>> {
    let mut items: Vec<String> = Vec::new();
    for line in paragraph.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
            items.push(rest.to_owned());
        } else {
            let last = items.last_mut()?;
            last.push(' ');
            last.push_str(line);
        }
    }
    Some(items)
}

/// The text of a paragraph as runs of one style each, markers removed.
fn runs(text: &str, palette: Palette) -> Vec<(String, Option<Tone>)> {
    let mut runs: Vec<(String, Option<Tone>)> = Vec::new();
    let mut current = String::new();
    let mut strong = false;
    let mut emphasis = false;
    let mut chars = text.chars().peekable();
    let flush = |runs: &mut Vec<(String, Option<Tone>)>, current: &mut String, tone| {
        if !current.is_empty() {
            runs.push((std::mem::take(current), tone));
        }
    };
    let tone = |strong: bool, emphasis: bool| match (strong, emphasis) {
        (true, _) => Some(Tone::Strong),
        (false, true) => Some(Tone::Emphasis),
        (false, false) => None,
    };
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                // Code runs to the next backtick; an unclosed one is text.
                let rest: String = chars.clone().collect();
                match rest.find('`') {
                    Some(end) => {
                        flush(&mut runs, &mut current, tone(strong, emphasis));
                        let code = &rest[..end];
                        let shown = if palette.is_on() {
                            code.to_owned()
                        } else {
                            format!("`{code}`")
                        };
                        runs.push((shown, Some(Tone::Code)));
                        for _ in 0..=code.chars().count() {
                            chars.next();
                        }
                    }
                    None => current.push(c),
                }
            }
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                flush(&mut runs, &mut current, tone(strong, emphasis));
                strong = !strong;
            }
            '*' if emphasis || chars.peek().is_some_and(|n| !n.is_whitespace()) => {
                flush(&mut runs, &mut current, tone(strong, emphasis));
                emphasis = !emphasis;
            }
            '\n' => current.push(' '),
            c => current.push(c),
        }
    }
    flush(&mut runs, &mut current, tone(strong, emphasis));
    runs
}

/// Lays out `runs` greedily in `width` columns: `first` before the first line, `rest` before
/// the others. A word longer than a line gets a line of its own.
fn wrap(
    out: &mut String,
    runs: &[(String, Option<Tone>)],
    palette: Palette,
    width: usize,
    first: &str,
    rest: &str,
) {
    // Words as pieces of styled text; a word may span runs (`**Why**.`).
    let mut words: Vec<Vec<(&str, Option<Tone>)>> = vec![Vec::new()];
    for (text, tone) in runs {
        let mut parts = text.split(' ').peekable();
        while let Some(part) = parts.next() {
            if !part.is_empty() {
                words.last_mut().expect("never empty").push((part, *tone));
            }
            if parts.peek().is_some() && !words.last().expect("never empty").is_empty() {
                words.push(Vec::new());
            }
        }
    }
    // Lines of styled pieces; a space between two pieces of one style takes that style, so a
    // styled phrase is painted once, not word by word.
    let mut lines: Vec<Vec<(String, Option<Tone>)>> = vec![Vec::new()];
    let mut column = first.chars().count();
    for word in words.iter().filter(|w| !w.is_empty()) {
        let len: usize = word.iter().map(|(t, _)| t.chars().count()).sum();
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() {
            if column + 1 + len > width {
                lines.push(Vec::new());
                column = rest.chars().count();
            } else {
                let before = line.last().and_then(|(_, tone)| *tone);
                let space_tone = if before == word[0].1 { before } else { None };
                push_piece(line, " ", space_tone);
                column += 1;
            }
        }
        let line = lines.last_mut().expect("never empty");
        for (text, tone) in word {
            push_piece(line, text, *tone);
        }
        column += len;
    }
    for (n, line) in lines.iter().enumerate() {
        out.push_str(if n == 0 { first } else { rest });
        for (text, tone) in line {
            match tone {
                Some(tone) => out.push_str(&palette.paint(*tone, text)),
                None => out.push_str(text),
            }
        }
        out.push('\n');
    }
}

/// Appends `text` to the line, into the last piece when it has the same style.
fn push_piece(line: &mut Vec<(String, Option<Tone>)>, text: &str, tone: Option<Tone>) {
    match line.last_mut() {
        Some((last, last_tone)) if *last_tone == tone => last.push_str(text),
        _ => line.push((text.to_owned(), tone)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
**CAS-X001 — a rule** (shape, error)

**What it flags.** A `get weather` name, and *emphasis* too, in a sentence long enough to wrap \
at forty columns.

- one item
- two `items`";

    #[test]
    fn plain_layout_drops_markers_and_wraps() {
        let text = render(DOC, Palette::PLAIN, 40);
        assert_eq!(
            text,
            "CAS-X001 — a rule (shape, error)\n\n\
What it flags. A `get weather` name, and\n\
emphasis too, in a sentence long enough\n\
to wrap at forty columns.\n\n  - one item\n  - two `items`\n"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
    }

    #[test]
    fn colour_styles_and_drops_backticks() {
        let text = render(DOC, Palette::new(true), 40);
        assert!(!text.contains('`'), "{text}");
        assert!(!text.contains("**"), "{text}");
        assert!(text.contains("\u{1b}["), "{text}");
        assert!(text.contains("get"), "{text}");
    }

    #[test]
    fn every_rule_doc_renders_without_markers() {
        let docs = crate::lint::catalogue()
            .iter()
            .map(|r| r.doc)
            .chain(crate::inspect::rules::catalogue().iter().map(|r| r.doc));
        for doc in docs {
            let text = render(doc, Palette::PLAIN, 80);
            assert!(!text.contains("**"), "{text}");
            for line in text.lines() {
                assert!(
                    line.chars().count() <= 80 || !line.trim().contains(' '),
                    "{line}"
                );
            }
        }
    }
}
