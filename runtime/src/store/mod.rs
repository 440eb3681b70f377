//! The store: sessions, room event logs, provider state, the goal ledger, access tokens and the
//! audit trail, behind one interface with two engines — embedded SQLite (the default) and
//! PostgreSQL (`postgres://…`, for several hosts sharing rooms).
//!
//! Writes of both engines go through one queue to one writer that commits in groups: it takes
//! whatever is queued (up to `max_batch` events, lingering for more only when work is piling up),
//! runs every operation isolated (a failed one undoes only its own writes), commits, and only then
//! acknowledges the operations and hands the committed events to the [`CommitListener`] (the room
//! bus) in `seq` order. So an event is fanned out only once it is durable.
//!
//! Room `seq`s are assigned inside the committing transaction, so they continue across restarts and
//! never repeat or skip, even when old events are pruned. SQLite keeps each room's head in the
//! writer (one process owns the file); PostgreSQL takes it from the `rooms` row, locked by the
//! `UPDATE … RETURNING` that moves it, so writers on several hosts commit a room in `seq` order.
//!
//! Audit records get their `seq` the same way: from one counter row moved inside the committing
//! transaction, gap-free, in commit order across hosts, and continued after a prune.
//!
//! The same conformance suite (`tests/store_conformance.rs`) runs against both engines.

mod access;
mod group;
mod health;
mod postgres;
mod session_state;
mod sqlite;
mod types;
mod webhooks;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

pub use access::{AuditRecord, TokenRecord};
pub use health::{StoreHealth, StoreStats, WriteFailure};
pub use postgres::{Claim, Leases, NewClaim};
pub use types::{
    AppendBatch, CommitListener, CommittedEvent, DEFAULT_WAL_PREFILL, EventPage, LedgerKey, RecordBody, RecordRow,
    Retention, RoomInfo, Rung, SessionEventPage, SessionPageFrom, StoreConfig, StoreError, Synchronous, WriteOp,
    WritePermit, page_fit,
};
pub use webhooks::{
    ATTEMPTS_KEPT, NewOutboxItem, Outbound, OutboxAttempt, OutboxClaim, OutboxItem, OutboxState, Settle, WebhookRecord,
    with_attempt,
};

use access::{AccessOp, AccessReads};
use group::Inbox;
use session_state::{SessionStateOp, SessionStateReads};
use types::{Charge, FromValue, QueueTx, Queued, RingOnDrop, Value};
use webhooks::{WebhookOp, WebhookReads};

use crate::session::SessionRecord;
use ensemble_core::budget::ByteBudget;
use ensemble_core::goal::{Binding, GoalIdentity};

/// What an engine answers besides the writes (which reach it through the queue), by concern:
/// the log here, the others in their files (`access.rs`, `webhooks.rs`, `session_state.rs`),
/// each implemented by each engine in its file of the same name.
#[async_trait]
trait Engine: LogReads + SessionStateReads + AccessReads + WebhookReads + Send + Sync {
    fn name(&self) -> &'static str;
    /// Reaches the database (for `/readyz`).
    async fn ping(&self) -> Result<(), StoreError>;
}

/// The reads of the log: rooms, their events, the sessions' records.
#[async_trait]
trait LogReads {
    /// At most `limit` events, and no more than `max_bytes` of them (at least one).
    async fn events_after(
        &self,
        room_id: &str,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<EventPage, StoreError>;
    async fn turn_events(&self, room_id: &str, turn_id: &str) -> Result<Vec<Box<RawValue>>, StoreError>;
    /// A page of one session's events (at most `limit`, no more than `max_bytes`: at least one).
    async fn session_events(
        &self,
        room_id: &str,
        session_id: &str,
        from: SessionPageFrom,
        limit: usize,
        max_bytes: usize,
    ) -> Result<SessionEventPage, StoreError>;
    async fn load_sessions(&self) -> Result<Vec<SessionRecord>, StoreError>;
    async fn load_session(&self, room_id: &str, session_id: &str) -> Result<Option<SessionRecord>, StoreError>;
    async fn rooms(&self) -> Result<Vec<RoomInfo>, StoreError>;
    async fn room_heads(&self, room_id: &str) -> Result<(u64, u64), StoreError>;
}

/// A durable operation of one concern besides the log, with its waiter. The concern's file in
/// `store/` declares its operations (an enum) and what it reads (a trait); each engine implements
/// both in a file of the same name (`sqlite::Write` and `postgres::Write` for the operations), so
/// a new durable feature adds those and edits neither writer.
pub struct Durable {
    op: Box<dyn Op>,
    ack: oneshot::Sender<Result<Value, StoreError>>,
}

/// What every engine can write.
trait Op: sqlite::Write + postgres::Write + Send + Sync {}

impl<T: sqlite::Write + postgres::Write + Send + Sync> Op for T {}

/// The writer's queue: bounded by count (`queue_capacity`) and by bytes (`queue_bytes`).
fn queue(config: &StoreConfig) -> (QueueTx, Inbox) {
    let (tx, rx) = mpsc::channel(config.queue_capacity.max(1));
    let bell = Arc::new(tokio::sync::Notify::new());
    let inbox = Inbox { rx, budget: Arc::new(ByteBudget::new(config.queue_bytes)), bell: bell.clone() };
    (QueueTx { tx, bell: RingOnDrop(bell) }, inbox)
}

/// Refuses a database whose schema is newer than this build's migrations (a downgrade).
fn check_schema_version(version: usize, known: usize) -> Result<(), StoreError> {
    if version > known {
        return Err(StoreError::Other(format!(
            "the database has schema version {version}, newer than this build knows ({known})"
        )));
    }
    Ok(())
}

fn parse_records(texts: Vec<String>) -> Vec<SessionRecord> {
    readable_records(texts.into_iter().map(|json| serde_json::from_str(&json).map_err(StoreError::from)))
}

/// The records that could be read; each that could not is logged and skipped.
fn readable_records(records: impl ExactSizeIterator<Item = Result<SessionRecord, StoreError>>) -> Vec<SessionRecord> {
    let mut out = Vec::with_capacity(records.len());
    for rec in records {
        match rec {
            Ok(rec) => out.push(rec),
            // A record this version cannot read is kept in the database, not dropped.
            Err(e) => tracing::error!(error = %e, "skipping unreadable session record"),
        }
    }
    out
}

enum WriterHandle {
    Thread(std::thread::JoinHandle<()>),
    Task(tokio::task::JoinHandle<()>),
}

#[derive(Clone)]
pub struct Store {
    tx: QueueTx,
    budget: Arc<ByteBudget>,
    engine: Arc<dyn Engine>,
    writer: Arc<Mutex<Option<WriterHandle>>>,
    stats: Arc<StoreStats>,
    leases: Option<Leases>,
    /// See [`Store::page_bytes`].
    page_bytes: usize,
}

impl Store {
    /// Opens (creating and migrating) the SQLite database at `config.path` and starts the writer.
    pub fn open(config: StoreConfig, listener: Arc<dyn CommitListener>) -> Result<Self, StoreError> {
        let (tx, inbox) = queue(&config);
        let budget = inbox.budget.clone();
        let stats = Arc::new(StoreStats::default());
        let page_bytes = config.page_bytes;
        let (engine, handle) = sqlite::open(config, listener, stats.clone(), inbox)?;
        Ok(Self::assemble(tx, budget, Arc::new(engine), WriterHandle::Thread(handle), stats, page_bytes))
    }

    /// Opens the engine `config` names: PostgreSQL with `database_url`, else SQLite.
    pub async fn connect(config: StoreConfig, listener: Arc<dyn CommitListener>) -> Result<Self, StoreError> {
        if config.database_url.is_none() {
            return Self::open(config, listener);
        }
        let (tx, inbox) = queue(&config);
        let budget = inbox.budget.clone();
        let stats = Arc::new(StoreStats::default());
        let page_bytes = config.page_bytes;
        let (engine, handle) = postgres::open(config, listener, stats.clone(), inbox).await?;
        let leases = Leases::new(engine.clone());
        let mut store = Self::assemble(tx, budget, engine, WriterHandle::Task(handle), stats, page_bytes);
        store.leases = Some(leases);
        Ok(store)
    }

    fn assemble(
        tx: QueueTx,
        budget: Arc<ByteBudget>,
        engine: Arc<dyn Engine>,
        w: WriterHandle,
        stats: Arc<StoreStats>,
        page_bytes: usize,
    ) -> Self {
        let writer = Arc::new(Mutex::new(Some(w)));
        Self { tx, budget, engine, writer, stats, leases: None, page_bytes: page_bytes.max(1) }
    }

    /// Host leases and session owners, shared by the hosts of one database (PostgreSQL only).
    pub fn leases(&self) -> Option<&Leases> {
        self.leases.as_ref()
    }

    /// `sqlite` or `postgres`.
    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
    }

    /// Whether the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.engine.ping().await
    }

    pub fn stats(&self) -> &StoreStats {
        &self.stats
    }

    /// Whether the store can write, and which sessions lost events while it could not.
    pub fn health(&self) -> &StoreHealth {
        &self.stats.health
    }

    /// Waits for a place in the writer queue for an append of about `bytes`: until the queue holds
    /// fewer than its byte budget and fewer operations than its capacity. The charge goes back to
    /// the budget when the writer takes the append (or if the permit is dropped unused).
    pub async fn reserve(&self, bytes: usize) -> Result<WritePermit<'_>, StoreError> {
        self.budget.admit(bytes).await;
        let charge = Charge::new(&self.budget, bytes);
        let slot = self.tx.tx.reserve().await.map_err(|_| StoreError::Closed)?;
        Ok(WritePermit { slot, charge, bell: &self.tx.bell.0 })
    }

    /// Queues an operation, waiting only for a place by count: these are operations whose sender
    /// awaits their commit (or tests), so each sender has at most one in the queue.
    pub async fn send(&self, op: WriteOp) -> Result<(), StoreError> {
        self.tx.tx.send(Queued { op, bytes: 0 }).await.map_err(|_| StoreError::Closed)?;
        self.tx.bell.0.notify_one();
        Ok(())
    }

    /// Operations queued for the writer (a gauge for `/metrics`).
    pub fn queue_len(&self) -> usize {
        self.tx.tx.max_capacity() - self.tx.tx.capacity()
    }

    /// Bytes of appends queued for the writer (a gauge for `/metrics`).
    pub fn queued_bytes(&self) -> usize {
        self.budget.queued()
    }

    async fn ask<T>(
        &self,
        op: impl FnOnce(oneshot::Sender<Result<T, StoreError>>) -> WriteOp,
    ) -> Result<T, StoreError> {
        let (ack, rx) = oneshot::channel();
        self.send(op(ack)).await?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Writes a durable operation of one concern; its answer once committed.
    async fn durable<T: FromValue>(&self, op: impl Op + 'static) -> Result<T, StoreError> {
        let value = self.ask(|ack| WriteOp::Durable(Durable { op: Box::new(op), ack })).await?;
        T::from_value(value)
    }

    /// Resolves once everything queued before it is committed.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.ask(|ack| WriteOp::Flush { ack }).await
    }

    /// Writes something that changes nothing, through the writer: whether the store can write.
    pub async fn probe(&self) -> Result<(), StoreError> {
        self.ask(|ack| WriteOp::Probe { ack }).await
    }

    /// Runs SQL text in the writer's next group, isolated like any operation (tests plant rows with
    /// it; the SQL must suit the engine).
    #[doc(hidden)]
    pub async fn exec(&self, sql: &str) -> Result<(), StoreError> {
        let sql = sql.to_owned();
        self.ask(|ack| WriteOp::Exec { sql, ack }).await
    }

    /// Stops the writer after it has committed everything queued, and waits for it.
    pub async fn close(&self) {
        let _ = self.send(WriteOp::Shutdown).await;
        let handle = self.writer.lock().ok().and_then(|mut h| h.take());
        match handle {
            Some(WriterHandle::Thread(h)) => {
                let _ = tokio::task::spawn_blocking(move || h.join()).await;
            }
            Some(WriterHandle::Task(h)) => {
                let _ = h.await;
            }
            None => {}
        }
    }

    /// Events of a room with `seq > after`, oldest first: at most `limit`, and no more than
    /// [`Self::page_bytes`] of them (always at least one, however large), so one read never holds
    /// a page of large events whole. `EventPage::more` says whether more follow.
    pub async fn events_after(&self, room_id: &str, after: u64, limit: usize) -> Result<EventPage, StoreError> {
        self.engine.events_after(room_id, after, limit, self.page_bytes).await
    }

    /// The most bytes of events one read returns (`--events-page-bytes`).
    pub fn page_bytes(&self) -> usize {
        self.page_bytes
    }

    /// The events of one turn of a room, oldest first (recovery reads what an interrupted turn left
    /// open). A scan of the room's log: used once per interrupted turn at start-up.
    pub async fn turn_events(&self, room_id: &str, turn_id: &str) -> Result<Vec<Box<RawValue>>, StoreError> {
        self.engine.turn_events(room_id, turn_id).await
    }

    /// A page of one session's events, oldest first, read from its own chain (SQLite) or index
    /// (PostgreSQL): its tail (`Before`) costs what the page holds, not the room's history. Sized
    /// as [`Self::events_after`]'s pages.
    pub async fn session_events(
        &self,
        room_id: &str,
        session_id: &str,
        from: SessionPageFrom,
        limit: usize,
    ) -> Result<SessionEventPage, StoreError> {
        self.engine.session_events(room_id, session_id, from, limit, self.page_bytes).await
    }

    pub async fn load_sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.engine.load_sessions().await
    }

    /// One session's durable record (`None`: it has none).
    pub async fn load_session(&self, room_id: &str, session_id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.engine.load_session(room_id, session_id).await
    }

    pub async fn rooms(&self) -> Result<Vec<RoomInfo>, StoreError> {
        self.engine.rooms().await
    }

    /// The current head and prune point of a room (0, 0 for a room never written).
    pub async fn room_heads(&self, room_id: &str) -> Result<(u64, u64), StoreError> {
        self.engine.room_heads(room_id).await
    }

    /// Provider-private state of a session (e.g. the scripted provider's conversation).
    pub async fn provider_state(
        &self,
        room_id: &str,
        session_id: &str,
        key: &str,
    ) -> Result<Option<String>, StoreError> {
        self.engine.provider_state(room_id, session_id, key).await
    }

    /// The ledger's binding of a goal generation.
    pub async fn goal_lookup(&self, key: LedgerKey) -> Result<Option<Binding>, StoreError> {
        self.engine.goal_lookup(key).await
    }

    /// Binds a goal generation: the first bind wins; binding another identity makes it ambiguous
    /// for good. Returns the binding as it is now. Durable once this returns.
    pub async fn goal_bind(&self, key: LedgerKey, identity: GoalIdentity) -> Result<Binding, StoreError> {
        self.durable(SessionStateOp::GoalBind { key, identity }).await
    }

    pub async fn set_provider_state(
        &self,
        room_id: &str,
        session_id: &str,
        key: &str,
        value: String,
    ) -> Result<(), StoreError> {
        let (room_id, session_id, key) = (room_id.to_owned(), session_id.to_owned(), key.to_owned());
        self.durable(SessionStateOp::SetProviderState { room_id, session_id, key, value }).await
    }

    /// Inserts a token; [`StoreError::Conflict`] when its id or secret hash exists. Durable once
    /// this returns.
    pub async fn token_insert(&self, token: TokenRecord) -> Result<(), StoreError> {
        self.durable(AccessOp::TokenInsert(token)).await
    }

    /// Marks a token revoked at `at_ms`: `Ok(true)` if it existed and was not revoked yet,
    /// `Ok(false)` otherwise (the first revocation's time stays). Every token it made (by
    /// `created_by_id`), transitively, is revoked in the same write, those not revoked yet at `at_ms`.
    pub async fn token_revoke(&self, id: &str, at_ms: i64) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.durable(AccessOp::TokenRevoke { id, at_ms }).await
    }

    /// Every token (revoked and expired ones included), ordered by `created_at_ms`, then by id
    /// (byte order).
    pub async fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.engine.tokens().await
    }

    /// Records last use times in one write: a token's `last_used_at_ms` only ever moves forward;
    /// unknown ids are ignored.
    pub async fn token_touch(&self, used: Vec<(String, i64)>) -> Result<(), StoreError> {
        self.durable(AccessOp::TokenTouch(used)).await
    }

    /// Appends audit records in one commit, assigning their seqs in order (their own `seq` is
    /// ignored); returns the last seq assigned (the trail's head when `records` is empty).
    pub async fn audit_append(&self, records: Vec<AuditRecord>) -> Result<u64, StoreError> {
        self.durable(AccessOp::AuditAppend(records)).await
    }

    /// Audit records with `seq > after`, ascending, at most `limit`.
    pub async fn audit_after(&self, after: u64, limit: usize) -> Result<Vec<AuditRecord>, StoreError> {
        self.engine.audit_after(after, limit).await
    }

    /// Deletes the tokens revoked or expired before `before_ms` (retention); returns how many.
    pub async fn token_prune(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.durable(AccessOp::TokenPrune { before_ms }).await
    }

    /// Deletes audit records with `at_ms < before_ms` (retention); returns how many. Seqs go on
    /// from the last one assigned, also when every record is gone.
    pub async fn audit_prune(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.durable(AccessOp::AuditPrune { before_ms }).await
    }

    /// Inserts a webhook: `Ok(false)` when its id exists. Durable once this returns.
    pub async fn webhook_insert(&self, hook: WebhookRecord) -> Result<bool, StoreError> {
        self.durable(WebhookOp::Put { hook, create: true }).await
    }

    /// Replaces a webhook: `Ok(false)` when there is none.
    pub async fn webhook_update(&self, hook: WebhookRecord) -> Result<bool, StoreError> {
        self.durable(WebhookOp::Put { hook, create: false }).await
    }

    /// Deletes a webhook and its deliveries: whether it existed.
    pub async fn webhook_delete(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.durable(WebhookOp::Delete { id }).await
    }

    /// Every webhook, by creation time, then id.
    pub async fn webhooks(&self) -> Result<Vec<WebhookRecord>, StoreError> {
        self.engine.webhooks().await
    }

    /// A webhook's deliveries, newest first: those with an id below `before`, at most `limit`.
    pub async fn deliveries(
        &self,
        webhook_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        self.engine.deliveries(webhook_id, before, limit).await
    }

    /// Inserts a delivery of no event (a test delivery); returns its id.
    pub async fn outbox_insert(&self, item: NewOutboxItem) -> Result<i64, StoreError> {
        Ok(self.durable::<u64>(WebhookOp::OutboxInsert(item)).await? as i64)
    }

    /// Claims due deliveries for a host (see [`OutboxClaim`]).
    pub async fn outbox_claim(&self, claim: OutboxClaim) -> Result<Vec<OutboxItem>, StoreError> {
        self.durable(WebhookOp::OutboxClaim(claim)).await
    }

    /// Records an attempt of a delivery `host` holds: whether it still held it.
    pub async fn outbox_settle(
        &self,
        id: i64,
        host: &str,
        attempt: OutboxAttempt,
        settle: Settle,
    ) -> Result<bool, StoreError> {
        let host = host.to_owned();
        self.durable(WebhookOp::OutboxSettle { id, host, attempt, settle }).await
    }

    /// Deletes settled deliveries made before `before_ms`; returns how many.
    pub async fn outbox_prune(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.durable(WebhookOp::OutboxPrune { before_ms }).await
    }
}
