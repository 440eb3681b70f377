//! Process-wide settings made once at start-up, before any thread or file exists: the file
//! creation mask and the open-file limit. The server crate's only `unsafe` code (four libc calls
//! without memory-safety preconditions).

use std::io;

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
    fn the_file_limit_reads_back() {
        let l = file_limit().unwrap();
        assert!(l.soft <= l.hard);
        assert!(l.soft > 0);
    }
}
