//! The git binary, work trees, linked worktrees of a session, and committing a session's work.

use std::path::Path;

use crate::names::rev_arg;
use crate::{Git, GitError, Repo, Shadow, Worktree};
use std::os::unix::ffi::OsStrExt;

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

    /// Creates a linked worktree of the repository whose common dir is `common_dir` at `path` (made absolute; it must not exist, or be
    /// an empty directory) on a new branch `branch` starting at the commit `base` (a full id, as
    /// [`Git::base_commit`] or [`Git::head`] give), and checks the branch out there. The branch
    /// tracks nothing. Made as `git worktree add --no-checkout -b`, then filled through `shadow`
    /// (`read-tree -m -u` into the worktree's own index), so no hook, filter driver or fsmonitor
    /// of the repository runs: the files are written as the repository stores them (a file an
    /// LFS-style filter would have smudged stays its pointer).
    ///
    /// Errors: `UnknownBase(base)` when the base names no commit of the repository; `InvalidBranch` when
    /// `git check-ref-format --branch` refuses the name (or would expand it, as `@{-1}`);
    /// `BranchExists` when `refs/heads/<branch>` exists.
    pub async fn create_worktree(
        &self,
        common_dir: &Path,
        shadow: &Shadow,
        base: &str,
        branch: &str,
        path: &Path,
    ) -> Result<Worktree, GitError> {
        let Some(base_commit) = self.commit_in(common_dir, base).await? else {
            return Err(GitError::UnknownBase(base.to_owned()));
        };
        if !self.branch_name_ok(branch).await? {
            return Err(GitError::InvalidBranch(branch.to_owned()));
        }
        if self.commit_in(common_dir, &format!("refs/heads/{branch}")).await?.is_some() {
            return Err(GitError::BranchExists(branch.to_owned()));
        }
        let path = std::path::absolute(path)?;
        let out = self
            .call_git_dir(common_dir)
            .args(["worktree", "add", "--no-checkout", "--quiet", "-b", branch])
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
        let filled = async {
            // Just made by git: its `.git` file is git's own yet.
            let tree = self.discover(&path).await?.ok_or_else(|| GitError::NotARepo(path.clone()))?;
            let index = tree.git_dir.join("index");
            self.in_shadow(&tree, shadow).index(&index).args(["read-tree", "-m", "-u", &base_commit]).ok().await?;
            Ok::<_, GitError>(tree)
        };
        match filled.await {
            Ok(tree) => Ok(Worktree { path, branch: branch.to_owned(), base_commit, repo: tree }),
            Err(e) => {
                let _ = self.remove_worktree(common_dir, &path, Some(branch), true).await;
                Err(e)
            }
        }
    }

    /// Removes the linked worktree at `path` of the repository whose common dir is `common_dir`
    /// (`git worktree remove --force`, which discards its changes; `git worktree prune` when the
    /// directory is gone already), then, when `branch` is given, deletes that branch:
    /// `git branch -d` (only when merged into the repository's HEAD, or into its upstream) or,
    /// with `force_branch`, `git branch -D`. A branch that does not exist is not an error.
    ///
    /// `Err(BranchNotMerged)` when `-d` refuses: the worktree is removed, the branch is kept.
    pub async fn remove_worktree(
        &self,
        common_dir: &Path,
        path: &Path,
        branch: Option<&str>,
        force_branch: bool,
    ) -> Result<(), GitError> {
        if std::fs::symlink_metadata(path).is_ok() {
            let path = std::path::absolute(path)?;
            self.call_git_dir(common_dir).args(["worktree", "remove", "--force"]).arg(&path).ok().await?;
        } else {
            self.prune_worktrees(common_dir).await?;
        }
        let Some(branch) = branch else { return Ok(()) };
        if rev_arg(branch).is_none() {
            return Err(GitError::InvalidBranch(branch.to_owned()));
        }
        let out = self
            .call_git_dir(common_dir)
            .args(["branch", if force_branch { "-D" } else { "-d" }, branch])
            .output()
            .await?;
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

    /// Forgets the linked worktrees of the repository whose common dir is `common_dir` whose
    /// directories are gone (`git worktree prune`).
    pub async fn prune_worktrees(&self, common_dir: &Path) -> Result<(), GitError> {
        self.call_git_dir(common_dir).args(["worktree", "prune"]).ok().await.map(drop)
    }

    /// Commits every change of `repo`'s work tree on its checked-out branch, through its own
    /// index (meant for a session's own worktree), and returns the new commit's full sha: as
    /// `git add -A` and `git commit -m message` would, but staged through `shadow`'s
    /// configuration into the repository's own objects, so no hook, filter driver or fsmonitor of
    /// the repository runs and the commit is unsigned. Untracked nested repositories are left
    /// out. The author and committer are `author` (name, email) when given, else the
    /// repository's (or the user's) configured identity, else `Ensemble <ensemble@localhost>`.
    /// `Err(NothingToCommit)` when there is no change.
    pub async fn commit_all(
        &self,
        repo: &Repo,
        shadow: &Shadow,
        message: &str,
        author: Option<(&str, &str)>,
    ) -> Result<String, GitError> {
        let head = self.head(repo).await?;
        let index = repo.git_dir.join("index");
        let objects = repo.common_dir.join("objects");
        let stage = || self.in_shadow(repo, shadow).index(&index).env("GIT_OBJECT_DIRECTORY", &objects);
        let listing = stage().args(["ls-files", "-z", "-t", "--others", "--exclude-standard"]).ok().await?;
        let nested: Vec<Vec<u8>> = listing
            .split(|&b| b == 0)
            .filter_map(|r| r.strip_prefix(b"? ")?.strip_suffix(b"/").map(<[u8]>::to_vec))
            .filter(|p| !p.is_empty())
            .collect();
        let mut add = stage().args(["add", "-A", "--", ":/"]);
        for p in &nested {
            let mut spec = b":(top,exclude,literal)".to_vec();
            spec.extend_from_slice(p);
            add = add.arg(std::ffi::OsStr::from_bytes(&spec));
        }
        add.ok().await?;
        let tree = stage().arg("write-tree").line().await?;
        if let Some(head) = &head
            && self.call_git_dir(&repo.common_dir).args(["rev-parse", &format!("{head}^{{tree}}")]).line().await?
                == tree
        {
            return Err(GitError::NothingToCommit);
        }
        let identity = match author {
            Some((name, email)) => Some((name.to_owned(), email.to_owned())),
            None => self.identity(repo).await?,
        };
        let mut commit = self.call_git_dir(&repo.common_dir).args(["commit-tree", "--no-gpg-sign", "-m", message]);
        if let Some(head) = &head {
            commit = commit.args(["-p", head]);
        }
        let (name, email) = identity.unwrap_or_else(|| ("Ensemble".into(), "ensemble@localhost".into()));
        for key in AUTHOR_ENV {
            commit = commit.env(key, &name);
        }
        for key in EMAIL_ENV {
            commit = commit.env(key, &email);
        }
        let commit = commit.arg(&tree).line().await?;
        let subject = message.lines().next().unwrap_or_default();
        // Moves the branch HEAD names, if it still is where it was.
        self.call_git_dir(&repo.git_dir)
            .args(["update-ref", "-m", &format!("commit: {subject}"), "HEAD", &commit, head.as_deref().unwrap_or("")])
            .ok()
            .await?;
        Ok(commit)
    }

    /// Whether `git check-ref-format --branch` takes `branch` as it is (not a name it expands,
    /// as `@{-1}`).
    pub(crate) async fn branch_name_ok(&self, branch: &str) -> Result<bool, GitError> {
        if rev_arg(branch).is_none() {
            return Ok(false);
        }
        let out = self.call_anywhere().args(["check-ref-format", "--branch", branch]).output().await?;
        Ok(out.status.success() && out.line() == branch)
    }
}
