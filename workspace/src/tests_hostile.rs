//! A work tree written by a hostile agent: nothing its repository configures runs, what it points
//! at later changes nothing, and what it nests is left out rather than stopping checkpoints.

#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::tests::{found, git, repo, sgit, tree_files, write};
use super::*;

const MAX: u64 = 1 << 20;

/// A program that leaves a mark in `marks` when run (under its own name), then passes its input
/// through (so a filter that did run would not also break the command).
fn marker(dir: &Path, marks: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\ntouch '{}/{name}'\ncat\n", marks.display())).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Every way a repository's configuration, attributes and hooks name a program, each a marker.
fn arm(git_dir: &Path, tools: &Path, marks: &Path) {
    fs::create_dir_all(tools).unwrap();
    let m = |name: &str| marker(tools, marks, name).display().to_string();
    let settings = [
        ("core.fsmonitor", m("fsmonitor")),
        ("core.pager", m("pager")),
        ("core.sshCommand", m("ssh")),
        ("core.editor", m("editor")),
        ("core.askPass", m("askpass")),
        ("diff.external", m("external-diff")),
        ("diff.x.textconv", m("textconv")),
        ("diff.x.command", m("diff-command")),
        ("filter.x.clean", m("clean")),
        ("filter.x.smudge", m("smudge")),
        ("filter.x.required", "true".into()),
        ("merge.x.driver", m("merge-driver")),
        ("gpg.program", m("gpg")),
        ("commit.gpgSign", "true".into()),
        ("core.alternateRefsCommand", m("alternate-refs")),
        ("credential.helper", m("credential")),
        ("gc.auto", "1".into()),
        ("core.hooksPath", tools.join("hooks").display().to_string()),
    ];
    for (key, value) in settings {
        let out = std::process::Command::new("git")
            .arg(format!("--git-dir={}", git_dir.display()))
            .args(["config", key, &value])
            .output()
            .unwrap();
        assert!(out.status.success(), "{key}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let hooks = [
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
        "pre-auto-gc",
        "post-rewrite",
        "pre-push",
    ];
    for dir in [tools.join("hooks"), git_dir.join("hooks")] {
        fs::create_dir_all(&dir).unwrap();
        for hook in hooks {
            marker(&dir, marks, hook);
        }
    }
    fs::create_dir_all(git_dir.join("info")).unwrap();
    fs::write(git_dir.join("info/attributes"), "* filter=x diff=x merge=x\n").unwrap();
}

fn marks_left(marks: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(marks).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn nothing_a_repository_configures_runs() {
    let r = repo().await;
    let g = Git::default();
    let outside = r.top.parent().unwrap().to_path_buf();
    let marks = outside.join("marks");
    fs::create_dir(&marks).unwrap();
    arm(&r.repo.common_dir, &outside.join("tools"), &marks);
    write(&r.top, ".gitattributes", "* filter=x diff=x merge=x\n");

    let found = g.discover(&r.top).await.unwrap().unwrap();
    assert_eq!(found, r.repo);
    let before = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/1", "1", MAX).await.unwrap();
    write(&r.top, "a.txt", "changed\n");
    write(&r.top, "new.txt", "new\n");
    let after = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/2", "2", MAX).await.unwrap();
    let changes = g.changes(&r.shadow, &before.commit, &after.commit, None, 1 << 20).await.unwrap();
    assert!(changes.diff.contains("+changed"), "{}", changes.diff);
    // What the repository stores is what the file holds: no clean filter ran.
    assert_eq!(sgit(&r, &["show", &format!("{}:a.txt", after.commit)]), "changed\n");
    let undo = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/3", "3", MAX).await.unwrap();
    g.restore(&r.repo, &r.shadow, &r.index, &before.commit, &undo.commit, &[]).await.unwrap();
    assert_eq!(fs::read_to_string(r.top.join("a.txt")).unwrap(), "one\ntwo\nthree\n");
    let head = g.head(&r.repo).await.unwrap().unwrap();
    assert_eq!(g.base_commit(&r.repo.common_dir, "main").await.unwrap(), head);

    let path = outside.join("wt");
    let wt = g.create_worktree(&r.repo.common_dir, &r.shadow, &head, "ensemble/s1", &path).await.unwrap();
    write(&path, "work.txt", "work\n");
    let index = outside.join("wt.index");
    g.checkpoint(&wt.repo, &r.shadow, &index, "refs/ensemble/w/1", "1", MAX).await.unwrap();
    g.commit_all(&wt.repo, &r.shadow, "work", Some(("A", "a@a"))).await.unwrap();
    g.commit_all(&r.repo, &r.shadow, "dir work", Some(("A", "a@a"))).await.unwrap();
    g.remove_worktree(&r.repo.common_dir, &path, Some("ensemble/s1"), true).await.unwrap();
    assert_eq!(marks_left(&marks), Vec::<String>::new(), "programs the repository named ran");
    // The marks work: git run the ordinary way runs them.
    git(&r.top, &["status", "--porcelain"]);
    assert!(!marks_left(&marks).is_empty());
}

#[tokio::test]
async fn a_work_tree_that_points_elsewhere_later_changes_nothing() {
    let r = repo().await;
    let g = Git::default();
    let outside = r.top.parent().unwrap().to_path_buf();
    let head = g.head(&r.repo).await.unwrap().unwrap();
    let path = outside.join("wt");
    let wt = g.create_worktree(&r.repo.common_dir, &r.shadow, &head, "ensemble/s1", &path).await.unwrap();
    // The agent builds a git dir of its own, armed, and points its worktree's `.git` at it; and
    // moves the repository's work tree elsewhere by configuration.
    let evil = outside.join("evil.git");
    git(&outside, &["init", "-q", "--bare", evil.to_str().unwrap()]);
    let marks = outside.join("marks");
    fs::create_dir(&marks).unwrap();
    arm(&evil, &outside.join("tools"), &marks);
    fs::write(path.join(".git"), format!("gitdir: {}\n", evil.display())).unwrap();
    git(&r.top, &["config", "core.worktree", outside.join("elsewhere").to_str().unwrap()]);
    write(&path, "work.txt", "work\n");
    let index = outside.join("wt.index");
    let cp = g.checkpoint(&wt.repo, &r.shadow, &index, "refs/ensemble/w/1", "1", MAX).await.unwrap();
    assert!(tree_files(&r, &cp.commit).contains(&"work.txt".to_owned()));
    // Its parent is the worktree's own HEAD, as recorded, not the git dir it points at now.
    assert_eq!(sgit(&r, &["rev-parse", &format!("{}^", cp.commit)]).trim(), head);
    let sha = g.commit_all(&wt.repo, &r.shadow, "work", Some(("A", "a@a"))).await.unwrap();
    assert_eq!(git(&r.top, &["rev-parse", "refs/heads/ensemble/s1"]).trim(), sha);
    assert_eq!(marks_left(&marks), Vec::<String>::new());
}

#[tokio::test]
async fn nested_repositories_are_left_out_and_listed_not_a_stop() {
    let r = repo().await;
    let g = Git::default();
    let first = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/1", "1", MAX).await.unwrap();
    // `git init sub` (no commit), `cargo new` alike; a directory whose `.git` file names a real
    // repository elsewhere; a nested repository with a commit.
    write(&r.top, "sub/s.txt", "s\n");
    git(&r.top.join("sub"), &["init", "-q"]);
    let elsewhere = r.top.parent().unwrap().join("elsewhere.git");
    git(r.top.parent().unwrap(), &["init", "-q", "--bare", elsewhere.to_str().unwrap()]);
    write(&r.top, "hidden/h.txt", "h\n");
    fs::write(r.top.join("hidden/.git"), format!("gitdir: {}\n", elsewhere.display())).unwrap();
    write(&r.top, "done/d.txt", "d\n");
    git(&r.top.join("done"), &["init", "-q"]);
    git(&r.top.join("done"), &["add", "-A"]);
    git(&r.top.join("done"), &["commit", "-q", "-m", "d"]);
    write(&r.top, "plain.txt", "p\n");
    let cp = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/2", "2", MAX).await.unwrap();
    assert_eq!(cp.skipped, ["done/", "hidden/", "sub/"]);
    let files = tree_files(&r, &cp.commit);
    assert!(files.contains(&"plain.txt".to_owned()), "{files:?}");
    assert!(
        !files.iter().any(|f| f.starts_with("sub") || f.starts_with("hidden") || f.starts_with("done")),
        "{files:?}"
    );
    // A restore works, and leaves what no checkpoint holds.
    g.restore(&r.repo, &r.shadow, &r.index, &first.commit, &cp.commit, &cp.skipped).await.unwrap();
    assert!(!r.top.join("plain.txt").exists());
    assert!(r.top.join("sub/s.txt").exists() && r.top.join("hidden/h.txt").exists());
    // Committed the same way: the nested ones stay out.
    write(&r.top, "plain2.txt", "p\n");
    let sha = g.commit_all(&r.repo, &r.shadow, "c", Some(("A", "a@a"))).await.unwrap();
    assert_eq!(git(&r.top, &["show", "--name-only", "--format=", &sha]), "plain2.txt\n");
}

#[tokio::test]
async fn a_lock_left_by_a_killed_git_does_not_stop_checkpoints() {
    let r = repo().await;
    let g = Git::default();
    g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/1", "1", MAX).await.unwrap();
    fs::write(format!("{}.lock", r.index.display()), "").unwrap();
    write(&r.top, "a.txt", "2\n");
    let cp = g.checkpoint(&r.repo, &r.shadow, &r.index, "refs/ensemble/s/2", "2", MAX).await.unwrap();
    assert_eq!(sgit(&r, &["show", &format!("{}:a.txt", cp.commit)]), "2\n");
}

#[tokio::test]
async fn the_users_repository_gets_no_ref_or_object_of_a_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("repo");
    fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    write(&top, "a.txt", "a\n");
    git(&top, &["add", "-A"]);
    git(&top, &["commit", "-q", "-m", "a"]);
    let r = found(tmp, top.clone()).await;
    let objects = git(&top, &["count-objects", "-v"]);
    write(&top, "a.txt", "changed, never committed by the user\n");
    let cp = super::tests::checkpoint(&r, "1").await;
    assert_eq!(git(&top, &["for-each-ref", "--format=%(refname)"]), "refs/heads/main\n");
    assert_eq!(git(&top, &["count-objects", "-v"]), objects);
    assert_eq!(git(&top, &["log", "--all", "--format=%s"]), "a\n");
    assert!(!tree_files(&r, &cp.commit).is_empty());
}
