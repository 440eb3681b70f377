//! Whether the store can write, and which sessions lost events while it could not.
//!
//! The controller folds a session's events in memory and hands them to the writer without waiting
//! (an agent's stream would otherwise wait for every commit). When a commit fails — a full disk, a
//! database that went away — those events are gone from the log while memory moved on. The writer
//! records here who lost what; the controller's store watcher brings each such session back in
//! line with its durable record once a probe says the store writes again (`controller::store_watch`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use ensemble_core::model::SessionKey;

use super::types::StoreError;

/// Why the store cannot write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteFailure {
    /// The file system (or the database's disk) is full: 507 rather than 503.
    pub full: bool,
    /// The engine's error, for logs and the notice (never a client's data).
    pub message: String,
}

/// What one failed append lost: the session and how many of its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Loss {
    pub(crate) room_id: String,
    pub(crate) session_id: String,
    pub(crate) events: u64,
}

#[derive(Default)]
struct Inner {
    failing: Option<WriteFailure>,
    lost: HashMap<SessionKey, u64>,
}

#[derive(Default)]
pub struct StoreHealth {
    /// Mirrors `inner.failing.is_some()`, so a successful commit (the common case, once per group)
    /// looks at one atomic and takes no lock.
    failing_flag: AtomicBool,
    inner: Mutex<Inner>,
    /// Rung on every failure, so the watcher starts probing.
    failed: Notify,
}

impl StoreHealth {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Why the store cannot write now, if it cannot (the last commit failed).
    pub fn failing(&self) -> Option<WriteFailure> {
        if !self.failing_flag.load(Ordering::Acquire) {
            return None;
        }
        self.inner().failing.clone()
    }

    /// A commit failed with `error`, losing `lost`: the store cannot write.
    pub(crate) fn failed(&self, error: &StoreError, lost: impl IntoIterator<Item = Loss>) {
        self.record(Some(error), lost);
    }

    /// One operation failed inside a group that committed: its events are lost, but only a
    /// storage error says the store cannot write (another, e.g. a record the books do not know,
    /// is that operation's alone).
    pub(crate) fn op_failed(&self, error: &StoreError, lost: impl IntoIterator<Item = Loss>) {
        let storage = error.is_full() || matches!(error, StoreError::Unavailable(_) | StoreError::Io(_));
        self.record(storage.then_some(error), lost);
    }

    fn record(&self, failing: Option<&StoreError>, lost: impl IntoIterator<Item = Loss>) {
        {
            let mut inner = self.inner();
            if let Some(error) = failing {
                inner.failing = Some(WriteFailure { full: error.is_full(), message: error.to_string() });
                self.failing_flag.store(true, Ordering::Release);
                metrics::gauge!("ensemble_store_writable").set(0.0);
            }
            for loss in lost {
                let key = SessionKey { room_id: loss.room_id, session_id: loss.session_id };
                *inner.lost.entry(key).or_default() += loss.events;
            }
        }
        self.failed.notify_one();
    }

    /// A probe wrote (with the free space it asks for): the store writes again. An ordinary
    /// commit does not say so: after a full disk, small writes land where a large one failed.
    pub(crate) fn recovered(&self) {
        if !self.failing_flag.load(Ordering::Acquire) {
            return;
        }
        self.inner().failing = None;
        self.failing_flag.store(false, Ordering::Release);
        metrics::gauge!("ensemble_store_writable").set(1.0);
        tracing::info!("the store writes again");
    }

    /// Takes the sessions that lost events (and how many each), for the watcher to repair.
    pub fn take_losses(&self) -> Vec<(SessionKey, u64)> {
        let mut lost: Vec<_> = self.inner().lost.drain().collect();
        lost.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        lost
    }

    /// Puts losses back that could not be repaired yet (the store failed again meanwhile).
    pub fn restore_losses(&self, lost: impl IntoIterator<Item = (SessionKey, u64)>) {
        let mut inner = self.inner();
        for (key, n) in lost {
            *inner.lost.entry(key).or_default() += n;
        }
    }

    /// Whether sessions wait for repair.
    pub fn has_losses(&self) -> bool {
        !self.inner().lost.is_empty()
    }

    /// Resolves at the next failure (or at once if one happened since the last wait).
    pub async fn next_failure(&self) {
        self.failed.notified().await;
    }
}

impl std::fmt::Debug for StoreHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreHealth").field("failing", &self.failing()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(session: &str, events: u64) -> Loss {
        Loss { room_id: "r".into(), session_id: session.into(), events }
    }

    #[test]
    fn failures_are_remembered_until_a_commit_succeeds_and_losses_until_taken() {
        let h = StoreHealth::default();
        assert_eq!(h.failing(), None);
        h.recovered();
        let full = StoreError::Io(std::io::Error::from_raw_os_error(libc::ENOSPC));
        h.failed(&full, [loss("a", 2), loss("b", 1)]);
        h.failed(&StoreError::Other("x".into()), [loss("a", 3)]);
        assert_eq!(h.failing().map(|f| f.full), Some(false), "the last failure counts");
        h.failed(&full, []);
        assert_eq!(h.failing().map(|f| f.full), Some(true));
        h.recovered();
        assert_eq!(h.failing(), None);
        assert!(h.has_losses(), "losses outlive the failure: they still need repair");
        let taken = h.take_losses();
        assert_eq!(taken.iter().map(|(k, n)| (k.session_id.as_str(), *n)).collect::<Vec<_>>(), [("a", 5), ("b", 1)]);
        assert!(!h.has_losses());
        h.restore_losses(taken);
        assert_eq!(h.take_losses().len(), 2);
    }
}

/// Counters of the writer, for tests and `/metrics`, and whether its last commit failed.
#[derive(Debug, Default)]
pub struct StoreStats {
    pub commits: std::sync::atomic::AtomicU64,
    pub events: std::sync::atomic::AtomicU64,
    pub health: StoreHealth,
}
