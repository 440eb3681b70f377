//! Side conversations with the scripted provider (and its broken test variants), through REST and
//! the room WebSocket of the real binary.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

async fn server() -> Server {
    Server::start(&["--test-providers"]).await
}

async fn start(s: &Server, id: &str, provider: &str) {
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": provider})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

async fn open(s: &Server, source: &str, body: Value) -> (StatusCode, Value) {
    s.post(&format!("/v1/rooms/r/sessions/{source}/sides"), body).await
}

fn side_events(frames: &[Value]) -> Vec<Value> {
    frames.iter().filter(|f| f["type"] == "side_event").map(|f| f["event"].clone()).collect()
}

fn is_side(f: &Value, ty: &str) -> bool {
    f["type"] == "side_event" && f["event"]["type"] == ty
}

#[tokio::test]
async fn capabilities_come_from_the_live_adapter_behind_the_session() {
    let s = server().await;
    start(&s, "full", "scripted").await;
    start(&s, "limited", "scripted-side-limited").await;
    let (status, caps) = s.get("/v1/rooms/r/sessions/full/side-capabilities").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        caps,
        json!({"supported": true, "activeSourceTurn": true, "ephemeral": true, "hideInheritedTurns": true, "modelBoundaryInjected": true})
    );
    let (_, caps) = s.get("/v1/rooms/r/sessions/limited/side-capabilities").await;
    assert_eq!(caps["supported"], true);
    assert_eq!(caps["modelBoundaryInjected"], false);
    // Lacking one capability is a refusal.
    let (status, body) = open(&s, "limited", json!({"requestId": "q"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "side_unsupported");
    // Without a live context there is nothing to fork.
    s.post_empty("/v1/rooms/r/sessions/full/release").await;
    let (_, caps) = s.get("/v1/rooms/r/sessions/full/side-capabilities").await;
    assert_eq!(caps["supported"], false);
    let (status, body) = open(&s, "full", json!({"requestId": "q"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "side_unsupported");
    // A side cannot itself be a source.
    s.post_empty("/v1/rooms/r/sessions/full/resume").await;
    let (status, side) = open(&s, "full", json!({"requestId": "q", "sideSessionId": "side1"})).await;
    assert_eq!(status, StatusCode::CREATED, "{side}");
    let (status, body) = s.get("/v1/rooms/r/sessions/side1/side-capabilities").await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "side_unsupported");
    let (status, body) = open(&s, "side1", json!({"requestId": "q2"})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "side_unsupported");
    let (_, providers) = s.get("/v1/providers").await;
    let scripted = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "scripted").unwrap();
    assert_eq!(scripted["capabilities"]["sideConversations"], true);
}

#[tokio::test]
async fn open_validates_ids_and_is_idempotent_per_request() {
    let s = server().await;
    start(&s, "src", "scripted").await;
    start(&s, "other", "scripted").await;
    let (status, body) = open(&s, "src", json!({})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_body");
    let (status, body) = open(&s, "src", json!({"requestId": "   "})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    let (status, body) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "src"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_conflict");
    let (status, body) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "other"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_conflict", "an existing canonical id");

    let (status, first) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let side = &first["session"];
    assert_eq!(side["scope"], "side");
    assert_eq!(side["sourceSessionId"], "src");
    assert_eq!(side["sideRequestId"], "q");
    assert_eq!(side["rootSessionId"], "side");
    assert_eq!(side["resumable"], false);
    assert_eq!(side["visible"], false);
    assert_eq!(side["status"], "ready");
    assert_eq!(side["title"], "Side conversation");
    assert!(side["providerSessionId"].as_str().is_some_and(|p| !p.is_empty()));
    assert_eq!(first["capabilities"]["supported"], true);
    // Ids are taken as they are: padded ones are not ids.
    let (status, body) = open(&s, "src", json!({"requestId": " q ", "sideSessionId": "side"})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    assert_eq!(body["error"]["details"]["field"], "requestId");
    // The same (source, side, request) again: the same side, 200.
    let (status, again) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["session"]["createdAtMs"], side["createdAtMs"]);
    // Any other reuse of the side id conflicts.
    let (status, body) = open(&s, "src", json!({"requestId": "q-other", "sideSessionId": "side"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_conflict");
    let (status, body) = open(&s, "other", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_conflict");
    // Sides are not listed, but can be read.
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    assert!(list["data"].as_array().unwrap().iter().all(|x| x["scope"] == "canonical"));
    let (status, got) = s.get("/v1/rooms/r/sessions/side").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["scope"], "side");
    // A generated side id when none is given.
    let (status, generated) = open(&s, "src", json!({"requestId": "q3"})).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(generated["session"]["sessionId"].as_str().is_some_and(|id| id != "side" && !id.is_empty()));
}

#[tokio::test]
async fn side_events_are_ephemeral_ordered_and_replayable_from_memory() {
    let s = server().await;
    start(&s, "src", "scripted").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "src", "remember the blue door").await;
    let head_before = ws.until_type("turn.completed").await.last().unwrap()["seq"].as_u64().unwrap();
    let (status, _) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let frames = ws.frames_until(|f| is_side(f, "notice")).await;
    let side = side_events(&frames);
    assert_eq!(side[0]["type"], "session.started", "nothing overtakes session.started: {side:?}");
    assert_eq!(side[0]["seq"], 1);
    assert_eq!(side[0]["scope"], "side");
    assert_eq!(side[0]["payload"]["ephemeral"], true);
    assert_eq!(side[0]["payload"]["session"]["sourceSessionId"], "src");
    assert_eq!(side[1]["type"], "notice", "the event that raced the fork comes right after");
    assert_eq!(side[1]["seq"], 2);

    // A side turn: its events are side_event frames with the side's own gap-free seq.
    s.turn("r", "side", "/history\nwhat colour?").await;
    let frames = ws.frames_until(|f| is_side(f, "turn.completed")).await;
    assert!(frames.iter().all(|f| f["type"] == "side_event"), "no room events: {frames:?}");
    let turn = side_events(&frames);
    for (i, e) in turn.iter().enumerate() {
        assert_eq!(e["seq"].as_u64(), Some(3 + i as u64));
        assert_eq!(e["sessionId"], "side");
    }
    let msg = turn.iter().find(|e| e["type"] == "message.completed").unwrap();
    let text = msg["payload"]["text"].as_str().unwrap();
    assert!(text.contains("remember the blue door (inherited)"), "the side sees the source's context: {text}");
    // Nothing of the side reached the room log.
    let log = s.events("r").await;
    assert_eq!(log.last().unwrap()["seq"].as_u64(), Some(head_before), "room seq untouched");
    assert!(log.iter().all(|e| e["sessionId"] != "side"));
    // Replay from memory.
    let (status, page) = s.get("/v1/rooms/r/sessions/side/events?after=0").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let replay = page["data"].as_array().unwrap();
    assert_eq!(replay.len() as u64, page["headSeq"].as_u64().unwrap());
    assert_eq!(&replay[..2], &side[..2]);
    assert_eq!(&replay[2..], &turn[..]);
    let (_, tail) = s.get("/v1/rooms/r/sessions/side/events?after=3").await;
    assert_eq!(tail["data"][0]["seq"], 4);
    // The source's own events are its room events (read by session since issue 57), none of the side's.
    let (status, body) = s.get("/v1/rooms/r/sessions/src/events").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let own = body["data"].as_array().unwrap();
    assert!(!own.is_empty() && own.iter().all(|e| e["sessionId"] == "src"), "{body}");
    // The source's own transcript never learns of the side.
    s.turn("r", "src", "/history").await;
    let done = ws.until_type("turn.completed").await;
    let msg = done.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert!(!msg["payload"]["text"].as_str().unwrap().contains("what colour"), "{msg}");
}

/// A side turn of 40 chunks under `flags`; returns the side's replayable page (after what is no
/// longer kept: older pages are 410 `history_expired`) and its head seq.
async fn kept_side_history(flags: &[&str]) -> (Vec<Value>, u64) {
    let s = Server::start(&[&["--test-providers"], flags].concat()).await;
    start(&s, "src", "scripted").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, _) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED);
    s.turn("r", "side", "/chunks 40").await;
    ws.frames_until(|f| is_side(f, "turn.completed")).await;
    let (status, body) = s.get("/v1/rooms/r/sessions/side/events?after=0").await;
    assert_eq!(error_code(status, &body, StatusCode::GONE), "history_expired");
    let oldest = body["error"]["details"]["oldestSeq"].as_u64().unwrap();
    let head = body["error"]["details"]["headSeq"].as_u64().unwrap();
    assert!(head > 40 && oldest > 1, "{body}");
    let (status, page) = s.get(&format!("/v1/rooms/r/sessions/side/events?after={}", oldest - 1)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let kept = page["data"].as_array().unwrap().clone();
    let seqs: Vec<u64> = kept.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (oldest..=head).collect::<Vec<_>>(), "what is kept is the newest, gap-free");
    (kept, head)
}

/// A side's replay log is bounded by count (`--side-log-events`) and by bytes
/// (`--side-log-bytes`): the oldest events go, the newest are replayable.
#[tokio::test]
async fn a_sides_replay_log_keeps_the_newest_events_by_count_and_by_bytes() {
    let (kept, _) = kept_side_history(&["--side-log-events", "5"]).await;
    assert_eq!(kept.len(), 5);
    let (kept, _) = kept_side_history(&["--side-log-bytes", "2000"]).await;
    let bytes: usize = kept.iter().map(|e| e.to_string().len()).sum();
    assert!(bytes <= 2000, "{} events of {bytes} bytes kept", kept.len());
    assert!(kept.len() >= 3, "as many as fit: {} events of {bytes} bytes", kept.len());
}

#[tokio::test]
async fn a_failed_open_leaves_no_residue_and_the_id_is_reusable() {
    let s = server().await;
    start(&s, "bad", "scripted-side-fail").await;
    start(&s, "good", "scripted").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, body) = open(&s, "bad", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_GATEWAY), "side_open_failed");
    let (status, _) = s.get("/v1/rooms/r/sessions/side").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = s.get("/v1/rooms/r/sessions/side/events").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // The same side id opens fine elsewhere, and its first frame is its own session.started: the
    // failed fork's raced event is gone.
    let (status, _) = open(&s, "good", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let f = ws.frame().await;
    assert!(is_side(&f, "session.started"), "{f}");
    assert_eq!(f["event"]["payload"]["session"]["sourceSessionId"], "good");
    assert_eq!(f["event"]["seq"], 1);
}

#[tokio::test]
async fn an_invalid_identity_from_the_provider_is_refused_without_harming_the_source() {
    let s = server().await;
    start(&s, "liar", "scripted-side-source-id").await;
    start(&s, "nothread", "scripted-side-no-thread").await;
    let (status, body) = open(&s, "liar", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_conflict");
    // The source identity it returned was not closed: the source still works.
    let (_, src) = s.get("/v1/rooms/r/sessions/liar").await;
    assert_eq!(src["status"], "ready");
    assert_eq!(src["live"], true);
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "liar", "still fine").await;
    assert_eq!(ws.until_type("turn.completed").await.last().unwrap()["sessionId"], "liar");
    let (status, body) = open(&s, "nothread", json!({"requestId": "q", "sideSessionId": "side2"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_conflict");
    for id in ["side", "side2"] {
        let (status, _) = s.get(&format!("/v1/rooms/r/sessions/{id}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{id} left behind");
    }
    let (_, src) = s.get("/v1/rooms/r/sessions/nothread").await;
    assert_eq!(src["live"], true);
}

#[tokio::test]
async fn a_side_opened_while_the_source_streams_keeps_the_streams_apart() {
    let s = server().await;
    start(&s, "src", "scripted").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let source_turn = s.turn("r", "src", "/slow 20\n/chunks 40").await;
    ws.until_type("message.delta").await;
    let (status, opened) = open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    s.turn("r", "side", "/chunks 10").await;
    let frames = ws.frames_until(|f| f["type"] == "event" && f["event"]["type"] == "turn.completed").await;
    // The source's turn ended on the source, in the room log; the side's events all stayed side.
    for f in &frames {
        match f["type"].as_str().unwrap() {
            "event" => assert_eq!(f["event"]["sessionId"], "src", "{f}"),
            "side_event" => {
                assert_eq!(f["event"]["sessionId"], "side", "{f}");
                assert_ne!(f["event"]["turnId"], source_turn.as_str());
            }
            other => panic!("unexpected frame {other}"),
        }
    }
    let room_events = s.events("r").await;
    assert_gap_free(&room_events);
    assert!(room_events.iter().all(|e| e["sessionId"] == "src"));
    // The side's turn completes too.
    let side_done = frames.iter().any(|f| is_side(f, "turn.completed"))
        || ws.frames_until(|f| is_side(f, "turn.completed")).await.iter().any(|f| is_side(f, "turn.completed"));
    assert!(side_done);
}

#[tokio::test]
async fn concurrent_opens_agree() {
    let s = server().await;
    start(&s, "src", "scripted").await;
    let same = (0..6).map(|_| open(&s, "src", json!({"requestId": "same", "sideSessionId": "a"})));
    let results = futures::future::join_all(same).await;
    let created = results.iter().filter(|(st, _)| *st == StatusCode::CREATED).count();
    let reopened = results.iter().filter(|(st, _)| *st == StatusCode::OK).count();
    assert_eq!((created, reopened), (1, 5), "{results:?}");
    let ids: Vec<&Value> = results.iter().map(|(_, b)| &b["session"]["createdAtMs"]).collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "one side");
    let different = (0..6).map(|i| open(&s, "src", json!({"requestId": format!("r{i}"), "sideSessionId": "b"})));
    let results = futures::future::join_all(different).await;
    let created = results.iter().filter(|(st, _)| *st == StatusCode::CREATED).count();
    let conflicts =
        results.iter().filter(|(st, b)| *st == StatusCode::CONFLICT && b["error"]["code"] == "side_conflict").count();
    assert_eq!((created, conflicts), (1, 5), "{results:?}");
}

#[tokio::test]
async fn a_side_never_resumes_and_ends_with_its_source() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &["--test-providers"]).await;
    start(&s, "src", "scripted").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/side/resume").await;
    assert_eq!(status, StatusCode::OK, "a live side needs no resume: {body}");
    // Closing the source while the side's turn runs ends the side.
    s.turn("r", "side", "/slow 50\n/chunks 100").await;
    ws.frames_until(|f| is_side(f, "message.delta")).await;
    let (status, _) = s.delete("/v1/rooms/r/sessions/src").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let frames = ws.frames_until(|f| f["type"] == "event" && f["event"]["type"] == "session.completed").await;
    let side = side_events(&frames);
    let end = side.iter().find(|e| e["type"] == "session.completed").expect("the side completed");
    assert_eq!(end["payload"]["reason"], "source_closed");
    assert!(side.iter().any(|e| e["type"] == "turn.failed" || e["type"] == "turn.canceled"), "{side:?}");
    let pos_side_end = frames.iter().position(|f| is_side(f, "session.completed")).unwrap();
    let pos_src_end =
        frames.iter().position(|f| f["type"] == "event" && f["event"]["type"] == "session.completed").unwrap();
    assert!(pos_side_end < pos_src_end, "the side ends before its source");
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/side/resume").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_expired");
    let (status, body) =
        s.post("/v1/rooms/r/sessions/side/turns", json!({"input": [{"type": "text", "text": "hi"}]})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_expired");
    let (status, _) = s.delete("/v1/rooms/r/sessions/side").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "closing an expired side is idempotent");

    // Release of a source expires its sides too; and a restart forgets every side.
    start(&s, "src2", "scripted").await;
    open(&s, "src2", json!({"requestId": "q", "sideSessionId": "side2"})).await;
    open(&s, "src2", json!({"requestId": "q", "sideSessionId": "side3"})).await;
    s.post_empty("/v1/rooms/r/sessions/src2/release").await;
    let (_, side2) = s.get("/v1/rooms/r/sessions/side2").await;
    assert_eq!(side2["status"], "completed");
    assert!(s.stop().await.success());
    let s = Server::start_in(tmp.path(), &["--test-providers"]).await;
    for id in ["side", "side2", "side3"] {
        let (status, _) = s.get(&format!("/v1/rooms/r/sessions/{id}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{id} survived a restart");
    }
    let (status, _) = s.get("/v1/rooms/r/sessions/src2").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn side_interactions_and_cancel_use_the_ordinary_endpoints() {
    let s = server().await;
    start(&s, "src", "scripted").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    open(&s, "src", json!({"requestId": "q", "sideSessionId": "side"})).await;
    s.turn("r", "side", "/run ls").await;
    let frames = ws.frames_until(|f| is_side(f, "interaction.requested")).await;
    let req = side_events(&frames).pop().unwrap();
    let rid = req["payload"]["requestId"].as_str().unwrap();
    let (_, list) = s.get("/v1/rooms/r/sessions/side/interactions").await;
    assert_eq!(list["data"][0]["requestId"], rid);
    let (status, _) =
        s.post(&format!("/v1/rooms/r/sessions/side/interactions/{rid}"), json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::OK);
    let frames = ws.frames_until(|f| is_side(f, "turn.completed")).await;
    assert!(frames.iter().any(|f| is_side(f, "call.completed")));
    s.turn("r", "side", "/hang").await;
    ws.frames_until(|f| is_side(f, "turn.started")).await;
    let (status, _) = s.post_empty("/v1/rooms/r/sessions/side/cancel").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    ws.frames_until(|f| is_side(f, "turn.canceled")).await;
    let (status, _) = s.delete("/v1/rooms/r/sessions/side").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let f = ws.frames_until(|f| is_side(f, "session.completed")).await.pop().unwrap();
    assert_eq!(f["event"]["payload"]["session"]["status"], "completed");
    // The source is untouched.
    let (_, src) = s.get("/v1/rooms/r/sessions/src").await;
    assert_eq!(src["status"], "ready");
}
