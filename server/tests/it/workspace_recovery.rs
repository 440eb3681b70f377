//! Checkpoints and restores that wedge or stop (issue 53, item 9): a slow checkpoint past the
//! request's timeout, a server killed mid-checkpoint or mid-restore, nested repositories, a
//! restore beside another session's turn, a fork at a turn that changed nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// A `git` that stops where a test says: when the FIFO `hold-<command>` exists in `dir` for
/// `add` or `checkout-index`, it writes its pid to the FIFO `at-<command>` (the test reads it:
/// git is there now) — with `leave-lock` in `dir`, after leaving the index lock a git killed
/// mid-write leaves — and waits until the test writes to `hold-<command>`; then it runs the real
/// git.
fn holding_git(dir: &Path) -> PathBuf {
    let bin = dir.join("holding-git");
    let script = format!(
        "#!/bin/sh\nw='{}'\nsub=\nfor a in \"$@\"; do case \"$a\" in add|checkout-index) sub=$a; break;; esac; done\n\
         if [ -n \"$sub\" ] && [ -p \"$w/hold-$sub\" ]; then\n\
           [ -e \"$w/leave-lock\" ] && [ -n \"$GIT_INDEX_FILE\" ] && : > \"$GIT_INDEX_FILE.lock\"\n\
           echo $$ > \"$w/at-$sub\"\n  read _ < \"$w/hold-$sub\"\n  rm -f \"$w/hold-$sub\"\nfi\nexec git \"$@\"\n",
        dir.display()
    );
    std::fs::write(&bin, script).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Arms the holding git for `command`.
fn hold(dir: &Path, command: &str) {
    mkfifo(&dir.join(format!("hold-{command}")));
    mkfifo(&dir.join(format!("at-{command}")));
}

/// Waits (bounded) until the holding git is at `command`; its pid.
async fn held_at(dir: &Path, command: &str) -> i32 {
    let fifo = dir.join(format!("at-{command}"));
    let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo).unwrap());
    let pid = tokio::time::timeout(Duration::from_secs(30), read).await.expect("git reached the hold in time").unwrap();
    pid.trim().parse().unwrap()
}

/// Lets the holding git go on.
async fn release(dir: &Path, command: &str) {
    let fifo = dir.join(format!("hold-{command}"));
    let write = tokio::task::spawn_blocking(move || std::fs::write(fifo, "go\n").unwrap());
    tokio::time::timeout(Duration::from_secs(30), write).await.expect("released in time").unwrap();
}

async fn turn_until(s: &Server, ws: &mut Ws, id: &str, text: &str, last: &str) -> Vec<Value> {
    let turn = s.turn("r", id, text).await;
    let last = last.to_owned();
    ws.until(move |e| e["type"] == last.as_str() && e["turnId"] == turn.as_str()).await
}

#[tokio::test]
async fn a_checkpoint_past_the_requests_timeout_wedges_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let git_bin = holding_git(tmp.path());
    let wrap = tmp.path().to_str().unwrap();
    let s = Server::start(&["--git-bin", git_bin.to_str().unwrap(), "--request-timeout-secs", "1"]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    hold(tmp.path(), "add");
    let submit = {
        let req = s.http().post(s.url("/v1/rooms/r/sessions/s/turns")).bearer_auth(TOKEN);
        req.json(&json!({"input": [{"type": "text", "text": "/write a.txt one"}]})).send()
    };
    let (submitted, pid) = tokio::join!(submit, held_at(tmp.path(), "add"));
    // The request gave up while the checkpoint before its turn was still being taken…
    assert_eq!(submitted.unwrap().status(), StatusCode::REQUEST_TIMEOUT);
    assert!(pid > 0, "{wrap}");
    // …and the turn goes on once git does: it runs, ends and has its changes.
    release(tmp.path(), "add").await;
    let events = ws.until(|e| e["type"] == "turn.changes").await;
    assert!(events.iter().any(|e| e["type"] == "turn.completed"), "{events:?}");
    assert_eq!(events.last().unwrap()["payload"]["files"][0]["path"], "a.txt");
    // Cancel works on the next turn, and the session is ready after.
    let turn = s.turn("r", "s", "/hang").await;
    ws.until(|e| e["type"] == "turn.started" && e["turnId"] == turn.as_str()).await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until(|e| e["type"] == "turn.canceled" && e["turnId"] == turn.as_str()).await;
    let (_, session) = s.get("/v1/rooms/r/sessions/s?wait=idle").await;
    assert_eq!(session["status"], "ready", "{session}");
}

#[tokio::test]
async fn a_server_killed_mid_checkpoint_leaves_no_lock_that_stops_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let git_bin = holding_git(tmp.path());
    let home = tempfile::tempdir().unwrap();
    let s = Server::start_in(home.path(), &["--git-bin", git_bin.to_str().unwrap()]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    hold(tmp.path(), "add");
    std::fs::write(tmp.path().join("leave-lock"), "").unwrap();
    let turn = s.http().post(s.url("/v1/rooms/r/sessions/s/turns")).bearer_auth(TOKEN);
    let turn = turn.json(&json!({"input": [{"type": "text", "text": "/write a.txt one"}]})).send();
    let pending = tokio::spawn(turn);
    held_at(tmp.path(), "add").await;
    let locks = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir.join("data/checkpoints"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "lock"))
            .collect()
    };
    assert_eq!(locks(&s.dir).len(), 1, "a git killed now leaves its index lock");
    s.kill9().await;
    let _ = pending.await;
    let s = Server::start_in(home.path(), &[]).await;
    assert_eq!(locks(home.path()), Vec::<PathBuf>::new(), "start-up clears what it owns");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let events = turn_until(&s, &mut ws, "s", "/write b.txt two", "turn.changes").await;
    let files = &events.last().unwrap()["payload"]["files"];
    assert!(files.as_array().unwrap().iter().any(|f| f["path"] == "b.txt"), "{files}");
}

#[tokio::test]
async fn an_interrupted_restore_is_said_after_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let git_bin = holding_git(tmp.path());
    let home = tempfile::tempdir().unwrap();
    let s = Server::start_in(home.path(), &["--git-bin", git_bin.to_str().unwrap()]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let events = turn_until(&s, &mut ws, "s", "/write a.txt one", "turn.changes").await;
    let before = events.last().unwrap()["payload"]["before"].as_str().unwrap().to_owned();
    hold(tmp.path(), "checkout-index");
    let restore = s.http().post(s.url("/v1/rooms/r/sessions/s/restore")).bearer_auth(TOKEN);
    let pending = tokio::spawn(restore.json(&json!({"checkpoint": before})).send());
    held_at(tmp.path(), "checkout-index").await;
    s.kill9().await;
    let _ = pending.await;
    let s = Server::start_in(home.path(), &[]).await;
    let mut ws = s.ws("r", Some(0)).await;
    ws.hello().await;
    let events = ws
        .until(|e| e["type"] == "notice" && e["payload"]["message"].as_str().unwrap_or("").contains("interrupted"))
        .await;
    let message = events.last().unwrap()["payload"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains(&before), "it names the checkpoint to restore again: {message}");
    // Once: a second restart says nothing more.
    s.kill9().await;
    let s = Server::start_in(home.path(), &[]).await;
    let all = s.events("r").await;
    assert_eq!(
        all.iter()
            .filter(|e| e["type"] == "notice" && e["payload"]["message"].as_str().unwrap_or("").contains("interrupted"))
            .count(),
        1
    );
}

#[tokio::test]
async fn nested_repositories_are_left_out_and_named_not_a_stop() {
    let s = Server::start(&[]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // `cargo new` inside the work tree: a repository without a commit; and a `.git` file naming
    // a real repository elsewhere, which would hide its directory.
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/lib.rs"), "fn x() {}\n").unwrap();
    git(&dir.join("sub"), &["init", "-q"]);
    let elsewhere = s.dir.join("elsewhere.git");
    git(&s.dir, &["init", "-q", "--bare", elsewhere.to_str().unwrap()]);
    std::fs::create_dir_all(dir.join("hidden")).unwrap();
    std::fs::write(dir.join("hidden/h.txt"), "h\n").unwrap();
    std::fs::write(dir.join("hidden/.git"), format!("gitdir: {}\n", elsewhere.display())).unwrap();
    let events = turn_until(&s, &mut ws, "s", "/write a.txt one", "turn.changes").await;
    let changes = &events.last().unwrap()["payload"];
    assert_eq!(changes["skipped"], json!(["hidden/", "sub/"]), "{changes}");
    assert_eq!(changes["files"][0]["path"], "a.txt", "{changes}");
    let (status, body) = s.post("/v1/rooms/r/sessions/s/restore", json!({"checkpoint": changes["before"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!dir.join("a.txt").exists());
    assert!(dir.join("sub/lib.rs").exists() && dir.join("hidden/h.txt").exists());
}

#[tokio::test]
async fn a_restore_waits_for_another_sessions_turn_in_the_same_work_tree() {
    let s = Server::start(&[]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    for id in ["a", "b"] {
        let (status, body) =
            s.post("/v1/rooms/r/sessions", json!({"sessionId": id, "cwd": dir.to_str().unwrap()})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let events = turn_until(&s, &mut ws, "a", "/write a.txt one", "turn.changes").await;
    let before = events.last().unwrap()["payload"]["before"].clone();
    // b works in the same tree, and is mid-turn.
    let turn = s.turn("r", "b", "/write b.txt mine\n/hang").await;
    ws.until(|e| e["type"] == "call.completed" && e["turnId"] == turn.as_str()).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/a/restore", json!({"checkpoint": before})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "work_tree_busy");
    assert!(body["error"]["message"].as_str().unwrap().contains('b'), "{body}");
    assert!(dir.join("b.txt").exists() && dir.join("a.txt").exists(), "nothing was touched");
    s.post_empty("/v1/rooms/r/sessions/b/cancel").await;
    ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/a/restore", json!({"checkpoint": before})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!dir.join("a.txt").exists());
}

#[tokio::test]
async fn a_fork_at_a_turn_that_changed_nothing_works() {
    let s = Server::start(&[]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n")]);
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let turn = s.turn("r", "s", "/write a.txt one").await;
    ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    // A turn that changes nothing, forked from as soon as it has ended.
    let quiet = s.turn("r", "s", "just talk").await;
    ws.until(|e| e["type"] == "turn.completed" && e["turnId"] == quiet.as_str()).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/s/fork", json!({"atTurn": quiet, "sessionId": "f"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let fork = PathBuf::from(body["workspace"]["path"].as_str().unwrap());
    // The fork has the work as that turn left it, uncommitted over the source's HEAD.
    assert_eq!(std::fs::read_to_string(fork.join("a.txt")).unwrap(), "one\n");
    assert_eq!(git(&fork, &["status", "--porcelain"]), "?? a.txt\n");
    assert_eq!(git(&fork, &["rev-parse", "HEAD"]), git(&dir, &["rev-parse", "HEAD"]));
    assert_eq!(
        git(&dir, &["log", "--all", "--format=%s"]).lines().count(),
        1,
        "no checkpoint commit in the user's log"
    );
}
