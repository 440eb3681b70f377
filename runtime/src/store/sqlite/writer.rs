//! The writer thread: group commit, one savepoint per operation, seq assignment inside the
//! transaction, acknowledgements and fan-out only after the commit, retention.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rusqlite::{Connection, params};

use super::books::{Books, Change, Heads, RecordAt, Records, Undo};
use super::chain::{self, Step};
use super::checkpoint::Checkpointer;
use super::heads::{HEADS_FLUSH_EVENTS, flush_heads, publish_rows, repair_heads};
use super::prefill::Prefill;
use super::schema::{AUTOCHECKPOINT_PAGES, MARK_EVERY, room_row};
use super::webhooks;
use super::{Directory, Write};
use crate::store::group::{Done, Inbox, deliver, event_json, frame, next_group, outbox_item};
use crate::store::health::StoreStats;
use crate::store::types::Value;
use crate::store::types::{
    AppendBatch, CommitListener, CommittedEvent, RecordBody, Retention, StoreConfig, StoreError, WriteOp, record_json,
    record_of_started_event,
};
use ensemble_core::event::EventBody;

fn load_records(conn: &Connection) -> Result<Records, StoreError> {
    let mut records = Records::new();
    let mut stmt = conn.prepare(
        "SELECT id, room_id, session_id, CASE WHEN record = '' THEN started_id END, last_id, last_seq FROM sessions",
    )?;
    let rows = stmt.query_map([], |row| {
        let last = match (row.get::<_, Option<i64>>(4)?, row.get::<_, Option<i64>>(5)?) {
            (Some(id), Some(seq)) => Some((id, seq as u64)),
            _ => None,
        };
        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get(3)?, last))
    })?;
    for row in rows {
        let (id, room, session, started, last) = row?;
        records.entry(room).or_default().insert(session, RecordAt { row: id, started, last, written: last });
    }
    Ok(records)
}

pub(super) struct Writer {
    // Before `conn`: dropped (joined) first, so the writer's connection closes last and SQLite's
    // final checkpoint on close can empty the WAL.
    checkpointer: Checkpointer,
    conn: Connection,
    config: StoreConfig,
    listener: Arc<dyn CommitListener>,
    books: Books,
    /// Each record's row, for the readers (published after each commit).
    directory: Arc<Directory>,
    last_age_prune: Instant,
    stats: Arc<StoreStats>,
    prefill: Prefill,
}

impl Writer {
    pub(super) fn new(
        mut conn: Connection,
        checkpointer: Checkpointer,
        config: StoreConfig,
        listener: Arc<dyn CommitListener>,
        stats: Arc<StoreStats>,
        directory: Arc<Directory>,
    ) -> Result<Self, StoreError> {
        let mut records = load_records(&conn)?;
        repair_heads(&conn, &mut records)?;
        let books = Books { heads: HashMap::new(), records };
        if let Ok(mut dir) = directory.write() {
            *dir = books
                .records
                .iter()
                .map(|(room, m)| (room.clone(), m.iter().map(|(s, at)| (s.clone(), (at.row, at.last))).collect()))
                .collect();
        }
        let prefill = Prefill::install(&mut conn, config.path.clone(), config.wal_prefill, AUTOCHECKPOINT_PAGES)?;
        Ok(Self {
            checkpointer,
            conn,
            config,
            listener,
            books,
            directory,
            last_age_prune: Instant::now(),
            stats,
            prefill,
        })
    }

    pub(super) fn run(mut self, mut inbox: Inbox) {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!(error = %e, "store writer could not start");
                return;
            }
        };
        rt.block_on(async {
            while let Some((batch, stop)) = next_group(&mut inbox, &self.config).await {
                self.commit_group(batch);
                if stop {
                    break;
                }
            }
        });
        // Every session's row gets its newest event: the next start reads nothing again.
        if let Err(e) = self.flush_all_heads() {
            tracing::warn!(error = %e, "writing the sessions' newest events at stop failed; the next start finds them");
        }
        // Leave the WAL empty: the next start then has nothing to read back. The checkpoint
        // thread first: a TRUNCATE while its checkpoint runs is answered busy (a row, not an
        // error), and the WAL stayed — tens of MB after a few thousand starts.
        self.checkpointer.stop();
        match self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0)) {
            Ok(0) => {}
            Ok(_) => tracing::warn!("final wal checkpoint was busy; the next start reads the WAL back"),
            Err(e) => tracing::warn!(error = %e, "final wal checkpoint failed"),
        }
        tracing::debug!("store writer stopped");
    }

    /// At a stop: every touched room's sessions' rows get their newest events (`flush_heads`).
    fn flush_all_heads(&mut self) -> Result<(), StoreError> {
        let rooms: Vec<String> =
            self.books.heads.iter().filter(|(_, h)| h.heads_through < h.head).map(|(r, _)| r.clone()).collect();
        if rooms.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        let mut undo = Undo::default();
        for room in &rooms {
            flush_heads(&tx, &mut self.books, &mut undo, room)?;
            let through = self.books.heads.get(room).map(|h| h.heads_through).unwrap_or(0);
            tx.prepare_cached("UPDATE rooms SET heads_through = ?2 WHERE room_id = ?1")?
                .execute(params![room, through as i64])?;
        }
        tx.commit()?;
        Ok(())
    }

    fn commit_group(&mut self, batch: Vec<WriteOp>) {
        let started = Instant::now();
        // The heads as they were before this group, for the rooms it touches: restored if the
        // group fails, and the rooms whose `rooms` row is written once at the end.
        let mut undo = Undo::default();
        let mut dones: Vec<Done> = Vec::with_capacity(batch.len());
        // What this group writes, roughly, for the checkpointer: event frames, ~1 KiB per record
        // or other operation, ~256 bytes per audit record.
        let written: usize = batch
            .iter()
            .map(|op| match op {
                WriteOp::Append(b) => b.events.len() * 512 + b.records.len() * 1024,
                WriteOp::Durable(d) => Write::written_hint(d.op.as_ref()),
                _ => 1024,
            })
            .sum();
        let Self { conn, config, books, last_age_prune, .. } = self;
        let tx_result = (|| -> Result<(), StoreError> {
            let mut tx = conn.transaction()?;
            let mut i = 0;
            while i < batch.len() {
                let at_start = i == 0;
                match &batch[i] {
                    WriteOp::Append(_) => {
                        // A run of consecutive appends shares one savepoint; see `append_run`.
                        let end = i + batch[i..].iter().take_while(|op| matches!(op, WriteOp::Append(_))).count();
                        let run = &batch[i..end];
                        i = end;
                        if !at_start {
                            append_run(&tx, books, &mut undo, &config.retention, run, &mut dones)?;
                            continue;
                        }
                        // The run that opens the transaction needs no savepoint: if it fails, the
                        // whole transaction holds nothing else and is rolled back instead. A
                        // savepoint would copy every page the run touches into the statement
                        // journal (a tenth of the writer's time in a profile of session starts).
                        match try_run(&tx, books, &mut undo, &config.retention, run) {
                            Some(done) => dones.extend(done),
                            None => {
                                tx.rollback()?;
                                tx = conn.transaction()?;
                                replay_each(&tx, books, &mut undo, &config.retention, run, &mut dones)?;
                            }
                        }
                        continue;
                    }
                    WriteOp::DeleteSession { room_id, session_id } => {
                        delete_session(&tx, books, &mut undo, room_id, session_id)?;
                        dones.push(Done::Nothing);
                    }
                    WriteOp::Shutdown | WriteOp::Flush { .. } => dones.push(Done::Nothing),
                    op => {
                        if matches!(op, WriteOp::Probe { .. })
                            && let Err(e) = enough_free_space(&config.path, config.min_free_bytes)
                        {
                            dones.push(Done::Value(Err(e)));
                            i += 1;
                            continue;
                        }
                        savepoint(&tx, "op")?;
                        let result = run_op(&tx, op);
                        finish_savepoint(&tx, "op", result.is_ok())?;
                        dones.push(Done::Value(result));
                    }
                }
                i += 1;
            }
            if last_age_prune.elapsed() > Duration::from_secs(30) {
                *last_age_prune = Instant::now();
                prune_by_age(&tx, &mut books.heads, &books.records, &mut undo, &config.retention)?;
            }
            // Rooms whose sessions' newest events ran far past their rows get them written.
            let mut due: Vec<String> = Vec::new();
            for change in &undo.0 {
                if let Change::Heads(room, _) = change
                    && books.heads.get(room).is_some_and(|h| h.head >= h.heads_through + HEADS_FLUSH_EVENTS)
                    && !due.contains(room)
                {
                    due.push(room.clone());
                }
            }
            for room in due {
                flush_heads(&tx, books, &mut undo, &room)?;
            }
            // One `rooms` row write per room and group (not per append): the head, the record
            // count, the newest event the group moved and how far the sessions' rows hold theirs.
            {
                let mut upsert = tx.prepare_cached(
                    "INSERT INTO rooms (room_id, head_seq, pruned_through, sessions, last_id, heads_through)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (room_id) DO UPDATE SET head_seq = excluded.head_seq,
                         pruned_through = excluded.pruned_through, sessions = excluded.sessions,
                         last_id = excluded.last_id, heads_through = excluded.heads_through",
                )?;
                for (room, before) in undo.rooms_before() {
                    if let Some(h) = books.heads.get(room)
                        && Some(*h) != before
                    {
                        upsert.execute(params![
                            room,
                            h.head as i64,
                            h.pruned_through as i64,
                            h.sessions as i64,
                            h.last_id,
                            h.heads_through as i64
                        ])?;
                    }
                }
            }
            tx.commit()?;
            Ok(())
        })();
        metrics::histogram!("ensemble_store_commit_seconds").record(started.elapsed().as_secs_f64());
        let committed = tx_result.is_ok();
        if committed {
            self.checkpointer.committed(written);
            publish_rows(&self.directory, &self.books.records, &undo);
        } else {
            // Nothing of this group is durable: its seqs are handed out again, its records' rows
            // are not there.
            undo.rollback_to(0, &mut self.books);
        }
        deliver(&self.listener, &self.stats, batch, dones, tx_result);
        // After the answers: a fill (every `wal_prefill / 2` bytes of WAL) delays no one waiting.
        if committed {
            self.prefill.after_commit();
        }
    }
}

/// Whether the file system of the database at `path` has `min` bytes free for unprivileged users.
fn enough_free_space(path: &std::path::Path, min: u64) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let st = rustix::fs::statvfs(dir).map_err(std::io::Error::from)?;
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    if free < min {
        return Err(StoreError::Full(format!(
            "{free} bytes free in {}, fewer than the {min} the store waits for (--store-min-free-bytes)",
            dir.display()
        )));
    }
    Ok(())
}

/// A non-append operation's writes, inside its savepoint.
fn run_op(conn: &Connection, op: &WriteOp) -> Result<Value, StoreError> {
    match op {
        WriteOp::Durable(d) => Write::write(d.op.as_ref(), conn),
        WriteOp::Exec { sql, .. } => {
            conn.execute_batch(sql)?;
            Ok(Value::Unit)
        }
        WriteOp::Probe { .. } => {
            // Rewrites the database header: a page in the WAL, which a full disk refuses.
            let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            conn.pragma_update(None, "user_version", version)?;
            Ok(Value::Unit)
        }
        _ => Ok(Value::Unit),
    }
}

fn savepoint(conn: &Connection, name: &str) -> Result<(), StoreError> {
    conn.prepare_cached(&format!("SAVEPOINT {name}"))?.execute([])?;
    Ok(())
}

/// Releases a savepoint, rolling back to it first unless `keep`.
fn finish_savepoint(conn: &Connection, name: &str, keep: bool) -> Result<(), StoreError> {
    if !keep {
        conn.prepare_cached(&format!("ROLLBACK TO {name}"))?.execute([])?;
    }
    conn.prepare_cached(&format!("RELEASE {name}"))?.execute([])?;
    Ok(())
}

/// Appends a run of consecutive append operations. They share one savepoint: a savepoint per
/// operation cost more than the insert itself (each one copies every page it touches into the
/// statement journal). If any of them fails, the run is rolled back and replayed one operation per
/// savepoint, so only the failing operation's writes are undone, as if each had had its own.
fn append_run(
    conn: &Connection,
    books: &mut Books,
    undo: &mut Undo,
    retention: &Retention,
    run: &[WriteOp],
    dones: &mut Vec<Done>,
) -> Result<(), StoreError> {
    savepoint(conn, "run")?;
    let done = try_run(conn, books, undo, retention, run);
    finish_savepoint(conn, "run", done.is_some())?;
    match done {
        Some(done) => dones.extend(done),
        None => replay_each(conn, books, undo, retention, run, dones)?,
    }
    Ok(())
}

/// The appends of a run (every operation of one is an append).
fn appends(run: &[WriteOp]) -> impl Iterator<Item = &AppendBatch> {
    run.iter().filter_map(|op| match op {
        WriteOp::Append(b) => Some(b),
        _ => None,
    })
}

/// Appends every operation of a run, or none: on the first failure the books are put back as they
/// were before the run and `None` returned; the caller undoes the writes (its savepoint or its
/// transaction).
fn try_run(
    conn: &Connection,
    books: &mut Books,
    undo: &mut Undo,
    retention: &Retention,
    run: &[WriteOp],
) -> Option<Vec<Done>> {
    let mark = undo.mark();
    let mut done = Vec::with_capacity(run.len());
    for b in appends(run) {
        match append(conn, books, undo, retention, b) {
            Ok((events, last)) => done.push(Done::Appended(events, last)),
            Err(_) => {
                undo.rollback_to(mark, books);
                return None;
            }
        }
    }
    Some(done)
}

/// Appends a run one operation per savepoint, so a failing one is undone alone.
fn replay_each(
    conn: &Connection,
    books: &mut Books,
    undo: &mut Undo,
    retention: &Retention,
    run: &[WriteOp],
    dones: &mut Vec<Done>,
) -> Result<(), StoreError> {
    for b in appends(run) {
        let mark = undo.mark();
        savepoint(conn, "op")?;
        match append(conn, books, undo, retention, b) {
            Ok((events, last)) => {
                finish_savepoint(conn, "op", true)?;
                dones.push(Done::Appended(events, last));
            }
            Err(error) => {
                finish_savepoint(conn, "op", false)?;
                // The savepoint rolled back: so must the heads and the record rows.
                undo.rollback_to(mark, books);
                tracing::error!(room = %b.room_id, error = %error, "append failed");
                dones.push(Done::Failed(error));
            }
        }
    }
    Ok(())
}

fn load_heads<'a>(
    conn: &Connection,
    heads: &'a mut HashMap<String, Heads>,
    room: &str,
) -> Result<&'a mut Heads, StoreError> {
    if !heads.contains_key(room) {
        let h = room_row(conn, room)?;
        heads.insert(room.to_owned(), h);
    }
    heads.get_mut(room).ok_or_else(|| StoreError::Other("room heads vanished".into()))
}

/// Appends one operation's events and writes its records, noting in `undo` what it changes in the
/// books as it goes (even when it then fails: the caller unwinds `undo` with its writes).
fn append(
    conn: &Connection,
    books: &mut Books,
    undo: &mut Undo,
    retention: &Retention,
    batch: &AppendBatch,
) -> Result<(Vec<CommittedEvent>, u64), StoreError> {
    undo.note(&books.heads, &batch.room_id);
    let Books { heads, records } = books;
    let h = load_heads(conn, heads, &batch.room_id)?;
    let mut committed = Vec::with_capacity(batch.events.len());
    // The row of each `session.started` of this batch, for the records that refer to theirs.
    let mut started: Vec<(&str, i64)> = Vec::new();
    // Each session's newest event in this batch (row id, seq): most batches carry one session's.
    let mut lasts: Vec<(&str, (i64, u64))> = Vec::new();
    if !batch.events.is_empty() {
        let mut insert = conn.prepare_cached(
            "INSERT INTO events (room_id, seq, occurred_at_ms, json, prev_id, session_id, session_prev_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let room_records = records.get(&batch.room_id);
        for ev in &batch.events {
            let seq = h.head + 1;
            let frame = frame(ev, seq)?;
            let prev = (h.last_id != 0).then_some(h.last_id);
            let session = (!ev.session_id.is_empty()).then_some(ev.session_id.as_str());
            let session_prev = session.and_then(|s| match lasts.iter().find(|(x, _)| *x == s) {
                Some((_, (id, _))) => Some(*id),
                None => room_records.and_then(|m| m.get(s)).and_then(|at| at.last).map(|(id, _)| id),
            });
            insert.execute(params![
                batch.room_id,
                seq as i64,
                ev.occurred_at_ms,
                event_json(&frame)?,
                prev,
                session,
                session_prev
            ])?;
            h.last_id = conn.last_insert_rowid();
            h.head = seq;
            if let Some(s) = session {
                match lasts.iter_mut().find(|(x, _)| *x == s) {
                    Some((_, last)) => *last = (h.last_id, seq),
                    None => lasts.push((s, (h.last_id, seq))),
                }
            }
            if matches!(ev.body, EventBody::SessionStarted(_)) {
                started.push((&ev.session_id, h.last_id));
            }
            if seq % MARK_EVERY == 0 {
                conn.prepare_cached("INSERT INTO event_marks (room_id, seq, id) VALUES (?1, ?2, ?3)")?
                    .execute(params![batch.room_id, seq as i64, h.last_id])?;
            }
            committed.push(CommittedEvent { seq, session_id: ev.session_id.clone(), frame: Bytes::from(frame) });
        }
        // The `rooms` row is written once per group, by `commit_group`.
        for out in &batch.outbound {
            let (Some(ev), Some(c)) = (batch.events.get(out.event), committed.get(out.event)) else { continue };
            webhooks::insert_item(conn, &outbox_item(&batch.room_id, out, ev, c)?)?;
        }
    }
    for rec in &batch.records {
        // A start's record refers to the row of its `session.started` (nothing else is stored for
        // it); any other record is its JSON.
        let started_id = match rec.body {
            RecordBody::AsStarted => started.iter().find(|(s, _)| *s == rec.session_id).map(|(_, id)| *id),
            RecordBody::Json(_) => None,
        };
        let existing = records.get(&batch.room_id).and_then(|m| m.get(&rec.session_id)).copied();
        let no_row = |row: i64| {
            // The books disagree with the table: fail this operation, never drop a record.
            StoreError::Other(format!("the record of session {}/{} has no row {row}", batch.room_id, rec.session_id))
        };
        // The session's newest event goes with its record: this batch's, else the one it had.
        let last =
            lasts.iter().find(|(s, _)| *s == rec.session_id).map(|(_, l)| *l).or(existing.and_then(|at| at.last));
        let (id, seq) = (last.map(|(id, _)| id), last.map(|(_, seq)| seq as i64));
        if let Some(at @ RecordAt { row, started: None, .. }) = existing {
            let n = conn
                .prepare_cached(
                    "UPDATE sessions SET record = ?2, updated_at_ms = ?3, last_id = ?4, last_seq = ?5 WHERE id = ?1",
                )?
                .execute(params![row, rec.json(&batch.events)?, rec.updated_at_ms, id, seq])?;
            if n != 1 {
                return Err(no_row(row));
            }
            if at.last != last || at.written != last {
                undo.note_last(&batch.room_id, &rec.session_id, at);
                if let Some(at) = records.get_mut(&batch.room_id).and_then(|m| m.get_mut(&rec.session_id)) {
                    (at.last, at.written) = (last, last);
                }
            }
            continue;
        }
        if let Some(at) = existing {
            // The row holds only a reference: the record, ~700 bytes, would not fit where the row
            // is (its page splits, a profile's `balance`), so it moves to the table's end.
            let n = conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")?.execute(params![at.row])?;
            if n != 1 {
                return Err(no_row(at.row));
            }
        }
        let json = match started_id {
            Some(_) => std::borrow::Cow::Borrowed(""),
            None => rec.json(&batch.events)?,
        };
        conn.prepare_cached(
            "INSERT INTO sessions (room_id, session_id, record, updated_at_ms, started_id, last_id, last_seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![batch.room_id, rec.session_id, json, rec.updated_at_ms, started_id, id, seq])?;
        let row = conn.last_insert_rowid();
        undo.note_record(&batch.room_id, &rec.session_id, existing);
        records
            .entry(batch.room_id.clone())
            .or_default()
            .insert(rec.session_id.clone(), RecordAt { row, started: started_id, last, written: last });
        if existing.is_none() {
            h.sessions += 1;
        }
    }
    // The newest events of sessions whose records this batch did not write: in the books now,
    // in their rows at the group's end.
    if let Some(room_records) = records.get_mut(&batch.room_id) {
        for (session, last) in lasts {
            if let Some(at) = room_records.get_mut(session)
                && at.last != Some(last)
            {
                undo.note_last(&batch.room_id, session, *at);
                at.last = Some(last);
            }
        }
    }
    // After the records: a record this batch wrote as its `session.started` gets its JSON if
    // that event is pruned at once (a budget smaller than the batch).
    if let Some(max) = retention.max_events_per_room
        && !batch.events.is_empty()
    {
        // Prune in steps of 1/8 of the budget so deletes are amortised.
        let slack = (max / 8).max(1);
        if h.head > h.pruned_through + max + slack {
            prune_through(conn, records, &batch.room_id, h, h.head - max)?;
        }
    }
    let last = committed.last().map(|c| c.seq).unwrap_or(h.head);
    Ok((committed, last))
}

/// Deletes a session's record and provider state.
fn delete_session(
    conn: &Connection,
    books: &mut Books,
    undo: &mut Undo,
    room: &str,
    session: &str,
) -> Result<(), StoreError> {
    if let Some(at) = books.records.get_mut(room).and_then(|m| m.remove(session)) {
        let id = at.row;
        undo.note_record(room, session, Some(at));
        undo.note(&books.heads, room);
        let h = load_heads(conn, &mut books.heads, room)?;
        h.sessions = h.sessions.saturating_sub(1);
        conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")?.execute(params![id])?;
    }
    conn.prepare_cached("DELETE FROM provider_state WHERE room_id = ?1 AND session_id = ?2")?
        .execute(params![room, session])?;
    Ok(())
}

/// Deletes the room's events through seq `through` (and their marks), walking its chain down from
/// there; the caller's heads then say so.
fn prune_through(
    conn: &Connection,
    records: &Records,
    room: &str,
    h: &mut Heads,
    through: u64,
) -> Result<(), StoreError> {
    let through = through.min(h.head);
    if through <= h.pruned_through {
        return Ok(());
    }
    let mut ids = Vec::new();
    chain::walk(conn, room, h, (h.pruned_through + 1, through), Step::Links, |_, id, _: Option<String>| ids.push(id))?;
    if let (Some(&lo), Some(&hi), Some(room_records)) = (ids.iter().min(), ids.iter().max(), records.get(room)) {
        write_out_started(conn, room_records, lo, hi)?;
    }
    let mut delete = conn.prepare_cached("DELETE FROM events WHERE id = ?1")?;
    for id in ids {
        delete.execute(params![id])?;
    }
    conn.prepare_cached("DELETE FROM event_marks WHERE room_id = ?1 AND seq <= ?2")?
        .execute(params![room, through as i64])?;
    h.pruned_through = through;
    Ok(())
}

/// Before the room's events `lo..=hi` (row ids; a room's rows grow with its seqs, so these are the
/// ones about to be pruned) go: the records that are still the `session.started` among them get
/// their JSON.
fn write_out_started(
    conn: &Connection,
    room_records: &HashMap<String, RecordAt>,
    lo: i64,
    hi: i64,
) -> Result<(), StoreError> {
    for at in room_records.values() {
        let Some(started) = at.started.filter(|id| (lo..=hi).contains(id)) else { continue };
        let (unwritten, event): (bool, Option<String>) = conn
            .prepare_cached(
                "SELECT s.record = '', e.json FROM sessions s LEFT JOIN events e ON e.id = ?2 WHERE s.id = ?1",
            )?
            .query_row(params![at.row, started], |row| Ok((row.get(0)?, row.get(1)?)))?;
        if !unwritten {
            continue;
        }
        let event = event.ok_or_else(|| {
            StoreError::Other(format!("the session record in row {} refers to an event that is gone", at.row))
        })?;
        let json = record_json(&record_of_started_event(&event)?)?;
        conn.prepare_cached("UPDATE sessions SET record = ?2 WHERE id = ?1")?.execute(params![at.row, json])?;
    }
    Ok(())
}

fn prune_by_age(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    records: &Records,
    undo: &mut Undo,
    retention: &Retention,
) -> Result<(), StoreError> {
    let Some(max_age) = retention.max_age else {
        return Ok(());
    };
    let cutoff = ensemble_core::clock::unix_ms() - max_age.as_millis() as i64;
    let rooms: Vec<(String, i64)> = {
        let mut stmt =
            conn.prepare("SELECT room_id, MAX(seq) FROM events WHERE occurred_at_ms < ?1 GROUP BY room_id")?;
        stmt.query_map(params![cutoff], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?
    };
    for (room, through) in rooms {
        undo.note(heads, &room);
        let h = load_heads(conn, heads, &room)?;
        prune_through(conn, records, &room, h, through as u64)?;
    }
    Ok(())
}
