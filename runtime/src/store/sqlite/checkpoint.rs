//! WAL checkpoints on a thread of their own.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold, on the writer
//! thread: a profile of session starts found it (copying pages back and an fsync) in a twelfth of
//! the writer's time, during which no commit could happen. The writer nudges this thread instead,
//! which copies most frames first; SQLite's own stays on at a high threshold (see `schema.rs`: only
//! it lets the WAL restart). A PASSIVE checkpoint never blocks the writer, and durability is
//! unchanged (a commit is in the WAL either way; the checkpoint only moves pages to the database
//! file).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;

/// Row bytes the writer commits between nudges. A quarter of SQLite's default threshold (1,000
/// pages): the clustered tables' page splits write several times the rows' bytes to the WAL.
pub(super) const NUDGE_BYTES: usize = 1 << 20;

/// The writer's side: coalescing nudges (a nudge while a checkpoint runs waits for it, one deep).
pub(super) struct Checkpointer {
    nudge: Option<mpsc::SyncSender<()>>,
    handle: Option<std::thread::JoinHandle<()>>,
    written: usize,
}

impl Checkpointer {
    pub(super) fn start(path: PathBuf) -> std::io::Result<Self> {
        let (nudge, rx) = mpsc::sync_channel::<()>(1);
        let handle = std::thread::Builder::new().name("ensemble-store-checkpoint".into()).spawn(move || {
            let conn = match Connection::open(&path) {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(error = %e, "checkpoint connection could not open");
                    return;
                }
            };
            let _ = conn.busy_timeout(Duration::from_secs(5));
            while rx.recv().is_ok() {
                let r = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                    Ok((row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
                });
                match r {
                    Ok((log, done)) => tracing::trace!(log, done, "wal checkpoint"),
                    Err(e) => tracing::warn!(error = %e, "wal checkpoint failed"),
                }
            }
        })?;
        Ok(Self { nudge: Some(nudge), handle: Some(handle), written: 0 })
    }

    /// Called after each commit with the bytes it wrote.
    pub(super) fn committed(&mut self, bytes: usize) {
        self.written += bytes;
        if self.written >= NUDGE_BYTES {
            self.written = 0;
            if let Some(n) = &self.nudge {
                let _ = n.try_send(());
            }
        }
    }

    /// Ends the thread after the checkpoint it may be running, and waits for it: the writer's
    /// last checkpoint, which empties the WAL, gets SQLite's busy answer (and leaves the WAL as it
    /// is) while another connection's checkpoint runs.
    pub(super) fn stop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.nudge = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}
