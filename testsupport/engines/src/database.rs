//! A database of a test's own, on the PostgreSQL server the test run shares.
//!
//! `scripts/test` starts one server for the whole run (`ensemble-test-postgres`) and names it in
//! [`SHARED_ENV`]; each test then gets a fresh database copied from `template1` (milliseconds)
//! instead of an `initdb` and a server start of its own (seconds). Without the variable (a test
//! run by hand) the test starts a server of its own, as before. Tests that stop or restart
//! PostgreSQL keep using [`Postgres::start`]: a shared server is not theirs to stop.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::postgres::{Postgres, execute_at};

/// The variable naming the shared server: `postgres://postgres@127.0.0.1:PORT/postgres`.
pub const SHARED_ENV: &str = "ENSEMBLE_TEST_POSTGRES_URL";

const QUERY_TIMEOUT: Duration = Duration::from_secs(30);

/// A database for one test, dropped with it (on the shared server), or the test's own server.
pub struct TestDatabase {
    url: String,
    shared: Option<(String, String)>,
    _own: Option<Postgres>,
}

impl TestDatabase {
    /// A fresh, empty database; `label` (ASCII letters, digits, `_`) names it in the server's log.
    pub fn create(label: &str) -> anyhow::Result<TestDatabase> {
        if !label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') || label.is_empty() || label.len() > 32 {
            bail!("database label {label:?}: use 1 to 32 ASCII letters, digits or `_`");
        }
        let Ok(admin) = std::env::var(SHARED_ENV) else {
            let pg = Postgres::start()?;
            let url = pg.create_database(label)?;
            return Ok(TestDatabase { url, shared: None, _own: Some(pg) });
        };
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("{label}_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let sql = format!("CREATE DATABASE \"{name}\" TEMPLATE template1");
        crate::process::block_on(execute_at(&admin, &sql, Instant::now() + QUERY_TIMEOUT))?
            .with_context(|| format!("creating database {name} on the shared server ({SHARED_ENV})"))?;
        let url = match admin.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{name}"),
            None => bail!("{SHARED_ENV} is not a postgres:// URL with a database"),
        };
        Ok(TestDatabase { url, shared: Some((admin, name)), _own: None })
    }

    /// The database's URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some((admin, name)) = &self.shared {
            // FORCE: a server under test may still hold connections.
            let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
            let _ = crate::process::block_on(execute_at(admin, &sql, Instant::now() + QUERY_TIMEOUT));
        }
    }
}
