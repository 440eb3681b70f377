//! Session state in SQLite: provider-private state and the goal generation ledger.

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};

use super::{Sqlite, Write};
use crate::store::session_state::{SessionStateOp, SessionStateReads};
use crate::store::types::Value;
use crate::store::types::{LedgerKey, StoreError};
use ensemble_core::goal::{Binding, GoalIdentity};

impl Write for SessionStateOp {
    fn write(&self, conn: &Connection) -> Result<Value, StoreError> {
        match self {
            SessionStateOp::SetProviderState { room_id, session_id, key, value } => {
                conn.prepare_cached(
                    "INSERT INTO provider_state (room_id, session_id, key, value) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (room_id, session_id, key) DO UPDATE SET value = excluded.value",
                )?
                .execute(params![room_id, session_id, key, value])?;
                Ok(Value::Unit)
            }
            SessionStateOp::GoalBind { key, identity } => Ok(Value::Binding(bind_goal(conn, key, identity)?)),
        }
    }
}

#[async_trait]
impl SessionStateReads for Sqlite {
    async fn provider_state(&self, room_id: &str, session_id: &str, key: &str) -> Result<Option<String>, StoreError> {
        let (r, s, k) = (room_id.to_owned(), session_id.to_owned(), key.to_owned());
        self.read(move |conn| {
            // Cached: parsing the statement was half the cost of the read.
            Ok(conn
                .prepare_cached("SELECT value FROM provider_state WHERE room_id = ?1 AND session_id = ?2 AND key = ?3")?
                .query_row(params![r, s, k], |row| row.get::<_, String>(0))
                .optional()?)
        })
        .await
    }

    async fn goal_lookup(&self, key: LedgerKey) -> Result<Option<Binding>, StoreError> {
        self.read(move |conn| read_binding(conn, &key)).await
    }
}

fn read_binding(conn: &Connection, k: &LedgerKey) -> Result<Option<Binding>, StoreError> {
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
fn bind_goal(conn: &Connection, key: &LedgerKey, identity: &GoalIdentity) -> Result<Binding, StoreError> {
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
