//! The store writer's VFS: each commit's WAL frames reach the file in one system call.
//!
//! SQLite writes a WAL frame as two writes, its 24-byte header and then its page, so a commit of
//! ten pages is twenty `pwrite`s, each a partial write of one or two page-cache pages. On these
//! VMs that cost ~33 µs of CPU per ten-frame commit where one write of the same 41 KB cost ~5 µs
//! (`README`, Performance), and `pwrite` was a fifth of the writer thread's samples in a profile of
//! session starts. This VFS wraps the platform's (`unix`) for the writer's connection only and, for
//! its WAL file, gathers the frames a commit appends and writes them at once when the commit
//! frame's page arrives — inside that `xWrite`, so a failure is still that write's failure and
//! SQLite rolls the commit back as it would without this VFS. A commit of one frame is one write
//! instead of two.
//!
//! Why it is safe: readers (other connections, other threads) find frames through the WAL index,
//! which SQLite updates only after `sqlite3WalFrames` has written the commit frame, so by then
//! every frame of the commit is in the file. Anything else done with the WAL file (a read, a sync,
//! a size, a truncate, a lock, a file control, close) first writes what is gathered; only frames
//! appended past everything written since the log (re)started are gathered, header then page, so
//! a header rewritten before that end (SQLite fixing checksums after the frames, the commit
//! frame's among them) goes straight through and nothing of a commit waits past it. Durability is unchanged: the bytes reach the kernel before the commit returns, as they
//! did (with `synchronous=FULL`, SQLite syncs after the commit frame, and the sync writes first).
//! A test checks the invariant that matters, nothing gathered once a commit returns, against the
//! bundled SQLite, so an upgrade that writes frames differently fails it.
//!
//! Everything else (the database file, journals, other connections) is the platform VFS's own
//! file with its own methods: this VFS adds nothing to them.

// The SQLite VFS interface is C function tables over raw pointers; there is no safe binding for
// it in rusqlite. The unsafe code is confined to this module.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;
use std::sync::OnceLock;

use rusqlite::ffi;

/// The name the writer's connection opens its database with.
pub(super) const VFS_NAME: &CStr = c"ensemble-walbuf";

/// The most bytes gathered for one write: the platform VFS writes less than 128 KiB per call (its
/// `seekAndWrite` masks the length with `0x1ffff`, and a longer write comes back short, as a full
/// disk). A commit of more frames is written in as many writes of this size.
const MAX_GATHERED: usize = 120 << 10;

/// A commit frame's header: its bytes 4..8 (the database size after the commit) are not zero.
const FRAME_HEADER: usize = 24;

#[cfg(test)]
thread_local! {
    /// Writes this VFS made to WAL files on this thread, and `xWrite` calls SQLite made to them
    /// (per thread, so that tests running side by side count only their own).
    static WAL_WRITES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    static WAL_XWRITES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts a write for the tests (nothing outside them).
#[cfg(test)]
macro_rules! bump {
    ($counter:ident) => {
        $counter.with(|c| c.set(c.get() + 1))
    };
}
#[cfg(not(test))]
macro_rules! bump {
    ($counter:ident) => {};
}

/// The platform VFS this one wraps, and this one (registered once, never freed).
struct Vfs {
    inner: *mut ffi::sqlite3_vfs,
}
// SAFETY: both pointers are to VFS objects SQLite keeps for the life of the process and only reads.
unsafe impl Send for Vfs {}
unsafe impl Sync for Vfs {}

static REGISTERED: OnceLock<Result<Vfs, c_int>> = OnceLock::new();

/// Registers the VFS (once per process); `Err` with SQLite's code if it could not be.
pub(super) fn register() -> Result<(), rusqlite::Error> {
    let r = REGISTERED.get_or_init(|| {
        // SAFETY: `sqlite3_vfs_find(NULL)` returns the default VFS, valid for the process's life
        // (`sqlite3_initialize` is called by it). The new VFS is leaked: SQLite keeps a pointer.
        unsafe {
            let rc = ffi::sqlite3_initialize();
            if rc != ffi::SQLITE_OK {
                return Err(rc);
            }
            let inner = ffi::sqlite3_vfs_find(ptr::null());
            if inner.is_null() {
                return Err(ffi::SQLITE_ERROR);
            }
            let mut vfs: ffi::sqlite3_vfs = ptr::read(inner);
            vfs.pNext = ptr::null_mut();
            vfs.zName = VFS_NAME.as_ptr();
            vfs.pAppData = inner.cast();
            vfs.szOsFile = (size_of::<WalFile>() + (*inner).szOsFile as usize) as c_int;
            vfs.xOpen = Some(x_open);
            // The others take the VFS pointer: they get the platform's.
            vfs.xDelete = Some(x_delete);
            vfs.xAccess = Some(x_access);
            vfs.xFullPathname = Some(x_full_pathname);
            let leaked = Box::into_raw(Box::new(vfs));
            let rc = ffi::sqlite3_vfs_register(leaked, 0);
            if rc != ffi::SQLITE_OK {
                return Err(rc);
            }
            Ok(Vfs { inner })
        }
    });
    match r {
        Ok(_) => Ok(()),
        Err(code) => {
            Err(rusqlite::Error::SqliteFailure(ffi::Error::new(*code), Some("registering the WAL VFS".into())))
        }
    }
}

/// Writes made to WAL files by this thread so far, and `xWrite` calls SQLite made for them.
#[cfg(test)]
fn counts() -> (u64, u64) {
    (WAL_WRITES.with(std::cell::Cell::get), WAL_XWRITES.with(std::cell::Cell::get))
}

fn inner_vfs() -> *mut ffi::sqlite3_vfs {
    match REGISTERED.get() {
        Some(Ok(v)) => v.inner,
        _ => ptr::null_mut(),
    }
}

/// What a WAL file has gathered: one buffer of [`MAX_GATHERED`] bytes, taken at the first frame
/// from the system allocator rather than the process's (mimalloc), which gives a block this size a
/// large page of its own: on a machine with transparent huge pages its first touch faulted in 2 MB
/// (the memory bench's RSS per session rose by 0.2 KiB, all of it this buffer).
struct Gathered {
    ptr: *mut u8,
    len: usize,
}

impl Gathered {
    const LAYOUT: std::alloc::Layout = match std::alloc::Layout::from_size_align(MAX_GATHERED, 8) {
        Ok(l) => l,
        Err(_) => panic!("MAX_GATHERED is a valid size"),
    };

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `bytes` (the caller keeps the total within [`MAX_GATHERED`]); `false` if the buffer
    /// could not be allocated.
    fn push(&mut self, bytes: &[u8]) -> bool {
        use std::alloc::GlobalAlloc;
        if self.ptr.is_null() {
            // SAFETY: a non-zero size.
            self.ptr = unsafe { std::alloc::System.alloc(Self::LAYOUT) };
            if self.ptr.is_null() {
                return false;
            }
        }
        debug_assert!(self.len + bytes.len() <= MAX_GATHERED);
        // SAFETY: the buffer holds MAX_GATHERED bytes, of which `len + bytes.len()` are used.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(self.len), bytes.len()) };
        self.len += bytes.len();
        true
    }
}

impl Drop for Gathered {
    fn drop(&mut self) {
        use std::alloc::GlobalAlloc;
        if !self.ptr.is_null() {
            // SAFETY: allocated by `push` with the same layout.
            unsafe { std::alloc::System.dealloc(self.ptr, Self::LAYOUT) };
        }
    }
}

/// What the last write to the WAL file leaves expected next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Nothing in particular.
    Any,
    /// The page of the frame whose header was just written; `commit` if that was a commit frame.
    Page { commit: bool },
}

/// A WAL file: the platform's file right after this header in the same allocation.
#[repr(C)]
struct WalFile {
    /// What SQLite sees; `pMethods` is [`WAL_METHODS`].
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
    /// Frames gathered, to be written at `at`.
    gathered: Gathered,
    at: i64,
    next: Next,
    /// Where everything written since the WAL (re)started ends: a write from here on appends a
    /// frame; one before it rewrites a frame this transaction wrote (SQLite fixing checksums) or
    /// overwrites a rolled-back one.
    end: i64,
}

impl WalFile {
    /// The platform file's method table.
    unsafe fn methods(&self) -> &ffi::sqlite3_io_methods {
        // SAFETY: set by the platform's successful `xOpen` and valid until its `xClose`.
        unsafe { &*(*self.inner).pMethods }
    }

    /// The platform's `xWrite` on its own file.
    unsafe fn write_inner(&self, data: *const c_void, amt: c_int, off: i64) -> c_int {
        bump!(WAL_WRITES);
        // SAFETY: the platform's method on its own open file; `data` holds `amt` bytes.
        unsafe { self.methods().xWrite.map_or(ffi::SQLITE_IOERR_WRITE, |w| w(self.inner, data, amt, off)) }
    }

    /// Writes what is gathered (in one call); SQLite's code.
    unsafe fn flush(&mut self) -> c_int {
        if self.gathered.is_empty() {
            return ffi::SQLITE_OK;
        }
        let Ok(len) = c_int::try_from(self.gathered.len) else { return ffi::SQLITE_IOERR_WRITE };
        // SAFETY: the buffer holds `len` gathered bytes.
        let rc = unsafe { self.write_inner(self.gathered.ptr.cast_const().cast(), len, self.at) };
        // Written or not, these bytes are done: a failure is the caller's to report, and SQLite
        // rolls back (and rewrites) whatever it had written of that commit.
        self.gathered.len = 0;
        rc
    }

    /// Writes straight through (after what is gathered).
    unsafe fn write_through(&mut self, data: *const c_void, amt: c_int, off: i64) -> c_int {
        // SAFETY: as `flush`; `data` is SQLite's buffer of `amt` bytes.
        unsafe {
            let rc = self.flush();
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            self.write_inner(data, amt, off)
        }
    }

    /// Adds a write to what is gathered (which it continues), writing that first if the two would
    /// exceed [`MAX_GATHERED`].
    unsafe fn gather(&mut self, bytes: &[u8], off: i64) -> c_int {
        if bytes.len() > MAX_GATHERED {
            // (Pages are at most 64 KiB: not met.)
            // SAFETY: as `write_through`.
            return unsafe { self.write_through(bytes.as_ptr().cast(), bytes.len() as c_int, off) };
        }
        if self.gathered.len + bytes.len() > MAX_GATHERED {
            // SAFETY: as `flush`.
            let rc = unsafe { self.flush() };
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        if self.gathered.is_empty() {
            self.at = off;
        }
        if self.gathered.push(bytes) {
            return ffi::SQLITE_OK;
        }
        // No buffer: as SQLite wrote it.
        // SAFETY: as `write_through`.
        unsafe { self.write_through(bytes.as_ptr().cast(), bytes.len() as c_int, off) }
    }

    /// Whether a write at `off` continues what is gathered (or nothing is).
    fn continues(&self, off: i64) -> bool {
        self.gathered.is_empty() || off == self.at + self.gathered.len as i64
    }

    unsafe fn write(&mut self, data: *const c_void, amt: c_int, off: i64) -> c_int {
        bump!(WAL_XWRITES);
        let Ok(len) = usize::try_from(amt) else { return ffi::SQLITE_IOERR_WRITE };
        // SAFETY: SQLite passes a buffer of `amt` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
        if !self.continues(off) {
            // SAFETY: as `flush`.
            let rc = unsafe { self.flush() };
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        if off == 0 {
            // The WAL header: the log starts again from the top.
            self.end = 0;
        }
        let appending = off >= self.end;
        self.end = self.end.max(off + i64::from(amt));
        let next = std::mem::replace(&mut self.next, Next::Any);
        if len == FRAME_HEADER && appending {
            // A new frame's header: its page follows at once (`walWriteOneFrame`).
            self.next = Next::Page { commit: bytes[4..8] != [0, 0, 0, 0] };
            // SAFETY: as `gather`.
            return unsafe { self.gather(bytes, off) };
        }
        match next {
            // (What was gathered ends where this page starts: anything else was written above.)
            Next::Page { commit } => {
                // SAFETY: as `gather` and `flush`.
                unsafe {
                    let rc = self.gather(bytes, off);
                    if rc != ffi::SQLITE_OK || !commit {
                        return rc;
                    }
                    self.flush()
                }
            }
            // Anything else (the WAL header, a header or page rewritten before the end — a commit
            // header among them, so nothing of a commit waits after it —, a page split at a sync
            // point) is written as SQLite wrote it.
            // SAFETY: as `write_through`.
            _ => unsafe { self.write_through(data, amt, off) },
        }
    }
}

/// The `WalFile` behind SQLite's pointer.
unsafe fn wal<'a>(f: *mut ffi::sqlite3_file) -> &'a mut WalFile {
    // SAFETY: SQLite calls `WAL_METHODS` only with the files `x_open` made `WalFile`s.
    unsafe { &mut *f.cast::<WalFile>() }
}

/// WAL file methods that write what is gathered, then call the platform's method.
macro_rules! flushed {
    ($($name:ident => $method:ident ( $($arg:ident : $ty:ty),* );)*) => {$(
        unsafe extern "C" fn $name(f: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            // SAFETY: see `wal`; the platform's method on its own open file.
            unsafe {
                let w = wal(f);
                let rc = w.flush();
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
                w.methods().$method.map_or(ffi::SQLITE_ERROR, |m| m(w.inner $(, $arg)*))
            }
        }
    )*};
}

flushed! {
    x_read => xRead(buf: *mut c_void, amt: c_int, off: i64);
    x_truncate => xTruncate(size: i64);
    x_sync => xSync(flags: c_int);
    x_file_size => xFileSize(size: *mut i64);
    x_lock => xLock(level: c_int);
    x_unlock => xUnlock(level: c_int);
    x_check_reserved_lock => xCheckReservedLock(out: *mut c_int);
    x_file_control => xFileControl(op: c_int, arg: *mut c_void);
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes each file once; the `WalFile` was written by `x_open`.
    unsafe {
        let w = wal(f);
        let flushed = w.flush();
        let closed = match w.methods().xClose {
            Some(c) => c(w.inner),
            None => ffi::SQLITE_OK,
        };
        ptr::drop_in_place(&mut w.gathered);
        if flushed != ffi::SQLITE_OK { flushed } else { closed }
    }
}

unsafe extern "C" fn x_write(f: *mut ffi::sqlite3_file, buf: *const c_void, amt: c_int, off: i64) -> c_int {
    // SAFETY: see `wal` and `WalFile::write`.
    unsafe { wal(f).write(buf, amt, off) }
}

unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: see `wal`.
    unsafe {
        let w = wal(f);
        w.methods().xSectorSize.map_or(4096, |m| m(w.inner))
    }
}

unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: see `wal`.
    unsafe {
        let w = wal(f);
        w.methods().xDeviceCharacteristics.map_or(0, |m| m(w.inner))
    }
}

/// The WAL file's methods: version 1 (no shared memory, no memory mapping — SQLite uses those of
/// the database file, never of its WAL).
static WAL_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite gives `file` `szOsFile` bytes (this header plus the platform's file) and
    // `vfs` is this VFS, whose `pAppData` is the platform's.
    unsafe {
        let inner_vfs = (*vfs).pAppData.cast::<ffi::sqlite3_vfs>();
        let Some(open) = (*inner_vfs).xOpen else { return ffi::SQLITE_CANTOPEN };
        if flags & ffi::SQLITE_OPEN_WAL == 0 {
            // Not a WAL file: the platform's own file, in place; SQLite calls its methods.
            return open(inner_vfs, name, file, flags, out_flags);
        }
        let inner = file.cast::<u8>().add(size_of::<WalFile>()).cast::<ffi::sqlite3_file>();
        let rc = open(inner_vfs, name, inner, flags, out_flags);
        if rc != ffi::SQLITE_OK || (*inner).pMethods.is_null() {
            // SQLite does not close a file whose `pMethods` is null.
            (*file).pMethods = ptr::null();
            return if rc != ffi::SQLITE_OK { rc } else { ffi::SQLITE_CANTOPEN };
        }
        ptr::write(
            file.cast::<WalFile>(),
            WalFile {
                base: ffi::sqlite3_file { pMethods: &WAL_METHODS },
                inner,
                gathered: Gathered { ptr: ptr::null_mut(), len: 0 },
                at: 0,
                next: Next::Any,
                end: 0,
            },
        );
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn x_delete(_vfs: *mut ffi::sqlite3_vfs, name: *const c_char, sync_dir: c_int) -> c_int {
    let inner = inner_vfs();
    // SAFETY: the platform VFS's own method, with its own pointer.
    unsafe { (*inner).xDelete.map_or(ffi::SQLITE_ERROR, |m| m(inner, name, sync_dir)) }
}

unsafe extern "C" fn x_access(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    let inner = inner_vfs();
    // SAFETY: as `x_delete`.
    unsafe { (*inner).xAccess.map_or(ffi::SQLITE_ERROR, |m| m(inner, name, flags, out)) }
}

unsafe extern "C" fn x_full_pathname(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let inner = inner_vfs();
    // SAFETY: as `x_delete`.
    unsafe { (*inner).xFullPathname.map_or(ffi::SQLITE_ERROR, |m| m(inner, name, n, out)) }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rusqlite::{Connection, params};

    use super::*;
    use crate::store::Synchronous;
    use crate::store::sqlite::schema::open_write_connection;

    type R = Result<(), Box<dyn std::error::Error>>;

    /// A connection through this VFS, as the writer opens its own, with a table of blobs.
    fn writer(db: &Path) -> Result<Connection, Box<dyn std::error::Error>> {
        let conn = open_write_connection(db, Synchronous::Normal)?;
        // Only what the test does writes the WAL: no checkpoint moves it on meanwhile.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)")?;
        Ok(conn)
    }

    fn rows(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
        conn.query_row("SELECT COUNT(*), COALESCE(SUM(length(v) + v % 7), 0) FROM t", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
    }

    /// What a crash leaves: the database and its WAL copied while the connections are open (no
    /// checkpoint, no clean close), opened elsewhere — SQLite recovers the log from the file alone,
    /// checking every frame's checksum, and keeps only committed transactions.
    fn recovered(db: &Path) -> Result<(i64, i64), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let copy = dir.path().join("copy.sqlite3");
        std::fs::copy(db, &copy)?;
        std::fs::copy(db.with_extension("sqlite3-wal"), dir.path().join("copy.sqlite3-wal"))?;
        let conn = Connection::open(&copy)?;
        let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        assert_eq!(ok, "ok");
        Ok(rows(&conn)?)
    }

    #[test]
    fn a_commit_reaches_the_wal_in_one_write_that_readers_and_recovery_see() -> R {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("t.sqlite3");
        let conn = writer(&db)?;
        let reader = Connection::open(&db)?;
        let mut expected = (0, 0);
        for round in 0..40_i64 {
            let (writes, xwrites) = counts();
            let tx = conn.unchecked_transaction()?;
            // ~10 pages per commit, as a group of session starts writes.
            for i in 0..10_i64 {
                let v = vec![(round + i) as u8; 3000];
                tx.execute("INSERT INTO t (v) VALUES (?1)", params![v])?;
                expected.0 += 1;
                expected.1 += 3000;
            }
            tx.commit()?;
            expected.1 = conn.query_row("SELECT COALESCE(SUM(length(v) + v % 7), 0) FROM t", [], |r| r.get(0))?;
            let (writes, xwrites) = (counts().0 - writes, counts().1 - xwrites);
            // SQLite wrote each frame in two calls; they reached the file in one write (two when
            // the WAL starts, its header first).
            assert!(xwrites >= 20, "round {round}: {xwrites} xWrite calls");
            assert!(writes <= 2, "round {round}: {writes} writes for {xwrites} xWrite calls");
            // Another connection reads the commit at once: every frame is in the file.
            assert_eq!(rows(&reader)?, expected, "round {round}");
        }
        // A commit larger than one write's worth: in several, all of it there.
        let before = counts();
        let tx = conn.unchecked_transaction()?;
        for _ in 0..100 {
            tx.execute("INSERT INTO t (v) VALUES (?1)", params![vec![9_u8; 3000]])?;
        }
        tx.commit()?;
        let writes = counts().0 - before.0;
        assert!((2..=5).contains(&writes), "{writes} writes for ~300 KB of frames");
        let expected = rows(&conn)?;
        assert_eq!(rows(&reader)?, expected);
        assert_eq!(recovered(&db)?, expected);
        Ok(())
    }

    #[test]
    fn spilled_and_rewritten_frames_and_a_rollback_leave_a_log_that_recovers() -> R {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("t.sqlite3");
        let conn = writer(&db)?;
        // A cache this small spills pages to the WAL before the commit; changing a spilled page
        // again rewrites its frame in place and makes SQLite rewrite the frames' checksums at the
        // commit (commit header included) — the paths besides plain appends.
        conn.pragma_update(None, "cache_size", 4)?;
        let reader = Connection::open(&db)?;
        let fill = |tx: &rusqlite::Transaction<'_>, n: i64, byte: u8| -> rusqlite::Result<()> {
            for _ in 0..n {
                tx.execute("INSERT INTO t (v) VALUES (?1)", params![vec![byte; 2000]])?;
            }
            Ok(())
        };
        let tx = conn.unchecked_transaction()?;
        fill(&tx, 60, 1)?;
        tx.commit()?;
        let committed = rows(&reader)?;
        // Spilled, then rolled back: none of it counts.
        let tx = conn.unchecked_transaction()?;
        fill(&tx, 60, 2)?;
        tx.rollback()?;
        assert_eq!(rows(&reader)?, committed);
        // Spilled, rewritten, committed.
        let tx = conn.unchecked_transaction()?;
        fill(&tx, 60, 3)?;
        tx.execute("UPDATE t SET v = zeroblob(1500) WHERE id % 5 = 0", [])?;
        fill(&tx, 20, 4)?;
        tx.commit()?;
        // Copied before the writer's connection does anything else (a read of the WAL through it
        // would write whatever it still held).
        let after_crash = recovered(&db)?;
        let expected = rows(&reader)?;
        assert_ne!(expected, committed);
        assert_eq!(after_crash, expected);
        assert_eq!(rows(&conn)?, expected);
        Ok(())
    }

    #[test]
    fn other_files_are_the_platforms_own() -> R {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("t.sqlite3");
        let conn = writer(&db)?;
        conn.execute("INSERT INTO t (v) VALUES (x'00')", [])?;
        // A checkpoint writes the database file and truncates the WAL: no write passes here.
        let before = counts();
        let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        assert_eq!(busy, 0);
        assert_eq!(counts(), before);
        assert_eq!(std::fs::metadata(db.with_extension("sqlite3-wal"))?.len(), 0);
        // And the log starts again, through this VFS.
        conn.execute("INSERT INTO t (v) VALUES (x'01')", [])?;
        assert!(counts().1 > before.1);
        // A commit of one frame: one write where SQLite made two calls.
        let before = counts();
        conn.execute("INSERT INTO t (v) VALUES (x'02')", [])?;
        let after = counts();
        assert_eq!((after.0 - before.0, after.1 - before.1), (1, 2));
        let reader = Connection::open(&db)?;
        assert_eq!(rows(&reader)?.0, 3);
        Ok(())
    }
}
