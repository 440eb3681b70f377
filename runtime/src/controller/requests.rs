//! The requests the controller takes, and what it answers them with.

use crate::model::{InputItem, SessionSettings};

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
}

/// `POST .../turns`.
#[derive(Clone, Debug, Default)]
pub struct SubmitTurn {
    pub input: Vec<InputItem>,
    pub client_submit_id: Option<String>,
    pub steer: bool,
}

/// The answer to a submit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnAccepted {
    pub turn_id: String,
    /// The same `clientSubmitId` was seen before; no new turn was started.
    pub duplicate: bool,
    pub steered: bool,
}
