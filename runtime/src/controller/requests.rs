//! The requests the controller takes, and what it answers them with.

use ensemble_core::model::{InputItem, SessionSettings};

/// `POST /v1/rooms/{roomId}/sessions`.
#[derive(Clone, Debug, Default)]
pub struct StartSession {
    pub room_id: String,
    pub session_id: Option<String>,
    /// `None`: the configured default provider.
    pub provider: Option<String>,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub settings: SessionSettings,
    /// A worktree of its own, or the cwd as given.
    pub workspace: super::workspaces::WorkspaceRequest,
    /// `Some(false)`: no checkpoints even in a git work tree.
    pub checkpoints: Option<bool>,
    /// A durable fork: the conversation of this session through one of its turns.
    pub fork: Option<ForkFrom>,
    /// Continue this session of the agent's own (one `GET /v1/providers/{id}/sessions` lists)
    /// instead of starting a new one.
    pub provider_session: Option<String>,
    /// A narrower box than the provider's (fewer endpoints, lower limits).
    pub isolation: Option<ensemble_core::isolation::IsolationRequest>,
}

/// What a fork's start forks.
#[derive(Clone, Debug)]
pub struct ForkFrom {
    pub source: ensemble_core::model::Session,
    pub through_turn: String,
    /// The source's most recent turn (the last with a checkpoint after it).
    pub last_turn: Option<String>,
    /// The checkpoint after that turn, which the fork's worktree starts from.
    pub checkpoint: String,
}

/// `POST .../turns`.
#[derive(Clone, Debug, Default)]
pub struct SubmitTurn {
    pub input: Vec<InputItem>,
    pub client_submit_id: Option<String>,
    pub steer: bool,
    /// While a turn runs (or others wait), wait for it rather than refuse.
    pub queue: bool,
}

/// The answer to a submit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnAccepted {
    pub turn_id: String,
    /// The same `clientSubmitId` was seen before; no new turn was started.
    pub duplicate: bool,
    pub steered: bool,
    /// The turn waits in the session's queue (it starts, as `turn_id`, after those before it).
    pub queued: bool,
}
