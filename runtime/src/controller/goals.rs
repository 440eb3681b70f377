//! Goals: user operations (durable before the provider hears of them), provider adoption, the
//! fold of what the provider reports, and the durable goal services handed to adapters.

use std::sync::{Arc, Weak};
use std::time::Duration;

use async_trait::async_trait;

use super::error::{ControllerError, Result};
use super::fold::Batch;
use super::publish::Persist;
use super::{Controller, Inner};
use crate::session::{GoalOperation, OperationPhase};
use crate::store::LedgerKey;
use ensemble_core::clock::new_id;
use ensemble_core::event::{EventBody, GoalClearedPayload, GoalReconcileRequiredPayload, GoalUpdatedPayload};
use ensemble_core::goal::{
    AdoptRequest, Binding, GoalAction, GoalCommand, GoalFact, GoalHost, GoalHostError, GoalIdentity,
    adoption_submit_id, lineage, operation_id,
};
use ensemble_core::limits::{FieldError, check_bytes, check_id};
use ensemble_core::model::{Goal, GoalOrigin, GoalStatus, Scope, SessionKey, is_blank};

impl Controller {
    /// A user's goal operation (set, pause, resume, clear). The operation id is derived from
    /// `(room, session, clientSubmitId)`: the same request twice is the same operation; a failed one
    /// is re-driven with the next repair epoch.
    pub async fn goal_control(&self, key: &SessionKey, control: GoalControl) -> Result<Option<Goal>> {
        self.check_accepting()?;
        let client_submit_id = control.client_submit_id.clone().unwrap_or_else(new_id);
        check_id("clientSubmitId", &client_submit_id).map_err(FieldError::in_body)?;
        if let GoalAction::Set { objective, .. } = &control.action {
            if is_blank(objective) {
                return Err(ControllerError::InvalidInput("objective must not be empty".into()));
            }
            check_bytes("objective", objective.len(), self.inner.config.max_input_bytes)?;
        }
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        if session.scope == Scope::Side {
            return Err(ControllerError::GoalsUnsupported("side conversations have no goals".into()));
        }
        let adapter = self.adapter(&session.provider)?;
        if !adapter.capabilities().goals {
            return Err(ControllerError::GoalsUnsupported("this provider does not support goals".into()));
        }
        let operation_id = operation_id(&key.room_id, &key.session_id, &client_submit_id);
        let action_name = control.action.name();

        // Prepare (or re-drive) the operation durably before the provider hears of it.
        let identity = {
            let mut st = self.state();
            let e = st.sessions.get_mut(key).ok_or_else(|| ControllerError::SessionNotFound(key.session_id.clone()))?;
            let rec = &mut e.rec.goal;
            match rec.operation(&operation_id).cloned() {
                Some(op) if op.action != action_name => {
                    return Err(ControllerError::SubmitIdConflict(format!(
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
        self.publish_with(key, Persist::Always, |_| Ok(())).await?.durable().await?;

        let outcome = match self.ensure_live_locked(key, &adapter).await {
            Ok(live) => adapter
                .apply_goal(&live, GoalCommand { action: control.action.clone(), identity: identity.clone() })
                .await
                .map_err(ControllerError::from),
            Err(e) => Err(e),
        };
        let origin_provider = matches!(control.action, GoalAction::Pause | GoalAction::Resume)
            && self.goal(key).is_ok_and(|g| g.origin == GoalOrigin::Provider);
        let result = self
            .publish_with(key, Persist::Always, |b| {
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
                                    rec.lineage = lineage(p);
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
    pub(super) async fn adopt_goal(
        &self,
        key: &SessionKey,
        req: AdoptRequest,
    ) -> std::result::Result<GoalIdentity, GoalHostError> {
        let deadline = Duration::from_secs(2);
        let _guard =
            self.inner.locks.acquire(key, deadline).await.map_err(|e| GoalHostError::Unavailable(e.to_string()))?;
        let client_submit_id = adoption_submit_id(&req.provider_session_id, &req.fingerprint);
        let operation_id = operation_id(&key.room_id, &key.session_id, &client_submit_id);
        let mut adopted: Option<GoalIdentity> = None;
        let published = self
            .publish_with(key, Persist::Always, |b| {
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
                rec.lineage = lineage(&req.goal);
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
pub(super) struct SessionGoalHost {
    pub(super) inner: Weak<Inner>,
    pub(super) key: Arc<SessionKey>,
    pub(super) created_at_ms: i64,
}

impl SessionGoalHost {
    pub(super) fn controller(&self) -> std::result::Result<Controller, GoalHostError> {
        self.inner
            .upgrade()
            .map(|inner| Controller { inner })
            .ok_or_else(|| GoalHostError::Unavailable("shut down".into()))
    }

    pub(super) fn ledger_key(&self, provider_session_id: &str, fingerprint: &str) -> LedgerKey {
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

impl Batch<'_> {
    /// Folds what the provider says about the goal.
    pub(super) fn goal_fact(&mut self, fact: GoalFact) {
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
}
