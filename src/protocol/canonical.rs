//! Canonical JSON text for matching: object keys sorted recursively, arrays in order, numbers
//! spelled as JavaScript's `String(number)` spells them. The reference fingerprints with
//! `JSON.stringify`, where `1` and `1.0` are the same number; so must we, or a cassette recorded
//! by it would miss here.

use serde_json::Value;

/// JavaScript's `Number.prototype.toString()` for the number whose JSON text is given.
/// Text that is not a number is returned unchanged.
pub fn js_number_text(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(n) => js_number(n),
        Err(_) => text.to_owned(),
    }
}

/// Formats an `f64` the way ECMAScript's Number::toString does (shortest round-trip digits,
/// exponent form outside 1e-7 ≤ |n| < 1e21).
pub fn js_number(n: f64) -> String {
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
    // `{:e}` yields the shortest round-trip digits: "d.ddde±x".
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let e: i64 = exp.parse().unwrap_or(0);
    let point = e + 1; // ECMAScript's n: position of the decimal point relative to the digits
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

/// `JSON.stringify` with keys sorted at every depth.
pub fn stable_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_stable(value, &mut out);
    out
}

fn write_stable(value: &Value, out: &mut String) {
    // An explicit stack keeps a hostile 10,000-deep document from overflowing ours.
    enum Step<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                out.push_str(&Value::String(k.to_owned()).to_string());
                out.push(':');
            }
            Step::Value(v) => match v {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => match n.as_f64() {
                    Some(f) => out.push_str(&js_number(f)),
                    None => out.push_str(&n.to_string()),
                },
                Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    let mut keys: Vec<&String> = map.keys().collect();
                    // JavaScript sorts by UTF-16 code units; for keys outside the BMP this differs
                    // from byte order, so compare as UTF-16.
                    keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
                    for (i, key) in keys.iter().enumerate().rev() {
                        if let Some(v) = map.get(key.as_str()) {
                            stack.push(Step::Value(v));
                        }
                        stack.push(Step::Key(key));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        ] {
            assert_eq!(js_number(n), s, "{n}");
        }
        assert_eq!(js_number_text("1.0"), "1");
    }

    #[test]
    fn sorted_and_number_folded() {
        let a: Value = serde_json::from_str(r#"{"b":[1.0,{"z":1,"a":2}],"a":"x"}"#).unwrap();
        assert_eq!(stable_stringify(&a), r#"{"a":"x","b":[1,{"a":2,"z":1}]}"#);
        assert_eq!(stable_stringify(&json!({})), "{}");
        assert_eq!(stable_stringify(&json!([])), "[]");
    }
}
