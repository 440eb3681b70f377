//! Fuzzes the room WebSocket's client-frame handling (`reply_to_client`, `decode_client_frame`)
//! against the model in `ensemble_test_models::client_frames` (the property tests in
//! `server/tests/it/ws_frame_props.rs` check the same model).
//!
//! Input layout: byte 0 selects the frame kind (even: text, odd: binary), the rest is the frame
//! (lossily made UTF-8 for text frames). Also builds a `ping` frame with input-chosen JSON
//! whitespace, which must always get `Pong`.

#![no_main]

use ensemble_server::ws::{decode_client_frame, reply_to_client};
use ensemble_test_models::client_frames::{Reply, check_reply, ping};
use libfuzzer_sys::fuzz_target;

/// The answer to one frame (`None`: a binary frame), checked against the model.
fn check(text: Option<&str>) -> Reply {
    let sent = serde_json::to_string(&reply_to_client(text)).expect("a server frame serializes");
    check_reply(text, decode_client_frame(text).map(drop), &sent)
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, frame)) = data.split_first() else { return };
    if kind % 2 == 1 {
        check(None);
        return;
    }
    let text = String::from_utf8_lossy(frame);
    check(Some(&text));

    // `{"type":"ping"}` with arbitrary JSON whitespace between its tokens is always a ping.
    let ws: [String; 6] = std::array::from_fn(|i| {
        frame.iter().skip(i * 3).take(3).map(|b| [' ', '\t', '\n', '\r'][usize::from(b % 4)]).collect()
    });
    let ping = ping(&ws);
    assert_eq!(check(Some(&ping)), Reply::Pong, "{ping:?} is a ping");
});
