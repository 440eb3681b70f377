//! An event's size: what it serialises to, and keeping every event within the limit.
//!
//! Every event the controller publishes passes [`clamp_body_sized`] (an agent's in `on_facts`, the
//! controller's own as its fold emits them), so none is larger than `--max-event-bytes` whatever a
//! client sent or an agent said. A property test over every event type holds it
//! (`event/clamp_tests.rs`).

use serde::Serialize;
use serde_json::{Map, Value};

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

/// The bytes `value`'s JSON takes, counted without being kept (`usize::MAX` if it cannot be
/// serialised).
pub fn json_size<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut c = ByteCounter(0);
    match serde_json::to_writer(&mut c, value) {
        Ok(()) => c.0,
        Err(_) => usize::MAX,
    }
}

/// The serialised size of an event body (`type` and `payload`).
pub fn body_size(body: &EventBody) -> usize {
    json_size(body)
}

/// The smallest event size limit the server takes: every event type's fixed fields fit it (a
/// smaller `--max-event-bytes` is raised to it).
pub const MIN_EVENT_BYTES: usize = 4096;

/// Marker appended to a string the event size limit cut short.
pub const TRUNCATED_MARK: &str = "…[truncated]";

/// Strings this long or shorter are left whole while longer ones can be cut (ids, names, enum
/// values stay readable); lists are shortened before they are.
const KEEP_STRING: usize = 64;

/// Objects with more members than any payload type has are maps (an agent's tool arguments, a
/// form's answers): they may lose members. A typed object never does.
const TYPED_MEMBERS_MAX: usize = 48;

/// Cuts an event makes at most before it gives up (each cuts what is still too much, or half of
/// its target).
const ROUNDS: usize = 64;

/// Keeps an event within `max` serialised bytes (see [`clamp_body_sized`]). Returns the original
/// size when it changed anything.
pub fn clamp_body(body: EventBody, max: usize) -> (EventBody, Option<usize>) {
    let (body, cut, _) = clamp_body_sized(body, max);
    (body, cut)
}

/// Keeps an event within `max` serialised bytes and of its type: first its longest strings are cut
/// (at a character boundary, marked with [`TRUNCATED_MARK`]) down to [`KEEP_STRING`] bytes, then
/// its heaviest lists (and maps) lose their last elements. Only an event that cannot fit even so (a
/// limit below what its fixed fields take) becomes a `notice` saying what was dropped.
///
/// Returns the event, its original size when it changed anything, and about how many bytes the
/// kept event's payload takes (what the store queue charges for it): a delta's text, else its
/// serialised size, which the clamp measures anyway.
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
    drop(body);
    // Measured again as the event it reads back as: what it skips when empty is left out.
    let kept = shrink(&mut v, size, max)
        .and_then(|_| serde_json::from_value::<EventBody>(v).ok())
        .filter(|b| b.type_name() == type_name)
        .map(|b| (body_size(&b), b))
        .filter(|(current, _)| *current <= max);
    match kept {
        Some((current, b)) => (b, Some(size), current),
        None => (dropped(size), Some(size), NOTICE),
    }
}

/// Cuts `v` (`size` bytes serialised) until it is at most `max` bytes; its new size, or `None`
/// when nothing more can be cut. Each round takes off what is still too much:
/// - from the longest strings, if they alone can give it (none below [`KEEP_STRING`]);
/// - else from the heaviest list (or map) if it can give what the strings cannot: its last
///   elements go, the others stay whole, and the first always stays;
/// - else every long string is cut to [`KEEP_STRING`];
/// - else lists lose their last elements, down to none.
fn shrink(v: &mut Value, mut size: usize, max: usize) -> Option<usize> {
    for _ in 0..ROUNDS {
        if size <= max {
            return Some(size);
        }
        let excess = size - max;
        let mut lengths = Vec::new();
        long_strings(v, &mut lengths);
        let from_strings = saved(&lengths, KEEP_STRING);
        if from_strings >= excess {
            cut_to(v, keep_for(&lengths, excess));
        } else if let Some((path, spread)) = heaviest(v, 2)
            && spread >= excess - from_strings
        {
            trim(v, &path, excess, 1);
        } else if !lengths.is_empty() {
            cut_to(v, KEEP_STRING);
        } else if let Some((path, _)) = heaviest(v, 1) {
            trim(v, &path, excess, 0);
        } else {
            return None;
        }
        size = json_size(v);
    }
    (size <= max).then_some(size)
}

/// The lengths of the strings (values and map keys) longer than [`KEEP_STRING`] and its mark.
fn long_strings(v: &Value, out: &mut Vec<usize>) {
    let long = |s: &str| s.len() > KEEP_STRING + TRUNCATED_MARK.len();
    match v {
        Value::String(s) if long(s) => out.push(s.len()),
        Value::Array(a) => a.iter().for_each(|x| long_strings(x, out)),
        Value::Object(o) => {
            for (k, x) in o {
                if long(k) {
                    out.push(k.len());
                }
                long_strings(x, out);
            }
        }
        _ => {}
    }
}

/// The bytes cutting strings of `lengths` to `keep` (and the mark) takes off.
fn saved(lengths: &[usize], keep: usize) -> usize {
    lengths.iter().map(|&l| l.saturating_sub(keep + TRUNCATED_MARK.len())).sum()
}

/// The longest length strings of `lengths` can be cut to that still takes `excess` off (savings
/// fall as it grows): every long string is cut to it, so a thousand cost one round, not a thousand.
fn keep_for(lengths: &[usize], excess: usize) -> usize {
    let (mut lo, mut hi) = (KEEP_STRING, lengths.iter().copied().max().unwrap_or(KEEP_STRING));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if saved(lengths, mid) >= excess {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Cuts `s` to at most `keep` bytes (at a character boundary) and marks it, if it is longer than
/// that and the mark.
fn cut(s: &mut String, keep: usize) {
    if s.len() <= keep + TRUNCATED_MARK.len() {
        return;
    }
    let mut at = keep;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    s.truncate(at);
    s.push_str(TRUNCATED_MARK);
}

/// Cuts every string of `v` (and map key) longer than `keep` and the mark.
fn cut_to(v: &mut Value, keep: usize) {
    match v {
        Value::String(s) => cut(s, keep),
        Value::Array(a) => a.iter_mut().for_each(|x| cut_to(x, keep)),
        Value::Object(o) => {
            o.values_mut().for_each(|x| cut_to(x, keep));
            // A long key is a map's (a typed object's are short): the map is rebuilt with it cut.
            if o.keys().any(|k| k.len() > keep + TRUNCATED_MARK.len()) {
                let members = std::mem::take(o);
                *o = members
                    .into_iter()
                    .map(|(mut k, x)| {
                        cut(&mut k, keep);
                        (k, x)
                    })
                    .collect::<Map<String, Value>>();
            }
        }
        _ => {}
    }
}

/// One step into a JSON value.
#[derive(Clone)]
enum Step {
    Index(usize),
    Key(String),
}

/// Measures `v` (its serialised size, as [`json_size`] counts it) and notes in `best` the list of
/// at least `min_len` elements (or the map) with the most weight spread over its elements: its size
/// less its largest element's, so a list of one large element is looked into rather than emptied.
fn weigh(v: &Value, min_len: usize, path: &mut Vec<Step>, best: &mut Option<(Vec<Step>, usize, usize)>) -> usize {
    let (size, largest, candidate) = match v {
        Value::Array(a) => {
            let mut size = 2 + a.len().saturating_sub(1);
            let mut largest = 0;
            for (i, x) in a.iter().enumerate() {
                path.push(Step::Index(i));
                let s = weigh(x, min_len, path, best);
                path.pop();
                size += s;
                largest = largest.max(s);
            }
            (size, largest, a.len() >= min_len.max(1))
        }
        Value::Object(o) => {
            let mut size = 2 + o.len().saturating_sub(1);
            let mut largest = 0;
            for (k, x) in o {
                path.push(Step::Key(k.clone()));
                let s = weigh(x, min_len, path, best);
                path.pop();
                size += json_size(k) + 1 + s;
                largest = largest.max(s);
            }
            (size, largest, o.len() > TYPED_MEMBERS_MAX)
        }
        other => return json_size(other),
    };
    let spread = size - largest;
    if candidate && best.as_ref().is_none_or(|(_, s, whole)| (spread, size) > (*s, *whole)) {
        *best = Some((path.clone(), spread, size));
    }
    size
}

/// The list of at least `min_len` elements (or the map) to shorten, and the weight spread over its
/// elements.
fn heaviest(v: &Value, min_len: usize) -> Option<(Vec<Step>, usize)> {
    let mut best = None;
    weigh(v, min_len, &mut Vec::new(), &mut best);
    best.map(|(path, spread, _)| (path, spread))
}

/// Drops the last elements of the list (or map) at `path`, as many as take `excess` bytes off,
/// keeping `keep`.
fn trim(v: &mut Value, path: &[Step], excess: usize, keep: usize) {
    let mut at = v;
    for step in path {
        let next = match (at, step) {
            (Value::Array(a), Step::Index(i)) => a.get_mut(*i),
            (Value::Object(o), Step::Key(k)) => o.get_mut(k),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => return,
        }
    }
    let mut saved = 0;
    match at {
        Value::Array(a) => {
            while saved < excess
                && a.len() > keep
                && let Some(x) = a.pop()
            {
                saved += json_size(&x) + 1;
            }
        }
        Value::Object(o) => {
            while saved < excess
                && o.len() > keep
                && let Some(k) = o.keys().next_back().cloned()
            {
                if let Some(x) = o.remove(&k) {
                    saved += json_size(&k) + json_size(&x) + 2;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "clamp_tests.rs"]
mod tests;
