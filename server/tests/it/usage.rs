//! Usage and budgets: a session's ledger per turn and in all, a room's by provider and by
//! session; a reached budget refuses new turns (409 `budget_exhausted`), says so once, holds the
//! queue, cancels the running turn when it says `cancel`, and a higher one lets work go on; the
//! server's default budgets; all of it kept across a restart.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

async fn usage(s: &Server, session: &str) -> Value {
    let (status, u) = s.get(&format!("/v1/rooms/r/sessions/{session}/usage")).await;
    assert_eq!(status, StatusCode::OK, "{u}");
    u
}

async fn submit(s: &Server, session: &str, text: &str) -> (StatusCode, Value) {
    s.post(&format!("/v1/rooms/r/sessions/{session}/turns"), json!({"input": [{"type": "text", "text": text}]})).await
}

/// Waits for turn `turn` to end.
async fn ended(ws: &mut Ws, turn: &str) -> Vec<Value> {
    let t = turn.to_owned();
    ws.until(move |e| {
        e["turnId"] == t.as_str()
            && e["type"].as_str().is_some_and(|ty| ty.starts_with("turn.") && ty != "turn.started")
    })
    .await
}

fn tokens(u: &Value) -> i64 {
    u["inputTokens"].as_i64().unwrap() + u["outputTokens"].as_i64().unwrap()
}

#[tokio::test]
async fn a_ledger_counts_each_turn_and_a_room_adds_its_sessions_up() {
    let s = Server::start(&[]).await;
    s.session("r", "a").await;
    s.session("r", "b").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let one = s.turn("r", "a", "one two").await;
    ended(&mut ws, &one).await;
    let two = s.turn("r", "a", "three four five").await;
    ended(&mut ws, &two).await;
    let spent = s.turn("r", "b", "/spend 100 0.25").await;
    ended(&mut ws, &spent).await;

    let a = usage(&s, "a").await;
    let turns = a["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{a}");
    assert_eq!((turns[0]["turnId"].as_str(), turns[1]["turnId"].as_str()), (Some(one.as_str()), Some(two.as_str())));
    // A word is a token to the scripted agent: the input's words, then the reply's.
    assert_eq!(
        (turns[0]["usage"]["inputTokens"].as_i64(), turns[1]["usage"]["inputTokens"].as_i64()),
        (Some(2), Some(3))
    );
    assert!(turns.iter().all(|t| t["usage"]["outputTokens"].as_i64() > Some(0)), "{a}");
    assert_eq!(tokens(&a["totals"]), tokens(&turns[0]["usage"]) + tokens(&turns[1]["usage"]), "{a}");
    assert_eq!((a["provider"].as_str(), a["state"]["exhausted"].as_bool()), (Some("scripted"), Some(false)));
    assert_eq!(a["state"]["tokens"].as_i64(), Some(tokens(&a["totals"])));
    assert!(a.get("budget").is_none(), "no budget by default: {a}");
    // Each turn's share matches what the agent said the turn took.
    let last: Vec<i64> = s
        .events("r")
        .await
        .iter()
        .filter(|e| e["type"] == "usage.updated" && e["sessionId"] == "a")
        .filter_map(|e| e["payload"]["lastTurnTotalTokens"].as_i64())
        .collect();
    assert_eq!(last, [tokens(&turns[0]["usage"]), tokens(&turns[1]["usage"])]);

    let b = usage(&s, "b").await;
    assert_eq!(b["turns"][0]["usage"]["cost"], json!({"amount": 0.25, "currency": "USD"}), "{b}");
    assert!(b["totals"]["outputTokens"].as_i64().unwrap() >= 100, "{b}");

    let (status, room) = s.get("/v1/rooms/r/usage").await;
    assert_eq!(status, StatusCode::OK, "{room}");
    assert_eq!(tokens(&room["totals"]), tokens(&a["totals"]) + tokens(&b["totals"]), "{room}");
    assert_eq!(room["totals"]["cost"]["amount"], 0.25);
    let providers = room["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 1, "{room}");
    assert_eq!(
        (providers[0]["provider"].as_str(), tokens(&providers[0]["usage"])),
        (Some("scripted"), tokens(&room["totals"]))
    );
    let sessions: Vec<(&str, i64)> = room["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["sessionId"].as_str().unwrap(), tokens(&l["usage"])))
        .collect();
    assert_eq!(sessions, [("a", tokens(&a["totals"])), ("b", tokens(&b["totals"]))]);
    // Another room's are its own.
    let (_, other) = s.get("/v1/rooms/elsewhere/usage").await;
    assert_eq!((tokens(&other["totals"]), other["sessions"].as_array().map(Vec::len)), (0, Some(0)), "{other}");
}

#[tokio::test]
async fn a_reached_session_budget_refuses_turns_holds_the_queue_and_a_raise_goes_on() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, set) = s.put("/v1/rooms/r/sessions/s/budget", json!({"maxTokens": 50})).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(set["budget"]["maxTokens"], 50);
    let small = s.turn("r", "s", "a few words").await;
    ended(&mut ws, &small).await;
    // This one goes past the budget; it still finishes (the default), and is said once.
    let big = s.turn("r", "s", "/spend 60\n/slow 20\n/chunks 10").await;
    let (status, q) = s
        .post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "queued"}], "queue": true}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{q}");
    let queued = q["turnId"].as_str().unwrap().to_owned();
    let notice = ws
        .until(|e| e["type"] == "notice" && e["payload"]["message"].as_str().is_some_and(|m| m.contains("budget")))
        .await;
    assert_eq!(notice.last().unwrap()["payload"]["level"], "warning");
    let end = ended(&mut ws, &big).await;
    assert_eq!(end.last().unwrap()["type"], "turn.completed");

    let (status, body) = submit(&s, "s", "more").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "budget_exhausted");
    assert_eq!(body["error"]["details"]["scope"], "session", "{body}");
    assert_eq!(body["error"]["details"]["state"]["exhausted"], true, "{body}");
    let (status, body) = s.post_empty(&format!("/v1/rooms/r/sessions/s/queue/{queued}/send")).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "budget_exhausted");
    // A queued submit waits for the raise rather than failing.
    let (status, q2) = s
        .post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "later"}], "queue": true}))
        .await;
    assert_eq!((status, q2["queued"].as_bool()), (StatusCode::ACCEPTED, Some(true)), "{q2}");
    let u = usage(&s, "s").await;
    assert_eq!(u["state"]["exhausted"], true, "{u}");
    let (status, list) = s.get("/v1/rooms/r/sessions/s/queue").await;
    assert_eq!((status, list["data"].as_array().map(Vec::len)), (StatusCode::OK, Some(2)), "held: {list}");
    let said = s
        .events("r")
        .await
        .iter()
        .filter(|e| e["type"] == "notice" && e["payload"]["message"].as_str().is_some_and(|m| m.contains("budget")))
        .count();
    assert_eq!(said, 1, "said once");

    // Raised: the queue goes on by itself, in its order.
    let (status, raised) = s.put("/v1/rooms/r/sessions/s/budget", json!({"maxTokens": 100000})).await;
    assert_eq!((status, raised["state"]["exhausted"].as_bool()), (StatusCode::OK, Some(false)), "{raised}");
    let end = ended(&mut ws, &queued).await;
    assert_eq!(end.last().unwrap()["type"], "turn.completed");
    let later = q2["turnId"].as_str().unwrap().to_owned();
    ended(&mut ws, &later).await;
    let (status, body) = submit(&s, "s", "and on").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    // Cleared: no budget applies (the server has no default).
    let (status, cleared) = s.delete("/v1/rooms/r/sessions/s/budget").await;
    assert_eq!(status, StatusCode::OK);
    let _ = cleared;
    assert!(usage(&s, "s").await.get("budget").is_none());
}

#[tokio::test]
async fn a_budget_that_says_cancel_stops_the_running_turn() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, set) = s.put("/v1/rooms/r/sessions/s/budget", json!({"maxCost": 1.0, "onExhausted": "cancel"})).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    let turn = s.turn("r", "s", "/spend 10 0.6\n/spend 10 0.6\n/hang").await;
    let end = ended(&mut ws, &turn).await;
    assert_eq!(end.last().unwrap()["type"], "turn.canceled", "{:?}", end.last());
    let u = usage(&s, "s").await;
    assert_eq!((u["state"]["exhausted"].as_bool(), u["state"]["cost"].as_f64()), (Some(true), Some(1.2)), "{u}");
    let (status, body) = submit(&s, "s", "more").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "budget_exhausted");
}

#[tokio::test]
async fn a_room_budget_holds_every_session_of_the_room_and_no_other() {
    let s = Server::start(&[]).await;
    for id in ["a", "b"] {
        s.session("r", id).await;
    }
    s.post("/v1/rooms/q/sessions", json!({"sessionId": "c"})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, set) = s.put("/v1/rooms/r/budget", json!({"maxTokens": 40})).await;
    assert_eq!((status, set["budget"]["maxTokens"].as_i64()), (StatusCode::OK, Some(40)), "{set}");
    let t = s.turn("r", "a", "/spend 50").await;
    ended(&mut ws, &t).await;
    // Session b spent nothing, but the room did.
    let (status, body) = submit(&s, "b", "hello").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "budget_exhausted");
    assert_eq!(body["error"]["details"]["scope"], "room", "{body}");
    let (status, body) =
        s.post("/v1/rooms/q/sessions/c/turns", json!({"input": [{"type": "text", "text": "elsewhere"}]})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (_, room) = s.get("/v1/rooms/r/usage").await;
    assert_eq!(room["state"]["exhausted"], true, "{room}");
    let (status, _) = s.delete("/v1/rooms/r/budget").await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = submit(&s, "b", "hello").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

#[tokio::test]
async fn the_servers_default_budgets_apply_until_a_session_or_room_sets_its_own() {
    let s = Server::start(&["--session-max-tokens", "30", "--room-max-cost", "5"]).await;
    s.session("r", "s").await;
    let u = usage(&s, "s").await;
    assert_eq!(u["budget"]["maxTokens"], 30, "{u}");
    let (_, room) = s.get("/v1/rooms/r/usage").await;
    assert_eq!(room["budget"]["maxCost"], 5.0, "{room}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let t = s.turn("r", "s", "/spend 40").await;
    ended(&mut ws, &t).await;
    let (status, body) = submit(&s, "s", "more").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "budget_exhausted");
    let (status, _) = s.put("/v1/rooms/r/sessions/s/budget", json!({"maxTokens": 1000})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = submit(&s, "s", "more").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

#[tokio::test]
async fn bad_budgets_are_refused() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    for bad in [
        json!({"maxTokens": 0}),
        json!({"maxTokens": -5}),
        json!({"maxCost": 0}),
        json!({"maxCost": -1.5}),
        json!({"onExhausted": "explode"}),
        json!({"maxTokens": 10, "extra": true}),
        json!({"maxTokens": "ten"}),
    ] {
        for path in ["/v1/rooms/r/sessions/s/budget", "/v1/rooms/r/budget"] {
            let (status, body) = s.put(path, bad.clone()).await;
            assert!(
                status == StatusCode::BAD_REQUEST || status == StatusCode::UNPROCESSABLE_ENTITY,
                "{path} {bad}: {status} {body}"
            );
            assert!(body["error"]["code"].is_string(), "{body}");
        }
    }
    let (status, body) = s.put("/v1/rooms/r/sessions/nope/budget", json!({"maxTokens": 10})).await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "session_not_found");
    let (status, body) = s.get("/v1/rooms/r/sessions/nope/usage").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "session_not_found");
    // The server refuses a default that is no limit at start.
    for (flag, bad) in [("--session-max-tokens", "-3"), ("--room-max-cost", "-1"), ("--session-max-cost", "NaN")] {
        let out = run_to_exit(&[format!("{flag}={bad}")]).await;
        assert!(!out.status.success(), "{flag}={bad} must not start");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(flag),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[tokio::test]
async fn ledgers_and_budgets_survive_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.put("/v1/rooms/r/sessions/s/budget", json!({"maxTokens": 500})).await;
    s.put("/v1/rooms/r/budget", json!({"maxTokens": 900, "onExhausted": "cancel"})).await;
    let t = s.turn("r", "s", "/spend 120 0.5").await;
    ended(&mut ws, &t).await;
    let before = usage(&s, "s").await;
    let (_, room_before) = s.get("/v1/rooms/r/usage").await;
    s.kill9().await;
    let s = Server::start_in(tmp.path(), &[]).await;
    let after = usage(&s, "s").await;
    assert_eq!(after, before);
    let (_, room_after) = s.get("/v1/rooms/r/usage").await;
    assert_eq!(room_after, room_before);
    assert_eq!(room_after["budget"]["onExhausted"], "cancel");
    // The agent's count goes on from where it was: the next turn adds only its own share.
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let t = s.turn("r", "s", "one more").await;
    ended(&mut ws, &t).await;
    let u = usage(&s, "s").await;
    let turns = u["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{u}");
    assert_eq!(turns[1]["usage"]["inputTokens"], 2, "{u}");
    assert_eq!(tokens(&u["totals"]), tokens(&before["totals"]) + tokens(&turns[1]["usage"]), "{u}");
}
