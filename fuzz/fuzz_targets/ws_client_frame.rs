//! Fuzzes the room WebSocket's client-frame handling (`reply_to_client`, `decode_client_frame`).
//!
//! Input layout: byte 0 selects the frame kind (even: text, odd: binary), the rest is the frame
//! (lossily made UTF-8 for text frames). Also builds a `ping` frame with input-chosen JSON
//! whitespace, which must always get `Pong`.

#![no_main]

use ensemble_server::api::ServerFrame;
use ensemble_server::ws::{decode_client_frame, reply_to_client};
use libfuzzer_sys::fuzz_target;

/// The error message a frame must carry: the decoder's message cut to at most 256 bytes, on a
/// character boundary.
fn bounded(mut message: String) -> String {
    let mut cut = message.len().min(256);
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    message.truncate(cut);
    message
}

fn check(text: Option<&str>) {
    let reply = reply_to_client(text);
    match (decode_client_frame(text), &reply) {
        (Ok(_), ServerFrame::Pong) => {}
        (Err(full), ServerFrame::Error { code, message }) => {
            assert_eq!(code, "invalid_frame");
            assert!(message.len() <= 256, "an error message of {} bytes", message.len());
            assert_eq!(*message, bounded(full), "the message is the decoder's, cut at 256 bytes");
        }
        (decoded, reply) => panic!("decoded {decoded:?} but answered {reply:?}"),
    }
    if text.is_none() {
        assert!(matches!(reply, ServerFrame::Error { .. }), "binary frames are refused");
    }
    // The serialized frame is bounded too (JSON escaping at most 6 bytes per input byte).
    let json = serde_json::to_string(&reply).expect("a server frame serializes");
    assert!(json.len() <= 64 + 6 * 256, "a {}-byte error frame", json.len());
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
    let ws = |i: usize| -> String {
        frame.iter().skip(i * 3).take(3).map(|b| [' ', '\t', '\n', '\r'][usize::from(b % 4)]).collect()
    };
    let ping = format!("{}{{{}\"type\"{}:{}\"ping\"{}}}{}", ws(0), ws(1), ws(2), ws(3), ws(4), ws(5));
    assert!(matches!(reply_to_client(Some(&ping)), ServerFrame::Pong), "{ping:?} is a ping");
});
