#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]
//! Property tests of the JSON-RPC framing (`LineDecoder`) and classification (`decode`): bounded
//! case counts, so they run in CI on stable. The unbounded version is the cargo-fuzz target
//! `fuzz/fuzz_targets/jsonrpc_line.rs`; both check the model in `ensemble_test_models::jsonrpc`.

use ensemble_adapters::kit::jsonrpc::{DecodeError, ErrorObject, Incoming, Line, decode};
use ensemble_test_models::jsonrpc::{EmptyPushes, check_decode, check_line, feed, frame, tail_modulo_cr};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// 256 cases (a fraction of a second in CI); `PROPTEST_CASES=100000` for a deeper local run.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------------
// Framing

/// Streams rich in newlines, carriage returns and repeated bytes.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![3 => any::<u8>(), 2 => Just(b'\n'), 1 => Just(b'\r'), 4 => b'a'..=b'e'];
    prop::collection::vec(byte, 0..256)
}

fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..=24, 1..8)
}

fn empty_pushes() -> impl Strategy<Value = EmptyPushes> {
    prop_oneof![Just(EmptyPushes::Between), Just(EmptyPushes::Never)]
}

proptest! {
    #![proptest_config(config())]

    /// Any chunking yields the same lines as one push, and both match the model.
    #[test]
    fn chunking_never_changes_the_lines(
        stream in stream(),
        max in 0usize..=40,
        sizes in chunk_sizes(),
        empties in empty_pushes(),
    ) {
        let whole = feed(&stream, max, &[], EmptyPushes::Never);
        let chunked = feed(&stream, max, &sizes, empties);
        let bytewise = feed(&stream, max, &[1], EmptyPushes::Never);
        prop_assert_eq!(&chunked.lines, &whole.lines);
        prop_assert_eq!(&chunked.tail, &whole.tail);
        prop_assert_eq!(&bytewise.lines, &whole.lines);
        prop_assert_eq!(&bytewise.tail, &whole.tail);
        let (lines, tail) = frame(&stream, max);
        prop_assert_eq!(&whole.lines, &lines);
        prop_assert_eq!(tail_modulo_cr(whole.tail), tail_modulo_cr(tail));
    }

    /// The decoder promises `buffered() <= max` at all times (not merely max + a chunk; `feed`
    /// checks it after every push), and never returns a complete line over the limit or a too-long
    /// report within it.
    #[test]
    fn memory_and_lines_stay_within_the_limit(stream in stream(), max in 0usize..=40, sizes in chunk_sizes()) {
        let fed = feed(&stream, max, &sizes, EmptyPushes::Never);
        for line in fed.lines.iter().chain(fed.tail.iter()) {
            check_line(line, max);
        }
    }

    /// Over-long lines are dropped (reported once, with their length) and the lines after them
    /// come through intact, LF or CRLF terminated.
    #[test]
    fn over_long_lines_are_skipped_and_the_decoder_recovers(
        max in 1usize..=32,
        spec in prop::collection::vec((any::<bool>(), 0usize..=32, any::<u8>(), any::<bool>()), 1..24),
        sizes in chunk_sizes(),
    ) {
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (long, extra, fill, crlf) in spec {
            // Content bytes: never `\n` or `\r`.
            let byte = if fill == b'\n' || fill == b'\r' { b'x' } else { fill };
            let len = if long { max + 1 + extra } else { extra.min(max - usize::from(crlf)) };
            let terminator: &[u8] = if crlf { b"\r\n" } else { b"\n" };
            stream.extend(std::iter::repeat_n(byte, len));
            stream.extend_from_slice(terminator);
            let on_the_wire = len + usize::from(crlf);
            want.push(if on_the_wire > max { Line::TooLong(on_the_wire) } else { Line::Complete(vec![byte; len]) });
        }
        let fed = feed(&stream, max, &sizes, EmptyPushes::Never);
        prop_assert_eq!(fed.lines, want);
        prop_assert_eq!(fed.tail, None);
    }
}

// ---------------------------------------------------------------------------------------------
// Classification

/// JSON values without floats (whose text form need not round-trip exactly).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Ids as codex sends them: integers from 0 (small ones often), sometimes strings or negative.
fn our_id() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 0u64..16, any::<u64>()]
}

fn peer_request_id() -> impl Strategy<Value = Value> {
    prop_oneof![our_id().prop_map(Value::from), (i64::MIN..0).prop_map(Value::from), ".{0,12}".prop_map(Value::String),]
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z]{1,10}(/[a-zA-Z]{1,12}){0,3}", ".{0,16}"]
}

const RESERVED: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// Fields real peers add beside the protocol's (`emittedAtMs`, …), plus maybe `"jsonrpc":"2.0"`.
fn extras() -> impl Strategy<Value = (bool, Map<String, Value>)> {
    let fields = prop::collection::btree_map("[a-zA-Z]{1,12}", json_value(), 0..3)
        .prop_map(|m| m.into_iter().filter(|(k, _)| !RESERVED.contains(&k.as_str())).collect::<Map<String, Value>>());
    (any::<bool>(), any::<Option<u64>>(), fields).prop_map(|(jsonrpc, emitted, mut fields)| {
        if let Some(ms) = emitted {
            fields.insert("emittedAtMs".into(), ms.into());
        }
        (jsonrpc, fields)
    })
}

/// A message as a peer would send it, and what `decode` must make of it.
#[derive(Clone, Debug)]
struct Case {
    wire: Value,
    want: Result<Incoming, Refused>,
}

/// The refusals a generated message can expect (`DecodeError` is not `Clone`).
#[derive(Clone, Debug)]
enum Refused {
    ForeignId(String),
    Unclassifiable,
}

impl Case {
    fn want(&self) -> Result<Incoming, DecodeError> {
        self.want.clone().map_err(|r| match r {
            Refused::ForeignId(id) => DecodeError::ForeignId(id),
            Refused::Unclassifiable => DecodeError::Unclassifiable,
        })
    }
}

fn with_extras(mut obj: Map<String, Value>, (jsonrpc, fields): (bool, Map<String, Value>)) -> Value {
    if jsonrpc {
        obj.insert("jsonrpc".into(), "2.0".into());
    }
    obj.extend(fields);
    Value::Object(obj)
}

fn request() -> impl Strategy<Value = Case> {
    (peer_request_id(), method(), prop::option::of(json_value()), extras()).prop_map(|(id, method, params, ex)| {
        let mut obj = Map::new();
        obj.insert("id".into(), id.clone());
        obj.insert("method".into(), method.clone().into());
        if let Some(p) = &params {
            obj.insert("params".into(), p.clone());
        }
        let want = Ok(Incoming::Request { id, method, params: params.unwrap_or(Value::Null) });
        Case { wire: with_extras(obj, ex), want }
    })
}

fn notification() -> impl Strategy<Value = Case> {
    (method(), prop::option::of(json_value()), any::<bool>(), extras()).prop_map(|(method, params, null_id, ex)| {
        let mut obj = Map::new();
        obj.insert("method".into(), method.clone().into());
        if let Some(p) = &params {
            obj.insert("params".into(), p.clone());
        }
        if null_id {
            obj.insert("id".into(), Value::Null);
        }
        let want = Ok(Incoming::Notification { method, params: params.unwrap_or(Value::Null) });
        Case { wire: with_extras(obj, ex), want }
    })
}

fn response() -> impl Strategy<Value = Case> {
    (our_id(), json_value(), any::<bool>(), extras()).prop_map(|(id, result, null_error, ex)| {
        let mut obj = Map::new();
        obj.insert("id".into(), id.into());
        obj.insert("result".into(), result.clone());
        if null_error {
            obj.insert("error".into(), Value::Null);
        }
        Case { wire: with_extras(obj, ex), want: Ok(Incoming::Response { id, result: Ok(result) }) }
    })
}

fn error_response() -> impl Strategy<Value = Case> {
    (our_id(), any::<i64>(), ".{0,24}", prop::option::of(json_value()), any::<bool>(), extras()).prop_map(
        |(id, code, message, data, with_result, ex)| {
            let mut err = Map::new();
            err.insert("code".into(), code.into());
            err.insert("message".into(), message.clone().into());
            if let Some(d) = &data {
                err.insert("data".into(), d.clone());
            }
            let mut obj = Map::new();
            obj.insert("id".into(), id.into());
            obj.insert("error".into(), Value::Object(err));
            if with_result {
                // A non-null error wins over a result.
                obj.insert("result".into(), Value::Null);
            }
            let want = Ok(Incoming::Response { id, result: Err(ErrorObject { code, message, data }) });
            Case { wire: with_extras(obj, ex), want }
        },
    )
}

/// Responses whose id cannot be one of ours (we only use unsigned integers).
fn foreign_response() -> impl Strategy<Value = Case> {
    let id = prop_oneof![(i64::MIN..0).prop_map(Value::from), ".{0,12}".prop_map(Value::String), Just(json!(1.5))];
    (id, json_value(), extras()).prop_map(|(id, result, ex)| {
        let mut obj = Map::new();
        obj.insert("id".into(), id.clone());
        obj.insert("result".into(), result);
        Case { wire: with_extras(obj, ex), want: Err(Refused::ForeignId(id.to_string())) }
    })
}

fn unclassifiable() -> impl Strategy<Value = Case> {
    let obj = prop_oneof![
        // No method and no id.
        extras().prop_map(|ex| with_extras(Map::new(), ex)),
        // A method that is not a string.
        (json_value().prop_filter("not a string", |v| !v.is_string()), our_id())
            .prop_map(|(m, id)| { json!({"method": m, "id": id}) }),
        // A response with neither result nor (non-null) error.
        (our_id(), any::<bool>()).prop_map(|(id, null_error)| {
            if null_error { json!({"id": id, "error": null}) } else { json!({"id": id}) }
        }),
    ];
    obj.prop_map(|wire| Case { wire, want: Err(Refused::Unclassifiable) })
}

fn case() -> impl Strategy<Value = Case> {
    prop_oneof![
        3 => request(),
        3 => notification(),
        3 => response(),
        2 => error_response(),
        1 => foreign_response(),
        1 => unclassifiable(),
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Whatever `decode` accepts agrees with a plain reading of the JSON (and nothing panics).
    #[test]
    fn decode_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        check_decode(&bytes);
    }

    #[test]
    fn decode_never_panics_on_near_json(wire in json_value(), cut in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut text = serde_json::to_vec(&wire).unwrap();
        let at = cut.index(text.len() + 1);
        check_decode(&text[..at]);
        if at < text.len() {
            text[at] = byte;
        }
        check_decode(&text);
    }

    /// Valid requests, notifications and responses (with codex's quirks: no `jsonrpc`, extra
    /// fields, ids from 0, `"error": null`) are classified with their method, id and payload.
    #[test]
    fn messages_are_classified(case in case()) {
        let line = serde_json::to_vec(&case.wire).unwrap();
        prop_assert_eq!(decode(&line), case.want(), "{}", String::from_utf8_lossy(&line));
        check_decode(&line);
        // Pretty-printed, or padded with whitespace and a stray `\r`: the same message.
        let pretty = serde_json::to_vec_pretty(&case.wire).unwrap();
        prop_assert_eq!(decode(&pretty), case.want());
        let mut padded = b" \t".to_vec();
        padded.extend_from_slice(&line);
        padded.extend_from_slice(b" \r");
        prop_assert_eq!(decode(&padded), case.want());
    }

    /// Every strict prefix of a message is malformed, never a different message.
    #[test]
    fn truncated_messages_are_not_json(case in case(), cut in any::<prop::sample::Index>()) {
        let line = serde_json::to_vec(&case.wire).unwrap();
        let at = cut.index(line.len());
        prop_assert!(matches!(decode(&line[..at]), Err(DecodeError::NotJson(_))));
    }

    #[test]
    fn json_that_is_not_an_object_is_refused(wire in json_value().prop_filter("not an object", |v| !v.is_object())) {
        prop_assert_eq!(decode(&serde_json::to_vec(&wire).unwrap()), Err(DecodeError::NotObject));
    }

    /// End to end: messages, garbage and over-long lines in one stream, cut at arbitrary points,
    /// come out as the same messages in order, with every over-long line skipped.
    #[test]
    fn a_chunked_stream_of_messages_decodes_in_order(
        cases in prop::collection::vec(case(), 1..12),
        noise in prop::collection::vec(0u8..3, 1..12),
        sizes in prop::collection::vec(1usize..=512, 1..6),
    ) {
        const MAX: usize = 4096;
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            match noise[i % noise.len()] {
                1 => {
                    stream.extend_from_slice(b"not json\r\n");
                    want.push(Err(()));
                }
                2 => {
                    stream.extend(std::iter::repeat_n(b'{', MAX + 1));
                    stream.push(b'\n');
                    want.push(Err(()));
                }
                _ => {}
            }
            let line = serde_json::to_vec(&case.wire).unwrap();
            if line.len() > MAX {
                continue;
            }
            stream.extend_from_slice(&line);
            stream.push(b'\n');
            want.push(Ok(case.want()));
        }
        let fed = feed(&stream, MAX, &sizes, EmptyPushes::Never);
        prop_assert_eq!(fed.tail, None);
        let got: Vec<_> = fed
            .lines
            .into_iter()
            .map(|l| match l {
                Line::Complete(b) => match decode(&b) {
                    Err(DecodeError::NotJson(_)) => Err(()),
                    other => Ok(other),
                },
                Line::TooLong(_) => Err(()),
            })
            .collect();
        prop_assert_eq!(got, want);
    }
}
