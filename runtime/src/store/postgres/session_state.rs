//! Session state in PostgreSQL: provider-private state and the goal generation ledger.

use async_trait::async_trait;
use tokio_postgres::{GenericClient, Transaction};

use super::{Postgres, Stmts, Write, classify};
use crate::store::session_state::{SessionStateOp, SessionStateReads};
use crate::store::types::Value;
use crate::store::types::{LedgerKey, StoreError};
use ensemble_core::goal::{Binding, GoalIdentity};

#[async_trait]
impl Write for SessionStateOp {
    async fn write(&self, tx: &Transaction<'_>, _: &Stmts) -> Result<Value, StoreError> {
        match self {
            SessionStateOp::SetProviderState { room_id, session_id, key, value } => {
                tx.execute(
                    "INSERT INTO provider_state (room_id, session_id, key, value) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (room_id, session_id, key) DO UPDATE SET value = EXCLUDED.value",
                    &[room_id, session_id, key, value],
                )
                .await
                .map_err(classify)?;
                Ok(Value::Unit)
            }
            SessionStateOp::GoalBind { key, identity } => Ok(Value::Binding(bind_goal(tx, key, identity).await?)),
        }
    }
}

#[async_trait]
impl SessionStateReads for Postgres {
    async fn provider_state(&self, room_id: &str, session_id: &str, key: &str) -> Result<Option<String>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT value FROM provider_state WHERE room_id = $1 AND session_id = $2 AND key = $3",
                &[&room_id, &session_id, &key],
            )
            .await
            .map_err(classify);
        self.give_back(c);
        Ok(row?.map(|r| r.get::<_, String>(0)))
    }

    async fn goal_lookup(&self, key: LedgerKey) -> Result<Option<Binding>, StoreError> {
        let c = self.client().await?;
        let b = read_binding(&c, &key, false).await;
        self.give_back(c);
        b
    }
}

/// First bind wins (hosts racing to bind meet on the primary key); another identity makes the
/// generation ambiguous for good.
async fn bind_goal(tx: &impl GenericClient, key: &LedgerKey, identity: &GoalIdentity) -> Result<Binding, StoreError> {
    let inserted = tx
        .execute(
            "INSERT INTO goal_generations (room_id, session_id, session_created_at_ms, provider_session_id,
                    fingerprint, operation_id, revision, repair_epoch, ambiguous)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0) ON CONFLICT DO NOTHING",
            &[
                &key.room_id,
                &key.session_id,
                &key.session_created_at_ms,
                &key.provider_session_id,
                &key.fingerprint,
                &identity.operation_id,
                &identity.revision,
                &identity.repair_epoch,
            ],
        )
        .await
        .map_err(classify)?;
    if inserted == 1 {
        return Ok(Binding { identity: identity.clone(), ambiguous: false });
    }
    let mut existing =
        read_binding(tx, key, true).await?.ok_or_else(|| StoreError::Other("goal binding vanished".into()))?;
    if existing.identity != *identity && !existing.ambiguous {
        tx.execute(
            "UPDATE goal_generations SET ambiguous = 1
                 WHERE room_id = $1 AND session_id = $2 AND session_created_at_ms = $3
                   AND provider_session_id = $4 AND fingerprint = $5",
            &[&key.room_id, &key.session_id, &key.session_created_at_ms, &key.provider_session_id, &key.fingerprint],
        )
        .await
        .map_err(classify)?;
        existing.ambiguous = true;
    }
    Ok(existing)
}

/// The ledger's binding of a generation; `lock`: `FOR UPDATE`, inside the writer's transaction.
async fn read_binding(c: &impl GenericClient, k: &LedgerKey, lock: bool) -> Result<Option<Binding>, StoreError> {
    let sql = format!(
        "SELECT operation_id, revision, repair_epoch, ambiguous FROM goal_generations
         WHERE room_id = $1 AND session_id = $2 AND session_created_at_ms = $3
           AND provider_session_id = $4 AND fingerprint = $5{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let row = c
        .query_opt(&sql, &[&k.room_id, &k.session_id, &k.session_created_at_ms, &k.provider_session_id, &k.fingerprint])
        .await
        .map_err(classify)?;
    Ok(row.map(|r| Binding {
        identity: GoalIdentity { operation_id: r.get(0), revision: r.get(1), repair_epoch: r.get(2) },
        ambiguous: r.get::<_, i64>(3) != 0,
    }))
}
