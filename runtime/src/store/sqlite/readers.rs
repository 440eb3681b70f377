//! The read-only connections, each on a thread of its own.
//!
//! Reads do not go through tokio's blocking pool: anything else may fill that pool (an agent's
//! file requests stuck on a FIFO once made every room's log reads and every new WebSocket's
//! `hello` wait for good). These threads run store reads only, so a read waits at most for the
//! reads queued before it.

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use crate::store::types::StoreError;

type Job = Box<dyn FnOnce(&mut Option<Connection>, &std::path::Path) + Send>;

pub(super) struct ReaderPool {
    /// Closed when the pool is dropped, which ends the threads once the queue is drained.
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl ReaderPool {
    /// Starts `threads` reader threads on the database at `path` (connections open on first use).
    pub(super) fn start(path: PathBuf, threads: usize) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let (rx, path) = (rx.clone(), path.clone());
            std::thread::Builder::new().name(format!("ensemble-read-{i}")).spawn(move || {
                let mut conn = None;
                loop {
                    // The lock is held while waiting: one idle thread waits on the queue, the
                    // others on the lock, and each job goes to exactly one of them.
                    let job = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(&mut conn, &path),
                        Err(_) => return,
                    }
                }
            })?;
        }
        Ok(Self { jobs: Mutex::new(tx) })
    }

    /// Runs `f` on a reader thread's connection.
    pub(super) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn, path| {
            let out = match connection(conn, path) {
                Ok(c) => f(c),
                Err(e) => Err(e),
            };
            let _ = tx.send(out);
        });
        let sent = self.jobs.lock().map_err(|_| StoreError::Closed)?.send(job);
        sent.map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Other("a store reader thread ended".into()))?
    }
}

/// The thread's connection, opened now if it is not yet (or failed to open last time).
fn connection<'a>(conn: &'a mut Option<Connection>, path: &std::path::Path) -> Result<&'a Connection, StoreError> {
    if conn.is_none() {
        let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        c.busy_timeout(Duration::from_secs(5))?;
        *conn = Some(c);
    }
    conn.as_ref().ok_or(StoreError::Closed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    /// A store read answers while tokio's blocking pool is full of threads that never return.
    #[test]
    fn reads_do_not_wait_for_a_full_blocking_pool() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        Connection::open(&path).unwrap().execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x);").unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        rt.block_on(async {
            for _ in 0..4 {
                let wait = wait.clone();
                drop(tokio::task::spawn_blocking(move || {
                    let _ = wait.lock().map(|w| w.recv());
                }));
            }
            let pool = ReaderPool::start(path, 1).unwrap();
            let read = pool.read(|c| Ok(c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))?));
            let n = tokio::time::timeout(Duration::from_secs(10), read)
                .await
                .unwrap_or_else(|_| panic!("the read waited for the blocking pool"))
                .unwrap();
            assert_eq!(n, 0);
        });
        drop(release);
        rt.shutdown_background();
    }
}
