//! Workspaces under faults: a file too large to checkpoint, a repository deleted under a live
//! session, a worktree removed by hand, a corrupt checkpoint ref. Each is a clear notice or error;
//! nothing panics and the session keeps working.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn repo(at: &Path) -> PathBuf {
    std::fs::create_dir_all(at).unwrap();
    git(at, &["init", "-q"]);
    std::fs::write(at.join("README.md"), "# demo\n").unwrap();
    git(at, &["add", "."]);
    git(at, &["commit", "-q", "-m", "first"]);
    at.canonicalize().unwrap()
}

/// The events of one turn, through its end and whatever follows it up to `last`.
async fn turn_until(s: &Server, ws: &mut Ws, id: &str, text: &str, last: &str) -> (String, Vec<Value>) {
    let turn = s.turn("r", id, text).await;
    let t = turn.clone();
    let events = ws.until(move |e| e["type"] == last && e["turnId"] == t.as_str()).await;
    (turn, events)
}

#[tokio::test]
async fn a_file_past_the_limit_is_left_out_and_named() {
    let s = Server::start(&["--checkpoint-max-file-bytes", "1048576"]).await;
    let dir = repo(&s.dir.join("proj"));
    // A sparse 1 GiB file: never read, never in a checkpoint.
    let big = std::fs::File::create(dir.join("huge.bin")).unwrap();
    big.set_len(1 << 30).unwrap();
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (_, events) = turn_until(&s, &mut ws, "s", "/write small.txt fine", "turn.changes").await;
    let changes = events.last().unwrap();
    assert_eq!(changes["payload"]["skipped"], json!(["huge.bin"]), "{changes}");
    let files = changes["payload"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0]["path"], "small.txt");
}

#[tokio::test]
async fn a_repository_deleted_under_a_live_session_is_a_notice_and_the_session_goes_on() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    turn_until(&s, &mut ws, "s", "hello", "turn.changes").await;
    std::fs::remove_dir_all(dir.join(".git")).unwrap();
    let (_, events) = turn_until(&s, &mut ws, "s", "still here?", "turn.completed").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "notice" && e["payload"]["message"].as_str().unwrap().contains("no checkpoint")),
        "{events:?}"
    );
    let (status, body) = s.get("/v1/rooms/r/sessions/s/checkpoints").await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "no_workspace");
    assert!(body["error"]["message"].as_str().unwrap().contains("gone"), "{body}");
    // And the next turn still runs.
    let (_, events) = turn_until(&s, &mut ws, "s", "and now?", "turn.completed").await;
    assert!(events.iter().any(|e| e["type"] == "message.completed"));
}

#[tokio::test]
async fn a_worktree_removed_by_hand_is_said_plainly() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let (_, started) = s
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": "w", "workspace": {"kind": "worktree", "repo": dir.to_str().unwrap()}}),
        )
        .await;
    let path = PathBuf::from(started["workspace"]["path"].as_str().unwrap());
    git(&dir, &["worktree", "remove", "--force", path.to_str().unwrap()]);
    for route in ["checkpoints", "changes", "workspace", "workspace/commit"] {
        let (status, body) = if route == "workspace/commit" {
            s.post(&format!("/v1/rooms/r/sessions/w/{route}"), json!({"message": "m"})).await
        } else {
            s.get(&format!("/v1/rooms/r/sessions/w/{route}")).await
        };
        assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "no_workspace", "{route}");
        assert!(body["error"]["message"].as_str().unwrap().contains("gone"), "{route}: {body}");
    }
    // Purging what is already gone is fine.
    let (status, body) = s.delete("/v1/rooms/r/sessions/w?purge=true&force=true").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
}

#[tokio::test]
async fn a_corrupt_checkpoint_ref_does_not_break_the_list_or_the_turns() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    turn_until(&s, &mut ws, "s", "/write a.txt one", "turn.changes").await;
    // Overwrite one checkpoint's ref with garbage.
    let refs = git(&dir, &["for-each-ref", "--format=%(refname)", "refs/ensemble/"]);
    let first = refs.lines().next().unwrap();
    std::fs::write(dir.join(".git").join(first), "not a sha\n").unwrap();
    let (status, list) = s.get("/v1/rooms/r/sessions/s/checkpoints").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "the broken one is left out: {list}");
    let (_, events) = turn_until(&s, &mut ws, "s", "/write b.txt two", "turn.changes").await;
    assert_eq!(events.last().unwrap()["payload"]["files"][0]["path"], "b.txt");
}
