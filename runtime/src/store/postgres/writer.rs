//! The PostgreSQL writer task: group commit on one connection. A group first runs without
//! savepoints (one round trip per statement, nothing else); if any operation fails, the
//! transaction is rolled back and the group replayed with a savepoint per operation, so only the
//! failing one is undone — the same isolation as SQLite's writer. A lost connection fails the
//! group with `Unavailable` (nothing of it committed) and the next group reconnects.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use tokio_postgres::{Client, Statement};

use super::access;
use super::webhooks;
use super::{WRITER_LOCK, Write, classify, connect, take_writer_lock};
use crate::store::group::{Done, Inbox, deliver, event_json, frame, next_group, outbox_item};
use crate::store::health::StoreStats;
use crate::store::types::Value;
use crate::store::types::{AppendBatch, CommitListener, CommittedEvent, StoreConfig, StoreError, WriteOp};

/// Statements prepared once per connection.
pub(in crate::store) struct Stmts {
    bump_room: Statement,
    insert_events: Statement,
    upsert_session: Statement,
    pub(super) access: access::Stmts,
}

impl Stmts {
    async fn prepare(c: &Client) -> Result<Self, StoreError> {
        Ok(Self {
            // Moves the room's head by the batch's size and locks its row until the commit.
            bump_room: c
                .prepare(
                    "INSERT INTO rooms (room_id, head_seq, pruned_through) VALUES ($1, $2, 0)
                     ON CONFLICT (room_id) DO UPDATE SET head_seq = rooms.head_seq + EXCLUDED.head_seq
                     RETURNING head_seq, pruned_through",
                )
                .await
                .map_err(classify)?,
            insert_events: c
                .prepare(
                    "INSERT INTO events (room_id, seq, occurred_at_ms, json, session_id)
                     SELECT $1, s, o, j, NULLIF(k, '')
                     FROM UNNEST($2::BIGINT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[]) AS t(s, o, j, k)",
                )
                .await
                .map_err(classify)?,
            upsert_session: c
                .prepare(
                    "INSERT INTO sessions (room_id, session_id, record, updated_at_ms) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (room_id, session_id) DO UPDATE
                     SET record = EXCLUDED.record, updated_at_ms = EXCLUDED.updated_at_ms",
                )
                .await
                .map_err(classify)?,
            access: access::Stmts::prepare(c).await?,
        })
    }
}

pub(super) struct Writer {
    url: String,
    conn: Option<(Client, Stmts)>,
    config: StoreConfig,
    listener: Arc<dyn CommitListener>,
    stats: Arc<StoreStats>,
    last_age_prune: Instant,
}

/// One operation's result before delivery.
enum Wrote {
    Appended(Vec<CommittedEvent>, u64),
    Value(Value),
    Nothing,
}

impl Writer {
    pub(super) async fn new(
        url: String,
        client: Client,
        config: StoreConfig,
        listener: Arc<dyn CommitListener>,
        stats: Arc<StoreStats>,
    ) -> Result<Self, StoreError> {
        let stmts = Stmts::prepare(&client).await?;
        Ok(Self { url, conn: Some((client, stmts)), config, listener, stats, last_age_prune: Instant::now() })
    }

    pub(super) async fn run(mut self, mut inbox: Inbox) {
        while let Some((batch, stop)) = next_group(&mut inbox, &self.config).await {
            self.commit_group(batch).await;
            if stop {
                break;
            }
        }
        // A graceful stop frees the database at once for the next server (a killed one frees it
        // when PostgreSQL notices the connection is gone).
        if self.config.exclusive
            && let Some((client, _)) = &self.conn
            && let Err(e) = client.execute("SELECT pg_advisory_unlock($1)", &[&WRITER_LOCK]).await
        {
            tracing::warn!(error = %e, "could not release the database's writer lock");
        }
        tracing::debug!("store writer stopped");
    }

    async fn connection(&mut self) -> Result<&mut (Client, Stmts), StoreError> {
        if self.conn.as_ref().is_none_or(|(c, _)| c.is_closed()) {
            self.conn = None;
            let client = connect(&self.url).await?;
            if self.config.exclusive {
                // Lost with the old connection; if another server took it meanwhile, this one
                // must not write.
                take_writer_lock(&client).await?;
            }
            let stmts = Stmts::prepare(&client).await?;
            tracing::info!("store writer reconnected to postgres");
            self.conn = Some((client, stmts));
        }
        self.conn.as_mut().ok_or_else(|| StoreError::Unavailable("no connection".into()))
    }

    async fn commit_group(&mut self, batch: Vec<WriteOp>) {
        let started = Instant::now();
        let prune_age = self.last_age_prune.elapsed() > Duration::from_secs(30);
        let result = match self.attempt(&batch, prune_age).await {
            Ok(dones) => Ok(dones),
            Err(Attempt::OpFailed) => self.attempt_isolated(&batch).await,
            Err(Attempt::Failed(e)) => Err(e),
        };
        if prune_age {
            self.last_age_prune = Instant::now();
        }
        metrics::histogram!("ensemble_store_commit_seconds").record(started.elapsed().as_secs_f64());
        let (dones, tx_result) = match result {
            Ok(d) => (d, Ok(())),
            Err(e) => {
                if matches!(e, StoreError::Unavailable(_)) {
                    self.conn = None;
                }
                (Vec::new(), Err(e))
            }
        };
        let dones = dones
            .into_iter()
            .map(|d| match d {
                Ok(Wrote::Appended(events, last)) => Done::Appended(events, last),
                Ok(Wrote::Value(v)) => Done::Value(Ok(v)),
                Ok(Wrote::Nothing) => Done::Nothing,
                Err(e) => Done::Failed(e),
            })
            .collect();
        deliver(&self.listener, &self.stats, batch, dones, tx_result);
    }

    /// The whole group in one transaction, no savepoints; `OpFailed` if any operation failed.
    async fn attempt(&mut self, batch: &[WriteOp], prune_age: bool) -> Result<Vec<Result<Wrote, StoreError>>, Attempt> {
        let retention = self.config.retention.clone();
        let (client, stmts) = self.connection().await.map_err(Attempt::Failed)?;
        let tx = client.transaction().await.map_err(|e| Attempt::Failed(classify(e)))?;
        let mut dones = Vec::with_capacity(batch.len());
        for op in batch {
            match run_op(&tx, stmts, &retention, op).await {
                Ok(d) => dones.push(Ok(d)),
                Err(StoreError::Unavailable(m)) => return Err(Attempt::Failed(StoreError::Unavailable(m))),
                Err(_) => {
                    // Dropping the transaction rolls it back.
                    let _ = tx.rollback().await;
                    return Err(Attempt::OpFailed);
                }
            }
        }
        if prune_age {
            prune_by_age(&tx, &retention).await.map_err(Attempt::Failed)?;
        }
        tx.commit().await.map_err(|e| Attempt::Failed(classify(e)))?;
        Ok(dones)
    }

    /// The group again, one savepoint per operation: a failing one is undone alone.
    async fn attempt_isolated(&mut self, batch: &[WriteOp]) -> Result<Vec<Result<Wrote, StoreError>>, StoreError> {
        let retention = self.config.retention.clone();
        let (client, stmts) = self.connection().await?;
        let mut tx = client.transaction().await.map_err(classify)?;
        let mut dones = Vec::with_capacity(batch.len());
        for op in batch {
            let sp = tx.savepoint("op").await.map_err(classify)?;
            match run_op(&sp, stmts, &retention, op).await {
                Ok(d) => {
                    sp.commit().await.map_err(classify)?;
                    dones.push(Ok(d));
                }
                Err(StoreError::Unavailable(m)) => return Err(StoreError::Unavailable(m)),
                Err(e) => {
                    sp.rollback().await.map_err(classify)?;
                    // A refused duplicate is its caller's to report, not a failure of the store.
                    if !matches!(e, StoreError::Conflict(_)) {
                        tracing::error!(error = %e, "store operation failed");
                    }
                    dones.push(Err(e));
                }
            }
        }
        tx.commit().await.map_err(classify)?;
        Ok(dones)
    }
}

enum Attempt {
    /// An operation failed: replay the group isolated.
    OpFailed,
    /// The group cannot commit (connection lost, commit refused): every waiter hears this.
    Failed(StoreError),
}

async fn run_op(
    tx: &tokio_postgres::Transaction<'_>,
    stmts: &Stmts,
    retention: &crate::store::types::Retention,
    op: &WriteOp,
) -> Result<Wrote, StoreError> {
    match op {
        WriteOp::Append(b) => append(tx, stmts, retention, b).await,
        WriteOp::DeleteSession { room_id, session_id } => {
            tx.execute("DELETE FROM sessions WHERE room_id = $1 AND session_id = $2", &[room_id, session_id])
                .await
                .map_err(classify)?;
            tx.execute("DELETE FROM provider_state WHERE room_id = $1 AND session_id = $2", &[room_id, session_id])
                .await
                .map_err(classify)?;
            Ok(Wrote::Nothing)
        }
        WriteOp::Durable(d) => Ok(Wrote::Value(Write::write(d.op.as_ref(), tx, stmts).await?)),
        WriteOp::Exec { sql, .. } => {
            tx.batch_execute(sql).await.map_err(classify)?;
            Ok(Wrote::Value(Value::Unit))
        }
        WriteOp::Probe { .. } => {
            // A transaction id makes the commit write (and flush) a WAL record.
            tx.batch_execute("SELECT txid_current()").await.map_err(classify)?;
            Ok(Wrote::Value(Value::Unit))
        }
        WriteOp::Flush { .. } | WriteOp::Shutdown => Ok(Wrote::Nothing),
    }
}

async fn append(
    tx: &tokio_postgres::Transaction<'_>,
    stmts: &Stmts,
    retention: &crate::store::types::Retention,
    batch: &AppendBatch,
) -> Result<Wrote, StoreError> {
    let n = batch.events.len() as i64;
    let mut committed = Vec::with_capacity(batch.events.len());
    let last = if n > 0 {
        let row = tx.query_one(&stmts.bump_room, &[&batch.room_id, &n]).await.map_err(classify)?;
        let (head, pruned) = (row.get::<_, i64>(0) as u64, row.get::<_, i64>(1) as u64);
        let first = head + 1 - n as u64;
        let (mut seqs, mut ats, mut jsons) =
            (Vec::with_capacity(n as usize), Vec::with_capacity(n as usize), Vec::with_capacity(n as usize));
        let sessions: Vec<&str> = batch.events.iter().map(|ev| ev.session_id.as_str()).collect();
        for (i, ev) in batch.events.iter().enumerate() {
            let seq = first + i as u64;
            let frame = frame(ev, seq)?;
            seqs.push(seq as i64);
            ats.push(ev.occurred_at_ms);
            jsons.push(event_json(&frame)?.to_owned());
            committed.push(CommittedEvent { seq, session_id: ev.session_id.clone(), frame: Bytes::from(frame) });
        }
        tx.execute(&stmts.insert_events, &[&batch.room_id, &seqs, &ats, &jsons, &sessions]).await.map_err(classify)?;
        if !batch.outbound.is_empty() {
            let mut items = Vec::with_capacity(batch.outbound.len());
            for out in &batch.outbound {
                if let (Some(ev), Some(c)) = (batch.events.get(out.event), committed.get(out.event)) {
                    items.push(outbox_item(&batch.room_id, out, ev, c)?);
                }
            }
            webhooks::insert_items(tx, &items).await?;
        }
        if let Some(max) = retention.max_events_per_room {
            // Prune in steps of 1/8 of the budget so deletes are amortised.
            let slack = (max / 8).max(1);
            if head > pruned + max + slack {
                let through = (head - max) as i64;
                tx.execute("DELETE FROM events WHERE room_id = $1 AND seq <= $2", &[&batch.room_id, &through])
                    .await
                    .map_err(classify)?;
                tx.execute("UPDATE rooms SET pruned_through = $2 WHERE room_id = $1", &[&batch.room_id, &through])
                    .await
                    .map_err(classify)?;
            }
        }
        head
    } else {
        super::heads(tx, &batch.room_id).await?.0
    };
    for rec in &batch.records {
        // A record the start left as its `session.started` is written out here.
        let json = rec.json(&batch.events)?;
        tx.execute(&stmts.upsert_session, &[&batch.room_id, &rec.session_id, &json.as_ref(), &rec.updated_at_ms])
            .await
            .map_err(classify)?;
    }
    Ok(Wrote::Appended(committed, last))
}

async fn prune_by_age(
    tx: &tokio_postgres::Transaction<'_>,
    retention: &crate::store::types::Retention,
) -> Result<(), StoreError> {
    let Some(max_age) = retention.max_age else {
        return Ok(());
    };
    let cutoff = ensemble_core::clock::unix_ms() - max_age.as_millis() as i64;
    let rows = tx
        .query("SELECT room_id, MAX(seq) FROM events WHERE occurred_at_ms < $1 GROUP BY room_id", &[&cutoff])
        .await
        .map_err(classify)?;
    for row in rows {
        let (room, through): (String, i64) = (row.get(0), row.get(1));
        tx.execute("DELETE FROM events WHERE room_id = $1 AND seq <= $2", &[&room, &through])
            .await
            .map_err(classify)?;
        tx.execute(
            "UPDATE rooms SET pruned_through = GREATEST(pruned_through, $2) WHERE room_id = $1",
            &[&room, &through],
        )
        .await
        .map_err(classify)?;
    }
    Ok(())
}
