//! Modes and config options: what a session offers, `PATCH …/sessions/{id}/config` changing them for
//! the next turn, and the refusals (unknown choices 422, mid-turn 409 for agents that cannot).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

async fn patch(s: &Server, session: &str, body: Value) -> (StatusCode, Value) {
    decode(s.http().patch(s.url(&format!("/v1/rooms/r/sessions/{session}/config"))).json(&body).send().await.unwrap())
        .await
}

fn reply(events: &[Value]) -> String {
    events.iter().rev().find(|e| e["type"] == "message.completed").unwrap()["payload"]["text"].as_str().unwrap().into()
}

#[tokio::test]
async fn scripted_options_and_modes_change_the_next_turn() {
    let s = Server::start(&[]).await;
    let started = s.session("r", "s").await;
    assert_eq!(started["modes"]["current"], "default");
    let voice = started["configOptions"].as_array().unwrap().iter().find(|o| o["id"] == "voice").unwrap().clone();
    assert_eq!(voice["current"], "plain");
    assert_eq!(voice["choices"].as_array().unwrap().len(), 2);
    let (_, providers) = s.get("/v1/providers").await;
    let scripted = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "scripted").unwrap().clone();
    assert_eq!(scripted["capabilities"]["config"], true);

    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, session) = patch(&s, "s", json!({"mode": "plan", "options": {"voice": "upper"}})).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert_eq!(session["modes"]["current"], "plan");
    let updated = ws.until_type("session.updated").await.pop().unwrap();
    assert_eq!(updated["payload"]["reason"], "config");
    s.turn("r", "s", "hello").await;
    let events = ws.until_type("turn.completed").await;
    assert_eq!(reply(&events), "(plan) YOU SAID: HELLO");

    // Unknown choices are 422; an empty change is 400; a running turn is 409 for this agent.
    for (body, code) in [
        (json!({"mode": "fast"}), "unknown_config"),
        (json!({"options": {"voice": "loud"}}), "unknown_config"),
        (json!({"options": {"nope": "x"}}), "unknown_config"),
    ] {
        let (status, res) = patch(&s, "s", body).await;
        assert_eq!(error_code(status, &res, StatusCode::UNPROCESSABLE_ENTITY), code);
    }
    let (status, res) = patch(&s, "s", json!({})).await;
    assert_eq!(error_code(status, &res, StatusCode::BAD_REQUEST), "invalid_input");
    s.turn("r", "s", "/hang").await;
    ws.until_type("turn.started").await;
    let (status, res) = patch(&s, "s", json!({"options": {"voice": "plain"}})).await;
    assert_eq!(error_code(status, &res, StatusCode::CONFLICT), "turn_active");
    s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    ws.until_type("turn.canceled").await;

    // The picks are part of the session: they survive a restart and a resume.
    let (_, again) = s.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(again["modes"]["current"], "plan");
}

#[tokio::test]
async fn a_codex_models_choice_reaches_the_model_on_the_next_turn() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    let started = start_codex(&s, &c, "c1", json!({})).await;
    let options = started["configOptions"].as_array().unwrap().clone();
    let model = options.iter().find(|o| o["id"] == "model").unwrap_or_else(|| panic!("{started}"));
    let other = model["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_str().unwrap().to_owned())
        .find(|v| *v != model["current"])
        .expect("codex offers more than one model");
    assert_eq!(started["modes"]["available"].as_array().unwrap().len(), 2);
    let (status, session) = patch(&s, "c1", json!({"options": {"model": other}})).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    c.mock.push(ensemble_mock_model::Reply::text("ok"));
    s.turn("r", "c1", "which model?").await;
    ws.until(|e| e["type"] == "turn.completed").await;
    let last = c.mock.responses_requests().pop().unwrap();
    assert_eq!(last.model(), Some(other.as_str()), "the turn ran on the model picked");
}
