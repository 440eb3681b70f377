//! Fuzzes the JSON-RPC line framing (`LineDecoder`) and the classification of each line (`decode`).
//!
//! Input layout: byte 0 picks the line limit (1..=32), bytes 1..=4 pick the chunk sizes (cycled,
//! 1..=16 each), the rest is the stream. The stream is fed in those chunks and once whole; both
//! must agree with an independent model of the framing rules, and every buffer stays bounded.

#![no_main]

use ensemble_adapters::jsonrpc::{Incoming, Line, LineDecoder, decode};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// The framing rules, written independently of the decoder: split on `\n`; a line over `max` bytes
/// is reported as too long with its full length; a complete line loses one trailing `\r`; the
/// unterminated tail, if any, comes out at the end.
fn model(stream: &[u8], max: usize) -> (Vec<Line>, Option<Line>) {
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

/// Compares final lines modulo one trailing `\r` (whether `finish` strips it is not a promise).
fn same_tail(a: &Option<Line>, b: &Option<Line>) -> bool {
    match (a, b) {
        (Some(Line::Complete(x)), Some(Line::Complete(y))) => strip_cr(x) == strip_cr(y),
        _ => a == b,
    }
}

fn check_line(line: &Line, max: usize) {
    match line {
        Line::Complete(bytes) => {
            assert!(bytes.len() <= max, "a line of {} bytes passed a limit of {max}", bytes.len());
            assert!(!bytes.contains(&b'\n'), "a line contains a newline");
            check_decode(bytes);
        }
        Line::TooLong(len) => assert!(*len > max, "TooLong({len}) within the limit {max}"),
    }
}

/// `decode` must agree with a plain reading of the JSON object.
fn check_decode(bytes: &[u8]) {
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

fn run(stream: &[u8], max: usize, chunks: &[usize]) -> (Vec<Line>, Option<Line>) {
    let mut d = LineDecoder::new(max);
    let mut out = Vec::new();
    let mut rest = stream;
    let mut i = 0;
    while !rest.is_empty() {
        let n = chunks[i % chunks.len()].min(rest.len());
        i += 1;
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        out.extend(d.push(chunk));
        assert!(d.buffered() <= max, "buffered {} bytes over a limit of {max}", d.buffered());
    }
    let last = d.finish();
    assert_eq!(d.buffered(), 0, "finish leaves nothing behind");
    assert_eq!(d.finish(), None, "finish is idempotent");
    (out, last)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let max = 1 + usize::from(data[0] % 32);
    let chunks: Vec<usize> = data[1..5].iter().map(|&b| 1 + usize::from(b % 16)).collect();
    let stream = &data[5..];

    let (lines, tail) = run(stream, max, &chunks);
    let (whole, whole_tail) = run(stream, max, &[stream.len().max(1)]);
    let (want, want_tail) = model(stream, max);
    assert_eq!(lines, whole, "chunking changed the lines");
    assert_eq!(tail, whole_tail, "chunking changed the last line");
    assert_eq!(lines, want, "the decoder disagrees with the model");
    assert!(same_tail(&tail, &want_tail), "last line {tail:?}, model {want_tail:?}");
    for line in lines.iter().chain(tail.iter()) {
        check_line(line, max);
    }
    // The whole input as one line, too (covers lines longer than the small limit above).
    check_decode(data);
});
