//! The writer thread: group commit, one savepoint per operation, seq assignment inside the
//! transaction, acknowledgements and fan-out only after the commit, retention.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rusqlite::{Connection, params};
use tokio::sync::{mpsc, oneshot};

use super::checkpoint::Checkpointer;
use super::schema::room_heads;
use super::types::{
    AppendBatch, CommitListener, CommittedEvent, Job, Retention, StoreConfig, StoreError, StoreStats, WriteOp,
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
            while let Some(first) = rx.recv().await {
                if matches!(first, WriteOp::Shutdown) {
                    break;
                }
                let mut batch = vec![first];
                let mut stop = false;
                let mut events = batch_events(&batch);
                // Linger only under load: when more work was already queued behind this operation
                // (it piled up during the last commit), waiting `linger` for more keeps commits
                // few. A lone operation (a user's submit, the first or last event of a reply, a
                // steady trickle) commits at once, with whatever queued up meanwhile. Judged by
                // the queue, not by the last group's size, which lingering itself would inflate.
                let burst = !rx.is_empty() || self.config.linger_when_idle;
                let linger = if burst { self.config.linger } else { Duration::ZERO };
                let deadline = tokio::time::Instant::now() + linger;
                while events < self.config.max_batch {
                    let next = match rx.try_recv() {
                        Ok(op) => Some(op),
                        Err(mpsc::error::TryRecvError::Empty) if !linger.is_zero() => {
                            // A lull ends the linger early: when nothing arrives for a quarter of
                            // it, whoever sends next is waiting for this commit (a client awaiting
                            // its 201), not streaming behind it.
                            let lull = tokio::time::Instant::now() + linger / 4;
                            tokio::time::timeout_at(lull.min(deadline), rx.recv()).await.ok().flatten()
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
        // Leave the WAL empty: the next start then has nothing to replay (with checkpoints off
        // this connection, a WAL of a busy run would otherwise be read back at every start).
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
        let mut fanout: Vec<(String, Vec<CommittedEvent>)> = Vec::new();
        let mut event_count = 0usize;
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
                    WriteOp::Job(mut job) => {
                        savepoint(&tx, "op")?;
                        let result = job.run(&tx);
                        finish_savepoint(&tx, "op", result.is_ok())?;
                        outcomes.push(Outcome::Job { job, result });
                    }
                    WriteOp::Shutdown => {}
                    WriteOp::DeleteSession { room_id, session_id } => {
                        tx.prepare_cached("DELETE FROM sessions WHERE room_id = ?1 AND session_id = ?2")?
                            .execute(params![room_id, session_id])?;
                        tx.prepare_cached("DELETE FROM provider_state WHERE room_id = ?1 AND session_id = ?2")?
                            .execute(params![room_id, session_id])?;
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
        // Collected after the transaction so a failed group fans nothing out.
        for outcome in &mut outcomes {
            if let Outcome::Appended { room_id, events, .. } = outcome {
                event_count += events.len();
                if events.is_empty() {
                    continue;
                }
                let events = std::mem::take(events);
                match fanout.last_mut() {
                    Some((room, evs)) if room == room_id => evs.extend(events),
                    _ => fanout.push((std::mem::take(room_id), events)),
                }
            }
        }
        metrics::histogram!("ensemble_store_commit_seconds").record(started.elapsed().as_secs_f64());
        metrics::histogram!("ensemble_store_batch_events").record(event_count as f64);
        match tx_result {
            Ok(()) => {
                self.checkpointer.committed(written);
                metrics::counter!("ensemble_events_appended_total").increment(event_count as u64);
                self.stats.commits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.stats.events.fetch_add(event_count as u64, std::sync::atomic::Ordering::Relaxed);
                // Every operation's events reach the bus before it is acknowledged.
                for (room_id, events) in &fanout {
                    self.listener.committed(room_id, events);
                }
                for outcome in outcomes {
                    match outcome {
                        Outcome::Appended { ack, last, .. } => {
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
                    }
                }
            }
            Err(error) => {
                // Nothing of this group is durable: seqs are handed out again and every waiter hears.
                tracing::error!(error = %error, "group commit failed");
                metrics::counter!("ensemble_store_commit_failures_total").increment(1);
                undo.restore(&mut self.heads);
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
    if !batch.events.is_empty() {
        let mut insert =
            conn.prepare_cached("INSERT INTO events (room_id, seq, occurred_at_ms, json) VALUES (?1, ?2, ?3, ?4)")?;
        for ev in &batch.events {
            let seq = h.head + 1;
            // Serialised once, from the borrowed event (no copy of it), straight into the wire
            // frame; the log stores the `event` part of it.
            let mut frame = Vec::with_capacity(512);
            frame.extend_from_slice(FRAME_PREFIX.as_bytes());
            serde_json::to_writer(&mut frame, &ev.with_seq_ref(seq))?;
            let json = std::str::from_utf8(&frame[FRAME_PREFIX.len()..])
                .map_err(|e| StoreError::Other(format!("event json is not utf-8: {e}")))?;
            insert.execute(params![batch.room_id, seq as i64, ev.occurred_at_ms, json])?;
            h.head = seq;
            frame.push(b'}');
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
        .execute(params![rec.session.room_id, rec.session.session_id, serde_json::to_string(rec)?, rec.session.updated_at_ms],
        )?;
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
