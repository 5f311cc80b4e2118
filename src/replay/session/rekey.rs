//! Recorded frames re-keyed to the client's ids: a response carries the id of the request it now
//! answers, a subscription frame the id of the client's own listen. Every other byte is as
//! recorded; the id is spliced in by position when the frame's spans allow it.

use serde_json::Value;

use super::Outbound;
use crate::jsonrpc::Id;
use crate::protocol::SUBSCRIPTION_ID_KEY;
use crate::replay::recorded::Recorded;

/// A recorded response with its id replaced by the client's, every other byte as recorded.
pub(super) fn rekey_response(rec: &Recorded, id_json: &str) -> Outbound {
    match rec.spans().id() {
        Some(span) => Outbound::Spliced {
            text: rec.text().clone(),
            span,
            value: id_json.into(),
        },
        None => rewrite(rec, |v| {
            if let (Some(obj), Ok(id)) = (v.as_object_mut(), serde_json::from_str::<Value>(id_json))
            {
                obj.insert("id".to_owned(), id);
            }
        }),
    }
}

/// A recorded subscription frame carrying the client's listen id: the tag of a notification, and
/// both the id and the tag of a graceful closure.
pub(super) fn rekey_subscription(rec: &Recorded, live: &Id) -> Outbound {
    let spans = rec.spans();
    if !rec.is_response() {
        return match spans.tag() {
            Some((span, _)) => Outbound::Spliced {
                text: rec.text().clone(),
                span,
                value: live.to_json().into(),
            },
            None => Outbound::Verbatim(rec.text().clone()),
        };
    }
    match (spans.id(), spans.tag()) {
        (Some(id_span), Some((tag_span, _))) => {
            let text = rec.text();
            let value = live.to_json();
            let (first, second) = if id_span.start < tag_span.start {
                (id_span, tag_span)
            } else {
                (tag_span, id_span)
            };
            let mut out = String::with_capacity(text.len() + 2 * value.len());
            out.push_str(&text[..first.start]);
            out.push_str(&value);
            out.push_str(&text[first.end..second.start]);
            out.push_str(&value);
            out.push_str(&text[second.end..]);
            Outbound::Owned(out)
        }
        (Some(span), None) if !spans.has_meta() => Outbound::Spliced {
            text: rec.text().clone(),
            span,
            value: live.to_json().into(),
        },
        _ => rewrite(rec, |v| {
            if let Some(obj) = v.as_object_mut() {
                obj.insert("id".to_owned(), live.to_value());
                if let Some(meta) = obj
                    .get_mut("result")
                    .and_then(|r| r.get_mut("_meta"))
                    .and_then(Value::as_object_mut)
                {
                    meta.insert(SUBSCRIPTION_ID_KEY.to_owned(), live.to_value());
                }
            }
        }),
    }
}

/// The slow path: parse, change, serialise (member order kept).
fn rewrite(rec: &Recorded, change: impl FnOnce(&mut Value)) -> Outbound {
    match serde_json::from_str::<Value>(rec.text()) {
        Ok(mut v) => {
            change(&mut v);
            Outbound::Owned(v.to_string())
        }
        Err(_) => Outbound::Verbatim(rec.text().clone()),
    }
}
