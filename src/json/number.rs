//! Numbers spelled as JavaScript spells them: `String(n)`, `Number.prototype.toString()` and the
//! number text `JSON.stringify` writes, which are one algorithm (ECMAScript's Number::toString).
//!
//! Every JSON number is an IEEE double to JavaScript, so `1`, `1.0` and `1e0` are one number with
//! one spelling (`1`); `1e21` is `1e+21`; `0.000001` stays as it is but `1e-7` is `1e-7`. The
//! digits are the shortest that read back as the same double, which the `ryu-js` crate computes
//! without allocating (it implements exactly this ECMAScript algorithm); a property test below
//! holds it to an independent spelling made from Rust's own shortest round-trip digits.

/// JavaScript's `String(n)`. Not-a-number and the infinities are spelled `NaN`, `Infinity` and
/// `-Infinity` (JSON has none of them; `JSON.stringify` would write `null`).
pub(crate) fn js_number(n: f64) -> String {
    let mut out = String::new();
    write_number(n, &mut out);
    out
}

/// JavaScript's `String(Number(text))` for JSON number text; text that is not a number is
/// returned unchanged.
pub(crate) fn js_number_text(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(n) => js_number(n),
        Err(_) => text.to_owned(),
    }
}

/// JSON text with every number a double cannot hold (`1e400`, which JavaScript reads as
/// `Infinity`) written as `null`, as `JSON.stringify(JSON.parse(text))` writes it; `None` when the
/// text holds none. serde_json refuses such a number, while JavaScript and our frame parsers take
/// its text, so a value read from a frame holding one goes through here.
pub(crate) fn with_infinities_as_null(text: &str) -> Option<String> {
    use super::token::{Escapes, number, string_end};
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = string_end(b, i, Escapes::Any)?.0,
            b'-' | b'0'..=b'9' => {
                let end = number(b, i)?.end.max(i + 1);
                let spelled = text.get(i..end)?;
                if !spelled.parse::<f64>().is_ok_and(f64::is_finite) {
                    let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    out.push_str(&text[copied..i]);
                    out.push_str("null");
                    copied = end;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// Appends `n` as JavaScript spells it, without allocating.
pub(crate) fn write_number(n: f64, out: &mut String) {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        // Integers below 1e15 print as their digits (and `-0` as `0`): the common case in
        // requests, done without the shortest-digits search.
        let mut v = n as i64;
        if v == 0 {
            out.push('0');
            return;
        }
        if v < 0 {
            out.push('-');
            v = -v;
        }
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        while v > 0 {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        for &d in &digits[at..] {
            out.push(char::from(d));
        }
        return;
    }
    out.push_str(ryu_js::Buffer::new().format(n));
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn numbers_past_a_double_become_null() {
        assert_eq!(with_infinities_as_null(r#"{"a":1,"b":"1e400"}"#), None);
        assert_eq!(
            with_infinities_as_null(r#"{"a":1e400,"b":[-2E999,0.5],"1e400":"x"}"#).as_deref(),
            Some(r#"{"a":null,"b":[null,0.5],"1e400":"x"}"#)
        );
        // A string with an escaped quote does not end early.
        assert_eq!(
            with_infinities_as_null(r#"{"a\"1e400":9e9999}"#).as_deref(),
            Some(r#"{"a\"1e400":null}"#)
        );
    }

    /// ECMAScript's Number::toString steps spelled out over Rust's shortest round-trip digits
    /// (`{:e}`): the hand-written implementation this module used before `ryu-js`, kept as the
    /// independent side of the property test. It parts from JavaScript in one case, see
    /// [`agrees_with_shortest_digits_but_ties_go_to_even`].
    fn spelled_from_shortest_digits(n: f64) -> String {
        if n.is_nan() {
            return "NaN".to_owned();
        }
        if n == 0.0 {
            return "0".to_owned();
        }
        if n.is_infinite() {
            return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
        }
        let sign = if n < 0.0 { "-" } else { "" };
        let sci = format!("{:e}", n.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        let k = digits.len() as i64;
        let point = exp.parse::<i64>().unwrap_or(0) + 1;
        let body = if k <= point && point <= 21 {
            format!("{digits}{}", "0".repeat((point - k) as usize))
        } else if 0 < point && point <= 21 {
            let (a, b) = digits.split_at(point as usize);
            format!("{a}.{b}")
        } else if -6 < point && point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else {
            let exp_sign = if point - 1 < 0 { '-' } else { '+' };
            let (first, rest) = digits.split_at(1);
            let frac = if rest.is_empty() {
                String::new()
            } else {
                format!(".{rest}")
            };
            format!("{first}{frac}e{exp_sign}{}", (point - 1).abs())
        };
        format!("{sign}{body}")
    }

    #[test]
    fn numbers_as_javascript() {
        for (n, s) in [
            (1.0, "1"),
            (1.5, "1.5"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (123456789.0, "123456789"),
            (0.1 + 0.2, "0.30000000000000004"),
            (999_999_999_999_999.0, "999999999999999"),
            (1e15, "1000000000000000"),
            (-1e16, "-10000000000000000"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(js_number(n), s, "{n}");
            assert_eq!(spelled_from_shortest_digits(n), s, "{n}");
        }
        assert_eq!(js_number_text("1.0"), "1");
        assert_eq!(js_number_text("-1.5E3"), "-1500");
        assert_eq!(js_number_text("x"), "x");
    }

    /// The significant digits of decimal number text (no leading or trailing zeros) and the
    /// power of ten of the first one: `"-0.0125"` is `("125", -2)`, `"1e+21"` is `("1", 21)`.
    fn significant(text: &str) -> (String, i64) {
        let text = text.trim_start_matches('-');
        let (mantissa, exp) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
        let exp: i64 = exp.trim_start_matches('+').parse().unwrap();
        let point = mantissa.find('.').unwrap_or(mantissa.len()) as i64;
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        let leading = (digits.len() - digits.trim_start_matches('0').len()) as i64;
        let digits = digits.trim_matches('0').to_owned();
        (digits, exp + point - 1 - leading)
    }

    #[test]
    fn ties_go_to_even() {
        // 590309956002461.25 exactly: halfway between …461.2 and …461.3; V8 prints …461.2.
        let tie = 4_722_479_648_019_690.0 / 8.0;
        assert_eq!(js_number(tie), "590309956002461.2");
        assert_eq!(spelled_from_shortest_digits(tie), "590309956002461.3");
        // -88679401716201.625 exactly.
        assert_eq!(
            js_number(-709_435_213_729_613.0 / 8.0),
            "-88679401716201.62"
        );
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant("-0.0125"), ("125".to_owned(), -2));
        assert_eq!(significant("1e+21"), ("1".to_owned(), 21));
        assert_eq!(significant("1500"), ("15".to_owned(), 3));
        assert_eq!(significant("1.25e-7"), ("125".to_owned(), -7));
    }

    /// Doubles of every magnitude: any bit pattern, and decimal-looking values near the
    /// boundaries where the spelling switches between plain digits and exponent form.
    fn double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<u64>().prop_map(f64::from_bits),
            (-10i32..=10, any::<i64>()).prop_map(|(shift, m)| (m as f64) * 10f64.powi(shift)),
            (1u32..=17, -30i32..=30).prop_map(|(digits, e)| {
                let m = 10f64.powi(digits as i32) - 1.0;
                m * 10f64.powi(e)
            }),
            any::<i64>().prop_map(|i| i as f64),
            // Eighths around 1e15, where a double often lies exactly halfway between two
            // shortest spellings.
            ((1i64 << 49)..(1i64 << 53)).prop_map(|m| m as f64 / 8.0),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// `ryu-js` and the spelling built from Rust's shortest digits agree on every double but
        /// one kind: a double exactly halfway between two shortest spellings. ECMAScript's
        /// Number::toString then takes the one whose last digit is even, as V8 does (and
        /// `ryu-js`); Rust's digits take the upper one. Checked here from the double's exact
        /// decimal value, so the tie is proven, not assumed.
        #[test]
        fn agrees_with_shortest_digits_but_ties_go_to_even(n in double()) {
            let ours = js_number(n);
            let theirs = spelled_from_shortest_digits(n);
            if ours != theirs {
                prop_assert_eq!(ours.parse::<f64>().unwrap(), n);
                prop_assert_eq!(theirs.parse::<f64>().unwrap(), n);
                let (a, exp_a) = significant(&ours);
                let (b, exp_b) = significant(&theirs);
                prop_assert_eq!(exp_a, exp_b);
                prop_assert_eq!(a.len(), b.len());
                let midpoint = format!("{}5", a.as_str().min(b.as_str()));
                prop_assert_eq!(significant(&format!("{n:.1100e}")), (midpoint, exp_a));
                prop_assert!(a.bytes().last().is_some_and(|d| (d - b'0') % 2 == 0), "{} {}", ours, theirs);
            }
        }
    }
}
