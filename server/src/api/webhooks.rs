//! Wire types: Webhooks and their deliveries.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/webhooks`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWebhook {
    /// Where deliveries are POSTed (http or https; a public address unless the server runs with
    /// `--webhook-allow-private`).
    pub url: String,
    /// The event types it gets (listed in the OpenAPI document from the table of event types:
    /// `openapi/finish.rs`).
    pub events: Vec<String>,
    /// The rooms whose events it gets; omitted or `["*"]`: every room.
    #[serde(default)]
    pub rooms: Option<Vec<String>>,
    /// The signing secret (16–256 bytes); omitted: one is made, and shown in this answer only.
    #[serde(default)]
    pub secret: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Default true.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `PATCH /v1/webhooks/{webhookId}`: what is given is changed.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateWebhook {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub events: Option<Vec<String>>,
    #[serde(default)]
    pub rooms: Option<Vec<String>>,
    /// A new signing secret (deliveries from now on are signed with it).
    #[serde(default)]
    pub secret: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// False pauses it: no deliveries are made for events while it is disabled.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// A webhook, without its secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookInfo {
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    /// `["*"]`: every room.
    pub rooms: Vec<String>,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// The name of the token that made it.
    pub created_by: String,
}

/// A new webhook and its signing secret, which is shown this once.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWebhook {
    pub webhook: WebhookInfo,
    pub secret: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    pub data: Vec<WebhookInfo>,
}

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    pub at_ms: i64,
    /// The receiver's HTTP status, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why it did not count as delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// Where a delivery is.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Waiting for its next attempt (or in one).
    Pending,
    Delivered,
    /// Given up (`--webhook-retry-secs` after its event).
    Failed,
}

/// One event's delivery to a webhook.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub id: i64,
    /// The event's id, sent as `Ensemble-Event-Id`: the receiver's idempotency key.
    pub event_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub room_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub created_at_ms: i64,
    pub state: DeliveryState,
    /// Attempts made.
    pub attempts: u32,
    /// When a pending delivery is tried next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at_ms: Option<i64>,
    /// The latest attempts (up to 20), oldest first.
    pub last_attempts: Vec<DeliveryAttempt>,
}

/// A page of deliveries, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryList {
    pub data: Vec<Delivery>,
    /// Pass as `before` for the next (older) page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
}

/// A test delivery, queued.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestDelivery {
    pub delivery_id: i64,
    pub event_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct WebhookPath {
    /// Webhook id
    pub webhook_id: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Deliveries with an id below this one (the previous page's `nextBefore`).
    #[serde(default)]
    pub before: Option<i64>,
    /// At most this many (1–500, default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}
