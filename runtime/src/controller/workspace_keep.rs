//! Keeping a workspace's result and letting it go: a worktree session's changes committed on its
//! branch, its disk use, and purging a closed session's worktree (and, at start-up, the worktrees
//! whose session is gone).

use std::path::{Path, PathBuf};

use super::Controller;
use super::error::{ControllerError, Result};
use super::publish::Persist;
use crate::session::Phase;
use ensemble_core::event::{EventBody, WorkspaceCommittedPayload};
use ensemble_core::model::{SessionKey, WorkspaceKind};
use ensemble_core::workspace::{LeftWorktree, WorkspaceInfo};

impl Controller {
    /// Commits a worktree session's working tree (everything but ignored files) on its branch,
    /// so it can be merged or pushed with the usual tools. Refused while a turn runs, and for a
    /// dir session (its tree is the user's own checkout: theirs to commit).
    pub async fn commit_workspace(
        &self,
        key: &SessionKey,
        message: &str,
        author: Option<(&str, &str)>,
    ) -> Result<WorkspaceCommittedPayload> {
        let (this, key, message) = (self.clone(), key.clone(), message.to_owned());
        let author = author.map(|(n, e)| (n.to_owned(), e.to_owned()));
        self.detached(async move {
            let author = author.as_ref().map(|(n, e)| (n.as_str(), e.as_str()));
            this.commit_here(&key, &message, author).await
        })
        .await
    }

    async fn commit_here(
        &self,
        key: &SessionKey,
        message: &str,
        author: Option<(&str, &str)>,
    ) -> Result<WorkspaceCommittedPayload> {
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        let Some(ws) = session.workspace.clone().filter(|w| w.kind == WorkspaceKind::Worktree) else {
            return Err(ControllerError::NoWorkspace(
                "only a worktree session's changes are committed here (a dir session works in your own checkout)"
                    .into(),
            ));
        };
        if let Some(turn) = session.active_turn_id {
            return Err(ControllerError::TurnActive(turn));
        }
        let top = PathBuf::from(ws.path.clone().unwrap_or_default());
        if !top.is_dir() {
            return Err(ControllerError::workspace_gone(&top));
        }
        let (repo, shadow) = self.place_of(&session).await?;
        let lock = self.workspace_lock(&top);
        let _held = lock.lock().await;
        let commit = self.git()?.commit_all(&repo, &shadow, message, author).await?;
        let payload = WorkspaceCommittedPayload {
            commit,
            branch: ws.branch.unwrap_or_default(),
            message: ensemble_core::limits::clip(message),
        };
        let event = payload.clone();
        self.publish_with(key, Persist::Always, |b| {
            b.emit(None, EventBody::WorkspaceCommitted(event));
            Ok(())
        })
        .await?
        .durable()
        .await?;
        Ok(payload)
    }

    /// The session's workspace and its disk use.
    pub async fn workspace_info(&self, key: &SessionKey) -> Result<WorkspaceInfo> {
        let session = self.snapshot(key)?;
        let workspace = session
            .workspace
            .ok_or_else(|| ControllerError::NoWorkspace("the session's cwd is not in a git work tree".into()))?;
        let path = PathBuf::from(workspace.path.clone().unwrap_or_default());
        if !path.exists() {
            return Err(ControllerError::workspace_gone(&path));
        }
        let disk_bytes =
            tokio::task::spawn_blocking(move || ensemble_workspace::Git::disk_usage(&path)).await.unwrap_or(0);
        Ok(WorkspaceInfo { workspace: *workspace, disk_bytes })
    }

    /// The worktrees the room's closed sessions left on disk, oldest close first.
    pub async fn left_worktrees(&self, room_id: &str) -> Vec<LeftWorktree> {
        let mut left: Vec<(String, ensemble_core::model::SessionWorkspace, i64)> = self
            .state()
            .sessions
            .iter()
            .filter(|(k, e)| k.room_id == room_id && e.rec.phase == Phase::Completed)
            .filter_map(|(k, e)| {
                let ws = e.rec.session.workspace.as_deref()?;
                let present =
                    ws.kind == WorkspaceKind::Worktree && ws.path.as_deref().is_some_and(|p| Path::new(p).exists());
                present.then(|| (k.session_id.clone(), ws.clone(), e.rec.session.updated_at_ms))
            })
            .collect();
        left.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
        let mut out = Vec::with_capacity(left.len());
        for (session_id, workspace, closed_at_ms) in left {
            let path = PathBuf::from(workspace.path.clone().unwrap_or_default());
            let disk_bytes =
                tokio::task::spawn_blocking(move || ensemble_workspace::Git::disk_usage(&path)).await.unwrap_or(0);
            out.push(LeftWorktree { session_id, workspace, disk_bytes, closed_at_ms });
        }
        out
    }

    /// Removes a closed session's worktree (its branch too when merged, or with `force`) and its
    /// checkpoints' refs. A session still open is refused (close it first).
    pub async fn purge_workspace(&self, key: &SessionKey, force: bool) -> Result<()> {
        let (this, key) = (self.clone(), key.clone());
        self.detached(async move { this.purge_here(&key, force).await }).await
    }

    async fn purge_here(&self, key: &SessionKey, force: bool) -> Result<()> {
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        if self.phase(key)? != Phase::Completed {
            return Err(ControllerError::SessionBusy("close the session before purging its workspace".into()));
        }
        self.purge_attachments(key).await;
        let Some(ws) = session.workspace.clone() else { return Ok(()) };
        let git = self.git()?;
        // The checkpoints' refs (in the server's repository for this work tree) and the
        // session's private index; the checkpoint repository too once no session has any.
        if let Ok((_, shadow)) = self.place_of(&session).await {
            git.delete_refs(&shadow, &super::workspaces::ref_prefix(key)).await?;
            if git.shadow_is_empty(&shadow).await? {
                let _ = tokio::fs::remove_dir_all(&shadow.dir).await;
            }
        }
        if let Ok(index) = self.index_of(key) {
            let _ = tokio::fs::remove_file(&index).await;
        }
        let top = ws.path.as_deref().map(PathBuf::from);
        if ws.kind == WorkspaceKind::Worktree
            && let (Some(common), Some(path)) = (ws.common_dir.as_deref().or(ws.repo.as_deref()), top.as_deref())
        {
            git.remove_worktree(Path::new(common), path, ws.branch.as_deref(), force).await?;
        }
        Ok(())
    }

    /// Removes closed sessions' worktrees once `--worktree-retention-secs` have passed since the
    /// close (their branches are kept unless merged), in the background.
    pub fn spawn_worktree_retention(&self) {
        let Some(keep) = self.inner.config.workspaces.as_ref().and_then(|w| w.worktree_retention) else { return };
        let inner = std::sync::Arc::downgrade(&self.inner);
        let tick = keep.clamp(std::time::Duration::from_secs(1), std::time::Duration::from_secs(60));
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(tick);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let Some(inner) = inner.upgrade() else { return };
                let this = Controller { inner };
                let now = this.inner.clock.now_ms();
                let due: Vec<SessionKey> = this
                    .state()
                    .sessions
                    .iter()
                    .filter(|(_, e)| {
                        e.rec.phase == Phase::Completed
                            && e.rec.session.workspace.as_ref().is_some_and(|w| {
                                w.kind == WorkspaceKind::Worktree
                                    && w.path.as_deref().is_some_and(|p| Path::new(p).exists())
                            })
                            && now.saturating_sub(e.rec.session.updated_at_ms)
                                >= i64::try_from(keep.as_millis()).unwrap_or(i64::MAX)
                    })
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in due {
                    match this.purge_workspace(&key, false).await {
                        Ok(()) | Err(ControllerError::Workspace(ensemble_workspace::GitError::BranchNotMerged(_))) => {
                            tracing::info!(room = %key.room_id, session = %key.session_id, "worktree removed after its retention");
                        }
                        Err(e) => {
                            tracing::warn!(room = %key.room_id, session = %key.session_id, error = %e, "removing a worktree after its retention")
                        }
                    }
                }
            }
        });
    }

    /// At start-up: removes the worktrees under `--worktrees-dir` that no known session works in
    /// (their session was purged by hand, or its start never finished).
    pub async fn prune_worktrees(&self) -> usize {
        let Some(config) = self.inner.config.workspaces.clone() else { return 0 };
        let Ok(entries) = std::fs::read_dir(&config.worktrees_dir) else { return 0 };
        let known: std::collections::HashSet<String> =
            self.state().sessions.values().filter_map(|e| e.rec.session.workspace.as_ref()?.path.clone()).collect();
        let mut removed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if known.contains(path.to_string_lossy().as_ref()) {
                continue;
            }
            // A worktree's `.git` file names its repository's git dir (`…/.git/worktrees/<name>`);
            // its agent may have rewritten it, so the repository it names must be one a session
            // could use (inside the roots, outside the server's data).
            let Some(common) = std::fs::read_to_string(path.join(".git"))
                .ok()
                .and_then(|t| t.strip_prefix("gitdir:").map(|g| PathBuf::from(g.trim())))
                .and_then(|g| g.parent()?.parent().map(Path::to_path_buf))
                .filter(|c| self.place_refused("a worktree's repository", c).is_none())
            else {
                continue;
            };
            match config.git.remove_worktree(&common, &path, None, false).await {
                Ok(()) => removed += 1,
                Err(e) => tracing::warn!(path = %path.display(), error = %e, "pruning a worktree without a session"),
            }
        }
        removed
    }
}
