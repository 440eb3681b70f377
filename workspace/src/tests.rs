#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::*;

const MAX: u64 = 1 << 20;

/// Runs git the way a user would (with an identity on the command line: no configuration is
/// assumed), asserting success, and returns stdout.
pub(super) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

pub(super) fn write(top: &Path, rel: &str, content: &str) {
    let path = top.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

/// A user's repository, its server-side checkpoint repository and a private index.
pub(super) struct Fx {
    _tmp: tempfile::TempDir,
    pub(super) top: PathBuf,
    pub(super) index: PathBuf,
    pub(super) repo: Repo,
    pub(super) shadow: Shadow,
}

/// The repository at `top` as a session finds it, and its checkpoint repository beside.
pub(super) async fn found(tmp: tempfile::TempDir, top: PathBuf) -> Fx {
    let g = Git::default();
    let repo = g.discover(&top).await.unwrap().unwrap();
    let shadow = g.shadow(&repo.common_dir, &repo.object_format, &tmp.path().join("shadow.git")).await.unwrap();
    let index = tmp.path().join("private").join("index");
    Fx { top, index, repo, shadow, _tmp: tmp }
}

/// Git on the checkpoint repository (where the checkpoints are, not the user's).
pub(super) fn sgit(r: &Fx, args: &[&str]) -> String {
    let mut all = vec!["--git-dir", r.shadow.dir.to_str().unwrap()];
    all.extend_from_slice(args);
    git(&r.top, &all)
}

/// A repository on `main` with one commit: `a.txt`, `b.txt`, `c.txt` and a `.gitignore` of
/// `*.log` and `build/`.
pub(super) async fn repo() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("repo");
    fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    write(&top, "a.txt", "one\ntwo\nthree\n");
    write(&top, "b.txt", "bee\n");
    write(&top, "c.txt", "sea\n");
    write(&top, ".gitignore", "*.log\nbuild/\n");
    git(&top, &["add", "-A"]);
    git(&top, &["commit", "-q", "-m", "init"]);
    found(tmp, top).await
}

pub(super) fn tree_files(r: &Fx, commit: &str) -> Vec<String> {
    sgit(r, &["ls-tree", "-r", "-z", "--name-only", commit])
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn head(top: &Path) -> String {
    git(top, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// Everything of the user's git state a checkpoint or a restore must leave alone.
fn user_state(top: &Path) -> Vec<String> {
    vec![
        git(top, &["rev-parse", "HEAD"]),
        git(top, &["symbolic-ref", "HEAD"]),
        git(top, &["diff", "--cached"]),
        git(top, &["status", "--porcelain"]),
        git(top, &["stash", "list"]),
        git(top, &["for-each-ref"]),
        git(top, &["count-objects"]),
    ]
}

pub(super) async fn checkpoint(r: &Fx, name: &str) -> Checkpoint {
    Git::default()
        .checkpoint(&r.repo, &r.shadow, &r.index, &format!("refs/ensemble/s/{name}"), name, MAX)
        .await
        .unwrap()
}

#[tokio::test]
async fn checkpoint_includes_untracked_files_and_excludes_ignored_ones() {
    let r = repo().await;
    write(&r.top, "new.txt", "new\n");
    write(&r.top, "sub/deep.txt", "deep\n");
    write(&r.top, "x.log", "ignored\n");
    write(&r.top, "build/out.o", "ignored\n");
    let cp = checkpoint(&r, "1").await;
    let files = tree_files(&r, &cp.commit);
    assert_eq!(files, [".gitignore", "a.txt", "b.txt", "c.txt", "new.txt", "sub/deep.txt"]);
    assert!(cp.skipped.is_empty());
    assert_eq!(sgit(&r, &["rev-parse", "refs/ensemble/s/1"]).trim(), cp.commit);
    assert_eq!(sgit(&r, &["rev-parse", &format!("{}^{{tree}}", cp.commit)]).trim(), cp.tree);
    assert_eq!(sgit(&r, &["rev-parse", &format!("{}^", cp.commit)]).trim(), head(&r.top));
    let who = sgit(&r, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", &cp.commit]);
    assert_eq!(who.trim(), "Ensemble <ensemble@localhost>|Ensemble <ensemble@localhost>|1");
}

#[tokio::test]
async fn checkpoint_leaves_the_users_index_head_branch_and_stash_alone() {
    let r = repo().await;
    write(&r.top, "c.txt", "stashed\n");
    git(&r.top, &["stash", "push", "-q"]);
    write(&r.top, "a.txt", "staged\n");
    git(&r.top, &["add", "a.txt"]);
    write(&r.top, "b.txt", "unstaged\n");
    write(&r.top, "untracked.txt", "u\n");
    let before = user_state(&r.top);
    // The status above may have refreshed the index; from here on its bytes must not change.
    let index_bytes = fs::read(r.top.join(".git/index")).unwrap();
    let cp = checkpoint(&r, "1").await;
    let again = checkpoint(&r, "2").await;
    assert_eq!(fs::read(r.top.join(".git/index")).unwrap(), index_bytes);
    assert_eq!(user_state(&r.top), before);
    // The snapshot has the working tree's content, staged or not.
    assert_eq!(sgit(&r, &["show", &format!("{}:a.txt", cp.commit)]), "staged\n");
    assert_eq!(sgit(&r, &["show", &format!("{}:b.txt", cp.commit)]), "unstaged\n");
    assert_eq!(sgit(&r, &["show", &format!("{}:untracked.txt", cp.commit)]), "u\n");
    assert_eq!(again.tree, cp.tree);
}

#[tokio::test]
async fn a_second_checkpoint_after_one_edit_reports_exactly_that_file() {
    let r = repo().await;
    let g = Git::default();
    let cp1 = checkpoint(&r, "1").await;
    write(&r.top, "a.txt", "one\nTWO\nthree\nfour\n");
    let cp2 = checkpoint(&r, "2").await;
    let changes = g.changes(&r.shadow, &cp1.commit, &cp2.commit, None, 1 << 20).await.unwrap();
    assert_eq!(
        changes.files,
        [FileStat {
            path: "a.txt".into(),
            old_path: None,
            status: FileStatus::Modified,
            added: 2,
            removed: 1,
            binary: false
        }]
    );
    assert!(changes.diff.contains("\n-two\n+TWO\n"), "{}", changes.diff);
    assert!(changes.diff.starts_with("diff --git a/a.txt b/a.txt\n"), "{}", changes.diff);
    assert!(!changes.truncated);
    let none = g.changes(&r.shadow, &cp2.commit, &cp2.commit, None, 1 << 20).await.unwrap();
    assert_eq!(none, Changes { files: vec![], diff: String::new(), truncated: false });
}

#[tokio::test]
async fn changes_reports_added_deleted_renamed_binary_and_type_changed_files() {
    let r = repo().await;
    let g = Git::default();
    write(&r.top, "old.txt", &"a line that makes the file long enough to be recognised\n".repeat(20));
    let cp1 = checkpoint(&r, "1").await;
    fs::rename(r.top.join("old.txt"), r.top.join("moved.txt")).unwrap();
    fs::remove_file(r.top.join("b.txt")).unwrap();
    fs::write(r.top.join("bin.dat"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    write(&r.top, "new.txt", "x\ny\n");
    fs::remove_file(r.top.join("c.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", r.top.join("c.txt")).unwrap();
    let cp2 = checkpoint(&r, "2").await;
    let files = g.changes(&r.shadow, &cp1.commit, &cp2.commit, None, 1 << 20).await.unwrap().files;
    let row = |path: &str| files.iter().find(|f| f.path == path).unwrap().clone();
    assert_eq!(files.len(), 5, "{files:?}");
    assert_eq!(row("b.txt").status, FileStatus::Deleted);
    assert_eq!((row("b.txt").added, row("b.txt").removed), (0, 1));
    assert_eq!(row("new.txt").status, FileStatus::Added);
    assert_eq!((row("new.txt").added, row("new.txt").removed), (2, 0));
    let moved = row("moved.txt");
    assert_eq!((moved.status, moved.old_path.as_deref()), (FileStatus::Renamed, Some("old.txt")));
    assert_eq!((moved.added, moved.removed), (0, 0));
    let bin = row("bin.dat");
    assert_eq!((bin.status, bin.binary, bin.added), (FileStatus::Added, true, 0));
    assert_eq!(row("c.txt").status, FileStatus::TypeChanged);
}

#[tokio::test]
async fn file_names_with_spaces_newlines_and_odd_bytes_are_read_whole() {
    let r = repo().await;
    let g = Git::default();
    let cp1 = checkpoint(&r, "1").await;
    write(&r.top, "with space.txt", "s\n");
    write(&r.top, "new\nline.txt", "n\n");
    write(&r.top, ":colon\ttab.txt", "c\n");
    fs::write(r.top.join(OsStr::from_bytes(b"caf\xe9.txt")), "latin-1\n").unwrap();
    let cp2 = checkpoint(&r, "2").await;
    let changes = g.changes(&r.shadow, &cp1.commit, &cp2.commit, None, 1 << 20).await.unwrap();
    let mut paths: Vec<&str> = changes.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, [":colon\ttab.txt", "caf\u{fffd}.txt", "new\nline.txt", "with space.txt"]);
    assert!(changes.files.iter().all(|f| f.status == FileStatus::Added && f.added == 1));
    let one = g.changes(&r.shadow, &cp1.commit, &cp2.commit, Some("new\nline.txt"), 1 << 20).await.unwrap();
    assert_eq!(one.files.len(), 1);
    assert!(one.diff.contains("+n\n"), "{}", one.diff);
    // And a restore deletes them all by their exact names.
    g.restore(&r.repo, &r.shadow, &r.index, &cp1.commit, &cp2.commit, &[]).await.unwrap();
    assert_eq!(git(&r.top, &["status", "--porcelain"]), "");
}

#[tokio::test]
async fn the_diff_is_cut_at_a_line_boundary_and_path_selects_one_file_literally() {
    let r = repo().await;
    let g = Git::default();
    let cp1 = checkpoint(&r, "1").await;
    let long: String = (0..200).map(|i| format!("line number {i}\n")).collect();
    write(&r.top, "a.txt", &long);
    write(&r.top, "b.txt", "changed bee\n");
    write(&r.top, "*.txt", "star\n");
    let cp2 = checkpoint(&r, "2").await;
    let cut = g.changes(&r.shadow, &cp1.commit, &cp2.commit, None, 500).await.unwrap();
    assert!(cut.truncated);
    assert!(cut.diff.len() <= 500 && cut.diff.len() > 400, "{}", cut.diff.len());
    assert!(cut.diff.ends_with('\n'));
    assert_eq!(cut.files.len(), 3, "the file list is whole");
    let list = g.changes(&r.shadow, &cp1.commit, &cp2.commit, None, 0).await.unwrap();
    assert_eq!((list.files, list.diff.as_str(), list.truncated), (cut.files.clone(), "", true));
    let whole = g.changes(&r.shadow, &cp1.commit, &cp2.commit, None, 1 << 20).await.unwrap();
    assert!(!whole.truncated);
    assert!(whole.diff.starts_with(&cut.diff));
    let b = g.changes(&r.shadow, &cp1.commit, &cp2.commit, Some("b.txt"), 1 << 20).await.unwrap();
    assert_eq!(b.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["b.txt"]);
    assert!(b.diff.starts_with("diff --git a/b.txt b/b.txt\n") && !b.diff.contains("a.txt"), "{}", b.diff);
    let star = g.changes(&r.shadow, &cp1.commit, &cp2.commit, Some("*.txt"), 1 << 20).await.unwrap();
    assert_eq!(star.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["*.txt"]);
    let missing = g.changes(&r.shadow, &cp1.commit, &cp2.commit, Some("nothing-here"), 1 << 20).await.unwrap();
    assert_eq!(missing.files, []);
    let err = g.changes(&r.shadow, "refs/ensemble/s/none", &cp2.commit, None, 100).await.unwrap_err();
    assert!(matches!(&err, GitError::UnknownRev(rev) if rev == "refs/ensemble/s/none"), "{err:?}");
    let err = g.changes(&r.shadow, &cp1.commit, "--output=/tmp/x", None, 100).await.unwrap_err();
    assert_eq!(err.code(), "unknown_rev");
}

#[tokio::test]
async fn files_over_the_limit_are_skipped_unread_and_listed() {
    let r = repo().await;
    // Sparse files of 16 GiB: hashing one would take far longer than this runner's deadline.
    let g = Git::new("git".into(), Duration::from_secs(15));
    let huge = 16u64 << 30;
    write(&r.top, "tracked.bin", "small\n");
    git(&r.top, &["add", "tracked.bin"]);
    git(&r.top, &["commit", "-q", "-m", "tracked"]);
    fs::File::create(r.top.join("tracked.bin")).unwrap().set_len(huge).unwrap();
    fs::File::create(r.top.join("untracked.bin")).unwrap().set_len(huge).unwrap();
    write(&r.top, "small.txt", "small\n");
    // Seeded from HEAD, where tracked.bin is small: it leaves the private index.
    let cp1 = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/1", "1", MAX).await.unwrap();
    assert_eq!(cp1.skipped, ["tracked.bin", "untracked.bin"]);
    let files = tree_files(&r, &cp1.commit);
    assert!(files.contains(&"small.txt".to_owned()) && !files.iter().any(|f| f.ends_with(".bin")), "{files:?}");
    let cp2 = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/2", "2", MAX).await.unwrap();
    assert_eq!((cp2.skipped, cp2.tree), (cp1.skipped, cp1.tree));
    // Small again: snapshotted again.
    fs::write(r.top.join("tracked.bin"), "small again\n").unwrap();
    let cp3 = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/3", "3", MAX).await.unwrap();
    assert_eq!(cp3.skipped, ["untracked.bin"]);
    assert_eq!(sgit(&r, &["show", &format!("{}:tracked.bin", cp3.commit)]), "small again\n");
    // Growing past the limit once snapshotted.
    fs::File::create(r.top.join("tracked.bin")).unwrap().set_len(huge).unwrap();
    let cp4 = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/4", "4", MAX).await.unwrap();
    assert_eq!(cp4.skipped, ["tracked.bin", "untracked.bin"]);
    assert!(!tree_files(&r, &cp4.commit).contains(&"tracked.bin".to_owned()));
    assert!(!r.index.with_extension("skip").exists() && !PathBuf::from(format!("{}.skip", r.index.display())).exists());
    // Back to cp3, which has a small tracked.bin: the huge one is in no checkpoint, so nothing
    // could bring it back; it is kept, and said so. The rest is restored.
    fs::write(r.top.join("small.txt"), "changed\n").unwrap();
    let cp5 = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/5", "5", MAX).await.unwrap();
    let kept = g.restore(&r.repo, &r.shadow, &r.index, &cp3.commit, &cp5.commit, &cp5.skipped).await.unwrap();
    assert_eq!(kept, ["tracked.bin"], "untracked.bin is not in cp3");
    assert_eq!(fs::metadata(r.top.join("tracked.bin")).unwrap().len(), huge);
    assert_eq!(fs::metadata(r.top.join("untracked.bin")).unwrap().len(), huge);
    assert_eq!(fs::read_to_string(r.top.join("small.txt")).unwrap(), "small\n");
}

#[tokio::test]
async fn restore_puts_the_working_tree_back_and_leaves_the_rest_alone() {
    let r = repo().await;
    let g = Git::default();
    write(&r.top, "a.txt", "staged\n");
    git(&r.top, &["add", "a.txt"]);
    write(&r.top, "keep.log", "ignored, kept\n");
    let base = checkpoint(&r, "1").await;
    let before = user_state(&r.top);
    let index_bytes = fs::read(r.top.join(".git/index")).unwrap();
    let untouched = fs::metadata(r.top.join("c.txt")).unwrap().modified().unwrap();

    fs::remove_file(r.top.join("b.txt")).unwrap();
    write(&r.top, "a.txt", "changed by the turn\n");
    write(&r.top, "added.txt", "new\n");
    write(&r.top, "deep/er/added.txt", "new\n");
    write(&r.top, "deep/kept.log", "ignored\n");
    write(&r.top, "gone/only.txt", "new\n");
    write(&r.top, "later.log", "ignored, made by the turn\n");
    let now = checkpoint(&r, "2").await;
    g.restore(&r.repo, &r.shadow, &r.index, &base.commit, &now.commit, &[]).await.unwrap();

    assert_eq!(fs::read_to_string(r.top.join("a.txt")).unwrap(), "staged\n");
    assert_eq!(fs::read_to_string(r.top.join("b.txt")).unwrap(), "bee\n");
    assert!(!r.top.join("added.txt").exists() && !r.top.join("deep/er").exists() && !r.top.join("gone").exists());
    assert_eq!(fs::read_to_string(r.top.join("deep/kept.log")).unwrap(), "ignored\n");
    assert_eq!(fs::read_to_string(r.top.join("keep.log")).unwrap(), "ignored, kept\n");
    assert!(r.top.join("later.log").exists());
    assert_eq!(
        fs::metadata(r.top.join("c.txt")).unwrap().modified().unwrap(),
        untouched,
        "unchanged files are not rewritten"
    );
    assert_eq!(fs::read(r.top.join(".git/index")).unwrap(), index_bytes);
    assert_eq!(user_state(&r.top), before);
    // The private index now reflects the target: the next checkpoint is the base again.
    assert_eq!(checkpoint(&r, "3").await.tree, base.tree);
    // And forwards again.
    let back = checkpoint(&r, "4").await;
    g.restore(&r.repo, &r.shadow, &r.index, &now.commit, &back.commit, &[]).await.unwrap();
    assert_eq!(checkpoint(&r, "5").await.tree, now.tree);
    assert!(r.top.join("deep/er/added.txt").exists() && !r.top.join("b.txt").exists());

    let err = g.restore(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/none", &now.commit, &[]).await.unwrap_err();
    assert!(matches!(&err, GitError::UnknownRev(rev) if rev == "refs/ensemble/s/none"), "{err:?}");
}

#[tokio::test]
async fn restore_never_deletes_through_a_symbolic_link() {
    let r = repo().await;
    let g = Git::default();
    let outside = r.top.parent().unwrap().join("outside");
    write(&outside, "victim.txt", "precious\n");
    let base = checkpoint(&r, "1").await;
    write(&r.top, "d/victim.txt", "turn\n");
    let now = checkpoint(&r, "2").await;
    // The directory is swapped for a link to elsewhere before the restore.
    fs::remove_dir_all(r.top.join("d")).unwrap();
    std::os::unix::fs::symlink(&outside, r.top.join("d")).unwrap();
    g.restore(&r.repo, &r.shadow, &r.index, &base.commit, &now.commit, &[]).await.unwrap();
    assert_eq!(fs::read_to_string(outside.join("victim.txt")).unwrap(), "precious\n");
}

#[tokio::test]
async fn create_worktree_refuses_what_it_cannot_make() {
    let r = repo().await;
    let g = Git::default();
    let at = |name: &str| r.top.parent().unwrap().join(name);
    let head = head(&r.top);
    let err = g.create_worktree(&r.repo.common_dir, &r.shadow, "nope", "s1", &at("w")).await.unwrap_err();
    assert!(matches!(&err, GitError::UnknownBase(b) if b == "nope"), "{err:?}");
    let err = g.create_worktree(&r.repo.common_dir, &r.shadow, "-x", "s1", &at("w")).await.unwrap_err();
    assert_eq!(err.code(), "unknown_base");
    let err = g.create_worktree(&r.repo.common_dir, &r.shadow, &head, "main", &at("w")).await.unwrap_err();
    assert!(matches!(&err, GitError::BranchExists(b) if b == "main"), "{err:?}");
    git(&r.top, &["checkout", "-q", "-b", "other"]);
    git(&r.top, &["checkout", "-q", "main"]);
    for bad in ["a..b", "@{-1}", "-x", "x.lock", "with space", "", "HEAD"] {
        let err = g.create_worktree(&r.repo.common_dir, &r.shadow, &head, bad, &at("w")).await.unwrap_err();
        assert!(matches!(&err, GitError::InvalidBranch(b) if b == bad), "{bad:?}: {err:?}");
    }
    assert!(!at("w").exists());
    let plain = tempfile::tempdir().unwrap();
    assert_eq!(g.discover(plain.path()).await.unwrap(), None);
    assert_eq!(g.discover(&at("missing")).await.unwrap_err().code(), "io");
}

#[tokio::test]
async fn a_base_is_a_full_commit_id_or_a_branch_and_nothing_else() {
    let r = repo().await;
    let g = Git::default();
    let head = head(&r.top);
    git(&r.top, &["tag", "v1"]);
    git(&r.top, &["branch", "feature/x"]);
    assert_eq!(g.base_commit(&r.repo.common_dir, &head).await.unwrap(), head);
    assert_eq!(g.base_commit(&r.repo.common_dir, &head.to_uppercase()).await.unwrap(), head);
    assert_eq!(g.base_commit(&r.repo.common_dir, "main").await.unwrap(), head);
    assert_eq!(g.base_commit(&r.repo.common_dir, "feature/x").await.unwrap(), head);
    // An abbreviation (probing for other sessions' commits by prefix), a tag, an expression, a
    // ref name, an option: none is a base.
    for bad in [&head[..12], &head[..39], "v1", "main~0", "HEAD", "refs/heads/main", "@{-1}", "-x", "main^{tree}", ""] {
        let err = g.base_commit(&r.repo.common_dir, bad).await.unwrap_err();
        assert!(matches!(&err, GitError::UnknownBase(b) if b == bad), "{bad:?}: {err:?}");
    }
    let missing = "0".repeat(40);
    assert_eq!(g.base_commit(&r.repo.common_dir, &missing).await.unwrap_err().code(), "unknown_base");
}

#[tokio::test]
async fn worktrees_are_made_committed_to_and_removed() {
    let r = repo().await;
    let g = Git::default();
    let path = r.top.parent().unwrap().join("wt");
    let wt = g.create_worktree(&r.repo.common_dir, &r.shadow, "HEAD", "ensemble/s1", &path).await.unwrap();
    assert_eq!(
        (wt.path.as_path(), wt.branch.as_str(), wt.base_commit.clone()),
        (path.as_path(), "ensemble/s1", head(&r.top))
    );
    assert_eq!(wt.repo.top, path.canonicalize().unwrap());
    assert_eq!(wt.repo.common_dir, r.repo.common_dir);
    assert_eq!(wt.repo.git_dir, r.repo.common_dir.join("worktrees").join("wt"));
    assert_eq!(git(&path, &["symbolic-ref", "--short", "HEAD"]).trim(), "ensemble/s1");
    assert_eq!(fs::read_to_string(path.join("a.txt")).unwrap(), "one\ntwo\nthree\n");
    assert_eq!(git(&path, &["status", "--porcelain"]), "", "the worktree's own index matches its files");
    assert_eq!(g.work_tree_top(&path).await.unwrap().unwrap(), path.canonicalize().unwrap());
    // From a given base.
    let first = head(&r.top);
    write(&r.top, "a.txt", "second\n");
    git(&r.top, &["commit", "-q", "-am", "second"]);
    let old = r.top.parent().unwrap().join("old");
    let wt2 = g.create_worktree(&r.repo.common_dir, &r.shadow, &first, "ensemble/s2", &old).await.unwrap();
    assert_eq!(wt2.base_commit, first);
    assert_eq!(fs::read_to_string(old.join("a.txt")).unwrap(), "one\ntwo\nthree\n");

    // commit_all in the session's worktree.
    let err = g.commit_all(&wt.repo, &r.shadow, "nothing", Some(("Agent", "agent@example.com"))).await.unwrap_err();
    assert!(matches!(err, GitError::NothingToCommit), "{err:?}");
    write(&path, "work.txt", "done\n");
    fs::remove_file(path.join("b.txt")).unwrap();
    let sha =
        g.commit_all(&wt.repo, &r.shadow, "the session's work", Some(("Agent", "agent@example.com"))).await.unwrap();
    assert_eq!(git(&path, &["rev-parse", "HEAD"]).trim(), sha);
    assert_eq!(
        git(&path, &["log", "-1", "--format=%an <%ae> %cn|%s"]).trim(),
        "Agent <agent@example.com> Agent|the session's work"
    );
    assert_eq!(git(&path, &["show", "--name-status", "--format=", "HEAD"]), "D\tb.txt\nA\twork.txt\n");
    assert_eq!(git(&path, &["status", "--porcelain"]), "");
    assert!(git(&path, &["reflog", "-1", "--format=%gs"]).contains("commit: the session's work"));
    // Without an author: the repository's configured identity.
    git(&r.top, &["config", "user.name", "Configured"]);
    git(&r.top, &["config", "user.email", "c@example.com"]);
    write(&path, "more.txt", "more\n");
    g.commit_all(&wt.repo, &r.shadow, "more", None).await.unwrap();
    assert_eq!(git(&path, &["log", "-1", "--format=%an <%ae>"]).trim(), "Configured <c@example.com>");

    // Unmerged: the worktree goes, the branch stays.
    let common = &r.repo.common_dir;
    let tip = head(&path);
    let err = g.remove_worktree(common, &path, Some("ensemble/s1"), false).await.unwrap_err();
    assert!(matches!(&err, GitError::BranchNotMerged(b) if b == "ensemble/s1"), "{err:?}");
    assert!(!path.exists());
    assert_eq!(git(&r.top, &["rev-parse", "refs/heads/ensemble/s1"]).trim(), tip);
    g.remove_worktree(common, &path, Some("ensemble/s1"), true).await.unwrap();
    assert_eq!(git(&r.top, &["branch", "--list", "ensemble/s1"]), "");
    // Merged (its base is an ancestor of HEAD): `-d` deletes it.
    g.remove_worktree(common, &old, Some("ensemble/s2"), false).await.unwrap();
    assert!(!old.exists());
    assert_eq!(git(&r.top, &["branch", "--list", "ensemble/*"]), "");
    assert_eq!(git(&r.top, &["worktree", "list", "--porcelain"]).matches("worktree ").count(), 1);
    // Gone already, and no such branch: nothing to do.
    g.remove_worktree(common, &old, Some("ensemble/s2"), false).await.unwrap();
    g.prune_worktrees(common).await.unwrap();
    let _ = sha;
}

#[tokio::test]
async fn discover_knows_where_a_work_tree_and_its_git_dirs_are() {
    let r = repo().await;
    let g = Git::default();
    let top = r.top.canonicalize().unwrap();
    write(&r.top, "sub/dir/f.txt", "f\n");
    let found = g.discover(&r.top.join("sub/dir")).await.unwrap().unwrap();
    assert_eq!(
        found,
        Repo {
            top: top.clone(),
            git_dir: top.join(".git"),
            common_dir: top.join(".git"),
            object_format: "sha1".into()
        }
    );
    assert_eq!(g.work_tree_top(&r.top).await.unwrap(), Some(top));
    assert_eq!(g.work_tree_top(&r.top.join(".git")).await.unwrap(), None);
    assert_eq!(g.work_tree_top(&r.top.join(".git/refs")).await.unwrap(), None);
    let plain = tempfile::tempdir().unwrap();
    assert_eq!(g.work_tree_top(plain.path()).await.unwrap(), None);
    let err = g.work_tree_top(&plain.path().join("missing")).await.unwrap_err();
    assert_eq!(err.code(), "io");
    assert!(g.version().await.unwrap().starts_with("git version "));
}

#[tokio::test]
async fn a_missing_or_broken_binary_is_unavailable() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = Git::new(tmp.path().join("no-such-git"), Duration::from_secs(5));
    let err = missing.version().await.unwrap_err();
    assert!(matches!(err, GitError::Unavailable(_)), "{err:?}");
    let err = missing.work_tree_top(tmp.path()).await.unwrap_err();
    assert_eq!(err.code(), "git_unavailable");
    let broken = Git::new("false".into(), Duration::from_secs(5));
    assert_eq!(broken.version().await.unwrap_err().code(), "git_unavailable");
}

#[tokio::test]
async fn a_command_past_its_deadline_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("alive");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // A "git" that holds the FIFO open for as long as it lives (`exec` keeps the pid).
    let bin = tmp.path().join("slow-git");
    fs::write(&bin, format!("#!/bin/sh\nexec 3>'{}'\nprintf started >&3\nexec sleep 30\n", fifo.display())).unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    // The reader sees the end of the FIFO once every writer is gone: the killed process, and the
    // test's own writer below (which keeps this from blocking if the script never opened it).
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = String::new();
            fs::File::open(&fifo).unwrap().read_to_string(&mut got).unwrap();
            (got, Instant::now())
        })
    };
    let slow = Git::new(bin, Duration::from_secs(2));
    let started = Instant::now();
    let err = loop {
        match slow.version().await {
            // Another test's fork may briefly hold the just-written script open.
            Err(GitError::Io(e)) if e.raw_os_error() == Some(26) => continue,
            other => break other.unwrap_err(),
        }
    };
    assert!(matches!(&err, GitError::Timeout(cmd) if cmd == "git --version"), "{err:?}");
    // Non-blocking: once the killed process is gone and the reader has seen the end, nobody reads
    // any more, and a blocking open would wait for a reader for ever; this one then fails at once.
    let nonblock = i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).unwrap();
    drop(std::os::unix::fs::OpenOptionsExt::custom_flags(fs::OpenOptions::new().write(true), nonblock).open(&fifo));
    let (got, ended) = reader.join().unwrap();
    assert_eq!(got, "started");
    assert!(ended.duration_since(started) < Duration::from_secs(20), "the process outlived its deadline");
}

#[tokio::test]
async fn list_refs_and_resolve() {
    let r = repo().await;
    let g = Git::default();
    let cp1 = checkpoint(&r, "0001").await;
    write(&r.top, "a.txt", "2\n");
    let cp2 = g
        .checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/0002", "line one\n\nline three", MAX)
        .await
        .unwrap();
    g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/sx/0001", "other session", MAX).await.unwrap();
    sgit(&r, &["update-ref", "refs/ensemble/s/tree", &cp1.tree]);
    let refs = g.list_refs(&r.shadow, "refs/ensemble/s/").await.unwrap();
    assert_eq!(refs.len(), 2, "{refs:?}");
    assert_eq!(
        (refs[0].refname.as_str(), refs[0].commit.as_str(), refs[0].message.as_str()),
        ("refs/ensemble/s/0001", cp1.commit.as_str(), "0001")
    );
    assert_eq!((refs[1].refname.as_str(), refs[1].commit.as_str()), ("refs/ensemble/s/0002", cp2.commit.as_str()));
    assert_eq!(refs[1].message, "line one\n\nline three");
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    assert!(refs.iter().all(|r| r.time_ms % 1000 == 0 && (now_ms - r.time_ms).abs() < 600_000), "{refs:?}");
    assert_eq!(g.list_refs(&r.shadow, "refs/ensemble/none/").await.unwrap(), []);
    assert_eq!(g.list_refs(&r.shadow, "ensemble/s/").await.unwrap_err().code(), "invalid_ref");

    assert_eq!(g.resolve(&r.shadow, "refs/ensemble/s/0002").await.unwrap(), Some(cp2.commit.clone()));
    // The user's commits through the borrowed objects.
    assert_eq!(g.resolve(&r.shadow, &head(&r.top)).await.unwrap(), Some(head(&r.top)));
    assert_eq!(g.resolve(&r.shadow, "refs/ensemble/s/tree").await.unwrap(), None, "a tree is no commit");
    assert_eq!(g.resolve(&r.shadow, "nope").await.unwrap(), None);
    assert_eq!(g.resolve(&r.shadow, "--all").await.unwrap(), None);
    let err = g.checkpoint(&r.repo, &r.shadow, &r.index, "HEAD", "m", MAX).await.unwrap_err();
    assert!(matches!(&err, GitError::InvalidRef(name) if name == "HEAD"), "{err:?}");
    let plain = tempfile::tempdir().unwrap();
    let err = g.resolve(&Shadow { dir: plain.path().to_path_buf() }, "HEAD").await.unwrap_err();
    assert!(matches!(&err, GitError::NotARepo(p) if p == plain.path()), "{err:?}");
    // Purged: its refs go; the last one makes the checkpoint repository empty.
    assert_eq!(g.delete_refs(&r.shadow, "refs/ensemble/s/").await.unwrap(), 3 - 1, "the tree ref is not a checkpoint");
    assert!(!g.shadow_is_empty(&r.shadow).await.unwrap());
    sgit(&r, &["update-ref", "-d", "refs/ensemble/s/tree"]);
    g.delete_refs(&r.shadow, "refs/ensemble/sx/").await.unwrap();
    assert!(g.shadow_is_empty(&r.shadow).await.unwrap());
}

#[tokio::test]
async fn an_unborn_head_is_checkpointed_without_a_parent() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("repo");
    fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    let r = found(tmp, top.clone()).await;
    let g = Git::default();
    let empty = checkpoint(&r, "1").await;
    assert_eq!(tree_files(&r, &empty.commit), Vec::<String>::new());
    write(&top, "f.txt", "f\n");
    let cp = checkpoint(&r, "2").await;
    assert_eq!(sgit(&r, &["rev-list", "--parents", "-n1", &cp.commit]).split_whitespace().count(), 1);
    let changes = g.changes(&r.shadow, &empty.commit, &cp.commit, None, 1000).await.unwrap();
    assert_eq!(changes.files.len(), 1);
    assert_eq!(git(&top, &["status", "--porcelain"]), "?? f.txt\n");
    let sha = g.commit_all(&r.repo, &r.shadow, "first", Some(("A", "a@a"))).await.unwrap();
    assert_eq!(head(&top), sha);
    assert_eq!(git(&top, &["status", "--porcelain"]), "");
}

#[test]
fn ref_component_makes_names_git_accepts() {
    let cases = [
        ("fix the bug", "fix-the-bug"),
        ("a..b", "a.b"),
        ("...x", "x"),
        ("-x", "x"),
        ("x.lock", "x-lock"),
        ("x.lock.", "x-lock"),
        ("x.", "x"),
        ("", "_"),
        ("@", "_"),
        ("..", "_"),
        ("a/b", "a-b"),
        ("ünï", "n-"),
        ("we@{ird}~^:?*[\\", "we--ird--------"),
        ("ok_name-1.2", "ok_name-1.2"),
    ];
    for (input, want) in cases {
        assert_eq!(Git::ref_component(input), want, "{input:?}");
    }
    let long = Git::ref_component(&format!("{}.", "y".repeat(99)));
    assert_eq!(long, "y".repeat(99));
    let long = Git::ref_component(&"z".repeat(500));
    assert_eq!(long.len(), names::MAX_COMPONENT);
    let tmp = tempfile::tempdir().unwrap();
    for input in ["a..b", ".x.lock.", "x/../y", "@{-1}", "a//b", "~tilde", " lead", "trail.", "\u{7f}ctl\n", "end.lock"]
    {
        let name = format!("ensemble/{}", Git::ref_component(input));
        git(tmp.path(), &["check-ref-format", "--branch", &name]);
    }
}

#[test]
fn disk_usage_counts_allocated_bytes_once() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a"), vec![1u8; 200_000]).unwrap();
    let one = Git::disk_usage(tmp.path());
    assert!(one >= 200_000, "{one}");
    fs::hard_link(tmp.path().join("a"), tmp.path().join("b")).unwrap();
    std::os::unix::fs::symlink("/", tmp.path().join("root")).unwrap();
    let linked = Git::disk_usage(tmp.path());
    assert!(linked < one + 10_000, "{one} {linked}");
    assert_eq!(Git::disk_usage(&tmp.path().join("missing")), 0);
}

#[test]
fn stats_are_parsed_by_position() {
    let raw = b":100644 100644 abc def M\0:odd\tname\0:000000 100644 000 abc A\0x\0:100644 100644 a b R087\0old\0new\0\
1\t2\t:odd\tname\0-\t-\tx\0\x33\t4\t\0old\0new\0";
    let files = diff::parse_stats(raw);
    assert_eq!(files.len(), 3);
    assert_eq!((files[0].path.as_str(), files[0].added, files[0].removed), (":odd\tname", 1, 2));
    assert!(files[1].binary && files[1].status == FileStatus::Added);
    assert_eq!((files[2].path.as_str(), files[2].old_path.as_deref(), files[2].added), ("new", Some("old"), 3));
}

#[test]
fn every_error_has_its_code() {
    let io = std::io::Error::other("x");
    let failed = GitError::Failed { command: "git x".into(), status: Some(1), stderr: "e".into() };
    assert_eq!(failed.to_string(), "git x failed (exit status 1): e");
    let codes: Vec<&str> = [
        GitError::Unavailable("x".into()),
        GitError::NotARepo("/x".into()),
        GitError::UnknownBase("x".into()),
        GitError::UnknownRev("x".into()),
        GitError::BranchExists("x".into()),
        GitError::InvalidBranch("x".into()),
        GitError::InvalidRef("x".into()),
        GitError::BranchNotMerged("x".into()),
        GitError::NothingToCommit,
        GitError::Timeout("git x".into()),
        failed,
        GitError::Io(io),
    ]
    .iter()
    .map(GitError::code)
    .collect();
    assert_eq!(
        codes,
        [
            "git_unavailable",
            "not_a_git_repo",
            "unknown_base",
            "unknown_rev",
            "branch_exists",
            "invalid_branch",
            "invalid_ref",
            "branch_not_merged",
            "nothing_to_commit",
            "git_timeout",
            "git_failed",
            "io"
        ]
    );
}

#[test]
fn every_future_is_send() {
    // Callers spawn these; a future that is not `Send` would not compile there.
    fn send<T: Send>(_: T) {}
    let g = Git::default();
    let p = Path::new("/nonexistent");
    let repo = Repo { top: p.into(), git_dir: p.into(), common_dir: p.into(), object_format: "sha1".into() };
    let shadow = Shadow { dir: p.into() };
    send(g.version());
    send(g.discover(p));
    send(g.work_tree_top(p));
    send(g.shadow(p, "sha1", p));
    send(g.repository(p));
    send(g.head(&repo));
    send(g.base_commit(p, "main"));
    send(g.create_worktree(p, &shadow, "HEAD", "b", p));
    send(g.remove_worktree(p, p, Some("b"), false));
    send(g.prune_worktrees(p));
    send(g.checkpoint(&repo, &shadow, p, "refs/x", "m", 1));
    send(g.list_refs(&shadow, "refs/"));
    send(g.delete_refs(&shadow, "refs/"));
    send(g.resolve(&shadow, "HEAD"));
    send(g.changes(&shadow, "a", "b", Some("p"), 1));
    send(g.restore(&repo, &shadow, p, "a", "b", &[]));
    send(g.commit_all(&repo, &shadow, "m", Some(("n", "e"))));
}
