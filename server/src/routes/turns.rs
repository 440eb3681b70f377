//! A session's turns: submit (or steer) and cancel.

use axum::extract::State;
use axum::http::StatusCode;
use ensemble_runtime::controller::SubmitTurn;

use crate::api::params::SessionPath;
use crate::api::{CancelAccepted, SubmitTurnRequest, TurnAccepted};
use crate::error::{ApiError, ErrorResponse, Json};
use crate::state::AppState;

/// Submits input: starts a turn (or steers the running one).
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/turns", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = SubmitTurnRequest,
    responses((status = 202, description = "The turn was accepted (or, with `steer`, the input added to the running turn)", body = TurnAccepted), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn submit_turn(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<SubmitTurnRequest>,
) -> Result<(StatusCode, Json<TurnAccepted>), ApiError> {
    let k = session.key()?;
    let accepted = state
        .controller
        .submit_turn(
            &k,
            SubmitTurn {
                input: body.input,
                client_submit_id: body.client_submit_id,
                steer: body.steer.unwrap_or(false),
                queue: body.queue.unwrap_or(false),
            },
        )
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(TurnAccepted {
            turn_id: accepted.turn_id,
            duplicate: accepted.duplicate,
            steered: accepted.steered,
            queued: accepted.queued,
        }),
    ))
}

/// Interrupts the active turn.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/cancel", tag = "turns",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    responses((status = 202, description = "The interrupt was sent; the turn's end follows as an event", body = CancelAccepted), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn cancel_turn(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<(StatusCode, Json<CancelAccepted>), ApiError> {
    let turn_id = state.controller.cancel(&session.key()?).await?;
    Ok((StatusCode::ACCEPTED, Json(CancelAccepted { turn_id })))
}
