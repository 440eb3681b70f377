//! The database file: the writer's connection and the embedded, ordered migrations.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::store::types::{StoreError, Synchronous};

/// A room's row: its head, how far its log is pruned, how many session records it holds, and the
/// row id of its newest event (0: none), where the room's chain of events starts (migration 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RoomRow {
    pub(super) head: u64,
    pub(super) pruned_through: u64,
    pub(super) sessions: u64,
    pub(super) last_id: i64,
    /// Every session record of the room holds its newest event through this seq (migration 12):
    /// the writer keeps them exact in memory and writes them now and then, so after a crash only
    /// the events above this are read again to find them.
    pub(super) heads_through: u64,
}

/// A room's row, zeros for a room without one.
pub(super) fn room_row(conn: &Connection, room: &str) -> Result<RoomRow, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT head_seq, pruned_through, sessions, last_id, heads_through FROM rooms WHERE room_id = ?1",
        )?
        .query_row(params![room], |row| {
            Ok(RoomRow {
                head: row.get::<_, i64>(0)? as u64,
                pruned_through: row.get::<_, i64>(1)? as u64,
                sessions: row.get::<_, i64>(2)? as u64,
                last_id: row.get(3)?,
                heads_through: row.get::<_, i64>(4)? as u64,
            })
        })
        .optional()?
        .unwrap_or_default())
}

/// WAL pages after which a commit checkpoints, on the writer's connection.
///
/// This checkpoint stays on: only a checkpoint right after a commit, on this connection, finds
/// every frame copied and lets the next commit restart the WAL from its start (without it the WAL
/// grows without bound). The `checkpoint` thread copies most frames before it, so it finds little
/// left to do, but what it copies it must fsync (the WAL, the database, and the WAL header once it
/// restarts), and the writer commits nothing meanwhile: set high, it runs rarely and stalls the
/// writer rarely (the lifecycle bench's measurements are in docs/performance/log.md). A restart
/// after a stop reads no WAL (the writer empties it when it stops); after a crash SQLite reads
/// back at most that much.
pub(super) const AUTOCHECKPOINT_PAGES: u32 = 32_000;

pub(super) fn open_write_connection(path: &Path, sync: Synchronous) -> Result<Connection, StoreError> {
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
    // Until the writer replaces it with its own hook doing the same (`prefill.rs`), for migrations.
    conn.pragma_update(None, "wal_autocheckpoint", AUTOCHECKPOINT_PAGES)?;
    // Savepoints' statement journals in memory, not spilled to temporary files.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // The writer caches about 25 statements (rusqlite keeps 16 by default): none of the hot ones
    // is parsed again after a rare one (retention, the goal ledger, a token's insert) ran.
    conn.set_prepared_statement_cache_capacity(32);
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
    // 3: events and session records in row-id tables with a unique index, instead of clustered by
    // room. Their rows are large; clustered, a group of starts across many rooms split pages in
    // as many places and the commit wrote a page for each to the WAL. Appended by row id, the
    // rows land at the end of one B-tree and only the small index entries go to each room's page.
    "CREATE TABLE events_v3 (
        id INTEGER PRIMARY KEY,
        room_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        occurred_at_ms INTEGER NOT NULL,
        json TEXT NOT NULL
     );
     INSERT INTO events_v3 (room_id, seq, occurred_at_ms, json)
        SELECT room_id, seq, occurred_at_ms, json FROM events ORDER BY room_id, seq;
     DROP TABLE events;
     ALTER TABLE events_v3 RENAME TO events;
     CREATE UNIQUE INDEX events_room_seq ON events (room_id, seq);
     CREATE TABLE sessions_v3 (
        id INTEGER PRIMARY KEY,
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        record TEXT NOT NULL,
        updated_at_ms INTEGER NOT NULL
     );
     INSERT INTO sessions_v3 (room_id, session_id, record, updated_at_ms)
        SELECT room_id, session_id, record, updated_at_ms FROM sessions ORDER BY room_id, session_id;
     DROP TABLE sessions;
     ALTER TABLE sessions_v3 RENAME TO sessions;
     CREATE UNIQUE INDEX sessions_room_session ON sessions (room_id, session_id);",
    // 4: session records without an index by room. Kept with each insert, it put each room's
    // entries on a page of their own: a group of starts across many rooms rewrote a page per room.
    // The writer finds a record by its row id (it loads them all when it starts), and each room's
    // row counts its records for `GET /v1/rooms`.
    "ALTER TABLE rooms ADD COLUMN sessions INTEGER NOT NULL DEFAULT 0;
     UPDATE rooms SET sessions = (SELECT COUNT(*) FROM sessions s WHERE s.room_id = rooms.room_id);
     INSERT INTO rooms (room_id, head_seq, sessions)
        SELECT room_id, 0, COUNT(*) FROM sessions WHERE room_id NOT IN (SELECT room_id FROM rooms) GROUP BY room_id;
     DROP INDEX sessions_room_session;",
    // 5: events without an index by room. Each event row links to the room's previous one
    // (`prev_id`), the room's row holds its newest (`last_id`), and every `MARK_EVERY`-th seq of a
    // room has an entry in `event_marks` to enter the chain near any seq. Kept with each insert,
    // the index put each room's entries on a page of their own, and a group of starts across many
    // rooms rewrote a page per room (docs/performance/log.md). Rooms whose row lags their events (a
    // room's events without a row) get their head from the events, so no seq is handed out twice.
    "ALTER TABLE events ADD COLUMN prev_id INTEGER;
     UPDATE events SET prev_id = (SELECT p.id FROM events p
        WHERE p.room_id = events.room_id AND p.seq < events.seq ORDER BY p.seq DESC LIMIT 1);
     ALTER TABLE rooms ADD COLUMN last_id INTEGER NOT NULL DEFAULT 0;
     INSERT INTO rooms (room_id, head_seq)
        SELECT DISTINCT room_id, 0 FROM events WHERE room_id NOT IN (SELECT room_id FROM rooms);
     UPDATE rooms SET
        head_seq = MAX(head_seq, COALESCE((SELECT MAX(seq) FROM events e WHERE e.room_id = rooms.room_id), 0)),
        last_id = COALESCE((SELECT e.id FROM events e WHERE e.room_id = rooms.room_id ORDER BY e.seq DESC LIMIT 1), 0);
     CREATE TABLE event_marks (
        room_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        id INTEGER NOT NULL,
        PRIMARY KEY (room_id, seq)
     ) WITHOUT ROWID;
     INSERT INTO event_marks SELECT room_id, seq, id FROM events WHERE seq % 32 = 0;
     DROP INDEX events_room_seq;",
    // 6: a start's record kept as a reference to its `session.started` event (`started_id`, with
    // `record` empty until the record first changes), not as a second copy of the same session: a
    // record was a large share of the pages a start wrote to the WAL. No index: the writer knows which
    // records still refer to an event (it gives them their JSON before retention prunes it).
    "ALTER TABLE sessions ADD COLUMN started_id INTEGER;",
    // 7: a provider's constant list (the scripted agent's commands) kept once. An event that
    // carried one was stored with `null` in its place and `payload_ref` naming the row that held
    // it; readers spliced it back. Undone by 8.
    "CREATE TABLE shared_payloads (id INTEGER PRIMARY KEY, json TEXT NOT NULL UNIQUE);
     ALTER TABLE events ADD COLUMN payload_ref INTEGER;",
    // 8: migration 7 undone — its gain was within the machine's noise, and every read spliced the list back. Each event that referred
    // to a shared list gets it back in its own JSON, so an event is its row again.
    "UPDATE events SET json = substr(json, 1, length(json) - 6)
            || (SELECT s.json FROM shared_payloads s WHERE s.id = events.payload_ref) || '}}'
        WHERE payload_ref IS NOT NULL;
     ALTER TABLE events DROP COLUMN payload_ref;
     DROP TABLE shared_payloads;",
    // 9: access tokens (a hash of each secret, never the secret; rooms as a JSON array) and the
    // audit trail. An audit record's seq comes from the one `audit_head` row, moved in the
    // appending transaction: gap-free, and continued after a prune that took every record (a
    // rowid alias would start again after the largest left). No index on `at_ms`: every request
    // that changes something writes a record, and the hourly retention finds its cut by seq.
    "CREATE TABLE access_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        rooms TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at_ms INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        expires_at_ms INTEGER,
        revoked_at_ms INTEGER,
        last_used_at_ms INTEGER
     ) WITHOUT ROWID;
     CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        token_id TEXT,
        actor_name TEXT,
        method TEXT NOT NULL,
        route TEXT NOT NULL,
        room_id TEXT,
        session_id TEXT,
        status INTEGER NOT NULL,
        code TEXT
     );
     CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), last_seq INTEGER NOT NULL);
     INSERT INTO audit_head VALUES (1, 0);",
    // 10: webhooks and their outbox. A delivery is written with the event it announces; its id
    // never repeats (AUTOINCREMENT), so the deliveries list pages by it after a prune too.
    "CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        rooms TEXT NOT NULL,
        secret TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        description TEXT,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL,
        created_by TEXT NOT NULL
     ) WITHOUT ROWID;
     CREATE TABLE webhook_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        webhook_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        room_id TEXT,
        session_id TEXT,
        event_json TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_at_ms INTEGER NOT NULL,
        claimed_by TEXT NOT NULL,
        claimed_until_ms INTEGER NOT NULL,
        log TEXT NOT NULL,
        UNIQUE (webhook_id, event_id)
     );
     CREATE INDEX webhook_outbox_due ON webhook_outbox (webhook_id, state, next_at_ms);",
    // 11: the id of the token that made each token, so a revocation takes what the token made
    // with it (tokens made before have none, and hang off nobody).
    "ALTER TABLE access_tokens ADD COLUMN created_by_id TEXT;
     CREATE INDEX access_tokens_maker ON access_tokens (created_by_id);",
    // 12: each session's events as a chain of their own, as a room's are (migration 5), so a
    // session's tail is read without walking its room's: every event row names its session
    // (`session_id`, NULL for none) and links to that session's previous event in the room
    // (`session_prev_id`); each session record's row holds its newest event (`last_id`,
    // `last_seq`), kept exact in the writer's memory and written with the record or now and then
    // (`rooms.heads_through` says through which seq they are). No index by session: kept with
    // each insert it would cost what migration 5 saved (a page per active session and group).
    "ALTER TABLE events ADD COLUMN session_id TEXT;
     ALTER TABLE events ADD COLUMN session_prev_id INTEGER;
     UPDATE events SET session_id = NULLIF(json_extract(json, '$.sessionId'), '');
     WITH links AS (
        SELECT id, LAG(id) OVER (PARTITION BY room_id, session_id ORDER BY seq) AS prev
        FROM events WHERE session_id IS NOT NULL
     )
     UPDATE events SET session_prev_id = links.prev FROM links WHERE links.id = events.id;
     ALTER TABLE sessions ADD COLUMN last_id INTEGER;
     ALTER TABLE sessions ADD COLUMN last_seq INTEGER;
     WITH last AS (
        SELECT room_id, session_id, MAX(seq) AS seq, id FROM events
        WHERE session_id IS NOT NULL GROUP BY room_id, session_id
     )
     UPDATE sessions SET last_id = last.id, last_seq = last.seq
        FROM last WHERE last.room_id = sessions.room_id AND last.session_id = sessions.session_id;
     ALTER TABLE rooms ADD COLUMN heads_through INTEGER NOT NULL DEFAULT 0;
     UPDATE rooms SET heads_through = head_seq;",
];

/// Every how many seqs a room's event chain has an entry in `event_marks` (migration 5 writes the
/// same number into its SQL): a read walks fewer than this many rows before the ones it returns
/// (half on average; with marks twice as sparse, random pages read over HTTP were slower than
/// through the index), and a room's marks cost a fraction of what the index's entries cost its
/// writes.
pub(super) const MARK_EVERY: u64 = 32;

pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let version = usize::try_from(version).unwrap_or(0);
    crate::store::check_schema_version(version, MIGRATIONS.len())?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
        tracing::debug!(version = i + 1, "applied store migration");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::chain::{Step, walk};
    use super::*;

    /// A database a newer build migrated further is refused, with both versions named, and left
    /// as it was.
    #[test]
    fn a_database_from_a_newer_build_is_refused() -> Result<(), StoreError> {
        let dir = tempfile::tempdir()?;
        let mut conn = Connection::open(dir.path().join("db.sqlite"))?;
        migrate(&mut conn)?;
        let newer = MIGRATIONS.len() as i64 + 1;
        conn.pragma_update(None, "user_version", newer)?;
        let err = migrate(&mut conn).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(&format!("schema version {newer}")), "{err}");
        assert!(err.contains(&format!("({})", MIGRATIONS.len())), "{err}");
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        assert_eq!(version, newer);
        Ok(())
    }

    /// A database written by a build with schema version 2 keeps every row through migrations 3
    /// to 5; each room's row counts its session records (one room had events, another only a
    /// record) and starts its chain of events (a room whose events had no row gets one, with its
    /// head), which reads back every seq, through the marks too.
    #[test]
    fn migrations_keep_the_rows_of_a_version_2_database() -> Result<(), StoreError> {
        let dir = tempfile::tempdir()?;
        let mut conn = Connection::open(dir.path().join("db.sqlite"))?;
        for sql in &MIGRATIONS[..2] {
            conn.execute_batch(sql)?;
        }
        conn.pragma_update(None, "user_version", 2)?;
        conn.execute_batch(
            "INSERT INTO events VALUES ('b', 1, 5, '{\"seq\":1}'), ('a', 2, 6, '{\"seq\":2}'), ('a', 1, 7, '{\"seq\":1}');
             INSERT INTO sessions VALUES ('a', 's1', '{}', 1), ('b', 's2', '{}', 2), ('a', 's3', '{}', 3);
             INSERT INTO rooms VALUES ('a', 2, 0), ('c', 130, 0);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 130)
                INSERT INTO events SELECT 'c', i, 0, '{\"seq\":' || i || '}' FROM n;",
        )?;
        migrate(&mut conn)?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        assert_eq!(version as usize, MIGRATIONS.len());
        let rows: Vec<(String, i64, i64)> = conn
            .prepare("SELECT room_id, seq, occurred_at_ms FROM events WHERE room_id != 'c' ORDER BY room_id, seq")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        assert_eq!(rows, vec![("a".into(), 1, 7), ("a".into(), 2, 6), ("b".into(), 1, 5)]);
        let sessions: i64 = conn.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))?;
        assert_eq!(sessions, 3);
        let referring: i64 =
            conn.query_row("SELECT COUNT(*) FROM sessions WHERE started_id IS NOT NULL", [], |r| r.get(0))?;
        assert_eq!(referring, 0, "a record written before migration 6 is its JSON");
        let rooms: Vec<(String, i64, i64)> = conn
            .prepare("SELECT room_id, head_seq, sessions FROM rooms ORDER BY room_id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        assert_eq!(rooms, vec![("a".into(), 2, 2), ("b".into(), 1, 1), ("c".into(), 130, 0)]);
        let read = |room: &str, lo: u64, hi: u64| -> Result<Vec<String>, StoreError> {
            let mut out = Vec::new();
            let row = room_row(&conn, room)?;
            walk(&conn, room, &row, (lo, hi), Step::Json, |_, _, json: Option<String>| out.extend(json))?;
            out.reverse();
            Ok(out)
        };
        assert_eq!(read("a", 1, 2)?, vec![r#"{"seq":1}"#, r#"{"seq":2}"#]);
        assert_eq!(read("b", 1, 1)?, vec![r#"{"seq":1}"#]);
        let want: Vec<String> = (10..=20).map(|i| format!(r#"{{"seq":{i}}}"#)).collect();
        assert_eq!(read("c", 10, 20)?, want, "entered at the mark of seq 32");
        assert_eq!(read("c", 1, 130)?.len(), 130);
        let marks: Vec<i64> = conn
            .prepare("SELECT seq FROM event_marks WHERE room_id = 'c' ORDER BY seq")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let every = MARK_EVERY as i64;
        assert_eq!(marks, vec![every, 2 * every, 3 * every, 4 * every], "the migration marks every MARK_EVERY-th seq");
        Ok(())
    }

    /// A database at schema version 7 whose events refer to a shared list gets each list back in
    /// its event's JSON (migration 8): the event reads back as it was published, the table and the
    /// column are gone.
    #[test]
    fn migration_8_writes_shared_lists_back_into_their_events() -> Result<(), StoreError> {
        let dir = tempfile::tempdir()?;
        let mut conn = Connection::open(dir.path().join("db.sqlite"))?;
        for sql in &MIGRATIONS[..7] {
            conn.execute_batch(sql)?;
        }
        conn.pragma_update(None, "user_version", 7)?;
        let list = r#"[{"name":"a","description":"x \"é\"\n"}]"#;
        let published = format!(r#"{{"seq":1,"type":"commands.updated","payload":{{"commands":{list}}}}}"#);
        let stored = r#"{"seq":1,"type":"commands.updated","payload":{"commands":null}}"#;
        conn.execute("INSERT INTO shared_payloads (id, json) VALUES (7, ?1)", params![list])?;
        conn.execute(
            "INSERT INTO events (id, room_id, seq, occurred_at_ms, json, prev_id, payload_ref)
             VALUES (1, 'r', 1, 0, ?1, NULL, 7), (2, 'r', 2, 0, '{\"seq\":2}', 1, NULL)",
            params![stored],
        )?;
        conn.execute(
            "INSERT INTO rooms (room_id, head_seq, pruned_through, sessions, last_id) VALUES ('r', 2, 0, 0, 2)",
            [],
        )?;
        migrate(&mut conn)?;
        let row = room_row(&conn, "r")?;
        let mut out = Vec::new();
        walk(&conn, "r", &row, (1, 2), Step::Json, |_, _, json: Option<String>| out.extend(json))?;
        out.reverse();
        assert_eq!(out, vec![published, r#"{"seq":2}"#.to_owned()]);
        let tables: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'shared_payloads'", [], |r| r.get(0))?;
        assert_eq!(tables, 0);
        assert!(conn.prepare("SELECT payload_ref FROM events").is_err(), "the column is gone");
        Ok(())
    }

    /// Events and records written before migration 12 get their sessions' chains: each session's
    /// events read back from its tail, oldest first, without another session's, and each record
    /// names its session's newest event.
    #[test]
    fn migration_12_links_each_sessions_events() -> Result<(), StoreError> {
        use crate::store::types::SessionPageFrom;
        let dir = tempfile::tempdir()?;
        let mut conn = Connection::open(dir.path().join("db.sqlite"))?;
        for sql in &MIGRATIONS[..11] {
            conn.execute_batch(sql)?;
        }
        conn.pragma_update(None, "user_version", 11)?;
        // Room r: seqs 1..=9 alternate between sessions a and b; seq 5 has no session.
        for seq in 1..=9i64 {
            let session = match seq {
                5 => String::new(),
                s if s % 2 == 1 => "a".into(),
                _ => "b".into(),
            };
            conn.execute(
                "INSERT INTO events (id, room_id, seq, occurred_at_ms, json, prev_id) VALUES (?1, 'r', ?1, 0, ?2, ?3)",
                params![seq, format!(r#"{{"seq":{seq},"sessionId":"{session}"}}"#), (seq > 1).then_some(seq - 1)],
            )?;
        }
        conn.execute_batch(
            "INSERT INTO rooms (room_id, head_seq, pruned_through, sessions, last_id) VALUES ('r', 9, 0, 2, 9);
             INSERT INTO sessions (id, room_id, session_id, record, updated_at_ms) VALUES (1, 'r', 'a', '{}', 0), (2, 'r', 'b', '{}', 0);",
        )?;
        migrate(&mut conn)?;
        let lasts: Vec<(i64, i64)> = conn
            .prepare("SELECT last_id, last_seq FROM sessions ORDER BY id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        assert_eq!(lasts, vec![(9, 9), (8, 8)]);
        let read = |session: &str, last: (i64, u64)| -> Vec<u64> {
            match super::super::session_log::page(
                &conn,
                "r",
                session,
                Some(last),
                SessionPageFrom::Before(u64::MAX),
                10,
                1 << 20,
            ) {
                Ok(page) => page.events.iter().map(|e| e.0).collect(),
                Err(_) => panic!("the page of {session} could not be read"),
            }
        };
        assert_eq!(read("a", (9, 9)), vec![1, 3, 7, 9]);
        assert_eq!(read("b", (8, 8)), vec![2, 4, 6, 8]);
        let through: i64 = conn.query_row("SELECT heads_through FROM rooms WHERE room_id = 'r'", [], |r| r.get(0))?;
        assert_eq!(through, 9, "every record holds its session's newest event");
        Ok(())
    }

    /// A token stored before migration 11 keeps every field and has no maker's id; one made after
    /// has it.
    #[test]
    fn migration_11_keeps_tokens_and_records_makers_from_then_on() -> Result<(), StoreError> {
        let dir = tempfile::tempdir()?;
        let mut conn = Connection::open(dir.path().join("db.sqlite"))?;
        for sql in &MIGRATIONS[..10] {
            conn.execute_batch(sql)?;
        }
        conn.pragma_update(None, "user_version", 10)?;
        conn.execute_batch(
            "INSERT INTO access_tokens VALUES ('tok_old', 'old', 'admin', '[\"r\"]', 'h1', 5, 'admin', 9, NULL, 7);",
        )?;
        migrate(&mut conn)?;
        let mut made = super::super::access::tokens(&conn)?.remove(0);
        assert_eq!((made.id.as_str(), made.expires_at_ms, made.last_used_at_ms), ("tok_old", Some(9), Some(7)));
        assert_eq!(made.created_by_id, None);
        made.id = "tok_new".into();
        made.secret_hash = "h2".into();
        made.created_by_id = Some("tok_old".into());
        super::super::access::insert_token(&conn, &made)?;
        let ids: Vec<Option<String>> =
            super::super::access::tokens(&conn)?.into_iter().map(|t| t.created_by_id).collect();
        assert_eq!(ids, vec![Some("tok_old".into()), None], "tok_new, then tok_old (same time, by id)");
        Ok(())
    }
}
