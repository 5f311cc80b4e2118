//! The order tools are written in: an approximation of JavaScript's `String.prototype.localeCompare`
//! under ICU's root collation, which is what the reference sorts snapshot tools with.
//!
//! Real ICU collation needs tables we do not carry. Tool names are almost always ASCII
//! (`[a-zA-Z0-9_.-]` is the recommended charset), and for ASCII the root collation is simple to
//! state: compare the strings character by character on a *primary* weight where punctuation
//! sorts before digits and digits before letters, and letters compare without case; only when
//! the primary keys are equal does case decide (lowercase first, as ICU's tertiary level
//! does); and only then plain code-point order, so the order is total. Outside ASCII we fall
//! back to comparing the lowercased code points after every ASCII letter, which keeps the order
//! deterministic but does not fold accents as ICU would (`é` sorts after `z`, not beside `e`).
//!
//! The order only decides how a snapshot is *written*: reading and diffing match tools by name,
//! so a file sorted by another collation is read exactly the same.

use std::cmp::Ordering;

/// ICU root order of the ASCII punctuation and symbols (whitespace first), as far as tool names
/// can contain them. Anything not listed sorts after these and before digits.
const PUNCTUATION: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// Primary weight of one character: class first, then position in class.
fn primary(c: char) -> (u8, u32) {
    if c.is_ascii_alphabetic() {
        return (3, u32::from(c.to_ascii_lowercase()));
    }
    if c.is_ascii_digit() {
        return (2, u32::from(c));
    }
    if c.is_ascii() {
        return match PUNCTUATION.find(c) {
            Some(at) => (0, at as u32),
            None => (1, u32::from(c)),
        };
    }
    let lower = c.to_lowercase().next().unwrap_or(c);
    (4, u32::from(lower))
}

/// Tertiary weight: lowercase before uppercase.
fn tertiary(c: char) -> u8 {
    u8::from(c.is_uppercase())
}

/// Compares two names the way the snapshot writer orders tools.
pub(crate) fn locale_cmp(a: &str, b: &str) -> Ordering {
    let primary_order = a.chars().map(primary).cmp(b.chars().map(primary));
    if primary_order != Ordering::Equal {
        return primary_order;
    }
    let tertiary_order = a.chars().map(tertiary).cmp(b.chars().map(tertiary));
    if tertiary_order != Ordering::Equal {
        return tertiary_order;
    }
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        v.sort_by(|a, b| locale_cmp(a, b));
        v
    }

    #[test]
    fn case_insensitive_then_lowercase_first() {
        assert_eq!(
            sorted(&["b", "B", "a", "A", "Zeta", "alpha"]),
            ["a", "A", "alpha", "b", "B", "Zeta"]
        );
    }

    #[test]
    fn punctuation_before_digits_before_letters() {
        assert_eq!(
            sorted(&["get_sum", "get-sum", "get2", "getsum", "get.sum"]),
            ["get_sum", "get-sum", "get.sum", "get2", "getsum"]
        );
        // A prefix sorts first.
        assert_eq!(sorted(&["echo-all", "echo"]), ["echo", "echo-all"]);
    }

    #[test]
    fn reference_fixture_order_is_reproduced() {
        let names = [
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "gzip-file-as-resource",
            "simulate-research-query",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-long-running-operation",
        ];
        let mut shuffled: Vec<&str> = names.iter().rev().copied().collect();
        shuffled.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(shuffled, names);
    }

    #[test]
    fn total_and_deterministic_outside_ascii() {
        assert_eq!(locale_cmp("é", "é"), Ordering::Equal);
        assert_eq!(locale_cmp("z", "é"), Ordering::Less);
        assert_ne!(locale_cmp("Σ", "σ"), Ordering::Equal);
    }
}
