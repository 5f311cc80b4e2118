//! ECMAScript regular-expression syntax, `u` flag: what `new RegExp(pattern, "u")` accepts.
//!
//! Ajv compiles every `pattern` and `patternProperties` key that way, so a pattern JavaScript
//! refuses makes the schema uncompilable. This module only *parses*: it never builds a matcher
//! (the `regex` crate is the project's one matching engine, and nothing here needs to match).
//!
//! The parser is a single loop over the pattern with an explicit group stack, so no input can
//! recurse it deep. It follows ECMAScript 2024 without the Annex B relaxations, which do not
//! apply in `u` mode. Two approximations, both on rare inputs: a `Script`/`Script_Extensions`
//! value is accepted when it is spelled like a canonical Unicode name and `regex-syntax` knows
//! the script; a group name's non-ASCII characters are judged by `char::is_alphabetic` /
//! `is_alphanumeric` rather than by ID_Start / ID_Continue. Pattern modifiers (`(?i:…)`) and
//! duplicate group names, both newer than ES2024, are refused.

use std::collections::HashSet;

/// Why `pattern` is not a valid ECMAScript regular expression in `u` mode, if it is not.
pub(super) fn check(pattern: &str) -> Result<(), String> {
    let chars: Vec<char> = pattern.chars().collect();
    let groups = scan_groups(&chars)?;
    Parser {
        chars: &chars,
        at: 0,
        groups,
    }
    .pattern()
}

/// Capturing groups, counted ahead of the parse because a backreference may precede its group.
struct Groups {
    count: usize,
    names: HashSet<String>,
}

/// What the last thing parsed was, for deciding whether a quantifier may follow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Start of an alternative, or just after a quantifier.
    Nothing,
    /// An assertion (`^`, `$`, `\b`, look-around): never quantifiable in `u` mode.
    Assertion,
    Atom,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Plain,
    LookAround,
}

/// One class member: a single code point, or a set (`\d`, `\p{…}`) that cannot bound a range.
enum ClassAtom {
    Char(u32),
    Set,
}

struct Parser<'a> {
    chars: &'a [char],
    at: usize,
    groups: Groups,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at offset {}", self.at))
    }

    fn pattern(&mut self) -> Result<(), String> {
        let mut stack: Vec<Group> = Vec::new();
        let mut last = Last::Nothing;
        while let Some(c) = self.peek() {
            match c {
                '|' => {
                    self.at += 1;
                    last = Last::Nothing;
                }
                '(' => {
                    stack.push(self.group_opening()?);
                    last = Last::Nothing;
                }
                ')' => {
                    let Some(group) = stack.pop() else {
                        return self.fail("unmatched ')'");
                    };
                    self.at += 1;
                    last = match group {
                        Group::Plain => Last::Atom,
                        Group::LookAround => Last::Assertion,
                    };
                }
                '^' | '$' => {
                    self.at += 1;
                    last = Last::Assertion;
                }
                '*' | '+' | '?' => {
                    self.quantifiable(last)?;
                    self.at += 1;
                    self.lazy_suffix();
                    last = Last::Nothing;
                }
                '{' => {
                    if !self.braced_quantifier()? {
                        return self.fail("lone '{'");
                    }
                    self.quantifiable(last)?;
                    self.lazy_suffix();
                    last = Last::Nothing;
                }
                '}' => return self.fail("lone '}'"),
                ']' => return self.fail("lone ']'"),
                '[' => {
                    self.class()?;
                    last = Last::Atom;
                }
                '\\' => {
                    last = self.atom_escape()?;
                }
                _ => {
                    self.at += 1;
                    last = Last::Atom;
                }
            }
        }
        if stack.is_empty() {
            Ok(())
        } else {
            self.fail("unterminated group")
        }
    }

    fn quantifiable(&self, last: Last) -> Result<(), String> {
        match last {
            Last::Atom => Ok(()),
            Last::Nothing | Last::Assertion => self.fail("nothing to repeat"),
        }
    }

    fn lazy_suffix(&mut self) {
        if self.peek() == Some('?') {
            self.at += 1;
        }
    }

    /// `{n}`, `{n,}` or `{n,m}` at the cursor: consumed and `true`; anything else: `false`,
    /// cursor unmoved.
    fn braced_quantifier(&mut self) -> Result<bool, String> {
        let start = self.at;
        self.at += 1;
        let low = self.digits();
        if low.is_empty() {
            self.at = start;
            return Ok(false);
        }
        let mut high = None;
        if self.peek() == Some(',') {
            self.at += 1;
            high = Some(self.digits());
        }
        if self.peek() != Some('}') {
            self.at = start;
            return Ok(false);
        }
        self.at += 1;
        if let Some(high) = high
            && !high.is_empty()
            && decimal_greater(&low, &high)
        {
            self.at = start;
            return self.fail("numbers out of order in {} quantifier");
        }
        Ok(true)
    }

    fn digits(&mut self) -> String {
        let mut digits = String::new();
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            digits.push(c);
            self.at += 1;
        }
        digits
    }

    fn group_opening(&mut self) -> Result<Group, String> {
        self.at += 1;
        if self.peek() != Some('?') {
            return Ok(Group::Plain);
        }
        match (self.peek_at(1), self.peek_at(2)) {
            (Some(':'), _) => {
                self.at += 2;
                Ok(Group::Plain)
            }
            (Some('=' | '!'), _) => {
                self.at += 2;
                Ok(Group::LookAround)
            }
            (Some('<'), Some('=' | '!')) => {
                self.at += 3;
                Ok(Group::LookAround)
            }
            (Some('<'), _) => {
                self.at += 2;
                self.group_name()?;
                Ok(Group::Plain)
            }
            _ => self.fail("invalid group"),
        }
    }

    /// A group name and its closing `>` (the opening `<` already consumed).
    fn group_name(&mut self) -> Result<String, String> {
        let mut name = String::new();
        loop {
            let c = match self.peek() {
                None => return self.fail("unterminated group name"),
                Some('>') => break,
                Some('\\') => {
                    self.at += 1;
                    if self.peek() != Some('u') {
                        return self.fail("invalid escape in group name");
                    }
                    self.at += 1;
                    let code = self.unicode_escape_body()?;
                    char::from_u32(code).map_or_else(|| self.fail("invalid group name"), Ok)?
                }
                Some(c) => {
                    self.at += 1;
                    c
                }
            };
            let fits = if name.is_empty() {
                c == '$' || c == '_' || c.is_alphabetic()
            } else {
                c == '$' || c == '_' || c == '\u{200C}' || c == '\u{200D}' || c.is_alphanumeric()
            };
            if !fits {
                return self.fail("invalid group name");
            }
            name.push(c);
        }
        if name.is_empty() {
            return self.fail("empty group name");
        }
        self.at += 1;
        Ok(name)
    }

    /// An escape outside a class (the cursor on the backslash).
    fn atom_escape(&mut self) -> Result<Last, String> {
        self.at += 1;
        let Some(c) = self.peek() else {
            return self.fail("'\\' at end of pattern");
        };
        match c {
            'b' | 'B' => {
                self.at += 1;
                Ok(Last::Assertion)
            }
            '1'..='9' => {
                let digits = self.digits();
                let count = self.groups.count.to_string();
                if decimal_greater(&digits, &count) {
                    return self.fail("backreference to a group that does not exist");
                }
                Ok(Last::Atom)
            }
            'k' => {
                self.at += 1;
                if self.peek() != Some('<') {
                    return self.fail("invalid named reference");
                }
                self.at += 1;
                let name = self.group_name()?;
                if !self.groups.names.contains(&name) {
                    return self.fail("named reference to a group that does not exist");
                }
                Ok(Last::Atom)
            }
            _ => {
                self.class_or_character_escape(false)?;
                Ok(Last::Atom)
            }
        }
    }

    /// The escapes shared by atoms and class members (the cursor after the backslash).
    /// `in_class` admits `\b` (backspace) and `\-`.
    fn class_or_character_escape(&mut self, in_class: bool) -> Result<ClassAtom, String> {
        let Some(c) = self.peek() else {
            return self.fail("'\\' at end of pattern");
        };
        self.at += 1;
        let code = match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => return Ok(ClassAtom::Set),
            'p' | 'P' => {
                self.property()?;
                return Ok(ClassAtom::Set);
            }
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            'b' if in_class => 0x08,
            '-' if in_class => u32::from('-'),
            'c' => match self.peek() {
                Some(letter) if letter.is_ascii_alphabetic() => {
                    self.at += 1;
                    u32::from(letter) % 32
                }
                _ => return self.fail("invalid control escape"),
            },
            '0' => {
                if self.peek().is_some_and(|next| next.is_ascii_digit()) {
                    return self.fail("invalid decimal escape");
                }
                0
            }
            'x' => {
                let high = self.peek().and_then(|c| c.to_digit(16));
                let low = self.peek_at(1).and_then(|c| c.to_digit(16));
                match (high, low) {
                    (Some(high), Some(low)) => {
                        self.at += 2;
                        high * 16 + low
                    }
                    _ => return self.fail("invalid \\x escape"),
                }
            }
            'u' => self.unicode_escape_body()?,
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => u32::from(c),
            _ => {
                self.at -= 1;
                return self.fail(&format!("invalid escape '\\{c}'"));
            }
        };
        Ok(ClassAtom::Char(code))
    }

    /// After `\u`: `{hex…}` up to U+10FFFF, or four hex digits, a lead surrogate joining the
    /// `\uXXXX` trail surrogate that follows it into one code point (as `u` mode does).
    fn unicode_escape_body(&mut self) -> Result<u32, String> {
        if self.peek() == Some('{') {
            self.at += 1;
            let mut value: u32 = 0;
            let mut any = false;
            while let Some(digit) = self.peek().and_then(|c| c.to_digit(16)) {
                value = value.saturating_mul(16).saturating_add(digit);
                any = true;
                self.at += 1;
            }
            if !any || self.peek() != Some('}') || value > 0x10FFFF {
                return self.fail("invalid \\u{…} escape");
            }
            self.at += 1;
            return Ok(value);
        }
        let Some(lead) = self.four_hex(0) else {
            return self.fail("invalid \\u escape");
        };
        self.at += 4;
        if (0xD800..0xDC00).contains(&lead)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
            && let Some(trail) = self.four_hex(2).filter(|t| (0xDC00..0xE000).contains(t))
        {
            self.at += 6;
            return Ok(0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00));
        }
        Ok(lead)
    }

    fn four_hex(&self, offset: usize) -> Option<u32> {
        (0..4).try_fold(0, |value, i| {
            let digit = self.peek_at(offset + i)?.to_digit(16)?;
            Some(value * 16 + digit)
        })
    }

    /// `{Name}` or `{Name=Value}` after `\p` / `\P`.
    fn property(&mut self) -> Result<(), String> {
        if self.peek() != Some('{') {
            return self.fail("invalid property escape");
        }
        let start = self.at + 1;
        let Some(length) = self.chars[start..].iter().position(|&c| c == '}') else {
            return self.fail("invalid property escape");
        };
        let body: String = self.chars[start..start + length].iter().collect();
        let known = match body.split_once('=') {
            Some(("General_Category" | "gc", value)) => GENERAL_CATEGORIES.contains(&value),
            Some(("Script" | "sc", value)) => known_script(value, "Script"),
            Some(("Script_Extensions" | "scx", value)) => known_script(value, "Script_Extensions"),
            Some(_) => false,
            None => GENERAL_CATEGORIES.contains(&body.as_str()) || BINARY.contains(&body.as_str()),
        };
        if !known {
            return self.fail("invalid property name");
        }
        self.at = start + length + 1;
        Ok(())
    }

    /// A character class (the cursor on `[`).
    fn class(&mut self) -> Result<(), String> {
        let opening = self.at;
        self.at += 1;
        if self.peek() == Some('^') {
            self.at += 1;
        }
        loop {
            match self.peek() {
                None => {
                    self.at = opening;
                    return self.fail("unterminated character class");
                }
                Some(']') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(_) => {}
            }
            let low = self.class_atom()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.at += 1;
                let high = self.class_atom()?;
                match (low, high) {
                    (ClassAtom::Char(low), ClassAtom::Char(high)) if low > high => {
                        return self.fail("range out of order in character class");
                    }
                    (ClassAtom::Char(_), ClassAtom::Char(_)) => {}
                    _ => return self.fail("character class escape as a range bound"),
                }
            }
        }
    }

    fn class_atom(&mut self) -> Result<ClassAtom, String> {
        match self.peek() {
            None => self.fail("unterminated character class"),
            Some('\\') => {
                self.at += 1;
                self.class_or_character_escape(true)
            }
            Some(c) => {
                self.at += 1;
                Ok(ClassAtom::Char(u32::from(c)))
            }
        }
    }
}

/// Counts capturing groups and collects their names: skips escapes and classes, as the parse
/// will. Duplicate names are refused here.
fn scan_groups(chars: &[char]) -> Result<Groups, String> {
    let mut groups = Groups {
        count: 0,
        names: HashSet::new(),
    };
    let mut in_class = false;
    let mut at = 0;
    while let Some(&c) = chars.get(at) {
        match c {
            '\\' => at += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class => match (chars.get(at + 1), chars.get(at + 2)) {
                (Some('?'), Some('<')) if !matches!(chars.get(at + 3), Some('=' | '!')) => {
                    groups.count += 1;
                    let name: String = chars[at + 3..].iter().take_while(|&&c| c != '>').collect();
                    if !groups.names.insert(name) {
                        return Err(format!("duplicate group name at offset {at}"));
                    }
                }
                (Some('?'), _) => {}
                _ => groups.count += 1,
            },
            _ => {}
        }
        at += 1;
    }
    Ok(groups)
}

/// Whether decimal digit string `a` is greater than `b`, whatever their length.
fn decimal_greater(a: &str, b: &str) -> bool {
    let a = a.trim_start_matches('0');
    let b = b.trim_start_matches('0');
    (a.len(), a) > (b.len(), b)
}

/// A script name as ECMAScript spells them (`Latin`, `Latn`, `Old_Italic`): exact-case, so
/// the loose matching `regex-syntax` applies is only asked once the spelling is canonical.
fn known_script(value: &str, property: &str) -> bool {
    let canonical = value.split('_').all(|word| {
        let mut chars = word.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_alphanumeric())
    });
    canonical
        && regex_syntax::Parser::new()
            .parse(&format!(r"\p{{{property}={value}}}"))
            .is_ok()
}

/// General_Category values and their aliases (ECMAScript: PropertyValueAliases.txt).
const GENERAL_CATEGORIES: &[&str] = &[
    "C",
    "Other",
    "Cc",
    "Control",
    "cntrl",
    "Cf",
    "Format",
    "Cn",
    "Unassigned",
    "Co",
    "Private_Use",
    "Cs",
    "Surrogate",
    "L",
    "Letter",
    "LC",
    "Cased_Letter",
    "Ll",
    "Lowercase_Letter",
    "Lm",
    "Modifier_Letter",
    "Lo",
    "Other_Letter",
    "Lt",
    "Titlecase_Letter",
    "Lu",
    "Uppercase_Letter",
    "M",
    "Mark",
    "Combining_Mark",
    "Mc",
    "Spacing_Mark",
    "Me",
    "Enclosing_Mark",
    "Mn",
    "Nonspacing_Mark",
    "N",
    "Number",
    "Nd",
    "Decimal_Number",
    "digit",
    "Nl",
    "Letter_Number",
    "No",
    "Other_Number",
    "P",
    "Punctuation",
    "punct",
    "Pc",
    "Connector_Punctuation",
    "Pd",
    "Dash_Punctuation",
    "Pe",
    "Close_Punctuation",
    "Pf",
    "Final_Punctuation",
    "Pi",
    "Initial_Punctuation",
    "Po",
    "Other_Punctuation",
    "Ps",
    "Open_Punctuation",
    "S",
    "Symbol",
    "Sc",
    "Currency_Symbol",
    "Sk",
    "Modifier_Symbol",
    "Sm",
    "Math_Symbol",
    "So",
    "Other_Symbol",
    "Z",
    "Separator",
    "Zl",
    "Line_Separator",
    "Zp",
    "Paragraph_Separator",
    "Zs",
    "Space_Separator",
];

/// Binary properties ECMAScript admits in `\p{…}` with the `u` flag, with their aliases.
const BINARY: &[&str] = &[
    "ASCII",
    "ASCII_Hex_Digit",
    "AHex",
    "Alphabetic",
    "Alpha",
    "Any",
    "Assigned",
    "Bidi_Control",
    "Bidi_C",
    "Bidi_Mirrored",
    "Bidi_M",
    "Case_Ignorable",
    "CI",
    "Cased",
    "Changes_When_Casefolded",
    "CWCF",
    "Changes_When_Casemapped",
    "CWCM",
    "Changes_When_Lowercased",
    "CWL",
    "Changes_When_NFKC_Casefolded",
    "CWKCF",
    "Changes_When_Titlecased",
    "CWT",
    "Changes_When_Uppercased",
    "CWU",
    "Dash",
    "Default_Ignorable_Code_Point",
    "DI",
    "Deprecated",
    "Dep",
    "Diacritic",
    "Dia",
    "Emoji",
    "Emoji_Component",
    "EComp",
    "Emoji_Modifier",
    "EMod",
    "Emoji_Modifier_Base",
    "EBase",
    "Emoji_Presentation",
    "EPres",
    "Extended_Pictographic",
    "ExtPict",
    "Extender",
    "Ext",
    "Grapheme_Base",
    "Gr_Base",
    "Grapheme_Extend",
    "Gr_Ext",
    "Hex_Digit",
    "Hex",
    "IDS_Binary_Operator",
    "IDSB",
    "IDS_Trinary_Operator",
    "IDST",
    "ID_Continue",
    "IDC",
    "ID_Start",
    "IDS",
    "Ideographic",
    "Ideo",
    "Join_Control",
    "Join_C",
    "Logical_Order_Exception",
    "LOE",
    "Lowercase",
    "Lower",
    "Math",
    "Noncharacter_Code_Point",
    "NChar",
    "Pattern_Syntax",
    "Pat_Syn",
    "Pattern_White_Space",
    "Pat_WS",
    "Quotation_Mark",
    "QMark",
    "Radical",
    "Regional_Indicator",
    "RI",
    "Sentence_Terminal",
    "STerm",
    "Soft_Dotted",
    "SD",
    "Terminal_Punctuation",
    "Term",
    "Unified_Ideograph",
    "UIdeo",
    "Uppercase",
    "Upper",
    "Variation_Selector",
    "VS",
    "White_Space",
    "space",
    "XID_Continue",
    "XIDC",
    "XID_Start",
    "XIDS",
];

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn valid_patterns() {
        for pattern in [
            "",
            "^[a-z]+$",
            "^\\d{3}-\\d{4}$",
            "a{2}",
            "a{2,}",
            "a{2,5}?",
            "(?:ab)+",
            "(?<year>\\d{4})-\\k<year>",
            "(a)\\1",
            "(?=x)y",
            "(?!x)y",
            "(?<=x)y",
            "(?<!x)y",
            "\\p{L}+",
            "\\p{Letter}",
            "\\P{gc=Lu}",
            "\\p{Script=Greek}",
            "\\p{sc=Latn}",
            "\\p{scx=Cyrl}",
            "\\p{Emoji_Presentation}",
            "[\\p{L}\\d_-]",
            "[-a]",
            "[a-]",
            "[\\-]",
            "[\\b]",
            "[\\uD83D\\uDE00-\\uD83D\\uDE4F]",
            "\\u{1F600}",
            "\\x41\\u0041\\cJ\\0",
            "\\/\\.\\*",
            "[[]",
            "a|b|",
            "^$",
            "[^]",
            "\\bword\\B",
            "a{99999999999999999999}",
            "(?<名前>x)",
            "😀+",
        ] {
            assert_eq!(check(pattern), Ok(()), "{pattern}");
        }
    }

    #[test]
    fn invalid_patterns() {
        for pattern in [
            "(",
            "(a",
            ")",
            "a)",
            "[a",
            "[",
            "*",
            "a**",
            "+a",
            "a|*",
            "(?:*)",
            "^*",
            "\\b+",
            "(?=a)*",
            "(?<=a)+",
            "{",
            "a{",
            "a{1",
            "a{,5}",
            "}",
            "]",
            "a{2,1}",
            "[z-a]",
            "[\\d-z]",
            "[a-\\w]",
            "\\",
            "\\a",
            "\\-",
            "\\e",
            "\\_",
            "\\c",
            "\\c1",
            "\\x4",
            "\\u12",
            "\\u{110000}",
            "\\u{}",
            "\\00",
            "\\1",
            "(a)\\2",
            "[\\1]",
            "\\k",
            "\\k<nope>",
            "(?<a>x)\\k<b>",
            "(?<a>x)(?<a>y)",
            "(?<>x)",
            "(?<1a>x)",
            "(?<a",
            "(?i:a)",
            "(?P<a>x)",
            "\\p{Nope}",
            "\\p{letter}",
            "\\p{Script=latin}",
            "\\p{Script=Nope}",
            "\\p{Block=Basic_Latin}",
            "\\p{L",
            "\\pL",
            "\\p{RGI_Emoji}",
        ] {
            assert!(check(pattern).is_err(), "{pattern}");
        }
    }

    proptest::proptest! {
        /// Any string of regex-ish characters gets a verdict, never a panic.
        #[test]
        fn never_panics(pattern in "[\\\\()\\[\\]{}|?*+^$.,:<>=!a-dkpPuUxc0-9-]{0,40}") {
            let _ = check(&pattern);
        }
    }

    #[test]
    fn deep_nesting_is_parsed_without_recursion() {
        let deep = "(".repeat(100_000) + &")".repeat(100_000);
        assert_eq!(check(&deep), Ok(()));
        assert!(check(&"(".repeat(100_000)).is_err());
    }
}
