//! Progress notifications follow the live request. A recorded `notifications/progress` carries
//! the token the recorded request chose (`params._meta.progressToken`); the live client chose its
//! own (the Python SDK uses the request id, so one extra request shifts every token) and drops
//! progress for a token it never sent. So, like a response's id and a subscription's tag, the
//! token is re-keyed: every progress frame released with an answer whose recorded token matches
//! goes out with the live one (docs/replay.md, "Progress").

use serde_json::Value;
use serde_json::value::RawValue;

use super::wire::Outbound;

const PROGRESS: &str = "notifications/progress";
const TOKEN: &str = "progressToken";

/// The search for [`TOKEN`], built once: every recorded request is searched as the index is
/// built (and every live request as it arrives), and a `str::contains` sets its search up again
/// on each call: 177 against 131 instructions a recorded `tools/call` (docs/benchmarks.md).
static TOKEN_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(TOKEN));

/// Whether `text` mentions [`TOKEN`].
fn mentions_token(text: &str) -> bool {
    TOKEN_FINDER.find(text.as_bytes()).is_some()
}

/// A recorded request's progress token as JSON text, read only when the text mentions one.
pub fn request_token(text: &str) -> Option<Box<str>> {
    if !mentions_token(text) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    token_in(value.pointer("/params/_meta")?)
}

/// The live request's progress token, from its params.
pub fn live_token(params: Option<&RawValue>) -> Option<Box<str>> {
    let params = params?.get();
    if !mentions_token(params) {
        return None;
    }
    let value: Value = serde_json::from_str(params).ok()?;
    token_in(value.get("_meta")?)
}

fn token_in(meta: &Value) -> Option<Box<str>> {
    let token = meta.get(TOKEN)?;
    // The specification allows a string or an integer; anything else is not a token.
    (token.is_string() || token.is_number()).then(|| token.to_string().into_boxed_str())
}

/// Re-addresses the progress frames among `frames` whose token is `recorded` to `live`.
pub fn retoken(frames: &mut [Outbound], recorded: &str, live: &str) {
    let (Ok(recorded), Ok(live)) = (
        serde_json::from_str::<Value>(recorded),
        serde_json::from_str::<Value>(live),
    ) else {
        return;
    };
    for frame in frames {
        let text = match frame {
            Outbound::Verbatim(text) => &**text,
            Outbound::Owned(text) => text.as_str(),
            // Spliced frames are responses and subscription frames, never progress.
            Outbound::Spliced { .. } => continue,
        };
        if !text.contains(PROGRESS) {
            continue;
        }
        let Ok(mut value) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        if value.get("method").and_then(Value::as_str) != Some(PROGRESS) {
            continue;
        }
        let Some(token) = value.pointer_mut("/params/progressToken") else {
            continue;
        };
        if *token != recorded {
            continue;
        }
        *token = live.clone();
        if let Ok(rewritten) = serde_json::to_string(&value) {
            *frame = Outbound::Owned(rewritten);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn text(frame: &Outbound) -> &str {
        match frame {
            Outbound::Verbatim(t) => t,
            Outbound::Owned(t) => t,
            Outbound::Spliced { .. } => unreachable!(),
        }
    }

    #[test]
    fn tokens_are_read_from_meta_only() {
        let req = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"abc"}}}"#;
        assert_eq!(request_token(req).as_deref(), Some(r#""abc""#));
        let plain =
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progressToken"}}"#;
        assert_eq!(request_token(plain), None);
        let raw = RawValue::from_string(r#"{"_meta":{"progressToken":7}}"#.into()).unwrap();
        assert_eq!(live_token(Some(&raw)).as_deref(), Some("7"));
        let odd = RawValue::from_string(r#"{"_meta":{"progressToken":{"a":1}}}"#.into()).unwrap();
        assert_eq!(live_token(Some(&odd)), None);
    }

    #[test]
    fn only_progress_for_the_recorded_token_is_readdressed() {
        let mut frames = vec![
            Outbound::Verbatim(Arc::from(
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"abc","progress":1,"total":3}}"#,
            )),
            Outbound::Verbatim(Arc::from(
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other","progress":1}}"#,
            )),
            Outbound::Verbatim(Arc::from(
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"abc"}}"#,
            )),
        ];
        retoken(&mut frames, r#""abc""#, "4");
        assert_eq!(
            text(&frames[0]),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":4,"progress":1,"total":3}}"#
        );
        assert!(text(&frames[1]).contains(r#""other""#));
        assert!(matches!(frames[2], Outbound::Verbatim(_)));
    }
}
