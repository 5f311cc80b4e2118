//! JSON text that can sit inside an HTML `<script>` element.
//!
//! The HTML parser ends a script element at the first `</script` whatever the JSON around it
//! means, and `<!--` inside one changes how it looks for that end. So every `<`, `>` and `&` of
//! a string is written as a `\u` escape, which JSON reads back as the same character; U+2028
//! and U+2029 too (legal in JSON strings, line terminators in older JavaScript). Outside
//! strings JSON has none of these characters, so text escaped this way cannot close the
//! element, and `JSON.parse` returns exactly the original strings.

/// Appends `s` as a JSON string literal (quotes included), script-safe.
pub(super) fn write_str(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            0..=0x1f => None,
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(if bytes[i + 2] == 0xa8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                });
                i += 3;
                start = i;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        match escape {
            Some(text) => out.extend_from_slice(text),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn quoted(s: &str) -> String {
        let mut out = Vec::new();
        write_str(s, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn markup_and_line_separators_are_escaped() {
        assert_eq!(
            quoted("</script><!-- & \u{2028}\u{2029}\"\\\n\u{1}é"),
            "\"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029\\\"\\\\\\n\\u0001é\""
        );
    }

    proptest! {
        /// Whatever the string, the literal parses back to it and holds none of the
        /// characters that could end or confuse a script element.
        #[test]
        fn any_string_round_trips_and_stays_inert(s in any::<String>()) {
            let text = quoted(&s);
            let inert = !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']);
            prop_assert!(inert, "{}", text);
            prop_assert_eq!(serde_json::from_str::<String>(&text).unwrap(), s);
        }
    }
}
