//! Wire types: Reading a session's files: listings, contents, search.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PathQuery {
    /// Relative to the workspace's top (`""` or absent: the top itself).
    #[param(max_length = 4096)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Letters the file's path contains in this order (case-insensitive), e.g. `srvmain`.
    #[param(min_length = 1, max_length = 256)]
    pub q: String,
    /// At most this many results (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

/// What a directory entry is.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Other,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    pub name: String,
    pub kind: FileKind,
    /// Bytes (files only).
    pub size: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileListing {
    pub path: String,
    /// Directories first, then by name; `.git` is never listed.
    pub entries: Vec<FileEntry>,
    /// More entries than the server lists at once were left out.
    pub truncated: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    pub path: String,
    /// The file's whole size in bytes.
    pub size: u64,
    /// Not text (a NUL byte, or not UTF-8): `content` is absent.
    pub binary: bool,
    /// The file is longer than the server shows (`--max-file-view-bytes`): `content` is its start.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileMatch {
    pub path: String,
    /// Higher is better.
    pub score: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileSearch {
    pub data: Vec<FileMatch>,
    /// The search stopped at the server's bound on entries looked at.
    pub truncated: bool,
}
