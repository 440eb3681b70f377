//! Webhooks (`/v1/webhooks`, admin of every room): made, listed, changed, deleted, tested, and
//! their deliveries listed. Delivery itself is `crate::webhooks`.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use ensemble_core::event::EventBody;
use ensemble_core::limits::check_id;
use ensemble_runtime::ControllerError;
use ensemble_runtime::store::{OutboxAttempt, OutboxItem, OutboxState, StoreError, WebhookRecord};

use crate::access::Principal;
use crate::access::tokens::random_hex;
use crate::api::webhooks::{
    CreateWebhook, CreatedWebhook, DeliveriesQuery, Delivery, DeliveryAttempt, DeliveryList, DeliveryState,
    TestDelivery, UpdateWebhook, WebhookInfo, WebhookList, WebhookPath,
};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;
use crate::webhooks::Webhooks;

const MAX_URL_BYTES: usize = 2048;
const MAX_ROOMS: usize = 100;
const MAX_DESCRIPTION_CHARS: usize = 500;
const MIN_SECRET_BYTES: usize = 16;
const MAX_SECRET_BYTES: usize = 256;
const DEFAULT_DELIVERIES: usize = 50;
const MAX_DELIVERIES: usize = 500;

impl From<&WebhookRecord> for WebhookInfo {
    fn from(h: &WebhookRecord) -> Self {
        WebhookInfo {
            id: h.id.clone(),
            url: h.url.clone(),
            events: h.events.clone(),
            rooms: if h.rooms.is_empty() { vec!["*".to_owned()] } else { h.rooms.clone() },
            enabled: h.enabled,
            description: h.description.clone(),
            created_at_ms: h.created_at_ms,
            updated_at_ms: h.updated_at_ms,
            created_by: h.created_by.clone(),
        }
    }
}

impl From<OutboxAttempt> for DeliveryAttempt {
    fn from(a: OutboxAttempt) -> Self {
        DeliveryAttempt { at_ms: a.at_ms, status: a.status, error: a.error, duration_ms: a.duration_ms }
    }
}

impl From<OutboxItem> for Delivery {
    fn from(i: OutboxItem) -> Self {
        let state = match i.state {
            OutboxState::Pending => DeliveryState::Pending,
            OutboxState::Delivered => DeliveryState::Delivered,
            OutboxState::Failed => DeliveryState::Failed,
        };
        Delivery {
            id: i.id,
            event_id: i.event_id,
            kind: i.kind,
            room_id: i.room_id,
            session_id: i.session_id,
            created_at_ms: i.created_at_ms,
            next_attempt_at_ms: (i.state == OutboxState::Pending).then_some(i.next_at_ms),
            state,
            attempts: i.attempts,
            last_attempts: i.log.into_iter().map(DeliveryAttempt::from).collect(),
        }
    }
}

fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_input", message).with_details(serde_json::json!({ "field": field }))
}

fn store(e: StoreError) -> ApiError {
    ControllerError::from(e).into()
}

fn not_found(id: &str) -> ApiError {
    ApiError::not_found("webhook_not_found", format!("no webhook `{id}`"))
}

fn check_url(hooks: &Webhooks, url: &str) -> Result<String, ApiError> {
    if url.len() > MAX_URL_BYTES {
        return Err(invalid("url", format!("url is longer than {MAX_URL_BYTES} bytes")));
    }
    hooks.reach().check_url(url).map_err(|why| {
        ApiError::bad_request("webhook_url_refused", format!("{url}: {why}"))
            .with_details(serde_json::json!({ "field": "url" }))
    })?;
    Ok(url.to_owned())
}

fn check_events(events: &[String]) -> Result<Vec<String>, ApiError> {
    if events.is_empty() {
        return Err(invalid(
            "events",
            format!("events must name at least one of {}", EventBody::WEBHOOK_NAMES.join(", ")),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for e in events {
        if !EventBody::WEBHOOK_NAMES.contains(&e.as_str()) {
            return Err(invalid(
                "events",
                format!("`{e}` is not a webhook event; they are {}", EventBody::WEBHOOK_NAMES.join(", ")),
            ));
        }
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    Ok(out)
}

/// The rooms as stored: empty for every room.
fn check_rooms(rooms: Option<&[String]>) -> Result<Vec<String>, ApiError> {
    let Some(rooms) = rooms else { return Ok(Vec::new()) };
    if rooms.is_empty() || rooms.len() > MAX_ROOMS {
        return Err(invalid("rooms", format!("rooms must name 1–{MAX_ROOMS} room ids, or be [\"*\"]")));
    }
    if rooms.iter().any(|r| r == "*") {
        return Ok(Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    for room in rooms {
        if check_id("rooms", room).is_err() {
            return Err(invalid("rooms", format!("`{room}` is not a room id (1–128 of A-Z a-z 0-9 . _ ~ : -)")));
        }
        if !out.contains(room) {
            out.push(room.clone());
        }
    }
    Ok(out)
}

fn check_secret(secret: &str) -> Result<(), ApiError> {
    if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) || secret.chars().any(char::is_control) {
        return Err(invalid(
            "secret",
            format!("secret must be {MIN_SECRET_BYTES}–{MAX_SECRET_BYTES} bytes, no control characters"),
        ));
    }
    Ok(())
}

fn check_description(d: Option<String>) -> Result<Option<String>, ApiError> {
    match d {
        Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => {
            Err(invalid("description", format!("description is longer than {MAX_DESCRIPTION_CHARS} characters")))
        }
        Some(d) if d.trim().is_empty() => Ok(None),
        d => Ok(d),
    }
}

async fn find(hooks: &Webhooks, id: &str) -> Result<WebhookRecord, ApiError> {
    hooks.store().webhooks().await.map_err(store)?.into_iter().find(|h| h.id == id).ok_or_else(|| not_found(id))
}

/// Makes a webhook (admin of every room). Its signing secret is in this answer only.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))), request_body = CreateWebhook,
    responses((status = 201, description = "The webhook and its secret (shown once)", body = CreatedWebhook),
        (status = 400, description = "`invalid_input`, or `webhook_url_refused` (not http(s), or a private address)", body = ErrorResponse),
        (status = 409, description = "`too_many_webhooks`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn create_webhook(
    State(state): State<AppState>,
    Extension(by): Extension<Principal>,
    Json(req): Json<CreateWebhook>,
) -> Result<(StatusCode, Json<CreatedWebhook>), ApiError> {
    let hooks = &state.webhooks;
    let url = check_url(hooks, &req.url)?;
    let events = check_events(&req.events)?;
    let rooms = check_rooms(req.rooms.as_deref())?;
    let secret = match req.secret {
        Some(s) => {
            check_secret(&s)?;
            s
        }
        None => format!("whsec_{}", random_hex(24)?),
    };
    let description = check_description(req.description)?;
    let existing = hooks.store().webhooks().await.map_err(store)?.len();
    if existing >= hooks.config.max_webhooks {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "too_many_webhooks",
            format!("there are {existing} webhooks, the most --max-webhooks allows; delete one first"),
        )
        .with_details(serde_json::json!({ "max": hooks.config.max_webhooks })));
    }
    let now = ensemble_core::clock::unix_ms();
    let record = WebhookRecord {
        id: format!("wh_{}", random_hex(8)?),
        url,
        events,
        rooms,
        secret: secret.clone(),
        enabled: req.enabled.unwrap_or(true),
        description,
        created_at_ms: now,
        updated_at_ms: now,
        created_by: by.actor.name.clone(),
    };
    if !hooks.store().webhook_insert(record.clone()).await.map_err(store)? {
        return Err(ApiError::new(StatusCode::CONFLICT, "webhook_exists", "a webhook with that id exists; try again"));
    }
    hooks.changed_here().await.map_err(store)?;
    tracing::info!(webhook = %record.id, url = %record.url, by = %by.actor.name, "webhook created");
    Ok((StatusCode::CREATED, Json(CreatedWebhook { webhook: WebhookInfo::from(&record), secret })))
}

/// Every webhook, without secrets, oldest first.
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))),
    responses((status = 200, description = "The webhooks", body = WebhookList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_webhooks(State(state): State<AppState>) -> Result<Json<WebhookList>, ApiError> {
    let all = state.webhooks.store().webhooks().await.map_err(store)?;
    Ok(Json(WebhookList { data: all.iter().map(WebhookInfo::from).collect() }))
}

/// One webhook, without its secret.
#[utoipa::path(get, path = "/v1/webhooks/{webhookId}", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))), params(WebhookPath),
    responses((status = 200, description = "The webhook", body = WebhookInfo),
        (status = 404, description = "`webhook_not_found`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn get_webhook(
    State(state): State<AppState>,
    Path(p): Path<WebhookPath>,
) -> Result<Json<WebhookInfo>, ApiError> {
    Ok(Json(WebhookInfo::from(&find(&state.webhooks, &p.webhook_id).await?)))
}

/// Changes a webhook: its URL, events, rooms, secret, description, or whether it is enabled.
#[utoipa::path(patch, path = "/v1/webhooks/{webhookId}", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))), params(WebhookPath), request_body = UpdateWebhook,
    responses((status = 200, description = "The webhook as it is now", body = WebhookInfo),
        (status = 404, description = "`webhook_not_found`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn update_webhook(
    State(state): State<AppState>,
    Extension(by): Extension<Principal>,
    Path(p): Path<WebhookPath>,
    Json(req): Json<UpdateWebhook>,
) -> Result<Json<WebhookInfo>, ApiError> {
    let hooks = &state.webhooks;
    let mut record = find(hooks, &p.webhook_id).await?;
    if let Some(url) = &req.url {
        record.url = check_url(hooks, url)?;
    }
    if let Some(events) = &req.events {
        record.events = check_events(events)?;
    }
    if let Some(rooms) = &req.rooms {
        record.rooms = check_rooms(Some(rooms))?;
    }
    if let Some(secret) = req.secret {
        check_secret(&secret)?;
        record.secret = secret;
    }
    if req.description.is_some() {
        record.description = check_description(req.description)?;
    }
    if let Some(enabled) = req.enabled {
        record.enabled = enabled;
    }
    record.updated_at_ms = ensemble_core::clock::unix_ms();
    if !hooks.store().webhook_update(record.clone()).await.map_err(store)? {
        return Err(not_found(&p.webhook_id));
    }
    hooks.changed_here().await.map_err(store)?;
    tracing::info!(webhook = %record.id, by = %by.actor.name, "webhook changed");
    Ok(Json(WebhookInfo::from(&record)))
}

/// Deletes a webhook and its deliveries (pending ones are not made).
#[utoipa::path(delete, path = "/v1/webhooks/{webhookId}", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))), params(WebhookPath),
    responses((status = 204, description = "Deleted"),
        (status = 404, description = "`webhook_not_found`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn delete_webhook(
    State(state): State<AppState>,
    Extension(by): Extension<Principal>,
    Path(p): Path<WebhookPath>,
) -> Result<StatusCode, ApiError> {
    let hooks = &state.webhooks;
    if !hooks.store().webhook_delete(&p.webhook_id).await.map_err(store)? {
        return Err(not_found(&p.webhook_id));
    }
    hooks.changed_here().await.map_err(store)?;
    tracing::info!(webhook = %p.webhook_id, by = %by.actor.name, "webhook deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// Queues a test delivery (type `webhook.test`), signed and retried like any other; see it in
/// the deliveries.
#[utoipa::path(post, path = "/v1/webhooks/{webhookId}/test", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))), params(WebhookPath),
    responses((status = 202, description = "Queued", body = TestDelivery),
        (status = 404, description = "`webhook_not_found`", body = ErrorResponse),
        (status = 409, description = "`webhook_disabled`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn test_webhook(
    State(state): State<AppState>,
    Path(p): Path<WebhookPath>,
) -> Result<(StatusCode, Json<TestDelivery>), ApiError> {
    let hooks = &state.webhooks;
    let record = find(hooks, &p.webhook_id).await?;
    if !record.enabled {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "webhook_disabled",
            "the webhook is disabled; enable it first",
        ));
    }
    let (delivery_id, event_id) = hooks.test(&record, &random_hex(12)?).await.map_err(store)?;
    Ok((StatusCode::ACCEPTED, Json(TestDelivery { delivery_id, event_id })))
}

/// A webhook's deliveries, newest first, with their latest attempts and outcomes. Settled ones
/// are kept `--webhook-keep-secs`.
#[utoipa::path(get, path = "/v1/webhooks/{webhookId}/deliveries", tag = "webhooks",
    extensions(("x-ensemble-access" = json!({"role": "admin", "allRooms": true}))), params(WebhookPath, DeliveriesQuery),
    responses((status = 200, description = "A page of deliveries", body = DeliveryList),
        (status = 404, description = "`webhook_not_found`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_deliveries(
    State(state): State<AppState>,
    Path(p): Path<WebhookPath>,
    Query(q): Query<DeliveriesQuery>,
) -> Result<Json<DeliveryList>, ApiError> {
    let hooks = &state.webhooks;
    find(hooks, &p.webhook_id).await?;
    let limit = q.limit.unwrap_or(DEFAULT_DELIVERIES);
    if !(1..=MAX_DELIVERIES).contains(&limit) {
        return Err(invalid("limit", format!("limit must be 1–{MAX_DELIVERIES}")));
    }
    let items = hooks.store().deliveries(&p.webhook_id, q.before, limit + 1).await.map_err(store)?;
    let more = items.len() > limit;
    let data: Vec<Delivery> = items.into_iter().take(limit).map(Delivery::from).collect();
    let next_before = if more { data.last().map(|d| d.id) } else { None };
    Ok(Json(DeliveryList { data, next_before }))
}
