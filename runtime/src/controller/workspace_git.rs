//! Where a session's git is, and what may be there: its repository as recorded when it started,
//! the server's checkpoint repository for it, one lock per work tree, the places a session may
//! not work (outside the workspace roots, inside the server's own directories), the branch names
//! a room may use, and what a server killed mid-checkpoint or mid-restore left behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ensemble_workspace::{Git, GitError, Repo, Shadow};
use sha2::Digest;

use super::Controller;
use super::config::WorkspaceConfig;
use super::error::{ControllerError, Result};
use ensemble_core::event::{EventBody, NoticeLevel, NoticePayload};
use ensemble_core::model::{SessionKey, SessionWorkspace};

/// A restore under way, written beside the session's index before the work tree is touched and
/// removed after: one found at start-up was interrupted.
const RESTORING: &str = ".restoring";

impl Controller {
    pub(super) fn workspaces(&self) -> Option<&WorkspaceConfig> {
        self.inner.config.workspaces.as_ref()
    }

    /// The workspace settings, or git's absence as the error (workspaces are off without it).
    pub(super) fn workspace_config(&self) -> Result<&WorkspaceConfig> {
        self.workspaces().ok_or_else(|| {
            let why = self.inner.config.workspaces_off_reason.as_deref().unwrap_or("workspaces are off");
            ControllerError::Workspace(GitError::Unavailable(format!(
                "no working git on the server (--git-bin): {why}"
            )))
        })
    }

    pub(super) fn git(&self) -> Result<&Git> {
        self.workspace_config().map(|w| &w.git)
    }

    /// Why `path` may not hold a session's work tree or repository: outside every workspace
    /// root, or inside one of the server's own directories. Compared canonically (a path that
    /// cannot be resolved is refused).
    pub(super) fn place_refused(&self, what: &str, path: &Path) -> Option<String> {
        let config = self.workspaces()?;
        let Ok(real) = path.canonicalize() else { return Some(format!("{what} cannot be resolved")) };
        if !config.roots.iter().any(|r| real.starts_with(r)) {
            return Some(format!("{what} is outside the workspace roots"));
        }
        if config.private.iter().any(|p| real.starts_with(p)) {
            return Some(format!("{what} is inside the server's own data"));
        }
        None
    }

    /// Why `path` may not be a session's cwd whatever the roots: inside the server's own
    /// directories (the data dir, other rooms' worktrees, the checkpoints, a provider's home).
    pub(super) fn private_place(&self, what: &str, path: &Path) -> Option<String> {
        let config = self.workspaces()?;
        let real = path.canonicalize().ok()?;
        config.private.iter().any(|p| real.starts_with(p)).then(|| format!("{what} is inside the server's own data"))
    }

    /// The first of a repository's places that may not be used, and why.
    pub(super) fn repo_refused(&self, repo: &Repo) -> Option<String> {
        [("its work tree", &repo.top), ("its git dir", &repo.git_dir), ("its repository", &repo.common_dir)]
            .into_iter()
            .find_map(|(what, p)| self.place_refused(what, p))
    }

    /// The session's repository as recorded when it started. A session recorded before git dirs
    /// were (an older server's) has its repository found again, and checked like a new one.
    pub(super) async fn repo_of(&self, ws: &SessionWorkspace) -> Result<Repo> {
        let top = PathBuf::from(ws.path.clone().unwrap_or_default());
        if let (Some(git_dir), Some(common_dir)) = (&ws.git_dir, &ws.common_dir) {
            return Ok(Repo {
                top,
                git_dir: git_dir.into(),
                common_dir: common_dir.into(),
                object_format: String::new(),
            });
        }
        let repo = self.git()?.discover(&top).await?.ok_or_else(|| ControllerError::workspace_gone(&top))?;
        if let Some(why) = self.repo_refused(&repo) {
            return Err(ControllerError::NoWorkspace(format!("the session's workspace cannot be used: {why}")));
        }
        Ok(repo)
    }

    /// The server's checkpoint repository for `repo` (one per repository, shared by its
    /// sessions and worktrees), made if missing.
    pub(super) async fn shadow_of(&self, repo: &Repo) -> Result<Shadow> {
        let config = self.workspace_config()?;
        let dir = config.index_dir.join("repos").join(format!("{}.git", path_hash(&repo.common_dir)));
        if dir.join("objects").is_dir() {
            return Ok(Shadow { dir });
        }
        let format = if repo.object_format.is_empty() {
            config.git.repository(&repo.common_dir).await?.map(|(_, _, f)| f).unwrap_or_default()
        } else {
            repo.object_format.clone()
        };
        Ok(config.git.shadow(&repo.common_dir, &format, &dir).await?)
    }

    /// The session's private index file.
    pub(super) fn index_of(&self, key: &SessionKey) -> Result<PathBuf> {
        Ok(self.workspace_config()?.index_dir.join(format!("{}.index", key_hash(key))))
    }

    /// The lock of one work tree, which orders every checkpoint and restore in it, whichever
    /// session takes them (several dir sessions may share a work tree).
    pub(super) fn workspace_lock(&self, top: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.inner.workspace_locks.lock().unwrap_or_else(|e| e.into_inner());
        // A lock nobody holds or waits for orders nothing: dropped, so the map holds only the
        // work trees checkpointing or restoring now.
        locks.retain(|k, lock| k == top || Arc::strong_count(lock) > 1);
        locks.entry(top.to_path_buf()).or_default().clone()
    }

    /// The branch a worktree session of `room` gets unless it names one, and the check of one
    /// it names: `ensemble/…` is the server's namespace, each room with its own prefix, so a
    /// room may take a branch there only under its own (and one outside it that the caller
    /// names).
    pub(super) fn check_branch_name(room: &str, branch: &str) -> Result<()> {
        if branch.starts_with("ensemble/") && !branch.starts_with(&room_prefix(room)) {
            return Err(ControllerError::Workspace(GitError::InvalidBranch(format!(
                "{branch} (a branch under ensemble/ must be under this room's {})",
                room_prefix(room)
            ))));
        }
        Ok(())
    }

    /// A base a room names: a full commit id, or a branch outside another room's namespace
    /// (`ensemble/<other room>/…` is refused without looking, so it tells nothing of the other
    /// room's sessions).
    pub(super) async fn base_of(&self, room: &str, common_dir: &Path, base: &str) -> Result<String> {
        if base.starts_with("ensemble/") && !base.starts_with(&room_prefix(room)) {
            return Err(ControllerError::Workspace(GitError::UnknownBase(base.to_owned())));
        }
        Ok(self.git()?.base_commit(common_dir, base).await?)
    }

    /// Marks a restore of the session as under way (removed by [`Self::restore_done`]).
    pub(super) fn restore_begins(&self, key: &SessionKey, target: &str, undo: &str) -> Result<PathBuf> {
        let path = self.index_of(key)?.with_extension(&RESTORING[1..]);
        let note = serde_json::json!({ "roomId": key.room_id, "sessionId": key.session_id, "checkpoint": target, "undo": undo });
        std::fs::write(&path, note.to_string()).map_err(GitError::Io)?;
        Ok(path)
    }

    pub(super) fn restore_done(marker: &Path) {
        let _ = std::fs::remove_file(marker);
    }

    /// At start-up, before any checkpoint: removes the lock files a server killed mid-checkpoint
    /// left in its checkpoint data (no git of this data dir runs yet: the data dir is locked to
    /// one server), and says in each session whose restore was interrupted what to do. Returns
    /// how many locks and interrupted restores it found.
    pub async fn recover_workspaces(&self) -> (usize, usize) {
        let Some(config) = self.workspaces().cloned() else { return (0, 0) };
        let dir = config.index_dir.clone();
        let (locks, notes) = tokio::task::spawn_blocking(move || sweep(&dir)).await.unwrap_or_default();
        for lock in &locks {
            tracing::warn!(path = %lock.display(), "removed a lock left by an interrupted checkpoint");
        }
        let mut restores = 0;
        for (path, note) in notes {
            Self::restore_done(&path);
            let field = |k: &str| note.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
            let (Some(room), Some(session)) = (field("roomId"), field("sessionId")) else { continue };
            let key = SessionKey::new(&room, &session);
            let message = format!(
                "a restore to checkpoint {} was interrupted (the server stopped): the work tree may be partly \
                 restored. Restore checkpoint {} to go back to how it was before, or restore {} again.",
                field("checkpoint").unwrap_or_default(),
                field("undo").unwrap_or_default(),
                field("checkpoint").unwrap_or_default(),
            );
            let published = self
                .publish_with(&key, super::publish::Persist::Always, |b| {
                    b.emit(
                        None,
                        EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message: message.clone() }),
                    );
                    Ok(())
                })
                .await;
            if let Ok(p) = published
                && p.durable().await.is_ok()
            {
                restores += 1;
            }
        }
        (locks.len(), restores)
    }
}

/// The lock files under the checkpoint data, removed, and the interrupted restores' notes, read.
fn sweep(dir: &Path) -> (Vec<PathBuf>, Vec<(PathBuf, serde_json::Value)>) {
    let (mut locks, mut notes) = (Vec::new(), Vec::new());
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "lock") {
                if std::fs::remove_file(&path).is_ok() {
                    locks.push(path);
                }
            } else if path.extension().is_some_and(|e| e == &RESTORING[1..])
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                notes.push((path, serde_json::from_str(&text).unwrap_or_default()));
            }
        }
    }
    (locks, notes)
}

/// `ensemble/<room>/`: the room's own namespace of branches. A room id git takes as it is
/// keeps its name; any other gets a hash (with a `.`, which no kept name has), so two rooms never
/// share a prefix.
pub(super) fn room_prefix(room: &str) -> String {
    let plain = !room.is_empty()
        && !room.starts_with('-')
        && room.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        format!("ensemble/{room}/")
    } else {
        let mut h = sha2::Sha256::new();
        h.update(room.as_bytes());
        let hex: String = h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("ensemble/r.{hex}/")
    }
}

/// A short, stable name for a session (room and session ids may hold characters a file or ref
/// name may not).
pub(super) fn key_hash(key: &SessionKey) -> String {
    let mut h = sha2::Sha256::new();
    h.update(key.room_id.as_bytes());
    h.update([0]);
    h.update(key.session_id.as_bytes());
    h.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect()
}

fn path_hash(p: &Path) -> String {
    let mut h = sha2::Sha256::new();
    h.update(p.as_os_str().as_encoded_bytes());
    h.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::room_prefix;

    #[test]
    fn rooms_never_share_a_branch_prefix() {
        assert_eq!(room_prefix("demo"), "ensemble/demo/");
        assert_eq!(room_prefix("r_1-x"), "ensemble/r_1-x/");
        let odd = ["a:b", "a~b", "a.b", "-a", "a.lock", "x-lock"];
        let mut all: Vec<String> = odd.iter().map(|r| room_prefix(r)).collect();
        all.extend(["a-b", "a", "ab"].iter().map(|r| room_prefix(r)));
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "{all:?}");
        for p in &all {
            assert!(p.starts_with("ensemble/") && p.ends_with('/') && !p.contains(".."), "{p}");
        }
    }
}
