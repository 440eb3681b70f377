//! Session lifecycle: start, resume (explicit and implicit), close, release, disconnect, idle
//! release, and the server's own: recovery after a restart and shutdown.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Controller;
use super::error::{ControllerError, Result};
use super::fold::{EarlyFacts, Entry, Visibility};
use super::goals::SessionGoalHost;
use super::publish::{NewProcess, Persist};
use super::requests::StartSession;
use crate::session::{Phase, SessionRecord};
use ensemble_core::adapter::{Adapter, AdapterError, EventSink, ProviderState, SessionHandle};
use ensemble_core::clock::new_id;
use ensemble_core::event::{
    Event, EventBody, NoticeLevel, NoticePayload, ResolvedBy, SessionCompletedPayload, SessionStartedPayload,
};
use ensemble_core::goal::GoalIdentity;
use ensemble_core::limits::{FieldError, check_id, check_text};
use ensemble_core::model::{Scope, Session, SessionKey};
use ensemble_core::shared_session::SharedSession;

/// Why a session's process went away without the session being told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Interruption {
    /// This server restarted.
    Restart,
    /// The host that ran it stopped renewing its lease (killed, partitioned).
    HostLost,
    /// The store could not write: this many of its events never reached the log.
    StoreLost { events: u64 },
}

impl Interruption {
    /// The `turn.failed` code (also the `session.updated` reason) and message.
    fn turn_failure(self) -> (&'static str, &'static str) {
        match self {
            Self::Restart => ("server_restart", "the server restarted during the turn"),
            Self::HostLost => ("host_lost", "the host running the session was lost"),
            Self::StoreLost { .. } => ("store_unavailable", "the store could not write the turn's events"),
        }
    }

    /// What a `notice` says besides the turn's end, if anything.
    fn notice(self) -> Option<String> {
        match self {
            Self::Restart | Self::HostLost => None,
            Self::StoreLost { events } => Some(format!(
                "{events} events of this session were lost while the store could not write; it was \
                 disconnected and its turn, if one was running, failed (resume it to go on)"
            )),
        }
    }
}

impl Controller {
    /// What an adapter gets for a live session: its sink (stamped with `generation`), its durable
    /// provider state and its goal services.
    pub(super) fn handle(&self, key: &SessionKey, generation: u64) -> SessionHandle {
        let (created_at_ms, goal) = self
            .state()
            .sessions
            .get(key)
            .map(|e| {
                let identity = e.rec.goal.goal.as_ref().map(|g| GoalIdentity {
                    operation_id: g.operation_id.clone(),
                    revision: g.revision,
                    repair_epoch: g.repair_epoch,
                });
                (e.rec.session.created_at_ms, identity.unwrap_or_default())
            })
            .unwrap_or_default();
        self.handle_with(key, generation, created_at_ms, goal)
    }

    /// [`Self::handle`] for a session whose creation time and goal the caller already knows (a
    /// start: its own, and no goal yet), without a look at the shared state.
    fn handle_with(&self, key: &SessionKey, generation: u64, created_at_ms: i64, goal: GoalIdentity) -> SessionHandle {
        // One copy of the key for the three (a live session holds them as long as it lives).
        let key = Arc::new(key.clone());
        SessionHandle {
            sink: EventSink::new(self.inner.receiver.clone(), key.clone(), generation),
            state: ProviderState::new(self.inner.provider_state.clone(), key.clone()),
            goals: Arc::new(SessionGoalHost { inner: Arc::downgrade(&self.inner), key, created_at_ms }),
            goal,
        }
    }

    /// Starts a session. The room is created on first use.
    pub async fn start(&self, req: StartSession) -> Result<Session> {
        self.start_shared(req).await.map(SharedSession::into_session)
    }

    /// [`Self::start`], answering with the session its `session.started` carries (and the JSON
    /// the store's writer made of it, for a REST answer), unless something changed it since.
    /// A session's box: its provider's, narrowed as asked. 503 when the provider's sessions
    /// start in a box this machine cannot make; never a silent fallback.
    pub(super) fn isolation_for(
        &self,
        adapter: &std::sync::Arc<dyn ensemble_core::adapter::Adapter>,
        asked: Option<&ensemble_core::isolation::IsolationRequest>,
    ) -> Result<Option<Box<ensemble_core::isolation::Isolation>>> {
        let Some(p) = adapter.isolation() else {
            return match asked {
                Some(a) if a != &ensemble_core::isolation::IsolationRequest::default() => {
                    Err(ControllerError::InvalidIsolation(format!(
                        "provider `{}` runs its agents in no box: nothing to narrow",
                        adapter.id()
                    )))
                }
                _ => Ok(None),
            };
        };
        let isolation = match asked {
            Some(a) => p.isolation.narrowed(a).map_err(|e| ControllerError::InvalidIsolation(e.to_string()))?,
            None => p.isolation.clone(),
        };
        if isolation.mode == ensemble_core::isolation::IsolationMode::On
            && p.at_start
            && let Some(why) = p.unavailable
        {
            return Err(ControllerError::IsolationUnavailable(why));
        }
        Ok(Some(Box::new(isolation)))
    }

    pub async fn start_shared(&self, req: StartSession) -> Result<SharedSession> {
        let this = self.clone();
        self.detached(async move { this.start_here(req).await }).await
    }

    /// [`Self::start_shared`], on the caller's task.
    async fn start_here(&self, req: StartSession) -> Result<SharedSession> {
        self.check_accepting()?;
        check_id("roomId", &req.room_id)?;
        if let Some(id) = &req.session_id {
            check_id("sessionId", id).map_err(FieldError::in_body)?;
        }
        for (field, text) in [("title", &req.title), ("cwd", &req.cwd), ("provider", &req.provider)] {
            if let Some(t) = text {
                check_text(field, t)?;
            }
        }
        let s = &req.settings;
        for (field, text) in [("settings.model", &s.model), ("settings.reasoningEffort", &s.reasoning_effort)] {
            if let Some(t) = text {
                check_text(field, t)?;
            }
        }
        let provider = req.provider.clone().unwrap_or_else(|| self.inner.config.default_provider.clone());
        let adapter = self.adapter(&provider)?;
        // Its box first: a provider that cannot be boxed here says so, whatever else it says.
        let isolation = self.isolation_for(&adapter, req.isolation.as_ref())?;
        let d = adapter.descriptor();
        if !d.available {
            return Err(ControllerError::ProviderUnavailable {
                id: provider.clone(),
                reason: d.unavailable_reason.unwrap_or_else(|| "not available".into()),
            });
        }
        let session_id = req.session_id.clone().unwrap_or_else(new_id);
        let key = SessionKey::new(&req.room_id, &session_id);
        let _guard = self.lock(&key).await?;
        let generation = self.next_generation();
        let now = self.inner.clock.now_ms();
        let cwd = req.cwd.clone().unwrap_or_else(|| self.inner.config.default_cwd.clone());
        let mut session = Session::new_canonical(&req.room_id, &session_id, &provider, &cwd, now);
        if let Some(title) = req.title.clone().filter(|t| !t.trim().is_empty()) {
            session.title = title;
        }
        session.settings = req.settings.clone();
        session.isolation = isolation;
        session.provider_session_id.clone_from(&req.provider_session);
        if let Some(f) = &req.fork {
            session.forked_from = Some(Box::new(ensemble_core::model::ForkedFrom {
                session_id: f.source.session_id.clone(),
                turn_id: f.through_turn.clone(),
                checkpoint: f.checkpoint.clone(),
            }));
        }
        // With several hosts the id must be new everywhere; the claim makes this host its owner
        // (a session known here is refused before the database is asked). On one host the
        // reservation below is the check.
        if self.cluster().is_some() {
            if self.state().sessions.contains_key(&key) {
                return Err(ControllerError::SessionExists(session_id));
            }
            self.claim_new(&key, false).await?;
        }
        let reserved = {
            let mut st = self.state();
            if st.sessions.contains_key(&key) {
                Err(ControllerError::SessionExists(session_id.clone()))
            } else if let Err(e) = self.check_capacity(&st, &req.room_id, NewProcess::Yes) {
                Err(e)
            } else {
                st.insert(
                    key.clone(),
                    Entry::new(
                        SessionRecord::new(session.clone(), Phase::Starting),
                        generation,
                        Some(EarlyFacts::default()),
                        Visibility::Reserved,
                    ),
                );
                Ok(())
            }
        };
        if let Err(e) = reserved {
            self.unclaim(&key).await;
            return Err(e);
        }
        // The workspace before the agent: a worktree session's agent starts in its worktree.
        // Boxed, as every git-heavy step: awaited inline its state (git's buffers) would make
        // every start's future that much larger, and a future is moved whole when spawned.
        let made = match Box::pin(self.prepare_workspace(&mut session, &req.workspace, req.checkpoints)).await {
            Ok(m) => m,
            Err(e) => {
                self.state().remove(&key);
                self.unclaim(&key).await;
                return Err(e);
            }
        };
        if session.workspace.is_some()
            && let Some(e) = self.state().sessions.get_mut(&key)
        {
            e.rec.session.cwd.clone_from(&session.cwd);
            e.rec.session.workspace.clone_from(&session.workspace);
        }
        // A new session has no goal yet.
        let handle = self.handle_with(&key, generation, session.created_at_ms, GoalIdentity::default());
        let started = match &req.fork {
            None if req.provider_session.is_some() => adapter.resume(&session, handle).await,
            None => adapter.start(&session, handle).await,
            Some(f) => {
                let open = ensemble_core::adapter::ForkOpen {
                    source: &f.source,
                    source_state: ensemble_core::adapter::ProviderState::new(
                        self.inner.provider_state.clone(),
                        f.source.key(),
                    ),
                    through_turn: &f.through_turn,
                    last_turn: f.last_turn.as_deref(),
                };
                adapter.fork(open, &session, handle).await
            }
        };
        let outcome = match started {
            Ok(o) => o,
            Err(e) => {
                // No residue: the reservation goes, nothing was persisted or published.
                self.state().remove(&key);
                self.unclaim(&key).await;
                Box::pin(self.discard_workspace(&session, made)).await;
                if let (Some(_), ensemble_core::adapter::AdapterError::Unsupported(why)) = (&req.fork, &e) {
                    return Err(ControllerError::ForkUnsupported(why.clone()));
                }
                return Err(e.into());
            }
        };
        let next = &self.inner.generations;
        let mut started = None;
        let published = self
            .publish_canonical(&key, Persist::Always, |b| {
                b.entry.announced = true;
                b.entry.rec.apply_patch(outcome.patch, b.now);
                b.transition(Phase::Live)?;
                let session = SharedSession::new(b.session());
                started = Some(session.clone());
                b.emit(None, EventBody::SessionStarted(SessionStartedPayload { session, ephemeral: false }));
                for ev in outcome.events {
                    b.emit(None, ev);
                }
                let buffered = b.entry.buffer.take().map(EarlyFacts::into_facts).unwrap_or_default();
                b.apply_facts(buffered, next);
                Ok(())
            })
            .await;
        let published = match published {
            Ok(p) => p,
            Err(e) => {
                self.state().remove(&key);
                let _ = adapter.close(&session).await;
                self.unclaim(&key).await;
                Box::pin(self.discard_workspace(&session, made.clone())).await;
                return Err(e);
            }
        };
        if let Err(e) = published.durable().await {
            // Not durable (the database is down): the start did not happen. Nothing of it stays,
            // so the same id can be started again once the store is back.
            self.state().remove(&key);
            let _ = adapter.close(&session).await;
            self.unclaim(&key).await;
            Box::pin(self.discard_workspace(&session, made.clone())).await;
            return Err(e);
        }
        // The answer is the session as `session.started` carries it, with the JSON the writer
        // made of it — not a third copy, nor a second serialisation — unless something changed
        // it since (the agent's first facts).
        let announced = {
            let st = self.state();
            let now = &st.announced(&key)?.rec.session;
            match started {
                Some(s) if *s == *now => s,
                _ => return Ok(now.clone().into()),
            }
        };
        Ok(announced)
    }

    /// Reconnects a session whose live side is gone.
    pub async fn resume(&self, key: &SessionKey) -> Result<Session> {
        self.check_accepting()?;
        let _guard = self.lock(key).await?;
        self.resume_locked(key).await
    }

    pub(super) async fn resume_locked(&self, key: &SessionKey) -> Result<Session> {
        let current = self.snapshot(key)?;
        let adapter = self.adapter(&current.provider)?;
        let generation = self.next_generation();
        let (session, previous) = {
            let mut st = self.state();
            let e = st.sessions.get_mut(key).ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
            if e.rec.session.scope == Scope::Side {
                // A side never resumes; a live one needs no resume.
                return match e.rec.phase {
                    Phase::Live if adapter.is_live(&e.rec.session) => Ok(e.rec.session.clone()),
                    _ => Err(ControllerError::SideExpired),
                };
            }
            match e.rec.phase {
                Phase::Completed => return Err(ControllerError::SessionClosed),
                Phase::Starting => return Err(ControllerError::SessionStarting),
                Phase::Live if adapter.is_live(&e.rec.session) => return Ok(e.rec.session.clone()),
                _ => {}
            }
            if !e.rec.session.resumable || !adapter.can_resume(&e.rec.session) {
                return Err(ControllerError::NotResumable);
            }
            // A session recorded before its provider was boxed resumes in the provider's box;
            // one recorded with a box keeps it (never widened by a provider's later settings).
            if e.rec.session.isolation.is_none() {
                e.rec.session.isolation = self.isolation_for(&adapter, None)?;
            } else if let Some(p) = adapter
                .isolation()
                .filter(|p| p.at_start && p.isolation.mode == ensemble_core::isolation::IsolationMode::On)
                && e.rec
                    .session
                    .isolation
                    .as_deref()
                    .is_some_and(|i| i.mode == ensemble_core::isolation::IsolationMode::On)
                && let Some(why) = p.unavailable
            {
                return Err(ControllerError::IsolationUnavailable(why));
            }
            let previous = match e.rec.phase {
                Phase::Failed => Phase::Failed,
                _ => Phase::Disconnected,
            };
            let live = Self::live_count(&st);
            if live >= self.inner.config.max_live_sessions {
                return Err(ControllerError::AtCapacity(format!(
                    "{live} sessions are live, the limit; release or close one, or retry later"
                )));
            }
            let e = st.sessions.get_mut(key).ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
            let now = self.inner.clock.now_ms();
            e.rec.transition(Phase::Starting, now).map_err(|err| ControllerError::InvalidInput(err.to_string()))?;
            e.generation = generation;
            e.buffer = Some(EarlyFacts::default());
            let out = (e.rec.session.clone(), previous);
            st.recount(key);
            out
        };
        match adapter.resume(&session, self.handle(key, generation)).await {
            Ok(outcome) => {
                let next = &self.inner.generations;
                self.publish_with(key, Persist::Always, |b| {
                    b.entry.rec.apply_patch(outcome.patch, b.now);
                    b.entry.rec.session.last_error = None;
                    // A turn cannot survive the loss of its process.
                    b.fail_active_turn("provider_exited", "the provider process was gone");
                    b.transition(Phase::Live)?;
                    b.updated("resumed");
                    for ev in outcome.events {
                        b.emit(None, ev);
                    }
                    let buffered = b.entry.buffer.take().map(EarlyFacts::into_facts).unwrap_or_default();
                    b.apply_facts(buffered, next);
                    Ok(())
                })
                .await?
                .durable()
                .await?;
                self.snapshot(key)
            }
            Err(err) => {
                let stale = self.next_generation();
                let message = err.to_string();
                self.publish_with(key, Persist::Always, |b| {
                    b.detach(stale);
                    b.entry.rec.session.last_error = Some(ensemble_core::limits::clip(&message));
                    b.transition(previous)?;
                    b.updated("resume_failed");
                    Ok(())
                })
                .await?
                .durable()
                .await?;
                Err(err.into())
            }
        }
    }

    /// Makes sure the session has a live provider side, resuming it if needed (implicit resume).
    pub(super) async fn ensure_live_locked(&self, key: &SessionKey, adapter: &Arc<dyn Adapter>) -> Result<Session> {
        let s = self.snapshot(key)?;
        let phase = self.phase(key)?;
        if s.scope == Scope::Side && !(phase == Phase::Live && adapter.is_live(&s)) {
            return Err(ControllerError::SideExpired);
        }
        match phase {
            Phase::Completed => Err(ControllerError::SessionClosed),
            Phase::Starting => Err(ControllerError::SessionStarting),
            Phase::Live if adapter.is_live(&s) => Ok(s),
            _ => {
                if s.scope == Scope::Side {
                    return Err(ControllerError::SideExpired);
                }
                self.resume_locked(key).await
            }
        }
    }

    /// Closes a session: ends its turn (bounded grace), settles interactions, stops the provider
    /// side and publishes `session.completed`. Idempotent.
    pub async fn close(&self, key: &SessionKey) -> Result<()> {
        let _guard = self.lock(key).await?;
        self.close_locked(key, "session closed").await
    }

    pub(super) async fn close_locked(&self, key: &SessionKey, reason: &str) -> Result<()> {
        let session = self.snapshot(key)?;
        if self.phase(key)? == Phase::Completed {
            return Ok(());
        }
        // Side conversations end with their source, before its live context goes.
        self.expire_sides(key, "source_closed").await;
        let adapter = self.adapter(&session.provider)?;
        let grace = self.inner.config.close_grace;
        // Pending requests are rejected by the close itself, before the turn winds down.
        self.publish_with(key, Persist::IfChanged, |b| {
            b.settle_pending(ResolvedBy::Close);
            Ok(())
        })
        .await?;
        if let Some(turn) = session.active_turn_id.clone() {
            if session.live && adapter.is_live(&session) {
                if adapter.capabilities().quiesce {
                    // The adapter interrupts, waits up to the grace and forces the process down;
                    // the turn's end, if any, is folded by the time it returns.
                    if let Err(e) = adapter.quiesce_for_close(&session, grace).await {
                        tracing::warn!(session = %key, error = %e, "quiescing before close failed");
                    }
                } else {
                    if let Err(e) = adapter.cancel(&session, &turn).await {
                        tracing::warn!(session = %key, error = %e, "cancel before close failed");
                    }
                    if !self.wait_turn_end(key, grace).await {
                        tracing::warn!(session = %key, turn = %turn, "turn did not end within the close grace; forcing it");
                    }
                }
            }
            self.cancel_turn_here(key, &turn, reason).await?;
        }
        if adapter.is_live(&session)
            && let Err(e) = adapter.close(&session).await
        {
            tracing::warn!(session = %key, error = %e, "provider close failed");
        }
        let stale = self.next_generation();
        let reason = reason.to_owned();
        self.publish_with(key, Persist::Always, |b| {
            b.detach(stale);
            b.settle_pending(ResolvedBy::Close);
            b.transition(Phase::Completed)?;
            b.entry.rec.session.resumable = false;
            b.entry.rec.refresh();
            let session = b.session();
            b.emit(None, EventBody::SessionCompleted(SessionCompletedPayload { session, reason }));
            Ok(())
        })
        .await?
        .durable()
        .await
    }

    /// Releases live canonical sessions that have been idle for `idle` (no turn, no pending
    /// interaction, no open side conversation: a side's user is still talking to its source's
    /// process). Each gets `session.updated` (`released`) and stays resumable.
    pub async fn release_idle(&self, idle: Duration) -> usize {
        let now = self.inner.clock.now_ms();
        let idle_ms = i64::try_from(idle.as_millis()).unwrap_or(i64::MAX);
        let candidates: Vec<SessionKey> = {
            let st = self.state();
            let has_side = |k: &SessionKey| {
                st.sessions.values().any(|e| {
                    e.rec.session.scope == Scope::Side
                        && e.rec.phase != Phase::Completed
                        && e.rec.session.room_id == k.room_id
                        && e.rec.session.source_session_id.as_deref() == Some(k.session_id.as_str())
                })
            };
            st.sessions
                .iter()
                .filter(|(k, e)| {
                    e.announced
                        && e.rec.session.scope == Scope::Canonical
                        && e.rec.phase == Phase::Live
                        && e.rec.session.active_turn_id.is_none()
                        && e.rec.pending.is_empty()
                        && now.saturating_sub(e.last_active_ms) >= idle_ms
                        && !has_side(k)
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        let mut released = 0;
        for key in candidates {
            // `release` re-checks everything under the session's lock; a busy session stays.
            match self.release_if_idle(&key, now, idle_ms).await {
                Ok(true) => released += 1,
                Ok(false) => {}
                Err(e) => tracing::debug!(session = %key, error = %e, "idle release skipped"),
            }
        }
        released
    }

    pub(super) async fn release_if_idle(&self, key: &SessionKey, now: i64, idle_ms: i64) -> Result<bool> {
        {
            // Activity between the scan and here keeps the session.
            let st = self.state();
            if st.sessions.get(key).is_none_or(|e| now.saturating_sub(e.last_active_ms) < idle_ms) {
                return Ok(false);
            }
        }
        self.release(key).await?;
        tracing::info!(session = %key, "released an idle session");
        Ok(true)
    }

    /// Runs [`Controller::release_idle`] periodically until the controller stops accepting work.
    pub fn spawn_idle_release(&self) {
        let Some(idle) = self.inner.config.idle_release else { return };
        let inner = Arc::downgrade(&self.inner);
        let tick = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(tick);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let Some(inner) = inner.upgrade() else { return };
                if !inner.accepting.load(Ordering::Relaxed) {
                    return;
                }
                Controller { inner }.release_idle(idle).await;
            }
        });
    }

    /// Stops the live side of an idle session, keeping it resumable.
    pub async fn release(&self, key: &SessionKey) -> Result<()> {
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        if session.scope == Scope::Side {
            // A side has nothing to keep for later: releasing it ends it.
            return self.close_locked(key, "side_released").await;
        }
        let adapter = self.adapter(&session.provider)?;
        match self.phase(key)? {
            Phase::Completed => return Err(ControllerError::SessionClosed),
            Phase::Live => {}
            _ => return Ok(()),
        }
        if session.active_turn_id.is_some() {
            return Err(ControllerError::SessionBusy("a turn is active".into()));
        }
        if self.state().sessions.get(key).is_some_and(|e| !e.rec.pending.is_empty()) {
            return Err(ControllerError::SessionBusy("an interaction is pending".into()));
        }
        self.expire_sides(key, "source_released").await;
        match adapter.release(&session).await {
            Ok(()) | Err(AdapterError::NotLive) => {}
            Err(AdapterError::Busy(m)) => return Err(ControllerError::SessionBusy(m)),
            Err(e) => return Err(e.into()),
        }
        let stale = self.next_generation();
        self.publish_with(key, Persist::Always, |b| {
            b.detach(stale);
            b.transition(Phase::Disconnected)?;
            b.updated("released");
            Ok(())
        })
        .await?
        .durable()
        .await
    }

    /// Drops the live side now (pending interactions are rejected), keeping it resumable.
    pub async fn disconnect(&self, key: &SessionKey) -> Result<()> {
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        if session.scope == Scope::Side {
            return self.close_locked(key, "side_disconnected").await;
        }
        let adapter = self.adapter(&session.provider)?;
        match self.phase(key)? {
            Phase::Completed => return Err(ControllerError::SessionClosed),
            Phase::Live => {}
            _ => return Ok(()),
        }
        self.expire_sides(key, "source_disconnected").await;
        if let Err(e) = adapter.disconnect(&session).await {
            tracing::warn!(session = %key, error = %e, "provider disconnect failed");
        }
        let stale = self.next_generation();
        self.publish_with(key, Persist::Always, |b| {
            b.detach(stale);
            b.settle_pending(ResolvedBy::Close);
            b.fail_active_turn("disconnected", "the session was disconnected");
            b.transition(Phase::Disconnected)?;
            b.updated("disconnected");
            Ok(())
        })
        .await?
        .durable()
        .await
    }

    // ---------------------------------------------------------------- server lifecycle

    /// Loads every stored session (with several hosts: the sessions this host owns, after a
    /// restart with the same host id). None is live afterwards: what was live, starting or
    /// mid-turn when the previous process stopped is reported as interrupted, then disconnected.
    pub async fn recover(&self) -> Result<usize> {
        let records = match self.cluster() {
            None => self.inner.store.load_sessions().await?,
            Some((leases, host)) => {
                let mut records = Vec::new();
                for key in leases.owned_by(host).await? {
                    match leases.record(&key).await? {
                        Some(rec) => records.push(rec),
                        None => leases.release(&key, host).await?,
                    }
                }
                records
            }
        };
        let count = records.len();
        let rooms: std::collections::BTreeSet<String> = records.iter().map(|r| r.session.room_id.clone()).collect();
        self.load_room_budgets(rooms).await?;
        let mut keys = Vec::new();
        for rec in records {
            let key = rec.session.key();
            if rec.phase != Phase::Completed {
                keys.push(key.clone());
            }
            let entry = self.entry_from_record(rec).await?;
            self.state().insert(key, entry);
        }
        for key in keys {
            self.interrupt(&key, Interruption::Restart).await?;
        }
        Ok(count)
    }

    /// A stored session as a registry entry, not live. What an interrupted turn left open is read
    /// back from the log, so it is closed before its `turn.failed`.
    pub(super) async fn entry_from_record(&self, rec: SessionRecord) -> Result<Entry> {
        let key = rec.session.key();
        let mut entry = Entry::new(rec, 0, None, Visibility::Announced);
        if let Some(turn) = entry.rec.session.active_turn_id.clone() {
            for raw in self.inner.store.turn_events(&key.room_id, &turn).await? {
                match serde_json::from_str::<Event>(raw.get()) {
                    Ok(event) => entry.open.observe(&event.body),
                    Err(e) => {
                        tracing::warn!(session = %key, error = %e, "an event of the interrupted turn is unreadable")
                    }
                }
            }
        }
        Ok(entry)
    }

    /// Applies the restart rules to a session whose process is gone with its host: pending
    /// interactions resolved, the turn failed, the session disconnected (each reported once: a
    /// session already disconnected publishes nothing).
    pub(super) async fn interrupt(&self, key: &SessionKey, why: Interruption) -> Result<()> {
        let (code, message) = why.turn_failure();
        let published = self
            .publish_with(key, Persist::IfChanged, |b| {
                let before = b.events.len();
                if let Some(message) = why.notice() {
                    b.emit(None, EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message }));
                }
                b.settle_pending(ResolvedBy::Restart);
                b.fail_active_turn(code, message);
                if matches!(b.entry.rec.phase, Phase::Live | Phase::Starting) {
                    b.transition(Phase::Disconnected)?;
                }
                if b.events.len() > before || b.persist {
                    b.updated(code);
                }
                Ok(())
            })
            .await?;
        published.durable().await
    }

    /// Stops accepting lifecycle operations and brings every live session down, keeping it
    /// resumable. Called on SIGINT/SIGTERM.
    pub async fn shutdown(&self) {
        self.inner.accepting.store(false, Ordering::Relaxed);
        let keys: Vec<SessionKey> = {
            let st = self.state();
            st.sessions.iter().filter(|(_, e)| e.rec.phase == Phase::Live).map(|(k, _)| k.clone()).collect()
        };
        let tasks = keys.into_iter().map(|key| {
            let this = self.clone();
            async move {
                let _guard = match this.lock(&key).await {
                    Ok(g) => Some(g),
                    Err(e) => {
                        tracing::warn!(session = %key, error = %e, "shutting down without the session lock");
                        None
                    }
                };
                if let Ok(session) = this.snapshot(&key)
                    && let Ok(adapter) = this.adapter(&session.provider)
                    && adapter.is_live(&session)
                    && let Err(e) = adapter.close(&session).await
                {
                    tracing::warn!(session = %key, error = %e, "provider close at shutdown failed");
                }
                let stale = this.next_generation();
                let published = this
                    .publish_with(&key, Persist::Always, |b| {
                        if b.entry.rec.phase != Phase::Live {
                            return Ok(());
                        }
                        b.detach(stale);
                        b.settle_pending(ResolvedBy::Restart);
                        b.fail_active_turn("server_shutdown", "the server shut down during the turn");
                        b.transition(Phase::Disconnected)?;
                        b.updated("server_shutdown");
                        Ok(())
                    })
                    .await;
                if let Ok(p) = published {
                    let _ = p.durable().await;
                }
            }
        });
        futures::future::join_all(tasks).await;
        let _ = self.inner.store.flush().await;
    }
}
