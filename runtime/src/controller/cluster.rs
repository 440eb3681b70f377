//! Several hosts on one database: which host serves a session, taking over the sessions of a host
//! that was lost, and giving everything up when this host's lease is gone.
//!
//! A host's registry holds exactly the sessions it owns (`session_owners` in the database). A
//! request for a session this host does not hold either claims it — nobody owns it, or its owner's
//! lease expired — and loads it from the database, or is served by the owner (the server forwards
//! it). Claims are single statements, so of two hosts racing for a session exactly one wins; the
//! winner applies the restart rules (`host_lost`) to what the lost host left running, once.

use super::Controller;
use super::error::{ControllerError, Result};
use super::lifecycle::Interruption;
use crate::session::Phase;
use crate::store::{Claim, Leases, NewClaim};
use ensemble_core::model::{Session, SessionKey};

/// Where a session is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// Here (or nowhere: the request will find no session).
    Local,
    /// By this other host, which owns it.
    Remote(String),
}

impl Controller {
    /// The shared ownership tables and this host's id, when several hosts share the database.
    pub(super) fn cluster(&self) -> Option<(&Leases, &str)> {
        let cfg = self.inner.config.cluster.as_ref()?;
        Some((self.inner.store.leases()?, cfg.host_id.as_str()))
    }

    /// This host's id when several hosts share the database.
    pub fn host_id(&self) -> Option<&str> {
        self.inner.config.cluster.as_ref().map(|c| c.host_id.as_str())
    }

    /// Decides who serves `key`: this host when it holds the session or could claim it (loading it
    /// from the database, and reporting what a lost host left running), else its live owner.
    pub async fn locate(&self, key: &SessionKey) -> Result<Location> {
        if self.state().sessions.contains_key(key) {
            return Ok(Location::Local);
        }
        let Some((leases, host)) = self.cluster() else { return Ok(Location::Local) };
        let _guard = self.lock(key).await?;
        if self.state().sessions.contains_key(key) {
            return Ok(Location::Local);
        }
        match leases.claim(key, host).await? {
            Claim::Theirs(owner) => Ok(Location::Remote(owner)),
            Claim::Mine => {
                let Some(rec) = leases.record(key).await? else {
                    // Nothing stored under that id (or a side whose host is gone): own nothing.
                    leases.release(key, host).await?;
                    return Ok(Location::Local);
                };
                let interrupted = rec.phase != Phase::Completed;
                let entry = self.entry_from_record(rec).await?;
                self.state().insert(key.clone(), entry);
                if interrupted {
                    self.interrupt(key, Interruption::HostLost).await?;
                }
                Ok(Location::Local)
            }
        }
    }

    /// Claims up to `limit` sessions of hosts whose lease expired, applying the restart rules to
    /// each (exactly one surviving host wins each session). Returns how many this host took.
    pub async fn take_over_orphans(&self, limit: usize) -> Result<usize> {
        let Some((leases, _)) = self.cluster() else { return Ok(0) };
        let mut taken = 0;
        for key in leases.orphans(limit).await? {
            match self.locate(&key).await {
                Ok(Location::Local) => taken += 1,
                Ok(Location::Remote(_)) => {}
                Err(e) => tracing::warn!(session = %key, error = %e, "taking over a session failed"),
            }
        }
        Ok(taken)
    }

    /// Loads the sessions the database still records as this host's but its registry does not
    /// hold (after it gave them up with its lease), applying the restart rules (`host_lost`) once.
    pub async fn reclaim_own(&self) -> Result<usize> {
        let Some((leases, host)) = self.cluster() else { return Ok(0) };
        let mut loaded = 0;
        for key in leases.owned_by(host).await? {
            let held = self.state().sessions.contains_key(&key);
            if !held && self.locate(&key).await? == Location::Local {
                loaded += 1;
            }
        }
        Ok(loaded)
    }

    /// The room's sessions as `GET …/sessions` lists them: with several hosts, the stored records,
    /// with this host's own sessions as it holds them.
    pub async fn room_sessions(&self, room_id: &str) -> Result<Vec<Session>> {
        let Some((leases, _)) = self.cluster() else { return Ok(self.sessions(room_id)) };
        let mut out = self.sessions(room_id);
        let local: std::collections::HashSet<String> = {
            let st = self.state();
            st.sessions.keys().filter(|k| k.room_id == room_id).map(|k| k.session_id.clone()).collect()
        };
        for rec in leases.room_records(room_id).await? {
            let s = rec.session;
            if !local.contains(&s.session_id) && s.visible && s.scope == ensemble_core::model::Scope::Canonical {
                out.push(s);
            }
        }
        out.sort_by(|a, b| (a.created_at_ms, &a.session_id).cmp(&(b.created_at_ms, &b.session_id)));
        Ok(out)
    }

    /// The room's side conversations that other hosts hold, with their host (none on one host).
    pub async fn remote_sides(&self, room_id: &str) -> Result<Vec<(SessionKey, String)>> {
        let Some((leases, host)) = self.cluster() else { return Ok(Vec::new()) };
        Ok(leases
            .room_sides(room_id)
            .await?
            .into_iter()
            .filter(|(_, owner)| owner != host)
            .map(|(id, owner)| (SessionKey::new(room_id, &id), owner))
            .collect())
    }

    /// This host lost its lease (it could not renew it in time, and another host may already have
    /// claimed its sessions): it stops every agent process and forgets every session, so no
    /// session runs on two hosts. The sessions' stored state is what a claimer loads.
    pub async fn abandon_all(&self) {
        let entries: Vec<(SessionKey, Session, Phase)> = {
            let st = self.state();
            st.sessions.iter().map(|(k, e)| (k.clone(), e.rec.session.clone(), e.rec.phase)).collect()
        };
        for (key, session, phase) in entries {
            if phase == Phase::Live
                && let Ok(adapter) = self.adapter(&session.provider)
                && adapter.is_live(&session)
                && let Err(e) = adapter.close(&session).await
            {
                tracing::warn!(session = %key, error = %e, "stopping an abandoned session failed");
            }
            self.state().remove(&key);
        }
    }

    /// Releases a claim taken for a start that did not happen.
    pub(super) async fn unclaim(&self, key: &SessionKey) {
        if let Some((leases, host)) = self.cluster()
            && let Err(e) = leases.release(key, host).await
        {
            tracing::warn!(session = %key, error = %e, "releasing a session claim failed");
        }
    }

    /// Claims a new id for this host (with several hosts: no other host may start it). A session
    /// (`side == false`) also takes one of the places the session limits leave, counted over every
    /// host's sessions under one lock.
    pub(super) async fn claim_new(&self, key: &SessionKey, side: bool) -> Result<()> {
        let Some((leases, host)) = self.cluster() else { return Ok(()) };
        let c = &self.inner.config;
        let limits = (!side).then_some((c.max_sessions_per_room as u64, c.max_sessions as u64));
        match leases.claim_new(key, host, limits).await? {
            NewClaim::Claimed => Ok(()),
            NewClaim::Exists => Err(ControllerError::SessionExists(key.session_id.clone())),
            NewClaim::Full { in_room, total } => {
                Err(ControllerError::TooManySessions(if total >= c.max_sessions as u64 {
                    format!("the hosts hold {total} open sessions, the limit; close some first")
                } else {
                    format!("room `{}` holds {in_room} open sessions, the limit; close some first", key.room_id)
                }))
            }
        }
    }
}
