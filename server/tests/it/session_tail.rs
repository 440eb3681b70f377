//! A session drawn without its room's history: `GET …/sessions/{id}/events?before=` pages a
//! canonical session's events back from its tail (`prev`), `after=` forwards (`next`), and
//! `GET …/sessions/{id}/present` is what the log would otherwise have to be folded for.

use reqwest::StatusCode;
use serde_json::Value;

use crate::common::*;

/// The session's events read back from its tail in pages of `limit`, oldest first.
async fn read_back(s: &Server, room: &str, session: &str, limit: u32) -> Vec<Value> {
    let mut got: Vec<Value> = Vec::new();
    let mut before = i64::MAX as u64;
    loop {
        let (status, page) =
            s.get(&format!("/v1/rooms/{room}/sessions/{session}/events?before={before}&limit={limit}")).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let mut data = page["data"].as_array().unwrap().clone();
        assert!(data.len() <= limit as usize);
        assert!(page.get("next").is_none(), "a page backwards names no next: {page}");
        data.extend(got);
        got = data;
        match page["prev"].as_u64() {
            Some(prev) => before = prev,
            None => return got,
        }
    }
}

/// The session's events read forwards in pages of `limit`.
async fn read_forward(s: &Server, room: &str, session: &str, limit: u32) -> Vec<Value> {
    let mut got: Vec<Value> = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) =
            s.get(&format!("/v1/rooms/{room}/sessions/{session}/events?after={after}&limit={limit}")).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        got.extend(page["data"].as_array().unwrap().iter().cloned());
        match page["next"].as_u64() {
            Some(next) => after = next,
            None => return got,
        }
    }
}

#[tokio::test]
async fn a_sessions_tail_pages_back_and_forward_holding_exactly_its_events() {
    let s = Server::start(&[]).await;
    s.session("r", "a").await;
    s.session("r", "b").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // Two sessions' turns interleave in the room.
    for (session, text) in [("a", "one two"), ("b", "three"), ("a", "four five six"), ("b", "seven"), ("a", "eight")] {
        let turn = s.turn("r", session, text).await;
        ws.until(move |e| e["turnId"] == turn.as_str() && e["type"] == "turn.completed").await;
    }
    let room = s.events("r").await;
    for session in ["a", "b"] {
        let want: Vec<&Value> = room.iter().filter(|e| e["sessionId"] == session).collect();
        assert!(want.len() > 8, "{session}: {}", want.len());
        for limit in [1, 4, 1000] {
            let back = read_back(&s, "r", session, limit).await;
            assert_eq!(back.iter().collect::<Vec<_>>(), want, "{session} back in pages of {limit}");
            let forward = read_forward(&s, "r", session, limit).await;
            assert_eq!(forward.iter().collect::<Vec<_>>(), want, "{session} forward in pages of {limit}");
        }
        // The tail: the newest events, oldest first, and where the next older page ends.
        let (_, page) = s.get(&format!("/v1/rooms/r/sessions/{session}/events?before=999999&limit=3")).await;
        let seqs: Vec<u64> = page["data"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        let tail: Vec<u64> = want[want.len() - 3..].iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, tail);
        assert_eq!(page["prev"].as_u64(), Some(tail[0]));
        assert_eq!(page["headSeq"], room.last().unwrap()["seq"]);
    }
    // Both directions at once, a zero `before`, an unknown session: clear errors.
    for (query, status, code) in [
        ("after=1&before=5", StatusCode::BAD_REQUEST, "invalid_query"),
        ("before=0", StatusCode::BAD_REQUEST, "invalid_query"),
        ("before=9223372036854775808", StatusCode::BAD_REQUEST, "invalid_query"),
    ] {
        let (got, body) = s.get(&format!("/v1/rooms/r/sessions/a/events?{query}")).await;
        assert_eq!(error_code(got, &body, status), code, "{query}");
    }
    let (got, body) = s.get("/v1/rooms/r/sessions/nobody/events?before=10").await;
    assert_eq!(error_code(got, &body, StatusCode::NOT_FOUND), "session_not_found");
}

#[tokio::test]
async fn a_sessions_tail_shows_what_retention_kept() {
    // A room far past its retention: the session's tail is what is kept, read without a 410.
    let s = Server::start(&["--retention-events", "40"]).await;
    s.session("r", "a").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    for i in 0..12 {
        let turn = s.turn("r", "a", &format!("turn {i}")).await;
        ws.until(move |e| e["turnId"] == turn.as_str() && e["type"] == "turn.completed").await;
    }
    let (_, first) = s.get("/v1/rooms/r/events?after=0&limit=1").await;
    let oldest = first["error"]["details"]["oldestSeq"].as_u64().expect("the room's start is pruned");
    let back = read_back(&s, "r", "a", 7).await;
    assert!(!back.is_empty());
    assert!(back.iter().all(|e| e["seq"].as_u64().unwrap() >= oldest), "only what is kept");
    assert_eq!(back.last().unwrap()["seq"], first["error"]["details"]["headSeq"]);
    // Forwards from before what is kept: 410 with where it starts, as the room's log says.
    let (got, body) = s.get("/v1/rooms/r/sessions/a/events?after=0").await;
    assert_eq!(error_code(got, &body, StatusCode::GONE), "history_expired");
    assert_eq!(body["error"]["details"]["oldestSeq"].as_u64(), Some(oldest));
}

#[tokio::test]
async fn a_sessions_present_is_what_its_log_would_fold_to() {
    let s = Server::start(&[]).await;
    s.session("r", "a").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let turn = s.turn("r", "a", "/plan read it; change it\n/ask May I change it?").await;
    let t = turn.clone();
    let asked = ws.until(move |e| e["turnId"] == t.as_str() && e["type"] == "interaction.requested").await;
    let asked = asked.last().unwrap().clone();
    let (status, present) = s.get("/v1/rooms/r/sessions/a/present").await;
    assert_eq!(status, StatusCode::OK, "{present}");
    assert_eq!(present["session"]["sessionId"], "a");
    assert_eq!(present["session"]["status"], "waiting");
    assert_eq!(present["session"]["activeTurnId"], turn.as_str());
    let pending = present["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{present}");
    assert_eq!(pending[0]["requestId"], asked["payload"]["requestId"]);
    assert_eq!(pending[0]["turnId"], turn.as_str());
    assert_eq!(present["plan"]["turnId"], turn.as_str());
    let steps: Vec<&str> =
        present["plan"]["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap_or_default()).collect();
    assert_eq!(steps, ["read it", "change it"], "{present}");
    assert!(!present["commands"].as_array().unwrap().is_empty(), "the agent's commands: {present}");
    assert!(present["usage"]["totals"].is_object(), "{present}");
    assert!(present["queue"].as_array().unwrap().is_empty());
    assert!(present["open"].is_array());
    // Everything through `headSeq` is in it: the request's event is at or below it.
    assert!(present["headSeq"].as_u64().unwrap() >= asked["seq"].as_u64().unwrap());

    // Answered, the turn ends: nothing pending, the session ready.
    let request = asked["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, body) = s
        .post(
            &format!("/v1/rooms/r/sessions/a/interactions/{request}"),
            serde_json::json!({"decision": "accept", "answers": {"answer": "yes"}}),
        )
        .await;
    assert!(status.is_success(), "{body}");
    let t = turn.clone();
    ws.until(move |e| e["turnId"] == t.as_str() && e["type"] == "turn.completed").await;
    let (_, present) = s.get("/v1/rooms/r/sessions/a/present").await;
    assert_eq!(present["session"]["status"], "ready");
    assert!(present["pending"].as_array().unwrap().is_empty());
    assert!(present["open"].as_array().unwrap().is_empty());
    let (got, body) = s.get("/v1/rooms/r/sessions/nobody/present").await;
    assert_eq!(error_code(got, &body, StatusCode::NOT_FOUND), "session_not_found");
}
