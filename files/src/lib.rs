//! The one way Ensemble opens a file on an agent's behalf.
//!
//! A [`Root`] is a directory opened once (a session's cwd). Every path is taken apart lexically
//! (`..` may not climb above the root) and opened beneath the root's descriptor without following
//! any symbolic link: with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has
//! it, else one component at a time with `O_NOFOLLOW`. The checks are made on the file that was
//! opened, never on its name again, so swapping a file for a link between check and use changes
//! nothing. Only regular files are read or written (a FIFO is opened non-blocking and refused), a
//! file with more than one hard link is refused (a link to a file elsewhere, such as the server's
//! token), and so is any of the server's own files named in the [`Guard`] and anything beneath the
//! directories it guards (the data dir, the worktrees, the checkpoints). Nothing is written,
//! created or deleted in a `.git` (a repository's configuration and hooks are what the server's
//! own git would read).

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Why a file was not read or written. The messages are for the agent: they name no server path.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("the path must be absolute")]
    NotAbsolute,
    #[error("the path is outside the session's working directory")]
    Outside,
    #[error("the path names the working directory itself, not a file")]
    NoName,
    #[error("the path passes through a symbolic link; links are not followed")]
    Symlink,
    #[error("it does not exist")]
    NotFound,
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("the file has {0} hard links; a linked file may be another place's file, so it is refused")]
    HardLinked(u64),
    #[error("the file is one of the server's own files")]
    Denied,
    #[error("the path is in a `.git`: a repository's own files are not written by an agent")]
    GitDir,
    #[error("the file is larger than {0} bytes")]
    TooLarge(u64),
    #[error("the session's working directory is not usable: {0}")]
    Root(std::io::Error),
    #[error("{0}")]
    Io(std::io::Error),
}

impl FileError {
    fn from_errno(e: Errno) -> Self {
        match e {
            Errno::NOENT => Self::NotFound,
            Errno::LOOP => Self::Symlink,
            // RESOLVE_BENEATH refusing an escape (absolute link targets and the like).
            Errno::XDEV => Self::Outside,
            // `O_NONBLOCK` open of a FIFO without a reader, or of a socket.
            Errno::NXIO => Self::NotRegular("a FIFO or socket"),
            Errno::NOTDIR => Self::NotRegular("a path component is not a directory"),
            other => Self::Io(other.into()),
        }
    }
}

/// The server's own files, refused by identity (device and inode) whatever name reaches them,
/// and its own directories, refused with everything beneath them.
#[derive(Debug, Default, Clone)]
pub struct Guard {
    files: Vec<(u64, u64)>,
    /// Directories whose direct entries are refused by the directory's identity (the data dir:
    /// its database, WAL, token and run file are recreated under new inodes, so they are refused
    /// by where they live), whatever name reaches them.
    dirs: Vec<(u64, u64)>,
    /// The same directories by canonical path: a root above one refuses every path into it, so
    /// nothing beneath them (another room's worktree, a checkpoint, codex's login) is reached.
    trees: Vec<PathBuf>,
}

impl Guard {
    /// A guard of `files` and of `dirs` with everything beneath them; paths that do not exist
    /// are skipped.
    pub fn new(files: &[PathBuf], dirs: &[PathBuf]) -> Self {
        let id = |p: &PathBuf| std::fs::metadata(p).ok().map(|m| identity(&m));
        Self {
            files: files.iter().filter_map(id).collect(),
            dirs: dirs.iter().filter_map(id).collect(),
            trees: dirs.iter().filter_map(|d| std::fs::canonicalize(d).ok()).collect(),
        }
    }

    /// Whether `dir` (canonical) is one of the guarded directories or beneath one.
    pub fn covers(&self, dir: &Path) -> bool {
        self.trees.iter().any(|t| dir.starts_with(t))
    }
}

fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// How paths are resolved beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolve {
    /// One `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6+).
    Openat2,
    /// One `openat(O_NOFOLLOW)` per component, for kernels (or seccomp filters) without `openat2`.
    Walk,
}

impl Resolve {
    /// `Openat2` if this kernel has it, checked once.
    pub fn detect() -> Self {
        static DETECTED: OnceLock<Resolve> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            match rustix::fs::openat2(
                rustix::fs::CWD,
                ".",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
            ) {
                Ok(_) => Resolve::Openat2,
                Err(_) => Resolve::Walk,
            }
        })
    }
}

/// A directory files are opened beneath.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// The directory as given and as resolved: an agent may name files by either.
    given: PathBuf,
    real: PathBuf,
    guard: Guard,
    resolve: Resolve,
    /// The guarded directories beneath the root, as components from it: a path starting with
    /// one of them is refused.
    blocked: Vec<Vec<OsString>>,
}

impl Root {
    pub fn open(dir: &Path, guard: Guard) -> Result<Self, FileError> {
        Self::open_with(dir, guard, Resolve::detect())
    }

    pub fn open_with(dir: &Path, guard: Guard, resolve: Resolve) -> Result<Self, FileError> {
        let real = std::fs::canonicalize(dir).map_err(FileError::Root)?;
        let fd = rustix::fs::open(&real, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| FileError::Root(e.into()))?;
        // A root inside a guarded directory (a session's own worktree) reaches nothing above
        // itself; one above a guarded directory must not reach into it. The root being a guarded
        // directory itself blocks everything (the empty prefix).
        let blocked = guard
            .trees
            .iter()
            .filter_map(|t| t.strip_prefix(&real).ok())
            .map(|rel| rel.components().map(|c| c.as_os_str().to_os_string()).collect())
            .collect();
        Ok(Self { fd, given: dir.to_path_buf(), real, guard, resolve, blocked })
    }

    /// Reads a regular file of at most `max_bytes`.
    pub fn read(&self, path: &Path, max_bytes: u64) -> Result<Vec<u8>, FileError> {
        let (parent, name) = self.parent_of(path)?;
        let fd = rustix::fs::openat(
            parent.as_fd(),
            &name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(FileError::from_errno)?;
        let len = self.check_file(&fd)?;
        if len > max_bytes {
            return Err(FileError::TooLarge(max_bytes));
        }
        let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        // The file may grow after the check: read one byte past the limit to tell.
        File::from(fd).take(max_bytes.saturating_add(1)).read_to_end(&mut out).map_err(FileError::Io)?;
        if out.len() as u64 > max_bytes {
            return Err(FileError::TooLarge(max_bytes));
        }
        Ok(out)
    }

    /// A regular file's size, and its content when it is at most `max_bytes` (`None` when larger:
    /// only its size is read).
    pub fn read_up_to(&self, path: &Path, max_bytes: u64) -> Result<(u64, Option<Vec<u8>>), FileError> {
        let (parent, name) = self.parent_of(path)?;
        let fd = rustix::fs::openat(
            parent.as_fd(),
            &name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(FileError::from_errno)?;
        let len = self.check_file(&fd)?;
        if len > max_bytes {
            return Ok((len, None));
        }
        let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        File::from(fd).take(max_bytes.saturating_add(1)).read_to_end(&mut out).map_err(FileError::Io)?;
        if out.len() as u64 > max_bytes {
            return Ok((out.len() as u64, None));
        }
        Ok((out.len() as u64, Some(out)))
    }

    /// Creates or replaces a regular file (its directory must exist). Not opened with `O_TRUNC`:
    /// a file is only cut once it is known to be one the agent may write.
    pub fn write(&self, path: &Path, content: &[u8]) -> Result<(), FileError> {
        self.check_not_git(path)?;
        let (parent, name) = self.parent_of(path)?;
        let fd = rustix::fs::openat(
            parent.as_fd(),
            &name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            // Filtered by the process umask, as the agent's own writes are.
            Mode::from_raw_mode(0o666),
        )
        .map_err(FileError::from_errno)?;
        self.check_file(&fd)?;
        let mut file = File::from(fd);
        file.write_all(content).map_err(FileError::Io)?;
        file.set_len(content.len() as u64).map_err(FileError::Io)?;
        Ok(())
    }

    /// Creates `dir` and its missing parents beneath the root, one component at a time, never
    /// through a link (an existing component must be a real directory).
    pub fn create_dir_all(&self, dir: &Path) -> Result<(), FileError> {
        self.check_not_git(dir)?;
        let parts = self.components(dir)?;
        let mut cur: Option<OwnedFd> = None;
        for part in &parts {
            let at = cur.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            match rustix::fs::mkdirat(at, part, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(FileError::from_errno(e)),
            }
            let fd = rustix::fs::openat(at, part, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
                .map_err(FileError::from_errno)?;
            let st = rustix::fs::fstat(&fd).map_err(|e| FileError::Io(e.into()))?;
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {}
                FileType::Symlink => return Err(FileError::Symlink),
                _ => return Err(FileError::NotRegular("a path component is not a directory")),
            }
            if self.guard.dirs.contains(&(st.st_dev, st.st_ino)) {
                return Err(FileError::Denied);
            }
            cur = Some(fd);
        }
        Ok(())
    }

    /// Removes a regular file, or a symbolic link itself (never what it points to). A server file
    /// is refused by identity, as for a write; a hard-linked file is not (unlinking one name
    /// leaves the other file as it was).
    pub fn remove(&self, path: &Path) -> Result<(), FileError> {
        self.check_not_git(path)?;
        let (parent, name) = self.parent_of(path)?;
        let st = rustix::fs::statat(parent.as_fd(), &name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .map_err(FileError::from_errno)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile | FileType::Symlink => {}
            FileType::Directory => return Err(FileError::NotRegular("a directory")),
            _ => return Err(FileError::NotRegular("not a file")),
        }
        if self.guard.files.contains(&(st.st_dev, st.st_ino)) {
            return Err(FileError::Denied);
        }
        rustix::fs::unlinkat(parent.as_fd(), &name, rustix::fs::AtFlags::empty()).map_err(FileError::from_errno)
    }

    /// The path's components below the root, `..` applied lexically (no link is followed, so
    /// that is what the kernel would do too).
    fn components(&self, path: &Path) -> Result<Vec<OsString>, FileError> {
        if !path.is_absolute() {
            return Err(FileError::NotAbsolute);
        }
        let rest = path
            .strip_prefix(&self.real)
            .or_else(|_| path.strip_prefix(&self.given))
            .map_err(|_| FileError::Outside)?;
        let mut parts = Vec::new();
        for c in rest.components() {
            match c {
                Component::Normal(p) => parts.push(p.to_os_string()),
                Component::CurDir => {}
                Component::ParentDir => {
                    parts.pop().ok_or(FileError::Outside)?;
                }
                Component::RootDir | Component::Prefix(_) => return Err(FileError::Outside),
            }
        }
        if self.blocked.iter().any(|b| parts.starts_with(b)) {
            return Err(FileError::Denied);
        }
        Ok(parts)
    }

    /// `Err(GitDir)` when a component of `path` below the root is a `.git` (in any case: a
    /// case-insensitive file system finds `.GIT` too), the top-level `.git` file included.
    fn check_not_git(&self, path: &Path) -> Result<(), FileError> {
        if self.components(path)?.iter().any(|c| c.as_encoded_bytes().eq_ignore_ascii_case(b".git")) {
            return Err(FileError::GitDir);
        }
        Ok(())
    }

    /// The directory holding `path`, opened beneath the root, and the file's name in it.
    fn parent_of(&self, path: &Path) -> Result<(Dir<'_>, OsString), FileError> {
        let mut parts = self.components(path)?;
        let name = parts.pop().ok_or(FileError::NoName)?;
        let dir = if parts.is_empty() {
            Dir::Root(self.fd.as_fd())
        } else {
            Dir::Owned(match self.resolve {
                Resolve::Openat2 => self.openat2_dir(&parts)?,
                Resolve::Walk => self.walk_dir(&parts)?,
            })
        };
        let st = rustix::fs::fstat(dir.as_fd()).map_err(|e| FileError::Io(e.into()))?;
        if self.guard.dirs.contains(&(st.st_dev, st.st_ino)) {
            return Err(FileError::Denied);
        }
        Ok((dir, name))
    }

    fn openat2_dir(&self, parts: &[OsString]) -> Result<OwnedFd, FileError> {
        let rel: PathBuf = parts.iter().collect();
        rustix::fs::openat2(
            self.fd.as_fd(),
            &rel,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(FileError::from_errno)
    }

    fn walk_dir(&self, parts: &[OsString]) -> Result<OwnedFd, FileError> {
        let mut cur: Option<OwnedFd> = None;
        for part in parts {
            let at = cur.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            // With O_PATH, O_NOFOLLOW opens a link itself rather than failing: check what opened.
            let fd = rustix::fs::openat(at, part, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
                .map_err(FileError::from_errno)?;
            let st = rustix::fs::fstat(&fd).map_err(|e| FileError::Io(e.into()))?;
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {}
                FileType::Symlink => return Err(FileError::Symlink),
                _ => return Err(FileError::NotRegular("a path component is not a directory")),
            }
            cur = Some(fd);
        }
        cur.ok_or(FileError::NoName)
    }

    /// The opened file's size, if it is a regular file with one link that is not the server's.
    fn check_file(&self, fd: &OwnedFd) -> Result<u64, FileError> {
        let st = rustix::fs::fstat(fd).map_err(|e| FileError::Io(e.into()))?;
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => None,
            FileType::Directory => Some("a directory"),
            FileType::Fifo => Some("a FIFO"),
            FileType::Socket => Some("a socket"),
            FileType::CharacterDevice | FileType::BlockDevice => Some("a device"),
            _ => Some("not a file"),
        };
        if let Some(kind) = kind {
            return Err(FileError::NotRegular(kind));
        }
        if self.guard.files.contains(&(st.st_dev, st.st_ino)) {
            return Err(FileError::Denied);
        }
        #[allow(clippy::useless_conversion, reason = "nlink_t is u32 on some targets")]
        let links = u64::from(st.st_nlink);
        if links > 1 {
            return Err(FileError::HardLinked(links));
        }
        Ok(u64::try_from(st.st_size).unwrap_or(0))
    }
}

enum Dir<'a> {
    Root(BorrowedFd<'a>),
    Owned(OwnedFd),
}

impl AsFd for Dir<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Dir::Root(fd) => *fd,
            Dir::Owned(fd) => fd.as_fd(),
        }
    }
}

mod listing;
pub use listing::{Entry, EntryKind};

#[cfg(test)]
mod tests;
