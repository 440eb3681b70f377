//! The per-session state machine.
//!
//! A [`SessionRecord`] is the durable state of one session: the wire [`Session`], its lifecycle
//! [`Phase`], its pending interactions and its idempotency memory. Its status, `live` flag and submit
//! availability are derived from those by [`SessionRecord::refresh`]; the controller changes a record
//! only through the transitions and the event fold below, so there is one writer of session state.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ensemble_core::event::{Decision, EventBody, InteractionRequestedPayload, InteractionResolvedPayload, ResolvedBy};
use ensemble_core::model::{Session, SessionStatus, SubmitAvailability};

/// How many resolved interaction ids a session remembers (to answer 409 rather than 404).
pub const RESOLVED_MEMORY: usize = 1024;
/// How many `clientSubmitId`s a session remembers for idempotent submits.
pub const SUBMIT_MEMORY: usize = 512;

/// The lifecycle phase of a session. Transitions are checked by [`SessionRecord::transition`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The provider side is being started or resumed.
    Starting,
    /// A live provider session exists.
    Live,
    /// No live provider session (restart, crash, release, disconnect).
    Disconnected,
    /// The provider side failed; `resumable` says whether resume may bring it back.
    Failed,
    /// Closed. Terminal.
    Completed,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid session transition from {from:?} to {to:?}")]
pub struct InvalidTransition {
    pub from: Phase,
    pub to: Phase,
}

impl Phase {
    /// The allowed edges of the lifecycle state machine.
    pub fn can_become(self, to: Phase) -> bool {
        use Phase::*;
        matches!(
            (self, to),
            (Starting, Live | Failed | Disconnected | Completed)
                | (Live, Disconnected | Failed | Completed | Starting)
                | (Disconnected, Starting | Completed)
                | (Failed, Starting | Completed)
        )
    }
}

/// An interaction waiting for an answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInteraction {
    pub turn_id: Option<String>,
    pub requested_at_ms: i64,
    pub request: InteractionRequestedPayload,
}

/// What folding one event did.
#[derive(Debug, Default, PartialEq)]
pub struct Folded {
    /// Whether the event is published (a duplicate or stale fact is dropped).
    pub publish: bool,
    /// Whether the durable record changed and must be written with the event.
    pub persist: bool,
    /// Events the fold implies and that must be published right after this one
    /// (e.g. interactions left pending by a turn that ended).
    pub follow_up: Vec<(Option<String>, EventBody)>,
}

impl Folded {
    fn publish(persist: bool) -> Self {
        Self { publish: true, persist, follow_up: Vec::new() }
    }
    fn drop() -> Self {
        Self::default()
    }
}

/// The durable state of one session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    pub session: Session,
    pub phase: Phase,
    // Empty members are left out of the stored JSON (a tenth of a fresh record's bytes, written at
    // every start and again at each change) and read back as empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingInteraction>,
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    pub resolved: VecDeque<String>,
    /// `(clientSubmitId, turnId)`, oldest first.
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    pub submits: VecDeque<(String, String)>,
    #[serde(default, skip_serializing_if = "GoalRecord::is_empty")]
    pub goal: GoalRecord,
    /// Follow-ups waiting for the running turn to end, first first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue: Vec<ensemble_core::model::QueuedTurn>,
    /// What the session spent, folded from its `usage.updated` events.
    #[serde(default, skip_serializing_if = "crate::usage::Ledger::is_empty")]
    pub usage: crate::usage::Ledger,
    /// Its own budget (else the server's default applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<ensemble_core::usage::Budget>,
}

/// How many goal operations a session remembers (idempotency and repair).
pub const GOAL_OPERATION_MEMORY: usize = 64;

/// The durable goal state of a session: the goal, the revision counter, and recent operations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalRecord {
    pub goal: Option<ensemble_core::model::Goal>,
    /// The lineage of the provider generation the goal tracks (provider updates of other lineages
    /// do not touch it).
    #[serde(default)]
    pub lineage: Option<String>,
    /// The last revision handed out (it only grows, also across clears).
    #[serde(default)]
    pub revision: i64,
    #[serde(default)]
    pub operations: VecDeque<GoalOperation>,
}

/// One goal operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalOperation {
    pub operation_id: String,
    pub client_submit_id: String,
    /// `set`, `pause`, `resume`, `clear` or `adopt`.
    pub action: String,
    pub revision: i64,
    pub repair_epoch: i64,
    pub phase: OperationPhase,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationPhase {
    /// Sent to the provider, not answered yet (or interrupted by a restart: re-driven next time).
    Dispatched,
    Completed,
    Failed,
}

impl GoalRecord {
    /// No goal, no lineage, no revision handed out and no operation remembered: as the default.
    pub fn is_empty(&self) -> bool {
        // Every member named (no `..`): one added must be considered here, or a record leaving
        // out an "empty" goal would lose it.
        let Self { goal, lineage, revision, operations } = self;
        goal.is_none() && lineage.is_none() && *revision == 0 && operations.is_empty()
    }

    pub fn operation(&self, operation_id: &str) -> Option<&GoalOperation> {
        self.operations.iter().find(|o| o.operation_id == operation_id)
    }

    pub fn operation_mut(&mut self, operation_id: &str) -> Option<&mut GoalOperation> {
        self.operations.iter_mut().find(|o| o.operation_id == operation_id)
    }

    pub fn push(&mut self, op: GoalOperation) {
        self.operations.push_back(op);
        while self.operations.len() > GOAL_OPERATION_MEMORY {
            self.operations.pop_front();
        }
    }

    pub fn pending(&self) -> Option<&GoalOperation> {
        self.operations.iter().find(|o| o.phase == OperationPhase::Dispatched)
    }
}

impl SessionRecord {
    pub fn new(session: Session, phase: Phase) -> Self {
        let mut rec = Self {
            session,
            phase,
            pending: Vec::new(),
            resolved: VecDeque::new(),
            submits: VecDeque::new(),
            goal: GoalRecord::default(),
            queue: Vec::new(),
            usage: crate::usage::Ledger::default(),
            budget: None,
        };
        rec.refresh();
        rec
    }

    /// Whether this record is `SessionRecord::new(session, Phase::Live)`: that session, live and
    /// without a turn, with nothing else (no pending interaction, resolved id, remembered submit or
    /// goal) — what a start writes, so the store can keep it as a reference to the
    /// `session.started` event carrying `session`. Compared field by field, without building the
    /// other record.
    pub fn is_as_started(&self, session: &Session) -> bool {
        // Every member named (no `..`): one added to the record must be considered here, or a
        // start would lose it.
        let Self { session: own, phase, pending, resolved, submits, goal, queue, usage, budget } = self;
        // `new` derives the status fields again (`refresh`): a live session without a turn is
        // ready, live and available, so a session that says so reads back unchanged.
        *phase == Phase::Live
            && pending.is_empty()
            && resolved.is_empty()
            && submits.is_empty()
            && goal.is_empty()
            && queue.is_empty()
            && usage.is_empty()
            && budget.is_none()
            && session.active_turn_id.is_none()
            && session.status == SessionStatus::Ready
            && session.live
            && session.submit_availability == SubmitAvailability::available()
            && own == session
    }

    /// Recomputes the derived fields of the wire session.
    pub fn refresh(&mut self) {
        let s = &mut self.session;
        let turn = s.active_turn_id.is_some();
        s.status = match self.phase {
            Phase::Starting => SessionStatus::Starting,
            Phase::Live if turn && !self.pending.is_empty() => SessionStatus::Waiting,
            Phase::Live if turn => SessionStatus::Working,
            Phase::Live => SessionStatus::Ready,
            Phase::Disconnected => SessionStatus::Disconnected,
            Phase::Failed => SessionStatus::Failed,
            Phase::Completed => SessionStatus::Completed,
        };
        s.live = self.phase == Phase::Live;
        s.submit_availability = match self.phase {
            Phase::Completed => SubmitAvailability::blocked("closed"),
            Phase::Starting => SubmitAvailability::blocked("starting"),
            Phase::Disconnected | Phase::Failed if !s.resumable => SubmitAvailability::blocked("not_resumable"),
            _ if turn => SubmitAvailability::blocked("active_turn"),
            _ => SubmitAvailability::available(),
        };
    }

    /// Moves the lifecycle state machine along one of its edges.
    pub fn transition(&mut self, to: Phase, now_ms: i64) -> Result<(), InvalidTransition> {
        if !self.phase.can_become(to) {
            return Err(InvalidTransition { from: self.phase, to });
        }
        self.phase = to;
        self.session.updated_at_ms = now_ms;
        self.refresh();
        Ok(())
    }

    pub fn has_active_turn(&self) -> bool {
        self.session.active_turn_id.is_some()
    }

    /// Marks a turn active (a user submit, before its `turn.started` is published).
    pub fn begin_turn(&mut self, turn_id: &str, client_submit_id: Option<&str>, now_ms: i64) {
        self.session.active_turn_id = Some(turn_id.to_owned());
        if let Some(id) = client_submit_id {
            self.remember_submit(id, turn_id);
        }
        self.session.updated_at_ms = now_ms;
        self.refresh();
    }

    /// Clears the active turn without an event (the submit failed before reaching the provider).
    pub fn abandon_turn(&mut self, turn_id: &str, now_ms: i64) {
        if self.session.active_turn_id.as_deref() == Some(turn_id) {
            self.session.active_turn_id = None;
            self.submits.retain(|(_, t)| t != turn_id);
            self.session.updated_at_ms = now_ms;
            self.refresh();
        }
    }

    /// Applies provider-owned metadata; the patch's lists (modes, options) move in, not copied.
    pub fn apply_patch(&mut self, patch: ensemble_core::model::SessionPatch, now_ms: i64) {
        let s = &mut self.session;
        if let Some(id) = patch.provider_session_id {
            s.provider_session_id = Some(id);
        }
        if let Some(a) = patch.auth_state {
            s.auth_state = Some(a);
            if a == ensemble_core::model::AuthState::Authenticated {
                s.auth_message = None;
            }
        }
        if let Some(m) = &patch.auth_message {
            s.auth_message = Some(ensemble_core::limits::clip(m));
        }
        if let Some(t) = &patch.title {
            s.title = ensemble_core::limits::clip(t);
        }
        if let Some(m) = patch.modes {
            s.modes = Some(m);
        }
        if let Some(o) = patch.config_options {
            s.config_options = o;
        }
        if let Some(reason) = &patch.not_resumable {
            s.resumable = false;
            s.resume_unsupported_reason = Some(ensemble_core::limits::clip(reason));
        }
        s.updated_at_ms = now_ms;
    }

    pub fn submitted_turn(&self, client_submit_id: &str) -> Option<&str> {
        self.submits.iter().find(|(c, _)| c == client_submit_id).map(|(_, t)| t.as_str())
    }

    /// Remembers that a `clientSubmitId` was answered with `turn_id` (idempotent submits).
    pub fn remember_submit(&mut self, client_submit_id: &str, turn_id: &str) {
        if self.submitted_turn(client_submit_id).is_some() {
            return;
        }
        self.submits.push_back((client_submit_id.to_owned(), turn_id.to_owned()));
        while self.submits.len() > SUBMIT_MEMORY {
            self.submits.pop_front();
        }
    }

    pub fn pending_interaction(&self, request_id: &str) -> Option<&PendingInteraction> {
        self.pending.iter().find(|p| p.request.request_id == request_id)
    }

    pub fn was_resolved(&self, request_id: &str) -> bool {
        self.resolved.iter().any(|r| r == request_id)
    }

    /// Events that settle every pending interaction (close, disconnect, restart).
    pub fn settle_all_pending(&self, by: ResolvedBy) -> Vec<(Option<String>, EventBody)> {
        self.pending
            .iter()
            .map(|p| {
                (
                    p.turn_id.clone(),
                    EventBody::InteractionResolved(InteractionResolvedPayload {
                        request_id: p.request.request_id.clone(),
                        decision: Decision::Cancel,
                        resolved_by: by,
                        answers: None,
                    }),
                )
            })
            .collect()
    }

    /// Folds one event into the record. `turn_id` is the envelope's turn.
    pub fn apply(&mut self, turn_id: Option<&str>, body: &EventBody, now_ms: i64) -> Folded {
        let folded = match body {
            EventBody::TurnStarted(p) => {
                if self.session.active_turn_id.as_deref() == Some(p.turn_id.as_str()) {
                    // The controller already marked this (user) turn active at submit.
                    Folded::publish(/*persist*/ false)
                } else {
                    self.session.active_turn_id = Some(p.turn_id.clone());
                    self.session.updated_at_ms = now_ms;
                    Folded::publish(/*persist*/ true)
                }
            }
            EventBody::TurnCompleted(_) | EventBody::TurnFailed(_) | EventBody::TurnCanceled(_) => {
                let ended = body.turn_id().unwrap_or_default();
                if self.session.active_turn_id.as_deref() != Some(ended) {
                    // A turn ends once; a late or duplicate terminal (e.g. after a forced cancel)
                    // would contradict what clients already saw.
                    return Folded::drop();
                }
                self.session.active_turn_id = None;
                self.session.updated_at_ms = now_ms;
                let mut out = Folded::publish(/*persist*/ true);
                // Interactions of the ended turn can no longer be answered.
                let (stale, keep): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut self.pending).into_iter().partition(|p| p.turn_id.as_deref() == Some(ended));
                self.pending = keep;
                for p in stale {
                    self.remember_resolved(&p.request.request_id);
                    out.follow_up.push((
                        Some(ended.to_owned()),
                        EventBody::InteractionResolved(InteractionResolvedPayload {
                            request_id: p.request.request_id,
                            decision: Decision::Cancel,
                            resolved_by: ResolvedBy::Provider,
                            answers: None,
                        }),
                    ));
                }
                out
            }
            EventBody::InteractionRequested(p) => {
                if self.pending_interaction(&p.request_id).is_some() || self.was_resolved(&p.request_id) {
                    return Folded::drop();
                }
                self.pending.push(PendingInteraction {
                    turn_id: turn_id.map(str::to_owned),
                    requested_at_ms: now_ms,
                    request: p.clone(),
                });
                self.session.updated_at_ms = now_ms;
                Folded::publish(/*persist*/ true)
            }
            EventBody::InteractionResolved(p) => {
                let before = self.pending.len();
                self.pending.retain(|x| x.request.request_id != p.request_id);
                if self.pending.len() == before {
                    // Already settled (e.g. answered by the client, then reported by the provider).
                    return Folded::drop();
                }
                self.remember_resolved(&p.request_id);
                self.session.updated_at_ms = now_ms;
                Folded::publish(/*persist*/ true)
            }
            EventBody::UsageUpdated(p) => {
                self.usage.record(turn_id, p);
                Folded::publish(/*persist*/ true)
            }
            _ => Folded::publish(/*persist*/ false),
        };
        self.refresh();
        folded
    }

    fn remember_resolved(&mut self, request_id: &str) {
        self.resolved.push_back(request_id.to_owned());
        while self.resolved.len() > RESOLVED_MEMORY {
            self.resolved.pop_front();
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
