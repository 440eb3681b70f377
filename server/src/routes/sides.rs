//! Side conversations: ephemeral forks of a live session, and their in-memory events.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ensemble_core::model::SideCapabilities;

use crate::api::params::{SessionPath, history_expired, session_events_page};
use crate::api::{EventList, OpenSideRequest, RawEventList, SessionEventsQuery, SessionList, SideOpened};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;
use ensemble_runtime::store::SessionPageFrom;

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

/// A page of one session's events, oldest first: forwards with `after` (default 0), or its tail
/// and older pages backwards with `before` (`prev` names the next older page). A canonical
/// session's are read from the store by session, so its tail costs the page, not the room's
/// history; a side conversation's are its own seqs, kept in memory while it lives. Paged as the
/// room's (`limit`, `--events-page-bytes`). The whole room's log is `/v1/rooms/{roomId}/events`.
// Its operation id and tag are those it had when only side conversations had such pages: the
// generated clients' names for it stay.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/events", tag = "sides", operation_id = "side_events",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(SessionPath, SessionEventsQuery),
    responses((status = 200, description = "A page of the session's events, oldest first", body = EventList),
        (status = 410, description = "`after` is before what is kept (the details say what is)", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn session_events(
    State(state): State<AppState>,
    session: SessionPath,
    Query(q): Query<SessionEventsQuery>,
) -> Result<Response, ApiError> {
    let k = session.key()?;
    let (from, limit) = session_events_page(&q)?;
    let page = state.controller.session_events(&k, from, limit).await?;
    if let SessionPageFrom::After(after) = from
        && after < page.pruned_through
    {
        let message = format!("this session's events up to seq {} are no longer kept", page.pruned_through);
        return Err(history_expired(message, page.pruned_through, page.head_seq));
    }
    // `next` for a page forwards, `prev` for one backwards, while more lie that way.
    let (first, last) = (page.events.first().map(|e| e.0), page.events.last().map(|e| e.0));
    let (next, prev) = match from {
        SessionPageFrom::After(_) => (last.filter(|_| page.more), None),
        SessionPageFrom::Before(_) => (None, first.filter(|_| page.more)),
    };
    let data = page.events.into_iter().map(|(_, e)| e).collect();
    Ok(axum::Json(RawEventList { data, head_seq: page.head_seq, next, prev }).into_response())
}
