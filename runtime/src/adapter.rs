//! What a provider implements: the [`Adapter`] trait and its optional capabilities.
//!
//! The controller never asks which provider it talks to; it asks what the adapter can do through
//! the capability accessors (`interactive()`, `steer()`, `release()`, …), each returning `None` when
//! the adapter cannot. Adapters report everything that happens through the [`EventSink`] they get at
//! start/resume; they never touch session state themselves.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::event::{Decision, EventBody};
use crate::model::{AuthState, InputItem, Session, SessionKey, SideCapabilities};
use crate::store::{Store, StoreError};

/// A fact an adapter reports about its session.
#[derive(Clone, Debug, PartialEq)]
#[expect(clippy::large_enum_variant, reason = "events are the common case; boxing them would allocate per fact")]
pub enum Fact {
    /// An activity event, with the turn it belongs to.
    Event { turn_id: Option<String>, body: EventBody },
    /// The provider side of the session is gone (process exit, EOF, crash).
    Lost { reason: String },
    /// Session metadata learnt from the provider.
    Update(SessionPatch),
    /// What the provider says about the session's goal.
    Goal(crate::goals::GoalFact),
}

/// Changes to a session's provider-owned metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionPatch {
    pub provider_session_id: Option<String>,
    pub auth_state: Option<AuthState>,
    pub auth_message: Option<String>,
    pub title: Option<String>,
}

/// Where an [`EventSink`] delivers (the controller; a collector in adapter tests).
#[async_trait]
pub trait FactReceiver: Send + Sync {
    /// `generation` identifies the start/resume that produced the sink: facts of a replaced or
    /// closed live session are dropped.
    async fn receive(&self, key: &SessionKey, generation: u64, facts: Vec<Fact>);
}

/// The channel through which an adapter reports facts about one live session.
#[derive(Clone)]
pub struct EventSink {
    target: Arc<dyn FactReceiver>,
    key: SessionKey,
    generation: u64,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink").field("key", &self.key).field("generation", &self.generation).finish()
    }
}

impl EventSink {
    pub fn new(target: Arc<dyn FactReceiver>, key: SessionKey, generation: u64) -> Self {
        Self { target, key, generation }
    }

    pub fn key(&self) -> &SessionKey {
        &self.key
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub async fn emit(&self, turn_id: Option<&str>, body: EventBody) {
        self.send(vec![Fact::Event { turn_id: turn_id.map(str::to_owned), body }]).await;
    }

    pub async fn emit_many(&self, events: Vec<(Option<String>, EventBody)>) {
        let facts = events.into_iter().map(|(turn_id, body)| Fact::Event { turn_id, body }).collect();
        self.send(facts).await;
    }

    pub async fn lost(&self, reason: impl Into<String>) {
        self.send(vec![Fact::Lost { reason: reason.into() }]).await;
    }

    pub async fn update(&self, patch: SessionPatch) {
        self.send(vec![Fact::Update(patch)]).await;
    }

    pub async fn send(&self, facts: Vec<Fact>) {
        if !facts.is_empty() {
            self.target.receive(&self.key, self.generation, facts).await;
        }
    }
}

/// Durable key/value state a provider keeps per session (e.g. the scripted provider's transcript).
#[derive(Clone)]
pub struct ProviderState {
    store: Store,
    key: SessionKey,
}

impl ProviderState {
    pub fn new(store: Store, key: SessionKey) -> Self {
        Self { store, key }
    }

    pub async fn get(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.store.provider_state(&self.key.room_id, &self.key.session_id, name).await
    }

    /// Durable once this returns.
    pub async fn set(&self, name: &str, value: String) -> Result<(), StoreError> {
        self.store.set_provider_state(&self.key.room_id, &self.key.session_id, name, value).await
    }
}

/// What an adapter gets for a live session.
#[derive(Clone)]
pub struct SessionHandle {
    pub sink: EventSink,
    pub state: ProviderState,
    /// The durable goal services (ledger, adoption) of this session.
    pub goals: Arc<dyn crate::goals::GoalHost>,
    /// The session's current goal operation identity (default when it has none).
    pub goal: crate::goals::GoalIdentity,
}

/// What `start`/`resume` learnt.
#[derive(Clone, Debug, Default)]
pub struct StartOutcome {
    pub patch: SessionPatch,
    /// Events published right after `session.started`/`session.updated` (e.g. `commands.updated`).
    pub events: Vec<EventBody>,
}

/// A turn to run.
#[derive(Clone, Debug)]
pub struct TurnRequest {
    pub turn_id: String,
    pub input: Vec<InputItem>,
    pub client_submit_id: Option<String>,
}

/// Errors of provider operations.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum AdapterError {
    /// The provider failed; `code` is a stable snake_case reason.
    #[error("{message}")]
    Failed { code: String, message: String },
    #[error("provider unavailable: {0}")]
    Unavailable(String),
    #[error("the session has no live provider process")]
    NotLive,
    /// The live session has pending work (a turn or an interaction).
    #[error("{0}")]
    Busy(String),
    #[error("not supported by this provider: {0}")]
    Unsupported(String),
    #[error("unknown interaction {0}")]
    UnknownInteraction(String),
    #[error("interaction {0} was already answered")]
    AlreadyAnswered(String),
    #[error("{0}")]
    Invalid(String),
    #[error("timed out: {0}")]
    Timeout(String),
    /// Too many live provider processes.
    #[error("{0}")]
    Overloaded(String),
}

impl AdapterError {
    pub fn failed(code: &str, message: impl Into<String>) -> Self {
        Self::Failed { code: code.to_owned(), message: message.into() }
    }

    pub fn code(&self) -> &str {
        match self {
            Self::Failed { code, .. } => code,
            Self::Unavailable(_) => "provider_unavailable",
            Self::NotLive => "not_live",
            Self::Busy(_) => "session_busy",
            Self::Unsupported(_) => "unsupported",
            Self::UnknownInteraction(_) => "interaction_not_found",
            Self::AlreadyAnswered(_) => "interaction_resolved",
            Self::Invalid(_) => "invalid_input",
            Self::Timeout(_) => "provider_timeout",
            Self::Overloaded(_) => "overloaded",
        }
    }
}

/// How a provider presents itself in `GET /v1/providers`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderDescriptor {
    pub display_name: String,
    pub available: bool,
    pub unavailable_reason: Option<String>,
}

/// A provider of agent sessions.
#[async_trait]
pub trait Adapter: Send + Sync + 'static {
    /// The provider id used in `POST .../sessions` (`scripted`, `codex`, …).
    fn id(&self) -> &str;

    fn descriptor(&self) -> ProviderDescriptor;

    /// Starts the provider side of a new session.
    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError>;

    /// Reconnects a session whose live side is gone. Never starts a turn.
    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError>;

    /// Stops the provider side for good. Must not fail on an already-gone session.
    async fn close(&self, session: &Session) -> Result<(), AdapterError>;

    /// Starts a turn; returns once the provider accepted it. The turn's output and its terminal
    /// event (`turn.completed|failed|canceled`) arrive through the session's sink.
    async fn start_turn(&self, session: &Session, turn: TurnRequest) -> Result<(), AdapterError>;

    /// Asks the provider to interrupt a turn; the terminal event follows through the sink.
    async fn cancel(&self, session: &Session, turn_id: &str) -> Result<(), AdapterError>;

    /// Whether a live provider session exists for this session.
    fn is_live(&self, session: &Session) -> bool;

    /// Whether `resume` can bring this session back.
    fn can_resume(&self, _session: &Session) -> bool {
        true
    }

    /// Live provider processes (a gauge).
    fn live_processes(&self) -> usize {
        0
    }

    fn interactive(&self) -> Option<&dyn InteractiveAdapter> {
        None
    }
    fn steer(&self) -> Option<&dyn SteerAdapter> {
        None
    }
    fn release(&self) -> Option<&dyn ReleaseAdapter> {
        None
    }
    fn disconnect(&self) -> Option<&dyn DisconnectAdapter> {
        None
    }
    fn quiesce(&self) -> Option<&dyn QuiesceAdapter> {
        None
    }
    fn side(&self) -> Option<&dyn SideAdapter> {
        None
    }
    fn goals(&self) -> Option<&dyn GoalAdapter> {
        None
    }
}

/// Goals the provider pursues across turns.
#[async_trait]
pub trait GoalAdapter: Send + Sync {
    /// Applies a user's goal operation at the provider; returns the provider's goal afterwards
    /// (`None` once cleared).
    async fn apply_goal(
        &self,
        session: &Session,
        command: crate::goals::GoalCommand,
    ) -> Result<Option<crate::goals::ProviderGoal>, AdapterError>;
}

/// What `open_side` gets: the live source, the reserved side session (new ids, scope side) and the
/// handle its events go through (buffered by the controller until the side is committed).
pub struct SideOpen<'a> {
    pub source: &'a Session,
    pub side: &'a Session,
    pub request_id: &'a str,
    pub handle: SessionHandle,
}

/// What a provider opened: the side's identity as the provider sees it, and its capabilities.
#[derive(Clone, Debug)]
pub struct SideOpened {
    pub session: Session,
    pub capabilities: SideCapabilities,
}

/// Ephemeral forks of a live session ("side conversations"). Once opened, a side is driven through
/// the ordinary methods (`start_turn`, `cancel`, `respond`, `close`) with the side's session.
#[async_trait]
pub trait SideAdapter: Send + Sync {
    /// The capabilities of the live runtime behind `source` (all false when it cannot).
    async fn side_capabilities(&self, source: &Session) -> Result<SideCapabilities, AdapterError>;

    /// Forks the source's live context into the side.
    async fn open_side(&self, open: SideOpen<'_>) -> Result<SideOpened, AdapterError>;
}

/// Answers interactive requests (approvals, questions).
#[async_trait]
pub trait InteractiveAdapter: Send + Sync {
    async fn respond(
        &self,
        session: &Session,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
    ) -> Result<(), AdapterError>;
}

/// Adds input to a running turn.
#[async_trait]
pub trait SteerAdapter: Send + Sync {
    async fn steer(&self, session: &Session, turn_id: &str, input: Vec<InputItem>) -> Result<(), AdapterError>;
}

/// Stops the live side of an idle session, keeping it resumable. Returns
/// [`AdapterError::Busy`] while a turn or an interaction is pending.
#[async_trait]
pub trait ReleaseAdapter: Send + Sync {
    async fn release(&self, session: &Session) -> Result<(), AdapterError>;
}

/// Drops the live side now, settling its pending requests, keeping the session resumable. Never
/// sends a destructive close to the provider.
#[async_trait]
pub trait DisconnectAdapter: Send + Sync {
    async fn disconnect(&self, session: &Session) -> Result<(), AdapterError>;
}

/// Brings an active turn to an end before close: cancel, wait up to `grace`, then force.
#[async_trait]
pub trait QuiesceAdapter: Send + Sync {
    async fn quiesce_for_close(&self, session: &Session, grace: Duration) -> Result<(), AdapterError>;
}
