//! The store's vocabulary: its configuration, errors, write operations and what reads return.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc, oneshot};

use super::webhooks::OutboxItem;
use crate::session::{Phase, SessionRecord};
use ensemble_core::budget::ByteBudget;
use ensemble_core::event::{EventBody, NewEvent, SessionStartedPayload};
use ensemble_core::goal::Binding;

/// Where a goal generation is bound: the session (and its incarnation) and the provider's thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerKey {
    pub room_id: String,
    pub session_id: String,
    pub session_created_at_ms: i64,
    pub provider_session_id: String,
    pub fingerprint: String,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// The database cannot be reached (PostgreSQL down or restarting): retry later.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// The store's disk is full (what a failed commit becomes once its error is shared by every
    /// waiter of the group): retry once space is freed.
    #[error("the store's disk is full: {0}")]
    Full(String),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the store is closed")]
    Closed,
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// A write refused because it would repeat something unique (a token's id or secret hash);
    /// nothing of it was written.
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Other(String),
}

impl StoreError {
    /// Whether the disk (of the data dir, or of PostgreSQL) is full: SQLite's `SQLITE_FULL`, an
    /// I/O error `ENOSPC` or `EDQUOT`, PostgreSQL's `53100 disk_full`.
    pub fn is_full(&self) -> bool {
        match self {
            Self::Full(_) => true,
            Self::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => e.code == rusqlite::ErrorCode::DiskFull,
            Self::Io(e) => matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)),
            Self::Postgres(e) => e.code() == Some(&tokio_postgres::error::SqlState::DISK_FULL),
            _ => false,
        }
    }

    /// The stable snake_case code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => "store_unavailable",
            Self::Conflict(_) => "conflict",
            e if e.is_full() => "insufficient_storage",
            _ => "store_error",
        }
    }
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
    /// The SQLite database file (unused with `database_url`).
    pub path: PathBuf,
    /// `postgres://…`: the PostgreSQL engine instead of SQLite.
    pub database_url: Option<String>,
    /// PostgreSQL: hold the database's writer lock (an advisory lock on the writer's connection), so
    /// a second server on the same database refuses to start instead of treating the first one's
    /// live sessions as crashed. On by default; off only where several stores share a database on
    /// purpose (the conformance suite's two-host case).
    pub exclusive: bool,
    /// Most events in one commit.
    pub max_batch: usize,
    /// Longest the writer waits for more work before committing a group.
    pub linger: Duration,
    /// Linger also for an operation that finds nothing queued behind it. Off by default: a lone
    /// submit or the first delta of a reply commits at once, and the linger only batches work that
    /// is piling up (on: every commit waits, fewer commits at moderate rates, more latency).
    pub linger_when_idle: bool,
    /// Write operations that may wait for the writer before publishers are held back.
    pub queue_capacity: usize,
    /// Bytes of appends that may wait for the writer before publishers are held back (the count
    /// alone would let large events pile up).
    pub queue_bytes: usize,
    pub retention: Retention,
    pub synchronous: Synchronous,
    /// SQLite: reader threads, each with its own read-only connection (reads never wait for
    /// tokio's blocking pool); PostgreSQL: idle read connections kept.
    pub readers: usize,
    /// SQLite: bytes of the WAL file written (with zeros) ahead of its last frame, so commits
    /// overwrite pages the file has instead of extending it (0: off, for copy-on-write file systems
    /// where an overwrite allocates anew).
    pub wal_prefill: u64,
    /// SQLite: after a failed commit, the store counts as writing again only once the data dir's
    /// file system has this many bytes free (a full disk takes small writes where large ones
    /// fail, so a lone write proves little).
    pub min_free_bytes: u64,
    /// Most bytes of events one read of a room's log returns (a page of `GET …/events`, an
    /// export's, a WebSocket's replay); a page holds at least one event however large. A thousand
    /// events of a MiB made one page of a GiB.
    pub page_bytes: usize,
}

/// [`StoreConfig::wal_prefill`]'s default: a fill every ~128 KiB of WAL, and at most this much of
/// zeros written to disk ahead of frames when a checkpoint syncs the WAL.
pub const DEFAULT_WAL_PREFILL: u64 = 256 << 10;

impl StoreConfig {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            database_url: None,
            exclusive: true,
            max_batch: 512,
            linger: Duration::ZERO,
            linger_when_idle: false,
            queue_capacity: 4096,
            queue_bytes: 16 << 20,
            retention: Retention::default(),
            synchronous: Synchronous::Normal,
            readers: 4,
            wal_prefill: DEFAULT_WAL_PREFILL,
            min_free_bytes: 16 << 20,
            page_bytes: 4 << 20,
        }
    }
}

impl StoreConfig {
    /// The PostgreSQL engine at `url`, with the same defaults.
    pub fn postgres(url: impl Into<String>) -> Self {
        Self { database_url: Some(url.into()), ..Self::new("") }
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

/// A session's durable record as the writer stores it.
pub struct RecordRow {
    pub session_id: String,
    pub updated_at_ms: i64,
    pub body: RecordBody,
}

/// What a record row carries.
pub enum RecordBody {
    /// The record's JSON, serialised where it was folded, so the writer (one thread for every
    /// room) neither copies nor serialises it.
    Json(String),
    /// The record is what the `session.started` event of the same batch carries: its session,
    /// live, with nothing else (see [`SessionRecord::is_as_started`]). A start's record and its
    /// event would hold the same session twice; SQLite keeps a reference to the event instead,
    /// PostgreSQL the record made from it.
    AsStarted,
}

impl RecordRow {
    pub fn of(rec: &SessionRecord) -> Result<Self, StoreError> {
        Ok(Self {
            session_id: rec.session.session_id.clone(),
            updated_at_ms: rec.session.updated_at_ms,
            body: RecordBody::Json(record_json(rec)?),
        })
    }

    /// The record of a session as its `session.started` event in the same batch carries it.
    pub fn as_started(rec: &SessionRecord) -> Self {
        Self {
            session_id: rec.session.session_id.clone(),
            updated_at_ms: rec.session.updated_at_ms,
            body: RecordBody::AsStarted,
        }
    }

    /// The record's JSON: an [`RecordBody::AsStarted`] record's made from the `session.started`
    /// event of its session among `events` (the batch's).
    pub fn json(&self, events: &[NewEvent]) -> Result<std::borrow::Cow<'_, str>, StoreError> {
        match &self.body {
            RecordBody::Json(json) => Ok(std::borrow::Cow::Borrowed(json)),
            RecordBody::AsStarted => {
                let session = events
                    .iter()
                    .find_map(|e| match &e.body {
                        EventBody::SessionStarted(p) if e.session_id == self.session_id => Some(&p.session),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        StoreError::Other(format!(
                            "the record of session {} refers to a session.started event its batch does not have",
                            self.session_id
                        ))
                    })?;
                Ok(std::borrow::Cow::Owned(record_json(&SessionRecord::new((**session).clone(), Phase::Live))?))
            }
        }
    }
}

/// The record a stored `session.started` event stands for (a record stored as a reference to it:
/// [`RecordBody::AsStarted`]).
pub(crate) fn record_of_started_event(event_json: &str) -> Result<SessionRecord, StoreError> {
    #[derive(serde::Deserialize)]
    struct Started {
        #[serde(rename = "type")]
        kind: String,
        payload: SessionStartedPayload,
    }
    let started: Started = serde_json::from_str(event_json)?;
    if started.kind != "session.started" {
        return Err(StoreError::Other(format!(
            "a session record refers to a {} event, not session.started",
            started.kind
        )));
    }
    Ok(SessionRecord::new(started.payload.session.into_session(), Phase::Live))
}

/// A record's JSON in a buffer of about its size: a live session's is ~700 bytes, and
/// `serde_json::to_string` starts at 128 and copied it three times while growing.
pub(crate) fn record_json(rec: &SessionRecord) -> Result<String, StoreError> {
    let mut buf = Vec::with_capacity(1536);
    serde_json::to_writer(&mut buf, rec)?;
    String::from_utf8(buf).map_err(|e| StoreError::Other(format!("a session record serialised to invalid UTF-8: {e}")))
}

/// Events of one room to append, with the session records (of that room) they change.
pub struct AppendBatch {
    pub room_id: String,
    pub events: Vec<NewEvent>,
    pub records: Vec<RecordRow>,
    /// Webhook deliveries of these events, written with them.
    pub outbound: Vec<super::webhooks::Outbound>,
    /// Answered with the last assigned seq once committed.
    pub ack: Option<oneshot::Sender<Result<u64, StoreError>>>,
}

/// One operation for the writer. Each is isolated: if it fails, only its own writes are undone
/// and only its own waiter hears of it.
pub enum WriteOp {
    /// The log: events and the session records they change.
    Append(AppendBatch),
    /// Removes a session record (failed start, nothing else to keep).
    DeleteSession { room_id: String, session_id: String },
    /// An operation of another concern (session state, access, webhooks).
    Durable(super::Durable),
    /// Answered once everything queued before it is committed.
    Flush { ack: oneshot::Sender<Result<(), StoreError>> },
    /// Writes something that changes nothing (SQLite: the schema version as it is; PostgreSQL: a
    /// transaction id), to learn whether the store can write again after a failed commit.
    Probe { ack: oneshot::Sender<Result<(), StoreError>> },
    /// Runs SQL text inside the group, isolated like any operation. For tests (the conformance
    /// suite plants rows both engines understand); nothing in the server sends it.
    #[doc(hidden)]
    Exec { sql: String, ack: oneshot::Sender<Result<(), StoreError>> },
    /// Commits what came before, then stops the writer.
    Shutdown,
}

/// What a durable operation produced, handed to its waiter once committed.
#[derive(Debug)]
pub(super) enum Value {
    Unit,
    Binding(Binding),
    Bool(bool),
    /// A seq or a number of rows.
    Count(u64),
    Outbox(Vec<OutboxItem>),
}

/// A waiter's answer read back from the [`Value`] its operation produced.
pub(super) trait FromValue: Sized {
    fn from_value(v: Value) -> Result<Self, StoreError>;
}

macro_rules! from_value {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl FromValue for $t {
            fn from_value(v: Value) -> Result<Self, StoreError> {
                match v {
                    Value::$variant(x) => Ok(x),
                    other => Err(StoreError::Other(format!("the store answered {other:?}, not {}", stringify!($variant)))),
                }
            }
        }
    )*};
}

from_value!(Binding => Binding, bool => Bool, u64 => Count, Vec<OutboxItem> => Outbox);

impl FromValue for () {
    fn from_value(_: Value) -> Result<Self, StoreError> {
        Ok(())
    }
}

/// An operation in the writer's queue, with the bytes it was charged against the budget.
pub(super) struct Queued {
    pub(super) op: WriteOp,
    pub(super) bytes: usize,
}

/// A reserved place in the writer's queue. Taking it first and sending synchronously lets the
/// controller fold state and enqueue the event under one lock, so the log order is the fold order.
pub struct WritePermit<'a> {
    pub(super) slot: mpsc::Permit<'a, Queued>,
    pub(super) charge: Charge<'a>,
    pub(super) bell: &'a Notify,
}

impl<'a> WritePermit<'a> {
    /// Queues `op`. The writer is woken when the returned [`Rung`] drops: at once if it is not
    /// kept, or after a lock the sender holds, if it is dropped after that lock.
    pub fn send(mut self, op: WriteOp) -> Rung<'a> {
        // The bytes travel with the operation; the writer gives them back when it takes it.
        let bytes = std::mem::take(&mut self.charge.bytes);
        self.slot.send(Queued { op, bytes });
        Rung(self.bell)
    }
}

/// Wakes the store writer for an operation just queued, when dropped.
pub struct Rung<'a>(&'a Notify);

impl Drop for Rung<'_> {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// The senders' end of the writer's queue. The bell rings once more when a sender goes, after its
/// channel end: a writer waiting on the bell then sees the queue closed when the last one has gone.
#[derive(Clone)]
pub(super) struct QueueTx {
    pub(super) tx: mpsc::Sender<Queued>,
    pub(super) bell: RingOnDrop,
}

#[derive(Clone)]
pub(super) struct RingOnDrop(pub(super) Arc<Notify>);

impl Drop for RingOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// Bytes charged against the queue's budget, given back if they never reach the queue.
pub(super) struct Charge<'a> {
    budget: &'a ByteBudget,
    bytes: usize,
}

impl<'a> Charge<'a> {
    pub(super) fn new(budget: &'a ByteBudget, bytes: usize) -> Self {
        Self { budget, bytes }
    }
}

impl Drop for Charge<'_> {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
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

impl EventPage {
    /// Where the next page starts (its `after`) when events follow this one; `None` at the head.
    pub fn next(&self) -> Option<u64> {
        self.events.last().map(|(seq, _)| *seq).filter(|seq| *seq < self.head_seq)
    }
}

/// How many of a page's candidate events (their sizes in bytes, in reading order) it takes: at
/// most `limit`, no more than `max_bytes` of them, and at least one however large. Every page of
/// events is cut so (the room's, a session's in either engine, a side conversation's).
pub fn page_fit(sizes: impl IntoIterator<Item = usize>, limit: usize, max_bytes: usize) -> usize {
    let mut bytes = 0usize;
    let mut n = 0;
    for size in sizes.into_iter().take(limit) {
        bytes = bytes.saturating_add(size);
        if bytes > max_bytes && n > 0 {
            break;
        }
        n += 1;
    }
    n
}

/// Which way a page of one session's events reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionPageFrom {
    /// The session's newest events with `seq < n`: its tail, and older pages backwards.
    Before(u64),
    /// Its oldest events with `seq > n`, forwards.
    After(u64),
}

/// A page of one session's durable events, oldest first.
#[derive(Debug, Default)]
pub struct SessionEventPage {
    pub events: Vec<(u64, Box<RawValue>)>,
    /// The room's latest seq.
    pub head_seq: u64,
    /// Every event of the room with `seq <= pruned_through` is gone.
    pub pruned_through: u64,
    /// The session's newest event (0: none kept).
    pub last_seq: u64,
    /// Whether more of the session's events lie beyond the page, in the direction it reads
    /// (older for `Before`, newer for `After`).
    pub more: bool,
}
