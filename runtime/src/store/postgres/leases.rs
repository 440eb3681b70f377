//! What several hosts sharing one PostgreSQL database agree on besides the room logs: which hosts
//! are alive (a lease each host renews) and which host owns each session (holds it in its registry
//! and, while it is live, its agent process).
//!
//! Every ownership change is one statement, so two hosts racing for a session cannot both win: a
//! claim succeeds only for a session nobody owns, that the claimer already owns, or whose owner's
//! lease has expired.

use std::sync::Arc;
use std::time::Duration;

use super::{Postgres, classify};
use crate::session::SessionRecord;
use crate::store::types::StoreError;
use ensemble_core::model::SessionKey;

/// The answer to a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// This host owns the session now (it may have owned it before).
    Mine,
    /// Another host with a valid lease owns it.
    Theirs(String),
}

/// The advisory lock starts take while they count open sessions (any constant).
const START_LOCK: i64 = 0x656e_7365_6d64;

/// The answer to a claim of a new session id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewClaim {
    Claimed,
    /// A session with this id exists (or is being started) on some host.
    Exists,
    /// The limits are reached: `(open in the room, open in total)` as counted.
    Full {
        in_room: u64,
        total: u64,
    },
}

/// Host leases and session owners (PostgreSQL only: SQLite has one host by construction).
#[derive(Clone)]
pub struct Leases {
    db: Arc<Postgres>,
}

/// Seconds as PostgreSQL's `double precision` (for `make_interval`).
fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl Leases {
    pub(in crate::store) fn new(db: Arc<Postgres>) -> Self {
        Self { db }
    }

    /// Registers (or re-registers, after a restart with the same id) this host's lease.
    pub async fn register(&self, host: &str, lease: Duration) -> Result<(), StoreError> {
        let c = self.db.client().await?;
        let r = c
            .execute(
                "INSERT INTO hosts (host_id, expires_at) VALUES ($1, now() + make_interval(secs => $2))
                 ON CONFLICT (host_id) DO UPDATE SET expires_at = EXCLUDED.expires_at",
                &[&host, &secs(lease)],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        r.map(|_| ())
    }

    /// Renews this host's lease. `Ok(false)`: the lease is gone (it expired and the host was
    /// written off); the host must give up its sessions rather than resurrect itself.
    pub async fn renew(&self, host: &str, lease: Duration) -> Result<bool, StoreError> {
        let c = self.db.client().await?;
        let r = c
            .execute(
                "UPDATE hosts SET expires_at = now() + make_interval(secs => $2)
                 WHERE host_id = $1 AND expires_at > now()",
                &[&host, &secs(lease)],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        Ok(r? == 1)
    }

    /// Claims a new session id: succeeds only if no record and no owner exist for it and, for a
    /// session (`limits`: most open sessions per room and in total), only while there is room.
    /// Starts are serialised by one advisory lock and count the stored open sessions plus the
    /// sessions being started (an owner row without a record yet), so two hosts cannot both take
    /// the last place.
    pub async fn claim_new(
        &self,
        key: &SessionKey,
        host: &str,
        limits: Option<(u64, u64)>,
    ) -> Result<NewClaim, StoreError> {
        let mut c = self.db.client().await?;
        let r = async {
            let tx = c.transaction().await.map_err(classify)?;
            if let Some((per_room, total)) = limits {
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&START_LOCK]).await.map_err(classify)?;
                let row = tx
                    .query_one(
                        "SELECT COUNT(*) FILTER (WHERE room_id = $1), COUNT(*) FROM (
                           SELECT room_id FROM sessions WHERE (record::jsonb ->> 'phase') IS DISTINCT FROM 'completed'
                           UNION ALL
                           SELECT o.room_id FROM session_owners o WHERE NOT o.side AND NOT EXISTS
                             (SELECT 1 FROM sessions s WHERE s.room_id = o.room_id AND s.session_id = o.session_id)
                         ) open",
                        &[&key.room_id],
                    )
                    .await
                    .map_err(classify)?;
                let (in_room, all) = (row.get::<_, i64>(0) as u64, row.get::<_, i64>(1) as u64);
                if all >= total || in_room >= per_room {
                    return Ok(NewClaim::Full { in_room, total: all });
                }
            }
            let won = tx
                .query_opt(
                    "INSERT INTO session_owners (room_id, session_id, host_id, side)
                     SELECT $1, $2, $3, $4
                     WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE room_id = $1 AND session_id = $2)
                     ON CONFLICT (room_id, session_id) DO NOTHING
                     RETURNING 1",
                    &[&key.room_id, &key.session_id, &host, &limits.is_none()],
                )
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(if won.is_some() { NewClaim::Claimed } else { NewClaim::Exists })
        }
        .await;
        self.db.give_back(c);
        r
    }

    /// Claims an existing session: this host owns it afterwards unless another live host does.
    pub async fn claim(&self, key: &SessionKey, host: &str) -> Result<Claim, StoreError> {
        let c = self.db.client().await?;
        let r = async {
            // Two attempts: the owner row may vanish between the failed upsert and the lookup.
            for _ in 0..2 {
                let won = c
                    .query_opt(
                        "INSERT INTO session_owners AS o (room_id, session_id, host_id) VALUES ($1, $2, $3)
                         ON CONFLICT (room_id, session_id) DO UPDATE SET host_id = EXCLUDED.host_id
                         WHERE o.host_id = EXCLUDED.host_id
                            OR NOT EXISTS (SELECT 1 FROM hosts h WHERE h.host_id = o.host_id AND h.expires_at > now())
                         RETURNING 1",
                        &[&key.room_id, &key.session_id, &host],
                    )
                    .await
                    .map_err(classify)?;
                if won.is_some() {
                    return Ok(Claim::Mine);
                }
                let owner = c
                    .query_opt(
                        "SELECT host_id FROM session_owners WHERE room_id = $1 AND session_id = $2",
                        &[&key.room_id, &key.session_id],
                    )
                    .await
                    .map_err(classify)?;
                if let Some(row) = owner {
                    return Ok(Claim::Theirs(row.get(0)));
                }
            }
            Err(StoreError::Unavailable("the session's owner kept changing".into()))
        }
        .await;
        self.db.give_back(c);
        r
    }

    /// The session's owner, if it has one with a valid lease.
    pub async fn owner(&self, key: &SessionKey) -> Result<Option<String>, StoreError> {
        let c = self.db.client().await?;
        let r = c
            .query_opt(
                "SELECT o.host_id FROM session_owners o JOIN hosts h ON h.host_id = o.host_id
                 WHERE o.room_id = $1 AND o.session_id = $2 AND h.expires_at > now()",
                &[&key.room_id, &key.session_id],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        Ok(r?.map(|row| row.get(0)))
    }

    /// Gives up one session (a failed start, a forgotten side).
    pub async fn release(&self, key: &SessionKey, host: &str) -> Result<(), StoreError> {
        let c = self.db.client().await?;
        let r = c
            .execute(
                "DELETE FROM session_owners WHERE room_id = $1 AND session_id = $2 AND host_id = $3",
                &[&key.room_id, &key.session_id, &host],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        r.map(|_| ())
    }

    /// A host stopping cleanly: its sessions are free to be claimed at once, and its lease goes.
    pub async fn release_host(&self, host: &str) -> Result<(), StoreError> {
        let mut c = self.db.client().await?;
        let r = async {
            let tx = c.transaction().await.map_err(classify)?;
            tx.execute("DELETE FROM session_owners WHERE host_id = $1", &[&host]).await.map_err(classify)?;
            tx.execute("DELETE FROM hosts WHERE host_id = $1", &[&host]).await.map_err(classify)?;
            tx.commit().await.map_err(classify)
        }
        .await;
        self.db.give_back(c);
        r
    }

    /// Sessions this host owns (after a restart with the same host id).
    pub async fn owned_by(&self, host: &str) -> Result<Vec<SessionKey>, StoreError> {
        self.keys("SELECT room_id, session_id FROM session_owners WHERE host_id = $1 ORDER BY 1, 2", &[&host]).await
    }

    /// Up to `limit` sessions whose owner's lease has expired (or who has none left).
    pub async fn orphans(&self, limit: usize) -> Result<Vec<SessionKey>, StoreError> {
        let limit = limit as i64;
        self.keys(
            "SELECT room_id, session_id FROM session_owners o
             WHERE NOT EXISTS (SELECT 1 FROM hosts h WHERE h.host_id = o.host_id AND h.expires_at > now())
             LIMIT $1",
            &[&limit],
        )
        .await
    }

    /// Forgets hosts whose lease expired long ago and who own nothing any more.
    pub async fn forget_dead_hosts(&self, after: Duration) -> Result<u64, StoreError> {
        let c = self.db.client().await?;
        let r = c
            .execute(
                "DELETE FROM hosts h WHERE h.expires_at < now() - make_interval(secs => $1)
                 AND NOT EXISTS (SELECT 1 FROM session_owners o WHERE o.host_id = h.host_id)",
                &[&secs(after)],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        r
    }

    /// Hosts with a valid lease.
    pub async fn live_hosts(&self) -> Result<Vec<String>, StoreError> {
        let c = self.db.client().await?;
        let r = c.query("SELECT host_id FROM hosts WHERE expires_at > now() ORDER BY 1", &[]).await.map_err(classify);
        self.db.give_back(c);
        Ok(r?.into_iter().map(|row| row.get(0)).collect())
    }

    /// One session's stored record.
    pub async fn record(&self, key: &SessionKey) -> Result<Option<SessionRecord>, StoreError> {
        let c = self.db.client().await?;
        let r = c
            .query_opt(
                "SELECT record FROM sessions WHERE room_id = $1 AND session_id = $2",
                &[&key.room_id, &key.session_id],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        Ok(crate::store::parse_records(r?.into_iter().map(|row| row.get(0)).collect()).pop())
    }

    /// The stored records of a room's sessions.
    /// The side conversations of a room whose owner's lease is current, with that owner.
    pub async fn room_sides(&self, room: &str) -> Result<Vec<(String, String)>, StoreError> {
        let c = self.db.client().await?;
        let r = c
            .query(
                "SELECT o.session_id, o.host_id FROM session_owners o JOIN hosts h ON h.host_id = o.host_id
                 WHERE o.room_id = $1 AND o.side AND h.expires_at > now() ORDER BY 1",
                &[&room],
            )
            .await
            .map_err(classify);
        self.db.give_back(c);
        Ok(r?.into_iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    pub async fn room_records(&self, room: &str) -> Result<Vec<SessionRecord>, StoreError> {
        let c = self.db.client().await?;
        let r = c
            .query("SELECT record FROM sessions WHERE room_id = $1 ORDER BY session_id", &[&room])
            .await
            .map_err(classify);
        self.db.give_back(c);
        Ok(crate::store::parse_records(r?.into_iter().map(|row| row.get(0)).collect()))
    }

    async fn keys(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<SessionKey>, StoreError> {
        let c = self.db.client().await?;
        let r = c.query(sql, params).await.map_err(classify);
        self.db.give_back(c);
        Ok(r?.into_iter().map(|row| SessionKey::new(row.get::<_, &str>(0), row.get::<_, &str>(1))).collect())
    }
}
