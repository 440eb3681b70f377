//! An event's size: what it serialises to, and keeping an agent's events within the limit.

use serde_json::Value;

use super::{EventBody, NoticeLevel, NoticePayload};

/// Counts the bytes a value serialises to, without allocating them.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The serialised size of an event body (`type` and `payload`).
pub fn body_size(body: &EventBody) -> usize {
    let mut c = ByteCounter(0);
    match serde_json::to_writer(&mut c, body) {
        Ok(()) => c.0,
        Err(_) => usize::MAX,
    }
}

/// Marker appended to a string the event size limit cut short.
pub const TRUNCATED_MARK: &str = "…[truncated]";

/// Keeps an event within `max` serialised bytes: the longest strings of its payload are cut (at a
/// character boundary, marked with [`TRUNCATED_MARK`]) until it fits; if cutting strings cannot
/// make it fit, it becomes a `notice` saying what was dropped. Returns the original size when it
/// changed anything. An agent can therefore never put an unbounded event into the room log.
pub fn clamp_body(body: EventBody, max: usize) -> (EventBody, Option<usize>) {
    let (body, cut, _) = clamp_body_sized(body, max);
    (body, cut)
}

/// As [`clamp_body`], and about how many bytes the kept event's payload takes (what the store
/// queue charges for it): a delta's text, else its serialised size, which the clamp measures anyway.
pub fn clamp_body_sized(body: EventBody, max: usize) -> (EventBody, Option<usize>, usize) {
    // A delta (most of a turn's events) is bounded without serialising it: JSON escapes a byte
    // into at most 6.
    if let EventBody::MessageDelta(p) | EventBody::ReasoningDelta(p) = &body
        && (p.item_id.len() + p.text.len()) * 6 + 64 <= max
    {
        let size = p.item_id.len() + p.text.len() + 64;
        return (body, None, size);
    }
    let size = body_size(&body);
    if size <= max {
        return (body, None, size);
    }
    let type_name = body.type_name();
    let dropped = |size: usize| {
        EventBody::Notice(NoticePayload {
            level: NoticeLevel::Warning,
            message: format!(
                "a `{type_name}` event of {size} bytes exceeded the event size limit of {max} bytes and was dropped"
            ),
        })
    };
    // A notice of a sentence.
    const NOTICE: usize = 256;
    let Ok(mut v) = serde_json::to_value(&body) else { return (dropped(size), Some(size), NOTICE) };
    let mut current = size;
    // Each round cuts the longest string by what is still too much (at least half of it).
    for _ in 0..64 {
        let Some(longest) = longest_string(&mut v) else { break };
        let excess = current - max;
        let keep = longest.len().saturating_sub(excess.max(longest.len() / 2) + TRUNCATED_MARK.len() + 8);
        let mut cut = keep;
        while !longest.is_char_boundary(cut) {
            cut -= 1;
        }
        longest.truncate(cut);
        longest.push_str(TRUNCATED_MARK);
        current = serde_json::to_vec(&v).map(|b| b.len()).unwrap_or(usize::MAX);
        if current <= max {
            return match serde_json::from_value::<EventBody>(v) {
                Ok(b) => (b, Some(size), current),
                Err(_) => (dropped(size), Some(size), NOTICE),
            };
        }
    }
    (dropped(size), Some(size), NOTICE)
}

fn longest_string(v: &mut Value) -> Option<&mut String> {
    fn walk<'a>(v: &'a mut Value, best: &mut Option<&'a mut String>) {
        match v {
            Value::String(s) if s.len() > 64 && best.as_ref().is_none_or(|b| s.len() > b.len()) => *best = Some(s),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, best)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, best)),
            _ => {}
        }
    }
    let mut best = None;
    walk(v, &mut best);
    best
}
