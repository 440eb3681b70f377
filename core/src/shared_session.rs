//! [`SharedSession`]: the session a `session.started` carries, shared with the start's answer and
//! serialised once for both.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::model::Session;

/// A session shared by reference count that keeps its JSON once it has been made ([`Self::json`]).
///
/// Why: a start serialised the same session twice — the store's writer into the
/// `session.started` frame, then the request thread into the REST answer — and the answer's was
/// a visible share of the instructions a start costs the server. The writer makes the JSON first (the answer
/// waits for the commit), so the answer sends the kept JSON as it is.
///
/// The JSON is kept only as long as the event and the answer are: the controller's own copy of
/// the session is a plain [`Session`], so a live session holds no second copy in JSON.
pub struct SharedSession(Arc<Inner>);

struct Inner {
    session: Session,
    json: OnceLock<Box<RawValue>>,
}

impl SharedSession {
    pub fn new(session: Session) -> Self {
        SharedSession(Arc::new(Inner { session, json: OnceLock::new() }))
    }

    /// The session, without a copy when this is its last holder.
    pub fn into_session(self) -> Session {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.session,
            Err(shared) => shared.session.clone(),
        }
    }

    /// Whether its JSON has been made (and is kept).
    pub fn is_serialised(&self) -> bool {
        self.0.json.get().is_some()
    }

    /// The session's JSON, made at the first call and kept for the next ones.
    pub fn json(&self) -> serde_json::Result<&str> {
        self.raw().map(RawValue::get)
    }

    fn raw(&self) -> serde_json::Result<&RawValue> {
        if let Some(json) = self.0.json.get() {
            return Ok(json);
        }
        let json = serde_json::value::to_raw_value(&self.0.session)?;
        // Two threads making it at once both succeed; the first one's JSON is kept.
        Ok(self.0.json.get_or_init(|| json))
    }
}

impl From<Session> for SharedSession {
    fn from(session: Session) -> Self {
        SharedSession::new(session)
    }
}

impl Clone for SharedSession {
    fn clone(&self) -> Self {
        SharedSession(self.0.clone())
    }
}

impl Deref for SharedSession {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.0.session
    }
}

impl PartialEq for SharedSession {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.session == other.0.session
    }
}

impl fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.session.fmt(f)
    }
}

impl Serialize for SharedSession {
    /// As the session, through its kept JSON ([`Self::json`]): the `session.started` frame makes
    /// it, the start's answer sends it as it is.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw().map_err(serde::ser::Error::custom)?.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedSession {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Session::deserialize(deserializer).map(SharedSession::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        let mut s = Session::new_canonical("r1", "s1", "scripted", "/w", 7);
        s.title = "a \"quoted\" title\n é".into();
        s
    }

    #[derive(Serialize, Deserialize)]
    struct Holder {
        session: SharedSession,
        n: u8,
    }

    #[derive(Serialize)]
    struct PlainHolder {
        session: Session,
        n: u8,
    }

    #[test]
    fn it_serialises_as_the_session_would_and_keeps_its_json_once_made() {
        let shared = SharedSession::new(session());
        let plain = serde_json::to_string(&PlainHolder { session: session(), n: 1 }).unwrap();
        let holder = Holder { session: shared.clone(), n: 1 };
        assert!(!shared.is_serialised());
        assert_eq!(serde_json::to_string(&holder).unwrap(), plain);
        assert!(shared.is_serialised(), "serialising it keeps its JSON");
        let json = shared.json().unwrap();
        assert_eq!(json, serde_json::to_string(&session()).unwrap());
        assert!(shared.is_serialised() && holder.session.is_serialised(), "kept for every holder");
        assert_eq!(holder.session.json().unwrap().as_ptr(), json.as_ptr(), "made once");
        assert_eq!(serde_json::to_string(&holder).unwrap(), plain);
        let value: serde_json::Value = serde_json::from_str(&plain).unwrap();
        assert_eq!(serde_json::to_value(&holder).unwrap(), value);
    }

    #[test]
    fn it_reads_back_equal_without_json_and_gives_its_session_up_without_a_copy_when_last() {
        let shared = SharedSession::new(session());
        let text = serde_json::to_string(&Holder { session: shared.clone(), n: 2 }).unwrap();
        let back: Holder = serde_json::from_str(&text).unwrap();
        assert_eq!(back.session, shared);
        assert!(!back.session.is_serialised(), "read back, it keeps no JSON until serialised");
        let title_ptr = shared.title.as_ptr();
        let other = shared.clone();
        assert_eq!(other.into_session(), session(), "a copy while another holder remains");
        assert_eq!(shared.into_session().title.as_ptr(), title_ptr, "the last holder's session, not a copy");
    }
}
