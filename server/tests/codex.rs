//! The codex provider against the real `codex app-server` binary, whose model API is a scripted
//! mock on 127.0.0.1. Everything goes through Ensemble's REST API and room WebSocket.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod common;

use common::*;
use ensemble_mock_model::{CodexProvider, Reply};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn start_codex(s: &Server, c: &Codex, id: &str, settings: Value) -> Value {
    let (status, body) = s
        .post(
            "/v1/rooms/r/sessions",
            json!({"sessionId": id, "provider": "codex", "cwd": c.cwd(), "settings": settings}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}\n{}", s.log());
    body
}

#[tokio::test]
async fn a_full_text_turn() {
    let c = Codex::new(CodexProvider::default(), Some(MOCK_KEY)).await;
    let s = Server::start(&c.args()).await;
    let (_, providers) = s.get("/v1/providers").await;
    let codex = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "codex").unwrap().clone();
    assert_eq!(codex["available"], true, "{codex}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let session = start_codex(&s, &c, "c1", json!({})).await;
    assert_eq!(session["status"], "ready");
    assert_eq!(session["authState"], "authenticated");
    assert!(session["providerSessionId"].as_str().is_some_and(|t| !t.is_empty()));
    c.mock.push(Reply::text_chunks(["Hello", " from", " codex"], std::time::Duration::from_millis(5)));
    let turn = s.turn("r", "c1", "say hello").await;
    let events = ws.until(|e| e["type"] == "turn.completed" || e["type"] == "turn.failed").await;
    let t = types(&events);
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{t:?}\n{}", s.log());
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "message.delta")
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello from codex");
    let done = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert_eq!(done["payload"]["text"], "Hello from codex");
    assert!(t.contains(&"usage.updated".to_owned()), "{t:?}");
    let from = events.iter().position(|e| e["type"] == "turn.started").unwrap();
    assert!(
        events[from..].iter().filter(|e| e["type"] != "notice").all(|e| e["turnId"] == turn.as_str()),
        "{events:?}"
    );
    let req = c.mock.responses_requests();
    assert_eq!(req.len(), 1);
    assert_eq!(req[0].last_user_text(), "say hello");
    let (status, _) = s.delete("/v1/rooms/r/sessions/c1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    no_codex_left(c.home.path()).await;
}
