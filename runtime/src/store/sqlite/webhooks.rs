//! Webhooks and their outbox in SQLite (a webhook's events and rooms as JSON arrays, a delivery's
//! latest attempts as a JSON array). Migration 10.

use rusqlite::{Connection, OptionalExtension, Row, params};

use async_trait::async_trait;

use super::{Sqlite, Write};
use crate::store::types::StoreError;
use crate::store::types::Value;
use crate::store::webhooks::{
    NewOutboxItem, OutboxAttempt, OutboxClaim, OutboxItem, OutboxState, Settle, WebhookOp, WebhookReads, WebhookRecord,
    log_json, parse_log, with_attempt,
};

impl Write for WebhookOp {
    fn write(&self, conn: &Connection) -> Result<Value, StoreError> {
        Ok(match self {
            WebhookOp::Put { hook, create } => Value::Bool(put_webhook(conn, hook, *create)?),
            WebhookOp::Delete { id } => Value::Bool(delete_webhook(conn, id)?),
            WebhookOp::OutboxInsert(item) => Value::Count(insert_item(conn, item)? as u64),
            WebhookOp::OutboxClaim(c) => Value::Outbox(claim(conn, c)?),
            WebhookOp::OutboxSettle { id, host, attempt, settle: how } => {
                Value::Bool(settle(conn, *id, host, attempt, how)?)
            }
            WebhookOp::OutboxPrune { before_ms } => Value::Count(prune(conn, *before_ms)?),
        })
    }
}

#[async_trait]
impl WebhookReads for Sqlite {
    async fn webhooks(&self) -> Result<Vec<WebhookRecord>, StoreError> {
        self.read(webhooks).await
    }

    async fn deliveries(
        &self,
        webhook_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let id = webhook_id.to_owned();
        self.read(move |conn| deliveries(conn, &id, before, limit)).await
    }
}

const HOOK_COLUMNS: &str =
    "id, url, events, rooms, secret, enabled, description, created_at_ms, updated_at_ms, created_by";
const ITEM_COLUMNS: &str =
    "id, webhook_id, event_id, kind, room_id, session_id, event_json, created_at_ms, state, attempts, next_at_ms, log";

fn hook(r: &Row<'_>) -> rusqlite::Result<(WebhookRecord, String, String)> {
    Ok((
        WebhookRecord {
            id: r.get(0)?,
            url: r.get(1)?,
            events: Vec::new(),
            rooms: Vec::new(),
            secret: r.get(4)?,
            enabled: r.get::<_, i64>(5)? != 0,
            description: r.get(6)?,
            created_at_ms: r.get(7)?,
            updated_at_ms: r.get(8)?,
            created_by: r.get(9)?,
        },
        r.get(2)?,
        r.get(3)?,
    ))
}

fn item(r: &Row<'_>) -> rusqlite::Result<OutboxItem> {
    Ok(OutboxItem {
        id: r.get(0)?,
        webhook_id: r.get(1)?,
        event_id: r.get(2)?,
        kind: r.get(3)?,
        room_id: r.get(4)?,
        session_id: r.get(5)?,
        event_json: r.get(6)?,
        created_at_ms: r.get(7)?,
        state: OutboxState::parse(&r.get::<_, String>(8)?),
        attempts: r.get::<_, i64>(9)? as u32,
        next_at_ms: r.get(10)?,
        log: parse_log(&r.get::<_, String>(11)?),
    })
}

/// Inserts (`create`) or replaces a webhook: whether it was written.
fn put_webhook(conn: &Connection, h: &WebhookRecord, create: bool) -> Result<bool, StoreError> {
    let (events, rooms) = (serde_json::to_string(&h.events)?, serde_json::to_string(&h.rooms)?);
    let args = params![
        h.id,
        h.url,
        events,
        rooms,
        h.secret,
        h.enabled as i64,
        h.description,
        h.created_at_ms,
        h.updated_at_ms,
        h.created_by
    ];
    let n = if create {
        conn.execute(
            &format!("INSERT INTO webhooks ({HOOK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING"),
            args,
        )?
    } else {
        conn.execute(
            "UPDATE webhooks SET url = ?2, events = ?3, rooms = ?4, secret = ?5, enabled = ?6, description = ?7,
                    created_at_ms = ?8, updated_at_ms = ?9, created_by = ?10 WHERE id = ?1",
            args,
        )?
    };
    Ok(n == 1)
}

/// Deletes a webhook and its deliveries: whether it existed.
fn delete_webhook(conn: &Connection, id: &str) -> Result<bool, StoreError> {
    conn.execute("DELETE FROM webhook_outbox WHERE webhook_id = ?1", params![id])?;
    Ok(conn.execute("DELETE FROM webhooks WHERE id = ?1", params![id])? == 1)
}

fn webhooks(conn: &Connection) -> Result<Vec<WebhookRecord>, StoreError> {
    let mut stmt = conn.prepare(&format!("SELECT {HOOK_COLUMNS} FROM webhooks ORDER BY created_at_ms, id"))?;
    let rows = stmt.query_map([], hook)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(mut h, events, rooms)| {
            h.events = serde_json::from_str(&events)?;
            h.rooms = serde_json::from_str(&rooms)?;
            Ok(h)
        })
        .collect()
}

/// Inserts a delivery (of an event just appended, or a test); returns its id. A repeat of one
/// (same webhook and event) is not inserted again.
pub(super) fn insert_item(conn: &Connection, i: &NewOutboxItem) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO webhook_outbox (webhook_id, event_id, kind, room_id, session_id, event_json, created_at_ms,
                state, attempts, next_at_ms, claimed_by, claimed_until_ms, log)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', 0, ?7, '', 0, '[]')
         ON CONFLICT (webhook_id, event_id) DO NOTHING",
    )?
    .execute(params![i.webhook_id, i.event_id, i.kind, i.room_id, i.session_id, i.event_json, i.created_at_ms])?;
    Ok(conn.last_insert_rowid())
}

/// Claims due deliveries of one webhook, oldest first.
fn claim(conn: &Connection, c: &OutboxClaim) -> Result<Vec<OutboxItem>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "UPDATE webhook_outbox SET claimed_by = ?2, claimed_until_ms = ?4
         WHERE id IN (SELECT id FROM webhook_outbox
                      WHERE webhook_id = ?1 AND state = 'pending' AND next_at_ms <= ?3 AND claimed_until_ms <= ?3
                      ORDER BY id LIMIT ?5)
         RETURNING {ITEM_COLUMNS}"
    ))?;
    let mut items = stmt
        .query_map(params![c.webhook_id, c.host, c.now_ms, c.until_ms, c.limit as i64], item)?
        .collect::<Result<Vec<_>, _>>()?;
    items.sort_by_key(|i| i.id);
    Ok(items)
}

/// Records an attempt of a delivery `host` holds: whether it still held it.
fn settle(
    conn: &Connection,
    id: i64,
    host: &str,
    attempt: &OutboxAttempt,
    settle: &Settle,
) -> Result<bool, StoreError> {
    let Some(log) = conn
        .prepare_cached("SELECT log FROM webhook_outbox WHERE id = ?1 AND claimed_by = ?2 AND state = 'pending'")?
        .query_row(params![id, host], |r| r.get::<_, String>(0))
        .optional()?
    else {
        return Ok(false);
    };
    let log = log_json(&with_attempt(parse_log(&log), attempt.clone()))?;
    let (state, next) = match settle {
        Settle::Delivered => (OutboxState::Delivered, None),
        Settle::Retry { next_at_ms } => (OutboxState::Pending, Some(*next_at_ms)),
        Settle::Failed => (OutboxState::Failed, None),
    };
    conn.prepare_cached(
        "UPDATE webhook_outbox SET state = ?2, attempts = attempts + 1, next_at_ms = COALESCE(?3, next_at_ms),
                claimed_by = '', claimed_until_ms = 0, log = ?4 WHERE id = ?1",
    )?
    .execute(params![id, state.as_str(), next, log])?;
    Ok(true)
}

/// Deletes settled deliveries made before `before_ms`.
fn prune(conn: &Connection, before_ms: i64) -> Result<u64, StoreError> {
    Ok(conn.execute("DELETE FROM webhook_outbox WHERE state <> 'pending' AND created_at_ms < ?1", params![before_ms])?
        as u64)
}

/// A webhook's deliveries, newest first.
fn deliveries(
    conn: &Connection,
    webhook_id: &str,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<OutboxItem>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {ITEM_COLUMNS} FROM webhook_outbox WHERE webhook_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3"
    ))?;
    let items = stmt
        .query_map(params![webhook_id, before.unwrap_or(i64::MAX), limit as i64], item)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(items)
}
