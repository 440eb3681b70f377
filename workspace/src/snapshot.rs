//! Checkpoints: snapshots of a working tree made through a private index, listed by ref, and
//! put back.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, open, openat, statat};

use crate::exec::{Call, Out};
use crate::names::{known_rev, ref_arg};
use crate::{Checkpoint, Git, GitError, RefInfo, Repo, Shadow};

/// The fixed identity of checkpoint commits, so that no git configuration is needed.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Ensemble"),
    ("GIT_AUTHOR_EMAIL", "ensemble@localhost"),
    ("GIT_COMMITTER_NAME", "Ensemble"),
    ("GIT_COMMITTER_EMAIL", "ensemble@localhost"),
];

/// `for-each-ref` fields, each ended by a NUL (a message holds no NUL); git ends each ref with a
/// newline, which therefore starts the next ref's first field.
const REF_FORMAT: &str = "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(committerdate:unix)%00%(contents)%00";
const REF_FIELDS: usize = 5;

/// The bytes of paths one command line carries.
const ARGV_CHUNK: usize = 64 * 1024;

impl Git {
    /// A command of the checkpoints of `repo`: `shadow` as its git dir (its configuration, no
    /// user's), `repo`'s work tree, and `repo`'s own `info/exclude` as the excludes file (its
    /// `.gitignore` files are read from the work tree as ever).
    pub(crate) fn in_shadow<'a>(&'a self, repo: &'a Repo, shadow: &'a Shadow) -> Call<'a> {
        let mut excludes = std::ffi::OsString::from("core.excludesFile=");
        excludes.push(repo.common_dir.join("info").join("exclude"));
        self.call_tree(&shadow.dir, &repo.top).arg("-c").arg(excludes)
    }

    /// Snapshots the whole working tree of `repo` as a commit of `shadow` (the server's
    /// repository for it, [`Git::shadow`]): tracked and untracked files, the files `.gitignore`
    /// (and the repository's `info/exclude`) ignore left out unless they are tracked. Nothing of
    /// the user's repository changes — no index, HEAD, branch, stash, ref or object: the snapshot
    /// is staged in the private index file `index` (`GIT_INDEX_FILE`; keep it in the server's
    /// data, not the work tree), which is kept between calls so that git's stat cache makes later
    /// snapshots cheap. A missing `index` is seeded from `repo`'s HEAD (left empty for an unborn
    /// HEAD).
    ///
    /// The commit (parent `repo`'s HEAD commit when there is one, author and committer
    /// `Ensemble <ensemble@localhost>`, unsigned, message `message`) is then pointed at by
    /// `refname` in `shadow`, which must be under `refs/` (`Err(InvalidRef)`); without a ref the
    /// commit would be garbage.
    ///
    /// Left out of the snapshot (and of the private index) and listed in
    /// [`Checkpoint::skipped`]: regular files larger than `max_file_bytes`, without their content
    /// being read; and repositories nested in the work tree that it does not track (a `git init`
    /// or `cargo new` inside it, or a directory with a `.git` file), each named by its directory
    /// with a trailing `/`. While some are, the pathspec file `<index>.skip` is written and
    /// removed beside the index.
    ///
    /// One call at a time per `index` (the caller's lock): a lock file found beside it was left
    /// by a git that was killed, and is removed.
    pub async fn checkpoint(
        &self,
        repo: &Repo,
        shadow: &Shadow,
        index: &Path,
        refname: &str,
        message: &str,
        max_file_bytes: u64,
    ) -> Result<Checkpoint, GitError> {
        let refname = ref_arg(refname)?;
        let index = std::path::absolute(index)?;
        remove_stale_lock(&index).await?;
        let head = self.head(repo).await?;
        if !tokio::fs::try_exists(&index).await? {
            if let Some(dir) = index.parent() {
                tokio::fs::create_dir_all(dir).await?;
            }
            if let Some(head) = &head {
                self.in_shadow(repo, shadow).index(&index).args(["read-tree", head]).ok().await?;
            }
        }
        // Every file `add -A` could stage, tracked (`H`) or not (`?`), to find the big ones by
        // their size alone, and nested repositories (an untracked `dir/`). (`ls-files -m` would
        // ask git to compare them, which reads the content of entries without stat data, as a
        // freshly seeded index has.)
        let listing = self
            .in_shadow(repo, shadow)
            .index(&index)
            .args(["ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard"])
            .ok()
            .await?;
        let dir = repo.top.clone();
        let left_out = tokio::task::spawn_blocking(move || left_out(&dir, &listing, max_file_bytes))
            .await
            .map_err(|e| GitError::Io(std::io::Error::other(e)))??;
        let add = self.in_shadow(repo, shadow).index(&index).args(["add", "-A"]);
        if left_out.is_empty() {
            add.args(["--", ":/"]).ok().await?;
        } else {
            let list = sidecar(&index, ".skip");
            let staged = self.stage_without(repo, shadow, &index, &list, &left_out, add).await;
            let _ = tokio::fs::remove_file(&list).await;
            staged?;
        }
        let tree = self.in_shadow(repo, shadow).index(&index).arg("write-tree").line().await?;
        let commit = self.commit_tree(&shadow.dir, &tree, head.as_deref(), message).await?;
        self.call_git_dir(&shadow.dir).args(["update-ref", refname, &commit]).ok().await?;
        let skipped = left_out.iter().map(|l| String::from_utf8_lossy(&l.shown()).into_owned()).collect();
        Ok(Checkpoint { commit, tree, skipped })
    }

    /// `add -A` of everything but `left_out`, whose tracked ones also leave the private index.
    async fn stage_without(
        &self,
        repo: &Repo,
        shadow: &Shadow,
        index: &Path,
        list: &Path,
        left_out: &[LeftOut],
        add: crate::exec::Call<'_>,
    ) -> Result<(), GitError> {
        // `update-index --force-remove`, not `rm --cached`: rm refreshes the entries it removes,
        // and refreshing an entry whose stat data git smudged (racily clean) reads the file.
        // Collected, not a lazy iterator held across the awaits: its closures' lifetimes keep the
        // future from being provably `Send` (a caller spawns it).
        let tracked: Vec<&OsStr> = left_out.iter().filter(|l| l.tracked).map(|l| OsStr::from_bytes(&l.path)).collect();
        let mut tracked = tracked.into_iter().peekable();
        while tracked.peek().is_some() {
            let mut call = self.in_shadow(repo, shadow).index(index).args(["update-index", "--force-remove", "--"]);
            let mut bytes = 0;
            // Chunks well under any argv limit.
            while bytes < ARGV_CHUNK
                && let Some(path) = tracked.next()
            {
                bytes += path.len() + 1;
                call = call.arg(path);
            }
            call.ok().await?;
        }
        // A file, not the command line: there may be more big files than an argv holds.
        let specs = std::iter::once(b":/".to_vec()).chain(left_out.iter().map(|l| {
            let mut spec = b":(top,exclude,literal)".to_vec();
            spec.extend_from_slice(&l.path);
            spec
        }));
        let specs = nul_joined(specs);
        tokio::fs::write(list, specs).await?;
        add.arg("--pathspec-file-nul").arg(pathspec_from(list)).ok().await.map(drop)
    }

    /// `git commit-tree` of `tree` in the repository at `git_dir`, on `parent` when given.
    pub(crate) async fn commit_tree(
        &self,
        git_dir: &Path,
        tree: &str,
        parent: Option<&str>,
        message: &str,
    ) -> Result<String, GitError> {
        let mut call = self.call_git_dir(git_dir).args(["commit-tree", "--no-gpg-sign", "-m", message]);
        if let Some(parent) = parent {
            call = call.args(["-p", parent]);
        }
        for (key, value) in IDENTITY {
            call = call.env(key, value);
        }
        call.arg(tree).line().await
    }

    /// The refs of `shadow` under `prefix` (for example `refs/ensemble/abc/`, which must be
    /// under `refs/`) that name commits, sorted by ref name, each with its commit, message and
    /// committer time (`git for-each-ref --sort=refname`).
    pub async fn list_refs(&self, shadow: &Shadow, prefix: &str) -> Result<Vec<RefInfo>, GitError> {
        let prefix = ref_arg(prefix)?;
        let out =
            self.call_git_dir(&shadow.dir).args(["for-each-ref", "--sort=refname", REF_FORMAT, prefix]).ok().await?;
        Ok(parse_refs(&out).into_iter().filter(|r| r.refname.starts_with(prefix)).collect())
    }

    /// The full sha of the commit a ref or revision of `shadow` names (`git rev-parse --verify
    /// <rev>^{commit}`; the user's commits are found through its borrowed objects), `None` when
    /// it names none.
    pub async fn resolve(&self, shadow: &Shadow, rev: &str) -> Result<Option<String>, GitError> {
        self.commit_in(&shadow.dir, rev).await
    }

    /// Puts `repo`'s working tree back to the tree of the commit `target` (of `shadow`), through
    /// the private index `index` of [`Git::checkpoint`]: files that `current` (the checkpoint just
    /// taken of the present state) has and `target` lacks are deleted, with the directories that
    /// leaves empty; then the files of `target` are written
    /// (`git read-tree -i -m <target>` into the private index, then `git checkout-index -a -f`),
    /// which rewrites only the files that differ from the index's stat data, so unchanged files
    /// keep their times. Afterwards the private index reflects `target`.
    ///
    /// The user's index, HEAD and branch are not touched, nor are ignored and untracked files
    /// unless `target` has a file at their path. A path is deleted only beneath the top through
    /// real directories (never through a symbolic link, never inside a `.git`), and never a
    /// directory. `Err(UnknownRev)` when `target` or `current` names no commit.
    ///
    /// The files of `keep` (those `current` left out as too large: no checkpoint holds them, so
    /// nothing could bring them back) are never written, also where `target` has them; returns
    /// those that `target` has, left as they are.
    pub async fn restore(
        &self,
        repo: &Repo,
        shadow: &Shadow,
        index: &Path,
        target: &str,
        current: &str,
        keep: &[String],
    ) -> Result<Vec<String>, GitError> {
        let (target, current) = (known_rev(target)?, known_rev(current)?);
        let index = std::path::absolute(index)?;
        remove_stale_lock(&index).await?;
        let gone = self
            .call_git_dir(&shadow.dir)
            .args(["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=D", current, target, "--"])
            .output()
            .await?;
        // Both revisions are known once this succeeded: nothing has changed when it fails.
        let gone = self.succeeded(&shadow.dir, gone, &[current, target]).await?;
        // `-i`: the index is compared with nothing in the work tree; `-m`: entries whose content
        // is unchanged keep their stat data.
        self.in_shadow(repo, shadow).index(&index).args(["read-tree", "-i", "-m", target]).ok().await?;
        // Out of the index, `checkout-index` does not write them (the next checkpoint leaves
        // them out again, as too large).
        let mut kept = Vec::new();
        for chunk in chunked(keep) {
            let listed =
                self.in_shadow(repo, shadow).index(&index).args(["--literal-pathspecs", "ls-files", "-z", "--"]);
            let listed = listed.args(chunk).ok().await?;
            let present: Vec<&[u8]> = listed.split(|&b| b == 0).filter(|p| !p.is_empty()).collect();
            if present.is_empty() {
                continue;
            }
            let paths = present.iter().map(|p| OsStr::from_bytes(p));
            self.in_shadow(repo, shadow)
                .index(&index)
                .args(["update-index", "--force-remove", "--"])
                .args(paths)
                .ok()
                .await?;
            kept.extend(present.iter().map(|p| String::from_utf8_lossy(p).into_owned()));
        }
        let dir = repo.top.clone();
        tokio::task::spawn_blocking(move || delete_all(&dir, &gone))
            .await
            .map_err(|e| GitError::Io(std::io::Error::other(e)))??;
        self.in_shadow(repo, shadow).index(&index).args(["checkout-index", "-a", "-f"]).ok().await?;
        Ok(kept)
    }

    /// Stdout of a finished command, or its error: `UnknownRev` for the first of `revs` that
    /// names no commit in the repository at `git_dir`, when one does not.
    pub(crate) async fn succeeded(&self, git_dir: &Path, out: Out, revs: &[&str]) -> Result<Vec<u8>, GitError> {
        if out.status.success() {
            return Ok(out.stdout);
        }
        for rev in revs {
            if self.commit_in(git_dir, rev).await?.is_none() {
                return Err(GitError::UnknownRev((*rev).to_owned()));
            }
        }
        Err(out.error())
    }
}

/// Removes `<index>.lock`, left by a git killed while it held the index (the caller holds the
/// only lock that lets a git use this index, so a lock file found now is nobody's).
async fn remove_stale_lock(index: &Path) -> Result<(), GitError> {
    match tokio::fs::remove_file(sidecar(index, ".lock")).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `paths` in groups whose bytes fit on one command line.
fn chunked(paths: &[String]) -> Vec<&[String]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, p) in paths.iter().enumerate() {
        if bytes + p.len() > ARGV_CHUNK && i > start {
            out.push(&paths[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += p.len() + 1;
    }
    if start < paths.len() {
        out.push(&paths[start..]);
    }
    out
}

/// `--pathspec-from-file=<list>`.
fn pathspec_from(list: &Path) -> OsString {
    let mut arg = OsString::from("--pathspec-from-file=");
    arg.push(list);
    arg
}

/// `<index><suffix>`.
fn sidecar(index: &Path, suffix: &str) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn nul_joined(items: impl Iterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        out.extend_from_slice(&item);
        out.push(0);
    }
    out
}

/// A path a checkpoint leaves out.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct LeftOut {
    /// From the top of the work tree, without a trailing `/`.
    path: Vec<u8>,
    /// In the index (a tracked file that grew too large).
    tracked: bool,
    /// A nested repository (a directory), not a file too large.
    nested: bool,
}

impl LeftOut {
    /// As listed in `skipped`: a nested repository's directory ends with `/`.
    fn shown(&self) -> Vec<u8> {
        let mut p = self.path.clone();
        if self.nested {
            p.push(b'/');
        }
        p
    }
}

/// What a checkpoint leaves out of an `ls-files -z -t` listing, sorted: the regular files larger
/// than `max` bytes, each with whether it is in the index, and the untracked nested repositories
/// (git lists such a directory, not its files, as `? dir/`: `add -A` would record it as a gitlink,
/// or fail on one without a commit). Only sizes are read: `fstatat` beside a descriptor of each
/// directory (the listing comes directory by directory), which spares the kernel walking the
/// whole path again for each of thousands of files.
fn left_out(top: &Path, listing: &[u8], max: u64) -> std::io::Result<Vec<LeftOut>> {
    let top_fd = open(top, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let mut dir: Option<(&[u8], Option<OwnedFd>)> = None;
    let mut out: Vec<LeftOut> = Vec::new();
    for record in listing.split(|&b| b == 0) {
        // `T path`: a one-letter tag, a space, the path.
        let (Some(&tag), Some(path)) = (record.first(), record.get(2..)) else { continue };
        if let Some(nested) = path.strip_suffix(b"/") {
            if tag == b'?' && !nested.is_empty() {
                out.push(LeftOut { path: nested.to_vec(), tracked: false, nested: true });
            }
            continue;
        }
        let (parent, name) = match path.iter().rposition(|&b| b == b'/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => (&b""[..], path),
        };
        if dir.as_ref().is_none_or(|(d, _)| *d != parent) {
            let fd = if parent.is_empty() {
                None
            } else {
                openat(
                    &top_fd,
                    OsStr::from_bytes(parent),
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .ok()
            };
            dir = Some((parent, fd));
        }
        let at = match &dir {
            _ if parent.is_empty() => top_fd.as_fd(),
            Some((_, Some(fd))) => fd.as_fd(),
            // The directory is gone: so are its files.
            _ => continue,
        };
        let Ok(st) = statat(at, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW) else { continue };
        let size = u64::try_from(st.st_size).unwrap_or(0);
        if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile && size > max {
            out.push(LeftOut { path: path.to_vec(), tracked: tag != b'?', nested: false });
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

/// Deletes each NUL-separated path beneath `top`, then the directories that leaves empty.
fn delete_all(top: &Path, paths: &[u8]) -> std::io::Result<()> {
    for path in paths.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let rel = Path::new(OsStr::from_bytes(path));
        if !beneath(top, rel) {
            continue;
        }
        let full = top.join(rel);
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if !meta.is_dir() => match std::fs::remove_file(&full) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            },
            _ => continue,
        }
        // Up to the top, as long as each directory is left empty (`remove_dir` refuses others).
        let mut dir = full.parent();
        while let Some(d) = dir
            && d != top
            && std::fs::remove_dir(d).is_ok()
        {
            dir = d.parent();
        }
    }
    Ok(())
}

/// Whether the relative `rel` is a plain path beneath `top` whose every directory is a real
/// directory (not a link that would lead elsewhere), and not inside a `.git`.
fn beneath(top: &Path, rel: &Path) -> bool {
    let mut dir = top.to_path_buf();
    let mut components = rel.components().peekable();
    while let Some(c) = components.next() {
        let Component::Normal(name) = c else { return false };
        if name.eq_ignore_ascii_case(".git") {
            return false;
        }
        if components.peek().is_none() {
            return true;
        }
        dir.push(name);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            _ => return false,
        }
    }
    false
}

/// The refs of a `REF_FORMAT` listing that name commits.
fn parse_refs(out: &[u8]) -> Vec<RefInfo> {
    let fields: Vec<&[u8]> = out.split(|&b| b == 0).collect();
    fields
        .chunks_exact(REF_FIELDS)
        .filter(|f| f[1] == b"commit")
        .map(|f| {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let refname = f[0].strip_prefix(b"\n").unwrap_or(f[0]);
            let secs: i64 = std::str::from_utf8(f[3]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
            RefInfo {
                refname: text(refname),
                commit: text(f[2]),
                message: text(f[4]).trim_end_matches('\n').to_owned(),
                time_ms: secs.saturating_mul(1000),
            }
        })
        .collect()
}
