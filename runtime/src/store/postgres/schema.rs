//! The PostgreSQL schema: embedded, ordered migrations, applied at start under an advisory lock so
//! hosts starting together apply each exactly once. `ensemble_schema` records the versions.

use tokio_postgres::Client;

use super::classify;
use crate::store::types::StoreError;

/// Any constant: the advisory lock every host takes to migrate.
const MIGRATION_LOCK: i64 = 0x656e_7365_6d62;

/// The same tables as SQLite's (`json`/`record` as text: the bytes clients get, unparsed).
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    "CREATE TABLE rooms (
        room_id TEXT PRIMARY KEY,
        head_seq BIGINT NOT NULL,
        pruned_through BIGINT NOT NULL DEFAULT 0
     );
     CREATE TABLE events (
        room_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        occurred_at_ms BIGINT NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (room_id, seq)
     );
     CREATE TABLE sessions (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        record TEXT NOT NULL,
        updated_at_ms BIGINT NOT NULL,
        PRIMARY KEY (room_id, session_id)
     );
     CREATE TABLE provider_state (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (room_id, session_id, key)
     );
     CREATE TABLE goal_generations (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        session_created_at_ms BIGINT NOT NULL,
        provider_session_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        operation_id TEXT NOT NULL,
        revision BIGINT NOT NULL,
        repair_epoch BIGINT NOT NULL,
        ambiguous BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (room_id, session_id, session_created_at_ms, provider_session_id, fingerprint)
     );",
    // 2: several hosts: each host's lease, and which host owns each session.
    "CREATE TABLE hosts (
        host_id TEXT PRIMARY KEY,
        expires_at TIMESTAMPTZ NOT NULL
     );
     CREATE TABLE session_owners (
        room_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        host_id TEXT NOT NULL,
        PRIMARY KEY (room_id, session_id)
     );
     CREATE INDEX session_owners_host ON session_owners (host_id);",
    // 3: side conversations' owner rows (never a stored record) do not count as starting sessions.
    "ALTER TABLE session_owners ADD COLUMN side BOOLEAN NOT NULL DEFAULT false;",
    // 4: access tokens (a hash of each secret, never the secret) and the audit trail. An audit
    // record's seq comes from the one `audit_head` row, moved by the appending transaction, not
    // from a sequence: a sequence hands out numbers outside the transaction, so a rolled-back
    // group (the writer replays one whose operation failed) would leave a gap, and two hosts
    // could commit seqs out of order (a reader paging by seq would skip the one committed
    // late). The row stays locked until the commit, so hosts' appends commit one after the
    // other, in seq order. No index on `at_ms` (a write per changing request): the retention finds its cut by seq.
    "CREATE TABLE access_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        rooms TEXT[] NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at_ms BIGINT NOT NULL,
        created_by TEXT NOT NULL,
        expires_at_ms BIGINT,
        revoked_at_ms BIGINT,
        last_used_at_ms BIGINT
     );
     CREATE TABLE audit (
        seq BIGINT PRIMARY KEY,
        at_ms BIGINT NOT NULL,
        token_id TEXT,
        actor_name TEXT,
        method TEXT NOT NULL,
        route TEXT NOT NULL,
        room_id TEXT,
        session_id TEXT,
        status INT NOT NULL,
        code TEXT
     );
     CREATE TABLE audit_head (id INT PRIMARY KEY CHECK (id = 1), last_seq BIGINT NOT NULL);
     INSERT INTO audit_head VALUES (1, 0);",
    // 5: webhooks and their outbox (see SQLite's migration 10).
    "CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT[] NOT NULL,
        rooms TEXT[] NOT NULL,
        secret TEXT NOT NULL,
        enabled BOOLEAN NOT NULL,
        description TEXT,
        created_at_ms BIGINT NOT NULL,
        updated_at_ms BIGINT NOT NULL,
        created_by TEXT NOT NULL
     );
     CREATE TABLE webhook_outbox (
        id BIGSERIAL PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        room_id TEXT,
        session_id TEXT,
        event_json TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        state TEXT NOT NULL,
        attempts INT NOT NULL,
        next_at_ms BIGINT NOT NULL,
        claimed_by TEXT NOT NULL,
        claimed_until_ms BIGINT NOT NULL,
        log TEXT NOT NULL,
        UNIQUE (webhook_id, event_id)
     );
     CREATE INDEX webhook_outbox_due ON webhook_outbox (webhook_id, state, next_at_ms);",
    // 6: the id of the token that made each token (see SQLite's migration 11).
    "ALTER TABLE access_tokens ADD COLUMN created_by_id TEXT;
     CREATE INDEX access_tokens_maker ON access_tokens (created_by_id);",
    // 7: each event names its session, with an index by room, session and seq, so a session's
    // tail is read without its room's history (SQLite links the rows instead: its migration 12).
    "ALTER TABLE events ADD COLUMN session_id TEXT;
     UPDATE events SET session_id = NULLIF(json::jsonb ->> 'sessionId', '');
     CREATE INDEX events_session_seq ON events (room_id, session_id, seq) WHERE session_id IS NOT NULL;",
];

pub(super) async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(classify)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(classify)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS ensemble_schema (version INT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
        .await
        .map_err(classify)?;
    let version: i32 =
        tx.query_one("SELECT COALESCE(MAX(version), 0) FROM ensemble_schema", &[]).await.map_err(classify)?.get(0);
    let version = usize::try_from(version).unwrap_or(0);
    crate::store::check_schema_version(version, MIGRATIONS.len())?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        tx.batch_execute(sql).await.map_err(classify)?;
        tx.execute("INSERT INTO ensemble_schema (version) VALUES ($1)", &[&((i + 1) as i32)])
            .await
            .map_err(classify)?;
        tracing::debug!(version = i + 1, "applied postgres migration");
    }
    tx.commit().await.map_err(classify)?;
    Ok(())
}
