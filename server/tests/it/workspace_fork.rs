//! Durable forks: a new session in a worktree of its own at the checkpoint after a turn, its
//! conversation forked through that turn (the scripted agent's `/history` shows which), its
//! lineage on the session; and the refusals.

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

fn repo(at: &Path) -> PathBuf {
    git_repo(at, &[("README.md", b"# demo\n"), ("sub/keep.txt", b"keep\n")])
}

async fn turn_and_changes(s: &Server, ws: &mut Ws, id: &str, text: &str) -> String {
    let turn = s.turn("r", id, text).await;
    ws.until(|e| e["type"] == "turn.changes" && e["turnId"] == turn.as_str()).await;
    turn
}

async fn reply_of(s: &Server, ws: &mut Ws, id: &str, text: &str) -> String {
    let turn = s.turn("r", id, text).await;
    let events = ws.until(|e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str()).await;
    events
        .iter()
        .filter(|e| e["type"] == "message.completed" && e["sessionId"] == id)
        .map(|e| e["payload"]["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_fork_through_a_turn_has_that_turns_tree_and_conversation() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    // A dir session working in a subdirectory of the repository.
    let (status, _) = s
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": "src", "cwd": dir.join("sub").to_str().unwrap(), "title": "t"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let first = turn_and_changes(&s, &mut ws, "src", "apples\n/write one.txt first").await;
    turn_and_changes(&s, &mut ws, "src", "pears\n/write two.txt second").await;

    let (status, fork) = s.post("/v1/rooms/r/sessions/src/fork", json!({"atTurn": first, "sessionId": "f1"})).await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    assert_eq!(fork["forkedFrom"]["sessionId"], "src", "{fork}");
    assert_eq!(fork["forkedFrom"]["turnId"], first.as_str());
    assert_eq!(fork["title"], "t (fork)");
    assert_eq!(fork["workspace"]["kind"], "worktree");
    let top = PathBuf::from(fork["workspace"]["path"].as_str().unwrap());
    // Its tree is the one after the first turn, and it works where the source did.
    assert_eq!(std::fs::read_to_string(top.join("sub/one.txt")).unwrap(), "first\n");
    assert!(!top.join("sub/two.txt").exists(), "the second turn's file is not in the fork");
    assert_eq!(fork["cwd"], top.join("sub").to_str().unwrap());
    // Its conversation goes through the first turn only.
    let history = reply_of(&s, &mut ws, "f1", "/history").await;
    assert!(history.contains("apples") && !history.contains("pears"), "{history}");
    // The source is untouched and goes on.
    assert!(dir.join("sub/two.txt").exists());
    let history = reply_of(&s, &mut ws, "src", "/history").await;
    assert!(history.contains("apples") && history.contains("pears"), "{history}");
}

#[tokio::test]
async fn a_fork_needs_checkpoints_and_a_turn_that_has_one() {
    let s = Server::start(&[]).await;
    let dir = repo(&s.dir.join("proj"));
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "plain"})).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/plain/fork", json!({"atTurn": "x"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "no_workspace");
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "d", "cwd": dir.to_str().unwrap()})).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/d/fork", json!({"atTurn": "nope"})).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "unknown_checkpoint");
    let (status, body) = s.post("/v1/rooms/r/sessions/d/fork", json!({"atTurn": "x", "bogus": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body): (StatusCode, Value) = s.post("/v1/rooms/r/sessions/missing/fork", json!({"atTurn": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test]
async fn an_agent_that_cannot_fork_is_a_422_with_its_reason_and_leaves_nothing() {
    let a = crate::acp::AcpSetup::new(&[], "");
    let work = Path::new(a.cwd());
    git(work, &["init", "-q"]);
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    git(work, &["add", "."]);
    git(work, &["commit", "-q", "-m", "first"]);
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, started) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "a1", "provider": "test-acp", "cwd": a.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let turn = turn_and_changes(&s, &mut ws, "a1", "hello").await;
    let (status, body) = s.post("/v1/rooms/r/sessions/a1/fork", json!({"atTurn": turn, "sessionId": "f"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "fork_unsupported");
    assert!(body["error"]["message"].as_str().unwrap().contains("fork"), "{body}");
    // No session, worktree or branch was left by the refused fork.
    let (status, _) = s.get("/v1/rooms/r/sessions/f").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!git(work, &["branch", "--list"]).contains("ensemble/"), "{}", git(work, &["branch", "--list"]));
    assert_eq!(git(work, &["worktree", "list"]).lines().count(), 1);
}

/// An ACP agent that offers `session/fork`: the fork (in its own worktree and agent process)
/// carries the conversation, which ACP copies whole, so only the last turn can be forked through;
/// an agent without it is refused with the reason.
#[tokio::test]
async fn an_acp_fork_copies_the_conversation_through_the_last_turn_only() {
    use crate::acp::{AcpSetup, message_text, start, turn};
    let state = tempfile::tempdir().unwrap();
    // The agent keeps its sessions there: its own directory, bound into its box.
    let own = format!("isolation = {{ home = [{:?}] }}", state.path().to_str().unwrap());
    let a = AcpSetup::new(&["--fork", "--state-dir", state.path().to_str().unwrap()], &own);
    git_repo(a.work.path(), &[("README.md", b"# demo\n")]);
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "src").await;
    let mut turns = Vec::new();
    for text in ["apples", "pears"] {
        let events = turn(&s, &mut ws, "src", text).await;
        let id = events.last().unwrap()["turnId"].as_str().unwrap().to_owned();
        let t = id.clone();
        ws.until(move |e| e["type"] == "turn.changes" && e["turnId"] == t.as_str()).await;
        turns.push(id);
    }
    let (status, body) = s.post("/v1/rooms/r/sessions/src/fork", json!({"atTurn": turns[0]})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "fork_unsupported");
    assert!(body["error"]["message"].as_str().unwrap().contains(&turns[1]), "names the last turn: {body}");
    let before = a.agents().len();
    let (status, fork) = s.post("/v1/rooms/r/sessions/src/fork", json!({"atTurn": turns[1], "sessionId": "f"})).await;
    assert_eq!(status, StatusCode::CREATED, "{fork}\n{}", s.log());
    assert_ne!(fork["providerSessionId"], Value::Null);
    assert_eq!(a.agents().len(), before + 1, "an agent process of its own");
    let top = fork["workspace"]["path"].as_str().unwrap();
    assert_eq!(fork["cwd"], top);
    let events = turn(&s, &mut ws, "f", "history").await;
    assert_eq!(message_text(&events), "history: apples | pears");
    s.delete("/v1/rooms/r/sessions/f").await;
    s.delete("/v1/rooms/r/sessions/src").await;
    a.none_left().await;

    // Without `session/fork` the agent says so, and nothing is left of the attempt.
    let plain = AcpSetup::new(&[], "");
    git_repo(plain.work.path(), &[("README.md", b"# demo\n")]);
    let s = plain.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &plain, "src").await;
    let events = turn(&s, &mut ws, "src", "apples").await;
    let id = events.last().unwrap()["turnId"].as_str().unwrap().to_owned();
    let t = id.clone();
    ws.until(move |e| e["type"] == "turn.changes" && e["turnId"] == t.as_str()).await;
    let (status, body) = s.post("/v1/rooms/r/sessions/src/fork", json!({"atTurn": id, "sessionId": "f"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "fork_unsupported");
    assert!(body["error"]["message"].as_str().unwrap().contains("session/fork"), "{body}");
    let (status, _) = s.get("/v1/rooms/r/sessions/f").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no residue");
    s.delete("/v1/rooms/r/sessions/src").await;
    plain.none_left().await;
}
