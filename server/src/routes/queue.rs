//! A session's queue of follow-ups (`POST …/turns` with `queue: true` while a turn runs): listed,
//! reordered, edited, removed, and sent now.

use axum::extract::State;
use axum::http::StatusCode;
use ensemble_core::model::QueuedTurn;
use serde::Deserialize;

use crate::api::TurnAccepted;
use crate::api::params::SessionPath;
use crate::api::queue::{QueueList, QueueOrder, QueuedEdit};
use crate::error::{ApiError, ErrorResponse, Json, Path};
use crate::state::AppState;

/// The `{turnId}` of `…/queue/{turnId}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedPath {
    turn_id: String,
}

impl QueuedPath {
    fn id(&self) -> Result<&str, ApiError> {
        ensemble_core::limits::check_id("turnId", &self.turn_id)?;
        Ok(&self.turn_id)
    }
}

/// The turns waiting for the session's running turn to end, first to start first.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/queue", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The queue", body = QueueList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_queue(State(state): State<AppState>, session: SessionPath) -> Result<Json<QueueList>, ApiError> {
    Ok(Json(QueueList { data: state.controller.queue(&session.key()?)? }))
}

/// Puts the queue in a new order.
#[utoipa::path(put, path = "/v1/rooms/{roomId}/sessions/{sessionId}/queue", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath), request_body = QueueOrder,
    responses((status = 200, description = "The queue in its new order", body = QueueList), (status = 400, description = "`order` does not name every queued turn once (`invalid_input`)", body = ErrorResponse), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn reorder_queue(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<QueueOrder>,
) -> Result<Json<QueueList>, ApiError> {
    let key = session.key()?;
    Ok(Json(QueueList { data: state.controller.reorder_queue(&key, body.order).await? }))
}

/// Replaces a queued turn's input.
#[utoipa::path(patch, path = "/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, ("turnId" = String, Path, pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)), request_body = QueuedEdit,
    responses((status = 200, description = "The queued turn", body = QueuedTurn), (status = 404, description = "No such queued turn (`queued_turn_not_found`)", body = ErrorResponse), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn edit_queued(
    State(state): State<AppState>,
    session: SessionPath,
    Path(turn): Path<QueuedPath>,
    Json(body): Json<QueuedEdit>,
) -> Result<Json<QueuedTurn>, ApiError> {
    let key = session.key()?;
    Ok(Json(state.controller.edit_queued(&key, turn.id()?, body.input).await?))
}

/// Takes a turn off the queue.
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, ("turnId" = String, Path, pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such queued turn (`queued_turn_not_found`)", body = ErrorResponse), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn remove_queued(
    State(state): State<AppState>,
    session: SessionPath,
    Path(turn): Path<QueuedPath>,
) -> Result<StatusCode, ApiError> {
    let key = session.key()?;
    state.controller.remove_queued(&key, turn.id()?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sends a queued turn now: into the running turn when the provider can steer, else the running
/// turn is canceled and this one starts next (at once when none runs).
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}/send", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath, ("turnId" = String, Path, pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)),
    responses((status = 202, description = "Sent: steered (`steered`), started, or first in the queue while the running turn is canceled (`queued`)", body = TurnAccepted), (status = 404, description = "No such queued turn (`queued_turn_not_found`)", body = ErrorResponse), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn send_queued(
    State(state): State<AppState>,
    session: SessionPath,
    Path(turn): Path<QueuedPath>,
) -> Result<(StatusCode, Json<TurnAccepted>), ApiError> {
    let key = session.key()?;
    let a = state.controller.send_queued_now(&key, turn.id()?).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(TurnAccepted { turn_id: a.turn_id, duplicate: a.duplicate, steered: a.steered, queued: a.queued }),
    ))
}
