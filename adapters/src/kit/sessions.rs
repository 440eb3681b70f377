//! The live sessions of one adapter: the map every provider keeps from a session's key to its live
//! side (a process and its state), behind one lock held only for the map operation — never across
//! an await, so stopping what a replace or a remove took out is the caller's, after the lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use ensemble_core::adapter::AdapterError;
use ensemble_core::model::{Session, SessionKey, session_table};

/// What a provider's live side says of itself: whether it still serves its session (its process
/// runs and its handshake is done).
pub trait Liveness {
    fn is_live(&self) -> bool;
}

/// An adapter's live sessions, by key.
pub struct Sessions<L> {
    map: Mutex<HashMap<SessionKey, Arc<L>>>,
}

impl<L> Default for Sessions<L> {
    fn default() -> Self {
        Self { map: Mutex::new(HashMap::new()) }
    }
}

impl<L> Sessions<L> {
    /// A map sized for `capacity` live sessions (the server's limit), bounded as
    /// [`session_table`] bounds it.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { map: Mutex::new(session_table(capacity)) }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionKey, Arc<L>>> {
        // A panic elsewhere never leaves the map half-changed: each operation is one call.
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, key: &SessionKey) -> Option<Arc<L>> {
        self.lock().get(key).cloned()
    }

    /// Takes the session out; stopping it is the caller's.
    pub fn remove(&self, key: &SessionKey) -> Option<Arc<L>> {
        self.lock().remove(key)
    }

    /// Puts `live` in for `key`; the one it replaces is returned, for the caller to stop.
    pub fn replace(&self, key: SessionKey, live: Arc<L>) -> Option<Arc<L>> {
        self.lock().insert(key, live)
    }

    /// How many live sides pass `filter`.
    pub fn count(&self, filter: impl Fn(&L) -> bool) -> usize {
        self.lock().values().filter(|l| filter(l)).count()
    }
}

impl<L: Liveness> Sessions<L> {
    /// The session's live side if it still serves it, else [`AdapterError::NotLive`].
    pub fn live_or_err(&self, session: &Session) -> Result<Arc<L>, AdapterError> {
        self.get(&session.key()).filter(|l| l.is_live()).ok_or(AdapterError::NotLive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake(bool);
    impl Liveness for Fake {
        fn is_live(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn a_replace_hands_back_the_old_side_and_only_a_live_one_serves() {
        let s: Sessions<Fake> = Sessions::default();
        let key = SessionKey::new("r", "s");
        assert!(s.replace(key.clone(), Arc::new(Fake(false))).is_none());
        assert!(s.replace(key.clone(), Arc::new(Fake(true))).is_some_and(|old| !old.0), "the old side comes back");
        assert_eq!(s.count(|l| l.is_live()), 1);
        assert!(s.remove(&key).is_some() && s.get(&key).is_none());
    }
}
