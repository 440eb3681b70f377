//! Property tests of the room WebSocket's answer to client frames (`reply_to_client`): bounded case
//! counts, so they run in CI on stable. The unbounded version is `fuzz/fuzz_targets/ws_client_frame.rs`;
//! both check the model in `ensemble_test_models::client_frames`.

use ensemble_server::api::ServerFrame;
use ensemble_server::ws::{decode_client_frame, reply_to_client};
use ensemble_test_models::client_frames::{Reply, check_reply, ping};
use proptest::prelude::*;
use serde_json::{Value, json};

/// 256 cases (a fraction of a second in CI); `PROPTEST_CASES=100000` for a deeper local run.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// The answer to one frame (`None`: a binary frame), checked against the model.
fn check(text: Option<&str>) -> Reply {
    let sent = serde_json::to_string(&reply_to_client(text)).unwrap();
    check_reply(text, decode_client_frame(text).map(drop), &sent)
}

/// JSON whitespace, as much as a client likes.
fn ws() -> impl Strategy<Value = String> {
    "[ \t\r\n]{0,4}"
}

/// JSON values of any shape (for extra fields and wrong `type` values).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{0,6}", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics_and_errors_stay_bounded(text in any::<String>()) {
        check(Some(&text));
    }

    /// Long inputs: the decoder's message may quote them (`unknown variant …`), the frame must not.
    #[test]
    fn long_inputs_are_not_echoed_in_full(kind in "[a-zA-Zé€😀\"\\\\]{200,600}", junk in ".{0,600}") {
        let unknown = json!({"type": kind}).to_string();
        prop_assert_eq!(check(Some(&unknown)), Reply::InvalidFrame);
        check(Some(&format!("{{\"type\":\"ping\"}}{junk}")));
        check(Some(&format!("{junk}{{\"type\":\"ping\"}}")));
    }

    #[test]
    fn json_frames_never_panic(value in json_value()) {
        check(Some(&value.to_string()));
    }

    /// `{"type":"ping"}` is a ping with any whitespace, in any field order, beside extra fields.
    #[test]
    fn pings_are_recognised(
        w in prop::array::uniform6(ws()),
        extra in prop::option::of(("[a-su-z][a-z]{0,6}", json_value())),
        extra_first in any::<bool>(),
    ) {
        let frame = ping(&w);
        prop_assert_eq!(check(Some(&frame)), Reply::Pong, "{:?}", frame);
        if let Some((key, value)) = extra {
            let field = format!("{}:{value}", json!(key));
            let text = if extra_first {
                format!("{{{field},{}\"type\":\"ping\"}}", w[0])
            } else {
                format!("{{\"type\":\"ping\",{}{field}}}", w[0])
            };
            prop_assert_eq!(check(Some(&text)), Reply::Pong, "{:?}", text);
        }
    }

    /// Only the exact tag `ping` is a ping (the tag is case-sensitive, and must be a string).
    #[test]
    fn other_types_are_errors(kind in json_value().prop_filter("not ping", |v| v != "ping")) {
        let text = json!({"type": kind}).to_string();
        prop_assert_eq!(check(Some(&text)), Reply::InvalidFrame, "{:?}", text);
    }
}

#[test]
fn binary_frames_are_errors() {
    assert_eq!(check(None), Reply::InvalidFrame);
}

#[test]
fn case_variants_of_ping_are_errors() {
    for kind in ["Ping", "PING", " ping", "ping ", "pong"] {
        let text = json!({ "type": kind }).to_string();
        assert!(matches!(reply_to_client(Some(&text)), ServerFrame::Error { .. }), "{text}");
    }
    assert!(matches!(reply_to_client(Some(r#"{"type":"ping","type":"ping"}"#)), ServerFrame::Error { .. }));
    assert!(matches!(reply_to_client(Some("")), ServerFrame::Error { .. }));
}
