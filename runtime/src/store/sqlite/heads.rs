//! The sessions' newest events (migration 12) as the writer keeps them: exact in its books, each
//! linking its session's next event; published to the readers after every commit (`Directory`);
//! written into the record rows with a record, every `HEADS_FLUSH_EVENTS` of a room's events and
//! at a stop; found again after a crash by reading the events above the room's `heads_through`.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::Directory;
use super::books::{Books, Change, Records, Undo};
use super::chain::{self, Step};
use super::schema::room_row;
use crate::store::types::StoreError;

/// How many events a room may run past `heads_through` before its sessions' rows are given their
/// newest events: written per group, they cost a page per streaming session and group (a
/// quarter of the streaming submits' rate); this often, a restart after a crash reads at most
/// about this many events of the room to find them again (`repair_heads`).
pub(super) const HEADS_FLUSH_EVENTS: u64 = 2048;

/// Gives every record row of `room` whose newest event moved on since it was written that event,
/// and moves the room's `heads_through` to its head (its `rooms` row is written after).
pub(super) fn flush_heads(conn: &Connection, books: &mut Books, undo: &mut Undo, room: &str) -> Result<(), StoreError> {
    if let Some(m) = books.records.get_mut(room) {
        let mut update = conn.prepare_cached("UPDATE sessions SET last_id = ?2, last_seq = ?3 WHERE id = ?1")?;
        for (session, at) in m.iter_mut() {
            if let Some((id, seq)) = at.last
                && at.written != at.last
            {
                undo.note_last(room, session, *at);
                update.execute(params![at.row, id, seq as i64])?;
                at.written = at.last;
            }
        }
    }
    if let Some(h) = books.heads.get_mut(room) {
        h.heads_through = h.head;
    }
    Ok(())
}

/// After a crash a room's session rows may not hold their newest events (written now and then,
/// `HEADS_FLUSH_EVENTS`): the events above `heads_through` are read again, newest first, and each
/// session's newest one goes into the books (its row gets it at the next flush).
pub(super) fn repair_heads(conn: &Connection, records: &mut Records) -> Result<(), StoreError> {
    let rooms: Vec<String> = conn
        .prepare("SELECT room_id FROM rooms WHERE heads_through < head_seq")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for room in rooms {
        let row = room_row(conn, &room)?;
        let lo = row.heads_through.max(row.pruned_through) + 1;
        let mut newest: HashMap<String, (i64, u64)> = HashMap::new();
        chain::walk(conn, &room, &row, (lo, row.head), Step::Session, |seq, id, session: Option<String>| {
            if let Some(s) = session {
                newest.entry(s).or_insert((id, seq));
            }
        })?;
        let Some(m) = records.get_mut(&room) else { continue };
        for (session, last) in newest {
            if let Some(at) = m.get_mut(&session)
                && at.last.is_none_or(|(_, seq)| seq < last.1)
            {
                at.last = Some(last);
            }
        }
    }
    Ok(())
}

/// After a commit: the readers' directory gets the rows of the records the group wrote, moved or
/// deleted (only once they are committed: a reader must not look for a row it cannot see yet).
pub(super) fn publish_rows(directory: &Directory, records: &Records, undo: &Undo) {
    let mut changed: Vec<(&str, &str, Option<Entry>)> = Vec::new();
    for change in &undo.0 {
        let (room, session) = match change {
            Change::Record(room, session, _) | Change::Last(room, session, _) => (room, session),
            Change::Heads(..) => continue,
        };
        let now = records.get(room).and_then(|m| m.get(session)).map(|at| (at.row, at.last));
        changed.push((room, session, now));
    }
    if changed.is_empty() {
        return;
    }
    let Ok(mut dir) = directory.write() else { return };
    for (room, session, now) in changed {
        match (now, dir.get_mut(room).and_then(|m| m.get_mut(session))) {
            (Some(now), Some(entry)) => *entry = now,
            (Some(now), None) => {
                dir.entry(room.to_owned()).or_default().insert(session.to_owned(), now);
            }
            (None, _) => {
                if let Some(m) = dir.get_mut(room) {
                    m.remove(session);
                }
            }
        }
    }
}

/// What the readers' directory holds of a record: its row and its session's newest event.
type Entry = (i64, Option<(i64, u64)>);
