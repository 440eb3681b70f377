//! Goals of codex sessions, against the real binary: REST reaches `thread/goal/*`, a goal the model
//! creates with `create_goal` is adopted, codex's own continuation turns are attributed to the
//! operation that caused them, and after a restart the ledger still resolves the generation.

use ensemble_mock_model::{CodexProvider, Reply};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// Codex marks the requests of its own goal continuations with this.
const CONTINUATION: &str = "codex_internal_context source=\"goal\"";

async fn codex_session(s: &Server, c: &Codex, id: &str) {
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": "codex", "cwd": c.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

async fn put_goal(s: &Server, objective: &str, csid: &str) -> (StatusCode, Value) {
    let res = s
        .http()
        .put(s.url("/v1/rooms/r/sessions/c/goal"))
        .json(&json!({"objective": objective, "clientSubmitId": csid}))
        .send()
        .await
        .unwrap();
    decode(res).await
}

fn is_continuation(e: &Value) -> bool {
    e["type"] == "turn.started" && e["payload"]["origin"] != "user"
}

#[tokio::test]
async fn user_goal_operations_reach_codex_and_its_continuations_are_credited() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    codex_session(&s, &c, "c").await;

    let (status, goal) = put_goal(&s, "make the tests pass", "set-1").await;
    assert_eq!(status, StatusCode::OK, "{goal}\n{}", s.log());
    assert_eq!(
        (goal["status"].as_str(), goal["origin"].as_str(), goal["revision"].as_i64()),
        (Some("active"), Some("user"), Some(1))
    );
    let op = goal["operationId"].as_str().unwrap().to_owned();
    // Codex pursues an active goal by itself; its continuation is credited to the set.
    let events = ws.until(is_continuation).await;
    let started = &events.last().unwrap()["payload"];
    assert_eq!(started["origin"], "goal_continuation", "{started}");
    assert_eq!(started["goalOperationId"], op.as_str());
    c.mock
        .wait_for(WAIT, |reqs| reqs.iter().any(|r| r.last_user_text().contains(CONTINUATION)))
        .await
        .expect("codex asked the model to continue the goal");

    // Pause reaches codex (it stops continuing), resume reaches it (it continues again).
    let (status, paused) = s.post_empty("/v1/rooms/r/sessions/c/goal/pause").await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!((paused["status"].as_str(), paused["revision"].as_i64()), (Some("paused"), Some(2)));
    let (status, resumed) = s.post_empty("/v1/rooms/r/sessions/c/goal/resume").await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!((resumed["status"].as_str(), resumed["revision"].as_i64()), (Some("active"), Some(3)));
    let resume_op = resumed["operationId"].as_str().unwrap().to_owned();
    let events = ws.until(|e| is_continuation(e) && e["payload"]["goalOperationId"] == resume_op.as_str()).await;
    assert_eq!(events.last().unwrap()["payload"]["origin"], "goal_continuation");

    // Clear reaches codex.
    let (status, _) = s.delete("/v1/rooms/r/sessions/c/goal").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let cleared = ws.until_type("goal.cleared").await.pop().unwrap();
    assert_eq!(cleared["payload"]["revision"], 4);
    let (status, body) = s.get("/v1/rooms/r/sessions/c/goal").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "no_goal");
    s.delete("/v1/rooms/r/sessions/c").await;
    no_codex_left(c.home.path()).await;
}

#[tokio::test]
async fn a_goal_codex_creates_is_adopted_and_the_ledger_resolves_it_after_a_restart() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default(), Some(MOCK_KEY)).await;
    // The continuation after the restart is credited once codex reports its goal on resume. With the
    // whole suite running, that report once came later than the default 250 ms grace (the turn was
    // then reported as the provider's own): this test is about the crediting, not its speed.
    let args: Vec<&str> = c.args().into_iter().chain(["--goal-grace-ms", "5000"]).collect();
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &args).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    codex_session(&s, &c, "c").await;
    c.mock.push(Reply::create_goal("tidy the repo"));
    s.turn("r", "c", "please set yourself a goal to tidy the repo").await;
    // Adopted: a provider-origin goal with a durable identity.
    let events = ws.until(|e| e["type"] == "goal.updated").await;
    let adopted = events.last().unwrap()["payload"]["goal"].clone();
    assert_eq!(adopted["origin"], "provider", "{adopted}");
    assert_eq!(adopted["objective"], "tidy the repo");
    assert_eq!(adopted["revision"], 1);
    let op = adopted["operationId"].as_str().unwrap().to_owned();
    // Codex's continuation is credited to the adopted operation.
    let events = ws.until(is_continuation).await;
    assert_eq!(events.last().unwrap()["payload"]["goalOperationId"], op.as_str());
    ws.until(|e| e["type"] == "turn.completed").await;

    // Restart Ensemble (codex goes down with it), then resume the thread.
    drop(ws);
    assert!(s.stop().await.success());
    let s = Server::start_in(tmp.path(), &args).await;
    let (_, goal) = s.get("/v1/rooms/r/sessions/c/goal").await;
    assert_eq!(goal["operationId"], op.as_str());
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
    // Codex goes on with its goal; the ledger still knows the generation, so the continuation is
    // credited to the same operation — not adopted again, not unproven.
    let events = ws.until(is_continuation).await;
    let started = &events.last().unwrap()["payload"];
    assert_eq!(started["origin"], "goal_continuation", "{started}\n{events:?}");
    assert_eq!(started["goalOperationId"], op.as_str());
    assert!(!events.iter().any(|e| e["type"] == "goal.reconcile_required"), "{events:?}");
    // Nothing after the restart re-owned the generation under another identity.
    assert!(
        !events.iter().any(|e| e["type"] == "goal.updated" && e["payload"]["goal"]["operationId"] != op.as_str()),
        "{events:?}"
    );
    let (_, goal) = s.get("/v1/rooms/r/sessions/c/goal").await;
    assert_eq!((goal["operationId"].as_str(), goal["revision"].as_i64()), (Some(op.as_str()), Some(1)));
    s.delete("/v1/rooms/r/sessions/c").await;
    no_codex_left(c.home.path()).await;
}
