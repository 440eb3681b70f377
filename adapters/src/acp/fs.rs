//! The client file system an agent may use (`fs/read_text_file`, `fs/write_text_file`), confined
//! to the session's `cwd`: a path must be absolute and resolve (symlinks followed, also those of
//! directories that do not exist yet) inside the cwd, else the request is refused with a JSON-RPC
//! error and nothing is read or written.

use std::path::{Component, Path, PathBuf};

use super::wire::codes;

/// Why a file request was refused: a JSON-RPC error code and a message for the agent.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FsError {
    pub code: i64,
    pub message: String,
}

impl FsError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

/// The real path `path` names, if it lies inside `root` (itself resolved). A path that does not
/// exist yet resolves through its nearest existing ancestor.
pub fn confine(root: &Path, path: &Path) -> Result<PathBuf, FsError> {
    if !path.is_absolute() {
        return Err(FsError::new(codes::INVALID_PARAMS, "the path must be absolute"));
    }
    let root = std::fs::canonicalize(root)
        .map_err(|e| FsError::new(codes::INTERNAL, format!("the session's directory is not usable: {e}")))?;
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let resolved = loop {
        match std::fs::canonicalize(&existing) {
            Ok(p) => break p,
            Err(_) => {
                let Some(name) = existing.file_name().map(ToOwned::to_owned) else {
                    return Err(FsError::new(codes::INVALID_PARAMS, "the path does not resolve"));
                };
                rest.push(name);
                if !existing.pop() {
                    return Err(FsError::new(codes::INVALID_PARAMS, "the path does not resolve"));
                }
            }
        }
    };
    let mut full = resolved;
    for part in rest.iter().rev() {
        // `..` or `.` after a missing directory cannot be resolved safely.
        if Path::new(part).components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(FsError::new(codes::INVALID_PARAMS, "the path does not resolve"));
        }
        full.push(part);
    }
    if !full.starts_with(&root) {
        return Err(FsError::new(codes::INVALID_PARAMS, "the path is outside the session's working directory"));
    }
    Ok(full)
}

/// `fs/read_text_file`: the file's text, from `line` (1-based) for at most `limit` lines.
pub async fn read(
    root: &Path,
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
    max_bytes: u64,
) -> Result<String, FsError> {
    let real = confine(root, path)?;
    let meta = tokio::fs::metadata(&real).await.map_err(|e| not_found_or(e, "cannot read the file"))?;
    if !meta.is_file() {
        return Err(FsError::new(codes::INVALID_PARAMS, "not a regular file"));
    }
    if meta.len() > max_bytes {
        return Err(FsError::new(codes::INVALID_PARAMS, format!("the file is larger than {max_bytes} bytes")));
    }
    let bytes = tokio::fs::read(&real).await.map_err(|e| not_found_or(e, "cannot read the file"))?;
    let text =
        String::from_utf8(bytes).map_err(|_| FsError::new(codes::INVALID_PARAMS, "the file is not UTF-8 text"))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let skip = line.map(|l| l.saturating_sub(1) as usize).unwrap_or(0);
    let take = limit.map(|l| l as usize).unwrap_or(usize::MAX);
    Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
}

/// `fs/write_text_file`: creates or replaces the file (its directory must exist).
pub async fn write(root: &Path, path: &Path, content: &str) -> Result<(), FsError> {
    let real = confine(root, path)?;
    tokio::fs::write(&real, content).await.map_err(|e| not_found_or(e, "cannot write the file"))
}

fn not_found_or(e: std::io::Error, what: &str) -> FsError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FsError::new(codes::RESOURCE_NOT_FOUND, format!("{what}: it does not exist"))
    } else {
        FsError::new(codes::INTERNAL, format!("{what}: {}", e.kind()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    #[tokio::test]
    async fn paths_resolve_inside_the_cwd_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.txt"), "1\n2\n3\n").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        let max = 1 << 20;
        assert_eq!(read(&root, &root.join("a.txt"), None, None, max).await.unwrap(), "1\n2\n3\n");
        assert_eq!(read(&root, &root.join("a.txt"), Some(2), Some(1), max).await.unwrap(), "2\n");
        for bad in [root.join("link"), root.join("../secret"), root.join("up/secret"), dir.path().join("secret")] {
            let e = read(&root, &bad, None, None, max).await.unwrap_err();
            assert_eq!(e.code, codes::INVALID_PARAMS, "{bad:?}: {e}");
        }
        assert_eq!(read(&root, Path::new("a.txt"), None, None, max).await.unwrap_err().code, codes::INVALID_PARAMS);
        assert_eq!(read(&root, &root.join("none"), None, None, max).await.unwrap_err().code, codes::RESOURCE_NOT_FOUND);
        assert!(read(&root, &root.join("a.txt"), None, None, 2).await.is_err(), "over the size limit");
        write(&root, &root.join("b.txt"), "new").await.unwrap();
        assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "new");
        assert!(write(&root, &root.join("up/evil"), "x").await.is_err());
        assert!(write(&root, &root.join("missing/../../evil"), "x").await.is_err());
        assert!(!dir.path().join("evil").exists());
    }
}
