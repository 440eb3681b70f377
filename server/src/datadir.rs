//! The data dir at rest: created private (0700), refused when someone else could have changed what
//! is in it, and tightened when an earlier version left it readable by others.
//!
//! Everything the server creates inside it is private too: the process runs with umask 077
//! (`crate::os::PRIVATE_UMASK`), so the database, its WAL and shared-memory files, the lock, the run
//! files and the generated token are 0600 (SQLite gives the WAL and `-shm` files the database's
//! mode).

use std::fs::{DirBuilder, Permissions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::os;

/// Mode of the data dir and of every directory the server creates in it.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file the server keeps in the data dir.
pub const FILE_MODE: u32 = 0o600;

/// Files an earlier version may have left readable by others; tightened at start.
const KNOWN_FILES: [&str; 4] = ["ensemble.sqlite3", "ensemble.sqlite3-wal", "ensemble.sqlite3-shm", "lock"];
/// Directories likewise (their files too).
const KNOWN_DIRS: [&str; 1] = ["runs"];

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("cannot create the data dir {path}: {source}")]
    Create { path: PathBuf, source: std::io::Error },
    #[error("cannot read the data dir {path}: {source}")]
    Stat { path: PathBuf, source: std::io::Error },
    #[error("the data dir {0} is not a directory; give --data-dir a directory (or a path to create)")]
    NotADirectory(PathBuf),
    #[error(
        "the data dir {path} belongs to uid {owner}, not to this user (uid {me}): its owner could change what \
         this server trusts; use a data dir of your own (--data-dir), or `chown {me} {path}`"
    )]
    NotOurs { path: PathBuf, owner: u32, me: u32 },
    #[error(
        "the data dir {path} is writable by group or others (mode {mode:o}): they could replace the database or \
         the token; run `chmod 700 {path}`"
    )]
    Writable { path: PathBuf, mode: u32 },
    #[error("cannot make the data dir {path} private: {source}")]
    Chmod { path: PathBuf, source: std::io::Error },
}

/// What [`prepare`] found and did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    pub created: bool,
    /// Paths whose mode was tightened (readable by others before).
    pub tightened: Vec<PathBuf>,
}

/// Creates the data dir (0700, parents too) if it is missing; refuses one that belongs to another
/// user or that group or others may write; makes one that others may read or enter private, with
/// the files the server keeps in it.
pub fn prepare(dir: &Path) -> Result<Prepared, DataDirError> {
    let mut prepared = Prepared::default();
    if std::fs::symlink_metadata(dir).is_err() {
        DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)
            .map_err(|source| DataDirError::Create { path: dir.into(), source })?;
        prepared.created = true;
    }
    // Symlinks followed: the directory that will hold the files is what counts.
    let meta = std::fs::metadata(dir).map_err(|source| DataDirError::Stat { path: dir.into(), source })?;
    if !meta.is_dir() {
        return Err(DataDirError::NotADirectory(dir.into()));
    }
    let me = os::effective_uid();
    if meta.uid() != me {
        return Err(DataDirError::NotOurs { path: dir.into(), owner: meta.uid(), me });
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(DataDirError::Writable { path: dir.into(), mode: mode & 0o777 });
    }
    if mode & 0o077 != 0 {
        tighten(dir, DIR_MODE, &mut prepared)?;
    }
    for name in KNOWN_FILES {
        let path = dir.join(name);
        if let Ok(m) = std::fs::symlink_metadata(&path)
            && m.is_file()
            && m.mode() & 0o077 != 0
        {
            tighten(&path, FILE_MODE, &mut prepared)?;
        }
    }
    for name in KNOWN_DIRS {
        let path = dir.join(name);
        let Ok(m) = std::fs::symlink_metadata(&path) else { continue };
        if !m.is_dir() {
            continue;
        }
        if m.mode() & 0o077 != 0 {
            tighten(&path, DIR_MODE, &mut prepared)?;
        }
        for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
            if let Ok(m) = entry.metadata()
                && m.is_file()
                && m.mode() & 0o077 != 0
            {
                tighten(&entry.path(), FILE_MODE, &mut prepared)?;
            }
        }
    }
    Ok(prepared)
}

fn tighten(path: &Path, mode: u32, prepared: &mut Prepared) -> Result<(), DataDirError> {
    std::fs::set_permissions(path, Permissions::from_mode(mode))
        .map_err(|source| DataDirError::Chmod { path: path.into(), source })?;
    prepared.tightened.push(path.into());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o777
    }

    #[test]
    fn a_missing_data_dir_is_created_private_with_its_parents() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b/data");
        let p = prepare(&dir).unwrap();
        assert!(p.created);
        assert_eq!(mode(&dir), DIR_MODE);
        assert_eq!(mode(&tmp.path().join("a")), DIR_MODE);
        // Again: nothing to do.
        assert_eq!(prepare(&dir).unwrap(), Prepared::default());
    }

    #[test]
    fn writable_by_others_is_refused_and_readable_is_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        for m in [0o777, 0o775, 0o757, 0o722, 0o1777] {
            std::fs::set_permissions(&dir, Permissions::from_mode(m)).unwrap();
            let e = prepare(&dir).unwrap_err();
            assert!(matches!(e, DataDirError::Writable { .. }), "{m:o}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(&dir.display().to_string()) && msg.contains("chmod 700"), "{msg}");
            assert!(msg.contains(&format!("mode {:o}", m & 0o777)), "{msg}");
        }
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("lock"), "").unwrap();
        std::fs::set_permissions(dir.join("lock"), Permissions::from_mode(0o644)).unwrap();
        std::fs::create_dir(dir.join("runs")).unwrap();
        std::fs::set_permissions(dir.join("runs"), Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("runs/x"), "1").unwrap();
        std::fs::set_permissions(dir.join("runs/x"), Permissions::from_mode(0o644)).unwrap();
        let p = prepare(&dir).unwrap();
        assert_eq!(p.tightened.len(), 4, "{p:?}");
        assert_eq!(mode(&dir), DIR_MODE);
        assert_eq!(mode(&dir.join("lock")), FILE_MODE);
        assert_eq!(mode(&dir.join("runs")), DIR_MODE);
        assert_eq!(mode(&dir.join("runs/x")), FILE_MODE);
    }

    #[test]
    fn a_file_is_not_a_data_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        std::fs::write(&f, "").unwrap();
        assert!(matches!(prepare(&f), Err(DataDirError::NotADirectory(_))));
    }
}
