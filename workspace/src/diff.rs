//! What changed between two commits: per-file statistics and the unified diff.

use crate::names::{known_rev, literal};
use crate::{Git, GitError, Shadow};

/// What changed between two commits ([`Git::changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// The changed files, in git's order (by path).
    pub files: Vec<FileStat>,
    /// The unified diff, cut at a line boundary when longer than the limit.
    pub diff: String,
    /// Whether `diff` was cut.
    pub truncated: bool,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    /// Its path in `to` (in `from` when deleted), from the top of the work tree (lossy where not
    /// UTF-8).
    pub path: String,
    /// Its path in `from`, when renamed.
    pub old_path: Option<String>,
    /// How it changed.
    pub status: FileStatus,
    /// Lines added (0 for a binary file).
    pub added: u64,
    /// Lines removed (0 for a binary file).
    pub removed: u64,
    /// Whether git counts no lines because the file is binary.
    pub binary: bool,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileStatus {
    /// New in `to`.
    Added,
    /// Its content or mode changed.
    Modified,
    /// Gone from `to`.
    Deleted,
    /// Moved from `old_path` (with or without changes; git's rename detection, `-M`).
    Renamed,
    /// Changed kind: regular file, symbolic link or submodule.
    TypeChanged,
}

impl FileStatus {
    /// Its lowercase name (`added`, `modified`, `deleted`, `renamed`, `type_changed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
            Self::Renamed => "renamed",
            Self::TypeChanged => "type_changed",
        }
    }
}

/// Options of both diffs: plumbing (`diff-tree`), so the user's `diff.*` configuration changes
/// neither the parsed output nor the text; no external diff or text conversion runs.
const DIFF_OPTS: [&str; 5] = ["-r", "-M", "--no-ext-diff", "--no-textconv", "--no-color"];

impl Git {
    /// What changed from the commit `from` to the commit `to` of `shadow` (checkpoints, and the
    /// user's commits it borrows): the
    /// files (renames detected, `-M`; NUL-separated output, so any file name is read), with
    /// their line counts, and the unified diff (`git diff-tree -p`), cut after at most
    /// `max_diff_bytes` of git's output at a line boundary (then `truncated`; git is stopped
    /// there rather than read to its end). `path` limits both to that one file, taken literally
    /// (`:(literal)`, no glob); a rename across it then shows as an addition or a deletion.
    /// With `max_diff_bytes` 0 only the files are computed (`truncated` when there are any).
    /// `Err(UnknownRev)` when `from` or `to` names no commit.
    pub async fn changes(
        &self,
        shadow: &Shadow,
        from: &str,
        to: &str,
        path: Option<&str>,
        max_diff_bytes: usize,
    ) -> Result<Changes, GitError> {
        let (from, to) = (known_rev(from)?, known_rev(to)?);
        let spec: Vec<String> = path.map(literal).into_iter().collect();
        let stats = self
            .call_git_dir(&shadow.dir)
            .args(["diff-tree", "--raw", "--numstat", "-z"])
            .args(DIFF_OPTS)
            .args([from, to, "--"])
            .args(&spec)
            .output();
        // Quoted file names keep non-ASCII bytes as they are.
        let patch = self
            .call_git_dir(&shadow.dir)
            .args(["-c", "core.quotePath=false", "diff-tree", "-p"])
            .args(DIFF_OPTS)
            .args([from, to, "--"])
            .args(&spec)
            .cap(max_diff_bytes)
            .output();
        if max_diff_bytes == 0 {
            // Only the file list is wanted: no diff process. Every changed file has diff text.
            let files = parse_stats(&self.succeeded(&shadow.dir, stats.await?, &[from, to]).await?);
            let truncated = !files.is_empty();
            return Ok(Changes { files, diff: String::new(), truncated });
        }
        let (stats, patch) = tokio::join!(stats, patch);
        let files = parse_stats(&self.succeeded(&shadow.dir, stats?, &[from, to]).await?);
        let patch = patch?;
        let (diff, truncated) = if patch.capped {
            // Cut after the last whole line (nothing when not even one fits).
            let end = patch.stdout.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            (String::from_utf8_lossy(&patch.stdout[..end]).into_owned(), true)
        } else {
            (String::from_utf8_lossy(&self.succeeded(&shadow.dir, patch, &[from, to]).await?).into_owned(), false)
        };
        Ok(Changes { files, diff, truncated })
    }
}

/// Parses `diff --raw --numstat -z`: all the raw records (`:modes shas STATUS\0path\0`, with a
/// second path for a rename or copy), then all the numstat records (`added\tremoved\tpath\0`, or
/// `added\tremoved\t\0old\0new\0`), both in the same order. Fields are read by position, so a
/// path may hold anything, a leading `:` and tabs included.
pub(crate) fn parse_stats(out: &[u8]) -> Vec<FileStat> {
    let mut fields = out.split(|&b| b == 0);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut files: Vec<(Vec<u8>, FileStat)> = Vec::new();
    let mut next = 0;
    while let Some(head) = fields.next() {
        if head.is_empty() {
            continue;
        }
        if head[0] == b':' {
            let letter = head.rsplit(|&b| b == b' ').next().and_then(|s| s.first().copied()).unwrap_or(b'M');
            let Some(first) = fields.next() else { break };
            let (path, old_path) = if matches!(letter, b'R' | b'C') {
                let Some(second) = fields.next() else { break };
                (second, Some(first))
            } else {
                (first, None)
            };
            let status = match letter {
                b'A' | b'C' => FileStatus::Added,
                b'D' => FileStatus::Deleted,
                b'R' => FileStatus::Renamed,
                b'T' => FileStatus::TypeChanged,
                _ => FileStatus::Modified,
            };
            let stat = FileStat {
                path: text(path),
                old_path: (letter == b'R').then(|| old_path.map(text)).flatten(),
                status,
                added: 0,
                removed: 0,
                binary: false,
            };
            files.push((path.to_vec(), stat));
        } else {
            let mut parts = head.splitn(3, |&b| b == b'\t');
            let (added, removed, rest) = (parts.next().unwrap_or(b""), parts.next().unwrap_or(b""), parts.next());
            let path = match rest {
                Some(p) if !p.is_empty() => p,
                // A rename: the old and the new path follow.
                _ => {
                    let _old = fields.next();
                    fields.next().unwrap_or(b"")
                }
            };
            // The same order as the raw records; searched forward in case git skipped one.
            let Some(at) = files[next..].iter().position(|(p, _)| p == path) else { continue };
            let stat = &mut files[next + at].1;
            next += at + 1;
            if added == b"-" && removed == b"-" {
                stat.binary = true;
            } else {
                let count = |b: &[u8]| std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
                stat.added = count(added);
                stat.removed = count(removed);
            }
        }
    }
    files.into_iter().map(|(_, stat)| stat).collect()
}
