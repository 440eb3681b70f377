//! A session's goal: read, set, clear, pause, resume. Each change is a goal operation (see the
//! runtime's `goals.rs`).

use axum::extract::State;
use axum::http::StatusCode;
use ensemble_core::goal::GoalAction;
use ensemble_core::model::Goal;
use ensemble_runtime::controller::GoalControl;

use crate::api::params::SessionPath;
use crate::api::{GoalOperationQuery, SetGoalRequest};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;

/// The session's goal.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal", tag = "goals",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The session's goal", body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_goal(State(state): State<AppState>, session: SessionPath) -> Result<Json<Goal>, ApiError> {
    Ok(Json(state.controller.goal(&session.key()?)?))
}

async fn goal_control(
    state: &AppState,
    session: &SessionPath,
    action: GoalAction,
    client_submit_id: Option<String>,
) -> Result<Option<Goal>, ApiError> {
    let k = session.key()?;
    Ok(state.controller.goal_control(&k, GoalControl { action, client_submit_id }).await?)
}

/// The goal an operation left, or 404 `no_goal`.
fn the_goal(goal: Option<Goal>) -> Result<Json<Goal>, ApiError> {
    goal.map(Json).ok_or_else(|| ApiError::not_found("no_goal", "the session has no goal"))
}

/// Sets the session's objective (a new goal operation; the same `clientSubmitId` again is the same
/// operation).
#[utoipa::path(put, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal", tag = "goals",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = SetGoalRequest,
    responses((status = 200, description = "The goal after the operation", body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn set_goal(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<SetGoalRequest>,
) -> Result<Json<Goal>, ApiError> {
    let action = GoalAction::Set { objective: body.objective, token_budget: body.token_budget };
    the_goal(goal_control(&state, &session, action, Some(body.client_submit_id)).await?)
}

/// Clears the session's goal.
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal", tag = "goals",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, GoalOperationQuery),
    responses((status = 204, description = "Cleared"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn clear_goal(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<GoalOperationQuery>,
) -> Result<StatusCode, ApiError> {
    goal_control(&state, &session, GoalAction::Clear, q.client_submit_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pauses the session's goal.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal/pause", tag = "goals",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, GoalOperationQuery),
    responses((status = 200, description = "The paused goal", body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn pause_goal(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<GoalOperationQuery>,
) -> Result<Json<Goal>, ApiError> {
    the_goal(goal_control(&state, &session, GoalAction::Pause, q.client_submit_id).await?)
}

/// Resumes the session's goal.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal/resume", tag = "goals",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, GoalOperationQuery),
    responses((status = 200, description = "The resumed goal", body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn resume_goal(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<GoalOperationQuery>,
) -> Result<Json<Goal>, ApiError> {
    the_goal(goal_control(&state, &session, GoalAction::Resume, q.client_submit_id).await?)
}
