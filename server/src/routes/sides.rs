//! Side conversations: ephemeral forks of a live session, and their in-memory events.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ensemble_core::model::SideCapabilities;

use crate::api::params::{SessionPath, events_page, history_expired};
use crate::api::{EventList, EventsQuery, OpenSideRequest, SessionList, SideOpened};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;

/// Side-conversation capabilities of the live adapter behind this session.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/side-capabilities", tag = "sides",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The capabilities of the live session", body = SideCapabilities), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn side_capabilities(
    State(state): State<AppState>,
    session: SessionPath,
) -> Result<Json<SideCapabilities>, ApiError> {
    Ok(Json(state.controller.side_capabilities(&session.key()?).await?))
}

/// Opens a side conversation: an ephemeral fork of the live session.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/sides", tag = "sides",
    extensions(("x-ensemble-access" = json!({"role": "operator"}))),
    params(SessionPath),
    request_body = OpenSideRequest,
    responses((status = 201, description = "The opened side conversation", body = SideOpened), (status = 200, body = SideOpened, description = "Re-opened: the same side"),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn open_side(
    State(state): State<AppState>,
    session: SessionPath,
    Json(body): Json<OpenSideRequest>,
) -> Result<(StatusCode, Json<SideOpened>), ApiError> {
    let source = session.key()?;
    let opened = state
        .controller
        .open_side(&source.room_id, &source.session_id, body.side_session_id.as_deref(), &body.request_id)
        .await?;
    let status = if opened.reopened { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(SideOpened { session: opened.session, capabilities: opened.capabilities })))
}

/// The session's open side conversations, oldest first: a client that reloads finds them here and
/// replays each with `GET …/sessions/{sideId}/events?after=`.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/sides", tag = "sides",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath),
    responses((status = 200, description = "The open side conversations of the session", body = SessionList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_sides(State(state): State<AppState>, session: SessionPath) -> Result<Json<SessionList>, ApiError> {
    Ok(Json(SessionList { data: state.controller.sides_of(&session.key()?)? }))
}

/// Events of a side conversation with `seq > after` (its own sequence), replayed from memory while
/// the side lives, paged as the room's (`limit`, `--events-page-bytes`, `next`). Canonical
/// sessions' events are in the room log (`/v1/rooms/{roomId}/events`).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/events", tag = "sides",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, EventsQuery),
    responses((status = 200, description = "A page of the side conversation's events, oldest first", body = EventList),
        (status = 410, description = "The requested history is no longer kept", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn side_events(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let k = session.key()?;
    let (after, limit) = events_page(&q)?;
    let page = state.controller.side_events(&k, after, limit)?;
    if after < page.pruned_through {
        let message = format!("side events up to seq {} are no longer kept", page.pruned_through);
        return Err(history_expired(message, page.pruned_through, page.head_seq));
    }
    let mut body = String::from("{\"data\":[");
    for (i, (_, json)) in page.events.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(std::str::from_utf8(json).map_err(|e| ApiError::internal("side event", e))?);
    }
    body.push_str(&format!("],\"headSeq\":{}", page.head_seq));
    if let Some(next) = page.next() {
        body.push_str(&format!(",\"next\":{next}"));
    }
    body.push('}');
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response())
}
