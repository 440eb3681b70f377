//! Process-wide settings made once at start-up, before any thread or file exists: the file
//! creation mask and the open-file limit; and what file system the data dir is on. The server
//! crate's only `unsafe` code (five libc calls, each with its memory-safety condition stated).

use std::ffi::CString;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The file creation mask the server runs with: everything it creates (data dir, database, WAL,
/// token, run files) is private to its user.
pub const PRIVATE_UMASK: u32 = 0o077;

/// An `RLIMIT_NOFILE` pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLimit {
    pub soft: u64,
    pub hard: u64,
}

/// Sets the process's file creation mask; returns the previous one.
pub fn set_umask(mask: u32) -> u32 {
    // SAFETY: umask(2) cannot fail and touches no memory of ours.
    #[allow(unsafe_code)]
    let previous = unsafe { libc::umask(mask as libc::mode_t) };
    previous as u32
}

/// The effective user id (the owner of what the server creates).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid()
    }
}

/// The current open-file limit.
pub fn file_limit() -> io::Result<FileLimit> {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit(2) writes one `rlimit` into the valid, exclusively borrowed `rl`.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FileLimit { soft: rl.rlim_cur, hard: rl.rlim_max })
}

/// Sets the soft open-file limit (the hard one is kept).
pub fn set_soft_file_limit(soft: u64, hard: u64) -> io::Result<()> {
    let rl = libc::rlimit { rlim_cur: soft, rlim_max: hard };
    // SAFETY: setrlimit(2) reads one `rlimit` from the valid `rl`.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `statfs(2)` magic numbers of file systems that copy on write: an overwrite allocates new blocks,
/// so writing a file's space ahead of use buys nothing (btrfs, ZFS, bcachefs).
const COPY_ON_WRITE: [u32; 3] = [0x9123_683e, 0x2fc1_2fc1, 0xca45_1a4e];

/// Whether a file system's `statfs(2)` type copies on write.
pub fn is_copy_on_write(f_type: u32) -> bool {
    COPY_ON_WRITE.contains(&f_type)
}

/// The `statfs(2)` type of the file system holding `path`, or its nearest existing ancestor (the
/// data dir may not exist yet).
pub fn file_system_type(path: &Path) -> io::Result<u32> {
    let mut at = Some(path);
    while let Some(p) = at {
        match statfs_type(p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => at = p.parent(),
            other => return other,
        }
    }
    Err(io::Error::from(io::ErrorKind::NotFound))
}

fn statfs_type(path: &Path) -> io::Result<u32> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    let mut buf = MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: statfs(2) reads the NUL-terminated `c` and, when it succeeds, writes one `statfs`
    // into `buf`, which is valid for it and exclusively borrowed.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::statfs(c.as_ptr(), buf.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call succeeded, so `buf` is initialised.
    #[allow(unsafe_code)]
    let buf = unsafe { buf.assume_init() };
    // `f_type` is a signed word on some targets; the magic numbers are 32-bit.
    Ok(buf.f_type as u32)
}

/// What [`raise_file_limit`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raised {
    pub before: FileLimit,
    pub after: FileLimit,
}

/// Raises the soft open-file limit to the hard one: a server holding many connections should not
/// run out of descriptors at a soft limit (often 1024) it is allowed to lift. Where the hard limit
/// is unlimited, the kernel's ceiling (`/proc/sys/fs/nr_open`) is used instead.
pub fn raise_file_limit() -> io::Result<Raised> {
    let before = file_limit()?;
    if before.soft >= before.hard {
        return Ok(Raised { before, after: before });
    }
    let target = if before.hard == libc::RLIM_INFINITY {
        std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(before.soft)
            .max(before.soft)
    } else {
        before.hard
    };
    set_soft_file_limit(target, before.hard)?;
    Ok(Raised { before, after: file_limit()? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_on_write_file_systems_are_known_by_their_magic() {
        assert!(is_copy_on_write(0x9123_683e), "btrfs");
        assert!(is_copy_on_write(0x2fc1_2fc1), "zfs");
        assert!(is_copy_on_write(0xca45_1a4e), "bcachefs");
        assert!(!is_copy_on_write(0xef53), "ext4");
        assert!(!is_copy_on_write(0x5846_5342), "xfs");
        assert!(!is_copy_on_write(0x0102_1994), "tmpfs");
    }

    /// A data dir that does not exist yet is on its nearest existing ancestor's file system.
    #[test]
    fn a_missing_dir_is_on_its_nearest_ancestors_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let here = file_system_type(dir.path()).unwrap();
        assert_ne!(here, 0);
        assert_eq!(file_system_type(&dir.path().join("not/yet/there")).unwrap(), here);
    }

    #[test]
    fn the_file_limit_reads_back() {
        let l = file_limit().unwrap();
        assert!(l.soft <= l.hard);
        assert!(l.soft > 0);
    }
}
