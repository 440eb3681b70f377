//! Webhooks and their outbox, as the store keeps them. An outbox row is written in the same
//! transaction as the event it announces (an [`Outbound`] of an append), so an event is durable
//! if and only if its deliveries are; a host claims due rows for a while (`claimed_by`,
//! `claimed_until_ms`) so that of several hosts exactly one delivers each, and settles them.

use serde::{Deserialize, Serialize};

/// A webhook. Its secret is kept as given: the server signs with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookRecord {
    /// e.g. "wh_…", unique
    pub id: String,
    pub url: String,
    /// The event types it gets.
    pub events: Vec<String>,
    /// Room ids; empty: every room.
    pub rooms: Vec<String>,
    pub secret: String,
    pub enabled: bool,
    pub description: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// The creating token's name.
    pub created_by: String,
}

/// An event of an append to announce to a webhook (filled in by the writer once the event has
/// its seq).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbound {
    /// Its index among the append's events.
    pub event: usize,
    pub webhook_id: String,
    /// The webhook event type (`turn.completed`, `session.closed`, …).
    pub kind: String,
}

/// Where a delivery is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboxState {
    /// Waiting for its next attempt (or in one).
    Pending,
    Delivered,
    /// Its retry time ran out (or its webhook is gone).
    Failed,
}

impl OutboxState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "delivered" => Self::Delivered,
            "failed" => Self::Failed,
            _ => Self::Pending,
        }
    }
}

/// One attempt of a delivery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxAttempt {
    pub at_ms: i64,
    /// The receiver's HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why it failed (no answer, a refused address, the start of a non-2xx answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// Attempts a row keeps (the oldest are dropped; `attempts` counts them all).
pub const ATTEMPTS_KEPT: usize = 20;

/// One delivery: an event for a webhook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxItem {
    pub id: i64,
    pub webhook_id: String,
    /// The event's id (`test_…` for a test delivery): the receiver's idempotency key.
    pub event_id: String,
    pub kind: String,
    pub room_id: Option<String>,
    pub session_id: Option<String>,
    /// The event's JSON as the room WebSocket sends it (a test delivery's own payload).
    pub event_json: String,
    pub created_at_ms: i64,
    pub state: OutboxState,
    pub attempts: u32,
    pub next_at_ms: i64,
    /// Its latest attempts, oldest first.
    pub log: Vec<OutboxAttempt>,
}

/// A delivery to insert outside an append (a test delivery).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOutboxItem {
    pub webhook_id: String,
    pub event_id: String,
    pub kind: String,
    pub room_id: Option<String>,
    pub session_id: Option<String>,
    pub event_json: String,
    pub created_at_ms: i64,
}

/// How an attempt settles its delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settle {
    Delivered,
    /// Tried again at `next_at_ms`.
    Retry {
        next_at_ms: i64,
    },
    Failed,
}

/// What a host asks of the outbox: up to `limit` due deliveries of `webhook_id` (pending, their
/// time come, not claimed by anyone until after `now_ms`), claimed for `host` until `until_ms`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxClaim {
    pub webhook_id: String,
    pub host: String,
    pub now_ms: i64,
    pub until_ms: i64,
    pub limit: usize,
}

pub(super) fn log_json(log: &[OutboxAttempt]) -> Result<String, super::StoreError> {
    Ok(serde_json::to_string(log)?)
}

pub(super) fn parse_log(json: &str) -> Vec<OutboxAttempt> {
    serde_json::from_str(json).unwrap_or_default()
}

/// The log with `attempt` added, the oldest dropped beyond [`ATTEMPTS_KEPT`].
pub fn with_attempt(mut log: Vec<OutboxAttempt>, attempt: OutboxAttempt) -> Vec<OutboxAttempt> {
    log.push(attempt);
    let excess = log.len().saturating_sub(ATTEMPTS_KEPT);
    log.drain(..excess);
    log
}

/// The writes of webhooks and their outbox (the deliveries of events are written with the events,
/// by the append: see [`Outbound`]).
pub(super) enum WebhookOp {
    /// Inserts a webhook (`create`: refused, `false`, when its id exists) or replaces one (`false`
    /// when there is none).
    Put { hook: WebhookRecord, create: bool },
    /// Deletes a webhook and its deliveries; answered whether it existed.
    Delete { id: String },
    /// Inserts a delivery of no event (a test); answered with its id.
    OutboxInsert(NewOutboxItem),
    /// Claims due deliveries (see [`OutboxClaim`]).
    OutboxClaim(OutboxClaim),
    /// Records an attempt of a delivery `host` claimed, and where it leaves it; answered whether
    /// the claim was still `host`'s (else nothing changes).
    OutboxSettle { id: i64, host: String, attempt: OutboxAttempt, settle: Settle },
    /// Deletes settled deliveries made before `before_ms`; answered with how many.
    OutboxPrune { before_ms: i64 },
}

/// The reads of webhooks, as each engine answers them.
#[async_trait::async_trait]
pub(super) trait WebhookReads {
    /// Every webhook, by creation time, then id.
    async fn webhooks(&self) -> Result<Vec<WebhookRecord>, super::StoreError>;
    /// A webhook's deliveries, newest first: those with an id below `before`, at most `limit`.
    async fn deliveries(
        &self,
        webhook_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, super::StoreError>;
}
