//! The goal generation ledger in SQLite.

use rusqlite::{Connection, OptionalExtension, params};

use crate::store::types::{LedgerKey, StoreError};
use ensemble_core::goal::{Binding, GoalIdentity};

pub(super) fn read_binding(conn: &Connection, k: &LedgerKey) -> Result<Option<Binding>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT operation_id, revision, repair_epoch, ambiguous FROM goal_generations
             WHERE room_id = ?1 AND session_id = ?2 AND session_created_at_ms = ?3
               AND provider_session_id = ?4 AND fingerprint = ?5",
        )?
        .query_row(
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

/// The first bind wins; binding another identity makes the generation ambiguous for good.
pub(super) fn bind_goal(conn: &Connection, key: &LedgerKey, identity: &GoalIdentity) -> Result<Binding, StoreError> {
    match read_binding(conn, key)? {
        None => {
            conn.execute(
                "INSERT INTO goal_generations (room_id, session_id, session_created_at_ms, provider_session_id,
                        fingerprint, operation_id, revision, repair_epoch, ambiguous)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)",
                params![
                    key.room_id,
                    key.session_id,
                    key.session_created_at_ms,
                    key.provider_session_id,
                    key.fingerprint,
                    identity.operation_id,
                    identity.revision,
                    identity.repair_epoch
                ],
            )?;
            Ok(Binding { identity: identity.clone(), ambiguous: false })
        }
        Some(existing) if existing.identity == *identity || existing.ambiguous => Ok(existing),
        Some(mut existing) => {
            conn.execute(
                "UPDATE goal_generations SET ambiguous = 1
                     WHERE room_id = ?1 AND session_id = ?2 AND session_created_at_ms = ?3
                       AND provider_session_id = ?4 AND fingerprint = ?5",
                params![
                    key.room_id,
                    key.session_id,
                    key.session_created_at_ms,
                    key.provider_session_id,
                    key.fingerprint
                ],
            )?;
            existing.ambiguous = true;
            Ok(existing)
        }
    }
}
