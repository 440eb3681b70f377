//! A room's events as a chain (migration 5): the events table has no index by room; each row links
//! to the room's previous event (`prev_id`), the room's row holds its newest (`last_id`), and every
//! [`MARK_EVERY`]-th seq of a room is entered in `event_marks`. Seqs `lo..=hi` are read by walking
//! back from the first mark at or after `hi` (or from the newest event): one row lookup per event,
//! as a lookup through the index cost, plus fewer than [`MARK_EVERY`] rows skipped.

use rusqlite::types::{FromSql, Null};
use rusqlite::{Connection, OptionalExtension, ToSql, params};

use super::schema::{MARK_EVERY, RoomRow, room_row};
use crate::store::types::{StoreError, page_fit};

/// What a walk reads of each row besides its links, handed to its visitor.
pub(super) enum Step<'a> {
    /// Nothing (retention).
    Links,
    /// The event's JSON (not read for the rows skipped above the range).
    Json,
    /// The size of the event's JSON in bytes, which SQLite knows without reading it (a page is
    /// cut by bytes before its events are read).
    Size,
    /// The event's JSON if it belongs to this turn.
    TurnJson(&'a str),
    /// The event's session (`None`: none).
    Session,
}

impl Step<'_> {
    /// The column's SQL over the row `e` of `events`, and what `?3` is bound to.
    fn column<'s>(&'s self, hi: &'s i64) -> (&'static str, &'s dyn ToSql) {
        match self {
            Step::Links => ("?3", &Null),
            Step::Json => ("CASE WHEN e.seq <= ?3 THEN e.json END", hi),
            Step::Size => ("CASE WHEN e.seq <= ?3 THEN octet_length(e.json) END", hi),
            Step::TurnJson(turn) => ("CASE WHEN json_extract(e.json, '$.turnId') = ?3 THEN e.json END", turn),
            Step::Session => ("CASE WHEN ?3 IS NULL THEN e.session_id END", &Null),
        }
    }
}

/// Where to enter the room's chain to reach `seq`: the first mark at or after it, else the
/// room's newest event.
pub(super) fn entry(conn: &Connection, room: &str, row: &RoomRow, seq: u64) -> Result<i64, StoreError> {
    if seq + MARK_EVERY > row.head {
        return Ok(row.last_id);
    }
    Ok(conn
        .prepare_cached("SELECT id FROM event_marks WHERE room_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT 1")?
        .query_row(params![room, seq as i64], |r| r.get(0))
        .optional()?
        .unwrap_or(row.last_id))
}

/// Visits the room's events with seqs `lo..=hi` (within `row.pruned_through + 1 ..= row.head`),
/// newest first, as `visit(seq, row id, column)` (the column `step` reads, as `T`). One statement walks the links (a recursive
/// query: a statement per row was measurably slower, see docs/performance/log.md), each step only to the row whose
/// seq is one less. A chain that breaks before `lo` (a missing row, a link to another seq) is an
/// error, never a shorter answer: the log must not hand out a gap.
pub(super) fn walk<T: FromSql>(
    conn: &Connection,
    room: &str,
    row: &RoomRow,
    (lo, hi): (u64, u64),
    step: Step<'_>,
    mut visit: impl FnMut(u64, i64, T),
) -> Result<(), StoreError> {
    if lo > hi {
        return Ok(());
    }
    let start = entry(conn, room, row, hi)?;
    let hi_sql = hi as i64;
    let (x, arg) = step.column(&hi_sql);
    let sql = format!(
        "WITH RECURSIVE walk(id, seq, prev, x) AS (
            SELECT e.id, e.seq, e.prev_id, {x} FROM events e WHERE e.id = ?1
            UNION ALL
            SELECT e.id, e.seq, e.prev_id, {x} FROM walk w JOIN events e ON e.id = w.prev
                WHERE w.seq > ?2 AND e.seq = w.seq - 1
         )
         SELECT seq, id, x FROM walk",
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params![start, lo as i64, arg])?;
    // Each row's seq is one less than the one before (the query's join); the first is at or
    // above `hi` (a mark, or the newest event) and the walk ends at `lo`.
    let mut first = true;
    while let Some(r) = rows.next()? {
        let seq = r.get::<_, i64>(0)? as u64;
        if std::mem::take(&mut first) && seq < hi {
            break;
        }
        if seq <= hi {
            visit(seq, r.get(1)?, r.get(2)?);
        }
        if seq <= lo {
            return Ok(());
        }
    }
    Err(StoreError::Other(format!("room {room}: its event log breaks above seq {lo}")))
}

/// Reads a room's row and walks the range `range` picks from it, in one read transaction (the
/// row and the chain it starts agree); returns the row.
pub(super) fn read<T: FromSql>(
    conn: &Connection,
    room: &str,
    range: impl FnOnce(&RoomRow) -> (u64, u64),
    step: Step<'_>,
    visit: impl FnMut(u64, i64, T),
) -> Result<RoomRow, StoreError> {
    let tx = conn.unchecked_transaction()?;
    let row = room_row(&tx, room)?;
    walk(&tx, room, &row, range(&row), step, visit)?;
    tx.finish()?;
    Ok(row)
}

/// Events of a page with their seqs, oldest first (`None`: a row without its JSON).
pub(super) type Page = Vec<(u64, Option<String>)>;

/// Reads the room's events after `after`: at most `limit`, and no more than `max_bytes` of them
/// (always at least one), oldest first, with the room's row. The sizes are read first (without the
/// events), so a page of large events is never held whole; both walks in one read transaction.
pub(super) fn page(
    conn: &Connection,
    room: &str,
    after: u64,
    limit: u64,
    max_bytes: usize,
) -> Result<(RoomRow, Page), StoreError> {
    let tx = conn.unchecked_transaction()?;
    let row = room_row(&tx, room)?;
    let lo = after.max(row.pruned_through).saturating_add(1);
    let hi = row.head.min(lo.saturating_add(limit).saturating_sub(1));
    let mut sizes: Vec<(u64, i64)> = Vec::new();
    walk(&tx, room, &row, (lo, hi), Step::Size, |seq, _, size: Option<i64>| sizes.push((seq, size.unwrap_or(0))))?;
    // Oldest first: the page ends before the event that would take it past `max_bytes`.
    let sizes = sizes.into_iter().rev().map(|(_, size)| usize::try_from(size).unwrap_or(usize::MAX));
    let end = lo.saturating_sub(1) + page_fit(sizes, usize::MAX, max_bytes) as u64;
    let mut found = Vec::new();
    walk(&tx, room, &row, (lo, end), Step::Json, |seq, _, json: Option<String>| found.push((seq, json)))?;
    tx.finish()?;
    found.reverse();
    Ok((row, found))
}
