//! Reading a directory, and the start of a large file, beneath a [`Root`] (for a workspace's file
//! browser): the same rules as a read — nothing outside, no link followed, the server's own
//! files and the data dir refused.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::{FileError, Root};

/// What a directory entry is (a link is reported as one, never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    pub kind: EntryKind,
    /// Bytes, for a regular file (0 otherwise).
    pub size: u64,
}

impl Root {
    /// The entries of the directory `dir` (the root itself when it is the root), unsorted,
    /// without `.` and `..`.
    pub fn list(&self, dir: &Path) -> Result<Vec<Entry>, FileError> {
        let parts = self.components(dir)?;
        let opened: OwnedFd = if parts.is_empty() {
            self.fd.try_clone().map_err(FileError::Io)?
        } else {
            match self.resolve {
                super::Resolve::Openat2 => self.openat2_dir(&parts)?,
                super::Resolve::Walk => self.walk_dir(&parts)?,
            }
        };
        let st = rustix::fs::fstat(&opened).map_err(|e| FileError::Io(e.into()))?;
        if self.guard.dirs.contains(&(st.st_dev, st.st_ino)) {
            return Err(FileError::Denied);
        }
        // The resolved descriptor is `O_PATH`; reading entries takes a real one of the same dir.
        let readable = rustix::fs::openat(
            opened.as_fd(),
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| FileError::Io(e.into()))?;
        let mut entries = Vec::new();
        let mut reader = rustix::fs::Dir::read_from(&readable).map_err(|e| FileError::Io(e.into()))?;
        while let Some(entry) = reader.read() {
            let entry = entry.map_err(|e| FileError::Io(e.into()))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsString::from_vec(name.to_vec());
            // A guarded directory is not there, as far as a listing says.
            if self
                .blocked
                .iter()
                .any(|b| b.len() == parts.len() + 1 && b.starts_with(&parts) && b[parts.len()] == name)
            {
                continue;
            }
            let (kind, size) = match rustix::fs::statat(readable.as_fd(), &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                    FileType::RegularFile => (EntryKind::File, u64::try_from(st.st_size).unwrap_or(0)),
                    FileType::Directory => (EntryKind::Dir, 0),
                    FileType::Symlink => (EntryKind::Symlink, 0),
                    _ => (EntryKind::Other, 0),
                },
                // Gone since it was listed.
                Err(_) => continue,
            };
            entries.push(Entry { name, kind, size });
        }
        Ok(entries)
    }

    /// At most the first `max_bytes` of a regular file, and the file's whole size.
    pub fn read_prefix(&self, path: &Path, max_bytes: u64) -> Result<(Vec<u8>, u64), FileError> {
        let (parent, name) = self.parent_of(path)?;
        let fd = rustix::fs::openat(
            parent.as_fd(),
            &name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(FileError::from_errno)?;
        let len = self.check_file(&fd)?;
        let mut out = Vec::with_capacity(usize::try_from(len.min(max_bytes)).unwrap_or(0));
        std::fs::File::from(fd).take(max_bytes).read_to_end(&mut out).map_err(FileError::Io)?;
        Ok((out, len))
    }
}

impl Root {
    /// The root directory, resolved (what paths beneath it start with).
    pub fn path(&self) -> &Path {
        &self.real
    }
}
