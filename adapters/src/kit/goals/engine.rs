//! The goal side of one live provider session: the [`GoalTracker`] wired to the durable
//! [`GoalHost`] and to the session's sink. Every provider with goals uses it, so the state machine
//! is the same everywhere.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ensemble_core::adapter::{AdapterError, EventSink, Fact};
use ensemble_core::goal::{
    AdoptRequest, Binding, GoalAction, GoalCommand, GoalFact, GoalHost, GoalIdentity, ProviderGoal, fingerprint,
    lineage,
};
use tokio::sync::Notify;

use super::tracker::{GoalTracker, Install, Route};

/// The goal side of one live provider session: the [`GoalTracker`] wired to the durable host and
/// to the session's sink. Both providers use it, so the state machine is the same everywhere.
pub struct GoalEngine {
    tracker: Mutex<GoalTracker>,
    host: Arc<dyn GoalHost>,
    sink: EventSink,
    thread: Mutex<String>,
    /// Wakes attribution waits when evidence, bindings or adoptions change.
    changed: Notify,
    /// How long a durable goal acknowledgement (bind, adopt) may take before failing closed.
    pub ack_timeout: Duration,
}

impl GoalEngine {
    /// `current`: the session's current goal operation identity (from the controller).
    pub fn new(host: Arc<dyn GoalHost>, sink: EventSink, current: GoalIdentity) -> Arc<Self> {
        Arc::new(Self {
            tracker: Mutex::new(GoalTracker::new(current)),
            host,
            sink,
            thread: Mutex::new(String::new()),
            changed: Notify::new(),
            ack_timeout: Duration::from_secs(2),
        })
    }

    pub fn tracker(&self) -> MutexGuard<'_, GoalTracker> {
        self.tracker.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_thread(&self, thread_id: &str) {
        if let Ok(mut t) = self.thread.lock() {
            *t = thread_id.to_owned();
        }
    }

    fn thread(&self) -> String {
        self.thread.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// A goal update from the provider (turn-scoped when `provider_turn` is set). Runs on the
    /// provider's read loop; adoption and binding run in background tasks.
    pub async fn observed(self: &Arc<Self>, goal: ProviderGoal, provider_turn: Option<&str>) {
        let (Some(fp), lin) = (fingerprint(&goal), lineage(&goal)) else { return };
        if goal.thread_id != self.thread() {
            return;
        }
        // After a restart the in-memory bindings are gone; the durable ledger still knows them.
        let known = self.tracker().binding(&fp).is_some();
        if !known
            && let Ok(Ok(Some(binding))) =
                tokio::time::timeout(self.ack_timeout, self.host.lookup(&goal.thread_id, &fp)).await
        {
            let mut t = self.tracker();
            if binding.identity.revision > t.current.revision && !binding.ambiguous {
                t.current = binding.identity.clone();
            }
            if !binding.ambiguous {
                t.bind(&fp, lin.as_deref(), &binding.identity);
            }
            t.remember(&fp, binding);
        }
        let (route, superseded) = {
            let mut t = self.tracker();
            if let Some(turn) = provider_turn {
                t.note_evidence(turn, &fp);
            }
            let superseded = t.superseded(&fp, lin.as_deref());
            if !superseded && (t.current_lineage.as_deref() == lin.as_deref() || t.binding(&fp).is_some()) {
                t.goal_active = goal.is_active();
            }
            (t.classify(&fp, lin.as_deref()), superseded)
        };
        self.changed.notify_waiters();
        if superseded {
            return;
        }
        if matches!(route, Route::KnownCurrent | Route::BindCurrent | Route::Stale)
            && let Some(l) = &lin
        {
            self.sink.send(vec![Fact::Goal(GoalFact::Observed { goal: goal.clone(), lineage: l.clone() })]).await;
        }
        match route {
            Route::BindCurrent => {
                let identity = self.tracker().current.clone();
                let me = self.clone();
                tokio::spawn(async move { me.bind(&fp, lin.as_deref(), &identity).await });
            }
            Route::Adopt if goal.is_active() && self.tracker().begin_adoption(&fp) => {
                let me = self.clone();
                tokio::spawn(async move { me.adopt(goal, fp, lin).await });
            }
            _ => {}
        }
    }

    /// The provider's goal was cleared.
    pub async fn cleared(&self) {
        self.tracker().cleared();
        self.changed.notify_waiters();
        self.sink.send(vec![Fact::Goal(GoalFact::Cleared)]).await;
    }

    /// Binds a generation durably, then in memory. A ledger failure fails closed for good.
    async fn bind(&self, fp: &str, lin: Option<&str>, identity: &GoalIdentity) -> Result<Binding, AdapterError> {
        let thread = self.thread();
        let result = tokio::time::timeout(self.ack_timeout, self.host.bind(&thread, fp, identity)).await;
        let outcome = match result {
            Ok(Ok(binding)) => {
                let mut t = self.tracker();
                if binding.ambiguous {
                    t.remember(fp, binding.clone());
                } else {
                    t.bind(fp, lin, &binding.identity);
                }
                Ok(binding)
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the goal ledger did not acknowledge in time".into()),
        };
        self.changed.notify_waiters();
        outcome.map_err(|e| {
            tracing::warn!(session = %self.sink.key(), error = %e, "goal generation binding failed; goal provenance degraded");
            self.tracker().degraded = true;
            AdapterError::failed("goal_provenance_unavailable", e)
        })
    }

    /// Adopts a provider-created generation (off the read loop). Fails closed: an error, a timeout,
    /// an ambiguous or invalid identity, or a lost race leaves its continuations unproven.
    async fn adopt(self: Arc<Self>, goal: ProviderGoal, fp: String, lin: Option<String>) {
        let expected_revision = self.tracker().current.revision;
        let request = AdoptRequest {
            provider_session_id: goal.thread_id.clone(),
            fingerprint: fp.clone(),
            expected_revision,
            goal: goal.clone(),
        };
        match tokio::time::timeout(self.ack_timeout, self.host.adopt(request)).await {
            Ok(Ok(identity)) => {
                let install = self.tracker().install_adopted(&fp, &identity);
                match install {
                    Install::Installed { arm } => {
                        if self.bind(&fp, lin.as_deref(), &identity).await.is_ok() && arm {
                            self.tracker().arm_claim(&identity, goal.is_active());
                        }
                        tracing::info!(session = %self.sink.key(), operation = %identity.operation_id, revision = identity.revision, "provider goal adopted");
                    }
                    Install::Superseded => {
                        tracing::warn!(session = %self.sink.key(), "provider goal adoption lost the race to a newer goal identity")
                    }
                    Install::Refused => tracing::warn!(session = %self.sink.key(), "provider goal adoption refused"),
                }
            }
            Ok(Err(e)) => tracing::warn!(session = %self.sink.key(), error = %e, "provider goal adoption failed"),
            Err(_) => tracing::warn!(session = %self.sink.key(), "provider goal adoption timed out"),
        }
        self.tracker().finish_adoption(&fp);
        self.changed.notify_waiters();
    }

    /// Runs a user's goal operation around the provider call: the current identity moves to the
    /// operation's (restored if the call fails), set and resume prepare then arm the continuation
    /// claim, and a set binds the returned generation durably before it counts as applied.
    pub async fn apply<F>(&self, cmd: &GoalCommand, call: F) -> Result<Option<ProviderGoal>, AdapterError>
    where
        F: std::future::Future<Output = Result<Option<ProviderGoal>, AdapterError>>,
    {
        let previous = {
            let mut t = self.tracker();
            if t.degraded {
                return Err(AdapterError::failed("goal_provenance_unavailable", "goal provenance failed closed"));
            }
            let previous = std::mem::replace(&mut t.current, cmd.identity.clone());
            if matches!(cmd.action, GoalAction::Set { .. } | GoalAction::Resume) {
                t.prepare_claim(&cmd.identity);
            }
            previous
        };
        let snapshot = match call.await {
            Ok(s) => s,
            Err(e) => {
                let mut t = self.tracker();
                if t.current == cmd.identity {
                    t.current = previous;
                }
                if t.claim.as_ref().is_some_and(|c| c.identity == cmd.identity) {
                    t.claim = None;
                }
                return Err(e);
            }
        };
        match (&cmd.action, snapshot) {
            (GoalAction::Clear, _) => {
                self.tracker().cleared();
                Ok(None)
            }
            (GoalAction::Set { .. }, Some(goal)) => {
                let Some(fp) = fingerprint(&goal) else {
                    self.tracker().degraded = true;
                    return Err(AdapterError::failed(
                        "goal_provenance_unavailable",
                        "the provider returned no goal generation",
                    ));
                };
                let lin = lineage(&goal);
                self.bind(&fp, lin.as_deref(), &cmd.identity).await?;
                let mut t = self.tracker();
                t.goal_active = goal.is_active();
                t.arm_claim(&cmd.identity, goal.is_active());
                Ok(Some(goal))
            }
            (GoalAction::Pause | GoalAction::Resume, Some(goal)) => {
                // Status only: no rebind (that would make the set-time generation ambiguous).
                let mut t = self.tracker();
                t.goal_active = goal.is_active();
                if matches!(cmd.action, GoalAction::Resume) {
                    t.arm_claim(&cmd.identity, goal.is_active());
                } else {
                    t.claim = None;
                }
                Ok(Some(goal))
            }
            (_, None) => Err(AdapterError::failed("provider_error", "the provider returned no goal")),
        }
    }

    /// Attributes a turn the provider started by itself: exact turn-scoped evidence first, else the
    /// ready continuation claim, waiting up to `grace` for either (and for an adoption in flight).
    /// `None`: unproven.
    pub async fn attribute(&self, provider_turn: &str, grace: Duration) -> Option<GoalIdentity> {
        let deadline = tokio::time::Instant::now() + grace;
        let adoption_deadline = tokio::time::Instant::now() + self.ack_timeout;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let in_flight = {
                let mut t = self.tracker();
                if let Some(id) = t.evidence_identity(provider_turn) {
                    return Some(id);
                }
                let in_flight = t.adoption_in_flight();
                if !in_flight
                    && t.goal_active
                    && let Some(id) = t.take_claim()
                {
                    return Some(id);
                }
                in_flight
            };
            // An adoption in flight keeps the continuation waiting until the host answers.
            let until = if in_flight { deadline.max(adoption_deadline) } else { deadline };
            if tokio::time::timeout_at(until, notified).await.is_err() {
                return None;
            }
        }
    }
}
