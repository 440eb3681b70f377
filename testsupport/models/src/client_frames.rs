//! The room WebSocket's answer to one client frame, as it goes on the wire: `{"type":"pong"}`
//! exactly when the server's decoder accepts the frame, else
//! `{"type":"error","code":"invalid_frame","message":…}` whose message is the decoder's, cut to at
//! most [`MAX_MESSAGE_BYTES`] on a character boundary. Binary frames are always refused, and no
//! answer is longer than [`MAX_REPLY_BYTES`].

use serde_json::{Value, json};

/// The most bytes of the decoder's message an error frame carries.
pub const MAX_MESSAGE_BYTES: usize = 256;
/// The longest answer: JSON escaping costs at most 6 bytes per message byte, plus the envelope.
pub const MAX_REPLY_BYTES: usize = 64 + 6 * MAX_MESSAGE_BYTES;

/// Which answer a frame got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Pong,
    InvalidFrame,
}

/// The decoder's message as an error frame must carry it.
pub fn bounded(mut message: String) -> String {
    let mut cut = message.len().min(MAX_MESSAGE_BYTES);
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    message.truncate(cut);
    message
}

/// Checks the answer `sent` (its JSON text) to a client frame (`text`; `None`: a binary frame) that
/// the server's decoder accepted (`Ok`) or refused with a message (`Err`).
pub fn check_reply(text: Option<&str>, decoded: Result<(), String>, sent: &str) -> Reply {
    assert!(sent.len() <= MAX_REPLY_BYTES, "a {}-byte answer", sent.len());
    let (want, reply) = match decoded {
        Ok(()) => (json!({"type": "pong"}), Reply::Pong),
        Err(message) => {
            (json!({"type": "error", "code": "invalid_frame", "message": bounded(message)}), Reply::InvalidFrame)
        }
    };
    let got: Value = serde_json::from_str(sent).unwrap_or_else(|e| panic!("the answer is not JSON ({e}): {sent}"));
    assert_eq!(got, want, "the answer to {text:?}");
    assert!(text.is_some() || reply == Reply::InvalidFrame, "binary frames are refused");
    reply
}

/// `{"type":"ping"}` with the given JSON whitespace before, inside and after its tokens: always a
/// ping.
pub fn ping<S: AsRef<str>>(ws: &[S; 6]) -> String {
    let [a, b, c, d, e, f] = ws.each_ref().map(AsRef::as_ref);
    format!("{a}{{{b}\"type\"{c}:{d}\"ping\"{e}}}{f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_on_a_character_boundary() {
        let message = format!("{}€", "a".repeat(MAX_MESSAGE_BYTES - 1));
        assert_eq!(bounded(message), "a".repeat(MAX_MESSAGE_BYTES - 1));
        assert_eq!(ping(&["", " ", "\t", "\n", "\r", ""]), "{ \"type\"\t:\n\"ping\"\r}");
    }
}
