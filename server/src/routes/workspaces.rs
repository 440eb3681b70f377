//! A session's workspace: its checkpoints, what changed between them, and restoring one.

use axum::extract::State;
use ensemble_core::event::{WorkspaceCommittedPayload, WorkspaceRestoredPayload};
use ensemble_core::limits::check_text;
use ensemble_core::workspace::{WorkspaceChanges, WorkspaceInfo};
use ensemble_runtime::controller::ChangesRange;

use crate::api::params::{RoomPath, SessionPath};
use crate::api::{ChangesQuery, CheckpointList, CheckpointsQuery, CommitRequest, LeftWorktreeList, RestoreRequest};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;

/// The session's checkpoints, oldest first: one before and one after every turn (and one before
/// every restore).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/checkpoints", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, CheckpointsQuery),
    responses((status = 200, description = "The checkpoints, oldest first", body = CheckpointList),
        (status = 422, description = "The session has no checkpoints (`no_workspace`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_checkpoints(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<CheckpointsQuery>,
) -> Result<Json<CheckpointList>, ApiError> {
    let limit = match q.limit {
        None => 100,
        Some(n @ 1..=1000) => n as usize,
        Some(_) => return Err(ApiError::bad_request("invalid_query", "limit must be between 1 and 1000")),
    };
    if let Some(a) = &q.after {
        check_text("after", a)?;
    }
    let all = state.controller.checkpoints(&session.key()?).await?;
    // Ids are time-ordered: the page starts past `after`, whether or not that id still exists.
    let rest: Vec<_> = all.into_iter().filter(|c| q.after.as_deref().is_none_or(|a| c.id.as_str() > a)).collect();
    let more = rest.len() > limit;
    let data: Vec<_> = rest.into_iter().take(limit).collect();
    let next = more.then(|| data.last().map(|c| c.id.clone())).flatten();
    Ok(Json(CheckpointList { data, next }))
}

/// What changed in the session's workspace: in one turn (`turn`), between two checkpoints
/// (`from` and `to`), or over the whole session (neither: its base to its latest checkpoint). The
/// per-file stats, and the unified diff (of `path` only, when given), cut at the server's limit.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/changes", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, ChangesQuery),
    responses((status = 200, description = "The changed files and their diff", body = WorkspaceChanges),
        (status = 404, description = "An unknown checkpoint or turn (`unknown_checkpoint`)", body = ErrorResponse),
        (status = 422, description = "The session has no checkpoints (`no_workspace`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_changes(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<ChangesQuery>,
) -> Result<Json<WorkspaceChanges>, ApiError> {
    let key = session.key()?;
    for (field, v) in [("turn", &q.turn), ("from", &q.from), ("to", &q.to), ("path", &q.path)] {
        if let Some(v) = v {
            check_text(field, v)?;
        }
    }
    let range = match (q.turn, q.from, q.to) {
        (Some(turn), None, None) => ChangesRange::Turn(turn),
        (None, Some(from), Some(to)) => ChangesRange::Between { from, to },
        (None, None, None) => ChangesRange::Session,
        _ => {
            return Err(ApiError::bad_request(
                "invalid_query",
                "give `turn`, or `from` and `to`, or none of them (the whole session)",
            ));
        }
    };
    Ok(Json(state.controller.changes(&key, range, q.path.as_deref()).await?))
}

/// Puts the session's working tree back to a checkpoint. The tree as it was is checkpointed
/// first (its id is `undo`: restore it to undo this); announced as `workspace.restored`.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/restore", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = RestoreRequest,
    responses((status = 200, description = "Restored", body = WorkspaceRestoredPayload),
        (status = 404, description = "An unknown checkpoint (`unknown_checkpoint`)", body = ErrorResponse),
        (status = 409, description = "A turn is running (`turn_active`)", body = ErrorResponse),
        (status = 422, description = "The session has no checkpoints (`no_workspace`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn restore(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<RestoreRequest>,
) -> Result<Json<WorkspaceRestoredPayload>, ApiError> {
    let key = session.key()?;
    check_text("checkpoint", &body.checkpoint)?;
    Ok(Json(state.controller.restore(&key, &body.checkpoint).await?))
}

/// The session's workspace (kind, repository, base, branch, path) and the bytes it takes on disk.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/workspace", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The workspace and its disk use", body = WorkspaceInfo),
        (status = 422, description = "The session works in a plain directory (`no_workspace`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_workspace(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<Json<WorkspaceInfo>, ApiError> {
    Ok(Json(state.controller.workspace_info(&session.key()?).await?))
}

/// Commits a worktree session's changes on its branch (author: the request's, else git's
/// configuration), so they can be merged or pushed with the usual tools; announced as
/// `workspace.committed`.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/workspace/commit", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = CommitRequest,
    responses((status = 200, description = "Committed", body = WorkspaceCommittedPayload),
        (status = 409, description = "A turn is running (`turn_active`), or nothing to commit (`nothing_to_commit`)", body = ErrorResponse),
        (status = 422, description = "Not a worktree session (`no_workspace`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn commit_workspace(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<CommitRequest>,
) -> Result<Json<WorkspaceCommittedPayload>, ApiError> {
    let key = session.key()?;
    check_text("message", &body.message)?;
    if body.message.trim().is_empty() {
        return Err(ApiError::bad_request("invalid_input", "the commit message must not be blank"));
    }
    if let Some(a) = &body.author {
        check_text("author.name", &a.name)?;
        check_text("author.email", &a.email)?;
    }
    let author = body.author.as_ref().map(|a| (a.name.as_str(), a.email.as_str()));
    Ok(Json(state.controller.commit_workspace(&key, &body.message, author).await?))
}

/// The worktrees the room's closed sessions left on disk (closed without `purge`), oldest close
/// first, each with what it takes: remove one with `DELETE …/sessions/{sessionId}?purge=true`.
/// (With several hosts, those of the sessions this host holds.)
#[utoipa::path(get, path = "/v1/rooms/{roomId}/worktrees", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(RoomPath),
    responses((status = 200, description = "The worktrees left behind", body = LeftWorktreeList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn left_worktrees(State(state): State<AppState>, room: RoomPath) -> Result<Json<LeftWorktreeList>, ApiError> {
    Ok(Json(LeftWorktreeList { data: state.controller.left_worktrees(room.id()?).await }))
}
