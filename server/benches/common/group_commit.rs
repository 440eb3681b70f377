//! The plain SQLite group commit the baselines share (fan-out's durable room, the lifecycle
//! handler): one writer thread, WAL with `synchronous=NORMAL`, groups gathered as Ensemble's writer
//! gathers them, one transaction per group.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::mpsc;

/// As Ensemble's defaults (`--commit-max-batch`, `--store-queue`).
pub const MAX_BATCH: usize = 512;
pub const QUEUE: usize = 4096;

/// A database in WAL mode with `synchronous=NORMAL`, as Ensemble's, and `schema` applied.
pub fn open(path: &Path, schema: &str) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    conn.execute_batch(schema).unwrap();
    conn
}

/// Runs `commit` on a writer thread's own runtime for every group taken from `rx`, until every
/// sender is gone. A group is, as in Ensemble's writer, the first item and what is already queued,
/// at most [`MAX_BATCH`], lingering up to `linger` for more only when more was queued behind the
/// first. `commit` gets the group (which it may drain).
pub fn run<T>(mut rx: mpsc::Receiver<T>, linger: Duration, mut commit: impl FnMut(&mut Vec<T>)) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(async {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while let Some(first) = rx.recv().await {
            batch.push(first);
            let linger = if rx.is_empty() { Duration::ZERO } else { linger };
            let deadline = tokio::time::Instant::now() + linger;
            while batch.len() < MAX_BATCH {
                let next = match rx.try_recv() {
                    Ok(item) => Some(item),
                    Err(mpsc::error::TryRecvError::Empty) if !linger.is_zero() => {
                        tokio::time::timeout_at(deadline, rx.recv()).await.ok().flatten()
                    }
                    Err(_) => None,
                };
                match next {
                    Some(item) => batch.push(item),
                    None => break,
                }
            }
            commit(&mut batch);
            batch.clear();
        }
    });
}
