//! The JSON-RPC line decoder (`LineDecoder`, `decode`) against rules written without it.
//!
//! Framing: split on `\n`; a line over the limit is reported as too long with its full length (a
//! `\r` before the `\n` counts); a complete line loses one trailing `\r`; the unterminated tail, if
//! any, comes out of `finish`. A limit of 0 is a limit of 1. The decoder never buffers more than the
//! limit, whatever the chunking.

use ensemble_adapters::kit::jsonrpc::{Incoming, Line, LineDecoder, decode};
use serde_json::Value;

/// The lines a stream frames into under `max`, and its unterminated tail.
pub fn frame(stream: &[u8], max: usize) -> (Vec<Line>, Option<Line>) {
    let max = max.max(1);
    let mut parts: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or_default();
    let lines = parts
        .into_iter()
        .map(|l| if l.len() > max { Line::TooLong(l.len()) } else { Line::Complete(strip_cr(l).to_vec()) })
        .collect();
    let tail = match tail.len() {
        0 => None,
        n if n > max => Some(Line::TooLong(n)),
        _ => Some(Line::Complete(tail.to_vec())),
    };
    (lines, tail)
}

fn strip_cr(l: &[u8]) -> &[u8] {
    l.strip_suffix(b"\r").unwrap_or(l)
}

/// The last line modulo one trailing `\r`: `push` strips it from complete lines, `finish` (today)
/// does not; `decode` ignores it either way, so it is not part of the contract. Compare tails
/// through this.
pub fn tail_modulo_cr(l: Option<Line>) -> Option<Line> {
    match l {
        Some(Line::Complete(b)) => Some(Line::Complete(strip_cr(&b).to_vec())),
        other => other,
    }
}

/// What a decoder produced from one feeding of a stream.
#[derive(Debug)]
pub struct Fed {
    pub lines: Vec<Line>,
    pub tail: Option<Line>,
}

/// Whether [`feed`] pushes an empty slice before each chunk (which must complete nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyPushes {
    Between,
    Never,
}

/// Feeds `stream` to a new `LineDecoder::new(max)` in chunks of the given sizes (cycled, each at
/// least one byte; no sizes: the whole stream at once), then finishes. Checks on the way that the
/// decoder never buffers more than the limit, that an empty push completes nothing, and that
/// `finish` leaves nothing behind and is idempotent.
pub fn feed(stream: &[u8], max: usize, sizes: &[usize], empties: EmptyPushes) -> Fed {
    let limit = max.max(1);
    let mut decoder = LineDecoder::new(max);
    let mut lines = Vec::new();
    let mut sizes = sizes.iter().cycle();
    let mut rest = stream;
    while !rest.is_empty() {
        if empties == EmptyPushes::Between {
            assert_eq!(decoder.push(&[]), vec![], "an empty push completes nothing");
        }
        let size = sizes.next().copied().unwrap_or(rest.len());
        let (chunk, after) = rest.split_at(size.clamp(1, rest.len()));
        rest = after;
        lines.extend(decoder.push(chunk));
        assert!(decoder.buffered() <= limit, "buffered {} bytes with a limit of {limit}", decoder.buffered());
    }
    let tail = decoder.finish();
    assert_eq!(decoder.buffered(), 0, "finish leaves nothing buffered");
    assert_eq!(decoder.finish(), None, "finish is idempotent");
    Fed { lines, tail }
}

/// A line the decoder produced under `max` is within its bounds: a complete line is at most the
/// limit and holds no `\n`; a too-long report is over the limit.
pub fn check_line(line: &Line, max: usize) {
    let limit = max.max(1);
    match line {
        Line::Complete(bytes) => {
            assert!(bytes.len() <= limit, "a line of {} bytes passed a limit of {limit}", bytes.len());
            assert!(!bytes.contains(&b'\n'), "a line contains a newline");
        }
        Line::TooLong(len) => assert!(*len > limit, "TooLong({len}) within the limit {limit}"),
    }
}

/// What `decode` accepts agrees with a plain reading of the line as a JSON object: a request has a
/// string `method` and a non-null `id`, a notification a string `method` and no (or a null) `id`, a
/// response no `method` and one of our (unsigned integer) ids, with a non-null `error` or else a
/// `result`; the method, id, params and result are the object's own.
pub fn check_decode(bytes: &[u8]) {
    let Ok(msg) = decode(bytes) else { return };
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(bytes) else {
        panic!("decode accepted something that is not a JSON object: {msg:?}");
    };
    let field = |k: &str| obj.get(k).cloned().unwrap_or(Value::Null);
    match msg {
        Incoming::Request { id, method, params } => {
            assert_eq!(field("method"), Value::String(method));
            assert!(!id.is_null());
            assert_eq!(field("id"), id);
            assert_eq!(field("params"), params);
        }
        Incoming::Notification { method, params } => {
            assert_eq!(field("method"), Value::String(method));
            assert!(field("id").is_null());
            assert_eq!(field("params"), params);
        }
        Incoming::Response { id, result } => {
            assert!(!obj.contains_key("method"));
            assert_eq!(field("id").as_u64(), Some(id));
            match result {
                Ok(v) => {
                    assert!(field("error").is_null());
                    assert_eq!(obj.get("result"), Some(&v));
                }
                Err(_) => assert!(!field("error").is_null()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_frames_by_the_rules() {
        let (lines, tail) = frame(b"a\r\nbbb\r\n\nccc", 3);
        assert_eq!(lines, vec![Line::Complete(b"a".to_vec()), Line::TooLong(4), Line::Complete(Vec::new())]);
        assert_eq!(tail, Some(Line::Complete(b"ccc".to_vec())));
        assert_eq!(frame(b"abcd", 0), (Vec::new(), Some(Line::TooLong(4))));
    }
}
