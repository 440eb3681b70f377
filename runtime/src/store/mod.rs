//! The SQLite store: sessions, room event logs, provider state.
//!
//! All writes go through one writer thread that commits in groups: it takes whatever is queued (up
//! to `max_batch` events, waiting at most `linger` for more when work is piling up — an operation
//! with nothing queued behind it commits at once), runs every operation isolated by a
//! savepoint inside one transaction (consecutive appends share one and are replayed one savepoint
//! each if any fails), commits, and only then acknowledges the operations and hands
//! the committed events to the [`CommitListener`] (the room bus) in `seq` order. So an event is
//! fanned out only once it is durable, and a streaming turn costs a handful of commits.
//!
//! Room `seq`s are assigned by the writer inside that transaction, from a head kept per room in the
//! `rooms` table, so they continue across restarts and never repeat, even when old events are pruned.

mod checkpoint;
mod ledger;
mod schema;
mod types;
mod writer;

use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

pub use ledger::LedgerKey;
pub use types::{
    AppendBatch, CommitListener, CommittedEvent, EventPage, Job, Retention, RoomInfo, StoreConfig, StoreError,
    StoreStats, Synchronous, WriteOp, WritePermit,
};

use crate::goal::{Binding, GoalIdentity};
use crate::session::SessionRecord;
use ledger::read_binding;
use schema::{ReaderPool, migrate, open_write_connection, room_heads};
use types::FnJob;
use writer::Writer;

#[derive(Clone)]
pub struct Store {
    tx: mpsc::Sender<WriteOp>,
    readers: Arc<ReaderPool>,
    writer: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    stats: Arc<StoreStats>,
}

impl Store {
    /// Opens (creating and migrating) the database and starts the writer thread.
    pub fn open(config: StoreConfig, listener: Arc<dyn CommitListener>) -> Result<Self, StoreError> {
        if let Some(dir) = config.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut conn = open_write_connection(&config.path, config.synchronous)?;
        migrate(&mut conn)?;
        let (tx, rx) = mpsc::channel(config.queue_capacity.max(1));
        let readers = Arc::new(ReaderPool::new(config.path.clone(), config.readers.max(1)));
        let cfg = config;
        let stats = Arc::new(StoreStats::default());
        let writer_stats = stats.clone();
        let checkpointer = checkpoint::Checkpointer::start(cfg.path.clone())?;
        let handle = std::thread::Builder::new()
            .name("ensemble-store-writer".into())
            .spawn(move || Writer::new(conn, checkpointer, cfg, listener, writer_stats).run(rx))?;
        Ok(Self { tx, readers, writer: Arc::new(Mutex::new(Some(handle))), stats })
    }

    pub fn stats(&self) -> &StoreStats {
        &self.stats
    }

    /// Waits for a place in the writer queue.
    pub async fn reserve(&self) -> Result<WritePermit<'_>, StoreError> {
        self.tx.reserve().await.map(WritePermit).map_err(|_| StoreError::Closed)
    }

    pub async fn send(&self, op: WriteOp) -> Result<(), StoreError> {
        self.tx.send(op).await.map_err(|_| StoreError::Closed)
    }

    /// Operations queued for the writer (a gauge for `/metrics`).
    pub fn queue_len(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// Runs `f` in the writer's next group commit and returns its value once committed.
    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job = FnJob { f: Some(f), value: None, reply: Some(reply) };
        self.send(WriteOp::Job(Box::new(job))).await?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Resolves once everything queued before it is committed.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.write(|_| Ok(())).await
    }

    /// Stops the writer after it has committed everything queued, and waits for it.
    pub async fn close(&self) {
        let _ = self.tx.send(WriteOp::Shutdown).await;
        let handle = self.writer.lock().ok().and_then(|mut h| h.take());
        if let Some(handle) = handle {
            let _ = tokio::task::spawn_blocking(move || handle.join()).await;
        }
    }

    pub async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let readers = self.readers.clone();
        tokio::task::spawn_blocking(move || readers.with(f))
            .await
            .map_err(|e| StoreError::Other(format!("reader task failed: {e}")))?
    }

    /// Events of a room with `seq > after`, oldest first, at most `limit`.
    pub async fn events_after(&self, room_id: &str, after: u64, limit: usize) -> Result<EventPage, StoreError> {
        let room = room_id.to_owned();
        self.read(move |conn| {
            let tx = conn.unchecked_transaction()?;
            let (head_seq, pruned_through) = room_heads(&tx, &room)?;
            let mut stmt = tx
                .prepare_cached("SELECT seq, json FROM events WHERE room_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")?;
            let rows = stmt
                .query_map(params![room, i64::try_from(after).unwrap_or(i64::MAX), limit as i64], |row| {
                    Ok((row.get::<_, i64>(0)? as u64, row.get::<_, String>(1)?))
                })?;
            let mut events = Vec::new();
            for row in rows {
                let (seq, json) = row?;
                events.push((seq, RawValue::from_string(json)?));
            }
            drop(stmt);
            tx.finish()?;
            Ok(EventPage { events, head_seq, pruned_through })
        })
        .await
    }

    /// The events of one turn of a room, oldest first (recovery reads what an interrupted turn left
    /// open). A scan of the room's log: used once per interrupted turn at start-up.
    pub async fn turn_events(&self, room_id: &str, turn_id: &str) -> Result<Vec<Box<RawValue>>, StoreError> {
        let (room, turn) = (room_id.to_owned(), turn_id.to_owned());
        self.read(move |conn| {
            let mut stmt = conn.prepare(
                "SELECT json FROM events WHERE room_id = ?1 AND json_extract(json, '$.turnId') = ?2 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![room, turn], |row| row.get::<_, String>(0))?;
            let mut out = Vec::new();
            for json in rows {
                out.push(RawValue::from_string(json?)?);
            }
            Ok(out)
        })
        .await
    }

    pub async fn load_sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn.prepare("SELECT record FROM sessions ORDER BY room_id, session_id")?;
            let rows = stmt.query_map([], |row| row.get::<_, String>(0))?;
            let mut out = Vec::new();
            for row in rows {
                let json = row?;
                match serde_json::from_str::<SessionRecord>(&json) {
                    Ok(rec) => out.push(rec),
                    // A record this version cannot read is kept on disk, not dropped.
                    Err(e) => tracing::error!(error = %e, "skipping unreadable session record"),
                }
            }
            Ok(out)
        })
        .await
    }

    pub async fn rooms(&self) -> Result<Vec<RoomInfo>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT r.room_id, r.head_seq, (SELECT COUNT(*) FROM sessions s WHERE s.room_id = r.room_id)
                 FROM rooms r
                 UNION
                 SELECT s.room_id, 0, COUNT(*) FROM sessions s
                 WHERE NOT EXISTS (SELECT 1 FROM rooms r WHERE r.room_id = s.room_id) GROUP BY s.room_id
                 ORDER BY 1",
            )?;
            let rows = stmt.query_map([], |row| {
                Ok(RoomInfo {
                    room_id: row.get(0)?,
                    head_seq: row.get::<_, i64>(1)? as u64,
                    session_count: row.get::<_, i64>(2)? as u64,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// The current head and prune point of a room (0, 0 for a room never written).
    pub async fn room_heads(&self, room_id: &str) -> Result<(u64, u64), StoreError> {
        let room = room_id.to_owned();
        self.read(move |conn| room_heads(conn, &room)).await
    }

    /// Provider-private state of a session (e.g. the scripted provider's conversation).
    pub async fn provider_state(
        &self,
        room_id: &str,
        session_id: &str,
        key: &str,
    ) -> Result<Option<String>, StoreError> {
        let (r, s, k) = (room_id.to_owned(), session_id.to_owned(), key.to_owned());
        self.read(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT value FROM provider_state WHERE room_id = ?1 AND session_id = ?2 AND key = ?3",
                    params![r, s, k],
                    |row| row.get::<_, String>(0),
                )
                .optional()?)
        })
        .await
    }

    /// The ledger's binding of a goal generation.
    pub async fn goal_lookup(&self, key: LedgerKey) -> Result<Option<Binding>, StoreError> {
        self.read(move |conn| read_binding(conn, &key)).await
    }

    /// Binds a goal generation: the first bind wins; binding another identity makes it ambiguous
    /// for good. Returns the binding as it is now. Durable once this returns.
    pub async fn goal_bind(&self, key: LedgerKey, identity: GoalIdentity) -> Result<Binding, StoreError> {
        self.write(move |conn| match read_binding(conn, &key)? {
            None => {
                conn.execute(
                    "INSERT INTO goal_generations (room_id, session_id, session_created_at_ms, provider_session_id,
                            fingerprint, operation_id, revision, repair_epoch, ambiguous)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)",
                    params![
                        key.room_id,
                        key.session_id,
                        key.session_created_at_ms,
                        key.provider_session_id,
                        key.fingerprint,
                        identity.operation_id,
                        identity.revision,
                        identity.repair_epoch
                    ],
                )?;
                Ok(Binding { identity, ambiguous: false })
            }
            Some(existing) if existing.identity == identity || existing.ambiguous => Ok(existing),
            Some(mut existing) => {
                conn.execute(
                    "UPDATE goal_generations SET ambiguous = 1
                         WHERE room_id = ?1 AND session_id = ?2 AND session_created_at_ms = ?3
                           AND provider_session_id = ?4 AND fingerprint = ?5",
                    params![
                        key.room_id,
                        key.session_id,
                        key.session_created_at_ms,
                        key.provider_session_id,
                        key.fingerprint
                    ],
                )?;
                existing.ambiguous = true;
                Ok(existing)
            }
        })
        .await
    }

    pub async fn set_provider_state(
        &self,
        room_id: &str,
        session_id: &str,
        key: &str,
        value: String,
    ) -> Result<(), StoreError> {
        let (r, s, k) = (room_id.to_owned(), session_id.to_owned(), key.to_owned());
        self.write(move |conn| {
            conn.execute(
                "INSERT INTO provider_state (room_id, session_id, key, value) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (room_id, session_id, key) DO UPDATE SET value = excluded.value",
                params![r, s, k, value],
            )?;
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
