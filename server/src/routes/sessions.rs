//! A room's sessions: start, list, read, close, and the live process's lifecycle (resume, release,
//! disconnect).

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ensemble_core::model::{ConfigChange, Session};
use ensemble_runtime::controller::{ForkSession, StartSession, WorkspaceRequest};

use ensemble_core::limits::check_text;

use crate::api::params::{RoomPath, SessionPath};
use std::time::Duration;

use ensemble_core::model::SessionStatus;

use crate::access::Principal;
use crate::api::{
    CloseQuery, ConfigRequest, ForkRequest, RenameRequest, SessionList, SessionQuery, SessionWait, StartSessionRequest,
    WorkspaceSpec,
};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::security::unauthorized_because;
use crate::state::AppState;

/// Starts a session. The room is created on first use.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(RoomPath),
    request_body = StartSessionRequest,
    responses((status = 201, description = "The started session", body = Session), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn start_session(
    State(state): State<AppState>,
    room: RoomPath,
    Json(body): Json<StartSessionRequest>,
) -> Result<Response, ApiError> {
    let room = room.into_id()?;
    // Bounded before the filesystem is asked about it.
    if let Some(c) = &body.cwd {
        check_text("cwd", c)?;
    }
    if let Some(p) = &body.provider_session_id {
        check_text("providerSessionId", p)?;
        if p.trim().is_empty() {
            return Err(ApiError::bad_request("invalid_input", "providerSessionId must not be blank"));
        }
    }
    let (workspace, cwd) = match body.workspace {
        None | Some(WorkspaceSpec::Dir {}) => {
            let cwd = body.cwd.as_deref().map(|c| state.workspace.resolve(c)).transpose()?;
            (WorkspaceRequest::Dir, cwd.map(|c| c.to_string_lossy().into_owned()))
        }
        Some(WorkspaceSpec::Worktree { repo, base, branch }) => {
            for (field, text) in [
                ("workspace.repo", Some(&repo)),
                ("workspace.base", base.as_ref()),
                ("workspace.branch", branch.as_ref()),
            ] {
                if let Some(t) = text {
                    check_text(field, t)?;
                }
            }
            let repo = state.workspace.resolve_as("workspace.repo", &repo)?;
            // The worktree's cwd is relative to it: the controller resolves it there.
            (WorkspaceRequest::Worktree { repo, base, branch, cwd: body.cwd, fill: None }, None)
        }
    };
    let session = state
        .controller
        .start_shared(StartSession {
            room_id: room,
            session_id: body.session_id,
            provider: body.provider,
            title: body.title,
            cwd,
            settings: body.settings.unwrap_or_default(),
            workspace,
            checkpoints: body.checkpoints,
            fork: None,
            provider_session: body.provider_session_id,
            isolation: body.isolation,
        })
        .await?;
    created(&session)
}

/// 201 with the started session, as its `session.started` carries it, and where it is.
fn created(session: &ensemble_core::shared_session::SharedSession) -> Result<Response, ApiError> {
    let mut headers = HeaderMap::new();
    if let Ok(loc) = HeaderValue::from_str(&format!("/v1/rooms/{}/sessions/{}", session.room_id, session.session_id)) {
        headers.insert(header::LOCATION, loc);
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // The JSON the store's writer made of the session for its `session.started`, as it is.
    let json = session.json().map_err(|e| ApiError::internal("the started session's JSON", e))?;
    Ok((StatusCode::CREATED, headers, json.to_owned()).into_response())
}

/// Forks a session through one of its turns: a new, durable session in a worktree of its own at
/// the checkpoint after that turn (on a new branch), with the source's provider and settings and
/// its conversation through that turn. Its `forkedFrom` names the source, turn and checkpoint.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/fork", tag = "workspaces",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = ForkRequest,
    responses((status = 201, description = "The fork", body = Session),
        (status = 404, description = "No checkpoint after that turn (`unknown_checkpoint`)", body = ErrorResponse),
        (status = 422, description = "The provider cannot fork its conversation (`fork_unsupported`, with the reason), or the session has no checkpoints (`no_workspace`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn fork_session(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<ForkRequest>,
) -> Result<Response, ApiError> {
    let source = session.key()?;
    check_text("atTurn", &body.at_turn)?;
    if let Some(t) = &body.title {
        check_text("title", t)?;
    }
    let forked = state
        .controller
        .fork(ForkSession { source, session_id: body.session_id, at_turn: body.at_turn, title: body.title })
        .await?;
    created(&forked)
}

/// Canonical, visible sessions of a room.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(RoomPath),
    responses((status = 200, description = "The room's sessions", body = SessionList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_sessions(State(state): State<AppState>, room: RoomPath) -> Result<Json<SessionList>, ApiError> {
    Ok(Json(SessionList { data: state.controller.room_sessions(room.id()?).await? }))
}

/// The session as it is now — the session, its pending interactions, plan, goal, usage, queue,
/// commands and what its running turn is streaming — to draw without reading its history, with
/// the room's `headSeq` it includes every event through: open the room WebSocket at
/// `after=headSeq` and read the session's tail with `…/events?before=headSeq+1`.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/present", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The session's present", body = ensemble_core::present::SessionPresent),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn session_present(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<Json<ensemble_core::present::SessionPresent>, ApiError> {
    Ok(Json(state.controller.present(&session.key()?).await?))
}

/// One session (side sessions too). With `wait`, answered once the session is idle (or waits on
/// an answer), so a script can run a turn and then read its result; the `Ensemble-Wait` header
/// says why it answered.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, SessionQuery),
    responses((status = 200, description = "The session (with `wait`: once in that state, or as it is when the timeout passed or the token has `--max-long-polls-per-token` waiting already)", body = Session,
            headers(("Ensemble-Wait" = String, description = "With `wait` only: `reached` (the session is in the state asked for), `timeout` (`timeoutSecs` passed), `limited` (the token has `--max-long-polls-per-token` long polls waiting: answered at once; wait on one of those, or on the room WebSocket) or `shutdown` (the server stops)"))),
        (status = 401, description = "`unauthorized`: also when the token is revoked or expires while the request waits", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_session(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    session: SessionPath,
    Query(q): Query<SessionQuery>,
) -> Result<Response, ApiError> {
    let key = session.key()?;
    if q.timeout_secs.is_some_and(|t| t > MAX_WAIT_SECS) {
        return Err(ApiError::bad_request("invalid_query", format!("timeoutSecs must be at most {MAX_WAIT_SECS}")));
    }
    let Some(wait) = q.wait else { return Ok(Json(state.controller.session(&key)?).into_response()) };
    let until = move |s: &Session| match s.status {
        SessionStatus::Ready | SessionStatus::Disconnected | SessionStatus::Failed | SessionStatus::Completed => true,
        SessionStatus::Waiting => wait == SessionWait::Input,
        SessionStatus::Starting | SessionStatus::Working => false,
    };
    // At its cap a token's long poll answers at once, as a timeout would: one token waiting on
    // many must not hold every connection the server has.
    let Some(_held) = state.long_polls.take(principal.token_id()) else {
        metrics::counter!("ensemble_long_polls_limited_total").increment(1);
        return waited(state.controller.session(&key)?, WaitEnd::Limited);
    };
    // Under the request timeout, so the caller gets the session rather than 408.
    let limit = state.request_timeout.mul_f64(0.9);
    let timeout = Duration::from_secs(q.timeout_secs.map_or(DEFAULT_WAIT_SECS, u64::from)).min(limit);
    // A shutting-down server answers at once rather than holding the drain up; a token revoked
    // or expired meanwhile gets nothing more.
    let shutdown = state.shutdown.clone();
    tokio::select! {
        r = state.controller.wait_session(&key, until, timeout) => {
            let s = r?;
            let end = if until(&s) { WaitEnd::Reached } else { WaitEnd::Timeout };
            waited(s, end)
        }
        () = shutdown.cancelled() => waited(state.controller.session(&key)?, WaitEnd::Shutdown),
        () = state.tokens.ended(principal.token_id()) => {
            Ok(unauthorized_because("this token was revoked or has expired while the request waited"))
        }
    }
}

/// Why a `?wait=` answered: the `Ensemble-Wait` header.
#[derive(Clone, Copy, Debug)]
enum WaitEnd {
    Reached,
    Timeout,
    Limited,
    Shutdown,
}

/// The session a `?wait=` answers with, and why it answered.
fn waited(session: Session, end: WaitEnd) -> Result<Response, ApiError> {
    let why = match end {
        WaitEnd::Reached => "reached",
        WaitEnd::Timeout => "timeout",
        WaitEnd::Limited => "limited",
        WaitEnd::Shutdown => "shutdown",
    };
    Ok(([(WAIT_HEADER, HeaderValue::from_static(why))], Json(session)).into_response())
}

/// The header that says why a `?wait=` answered.
pub const WAIT_HEADER: header::HeaderName = header::HeaderName::from_static("ensemble-wait");

/// How long `?wait=` waits when the request does not say.
const DEFAULT_WAIT_SECS: u64 = 30;
/// The most `timeoutSecs` may say (the request timeout cuts the wait shorter still).
const MAX_WAIT_SECS: u32 = 86_400;

/// Closes a session. Idempotent. With `purge`, its workspace goes too: the worktree and the
/// checkpoints' refs (the branch only when merged, unless `force`: else 409 `branch_not_merged`,
/// the worktree removed and the branch kept).
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/sessions/{sessionId}", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, CloseQuery),
    responses((status = 204, description = "Closed (and purged)"),
        (status = 409, description = "Purged, but its branch is not merged and was kept (`branch_not_merged`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn close_session(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<CloseQuery>,
) -> Result<StatusCode, ApiError> {
    let key = session.key()?;
    state.controller.close(&key).await?;
    if q.purge == Some(true) {
        state.controller.purge_workspace(&key, q.force == Some(true)).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Reconnects a session whose live process is gone.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/resume", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    responses((status = 200, description = "The resumed session", body = Session), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn resume_session(State(state): State<AppState>, session: SessionPath) -> Result<Json<Session>, ApiError> {
    Ok(Json(state.controller.resume(&session.key()?).await?))
}

/// Renames the session (also announced as `session.updated`, reason `renamed`). A session started
/// without a title is named by its first turn's first words (`session.updated`, reason `titled`).
#[utoipa::path(patch, path = "/v1/rooms/{roomId}/sessions/{sessionId}", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = RenameRequest,
    responses((status = 200, description = "The session with its new title", body = Session),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn rename_session(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<RenameRequest>,
) -> Result<Json<Session>, ApiError> {
    Ok(Json(state.controller.rename(&session.key()?, &body.title).await?))
}

/// Changes the session's mode or config options (model, reasoning effort, …) for its next turn.
/// The choices are in the session's `modes` and `configOptions`.
#[utoipa::path(patch, path = "/v1/rooms/{roomId}/sessions/{sessionId}/config", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = ConfigRequest,
    responses((status = 200, description = "The session with its new mode and options (also announced as `session.updated`, reason `config`)", body = Session),
        (status = 409, description = "A turn is running and the agent cannot switch now (`turn_active`)", body = ErrorResponse),
        (status = 422, description = "An unknown mode, option or value (`unknown_config`), or a provider without any (`config_unsupported`)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn configure_session(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<ConfigRequest>,
) -> Result<Json<Session>, ApiError> {
    let key = session.key()?;
    let change = ConfigChange { mode: body.mode, options: body.options.unwrap_or_default() };
    Ok(Json(state.controller.configure(&key, change).await?))
}

/// Stops the live process of an idle session, keeping it resumable.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/release", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    responses((status = 204, description = "Released"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn release_session(State(state): State<AppState>, session: SessionPath) -> Result<StatusCode, ApiError> {
    state.controller.release(&session.key()?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Drops the live process now (pending interactions are rejected), keeping it resumable.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/disconnect", tag = "sessions",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    responses((status = 204, description = "Disconnected"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn disconnect_session(State(state): State<AppState>, session: SessionPath) -> Result<StatusCode, ApiError> {
    state.controller.disconnect(&session.key()?).await?;
    Ok(StatusCode::NO_CONTENT)
}
