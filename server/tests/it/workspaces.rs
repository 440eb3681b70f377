//! Workspaces with real git on repositories the tests make: a checkpoint before and after every
//! turn of a session in a git work tree (the user's index, HEAD and branch untouched), the turn's
//! changes as an event and over REST, restore (and its undo), and worktree sessions.

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// A repository with one commit (`README.md`, an ignored `build/` and `.gitignore`).
fn repo(at: &Path) -> PathBuf {
    git_repo(at, &[("README.md", b"# demo\n"), (".gitignore", b"build/\n")])
}

async fn start(s: &Server, id: &str, body: Value) -> (StatusCode, Value) {
    let mut body = body;
    body["sessionId"] = json!(id);
    s.post("/v1/rooms/r/sessions", body).await
}

/// Runs a turn and returns its `turn.changes` event (which follows `turn.completed`).
async fn turn_changes(s: &Server, ws: &mut Ws, id: &str, text: &str) -> Value {
    let turn = s.turn("r", id, text).await;
    let events = ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    let completed = events.iter().position(|e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str());
    assert!(completed.is_some(), "turn.changes came before the turn's end");
    events.last().unwrap().clone()
}

#[tokio::test]
async fn every_turn_is_checkpointed_and_its_changes_reviewed_and_restored() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::write(dir.join("build/out.o"), "ignored").unwrap();
    // The user's own staged change, which nothing may touch.
    std::fs::write(dir.join("README.md"), "# demo\nstaged\n").unwrap();
    git(&dir, &["add", "README.md"]);
    let status_before = git(&dir, &["status", "--porcelain"]);
    let head_before = git(&dir, &["rev-parse", "HEAD"]);
    let (status, started) = start(&s, "s", json!({"cwd": dir.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    assert_eq!(started["workspace"]["kind"], "dir", "{started}");
    assert_eq!(started["workspace"]["checkpoints"], true);
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    let changes = turn_changes(&s, &mut ws, "s", "/write src/new.rs fn main() {}\n/edit README.md more").await;
    let files = changes["payload"]["files"].as_array().unwrap();
    let by_path = |p: &str| files.iter().find(|f| f["path"] == p).unwrap_or_else(|| panic!("{p} not in {files:?}"));
    assert_eq!(by_path("src/new.rs")["status"], "added");
    assert_eq!(by_path("src/new.rs")["added"], 1);
    assert_eq!(by_path("README.md")["status"], "modified");
    assert_eq!(files.len(), 2, "only what the turn changed (not the ignored build/): {files:?}");
    // The user's index, HEAD and branch are as they were; the agent's files are there.
    assert_eq!(git(&dir, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(git(&dir, &["diff", "--cached", "--name-only"]), "README.md\n");
    assert_eq!(git(&dir, &["branch", "--show-current"]), "main\n");
    assert!(git(&dir, &["stash", "list"]).is_empty());
    assert_ne!(git(&dir, &["status", "--porcelain"]), status_before);

    let (status, list) = s.get("/v1/rooms/r/sessions/s/checkpoints").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let phases: Vec<&str> = list["data"].as_array().unwrap().iter().map(|c| c["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["before", "after"]);
    let turn = changes["turnId"].as_str().unwrap();
    let (status, review) = s.get(&format!("/v1/rooms/r/sessions/s/changes?turn={turn}")).await;
    assert_eq!(status, StatusCode::OK, "{review}");
    assert!(review["diff"].as_str().unwrap().contains("+fn main() {}"), "{review}");
    assert_eq!(review["truncated"], false);
    let (_, one) = s.get(&format!("/v1/rooms/r/sessions/s/changes?turn={turn}&path=README.md")).await;
    assert!(!one["diff"].as_str().unwrap().contains("new.rs"), "{one}");

    // Back to before the turn: its files go, the user's staged change stays staged.
    let before = changes["payload"]["before"].as_str().unwrap();
    let (status, restored) = s.post("/v1/rooms/r/sessions/s/restore", json!({"checkpoint": before})).await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    ws.until_type("workspace.restored").await;
    assert!(!dir.join("src/new.rs").exists());
    assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), "# demo\nstaged\n");
    assert_eq!(std::fs::read_to_string(dir.join("build/out.o")).unwrap(), "ignored");
    assert_eq!(git(&dir, &["status", "--porcelain"]), status_before);
    // And the restore undone.
    let undo = restored["undo"].as_str().unwrap();
    let (status, _) = s.post("/v1/rooms/r/sessions/s/restore", json!({"checkpoint": undo})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(std::fs::read_to_string(dir.join("src/new.rs")).unwrap(), "fn main() {}\n");
}

#[tokio::test]
async fn a_worktree_session_works_on_a_branch_of_its_own() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let head = git(&dir, &["rev-parse", "HEAD"]).trim().to_owned();
    let (status, started) =
        start(&s, "w1", json!({"workspace": {"kind": "worktree", "repo": dir.to_str().unwrap()}})).await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let w = &started["workspace"];
    assert_eq!(w["kind"], "worktree", "{started}");
    assert_eq!(w["branch"], "ensemble/r/w1");
    assert_eq!(w["baseCommit"], head.as_str());
    let path = PathBuf::from(w["path"].as_str().unwrap());
    assert_eq!(started["cwd"], path.to_str().unwrap());
    assert_eq!(git(&path, &["branch", "--show-current"]).trim(), "ensemble/r/w1");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let changes = turn_changes(&s, &mut ws, "w1", "/write notes.txt from the agent").await;
    assert_eq!(changes["payload"]["files"][0]["path"], "notes.txt");
    assert!(path.join("notes.txt").exists());
    assert!(!dir.join("notes.txt").exists(), "the user's checkout is untouched");
    // The whole session against its base.
    let (status, all) = s.get("/v1/rooms/r/sessions/w1/changes").await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["from"], head.as_str());

    // The same branch again, an unknown base, a directory that is no repository, one outside.
    let (status, body) = start(
        &s,
        "w2",
        json!({"workspace": {"kind": "worktree", "repo": dir.to_str().unwrap(), "branch": "ensemble/r/w1"}}),
    )
    .await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "branch_exists");
    assert_eq!(body["error"]["details"]["branch"], "ensemble/r/w1");
    let (status, body) =
        start(&s, "w3", json!({"workspace": {"kind": "worktree", "repo": dir.to_str().unwrap(), "base": "nope"}}))
            .await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "unknown_base");
    let plain = s.dir.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let (status, body) =
        start(&s, "w4", json!({"workspace": {"kind": "worktree", "repo": plain.to_str().unwrap()}})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "not_a_git_repo");
    let (status, body) = start(&s, "w5", json!({"workspace": {"kind": "worktree", "repo": "/"}})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "cwd_outside_workspace");
    assert!(body["error"]["message"].as_str().unwrap().contains("workspace.repo"), "{body}");
    // None of the refused starts left a session behind.
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
}

#[tokio::test]
async fn without_a_work_tree_or_with_checkpoints_off_nothing_is_checkpointed() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let (status, off) = start(&s, "off", json!({"cwd": dir.to_str().unwrap(), "checkpoints": false})).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(off.get("workspace").is_none(), "{off}");
    let (status, plain) = start(&s, "plain", json!({})).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(plain.get("workspace").is_none(), "the default cwd is no repository: {plain}");
    for id in ["off", "plain"] {
        let (status, body) = s.get(&format!("/v1/rooms/r/sessions/{id}/checkpoints")).await;
        assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "no_workspace");
    }
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "off", "/write x.txt y").await;
    let events = ws.until_type("turn.completed").await;
    assert!(events.iter().all(|e| e["type"] != "turn.changes"));
    assert!(git(&dir, &["for-each-ref", "refs/ensemble/"]).is_empty(), "no hidden ref was made");
}

#[tokio::test]
async fn a_restore_waits_for_no_turn_and_names_a_real_checkpoint() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    start(&s, "s", json!({"cwd": dir.to_str().unwrap()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let turn = s.turn("r", "s", "/hang").await;
    let (status, body) = s.post("/v1/rooms/r/sessions/s/restore", json!({"checkpoint": "x"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "turn_active");
    s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/s/restore", json!({"checkpoint": "nope"})).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "unknown_checkpoint");
    let (status, body) = s.get("/v1/rooms/r/sessions/s/changes?from=a").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_query");
    let (status, body) = s.get("/v1/rooms/r/sessions/s/changes?turn=nope").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "unknown_checkpoint");
}

#[tokio::test]
async fn without_git_a_worktree_is_a_clear_503_and_the_rest_works() {
    let s = Server::start(&["--git-bin", "/nonexistent/git"]).await;
    let dir = repo(&s.dir.join("proj"));
    let (status, body) =
        start(&s, "w", json!({"workspace": {"kind": "worktree", "repo": dir.to_str().unwrap()}})).await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "git_unavailable");
    assert!(body["error"]["message"].as_str().unwrap().contains("/nonexistent/git"), "names the git it tried: {body}");
    let (status, providers) = s.get("/v1/providers").await;
    assert_eq!(status, StatusCode::OK);
    assert!(providers["data"].as_array().unwrap().iter().any(|p| p["id"] == "scripted" && p["available"] == true));
    // A session in the repository simply has no checkpoints.
    let (status, started) = start(&s, "d", json!({"cwd": dir.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(started.get("workspace").is_none(), "{started}");
    s.turn("r", "d", "hello").await;
}

#[tokio::test]
async fn worktrees_go_where_asked_and_a_relative_cwd_stays_inside() {
    let place = tempfile::Builder::new().prefix("ensemble-worktrees-").tempdir_in("/var/tmp").unwrap();
    let s = Server::start(&["--worktrees-dir", place.path().to_str().unwrap()]).await;
    let dir = git_repo(&s.dir.join("proj"), &[("README.md", b"# demo\n"), ("src/lib.rs", b"// lib\n")]);
    let repo = dir.to_str().unwrap();
    let (status, started) =
        start(&s, "w1", json!({"cwd": "src", "workspace": {"kind": "worktree", "repo": repo}})).await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let top = PathBuf::from(started["workspace"]["path"].as_str().unwrap());
    assert!(top.starts_with(place.path().canonicalize().unwrap()) || top.starts_with(place.path()), "{top:?}");
    assert_eq!(started["cwd"], top.join("src").to_str().unwrap(), "{started}");
    // A cwd that leaves the worktree, or is absolute: refused, and no worktree or branch left.
    for cwd in ["../..", "/etc", "src/../../x", "nope"] {
        let (status, body) =
            start(&s, "w2", json!({"cwd": cwd, "workspace": {"kind": "worktree", "repo": repo}})).await;
        assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "cwd_outside_workspace", "{cwd}");
        assert!(!git(&dir, &["branch", "--list", "ensemble/r/w2"]).contains("w2"), "{cwd}: a branch was left");
    }
    assert_eq!(std::fs::read_dir(place.path()).unwrap().count(), 1, "only w1's worktree");

    // Two turns; the changes between the first's before and the second's after hold both.
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let one = turn_changes(&s, &mut ws, "w1", "/write one.txt 1").await;
    let two = turn_changes(&s, &mut ws, "w1", "/write two.txt 2").await;
    let (from, to) = (one["payload"]["before"].as_str().unwrap(), two["payload"]["after"].as_str().unwrap());
    let (status, both) = s.get(&format!("/v1/rooms/r/sessions/w1/changes?from={from}&to={to}")).await;
    assert_eq!(status, StatusCode::OK, "{both}");
    let paths: Vec<&str> = both["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["src/one.txt", "src/two.txt"], "{both}");
    // Answered with the two checkpoints' commits.
    let (_, list) = s.get("/v1/rooms/r/sessions/w1/checkpoints").await;
    let commit_of =
        |id: &str| list["data"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["commit"].clone();
    assert_eq!((both["from"].clone(), both["to"].clone()), (commit_of(from), commit_of(to)));
    let (status, body) = s.get(&format!("/v1/rooms/r/sessions/w1/changes?from={from}&to=nope")).await;
    assert!(status.is_client_error(), "{body}");
}

#[tokio::test]
async fn a_failed_turn_has_its_changes_and_binary_files_are_marked() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    let (status, body) = start(&s, "s", json!({"cwd": dir.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // A turn that writes, then fails: what it changed is still reported.
    let turn = s.turn("r", "s", "/write half.txt done so far\n/fail it broke").await;
    let events = ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    assert!(events.iter().any(|e| e["type"] == "turn.failed"), "{events:?}");
    assert_eq!(events.last().unwrap()["payload"]["files"][0]["path"], "half.txt");
    // A binary file written while a turn runs (as an agent's tool would) is marked so.
    let turn = s.turn("r", "s", "/slow 40\n/chunks 40").await;
    ws.until(|e| e["type"] == "message.delta").await;
    std::fs::write(dir.join("image.bin"), [0u8, 159, 146, 150, 0, 1, 2, 3]).unwrap();
    let events = ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    let files = events.last().unwrap()["payload"]["files"].as_array().unwrap().clone();
    let bin = files.iter().find(|f| f["path"] == "image.bin").unwrap_or_else(|| panic!("{files:?}"));
    assert_eq!((bin["status"].as_str(), bin["binary"].as_bool()), (Some("added"), Some(true)), "{bin}");
    let (_, review) = s.get(&format!("/v1/rooms/r/sessions/s/changes?turn={turn}")).await;
    assert!(review["diff"].as_str().unwrap().contains("Binary files"), "{review}");
}
