//! The store watcher: what happens to sessions when a commit fails.
//!
//! A session's events are folded in memory and handed to the writer without waiting for their
//! commit. When a commit fails (a full disk, a database gone), the log misses events that memory
//! has seen, and an agent streaming into it keeps losing more. So, for every session that lost
//! events ([`crate::store::StoreHealth`]):
//!
//! 1. at once, its agent process is stopped (its output has nowhere to go) and its later facts
//!    are dropped;
//! 2. the store is probed every `store_retry` until it writes again (meanwhile `check_accepting`
//!    refuses new work with 507 / 503 and `/readyz` says not ready);
//! 3. then the session is rebuilt from its durable record — memory goes back to what the log says
//!    — and the restart rules are applied with code `store_unavailable`: what the durable turn left
//!    open is closed, pending interactions are resolved, the turn ends `turn.failed`, the session is
//!    `disconnected` (resumable), and a `notice` says how many events were lost.
//!
//! A turn whose `turn.started` never reached the log is not in the durable record, so it gets no
//! `turn.failed` either. A session whose start never reached the log is forgotten (its start was
//! answered with the error). If the process dies first, the next start applies the restart rules
//! (`server_restart`) from the same durable records.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Controller;
use super::error::{ControllerError, Result};
use super::lifecycle::Interruption;
use crate::session::Phase;
use ensemble_core::model::SessionKey;

impl Controller {
    /// Watches the store until the controller stops accepting work (see the module comment).
    pub fn spawn_store_watch(&self) {
        let inner = Arc::downgrade(&self.inner);
        let store = self.inner.store.clone();
        let retry = self.inner.config.store_retry;
        tokio::spawn(async move {
            let health = store.health();
            // Sessions that lost events and are not repaired yet, with how many they lost.
            let mut pending: BTreeMap<SessionKey, u64> = BTreeMap::new();
            let mut stopped: BTreeSet<SessionKey> = BTreeSet::new();
            loop {
                if pending.is_empty() && health.failing().is_none() && !health.has_losses() {
                    health.next_failure().await;
                }
                let Some(inner) = inner.upgrade() else { return };
                if !inner.accepting.load(Ordering::Relaxed) {
                    return;
                }
                let this = Controller { inner };
                for (key, n) in health.take_losses() {
                    *pending.entry(key).or_default() += n;
                }
                for key in pending.keys() {
                    if stopped.insert(key.clone()) {
                        this.stop_for_repair(key).await;
                    }
                }
                let writable = health.failing().is_none() || this.inner.store.probe().await.is_ok();
                if writable {
                    let keys: Vec<SessionKey> = pending.keys().cloned().collect();
                    for key in keys {
                        let lost = pending.get(&key).copied().unwrap_or_default();
                        match this.repair_lost(&key, lost).await {
                            Ok(()) => {}
                            Err(ControllerError::Store(e)) => {
                                tracing::warn!(session = %key, error = %e, "repairing a session failed; retrying");
                                break;
                            }
                            Err(e) => tracing::warn!(session = %key, error = %e, "a session could not be repaired"),
                        }
                        pending.remove(&key);
                        stopped.remove(&key);
                    }
                }
                drop(this);
                if !pending.is_empty() || health.failing().is_some() {
                    tokio::time::sleep(retry).await;
                }
            }
        });
    }

    /// Stops a session's agent without publishing anything (the store cannot take it): its output
    /// would only be lost too.
    async fn stop_for_repair(&self, key: &SessionKey) {
        let Ok(_guard) = self.lock(key).await else { return };
        let (session, phase, side) = {
            let st = self.state();
            let Some(e) = st.sessions.get(key) else { return };
            (e.rec.session.clone(), e.rec.phase, e.side_log.is_some())
        };
        if side {
            return;
        }
        tracing::warn!(session = %key, "the session lost events to a failed commit: its agent is stopped");
        metrics::counter!("ensemble_sessions_lost_events_total").increment(1);
        self.expire_sides(key, "source_lost").await;
        if phase == Phase::Live
            && let Ok(adapter) = self.adapter(&session.provider)
            && adapter.is_live(&session)
            && let Err(e) = adapter.disconnect(&session).await
        {
            tracing::warn!(session = %key, error = %e, "stopping the agent of a session that lost events failed");
        }
        let stale = self.next_generation();
        if let Some(e) = self.state().sessions.get_mut(key) {
            e.generation = stale;
            e.buffer = None;
        }
    }

    /// Brings a session back to its durable record and applies the restart rules to it (see the
    /// module comment). The store must write.
    async fn repair_lost(&self, key: &SessionKey, lost: u64) -> Result<()> {
        let _guard = self.lock(key).await?;
        match self.state().sessions.get(key) {
            None => return Ok(()),
            // Side conversations never reach the store.
            Some(e) if e.side_log.is_some() => return Ok(()),
            Some(_) => {}
        }
        let stored = match self.cluster() {
            Some((leases, _)) => leases.record(key).await?,
            None => self.inner.store.load_session(&key.room_id, &key.session_id).await?,
        };
        let Some(rec) = stored else {
            // Its start never reached the log, and its start was answered with the error.
            if let Some(old) = self.state().remove(key) {
                old.turn_ended.notify_waiters();
            }
            self.unclaim(key).await;
            tracing::warn!(session = %key, "a session whose start was lost is forgotten");
            return Ok(());
        };
        let mut entry = self.entry_from_record(rec).await?;
        entry.generation = self.next_generation();
        let old = {
            let mut st = self.state();
            let old = st.remove(key);
            st.insert(key.clone(), entry);
            old
        };
        if let Some(old) = old {
            // Whoever waited for the old memory's turn to end: it has.
            old.turn_ended.notify_waiters();
        }
        tracing::warn!(session = %key, lost, "a session that lost events is back in line with its log");
        self.interrupt(key, Interruption::StoreLost { events: lost }).await
    }
}
