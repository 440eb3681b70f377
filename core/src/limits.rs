//! What a client may send: ids and the bounds of every string in a request. Each bound has a name
//! here, the OpenAPI document states it, and a refusal says which field and which limit.
//!
//! Ids (rooms, sessions, sides, `clientSubmitId`, `requestId`) appear in URLs, log lines, SQLite
//! keys and file names: 1–128 bytes of `[A-Za-z0-9._~:-]`, not only dots (`.` and `..` would be
//! rewritten by every client that normalises URLs). Free text (title, cwd, model, …) is at most
//! [`MAX_TEXT_CHARS`] characters; what a turn or a goal carries is bounded by the configured
//! `max_input_bytes`.

use serde_json::{Value, json};

/// Longest id, in bytes (its characters are ASCII).
pub const MAX_ID_BYTES: usize = 128;
/// Longest short text field of a request (title, cwd, model, reasoning effort), in characters.
pub const MAX_TEXT_CHARS: usize = 4096;
/// The id pattern as the OpenAPI document states it (at least one character is not a dot).
pub const ID_PATTERN: &str = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$";

/// A request field out of bounds: which field, which limit, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FieldError {
    /// `invalid_id` for an id in a path, `invalid_input` for a body field (an id or a text over its
    /// bound).
    pub code: &'static str,
    pub field: String,
    pub message: String,
    /// What the client is told: the field and its limit.
    /// Boxed: a JSON value is large, and every `Result` carrying this error would be too.
    pub details: Box<Value>,
}

impl FieldError {
    /// The same refusal of a field of the request body (code `invalid_input`).
    pub fn in_body(self) -> Self {
        Self { code: "invalid_input", ..self }
    }
}

fn id_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b':' | b'-')
}

/// Checks an id (see the module's doc).
pub fn check_id(field: &str, id: &str) -> Result<(), FieldError> {
    let problem = if id.is_empty() {
        Some("must not be empty")
    } else if id.len() > MAX_ID_BYTES {
        Some("is longer than 128 bytes")
    } else if !id.bytes().all(id_char) {
        Some("may only contain letters, digits and . _ ~ : -")
    } else if id.bytes().all(|b| b == b'.') {
        Some("must not consist of dots only")
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(p) => Err(FieldError {
            code: "invalid_id",
            field: field.to_owned(),
            message: format!("{field} {p}"),
            details: Box::new(json!({ "field": field, "maxBytes": MAX_ID_BYTES, "pattern": ID_PATTERN })),
        }),
    }
}

/// Checks a short text field: at most [`MAX_TEXT_CHARS`] characters.
pub fn check_text(field: &str, text: &str) -> Result<(), FieldError> {
    check_chars(field, text, MAX_TEXT_CHARS)
}

/// Checks a text field against a bound in characters.
pub fn check_chars(field: &str, text: &str, max_chars: usize) -> Result<(), FieldError> {
    // Bytes first: a text of fewer bytes than the limit cannot have more characters.
    if text.len() <= max_chars || text.chars().count() <= max_chars {
        return Ok(());
    }
    Err(FieldError {
        code: "invalid_input",
        field: field.to_owned(),
        message: format!("{field} is longer than {max_chars} characters"),
        details: Box::new(json!({ "field": field, "maxChars": max_chars })),
    })
}

/// Checks a field's size in bytes (turn input, goal objective, answers: `max_input_bytes`).
pub fn check_bytes(field: &str, size: usize, max_bytes: usize) -> Result<(), FieldError> {
    if size <= max_bytes {
        return Ok(());
    }
    Err(FieldError {
        code: "invalid_input",
        field: field.to_owned(),
        message: format!("{field} is {size} bytes, more than the limit of {max_bytes} bytes"),
        details: Box::new(json!({ "field": field, "maxBytes": max_bytes })),
    })
}

/// Cuts text a provider reports (a title, an error, an auth message) to [`MAX_TEXT_CHARS`]
/// characters, so every session — and every event that carries one — stays bounded.
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…[truncated]", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked() {
        for ok in ["room-1", "a.b_c:d-E9", "~x", "a..b", ".x", "..a", &"x".repeat(128)] {
            assert!(check_id("roomId", ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "...", "has space", "slash/no", "é", "a%2F", &"x".repeat(129)] {
            let e = check_id("roomId", bad).unwrap_err();
            assert_eq!(e.code, "invalid_id", "{bad}");
            assert_eq!(e.details["maxBytes"], 128);
        }
    }

    #[test]
    fn texts_are_counted_in_characters() {
        assert!(check_chars("title", &"é".repeat(10), 10).is_ok(), "20 bytes, 10 characters");
        let e = check_chars("title", &"é".repeat(11), 10).unwrap_err();
        assert_eq!((e.code, e.details["maxChars"].as_u64()), ("invalid_input", Some(10)));
        assert!(check_bytes("input", 11, 10).is_err());
        assert!(check_bytes("input", 10, 10).is_ok());
    }

    #[test]
    fn provider_text_is_clipped() {
        assert_eq!(clip("short"), "short");
        let long = clip(&"é".repeat(MAX_TEXT_CHARS + 5));
        assert!(long.ends_with("…[truncated]"));
        assert_eq!(long.chars().count(), MAX_TEXT_CHARS + "…[truncated]".chars().count());
    }

    /// The pattern the document states accepts exactly what `check_id` accepts.
    #[test]
    fn the_documented_pattern_agrees() {
        let pattern = |s: &str| {
            s.bytes().all(id_char) && s.bytes().any(|b| b != b'.') && !s.is_empty() && s.len() <= MAX_ID_BYTES
        };
        for s in ["a", ".", "..", "a.", "~", "", "a b", ":"] {
            assert_eq!(pattern(s), check_id("x", s).is_ok(), "{s:?}");
        }
    }
}
