//! The SQLite store: sessions, room event logs, provider state.
//!
//! All writes go through one writer thread that commits in groups: it takes whatever is queued (up
//! to `max_batch` events, waiting at most `linger` for more), runs every operation in its own
//! savepoint inside one transaction, commits, and only then acknowledges the operations and hands
//! the committed events to the [`CommitListener`] (the room bus) in `seq` order. So an event is
//! fanned out only once it is durable, and a streaming turn costs a handful of commits.
//!
//! Room `seq`s are assigned by the writer inside that transaction, from a head kept per room in the
//! `rooms` table, so they continue across restarts and never repeat, even when old events are pruned.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use crate::event::NewEvent;
use crate::session::SessionRecord;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the store is closed")]
    Closed,
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
}

/// How much history a room keeps.
#[derive(Clone, Debug, Default)]
pub struct Retention {
    /// Keep at most this many events per room (older ones are pruned).
    pub max_events_per_room: Option<u64>,
    /// Drop events older than this.
    pub max_age: Option<Duration>,
}

/// SQLite's `synchronous` setting. `Normal` (with WAL) survives a killed process; `Full` also
/// survives power loss at the cost of an fsync per commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synchronous {
    Normal,
    Full,
}

#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub path: PathBuf,
    /// Most events in one commit.
    pub max_batch: usize,
    /// Longest the writer waits for more work before committing a group.
    pub linger: Duration,
    /// Write operations that may wait for the writer before publishers are held back.
    pub queue_capacity: usize,
    pub retention: Retention,
    pub synchronous: Synchronous,
    /// Read connections kept open.
    pub readers: usize,
}

impl StoreConfig {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            max_batch: 512,
            linger: Duration::from_millis(2),
            queue_capacity: 4096,
            retention: Retention::default(),
            synchronous: Synchronous::Normal,
            readers: 4,
        }
    }
}

/// An event the writer committed: its seq and its wire frame, serialised once.
#[derive(Clone, Debug)]
pub struct CommittedEvent {
    pub seq: u64,
    pub session_id: String,
    /// `{"type":"event","event":{…}}`, ready for every subscriber.
    pub frame: Bytes,
}

/// Receives committed events, in commit (= seq) order per room.
pub trait CommitListener: Send + Sync {
    fn committed(&self, room_id: &str, events: &[CommittedEvent]);
}

/// A unit of work for the writer thread (`run` inside a savepoint, `finish` after the commit).
pub trait Job: Send {
    fn run(&mut self, conn: &Connection) -> Result<(), StoreError>;
    fn finish(self: Box<Self>, result: Result<(), StoreError>);
}

struct FnJob<T, F> {
    f: Option<F>,
    value: Option<T>,
    reply: Option<oneshot::Sender<Result<T, StoreError>>>,
}

impl<T: Send, F: FnOnce(&Connection) -> Result<T, StoreError> + Send> Job for FnJob<T, F> {
    fn run(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let f = self.f.take().ok_or_else(|| StoreError::Other("job ran twice".into()))?;
        self.value = Some(f(conn)?);
        Ok(())
    }
    fn finish(mut self: Box<Self>, result: Result<(), StoreError>) {
        let out = match (result, self.value.take()) {
            (Ok(()), Some(v)) => Ok(v),
            (Ok(()), None) => Err(StoreError::Other("job produced no value".into())),
            (Err(e), _) => Err(e),
        };
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(out);
        }
    }
}

/// Events of one room to append, with the session records they change.
pub struct AppendBatch {
    pub room_id: String,
    pub events: Vec<NewEvent>,
    pub records: Vec<SessionRecord>,
    /// Answered with the last assigned seq once committed.
    pub ack: Option<oneshot::Sender<Result<u64, StoreError>>>,
}

pub enum WriteOp {
    Append(AppendBatch),
    Job(Box<dyn Job>),
    /// Removes a session record (failed start, nothing else to keep).
    DeleteSession {
        room_id: String,
        session_id: String,
    },
    /// Commits what came before, then stops the writer.
    Shutdown,
}

/// A reserved place in the writer's queue. Taking it first and sending synchronously lets the
/// controller fold state and enqueue the event under one lock, so the log order is the fold order.
pub struct WritePermit<'a>(mpsc::Permit<'a, WriteOp>);

impl WritePermit<'_> {
    pub fn send(self, op: WriteOp) {
        self.0.send(op);
    }
}

/// What a room holds, for `GET /v1/rooms`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomInfo {
    pub room_id: String,
    pub head_seq: u64,
    pub session_count: u64,
}

/// A page of a room's log.
#[derive(Debug)]
pub struct EventPage {
    pub events: Vec<(u64, Box<RawValue>)>,
    pub head_seq: u64,
    /// Every event with `seq <= pruned_through` is gone.
    pub pruned_through: u64,
}

/// Counters of the writer, for tests and `/metrics`.
#[derive(Debug, Default)]
pub struct StoreStats {
    pub commits: std::sync::atomic::AtomicU64,
    pub events: std::sync::atomic::AtomicU64,
}

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
        let handle = std::thread::Builder::new()
            .name("ensemble-store-writer".into())
            .spawn(move || Writer::new(conn, cfg, listener, writer_stats).run(rx))?;
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
    pub async fn goal_lookup(&self, key: LedgerKey) -> Result<Option<crate::goals::Binding>, StoreError> {
        self.read(move |conn| read_binding(conn, &key)).await
    }

    /// Binds a goal generation: the first bind wins; binding another identity makes it ambiguous
    /// for good. Returns the binding as it is now. Durable once this returns.
    pub async fn goal_bind(
        &self,
        key: LedgerKey,
        identity: crate::goals::GoalIdentity,
    ) -> Result<crate::goals::Binding, StoreError> {
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
                Ok(crate::goals::Binding { identity, ambiguous: false })
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

fn room_heads(conn: &Connection, room: &str) -> Result<(u64, u64), StoreError> {
    Ok(conn
        .query_row("SELECT head_seq, pruned_through FROM rooms WHERE room_id = ?1", params![room], |row| {
            Ok((row.get::<_, i64>(0)? as u64, row.get::<_, i64>(1)? as u64))
        })
        .optional()?
        .unwrap_or((0, 0)))
}

fn open_write_connection(path: &Path, sync: Synchronous) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(
        None,
        "synchronous",
        match sync {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        },
    )?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// Embedded, ordered migrations; `user_version` records how many have run.
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    "CREATE TABLE rooms (
        room_id TEXT PRIMARY KEY,
        head_seq INTEGER NOT NULL,
        pruned_through INTEGER NOT NULL DEFAULT 0
     ) WITHOUT ROWID;
     CREATE TABLE events (
        room_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        occurred_at_ms INTEGER NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (room_id, seq)
     ) WITHOUT ROWID;
     CREATE TABLE sessions (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        record TEXT NOT NULL,
        updated_at_ms INTEGER NOT NULL,
        PRIMARY KEY (room_id, session_id)
     ) WITHOUT ROWID;
     CREATE TABLE provider_state (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (room_id, session_id, key)
     ) WITHOUT ROWID;",
    // 2: the goal generation ledger (first bind wins; a conflicting bind makes it ambiguous).
    "CREATE TABLE goal_generations (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        session_created_at_ms INTEGER NOT NULL,
        provider_session_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        operation_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        repair_epoch INTEGER NOT NULL,
        ambiguous INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (room_id, session_id, session_created_at_ms, provider_session_id, fingerprint)
     ) WITHOUT ROWID;",
];

/// Where a goal generation is bound: the session (and its incarnation) and the provider's thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerKey {
    pub room_id: String,
    pub session_id: String,
    pub session_created_at_ms: i64,
    pub provider_session_id: String,
    pub fingerprint: String,
}

fn read_binding(conn: &Connection, k: &LedgerKey) -> Result<Option<crate::goals::Binding>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT operation_id, revision, repair_epoch, ambiguous FROM goal_generations
             WHERE room_id = ?1 AND session_id = ?2 AND session_created_at_ms = ?3
               AND provider_session_id = ?4 AND fingerprint = ?5",
            params![k.room_id, k.session_id, k.session_created_at_ms, k.provider_session_id, k.fingerprint],
            |row| {
                Ok(crate::goals::Binding {
                    identity: crate::goals::GoalIdentity {
                        operation_id: row.get(0)?,
                        revision: row.get(1)?,
                        repair_epoch: row.get(2)?,
                    },
                    ambiguous: row.get::<_, i64>(3)? != 0,
                })
            },
        )
        .optional()?)
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let version = usize::try_from(version).unwrap_or(0);
    if version > MIGRATIONS.len() {
        return Err(StoreError::Other(format!(
            "the database has schema version {version}, newer than this build knows ({})",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
        tracing::info!(version = i + 1, "applied store migration");
    }
    Ok(())
}

struct ReaderPool {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    max_idle: usize,
}

impl ReaderPool {
    fn new(path: PathBuf, max_idle: usize) -> Self {
        Self { path, idle: Mutex::new(Vec::new()), max_idle }
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let conn = self.idle.lock().ok().and_then(|mut v| v.pop());
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = Connection::open_with_flags(
                    &self.path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                c.busy_timeout(Duration::from_secs(5))?;
                c
            }
        };
        let out = f(&conn);
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.max_idle
        {
            idle.push(conn);
        }
        out
    }
}

#[derive(Clone, Copy)]
struct Heads {
    head: u64,
    pruned_through: u64,
}

struct Writer {
    conn: Connection,
    config: StoreConfig,
    listener: Arc<dyn CommitListener>,
    heads: HashMap<String, Heads>,
    last_age_prune: Instant,
    stats: Arc<StoreStats>,
}

enum Outcome {
    Appended {
        room_id: String,
        events: Vec<CommittedEvent>,
        ack: Option<oneshot::Sender<Result<u64, StoreError>>>,
        last: u64,
    },
    Failed {
        ack: Option<oneshot::Sender<Result<u64, StoreError>>>,
        error: StoreError,
    },
    Job {
        job: Box<dyn Job>,
        result: Result<(), StoreError>,
    },
    Nothing,
}

impl Writer {
    fn new(conn: Connection, config: StoreConfig, listener: Arc<dyn CommitListener>, stats: Arc<StoreStats>) -> Self {
        Self { conn, config, listener, heads: HashMap::new(), last_age_prune: Instant::now(), stats }
    }

    fn run(mut self, mut rx: mpsc::Receiver<WriteOp>) {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!(error = %e, "store writer could not start");
                return;
            }
        };
        rt.block_on(async {
            while let Some(first) = rx.recv().await {
                if matches!(first, WriteOp::Shutdown) {
                    break;
                }
                let mut batch = vec![first];
                let mut stop = false;
                let mut events = batch_events(&batch);
                let deadline = tokio::time::Instant::now() + self.config.linger;
                while events < self.config.max_batch {
                    let next = match rx.try_recv() {
                        Ok(op) => Some(op),
                        Err(mpsc::error::TryRecvError::Empty) if !self.config.linger.is_zero() => {
                            tokio::time::timeout_at(deadline, rx.recv()).await.ok().flatten()
                        }
                        Err(_) => None,
                    };
                    match next {
                        Some(WriteOp::Shutdown) => {
                            stop = true;
                            break;
                        }
                        Some(op) => {
                            events += batch_events(std::slice::from_ref(&op));
                            batch.push(op);
                        }
                        None => break,
                    }
                }
                self.commit_group(batch);
                if stop {
                    break;
                }
            }
        });
        tracing::debug!("store writer stopped");
    }

    fn commit_group(&mut self, batch: Vec<WriteOp>) {
        let started = Instant::now();
        let saved_heads = self.heads.clone();
        let mut outcomes = Vec::with_capacity(batch.len());
        let mut event_count = 0usize;
        let tx_result = (|| -> Result<(), StoreError> {
            let mut tx = self.conn.transaction()?;
            for op in batch {
                let outcome = match op {
                    WriteOp::Append(b) => {
                        // The room's heads as they were before this append (an earlier append of
                        // the same group may already have moved them).
                        let before = self.heads.get(&b.room_id).copied();
                        let sp = tx.savepoint()?;
                        match append(&sp, &mut self.heads, &self.config.retention, &b) {
                            Ok((events, last)) => {
                                sp.commit()?;
                                event_count += events.len();
                                Outcome::Appended { room_id: b.room_id, events, ack: b.ack, last }
                            }
                            Err(error) => {
                                drop(sp);
                                // The savepoint rolled back: so must the heads.
                                match before {
                                    Some(h) => self.heads.insert(b.room_id.clone(), h),
                                    None => self.heads.remove(&b.room_id),
                                };
                                tracing::error!(room = %b.room_id, error = %error, "append failed");
                                Outcome::Failed { ack: b.ack, error }
                            }
                        }
                    }
                    WriteOp::Job(mut job) => {
                        let sp = tx.savepoint()?;
                        let result = job.run(&sp);
                        if result.is_ok() {
                            sp.commit()?;
                        }
                        Outcome::Job { job, result }
                    }
                    WriteOp::Shutdown => Outcome::Nothing,
                    WriteOp::DeleteSession { room_id, session_id } => {
                        tx.execute(
                            "DELETE FROM sessions WHERE room_id = ?1 AND session_id = ?2",
                            params![room_id, session_id],
                        )?;
                        tx.execute(
                            "DELETE FROM provider_state WHERE room_id = ?1 AND session_id = ?2",
                            params![room_id, session_id],
                        )?;
                        Outcome::Nothing
                    }
                };
                outcomes.push(outcome);
            }
            if self.last_age_prune.elapsed() > Duration::from_secs(30) {
                self.last_age_prune = Instant::now();
                prune_by_age(&tx, &mut self.heads, &self.config.retention)?;
            }
            tx.commit()?;
            Ok(())
        })();
        metrics::histogram!("ensemble_store_commit_seconds").record(started.elapsed().as_secs_f64());
        metrics::histogram!("ensemble_store_batch_events").record(event_count as f64);
        match tx_result {
            Ok(()) => {
                metrics::counter!("ensemble_events_appended_total").increment(event_count as u64);
                self.stats.commits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.stats.events.fetch_add(event_count as u64, std::sync::atomic::Ordering::Relaxed);
                for outcome in outcomes {
                    match outcome {
                        Outcome::Appended { room_id, events, ack, last } => {
                            if !events.is_empty() {
                                self.listener.committed(&room_id, &events);
                            }
                            if let Some(ack) = ack {
                                let _ = ack.send(Ok(last));
                            }
                        }
                        Outcome::Failed { ack, error } => {
                            if let Some(ack) = ack {
                                let _ = ack.send(Err(error));
                            }
                        }
                        Outcome::Job { job, result } => job.finish(result),
                        Outcome::Nothing => {}
                    }
                }
            }
            Err(error) => {
                // Nothing of this group is durable: seqs are handed out again and every waiter hears.
                tracing::error!(error = %error, "group commit failed");
                metrics::counter!("ensemble_store_commit_failures_total").increment(1);
                self.heads = saved_heads;
                let msg = error.to_string();
                for outcome in outcomes {
                    match outcome {
                        Outcome::Appended { ack: Some(ack), .. } | Outcome::Failed { ack: Some(ack), .. } => {
                            let _ = ack.send(Err(StoreError::Other(msg.clone())));
                        }
                        Outcome::Job { job, .. } => job.finish(Err(StoreError::Other(msg.clone()))),
                        _ => {}
                    }
                }
            }
        }
    }
}

fn batch_events(ops: &[WriteOp]) -> usize {
    ops.iter()
        .map(|op| match op {
            WriteOp::Append(b) => b.events.len().max(1),
            _ => 1,
        })
        .sum()
}

fn load_heads<'a>(
    conn: &Connection,
    heads: &'a mut HashMap<String, Heads>,
    room: &str,
) -> Result<&'a mut Heads, StoreError> {
    if !heads.contains_key(room) {
        let (head, pruned_through) = room_heads(conn, room)?;
        heads.insert(room.to_owned(), Heads { head, pruned_through });
    }
    heads.get_mut(room).ok_or_else(|| StoreError::Other("room heads vanished".into()))
}

/// What precedes an event in its wire frame (`{"type":"event","event":…}`).
const FRAME_PREFIX: &str = "{\"type\":\"event\",\"event\":";

fn append(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    retention: &Retention,
    batch: &AppendBatch,
) -> Result<(Vec<CommittedEvent>, u64), StoreError> {
    let h = load_heads(conn, heads, &batch.room_id)?;
    let mut committed = Vec::with_capacity(batch.events.len());
    {
        let mut insert =
            conn.prepare_cached("INSERT INTO events (room_id, seq, occurred_at_ms, json) VALUES (?1, ?2, ?3, ?4)")?;
        for ev in &batch.events {
            let seq = h.head + 1;
            let event = ev.clone().with_seq(seq);
            // Serialised once, straight into the wire frame (no regrowth, no second copy); the log
            // stores the `event` part of it.
            let mut frame = Vec::with_capacity(512);
            frame.extend_from_slice(FRAME_PREFIX.as_bytes());
            serde_json::to_writer(&mut frame, &event)?;
            let json = std::str::from_utf8(&frame[FRAME_PREFIX.len()..])
                .map_err(|e| StoreError::Other(format!("event json is not utf-8: {e}")))?;
            insert.execute(params![batch.room_id, seq as i64, ev.occurred_at_ms, json])?;
            h.head = seq;
            frame.push(b'}');
            committed.push(CommittedEvent { seq, session_id: ev.session_id.clone(), frame: Bytes::from(frame) });
        }
    }
    if !batch.events.is_empty() {
        // Cached: it runs once per append, and parsing it cost more than running it.
        conn.prepare_cached(
            "INSERT INTO rooms (room_id, head_seq, pruned_through) VALUES (?1, ?2, ?3)
             ON CONFLICT (room_id) DO UPDATE SET head_seq = excluded.head_seq",
        )?
        .execute(params![batch.room_id, h.head as i64, h.pruned_through as i64])?;
        if let Some(max) = retention.max_events_per_room {
            // Prune in steps of 1/8 of the budget so deletes are amortised.
            let slack = (max / 8).max(1);
            if h.head > h.pruned_through + max + slack {
                let through = h.head - max;
                conn.execute(
                    "DELETE FROM events WHERE room_id = ?1 AND seq <= ?2",
                    params![batch.room_id, through as i64],
                )?;
                h.pruned_through = through;
                conn.execute(
                    "UPDATE rooms SET pruned_through = ?2 WHERE room_id = ?1",
                    params![batch.room_id, through as i64],
                )?;
            }
        }
    }
    for rec in &batch.records {
        conn.execute(
            "INSERT INTO sessions (room_id, session_id, record, updated_at_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (room_id, session_id) DO UPDATE SET record = excluded.record, updated_at_ms = excluded.updated_at_ms",
            params![rec.session.room_id, rec.session.session_id, serde_json::to_string(rec)?, rec.session.updated_at_ms],
        )?;
    }
    let last = committed.last().map(|c| c.seq).unwrap_or(h.head);
    Ok((committed, last))
}

fn prune_by_age(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    retention: &Retention,
) -> Result<(), StoreError> {
    let Some(max_age) = retention.max_age else {
        return Ok(());
    };
    let cutoff = crate::clock::unix_ms() - max_age.as_millis() as i64;
    let rooms: Vec<(String, i64)> = {
        let mut stmt =
            conn.prepare("SELECT room_id, MAX(seq) FROM events WHERE occurred_at_ms < ?1 GROUP BY room_id")?;
        stmt.query_map(params![cutoff], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?
    };
    for (room, through) in rooms {
        conn.execute("DELETE FROM events WHERE room_id = ?1 AND seq <= ?2", params![room, through])?;
        conn.execute(
            "UPDATE rooms SET pruned_through = MAX(pruned_through, ?2) WHERE room_id = ?1",
            params![room, through],
        )?;
        if let Some(h) = heads.get_mut(&room) {
            h.pruned_through = h.pruned_through.max(through as u64);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventBody, TextDeltaPayload};
    use crate::model::Scope;

    #[derive(Default)]
    struct Collect(Mutex<Vec<(String, u64)>>);
    impl CommitListener for Collect {
        fn committed(&self, room: &str, events: &[CommittedEvent]) {
            let mut v = self.0.lock().unwrap();
            for e in events {
                v.push((room.to_owned(), e.seq));
            }
        }
    }

    fn ev(room: &str, i: usize) -> NewEvent {
        NewEvent {
            room_id: room.into(),
            event_id: format!("e{i}"),
            session_id: "s".into(),
            scope: Scope::Canonical,
            turn_id: None,
            occurred_at_ms: 1,
            body: EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: format!("{i}") }),
        }
    }

    async fn append_n(store: &Store, room: &str, n: usize) -> u64 {
        let (ack, rx) = oneshot::channel();
        store
            .send(WriteOp::Append(AppendBatch {
                room_id: room.into(),
                events: (0..n).map(|i| ev(room, i)).collect(),
                records: vec![],
                ack: Some(ack),
            }))
            .await
            .unwrap();
        rx.await.unwrap().unwrap()
    }

    #[tokio::test]
    async fn seqs_are_gap_free_per_room_and_continue_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let listener = Arc::new(Collect::default());
        let store = Store::open(StoreConfig::new(&path), listener.clone()).unwrap();
        assert_eq!(append_n(&store, "a", 3).await, 3);
        assert_eq!(append_n(&store, "b", 2).await, 2);
        assert_eq!(append_n(&store, "a", 1).await, 4);
        let seen = listener.0.lock().unwrap().clone();
        let a: Vec<u64> = seen.iter().filter(|(r, _)| r == "a").map(|(_, s)| *s).collect();
        assert_eq!(a, vec![1, 2, 3, 4]);
        store.close().await;
        drop(store);

        let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
        assert_eq!(append_n(&store, "a", 1).await, 5);
        let page = store.events_after("a", 2, 10).await.unwrap();
        assert_eq!(page.events.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(page.head_seq, 5);
        let v: serde_json::Value = serde_json::from_str(page.events[0].1.get()).unwrap();
        assert_eq!(v["seq"], 3);
        assert_eq!(v["type"], "message.delta");
    }

    #[tokio::test]
    async fn retention_prunes_but_seq_continues() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
        cfg.retention.max_events_per_room = Some(8);
        let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
        for _ in 0..5 {
            append_n(&store, "r", 4).await;
        }
        let (head, pruned) = store.room_heads("r").await.unwrap();
        assert_eq!(head, 20);
        assert!(pruned >= 10, "pruned through {pruned}");
        let page = store.events_after("r", 0, 100).await.unwrap();
        assert_eq!(page.events.first().map(|e| e.0), Some(pruned + 1));
        assert_eq!(page.events.last().map(|e| e.0), Some(20));
        assert_eq!(page.pruned_through, pruned);
    }

    #[tokio::test]
    async fn a_group_commits_many_events_in_few_transactions() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
        cfg.linger = Duration::from_millis(20);
        let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
        let mut acks = Vec::new();
        for i in 0..200 {
            let (ack, rx) = oneshot::channel();
            store
                .send(WriteOp::Append(AppendBatch {
                    room_id: "r".into(),
                    events: vec![ev("r", i)],
                    records: vec![],
                    ack: Some(ack),
                }))
                .await
                .unwrap();
            acks.push(rx);
        }
        let mut last = 0;
        for rx in acks {
            let seq = rx.await.unwrap().unwrap();
            assert!(seq > last, "acks arrive in seq order");
            last = seq;
        }
        assert_eq!(last, 200);
        let stored: i64 =
            store.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))?)).await.unwrap();
        assert_eq!(stored, 200);
        let commits = store.stats().commits.load(std::sync::atomic::Ordering::Relaxed);
        assert!(commits <= 20, "200 queued events took {commits} commits");
    }

    #[tokio::test]
    async fn a_failed_append_rolls_back_only_itself_within_a_group() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
        cfg.linger = Duration::from_millis(200);
        let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
        let append = |n: usize| {
            let (ack, rx) = oneshot::channel();
            let op = WriteOp::Append(AppendBatch {
                room_id: "r".into(),
                events: (0..n).map(|i| ev("r", i)).collect(),
                records: vec![],
                ack: Some(ack),
            });
            (op, rx)
        };
        let raw = |sql: &'static str| {
            let (reply, rx) = oneshot::channel();
            let job = FnJob {
                f: Some(move |c: &Connection| -> Result<(), StoreError> {
                    c.execute_batch(sql)?;
                    Ok(())
                }),
                value: None,
                reply: Some(reply),
            };
            (WriteOp::Job(Box::new(job)), rx)
        };
        // A first group leaves the room's head cached in the writer (seq 1).
        let (a0, r0) = append(1);
        store.send(a0).await.unwrap();
        assert_eq!(r0.await.unwrap().unwrap(), 1);
        // One group: seq 2 lands; a stray row at seq 4 makes the next 2-event append fail on its
        // second event; the stray row goes; the last append must get seq 3, not clash with seq 2.
        let (a1, r1) = append(1);
        let (j1, _) = raw("INSERT INTO events VALUES ('r', 4, 0, '{}')");
        let (a2, r2) = append(2);
        let (j2, _) = raw("DELETE FROM events WHERE room_id = 'r' AND seq = 4");
        let (a3, r3) = append(1);
        for op in [a1, j1, a2, j2, a3] {
            store.send(op).await.unwrap();
        }
        assert_eq!(r1.await.unwrap().unwrap(), 2);
        assert!(r2.await.unwrap().is_err());
        assert_eq!(r3.await.unwrap().unwrap(), 3, "the failed append's seqs are handed out again");
        let page = store.events_after("r", 0, 10).await.unwrap();
        assert_eq!(page.events.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[tokio::test]
    async fn the_goal_ledger_keeps_the_first_bind_and_marks_conflicts_ambiguous() {
        use crate::goals::GoalIdentity;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
        let key = LedgerKey {
            room_id: "r".into(),
            session_id: "s".into(),
            session_created_at_ms: 1,
            provider_session_id: "t".into(),
            fingerprint: "fp".into(),
        };
        assert_eq!(store.goal_lookup(key.clone()).await.unwrap(), None);
        let a = GoalIdentity::new("a", 1, 0);
        let b = store.goal_bind(key.clone(), a.clone()).await.unwrap();
        assert_eq!((b.identity.clone(), b.ambiguous), (a.clone(), false));
        assert!(!store.goal_bind(key.clone(), a.clone()).await.unwrap().ambiguous, "idempotent");
        let c = store.goal_bind(key.clone(), GoalIdentity::new("b", 2, 0)).await.unwrap();
        assert!(c.ambiguous);
        assert_eq!(c.identity, a, "the first identity stays");
        store.close().await;
        drop(store);
        let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
        let after = store.goal_lookup(key.clone()).await.unwrap().unwrap();
        assert!(after.ambiguous, "ambiguity survives a restart");
        let other = LedgerKey { session_created_at_ms: 2, ..key };
        assert_eq!(store.goal_lookup(other).await.unwrap(), None, "another incarnation of the session");
    }

    #[tokio::test]
    async fn jobs_return_values_after_commit_and_failures_roll_back_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(StoreConfig::new(dir.path().join("db.sqlite")), Arc::new(Collect::default())).unwrap();
        store.set_provider_state("r", "s", "k", "v1".into()).await.unwrap();
        let bad = store.write(|c| {
            c.execute("INSERT INTO provider_state VALUES ('r','s','k2','x')", [])?;
            c.execute("INSERT INTO no_such_table VALUES (1)", [])?;
            Ok(())
        });
        let good = store.set_provider_state("r", "s", "k3", "v3".into());
        let (bad, good) = tokio::join!(bad, good);
        assert!(bad.is_err());
        good.unwrap();
        assert_eq!(store.provider_state("r", "s", "k").await.unwrap().as_deref(), Some("v1"));
        assert_eq!(store.provider_state("r", "s", "k2").await.unwrap(), None, "failed job rolled back");
        assert_eq!(store.provider_state("r", "s", "k3").await.unwrap().as_deref(), Some("v3"));
    }
}
