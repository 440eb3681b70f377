//! Access tokens and the audit trail in SQLite (a token's rooms as a JSON array). An audit
//! record's seq comes from the `audit_head` row, moved in the appending transaction (migration 9).

use rusqlite::{Connection, Row, params};

use async_trait::async_trait;

use super::{Sqlite, Write};
use crate::store::access::{AccessOp, AccessReads, AuditRecord, TokenRecord, token_conflict};
use crate::store::types::StoreError;
use crate::store::types::Value;

impl Write for AccessOp {
    fn write(&self, conn: &Connection) -> Result<Value, StoreError> {
        Ok(match self {
            AccessOp::TokenInsert(token) => {
                insert_token(conn, token)?;
                Value::Unit
            }
            AccessOp::TokenRevoke { id, at_ms } => Value::Bool(revoke_token(conn, id, *at_ms)?),
            AccessOp::TokenTouch(used) => {
                touch_tokens(conn, used)?;
                Value::Unit
            }
            AccessOp::AuditAppend(records) => Value::Count(append_audit(conn, records)?),
            AccessOp::AuditPrune { before_ms } => Value::Count(prune_audit(conn, *before_ms)?),
            AccessOp::TokenPrune { before_ms } => Value::Count(prune_tokens(conn, *before_ms)?),
        })
    }

    fn written_hint(&self) -> usize {
        match self {
            AccessOp::AuditAppend(records) => (records.len() * 256).max(1024),
            _ => 1024,
        }
    }
}

#[async_trait]
impl AccessReads for Sqlite {
    async fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.read(tokens).await
    }

    async fn audit_after(&self, after: u64, limit: usize) -> Result<Vec<AuditRecord>, StoreError> {
        self.read(move |conn| audit_after(conn, after, limit)).await
    }
}

/// Inserts a token, refused with a conflict when its id or secret hash exists.
pub(super) fn insert_token(conn: &Connection, t: &TokenRecord) -> Result<(), StoreError> {
    let rooms = serde_json::to_string(&t.rooms)?;
    // Rare: not cached, so the writer's hot statements stay in its cache.
    let n = conn.execute(
        "INSERT INTO access_tokens (id, name, role, rooms, secret_hash, created_at_ms, created_by,
                expires_at_ms, revoked_at_ms, last_used_at_ms, created_by_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT DO NOTHING",
        params![
            t.id,
            t.name,
            t.role,
            rooms,
            t.secret_hash,
            t.created_at_ms,
            t.created_by,
            t.expires_at_ms,
            t.revoked_at_ms,
            t.last_used_at_ms,
            t.created_by_id
        ],
    )?;
    if n == 0 {
        let id_taken = conn.prepare("SELECT 1 FROM access_tokens WHERE id = ?1")?.exists(params![t.id])?;
        return Err(token_conflict(t, id_taken));
    }
    Ok(())
}

/// Whether the token existed and was not revoked yet (it is now). The tokens it made, and the ones
/// those made, are revoked with it (those not revoked yet, at the same time).
fn revoke_token(conn: &Connection, id: &str, at_ms: i64) -> Result<bool, StoreError> {
    let n = conn.execute(
        "UPDATE access_tokens SET revoked_at_ms = ?2 WHERE id = ?1 AND revoked_at_ms IS NULL",
        params![id, at_ms],
    )?;
    // UNION, not UNION ALL: a cycle (which the server never makes) still ends.
    conn.execute(
        "WITH RECURSIVE made(id) AS (
            SELECT id FROM access_tokens WHERE created_by_id = ?1
            UNION SELECT t.id FROM access_tokens t JOIN made ON t.created_by_id = made.id)
         UPDATE access_tokens SET revoked_at_ms = ?2
         WHERE id IN (SELECT id FROM made) AND id <> ?1 AND revoked_at_ms IS NULL",
        params![id, at_ms],
    )?;
    Ok(n == 1)
}

/// Moves each token's last use forward (never back); unknown ids match no row.
fn touch_tokens(conn: &Connection, used: &[(String, i64)]) -> Result<(), StoreError> {
    let mut touch = conn.prepare_cached(
        "UPDATE access_tokens SET last_used_at_ms = ?2
         WHERE id = ?1 AND (last_used_at_ms IS NULL OR last_used_at_ms < ?2)",
    )?;
    for (id, at) in used {
        touch.execute(params![id, at])?;
    }
    Ok(())
}

/// Appends the records with the next seqs, in order; the last seq assigned (the trail's head when
/// there are none).
fn append_audit(conn: &Connection, records: &[AuditRecord]) -> Result<u64, StoreError> {
    if records.is_empty() {
        let head: i64 = conn.prepare_cached("SELECT last_seq FROM audit_head")?.query_row([], |r| r.get(0))?;
        return Ok(head as u64);
    }
    let n = records.len() as i64;
    let last: i64 = conn
        .prepare_cached("UPDATE audit_head SET last_seq = last_seq + ?1 RETURNING last_seq")?
        .query_row(params![n], |r| r.get(0))?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO audit (seq, at_ms, token_id, actor_name, method, route, room_id, session_id, status, code)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for (r, seq) in records.iter().zip(last - n + 1..) {
        insert.execute(params![
            seq,
            r.at_ms,
            r.token_id,
            r.actor_name,
            r.method,
            r.route,
            r.room_id,
            r.session_id,
            r.status,
            r.code
        ])?;
    }
    Ok(last as u64)
}

/// Deletes the records older than `before_ms`; how many.
fn prune_audit(conn: &Connection, before_ms: i64) -> Result<u64, StoreError> {
    // Records come in nearly in time order: the cut is the first record (by seq) not older than
    // `before_ms`, found walking the seq order from the oldest; a record older than it with a
    // higher seq (a clock step back) waits for a later prune.
    Ok(conn.execute(
        "DELETE FROM audit WHERE seq < COALESCE(
            (SELECT seq FROM audit WHERE at_ms >= ?1 ORDER BY seq LIMIT 1),
            (SELECT last_seq + 1 FROM audit_head))",
        params![before_ms],
    )? as u64)
}

/// Deletes the tokens revoked or expired before `before_ms`.
fn prune_tokens(conn: &Connection, before_ms: i64) -> Result<u64, StoreError> {
    Ok(conn.execute("DELETE FROM access_tokens WHERE revoked_at_ms < ?1 OR expires_at_ms < ?1", params![before_ms])?
        as u64)
}

/// Every token, by creation time and then id (byte order, as PostgreSQL's `COLLATE "C"`).
pub(super) fn tokens(conn: &Connection) -> Result<Vec<TokenRecord>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, name, role, rooms, secret_hash, created_at_ms, created_by, expires_at_ms, revoked_at_ms,
                last_used_at_ms, created_by_id
         FROM access_tokens ORDER BY created_at_ms, id",
    )?;
    let rows = stmt.query_map([], |row| Ok((token_of(row)?, row.get::<_, String>(3)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (mut token, rooms) = row?;
        token.rooms = serde_json::from_str(&rooms)?;
        out.push(token);
    }
    Ok(out)
}

/// A token's row, its rooms still to be parsed (column 3).
fn token_of(row: &Row<'_>) -> rusqlite::Result<TokenRecord> {
    Ok(TokenRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        role: row.get(2)?,
        rooms: Vec::new(),
        secret_hash: row.get(4)?,
        created_at_ms: row.get(5)?,
        created_by: row.get(6)?,
        expires_at_ms: row.get(7)?,
        revoked_at_ms: row.get(8)?,
        last_used_at_ms: row.get(9)?,
        created_by_id: row.get(10)?,
    })
}

/// Records with `seq > after`, ascending, at most `limit`.
fn audit_after(conn: &Connection, after: u64, limit: usize) -> Result<Vec<AuditRecord>, StoreError> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at_ms, token_id, actor_name, method, route, room_id, session_id, status, code
         FROM audit WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit], |row| {
        Ok(AuditRecord {
            seq: row.get::<_, i64>(0)? as u64,
            at_ms: row.get(1)?,
            token_id: row.get(2)?,
            actor_name: row.get(3)?,
            method: row.get(4)?,
            route: row.get(5)?,
            room_id: row.get(6)?,
            session_id: row.get(7)?,
            status: row.get(8)?,
            code: row.get(9)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
