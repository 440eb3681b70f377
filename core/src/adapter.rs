//! What a provider implements: the [`Adapter`] trait.
//!
//! The controller never asks which provider it talks to. It asks what the provider can do once,
//! through [`Adapter::capabilities`], and calls the operations; an operation a provider does not
//! offer answers [`AdapterError::Unsupported`] by default (release and disconnect fall back to
//! close). Adapters report everything that happens through the [`EventSink`] they get at
//! start/resume; they never touch session state themselves.
//!
//! This module depends only on the model, event and goal types: a provider can be read and written
//! without knowing the store or the controller.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::event::{Decision, EventBody};
use crate::goal::{GoalCommand, GoalFact, GoalHost, GoalIdentity, ProviderGoal};
use crate::model::{
    AgentInfo, AuthState, ConfigChange, ProviderCapabilities, Session, SessionKey, SessionPatch, SideCapabilities,
};

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
    Goal(GoalFact),
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
    // Shared with the session's other handles: a sink is cloned for every turn and task.
    key: Arc<SessionKey>,
    generation: u64,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink").field("key", &self.key).field("generation", &self.generation).finish()
    }
}

impl EventSink {
    pub fn new(target: Arc<dyn FactReceiver>, key: impl Into<Arc<SessionKey>>, generation: u64) -> Self {
        Self { target, key: key.into(), generation }
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

/// The provider state store could not be read or written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("provider state unavailable: {0}")]
pub struct StateError(pub String);

/// Where [`ProviderState`] keeps its values (the store; memory in adapter tests).
#[async_trait]
pub trait StateBackend: Send + Sync {
    async fn get(&self, key: &SessionKey, name: &str) -> Result<Option<String>, StateError>;
    /// Durable once this returns.
    async fn set(&self, key: &SessionKey, name: &str, value: String) -> Result<(), StateError>;
}

/// Durable key/value state a provider keeps per session (e.g. the scripted provider's transcript).
#[derive(Clone)]
pub struct ProviderState {
    backend: Arc<dyn StateBackend>,
    key: Arc<SessionKey>,
}

impl ProviderState {
    pub fn new(backend: Arc<dyn StateBackend>, key: impl Into<Arc<SessionKey>>) -> Self {
        Self { backend, key: key.into() }
    }

    pub async fn get(&self, name: &str) -> Result<Option<String>, StateError> {
        self.backend.get(&self.key, name).await
    }

    /// Durable once this returns.
    pub async fn set(&self, name: &str, value: String) -> Result<(), StateError> {
        self.backend.set(&self.key, name, value).await
    }
}

/// What an adapter gets for a live session.
#[derive(Clone)]
pub struct SessionHandle {
    pub sink: EventSink,
    pub state: ProviderState,
    /// The durable goal services (ledger, adoption) of this session.
    pub goals: Arc<dyn GoalHost>,
    /// The session's current goal operation identity (default when it has none).
    pub goal: GoalIdentity,
}

/// What a durable fork starts from.
pub struct ForkOpen<'a> {
    /// The session forked (closed or not).
    pub source: &'a Session,
    /// The source's provider state (read it; the fork's own is its handle's).
    pub source_state: ProviderState,
    /// The source's turn the fork's conversation goes through (its last).
    pub through_turn: &'a str,
    /// The source's most recent turn, for providers that can only fork a whole conversation.
    pub last_turn: Option<&'a str>,
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
    pub input: Vec<Prompt>,
    pub client_submit_id: Option<String>,
}

/// Turn input as an adapter gets it: text as sent, images and files already read (once, inside
/// the session's workspace, within the limits) by the controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prompt {
    Text(String),
    Image(PromptImage),
    File(PromptFile),
}

/// An image of a turn's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`, checked against the bytes.
    pub mime_type: String,
    pub data: Arc<[u8]>,
    /// Where it is, when it was given as a file of the workspace (absolute).
    pub path: Option<std::path::PathBuf>,
    /// Where the server keeps it (absolute), for agents that read images from files.
    pub kept: Option<std::path::PathBuf>,
    /// What the user called it.
    pub name: Option<String>,
}

/// A file of a turn's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptFile {
    /// Absolute, inside the session's workspace.
    pub path: std::path::PathBuf,
    /// As the user gave it (relative to the session's cwd, or absolute).
    pub name: String,
    pub size: u64,
    /// `text/plain` when its bytes are UTF-8, else `application/octet-stream`.
    pub mime_type: String,
    /// Its content, when it is no larger than the server embeds (`--max-embedded-file-bytes`).
    pub content: Option<Arc<[u8]>>,
}

impl Prompt {
    /// The text of a text item.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(t),
            Self::Image(_) | Self::File(_) => None,
        }
    }
}

/// What kinds of input, besides text, a provider takes in a session's turns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputKinds {
    /// Why images are not taken (`None`: they are).
    pub image: Option<String>,
    /// Why files are not taken (`None`: they are).
    pub file: Option<String>,
}

impl InputKinds {
    /// Takes images and files.
    pub fn all() -> Self {
        Self { image: None, file: None }
    }

    /// Takes text only, for `reason`.
    pub fn text_only(reason: &str) -> Self {
        Self { image: Some(reason.to_owned()), file: Some(reason.to_owned()) }
    }
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
    /// The provider's durable state (the store) could not be read or written: retry later.
    #[error(transparent)]
    State(#[from] StateError),
}

impl AdapterError {
    pub fn failed(code: &str, message: impl Into<String>) -> Self {
        Self::Failed { code: code.to_owned(), message: message.into() }
    }

    pub fn code(&self) -> &str {
        match self {
            Self::Failed { code, .. } => code,
            Self::Unavailable(_) => "provider_unavailable",
            Self::State(_) => "store_unavailable",
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
    /// What the agent advertised when it last started (ACP agents).
    pub agent: Option<AgentInfo>,
}

/// What an agent said, asked without a session, about calling its model ([`Adapter::check_auth`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthCheck {
    pub state: AuthState,
    /// How to log in, when a login is needed.
    pub message: Option<String>,
    /// When it was asked (milliseconds since the epoch): the newer of this and a session's start wins.
    pub at_ms: i64,
}

/// What a provider can do. The controller consults it before the optional operations, and
/// `GET /v1/providers` shows it (see [`Capabilities::wire`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Answers approvals and questions ([`Adapter::respond`]).
    pub interactive: bool,
    /// Adds input to a running turn ([`Adapter::steer`]).
    pub steer: bool,
    /// Brings a running turn down itself before close ([`Adapter::quiesce_for_close`]); without
    /// it the controller cancels and waits for the turn's end.
    pub quiesce: bool,
    /// Opens side conversations ([`Adapter::open_side`]).
    pub sides: bool,
    /// Pursues goals ([`Adapter::apply_goal`]).
    pub goals: bool,
    /// Changes modes and config options ([`Adapter::set_config`]).
    pub config: bool,
    /// ... also while a turn runs (else the controller answers 409 then).
    pub config_mid_turn: bool,
}

impl Capabilities {
    /// The contract's view of them.
    pub fn wire(self) -> ProviderCapabilities {
        ProviderCapabilities {
            resume: true,
            side_conversations: self.sides,
            goals: self.goals,
            interactive: self.interactive,
            steer: self.steer,
            config: self.config,
        }
    }
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

fn unsupported<T>(what: &str) -> Result<T, AdapterError> {
    Err(AdapterError::Unsupported(what.to_owned()))
}

/// A provider of agent sessions.
///
/// The required methods are what every provider does; the provided ones are the optional
/// operations, each announced by a flag of [`Adapter::capabilities`].
#[async_trait]
pub trait Adapter: Send + Sync + 'static {
    /// The provider id used in `POST .../sessions` (`scripted`, `codex`, …).
    fn id(&self) -> &str;

    fn descriptor(&self) -> ProviderDescriptor;

    /// What this provider can do beyond the required operations.
    fn capabilities(&self) -> Capabilities;

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

    /// The isolation the provider's sessions run in, and whether this machine can give it
    /// (`None`: a provider that confines nothing, as a test's).
    fn isolation(&self) -> Option<crate::isolation::ProviderIsolation> {
        None
    }

    /// Whether `resume` can bring this session back.
    fn can_resume(&self, _session: &Session) -> bool {
        true
    }

    /// Live provider processes (a gauge).
    fn live_processes(&self) -> usize {
        0
    }

    /// Checks an answer before it is taken (the request stays pending when it does not fit):
    /// `Err(AdapterError::Invalid)` saying why.
    fn check_answer(
        &self,
        _session: &Session,
        _request_id: &str,
        _decision: Decision,
        _answers: Option<&Value>,
    ) -> Result<(), AdapterError> {
        Ok(())
    }

    /// Answers an interactive request (approval, question). `option`: one of the request's
    /// `agentOptions`, already checked to stand for `decision`. Needs `capabilities().interactive`.
    async fn respond(
        &self,
        _session: &Session,
        _request_id: &str,
        _decision: Decision,
        _answers: Option<Value>,
        _option: Option<&str>,
    ) -> Result<(), AdapterError> {
        unsupported("interactive requests")
    }

    /// Adds input to a running turn. Needs `capabilities().steer`.
    async fn steer(&self, _session: &Session, _turn_id: &str, _input: Vec<Prompt>) -> Result<(), AdapterError> {
        unsupported("steering")
    }

    /// Stops the live side of an idle session, keeping it resumable. Returns
    /// [`AdapterError::Busy`] while a turn or an interaction is pending. By default: close.
    async fn release(&self, session: &Session) -> Result<(), AdapterError> {
        self.close(session).await
    }

    /// Drops the live side now, settling its pending requests, keeping the session resumable.
    /// Never sends a destructive close to the provider. By default: close.
    async fn disconnect(&self, session: &Session) -> Result<(), AdapterError> {
        self.close(session).await
    }

    /// Brings an active turn to an end before close: cancel, wait up to `grace`, then force.
    /// Needs `capabilities().quiesce`.
    async fn quiesce_for_close(&self, _session: &Session, _grace: Duration) -> Result<(), AdapterError> {
        unsupported("quiescing")
    }

    /// The side capabilities of the live runtime behind `source` (all false when it cannot).
    async fn side_capabilities(&self, _source: &Session) -> Result<SideCapabilities, AdapterError> {
        Ok(SideCapabilities::default())
    }

    /// Forks the source's live context into a side conversation. Once opened, a side is driven
    /// through the ordinary methods (`start_turn`, `cancel`, `respond`, `close`) with the side's
    /// session. Needs `capabilities().sides`.
    async fn open_side(&self, _open: SideOpen<'_>) -> Result<SideOpened, AdapterError> {
        unsupported("side conversations")
    }

    /// Changes the session's mode and config options for its next turn. The change is already
    /// checked against what the session offers; returns the session's modes and options afterwards
    /// (fields left `None` are unchanged). Needs `capabilities().config`.
    async fn set_config(&self, _session: &Session, _change: ConfigChange) -> Result<SessionPatch, AdapterError> {
        unsupported("changing modes and config options")
    }

    /// Starts a new session (`session`, working in its own workspace) whose conversation is the
    /// source's through one of its turns: a durable fork, unlike a side conversation. Providers
    /// that cannot say why ([`AdapterError::Unsupported`]).
    async fn fork(
        &self,
        _open: ForkOpen<'_>,
        _session: &Session,
        _handle: SessionHandle,
    ) -> Result<StartOutcome, AdapterError> {
        unsupported("forking a conversation through a turn")
    }

    /// The agent's own sessions of `cwd` (ACP `session/list`), a page from `cursor`; those a
    /// session can continue with `resume`. Providers that cannot list say so ([`AdapterError::Unsupported`]).
    async fn list_sessions(
        &self,
        _cwd: &str,
        _cursor: Option<String>,
    ) -> Result<crate::model::ProviderSessionList, AdapterError> {
        unsupported("listing the agent's own sessions")
    }

    /// Which input besides text the session's turns take (asked after the session is live: an
    /// agent may say so only in its handshake). A turn with an item it does not take is refused
    /// with 422 `input_unsupported`, naming the item and the reason.
    fn input_kinds(&self, _session: &Session) -> InputKinds {
        InputKinds::text_only("this provider takes text only")
    }

    /// Whether the agent can call its model, asked without a session, so `GET /v1/providers` can
    /// say a login is needed before anyone starts one. Waits at most `wait` (an answer that comes
    /// later is kept for the next call); `None` when the provider cannot tell or has no answer yet.
    async fn check_auth(&self, _wait: Duration) -> Option<AuthCheck> {
        None
    }

    /// Applies a user's goal operation at the provider; returns the provider's goal afterwards
    /// (`None` once cleared). Needs `capabilities().goals`.
    async fn apply_goal(
        &self,
        _session: &Session,
        _command: GoalCommand,
    ) -> Result<Option<ProviderGoal>, AdapterError> {
        unsupported("goals")
    }
}

/// Provider state in memory, for adapters driven without a controller (their tests).
#[derive(Default)]
pub struct MemoryState(std::sync::Mutex<std::collections::HashMap<(SessionKey, String), String>>);

#[async_trait]
impl StateBackend for MemoryState {
    async fn get(&self, key: &SessionKey, name: &str) -> Result<Option<String>, StateError> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&(key.clone(), name.to_owned())).cloned())
    }

    async fn set(&self, key: &SessionKey, name: &str, value: String) -> Result<(), StateError> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert((key.clone(), name.to_owned()), value);
        Ok(())
    }
}
