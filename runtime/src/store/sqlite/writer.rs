//! The writer thread: group commit, one savepoint per operation, seq assignment inside the
//! transaction, acknowledgements and fan-out only after the commit, retention.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rusqlite::{Connection, params};
use tokio::sync::mpsc;

use super::checkpoint::Checkpointer;
use super::ledger::bind_goal;
use super::schema::room_heads;
use crate::store::group::{Outcome, Reply, Value, deliver, event_json, frame, next_group, reply_of};
use crate::store::types::{
    AppendBatch, CommitListener, CommittedEvent, Retention, StoreConfig, StoreError, StoreStats, WriteOp,
};

#[derive(Clone, Copy, PartialEq, Eq)]
struct Heads {
    head: u64,
    pruned_through: u64,
}

pub(super) struct Writer {
    // Before `conn`: dropped (joined) first, so the writer's connection closes last and SQLite's
    // final checkpoint on close can empty the WAL.
    checkpointer: Checkpointer,
    conn: Connection,
    config: StoreConfig,
    listener: Arc<dyn CommitListener>,
    heads: HashMap<String, Heads>,
    last_age_prune: Instant,
    stats: Arc<StoreStats>,
}

impl Writer {
    pub(super) fn new(
        conn: Connection,
        checkpointer: Checkpointer,
        config: StoreConfig,
        listener: Arc<dyn CommitListener>,
        stats: Arc<StoreStats>,
    ) -> Self {
        Self { checkpointer, conn, config, listener, heads: HashMap::new(), last_age_prune: Instant::now(), stats }
    }

    pub(super) fn run(mut self, mut rx: mpsc::Receiver<WriteOp>) {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!(error = %e, "store writer could not start");
                return;
            }
        };
        rt.block_on(async {
            while let Some((batch, stop)) = next_group(&mut rx, &self.config).await {
                self.commit_group(batch);
                if stop {
                    break;
                }
            }
        });
        // Leave the WAL empty: the next start then has nothing to read back.
        if let Err(e) = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())) {
            tracing::warn!(error = %e, "final wal checkpoint failed");
        }
        tracing::debug!("store writer stopped");
    }

    fn commit_group(&mut self, batch: Vec<WriteOp>) {
        let started = Instant::now();
        // The heads as they were before this group, for the rooms it touches: restored if the
        // group fails, and the rooms whose `rooms` row is written once at the end.
        let mut undo = Undo::default();
        let mut outcomes = Vec::with_capacity(batch.len());
        // What this group writes, roughly, for the checkpointer: event frames, ~1 KiB per record
        // or other operation.
        let written: usize = batch
            .iter()
            .map(|op| match op {
                WriteOp::Append(b) => b.events.len() * 512 + b.records.len() * 1024,
                _ => 1024,
            })
            .sum();
        let Self { conn, config, heads, last_age_prune, .. } = self;
        let tx_result = (|| -> Result<(), StoreError> {
            let mut tx = conn.transaction()?;
            let mut ops = batch.into_iter().peekable();
            let mut opening = true;
            while let Some(op) = ops.next() {
                let at_start = std::mem::take(&mut opening);
                match op {
                    WriteOp::Append(first) => {
                        // A run of consecutive appends shares one savepoint; see `append_run`.
                        let mut run = vec![first];
                        while let Some(WriteOp::Append(_)) = ops.peek() {
                            if let Some(WriteOp::Append(b)) = ops.next() {
                                run.push(b);
                            }
                        }
                        if !at_start {
                            append_run(&tx, heads, &mut undo, &config.retention, run, &mut outcomes)?;
                            continue;
                        }
                        // The run that opens the transaction needs no savepoint: if it fails, the
                        // whole transaction holds nothing else and is rolled back instead. A
                        // savepoint would copy every page the run touches into the statement
                        // journal (a tenth of the writer's time in a profile of session starts).
                        match try_run(&tx, heads, &mut undo, &config.retention, &run) {
                            Some(done) => push_appended(run, done, &mut outcomes),
                            None => {
                                tx.rollback()?;
                                tx = conn.transaction()?;
                                replay_each(&tx, heads, &mut undo, &config.retention, run, &mut outcomes)?;
                            }
                        }
                    }
                    WriteOp::DeleteSession { room_id, session_id } => {
                        tx.prepare_cached("DELETE FROM sessions WHERE room_id = ?1 AND session_id = ?2")?
                            .execute(params![room_id, session_id])?;
                        tx.prepare_cached("DELETE FROM provider_state WHERE room_id = ?1 AND session_id = ?2")?
                            .execute(params![room_id, session_id])?;
                    }
                    WriteOp::Shutdown => {}
                    WriteOp::Flush { ack } => {
                        outcomes.push(Outcome::Op { reply: Reply::Unit(ack), result: Ok(Value::Unit) });
                    }
                    op => {
                        savepoint(&tx, "op")?;
                        let result = run_op(&tx, &op);
                        finish_savepoint(&tx, "op", result.is_ok())?;
                        if let Some(reply) = reply_of(op) {
                            outcomes.push(Outcome::Op { reply, result });
                        }
                    }
                }
            }
            if last_age_prune.elapsed() > Duration::from_secs(30) {
                *last_age_prune = Instant::now();
                prune_by_age(&tx, heads, &mut undo, &config.retention)?;
            }
            // One `rooms` row write per room and group (not per append): the head the group moved.
            {
                let mut upsert = tx.prepare_cached(
                    "INSERT INTO rooms (room_id, head_seq, pruned_through) VALUES (?1, ?2, ?3)
                     ON CONFLICT (room_id) DO UPDATE
                     SET head_seq = excluded.head_seq, pruned_through = excluded.pruned_through",
                )?;
                for (room, before) in &undo.0 {
                    if let Some(h) = heads.get(room)
                        && Some(*h) != *before
                    {
                        upsert.execute(params![room, h.head as i64, h.pruned_through as i64])?;
                    }
                }
            }
            tx.commit()?;
            Ok(())
        })();
        metrics::histogram!("ensemble_store_commit_seconds").record(started.elapsed().as_secs_f64());
        if tx_result.is_ok() {
            self.checkpointer.committed(written);
        } else {
            // Nothing of this group is durable: its seqs are handed out again.
            undo.restore(&mut self.heads);
        }
        deliver(&self.listener, &self.stats, outcomes, tx_result);
    }
}

/// A non-append operation's writes, inside its savepoint.
fn run_op(conn: &Connection, op: &WriteOp) -> Result<Value, StoreError> {
    match op {
        WriteOp::SetProviderState { room_id, session_id, key, value, .. } => {
            conn.prepare_cached(
                "INSERT INTO provider_state (room_id, session_id, key, value) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (room_id, session_id, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![room_id, session_id, key, value])?;
            Ok(Value::Unit)
        }
        WriteOp::GoalBind { key, identity, .. } => Ok(Value::Binding(bind_goal(conn, key, identity)?)),
        WriteOp::Exec { sql, .. } => {
            conn.execute_batch(sql)?;
            Ok(Value::Unit)
        }
        _ => Ok(Value::Unit),
    }
}

/// The heads rooms had before a group (or a run) first moved them; `None`: not loaded then.
#[derive(Default)]
struct Undo(HashMap<String, Option<Heads>>);

impl Undo {
    fn note(&mut self, heads: &HashMap<String, Heads>, room: &str) {
        if !self.0.contains_key(room) {
            self.0.insert(room.to_owned(), heads.get(room).copied());
        }
    }

    fn restore(self, heads: &mut HashMap<String, Heads>) {
        for (room, before) in self.0 {
            match before {
                Some(h) => heads.insert(room, h),
                None => heads.remove(&room),
            };
        }
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
    heads: &mut HashMap<String, Heads>,
    undo: &mut Undo,
    retention: &Retention,
    run: Vec<AppendBatch>,
    outcomes: &mut Vec<Outcome>,
) -> Result<(), StoreError> {
    savepoint(conn, "run")?;
    let done = try_run(conn, heads, undo, retention, &run);
    finish_savepoint(conn, "run", done.is_some())?;
    match done {
        Some(done) => push_appended(run, done, outcomes),
        None => replay_each(conn, heads, undo, retention, run, outcomes)?,
    }
    Ok(())
}

/// Appends every operation of a run, or none: on the first failure the heads are restored and
/// `None` returned; the caller undoes the writes (its savepoint or its transaction).
fn try_run(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    undo: &mut Undo,
    retention: &Retention,
    run: &[AppendBatch],
) -> Option<Vec<(Vec<CommittedEvent>, u64)>> {
    let mut run_undo = Undo::default();
    let mut done = Vec::with_capacity(run.len());
    for b in run {
        undo.note(heads, &b.room_id);
        run_undo.note(heads, &b.room_id);
        match append(conn, heads, retention, b) {
            Ok(r) => done.push(r),
            Err(_) => {
                run_undo.restore(heads);
                return None;
            }
        }
    }
    Some(done)
}

fn push_appended(run: Vec<AppendBatch>, done: Vec<(Vec<CommittedEvent>, u64)>, outcomes: &mut Vec<Outcome>) {
    for (b, (events, last)) in run.into_iter().zip(done) {
        outcomes.push(Outcome::Appended { room_id: b.room_id, events, ack: b.ack, last });
    }
}

/// Appends a run one operation per savepoint, so a failing one is undone alone.
fn replay_each(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    undo: &mut Undo,
    retention: &Retention,
    run: Vec<AppendBatch>,
    outcomes: &mut Vec<Outcome>,
) -> Result<(), StoreError> {
    for b in run {
        undo.note(heads, &b.room_id);
        let mut op_undo = Undo::default();
        op_undo.note(heads, &b.room_id);
        savepoint(conn, "op")?;
        match append(conn, heads, retention, &b) {
            Ok((events, last)) => {
                finish_savepoint(conn, "op", true)?;
                outcomes.push(Outcome::Appended { room_id: b.room_id, events, ack: b.ack, last });
            }
            Err(error) => {
                finish_savepoint(conn, "op", false)?;
                // The savepoint rolled back: so must the heads.
                op_undo.restore(heads);
                tracing::error!(room = %b.room_id, error = %error, "append failed");
                outcomes.push(Outcome::Failed { ack: b.ack, error });
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
        let (head, pruned_through) = room_heads(conn, room)?;
        heads.insert(room.to_owned(), Heads { head, pruned_through });
    }
    heads.get_mut(room).ok_or_else(|| StoreError::Other("room heads vanished".into()))
}

fn append(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    retention: &Retention,
    batch: &AppendBatch,
) -> Result<(Vec<CommittedEvent>, u64), StoreError> {
    let h = load_heads(conn, heads, &batch.room_id)?;
    let mut committed = Vec::with_capacity(batch.events.len());
    if !batch.events.is_empty() {
        let mut insert =
            conn.prepare_cached("INSERT INTO events (room_id, seq, occurred_at_ms, json) VALUES (?1, ?2, ?3, ?4)")?;
        for ev in &batch.events {
            let seq = h.head + 1;
            let frame = frame(ev, seq)?;
            insert.execute(params![batch.room_id, seq as i64, ev.occurred_at_ms, event_json(&frame)?])?;
            h.head = seq;
            committed.push(CommittedEvent { seq, session_id: ev.session_id.clone(), frame: Bytes::from(frame) });
        }
        // The `rooms` row is written once per group, by `commit_group`.
        if let Some(max) = retention.max_events_per_room {
            // Prune in steps of 1/8 of the budget so deletes are amortised.
            let slack = (max / 8).max(1);
            if h.head > h.pruned_through + max + slack {
                let through = h.head - max;
                conn.prepare_cached("DELETE FROM events WHERE room_id = ?1 AND seq <= ?2")?
                    .execute(params![batch.room_id, through as i64])?;
                h.pruned_through = through;
            }
        }
    }
    for rec in &batch.records {
        conn.prepare_cached(
            "INSERT INTO sessions (room_id, session_id, record, updated_at_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (room_id, session_id) DO UPDATE SET record = excluded.record, updated_at_ms = excluded.updated_at_ms",
        )?
        .execute(params![batch.room_id, rec.session_id, rec.json, rec.updated_at_ms])?;
    }
    let last = committed.last().map(|c| c.seq).unwrap_or(h.head);
    Ok((committed, last))
}

fn prune_by_age(
    conn: &Connection,
    heads: &mut HashMap<String, Heads>,
    undo: &mut Undo,
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
        undo.note(heads, &room);
        if let Some(h) = heads.get_mut(&room) {
            h.pruned_through = h.pruned_through.max(through as u64);
        }
    }
    Ok(())
}
