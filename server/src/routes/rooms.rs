//! `/v1/rooms` and a room's durable event log. (The room WebSocket is `crate::ws`.)

use axum::Extension;
use axum::extract::State;
use axum::response::{IntoResponse, Response};

use crate::access::Principal;
use crate::api::params::{RoomPath, events_page, history_expired};
use crate::api::{EventList, EventsQuery, RawEventList, RoomList};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;

/// Rooms that have sessions or events.
#[utoipa::path(get, path = "/v1/rooms", tag = "rooms",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    responses((status = 200, description = "The rooms", body = RoomList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_rooms(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
) -> Result<Json<RoomList>, ApiError> {
    let mut rooms = state.controller.rooms().await?;
    // A scoped token sees its rooms only.
    rooms.retain(|r| p.rooms.contains(&r.room_id));
    Ok(Json(RoomList { data: rooms }))
}

/// Durable events of a room with `seq > after`, oldest first: at most `limit`, and no more than
/// `--events-page-bytes` of them (at least one); `next` is the `after` of the next page while
/// events follow.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/events", tag = "rooms",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(RoomPath, EventsQuery),
    responses(
        (status = 200, description = "A page of the room's events, oldest first", body = EventList),
        (status = 410, description = "The requested history is no longer retained: reload state and continue from `headSeq`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_events(
    State(state): State<AppState>,
    room: RoomPath,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let room = room.id()?;
    let (after, limit) = events_page(&q)?;
    let page = state.controller.events(room, after, limit).await?;
    if after < page.pruned_through {
        let message = format!("events up to seq {} are no longer retained", page.pruned_through);
        return Err(history_expired(message, page.pruned_through, page.head_seq));
    }
    let next = page.next();
    let data = page.events.into_iter().map(|(_, e)| e).collect();
    Ok(axum::Json(RawEventList { data, head_seq: page.head_seq, next, prev: None }).into_response())
}
