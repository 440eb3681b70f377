//! The store's vocabulary: its configuration, errors, write operations and what reads return.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use rusqlite::Connection;
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
    /// Linger also for an operation that finds nothing queued behind it. Off by default: a lone
    /// submit or the first delta of a reply commits at once, and the linger only batches work that
    /// is piling up (on: every commit waits, fewer commits at moderate rates, more latency).
    pub linger_when_idle: bool,
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
            linger: Duration::ZERO,
            linger_when_idle: false,
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

pub(super) struct FnJob<T, F> {
    pub(super) f: Option<F>,
    pub(super) value: Option<T>,
    pub(super) reply: Option<oneshot::Sender<Result<T, StoreError>>>,
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
pub struct WritePermit<'a>(pub(super) mpsc::Permit<'a, WriteOp>);

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
