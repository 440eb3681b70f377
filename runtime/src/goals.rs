//! Goals: durable objectives with provenance.
//!
//! Every user change of a goal is an *operation* with a durable identity
//! `{operationId, revision, repairEpoch}`. A provider's goal *generation* is identified by a
//! fingerprint (a digest of thread, created-at, updated-at and objective) and a *lineage* (the same
//! without updated-at, stable across pause, resume and progress). The ledger binds fingerprints to
//! operation identities: the first bind wins, a conflicting rebind makes the fingerprint ambiguous
//! for good.
//!
//! [`GoalTracker`] is the provider-side state machine (ported from the Go daemon's codex adapter):
//! it classifies every provider goal update as known-current, pending-local, stale, bind-current or
//! adopt, keeps at most one adoption per fingerprint in flight, decides whether an adopted identity
//! lost a race, and holds the single-use continuation claim. It is pure: adapters feed it and act on
//! its answers; the durable parts go through [`GoalHost`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;

use crate::adapter::{AdapterError, EventSink, Fact};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How many generation bindings and turn evidences a session keeps in memory.
pub const MAX_BINDINGS: usize = 256;
/// How many fingerprints a single turn may show before its evidence counts as ambiguous.
pub const MAX_FINGERPRINTS_PER_TURN: usize = 8;

/// The durable identity of a goal operation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalIdentity {
    pub operation_id: String,
    pub revision: i64,
    pub repair_epoch: i64,
}

impl GoalIdentity {
    pub fn new(operation_id: &str, revision: i64, repair_epoch: i64) -> Self {
        Self { operation_id: operation_id.to_owned(), revision, repair_epoch }
    }

    pub fn valid(&self) -> bool {
        !self.operation_id.is_empty() && self.revision > 0
    }
}

/// `turn.started` of a turn the provider started by itself: a goal continuation credited to the
/// proven operation, or, unproven, of origin `provider`.
pub fn provider_turn_started(turn_id: &str, identity: Option<&GoalIdentity>) -> crate::event::TurnStartedPayload {
    use crate::event::{TurnOrigin, TurnStartedPayload};
    TurnStartedPayload {
        turn_id: turn_id.to_owned(),
        origin: if identity.is_some() { TurnOrigin::GoalContinuation } else { TurnOrigin::Provider },
        goal_operation_id: identity.map(|i| i.operation_id.clone()),
        goal_revision: identity.map(|i| i.revision),
        goal_repair_epoch: identity.map(|i| i.repair_epoch),
        input: vec![],
        client_submit_id: None,
    }
}

/// A goal as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderGoal {
    pub thread_id: String,
    pub objective: String,
    /// The provider's status word (`active`, `paused`, `blocked`, `complete`, …).
    pub status: String,
    pub token_budget: Option<i64>,
    pub tokens_used: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl ProviderGoal {
    pub fn is_active(&self) -> bool {
        self.status == "active"
    }
}

fn digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The generation fingerprint: empty fields make it unknown.
pub fn fingerprint(goal: &ProviderGoal) -> Option<String> {
    if goal.thread_id.is_empty() || goal.objective.is_empty() || goal.created_at == 0 || goal.updated_at == 0 {
        return None;
    }
    Some(digest(&format!(
        "thread={};created={};updated={};objective={}",
        quoted(&goal.thread_id),
        goal.created_at,
        goal.updated_at,
        quoted(&goal.objective)
    )))
}

/// The generation lineage: the fingerprint without `updated`, stable across pause/resume/progress.
pub fn lineage(goal: &ProviderGoal) -> Option<String> {
    if goal.thread_id.is_empty() || goal.objective.is_empty() || goal.created_at == 0 {
        return None;
    }
    Some(digest(&format!(
        "thread={};created={};objective={}",
        quoted(&goal.thread_id),
        goal.created_at,
        quoted(&goal.objective)
    )))
}

/// The deterministic operation id of `(room, session, clientSubmitId)`: the same request twice is the
/// same operation. (A name-based UUID: SHA-256, version and variant bits set.)
pub fn operation_id(room_id: &str, session_id: &str, client_submit_id: &str) -> String {
    let hash = Sha256::digest(format!("ensemble.goal\0{room_id}\0{session_id}\0{client_submit_id}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&hash[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).to_string()
}

/// The `clientSubmitId` of the adoption of a provider-created generation.
pub fn adoption_submit_id(provider_session_id: &str, fingerprint: &str) -> String {
    format!("provider_goal_adoption:{provider_session_id}:{fingerprint}")
}

/// A binding of a generation to an operation identity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub identity: GoalIdentity,
    /// Two identities claimed this generation: it is never adopted or credited.
    pub ambiguous: bool,
}

/// How a provider goal update is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Already bound to the current identity: apply it.
    KnownCurrent,
    /// A local set is still in flight: its own path binds it.
    PendingLocal,
    /// Belongs to an older or ambiguous generation: drop (unless it is progress of the current lineage).
    Stale,
    /// A new snapshot of the current lineage: bind it to the current identity (no host call).
    BindCurrent,
    /// A generation nobody owns (the provider created it): adopt it.
    Adopt,
}

/// What an adopted identity does when it comes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Install {
    /// Installed; `arm` says whether the continuation claim should be armed.
    Installed { arm: bool },
    /// A newer identity arrived meanwhile: the adoption lost the race and is dropped.
    Superseded,
    /// The tracker no longer accepts adoptions (degraded or wrong thread).
    Refused,
}

/// The single-use continuation claim: lets the next provider-started turn inherit `identity` when
/// the provider's goal updates carry no turn id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub identity: GoalIdentity,
    pub ready: bool,
}

/// The provider-side goal state of one live session.
#[derive(Debug, Default)]
pub struct GoalTracker {
    /// The current durable desired identity; it gates future scheduling.
    pub current: GoalIdentity,
    bindings: HashMap<String, Binding>,
    order: VecDeque<String>,
    /// The generation last bound or adopted as current.
    pub current_fingerprint: Option<String>,
    pub current_lineage: Option<String>,
    pub current_generation_identity: GoalIdentity,
    /// A goal is present (not cleared).
    pub goal_present: bool,
    /// The provider's goal is active (continuations may follow).
    pub goal_active: bool,
    pub claim: Option<Claim>,
    in_flight: HashSet<String>,
    /// Turn-scoped evidence: provider turn id → fingerprints seen for it.
    evidence: HashMap<String, Vec<String>>,
    evidence_order: VecDeque<String>,
    /// Fail closed for good (capacity exceeded, ledger failure): nothing is adopted or credited.
    pub degraded: bool,
}

impl GoalTracker {
    pub fn binding(&self, fingerprint: &str) -> Option<&Binding> {
        self.bindings.get(fingerprint)
    }

    /// Classifies a provider goal update (the seed's classifier, route for route).
    pub fn classify(&self, fingerprint: &str, lineage: Option<&str>) -> Route {
        if let Some(b) = self.bindings.get(fingerprint) {
            if b.ambiguous {
                return Route::Stale;
            }
            if b.identity == self.current {
                return Route::KnownCurrent;
            }
            // Pause/resume advance the live identity without rebinding the set-time generation:
            // progress (even `complete`) of that still-current generation must not be dropped, or
            // a later nudge would revive a finished goal. A cleared goal stays stale.
            if self.goal_present
                && self.current_fingerprint.as_deref() == Some(fingerprint)
                && self.current_generation_identity == b.identity
            {
                return Route::KnownCurrent;
            }
            return Route::Stale;
        }
        if let Some(c) = &self.claim
            && !c.ready
            && c.identity == self.current
        {
            return Route::PendingLocal;
        }
        if let Some(l) = lineage
            && self.current_lineage.as_deref() == Some(l)
        {
            if !self.current.valid() || self.current_generation_identity != self.current {
                return Route::Stale;
            }
            return Route::BindCurrent;
        }
        Route::Adopt
    }

    /// Whether an update must be dropped. Stale updates of the current lineage are still applied
    /// while a goal is present: fingerprints include `updatedAt`, so pause/resume/complete snapshots
    /// miss the set-time binding.
    pub fn superseded(&self, fingerprint: &str, lineage: Option<&str>) -> bool {
        if self.classify(fingerprint, lineage) != Route::Stale {
            return false;
        }
        !(self.goal_present
            && lineage.is_some()
            && lineage == self.current_lineage.as_deref()
            && self.current_generation_identity.valid())
    }

    /// Marks an adoption of `fingerprint` in flight; false if one already is (dedupe).
    pub fn begin_adoption(&mut self, fingerprint: &str) -> bool {
        !self.degraded && self.in_flight.insert(fingerprint.to_owned())
    }

    pub fn finish_adoption(&mut self, fingerprint: &str) {
        self.in_flight.remove(fingerprint);
    }

    pub fn adoption_in_flight(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Installs an identity the host gave an adopted generation.
    pub fn install_adopted(&mut self, fingerprint: &str, identity: &GoalIdentity) -> Install {
        if self.degraded || !identity.valid() {
            return Install::Refused;
        }
        if *identity == self.current {
            return Install::Installed { arm: self.current_fingerprint.as_deref() != Some(fingerprint) };
        }
        if self.current.valid() && identity.revision <= self.current.revision {
            return Install::Superseded;
        }
        self.current = identity.clone();
        Install::Installed { arm: true }
    }

    /// Binds a generation in memory (first bind wins; a conflicting bind makes it ambiguous).
    /// Returns the resulting binding.
    pub fn bind(&mut self, fingerprint: &str, lineage: Option<&str>, identity: &GoalIdentity) -> Binding {
        let binding = match self.bindings.get_mut(fingerprint) {
            Some(b) => {
                if b.identity != *identity {
                    b.ambiguous = true;
                }
                b.clone()
            }
            None => {
                let b = Binding { identity: identity.clone(), ambiguous: false };
                self.bindings.insert(fingerprint.to_owned(), b.clone());
                self.order.push_back(fingerprint.to_owned());
                while self.order.len() > MAX_BINDINGS {
                    if let Some(old) = self.order.pop_front() {
                        self.bindings.remove(&old);
                    }
                }
                b
            }
        };
        if !binding.ambiguous {
            self.current_fingerprint = Some(fingerprint.to_owned());
            self.current_lineage = lineage.map(str::to_owned);
            self.current_generation_identity = identity.clone();
            self.goal_present = true;
        }
        binding
    }

    /// Installs a binding read from the durable ledger (no conflict check: the ledger decided).
    pub fn remember(&mut self, fingerprint: &str, binding: Binding) {
        if !self.bindings.contains_key(fingerprint) {
            self.order.push_back(fingerprint.to_owned());
        }
        self.bindings.insert(fingerprint.to_owned(), binding);
    }

    /// A local set or resume is about to be sent: its continuation claim is prepared, not ready.
    pub fn prepare_claim(&mut self, identity: &GoalIdentity) {
        self.claim = Some(Claim { identity: identity.clone(), ready: false });
    }

    /// The goal is in place: the claim becomes usable, but only if the identity is still current and
    /// the goal is active.
    pub fn arm_claim(&mut self, identity: &GoalIdentity, goal_active: bool) {
        if *identity == self.current && goal_active {
            self.claim = Some(Claim { identity: identity.clone(), ready: true });
        } else if self.claim.as_ref().is_some_and(|c| c.identity == *identity) {
            self.claim = None;
        }
    }

    /// Consumes a ready claim for the current identity (the compatibility attribution path).
    pub fn take_claim(&mut self) -> Option<GoalIdentity> {
        match &self.claim {
            Some(c) if c.ready && c.identity == self.current && !self.degraded => self.claim.take().map(|c| c.identity),
            _ => None,
        }
    }

    /// Records that a provider turn showed a generation (exact, turn-scoped evidence).
    pub fn note_evidence(&mut self, provider_turn_id: &str, fingerprint: &str) {
        let list = self.evidence.entry(provider_turn_id.to_owned()).or_insert_with(|| {
            self.evidence_order.push_back(provider_turn_id.to_owned());
            Vec::new()
        });
        if !list.iter().any(|f| f == fingerprint) {
            list.push(fingerprint.to_owned());
        }
        while self.evidence_order.len() > MAX_BINDINGS {
            if let Some(old) = self.evidence_order.pop_front() {
                self.evidence.remove(&old);
            }
        }
    }

    /// The identity a provider turn's evidence proves: exactly one bound, unambiguous fingerprint.
    pub fn evidence_identity(&self, provider_turn_id: &str) -> Option<GoalIdentity> {
        let fps = self.evidence.get(provider_turn_id)?;
        if fps.len() > MAX_FINGERPRINTS_PER_TURN || self.degraded {
            return None;
        }
        let mut found: Option<&GoalIdentity> = None;
        for fp in fps {
            let b = self.bindings.get(fp)?;
            if b.ambiguous {
                return None;
            }
            match found {
                Some(i) if *i != b.identity => return None,
                _ => found = Some(&b.identity),
            }
        }
        found.cloned()
    }

    /// Fingerprints a provider turn showed.
    pub fn evidence_fingerprints(&self, provider_turn_id: &str) -> Vec<String> {
        self.evidence.get(provider_turn_id).cloned().unwrap_or_default()
    }

    /// The goal was cleared.
    pub fn cleared(&mut self) {
        self.goal_present = false;
        self.goal_active = false;
        self.claim = None;
    }
}

/// Errors of the durable goal services.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GoalHostError {
    #[error("another goal operation is pending")]
    Conflict,
    #[error("the goal changed meanwhile (revision {current}, expected {expected})")]
    Superseded { current: i64, expected: i64 },
    #[error("a goal is still live")]
    GoalLive,
    #[error("the goal ledger is unavailable: {0}")]
    Unavailable(String),
}

/// Asks the host to adopt a provider-created generation.
#[derive(Clone, Debug)]
pub struct AdoptRequest {
    pub provider_session_id: String,
    pub fingerprint: String,
    pub expected_revision: i64,
    pub goal: ProviderGoal,
}

/// The durable goal services the controller offers adapters (per session, through the handle).
#[async_trait]
pub trait GoalHost: Send + Sync {
    /// The ledger's binding of a generation, if any.
    async fn lookup(&self, provider_session_id: &str, fingerprint: &str) -> Result<Option<Binding>, GoalHostError>;
    /// Binds a generation durably (first bind wins; a conflicting bind makes it ambiguous).
    async fn bind(
        &self,
        provider_session_id: &str,
        fingerprint: &str,
        identity: &GoalIdentity,
    ) -> Result<Binding, GoalHostError>;
    /// Adopts a provider-created generation: a completed operation with a new revision.
    async fn adopt(&self, request: AdoptRequest) -> Result<GoalIdentity, GoalHostError>;
}

/// What a goal fact tells the controller.
#[derive(Clone, Debug, PartialEq)]
pub enum GoalFact {
    /// Progress or status of the provider's goal generation of `lineage` (applied to the session's
    /// goal only if it is of that lineage).
    Observed { goal: ProviderGoal, lineage: String },
    /// The provider's goal was cleared.
    Cleared,
    /// A provider-started turn could not be attributed to a goal operation.
    ReconcileRequired { reason: String, provider_turn_id: Option<String> },
}

/// A user change of a goal, with its operation identity.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalCommand {
    pub action: GoalAction,
    pub identity: GoalIdentity,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GoalAction {
    Set { objective: String, token_budget: Option<i64> },
    Pause,
    Resume,
    Clear,
}

impl GoalAction {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Set { .. } => "set",
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Clear => "clear",
        }
    }
}

/// A host that has no goal ledger (adapters driven outside a controller).
pub struct NoGoalHost;

#[async_trait]
impl GoalHost for NoGoalHost {
    async fn lookup(&self, _p: &str, _f: &str) -> Result<Option<Binding>, GoalHostError> {
        Ok(None)
    }
    async fn bind(&self, _p: &str, _f: &str, _i: &GoalIdentity) -> Result<Binding, GoalHostError> {
        Err(GoalHostError::Unavailable("no goal ledger".into()))
    }
    async fn adopt(&self, _r: AdoptRequest) -> Result<GoalIdentity, GoalHostError> {
        Err(GoalHostError::Unavailable("no goal ledger".into()))
    }
}

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
            tracker: Mutex::new(GoalTracker { current, ..GoalTracker::default() }),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(objective: &str, created: i64, updated: i64, status: &str) -> ProviderGoal {
        ProviderGoal {
            thread_id: "thread-1".into(),
            objective: objective.into(),
            status: status.into(),
            token_budget: None,
            tokens_used: None,
            created_at: created,
            updated_at: updated,
        }
    }

    fn id(op: &str, rev: i64) -> GoalIdentity {
        GoalIdentity::new(op, rev, 0)
    }

    /// A tracker with a user goal set and bound (the state after a successful set).
    fn after_set() -> (GoalTracker, ProviderGoal) {
        let mut t = GoalTracker::default();
        let g = goal("ship it", 100, 100, "active");
        t.current = id("op-1", 1);
        t.bind(&fingerprint(&g).unwrap(), lineage(&g).as_deref(), &id("op-1", 1));
        (t, g)
    }

    #[test]
    fn fingerprints_and_lineages() {
        let a = goal("x", 1, 2, "active");
        let b = goal("x", 1, 3, "paused");
        assert_ne!(fingerprint(&a), fingerprint(&b), "updatedAt is part of the fingerprint");
        assert_eq!(lineage(&a), lineage(&b), "but not of the lineage");
        assert!(fingerprint(&a).unwrap().starts_with("sha256:"));
        assert_eq!(fingerprint(&goal("x", 0, 2, "active")), None, "missing fields: unknown");
        assert_eq!(fingerprint(&goal("", 1, 2, "active")), None);
        assert_ne!(lineage(&goal("x", 1, 2, "a")), lineage(&goal("y", 1, 2, "a")));
    }

    #[test]
    fn operation_ids_are_deterministic() {
        let a = operation_id("r", "s", "c1");
        assert_eq!(a, operation_id("r", "s", "c1"));
        assert_ne!(a, operation_id("r", "s", "c2"));
        assert_ne!(a, operation_id("r", "s2", "c1"));
        assert_eq!(uuid::Uuid::parse_str(&a).unwrap().get_version_num(), 5);
    }

    #[test]
    fn route_known_current_when_bound_to_the_current_identity() {
        let (t, g) = after_set();
        assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::KnownCurrent);
    }

    #[test]
    fn route_known_current_after_pause_advanced_the_identity() {
        let (mut t, g) = after_set();
        // Pause: a new operation identity, no rebind of the set-time generation.
        t.current = id("op-2", 2);
        assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::KnownCurrent);
        // But once cleared, the old generation is stale.
        t.cleared();
        assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::Stale);
    }

    #[test]
    fn pause_and_resume_keep_applying_progress_so_complete_is_not_revived() {
        let (mut t, _g) = after_set();
        t.current = id("op-2", 2); // pause
        t.current = id("op-3", 3); // resume
        // The provider reports completion of the same goal: new updatedAt, same lineage.
        let done = goal("ship it", 100, 300, "complete");
        let fp = fingerprint(&done).unwrap();
        let l = lineage(&done);
        assert_eq!(t.classify(&fp, l.as_deref()), Route::Stale, "lineage matches, identity moved on");
        assert!(!t.superseded(&fp, l.as_deref()), "progress of the current lineage still applies");
        // Once the goal is cleared, the same update is dropped.
        t.cleared();
        assert!(t.superseded(&fp, l.as_deref()));
        // A stale generation of another lineage is dropped even while a goal is present.
        let mut t2 = GoalTracker { current: id("op-3", 3), goal_present: true, ..GoalTracker::default() };
        t2.remember("fp-old", Binding { identity: id("op-0", 1), ambiguous: false });
        assert!(t2.superseded("fp-old", Some("lineage-old")));
    }

    #[test]
    fn route_pending_local_while_a_set_is_in_flight() {
        let mut t = GoalTracker { current: id("op-1", 1), ..GoalTracker::default() };
        t.prepare_claim(&id("op-1", 1));
        let g = goal("new", 5, 5, "active");
        assert_eq!(t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()), Route::PendingLocal);
        t.arm_claim(&id("op-1", 1), true);
        assert_eq!(
            t.classify(&fingerprint(&g).unwrap(), lineage(&g).as_deref()),
            Route::Adopt,
            "armed: no longer pending"
        );
    }

    #[test]
    fn route_bind_current_for_a_new_snapshot_of_the_current_lineage() {
        let (t, _g) = after_set();
        let later = goal("ship it", 100, 150, "active");
        assert_eq!(t.classify(&fingerprint(&later).unwrap(), lineage(&later).as_deref()), Route::BindCurrent);
        // Same lineage, but the current identity is not the one the generation was bound to.
        let mut t2 = GoalTracker { current: id("op-9", 9), ..GoalTracker::default() };
        t2.current_lineage = lineage(&later);
        t2.current_generation_identity = id("op-1", 1);
        assert_eq!(t2.classify(&fingerprint(&later).unwrap(), lineage(&later).as_deref()), Route::Stale);
        // Or no valid current identity at all.
        let t3 = GoalTracker { current_lineage: lineage(&later), ..GoalTracker::default() };
        assert_eq!(t3.classify(&fingerprint(&later).unwrap(), lineage(&later).as_deref()), Route::Stale);
    }

    #[test]
    fn route_adopt_for_a_generation_nobody_owns() {
        let (t, _g) = after_set();
        let created = goal("the model's own goal", 200, 200, "active");
        assert_eq!(t.classify(&fingerprint(&created).unwrap(), lineage(&created).as_deref()), Route::Adopt);
    }

    #[test]
    fn route_stale_for_a_binding_of_another_identity_and_for_ambiguity() {
        let mut t = GoalTracker { current: id("op-2", 2), ..GoalTracker::default() };
        t.remember("fp", Binding { identity: id("op-1", 1), ambiguous: false });
        assert_eq!(t.classify("fp", None), Route::Stale);
        t.remember("amb", Binding { identity: id("op-2", 2), ambiguous: true });
        assert_eq!(t.classify("amb", None), Route::Stale, "ambiguous generations are never current");
    }

    #[test]
    fn the_first_bind_wins_and_a_conflicting_rebind_is_ambiguous_for_good() {
        let mut t = GoalTracker::default();
        assert!(!t.bind("fp", None, &id("a", 1)).ambiguous);
        assert!(!t.bind("fp", None, &id("a", 1)).ambiguous, "the same identity again is fine");
        assert!(t.bind("fp", None, &id("b", 2)).ambiguous);
        assert!(t.bind("fp", None, &id("a", 1)).ambiguous, "and stays so");
        assert_eq!(t.binding("fp").unwrap().identity, id("a", 1), "the first identity is kept");
    }

    #[test]
    fn at_most_one_adoption_per_fingerprint_is_in_flight() {
        let mut t = GoalTracker::default();
        assert!(t.begin_adoption("fp"));
        assert!(!t.begin_adoption("fp"), "deduplicated");
        assert!(t.begin_adoption("other"), "other fingerprints are independent");
        t.finish_adoption("fp");
        assert!(t.begin_adoption("fp"));
        t.degraded = true;
        assert!(!t.begin_adoption("new"), "degraded trackers adopt nothing");
    }

    #[test]
    fn an_adoption_that_lost_the_race_is_dropped() {
        let mut t = GoalTracker { current: id("user-op", 5), ..GoalTracker::default() };
        assert_eq!(t.install_adopted("fp", &id("adopt-op", 4)), Install::Superseded);
        assert_eq!(t.install_adopted("fp", &id("adopt-op", 5)), Install::Superseded, "equal revision loses too");
        assert_eq!(t.current, id("user-op", 5), "the current identity is untouched");
        assert_eq!(t.install_adopted("fp", &id("adopt-op", 6)), Install::Installed { arm: true });
        assert_eq!(t.current, id("adopt-op", 6));
        // The same identity again arms only if the generation is not already the current one.
        t.current_fingerprint = Some("fp".into());
        assert_eq!(t.install_adopted("fp", &id("adopt-op", 6)), Install::Installed { arm: false });
    }

    #[test]
    fn adoption_fails_closed() {
        let mut t = GoalTracker::default();
        assert_eq!(t.install_adopted("fp", &GoalIdentity::default()), Install::Refused, "invalid identity");
        t.degraded = true;
        assert_eq!(t.install_adopted("fp", &id("op", 1)), Install::Refused, "degraded");
    }

    #[test]
    fn the_claim_is_single_use_and_needs_the_current_identity() {
        let mut t = GoalTracker { current: id("op-1", 1), ..GoalTracker::default() };
        t.prepare_claim(&id("op-1", 1));
        assert_eq!(t.take_claim(), None, "not ready while the set is in flight");
        t.arm_claim(&id("op-1", 1), true);
        assert_eq!(t.take_claim(), Some(id("op-1", 1)));
        assert_eq!(t.take_claim(), None, "single use");
        t.prepare_claim(&id("op-1", 1));
        t.arm_claim(&id("op-1", 1), false);
        assert_eq!(t.take_claim(), None, "an inactive goal arms nothing");
        t.prepare_claim(&id("op-1", 1));
        t.arm_claim(&id("op-1", 1), true);
        t.current = id("op-2", 2);
        assert_eq!(t.take_claim(), None, "a claim of a superseded identity is worthless");
    }

    #[test]
    fn turn_evidence_must_be_bound_unambiguous_and_agree() {
        let (mut t, g) = after_set();
        let fp = fingerprint(&g).unwrap();
        t.note_evidence("turn-1", &fp);
        assert_eq!(t.evidence_identity("turn-1"), Some(id("op-1", 1)));
        t.note_evidence("turn-2", "unbound");
        assert_eq!(t.evidence_identity("turn-2"), None, "unbound evidence proves nothing");
        t.remember("other", Binding { identity: id("op-9", 9), ambiguous: false });
        t.note_evidence("turn-3", &fp);
        t.note_evidence("turn-3", "other");
        assert_eq!(t.evidence_identity("turn-3"), None, "two identities: ambiguous");
        assert_eq!(t.evidence_identity("never"), None);
    }
}
