//! Side conversations of codex sessions, against the real binary: `thread/fork` (ephemeral,
//! without inherited turns) in the source's own process, a model-visible boundary, routing by
//! thread, and `thread/unsubscribe` on close.

use std::time::Duration;

use ensemble_mock_model::{Gate, Reply};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

fn is_side(f: &Value, ty: &str) -> bool {
    f["type"] == "side_event" && f["event"]["type"] == ty
}

fn is_room(f: &Value, ty: &str) -> bool {
    f["type"] == "event" && f["event"]["type"] == ty
}

async fn codex_session(s: &Server, c: &Codex, id: &str) {
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": "codex", "cwd": c.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// The texts of every input item of a model request (any role), to find the boundary.
fn all_texts(req: &ensemble_mock_model::RecordedRequest) -> String {
    serde_json::to_string(req.input()).unwrap()
}

#[tokio::test]
async fn a_side_forks_the_live_thread_and_talks_apart() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    codex_session(&s, &c, "src").await;
    c.mock.push(Reply::text("The door is blue."));
    s.turn("r", "src", "remember: the door is blue").await;
    ws.until_type("turn.completed").await;

    let (status, caps) = s.get("/v1/rooms/r/sessions/src/side-capabilities").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        caps,
        json!({"supported": true, "activeSourceTurn": true, "ephemeral": true, "hideInheritedTurns": true, "modelBoundaryInjected": true})
    );
    let (status, opened) =
        s.post("/v1/rooms/r/sessions/src/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}\n{}", s.log());
    let (_, src) = s.get("/v1/rooms/r/sessions/src").await;
    let side_thread = opened["session"]["providerSessionId"].as_str().unwrap();
    assert_ne!(side_thread, src["providerSessionId"].as_str().unwrap(), "a thread of its own");
    assert_eq!(codex_processes_of_server(&c, &s).len(), 1, "the side shares the source's process");

    c.mock.push(Reply::text_chunks(["Side ", "answer."], Duration::from_millis(5)));
    s.turn("r", "side", "what colour is the door?").await;
    let frames = ws.frames_until(|f| is_side(f, "turn.completed")).await;
    assert!(frames.iter().all(|f| f["type"] == "side_event"), "nothing of the side in the room: {frames:?}");
    let text: String = frames
        .iter()
        .filter(|f| is_side(f, "message.delta"))
        .map(|f| f["event"]["payload"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "Side answer.");
    // The model saw the inherited conversation, then the boundary, then the side question.
    let requests = c.mock.responses_requests();
    let side_req = requests.last().unwrap();
    let everything = all_texts(side_req);
    assert!(everything.contains("the door is blue"), "inherited context: {everything}");
    assert!(everything.contains("side_conversation_boundary"), "the boundary: {everything}");
    assert_eq!(side_req.last_user_text(), "what colour is the door?");
    let boundary_at = everything.find("side_conversation_boundary").unwrap();
    let inherited_at = everything.find("the door is blue").unwrap();
    assert!(inherited_at < boundary_at, "the boundary follows the inherited turns");

    // The source goes on, unaffected, in the same process.
    c.mock.push(Reply::text("Main again."));
    s.turn("r", "src", "back to work").await;
    let frames = ws.frames_until(|f| is_room(f, "turn.completed")).await;
    assert!(frames.iter().filter(|f| f["type"] == "event").all(|f| f["event"]["sessionId"] == "src"));
    let main_req = c.mock.responses_requests().last().unwrap().clone();
    assert!(!all_texts(&main_req).contains("what colour is the door"), "the side never enters the source's thread");

    // Closing the side unsubscribes its thread and leaves the process to the source.
    let (status, _) = s.delete("/v1/rooms/r/sessions/side").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    ws.frames_until(|f| is_side(f, "session.completed")).await;
    assert_eq!(codex_processes_of_server(&c, &s).len(), 1);
    c.mock.push(Reply::text("Still here."));
    s.turn("r", "src", "still there?").await;
    assert_eq!(ws.until_type("turn.completed").await.last().unwrap()["sessionId"], "src");
    s.delete("/v1/rooms/r/sessions/src").await;
    no_codex_left(c.home.path()).await;
}

#[tokio::test]
async fn a_side_opens_while_the_source_turn_streams_and_ends_with_its_source() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    codex_session(&s, &c, "src").await;
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["Working ", "on "], &gate, ["it."]));
    let source_turn = s.turn("r", "src", "a long task").await;
    // The source's turn is mid-stream (held by the gate).
    ws.frames_until(|f| is_room(f, "message.delta")).await;
    let (status, opened) =
        s.post("/v1/rooms/r/sessions/src/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}\n{}", s.log());
    let f = ws.frames_until(|f| f["type"] == "side_event").await.pop().unwrap();
    assert!(is_side(&f, "session.started"), "session.started comes first: {f}");
    assert_eq!(f["event"]["seq"], 1);
    c.mock.push(Reply::text("Quick side answer."));
    s.turn("r", "side", "quick question").await;
    let side_frames = ws.frames_until(|f| is_side(f, "turn.completed")).await;
    assert!(side_frames.iter().filter(|f| f["type"] == "event").all(|f| f["event"]["sessionId"] == "src"));
    assert!(
        side_frames.iter().filter(|f| f["type"] == "side_event").all(|f| f["event"]["turnId"] != source_turn.as_str())
    );
    // Let the source finish: its events stay on the source.
    gate.open();
    let frames = ws.frames_until(|f| is_room(f, "turn.completed")).await;
    let done = frames.iter().rev().find(|f| is_room(f, "message.completed")).unwrap();
    assert_eq!(done["event"]["payload"]["text"], "Working on it.");
    assert_eq!(done["event"]["sessionId"], "src");
    // Closing the source ends the side, then no codex is left.
    let (status, _) = s.delete("/v1/rooms/r/sessions/src").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let frames = ws.frames_until(|f| is_room(f, "session.completed")).await;
    assert!(frames.iter().any(|f| is_side(f, "session.completed")));
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/side/resume").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "side_expired");
    no_codex_left(c.home.path()).await;
}
