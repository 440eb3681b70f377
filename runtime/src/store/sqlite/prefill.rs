//! The WAL's file space, written ahead of the commits that will use it.
//!
//! A commit that extends the WAL makes the kernel find or allocate a page-cache folio, zero what the
//! write leaves of it, and reserve a disk block for every frame it appends (a frame, a 24-byte header
//! and a page, straddles the file's pages, so each append is two partial-page writes). In a profile
//! of session starts on a fresh data dir that was most of the store writer's `pwrite` time, and a
//! fresh WAL grows until it reaches the autocheckpoint cap and SQLite restarts it (below). Zeros
//! written a little ahead, in one large write at a time, leave the commits overwriting pages that
//! are already there — what PostgreSQL does for its WAL segments (`wal_init_zero`).
//!
//! Safety: only the writer thread writes the WAL (SQLite's checkpoints on other connections write
//! the database file), and this runs on it between commits, writing only past the file's current
//! end: never over a frame. Frames of zeros are not frames to SQLite (a frame's page number is
//! never 0), so recovery after a crash stops at them as it stops at a restarted WAL's stale frames.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::Connection;

use crate::store::StoreError;

/// SQLite's WAL header.
const WAL_HEADER: u64 = 32;

/// A frame's header before its page.
const FRAME_HEADER: u64 = 24;

static ZEROS: [u8; 64 << 10] = [0; 64 << 10];

/// The WAL file SQLite keeps beside the database at `db`.
fn wal_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-wal");
    p.into()
}

/// The writer's view of its WAL file.
pub(super) struct Prefill {
    /// Bytes kept written ahead of the WAL's last frame (0: off).
    ahead: u64,
    path: PathBuf,
    /// Opened at the first fill.
    file: Option<File>,
    /// Frames in the WAL after the last commit, from SQLite's WAL hook.
    frames: Arc<AtomicU64>,
    frame_size: u64,
    /// The WAL's largest size: its frames when SQLite restarts it.
    cap: u64,
    /// The file's length after the last fill (it only grows, but for a restart's truncation).
    ready_to: u64,
    /// Where the last frame ended at the last check: a smaller end means the WAL restarted.
    last_end: u64,
}

impl Prefill {
    /// Installs the WAL hook on the writer's connection and reads the page size. The hook replaces
    /// SQLite's automatic checkpoint, so it does that too, after a commit that leaves
    /// `autocheckpoint` pages or more (what bounds the WAL, and so how far filling goes). `ahead`:
    /// bytes kept ready, 0 for none.
    pub(super) fn install(
        conn: &mut Connection,
        db_path: PathBuf,
        ahead: u64,
        autocheckpoint: u32,
    ) -> Result<Self, StoreError> {
        let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
        let frame_size = page_size as u64 + FRAME_HEADER;
        let frames = Arc::new(AtomicU64::new(0));
        let seen = frames.clone();
        // SQLite's own hook (`sqlite3_wal_autocheckpoint`) does exactly this checkpoint; a hook
        // replaces it, so this one does it too. Its error must not fail the commit that ran it.
        conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: std::os::raw::c_int| {
            seen.store(pages.max(0) as u64, Ordering::Relaxed);
            if pages >= autocheckpoint as i32
                && let Err(e) = wal.checkpoint()
            {
                tracing::warn!(error = %e, "wal checkpoint after commit failed");
            }
            Ok(())
        }))?;
        Ok(Self {
            ahead,
            path: wal_path(&db_path),
            file: None,
            frames,
            frame_size,
            cap: WAL_HEADER + autocheckpoint as u64 * frame_size,
            ready_to: 0,
            last_end: 0,
        })
    }

    /// After a commit: writes zeros past the file's end if the WAL's last frame has come within
    /// half of `ahead` of what is ready. Rare (every `ahead / 2` bytes of WAL) and cheap otherwise.
    pub(super) fn after_commit(&mut self) {
        if self.ahead == 0 {
            return;
        }
        let end = self.frames_end();
        if end < self.last_end {
            // Restarted: the file is as long as it grew (a truncation would make it shorter).
            self.ready_to = 0;
        }
        self.last_end = end;
        let want = (end + self.ahead).min(self.cap);
        if self.ready_to >= want.min(end + self.ahead / 2) {
            return;
        }
        if let Err(e) = self.fill(want) {
            // Only a lost optimisation: SQLite extends the file itself as it always could.
            tracing::warn!(error = %e, "writing the WAL ahead failed; not trying again");
            self.ahead = 0;
        }
    }

    /// Where the WAL's last frame ends, as of the last commit.
    fn frames_end(&self) -> u64 {
        WAL_HEADER + self.frames.load(Ordering::Relaxed) * self.frame_size
    }

    fn fill(&mut self, want: u64) -> std::io::Result<()> {
        let file = match &self.file {
            Some(f) => f,
            None => self.file.insert(std::fs::OpenOptions::new().write(true).open(&self.path)?),
        };
        // The true length, not `ready_to`: whatever SQLite wrote stays untouched.
        let mut at = file.metadata()?.len();
        while at < want {
            let n = ((want - at) as usize).min(ZEROS.len());
            file.write_all_at(&ZEROS[..n], at)?;
            at += n as u64;
        }
        self.ready_to = at;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AHEAD: u64 = 64 << 10;

    fn wal_len(db: &Path) -> u64 {
        std::fs::metadata(wal_path(db)).map(|m| m.len()).unwrap_or(0)
    }

    /// A connection as the writer's: WAL, the hook installed with a small checkpoint threshold.
    fn writer(db: &Path, ahead: u64, autocheckpoint: u32) -> Result<(Connection, Prefill), StoreError> {
        let mut conn = Connection::open(db)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)")?;
        let prefill = Prefill::install(&mut conn, db.to_owned(), ahead, autocheckpoint)?;
        Ok((conn, prefill))
    }

    /// One commit of `rows` rows of 1 KiB each, numbered from `first`.
    fn commit(conn: &mut Connection, prefill: &mut Prefill, first: i64, rows: i64) -> Result<(), StoreError> {
        let tx = conn.transaction()?;
        for id in first..first + rows {
            tx.execute("INSERT INTO t (id, v) VALUES (?1, zeroblob(1024))", [id])?;
        }
        tx.commit()?;
        prefill.after_commit();
        Ok(())
    }

    /// The WAL's file stays ahead of its frames by about `ahead` (the hook's count of frames is
    /// SQLite's), and everything committed reads back after a crash: a copy of the database and
    /// its WAL taken while the writer is open (no checkpoint since) recovers every row, the zeros
    /// after the last frame ending the recovery as a restarted WAL's stale frames do.
    #[test]
    fn the_wal_is_written_ahead_of_its_frames_and_recovers_every_commit() -> Result<(), StoreError> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("db.sqlite");
        let (mut conn, mut prefill) = writer(&db, AHEAD, 1_000_000)?;
        for i in 0..40 {
            commit(&mut conn, &mut prefill, i * 10, 10)?;
            let frames_end = prefill.frames_end();
            let len = wal_len(&db);
            assert!(frames_end > WAL_HEADER, "the hook counted no frames");
            assert!(len >= frames_end + AHEAD / 2, "commit {i}: WAL {len} bytes, frames end at {frames_end}");
            assert!(len <= frames_end + AHEAD, "commit {i}: WAL {len} bytes, frames end at {frames_end}");
        }
        let copy = dir.path().join("copy.sqlite");
        std::fs::copy(&db, &copy)?;
        std::fs::copy(wal_path(&db), wal_path(&copy))?;
        let recovered = Connection::open(&copy)?;
        let (n, max): (i64, i64) =
            recovered.query_row("SELECT count(*), max(id) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        assert_eq!((n, max), (400, 399));
        assert_eq!(recovered.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))?, "ok");
        Ok(())
    }

    /// The hook checkpoints at its threshold, as SQLite's own would: the WAL restarts from its start
    /// and its file stops growing at about the threshold's frames, filled only up to there; nothing
    /// is lost across the restarts. Off, the file is exactly SQLite's frames.
    #[test]
    fn the_hook_restarts_the_wal_at_its_threshold_and_filling_stops_there() -> Result<(), StoreError> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("db.sqlite");
        let (mut conn, mut prefill) = writer(&db, AHEAD, 100)?;
        let cap = prefill.cap;
        let mut restarts = 0;
        let mut last = 0;
        for i in 0..100 {
            commit(&mut conn, &mut prefill, i * 10, 10)?;
            let frames = prefill.frames.load(Ordering::Relaxed);
            if frames < last {
                restarts += 1;
            }
            last = frames;
            // A commit may cross the threshold by its own frames before the checkpoint it runs.
            assert!(wal_len(&db) <= cap + 20 * prefill.frame_size, "commit {i}: WAL {} bytes", wal_len(&db));
        }
        assert!(restarts >= 5, "the WAL restarted {restarts} times");
        let n: i64 = conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?;
        assert_eq!(n, 1000);

        // Truncated (as the writer leaves it when it stops), the WAL is written ahead again.
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        assert_eq!(wal_len(&db), 0);
        commit(&mut conn, &mut prefill, 1000, 10)?;
        let frames_end = prefill.frames_end();
        assert!(wal_len(&db) >= frames_end + AHEAD / 2, "WAL {} bytes, frames end at {frames_end}", wal_len(&db));

        let off = dir.path().join("off.sqlite");
        let (mut conn, mut prefill) = writer(&off, 0, 1_000_000)?;
        commit(&mut conn, &mut prefill, 0, 10)?;
        assert!(prefill.frames_end() > WAL_HEADER, "the hook counted no frames");
        assert_eq!(wal_len(&off), prefill.frames_end());
        Ok(())
    }
}
