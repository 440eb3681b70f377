//! One session's events (migration 12): each event row links to its session's previous event in
//! the room (`session_prev_id`); the writer knows each session's newest and publishes it after
//! each commit (`Directory`). A page is read by entering that chain at the right event and walking back: a
//! session's tail costs the rows it returns, whatever the room's age or how many other sessions
//! write to it. No index by session (it would cost every write what migration 5 saved).

use std::collections::VecDeque;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use super::chain;
use super::schema::{RoomRow, room_row};
use crate::store::types::{SessionEventPage, SessionPageFrom, StoreError, page_fit};

/// What the walk reads of each row: its row id, seq and size in bytes.
type Link = (i64, u64, usize);

/// Reads a page of the session whose newest event is `last` (row id, seq; `None`: it has no
/// record or no event), in one read transaction.
pub(super) fn page(
    conn: &Connection,
    room: &str,
    session: &str,
    last: Option<(i64, u64)>,
    from: SessionPageFrom,
    limit: usize,
    max_bytes: usize,
) -> Result<SessionEventPage, StoreError> {
    let tx = conn.unchecked_transaction()?;
    let row = room_row(&tx, room)?;
    let mut out = SessionEventPage { head_seq: row.head, pruned_through: row.pruned_through, ..Default::default() };
    let Some((last_id, last_seq)) = last else { return Ok(out) };
    if last_seq <= row.pruned_through {
        return Ok(out);
    }
    out.last_seq = last_seq;
    let links = match from {
        SessionPageFrom::Before(before) => {
            let entry =
                if before > last_seq { Some(last_id) } else { newest_before(&tx, room, session, &row, before)? };
            let Some(entry) = entry else { return Ok(out) };
            let mut links = walk(&tx, room, session, entry, row.pruned_through, limit.saturating_add(1))?;
            // Newest first: the page keeps the newest that fit, the rest are older pages.
            let keep = page_fit(links.iter().map(|l| l.2), limit, max_bytes);
            out.more = links.len() > keep;
            links.truncate(keep);
            links.reverse();
            links
        }
        SessionPageFrom::After(after) => {
            if after >= last_seq {
                return Ok(out);
            }
            // Back from the newest down to `after`, keeping the oldest `limit + 1` seen.
            let mut oldest: VecDeque<Link> = VecDeque::with_capacity(limit.saturating_add(1));
            visit(&tx, room, session, last_id, after.max(row.pruned_through), usize::MAX, |link| {
                if oldest.len() > limit {
                    oldest.pop_front();
                }
                oldest.push_back(link);
            })?;
            let mut links: Vec<Link> = oldest.into_iter().rev().collect();
            let keep = page_fit(links.iter().map(|l| l.2), limit, max_bytes);
            out.more = links.len() > keep;
            links.truncate(keep);
            links
        }
    };
    let mut read = tx.prepare_cached("SELECT json FROM events WHERE id = ?1")?;
    for (id, seq, _) in links {
        let json: String = read.query_row(params![id], |r| r.get(0))?;
        out.events.push((seq, RawValue::from_string(json)?));
    }
    drop(read);
    tx.finish()?;
    Ok(out)
}

/// The session's newest event with `seq < before`: found by walking the room's chain back from
/// there (a client pages back from an event of the session, so this is the few rows other
/// sessions wrote in between).
fn newest_before(
    conn: &Connection,
    room: &str,
    session: &str,
    row: &RoomRow,
    before: u64,
) -> Result<Option<i64>, StoreError> {
    let hi = before.saturating_sub(1).min(row.head);
    if hi <= row.pruned_through {
        return Ok(None);
    }
    let start = chain::entry(conn, room, row, hi)?;
    Ok(conn
        .prepare_cached(
            "WITH RECURSIVE walk(id, seq, prev, sid) AS (
                SELECT e.id, e.seq, e.prev_id, e.session_id FROM events e WHERE e.id = ?1
                UNION ALL
                SELECT e.id, e.seq, e.prev_id, e.session_id FROM walk w JOIN events e ON e.id = w.prev
                    WHERE e.seq = w.seq - 1 AND e.seq > ?4 AND (w.seq > ?2 OR w.sid IS NOT ?3)
             )
             SELECT id FROM walk WHERE seq <= ?2 AND sid = ?3 LIMIT 1",
        )?
        .query_row(params![start, hi as i64, session, row.pruned_through as i64], |r| r.get(0))
        .optional()?)
}

/// The session's chain from `entry` back, newest first: at most `max` rows, none at or below
/// `floor`.
fn walk(
    conn: &Connection,
    room: &str,
    session: &str,
    entry: i64,
    floor: u64,
    max: usize,
) -> Result<Vec<Link>, StoreError> {
    let mut out = Vec::new();
    visit(conn, room, session, entry, floor, max, |link| out.push(link))?;
    Ok(out)
}

/// Visits the session's chain from `entry` back (see [`walk`]). Each step must stay in the room
/// and the session and go to an older seq: a link to a row retention deleted (or whose row id a
/// later insert took) ends the chain, as the pruned history does.
fn visit(
    conn: &Connection,
    room: &str,
    session: &str,
    entry: i64,
    floor: u64,
    max: usize,
    mut each: impl FnMut(Link),
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "WITH RECURSIVE walk(id, seq, prev, size, n) AS (
            SELECT e.id, e.seq, e.session_prev_id, octet_length(e.json), 1 FROM events e
                WHERE e.id = ?1 AND e.room_id = ?2 AND e.session_id = ?3 AND e.seq > ?4
            UNION ALL
            SELECT e.id, e.seq, e.session_prev_id, octet_length(e.json), w.n + 1 FROM walk w
                JOIN events e ON e.id = w.prev
                WHERE w.n < ?5 AND e.room_id = ?2 AND e.session_id = ?3 AND e.seq < w.seq AND e.seq > ?4
         )
         SELECT id, seq, size FROM walk",
    )?;
    let max = i64::try_from(max).unwrap_or(i64::MAX);
    let mut rows = stmt.query(params![entry, room, session, floor as i64, max])?;
    while let Some(r) = rows.next()? {
        each((r.get(0)?, r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as usize));
    }
    Ok(())
}
