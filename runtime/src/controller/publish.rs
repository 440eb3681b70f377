//! The publish path: the session registry's guards and [`Controller::publish_with`], the one place
//! where session state changes and events are enqueued, in one critical section.

use std::sync::Arc;
use std::sync::MutexGuard;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use tokio::sync::oneshot;

use super::Controller;
use super::error::{ControllerError, Result};
use super::fold::{Batch, Entry, Published, State};
use crate::bus::Frame;
use crate::locks::LifecycleGuard;
use crate::session::{Phase, SessionRecord};
use crate::store::{AppendBatch, RecordRow, StoreError, WriteOp, WritePermit};
use ensemble_core::adapter::{Adapter, Fact};
use ensemble_core::event::{EventBody, NewEvent};
use ensemble_core::model::{Session, SessionKey};

/// Whether a new session would hold a provider process of its own (a side shares its source's),
/// and so counts against the live-session limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NewProcess {
    Yes,
    No,
}

/// Whether a publication writes the session's durable record even when no folded event changed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Persist {
    /// Write the record (the caller changed it directly, e.g. a phase transition).
    Always,
    /// Write it only if a folded event says it changed.
    IfChanged,
}

impl Controller {
    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-applied fold that later code relies
        // on more than on availability; keep serving.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn next_generation(&self) -> u64 {
        self.inner.generations.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(super) fn adapter(&self, provider: &str) -> Result<Arc<dyn Adapter>> {
        self.inner.adapters.get(provider).cloned().ok_or_else(|| ControllerError::UnknownProvider(provider.to_owned()))
    }

    pub(super) async fn lock(&self, key: &SessionKey) -> Result<LifecycleGuard> {
        Ok(self.inner.locks.acquire(key, self.inner.config.lock_timeout).await?)
    }

    /// Runs an operation on a task of its own, acting for the caller's actor, and waits for it.
    /// A caller that gives up (a request past its timeout, a client gone) then no longer stops
    /// the operation halfway: a turn announced whose agent was never asked (a session `working`
    /// for good), a worktree half made, a git killed mid-write. The operation holds its own locks.
    pub(super) async fn detached<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        // Boxed first: the spawn then moves a pointer, not the whole future.
        match tokio::spawn(crate::actor::acting(crate::actor::current(), Box::pin(op))).await {
            Ok(r) => r,
            // A panic stays a panic (the HTTP edge answers 500 and keeps serving).
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(ControllerError::ShuttingDown),
        }
    }

    /// Canonical sessions that are live or starting (each holds a provider process or task).
    pub(super) fn live_count(st: &State) -> usize {
        st.counts().live
    }

    /// The session limits, checked in the same critical section that adds a session.
    pub(super) fn check_capacity(&self, st: &State, room: &str, process: NewProcess) -> Result<()> {
        let c = &self.inner.config;
        let counts = st.counts();
        let total = counts.open;
        let in_room = counts.open_by_room.get(room).copied().unwrap_or(0);
        if total >= c.max_sessions {
            return Err(ControllerError::TooManySessions(format!(
                "the server holds {total} open sessions, the limit; close some first"
            )));
        }
        if in_room >= c.max_sessions_per_room {
            return Err(ControllerError::TooManySessions(format!(
                "room `{room}` holds {in_room} open sessions, the limit; close some first"
            )));
        }
        if process == NewProcess::Yes {
            let n = counts.live;
            if n >= c.max_live_sessions {
                return Err(ControllerError::AtCapacity(format!(
                    "{n} sessions are live, the limit; release or close one, or retry later"
                )));
            }
        }
        Ok(())
    }

    /// Refuses what would change state while the server shuts down, or while the store cannot
    /// write (the operation would fail at its commit anyway, after moving memory ahead of the log).
    pub(super) fn check_accepting(&self) -> Result<()> {
        if !self.inner.accepting.load(Ordering::Relaxed) {
            return Err(ControllerError::ShuttingDown);
        }
        match self.inner.store.health().failing() {
            None => Ok(()),
            Some(f) if f.full => Err(StoreError::Full(f.message).into()),
            Some(f) => Err(StoreError::Unavailable(f.message).into()),
        }
    }

    pub(super) fn phase(&self, key: &SessionKey) -> Result<Phase> {
        self.state()
            .sessions
            .get(key)
            .map(|e| e.rec.phase)
            .ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))
    }

    /// The announced session behind a key.
    pub(super) fn snapshot(&self, key: &SessionKey) -> Result<Session> {
        self.state().announced(key).map(|e| e.rec.session.clone())
    }

    /// Runs `f` on a session under the state lock and publishes the events it emits.
    ///
    /// The store permit is taken first, so the fold and the enqueue happen in one critical section.
    pub(super) async fn publish_with<F>(&self, key: &SessionKey, persist: Persist, f: F) -> Result<Published>
    where
        F: FnOnce(&mut Batch<'_>) -> Result<()>,
    {
        // What a request folds is bounded by its body; the store queue's count bounds these.
        self.publish_sized(key, persist, 0, f).await
    }

    /// As [`Self::publish_with`], charging `bytes` (about what `f` will emit) against the store
    /// queue's byte budget: an agent's output does not wait for its commit, so this is what holds
    /// a streaming session back while the writer is behind.
    pub(super) async fn publish_sized<F>(
        &self,
        key: &SessionKey,
        persist: Persist,
        bytes: usize,
        f: F,
    ) -> Result<Published>
    where
        F: FnOnce(&mut Batch<'_>) -> Result<()>,
    {
        // A session's scope never changes, so this peek decides the route for good: side events
        // never touch the store.
        let side = self
            .state()
            .sessions
            .get(key)
            .map(|e| e.side_log.is_some())
            .ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
        let permit = if side { None } else { Some(self.inner.store.reserve(bytes).await?) };
        self.fold_and_send(key, persist, permit, f)
    }

    /// As [`Self::publish_with`], for a session known not to be a side (a start), so the state
    /// lock is taken once, for the fold.
    pub(super) async fn publish_canonical<F>(&self, key: &SessionKey, persist: Persist, f: F) -> Result<Published>
    where
        F: FnOnce(&mut Batch<'_>) -> Result<()>,
    {
        let permit = self.inner.store.reserve(0).await?;
        self.fold_and_send(key, persist, Some(permit), f)
    }

    /// Folds `f` into the session and enqueues what it emits, in one critical section: to the
    /// store with `permit`, to the side's memory log without one (or if the session is a side).
    fn fold_and_send<F>(
        &self,
        key: &SessionKey,
        persist: Persist,
        permit: Option<WritePermit<'_>>,
        f: F,
    ) -> Result<Published>
    where
        F: FnOnce(&mut Batch<'_>) -> Result<()>,
    {
        let now = self.inner.clock.now_ms();
        let mut st = self.state();
        let (entry, counts) =
            st.counted_mut(key).ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
        let c = &self.inner.config;
        let mut batch = Batch {
            entry,
            now,
            events: Vec::new(),
            persist: persist == Persist::Always,
            max_event_bytes: c.max_event_bytes,
            queue_preview_bytes: c.queue_preview_bytes,
        };
        let folded = f(&mut batch);
        let Batch { entry, events, persist, .. } = batch;
        // `f` may have moved the phase, whether or not it then failed.
        counts.recount(entry);
        folded?;
        if !events.is_empty() {
            entry.last_active_ms = now;
        }
        let Some(permit) = permit.filter(|_| entry.side_log.is_none()) else {
            self.publish_side(entry, events);
            return Ok(Published(None));
        };
        // A turn of a checkpointed session ended: its after-checkpoint follows (in the background).
        let ended = events
            .iter()
            .find(|e| e.body.is_turn_terminal())
            .and_then(|e| e.body.turn_id().map(str::to_owned))
            .and_then(|turn| Self::checkpointed(&entry.rec.session).map(|top| (turn, top)));
        // Spending reported: a budget it reaches is said, and may end the turn.
        let usage = events.iter().any(|e| matches!(e.body, EventBody::UsageUpdated(_)));
        // A turn ended and follow-ups wait: the first starts (in the background). Not after a
        // failure, unless the session says so; never while another turn runs.
        let drain = !entry.rec.queue.is_empty()
            && entry.rec.session.active_turn_id.is_none()
            && events.iter().any(|e| match &e.body {
                EventBody::TurnCompleted(_) | EventBody::TurnCanceled(_) => true,
                EventBody::TurnFailed(_) => entry.rec.session.settings.queue_after_failure == Some(true),
                _ => false,
            });
        // Serialised here rather than cloned for the writer: the writer is one thread for every
        // room, and the clone cost as much as the serialisation.
        let records = if !(persist && entry.announced) {
            Vec::new()
        } else if started_here(&events, &entry.rec) {
            // A start: the record is the session its `session.started` carries, written once.
            vec![RecordRow::as_started(&entry.rec)]
        } else {
            vec![RecordRow::of(&entry.rec)?]
        };
        if events.is_empty() && records.is_empty() {
            return Ok(Published(None));
        }
        let outbound = self.inner.webhooks.outbound(&key.room_id, &events);
        let wake = !outbound.is_empty();
        // Interactions asked now: said to need attention if still unanswered after the delay.
        let asked: Vec<String> = match self.inner.config.attention_after {
            Some(_) => events
                .iter()
                .filter_map(|e| match &e.body {
                    EventBody::InteractionRequested(p) => Some(p.request_id.clone()),
                    _ => None,
                })
                .collect(),
            None => Vec::new(),
        };
        let (ack, rx) = oneshot::channel();
        let rung = permit.send(WriteOp::Append(AppendBatch {
            room_id: key.room_id.clone(),
            events,
            records,
            outbound,
            ack: Some(ack),
        }));
        // The writer's wake-up (a system call when it sleeps) after the lock, not inside it.
        drop(st);
        drop(rung);
        if wake {
            self.inner.webhooks.wake();
        }
        for request in asked {
            self.spawn_attention(key, request);
        }
        if let Some((turn, top)) = ended {
            self.after_turn(key, top, &turn);
        }
        if drain {
            self.spawn_drain(key);
        }
        if usage {
            self.spawn_budget_check(key);
        }
        Ok(Published(Some(rx)))
    }

    /// Side events: a per-side seq, kept in the side's memory log, sent live as `side_event`
    /// frames. Called under the state lock, so the side's order is its fold order.
    pub(super) fn publish_side(&self, entry: &mut Entry, events: Vec<NewEvent>) {
        let cap = self.inner.config.side_log_events.max(1);
        let cap_bytes = self.inner.config.side_log_bytes;
        let Some(log) = entry.side_log.as_mut() else { return };
        for ev in events {
            log.next_seq += 1;
            let json = match serde_json::to_string(&ev.sequenced(log.next_seq)) {
                Ok(j) => j,
                Err(e) => {
                    tracing::error!(error = %e, "side event not serialisable");
                    continue;
                }
            };
            let frame = format!("{{\"type\":\"side_event\",\"event\":{json}}}");
            log.bytes += json.len();
            log.events.push_back((log.next_seq, Bytes::from(json)));
            // The newest stays, however large: a reader can always catch up to the head.
            while log.events.len() > cap || (log.bytes > cap_bytes && log.events.len() > 1) {
                if let Some((_, old)) = log.events.pop_front() {
                    log.bytes -= old.len();
                }
            }
            self.inner.hub.send(&ev.room_id, Frame::Side { bytes: Bytes::from(frame) });
        }
    }

    pub(super) async fn on_facts(&self, key: &SessionKey, generation: u64, facts: Vec<Fact>) {
        // Oversized events are cut here, before the state lock: cutting a huge payload is slow,
        // and under the lock it would stall every session and every REST call.
        let max = self.inner.config.max_event_bytes;
        let mut bytes = 0;
        let facts: Vec<Fact> = facts
            .into_iter()
            .map(|f| match f {
                Fact::Event { turn_id, body } => {
                    let (body, cut, size) = ensemble_core::event::clamp_body_sized(body, max);
                    if let Some(size) = cut {
                        metrics::counter!("ensemble_events_clamped_total").increment(1);
                        tracing::warn!(session = %key, size, "an oversized event was cut");
                    }
                    bytes += size;
                    Fact::Event { turn_id, body }
                }
                other => other,
            })
            .collect();
        let next = &self.inner.generations;
        let start_buffer_bytes = self.inner.config.start_buffer_bytes;
        let lost = facts.iter().any(|f| matches!(f, Fact::Lost { .. }));
        let result = self
            .publish_sized(key, Persist::IfChanged, bytes, |b| {
                if b.entry.generation != generation {
                    return Ok(());
                }
                if let Some(buffer) = b.entry.buffer.as_mut() {
                    buffer.hold(facts, bytes, start_buffer_bytes);
                    return Ok(());
                }
                b.apply_facts(facts, next);
                Ok(())
            })
            .await;
        if let Err(e) = result
            && !matches!(e, ControllerError::SessionNotFound(_))
        {
            tracing::warn!(session = %key, error = %e, "could not publish provider facts");
        }
        if lost && self.phase(key).is_ok_and(|p| p == Phase::Disconnected) {
            // Side conversations do not survive their source's live context.
            self.expire_sides(key, "source_lost").await;
        }
    }
}

/// Whether `rec` is what a durable `session.started` among `events` carries (see
/// [`SessionRecord::is_as_started`]).
fn started_here(events: &[NewEvent], rec: &SessionRecord) -> bool {
    events.iter().any(|e| match &e.body {
        EventBody::SessionStarted(p) => {
            !p.ephemeral && e.session_id == rec.session.session_id && rec.is_as_started(&p.session)
        }
        _ => false,
    })
}
