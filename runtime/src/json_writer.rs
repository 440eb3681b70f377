//! [`JsonWriter`]: JSON objects written by hand around serde, for the few types every start and
//! submit serialises (a session, its record, an event's envelope), byte for byte what their
//! derived `Serialize` makes — each has a test holding the two together.

use serde::Serialize;

/// Writes a JSON object's members with their keys as they are (the caller's keys need no escaping)
/// and their values through serde_json.
pub(crate) struct JsonWriter<'a>(pub(crate) &'a mut Vec<u8>);

impl JsonWriter<'_> {
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    pub(crate) fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *self.0, value)
    }

    /// `,"key":value`.
    pub(crate) fn field<T: Serialize + ?Sized>(&mut self, key: &[u8], value: &T) -> serde_json::Result<()> {
        self.0.extend_from_slice(b",\"");
        self.0.extend_from_slice(key);
        self.0.extend_from_slice(b"\":");
        self.value(value)
    }

    /// As [`Self::field`], nothing for `None` (serde's `skip_serializing_if = "Option::is_none"`).
    pub(crate) fn optional<T: Serialize>(&mut self, key: &[u8], value: &Option<T>) -> serde_json::Result<()> {
        match value {
            Some(v) => self.field(key, v),
            None => Ok(()),
        }
    }
}
