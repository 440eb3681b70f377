//! What sessions and rooms spent, and their budgets.

use axum::extract::State;
use ensemble_core::usage::{Budget, RoomUsage, SessionUsage};

use crate::api::params::{RoomPath, SessionPath};
use crate::error::{ApiError, ErrorResponse, Json};
use crate::state::AppState;

/// What the session spent (in all and per turn), and its budget and where it stands.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/usage", tag = "usage",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The session's usage", body = SessionUsage), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn session_usage(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<Json<SessionUsage>, ApiError> {
    Ok(Json(state.controller.session_usage(&session.key()?)?))
}

/// Sets the session's budget (instead of the server's default). Reached, no new turn starts
/// (409 `budget_exhausted`); a higher one lets work go on.
#[utoipa::path(put, path = "/v1/rooms/{roomId}/sessions/{sessionId}/budget", tag = "usage",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath), request_body = Budget,
    responses((status = 200, description = "The session's usage with its new budget", body = SessionUsage), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn set_session_budget(
    State(state): State<AppState>,
    session: SessionPath,
    Json(budget): Json<Budget>,
) -> Result<Json<SessionUsage>, ApiError> {
    let key = session.key()?;
    Ok(Json(state.controller.set_session_budget(&key, Some(budget)).await?))
}

/// Clears the session's own budget: the server's default applies again.
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/sessions/{sessionId}/budget", tag = "usage",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    responses((status = 200, description = "The session's usage under the default budget", body = SessionUsage), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn clear_session_budget(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<Json<SessionUsage>, ApiError> {
    let key = session.key()?;
    Ok(Json(state.controller.set_session_budget(&key, None).await?))
}

/// What the room's sessions spent, in all, by provider and model and by session, and its budget.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/usage", tag = "usage",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(RoomPath),
    responses((status = 200, description = "The room's usage", body = RoomUsage), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn room_usage(State(state): State<AppState>, room: RoomPath) -> Result<Json<RoomUsage>, ApiError> {
    Ok(Json(state.controller.room_usage(room.id()?)?))
}

/// Sets the room's budget (instead of the server's default): all its sessions together.
#[utoipa::path(put, path = "/v1/rooms/{roomId}/budget", tag = "usage",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(RoomPath), request_body = Budget,
    responses((status = 200, description = "The room's usage with its new budget", body = RoomUsage), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn set_room_budget(
    State(state): State<AppState>,
    room: RoomPath,
    Json(budget): Json<Budget>,
) -> Result<Json<RoomUsage>, ApiError> {
    let room = room.into_id()?;
    Ok(Json(state.controller.set_room_budget(&room, Some(budget)).await?))
}

/// Clears the room's own budget: the server's default applies again.
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/budget", tag = "usage",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(RoomPath),
    responses((status = 200, description = "The room's usage under the default budget", body = RoomUsage), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn clear_room_budget(State(state): State<AppState>, room: RoomPath) -> Result<Json<RoomUsage>, ApiError> {
    let room = room.into_id()?;
    Ok(Json(state.controller.set_room_budget(&room, None).await?))
}
