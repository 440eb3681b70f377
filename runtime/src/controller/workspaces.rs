//! Workspaces: a git worktree per session when asked, and a checkpoint of the working tree around
//! every turn when the session works in a git work tree (see [`ensemble_core::model::SessionWorkspace`]).
//!
//! A checkpoint is a commit of the whole working tree (untracked files included, ignored ones
//! not) made through a private index file into the server's own repository for that work tree
//! (`DATA_DIR/checkpoints/repos/<hash>.git`, which borrows the user's objects), kept alive by a
//! ref `refs/ensemble/<key hash>/<checkpoint id>` there, its id a time-ordered uuid, so the refs
//! listed by name are the checkpoints in order. The user's repository gets no ref, commit or
//! object of a checkpoint. The commit's message says which turn it belongs to and whether it was
//! taken before or after it (or before a restore), so nothing about checkpoints is kept anywhere
//! but in that repository. One lock per work tree orders its checkpoints: the one after a turn
//! is taken before the next turn's (whose agent has not started yet), and a restore never runs
//! beside either, whichever session of the work tree takes them.

use std::path::{Path, PathBuf};

use ensemble_workspace::{Changes, Git, GitError, RefInfo, Repo, Shadow};

use super::Controller;
use super::error::{ControllerError, Result};
use super::publish::Persist;
use super::workspace_git::{key_hash, room_prefix};
use ensemble_core::clock::new_id;
use ensemble_core::event::{
    ChangeStatus, ChangedFile, EventBody, NoticeLevel, NoticePayload, TurnChangesPayload, WorkspaceRestoredPayload,
};
use ensemble_core::model::{Session, SessionKey, SessionWorkspace, WorkspaceKind};
use ensemble_core::workspace::{CheckpointInfo, CheckpointPhase, WorkspaceChanges};

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
        /// A full commit id or a branch name; none: the repository's HEAD.
        base: Option<String>,
        branch: Option<String>,
        /// A directory inside the worktree to work in (relative to its top).
        cwd: Option<String>,
        /// A checkpoint commit whose files the new worktree gets, over its base (a fork).
        fill: Option<String>,
    },
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
                if let Some(why) = self.private_place("cwd", Path::new(&session.cwd)) {
                    return Err(ControllerError::CwdOutsideWorkspace(why));
                }
                if checkpoints == Some(false) || self.workspaces().is_none() {
                    return Ok(None);
                }
                // Found without a process first: most sessions are not in a repository.
                if work_tree_top(Path::new(&session.cwd)).is_none() {
                    return Ok(None);
                }
                let Some(repo) = self.git()?.discover(Path::new(&session.cwd)).await? else { return Ok(None) };
                // A work tree reaching out of the roots (a dotfiles repository at `~` around a
                // project under it) or a `.git` pointing out of them: no checkpoints, and the file
                // routes are rooted at the cwd.
                if let Some(why) = self.repo_refused(&repo) {
                    tracing::info!(room = %session.room_id, session = %session.session_id, "no checkpoints: {why}");
                    return Ok(None);
                }
                self.shadow_of(&repo).await?;
                session.workspace = Some(Box::new(SessionWorkspace {
                    kind: WorkspaceKind::Dir,
                    repo: Some(repo.top.to_string_lossy().into_owned()),
                    base_commit: None,
                    branch: None,
                    path: Some(repo.top.to_string_lossy().into_owned()),
                    git_dir: Some(repo.git_dir.to_string_lossy().into_owned()),
                    common_dir: Some(repo.common_dir.to_string_lossy().into_owned()),
                    checkpoints: true,
                }));
                Ok(None)
            }
            WorkspaceRequest::Worktree { repo, base, branch, cwd, fill } => {
                let config = self.workspace_config()?;
                let git = &config.git;
                if let Some(why) = self.place_refused("workspace.repo", repo) {
                    return Err(ControllerError::CwdOutsideWorkspace(why));
                }
                let Some((git_dir, common_dir, format)) = git.repository(repo).await? else {
                    return Err(GitError::NotARepo(repo.clone()).into());
                };
                // A `.git` file inside the roots naming a repository outside them.
                if let Some(why) = self.place_refused("the repository of workspace.repo", &common_dir) {
                    return Err(ControllerError::CwdOutsideWorkspace(why));
                }
                let room = session.room_id.clone();
                let base = match base {
                    Some(b) => self.base_of(&room, &common_dir, b).await?,
                    None => git.head_commit(&git_dir).await?.ok_or_else(|| GitError::UnknownBase("HEAD".into()))?,
                };
                let branch = match branch {
                    Some(b) => {
                        Self::check_branch_name(&room, b)?;
                        b.clone()
                    }
                    None => format!("{}{}", room_prefix(&room), Git::ref_component(&session.session_id)),
                };
                let shadow = self
                    .shadow_of(&Repo {
                        top: repo.clone(),
                        git_dir: common_dir.clone(),
                        common_dir: common_dir.clone(),
                        object_format: format,
                    })
                    .await?;
                let path = config.worktrees_dir.join(key_hash(&session.key()));
                let tree = git.create_worktree(&common_dir, &shadow, &base, &branch, &path).await?;
                let filled = match fill {
                    // The fork's files: the checkpoint over its base, as uncommitted changes.
                    Some(fill) => match self.index_of(&session.key()) {
                        Ok(index) => git
                            .restore(&tree.repo, &shadow, &index, fill, &base, &[])
                            .await
                            .map(drop)
                            .map_err(Into::into),
                        Err(e) => Err(e),
                    },
                    None => Ok(()),
                };
                let dir = filled.and_then(|()| match cwd.as_deref().filter(|c| !c.is_empty()) {
                    None => Ok(tree.path.clone()),
                    Some(rel) => inside(&tree.path, rel).ok_or_else(|| {
                        ControllerError::CwdOutsideWorkspace(format!(
                            "cwd `{rel}` is not a directory inside the worktree (give it relative to the worktree's top)"
                        ))
                    }),
                });
                let dir = match dir {
                    Ok(d) => d,
                    Err(e) => {
                        let _ = git.remove_worktree(&common_dir, &tree.path, Some(&tree.branch), true).await;
                        return Err(e);
                    }
                };
                session.cwd = dir.to_string_lossy().into_owned();
                session.workspace = Some(Box::new(SessionWorkspace {
                    kind: WorkspaceKind::Worktree,
                    repo: Some(repo.to_string_lossy().into_owned()),
                    base_commit: Some(tree.base_commit),
                    branch: Some(tree.branch),
                    path: Some(tree.path.to_string_lossy().into_owned()),
                    git_dir: Some(tree.repo.git_dir.to_string_lossy().into_owned()),
                    common_dir: Some(common_dir.to_string_lossy().into_owned()),
                    checkpoints: checkpoints != Some(false),
                }));
                Ok(Some(tree.path))
            }
        }
    }

    /// Undoes [`Self::prepare_workspace`] after a start that failed: no worktree or branch left.
    pub(super) async fn discard_workspace(&self, session: &Session, made: Option<PathBuf>) {
        let (Some(path), Some(ws), Ok(git)) = (made, session.workspace.as_ref(), self.git()) else { return };
        if let Some(common) = &ws.common_dir
            && let Err(e) = git.remove_worktree(Path::new(common), &path, ws.branch.as_deref(), true).await
        {
            tracing::warn!(error = %e, "removing the worktree of a failed start");
        }
    }

    /// The session's checkpointed work tree, if it has one.
    pub(super) fn checkpointed(session: &Session) -> Option<PathBuf> {
        // A side conversation works in its source's tree; its turns are not the session's.
        if session.scope != ensemble_core::model::Scope::Canonical {
            return None;
        }
        session.workspace.as_ref().filter(|w| w.checkpoints).and_then(|w| w.path.as_ref()).map(PathBuf::from)
    }

    /// The session's repository (as recorded) and the server's checkpoint repository for it.
    pub(super) async fn place_of(&self, session: &Session) -> Result<(Repo, Shadow)> {
        let ws = session.workspace.as_deref().ok_or_else(|| ControllerError::NoWorkspace(NO_CHECKPOINTS.into()))?;
        let repo = self.repo_of(ws).await?;
        let shadow = self.shadow_of(&repo).await?;
        Ok((repo, shadow))
    }

    /// Takes a checkpoint of the session's work tree (the caller holds its work tree's lock).
    async fn take_checkpoint(
        &self,
        key: &SessionKey,
        (repo, shadow): &(Repo, Shadow),
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
        let index = self.index_of(key)?;
        if let Some(dir) = index.parent() {
            std::fs::create_dir_all(dir).map_err(GitError::Io)?;
        }
        let cp = config.git.checkpoint(repo, shadow, &index, &refname, &message, config.max_file_bytes).await?;
        Ok((id, cp))
    }

    /// The checkpoint before a turn: taken before its agent starts. A failure is a notice, never
    /// the turn's end: the turn runs without its changes recorded.
    pub(super) async fn checkpoint_before(&self, key: &SessionKey, session: &Session, turn_id: &str) {
        let Some(top) = Self::checkpointed(session) else { return };
        let lock = self.workspace_lock(&top);
        let _held = lock.lock().await;
        let taken = match self.place_of(session).await {
            Ok(place) => self.take_checkpoint(key, &place, Some(turn_id), CheckpointPhase::Before).await.map(drop),
            Err(e) => Err(e),
        };
        if let Err(e) = taken {
            self.workspace_notice(key, Some(turn_id), format!("no checkpoint before this turn: {e}")).await;
        }
    }

    /// Called as a turn's end is published: the checkpoint after it and its `turn.changes`,
    /// in the background (the turn's end is not held up). The work tree's lock is taken now, so
    /// a next turn's checkpoint cannot overtake this one.
    pub(super) fn after_turn(&self, key: &SessionKey, top: PathBuf, turn_id: &str) {
        let lock = self.workspace_lock(&top);
        let held = lock.clone().try_lock_owned();
        let this = self.clone();
        let key = key.clone();
        let turn_id = turn_id.to_owned();
        tokio::spawn(async move {
            let _held = match held {
                Ok(h) => h,
                Err(_) => lock.lock_owned().await,
            };
            if let Err(e) = this.record_changes(&key, &turn_id).await {
                this.workspace_notice(&key, Some(&turn_id), format!("the turn's changes were not recorded: {e}")).await;
            }
        });
    }

    async fn record_changes(&self, key: &SessionKey, turn_id: &str) -> Result<()> {
        let git = self.git()?;
        let session = self.snapshot(key)?;
        let place = self.place_of(&session).await?;
        let before = self
            .list_checkpoints(key, &place.1)
            .await?
            .into_iter()
            .rev()
            .find(|c| c.turn_id.as_deref() == Some(turn_id) && c.phase == CheckpointPhase::Before)
            .ok_or_else(|| ControllerError::NoWorkspace("no checkpoint was taken before the turn".into()))?;
        let (after_id, after) = self.take_checkpoint(key, &place, Some(turn_id), CheckpointPhase::After).await?;
        let changes = git.changes(&place.1, &before.commit, &after.commit, None, 0).await?;
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

    pub(super) async fn workspace_notice(&self, key: &SessionKey, turn_id: Option<&str>, message: String) {
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

    pub(super) async fn list_checkpoints(&self, key: &SessionKey, shadow: &Shadow) -> Result<Vec<CheckpointInfo>> {
        let refs = self.git()?.list_refs(shadow, &ref_prefix(key)).await?;
        Ok(refs.into_iter().filter_map(|r| checkpoint_of(key, r)).collect())
    }

    /// The session and its checkpointed work tree, or why it has none.
    pub(super) fn workspace_of(&self, key: &SessionKey) -> Result<(Session, PathBuf)> {
        let session = self.snapshot(key)?;
        match Self::checkpointed(&session) {
            // Removed by hand (or its repository deleted): say so, rather than what git says.
            Some(top) if !top.is_dir() || !recorded_git_dir(&session, &top).is_dir() => {
                Err(ControllerError::workspace_gone(&top))
            }
            Some(top) if self.workspaces().is_some() => Ok((session, top)),
            _ => Err(ControllerError::NoWorkspace(NO_CHECKPOINTS.into())),
        }
    }

    /// The session's checkpoints, oldest first, once any checkpoint being taken in its work tree
    /// is done (a turn that just ended has its checkpoint after it).
    pub async fn checkpoints(&self, key: &SessionKey) -> Result<Vec<CheckpointInfo>> {
        let (session, top) = self.workspace_of(key)?;
        let place = self.place_of(&session).await?;
        let lock = self.workspace_lock(&top);
        drop(lock.lock().await);
        self.list_checkpoints(key, &place.1).await
    }

    /// What changed in the session's workspace over `range` (`path`: one file's diff).
    pub async fn changes(&self, key: &SessionKey, range: ChangesRange, path: Option<&str>) -> Result<WorkspaceChanges> {
        let (session, _) = self.workspace_of(key)?;
        let (_, shadow) = self.place_of(&session).await?;
        let config = self.workspace_config()?;
        let list = self.list_checkpoints(key, &shadow).await?;
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
            config.git.changes(&shadow, &from, &to, path, config.max_diff_bytes).await?;
        Ok(WorkspaceChanges { from, to, files: files.into_iter().map(changed_file).collect(), diff, truncated })
    }

    /// Puts the session's working tree back to a checkpoint, after checkpointing it as it is (so
    /// the restore can be undone). Refused while a turn runs in that work tree, this session's or
    /// another's (it would rewrite the files under that turn's agent).
    pub async fn restore(&self, key: &SessionKey, checkpoint: &str) -> Result<WorkspaceRestoredPayload> {
        let (this, key, checkpoint) = (self.clone(), key.clone(), checkpoint.to_owned());
        self.detached(async move { this.restore_here(&key, &checkpoint).await }).await
    }

    async fn restore_here(&self, key: &SessionKey, checkpoint: &str) -> Result<WorkspaceRestoredPayload> {
        let _guard = self.lock(key).await?;
        let (session, top) = self.workspace_of(key)?;
        if let Some(turn) = session.active_turn_id {
            return Err(ControllerError::TurnActive(turn));
        }
        if let Some((other, turn)) = self.turn_in_work_tree(key, &top) {
            return Err(ControllerError::WorkTreeBusy(format!(
                "session {other} runs turn {turn} in the same work tree; restore once it ends"
            )));
        }
        let place = self.place_of(&session).await?;
        let lock = self.workspace_lock(&top);
        let _held = lock.lock().await;
        let target = self
            .list_checkpoints(key, &place.1)
            .await?
            .into_iter()
            .find(|c| c.id == checkpoint)
            .ok_or_else(|| ControllerError::UnknownCheckpoint(checkpoint.to_owned()))?;
        let (undo, current) = self.take_checkpoint(key, &place, None, CheckpointPhase::Restore).await?;
        let config = self.workspace_config()?;
        let index = self.index_of(key)?;
        let marker = self.restore_begins(key, &target.id, &undo)?;
        let restored =
            config.git.restore(&place.0, &place.1, &index, &target.commit, &current.commit, &current.skipped).await;
        Self::restore_done(&marker);
        let payload = WorkspaceRestoredPayload { checkpoint: target.id, undo, kept: restored? };
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

    /// Another canonical session working in the work tree `top` with a turn running, if any.
    fn turn_in_work_tree(&self, key: &SessionKey, top: &Path) -> Option<(String, String)> {
        let st = self.state();
        st.sessions.iter().find_map(|(k, e)| {
            let s = &e.rec.session;
            (k != key && Self::checkpointed(s).as_deref() == Some(top))
                .then(|| s.active_turn_id.clone().map(|t| (s.session_id.clone(), t)))
                .flatten()
        })
    }
}

const NO_CHECKPOINTS: &str = "the session has no checkpoints: its cwd is not in a git work tree (inside the workspace \
                              roots), or it was started with `checkpoints: false`";

/// The git dir the session recorded (an older session's: the work tree's `.git`).
fn recorded_git_dir(session: &Session, top: &Path) -> PathBuf {
    session.workspace.as_ref().and_then(|w| w.git_dir.as_deref()).map_or_else(|| top.join(".git"), PathBuf::from)
}

/// The refs of one session's checkpoints (a hash: room and session ids may hold characters a ref
/// may not).
pub(super) fn ref_prefix(key: &SessionKey) -> String {
    format!("refs/ensemble/{}/", key_hash(key))
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
