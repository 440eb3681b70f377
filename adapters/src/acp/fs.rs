//! The client file system an agent may use (`fs/read_text_file`, `fs/write_text_file`), confined
//! to the session's `cwd` by [`ensemble_files::Root`]: no link followed, regular files only, none
//! of the server's own files. Each request runs on a blocking thread under a per-session bound
//! (`max_file_requests`) and a deadline (`file_timeout_secs`), so an agent cannot fill the
//! runtime's blocking pool or hold the session waiting on a file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ensemble_files::{FileError, Guard, Root};
use tokio::sync::Semaphore;

use super::wire::codes;

/// Why a file request was refused: a JSON-RPC error code and a message for the agent.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FsError {
    pub code: i64,
    pub message: String,
}

impl FsError {
    pub(super) fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    fn file(what: &str, e: FileError) -> Self {
        let code = match e {
            FileError::NotFound => codes::RESOURCE_NOT_FOUND,
            FileError::Root(_) | FileError::Io(_) => codes::INTERNAL,
            _ => codes::INVALID_PARAMS,
        };
        Self::new(code, format!("{what}: {e}"))
    }
}

/// The file requests of one session.
pub(super) struct Files {
    root: Result<Arc<Root>, String>,
    permits: Arc<Semaphore>,
    max_requests: usize,
    timeout: Duration,
    max_bytes: u64,
}

impl Files {
    pub(super) fn new(cwd: &Path, guard: Guard, max_requests: usize, timeout: Duration, max_bytes: u64) -> Self {
        let root = Root::open(cwd, guard).map(Arc::new).map_err(|e| e.to_string());
        Self { root, permits: Arc::new(Semaphore::new(max_requests)), max_requests, timeout, max_bytes }
    }

    /// `fs/read_text_file`: the file's text, from `line` (1-based) for at most `limit` lines.
    pub(super) async fn read(&self, path: &Path, line: Option<u32>, limit: Option<u32>) -> Result<String, FsError> {
        let (path, max) = (path.to_path_buf(), self.max_bytes);
        let bytes =
            self.run(move |root| root.read(&path, max).map_err(|e| FsError::file("cannot read the file", e))).await?;
        let text =
            String::from_utf8(bytes).map_err(|_| FsError::new(codes::INVALID_PARAMS, "the file is not UTF-8 text"))?;
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.map(|l| l.saturating_sub(1) as usize).unwrap_or(0);
        let take = limit.map(|l| l as usize).unwrap_or(usize::MAX);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
    }

    /// [`Files::read`], except that a file that does not exist reads empty when `missing_empty`
    /// (an agent that reads a file before it writes it and gives up on the error: its quirks'
    /// `missing_file_reads_empty`).
    pub(super) async fn read_text(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
        missing_empty: bool,
    ) -> Result<String, FsError> {
        match self.read(path, line, limit).await {
            Err(e) if missing_empty && e.code == codes::RESOURCE_NOT_FOUND => Ok(String::new()),
            read => read,
        }
    }

    /// `fs/write_text_file`: creates or replaces the file (its directory must exist).
    pub(super) async fn write(&self, path: &Path, content: String) -> Result<(), FsError> {
        let path = path.to_path_buf();
        self.run(move |root| {
            root.write(&path, content.as_bytes()).map_err(|e| FsError::file("cannot write the file", e))
        })
        .await
    }

    async fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Root) -> Result<T, FsError> + Send + 'static,
    ) -> Result<T, FsError> {
        let root = self.root.clone().map_err(|e| FsError::new(codes::INTERNAL, e))?;
        let permit = self.permits.clone().try_acquire_owned().map_err(|_| {
            FsError::new(
                codes::INTERNAL,
                format!("too many file requests in flight (max_file_requests = {}); retry later", self.max_requests),
            )
        })?;
        // The permit goes with the thread: a file that hangs the thread past the deadline keeps
        // its slot, so a session never holds more than `max_requests` threads.
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            op(&root)
        });
        match tokio::time::timeout(self.timeout, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(FsError::new(codes::INTERNAL, format!("the file request failed: {e}"))),
            Err(_) => Err(FsError::new(
                codes::INTERNAL,
                format!("the file request took longer than {} s (file_timeout_secs)", self.timeout.as_secs()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    fn files(root: &Path, max: usize) -> Files {
        Files::new(root, Guard::default(), max, Duration::from_secs(5), 1 << 20)
    }

    #[tokio::test]
    async fn requests_map_to_the_agents_errors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.txt"), "1\n2\n3\n").unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        let f = files(&root, 8);
        assert_eq!(f.read(&root.join("a.txt"), None, None).await.unwrap(), "1\n2\n3\n");
        assert_eq!(f.read(&root.join("a.txt"), Some(2), Some(1)).await.unwrap(), "2\n");
        assert_eq!(f.read(&root.join("none"), None, None).await.unwrap_err().code, codes::RESOURCE_NOT_FOUND);
        let e = f.read(&root.join("up/x"), None, None).await.unwrap_err();
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert!(e.message.contains("symbolic link"), "{e}");
        f.write(&root.join("b.txt"), "new".into()).await.unwrap();
        assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "new");
        std::fs::write(root.join("bin"), [0xff, 0xfe]).unwrap();
        assert!(f.read(&root.join("bin"), None, None).await.unwrap_err().message.contains("UTF-8"));
        let gone = files(&dir.path().join("missing"), 8);
        assert_eq!(gone.read(&root.join("a.txt"), None, None).await.unwrap_err().code, codes::INTERNAL);
    }

    #[tokio::test]
    async fn a_missing_file_reads_empty_only_for_the_agents_that_need_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        let f = files(&root, 8);
        assert_eq!(f.read_text(&root.join("new.txt"), None, None, true).await.unwrap(), "");
        assert_eq!(f.read_text(&root.join("a.txt"), None, None, true).await.unwrap(), "a\n");
        let e = f.read_text(&root.join("new.txt"), None, None, false).await.unwrap_err();
        assert_eq!(e.code, codes::RESOURCE_NOT_FOUND);
        // Only a file that is not there: what is refused stays refused.
        let e = f.read_text(&root.join("up/x"), None, None, true).await.unwrap_err();
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert_eq!(f.read_text(&dir.path().join("x"), None, None, true).await.unwrap_err().code, codes::INVALID_PARAMS);
    }

    #[tokio::test]
    async fn requests_beyond_the_bound_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "a").unwrap();
        let f = files(dir.path(), 1);
        // Hold the one permit as a stuck request would.
        let held = f.permits.clone().try_acquire_owned().unwrap();
        let e = f.read(&dir.path().join("a"), None, None).await.unwrap_err();
        assert!(e.message.contains("max_file_requests = 1"), "{e}");
        drop(held);
        assert_eq!(f.read(&dir.path().join("a"), None, None).await.unwrap(), "a");
    }

    #[tokio::test]
    async fn a_stuck_request_times_out_and_keeps_its_slot() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "a").unwrap();
        let f = Files::new(dir.path(), Guard::default(), 1, Duration::from_millis(50), 1 << 20);
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let e = f
            .run(move |_| {
                let _ = stuck.recv();
                Ok(())
            })
            .await
            .unwrap_err();
        assert!(e.message.contains("file_timeout_secs"), "{e}");
        // The hung thread still holds the session's only slot.
        let e = f.read(&dir.path().join("a"), None, None).await.unwrap_err();
        assert!(e.message.contains("max_file_requests"), "{e}");
        release.send(()).unwrap();
        let permit = f.permits.acquire().await.unwrap();
        drop(permit);
        assert_eq!(f.read(&dir.path().join("a"), None, None).await.unwrap(), "a");
    }
}
