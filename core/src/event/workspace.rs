//! The payloads of a session's workspace: what a turn changed, a restore and a commit.

use serde::{Deserialize, Serialize};

/// How a file changed between two checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
    TypeChanged,
}

/// One file a turn (or a range of checkpoints) changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChangedFile {
    /// Relative to the work tree's top.
    pub path: String,
    /// A renamed file's path before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: ChangeStatus,
    pub added: u64,
    pub removed: u64,
    /// A binary file (no line counts).
    #[serde(default)]
    pub binary: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnChangesPayload {
    pub turn_id: String,
    /// The checkpoint taken before the turn started.
    pub before: String,
    /// The checkpoint taken after it ended.
    pub after: String,
    pub files: Vec<ChangedFile>,
    /// Files left out of the checkpoint (larger than `--checkpoint-max-file-bytes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRestoredPayload {
    /// The checkpoint the working tree was put back to.
    pub checkpoint: String,
    /// The checkpoint of the working tree just before: restore it to undo this one.
    pub undo: String,
    /// Files the checkpoint has that were left as they are: now larger than
    /// `--checkpoint-max-file-bytes`, they are in no checkpoint, so the undo could not bring
    /// them back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceCommittedPayload {
    /// The new commit.
    pub commit: String,
    /// The branch it is on.
    pub branch: String,
    pub message: String,
}
