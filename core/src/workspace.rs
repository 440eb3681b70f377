//! A session's workspace as clients read it: its checkpoints, what changed between two of them,
//! and what it takes on disk. (What happens to it is announced by events: `event::workspace`.)

use serde::Serialize;

use crate::event::ChangedFile;
use crate::model::SessionWorkspace;

/// When a checkpoint was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CheckpointPhase {
    /// Before a turn started.
    Before,
    /// After a turn ended.
    After,
    /// Before a restore (restoring it undoes the restore).
    Restore,
}

impl CheckpointPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Before => "before",
            Self::After => "after",
            Self::Restore => "restore",
        }
    }
}

/// One checkpoint of a session's working tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInfo {
    /// Its id (time-ordered): what `…/changes` and `…/restore` take.
    pub id: String,
    /// The git commit holding it.
    pub commit: String,
    /// The turn it was taken for (none for a restore's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub phase: CheckpointPhase,
    pub created_at_ms: i64,
}

/// What changed between two checkpoints (or the session's base and its latest checkpoint).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceChanges {
    /// The commit compared from.
    pub from: String,
    /// The commit compared to.
    pub to: String,
    pub files: Vec<ChangedFile>,
    /// The unified diff (of `path` only, when asked), cut at the server's limit.
    pub diff: String,
    /// The diff was cut.
    pub truncated: bool,
}

/// A session's workspace and the bytes it takes on disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    pub workspace: SessionWorkspace,
    /// Bytes its files take (a worktree's own directory; for a dir session, its work tree).
    pub disk_bytes: u64,
}

/// A worktree a closed session left on disk (closed without removing it): it stays until a purge
/// (`DELETE …?purge=true`) or `--worktree-retention-secs` removes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LeftWorktree {
    pub session_id: String,
    pub workspace: SessionWorkspace,
    /// Bytes its files take.
    pub disk_bytes: u64,
    /// When its session closed (its record's last change).
    pub closed_at_ms: i64,
}
