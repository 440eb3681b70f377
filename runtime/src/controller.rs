//! The runtime controller: owns every session, runs lifecycle operations under per-session locks,
//! folds adapter facts into session state and publishes them to the room log.
//!
//! Invariants:
//! - Every lifecycle operation on a session (start, resume, submit, cancel, close, release,
//!   disconnect, answer) runs under that session's lifecycle lock, acquired with a deadline.
//! - Session state changes only inside [`Controller::publish_with`], under the state mutex, together
//!   with the events that announce it; the events are enqueued to the store in the same critical
//!   section, so the room log order is the fold order.
//! - A failed start leaves nothing behind: the reservation is removed and nothing was persisted.
//! - Facts from a replaced, released or closed live session are dropped (generation check).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::{Notify, oneshot};

use crate::adapter::{
    Adapter, AdapterError, EventSink, Fact, FactReceiver, ProviderState, SessionHandle, SideOpen, TurnRequest,
};
use crate::bus::{Frame, RoomHub};
use crate::clock::{Clock, new_id};
use crate::event::{
    Decision, ErrorInfo, EventBody, GoalClearedPayload, GoalReconcileRequiredPayload, GoalUpdatedPayload, Interaction,
    InteractionKind, InteractionResolvedPayload, NewEvent, ResolvedBy, SessionCompletedPayload, SessionStartedPayload,
    SessionUpdatedPayload, TurnCanceledPayload, TurnFailedPayload, TurnStartedPayload, TurnSteeredPayload,
};
use crate::goals::{AdoptRequest, Binding, GoalAction, GoalCommand, GoalFact, GoalHost, GoalHostError, GoalIdentity};
use crate::locks::{LifecycleGuard, LockTable, LockTimeout};
use crate::model::{
    Goal, GoalOrigin, GoalStatus, InputItem, ProviderCapabilities, ProviderInfo, Room, Scope, Session, SessionKey,
    SessionSettings, SessionStatus, SideCapabilities, validate_id,
};
use crate::session::{GoalOperation, OperationPhase, Phase, SessionRecord};
use crate::store::{AppendBatch, EventPage, LedgerKey, Store, StoreError, WriteOp};

/// Named, configurable limits and timeouts of the controller.
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// Longest a lifecycle operation waits for the session's lock.
    pub lock_timeout: Duration,
    /// How long close waits for a canceled turn to end before forcing it.
    pub close_grace: Duration,
    /// The cwd of sessions started without one.
    pub default_cwd: String,
    /// Largest accepted turn input, in bytes of text.
    pub max_input_bytes: usize,
    /// Events a side conversation keeps in memory for replay (older ones are dropped).
    pub side_log_events: usize,
    /// Sessions (not closed) in total, sides included; more are refused (`too_many_sessions`).
    pub max_sessions: usize,
    /// Sessions (not closed) per room.
    pub max_sessions_per_room: usize,
    /// Live canonical sessions (each holds a provider process or task); starting or resuming more
    /// is refused with `at_capacity` (503, retry later).
    pub max_live_sessions: usize,
    /// Largest serialised event an adapter may publish; larger ones are cut (see
    /// [`crate::event::clamp_body`]).
    pub max_event_bytes: usize,
    /// Live sessions idle this long are released (None: never).
    pub idle_release: Option<Duration>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(10),
            close_grace: Duration::from_secs(3),
            default_cwd: "/".into(),
            max_input_bytes: 1024 * 1024,
            side_log_events: 10_000,
            max_sessions: 4096,
            max_sessions_per_room: 256,
            max_live_sessions: 32,
            max_event_bytes: 1024 * 1024,
            idle_release: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("{0}")]
    InvalidInput(String),
    #[error("unknown provider `{0}`")]
    UnknownProvider(String),
    #[error("provider `{id}` is unavailable: {reason}")]
    ProviderUnavailable { id: String, reason: String },
    #[error("session `{0}` not found")]
    SessionNotFound(String),
    #[error("session `{0}` already exists")]
    SessionExists(String),
    #[error("turn `{0}` is active")]
    TurnActive(String),
    #[error("the session has no active turn")]
    NoActiveTurn,
    #[error("{0}")]
    SessionBusy(String),
    #[error("the session is closed")]
    SessionClosed,
    #[error("the session is starting")]
    SessionStarting,
    #[error("the session cannot be resumed")]
    NotResumable,
    #[error("the side conversation has expired")]
    SideExpired,
    #[error("{0}")]
    SideUnsupported(String),
    #[error("{0}")]
    SideConflict(String),
    #[error("{0}")]
    NotASide(String),
    #[error("the session has no goal")]
    NoGoal,
    #[error("{0}")]
    GoalsUnsupported(String),
    #[error("interaction `{0}` not found")]
    InteractionNotFound(String),
    #[error("interaction `{0}` was already answered")]
    InteractionResolved(String),
    #[error("{0}")]
    InvalidDecision(String),
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    LockTimeout(#[from] LockTimeout),
    #[error("provider error: {0}")]
    Provider(#[from] AdapterError),
    #[error("store error: {0}")]
    Store(#[from] StoreError),
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("{0}")]
    TooManySessions(String),
    #[error("{0}")]
    AtCapacity(String),
}

impl ControllerError {
    /// The stable snake_case code of the error.
    pub fn code(&self) -> &str {
        match self {
            Self::InvalidInput(_) => "invalid_input",
            Self::UnknownProvider(_) => "unknown_provider",
            Self::ProviderUnavailable { .. } => "provider_unavailable",
            Self::SessionNotFound(_) => "session_not_found",
            Self::SessionExists(_) => "session_exists",
            Self::TurnActive(_) => "turn_active",
            Self::NoActiveTurn => "no_active_turn",
            Self::SessionBusy(_) => "session_busy",
            Self::SessionClosed => "session_closed",
            Self::SessionStarting => "session_starting",
            Self::NotResumable => "not_resumable",
            Self::SideExpired => "side_expired",
            Self::SideUnsupported(_) => "side_unsupported",
            Self::SideConflict(_) => "side_conflict",
            Self::NotASide(_) => "not_a_side",
            Self::NoGoal => "no_goal",
            Self::GoalsUnsupported(_) => "goals_unsupported",
            Self::InteractionNotFound(_) => "interaction_not_found",
            Self::InteractionResolved(_) => "interaction_resolved",
            Self::InvalidDecision(_) => "invalid_decision",
            Self::Unsupported(_) => "unsupported",
            Self::LockTimeout(_) => "lock_timeout",
            Self::Provider(e) => e.code(),
            Self::Store(_) => "store_error",
            Self::ShuttingDown => "shutting_down",
            Self::TooManySessions(_) => "too_many_sessions",
            Self::AtCapacity(_) => "at_capacity",
        }
    }
}

type Result<T, E = ControllerError> = std::result::Result<T, E>;

/// `POST /v1/rooms/{roomId}/sessions`.
#[derive(Clone, Debug, Default)]
pub struct StartSession {
    pub room_id: String,
    pub session_id: Option<String>,
    pub provider: String,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub settings: SessionSettings,
}

/// `POST .../turns`.
#[derive(Clone, Debug, Default)]
pub struct SubmitTurn {
    pub input: Vec<InputItem>,
    pub client_submit_id: Option<String>,
    pub steer: bool,
}

/// The answer to a submit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnAccepted {
    pub turn_id: String,
    /// The same `clientSubmitId` was seen before; no new turn was started.
    pub duplicate: bool,
    pub steered: bool,
}

/// Durability of a publication: resolves once its events are committed.
pub struct Published(Option<oneshot::Receiver<Result<u64, StoreError>>>);

impl Published {
    pub async fn durable(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(rx) => match rx.await {
                Ok(r) => r.map(|_| ()).map_err(Into::into),
                Err(_) => Err(StoreError::Closed.into()),
            },
        }
    }
}

struct Entry {
    rec: SessionRecord,
    /// Identifies the current live provider session; facts of older ones are dropped.
    generation: u64,
    /// While the provider side starts or resumes, its facts wait here until the controller has
    /// announced the session, so nothing overtakes `session.started`/`session.updated`.
    buffer: Option<Vec<Fact>>,
    /// False until `session.started` is published: such a session is invisible and leaves no
    /// residue if its start fails.
    announced: bool,
    turn_ended: Arc<Notify>,
    /// Side conversations only: their events, kept in memory (never in the room log).
    side_log: Option<SideLog>,
    /// When the session last published anything (clock ms): idle release measures from here.
    last_active_ms: i64,
}

impl Entry {
    fn new(rec: SessionRecord, generation: u64, buffer: Option<Vec<Fact>>, announced: bool) -> Self {
        let side_log = (rec.session.scope == Scope::Side).then(SideLog::default);
        let last_active_ms = rec.session.updated_at_ms;
        Self { rec, generation, buffer, announced, turn_ended: Arc::new(Notify::new()), side_log, last_active_ms }
    }
}

/// The ephemeral event log of one side conversation: a per-side `seq` from 1, gap-free, bounded.
#[derive(Default)]
struct SideLog {
    next_seq: u64,
    events: std::collections::VecDeque<(u64, Bytes)>,
}

/// A page of a side conversation's events.
#[derive(Debug)]
pub struct SideEventPage {
    /// Event JSON texts with their side seqs.
    pub events: Vec<(u64, Bytes)>,
    pub head_seq: u64,
    /// Every event with `seq <= pruned_through` is gone.
    pub pruned_through: u64,
}

/// The outcome of opening a side conversation.
#[derive(Clone, Debug)]
pub struct SideOpenResult {
    pub session: Session,
    pub capabilities: SideCapabilities,
    /// The same `(source, side, requestId)` was opened before: nothing new happened.
    pub reopened: bool,
}

#[derive(Default)]
struct State {
    sessions: HashMap<SessionKey, Entry>,
}

impl State {
    /// A session clients may see: reserved-but-unannounced ones (a start or side open in flight)
    /// are not found.
    fn announced(&self, key: &SessionKey) -> Result<&Entry> {
        self.sessions
            .get(key)
            .filter(|e| e.announced)
            .ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))
    }
}

/// Collects the events of one publication, folding each into the session as it goes.
pub(crate) struct Batch<'a> {
    entry: &'a mut Entry,
    now: i64,
    events: Vec<NewEvent>,
    persist: bool,
}

impl Batch<'_> {
    fn session(&self) -> Session {
        self.entry.rec.session.clone()
    }

    fn emit(&mut self, turn_id: Option<String>, body: EventBody) {
        let folded = self.entry.rec.apply(turn_id.as_deref(), &body, self.now);
        self.persist |= folded.persist;
        if !folded.publish {
            return;
        }
        if body.is_turn_terminal() {
            self.entry.turn_ended.notify_waiters();
        }
        self.push(turn_id, body);
        for (t, b) in folded.follow_up {
            self.push(t, b);
        }
    }

    fn push(&mut self, turn_id: Option<String>, body: EventBody) {
        let s = &self.entry.rec.session;
        self.events.push(NewEvent {
            room_id: s.room_id.clone(),
            event_id: new_id(),
            session_id: s.session_id.clone(),
            scope: s.scope,
            turn_id,
            occurred_at_ms: self.now,
            body,
        });
    }

    fn transition(&mut self, to: Phase) -> Result<()> {
        self.entry.rec.transition(to, self.now).map_err(|e| ControllerError::InvalidInput(e.to_string()))?;
        self.persist = true;
        Ok(())
    }

    fn updated(&mut self, reason: &str) {
        let session = self.session();
        self.emit(None, EventBody::SessionUpdated(SessionUpdatedPayload { session, reason: reason.into() }));
    }

    /// Ends the active turn from the controller's side (the provider cannot anymore).
    fn fail_active_turn(&mut self, code: &str, message: &str) {
        if let Some(turn) = self.entry.rec.session.active_turn_id.clone() {
            self.emit(
                Some(turn.clone()),
                EventBody::TurnFailed(TurnFailedPayload { turn_id: turn, error: ErrorInfo::new(code, message) }),
            );
        }
    }

    fn settle_pending(&mut self, by: ResolvedBy) {
        for (turn, body) in self.entry.rec.settle_all_pending(by) {
            self.emit(turn, body);
        }
    }

    /// Folds what the provider says about the goal.
    fn goal_fact(&mut self, fact: GoalFact) {
        let now = self.now;
        match fact {
            GoalFact::Observed { goal, lineage } => {
                let rec = &mut self.entry.rec.goal;
                // Only the generation the session's goal tracks; others are adopted or dropped first.
                if rec.lineage.as_deref() != Some(lineage.as_str()) {
                    return;
                }
                let Some(g) = rec.goal.as_mut() else { return };
                let status = provider_goal_status(&goal.status);
                let changed = g.status != status
                    || g.tokens_used != goal.tokens_used
                    || (goal.token_budget.is_some() && g.token_budget != goal.token_budget);
                if !changed {
                    return;
                }
                g.status = status;
                g.tokens_used = goal.tokens_used;
                if goal.token_budget.is_some() {
                    g.token_budget = goal.token_budget;
                }
                g.updated_at_ms = now;
                let goal = g.clone();
                self.persist = true;
                self.emit(None, EventBody::GoalUpdated(GoalUpdatedPayload { goal }));
            }
            GoalFact::Cleared => {
                let rec = &mut self.entry.rec.goal;
                if let Some(g) = rec.goal.take() {
                    rec.lineage = None;
                    self.persist = true;
                    // A provider may announce the clear before it answers the clear we sent: it
                    // belongs to that in-flight operation (pending-local), not to the goal's last one.
                    let pending = rec
                        .operations
                        .iter()
                        .rev()
                        .find(|o| o.phase == OperationPhase::Dispatched && o.action == GoalAction::Clear.name());
                    let (operation_id, revision, repair_epoch) = match pending {
                        Some(o) => (o.operation_id.clone(), o.revision, o.repair_epoch),
                        None => (g.operation_id, g.revision, g.repair_epoch),
                    };
                    self.emit(
                        None,
                        EventBody::GoalCleared(GoalClearedPayload { operation_id, revision, repair_epoch }),
                    );
                }
            }
            GoalFact::ReconcileRequired { reason, provider_turn_id } => {
                let operation_id = self.entry.rec.goal.goal.as_ref().map(|g| g.operation_id.clone());
                self.emit(
                    None,
                    EventBody::GoalReconcileRequired(GoalReconcileRequiredPayload {
                        reason,
                        provider_turn_id,
                        operation_id,
                    }),
                );
            }
        }
    }

    /// Ends a side conversation for good (`session.completed`).
    fn expire(&mut self, reason: &str) -> Result<()> {
        if self.entry.rec.phase == Phase::Completed {
            return Ok(());
        }
        self.settle_pending(ResolvedBy::Close);
        self.fail_active_turn("side_expired", "the side conversation expired");
        self.transition(Phase::Completed)?;
        self.entry.rec.session.resumable = false;
        self.entry.rec.refresh();
        let session = self.session();
        self.emit(None, EventBody::SessionCompleted(SessionCompletedPayload { session, reason: reason.into() }));
        Ok(())
    }

    /// Marks the live side gone: later facts of it are dropped.
    fn detach(&mut self, generation: u64) {
        self.entry.generation = generation;
        self.entry.buffer = None;
    }

    fn apply_facts(&mut self, facts: Vec<Fact>, next_generation: &AtomicU64) {
        for fact in facts {
            match fact {
                // Already clamped to `max_event_bytes` in `on_facts`, the only way facts arrive.
                Fact::Event { turn_id, body } => self.emit(turn_id, body),
                Fact::Update(patch) => {
                    self.entry.rec.apply_patch(&patch, self.now);
                    self.persist = true;
                    self.updated("provider_update");
                }
                Fact::Goal(fact) => self.goal_fact(fact),
                Fact::Lost { reason } => {
                    if self.entry.rec.phase != Phase::Live {
                        continue;
                    }
                    self.settle_pending(ResolvedBy::Provider);
                    self.fail_active_turn("provider_exited", &reason);
                    self.entry.rec.session.last_error = Some(reason);
                    self.detach(next_generation.fetch_add(1, Ordering::Relaxed) + 1);
                    if self.entry.rec.session.scope == Scope::Side {
                        // A side never resumes: losing its live context ends it.
                        let _ = self.expire("side_expired");
                    } else if self.transition(Phase::Disconnected).is_ok() {
                        self.updated("provider_exited");
                    }
                }
            }
        }
    }
}

struct Inner {
    config: ControllerConfig,
    store: Store,
    hub: Arc<RoomHub>,
    adapters: BTreeMap<String, Arc<dyn Adapter>>,
    clock: Arc<dyn Clock>,
    locks: Arc<LockTable>,
    state: Mutex<State>,
    generations: AtomicU64,
    accepting: AtomicBool,
    receiver: Arc<dyn FactReceiver>,
}

/// The shared handle the server holds.
#[derive(Clone)]
pub struct Controller {
    inner: Arc<Inner>,
}

/// Forwards sink facts to the controller without keeping it alive (adapters hold sinks).
struct Forwarder(Weak<Inner>);

#[async_trait]
impl FactReceiver for Forwarder {
    async fn receive(&self, key: &SessionKey, generation: u64, facts: Vec<Fact>) {
        if let Some(inner) = self.0.upgrade() {
            Controller { inner }.on_facts(key, generation, facts).await;
        }
    }
}

impl Controller {
    pub fn new(
        config: ControllerConfig,
        store: Store,
        hub: Arc<RoomHub>,
        adapters: Vec<Arc<dyn Adapter>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let adapters = adapters.into_iter().map(|a| (a.id().to_owned(), a)).collect();
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| Inner {
            config,
            store,
            hub,
            adapters,
            clock,
            locks: LockTable::new(),
            state: Mutex::new(State::default()),
            generations: AtomicU64::new(0),
            accepting: AtomicBool::new(true),
            receiver: Arc::new(Forwarder(weak.clone())),
        });
        Self { inner }
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn hub(&self) -> &Arc<RoomHub> {
        &self.inner.hub
    }

    pub fn config(&self) -> &ControllerConfig {
        &self.inner.config
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-applied fold that later code relies
        // on more than on availability; keep serving.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn next_generation(&self) -> u64 {
        self.inner.generations.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn adapter(&self, provider: &str) -> Result<Arc<dyn Adapter>> {
        self.inner.adapters.get(provider).cloned().ok_or_else(|| ControllerError::UnknownProvider(provider.to_owned()))
    }

    async fn lock(&self, key: &SessionKey) -> Result<LifecycleGuard> {
        Ok(self.inner.locks.acquire(key, self.inner.config.lock_timeout).await?)
    }

    /// Canonical sessions that are live or starting (each holds a provider process or task).
    fn live_count(st: &State) -> usize {
        st.sessions
            .values()
            .filter(|e| e.rec.session.scope == Scope::Canonical && matches!(e.rec.phase, Phase::Live | Phase::Starting))
            .count()
    }

    /// The session limits, checked in the same critical section that adds a session.
    fn check_capacity(&self, st: &State, room: &str, live: bool) -> Result<()> {
        let c = &self.inner.config;
        let open = st.sessions.values().filter(|e| e.rec.phase != Phase::Completed);
        let (total, in_room) = open.fold((0, 0), |(t, r), e| (t + 1, r + usize::from(e.rec.session.room_id == room)));
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
        if live {
            let n = Self::live_count(st);
            if n >= c.max_live_sessions {
                return Err(ControllerError::AtCapacity(format!(
                    "{n} sessions are live, the limit; release or close one, or retry later"
                )));
            }
        }
        Ok(())
    }

    fn check_accepting(&self) -> Result<()> {
        if self.inner.accepting.load(Ordering::Relaxed) { Ok(()) } else { Err(ControllerError::ShuttingDown) }
    }

    fn handle(&self, key: &SessionKey, generation: u64) -> SessionHandle {
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
        SessionHandle {
            sink: EventSink::new(self.inner.receiver.clone(), key.clone(), generation),
            state: ProviderState::new(self.inner.store.clone(), key.clone()),
            goals: Arc::new(SessionGoalHost { inner: Arc::downgrade(&self.inner), key: key.clone(), created_at_ms }),
            goal,
        }
    }

    /// The announced session behind a key.
    fn snapshot(&self, key: &SessionKey) -> Result<Session> {
        self.state().announced(key).map(|e| e.rec.session.clone())
    }

    /// Runs `f` on a session under the state lock and publishes the events it emits.
    ///
    /// The store permit is taken first, so the fold and the enqueue happen in one critical section.
    pub(crate) async fn publish_with<F>(&self, key: &SessionKey, force_persist: bool, f: F) -> Result<Published>
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
        let permit = if side { None } else { Some(self.inner.store.reserve().await?) };
        let now = self.inner.clock.now_ms();
        let mut st = self.state();
        let entry = st.sessions.get_mut(key).ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
        let mut batch = Batch { entry, now, events: Vec::new(), persist: force_persist };
        f(&mut batch)?;
        let Batch { entry, events, persist, .. } = batch;
        if !events.is_empty() {
            entry.last_active_ms = now;
        }
        let Some(permit) = permit else {
            self.publish_side(entry, events);
            return Ok(Published(None));
        };
        let records = if persist && entry.announced { vec![entry.rec.clone()] } else { Vec::new() };
        if events.is_empty() && records.is_empty() {
            return Ok(Published(None));
        }
        let (ack, rx) = oneshot::channel();
        permit.send(WriteOp::Append(AppendBatch { room_id: key.room_id.clone(), events, records, ack: Some(ack) }));
        Ok(Published(Some(rx)))
    }

    /// Side events: a per-side seq, kept in the side's memory log, sent live as `side_event`
    /// frames. Called under the state lock, so the side's order is its fold order.
    fn publish_side(&self, entry: &mut Entry, events: Vec<NewEvent>) {
        let cap = self.inner.config.side_log_events.max(1);
        let Some(log) = entry.side_log.as_mut() else { return };
        for ev in events {
            log.next_seq += 1;
            let room = ev.room_id.clone();
            let event = ev.with_seq(log.next_seq);
            let json = match serde_json::to_string(&event) {
                Ok(j) => j,
                Err(e) => {
                    tracing::error!(error = %e, "side event not serialisable");
                    continue;
                }
            };
            let frame = format!("{{\"type\":\"side_event\",\"event\":{json}}}");
            log.events.push_back((log.next_seq, Bytes::from(json)));
            while log.events.len() > cap {
                log.events.pop_front();
            }
            self.inner.hub.send(&room, Frame::Side { bytes: Bytes::from(frame) });
        }
    }

    async fn on_facts(&self, key: &SessionKey, generation: u64, facts: Vec<Fact>) {
        // Oversized events are cut here, before the state lock: cutting a huge payload is slow,
        // and under the lock it would stall every session and every REST call.
        let max = self.inner.config.max_event_bytes;
        let facts: Vec<Fact> = facts
            .into_iter()
            .map(|f| match f {
                Fact::Event { turn_id, body } => {
                    let (body, cut) = crate::event::clamp_body(body, max);
                    if let Some(size) = cut {
                        metrics::counter!("ensemble_events_clamped_total").increment(1);
                        tracing::warn!(session = %key, size, "an oversized event was cut");
                    }
                    Fact::Event { turn_id, body }
                }
                other => other,
            })
            .collect();
        let next = &self.inner.generations;
        let lost = facts.iter().any(|f| matches!(f, Fact::Lost { .. }));
        let result = self
            .publish_with(key, false, |b| {
                if b.entry.generation != generation {
                    return Ok(());
                }
                if let Some(buffer) = b.entry.buffer.as_mut() {
                    buffer.extend(facts);
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

    // ---------------------------------------------------------------- queries

    pub fn providers(&self) -> Vec<ProviderInfo> {
        self.inner
            .adapters
            .values()
            .map(|a| {
                let d = a.descriptor();
                ProviderInfo {
                    id: a.id().to_owned(),
                    display_name: d.display_name,
                    available: d.available,
                    unavailable_reason: d.unavailable_reason,
                    capabilities: ProviderCapabilities {
                        resume: true,
                        side_conversations: a.side().is_some(),
                        goals: a.goals().is_some(),
                        interactive: a.interactive().is_some(),
                        steer: a.steer().is_some(),
                    },
                }
            })
            .collect()
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

    pub fn session(&self, key: &SessionKey) -> Result<Session> {
        self.snapshot(key)
    }

    pub fn interactions(&self, key: &SessionKey) -> Result<Vec<Interaction>> {
        let st = self.state();
        let e = st.announced(key)?;
        Ok(e.rec
            .pending
            .iter()
            .map(|p| Interaction {
                session_id: key.session_id.clone(),
                turn_id: p.turn_id.clone(),
                requested_at_ms: p.requested_at_ms,
                request: p.request.clone(),
            })
            .collect())
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

    // ---------------------------------------------------------------- lifecycle

    /// Starts a session. The room is created on first use.
    pub async fn start(&self, req: StartSession) -> Result<Session> {
        self.check_accepting()?;
        validate_id("roomId", &req.room_id).map_err(ControllerError::InvalidInput)?;
        if let Some(id) = &req.session_id {
            validate_id("sessionId", id).map_err(ControllerError::InvalidInput)?;
        }
        let adapter = self.adapter(&req.provider)?;
        let d = adapter.descriptor();
        if !d.available {
            return Err(ControllerError::ProviderUnavailable {
                id: req.provider.clone(),
                reason: d.unavailable_reason.unwrap_or_else(|| "not available".into()),
            });
        }
        let session_id = req.session_id.clone().unwrap_or_else(new_id);
        let key = SessionKey::new(&req.room_id, &session_id);
        let _guard = self.lock(&key).await?;
        let generation = self.next_generation();
        let now = self.inner.clock.now_ms();
        let cwd = req.cwd.clone().unwrap_or_else(|| self.inner.config.default_cwd.clone());
        let mut session = Session::new_canonical(&req.room_id, &session_id, &req.provider, &cwd, now);
        if let Some(title) = req.title.clone().filter(|t| !t.trim().is_empty()) {
            session.title = title;
        }
        session.settings = req.settings.clone();
        {
            let mut st = self.state();
            if st.sessions.contains_key(&key) {
                return Err(ControllerError::SessionExists(session_id));
            }
            self.check_capacity(&st, &req.room_id, true)?;
            st.sessions.insert(
                key.clone(),
                Entry::new(SessionRecord::new(session.clone(), Phase::Starting), generation, Some(Vec::new()), false),
            );
        }
        let outcome = match adapter.start(&session, self.handle(&key, generation)).await {
            Ok(o) => o,
            Err(e) => {
                // No residue: the reservation goes, nothing was persisted or published.
                self.state().sessions.remove(&key);
                return Err(e.into());
            }
        };
        let next = &self.inner.generations;
        let published = self
            .publish_with(&key, true, |b| {
                b.entry.announced = true;
                b.entry.rec.apply_patch(&outcome.patch, b.now);
                b.transition(Phase::Live)?;
                let session = b.session();
                b.emit(None, EventBody::SessionStarted(SessionStartedPayload { session, ephemeral: false }));
                for ev in outcome.events.iter().cloned() {
                    b.emit(None, ev);
                }
                let buffered = b.entry.buffer.take().unwrap_or_default();
                b.apply_facts(buffered, next);
                Ok(())
            })
            .await;
        let published = match published {
            Ok(p) => p,
            Err(e) => {
                self.state().sessions.remove(&key);
                let _ = adapter.close(&session).await;
                return Err(e);
            }
        };
        published.durable().await?;
        self.snapshot(&key)
    }

    /// Reconnects a session whose live side is gone.
    pub async fn resume(&self, key: &SessionKey) -> Result<Session> {
        self.check_accepting()?;
        let _guard = self.lock(key).await?;
        self.resume_locked(key).await
    }

    async fn resume_locked(&self, key: &SessionKey) -> Result<Session> {
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
            e.buffer = Some(Vec::new());
            (e.rec.session.clone(), previous)
        };
        match adapter.resume(&session, self.handle(key, generation)).await {
            Ok(outcome) => {
                let next = &self.inner.generations;
                self.publish_with(key, true, |b| {
                    b.entry.rec.apply_patch(&outcome.patch, b.now);
                    b.entry.rec.session.last_error = None;
                    // A turn cannot survive the loss of its process.
                    b.fail_active_turn("provider_exited", "the provider process was gone");
                    b.transition(Phase::Live)?;
                    b.updated("resumed");
                    for ev in outcome.events.iter().cloned() {
                        b.emit(None, ev);
                    }
                    let buffered = b.entry.buffer.take().unwrap_or_default();
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
                self.publish_with(key, true, |b| {
                    b.detach(stale);
                    b.entry.rec.session.last_error = Some(message);
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
    async fn ensure_live_locked(&self, key: &SessionKey, adapter: &Arc<dyn Adapter>) -> Result<Session> {
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

    fn phase(&self, key: &SessionKey) -> Result<Phase> {
        self.state()
            .sessions
            .get(key)
            .map(|e| e.rec.phase)
            .ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))
    }

    /// Submits a turn (or steers the active one).
    pub async fn submit_turn(&self, key: &SessionKey, req: SubmitTurn) -> Result<TurnAccepted> {
        self.check_accepting()?;
        if req.input.is_empty() {
            return Err(ControllerError::InvalidInput("input must contain at least one item".into()));
        }
        let size: usize = req.input.iter().map(|i| i.text().len()).sum();
        if size > self.inner.config.max_input_bytes {
            return Err(ControllerError::InvalidInput(format!(
                "input is {size} bytes, more than the limit of {} bytes",
                self.inner.config.max_input_bytes
            )));
        }
        if req.input.iter().all(|i| i.text().trim().is_empty()) {
            return Err(ControllerError::InvalidInput("input text must not be empty".into()));
        }
        let client_submit_id = req.client_submit_id.clone().filter(|c| !c.trim().is_empty());
        let _guard = self.lock(key).await?;
        let current = self.snapshot(key)?;
        let adapter = self.adapter(&current.provider)?;
        {
            let st = self.state();
            if let Some(e) = st.sessions.get(key)
                && let Some(csid) = &client_submit_id
                && let Some(turn) = e.rec.submitted_turn(csid)
            {
                return Ok(TurnAccepted { turn_id: turn.to_owned(), duplicate: true, steered: false });
            }
        }
        if let Some(active) = current.active_turn_id.clone() {
            let Some(steer) = adapter.steer().filter(|_| req.steer) else {
                return Err(ControllerError::TurnActive(active));
            };
            steer.steer(&current, &active, req.input.clone()).await?;
            let input = req.input.clone();
            self.publish_with(key, true, |b| {
                if let Some(csid) = &client_submit_id {
                    b.entry.rec.remember_submit(csid, &active);
                }
                b.emit(
                    Some(active.clone()),
                    EventBody::TurnSteered(TurnSteeredPayload {
                        turn_id: active.clone(),
                        input,
                        client_submit_id: client_submit_id.clone(),
                    }),
                );
                Ok(())
            })
            .await?
            .durable()
            .await?;
            return Ok(TurnAccepted { turn_id: active, duplicate: false, steered: true });
        }
        let session = self.ensure_live_locked(key, &adapter).await?;
        let turn_id = new_id();
        let input = req.input.clone();
        self.publish_with(key, true, |b| {
            if let Some(active) = &b.entry.rec.session.active_turn_id {
                return Err(ControllerError::TurnActive(active.clone()));
            }
            b.entry.rec.begin_turn(&turn_id, client_submit_id.as_deref(), b.now);
            b.emit(
                Some(turn_id.clone()),
                EventBody::TurnStarted(TurnStartedPayload::user(&turn_id, input, client_submit_id.clone())),
            );
            Ok(())
        })
        .await?
        .durable()
        .await?;
        let request = TurnRequest { turn_id: turn_id.clone(), input: req.input, client_submit_id };
        if let Err(err) = adapter.start_turn(&session, request).await {
            let (code, message) = (err.code().to_owned(), err.to_string());
            self.publish_with(key, false, |b| {
                if b.entry.rec.session.active_turn_id.as_deref() == Some(turn_id.as_str()) {
                    b.emit(
                        Some(turn_id.clone()),
                        EventBody::TurnFailed(TurnFailedPayload {
                            turn_id: turn_id.clone(),
                            error: ErrorInfo::new(&code, message),
                        }),
                    );
                }
                Ok(())
            })
            .await?
            .durable()
            .await?;
            return Err(err.into());
        }
        Ok(TurnAccepted { turn_id, duplicate: false, steered: false })
    }

    /// Interrupts the active turn. Returns its id.
    pub async fn cancel(&self, key: &SessionKey) -> Result<String> {
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        let turn = session.active_turn_id.clone().ok_or(ControllerError::NoActiveTurn)?;
        let adapter = self.adapter(&session.provider)?;
        let live = session.live && adapter.is_live(&session);
        let reach = if live { adapter.cancel(&session, &turn).await } else { Err(AdapterError::NotLive) };
        match reach {
            Ok(()) => Ok(turn),
            Err(AdapterError::NotLive) => {
                // Nobody can end this turn but us.
                self.cancel_turn_here(key, &turn, "canceled").await?;
                Ok(turn)
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn cancel_turn_here(&self, key: &SessionKey, turn: &str, reason: &str) -> Result<()> {
        self.publish_with(key, false, |b| {
            if b.entry.rec.session.active_turn_id.as_deref() == Some(turn) {
                b.emit(
                    Some(turn.to_owned()),
                    EventBody::TurnCanceled(TurnCanceledPayload { turn_id: turn.to_owned(), reason: reason.into() }),
                );
            }
            Ok(())
        })
        .await?
        .durable()
        .await
    }

    fn active_turn(&self, key: &SessionKey) -> Option<String> {
        self.state().sessions.get(key).and_then(|e| e.rec.session.active_turn_id.clone())
    }

    /// Waits up to `grace` for the session's active turn to end.
    async fn wait_turn_end(&self, key: &SessionKey, grace: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let Some(notify) = self.state().sessions.get(key).map(|e| e.turn_ended.clone()) else {
                return true;
            };
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.active_turn(key).is_none() {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.active_turn(key).is_none();
            }
        }
    }

    /// Closes a session: ends its turn (bounded grace), settles interactions, stops the provider
    /// side and publishes `session.completed`. Idempotent.
    pub async fn close(&self, key: &SessionKey) -> Result<()> {
        let _guard = self.lock(key).await?;
        self.close_locked(key, "session closed").await
    }

    async fn close_locked(&self, key: &SessionKey, reason: &str) -> Result<()> {
        let session = self.snapshot(key)?;
        if self.phase(key)? == Phase::Completed {
            return Ok(());
        }
        // Side conversations end with their source, before its live context goes.
        self.expire_sides(key, "source_closed").await;
        let adapter = self.adapter(&session.provider)?;
        let grace = self.inner.config.close_grace;
        // Pending requests are rejected by the close itself, before the turn winds down.
        self.publish_with(key, false, |b| {
            b.settle_pending(ResolvedBy::Close);
            Ok(())
        })
        .await?;
        if let Some(turn) = session.active_turn_id.clone() {
            if session.live && adapter.is_live(&session) {
                match adapter.quiesce() {
                    // The adapter interrupts, waits up to the grace and forces the process down;
                    // the turn's end, if any, is folded by the time it returns.
                    Some(q) => {
                        if let Err(e) = q.quiesce_for_close(&session, grace).await {
                            tracing::warn!(session = %key, error = %e, "quiescing before close failed");
                        }
                    }
                    None => {
                        if let Err(e) = adapter.cancel(&session, &turn).await {
                            tracing::warn!(session = %key, error = %e, "cancel before close failed");
                        }
                        if !self.wait_turn_end(key, grace).await {
                            tracing::warn!(session = %key, turn = %turn, "turn did not end within the close grace; forcing it");
                        }
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
        self.publish_with(key, true, |b| {
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

    async fn release_if_idle(&self, key: &SessionKey, now: i64, idle_ms: i64) -> Result<bool> {
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
        let released = match adapter.release() {
            Some(r) => r.release(&session).await,
            None => adapter.close(&session).await,
        };
        match released {
            Ok(()) | Err(AdapterError::NotLive) => {}
            Err(AdapterError::Busy(m)) => return Err(ControllerError::SessionBusy(m)),
            Err(e) => return Err(e.into()),
        }
        let stale = self.next_generation();
        self.publish_with(key, true, |b| {
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
        let dropped = match adapter.disconnect() {
            Some(d) => d.disconnect(&session).await,
            None => adapter.close(&session).await,
        };
        if let Err(e) = dropped {
            tracing::warn!(session = %key, error = %e, "provider disconnect failed");
        }
        let stale = self.next_generation();
        self.publish_with(key, true, |b| {
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

    /// Answers a pending interaction.
    pub async fn answer(
        &self,
        key: &SessionKey,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
    ) -> Result<()> {
        let session = self.snapshot(key)?;
        let adapter = self.adapter(&session.provider)?;
        let Some(interactive) = adapter.interactive() else {
            return Err(ControllerError::InteractionNotFound(request_id.to_owned()));
        };
        let rid = request_id.to_owned();
        let ans = answers.clone();
        // Resolve first, under the state lock: a second answer (even a concurrent one) sees the
        // request resolved and gets 409, and `interaction.resolved` precedes whatever the answer
        // causes the provider to do.
        self.publish_with(key, false, |b| {
            let Some(pending) = b.entry.rec.pending_interaction(&rid) else {
                return Err(if b.entry.rec.was_resolved(&rid) {
                    ControllerError::InteractionResolved(rid.clone())
                } else {
                    ControllerError::InteractionNotFound(rid.clone())
                });
            };
            if !pending.request.options.contains(&decision) {
                let allowed: Vec<&str> = pending.request.options.iter().map(|d| d.as_str()).collect();
                return Err(ControllerError::InvalidDecision(format!(
                    "decision `{}` is not one of {}",
                    decision.as_str(),
                    allowed.join(", ")
                )));
            }
            if pending.request.kind == InteractionKind::UserInput && decision.accepts() && ans.is_none() {
                return Err(ControllerError::InvalidDecision("a userInput request needs `answers`".into()));
            }
            let turn = pending.turn_id.clone();
            b.emit(
                turn,
                EventBody::InteractionResolved(InteractionResolvedPayload {
                    request_id: rid.clone(),
                    decision,
                    resolved_by: ResolvedBy::Client,
                    answers: ans,
                }),
            );
            Ok(())
        })
        .await?;
        interactive.respond(&session, request_id, decision, answers).await?;
        Ok(())
    }

    // ---------------------------------------------------------------- side conversations

    /// The side capabilities of the live adapter behind a session.
    pub async fn side_capabilities(&self, key: &SessionKey) -> Result<SideCapabilities> {
        let _guard = self.lock(key).await?;
        Ok(self.side_source_locked(key).await?.2)
    }

    async fn side_source_locked(&self, key: &SessionKey) -> Result<(Session, Arc<dyn Adapter>, SideCapabilities)> {
        let source = self.snapshot(key)?;
        if source.scope == Scope::Side {
            return Err(ControllerError::SideUnsupported("a side conversation cannot be the source of another".into()));
        }
        let adapter = self.adapter(&source.provider)?;
        let capabilities = match adapter.side() {
            None => SideCapabilities::default(),
            Some(side) if self.phase(key)? == Phase::Live && adapter.is_live(&source) => {
                side.side_capabilities(&source).await?
            }
            // Without a live context there is nothing to fork.
            Some(_) => SideCapabilities::default(),
        };
        Ok((source, adapter, capabilities))
    }

    /// Opens a side conversation: an ephemeral fork of the source's live context.
    pub async fn open_side(
        &self,
        room_id: &str,
        source_id: &str,
        side_id: Option<&str>,
        request_id: &str,
    ) -> Result<SideOpenResult> {
        self.check_accepting()?;
        let (room, source_id, request_id) = (room_id.trim(), source_id.trim(), request_id.trim());
        let side_id = side_id.map(str::trim).map(str::to_owned).unwrap_or_else(new_id);
        if room.is_empty() || source_id.is_empty() || side_id.is_empty() || request_id.is_empty() {
            return Err(ControllerError::InvalidInput("room, source, side and request ids are required".into()));
        }
        validate_id("sideSessionId", &side_id).map_err(ControllerError::InvalidInput)?;
        if request_id.len() > 256 {
            return Err(ControllerError::InvalidInput("requestId must be at most 256 characters".into()));
        }
        if source_id == side_id {
            return Err(ControllerError::SideConflict("a side conversation cannot be its own source".into()));
        }
        let source_key = SessionKey::new(room, source_id);
        let side_key = SessionKey::new(room, &side_id);
        let (_source_guard, _side_guard) =
            self.inner.locks.acquire_pair(&source_key, &side_key, self.inner.config.lock_timeout).await?;

        // Re-opening with the same source and request id returns the side; any other reuse conflicts.
        let existing = self.state().sessions.get(&side_key).map(|e| (e.rec.session.clone(), e.rec.phase));
        if let Some((existing, phase)) = existing {
            let same = existing.scope == Scope::Side
                && existing.source_session_id.as_deref() == Some(source_id)
                && existing.side_request_id.as_deref() == Some(request_id);
            if !same {
                return Err(ControllerError::SideConflict(format!("session `{side_id}` already exists")));
            }
            if phase == Phase::Completed {
                return Err(ControllerError::SideExpired);
            }
            let capabilities = self.side_source_locked(&source_key).await?.2;
            return Ok(SideOpenResult { session: existing, capabilities, reopened: true });
        }

        let (source, adapter, capabilities) = self.side_source_locked(&source_key).await?;
        let Some(side_adapter) = adapter.side() else {
            return Err(ControllerError::SideUnsupported("this provider cannot open side conversations".into()));
        };
        if !capabilities.complete() {
            return Err(ControllerError::SideUnsupported(format!(
                "the live session cannot open a side conversation (capabilities: {capabilities:?})"
            )));
        }
        if source.active_turn_id.is_some() && !capabilities.active_source_turn {
            return Err(ControllerError::SideUnsupported("the source has an active turn".into()));
        }

        // Reserve the side before the provider call: events that race the fork are buffered for
        // the side, so they can never land on the source or in the room log.
        let now = self.inner.clock.now_ms();
        let mut side = source.clone();
        side.session_id = side_id.clone();
        side.root_session_id = side_id.clone();
        side.provider_session_id = None;
        side.scope = Scope::Side;
        side.source_session_id = Some(source_id.to_owned());
        side.side_request_id = Some(request_id.to_owned());
        side.resumable = false;
        side.active_turn_id = None;
        side.title = "Side conversation".into();
        side.visible = false;
        side.last_error = None;
        side.created_at_ms = now;
        side.updated_at_ms = now;
        let generation = self.next_generation();
        {
            let mut st = self.state();
            // A side shares its source's process, so only the session counts apply.
            self.check_capacity(&st, room, false)?;
            st.sessions.insert(
                side_key.clone(),
                Entry::new(SessionRecord::new(side.clone(), Phase::Live), generation, Some(Vec::new()), false),
            );
        }
        let opened = side_adapter
            .open_side(SideOpen {
                source: &source,
                side: &side,
                request_id,
                handle: self.handle(&side_key, generation),
            })
            .await;
        let opened = match opened {
            Ok(o) => o,
            Err(e) => {
                self.forget(&side_key);
                return Err(e.into());
            }
        };
        let identity = &opened.session;
        let valid = identity.session_id == side_id
            && identity.room_id == room
            && identity.provider == source.provider
            && identity.provider_session_id.as_deref().is_some_and(|p| !p.trim().is_empty());
        if !valid {
            // Never hand an untrusted identity (it could be the source, or another canonical
            // session) to close: only the exact side-scoped identity is ours to clean up.
            let exact_side = identity.session_id == side_id
                && identity.room_id == room
                && identity.scope == Scope::Side
                && identity.source_session_id.as_deref() == Some(source_id);
            if exact_side && let Err(e) = adapter.close(identity).await {
                tracing::warn!(side = %side_key, error = %e, "closing an invalid side failed");
            }
            self.forget(&side_key);
            return Err(ControllerError::SideConflict("the provider returned an invalid side session".into()));
        }
        if !opened.capabilities.complete() {
            if let Err(e) = adapter.close(identity).await {
                tracing::warn!(side = %side_key, error = %e, "closing an unsupported side failed");
            }
            self.forget(&side_key);
            return Err(ControllerError::SideUnsupported("the provider opened a side without every capability".into()));
        }
        let provider_session_id = identity.provider_session_id.clone();
        let ephemeral = opened.capabilities.ephemeral;
        let next = &self.inner.generations;
        self.publish_with(&side_key, false, |b| {
            // The side's invariants hold whatever the provider returned or buffered.
            let s = &mut b.entry.rec.session;
            s.provider_session_id = provider_session_id;
            s.scope = Scope::Side;
            s.source_session_id = Some(source_id.to_owned());
            s.side_request_id = Some(request_id.to_owned());
            s.root_session_id = side_id.clone();
            s.resumable = false;
            s.visible = false;
            s.updated_at_ms = b.now;
            b.entry.rec.refresh();
            b.entry.announced = true;
            let session = b.session();
            b.emit(None, EventBody::SessionStarted(SessionStartedPayload { session, ephemeral }));
            // Then everything that raced the open, in order; nothing overtakes session.started.
            let buffered = b.entry.buffer.take().unwrap_or_default();
            b.apply_facts(buffered, next);
            Ok(())
        })
        .await?;
        Ok(SideOpenResult { session: self.snapshot(&side_key)?, capabilities: opened.capabilities, reopened: false })
    }

    /// Removes a session that was never announced, leaving no residue.
    fn forget(&self, key: &SessionKey) {
        let mut st = self.state();
        if st.sessions.get(key).is_some_and(|e| !e.announced) {
            st.sessions.remove(key);
        }
    }

    /// Ends the live side conversations of a source.
    async fn expire_sides(&self, source: &SessionKey, reason: &str) {
        let sides: Vec<(SessionKey, Session)> = {
            let st = self.state();
            st.sessions
                .iter()
                .filter(|(k, e)| {
                    k.room_id == source.room_id
                        && e.rec.session.scope == Scope::Side
                        && e.rec.session.source_session_id.as_deref() == Some(source.session_id.as_str())
                        && e.rec.phase != Phase::Completed
                })
                .map(|(k, e)| (k.clone(), e.rec.session.clone()))
                .collect()
        };
        for (key, side) in sides {
            if let Ok(adapter) = self.adapter(&side.provider)
                && adapter.is_live(&side)
                && let Err(e) = adapter.close(&side).await
            {
                tracing::warn!(side = %key, error = %e, "closing a side failed");
            }
            let stale = self.next_generation();
            let result = self
                .publish_with(&key, false, |b| {
                    b.detach(stale);
                    b.expire(reason)
                })
                .await;
            if let Err(e) = result {
                tracing::warn!(side = %key, error = %e, "expiring a side failed");
            }
        }
    }

    /// Events of a side conversation with `seq > after`, from memory.
    pub fn side_events(&self, key: &SessionKey, after: u64, limit: usize) -> Result<SideEventPage> {
        let st = self.state();
        let e = st.announced(key)?;
        let Some(log) = e.side_log.as_ref() else {
            return Err(ControllerError::NotASide(
                "only side conversations keep per-session events; read /v1/rooms/{roomId}/events".into(),
            ));
        };
        let pruned_through = log.events.front().map(|(s, _)| s - 1).unwrap_or(log.next_seq);
        let events = log.events.iter().filter(|(s, _)| *s > after).take(limit).cloned().collect();
        Ok(SideEventPage { events, head_seq: log.next_seq, pruned_through })
    }

    // ---------------------------------------------------------------- goals

    /// The session's goal.
    pub fn goal(&self, key: &SessionKey) -> Result<Goal> {
        let st = self.state();
        let e = st.announced(key)?;
        e.rec.goal.goal.clone().ok_or(ControllerError::NoGoal)
    }

    /// A user's goal operation (set, pause, resume, clear). The operation id is derived from
    /// `(room, session, clientSubmitId)`: the same request twice is the same operation; a failed one
    /// is re-driven with the next repair epoch.
    pub async fn goal_control(&self, key: &SessionKey, control: GoalControl) -> Result<Option<Goal>> {
        self.check_accepting()?;
        let client_submit_id = control
            .client_submit_id
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .unwrap_or_else(new_id);
        if client_submit_id.len() > 256 {
            return Err(ControllerError::InvalidInput("clientSubmitId must be at most 256 characters".into()));
        }
        if let GoalAction::Set { objective, .. } = &control.action
            && objective.trim().is_empty()
        {
            return Err(ControllerError::InvalidInput("objective must not be empty".into()));
        }
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        if session.scope == Scope::Side {
            return Err(ControllerError::GoalsUnsupported("side conversations have no goals".into()));
        }
        let adapter = self.adapter(&session.provider)?;
        let Some(goals) = adapter.goals() else {
            return Err(ControllerError::GoalsUnsupported("this provider does not support goals".into()));
        };
        let operation_id = crate::goals::operation_id(&key.room_id, &key.session_id, &client_submit_id);
        let action_name = control.action.name();

        // Prepare (or re-drive) the operation durably before the provider hears of it.
        let identity = {
            let mut st = self.state();
            let e = st.sessions.get_mut(key).ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
            let rec = &mut e.rec.goal;
            match rec.operation(&operation_id).cloned() {
                Some(op) if op.action != action_name => {
                    return Err(ControllerError::InvalidInput(format!(
                        "clientSubmitId `{client_submit_id}` already named a `{}` operation",
                        op.action
                    )));
                }
                Some(op) if op.phase == OperationPhase::Completed => return Ok(rec.goal.clone()),
                Some(op) => {
                    // Failed, or interrupted by a restart: the same operation again, next repair epoch.
                    let epoch = op.repair_epoch + 1;
                    if let Some(o) = rec.operation_mut(&operation_id) {
                        o.repair_epoch = epoch;
                        o.phase = OperationPhase::Dispatched;
                        o.error = None;
                    }
                    GoalIdentity::new(&operation_id, op.revision, epoch)
                }
                None => {
                    if !matches!(control.action, GoalAction::Set { .. }) && rec.goal.is_none() {
                        return Err(ControllerError::NoGoal);
                    }
                    rec.revision += 1;
                    rec.push(GoalOperation {
                        operation_id: operation_id.clone(),
                        client_submit_id: client_submit_id.clone(),
                        action: action_name.to_owned(),
                        revision: rec.revision,
                        repair_epoch: 0,
                        phase: OperationPhase::Dispatched,
                        error: None,
                    });
                    GoalIdentity::new(&operation_id, rec.revision, 0)
                }
            }
        };
        self.publish_with(key, true, |_| Ok(())).await?.durable().await?;

        let outcome = match self.ensure_live_locked(key, &adapter).await {
            Ok(live) => goals
                .apply_goal(&live, GoalCommand { action: control.action.clone(), identity: identity.clone() })
                .await
                .map_err(ControllerError::from),
            Err(e) => Err(e),
        };
        let origin_provider = matches!(control.action, GoalAction::Pause | GoalAction::Resume)
            && self.goal(key).is_ok_and(|g| g.origin == GoalOrigin::Provider);
        let result = self
            .publish_with(key, true, |b| {
                let now = b.now;
                let rec = &mut b.entry.rec.goal;
                match &outcome {
                    Err(e) => {
                        if let Some(o) = rec.operation_mut(&operation_id) {
                            o.phase = OperationPhase::Failed;
                            o.error = Some(e.to_string());
                        }
                    }
                    Ok(snapshot) => {
                        if let Some(o) = rec.operation_mut(&operation_id) {
                            o.phase = OperationPhase::Completed;
                        }
                        match (&control.action, snapshot) {
                            (GoalAction::Clear, _) | (_, None) => {
                                let cleared = rec.goal.take();
                                rec.lineage = None;
                                if cleared.is_some() {
                                    b.emit(
                                        None,
                                        EventBody::GoalCleared(GoalClearedPayload {
                                            operation_id: identity.operation_id.clone(),
                                            revision: identity.revision,
                                            repair_epoch: identity.repair_epoch,
                                        }),
                                    );
                                }
                            }
                            (action, Some(p)) => {
                                if matches!(action, GoalAction::Set { .. }) {
                                    rec.lineage = crate::goals::lineage(p);
                                }
                                let goal = Goal {
                                    objective: p.objective.clone(),
                                    status: provider_goal_status(&p.status),
                                    token_budget: p.token_budget,
                                    tokens_used: p.tokens_used,
                                    operation_id: identity.operation_id.clone(),
                                    revision: identity.revision,
                                    repair_epoch: identity.repair_epoch,
                                    origin: if origin_provider { GoalOrigin::Provider } else { GoalOrigin::User },
                                    updated_at_ms: now,
                                };
                                rec.goal = Some(goal.clone());
                                b.emit(None, EventBody::GoalUpdated(GoalUpdatedPayload { goal }));
                            }
                        }
                    }
                }
                Ok(())
            })
            .await;
        let published = result?;
        published.durable().await?;
        outcome?;
        Ok(self.goal(key).ok())
    }

    /// Adopts a goal the provider created by itself: a completed operation with the next revision.
    async fn adopt_goal(
        &self,
        key: &SessionKey,
        req: AdoptRequest,
    ) -> std::result::Result<GoalIdentity, GoalHostError> {
        let deadline = Duration::from_secs(2);
        let _guard =
            self.inner.locks.acquire(key, deadline).await.map_err(|e| GoalHostError::Unavailable(e.to_string()))?;
        let client_submit_id = crate::goals::adoption_submit_id(&req.provider_session_id, &req.fingerprint);
        let operation_id = crate::goals::operation_id(&key.room_id, &key.session_id, &client_submit_id);
        let mut adopted: Option<GoalIdentity> = None;
        let published = self
            .publish_with(key, true, |b| {
                let now = b.now;
                let rec = &mut b.entry.rec.goal;
                if let Some(op) = rec.operation(&operation_id) {
                    // The same adoption again: the same identity.
                    if op.phase == OperationPhase::Completed {
                        adopted = Some(GoalIdentity::new(&op.operation_id, op.revision, op.repair_epoch));
                        return Ok(());
                    }
                }
                if rec.pending().is_some() {
                    return Err(ControllerError::GoalsUnsupported("conflict".into()));
                }
                if rec.revision != req.expected_revision {
                    return Err(ControllerError::InvalidInput(format!("superseded:{}", rec.revision)));
                }
                if rec.goal.as_ref().is_some_and(|g| g.status != GoalStatus::Complete) {
                    return Err(ControllerError::SessionBusy("goal live".into()));
                }
                rec.revision += 1;
                let identity = GoalIdentity::new(&operation_id, rec.revision, 0);
                rec.push(GoalOperation {
                    operation_id: operation_id.clone(),
                    client_submit_id: client_submit_id.clone(),
                    action: "adopt".into(),
                    revision: rec.revision,
                    repair_epoch: 0,
                    phase: OperationPhase::Completed,
                    error: None,
                });
                rec.lineage = crate::goals::lineage(&req.goal);
                let goal = Goal {
                    objective: req.goal.objective.clone(),
                    status: provider_goal_status(&req.goal.status),
                    token_budget: req.goal.token_budget,
                    tokens_used: req.goal.tokens_used,
                    operation_id: identity.operation_id.clone(),
                    revision: identity.revision,
                    repair_epoch: 0,
                    origin: GoalOrigin::Provider,
                    updated_at_ms: now,
                };
                rec.goal = Some(goal.clone());
                b.emit(None, EventBody::GoalUpdated(GoalUpdatedPayload { goal }));
                adopted = Some(identity);
                Ok(())
            })
            .await;
        let revision = self.state().sessions.get(key).map(|e| e.rec.goal.revision).unwrap_or(0);
        match published {
            Ok(p) => p.durable().await.map_err(|e| GoalHostError::Unavailable(e.to_string()))?,
            Err(ControllerError::GoalsUnsupported(_)) => return Err(GoalHostError::Conflict),
            Err(ControllerError::InvalidInput(_)) => {
                return Err(GoalHostError::Superseded { current: revision, expected: req.expected_revision });
            }
            Err(ControllerError::SessionBusy(_)) => return Err(GoalHostError::GoalLive),
            Err(e) => return Err(GoalHostError::Unavailable(e.to_string())),
        }
        adopted.ok_or_else(|| GoalHostError::Unavailable("no identity".into()))
    }

    // ---------------------------------------------------------------- server lifecycle

    /// Loads every stored session. None is live afterwards: what was live, starting or mid-turn
    /// when the previous process stopped is reported as interrupted, then disconnected.
    pub async fn recover(&self) -> Result<usize> {
        let records = self.inner.store.load_sessions().await?;
        let count = records.len();
        let mut keys = Vec::new();
        {
            let mut st = self.state();
            for rec in records {
                let key = rec.session.key();
                if rec.phase != Phase::Completed {
                    keys.push(key.clone());
                }
                st.sessions.insert(key, Entry::new(rec, 0, None, true));
            }
        }
        for key in keys {
            let published = self
                .publish_with(&key, false, |b| {
                    let before = b.events.len();
                    b.settle_pending(ResolvedBy::Restart);
                    b.fail_active_turn("server_restart", "the server restarted during the turn");
                    if matches!(b.entry.rec.phase, Phase::Live | Phase::Starting) {
                        b.transition(Phase::Disconnected)?;
                    }
                    if b.events.len() > before || b.persist {
                        b.updated("server_restart");
                    }
                    Ok(())
                })
                .await?;
            published.durable().await?;
        }
        Ok(count)
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
                    .publish_with(&key, true, |b| {
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

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller").finish_non_exhaustive()
    }
}

/// `PUT/POST/DELETE .../goal`.
#[derive(Clone, Debug)]
pub struct GoalControl {
    pub action: GoalAction,
    pub client_submit_id: Option<String>,
}

/// The provider's goal status word, as the contract's status.
pub fn provider_goal_status(status: &str) -> GoalStatus {
    match status {
        "active" => GoalStatus::Active,
        "paused" => GoalStatus::Paused,
        "complete" | "completed" => GoalStatus::Complete,
        _ => GoalStatus::Blocked,
    }
}

/// The durable goal services of one session, handed to its adapter.
struct SessionGoalHost {
    inner: Weak<Inner>,
    key: SessionKey,
    created_at_ms: i64,
}

impl SessionGoalHost {
    fn controller(&self) -> std::result::Result<Controller, GoalHostError> {
        self.inner
            .upgrade()
            .map(|inner| Controller { inner })
            .ok_or_else(|| GoalHostError::Unavailable("shut down".into()))
    }

    fn ledger_key(&self, provider_session_id: &str, fingerprint: &str) -> LedgerKey {
        LedgerKey {
            room_id: self.key.room_id.clone(),
            session_id: self.key.session_id.clone(),
            session_created_at_ms: self.created_at_ms,
            provider_session_id: provider_session_id.to_owned(),
            fingerprint: fingerprint.to_owned(),
        }
    }
}

#[async_trait]
impl GoalHost for SessionGoalHost {
    async fn lookup(
        &self,
        provider_session_id: &str,
        fingerprint: &str,
    ) -> std::result::Result<Option<Binding>, GoalHostError> {
        let c = self.controller()?;
        c.inner
            .store
            .goal_lookup(self.ledger_key(provider_session_id, fingerprint))
            .await
            .map_err(|e| GoalHostError::Unavailable(e.to_string()))
    }

    async fn bind(
        &self,
        provider_session_id: &str,
        fingerprint: &str,
        identity: &GoalIdentity,
    ) -> std::result::Result<Binding, GoalHostError> {
        let c = self.controller()?;
        c.inner
            .store
            .goal_bind(self.ledger_key(provider_session_id, fingerprint), identity.clone())
            .await
            .map_err(|e| GoalHostError::Unavailable(e.to_string()))
    }

    async fn adopt(&self, request: AdoptRequest) -> std::result::Result<GoalIdentity, GoalHostError> {
        self.controller()?.adopt_goal(&self.key, request).await
    }
}
