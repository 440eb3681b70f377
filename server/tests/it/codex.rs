//! The codex provider against the real `codex app-server` binary, whose model API is a scripted
//! mock on 127.0.0.1. Everything goes through Ensemble's REST API and room WebSocket.

use ensemble_mock_model::{CodexProvider, Gate, Outcome, Reply, Usage};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// A server with a logged-in codex, a room reader past its `hello`, and session `c1` started.
async fn codex_room() -> (Codex, Server, Ws) {
    let (c, s, ws) = codex_server().await;
    start_codex(&s, &c, "c1", json!({})).await;
    (c, s, ws)
}

#[tokio::test]
async fn a_full_text_turn() {
    if !have_codex() {
        return;
    }
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

// ------------------------------------------------------------------------------------------------
// Helpers

/// Settings that make codex ask before it runs a command that writes (and then really run it).
fn approvals() -> Value {
    json!({"approvalPolicy": "untrusted", "sandbox": "danger-full-access"})
}

fn is_terminal(e: &Value) -> bool {
    matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled"))
}

/// The first event of a type (panics with the list of types when there is none).
fn first<'a>(events: &'a [Value], ty: &str) -> &'a Value {
    events.iter().find(|e| e["type"] == ty).unwrap_or_else(|| panic!("no {ty} in {:?}", types(events)))
}

fn position(events: &[Value], ty: &str) -> usize {
    events.iter().position(|e| e["type"] == ty).unwrap_or_else(|| panic!("no {ty} in {:?}", types(events)))
}

fn has(events: &[Value], ty: &str) -> bool {
    events.iter().any(|e| e["type"] == ty)
}

async fn answer(s: &Server, session: &str, request_id: &str, body: Value) -> (StatusCode, Value) {
    s.post(&format!("/v1/rooms/r/sessions/{session}/interactions/{request_id}"), body).await
}

async fn session(s: &Server, id: &str) -> Value {
    let (status, body) = s.get(&format!("/v1/rooms/r/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// What a submit asks for: a new turn (refused while one runs), or input added to the running one.
#[derive(Clone, Copy)]
enum Submit {
    Turn,
    Steer,
}

/// Submits `text` as a new turn or to steer the active one.
async fn submit(s: &Server, id: &str, text: &str, how: Submit) -> (StatusCode, Value) {
    let steer = matches!(how, Submit::Steer);
    s.post(
        &format!("/v1/rooms/r/sessions/{id}/turns"),
        json!({"input": [{"type": "text", "text": text}], "steer": steer}),
    )
    .await
}

/// Events up to the `n`th `message.delta` (counted from now).
async fn deltas(ws: &mut Ws, n: usize) -> Vec<Value> {
    let mut seen = 0;
    ws.until(|e| {
        if e["type"] == "message.delta" {
            seen += 1;
        }
        seen == n
    })
    .await
}

/// A command approval turn up to the answer: the events so far and the request's payload.
async fn command_approval(s: &Server, c: &Codex, ws: &mut Ws, command: &str) -> (String, Vec<Value>, Value) {
    start_codex(s, c, "c1", approvals()).await;
    c.mock.push(Reply::shell(command));
    c.mock.push(Reply::text("Done with the command."));
    let turn = s.turn("r", "c1", "run the command").await;
    let events = ws.until_type("interaction.requested").await;
    let req = events.last().unwrap().clone();
    assert_eq!(req["turnId"], turn.as_str());
    let p = req["payload"].clone();
    assert_eq!(p["kind"], "commandApproval", "{p}");
    assert!(p["command"].as_str().unwrap().contains(command), "{p}");
    assert_eq!(p["cwd"], c.cwd(), "{p}");
    assert!(p["requestId"].as_str().is_some_and(|r| !r.is_empty()), "{p}");
    assert!(p["callId"].as_str().is_some_and(|r| !r.is_empty()), "{p}");
    // The call the approval is about was announced with the same command.
    let started = first(&events, "call.started");
    assert_eq!(started["payload"]["callId"], p["callId"]);
    assert_eq!(started["payload"]["kind"], "command");
    assert!(started["payload"]["command"].as_str().unwrap().contains(command));
    let now = session(s, "c1").await;
    assert_eq!(now["status"], "waiting", "{now}");
    let (status, list) = s.get("/v1/rooms/r/sessions/c1/interactions").await;
    assert_eq!(status, StatusCode::OK);
    let list = list["data"].as_array().unwrap().clone();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["requestId"], p["requestId"]);
    assert_eq!(list[0]["kind"], "commandApproval");
    assert_eq!(list[0]["turnId"], turn.as_str());
    (turn, events, p)
}

// ------------------------------------------------------------------------------------------------
// Interactions

#[tokio::test]
async fn an_accepted_command_approval_runs_the_command() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    let out = c.work.path().join("approved.txt");
    let (turn, _, req) =
        command_approval(&s, &c, &mut ws, "echo approved-by-client > approved.txt && cat approved.txt").await;
    assert!(!out.exists(), "nothing runs before the answer");
    let rid = req["requestId"].as_str().unwrap();
    let (status, body) = answer(&s, "c1", rid, json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = answer(&s, "c1", rid, json!({"decision": "accept"})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "interaction_resolved");

    let after = ws.until(is_terminal).await;
    assert_eq!(after.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&after), s.log());
    let resolved = first(&after, "interaction.resolved");
    assert_eq!(resolved["payload"]["requestId"], rid);
    assert_eq!(resolved["payload"]["decision"], "accept");
    assert_eq!(resolved["payload"]["resolvedBy"], "client");
    assert_eq!(resolved["turnId"], turn.as_str());
    let done = first(&after, "call.completed");
    assert!(position(&after, "interaction.resolved") < position(&after, "call.completed"));
    assert_eq!(done["payload"]["callId"], req["callId"]);
    assert_eq!(done["payload"]["status"], "completed", "{done}");
    assert_eq!(done["payload"]["exitCode"], 0, "{done}");
    assert!(done["payload"]["output"].as_str().unwrap().contains("approved-by-client"), "{done}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "approved-by-client\n");
    assert_eq!(first(&after, "message.completed")["payload"]["text"], "Done with the command.");

    // The model's follow-up request carries the command's output.
    let reqs = c.mock.responses_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let tool = reqs[1].trailing_tool_output().expect("the follow-up ends with the tool output");
    assert_eq!(tool.call_id, req["callId"].as_str().unwrap());
    assert!(tool.output.contains("approved-by-client"), "{tool:?}");
    let (_, list) = s.get("/v1/rooms/r/sessions/c1/interactions").await;
    assert_eq!(list["data"], json!([]));
    assert_eq!(session(&s, "c1").await["status"], "ready");
}

#[tokio::test]
async fn a_declined_command_does_not_run() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    let out = c.work.path().join("declined.txt");
    let (_, _, req) = command_approval(&s, &c, &mut ws, "echo should-not-run > declined.txt").await;
    let options: Vec<&str> = req["options"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
    assert!(options.contains(&"decline"), "a command can be declined: {options:?}");
    let rid = req["requestId"].as_str().unwrap();
    let (status, body) = answer(&s, "c1", rid, json!({"decision": "decline"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after = ws.until(is_terminal).await;
    assert_eq!(after.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&after), s.log());
    let resolved = first(&after, "interaction.resolved");
    assert_eq!(resolved["payload"]["decision"], "decline");
    assert_eq!(resolved["payload"]["resolvedBy"], "client");
    let done = first(&after, "call.completed");
    assert_eq!(done["payload"]["callId"], req["callId"]);
    assert_eq!(done["payload"]["status"], "declined", "{done}");
    assert!(!out.exists(), "the declined command did not run");
    let reqs = c.mock.responses_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let tool = reqs[1].trailing_tool_output().expect("the model is told");
    assert!(tool.output.contains("rejected"), "{tool:?}");
}

#[tokio::test]
async fn a_file_change_approval_carries_the_diff_and_applies_it() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default().model("gpt-5.5"), Some(MOCK_KEY)).await;
    let s = Server::start(&c.args()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start_codex(&s, &c, "c1", json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write"})).await;
    c.mock.push(Reply::add_file_patch("patched.txt", "first line\nsecond line"));
    c.mock.push(Reply::text("Patched."));
    let turn = s.turn("r", "c1", "add a file").await;
    let events = ws.until(|e| e["type"] == "interaction.requested" || is_terminal(e)).await;
    let req = events.last().unwrap();
    assert_eq!(req["type"], "interaction.requested", "{:?}\n{}", types(&events), s.log());
    assert_eq!(req["turnId"], turn.as_str());
    let p = &req["payload"];
    assert_eq!(p["kind"], "fileChangeApproval", "{p}");
    let diff = p["diff"].as_str().unwrap_or_else(|| panic!("a diff: {p}"));
    assert!(diff.contains("patched.txt") && diff.contains("first line") && diff.contains("second line"), "{diff}");
    let started = first(&events, "call.started");
    assert_eq!(started["payload"]["kind"], "fileChange");
    assert_eq!(started["payload"]["callId"], p["callId"]);
    let change = &started["payload"]["changes"][0];
    assert!(change["path"].as_str().unwrap().ends_with("patched.txt"), "{change}");
    assert_eq!(change["kind"], "add");
    let file = c.work.path().join("patched.txt");
    assert!(!file.exists(), "nothing is written before the answer");
    let (_, list) = s.get("/v1/rooms/r/sessions/c1/interactions").await;
    assert_eq!(list["data"][0]["diff"], diff);

    let (status, body) = answer(&s, "c1", p["requestId"].as_str().unwrap(), json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after = ws.until(is_terminal).await;
    assert_eq!(after.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&after), s.log());
    let done = first(&after, "call.completed");
    assert_eq!(done["payload"]["callId"], p["callId"]);
    assert_eq!(done["payload"]["status"], "completed", "{done}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "first line\nsecond line\n");
    let reqs = c.mock.responses_requests();
    assert_eq!(reqs.len(), 2);
    let tool = reqs[1].trailing_tool_output().expect("patch result");
    assert_eq!(tool.kind, "custom_tool_call_output");
    assert!(tool.output.contains("patched.txt"), "{tool:?}");
}

#[tokio::test]
async fn a_question_in_plan_mode_reaches_the_client_and_the_answer_reaches_the_model() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    start_codex(&s, &c, "c1", json!({"collaborationMode": "plan"})).await;
    c.mock.push(Reply::request_user_input(json!([{
        "id": "color",
        "header": "Color",
        "question": "Which color should the button be?",
        "options": [{"label": "Blue", "description": "Calm."}, {"label": "Red", "description": "Bold."}]
    }])));
    c.mock.push(Reply::text("Teal it is."));
    let turn = s.turn("r", "c1", "plan the button").await;
    let events = ws.until(|e| e["type"] == "interaction.requested" || is_terminal(e)).await;
    let req = events.last().unwrap();
    assert_eq!(req["type"], "interaction.requested", "{:?}\n{}", types(&events), s.log());
    assert_eq!(req["turnId"], turn.as_str());
    let p = &req["payload"];
    assert_eq!(p["kind"], "userInput", "{p}");
    let q = &p["questions"][0];
    assert_eq!(q["id"], "color");
    assert_eq!(q["header"], "Color");
    assert_eq!(q["question"], "Which color should the button be?");
    let labels: Vec<&str> = q["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Blue", "Red"]);
    assert_eq!(session(&s, "c1").await["status"], "waiting");
    let (status, body) = answer(
        &s,
        "c1",
        p["requestId"].as_str().unwrap(),
        json!({"decision": "accept", "answers": {"color": "Teal, actually"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after = ws.until(is_terminal).await;
    assert_eq!(after.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&after), s.log());
    let resolved = first(&after, "interaction.resolved");
    assert_eq!(resolved["payload"]["answers"], json!({"color": "Teal, actually"}));
    assert_eq!(first(&after, "message.completed")["payload"]["text"], "Teal it is.");
    let reqs = c.mock.responses_requests();
    assert_eq!(reqs.len(), 2);
    let tool = reqs[1].trailing_tool_output().expect("the answer goes back as the tool's output");
    assert!(tool.output.contains("Teal, actually"), "{tool:?}");
}

// ------------------------------------------------------------------------------------------------
// Cancel and steer

#[tokio::test]
async fn cancel_mid_stream_closes_the_message_and_the_session_goes_on() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["Thinking ", "about "], &gate, ["what never comes"]));
    let turn = s.turn("r", "c1", "a long answer please").await;
    deltas(&mut ws, 2).await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/cancel").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["turnId"], turn.as_str());
    let rest = ws.until(is_terminal).await;
    let end = rest.last().unwrap();
    assert_eq!(end["type"], "turn.canceled", "{:?}\n{}", types(&rest), s.log());
    assert_eq!(end["payload"]["turnId"], turn.as_str());
    let closed = first(&rest, "message.completed");
    assert_eq!(closed["payload"]["text"], "Thinking about ", "the open message is closed with its text so far");
    assert!(!rest.iter().any(|e| e["type"] == "message.delta"), "{:?}", types(&rest));
    // Codex dropped the model stream.
    let held = c.mock.responses_requests()[0].seq;
    let outcome = c.mock.wait_for_outcome(held, WAIT).await.unwrap();
    assert_eq!(outcome, Outcome::ClientDisconnected);
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/cancel").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "no_active_turn");
    assert_eq!(session(&s, "c1").await["status"], "ready");

    // The next turn works.
    c.mock.push(Reply::text("Back again."));
    let next = s.turn("r", "c1", "and now?").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    assert_eq!(events.last().unwrap()["turnId"], next.as_str());
    assert_eq!(first(&events, "message.completed")["payload"]["text"], "Back again.");
    assert!(!gate.is_open());
}

#[tokio::test]
async fn cancel_right_after_submit_ends_the_turn_canceled() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["never "], &gate, ["finished"]));
    let turn = s.turn("r", "c1", "start and stop").await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/cancel").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}\n{}", s.log());
    assert_eq!(body["turnId"], turn.as_str());
    let events = ws.until(is_terminal).await;
    let end = events.last().unwrap();
    assert_eq!(end["type"], "turn.canceled", "{:?}\n{}", types(&events), s.log());
    assert_eq!(end["payload"]["turnId"], turn.as_str());
    if has(&events, "message.delta") {
        assert!(position(&events, "message.completed") < events.len() - 1);
    }
    assert_eq!(session(&s, "c1").await["status"], "ready");
    // Whatever the interrupted turn left queued in the mock does not matter to the next one.
    c.mock.clear_queue();
    c.mock.push(Reply::text("Still here."));
    s.turn("r", "c1", "hello?").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    assert_eq!(first(&events, "message.completed")["payload"]["text"], "Still here.");
}

#[tokio::test]
async fn a_second_submit_conflicts_and_a_steer_reaches_the_model() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["Working "], &gate, ["on the old plan"]));
    c.mock.push(Reply::text("Steered reply."));
    let turn = s.turn("r", "c1", "do the thing").await;
    let mut events = deltas(&mut ws, 1).await;
    let (status, body) = submit(&s, "c1", "something else", Submit::Turn).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "turn_active");
    let (status, body) = submit(&s, "c1", "use the new plan instead", Submit::Steer).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["turnId"], turn.as_str());
    assert_eq!(body["steered"], true);
    assert_eq!(body["duplicate"], false);
    events.extend(ws.until(is_terminal).await);
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert_eq!(events.iter().filter(|e| e["type"] == "turn.started").count(), 1, "no new turn");
    let steered = first(&events, "turn.steered");
    assert_eq!(steered["turnId"], turn.as_str());
    assert_eq!(steered["payload"]["input"][0]["text"], "use the new plan instead");
    let from = position(&events, "turn.started");
    assert!(events[from..].iter().all(|e| e["type"] == "notice" || e["turnId"] == turn.as_str()), "{events:?}");
    // The stream the steer abandoned is closed with its text so far, before the new reply.
    let closed = events.iter().position(|e| e["type"] == "message.completed").unwrap();
    assert_eq!(events[closed]["payload"]["text"], "Working ");
    assert!(closed > position(&events, "turn.steered"));
    let texts: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "message.completed")
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.last(), Some(&"Steered reply."), "{texts:?}");
    // The steering text reached the model.
    let reqs = c.mock.responses_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let users = reqs[1].user_texts();
    assert!(users.iter().any(|u| u == "use the new plan instead"), "{users:?}");
    assert!(users.iter().any(|u| u == "do the thing"), "{users:?}");
}

#[tokio::test]
async fn a_steer_right_after_submit_reaches_the_model() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    // The first model call is held, so the turn cannot end before the steer arrives.
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["Working "], &gate, ["on it"]));
    c.mock.push(Reply::text("Steered reply."));
    let turn = s.turn("r", "c1", "do the thing").await;
    // Possibly before codex announced the turn (`turn/started`).
    let (status, body) = submit(&s, "c1", "early steer", Submit::Steer).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["turnId"], turn.as_str());
    gate.open();
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert_eq!(events.last().unwrap()["turnId"], turn.as_str());
    assert_eq!(first(&events, "turn.steered")["payload"]["input"][0]["text"], "early steer");
    let reqs = c.mock.responses_requests();
    assert!(reqs.iter().any(|r| r.user_texts().iter().any(|u| u == "early steer")), "{reqs:?}");
}

// ------------------------------------------------------------------------------------------------
// Usage

#[tokio::test]
async fn usage_follows_the_models_token_counts() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    let usage = |input, cached, output, reasoning| Usage {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_output_tokens: reasoning,
    };
    c.mock.push(Reply::text("one").with_usage(Some(usage(120, 20, 30, 4))));
    c.mock.push(Reply::text("two").with_usage(Some(usage(200, 100, 50, 0))));
    s.turn("r", "c1", "first").await;
    let events = ws.until(is_terminal).await;
    let u = &first(&events, "usage.updated")["payload"];
    assert_eq!(
        (&u["inputTokens"], &u["cachedInputTokens"], &u["outputTokens"], &u["reasoningOutputTokens"]),
        (&json!(120), &json!(20), &json!(30), &json!(4)),
        "{u}"
    );
    assert_eq!(u["totalTokens"], 150, "{u}");
    assert_eq!(u["lastTurnTotalTokens"], 150, "{u}");
    assert!(u["contextWindow"].as_i64().is_some_and(|w| w > 0), "{u}");
    s.turn("r", "c1", "second").await;
    let events = ws.until(is_terminal).await;
    let u = &first(&events, "usage.updated")["payload"];
    // Totals add up over the thread; the last turn's own total is reported apart.
    assert_eq!(u["inputTokens"], 320, "{u}");
    assert_eq!(u["outputTokens"], 80, "{u}");
    assert_eq!(u["totalTokens"], 400, "{u}");
    assert_eq!(u["lastTurnTotalTokens"], 250, "{u}");
}

// ------------------------------------------------------------------------------------------------
// Restarts, auth, crashes

#[tokio::test]
async fn a_session_resumes_its_codex_thread_after_a_restart() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default(), Some(MOCK_KEY)).await;
    let data = tempfile::tempdir().unwrap();
    let s = Server::start_in(data.path(), &c.args()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let started = start_codex(&s, &c, "c1", json!({})).await;
    let thread = started["providerSessionId"].as_str().unwrap().to_owned();
    c.mock.push(Reply::text("The capital is Paris."));
    s.turn("r", "c1", "What is the capital of France?").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    drop(ws);
    assert!(s.stop().await.success());
    no_codex_left(c.home.path()).await;

    let s = Server::start_in(data.path(), &c.args()).await;
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    let listed = &list["data"][0];
    assert_eq!(listed["sessionId"], "c1");
    assert_eq!(listed["status"], "disconnected", "{listed}");
    assert_eq!(listed["live"], false);
    assert_eq!(listed["resumable"], true);
    assert_eq!(listed["providerSessionId"], thread.as_str());
    assert!(codex_processes(c.home.path()).is_empty(), "nothing starts before the resume");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
    assert_eq!(body["status"], "ready");
    assert_eq!(body["live"], true);
    assert_eq!(body["providerSessionId"], thread.as_str());
    assert_eq!(codex_app_servers(c.home.path()).len(), 1);
    c.mock.push(Reply::text("You asked about France."));
    s.turn("r", "c1", "What did I ask?").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert_eq!(first(&events, "message.completed")["payload"]["text"], "You asked about France.");
    // Codex resumed the thread: the model sees the earlier conversation.
    let reqs = c.mock.responses_requests();
    let last = reqs.last().unwrap();
    assert_eq!(last.thread_id(), Some(thread.as_str()));
    let users = last.user_texts();
    assert!(users.iter().any(|u| u == "What is the capital of France?"), "{users:?}");
    assert_eq!(users.last().map(String::as_str), Some("What did I ask?"));
    let earlier_answer = last.input().iter().any(|i| i["role"] == "assistant" && i.to_string().contains("Paris"));
    assert!(earlier_answer, "{:?}", last.input());
}

#[tokio::test]
async fn a_session_released_before_its_first_turn_can_resume() {
    if !have_codex() {
        return;
    }
    // Codex writes a thread's rollout at its first turn: until then `thread/resume` finds nothing.
    let (c, s, mut ws) = codex_room().await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/release").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    no_codex_left(c.home.path()).await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ready");
    assert!(body["providerSessionId"].as_str().is_some_and(|t| !t.is_empty()), "{body}");
    c.mock.push(Reply::text("Fresh start."));
    s.turn("r", "c1", "hello after the release").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert_eq!(first(&events, "message.completed")["payload"]["text"], "Fresh start.");
}

#[tokio::test]
async fn a_lost_codex_history_is_reported_on_resume() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    c.mock.push(Reply::text("Remember this."));
    s.turn("r", "c1", "something to remember").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    let (status, _) = s.post_empty("/v1/rooms/r/sessions/c1/release").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    no_codex_left(c.home.path()).await;
    // Someone wipes codex's rollouts: the conversation is gone, and a resume must say so.
    std::fs::remove_dir_all(c.home.path().join("sessions")).unwrap();
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/resume").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_GATEWAY), "provider_session_not_found");
    assert_eq!(session(&s, "c1").await["live"], false);
    no_codex_left(c.home.path()).await;
}

#[tokio::test]
async fn a_missing_api_key_is_reported_as_auth_required() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default(), None).await;
    let s = Server::start(&c.args()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let codex_listed =
        |providers: &Value| providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "codex").cloned().unwrap();
    // Before any session: a codex started only to be asked says so, and is gone again.
    let (_, providers) = s.get("/v1/providers").await;
    let listed = codex_listed(&providers);
    assert_eq!(listed["authState"], "auth_required", "known before a session: {listed}");
    assert!(listed["authMessage"].as_str().is_some_and(|m| m.contains("MOCK_API_KEY")), "{listed}");
    no_codex_left(c.home.path()).await;
    let started = start_codex(&s, &c, "c1", json!({})).await;
    assert_eq!(started["authState"], "auth_required", "{started}");
    let msg = started["authMessage"].as_str().unwrap_or_default();
    assert!(msg.contains("MOCK_API_KEY") && msg.contains("--codex-env"), "{msg}");
    // The provider is listed as needing it, with the same message.
    let (_, providers) = s.get("/v1/providers").await;
    let listed = codex_listed(&providers);
    assert_eq!(listed["authState"], "auth_required", "{listed}");
    assert_eq!(listed["authMessage"], msg, "{listed}");
    // A turn is refused at once, with the message and what to do, rather than accepted and left
    // to codex's retries of a model API it cannot call.
    let (status, body) =
        s.post("/v1/rooms/r/sessions/c1/turns", json!({"input": [{"type": "text", "text": "hello?"}]})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("auth_required")), "{body}");
    let details = &body["error"]["details"];
    assert!(details["authMessage"].as_str().is_some_and(|m| m.contains("MOCK_API_KEY")), "{body}");
    assert_eq!(session(&s, "c1").await["activeTurnId"], Value::Null, "no turn was started");
    assert!(c.mock.requests().is_empty(), "codex gave up before calling the model");
}

#[tokio::test]
async fn images_and_files_reach_codex_as_it_takes_them() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    std::fs::write(c.work.path().join("notes.md"), "hello notes\n").unwrap();
    {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD.decode(png).unwrap();
        std::fs::write(c.work.path().join("shot.png"), bytes).unwrap();
    }
    c.mock.push(Reply::text_chunks(["Seen."], std::time::Duration::from_millis(1)));
    let input = json!([
        {"type": "text", "text": "what is in these?"},
        {"type": "image", "data": png, "mimeType": "image/png"},
        {"type": "image", "path": "shot.png"},
        {"type": "file", "path": "notes.md"},
    ]);
    let (status, body) = s.post("/v1/rooms/r/sessions/c1/turns", json!({ "input": input })).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    ws.until_type("turn.completed").await;
    let requests = c.mock.wait_for_responses_requests(1, WAIT).await.unwrap();
    let sent = serde_json::to_string(requests.last().unwrap().input()).unwrap();
    // Both images went as files codex read (the one sent as data from where the server keeps
    // it): codex sends them on as data URLs. The file is named for codex to read.
    assert!(sent.matches("data:image/png;base64,").count() >= 2, "{sent}");
    assert!(sent.contains("input_image"), "{sent}");
    assert!(sent.contains("notes.md"), "{sent}");
}

#[tokio::test]
async fn codex_not_logged_in_is_listed_with_its_login_command_before_any_session() {
    if !have_codex() {
        return;
    }
    // No model provider of Ensemble's making and no login: codex's default provider needs one.
    let home = tempfile::Builder::new().prefix("ensemble-codex-home-").tempdir_in("/var/tmp").expect("home");
    let work = tempfile::Builder::new().prefix("ensemble-codex-work-").tempdir_in("/var/tmp").expect("work");
    let (bin, home_arg) = (codex_bin(), home.path().display().to_string());
    let home_env = format!("HOME={home_arg}");
    let s = Server::start(&["--codex-bin", bin.to_str().unwrap(), "--codex-home", &home_arg, "--codex-env", &home_env])
        .await;
    let login = format!("CODEX_HOME={home_arg} codex login");
    let (status, providers) = s.get("/v1/providers").await;
    assert_eq!(status, StatusCode::OK);
    let codex = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "codex").cloned().unwrap();
    assert_eq!(codex["available"], true, "{codex}");
    assert_eq!(codex["authState"], "auth_required", "{codex}\n{}", s.log());
    assert_eq!(codex["loginCommand"], login.as_str(), "{codex}");
    no_codex_left(home.path()).await;
    // A session of it refuses a turn at once, naming the same command.
    let cwd = work.path().to_str().unwrap();
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "c1", "provider": "codex", "cwd": cwd})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["authState"], "auth_required", "{body}");
    let (status, body) =
        s.post("/v1/rooms/r/sessions/c1/turns", json!({"input": [{"type": "text", "text": "hello?"}]})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("auth_required")), "{body}");
    assert_eq!(body["error"]["details"]["loginCommand"], login.as_str(), "{body}");
    let (status, _) = s.delete("/v1/rooms/r/sessions/c1").await;
    assert!(status.is_success(), "{status}");
    no_codex_left(home.path()).await;
}

#[tokio::test]
async fn a_killed_codex_fails_the_turn_and_the_session_resumes() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_room().await;
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["Halfway "], &gate, ["there"]));
    let turn = s.turn("r", "c1", "remember the word banana").await;
    deltas(&mut ws, 1).await;
    let pids = codex_app_servers(c.home.path());
    assert_eq!(pids.len(), 1, "{pids:?}");
    kill_pid(pids[0], 9);
    let events = ws.until(|e| e["type"] == "session.updated").await;
    let failed = first(&events, "turn.failed");
    // The message codex was streaming is closed with its text so far, before the turn fails.
    let closed = first(&events, "message.completed");
    assert_eq!(closed["payload"]["text"], "Halfway ");
    assert!(position(&events, "message.completed") < position(&events, "turn.failed"));
    assert_eq!(failed["payload"]["turnId"], turn.as_str());
    assert_eq!(failed["payload"]["error"]["code"], "provider_exited", "{failed}");
    let updated = events.last().unwrap();
    assert_eq!(updated["payload"]["reason"], "provider_exited");
    let now = session(&s, "c1").await;
    assert_eq!(now["status"], "disconnected", "{now}");
    assert_eq!(now["live"], false);
    assert_eq!(now["resumable"], true);
    let last_error = now["lastError"].as_str().unwrap_or_default();
    assert!(last_error.contains("SIGKILL") || last_error.contains("signal: 9"), "the exit status: {last_error}");
    no_codex_left(c.home.path()).await;

    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
    assert_eq!(body["status"], "ready");
    assert_eq!(body["live"], true);
    c.mock.push(Reply::text("Back after the crash."));
    s.turn("r", "c1", "are you there?").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert_eq!(first(&events, "message.completed")["payload"]["text"], "Back after the crash.");
    // The thread kept the interrupted turn's input (codex wrote it to the rollout at turn start).
    let users = c.mock.responses_requests().last().unwrap().user_texts();
    assert!(users.iter().any(|u| u == "remember the word banana"), "{users:?}");
}

// ------------------------------------------------------------------------------------------------
// No codex process outlives its session or the server

async fn live_codex(c: &Codex, s: &Server, ws: &mut Ws) {
    start_codex(s, c, "c1", json!({})).await;
    c.mock.push(Reply::text("warm"));
    s.turn("r", "c1", "warm up").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    assert_eq!(codex_app_servers(c.home.path()).len(), 1);
}

/// A turn of `c1` that streamed one delta and then waits for the returned gate.
async fn busy_turn(c: &Codex, s: &Server, ws: &mut Ws) -> Gate {
    let gate = Gate::new();
    c.mock.push(Reply::held_text(["busy "], &gate, ["done"]));
    s.turn("r", "c1", "keep busy").await;
    deltas(ws, 1).await;
    gate
}

#[tokio::test]
async fn no_codex_is_left_after_close_during_a_turn() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    live_codex(&c, &s, &mut ws).await;
    let _gate = busy_turn(&c, &s, &mut ws).await;
    let (status, _) = s.delete("/v1/rooms/r/sessions/c1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let events = ws.until_type("session.completed").await;
    assert!(has(&events, "turn.canceled"), "{:?}", types(&events));
    no_codex_left(c.home.path()).await;
}

#[tokio::test]
async fn no_codex_is_left_after_release() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    live_codex(&c, &s, &mut ws).await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/release").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    no_codex_left(c.home.path()).await;
    assert_eq!(session(&s, "c1").await["status"], "disconnected");
}

#[tokio::test]
async fn no_codex_is_left_after_disconnect_with_a_pending_approval() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    let (_, _, req) = command_approval(&s, &c, &mut ws, "echo never > never.txt").await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/disconnect").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let events = ws.until_type("session.updated").await;
    assert!(has(&events, "interaction.resolved") && has(&events, "turn.failed"), "{:?}", types(&events));
    assert_eq!(first(&events, "interaction.resolved")["payload"]["resolvedBy"], "close");
    // The call waiting for approval is closed before the turn fails: `declined` when codex still
    // reacted to the rejection of its request, `interrupted` when its process went first.
    let call = first(&events, "call.completed");
    assert_eq!(call["payload"]["callId"], req["callId"]);
    let status = call["payload"]["status"].as_str().unwrap();
    assert!(status == "interrupted" || status == "declined", "{call}");
    assert!(position(&events, "call.completed") < position(&events, "turn.failed"));
    no_codex_left(c.home.path()).await;
    assert!(!c.work.path().join("never.txt").exists());
    assert_eq!(session(&s, "c1").await["status"], "disconnected");
}

#[tokio::test]
async fn no_codex_is_left_after_sigterm() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    live_codex(&c, &s, &mut ws).await;
    let _gate = busy_turn(&c, &s, &mut ws).await;
    assert!(s.stop().await.success());
    no_codex_left(c.home.path()).await;
}

#[tokio::test]
async fn no_codex_is_left_after_sigkill() {
    if !have_codex() {
        return;
    }
    let (c, s, mut ws) = codex_server().await;
    live_codex(&c, &s, &mut ws).await;
    let _gate = busy_turn(&c, &s, &mut ws).await;
    s.kill9().await;
    no_codex_left(c.home.path()).await;
}

// ------------------------------------------------------------------------------------------------
// Availability

async fn assert_unavailable(bin: &std::path::Path, reason_has: &str) {
    let bin = bin.to_str().unwrap();
    let s = Server::start(&["--codex-bin", bin]).await;
    let (status, providers) = s.get("/v1/providers").await;
    assert_eq!(status, StatusCode::OK);
    let codex = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "codex").unwrap().clone();
    assert_eq!(codex["available"], false, "{codex}");
    let reason = codex["unavailableReason"].as_str().unwrap_or_default();
    assert!(reason.contains(reason_has), "{reason}");
    let scripted = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "scripted").unwrap().clone();
    assert_eq!(scripted["available"], true, "the other providers are unaffected");
    let cwd = s.dir.to_str().unwrap().to_owned();
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "c1", "provider": "codex", "cwd": cwd})).await;
    assert_eq!(error_code(status, &body, StatusCode::UNPROCESSABLE_ENTITY), "provider_unavailable");
    assert!(body["error"]["message"].as_str().unwrap().contains(reason_has), "{body}");
    let (status, _) = s.get("/v1/rooms/r/sessions/c1").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a failed start leaves nothing behind");
}

#[tokio::test]
async fn codex_is_unavailable_when_the_binary_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    assert_unavailable(&dir.path().join("no-such-codex"), "not found").await;
}

#[tokio::test]
async fn codex_is_unavailable_when_it_is_too_old() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("codex");
    std::fs::write(&bin, "#!/bin/sh\necho 'codex-cli 0.1.0'\n").unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_unavailable(&bin, "0.1.0").await;
}

/// A real codex patch in a git work tree: the turn's checkpoints capture it, and `turn.changes`
/// lists the file codex wrote.
#[tokio::test]
async fn a_codex_patch_is_captured_by_the_turns_checkpoint() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default().model("gpt-5.5"), Some(MOCK_KEY)).await;
    git_repo(c.work.path(), &[]);
    let s = Server::start(&c.args()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let started = start_codex(&s, &c, "c1", json!({"approvalPolicy": "never", "sandbox": "workspace-write"})).await;
    assert_eq!(started["workspace"]["checkpoints"], true, "{started}");
    c.mock.push(Reply::add_file_patch("patched.txt", "first line\nsecond line"));
    c.mock.push(Reply::text("Patched."));
    let turn = s.turn("r", "c1", "add a file").await;
    let t = turn.clone();
    let events = ws.until(move |e| e["type"] == "turn.changes" && e["turnId"] == t.as_str()).await;
    assert!(events.iter().any(|e| e["type"] == "turn.completed"), "{:?}\n{}", types(&events), s.log());
    let files = &events.last().unwrap()["payload"]["files"];
    assert_eq!(files[0]["path"], "patched.txt", "{files}");
    assert_eq!((files[0]["status"].as_str(), files[0]["added"].as_u64()), (Some("added"), Some(2)), "{files}");
}

/// A durable fork of a codex session through its first turn: a thread of its own (codex's
/// `thread/fork` through codex's id of that turn), in its own worktree and process, whose model
/// sees the first turn but not the second; released and resumed, it still does.
#[tokio::test]
async fn a_codex_fork_through_a_turn_keeps_that_conversation_only() {
    if !have_codex() {
        return;
    }
    let c = Codex::new(CodexProvider::default().model("gpt-5.5"), Some(MOCK_KEY)).await;
    git_repo(c.work.path(), &[("README.md", b"# demo\n")]);
    let s = Server::start(&c.args()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let src = start_codex(&s, &c, "src", json!({"approvalPolicy": "never"})).await;
    let mut turns = Vec::new();
    for (said, reply) in [("remember: apples", "Apples noted."), ("remember: pears", "Pears noted.")] {
        c.mock.push(Reply::text(reply));
        let turn = s.turn("r", "src", said).await;
        let t = turn.clone();
        ws.until(move |e| e["type"] == "turn.changes" && e["turnId"] == t.as_str()).await;
        turns.push(turn);
    }
    let (status, fork) = s.post("/v1/rooms/r/sessions/src/fork", json!({"atTurn": turns[0], "sessionId": "f"})).await;
    assert_eq!(status, StatusCode::CREATED, "{fork}\n{}", s.log());
    assert_eq!(fork["provider"], "codex");
    assert_eq!(fork["forkedFrom"]["turnId"], turns[0].as_str(), "{fork}");
    let thread = fork["providerSessionId"].as_str().expect("a thread");
    assert_ne!(Some(thread), src["providerSessionId"].as_str(), "a thread of its own");
    let top = fork["workspace"]["path"].as_str().unwrap();
    assert_eq!(fork["cwd"], top, "{fork}");
    assert_eq!(codex_processes_of_server(&c, &s).len(), 2, "a process of its own");

    c.mock.push(Reply::text("Fruit."));
    let turn = s.turn("r", "f", "which fruits?").await;
    ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str()).await;
    let seen = serde_json::to_string(c.mock.responses_requests().last().unwrap().input()).unwrap();
    assert!(seen.contains("remember: apples") && !seen.contains("remember: pears"), "{seen}");

    // Released, the fork resumes its own thread with the same history.
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/f/release").await;
    assert!(status.is_success(), "{body}");
    c.mock.push(Reply::text("Fruit."));
    let turn = s.turn("r", "f", "and now?").await;
    ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == turn.as_str()).await;
    let seen = serde_json::to_string(c.mock.responses_requests().last().unwrap().input()).unwrap();
    assert!(seen.contains("remember: apples") && seen.contains("which fruits?"), "{seen}");
    assert!(!seen.contains("remember: pears"), "{seen}");
    let (_, f) = s.get("/v1/rooms/r/sessions/f").await;
    assert_eq!(f["providerSessionId"], thread, "the same thread resumed");
    for id in ["f", "src"] {
        s.delete(&format!("/v1/rooms/r/sessions/{id}")).await;
    }
    no_codex_left(c.home.path()).await;
}
