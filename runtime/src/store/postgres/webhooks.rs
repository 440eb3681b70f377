//! Webhooks and their outbox in PostgreSQL (a webhook's events and rooms as `TEXT[]`, a
//! delivery's latest attempts as JSON text). Hosts claim due deliveries with `FOR UPDATE SKIP
//! LOCKED`, so two hosts never claim the same one (migration 5).

use tokio_postgres::{GenericClient, Row, Transaction};

use async_trait::async_trait;

use super::{Postgres, Write, classify};
use crate::store::types::StoreError;
use crate::store::types::Value;
use crate::store::webhooks::{
    NewOutboxItem, OutboxAttempt, OutboxClaim, OutboxItem, OutboxState, Settle, WebhookOp, WebhookReads, WebhookRecord,
    log_json, parse_log, with_attempt,
};

const ITEM_COLUMNS: &str =
    "id, webhook_id, event_id, kind, room_id, session_id, event_json, created_at_ms, state, attempts, next_at_ms, log";

#[async_trait]
impl Write for WebhookOp {
    async fn write(&self, tx: &Transaction<'_>, _: &super::Stmts) -> Result<Value, StoreError> {
        Ok(match self {
            WebhookOp::Put { hook, create } => Value::Bool(put_webhook(tx, hook, *create).await?),
            WebhookOp::Delete { id } => Value::Bool(delete_webhook(tx, id).await?),
            WebhookOp::OutboxInsert(item) => Value::Count(insert_items(tx, std::slice::from_ref(item)).await? as u64),
            WebhookOp::OutboxClaim(c) => Value::Outbox(claim(tx, c).await?),
            WebhookOp::OutboxSettle { id, host, attempt, settle: how } => {
                Value::Bool(settle(tx, *id, host, attempt, how).await?)
            }
            WebhookOp::OutboxPrune { before_ms } => Value::Count(prune(tx, *before_ms).await?),
        })
    }
}

#[async_trait]
impl WebhookReads for Postgres {
    async fn webhooks(&self) -> Result<Vec<WebhookRecord>, StoreError> {
        let c = self.client().await?;
        let hooks = webhooks(&c).await;
        self.give_back(c);
        hooks
    }

    async fn deliveries(
        &self,
        webhook_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let c = self.client().await?;
        let page = deliveries(&c, webhook_id, before, limit).await;
        self.give_back(c);
        page
    }
}

fn hook(r: &Row) -> WebhookRecord {
    WebhookRecord {
        id: r.get(0),
        url: r.get(1),
        events: r.get(2),
        rooms: r.get(3),
        secret: r.get(4),
        enabled: r.get(5),
        description: r.get(6),
        created_at_ms: r.get(7),
        updated_at_ms: r.get(8),
        created_by: r.get(9),
    }
}

fn item(r: &Row) -> OutboxItem {
    OutboxItem {
        id: r.get(0),
        webhook_id: r.get(1),
        event_id: r.get(2),
        kind: r.get(3),
        room_id: r.get(4),
        session_id: r.get(5),
        event_json: r.get(6),
        created_at_ms: r.get(7),
        state: OutboxState::parse(r.get(8)),
        attempts: r.get::<_, i32>(9) as u32,
        next_at_ms: r.get(10),
        log: parse_log(r.get(11)),
    }
}

async fn put_webhook(tx: &Transaction<'_>, h: &WebhookRecord, create: bool) -> Result<bool, StoreError> {
    let sql = if create {
        "INSERT INTO webhooks (id, url, events, rooms, secret, enabled, description, created_at_ms, updated_at_ms,
                created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING"
    } else {
        "UPDATE webhooks SET url = $2, events = $3, rooms = $4, secret = $5, enabled = $6, description = $7,
                created_at_ms = $8, updated_at_ms = $9, created_by = $10 WHERE id = $1"
    };
    let n = tx
        .execute(
            sql,
            &[
                &h.id,
                &h.url,
                &h.events,
                &h.rooms,
                &h.secret,
                &h.enabled,
                &h.description,
                &h.created_at_ms,
                &h.updated_at_ms,
                &h.created_by,
            ],
        )
        .await
        .map_err(classify)?;
    Ok(n == 1)
}

async fn delete_webhook(tx: &Transaction<'_>, id: &str) -> Result<bool, StoreError> {
    tx.execute("DELETE FROM webhook_outbox WHERE webhook_id = $1", &[&id]).await.map_err(classify)?;
    Ok(tx.execute("DELETE FROM webhooks WHERE id = $1", &[&id]).await.map_err(classify)? == 1)
}

async fn webhooks(c: &impl GenericClient) -> Result<Vec<WebhookRecord>, StoreError> {
    let rows = c
        .query(
            "SELECT id, url, events, rooms, secret, enabled, description, created_at_ms, updated_at_ms, created_by
             FROM webhooks ORDER BY created_at_ms, id",
            &[],
        )
        .await
        .map_err(classify)?;
    Ok(rows.iter().map(hook).collect())
}

/// Inserts deliveries; a repeat (same webhook and event) is not inserted again. Returns the id of
/// the last one inserted (0 when none was).
pub(super) async fn insert_items(tx: &Transaction<'_>, items: &[NewOutboxItem]) -> Result<i64, StoreError> {
    let mut last = 0;
    for i in items {
        let row = tx
            .query_opt(
                "INSERT INTO webhook_outbox (webhook_id, event_id, kind, room_id, session_id, event_json, created_at_ms,
                        state, attempts, next_at_ms, claimed_by, claimed_until_ms, log)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $7, '', 0, '[]')
                 ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id",
                &[&i.webhook_id, &i.event_id, &i.kind, &i.room_id, &i.session_id, &i.event_json, &i.created_at_ms],
            )
            .await
            .map_err(classify)?;
        if let Some(row) = row {
            last = row.get(0);
        }
    }
    Ok(last)
}

async fn claim(tx: &Transaction<'_>, c: &OutboxClaim) -> Result<Vec<OutboxItem>, StoreError> {
    let rows = tx
        .query(
            &format!(
                "UPDATE webhook_outbox SET claimed_by = $2, claimed_until_ms = $4
                 WHERE id IN (SELECT id FROM webhook_outbox
                              WHERE webhook_id = $1 AND state = 'pending' AND next_at_ms <= $3
                                AND claimed_until_ms <= $3
                              ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED)
                 RETURNING {ITEM_COLUMNS}"
            ),
            &[&c.webhook_id, &c.host, &c.now_ms, &c.until_ms, &(c.limit as i64)],
        )
        .await
        .map_err(classify)?;
    let mut items: Vec<OutboxItem> = rows.iter().map(item).collect();
    items.sort_by_key(|i| i.id);
    Ok(items)
}

async fn settle(
    tx: &Transaction<'_>,
    id: i64,
    host: &str,
    attempt: &OutboxAttempt,
    settle: &Settle,
) -> Result<bool, StoreError> {
    let Some(row) = tx
        .query_opt(
            "SELECT log FROM webhook_outbox WHERE id = $1 AND claimed_by = $2 AND state = 'pending' FOR UPDATE",
            &[&id, &host],
        )
        .await
        .map_err(classify)?
    else {
        return Ok(false);
    };
    let log = log_json(&with_attempt(parse_log(row.get(0)), attempt.clone()))?;
    let (state, next): (OutboxState, Option<i64>) = match settle {
        Settle::Delivered => (OutboxState::Delivered, None),
        Settle::Retry { next_at_ms } => (OutboxState::Pending, Some(*next_at_ms)),
        Settle::Failed => (OutboxState::Failed, None),
    };
    tx.execute(
        "UPDATE webhook_outbox SET state = $2, attempts = attempts + 1, next_at_ms = COALESCE($3, next_at_ms),
                claimed_by = '', claimed_until_ms = 0, log = $4 WHERE id = $1",
        &[&id, &state.as_str(), &next, &log],
    )
    .await
    .map_err(classify)?;
    Ok(true)
}

async fn prune(tx: &Transaction<'_>, before_ms: i64) -> Result<u64, StoreError> {
    tx.execute("DELETE FROM webhook_outbox WHERE state <> 'pending' AND created_at_ms < $1", &[&before_ms])
        .await
        .map_err(classify)
}

async fn deliveries(
    c: &impl GenericClient,
    webhook_id: &str,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<OutboxItem>, StoreError> {
    let rows = c
        .query(
            &format!(
                "SELECT {ITEM_COLUMNS} FROM webhook_outbox WHERE webhook_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"
            ),
            &[&webhook_id, &before.unwrap_or(i64::MAX), &(limit as i64)],
        )
        .await
        .map_err(classify)?;
    Ok(rows.iter().map(item).collect())
}
