//! A session's queue of follow-ups: input queued while a turn runs starts, as the turn id it was
//! given, once the turns before it have ended; listed, reordered, edited, removed, sent now; kept
//! across a restart; refused clearly when full or unknown.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::acp::AcpSetup;
use crate::common::*;

fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

async fn queue_turn(s: &Server, session: &str, t: &str, csid: Option<&str>) -> (StatusCode, Value) {
    let mut body = json!({"input": text(t), "queue": true});
    if let Some(c) = csid {
        body["clientSubmitId"] = json!(c);
    }
    s.post(&format!("/v1/rooms/r/sessions/{session}/turns"), body).await
}

async fn queued_ids(s: &Server, session: &str) -> Vec<String> {
    let (status, list) = s.get(&format!("/v1/rooms/r/sessions/{session}/queue")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list["data"].as_array().unwrap().iter().map(|q| q["turnId"].as_str().unwrap().to_owned()).collect()
}

/// The text of turn `turn`'s reply, waiting for its end.
async fn reply_of(ws: &mut Ws, turn: &str) -> String {
    let t = turn.to_owned();
    let events = ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == t.as_str()).await;
    events
        .iter()
        .filter(|e| e["type"] == "message.completed" && e["turnId"] == turn)
        .filter_map(|e| e["payload"]["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn follow_ups_wait_for_the_running_turn_and_start_in_their_order() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let running = s.turn("r", "s", "/slow 20\n/chunks 60").await;
    ws.until(|e| e["type"] == "message.delta").await;
    let (status, b) = queue_turn(&s, "s", "second", Some("c-2")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{b}");
    assert_eq!(b["queued"], true);
    let second = b["turnId"].as_str().unwrap().to_owned();
    let (_, again) = queue_turn(&s, "s", "second", Some("c-2")).await;
    assert_eq!((again["turnId"].as_str(), again["duplicate"].as_bool()), (Some(second.as_str()), Some(true)));
    let (_, c) = queue_turn(&s, "s", "third", None).await;
    let third = c["turnId"].as_str().unwrap().to_owned();
    assert_eq!(queued_ids(&s, "s").await, [second.clone(), third.clone()]);
    // Third first, and the second's text changed.
    let (status, body) = s.put("/v1/rooms/r/sessions/s/queue", json!({"order": [third, second]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) =
        s.patch(&format!("/v1/rooms/r/sessions/s/queue/{second}"), json!({"input": text("second, edited")})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A plain submit still refuses while a turn runs.
    let (status, body) = s.post("/v1/rooms/r/sessions/s/turns", json!({"input": text("now?")})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "turn_active");
    reply_of(&mut ws, &running).await;
    assert!(reply_of(&mut ws, &third).await.contains("You said: third"));
    assert!(reply_of(&mut ws, &second).await.contains("You said: second, edited"));
    assert!(queued_ids(&s, "s").await.is_empty());
    // Every change was announced, in order.
    let reasons: Vec<String> = s
        .events("r")
        .await
        .iter()
        .filter(|e| e["type"] == "queue.updated")
        .map(|e| e["payload"]["reason"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(reasons, ["queued", "queued", "reordered", "edited", "started", "started"]);
}

#[tokio::test]
async fn a_queue_is_bounded_its_turns_can_go_and_bad_requests_are_refused() {
    let s = Server::start(&["--max-queued-turns", "2"]).await;
    s.session("r", "s").await;
    // With nothing running and nothing waiting, a queued submit starts at once.
    let (status, b) = queue_turn(&s, "s", "/slow 20\n/chunks 200", None).await;
    assert_eq!((status, b["queued"].as_bool()), (StatusCode::ACCEPTED, Some(false)), "{b}");
    let (_, one) = queue_turn(&s, "s", "one", None).await;
    let (_, two) = queue_turn(&s, "s", "two", None).await;
    let (status, body) = queue_turn(&s, "s", "three", None).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "queue_full");
    let one = one["turnId"].as_str().unwrap();
    let (status, _) = s.delete(&format!("/v1/rooms/r/sessions/s/queue/{one}")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(queued_ids(&s, "s").await, [two["turnId"].as_str().unwrap()]);
    for (status, body) in [
        s.delete(&format!("/v1/rooms/r/sessions/s/queue/{one}")).await,
        s.patch(&format!("/v1/rooms/r/sessions/s/queue/{one}"), json!({"input": text("x")})).await,
        s.post_empty(&format!("/v1/rooms/r/sessions/s/queue/{one}/send")).await,
    ] {
        assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "queued_turn_not_found");
    }
    let (status, body) = s.put("/v1/rooms/r/sessions/s/queue", json!({"order": ["nope"]})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    let two = two["turnId"].as_str().unwrap();
    let (status, body) = s.patch(&format!("/v1/rooms/r/sessions/s/queue/{two}"), json!({"input": []})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn send_now_steers_where_it_can_else_cancels_and_goes_first() {
    // The scripted agent steers: the queued input joins the running turn.
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let running = s.turn("r", "s", "/slow 20\n/chunks 60").await;
    ws.until(|e| e["type"] == "message.delta").await;
    let (_, b) = queue_turn(&s, "s", "join in", None).await;
    let queued = b["turnId"].as_str().unwrap();
    let (status, sent) = s.post_empty(&format!("/v1/rooms/r/sessions/s/queue/{queued}/send")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    assert_eq!((sent["steered"].as_bool(), sent["turnId"].as_str()), (Some(true), Some(running.as_str())));
    let steered = ws.until_type("turn.steered").await.last().cloned().unwrap();
    assert_eq!(steered["payload"]["input"], text("join in"));
    assert!(queued_ids(&s, "s").await.is_empty());

    // An ACP agent does not steer: the running turn is canceled and the queued one starts.
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "t", "provider": "test-acp", "cwd": a.cwd()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let running = s.turn("r", "t", "slow").await;
    ws.until(|e| e["type"] == "message.delta").await;
    let (_, b) = queue_turn(&s, "t", "after the cancel", None).await;
    let queued = b["turnId"].as_str().unwrap().to_owned();
    let (status, sent) = s.post_empty(&format!("/v1/rooms/r/sessions/t/queue/{queued}/send")).await;
    assert_eq!((status, sent["queued"].as_bool()), (StatusCode::ACCEPTED, Some(true)), "{sent}");
    let r = running.clone();
    ws.until(move |e| e["type"] == "turn.canceled" && e["turnId"] == r.as_str()).await;
    assert!(reply_of(&mut ws, &queued).await.contains("echo: after the cancel"));
}

#[tokio::test]
async fn a_failed_turn_holds_the_queue_unless_the_session_says_go_on() {
    let s = Server::start(&[]).await;
    s.session("r", "held").await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "goes", "settings": {"queueAfterFailure": true}})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    for id in ["held", "goes"] {
        s.turn("r", id, "/slow 30\n/chunks 20\n/fail on purpose").await;
    }
    let (_, held) = queue_turn(&s, "held", "next", None).await;
    let (_, goes) = queue_turn(&s, "goes", "next", None).await;
    let goes = goes["turnId"].as_str().unwrap().to_owned();
    assert!(reply_of(&mut ws, &goes).await.contains("You said: next"));
    let failed = s.events("r").await.iter().filter(|e| e["type"] == "turn.failed").count();
    assert_eq!(failed, 2);
    assert_eq!(queued_ids(&s, "held").await, [held["turnId"].as_str().unwrap()], "held after the failure");
}

#[tokio::test]
async fn a_queue_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.session("r", "s").await;
    s.turn("r", "s", "/hang").await;
    let (_, b) = queue_turn(&s, "s", "later", Some("keep-me")).await;
    let id = b["turnId"].as_str().unwrap().to_owned();
    s.kill9().await;
    let s = Server::start_in(tmp.path(), &[]).await;
    assert_eq!(queued_ids(&s, "s").await, std::slice::from_ref(&id));
    // Still idempotent, and sent by hand once the interrupted turn is gone.
    let (_, again) = queue_turn(&s, "s", "later", Some("keep-me")).await;
    assert_eq!((again["turnId"].as_str(), again["duplicate"].as_bool()), (Some(id.as_str()), Some(true)));
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, sent) = s.post_empty(&format!("/v1/rooms/r/sessions/s/queue/{id}/send")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    assert!(reply_of(&mut ws, &id).await.contains("You said: later"));
}

/// A queue of large turns: `queue.updated` carries each turn's size and a short preview, not its
/// input (16 queued turns of 512 KiB made each event 8 MB and the log grow with the square of the
/// queue), the inputs are read over REST, and the queue is bounded by its bytes with a clear 409.
#[tokio::test]
async fn queue_events_carry_previews_and_the_queue_is_bounded_by_its_bytes() {
    let max = 3 << 20;
    let s = Server::start(&[
        "--max-queued-turns",
        "64",
        "--max-queued-bytes",
        &max.to_string(),
        "--queue-preview-bytes",
        "100",
    ])
    .await;
    s.session("r", "s").await;
    let running = s.turn("r", "s", "/hang").await;
    let big = |i: usize| format!("{i}é{}", "x".repeat(512 << 10));
    let mut ids = Vec::new();
    let refused = loop {
        let (status, body) = queue_turn(&s, "s", &big(ids.len()), None).await;
        if status != StatusCode::ACCEPTED {
            break (status, body);
        }
        ids.push(body["turnId"].as_str().unwrap().to_owned());
        assert!(ids.len() < 16, "the queue took {} turns of 512 KiB under a limit of 3 MiB", ids.len());
    };
    assert_eq!(ids.len(), 5, "5 turns of 512 KiB fit in 3 MiB, not 6");
    let (status, body) = refused;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "queue_full");
    let details = &body["error"]["details"];
    assert_eq!(details["maxQueuedBytes"], max);
    assert!(details["queuedBytes"].as_u64().unwrap() > 5 * (512 << 10), "{details}");
    assert!(body["error"]["message"].as_str().unwrap().contains("--max-queued-bytes"), "{body}");
    // An edit that would grow the queue past its bound is refused the same way; one that fits is not.
    let first = &ids[0];
    let (status, body) =
        s.patch(&format!("/v1/rooms/r/sessions/s/queue/{first}"), json!({"input": text(&"y".repeat(1 << 20))})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "queue_full");
    let (status, body) =
        s.patch(&format!("/v1/rooms/r/sessions/s/queue/{first}"), json!({"input": text("short")})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The events are small: a preview of 100 bytes (cut at a character), the size, the place.
    let events = s.events("r").await;
    let updates: Vec<&Value> = events.iter().filter(|e| e["type"] == "queue.updated").collect();
    assert_eq!(updates.len(), 6, "five queued and one edit");
    for e in &updates {
        let size = serde_json::to_string(e).unwrap().len();
        assert!(size < 4096, "a queue.updated of {size} bytes");
    }
    let last = &updates[5]["payload"];
    assert_eq!(last["reason"], "edited");
    let queue = last["queue"].as_array().unwrap();
    assert_eq!(queue.len(), 5);
    assert_eq!((queue[0]["turnId"].as_str(), queue[0]["preview"].as_str()), (Some(first.as_str()), Some("short")));
    assert!(queue[0].get("truncated").is_none(), "a whole short text is not truncated");
    let second = &queue[1];
    assert_eq!((second["position"].as_u64(), second["items"].as_u64()), (Some(1), Some(1)));
    assert_eq!(second["truncated"], true);
    let preview = second["preview"].as_str().unwrap();
    assert!(preview.starts_with("1é") && preview.len() <= 100 && preview.len() >= 97, "{preview:?}");
    assert!(second["bytes"].as_u64().unwrap() > 512 << 10);
    assert!(second.get("input").is_none(), "no whole input in an event");
    let total: u64 = queue.iter().map(|q| q["bytes"].as_u64().unwrap()).sum();
    assert_eq!(last["bytes"].as_u64(), Some(total));
    // The whole inputs are in the queue's route.
    let (_, list) = s.get("/v1/rooms/r/sessions/s/queue").await;
    assert_eq!(list["data"][1]["input"][0]["text"].as_str().map(str::len), Some(big(1).len()));
    // The running turn ends, the queue goes on: each start carries its whole input.
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    assert!(status.is_success(), "{status} {body}");
    let mut ws = s.ws("r", Some(0)).await;
    ws.hello().await;
    let r = running.clone();
    ws.until(move |e| e["type"] == "turn.canceled" && e["turnId"] == r.as_str()).await;
    let next = ids[1].clone();
    let started = ws.until(move |e| e["type"] == "turn.started" && e["turnId"] == next.as_str()).await;
    let started = started.last().unwrap();
    assert_eq!(started["payload"]["input"][0]["text"].as_str().map(str::len), Some(big(1).len()));
}
