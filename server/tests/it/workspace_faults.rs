//! Workspaces under faults: a file too large to checkpoint, a repository deleted under a live
//! session, a worktree removed by hand, a corrupt checkpoint ref. Each is a clear notice or error;
//! nothing panics and the session keeps working.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

fn repo(at: &Path) -> PathBuf {
    git_repo(at, &[("README.md", b"# demo\n")])
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

    // A file small in a checkpoint and too large now is in no checkpoint: a restore to that
    // checkpoint leaves it as it is (the undo could not bring it back) and says so.
    std::fs::write(dir.join("grows.log"), "small\n").unwrap();
    let (_, events) = turn_until(&s, &mut ws, "s", "/write small.txt again", "turn.changes").await;
    let small_then = events.last().unwrap()["payload"]["after"].as_str().unwrap().to_owned();
    std::fs::File::options().write(true).open(dir.join("grows.log")).unwrap().set_len(1 << 30).unwrap();
    turn_until(&s, &mut ws, "s", "/write small.txt third", "turn.changes").await;
    let (status, restored) = s.post("/v1/rooms/r/sessions/s/restore", json!({"checkpoint": small_then})).await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    assert_eq!(restored["kept"], json!(["grows.log"]), "{restored}");
    assert_eq!(std::fs::metadata(dir.join("grows.log")).unwrap().len(), 1 << 30);
    assert_eq!(std::fs::read_to_string(dir.join("small.txt")).unwrap(), "again\n");
    let event = ws.until_type("workspace.restored").await.last().cloned().unwrap();
    assert_eq!(event["payload"]["kept"], json!(["grows.log"]));
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
    // A turn still runs, said to be without checkpoints; the session is not stuck.
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (_, events) = turn_until(&s, &mut ws, "w", "still there?", "turn.completed").await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "notice" && e["payload"]["message"].as_str().unwrap().contains("no checkpoint")),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e["type"] == "message.completed"), "{events:?}");
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
    // Overwrite one checkpoint's ref with garbage (in the server's checkpoint repository).
    let shadow = checkpoint_repos(&s).pop().unwrap();
    let refs = git(&shadow, &["for-each-ref", "--format=%(refname)", "refs/ensemble/"]);
    let first = refs.lines().next().unwrap();
    std::fs::write(shadow.join(first), "not a sha\n").unwrap();
    let (status, list) = s.get("/v1/rooms/r/sessions/s/checkpoints").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "the broken one is left out: {list}");
    let (_, events) = turn_until(&s, &mut ws, "s", "/write b.txt two", "turn.changes").await;
    assert_eq!(events.last().unwrap()["payload"]["files"][0]["path"], "b.txt");
}

/// A checkpoint that hangs (git stuck) holds back neither the turn's end nor another session,
/// and ends at `--git-timeout-secs` with a notice.
#[tokio::test]
async fn a_stuck_checkpoint_delays_no_turn_end_and_no_other_session() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("hang");
    let real = String::from_utf8(Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout).unwrap();
    // git, except that `add` waits while the marker exists (the checkpoint's first step).
    let wrapper = tmp.path().join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = add ] && [ -e {m} ]; then exec sleep 30; fi; done\nexec {real} \"$@\"\n",
            m = marker.display(),
            real = real.trim()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    let s = Server::start(&["--git-bin", wrapper.to_str().unwrap(), "--git-timeout-secs", "3"]).await;
    let dir = repo(&s.dir.join("proj"));
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "a", "cwd": dir.to_str().unwrap()})).await;
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "b"})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // A's agent is running (its before-checkpoint is done): from now on checkpoints hang.
    let turn = s.turn("r", "a", "/slow 100\n/chunks 5").await;
    ws.until(|e| e["type"] == "message.delta" && e["sessionId"] == "a").await;
    std::fs::write(&marker, "").unwrap();
    let t = turn.clone();
    let events = ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == t.as_str()).await;
    assert!(events.iter().all(|e| e["type"] != "turn.changes"), "the turn's end waited for its checkpoint");
    // B goes on meanwhile.
    let b = s.turn("r", "b", "hello").await;
    let events = ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == b.as_str()).await;
    assert!(events.iter().all(|e| !(e["type"] == "notice" && e["sessionId"] == "a")), "A's checkpoint ended early");
    // A's checkpoint gives up at the deadline, with a notice.
    let notice = ws.until(|e| e["type"] == "notice" && e["sessionId"] == "a").await;
    let message = notice.last().unwrap()["payload"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("not recorded") && message.contains("timed out"), "{message}");
    std::fs::remove_file(&marker).unwrap();
}
