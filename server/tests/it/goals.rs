//! Goals with the scripted provider, through REST and the room WebSocket of the real binary:
//! operation identities, idempotency, revisions, repair epochs, provider-created goals and their
//! adoption, continuation attribution (evidence, claim, unproven) and the ledger across a restart.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

async fn put_goal(s: &Server, id: &str, objective: &str, csid: &str) -> (StatusCode, Value) {
    let res = s
        .http()
        .put(s.url(&format!("/v1/rooms/r/sessions/{id}/goal")))
        .json(&json!({"objective": objective, "clientSubmitId": csid}))
        .send()
        .await
        .unwrap();
    decode(res).await
}

fn started_turns(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| e["type"] == "turn.started").map(|e| e["payload"].clone()).collect()
}

#[tokio::test]
async fn a_user_goal_is_pursued_by_continuations_attributed_to_its_operation() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, body) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "no_goal");

    let (status, goal) = put_goal(&s, "s", "write the docs steps=2", "c-1").await;
    assert_eq!(status, StatusCode::OK, "{goal}");
    assert_eq!(goal["objective"], "write the docs steps=2");
    assert_eq!(goal["status"], "active");
    assert_eq!(goal["origin"], "user");
    assert_eq!(goal["revision"], 1);
    assert_eq!(goal["repairEpoch"], 0);
    let op = goal["operationId"].as_str().unwrap().to_owned();
    // Two continuation turns, then the goal is complete.
    let events = ws.until(|e| e["type"] == "goal.updated" && e["payload"]["goal"]["status"] == "complete").await;
    let turns = started_turns(&events);
    assert_eq!(turns.len(), 2, "{events:?}");
    for t in &turns {
        assert_eq!(t["origin"], "goal_continuation", "{t}");
        assert_eq!(t["goalOperationId"], op.as_str());
        assert_eq!(t["goalRevision"], 1);
        assert_eq!(t["goalRepairEpoch"], 0);
    }
    let first = &events.iter().find(|e| e["type"] == "goal.updated").unwrap()["payload"]["goal"];
    assert_eq!(first["operationId"], op.as_str());
    let (_, now) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(now["status"], "complete");
    assert_eq!(now["operationId"], op.as_str());

    // The same request twice is the same operation: no new revision, no new continuation.
    let (status, again) = put_goal(&s, "s", "write the docs steps=2", "c-1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["operationId"], op.as_str());
    assert_eq!(again["revision"], 1);
}

#[tokio::test]
async fn every_change_is_an_operation_with_a_growing_revision() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (_, set) = put_goal(&s, "s", "stay idle", "a").await;
    assert_eq!(set["revision"], 1);
    let (status, paused) = s.post_empty("/v1/rooms/r/sessions/s/goal/pause?clientSubmitId=p").await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["status"], "paused");
    assert_eq!(paused["revision"], 2);
    assert_ne!(paused["operationId"], set["operationId"]);
    let (_, again) = s.post_empty("/v1/rooms/r/sessions/s/goal/pause?clientSubmitId=p").await;
    assert_eq!(again["revision"], 2, "the same pause again");
    let (status, resumed) = s.post_empty("/v1/rooms/r/sessions/s/goal/resume").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((resumed["status"].as_str(), resumed["revision"].as_i64()), (Some("active"), Some(3)));
    let (status, _) = s.delete("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "no_goal");
    let events = ws.until_type("goal.cleared").await;
    let cleared = events.last().unwrap();
    assert_eq!(cleared["payload"]["revision"], 4);
    let revisions: Vec<i64> = events
        .iter()
        .filter(|e| e["type"] == "goal.updated")
        .map(|e| e["payload"]["goal"]["revision"].as_i64().unwrap())
        .collect();
    assert_eq!(revisions, [1, 2, 3]);
    // Nothing to pause without a goal; a new set continues the revisions.
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/goal/pause").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "no_goal");
    let (_, set2) = put_goal(&s, "s", "stay idle again", "b").await;
    assert_eq!(set2["revision"], 5);
    // Bad input.
    let (status, body) = put_goal(&s, "s", "  ", "c").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    let (status, body) = put_goal(&s, "s", "x", "").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    // A clientSubmitId names one operation: reusing it for another action conflicts.
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/goal/pause?clientSubmitId=b").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "client_submit_id_conflict");
}

#[tokio::test]
async fn a_failed_operation_is_re_driven_with_the_next_repair_epoch() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let (status, body) = put_goal(&s, "s", "idle FAILONCE", "x").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_GATEWAY), "scripted_goal_failure");
    let (status, body) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "no_goal");
    let (status, goal) = put_goal(&s, "s", "idle FAILONCE", "x").await;
    assert_eq!(status, StatusCode::OK, "{goal}");
    assert_eq!(goal["revision"], 1, "the same operation, the same revision");
    assert_eq!(goal["repairEpoch"], 1, "re-driven once");
}

#[tokio::test]
async fn a_goal_the_agent_creates_itself_is_adopted_and_its_continuations_credited() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/goal tidy the repo steps=1").await;
    let events = ws.until(|e| e["type"] == "goal.updated" && e["payload"]["goal"]["status"] == "complete").await;
    let adopted = &events.iter().find(|e| e["type"] == "goal.updated").unwrap()["payload"]["goal"];
    assert_eq!(adopted["origin"], "provider");
    assert_eq!(adopted["objective"], "tidy the repo steps=1");
    assert_eq!(adopted["revision"], 1);
    let op = adopted["operationId"].as_str().unwrap();
    let continuation = started_turns(&events).into_iter().find(|t| t["origin"] != "user").expect("a continuation");
    assert_eq!(continuation["origin"], "goal_continuation");
    assert_eq!(continuation["goalOperationId"], op);
    let (_, goal) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!((goal["origin"].as_str(), goal["status"].as_str()), (Some("provider"), Some("complete")));
}

#[tokio::test]
async fn a_continuation_without_evidence_uses_the_claim_once_then_is_unproven() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (_, goal) = put_goal(&s, "s", "noevidence steps=2", "n").await;
    let op = goal["operationId"].as_str().unwrap().to_owned();
    let events = ws.until_type("goal.reconcile_required").await;
    let turns = started_turns(&events);
    assert_eq!(turns.len(), 2, "{events:?}");
    assert_eq!(turns[0]["origin"], "goal_continuation", "the claim credits the first");
    assert_eq!(turns[0]["goalOperationId"], op.as_str());
    assert_eq!(turns[1]["origin"], "provider", "the second is not credited to anyone");
    assert!(turns[1].get("goalOperationId").is_none());
    let reconcile = &events.last().unwrap()["payload"];
    assert_eq!(reconcile["reason"], "unproven_continuation");
}

#[tokio::test]
async fn the_ledger_resolves_the_generation_after_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.session("r", "s").await;
    let (_, goal) = put_goal(&s, "s", "keep going idle", "g").await;
    let op = goal["operationId"].as_str().unwrap().to_owned();
    assert!(s.stop().await.success());

    let s = Server::start_in(tmp.path(), &[]).await;
    let (_, after) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(after["operationId"], op.as_str(), "the goal survived");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // The agent reports progress on its (resumed) goal: the ledger binds that generation to the
    // user's operation, so it updates the goal instead of being adopted as a new one.
    s.turn("r", "s", "/progress").await;
    let events = ws.until(|e| e["type"] == "goal.updated").await;
    let updated = &events.last().unwrap()["payload"]["goal"];
    assert_eq!(updated["operationId"], op.as_str());
    assert_eq!(updated["origin"], "user");
    assert_eq!(updated["tokensUsed"], 10);
}

#[tokio::test]
async fn side_sessions_refuse_goals() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let (status, _) = s.post("/v1/rooms/r/sessions/s/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = put_goal(&s, "side", "anything", "x").await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "goals_unsupported");
    let (_, providers) = s.get("/v1/providers").await;
    let scripted = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "scripted").unwrap();
    assert_eq!(scripted["capabilities"]["goals"], true);
}

/// A goal set while the previous goal's last continuation runs is pursued in its turn: that
/// continuation finishes only the goal it served.
#[tokio::test]
async fn a_continuation_finishes_only_its_own_goal() {
    let s = Server::start(&["--scripted-chunk-delay-ms", "40"]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    put_goal(&s, "s", "first walk", "g1").await;
    ws.until(|e| e["type"] == "turn.started" && e["payload"]["origin"] == "goal_continuation").await;
    put_goal(&s, "s", "second walk", "g2").await;
    let done = ws
        .until(|e| {
            e["type"] == "message.completed"
                && e["payload"]["text"].as_str().is_some_and(|t| t.contains("Working toward the goal: second walk"))
        })
        .await;
    assert!(!done.is_empty());
    let (_, goal) = s.get("/v1/rooms/r/sessions/s/goal").await;
    assert_eq!(goal["objective"], "second walk");
}

/// The scripted agent's pursuit of a goal survives a restart: its continuation steps go on from
/// where they were, not from step 1 again.
#[tokio::test]
async fn a_goals_progress_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--scripted-chunk-delay-ms", "40"];
    let s = Server::start_in(tmp.path(), &args).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    put_goal(&s, "s", "walk steps=3", "g").await;
    let step = |e: &serde_json::Value| {
        let text = e["payload"]["text"].as_str().unwrap_or_default();
        text.split("(step ").nth(1).and_then(|t| t.split(' ').next()).and_then(|n| n.parse::<u64>().ok())
    };
    ws.until(|e| e["type"] == "message.completed" && step(e) == Some(1)).await;
    assert!(s.stop().await.success());

    let s = Server::start_in(tmp.path(), &args).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, _) = s.post_empty("/v1/rooms/r/sessions/s/resume").await;
    assert_eq!(status, StatusCode::OK);
    let next = ws.until(|e| e["type"] == "message.completed" && step(e).is_some()).await;
    let n = step(next.last().unwrap()).unwrap();
    assert!(n >= 2, "the pursuit went on from step {n}, not from the start");
}
