//! Fuzzes the JSON-RPC line framing (`LineDecoder`) and the classification of each line (`decode`)
//! against the model in `ensemble_test_models::jsonrpc` (the property tests in
//! `adapters/tests/decoder_props.rs` check the same model).
//!
//! Input layout: byte 0 picks the line limit (1..=32), bytes 1..=4 pick the chunk sizes (cycled,
//! 1..=16 each), the rest is the stream. The stream is fed in those chunks and once whole; both
//! must agree with the model of the framing rules, and every buffer stays bounded.

#![no_main]

use ensemble_adapters::kit::jsonrpc::Line;
use ensemble_test_models::jsonrpc::{EmptyPushes, check_decode, check_line, feed, frame, tail_modulo_cr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let max = 1 + usize::from(data[0] % 32);
    let chunks: Vec<usize> = data[1..5].iter().map(|&b| 1 + usize::from(b % 16)).collect();
    let empties = if data[1].is_multiple_of(2) { EmptyPushes::Between } else { EmptyPushes::Never };
    let stream = &data[5..];

    let chunked = feed(stream, max, &chunks, empties);
    let whole = feed(stream, max, &[], EmptyPushes::Never);
    let (want, want_tail) = frame(stream, max);
    assert_eq!(chunked.lines, whole.lines, "chunking changed the lines");
    assert_eq!(chunked.tail, whole.tail, "chunking changed the last line");
    assert_eq!(chunked.lines, want, "the decoder disagrees with the model");
    for line in chunked.lines.iter().chain(chunked.tail.iter()) {
        check_line(line, max);
        if let Line::Complete(bytes) = line {
            check_decode(bytes);
        }
    }
    assert_eq!(tail_modulo_cr(chunked.tail), tail_modulo_cr(want_tail), "the last line");
    // The whole input as one line, too (covers lines longer than the small limit above).
    check_decode(data);
});
