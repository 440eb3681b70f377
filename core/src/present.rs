//! A session's present: what a client needs to draw it without reading its history (the status
//! and settings are the session's own; the rest the console would otherwise fold from the log).

use serde::{Deserialize, Serialize};

use crate::event::{CommandInfo, Interaction, PlanStep};
use crate::model::{Goal, QueuedTurn, Session};
use crate::shared_list::SharedList;
use crate::usage::SessionUsage;

/// `GET /v1/rooms/{roomId}/sessions/{sessionId}/present`: the session as it is now. With the room
/// WebSocket opened at `after=headSeq` and the session's tail read with `…/events?before=headSeq+1`,
/// a client has everything, once: what this says includes every event through `headSeq`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionPresent {
    pub session: Session,
    /// Interactions waiting for an answer, oldest first (as `GET …/interactions`).
    pub pending: Vec<Interaction>,
    /// The latest plan the agent reported (since the server started), with its turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<CurrentPlan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Goal>,
    /// What the session spent, and its budget (as `GET …/usage`).
    pub usage: SessionUsage,
    /// What the running turn is streaming: each message or reasoning not completed yet, with its
    /// text so far (at most 256 KiB of it), oldest first.
    pub open: Vec<OpenText>,
    /// Follow-ups waiting for the running turn, first to start first (as `GET …/queue`).
    pub queue: Vec<QueuedTurn>,
    /// The agent's commands, as its latest `commands.updated` said (since the server started).
    #[cfg_attr(feature = "schema", schema(value_type = Vec<CommandInfo>))]
    pub commands: SharedList<CommandInfo>,
    /// The room's head when this was read: everything above includes every event through it.
    pub head_seq: u64,
}

/// The agent's latest plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CurrentPlan {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    pub steps: Vec<PlanStep>,
}

/// A message or reasoning the running turn is streaming.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OpenText {
    pub kind: OpenTextKind,
    pub item_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OpenTextKind {
    Message,
    Reasoning,
}
