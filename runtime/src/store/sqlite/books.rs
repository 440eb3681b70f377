//! What the SQLite writer keeps of the database in memory (its books), and the log of what a group
//! changed in them, unwound with the writes it rolls back.

use std::collections::HashMap;

use super::schema::RoomRow;

/// What the writer keeps of a room: its `rooms` row (the record count is what `GET /v1/rooms`
/// reads, since the records have no index by room: migration 4; the newest event's row id is where
/// the room's chain of events starts, since the events have none either: migration 5).
pub(super) type Heads = RoomRow;

/// Each session record's row (`sessions.id`), by room and session. The table has no index on
/// them (migration 4): kept with each insert, it put every room's entries on a page of their own,
/// and a group of starts across 32 rooms rewrote one such page per room.
pub(super) type Records = HashMap<String, HashMap<String, RecordAt>>;

/// Where a session's record is: its row, and the row of the `session.started` event it was written
/// as (migration 6), which retention must not prune before the record has its JSON. The record's
/// first change moves it to a row of its own (`started` then `None`); retention writing it out
/// where it is leaves `started` (the row then says it needs the event no longer).
/// `last` is the session's newest event (row id, seq; migration 12), which its next event links
/// to and readers enter its chain at; `written` is what the row holds of it in this transaction
/// (the group's end writes `last` where the two differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RecordAt {
    pub(super) row: i64,
    pub(super) started: Option<i64>,
    pub(super) last: Option<(i64, u64)>,
    pub(super) written: Option<(i64, u64)>,
}

/// What the writer keeps of the database in memory: touched rooms' heads and every record's row.
#[derive(Default)]
pub(super) struct Books {
    pub(super) heads: HashMap<String, Heads>,
    pub(super) records: Records,
}

/// A change to the [`Books`], as they were before it: put back if its writes are rolled back.
pub(super) enum Change {
    /// A room's heads (`None`: not loaded then).
    Heads(String, Option<Heads>),
    /// A session's record row (`None`: it had none).
    Record(String, String, Option<RecordAt>),
    /// A session's newest event, its row unmoved (as it was before).
    Last(String, String, RecordAt),
}

/// What a group changed in the [`Books`], in order. A run or an operation rolled back to its
/// savepoint unwinds the log to where it began ([`Undo::mark`]); a failed group unwinds all of it.
#[derive(Default)]
pub(super) struct Undo(pub(super) Vec<Change>);

impl Undo {
    pub(super) fn mark(&self) -> usize {
        self.0.len()
    }

    /// Before a room's heads change.
    pub(super) fn note(&mut self, heads: &HashMap<String, Heads>, room: &str) {
        self.0.push(Change::Heads(room.to_owned(), heads.get(room).copied()));
    }

    /// Before a session's record row changes (`before`: its row until now).
    pub(super) fn note_record(&mut self, room: &str, session: &str, before: Option<RecordAt>) {
        self.0.push(Change::Record(room.to_owned(), session.to_owned(), before));
    }

    /// Before a session's newest event changes, its row staying where it is.
    pub(super) fn note_last(&mut self, room: &str, session: &str, before: RecordAt) {
        self.0.push(Change::Last(room.to_owned(), session.to_owned(), before));
    }

    /// Puts back what changed since `mark`, newest first.
    pub(super) fn rollback_to(&mut self, mark: usize, books: &mut Books) {
        while self.0.len() > mark {
            match self.0.pop() {
                Some(Change::Heads(room, Some(h))) => {
                    books.heads.insert(room, h);
                }
                Some(Change::Heads(room, None)) => {
                    books.heads.remove(&room);
                }
                Some(Change::Record(room, session, Some(at)) | Change::Last(room, session, at)) => {
                    books.records.entry(room).or_default().insert(session, at);
                }
                Some(Change::Record(room, session, None)) => {
                    if let Some(m) = books.records.get_mut(&room) {
                        m.remove(&session);
                    }
                }
                None => break,
            }
        }
    }

    /// The rooms whose heads the group changed, each with its heads before the group.
    pub(super) fn rooms_before(&self) -> HashMap<&str, Option<Heads>> {
        // Sized for every change at once: grown from empty it rehashed several times per group,
        // which showed in a profile of session starts.
        let mut out = HashMap::with_capacity(self.0.len());
        for change in &self.0 {
            if let Change::Heads(room, before) = change {
                out.entry(room.as_str()).or_insert(*before);
            }
        }
        out
    }
}
