//! Workspaces: a git worktree per session when asked, and a checkpoint of the working tree around
//! every turn when the session works in a git work tree (see [`crate::model::SessionWorkspace`]).
//!
//! A checkpoint is a commit of the whole working tree (untracked files included, ignored ones
//! not) made through a private index file, kept alive by a hidden ref
//! `refs/ensemble/<key hash>/<checkpoint id>`, its id a time-ordered uuid, so the refs listed by
//! name are the checkpoints in order. The commit's message says which turn it belongs to and
//! whether it was taken before or after it (or before a restore), so nothing about checkpoints is
//! kept anywhere but in the repository. One lock per session orders its checkpoints: the one
//! after a turn is taken before the next turn's (whose agent has not started yet), and a restore
//! never runs beside either.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ensemble_workspace::{Changes, Git, RefInfo};
use serde::Serialize;
use sha2::Digest;

use super::Controller;
use super::config::WorkspaceConfig;
use super::error::{ControllerError, Result};
use super::publish::Persist;
use crate::clock::new_id;
use crate::event::{
    ChangeStatus, ChangedFile, EventBody, NoticeLevel, NoticePayload, TurnChangesPayload, WorkspaceRestoredPayload,
};
use crate::model::{Session, SessionKey, SessionWorkspace, WorkspaceKind};

/// What a session start asks of its workspace.
#[derive(Clone, Debug, Default)]
pub enum WorkspaceRequest {
    /// The given (or default) cwd; checkpointed when it is in a git work tree, unless
    /// `checkpoints` is false.
    #[default]
    Dir,
    /// A new worktree of `repo` (canonical, already checked to be inside the workspace roots).
    Worktree {
        repo: PathBuf,
        base: Option<String>,
        branch: Option<String>,
        /// A directory inside the worktree to work in (relative to its top).
        cwd: Option<String>,
    },
}

/// When a checkpoint was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CheckpointPhase {
    /// Before a turn started.
    Before,
    /// After a turn ended.
    After,
    /// Before a restore (restoring it undoes the restore).
    Restore,
}

impl CheckpointPhase {
    fn as_str(self) -> &'static str {
        match self {
            Self::Before => "before",
            Self::After => "after",
            Self::Restore => "restore",
        }
    }
}

/// One checkpoint of a session's working tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInfo {
    /// Its id (time-ordered): what `…/changes` and `…/restore` take.
    pub id: String,
    /// The git commit holding it.
    pub commit: String,
    /// The turn it was taken for (none for a restore's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub phase: CheckpointPhase,
    pub created_at_ms: i64,
}

/// What changed between two checkpoints (or the session's base and its latest checkpoint).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceChanges {
    /// The commit compared from.
    pub from: String,
    /// The commit compared to.
    pub to: String,
    pub files: Vec<ChangedFile>,
    /// The unified diff (of `path` only, when asked), cut at the server's limit.
    pub diff: String,
    /// The diff was cut.
    pub truncated: bool,
}

/// Which changes `…/changes` compares.
#[derive(Clone, Debug)]
pub enum ChangesRange {
    /// One turn: its before and after checkpoints.
    Turn(String),
    /// Two checkpoints by id.
    Between { from: String, to: String },
    /// The session's base (a worktree's base commit; else its first checkpoint) to its latest
    /// checkpoint.
    Session,
}

impl Controller {
    fn workspaces(&self) -> Option<&WorkspaceConfig> {
        self.inner.config.workspaces.as_ref()
    }

    /// The workspace settings, or git's absence as the error (workspaces are off without it).
    fn workspace_config(&self) -> Result<&WorkspaceConfig> {
        self.workspaces().ok_or_else(|| {
            let why = self.inner.config.workspaces_off_reason.as_deref().unwrap_or("workspaces are off");
            ControllerError::Workspace(ensemble_workspace::GitError::Unavailable(format!(
                "no working git on the server (--git-bin): {why}"
            )))
        })
    }

    pub(super) fn git(&self) -> Result<&Git> {
        self.workspace_config().map(|w| &w.git)
    }

    /// Makes the session's workspace before its agent starts: a worktree (the session's cwd
    /// becomes it), or the checkpoint settings of a dir. Returns what to remove if the start then
    /// fails.
    pub(super) async fn prepare_workspace(
        &self,
        session: &mut Session,
        request: &WorkspaceRequest,
        checkpoints: Option<bool>,
    ) -> Result<Option<PathBuf>> {
        match request {
            WorkspaceRequest::Dir => {
                if checkpoints == Some(false) || self.workspaces().is_none() {
                    return Ok(None);
                }
                // Found without a process: most sessions are not in a repository.
                let Some(top) = work_tree_top(Path::new(&session.cwd)) else { return Ok(None) };
                session.workspace = Some(Box::new(SessionWorkspace {
                    kind: WorkspaceKind::Dir,
                    repo: Some(top.to_string_lossy().into_owned()),
                    base_commit: None,
                    branch: None,
                    path: Some(top.to_string_lossy().into_owned()),
                    checkpoints: true,
                }));
                Ok(None)
            }
            WorkspaceRequest::Worktree { repo, base, branch, cwd } => {
                let config = self.workspace_config()?;
                let git = &config.git;
                let branch = branch.clone().unwrap_or_else(|| {
                    format!(
                        "ensemble/{}/{}",
                        Git::ref_component(&session.room_id),
                        Git::ref_component(&session.session_id)
                    )
                });
                let path = config.worktrees_dir.join(key_hash(&session.key()));
                let tree = git.create_worktree(repo, base.as_deref(), &branch, &path).await?;
                let dir = match cwd.as_deref().filter(|c| !c.is_empty()) {
                    None => tree.path.clone(),
                    Some(rel) => match inside(&tree.path, rel) {
                        Some(d) => d,
                        None => {
                            let _ = git.remove_worktree(repo, &tree.path, Some(&tree.branch), true).await;
                            return Err(ControllerError::CwdOutsideWorkspace(format!(
                                "cwd `{rel}` is not a directory inside the worktree (give it relative to the worktree's top)"
                            )));
                        }
                    },
                };
                session.cwd = dir.to_string_lossy().into_owned();
                session.workspace = Some(Box::new(SessionWorkspace {
                    kind: WorkspaceKind::Worktree,
                    repo: Some(repo.to_string_lossy().into_owned()),
                    base_commit: Some(tree.base_commit),
                    branch: Some(tree.branch),
                    path: Some(tree.path.to_string_lossy().into_owned()),
                    checkpoints: checkpoints != Some(false),
                }));
                Ok(Some(tree.path))
            }
        }
    }

    /// Undoes [`Self::prepare_workspace`] after a start that failed: no worktree or branch left.
    pub(super) async fn discard_workspace(&self, session: &Session, made: Option<PathBuf>) {
        let (Some(path), Some(ws), Ok(git)) = (made, session.workspace.as_ref(), self.git()) else { return };
        if let Some(repo) = &ws.repo
            && let Err(e) = git.remove_worktree(Path::new(repo), &path, ws.branch.as_deref(), true).await
        {
            tracing::warn!(error = %e, "removing the worktree of a failed start");
        }
    }

    /// The per-session lock that orders checkpoints and restores.
    pub(super) fn workspace_lock(&self, key: &SessionKey) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.inner.workspace_locks.lock().unwrap_or_else(|e| e.into_inner());
        // A lock nobody holds or waits for orders nothing: dropped, so the map holds only the
        // sessions checkpointing or restoring now.
        locks.retain(|k, lock| k == key || Arc::strong_count(lock) > 1);
        locks.entry(key.clone()).or_default().clone()
    }

    /// The session's checkpointed work tree and its settings, if it has one.
    pub(super) fn checkpointed(session: &Session) -> Option<PathBuf> {
        // A side conversation works in its source's tree; its turns are not the session's.
        if session.scope != crate::model::Scope::Canonical {
            return None;
        }
        session.workspace.as_ref().filter(|w| w.checkpoints).and_then(|w| w.path.as_ref()).map(PathBuf::from)
    }

    /// Takes a checkpoint of the session's work tree (the caller holds its workspace lock).
    async fn take_checkpoint(
        &self,
        key: &SessionKey,
        top: &Path,
        turn_id: Option<&str>,
        phase: CheckpointPhase,
    ) -> Result<(String, ensemble_workspace::Checkpoint)> {
        let config = self.workspace_config()?;
        let id = new_id();
        let refname = format!("{}{id}", ref_prefix(key));
        let mut message = format!("ensemble checkpoint\n\nphase: {}\n", phase.as_str());
        if let Some(t) = turn_id {
            message.push_str(&format!("turn: {t}\n"));
        }
        let index = config.index_dir.join(format!("{}.index", key_hash(key)));
        if let Some(dir) = index.parent() {
            std::fs::create_dir_all(dir).map_err(ensemble_workspace::GitError::Io)?;
        }
        let cp = config.git.checkpoint(top, &index, &refname, &message, config.max_file_bytes).await?;
        Ok((id, cp))
    }

    /// The checkpoint before a turn: taken before its agent starts. A failure is a notice, never
    /// the turn's end: the turn runs without its changes recorded.
    pub(super) async fn checkpoint_before(&self, key: &SessionKey, session: &Session, turn_id: &str) {
        let Some(top) = Self::checkpointed(session) else { return };
        let lock = self.workspace_lock(key);
        let _held = lock.lock().await;
        if let Err(e) = self.take_checkpoint(key, &top, Some(turn_id), CheckpointPhase::Before).await {
            self.workspace_notice(key, Some(turn_id), format!("no checkpoint before this turn: {e}")).await;
        }
    }

    /// Called as a turn's end is published: the checkpoint after it and its `turn.changes`,
    /// in the background (the turn's end is not held up). The workspace lock is taken now, so
    /// a next turn's checkpoint cannot overtake this one.
    pub(super) fn after_turn(&self, key: &SessionKey, top: PathBuf, turn_id: &str) {
        let lock = self.workspace_lock(key);
        let held = lock.clone().try_lock_owned();
        let this = self.clone();
        let key = key.clone();
        let turn_id = turn_id.to_owned();
        tokio::spawn(async move {
            let _held = match held {
                Ok(h) => h,
                Err(_) => lock.lock_owned().await,
            };
            if let Err(e) = this.record_changes(&key, &top, &turn_id).await {
                this.workspace_notice(&key, Some(&turn_id), format!("the turn's changes were not recorded: {e}")).await;
            }
        });
    }

    async fn record_changes(&self, key: &SessionKey, top: &Path, turn_id: &str) -> Result<()> {
        let git = self.git()?;
        let before = self
            .list_checkpoints(key, top)
            .await?
            .into_iter()
            .rev()
            .find(|c| c.turn_id.as_deref() == Some(turn_id) && c.phase == CheckpointPhase::Before)
            .ok_or_else(|| ControllerError::NoWorkspace("no checkpoint was taken before the turn".into()))?;
        let (after_id, after) = self.take_checkpoint(key, top, Some(turn_id), CheckpointPhase::After).await?;
        let changes = git.changes(top, &before.commit, &after.commit, None, 0).await?;
        let payload = TurnChangesPayload {
            turn_id: turn_id.to_owned(),
            before: before.id,
            after: after_id,
            files: changes.files.into_iter().map(changed_file).collect(),
            skipped: after.skipped,
        };
        self.publish_with(key, Persist::Always, |b| {
            b.emit(Some(turn_id.to_owned()), EventBody::TurnChanges(payload));
            Ok(())
        })
        .await?
        .durable()
        .await
    }

    async fn workspace_notice(&self, key: &SessionKey, turn_id: Option<&str>, message: String) {
        tracing::warn!(room = %key.room_id, session = %key.session_id, "{message}");
        let published = self
            .publish_with(key, Persist::Always, |b| {
                b.emit(
                    turn_id.map(str::to_owned),
                    EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message: message.clone() }),
                );
                Ok(())
            })
            .await;
        if let Ok(p) = published {
            let _ = p.durable().await;
        }
    }

    async fn list_checkpoints(&self, key: &SessionKey, top: &Path) -> Result<Vec<CheckpointInfo>> {
        let refs = self.git()?.list_refs(top, &ref_prefix(key)).await?;
        Ok(refs.into_iter().filter_map(|r| checkpoint_of(key, r)).collect())
    }

    /// The session and its checkpointed work tree, or why it has none.
    fn workspace_of(&self, key: &SessionKey) -> Result<(Session, PathBuf)> {
        let session = self.snapshot(key)?;
        match Self::checkpointed(&session) {
            // Removed by hand (or its repository deleted): say so, rather than what git says.
            Some(top) if !top.join(".git").exists() => Err(gone(&top)),
            Some(top) if self.workspaces().is_some() => Ok((session, top)),
            _ => Err(ControllerError::NoWorkspace(
                "the session has no checkpoints: its cwd is not in a git work tree, or it was started with \
                 `checkpoints: false`"
                    .into(),
            )),
        }
    }

    /// The session's checkpoints, oldest first.
    pub async fn checkpoints(&self, key: &SessionKey) -> Result<Vec<CheckpointInfo>> {
        let (_, top) = self.workspace_of(key)?;
        self.list_checkpoints(key, &top).await
    }

    /// What changed in the session's workspace over `range` (`path`: one file's diff).
    pub async fn changes(&self, key: &SessionKey, range: ChangesRange, path: Option<&str>) -> Result<WorkspaceChanges> {
        let (session, top) = self.workspace_of(key)?;
        let config = self.workspace_config()?;
        let list = self.list_checkpoints(key, &top).await?;
        let find = |id: &str| {
            list.iter()
                .find(|c| c.id == id)
                .map(|c| c.commit.clone())
                .ok_or_else(|| ControllerError::UnknownCheckpoint(id.to_owned()))
        };
        let (from, to) = match range {
            ChangesRange::Between { from, to } => (find(&from)?, find(&to)?),
            ChangesRange::Turn(turn) => {
                let of =
                    |phase| list.iter().rev().find(|c| c.turn_id.as_deref() == Some(turn.as_str()) && c.phase == phase);
                match (of(CheckpointPhase::Before), of(CheckpointPhase::After)) {
                    (Some(b), Some(a)) => (b.commit.clone(), a.commit.clone()),
                    _ => return Err(ControllerError::UnknownCheckpoint(format!("the checkpoints of turn {turn}"))),
                }
            }
            ChangesRange::Session => {
                let last =
                    list.last().ok_or_else(|| ControllerError::UnknownCheckpoint("any (no turn has run)".into()))?;
                let base = session.workspace.as_ref().and_then(|w| w.base_commit.clone());
                let first = list.first().map(|c| c.commit.clone()).unwrap_or_default();
                (base.unwrap_or(first), last.commit.clone())
            }
        };
        let Changes { files, diff, truncated } =
            config.git.changes(&top, &from, &to, path, config.max_diff_bytes).await?;
        Ok(WorkspaceChanges { from, to, files: files.into_iter().map(changed_file).collect(), diff, truncated })
    }

    /// Puts the session's working tree back to a checkpoint, after checkpointing it as it is (so
    /// the restore can be undone). Refused while a turn runs.
    pub async fn restore(&self, key: &SessionKey, checkpoint: &str) -> Result<WorkspaceRestoredPayload> {
        let _guard = self.lock(key).await?;
        let (session, top) = self.workspace_of(key)?;
        if let Some(turn) = session.active_turn_id {
            return Err(ControllerError::TurnActive(turn));
        }
        let lock = self.workspace_lock(key);
        let _held = lock.lock().await;
        let target = self
            .list_checkpoints(key, &top)
            .await?
            .into_iter()
            .find(|c| c.id == checkpoint)
            .ok_or_else(|| ControllerError::UnknownCheckpoint(checkpoint.to_owned()))?;
        let (undo, current) = self.take_checkpoint(key, &top, None, CheckpointPhase::Restore).await?;
        let config = self.workspace_config()?;
        let index = config.index_dir.join(format!("{}.index", key_hash(key)));
        let kept = config.git.restore(&top, &index, &target.commit, &current.commit, &current.skipped).await?;
        let payload = WorkspaceRestoredPayload { checkpoint: target.id, undo, kept };
        let event = payload.clone();
        self.publish_with(key, Persist::Always, |b| {
            b.emit(None, EventBody::WorkspaceRestored(event));
            Ok(())
        })
        .await?
        .durable()
        .await?;
        Ok(payload)
    }
}

/// The hidden refs of one session's checkpoints (a hash: room and session ids may hold
/// characters a ref may not).
pub(super) fn ref_prefix(key: &SessionKey) -> String {
    format!("refs/ensemble/{}/", key_hash(key))
}

fn key_hash(key: &SessionKey) -> String {
    let mut h = sha2::Sha256::new();
    h.update(key.room_id.as_bytes());
    h.update([0]);
    h.update(key.session_id.as_bytes());
    h.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// A checkpoint from its ref, when the ref is one of ours.
fn checkpoint_of(key: &SessionKey, r: RefInfo) -> Option<CheckpointInfo> {
    let id = r.refname.strip_prefix(&ref_prefix(key))?.to_owned();
    let field = |name: &str| r.message.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_owned());
    let phase = match field("phase:")?.as_str() {
        "before" => CheckpointPhase::Before,
        "after" => CheckpointPhase::After,
        "restore" => CheckpointPhase::Restore,
        _ => return None,
    };
    Some(CheckpointInfo { id, commit: r.commit, turn_id: field("turn:"), phase, created_at_ms: r.time_ms })
}

fn changed_file(f: ensemble_workspace::FileStat) -> ChangedFile {
    use ensemble_workspace::FileStatus as S;
    let status = match f.status {
        S::Added => ChangeStatus::Added,
        S::Modified => ChangeStatus::Modified,
        S::Deleted => ChangeStatus::Deleted,
        S::Renamed => ChangeStatus::Renamed,
        S::TypeChanged => ChangeStatus::TypeChanged,
    };
    ChangedFile { path: f.path, old_path: f.old_path, status, added: f.added, removed: f.removed, binary: f.binary }
}

/// The top of the git work tree holding `dir`: the nearest ancestor with a `.git` (a directory,
/// or a worktree's file). No process is started for a directory outside every repository.
fn work_tree_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// `rel` as a directory inside `top`: relative, no `..`, existing, not a link out.
fn inside(top: &Path, rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    if p.is_absolute() || p.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
        return None;
    }
    let dir = top.join(p).canonicalize().ok()?;
    (dir.is_dir() && dir.starts_with(top.canonicalize().ok()?)).then_some(dir)
}

/// The error for a work tree removed by hand (or whose repository was deleted).
pub(super) fn gone(top: &Path) -> ControllerError {
    ControllerError::NoWorkspace(format!(
        "the session's work tree {} is gone (removed, or its repository deleted)",
        top.display()
    ))
}
