//! A session's pending approvals and questions, and the answers to them.

use axum::extract::State;
use serde::Deserialize;

use crate::api::params::SessionPath;
use crate::api::{AnswerAccepted, AnswerRequest, InteractionList};
use crate::error::{ApiError, ErrorResponse, Json, Path};
use crate::state::AppState;

/// Pending interactive requests (approvals, questions).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/interactions", tag = "interactions",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The pending interactions", body = InteractionList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_interactions(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<Json<InteractionList>, ApiError> {
    Ok(Json(InteractionList { data: state.controller.interactions(&session.key()?)? }))
}

/// The `{requestId}` of `…/interactions/{requestId}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestIdPath {
    request_id: String,
}

/// Answers one interactive request.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", tag = "interactions",
    extensions(("x-ensemble-access" = json!({"role": "approver"}))),
    params(SessionPath, ("requestId" = String, Path, pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)),
    request_body = AnswerRequest,
    responses((status = 200, description = "The answer was accepted and passed to the agent", body = AnswerAccepted), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn answer_interaction(
    State(state): State<AppState>,
    session: SessionPath,
    Path(RequestIdPath { request_id }): Path<RequestIdPath>,
    Json(body): Json<AnswerRequest>,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let k = session.key()?;
    let answers = body.answers.map(|a| serde_json::to_value(a).unwrap_or_default());
    state.controller.answer(&k, &request_id, body.decision, answers, body.option_id).await?;
    Ok(Json(AnswerAccepted { request_id, decision: body.decision }))
}
