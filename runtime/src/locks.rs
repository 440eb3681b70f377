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

use crate::model::SessionKey;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("timed out after {waited:?} waiting for the lifecycle lock of {key}")]
pub struct LockTimeout {
    pub key: String,
    pub waited: Duration,
}

#[derive(Default)]
pub struct LockTable {
    locks: Mutex<HashMap<SessionKey, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds one session's lifecycle lock.
pub struct LifecycleGuard {
    guard: Option<OwnedMutexGuard<()>>,
    key: SessionKey,
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
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            locks.entry(key.clone()).or_default().clone()
        };
        match tokio::time::timeout(deadline, lock.lock_owned()).await {
            Ok(guard) => Ok(LifecycleGuard { guard: Some(guard), key: key.clone(), table: self.clone() }),
            Err(_) => {
                self.forget_if_unused(key);
                Err(LockTimeout { key: key.to_string(), waited: deadline })
            }
        }
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
mod tests {
    use super::*;

    fn key(s: &str) -> SessionKey {
        SessionKey::new("r", s)
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_lock_times_out_with_a_clear_error() {
        let t = LockTable::new();
        let _g = t.acquire(&key("a"), Duration::from_secs(1)).await.unwrap();
        let err = t.acquire(&key("a"), Duration::from_millis(200)).await.err().unwrap();
        assert_eq!(err.waited, Duration::from_millis(200));
        assert!(err.to_string().contains("r/a"));
        // Other keys are independent.
        let _b = t.acquire(&key("b"), Duration::from_millis(200)).await.unwrap();
    }

    #[tokio::test]
    async fn entries_disappear_when_unused() {
        let t = LockTable::new();
        {
            let _g = t.acquire(&key("a"), Duration::from_secs(1)).await.unwrap();
            assert_eq!(t.len(), 1);
        }
        assert!(t.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn pairs_lock_in_sorted_order_so_opposite_orders_do_not_deadlock() {
        let t = LockTable::new();
        let mut tasks = Vec::new();
        for i in 0..50 {
            let t = t.clone();
            tasks.push(tokio::spawn(async move {
                let (a, b) = if i % 2 == 0 { (key("x"), key("y")) } else { (key("y"), key("x")) };
                let (ga, gb) = t.acquire_pair(&a, &b, Duration::from_secs(5)).await.unwrap();
                assert_eq!(ga.key, a);
                assert_eq!(gb.key, b);
                tokio::task::yield_now().await;
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert!(t.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_wait_leaves_no_residue() {
        let t = LockTable::new();
        let g = t.acquire(&key("a"), Duration::from_secs(1)).await.unwrap();
        let waiter = {
            let t = t.clone();
            tokio::spawn(async move { t.acquire(&key("a"), Duration::from_secs(60)).await.map(|_| ()) })
        };
        tokio::task::yield_now().await;
        waiter.abort();
        let _ = waiter.await;
        drop(g);
        assert!(t.is_empty());
    }
}
