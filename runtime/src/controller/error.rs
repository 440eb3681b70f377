//! The controller's one error type, with a stable snake_case code per variant.

use crate::locks::LockTimeout;
use crate::store::StoreError;
use ensemble_core::adapter::AdapterError;
use ensemble_core::limits::FieldError;

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("{0}")]
    InvalidInput(String),
    /// A request field out of bounds (an id, a text over its limit).
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("unknown provider `{0}`")]
    UnknownProvider(String),
    #[error("provider `{id}` is unavailable: {reason}")]
    ProviderUnavailable { id: String, reason: String },
    #[error("session `{0}` not found")]
    SessionNotFound(String),
    #[error("session `{0}` already exists")]
    SessionExists(String),
    #[error("turn `{0}` is active")]
    TurnActive(String),
    /// The session's provider needs a login (or a key) before it can run a turn.
    #[error("{0}")]
    AuthRequired(String),
    #[error("the session has no active turn")]
    NoActiveTurn,
    #[error("{0}")]
    SessionBusy(String),
    #[error("the session is closed")]
    SessionClosed,
    #[error("the session is starting")]
    SessionStarting,
    #[error("the session cannot be resumed")]
    NotResumable,
    #[error("the side conversation has expired")]
    SideExpired,
    #[error("{0}")]
    SideUnsupported(String),
    #[error("{0}")]
    SideConflict(String),
    /// The provider has no modes or options to change.
    #[error("{0}")]
    ConfigUnsupported(String),
    /// A mode, option or value the session does not offer.
    #[error("{0}")]
    UnknownConfig(String),
    /// A `clientSubmitId` already named another operation.
    #[error("{0}")]
    SubmitIdConflict(String),
    #[error("the session has no goal")]
    NoGoal,
    #[error("{0}")]
    GoalsUnsupported(String),
    #[error("interaction `{0}` not found")]
    InteractionNotFound(String),
    #[error("interaction `{0}` was already answered")]
    InteractionResolved(String),
    #[error("{0}")]
    InvalidDecision(String),
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    LockTimeout(#[from] LockTimeout),
    #[error("provider error: {0}")]
    Provider(#[from] AdapterError),
    #[error("store error: {0}")]
    Store(#[from] StoreError),
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("{0}")]
    TooManySessions(String),
    #[error("{0}")]
    AtCapacity(String),
    /// The session has no checkpointed workspace (not in a git work tree, or `checkpoints: false`).
    #[error("{0}")]
    NoWorkspace(String),
    #[error("checkpoint `{0}` not found")]
    UnknownCheckpoint(String),
    /// The provider's sessions run in a box this machine cannot make (why, and what to do).
    #[error("{0}")]
    IsolationUnavailable(String),
    /// A start's isolation that would widen its provider's, or is not well formed.
    #[error("{0}")]
    InvalidIsolation(String),
    /// Another session's turn runs in the work tree a restore would rewrite.
    #[error("{0}")]
    WorkTreeBusy(String),
    /// A worktree session's `cwd` that is not a directory inside its worktree.
    #[error("{0}")]
    CwdOutsideWorkspace(String),
    #[error("attachment `{0}` not found")]
    AttachmentNotFound(String),
    /// The session's queue holds `--max-queued-turns` turns, or `--max-queued-bytes` bytes, already
    /// (`details`: the limit and where the queue stands).
    #[error("{message}")]
    QueueFull { message: String, details: serde_json::Value },
    #[error("no queued turn `{0}`")]
    QueuedTurnNotFound(String),
    /// A session's or room's budget is reached: no new turn starts.
    #[error("{message}")]
    BudgetExhausted { message: String, details: serde_json::Value },
    /// A turn's input item the session's provider does not take (which, and why).
    #[error("{0}")]
    InputUnsupported(String),
    /// The provider cannot fork its conversation (the reason).
    #[error("{0}")]
    ForkUnsupported(String),
    /// What git said (not a repository, an unknown base, a branch that exists, git missing …).
    #[error(transparent)]
    Workspace(#[from] ensemble_workspace::GitError),
}

impl ControllerError {
    /// A session's work tree removed by hand (or whose repository was deleted).
    pub(crate) fn workspace_gone(top: &std::path::Path) -> ControllerError {
        ControllerError::NoWorkspace(format!(
            "the session's work tree {} is gone (removed, or its repository deleted)",
            top.display()
        ))
    }

    /// The stable snake_case code of the error.
    pub fn code(&self) -> &str {
        match self {
            Self::InvalidInput(_) => "invalid_input",
            Self::Field(e) => e.code,
            Self::UnknownProvider(_) => "unknown_provider",
            Self::ProviderUnavailable { .. } => "provider_unavailable",
            Self::SessionNotFound(_) => "session_not_found",
            Self::SessionExists(_) => "session_exists",
            Self::TurnActive(_) => "turn_active",
            Self::AuthRequired(_) => "auth_required",
            Self::NoActiveTurn => "no_active_turn",
            Self::SessionBusy(_) => "session_busy",
            Self::SessionClosed => "session_closed",
            Self::SessionStarting => "session_starting",
            Self::NotResumable => "not_resumable",
            Self::SideExpired => "side_expired",
            Self::SideUnsupported(_) => "side_unsupported",
            Self::SideConflict(_) => "side_conflict",
            Self::SubmitIdConflict(_) => "client_submit_id_conflict",
            Self::ConfigUnsupported(_) => "config_unsupported",
            Self::UnknownConfig(_) => "unknown_config",
            Self::NoGoal => "no_goal",
            Self::GoalsUnsupported(_) => "goals_unsupported",
            Self::InteractionNotFound(_) => "interaction_not_found",
            Self::InteractionResolved(_) => "interaction_resolved",
            Self::InvalidDecision(_) => "invalid_decision",
            Self::Unsupported(_) => "unsupported",
            Self::LockTimeout(_) => "lock_timeout",
            Self::Provider(e) => e.code(),
            Self::Store(e) => e.code(),
            Self::ShuttingDown => "shutting_down",
            Self::TooManySessions(_) => "too_many_sessions",
            Self::AtCapacity(_) => "at_capacity",
            Self::NoWorkspace(_) => "no_workspace",
            Self::ForkUnsupported(_) => "fork_unsupported",
            Self::InputUnsupported(_) => "input_unsupported",
            Self::AttachmentNotFound(_) => "attachment_not_found",
            Self::QueueFull { .. } => "queue_full",
            Self::QueuedTurnNotFound(_) => "queued_turn_not_found",
            Self::BudgetExhausted { .. } => "budget_exhausted",
            Self::UnknownCheckpoint(_) => "unknown_checkpoint",
            Self::CwdOutsideWorkspace(_) => "cwd_outside_workspace",
            Self::WorkTreeBusy(_) => "work_tree_busy",
            Self::IsolationUnavailable(_) => "isolation_unavailable",
            Self::InvalidIsolation(_) => "invalid_isolation",
            Self::Workspace(e) => e.code(),
        }
    }
}

pub type Result<T, E = ControllerError> = std::result::Result<T, E>;
