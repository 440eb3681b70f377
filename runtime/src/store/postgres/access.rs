//! Access tokens and the audit trail in PostgreSQL (a token's rooms as a `TEXT[]`). An audit
//! record's seq comes from the `audit_head` row, moved in the appending transaction (migration 4).

use tokio_postgres::{Client, GenericClient, Row, Statement, Transaction};

use async_trait::async_trait;

use super::{Postgres, Write, classify};
use crate::store::access::{AccessOp, AccessReads, AuditRecord, TokenRecord, token_conflict};
use crate::store::types::StoreError;
use crate::store::types::Value;

#[async_trait]
impl Write for AccessOp {
    async fn write(&self, tx: &Transaction<'_>, stmts: &super::Stmts) -> Result<Value, StoreError> {
        Ok(match self {
            AccessOp::TokenInsert(token) => {
                insert_token(tx, token).await?;
                Value::Unit
            }
            AccessOp::TokenRevoke { id, at_ms } => Value::Bool(revoke_token(tx, id, *at_ms).await?),
            AccessOp::TokenTouch(used) => {
                touch_tokens(tx, &stmts.access, used).await?;
                Value::Unit
            }
            AccessOp::AuditAppend(records) => Value::Count(append_audit(tx, &stmts.access, records).await?),
            AccessOp::AuditPrune { before_ms } => Value::Count(prune_audit(tx, *before_ms).await?),
            AccessOp::TokenPrune { before_ms } => Value::Count(prune_tokens(tx, *before_ms).await?),
        })
    }
}

#[async_trait]
impl AccessReads for Postgres {
    async fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        let c = self.client().await?;
        let t = tokens(&c).await;
        self.give_back(c);
        t
    }

    async fn audit_after(&self, after: u64, limit: usize) -> Result<Vec<AuditRecord>, StoreError> {
        let c = self.client().await?;
        let page = audit_after(&c, after, limit).await;
        self.give_back(c);
        page
    }
}

/// The writer's statements for what every request writes (its audit record, its token's last
/// use), prepared once per connection.
pub(super) struct Stmts {
    bump_audit: Statement,
    insert_audit: Statement,
    lock_tokens: Statement,
    touch_tokens: Statement,
}

impl Stmts {
    pub(super) async fn prepare(c: &Client) -> Result<Self, StoreError> {
        Ok(Self {
            // Locks the row until the commit: several hosts' appends commit in seq order.
            bump_audit: c
                .prepare("UPDATE audit_head SET last_seq = last_seq + $1 RETURNING last_seq")
                .await
                .map_err(classify)?,
            insert_audit: c
                .prepare(
                    "INSERT INTO audit (seq, at_ms, token_id, actor_name, method, route, room_id, session_id,
                            status, code)
                     SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                            $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::INT[], $10::TEXT[])",
                )
                .await
                .map_err(classify)?,
            // In id order: two hosts touching the same tokens lock them in the same order, so they
            // wait for each other instead of deadlocking.
            lock_tokens: c
                .prepare("SELECT 1 FROM access_tokens WHERE id = ANY($1) ORDER BY id FOR UPDATE")
                .await
                .map_err(classify)?,
            // One row per token (its latest use among the batch): an `UPDATE … FROM` with a row
            // matched twice would apply either.
            touch_tokens: c
                .prepare(
                    "UPDATE access_tokens a SET last_used_at_ms = t.at
                     FROM (SELECT id, MAX(at) AS at FROM UNNEST($1::TEXT[], $2::BIGINT[]) AS u(id, at)
                           GROUP BY id) t
                     WHERE a.id = t.id AND (a.last_used_at_ms IS NULL OR a.last_used_at_ms < t.at)",
                )
                .await
                .map_err(classify)?,
        })
    }
}

/// Inserts a token, refused with a conflict when its id or secret hash exists (a host racing to
/// insert the same one waits for the other's commit, then finds it).
async fn insert_token(tx: &Transaction<'_>, t: &TokenRecord) -> Result<(), StoreError> {
    let n = tx
        .execute(
            "INSERT INTO access_tokens (id, name, role, rooms, secret_hash, created_at_ms, created_by,
                    expires_at_ms, revoked_at_ms, last_used_at_ms, created_by_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
            &[
                &t.id,
                &t.name,
                &t.role,
                &t.rooms,
                &t.secret_hash,
                &t.created_at_ms,
                &t.created_by,
                &t.expires_at_ms,
                &t.revoked_at_ms,
                &t.last_used_at_ms,
                &t.created_by_id,
            ],
        )
        .await
        .map_err(classify)?;
    if n == 0 {
        let id_taken =
            tx.query_opt("SELECT 1 FROM access_tokens WHERE id = $1", &[&t.id]).await.map_err(classify)?.is_some();
        return Err(token_conflict(t, id_taken));
    }
    Ok(())
}

/// Whether the token existed and was not revoked yet (it is now). The tokens it made, and the ones
/// those made, are revoked with it (those not revoked yet, at the same time).
async fn revoke_token(tx: &Transaction<'_>, id: &str, at_ms: i64) -> Result<bool, StoreError> {
    let n = tx
        .execute("UPDATE access_tokens SET revoked_at_ms = $2 WHERE id = $1 AND revoked_at_ms IS NULL", &[&id, &at_ms])
        .await
        .map_err(classify)?;
    // UNION, not UNION ALL: a cycle (which the server never makes) still ends.
    tx.execute(
        "WITH RECURSIVE made(id) AS (
            SELECT id FROM access_tokens WHERE created_by_id = $1
            UNION SELECT t.id FROM access_tokens t JOIN made ON t.created_by_id = made.id)
         UPDATE access_tokens SET revoked_at_ms = $2
         WHERE id IN (SELECT id FROM made) AND id <> $1 AND revoked_at_ms IS NULL",
        &[&id, &at_ms],
    )
    .await
    .map_err(classify)?;
    Ok(n == 1)
}

/// Moves each token's last use forward (never back, also against another host's touch: the
/// condition is checked again on the row it waited for); unknown ids match no row.
async fn touch_tokens(tx: &Transaction<'_>, stmts: &Stmts, used: &[(String, i64)]) -> Result<(), StoreError> {
    if used.is_empty() {
        return Ok(());
    }
    let (ids, ats): (Vec<&str>, Vec<i64>) = used.iter().map(|(id, at)| (id.as_str(), *at)).unzip();
    tx.execute(&stmts.lock_tokens, &[&ids]).await.map_err(classify)?;
    tx.execute(&stmts.touch_tokens, &[&ids, &ats]).await.map_err(classify)?;
    Ok(())
}

/// Appends the records with the next seqs, in order; the last seq assigned (the trail's head when
/// there are none).
async fn append_audit(tx: &Transaction<'_>, stmts: &Stmts, records: &[AuditRecord]) -> Result<u64, StoreError> {
    if records.is_empty() {
        let row = tx.query_one("SELECT last_seq FROM audit_head", &[]).await.map_err(classify)?;
        return Ok(row.get::<_, i64>(0) as u64);
    }
    let n = records.len() as i64;
    let last: i64 = tx.query_one(&stmts.bump_audit, &[&n]).await.map_err(classify)?.get(0);
    let seqs: Vec<i64> = (last - n + 1..=last).collect();
    let column = |f: fn(&AuditRecord) -> Option<&str>| records.iter().map(f).collect::<Vec<_>>();
    let at_ms: Vec<i64> = records.iter().map(|r| r.at_ms).collect();
    let methods: Vec<&str> = records.iter().map(|r| r.method.as_str()).collect();
    let routes: Vec<&str> = records.iter().map(|r| r.route.as_str()).collect();
    let statuses: Vec<i32> = records.iter().map(|r| i32::from(r.status)).collect();
    tx.execute(
        &stmts.insert_audit,
        &[
            &seqs,
            &at_ms,
            &column(|r| r.token_id.as_deref()),
            &column(|r| r.actor_name.as_deref()),
            &methods,
            &routes,
            &column(|r| r.room_id.as_deref()),
            &column(|r| r.session_id.as_deref()),
            &statuses,
            &column(|r| r.code.as_deref()),
        ],
    )
    .await
    .map_err(classify)?;
    Ok(last as u64)
}

/// Deletes the records older than `before_ms`; how many.
async fn prune_audit(tx: &Transaction<'_>, before_ms: i64) -> Result<u64, StoreError> {
    // As in SQLite: the cut by seq (see there).
    tx.execute(
        "DELETE FROM audit WHERE seq < COALESCE(
            (SELECT seq FROM audit WHERE at_ms >= $1 ORDER BY seq LIMIT 1),
            (SELECT last_seq + 1 FROM audit_head))",
        &[&before_ms],
    )
    .await
    .map_err(classify)
}

/// Deletes the tokens revoked or expired before `before_ms`.
async fn prune_tokens(tx: &Transaction<'_>, before_ms: i64) -> Result<u64, StoreError> {
    tx.execute("DELETE FROM access_tokens WHERE revoked_at_ms < $1 OR expires_at_ms < $1", &[&before_ms])
        .await
        .map_err(classify)
}

/// Every token, by creation time and then id in byte order (`COLLATE "C"`: the database's own
/// collation may order ids otherwise, and SQLite compares bytes).
async fn tokens(c: &impl GenericClient) -> Result<Vec<TokenRecord>, StoreError> {
    let rows = c
        .query(
            "SELECT id, name, role, rooms, secret_hash, created_at_ms, created_by, expires_at_ms, revoked_at_ms,
                    last_used_at_ms, created_by_id
             FROM access_tokens ORDER BY created_at_ms, id COLLATE \"C\"",
            &[],
        )
        .await
        .map_err(classify)?;
    rows.iter().map(token_of).collect()
}

fn token_of(r: &Row) -> Result<TokenRecord, StoreError> {
    Ok(TokenRecord {
        id: r.try_get(0)?,
        name: r.try_get(1)?,
        role: r.try_get(2)?,
        rooms: r.try_get(3)?,
        secret_hash: r.try_get(4)?,
        created_at_ms: r.try_get(5)?,
        created_by: r.try_get(6)?,
        expires_at_ms: r.try_get(7)?,
        revoked_at_ms: r.try_get(8)?,
        last_used_at_ms: r.try_get(9)?,
        created_by_id: r.try_get(10)?,
    })
}

/// Records with `seq > after`, ascending, at most `limit`.
async fn audit_after(c: &impl GenericClient, after: u64, limit: usize) -> Result<Vec<AuditRecord>, StoreError> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = c
        .query(
            "SELECT seq, at_ms, token_id, actor_name, method, route, room_id, session_id, status, code
             FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&after, &limit],
        )
        .await
        .map_err(classify)?;
    rows.iter()
        .map(|r| {
            let status: i32 = r.try_get(8)?;
            Ok(AuditRecord {
                seq: r.try_get::<_, i64>(0)? as u64,
                at_ms: r.try_get(1)?,
                token_id: r.try_get(2)?,
                actor_name: r.try_get(3)?,
                method: r.try_get(4)?,
                route: r.try_get(5)?,
                room_id: r.try_get(6)?,
                session_id: r.try_get(7)?,
                status: u16::try_from(status)
                    .map_err(|_| StoreError::Other(format!("audit record with status {status}")))?,
                code: r.try_get(9)?,
            })
        })
        .collect()
}
