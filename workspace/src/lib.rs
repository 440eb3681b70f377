//! The git side of a session's workspace.
//!
//! Ensemble gives an agent session a git workspace (the user's work tree, or a linked worktree on
//! a branch of its own) and checkpoints the working tree around every turn, so a user can review,
//! undo and fork what a turn changed. This crate runs the real `git` binary for that and knows
//! nothing of sessions or HTTP.
//!
//! Every command is one `git` process: never a shell, stdin closed, `LC_ALL=C` (its messages are
//! matched in a few places), no prompt, no inherited `GIT_*` variable, no system or global
//! configuration, the program-running settings of the repository's configuration overridden (no
//! hook, fsmonitor, pager, signing or automatic gc ever runs), a deadline after which it is
//! stopped, and its stderr kept (clipped) for the error. A repository is named by the git dir and
//! work tree found once ([`Repo`], [`Git::discover`]), never found again from a directory an
//! agent may have changed.
//!
//! A checkpoint is a commit of the server's own repository for that work tree ([`Shadow`]), which
//! borrows the user's objects: made from a private index file (`GIT_INDEX_FILE`), kept alive by
//! a ref of the caller's choosing (for example under `refs/ensemble/<session>/`), so the user's
//! index, HEAD, branch, stash, refs and objects are never touched, and no filter driver or text
//! conversion the repository names runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

mod diff;
mod disk;
mod exec;
mod names;
mod refs;
mod repo;
mod snapshot;
mod worktree;

pub use diff::{Changes, FileStat, FileStatus};
pub use repo::{Repo, Shadow};

/// How long one git command may run when [`Git::default`] is used.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `git`: the binary and the deadline of each command.
#[derive(Debug, Clone)]
pub struct Git {
    bin: PathBuf,
    timeout: Duration,
}

impl Default for Git {
    /// `git` found on `PATH`, with [`DEFAULT_TIMEOUT`].
    fn default() -> Self {
        Self::new(PathBuf::from("git"), DEFAULT_TIMEOUT)
    }
}

impl Git {
    /// A runner of `bin` (a path, or a name looked up on `PATH`) whose every command is killed
    /// after `timeout`.
    pub fn new(bin: PathBuf, timeout: Duration) -> Git {
        Git { bin, timeout }
    }

    /// The binary this runner starts.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The deadline of each command.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// A linked worktree made by [`Git::create_worktree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its top directory (absolute).
    pub path: PathBuf,
    /// The new branch checked out in it.
    pub branch: String,
    /// The full sha of the commit the branch starts at.
    pub base_commit: String,
    /// The worktree as a work tree of the repository (its own git dir, the common dir).
    pub repo: Repo,
}

/// A snapshot of a working tree made by [`Git::checkpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The full sha of the checkpoint commit.
    pub commit: String,
    /// The full sha of its tree.
    pub tree: String,
    /// What was left out: files larger than the limit, and nested repositories (a directory,
    /// ending with `/`); paths from the top of the work tree, sorted, lossy where not UTF-8.
    pub skipped: Vec<String>,
}

/// A ref listed by [`Git::list_refs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefInfo {
    /// The full ref name (`refs/…`).
    pub refname: String,
    /// The full sha of the commit it names.
    pub commit: String,
    /// The commit's message, without its trailing newline.
    pub message: String,
    /// The committer time, in milliseconds since the epoch (git keeps whole seconds).
    pub time_ms: i64,
}

/// Why a git operation failed. [`GitError::code`] gives a stable snake_case code for each.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The binary is missing, not executable, or `git --version` failed.
    #[error("git is not available: {0}")]
    Unavailable(String),
    /// The directory is not inside a git repository.
    #[error("not a git repository: {}", .0.display())]
    NotARepo(PathBuf),
    /// A worktree's base does not name a commit.
    #[error("the base {0:?} does not name a commit")]
    UnknownBase(String),
    /// A revision given to compare or restore does not name a commit.
    #[error("the revision {0:?} does not name a commit")]
    UnknownRev(String),
    /// The branch to create exists already.
    #[error("a branch named {0:?} already exists")]
    BranchExists(String),
    /// `git check-ref-format --branch` refuses the name.
    #[error("{0:?} is not a valid branch name")]
    InvalidBranch(String),
    /// A ref name or prefix that is not under `refs/`.
    #[error("{0:?} is not a ref name under refs/")]
    InvalidRef(String),
    /// `git branch -d` refused: the branch has commits that are not merged (it was kept).
    #[error("the branch {0:?} is not fully merged; it was kept")]
    BranchNotMerged(String),
    /// [`Git::commit_all`] found no change to commit.
    #[error("nothing to commit")]
    NothingToCommit,
    /// The command ran past the deadline and was killed.
    #[error("{0} timed out")]
    Timeout(String),
    /// The command failed otherwise.
    #[error("{command} failed (exit status {}): {stderr}", status.map_or_else(|| "none".to_owned(), |s| s.to_string()))]
    Failed {
        /// The command line, clipped.
        command: String,
        /// Its exit status; `None` when killed by a signal.
        status: Option<i32>,
        /// Its stderr, clipped to 4 KiB (the start and the end).
        stderr: String,
    },
    /// A file or directory of the work tree could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl GitError {
    /// A stable snake_case code for the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => "git_unavailable",
            Self::NotARepo(_) => "not_a_git_repo",
            Self::UnknownBase(_) => "unknown_base",
            Self::UnknownRev(_) => "unknown_rev",
            Self::BranchExists(_) => "branch_exists",
            Self::InvalidBranch(_) => "invalid_branch",
            Self::InvalidRef(_) => "invalid_ref",
            Self::BranchNotMerged(_) => "branch_not_merged",
            Self::NothingToCommit => "nothing_to_commit",
            Self::Timeout(_) => "git_timeout",
            Self::Failed { .. } => "git_failed",
            Self::Io(_) => "io",
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;
