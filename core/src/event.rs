//! Activity events: the envelope of the contract and one typed payload per event type.
//!
//! An event is serialised exactly once, by the store's writer, when it gets its room `seq`; every
//! subscriber then shares those bytes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{Goal, InputItem, Scope, Session};
use crate::shared_list::SharedList;
use crate::usage::Cost;

/// A durable (or, for side conversations, ephemeral) event as clients receive it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Per room (per side session for side events), from 1, gap-free.
    pub seq: u64,
    pub room_id: String,
    pub event_id: String,
    pub session_id: String,
    pub scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub occurred_at_ms: i64,
    /// Who caused the event, when a request did (agent output carries none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = Option<Actor>))]
    pub actor: Option<std::sync::Arc<Actor>>,
    #[serde(flatten)]
    pub body: EventBody,
}

/// The token behind a request: its id and name (never its secret).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    pub token_id: String,
    pub name: String,
}

/// An event before it has a `seq`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEvent {
    pub room_id: String,
    pub event_id: String,
    pub session_id: String,
    pub scope: Scope,
    pub turn_id: Option<String>,
    pub occurred_at_ms: i64,
    pub actor: Option<std::sync::Arc<Actor>>,
    pub body: EventBody,
}

impl NewEvent {
    /// The event this becomes with `seq`, borrowed, for serialising: what the store's writer
    /// makes every frame from, without copying the event first.
    pub fn sequenced(&self, seq: u64) -> Sequenced<'_> {
        Sequenced { seq, event: self }
    }

    pub fn with_seq(self, seq: u64) -> Event {
        Event {
            seq,
            room_id: self.room_id,
            event_id: self.event_id,
            session_id: self.session_id,
            scope: self.scope,
            turn_id: self.turn_id,
            occurred_at_ms: self.occurred_at_ms,
            actor: self.actor,
            body: self.body,
        }
    }
}

/// A [`NewEvent`] with its `seq`: serialises as the [`Event`] it becomes (a test holds the two
/// together), its members one by one rather than through serde's `flatten`, which builds a map
/// for the body.
pub struct Sequenced<'a> {
    pub seq: u64,
    pub event: &'a NewEvent,
}

impl Serialize for Sequenced<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let e = self.event;
        let mut out = serializer.serialize_struct("Event", 10)?;
        out.serialize_field("seq", &self.seq)?;
        out.serialize_field("roomId", &e.room_id)?;
        out.serialize_field("eventId", &e.event_id)?;
        out.serialize_field("sessionId", &e.session_id)?;
        out.serialize_field("scope", &e.scope)?;
        match &e.turn_id {
            Some(t) => out.serialize_field("turnId", t)?,
            None => out.skip_field("turnId")?,
        }
        out.serialize_field("occurredAtMs", &e.occurred_at_ms)?;
        match &e.actor {
            Some(a) => out.serialize_field("actor", a)?,
            None => out.skip_field("actor")?,
        }
        out.serialize_field("type", e.body.type_name())?;
        e.body.serialize_payload(&mut out)?;
        out.end()
    }
}

/// The one table of event types: each row is a variant of [`EventBody`], its payload's type, its
/// wire name (`type`) and, for the events webhooks may ask for, its webhook name (`webhook "…"`,
/// the log's own name but for `session.completed`, which webhooks call `session.closed`). The
/// enum, [`EventBody::type_name`], [`EventBody::TYPE_NAMES`], [`EventBody::webhook_name`],
/// [`EventBody::WEBHOOK_NAMES`] and the envelope's serialisation are made from it, and the OpenAPI
/// document finds the payloads' schemas through the enum, so a new event type is written here and
/// nowhere else.
// `$name:tt`, not `:literal`: a `literal` fragment reaches derive macros wrapped in an invisible
// group, which utoipa's derive does not read as the rename (serde's does).
macro_rules! event_types {
    ($( $(#[$doc:meta])* $variant:ident($payload:ty) = $name:tt $(webhook $hook:tt)?, )+) => {
        /// The type and payload of an event (`type` and `payload` on the wire).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
        #[serde(tag = "type", content = "payload")]
        pub enum EventBody {
            $( $(#[$doc])* #[serde(rename = $name)] $variant($payload), )+
        }

        impl EventBody {
            /// Every event type's wire name, in the table's order.
            pub const TYPE_NAMES: &'static [&'static str] = &[$($name),+];

            /// The wire name of the event type.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $name, )+
                }
            }

            /// The event types a webhook may ask for, as webhooks name them, in the table's order.
            pub const WEBHOOK_NAMES: &'static [&'static str] = &[$($($hook,)?)+];

            /// The name webhooks know this event by, if webhooks can get it.
            pub fn webhook_name(&self) -> Option<&'static str> {
                match self {
                    $( Self::$variant(_) => None $(.or(Some($hook)))?, )+
                }
            }

            /// Writes the payload as the `payload` member of an event being serialised.
            fn serialize_payload<S: serde::ser::SerializeStruct>(&self, out: &mut S) -> Result<(), S::Error> {
                match self {
                    $( Self::$variant(p) => out.serialize_field("payload", p), )+
                }
            }
        }
    };
}

event_types! {
    SessionStarted(SessionStartedPayload) = "session.started",
    SessionUpdated(SessionUpdatedPayload) = "session.updated",
    SessionCompleted(SessionCompletedPayload) = "session.completed" webhook "session.closed",
    SessionFailed(SessionFailedPayload) = "session.failed" webhook "session.failed",
    TurnStarted(TurnStartedPayload) = "turn.started",
    TurnCompleted(TurnCompletedPayload) = "turn.completed" webhook "turn.completed",
    TurnFailed(TurnFailedPayload) = "turn.failed" webhook "turn.failed",
    TurnCanceled(TurnCanceledPayload) = "turn.canceled" webhook "turn.canceled",
    /// Input added to a running turn (`steer: true`).
    TurnSteered(TurnSteeredPayload) = "turn.steered",
    MessageDelta(TextDeltaPayload) = "message.delta",
    MessageCompleted(TextCompletedPayload) = "message.completed",
    ReasoningDelta(TextDeltaPayload) = "reasoning.delta",
    ReasoningCompleted(TextCompletedPayload) = "reasoning.completed",
    CallStarted(CallStartedPayload) = "call.started",
    CallUpdated(CallUpdatedPayload) = "call.updated",
    CallCompleted(CallCompletedPayload) = "call.completed",
    InteractionRequested(InteractionRequestedPayload) = "interaction.requested" webhook "interaction.requested",
    InteractionResolved(InteractionResolvedPayload) = "interaction.resolved" webhook "interaction.resolved",
    UsageUpdated(UsagePayload) = "usage.updated",
    CommandsUpdated(CommandsUpdatedPayload) = "commands.updated",
    PlanUpdated(PlanUpdatedPayload) = "plan.updated",
    GoalUpdated(GoalUpdatedPayload) = "goal.updated",
    GoalCleared(GoalClearedPayload) = "goal.cleared",
    GoalReconcileRequired(GoalReconcileRequiredPayload) = "goal.reconcile_required",
    Notice(NoticePayload) = "notice",
    /// What a turn changed in the session's workspace, between the checkpoints taken before it
    /// started and after it ended (follows the turn's end).
    TurnChanges(TurnChangesPayload) = "turn.changes",
    /// The workspace was put back to a checkpoint.
    WorkspaceRestored(WorkspaceRestoredPayload) = "workspace.restored",
    /// A worktree session's changes were committed on its branch.
    WorkspaceCommitted(WorkspaceCommittedPayload) = "workspace.committed",
    /// The session's queue of follow-ups changed.
    QueueUpdated(QueueUpdatedPayload) = "queue.updated",
    /// An interaction has waited unanswered for `--attention-after-secs` (once per interaction;
    /// none when it is answered sooner).
    SessionNeedsAttention(SessionNeedsAttentionPayload) = "session.needs_attention" webhook "session.needs_attention",
    /// The session's budget, or its room's, was reached: no new turn starts until it is raised.
    BudgetExhausted(BudgetExhaustedPayload) = "budget.exhausted" webhook "budget.exhausted",
    /// The session's isolated agent tried to reach a host it may not (once a minute per target).
    NetworkBlocked(NetworkBlockedPayload) = "network.blocked",
}

/// `network.blocked`: a connection the egress proxy refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NetworkBlockedPayload {
    pub host: String,
    pub port: u16,
}

impl EventBody {
    /// About how many bytes the event's JSON takes, to size the buffer it is serialised into:
    /// grown from 512 bytes, a session event or a command list was copied twice, and in a profile
    /// of session starts those copies were a third of the store writer's JSON time.
    pub fn json_size_hint(&self) -> usize {
        // The envelope: ids, type, scope, seq, times (~200 bytes with the usual ids).
        const ENVELOPE: usize = 512;
        match self {
            Self::SessionStarted(_) | Self::SessionUpdated(_) | Self::SessionCompleted(_) | Self::SessionFailed(_) => {
                2048
            }
            Self::CommandsUpdated(p) => p.commands.json_len().unwrap_or(1536) + ENVELOPE,
            _ => 512,
        }
    }

    /// The turn a turn-lifecycle event is about.
    pub fn turn_id(&self) -> Option<&str> {
        match self {
            Self::TurnStarted(p) => Some(&p.turn_id),
            Self::TurnCompleted(p) => Some(&p.turn_id),
            Self::TurnFailed(p) => Some(&p.turn_id),
            Self::TurnCanceled(p) => Some(&p.turn_id),
            _ => None,
        }
    }

    pub fn is_turn_terminal(&self) -> bool {
        matches!(self, Self::TurnCompleted(_) | Self::TurnFailed(_) | Self::TurnCanceled(_))
    }
}

/// A code and a human readable message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
}

impl ErrorInfo {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self { code: code.to_owned(), message: message.into() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionStartedPayload {
    /// The session as it is once started.
    // Shared: a start answers with the same session (and its JSON), unless something changed
    // it meanwhile.
    #[cfg_attr(feature = "schema", schema(value_type = Session))]
    pub session: crate::shared_session::SharedSession,
    /// Set on side conversations: they are never persisted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ephemeral: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionUpdatedPayload {
    pub session: Session,
    /// Why it changed: `resumed`, `released`, `disconnected`, `provider_exited`, `server_restart`, …
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionCompletedPayload {
    pub session: Session,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionFailedPayload {
    pub session: Session,
    pub error: ErrorInfo,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TurnOrigin {
    User,
    GoalContinuation,
    Provider,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnStartedPayload {
    pub turn_id: String,
    pub origin: TurnOrigin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_operation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_repair_epoch: Option<i64>,
    /// The submitted input (user turns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<InputItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_submit_id: Option<String>,
}

impl TurnStartedPayload {
    pub fn user(turn_id: &str, input: Vec<InputItem>, client_submit_id: Option<String>) -> Self {
        Self {
            turn_id: turn_id.to_owned(),
            origin: TurnOrigin::User,
            goal_operation_id: None,
            goal_revision: None,
            goal_repair_epoch: None,
            input,
            client_submit_id,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnCompletedPayload {
    pub turn_id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnFailedPayload {
    pub turn_id: String,
    pub error: ErrorInfo,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnCanceledPayload {
    pub turn_id: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnSteeredPayload {
    pub turn_id: String,
    pub input: Vec<InputItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_submit_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TextDeltaPayload {
    pub item_id: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TextCompletedPayload {
    pub item_id: String,
    pub text: String,
}

/// What kind of call an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum CallKind {
    Tool,
    Command,
    FileChange,
    Mcp,
    WebSearch,
    Other,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    pub path: String,
    /// `add`, `delete` or `update`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CallStartedPayload {
    pub call_id: String,
    pub kind: CallKind,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The tool's arguments, as the agent gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(schema_with = crate::schema::free_object))]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CallUpdatedPayload {
    pub call_id: String,
    /// Output produced since the previous update (e.g. command output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_delta: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Completed,
    Failed,
    Declined,
    Interrupted,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CallCompletedPayload {
    pub call_id: String,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsagePayload {
    pub input_tokens: i64,
    pub output_tokens: i64,
    #[serde(default)]
    pub cached_input_tokens: i64,
    #[serde(default)]
    pub reasoning_output_tokens: i64,
    pub total_tokens: i64,
    /// Tokens of the latest turn alone, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn_total_tokens: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<i64>,
    /// What the session has cost so far, when the agent says (ACP's `usage_update.cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_hint: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CommandsUpdatedPayload {
    // Shared: a provider announces the same list to every session it starts (the scripted
    // agent's fifteen commands were built and freed per start, a thirtieth of a start's CPU),
    // and its JSON is made once (see `SharedList`).
    #[cfg_attr(feature = "schema", schema(value_type = Vec<CommandInfo>))]
    pub commands: SharedList<CommandInfo>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    pub step: String,
    /// `pending`, `inProgress` or `completed`.
    pub status: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlanUpdatedPayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    pub steps: Vec<PlanStep>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoalUpdatedPayload {
    pub goal: Goal,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoalClearedPayload {
    pub operation_id: String,
    pub revision: i64,
    pub repair_epoch: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoalReconcileRequiredPayload {
    /// Why the goal needs reconciling, e.g. `unproven_continuation`.
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

/// An interaction waiting for an answer longer than the server's attention delay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionNeedsAttentionPayload {
    pub request_id: String,
    pub kind: InteractionKind,
    pub title: String,
    /// When the interaction was asked (unix ms).
    pub requested_at_ms: i64,
}

/// A budget reached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetExhaustedPayload {
    /// `session` or `room`.
    pub scope: String,
    pub budget: crate::usage::Budget,
    pub state: crate::usage::BudgetState,
}

/// Something the provider said that is not part of a turn's output (warnings, deprecations).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NoticePayload {
    pub level: NoticeLevel,
    pub message: String,
}

mod clamp;
mod interaction;
mod queue;
mod workspace;
pub use clamp::{MIN_EVENT_BYTES, TRUNCATED_MARK, body_size, clamp_body, clamp_body_sized, json_size};
pub use interaction::{
    AgentOption, AgentOptionKind, Decision, Interaction, InteractionKind, InteractionRequestedPayload,
    InteractionResolvedPayload, Question, QuestionOption, ResolvedBy,
};
pub use queue::{QueueUpdatedPayload, QueuedTurnSummary, input_bytes};
pub use workspace::{
    ChangeStatus, ChangedFile, TurnChangesPayload, WorkspaceCommittedPayload, WorkspaceRestoredPayload,
};

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
