//! Per-session async lifecycle locks.
//!
//! Every lifecycle operation on a session runs under its lock. Locks are acquired with a deadline
//! (a clear `lock_timeout` instead of a hang; the wait is cancellable by dropping it), are
//! reference-counted per key (an entry disappears when nobody holds or waits for it), and when two
//! sessions must be locked they are locked in sorted order, so two operations can never deadlock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;

use ensemble_core::model::SessionKey;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("timed out after {waited:?} waiting for the lifecycle lock of {key}")]
pub struct LockTimeout {
    pub key: String,
    pub waited: Duration,
}

#[derive(Default)]
pub struct LockTable {
    // The key is shared with the guards (one copy per locked session, not one per guard).
    locks: Mutex<HashMap<Arc<SessionKey>, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds one session's lifecycle lock.
pub struct LifecycleGuard {
    guard: Option<OwnedMutexGuard<()>>,
    key: Arc<SessionKey>,
    table: Arc<LockTable>,
}

impl LockTable {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub async fn acquire(
        self: &Arc<Self>,
        key: &SessionKey,
        deadline: Duration,
    ) -> Result<LifecycleGuard, LockTimeout> {
        let (key, lock) = {
            let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            match locks.get_key_value(key) {
                Some((k, l)) => (k.clone(), l.clone()),
                None => {
                    let (k, l) = (Arc::new(key.clone()), Arc::default());
                    locks.insert(k.clone(), Arc::clone(&l));
                    (k, l)
                }
            }
        };
        // Uncontended, the usual case, it needs no deadline (and no timer). A lock with waiters is
        // handed to the first of them, so this never overtakes one.
        let guard = match lock.clone().try_lock_owned() {
            Ok(guard) => guard,
            Err(_) => match tokio::time::timeout(deadline, lock.lock_owned()).await {
                Ok(guard) => guard,
                Err(_) => {
                    self.forget_if_unused(&key);
                    return Err(LockTimeout { key: key.to_string(), waited: deadline });
                }
            },
        };
        Ok(LifecycleGuard { guard: Some(guard), key, table: self.clone() })
    }

    /// Locks two sessions in sorted key order. The guards come back in argument order.
    pub async fn acquire_pair(
        self: &Arc<Self>,
        a: &SessionKey,
        b: &SessionKey,
        deadline: Duration,
    ) -> Result<(LifecycleGuard, LifecycleGuard), LockTimeout> {
        let started = tokio::time::Instant::now();
        let (first, second) = if a <= b { (a, b) } else { (b, a) };
        let g1 = self.acquire(first, deadline).await?;
        let left = deadline.saturating_sub(started.elapsed());
        let g2 = self.acquire(second, left).await?;
        Ok(if a <= b { (g1, g2) } else { (g2, g1) })
    }

    /// Keys with a live lock entry (held or awaited).
    pub fn len(&self) -> usize {
        self.locks.lock().map(|l| l.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn forget_if_unused(&self, key: &SessionKey) {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        // The map's own reference is the only one left: nobody holds or waits.
        if locks.get(key).is_some_and(|l| Arc::strong_count(l) == 1) {
            locks.remove(key);
        }
    }
}

impl Drop for LifecycleGuard {
    fn drop(&mut self) {
        drop(self.guard.take());
        self.table.forget_if_unused(&self.key);
    }
}

#[cfg(test)]
#[path = "locks_tests.rs"]
mod tests;
