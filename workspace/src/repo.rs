//! Where a work tree's git data is, found once; and the server's own repository that holds its
//! checkpoints.

use std::path::{Path, PathBuf};

use crate::exec::path_of;
use crate::{Git, GitError};

/// A work tree and its repository's directories, as found when a session started. Every later
/// command names these explicitly (`GIT_DIR`, `GIT_WORK_TREE`), so what an agent writes into the
/// work tree afterwards (a `.git` file pointing elsewhere, `core.worktree`) changes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The top of the work tree (absolute).
    pub top: PathBuf,
    /// Its git dir: `<top>/.git`, or a linked worktree's `<common>/worktrees/<name>` (absolute).
    pub git_dir: PathBuf,
    /// The repository's common dir, where its objects, refs and configuration are (absolute).
    pub common_dir: PathBuf,
    /// Its object format (`sha1` or `sha256`).
    pub object_format: String,
}

/// The server's own bare repository for one user repository: it borrows the user's objects
/// (`objects/info/alternates`) and holds the checkpoint commits and their refs, so the user's
/// repository never gets a checkpoint ref or commit. Its configuration is the server's (no
/// filter, hook, fsmonitor or external diff), and checkpoints, diffs and restores run against it
/// with the user's work tree as its work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadow {
    /// Its directory (a bare repository).
    pub dir: PathBuf,
}

impl Git {
    /// The work tree containing `dir`, with its git and common dirs (`git rev-parse
    /// --show-toplevel --absolute-git-dir --git-common-dir`), or `None` when `dir` is not inside
    /// a work tree (outside any repository, in a bare repository, or inside a `.git` directory).
    /// `Err(Io)` when `dir` does not exist. Nothing the repository's configuration names is run.
    pub async fn discover(&self, dir: &Path) -> Result<Option<Repo>, GitError> {
        let out = self
            .call(dir)
            .args([
                "rev-parse",
                "--path-format=absolute",
                "--show-toplevel",
                "--absolute-git-dir",
                "--git-common-dir",
                "--show-object-format",
            ])
            .output()
            .await?;
        if !out.status.success() {
            if out.status.code() == Some(128)
                && (out.stderr.contains("not a git repository") || out.stderr.contains("must be run in a work tree"))
            {
                return Ok(None);
            }
            return Err(out.error());
        }
        let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
        let [top, git_dir, common_dir, format, ..] = lines.as_slice() else {
            return Err(GitError::Failed {
                command: out.command,
                status: out.status.code(),
                stderr: "unexpected output".into(),
            });
        };
        Ok(Some(Repo {
            top: path_of(top),
            git_dir: path_of(git_dir),
            common_dir: path_of(common_dir),
            object_format: String::from_utf8_lossy(format).into_owned(),
        }))
    }

    /// The top of the work tree containing `dir` (see [`Git::discover`]).
    pub async fn work_tree_top(&self, dir: &Path) -> Result<Option<PathBuf>, GitError> {
        Ok(self.discover(dir).await?.map(|r| r.top))
    }

    /// The git dir, common dir and object format of the repository `dir` is in (a work tree,
    /// or a bare repository), `None` when it is in none.
    pub async fn repository(&self, dir: &Path) -> Result<Option<(PathBuf, PathBuf, String)>, GitError> {
        let out = self
            .call(dir)
            .args([
                "rev-parse",
                "--path-format=absolute",
                "--absolute-git-dir",
                "--git-common-dir",
                "--show-object-format",
            ])
            .output()
            .await?;
        if !out.status.success() {
            if out.status.code() == Some(128) && out.stderr.contains("not a git repository") {
                return Ok(None);
            }
            return Err(out.error());
        }
        let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
        match lines.as_slice() {
            [git_dir, common, format, ..] => {
                Ok(Some((path_of(git_dir), path_of(common), String::from_utf8_lossy(format).into_owned())))
            }
            _ => Err(GitError::Failed {
                command: out.command,
                status: out.status.code(),
                stderr: "unexpected output".into(),
            }),
        }
    }

    /// The server's repository for the checkpoints of the repository whose common dir is
    /// `common_dir` (of object format `object_format`, `sha1` or `sha256`), at `dir`, made if it
    /// does not exist: a bare repository of the same object format, with no template (no sample
    /// hooks), borrowing the repository's objects. The alternates file is written again when it
    /// differs, so a repository moved since names its new place.
    pub async fn shadow(&self, common_dir: &Path, object_format: &str, dir: &Path) -> Result<Shadow, GitError> {
        let dir = std::path::absolute(dir)?;
        if !dir.join("objects").is_dir() {
            if let Some(parent) = dir.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            let format = if object_format.is_empty() { "sha1" } else { object_format };
            self.call_anywhere()
                .args(["init", "--quiet", "--bare", "--template="])
                .arg(format!("--object-format={format}"))
                .arg(&dir)
                .ok()
                .await?;
        }
        let info = dir.join("objects").join("info");
        tokio::fs::create_dir_all(&info).await?;
        let mut alternates = common_dir.join("objects").into_os_string().into_encoded_bytes();
        alternates.push(b'\n');
        let path = info.join("alternates");
        if tokio::fs::read(&path).await.ok().as_deref() != Some(alternates.as_slice()) {
            tokio::fs::write(&path, alternates).await?;
        }
        Ok(Shadow { dir })
    }

    /// The full sha of the commit `repo`'s `HEAD` names, `None` when it is unborn.
    pub async fn head(&self, repo: &Repo) -> Result<Option<String>, GitError> {
        self.commit_in(&repo.git_dir, "HEAD").await
    }

    /// The full sha of the commit `HEAD` names in the repository whose git dir is `git_dir`,
    /// `None` when it is unborn.
    pub async fn head_commit(&self, git_dir: &Path) -> Result<Option<String>, GitError> {
        self.commit_in(git_dir, "HEAD").await
    }

    /// The full sha of the commit `rev` names in the repository whose git dir is `git_dir`,
    /// `None` when it names none.
    pub(crate) async fn commit_in(&self, git_dir: &Path, rev: &str) -> Result<Option<String>, GitError> {
        let Some(rev) = crate::names::rev_arg(rev) else { return Ok(None) };
        let out = self
            .call_git_dir(git_dir)
            .args(["rev-parse", "-q", "--verify"])
            .arg(format!("{rev}^{{commit}}"))
            .output()
            .await?;
        match out.status.code() {
            Some(0) => Ok(Some(out.line())),
            Some(1) => Ok(None),
            _ => Err(out.error()),
        }
    }

    /// The commit `base` names in the repository whose common dir is `common_dir` when it is a
    /// full commit id (40 or 64 hex digits) or the name of a branch (`refs/heads/<base>`, nothing
    /// else: no tag, no abbreviation, no revision expression). `Err(UnknownBase)` otherwise.
    pub async fn base_commit(&self, common_dir: &Path, base: &str) -> Result<String, GitError> {
        let unknown = || GitError::UnknownBase(base.to_owned());
        let full_id = matches!(base.len(), 40 | 64) && base.bytes().all(|b| b.is_ascii_hexdigit());
        let rev = if full_id {
            base.to_ascii_lowercase()
        } else {
            if !self.branch_name_ok(base).await? {
                return Err(unknown());
            }
            format!("refs/heads/{base}")
        };
        self.commit_in(common_dir, &rev).await?.ok_or_else(unknown)
    }

    /// The name and email `git commit` would use in `repo` (its configuration, then the user's
    /// global one), where set.
    pub(crate) async fn identity(&self, repo: &Repo) -> Result<Option<(String, String)>, GitError> {
        let get = |key: &'static str| async move {
            let out = self.call_git_dir(&repo.git_dir).user_config().args(["config", "--get", key]).output().await?;
            Ok::<_, GitError>(out.status.success().then(|| out.line()).filter(|v| !v.trim().is_empty()))
        };
        Ok(match (get("user.name").await?, get("user.email").await?) {
            (Some(name), Some(email)) => Some((name, email)),
            _ => None,
        })
    }
}
