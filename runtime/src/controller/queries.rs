//! Read-only views: providers, sessions, interactions, rooms, events, goals, counts.

use std::collections::HashMap;

use super::Controller;
use super::error::{ControllerError, Result};
use super::fold::SideLog;
use crate::session::Phase;
use crate::store::{EventPage, SessionEventPage, SessionPageFrom, StoreError, page_fit};
use ensemble_core::event::Interaction;
use ensemble_core::model::{Goal, ProviderInfo, Room, Scope, Session, SessionKey, SessionStatus};
use ensemble_core::present::SessionPresent;
use serde_json::value::RawValue;

impl Controller {
    /// Every registered provider with its availability and capabilities, and its auth state as
    /// its latest session's start found it.
    pub fn providers(&self) -> Vec<ProviderInfo> {
        self.provider_infos(&HashMap::new())
    }

    /// The agent's own sessions of `cwd` (a page from `cursor`), for a session to continue.
    pub async fn provider_sessions(
        &self,
        provider: &str,
        cwd: Option<&str>,
        cursor: Option<String>,
    ) -> Result<ensemble_core::model::ProviderSessionList> {
        let adapter = self.adapter(provider)?;
        let cwd = cwd.unwrap_or(&self.inner.config.default_cwd);
        Ok(adapter.list_sessions(cwd, cursor).await?)
    }

    /// [`Self::providers`], each available agent also asked (without a session, waiting at most
    /// `wait`) whether it needs a login: the newer of that answer and its latest session's start.
    pub async fn providers_checked(&self, wait: std::time::Duration) -> Vec<ProviderInfo> {
        let adapters: Vec<_> = self.inner.adapters.values().cloned().collect();
        let checks = futures::future::join_all(adapters.iter().map(|a| a.check_auth(wait))).await;
        let checks = adapters.iter().zip(checks).filter_map(|(a, c)| Some((a.id().to_owned(), c?))).collect();
        self.provider_infos(&checks)
    }

    fn provider_infos(&self, checks: &HashMap<String, ensemble_core::adapter::AuthCheck>) -> Vec<ProviderInfo> {
        self.inner
            .adapters
            .values()
            .map(|a| {
                let d = a.descriptor();
                let mut capabilities = a.capabilities().wire();
                if let Some(agent) = &d.agent {
                    capabilities.resume = agent.load_session || agent.resume_session;
                }
                ProviderInfo {
                    id: a.id().to_owned(),
                    display_name: d.display_name,
                    available: d.available,
                    unavailable_reason: d.unavailable_reason,
                    capabilities,
                    default: a.id() == self.inner.config.default_provider,
                    agent: d.agent,
                    auth_state: None,
                    auth_message: None,
                    login_command: None,
                    isolation: a.isolation(),
                }
            })
            .map(|mut p| {
                let asked = checks.get(&p.id).map(|c| (c.at_ms, c.state, c.message.clone()));
                let newest = match (self.last_auth(&p.id), asked) {
                    (Some(s), Some(a)) => Some(if a.0 > s.0 { a } else { s }),
                    (s, a) => s.or(a),
                };
                if let Some((_, state, message)) = newest {
                    p.login_command = message.as_deref().and_then(ensemble_core::model::login_command);
                    p.auth_state = Some(state);
                    p.auth_message = message;
                }
                p
            })
            .collect()
    }

    /// The auth state of the provider's most recently updated session that has one: what its
    /// agent said when it last started (a login since shows at the next start), and when.
    fn last_auth(&self, provider: &str) -> Option<(i64, ensemble_core::model::AuthState, Option<String>)> {
        let st = self.state();
        st.sessions
            .values()
            .map(|e| &e.rec.session)
            .filter(|s| s.provider == provider && s.auth_state.is_some())
            .max_by_key(|s| s.updated_at_ms)
            .and_then(|s| s.auth_state.map(|a| (s.updated_at_ms, a, s.auth_message.clone())))
    }

    /// Canonical, visible, announced sessions of a room, oldest first.
    pub fn sessions(&self, room_id: &str) -> Vec<Session> {
        let st = self.state();
        let mut out: Vec<Session> = st
            .sessions
            .iter()
            .filter(|(k, e)| {
                k.room_id == room_id && e.announced && e.rec.session.visible && e.rec.session.scope == Scope::Canonical
            })
            .map(|(_, e)| e.rec.session.clone())
            .collect();
        out.sort_by(|a, b| (a.created_at_ms, &a.session_id).cmp(&(b.created_at_ms, &b.session_id)));
        out
    }

    /// The room's open side conversations (announced, not ended), oldest first: a client that
    /// reloads finds them here (and in `hello`) and replays each from its own event log.
    pub fn sides(&self, room_id: &str) -> Vec<Session> {
        self.open_sides(|s| s.room_id == room_id)
    }

    /// The open side conversations of one session, oldest first.
    pub fn sides_of(&self, source: &SessionKey) -> Result<Vec<Session>> {
        self.snapshot(source)?;
        Ok(self.open_sides(|s| {
            s.room_id == source.room_id && s.source_session_id.as_deref() == Some(source.session_id.as_str())
        }))
    }

    fn open_sides(&self, which: impl Fn(&Session) -> bool) -> Vec<Session> {
        let st = self.state();
        let mut out: Vec<Session> = st
            .sessions
            .values()
            .filter(|e| {
                e.announced
                    && e.rec.session.scope == Scope::Side
                    && e.rec.phase != Phase::Completed
                    && which(&e.rec.session)
            })
            .map(|e| e.rec.session.clone())
            .collect();
        out.sort_by(|a, b| (a.created_at_ms, &a.session_id).cmp(&(b.created_at_ms, &b.session_id)));
        out
    }

    pub fn session(&self, key: &SessionKey) -> Result<Session> {
        self.snapshot(key)
    }

    /// The session once `until` holds for it, or as it is when `timeout` passes first (the
    /// caller reads its status). Woken by the room's events, so it costs nothing while it waits.
    pub async fn wait_session(
        &self,
        key: &SessionKey,
        until: impl Fn(&Session) -> bool,
        timeout: std::time::Duration,
    ) -> Result<Session> {
        // Subscribed before the first look, so a change between the look and the wait still wakes.
        let mut events = self.hub().subscribe(&key.room_id);
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let session = self.snapshot(key)?;
            if until(&session) {
                return Ok(session);
            }
            match tokio::time::timeout_at(deadline, events.recv()).await {
                // Any frame may be the change (a lagging subscriber looks again, too).
                Ok(Ok(_)) | Ok(Err(crate::bus::RecvError::Lagged(_))) => {}
                Ok(Err(crate::bus::RecvError::Closed)) | Err(_) => return self.snapshot(key),
            }
        }
    }

    pub fn interactions(&self, key: &SessionKey) -> Result<Vec<Interaction>> {
        let st = self.state();
        Ok(pending_of(key, &st.announced(key)?.rec))
    }

    pub async fn rooms(&self) -> Result<Vec<Room>> {
        Ok(self
            .inner
            .store
            .rooms()
            .await?
            .into_iter()
            .map(|r| Room { room_id: r.room_id, session_count: r.session_count, head_seq: r.head_seq })
            .collect())
    }

    /// The store's engine (`sqlite`, `postgres`) if its database answers.
    pub async fn store_ready(&self) -> std::result::Result<&'static str, crate::store::StoreError> {
        self.inner.store.ping().await.map(|()| self.inner.store.engine_name())
    }

    pub async fn events(&self, room_id: &str, after: u64, limit: usize) -> Result<EventPage> {
        Ok(self.inner.store.events_after(room_id, after, limit).await?)
    }

    /// Session counts by status (a gauge).
    pub fn status_counts(&self) -> HashMap<SessionStatus, usize> {
        let st = self.state();
        let mut out = HashMap::new();
        for e in st.sessions.values().filter(|e| e.announced) {
            *out.entry(e.rec.session.status).or_insert(0) += 1;
        }
        out
    }

    pub fn live_processes(&self) -> usize {
        self.inner.adapters.values().map(|a| a.live_processes()).sum()
    }

    /// A page of one session's events, oldest first: a canonical session's from the store (its
    /// own chain or index: the tail costs what the page holds), a side conversation's from
    /// memory while it lives (its own seqs). At most `limit`, and no more than the store's page
    /// bytes of them (at least one).
    pub async fn session_events(
        &self,
        key: &SessionKey,
        from: SessionPageFrom,
        limit: usize,
    ) -> Result<SessionEventPage> {
        let side = {
            let st = self.state();
            let e = st.announced(key)?;
            e.side_log.as_ref().map(|log| side_page(log, from, limit, self.inner.store.page_bytes()))
        };
        match side {
            Some(page) => page,
            None => Ok(self.inner.store.session_events(&key.room_id, &key.session_id, from, limit).await?),
        }
    }

    /// The session as it is now, to draw without its history (see [`SessionPresent`]): the
    /// room's head is read first, so the state includes every event through it (an event is
    /// folded before it is committed).
    pub async fn present(&self, key: &SessionKey) -> Result<SessionPresent> {
        let (head_seq, _) = self.inner.store.room_heads(&key.room_id).await?;
        let usage = self.session_usage(key)?;
        let st = self.state();
        let e = st.announced(key)?;
        Ok(SessionPresent {
            session: e.rec.session.clone(),
            pending: pending_of(key, &e.rec),
            plan: e.plan.as_deref().cloned(),
            goal: e.rec.goal.goal.clone(),
            usage,
            open: e.open.texts(e.rec.session.active_turn_id.as_deref()),
            queue: e.rec.queue.clone(),
            commands: e.commands.clone(),
            head_seq,
        })
    }

    /// The session's goal.
    pub fn goal(&self, key: &SessionKey) -> Result<Goal> {
        let st = self.state();
        let e = st.announced(key)?;
        e.rec.goal.goal.clone().ok_or(ControllerError::NoGoal)
    }
}

/// A page of a side conversation's in-memory log, cut as the store's pages are.
fn side_page(log: &SideLog, from: SessionPageFrom, limit: usize, max_bytes: usize) -> Result<SessionEventPage> {
    // The candidates in reading order: forwards from `after`, backwards from `before`.
    let mut picked: Vec<&(u64, bytes::Bytes)> = match from {
        SessionPageFrom::After(after) => log.events.iter().filter(|(s, _)| *s > after).collect(),
        SessionPageFrom::Before(before) => log.events.iter().rev().filter(|(s, _)| *s < before).collect(),
    };
    let keep = page_fit(picked.iter().map(|(_, json)| json.len()), limit, max_bytes);
    let more = picked.len() > keep;
    picked.truncate(keep);
    if matches!(from, SessionPageFrom::Before(_)) {
        picked.reverse();
    }
    let mut events = Vec::with_capacity(picked.len());
    for (seq, json) in picked {
        let text = String::from_utf8(json.to_vec()).map_err(|e| StoreError::Other(format!("side event: {e}")))?;
        let raw = RawValue::from_string(text).map_err(|e| StoreError::Other(format!("side event: {e}")))?;
        events.push((*seq, raw));
    }
    Ok(SessionEventPage {
        events,
        head_seq: log.next_seq,
        pruned_through: log.events.front().map(|(s, _)| s - 1).unwrap_or(log.next_seq),
        last_seq: log.events.back().map(|(s, _)| *s).unwrap_or(0),
        more,
    })
}

/// The session's interactions waiting for an answer, oldest first.
fn pending_of(key: &SessionKey, rec: &crate::session::SessionRecord) -> Vec<Interaction> {
    rec.pending
        .iter()
        .map(|p| Interaction {
            session_id: key.session_id.clone(),
            turn_id: p.turn_id.clone(),
            requested_at_ms: p.requested_at_ms,
            request: p.request.clone(),
        })
        .collect()
}
