//! What is not drift: values that differ on every run of any server, erased on both sides before
//! two answers are compared (docs/verify.md, "What counts as a change").
//!
//! - `_meta` and `ttlMs` members, at any depth: per-request metadata and cache lifetimes;
//! - strings that are a whole ISO-8601 date or date-time, or a UUID, become `"[volatile]"`;
//! - integers that read as epoch seconds (1e9..=3e9) or milliseconds (1e12..=3e12) become
//!   `"[volatile]"`;
//! - an MRTR `requestState` string becomes `"[volatile]"`: its value is the server's business,
//!   whether one was sent is not;
//! - inside a task handle (an object whose `resultType` is `"task"`), `taskId`,
//!   `pollIntervalMs` and `lastUpdatedAt` become `"[volatile]"`; a `taskId` anywhere else is
//!   compared (a `tasks/get` answer naming the wrong task is drift).

use serde_json::Value;

/// What an erased value is replaced with.
pub(crate) const VOLATILE: &str = "[volatile]";

/// Members of a task handle that are erased.
const TASK_HANDLE_FIELDS: [&str; 3] = ["taskId", "pollIntervalMs", "lastUpdatedAt"];

/// Erases the volatile parts of `value`, in place.
pub(crate) fn normalise(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.shift_remove("_meta");
            members.shift_remove("ttlMs");
            if members.get("resultType").and_then(Value::as_str) == Some("task") {
                for field in TASK_HANDLE_FIELDS {
                    if let Some(slot) = members.get_mut(field) {
                        *slot = Value::String(VOLATILE.to_owned());
                    }
                }
            }
            if let Some(state @ Value::String(_)) = members.get_mut("requestState") {
                *state = Value::String(VOLATILE.to_owned());
            }
            members.values_mut().for_each(normalise);
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        Value::String(s) => {
            if is_iso_date(s) || is_uuid(s) {
                *value = Value::String(VOLATILE.to_owned());
            }
        }
        Value::Number(n) => {
            let epoch = |x: f64| (1e9..=3e9).contains(&x) || (1e12..=3e12).contains(&x);
            let integer = n
                .as_f64()
                .is_some_and(|x| x.fract() == 0.0 && epoch(x.abs()) && x > 0.0);
            if integer {
                *value = Value::String(VOLATILE.to_owned());
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

fn digits(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit)
}

/// `YYYY-MM-DD`, optionally followed by `T`, `t` or a space, `HH:MM:SS`, optional fraction and
/// an optional zone (`Z`, `z` or `±HH:MM`).
pub(crate) fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 10 || !digits(&b[0..4]) || b[4] != b'-' || !digits(&b[5..7]) || b[7] != b'-' {
        return false;
    }
    if !digits(&b[8..10]) {
        return false;
    }
    if b.len() == 10 {
        return true;
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 19 {
        return false;
    }
    let time = &b[11..19];
    if !(digits(&time[0..2])
        && time[2] == b':'
        && digits(&time[3..5])
        && time[5] == b':'
        && digits(&time[6..8]))
    {
        return false;
    }
    let mut rest = &b[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [] | [b'Z'] | [b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => digits(&[*h1, *h2]) && digits(&[*m1, *m2]),
        _ => false,
    }
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in hex digits, either case.
pub(crate) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates_uuids_and_epochs() {
        for yes in [
            "2026-10-08",
            "2026-10-08T00:00:00Z",
            "2026-10-08t00:00:00.123+02:00",
            "2026-10-08 12:30:00",
        ] {
            assert!(is_iso_date(yes), "{yes}");
        }
        for no in [
            "2026-10-8",
            "2026-10-08T00:00",
            "2026-10-08T00:00:00.Z",
            "x2026-10-08",
            "2026-10-08Z",
        ] {
            assert!(!is_iso_date(no), "{no}");
        }
        assert!(is_uuid("0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(!is_uuid("0f8fad5b-d9cb-469f-a165-70867728950"));
        let mut v = json!({
            "_meta": {"x": 1}, "ttlMs": 5, "at": 1_700_000_000, "ms": 1_700_000_000_000_u64,
            "small": 42, "id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "when": "2026-10-08",
            "list": [{"ttlMs": 1, "n": 2.5e9}]
        });
        normalise(&mut v);
        assert_eq!(
            v,
            json!({"at": VOLATILE, "ms": VOLATILE, "small": 42, "id": VOLATILE, "when": VOLATILE, "list": [{"n": VOLATILE}]})
        );
    }

    #[test]
    fn task_handles_only() {
        let mut handle = json!({"resultType": "task", "taskId": "t1", "pollIntervalMs": 50, "lastUpdatedAt": "x", "status": "working"});
        normalise(&mut handle);
        assert_eq!(
            handle,
            json!({"resultType": "task", "taskId": VOLATILE, "pollIntervalMs": VOLATILE, "lastUpdatedAt": VOLATILE, "status": "working"})
        );
        let mut mrtr = json!({"resultType": "input_required", "requestState": "abc"});
        normalise(&mut mrtr);
        assert_eq!(mrtr["requestState"], VOLATILE);
        let mut state = json!({"resultType": "complete", "taskId": "t1"});
        normalise(&mut state);
        assert_eq!(state["taskId"], "t1");
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use regex::Regex;

    use super::*;

    /// The rules as regular expressions: the hand-written matchers must agree with them.
    fn iso() -> Regex {
        Regex::new(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})?)?$")
            .unwrap()
    }

    fn uuid() -> Regex {
        Regex::new(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
            .unwrap()
    }

    proptest! {
        #[test]
        fn date_matcher_equals_its_regex(
            s in r"[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt xZ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{0,3})?([Zz+x-]|[+-][0-9]{2}:?[0-9]{2})?)?.?"
        ) {
            prop_assert_eq!(is_iso_date(&s), iso().is_match(&s), "{}", s);
        }

        #[test]
        fn date_matcher_never_panics(s in ".{0,40}") {
            prop_assert_eq!(is_iso_date(&s), iso().is_match(&s), "{}", s);
        }

        #[test]
        fn uuid_matcher_equals_its_regex(s in r"[0-9a-fA-Fg-]{30,38}") {
            prop_assert_eq!(is_uuid(&s), uuid().is_match(&s), "{}", s);
        }

        #[test]
        fn normalising_twice_changes_nothing(n in any::<i64>(), f in any::<f64>(), s in ".{0,20}") {
            let mut once = serde_json::json!({"n": n, "f": f.is_finite().then_some(f), "s": s, "ttlMs": 1});
            normalise(&mut once);
            let mut twice = once.clone();
            normalise(&mut twice);
            prop_assert_eq!(once, twice);
        }
    }
}
