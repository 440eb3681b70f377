//! The goal generation ledger's keys and reads.

use rusqlite::{Connection, OptionalExtension, params};

use super::types::StoreError;
use crate::goal::{Binding, GoalIdentity};

/// Where a goal generation is bound: the session (and its incarnation) and the provider's thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerKey {
    pub room_id: String,
    pub session_id: String,
    pub session_created_at_ms: i64,
    pub provider_session_id: String,
    pub fingerprint: String,
}

pub(super) fn read_binding(conn: &Connection, k: &LedgerKey) -> Result<Option<Binding>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT operation_id, revision, repair_epoch, ambiguous FROM goal_generations
             WHERE room_id = ?1 AND session_id = ?2 AND session_created_at_ms = ?3
               AND provider_session_id = ?4 AND fingerprint = ?5",
            params![k.room_id, k.session_id, k.session_created_at_ms, k.provider_session_id, k.fingerprint],
            |row| {
                Ok(Binding {
                    identity: GoalIdentity {
                        operation_id: row.get(0)?,
                        revision: row.get(1)?,
                        repair_epoch: row.get(2)?,
                    },
                    ambiguous: row.get::<_, i64>(3)? != 0,
                })
            },
        )
        .optional()?)
}
