//! The PostgreSQL engine: the same tables as SQLite's, a writer task on one connection, reads on a
//! small pool. Room heads are not cached: each append moves its room's row with
//! `INSERT … ON CONFLICT DO UPDATE … RETURNING`, which locks the row until the commit, so writers
//! on several hosts hand out one gap-free `seq` order per room, in commit order.

mod access;
mod leases;
mod schema;
mod session_state;
mod webhooks;
mod writer;

pub use leases::{Claim, Leases, NewClaim};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::store::group::Inbox;
use async_trait::async_trait;
use serde_json::value::RawValue;
use tokio_postgres::{Client, IsolationLevel, NoTls};

use super::health::StoreStats;
use super::types::Value;
use super::types::{
    CommitListener, EventPage, RoomInfo, SessionEventPage, SessionPageFrom, StoreConfig, StoreError, page_fit,
};
use super::{Engine, LogReads};
use crate::session::SessionRecord;
pub(in crate::store) use writer::Stmts;

/// The rooms with their heads and session counts (rooms with sessions but no events included).
const ROOMS_SQL: &str = "SELECT r.room_id, r.head_seq, (SELECT COUNT(*) FROM sessions s WHERE s.room_id = r.room_id)
     FROM rooms r
     UNION
     SELECT s.room_id, 0, COUNT(*) FROM sessions s
     WHERE NOT EXISTS (SELECT 1 FROM rooms r WHERE r.room_id = s.room_id) GROUP BY s.room_id
     ORDER BY 1";

/// How long a connection attempt may take before the database counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects, driving the connection on a task of its own.
async fn connect(url: &str) -> Result<Client, StoreError> {
    let mut cfg: tokio_postgres::Config =
        url.parse().map_err(|e: tokio_postgres::Error| StoreError::Other(format!("database url: {e}")))?;
    cfg.connect_timeout(CONNECT_TIMEOUT);
    if cfg.get_application_name().is_none() {
        cfg.application_name("ensemble");
    }
    let (client, conn) = cfg.connect(NoTls).await.map_err(unavailable)?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "postgres connection ended");
        }
    });
    Ok(client)
}

/// The advisory lock a server's writer connection holds while it runs (`StoreConfig::exclusive`).
pub(super) const WRITER_LOCK: i64 = 0x656e_7365_6d63;

/// Takes the writer lock on this connection (held until it closes: a killed server frees it).
async fn take_writer_lock(client: &Client) -> Result<(), StoreError> {
    let got: bool =
        client.query_one("SELECT pg_try_advisory_lock($1)", &[&WRITER_LOCK]).await.map_err(classify)?.get(0);
    if got {
        Ok(())
    } else {
        Err(StoreError::Other(
            "another Ensemble server is using this database (it holds the writer lock); run one server per database"
                .into(),
        ))
    }
}

/// A connection-level failure (refused, reset, closed): the caller may retry later.
fn unavailable(e: tokio_postgres::Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// An error of a statement, told apart from a lost connection.
fn classify(e: tokio_postgres::Error) -> StoreError {
    if e.is_closed() || e.as_db_error().is_none() && e.code().is_none() {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Postgres(e)
    }
}

pub(super) struct Postgres {
    url: String,
    idle: Mutex<Vec<Client>>,
    max_idle: usize,
}

/// Connects, applies the migrations and starts the writer task on `inbox`.
pub(super) async fn open(
    config: StoreConfig,
    listener: Arc<dyn CommitListener>,
    stats: Arc<StoreStats>,
    inbox: Inbox,
) -> Result<(Arc<Postgres>, tokio::task::JoinHandle<()>), StoreError> {
    let url = config.database_url.clone().ok_or_else(|| StoreError::Other("no database url".into()))?;
    let mut client = connect(&url).await?;
    if config.exclusive {
        take_writer_lock(&client).await?;
    }
    schema::migrate(&mut client).await?;
    let engine = Arc::new(Postgres { url: url.clone(), idle: Mutex::new(Vec::new()), max_idle: config.readers.max(1) });
    let writer = writer::Writer::new(url, client, config, listener, stats).await?;
    let handle = tokio::spawn(writer.run(inbox));
    Ok((engine, handle))
}

impl Postgres {
    async fn client(&self) -> Result<Client, StoreError> {
        let pooled = self.idle.lock().ok().and_then(|mut v| v.pop());
        match pooled {
            Some(c) if !c.is_closed() => Ok(c),
            _ => connect(&self.url).await,
        }
    }

    fn give_back(&self, c: Client) {
        if c.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.max_idle
        {
            idle.push(c);
        }
    }
}

async fn heads(c: &impl tokio_postgres::GenericClient, room: &str) -> Result<(u64, u64), StoreError> {
    let row = c
        .query_opt("SELECT head_seq, pruned_through FROM rooms WHERE room_id = $1", &[&room])
        .await
        .map_err(classify)?;
    Ok(row.map(|r| (r.get::<_, i64>(0) as u64, r.get::<_, i64>(1) as u64)).unwrap_or((0, 0)))
}

#[async_trait]
impl Engine for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.simple_query("SELECT 1").await.map_err(classify)?;
        self.give_back(c);
        Ok(())
    }
}

/// A durable operation of one concern as PostgreSQL writes it: inside the writer's transaction,
/// or in a savepoint of its own when its group is replayed one operation at a time. Implemented
/// in the concern's file (`access.rs`, `webhooks.rs`, …).
#[async_trait]
pub(in crate::store) trait Write: Sync {
    async fn write(&self, tx: &tokio_postgres::Transaction<'_>, stmts: &Stmts) -> Result<Value, StoreError>;
}

#[async_trait]
impl LogReads for Postgres {
    async fn session_events(
        &self,
        room_id: &str,
        session_id: &str,
        from: SessionPageFrom,
        limit: usize,
        max_bytes: usize,
    ) -> Result<SessionEventPage, StoreError> {
        let mut c = self.client().await?;
        let page = async {
            let tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(classify)?;
            let (head_seq, pruned_through) = heads(&tx, room_id).await?;
            let last: Option<i64> = tx
                .query_one(
                    "SELECT max(seq) FROM events WHERE room_id = $1 AND session_id = $2",
                    &[&room_id, &session_id],
                )
                .await
                .map_err(classify)?
                .get(0);
            // Through the index (room, session, seq): sizes of `limit + 1` rows first (the page
            // is cut by bytes before any event is read), then the events of the page.
            let (sql, bound) = match from {
                SessionPageFrom::Before(b) => (
                    "SELECT seq, octet_length(json) FROM events WHERE room_id = $1 AND session_id = $2 AND seq < $3
                     ORDER BY seq DESC LIMIT $4",
                    b,
                ),
                SessionPageFrom::After(a) => (
                    "SELECT seq, octet_length(json) FROM events WHERE room_id = $1 AND session_id = $2 AND seq > $3
                     ORDER BY seq LIMIT $4",
                    a,
                ),
            };
            let bound = i64::try_from(bound).unwrap_or(i64::MAX);
            let rows = tx.query(sql, &[&room_id, &session_id, &bound, &(limit as i64 + 1)]).await.map_err(classify)?;
            let keep = page_fit(rows.iter().map(|r| r.get::<_, i32>(1) as usize), limit, max_bytes);
            let seqs: Vec<i64> = rows.iter().take(keep).map(|r| r.get(0)).collect();
            let more = rows.len() > keep;
            let rows = tx
                .query(
                    "SELECT seq, json FROM events WHERE room_id = $1 AND seq = ANY($2) ORDER BY seq",
                    &[&room_id, &seqs],
                )
                .await
                .map_err(classify)?;
            let mut events = Vec::with_capacity(rows.len());
            for row in rows {
                events.push((row.get::<_, i64>(0) as u64, RawValue::from_string(row.get::<_, String>(1))?));
            }
            tx.commit().await.map_err(classify)?;
            Ok::<_, StoreError>(SessionEventPage {
                events,
                head_seq,
                pruned_through,
                last_seq: last.map(|l| l as u64).unwrap_or(0),
                more,
            })
        }
        .await;
        self.give_back(c);
        page
    }

    async fn events_after(
        &self,
        room_id: &str,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<EventPage, StoreError> {
        let mut c = self.client().await?;
        let page = async {
            // One snapshot for the heads and the page, as SQLite's read transaction gives.
            let tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(classify)?;
            let (head_seq, pruned_through) = heads(&tx, room_id).await?;
            let after = i64::try_from(after).unwrap_or(i64::MAX);
            let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
            // The page ends before the event that would take it past `max_bytes` (the first is
            // always in it), decided on the sizes before any event is read.
            let rows = tx
                .query(
                    "WITH head AS (
                        SELECT seq, octet_length(json) AS size
                        FROM events WHERE room_id = $1 AND seq > $2 ORDER BY seq LIMIT $3
                     ), page AS (
                        SELECT seq, sum(size) OVER (ORDER BY seq) AS upto FROM head
                     )
                     SELECT e.seq, e.json FROM page p JOIN events e ON e.room_id = $1 AND e.seq = p.seq
                     WHERE p.upto <= $4 OR p.seq = (SELECT min(seq) FROM head)
                     ORDER BY e.seq",
                    &[&room_id, &after, &(limit as i64), &max_bytes],
                )
                .await
                .map_err(classify)?;
            let mut events = Vec::with_capacity(rows.len());
            for row in rows {
                events.push((row.get::<_, i64>(0) as u64, RawValue::from_string(row.get::<_, String>(1))?));
            }
            tx.commit().await.map_err(classify)?;
            Ok::<_, StoreError>(EventPage { events, head_seq, pruned_through })
        }
        .await;
        self.give_back(c);
        page
    }

    async fn turn_events(&self, room_id: &str, turn_id: &str) -> Result<Vec<Box<RawValue>>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "SELECT json FROM events WHERE room_id = $1 AND (json::jsonb ->> 'turnId') = $2 ORDER BY seq",
                &[&room_id, &turn_id],
            )
            .await
            .map_err(classify);
        self.give_back(c);
        let mut out = Vec::new();
        for row in rows? {
            out.push(RawValue::from_string(row.get::<_, String>(0))?);
        }
        Ok(out)
    }

    async fn load_sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        let c = self.client().await?;
        let rows = c.query("SELECT record FROM sessions ORDER BY room_id, session_id", &[]).await.map_err(classify);
        self.give_back(c);
        Ok(super::parse_records(rows?.into_iter().map(|r| r.get::<_, String>(0)).collect()))
    }

    async fn load_session(&self, room_id: &str, session_id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query("SELECT record FROM sessions WHERE room_id = $1 AND session_id = $2", &[&room_id, &session_id])
            .await
            .map_err(classify);
        self.give_back(c);
        Ok(super::parse_records(rows?.into_iter().map(|r| r.get::<_, String>(0)).collect()).pop())
    }

    async fn rooms(&self) -> Result<Vec<RoomInfo>, StoreError> {
        let c = self.client().await?;
        let rows = c.query(ROOMS_SQL, &[]).await.map_err(classify);
        self.give_back(c);
        Ok(rows?
            .into_iter()
            .map(|r| RoomInfo {
                room_id: r.get(0),
                head_seq: r.get::<_, i64>(1) as u64,
                session_count: r.get::<_, i64>(2) as u64,
            })
            .collect())
    }

    async fn room_heads(&self, room_id: &str) -> Result<(u64, u64), StoreError> {
        let c = self.client().await?;
        let h = heads(&c, room_id).await;
        self.give_back(c);
        h
    }
}
