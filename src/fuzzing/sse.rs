//! The server-sent-events parser (src/transport/http/sse.rs) and writer.

use crate::transport::http::sse::{Event, Parser, TooLarge, write_event};

/// The first byte picks the parser's limit and the next eight the read boundaries; the rest is
/// the stream. Holds: the events (and the refusal, if any) do not depend on where reads end; a
/// stream within the limit gives the events a whole-stream reading of the WHATWG rules gives
/// (`reference`); no event field exceeds the limit; and what [`write_event`] writes for any text
/// without CR reads back as that text.
pub fn sse(data: &[u8]) {
    let data = super::bounded(data);
    let Some((&limit_seed, rest)) = data.split_first() else {
        return;
    };
    let (cuts, stream) = rest.split_at(rest.len().min(8));
    let limit = 16 + usize::from(limit_seed) * 64;

    let whole = parse(&[stream], limit);
    let mut chunks = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        let end = (at + usize::from(cut)).min(stream.len());
        chunks.push(&stream[at..end]);
        at = end;
    }
    chunks.push(&stream[at..]);
    let split = parse(&chunks, limit);
    assert_eq!(whole, split, "read boundaries changed the events");

    let (events, refused) = &whole;
    for event in events {
        // Lossy decoding turns each stray byte into a three-byte U+FFFD.
        assert!(event.data.len() <= 3 * limit);
        assert!(event.kind.len() <= 3 * limit);
        assert!(event.id.as_ref().is_none_or(|id| id.len() <= 3 * limit));
    }
    if refused.is_none() {
        assert_eq!(
            *events,
            reference(stream),
            "the parser departs from the WHATWG rules"
        );
    }

    let text = String::from_utf8_lossy(stream).replace('\r', "");
    let mut written = Vec::new();
    write_event(&mut written, &text);
    let (events, refused) = parse(&[&written], written.len() + 1);
    assert_eq!(refused, None);
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].data, text,
        "the writer's event does not read back"
    );
}

fn parse(chunks: &[&[u8]], limit: usize) -> (Vec<Event>, Option<TooLarge>) {
    let mut parser = Parser::new(limit);
    let mut events = Vec::new();
    for chunk in chunks {
        if let Err(e) = parser.feed(chunk, &mut events) {
            return (events, Some(e));
        }
    }
    (events, None)
}

/// The WHATWG event-stream rules applied to a whole stream, line by line, as simply as they are
/// written (docs/http.md, "Server-sent events"). Only complete lines count: a block still open
/// when the stream ends is dropped. Text is decoded lossily where the parser decodes it.
fn reference(stream: &[u8]) -> Vec<Event> {
    let stream = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < stream.len() {
        match stream[i] {
            b'\r' => {
                lines.push(&stream[start..i]);
                i += if stream.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            b'\n' => {
                lines.push(&stream[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut events = Vec::new();
    let (mut data, mut kind, mut retry, mut last_id): (Option<Vec<u8>>, _, _, Option<String>) =
        (None, None, None, None);
    for line in lines {
        if line.is_empty() {
            if let Some(mut d) = data.take() {
                d.pop();
                events.push(Event {
                    kind: kind.take().unwrap_or_else(|| "message".to_owned()),
                    data: lossy(&d),
                    id: last_id.clone(),
                    retry: retry.take(),
                });
            }
            kind = None;
            retry = None;
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let d = data.get_or_insert_with(Vec::new);
                d.extend_from_slice(value);
                d.push(b'\n');
            }
            b"event" => kind = Some(lossy(value)),
            b"id" if !value.contains(&0) => last_id = Some(lossy(value)),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }
    events
}
