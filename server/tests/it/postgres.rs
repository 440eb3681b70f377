//! The real binary on PostgreSQL (`--database-url`, a real server started by
//! `ensemble-test-engines` on a free loopback port): the state lives in the database, not in the
//! data dir; a database that goes away makes writes answer 503 `store_unavailable` (with
//! `Retry-After`) and `/readyz` 503 instead of hanging, and service resumes by itself when it is
//! back, with everything acknowledged before still there.

use reqwest::StatusCode;
use serde_json::json;

use crate::common::*;
use ensemble_test_engines::{Postgres, TestDatabase};

/// A PostgreSQL server of this test's own, with one database, and its URL.
async fn postgres() -> Option<(Postgres, String)> {
    if !tier::postgres() {
        return None;
    }
    // Its helpers block on a runtime of their own: off this one.
    let made = tokio::task::spawn_blocking(|| {
        let pg = Postgres::start().unwrap();
        let url = pg.create_database("ensemble").unwrap();
        (pg, url)
    })
    .await
    .unwrap();
    Some(made)
}

/// A database of this test's own on the run's shared PostgreSQL (or a server of its own), for the
/// tests that do not stop the server.
async fn database() -> Option<TestDatabase> {
    if !tier::postgres() {
        return None;
    }
    Some(tokio::task::spawn_blocking(|| TestDatabase::create("ensemble").unwrap()).await.unwrap())
}

async fn completed_turn(s: &Server, room: &str, id: &str, text: &str) -> Vec<serde_json::Value> {
    let mut ws = s.ws(room, None).await;
    ws.hello().await;
    let turn = s.turn(room, id, text).await;
    ws.until(|e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str()).await
}

#[tokio::test]
async fn sessions_and_room_logs_live_in_postgres_across_servers() {
    let Some(db) = database().await else { return };
    let url = db.url().to_owned();
    let a = Server::start(&["--database-url", &url]).await;
    let (status, body) = a.get("/readyz").await;
    assert_eq!((status, body["database"].as_str()), (StatusCode::OK, Some("postgres")));
    a.session("r", "s").await;
    completed_turn(&a, "r", "s", "hello").await;
    let before = a.events("r").await;
    assert_gap_free(&before);
    // One server per database: a second one is refused while the first runs.
    let other = tempfile::tempdir().unwrap();
    let data = other.path().join("data");
    let out = run_to_exit(&["--data-dir", data.to_str().unwrap(), "--database-url", &url]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("another Ensemble server is using this database"), "{stderr}");
    a.stop().await;

    // Another server, another (empty) data dir, the same database: everything is there.
    let b = Server::start(&["--database-url", &url]).await;
    let (status, body) = b.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "disconnected", "a restart leaves no live process");
    assert_eq!(b.events("r").await[..before.len()], before[..], "the room log, byte for byte");
    // Resumed on the new server (the scripted transcript is in the database) and the seq goes on.
    completed_turn(&b, "r", "s", "again").await;
    let after = b.events("r").await;
    assert_gap_free(&after);
    assert!(after.len() > before.len());
    let transcript = after.iter().filter(|e| e["type"] == "message.completed").count();
    assert_eq!(transcript, 2, "both replies in one log");
}

#[tokio::test]
async fn a_database_restart_answers_503_then_service_resumes_by_itself() {
    let Some((pg, url)) = postgres().await else { return };
    let s = Server::start(&["--database-url", &url]).await;
    s.session("r", "kept").await;
    let acknowledged = s.events("r").await;

    let mut pg = tokio::task::spawn_blocking(move || {
        let mut pg = pg;
        pg.stop().unwrap();
        pg
    })
    .await
    .unwrap();
    let res = s.http().post(s.url("/v1/rooms/r/sessions")).json(&json!({"sessionId": "during"})).send().await.unwrap();
    let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = decode(res).await;
    assert_eq!(error_code(status, &body, StatusCode::SERVICE_UNAVAILABLE), "store_unavailable");
    assert!(retry.is_some(), "503 carries Retry-After");
    let (status, body) = s.get("/readyz").await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("database_unavailable")));

    pg = tokio::task::spawn_blocking(move || {
        pg.start_again().unwrap();
        pg
    })
    .await
    .unwrap();
    // `start_again` returns once the database answers queries: the server is ready at once.
    s.assert_ready().await;
    // The failed start left nothing behind: the same id starts now.
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "during"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // What was acknowledged before is all there, and the room's seq goes on without a gap.
    let events = s.events("r").await;
    assert_eq!(events[..acknowledged.len()], acknowledged[..]);
    assert_gap_free(&events);
    completed_turn(&s, "r", "kept", "after the outage").await;
    drop(pg);
}

#[tokio::test]
async fn a_bad_or_unreachable_database_url_stops_the_start_with_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let data = data.to_str().unwrap();
    let out = run_to_exit(&["--data-dir", data, "--database-url", "mysql://u:p@127.0.0.1/db"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("expected a postgres:// (or postgresql://) URL"), "{stderr}");

    // Nothing listens there (a port just released): refused at once, not retried for ever.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://postgres@127.0.0.1:{port}/ensemble");
    let out = run_to_exit(&["--data-dir", data, "--database-url", &url]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("opening the store (postgres)") && stderr.contains("unavailable"), "{stderr}");
}
