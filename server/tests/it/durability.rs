//! Restarts: graceful (SIGTERM) and brutal (SIGKILL). Nothing acknowledged is lost, nothing is
//! live afterwards, and each room's seq continues where it stopped.

use reqwest::StatusCode;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn sigterm_drains_closes_sockets_and_exits_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &["--drain-ms", "3000"]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/hang").await;
    ws.until_type("turn.started").await;
    s.signal(15);
    // Readiness flips to 503 while draining; changes are refused, reads still work.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (status, body) = s.get("/readyz").await;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            assert_eq!(body["status"], "draining");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "readyz never went 503");
        tokio::task::yield_now().await;
    }
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({})).await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "shutting_down");
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
    // The socket gets a close frame, then the process exits 0.
    loop {
        let f = ws.frame().await;
        if f["type"] == "__close" {
            assert_eq!(f["code"], 1001);
            break;
        }
    }
    let status = s.stop_waiting().await;
    assert!(status.success(), "exit status {status:?}");

    // The turn that was running is reported as ended by the shutdown.
    let s = Server::start_in(tmp.path(), &[]).await;
    let events = s.events("r").await;
    assert_gap_free(&events);
    let failed = events.iter().find(|e| e["type"] == "turn.failed").expect("turn.failed");
    assert_eq!(failed["payload"]["error"]["code"], "server_shutdown");
    let (_, session) = s.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(session["status"], "disconnected");
    assert_eq!(session["live"], false);
}

#[tokio::test]
async fn a_restart_keeps_sessions_and_seq_and_resume_restores_the_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.session("r", "a").await;
    s.session("r", "b").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "a", "first message").await;
    ws.until_type("turn.completed").await;
    s.post_empty("/v1/rooms/r/sessions/b/release").await;
    ws.until_type("session.updated").await;
    drop(ws);
    let before = s.events("r").await;
    assert!(s.stop().await.success());

    let s = Server::start_in(tmp.path(), &[]).await;
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    let list = list["data"].as_array().unwrap().clone();
    assert_eq!(list.len(), 2, "every session is listed again");
    for session in &list {
        assert_eq!(session["live"], false);
        assert_eq!(session["status"], "disconnected");
        assert_eq!(session["resumable"], true);
    }
    let after_restart = s.events("r").await;
    assert_eq!(&after_restart[..before.len()], &before[..], "the log survived unchanged");
    assert_gap_free(&after_restart);

    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // Explicit resume.
    let (status, session) = s.post_empty("/v1/rooms/r/sessions/a/resume").await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert_eq!(session["live"], true);
    assert_eq!(session["status"], "ready");
    let upd = ws.event().await;
    assert_eq!(upd["type"], "session.updated");
    assert_eq!(upd["seq"].as_u64(), Some(after_restart.len() as u64 + 1), "seq continues where it stopped");
    s.turn("r", "a", "/history").await;
    let events = ws.until_type("turn.completed").await;
    let msg = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert!(msg["payload"]["text"].as_str().unwrap().contains("first message"), "{msg}");
    // Implicit resume by the next turn.
    s.turn("r", "b", "hi").await;
    let events = ws.until_type("turn.completed").await;
    assert_eq!(events[0]["type"], "session.updated");
    assert_eq!(events[0]["payload"]["reason"], "resumed");
    assert!(s.stop().await.success());
}

/// An accepted submit survives SIGKILL with its `clientSubmitId`: after the restart the turn is
/// reported interrupted, and a retry with the same `clientSubmitId` is recognised as the same
/// submit, not started a second time.
#[tokio::test]
async fn kill_9_keeps_an_accepted_submit_and_its_client_submit_id() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.session("r", "s").await;
    let submit = json!({"input": [{"type": "text", "text": "/hang"}], "clientSubmitId": "c-1"});
    let (status, first) = s.post("/v1/rooms/r/sessions/s/turns", submit.clone()).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    assert_eq!(first["duplicate"], false);
    s.kill9().await;

    let s = Server::start_in(tmp.path(), &[]).await;
    let events = s.events("r").await;
    let failed: Vec<_> = events.iter().filter(|e| e["type"] == "turn.failed").collect();
    assert_eq!(failed.len(), 1, "the accepted turn is reported interrupted: {events:?}");
    assert_eq!(failed[0]["payload"]["turnId"], first["turnId"]);
    let (status, again) = s.post("/v1/rooms/r/sessions/s/turns", submit).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    assert_eq!(again["duplicate"], true, "the retry is the same submit: {again}");
    assert_eq!(again["turnId"], first["turnId"]);
    assert!(s.stop().await.success());
}

#[tokio::test]
async fn kill_9_loses_nothing_acknowledged_and_reports_interruptions() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.session("r", "s").await;
    s.session("r", "q").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "q", "/run make deploy").await;
    let req = ws.until_type("interaction.requested").await.pop().unwrap();
    let turn = s.turn("r", "s", "/slow 20\n/chunks 500").await;
    let seen = ws.until(|e| e["type"] == "message.delta" && e["sessionId"] == "s").await;
    let last_seen = seen.last().unwrap()["seq"].as_u64().unwrap();
    s.kill9().await;

    let s = Server::start_in(tmp.path(), &[]).await;
    let events = s.events("r").await;
    assert_gap_free(&events);
    assert!(events.len() as u64 > last_seen, "everything a client saw is still there");
    let failed: Vec<_> = events.iter().filter(|e| e["type"] == "turn.failed").collect();
    assert_eq!(failed.len(), 2, "both interrupted turns are reported");
    assert!(failed.iter().all(|f| f["payload"]["error"]["code"] == "server_restart"));
    assert!(failed.iter().any(|f| f["payload"]["turnId"] == turn.as_str()));
    // The streamed reply is closed with the text so far, before its turn's end.
    let of_turn: Vec<_> = events.iter().filter(|e| e["turnId"] == turn.as_str()).collect();
    let streamed: String = of_turn
        .iter()
        .filter(|e| e["type"] == "message.delta")
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert!(!streamed.is_empty());
    let n = of_turn.len();
    assert_eq!(of_turn[n - 2]["type"], "message.completed", "the open message is closed: {:?}", of_turn[n - 2]);
    assert_eq!(of_turn[n - 2]["payload"]["text"], streamed.as_str());
    assert_eq!(of_turn[n - 1]["type"], "turn.failed");
    let resolved = events.iter().find(|e| e["type"] == "interaction.resolved").expect("pending interaction reported");
    assert_eq!(resolved["payload"]["requestId"], req["payload"]["requestId"]);
    assert_eq!(resolved["payload"]["resolvedBy"], "restart");
    for id in ["s", "q"] {
        let (_, session) = s.get(&format!("/v1/rooms/r/sessions/{id}")).await;
        assert_eq!(session["status"], "disconnected");
        assert!(session.get("activeTurnId").is_none());
    }
    let (_, list) = s.get("/v1/rooms/r/sessions/q/interactions").await;
    assert_eq!(list["data"], json!([]));
    // A second restart adds nothing: the interruptions were reported once.
    let count = events.len();
    assert!(s.stop().await.success());
    let s = Server::start_in(tmp.path(), &[]).await;
    assert_eq!(s.events("r").await.len(), count);
    // And the session works again.
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "back").await;
    ws.until_type("turn.completed").await;
}
