//! The goal model: what a goal operation, a provider's goal generation and the durable goal
//! services are, shared by the controller (which owns operations and the ledger) and the adapters
//! (whose provider-side goal engine lives in `ensemble_adapters::kit::goals`).
//!
//! Every user change of a goal is an *operation* with a durable identity
//! `{operationId, revision, repairEpoch}`. A provider's goal *generation* is identified by a
//! fingerprint (a digest of thread, created-at, updated-at and objective) and a *lineage* (the same
//! without updated-at, stable across pause, resume and progress). The ledger binds fingerprints to
//! operation identities: the first bind wins, a conflicting rebind makes the fingerprint ambiguous
//! for good.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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
}
