//! The git binary, work trees, linked worktrees of a session, and committing a session's work.

use std::path::{Path, PathBuf};

use crate::exec::{path_of, trim_newline};
use crate::names::rev_arg;
use crate::{Git, GitError, Worktree};

/// The identity of `commit_all` when the caller names one: author and committer both, so no git
/// configuration is needed.
const AUTHOR_ENV: [&str; 2] = ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"];
const EMAIL_ENV: [&str; 2] = ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"];

impl Git {
    /// `git --version` (for example `git version 2.47.3`). `Err(Unavailable)` when the binary is
    /// missing or fails; `Err(Timeout)` when it does not answer in time.
    pub async fn version(&self) -> Result<String, GitError> {
        let out = self.call_anywhere().arg("--version").output().await?;
        if !out.status.success() {
            return Err(GitError::Unavailable(format!(
                "{} --version exited with {}: {}",
                self.bin.display(),
                out.status,
                out.stderr
            )));
        }
        Ok(out.line())
    }

    /// The top of the work tree containing `dir` (`git rev-parse --show-toplevel`), or `None`
    /// when `dir` is not inside a work tree (outside any repository, in a bare repository, or
    /// inside a `.git` directory). `Err(Io)` when `dir` does not exist.
    pub async fn work_tree_top(&self, dir: &Path) -> Result<Option<PathBuf>, GitError> {
        let out = self.call(dir).args(["rev-parse", "--show-toplevel"]).output().await?;
        if out.status.success() {
            return Ok(Some(path_of(trim_newline(&out.stdout))));
        }
        if out.status.code() == Some(128)
            && (out.stderr.contains("not a git repository") || out.stderr.contains("must be run in a work tree"))
        {
            return Ok(None);
        }
        Err(out.error())
    }

    /// Creates a linked worktree of the repository `repo` at `path` (made absolute; it must not
    /// exist, or be an empty directory) on a new branch `branch` starting at `base` (a revision;
    /// `None` is the repository's HEAD), and checks the branch out there (`git worktree add -b`).
    /// The branch tracks nothing. `repo` may be any directory of a work tree, or a bare
    /// repository (git makes linked worktrees of both). The repository's `post-checkout` hook,
    /// if any, runs as for any `git worktree add`.
    ///
    /// Errors: `NotARepo(repo)` when `repo` is not in a repository; `UnknownBase(base)` when the
    /// base does not name a commit (`"HEAD"` for an unborn HEAD); `InvalidBranch` when
    /// `git check-ref-format --branch` refuses the name (or would expand it, as `@{-1}`);
    /// `BranchExists` when `refs/heads/<branch>` exists.
    pub async fn create_worktree(
        &self,
        repo: &Path,
        base: Option<&str>,
        branch: &str,
        path: &Path,
    ) -> Result<Worktree, GitError> {
        if !repo.is_dir() {
            return Err(GitError::NotARepo(repo.to_path_buf()));
        }
        let base = base.unwrap_or("HEAD");
        // Resolving the base is also the check that `repo` is a repository (NotARepo).
        let Some(base_commit) = self.commit_of(repo, base).await? else {
            return Err(GitError::UnknownBase(base.to_owned()));
        };
        self.check_branch(repo, branch).await?;
        if self.commit_of(repo, &format!("refs/heads/{branch}")).await?.is_some() {
            return Err(GitError::BranchExists(branch.to_owned()));
        }
        let path = std::path::absolute(path)?;
        let out = self
            .call(repo)
            .args(["worktree", "add", "--quiet", "-b", branch])
            .arg(&path)
            .arg(&base_commit)
            .output()
            .await?;
        if !out.status.success() {
            // Made by someone else since the check above.
            if out.stderr.contains("a branch named") && out.stderr.contains("already exists") {
                return Err(GitError::BranchExists(branch.to_owned()));
            }
            return Err(out.error());
        }
        Ok(Worktree { path, branch: branch.to_owned(), base_commit })
    }

    /// Removes the linked worktree at `path` of the repository `repo`
    /// (`git worktree remove --force`, which discards its changes; `git worktree prune` when the
    /// directory is gone already), then, when `branch` is given, deletes that branch:
    /// `git branch -d` (only when merged into the repository's HEAD, or into its upstream) or,
    /// with `force_branch`, `git branch -D`. A branch that does not exist is not an error.
    ///
    /// `Err(BranchNotMerged)` when `-d` refuses: the worktree is removed, the branch is kept.
    pub async fn remove_worktree(
        &self,
        repo: &Path,
        path: &Path,
        branch: Option<&str>,
        force_branch: bool,
    ) -> Result<(), GitError> {
        if std::fs::symlink_metadata(path).is_ok() {
            let path = std::path::absolute(path)?;
            self.call(repo).args(["worktree", "remove", "--force"]).arg(&path).ok().await?;
        } else {
            self.prune_worktrees(repo).await?;
        }
        let Some(branch) = branch else { return Ok(()) };
        if rev_arg(branch).is_none() {
            return Err(GitError::InvalidBranch(branch.to_owned()));
        }
        let out = self.call(repo).args(["branch", if force_branch { "-D" } else { "-d" }, branch]).output().await?;
        if out.status.success() {
            return Ok(());
        }
        if out.stderr.contains("not fully merged") {
            return Err(GitError::BranchNotMerged(branch.to_owned()));
        }
        if out.stderr.contains(&format!("branch '{branch}' not found")) {
            return Ok(());
        }
        Err(out.error())
    }

    /// Forgets the linked worktrees of `repo` whose directories are gone (`git worktree prune`).
    pub async fn prune_worktrees(&self, repo: &Path) -> Result<(), GitError> {
        self.call(repo).args(["worktree", "prune"]).ok().await.map(drop)
    }

    /// Commits every change of the work tree at `top` on its checked-out branch, through the
    /// repository's own index (meant for a session's own worktree): `git add -A`, then
    /// `git commit -m message`, and returns the new commit's full sha. The author and committer
    /// are `author` (name, email) when given, else git's configuration; the repository's hooks
    /// and signing configuration apply as for any commit. `Err(NothingToCommit)` when there is
    /// no change.
    pub async fn commit_all(
        &self,
        top: &Path,
        message: &str,
        author: Option<(&str, &str)>,
    ) -> Result<String, GitError> {
        self.call(top).args(["-c", "advice.addEmbeddedRepo=false", "add", "-A", "--", ":/"]).ok().await?;
        // `diff --cached --quiet` exits 1 when something is staged.
        let staged = self.call(top).args(["diff", "--cached", "--quiet", "--no-ext-diff"]).output().await?;
        match staged.status.code() {
            Some(0) => return Err(GitError::NothingToCommit),
            Some(1) => {}
            _ => return Err(staged.error()),
        }
        let mut commit = self.call(top).args(["commit", "--quiet", "-m", message]);
        if let Some((name, email)) = author {
            for key in AUTHOR_ENV {
                commit = commit.env(key, name);
            }
            for key in EMAIL_ENV {
                commit = commit.env(key, email);
            }
        }
        commit.ok().await?;
        self.call(top).args(["rev-parse", "--verify", "HEAD"]).line().await
    }

    /// The full sha of the commit `rev` names in the repository at `dir`, `None` when it names
    /// none.
    pub(crate) async fn commit_of(&self, dir: &Path, rev: &str) -> Result<Option<String>, GitError> {
        let Some(rev) = rev_arg(rev) else { return Ok(None) };
        let out =
            self.call(dir).args(["rev-parse", "-q", "--verify"]).arg(format!("{rev}^{{commit}}")).output().await?;
        match out.status.code() {
            Some(0) => Ok(Some(out.line())),
            Some(1) => Ok(None),
            _ => Err(out.error()),
        }
    }

    /// `Err(InvalidBranch)` unless `git check-ref-format --branch` takes `branch` as it is.
    async fn check_branch(&self, repo: &Path, branch: &str) -> Result<(), GitError> {
        let invalid = || GitError::InvalidBranch(branch.to_owned());
        if rev_arg(branch).is_none() {
            return Err(invalid());
        }
        let out = self.call(repo).args(["check-ref-format", "--branch", branch]).output().await?;
        // A name it expands (`@{-1}`, `@{upstream}`) is not the name asked for.
        if out.status.success() && out.line() == branch { Ok(()) } else { Err(invalid()) }
    }
}
