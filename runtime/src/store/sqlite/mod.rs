//! The SQLite engine (the default): one writer thread, a small pool of read-only connections.

mod access;
mod books;
mod chain;
mod checkpoint;
mod heads;
mod prefill;
mod readers;
mod schema;
mod session_log;
mod session_state;
mod webhooks;
mod writer;

use std::sync::Arc;

use crate::store::group::Inbox;
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use super::health::StoreStats;
use super::types::Value;
use super::types::{
    CommitListener, EventPage, RoomInfo, SessionEventPage, SessionPageFrom, StoreConfig, StoreError,
    record_of_started_event,
};
use super::{Engine, LogReads};
use crate::session::SessionRecord;
use chain::Step;
use readers::ReaderPool;
use schema::{migrate, open_write_connection, room_row};
use writer::Writer;

pub(super) struct Sqlite {
    readers: Arc<ReaderPool>,
    directory: Arc<Directory>,
}

/// Each session record's row (`sessions.id`) by room and session, as the writer last committed
/// it: the table has no index by them (migration 4), and a read of one session's events starts
/// at its record's row.
pub(super) type Directory =
    std::sync::RwLock<std::collections::HashMap<String, std::collections::HashMap<String, (i64, Option<(i64, u64)>)>>>;

/// Opens (creating and migrating) the database and starts the writer thread on `inbox`.
pub(super) fn open(
    config: StoreConfig,
    listener: Arc<dyn CommitListener>,
    stats: Arc<StoreStats>,
    inbox: Inbox,
) -> Result<(Sqlite, std::thread::JoinHandle<()>), StoreError> {
    if let Some(dir) = config.path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut conn = open_write_connection(&config.path, config.synchronous)?;
    migrate(&mut conn)?;
    let readers = Arc::new(ReaderPool::start(config.path.clone(), config.readers)?);
    let checkpointer = checkpoint::Checkpointer::start(config.path.clone())?;
    // Built here, not on its thread: a database it cannot read fails the open, with its error.
    let directory = Arc::new(Directory::default());
    let writer = Writer::new(conn, checkpointer, config, listener, stats, directory.clone())?;
    let handle = std::thread::Builder::new().name("ensemble-store-writer".into()).spawn(move || writer.run(inbox))?;
    Ok((Sqlite { readers, directory }, handle))
}

impl Sqlite {
    /// A session's newest event (row id, seq), from the directory (`None`: no record, or no event).
    fn newest_event(&self, room: &str, session: &str) -> Option<(i64, u64)> {
        self.directory.read().ok()?.get(room)?.get(session)?.1
    }

    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.readers.read(f).await
    }
}

/// A durable operation of one concern as SQLite writes it, inside the writer's transaction (in a
/// savepoint of its own). Implemented in the concern's file (`access.rs`, `webhooks.rs`, …).
pub(in crate::store) trait Write {
    fn write(&self, conn: &Connection) -> Result<Value, StoreError>;

    /// Roughly what it writes, for the checkpointer.
    fn written_hint(&self) -> usize {
        1024
    }
}

#[async_trait]
impl Engine for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.read(|conn| Ok(conn.query_row("SELECT 1", [], |_| Ok(()))?)).await
    }
}

#[async_trait]
impl LogReads for Sqlite {
    async fn events_after(
        &self,
        room_id: &str,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<EventPage, StoreError> {
        let room = room_id.to_owned();
        self.read(move |conn| {
            let (row, found) = chain::page(conn, &room, after, limit as u64, max_bytes)?;
            let mut events = Vec::with_capacity(found.len());
            for (seq, json) in found {
                let json = json.ok_or_else(|| StoreError::Other(format!("room {room}: event {seq} has no JSON")))?;
                events.push((seq, RawValue::from_string(json)?));
            }
            Ok(EventPage { events, head_seq: row.head, pruned_through: row.pruned_through })
        })
        .await
    }

    async fn turn_events(&self, room_id: &str, turn_id: &str) -> Result<Vec<Box<RawValue>>, StoreError> {
        let (room, turn) = (room_id.to_owned(), turn_id.to_owned());
        self.read(move |conn| {
            let mut found = Vec::new();
            let whole = |row: &schema::RoomRow| (row.pruned_through + 1, row.head);
            chain::read(conn, &room, whole, Step::TurnJson(&turn), |_, _, json: Option<String>| found.extend(json))?;
            found.into_iter().rev().map(|json| Ok(RawValue::from_string(json)?)).collect()
        })
        .await
    }

    async fn session_events(
        &self,
        room_id: &str,
        session_id: &str,
        from: SessionPageFrom,
        limit: usize,
        max_bytes: usize,
    ) -> Result<SessionEventPage, StoreError> {
        // The session's newest event as the last commit left it: the read's snapshot has it.
        let last = self.newest_event(room_id, session_id);
        let (room, session) = (room_id.to_owned(), session_id.to_owned());
        self.read(move |conn| session_log::page(conn, &room, &session, last, from, limit, max_bytes)).await
    }

    async fn load_sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        self.read(|conn| {
            // No index by room and session (migration 4): sorted here, not by SQLite. A record
            // still empty is its `session.started` event's (migration 6).
            let mut stmt = conn.prepare(
                "SELECT s.room_id, s.session_id, CASE WHEN s.record = '' THEN e.json ELSE s.record END, s.record = ''
                 FROM sessions s LEFT JOIN events e ON s.record = '' AND e.id = s.started_id",
            )?;
            let rows = stmt.query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, Option<String>>(2)?, row.get(3)?))
            })?;
            let mut out: Vec<(String, String, Option<String>, bool)> = rows.collect::<Result<_, _>>()?;
            out.sort_unstable_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
            Ok(super::readable_records(out.into_iter().map(|(room, session, json, as_started)| {
                match (json, as_started) {
                    (Some(event), true) => record_of_started_event(&event),
                    (Some(json), false) => serde_json::from_str(&json).map_err(StoreError::from),
                    (None, _) => Err(StoreError::Other(format!("{room}/{session}: its session.started event is gone"))),
                }
            })))
        })
        .await
    }

    async fn load_session(&self, room_id: &str, session_id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let (room, session) = (room_id.to_owned(), session_id.to_owned());
        self.read(move |conn| {
            // A scan (no index by room and session, migration 4): read once per session repaired
            // after the store could not write, never on a hot path.
            let row = conn
                .query_row(
                    "SELECT CASE WHEN s.record = '' THEN e.json ELSE s.record END, s.record = ''
                     FROM sessions s LEFT JOIN events e ON s.record = '' AND e.id = s.started_id
                     WHERE s.room_id = ?1 AND s.session_id = ?2",
                    params![room, session],
                    |row| Ok((row.get::<_, Option<String>>(0)?, row.get::<_, bool>(1)?)),
                )
                .optional()?;
            match row {
                None => Ok(None),
                Some((Some(event), true)) => record_of_started_event(&event).map(Some),
                Some((Some(json), false)) => Ok(Some(serde_json::from_str(&json)?)),
                Some((None, _)) => {
                    Err(StoreError::Other(format!("{room}/{session}: its session.started event is gone")))
                }
            }
        })
        .await
    }

    async fn rooms(&self) -> Result<Vec<RoomInfo>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT room_id, head_seq, sessions FROM rooms WHERE head_seq > 0 OR sessions > 0 ORDER BY room_id",
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

    async fn room_heads(&self, room_id: &str) -> Result<(u64, u64), StoreError> {
        let room = room_id.to_owned();
        self.read(move |conn| room_row(conn, &room).map(|r| (r.head, r.pruned_through))).await
    }
}
