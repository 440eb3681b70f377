//! REST handlers. Each converts between wire types and controller calls; no agent dialect here.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ensemble_runtime::controller::{GoalControl, StartSession, SubmitTurn};
use ensemble_runtime::goal::GoalAction;
use ensemble_runtime::model::{Goal, Session, SessionKey, SideCapabilities, validate_id};
use serde_json::value::RawValue;

use crate::api::*;
use crate::app::AppState;
use crate::error::{ApiError, ErrorResponse, Json, Path, Query};

const DEFAULT_EVENT_LIMIT: u32 = 100;
const MAX_EVENT_LIMIT: u32 = 1000;

fn key(room: &str, session: &str) -> Result<SessionKey, ApiError> {
    validate_id("roomId", room).map_err(|m| ApiError::bad_request("invalid_id", m))?;
    validate_id("sessionId", session).map_err(|m| ApiError::bad_request("invalid_id", m))?;
    Ok(SessionKey::new(room, session))
}

fn room_id(room: &str) -> Result<(), ApiError> {
    validate_id("roomId", room).map_err(|m| ApiError::bad_request("invalid_id", m))
}

/// `after` of an events page (default 0). Seqs are SQLite integers (int64 in the contract): a
/// larger `after` is refused, not wrapped around to a negative number that reads from the start.
fn after_seq(after: Option<u64>) -> Result<u64, ApiError> {
    match after {
        Some(a) if i64::try_from(a).is_err() => {
            Err(ApiError::bad_request("invalid_query", format!("after must be at most {}", i64::MAX)))
        }
        a => Ok(a.unwrap_or(0)),
    }
}

/// Providers this server can run.
#[utoipa::path(get, path = "/v1/providers", tag = "providers",
    responses((status = 200, body = ProviderList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_providers(State(state): State<AppState>) -> Json<ProviderList> {
    Json(ProviderList { data: state.controller.providers() })
}

/// Rooms that have sessions or events.
#[utoipa::path(get, path = "/v1/rooms", tag = "rooms",
    responses((status = 200, body = RoomList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_rooms(State(state): State<AppState>) -> Result<Json<RoomList>, ApiError> {
    Ok(Json(RoomList { data: state.controller.rooms().await? }))
}

/// Durable events of a room with `seq > after`, oldest first.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/events", tag = "rooms",
    params(("roomId" = String, Path, description = "Room id"), EventsQuery),
    responses(
        (status = 200, body = EventList),
        (status = 410, description = "The requested history is no longer retained: reload state and continue from `headSeq`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_events(
    State(state): State<AppState>,
    Path(room): Path<String>,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    room_id(&room)?;
    let after = after_seq(q.after)?;
    let limit = q.limit.unwrap_or(DEFAULT_EVENT_LIMIT);
    if limit == 0 || limit > MAX_EVENT_LIMIT {
        return Err(ApiError::bad_request("invalid_query", format!("limit must be between 1 and {MAX_EVENT_LIMIT}")));
    }
    let page = state.controller.events(&room, after, limit as usize).await?;
    if after < page.pruned_through {
        return Err(ApiError::new(
            StatusCode::GONE,
            "history_expired",
            format!("events up to seq {} are no longer retained", page.pruned_through),
        )
        .with_details(serde_json::json!({ "oldestSeq": page.pruned_through + 1, "headSeq": page.head_seq })));
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct RawList {
        data: Vec<Box<RawValue>>,
        head_seq: u64,
    }
    let body = RawList { data: page.events.into_iter().map(|(_, e)| e).collect(), head_seq: page.head_seq };
    Ok(axum::Json(body).into_response())
}

/// Starts a session. The room is created on first use.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions", tag = "sessions",
    params(("roomId" = String, Path, description = "Room id")),
    request_body = StartSessionRequest,
    responses((status = 201, body = Session), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn start_session(
    State(state): State<AppState>,
    Path(room): Path<String>,
    Json(body): Json<StartSessionRequest>,
) -> Result<Response, ApiError> {
    room_id(&room)?;
    let cwd = body.cwd.as_deref().map(|c| state.workspace.resolve(c)).transpose()?;
    let session = state
        .controller
        .start(StartSession {
            room_id: room,
            session_id: body.session_id,
            provider: body.provider,
            title: body.title,
            cwd: cwd.map(|c| c.to_string_lossy().into_owned()),
            settings: body.settings.unwrap_or_default(),
        })
        .await?;
    let mut headers = HeaderMap::new();
    if let Ok(loc) = HeaderValue::from_str(&format!("/v1/rooms/{}/sessions/{}", session.room_id, session.session_id)) {
        headers.insert(header::LOCATION, loc);
    }
    Ok((StatusCode::CREATED, headers, Json(session)).into_response())
}

/// Canonical, visible sessions of a room.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions", tag = "sessions",
    params(("roomId" = String, Path, description = "Room id")),
    responses((status = 200, body = SessionList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_sessions(
    State(state): State<AppState>,
    Path(room): Path<String>,
) -> Result<Json<SessionList>, ApiError> {
    room_id(&room)?;
    Ok(Json(SessionList { data: state.controller.sessions(&room) }))
}

/// One session (side sessions too).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}", tag = "sessions",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, body = Session), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_session(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<Json<Session>, ApiError> {
    Ok(Json(state.controller.session(&key(&room, &id)?)?))
}

/// Closes a session. Idempotent.
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/sessions/{sessionId}", tag = "sessions",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 204, description = "Closed"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn close_session(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.controller.close(&key(&room, &id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Submits input: starts a turn (or steers the running one).
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/turns", tag = "turns",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    request_body = SubmitTurnRequest,
    responses((status = 202, body = TurnAccepted), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn submit_turn(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Json(body): Json<SubmitTurnRequest>,
) -> Result<(StatusCode, Json<TurnAccepted>), ApiError> {
    let k = key(&room, &id)?;
    let accepted = state
        .controller
        .submit_turn(
            &k,
            SubmitTurn {
                input: body.input,
                client_submit_id: body.client_submit_id,
                steer: body.steer.unwrap_or(false),
            },
        )
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(TurnAccepted { turn_id: accepted.turn_id, duplicate: accepted.duplicate, steered: accepted.steered }),
    ))
}

/// Interrupts the active turn.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/cancel", tag = "turns",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 202, body = CancelAccepted), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn cancel_turn(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<(StatusCode, Json<CancelAccepted>), ApiError> {
    let turn_id = state.controller.cancel(&key(&room, &id)?).await?;
    Ok((StatusCode::ACCEPTED, Json(CancelAccepted { turn_id })))
}

/// Reconnects a session whose live process is gone.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/resume", tag = "sessions",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, body = Session), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn resume_session(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<Json<Session>, ApiError> {
    Ok(Json(state.controller.resume(&key(&room, &id)?).await?))
}

/// Stops the live process of an idle session, keeping it resumable.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/release", tag = "sessions",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 204, description = "Released"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn release_session(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.controller.release(&key(&room, &id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Drops the live process now (pending interactions are rejected), keeping it resumable.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/disconnect", tag = "sessions",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 204, description = "Disconnected"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn disconnect_session(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.controller.disconnect(&key(&room, &id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pending interactive requests (approvals, questions).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/interactions", tag = "interactions",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, body = InteractionList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_interactions(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<Json<InteractionList>, ApiError> {
    Ok(Json(InteractionList { data: state.controller.interactions(&key(&room, &id)?)? }))
}

/// Answers one interactive request.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", tag = "interactions",
    params(("roomId" = String, Path), ("sessionId" = String, Path), ("requestId" = String, Path)),
    request_body = AnswerRequest,
    responses((status = 200, body = AnswerAccepted), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn answer_interaction(
    State(state): State<AppState>,
    Path((room, id, request_id)): Path<(String, String, String)>,
    Json(body): Json<AnswerRequest>,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let k = key(&room, &id)?;
    if request_id.is_empty() || request_id.len() > 256 {
        return Err(ApiError::bad_request("invalid_id", "requestId must be 1-256 characters"));
    }
    state.controller.answer(&k, &request_id, body.decision, body.answers).await?;
    Ok(Json(AnswerAccepted { request_id, decision: body.decision }))
}

/// Side-conversation capabilities of the live adapter behind this session.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/side-capabilities", tag = "sides",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, body = SideCapabilities), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn side_capabilities(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<Json<SideCapabilities>, ApiError> {
    Ok(Json(state.controller.side_capabilities(&key(&room, &id)?).await?))
}

/// Opens a side conversation: an ephemeral fork of the live session.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/sides", tag = "sides",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    request_body = OpenSideRequest,
    responses((status = 201, body = SideOpened), (status = 200, body = SideOpened, description = "Re-opened: the same side"),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn open_side(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Json(body): Json<OpenSideRequest>,
) -> Result<(StatusCode, Json<SideOpened>), ApiError> {
    key(&room, &id)?;
    let opened = state.controller.open_side(&room, &id, body.side_session_id.as_deref(), &body.request_id).await?;
    let status = if opened.reopened { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(SideOpened { session: opened.session, capabilities: opened.capabilities })))
}

/// Events of a side conversation with `seq > after` (its own sequence), replayed from memory while
/// the side lives. Canonical sessions' events are in the room log (`/v1/rooms/{roomId}/events`).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/events", tag = "sides",
    params(("roomId" = String, Path), ("sessionId" = String, Path), EventsQuery),
    responses((status = 200, body = EventList),
        (status = 410, description = "The requested history is no longer kept", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn side_events(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let k = key(&room, &id)?;
    let after = after_seq(q.after)?;
    let limit = q.limit.unwrap_or(DEFAULT_EVENT_LIMIT);
    if limit == 0 || limit > MAX_EVENT_LIMIT {
        return Err(ApiError::bad_request("invalid_query", format!("limit must be between 1 and {MAX_EVENT_LIMIT}")));
    }
    let page = state.controller.side_events(&k, after, limit as usize)?;
    if after < page.pruned_through {
        return Err(ApiError::new(
            StatusCode::GONE,
            "history_expired",
            format!("side events up to seq {} are no longer kept", page.pruned_through),
        )
        .with_details(serde_json::json!({ "oldestSeq": page.pruned_through + 1, "headSeq": page.head_seq })));
    }
    let mut body = String::from("{\"data\":[");
    for (i, (_, json)) in page.events.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(std::str::from_utf8(json).map_err(|e| ApiError::internal("side event", e))?);
    }
    body.push_str(&format!("],\"headSeq\":{}}}", page.head_seq));
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response())
}

/// The session's goal.
#[utoipa::path(get, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal", tag = "goals",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_goal(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
) -> Result<Json<Goal>, ApiError> {
    Ok(Json(state.controller.goal(&key(&room, &id)?)?))
}

async fn goal_control(
    state: &AppState,
    room: &str,
    id: &str,
    action: GoalAction,
    client_submit_id: Option<String>,
) -> Result<Option<Goal>, ApiError> {
    let k = key(room, id)?;
    Ok(state.controller.goal_control(&k, GoalControl { action, client_submit_id }).await?)
}

/// Sets the session's objective (a new goal operation; the same `clientSubmitId` again is the same
/// operation).
#[utoipa::path(put, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal", tag = "goals",
    params(("roomId" = String, Path), ("sessionId" = String, Path)),
    request_body = SetGoalRequest,
    responses((status = 200, body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn set_goal(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Json(body): Json<SetGoalRequest>,
) -> Result<Json<Goal>, ApiError> {
    if body.client_submit_id.trim().is_empty() {
        return Err(ApiError::bad_request("invalid_input", "clientSubmitId must not be empty"));
    }
    let action = GoalAction::Set { objective: body.objective, token_budget: body.token_budget };
    let goal = goal_control(&state, &room, &id, action, Some(body.client_submit_id)).await?;
    goal.map(Json).ok_or_else(|| ApiError::not_found("no_goal", "the session has no goal"))
}

/// Clears the session's goal.
#[utoipa::path(delete, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal", tag = "goals",
    params(("roomId" = String, Path), ("sessionId" = String, Path), GoalOperationQuery),
    responses((status = 204, description = "Cleared"), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn clear_goal(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Query(q): Query<GoalOperationQuery>,
) -> Result<StatusCode, ApiError> {
    goal_control(&state, &room, &id, GoalAction::Clear, q.client_submit_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pauses the session's goal.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal/pause", tag = "goals",
    params(("roomId" = String, Path), ("sessionId" = String, Path), GoalOperationQuery),
    responses((status = 200, body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn pause_goal(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Query(q): Query<GoalOperationQuery>,
) -> Result<Json<Goal>, ApiError> {
    let goal = goal_control(&state, &room, &id, GoalAction::Pause, q.client_submit_id).await?;
    goal.map(Json).ok_or_else(|| ApiError::not_found("no_goal", "the session has no goal"))
}

/// Resumes the session's goal.
#[utoipa::path(post, path = "/v1/rooms/{roomId}/sessions/{sessionId}/goal/resume", tag = "goals",
    params(("roomId" = String, Path), ("sessionId" = String, Path), GoalOperationQuery),
    responses((status = 200, body = Goal), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn resume_goal(
    State(state): State<AppState>,
    Path((room, id)): Path<(String, String)>,
    Query(q): Query<GoalOperationQuery>,
) -> Result<Json<Goal>, ApiError> {
    let goal = goal_control(&state, &room, &id, GoalAction::Resume, q.client_submit_id).await?;
    goal.map(Json).ok_or_else(|| ApiError::not_found("no_goal", "the session has no goal"))
}

/// The built-in console: one static page that asks for everything with the token it finds in
/// the URL fragment (which browsers never send to the server).
pub async fn console() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
                     frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
                ),
            ),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        ],
        include_str!("console.html"),
    )
}

/// Test-only (behind `--test-hooks`): a handler that panics, to prove the JSON 500 and that the
/// server keeps serving.
pub async fn test_panic() -> StatusCode {
    panic!("test hook: a handler panicked on purpose");
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", tag = "system", security(()), responses((status = 200, body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into() })
}

/// Readiness: 503 while draining.
#[utoipa::path(get, path = "/readyz", tag = "system", security(()),
    responses((status = 200, body = Health), (status = 503, body = Health)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    if state.is_draining() {
        (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "draining".into() }))
    } else {
        (StatusCode::OK, Json(Health { status: "ok".into() }))
    }
}

/// Prometheus metrics.
#[utoipa::path(get, path = "/metrics", tag = "system",
    responses((status = 200, description = "Prometheus text exposition format", content_type = "text/plain", body = String),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    crate::telemetry::render_metrics(&state)
}

/// This OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "system",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object),
        (status = "4XX", body = ErrorResponse)))]
pub async fn openapi_json() -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], crate::openapi::spec_json().clone())
        .into_response()
}
