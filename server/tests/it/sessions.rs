//! Driving scripted sessions over REST and watching them on the room WebSocket, against the real
//! binary.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

fn payload_types(events: &[Value]) -> Vec<String> {
    types(events)
}

#[tokio::test]
async fn a_full_scripted_turn_streams_in_order_with_payloads() {
    let s = Server::start(&[]).await;
    let mut ws = s.ws("r1", Some(0)).await;
    let hello = ws.hello().await;
    assert_eq!(hello["headSeq"], 0);
    assert_eq!(hello["sessions"], json!([]));

    let session = s.session("r1", "s1").await;
    assert_eq!(session["status"], "ready");
    assert_eq!(session["live"], true);
    assert_eq!(session["scope"], "canonical");
    assert_eq!(session["provider"], "scripted");
    let started = ws.until_type("commands.updated").await;
    assert_eq!(payload_types(&started), ["session.started", "commands.updated"]);
    assert_eq!(started[0]["payload"]["session"]["sessionId"], "s1");

    let turn = s.turn("r1", "s1", "hello there\n/tool grep -n x").await;
    let events = ws.until_type("turn.completed").await;
    let t = payload_types(&events);
    assert_eq!(t[0], "turn.started");
    assert_eq!(events[0]["payload"]["origin"], "user");
    assert_eq!(events[0]["payload"]["input"][0]["text"], "hello there\n/tool grep -n x");
    // The session, started without a title, is named by the turn's first words.
    assert_eq!((t[1].as_str(), events[1]["payload"]["reason"].as_str()), ("session.updated", Some("titled")));
    assert_eq!(events[1]["payload"]["session"]["title"], "hello there");
    assert_eq!(events[1]["turnId"], turn.as_str());
    assert_eq!(&t[2..4], ["call.started", "call.completed"]);
    assert_eq!(events[2]["payload"]["name"], "grep");
    let deltas: Vec<&Value> = events.iter().filter(|e| e["type"] == "message.delta").collect();
    assert!(deltas.len() >= 3, "streamed in several chunks: {t:?}");
    let text: String = deltas.iter().map(|d| d["payload"]["text"].as_str().unwrap()).collect();
    assert_eq!(text, "You said: hello there");
    let completed = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert_eq!(completed["payload"]["text"], "You said: hello there");
    assert_eq!(completed["payload"]["itemId"], deltas[0]["payload"]["itemId"]);
    assert!(t.contains(&"usage.updated".to_owned()));
    assert_eq!(events.last().unwrap()["payload"]["turnId"], turn.as_str());
    for e in &events {
        assert_eq!(e["turnId"], turn.as_str(), "every turn event carries the turn id: {e}");
        assert_eq!(e["roomId"], "r1");
        assert_eq!(e["sessionId"], "s1");
    }
    let mut all = started.clone();
    all.extend(events.clone());
    assert_gap_free(&all);
    assert_eq!(all[0]["seq"], 1);

    // REST and the socket agree.
    let logged = s.events("r1").await;
    assert_eq!(logged, all);
    let (_, session) = s.get("/v1/rooms/r1/sessions/s1").await;
    assert_eq!(session["status"], "ready");
    assert!(session.get("activeTurnId").is_none());
    let (_, rooms) = s.get("/v1/rooms").await;
    assert_eq!(rooms["data"], json!([{"roomId": "r1", "sessionCount": 1, "headSeq": all.len()}]));
}

async fn approval(decision: &str) -> (Vec<Value>, Server) {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/run touch file.txt").await;
    let before = ws.until_type("interaction.requested").await;
    let req = before.last().unwrap()["payload"].clone();
    assert_eq!(req["kind"], "commandApproval");
    assert_eq!(req["command"], "touch file.txt");
    assert_eq!(req["options"], json!(["accept", "acceptForSession", "decline", "cancel"]));
    let (_, session) = s.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(session["status"], "waiting");
    let (_, list) = s.get("/v1/rooms/r/sessions/s/interactions").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert_eq!(list["data"][0]["requestId"], req["requestId"]);
    let rid = req["requestId"].as_str().unwrap();
    let (status, body) =
        s.post(&format!("/v1/rooms/r/sessions/s/interactions/{rid}"), json!({"decision": decision})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Answering twice is a conflict.
    let (status, body) =
        s.post(&format!("/v1/rooms/r/sessions/s/interactions/{rid}"), json!({"decision": decision})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "interaction_resolved");
    let after = ws.until(|e| e["type"].as_str().unwrap().starts_with("turn.") && e["type"] != "turn.started").await;
    let resolved = &after[0];
    assert_eq!(resolved["type"], "interaction.resolved", "the resolution comes first");
    assert_eq!(resolved["payload"]["decision"], decision);
    assert_eq!(resolved["payload"]["resolvedBy"], "client");
    let (_, list) = s.get("/v1/rooms/r/sessions/s/interactions").await;
    assert_eq!(list["data"], json!([]));
    (after, s)
}

#[tokio::test]
async fn approval_accepted_runs_the_command() {
    let (after, _s) = approval("accept").await;
    let t = payload_types(&after);
    assert!(t.contains(&"call.started".to_owned()), "{t:?}");
    let done = after.iter().find(|e| e["type"] == "call.completed").unwrap();
    assert_eq!(done["payload"]["status"], "completed");
    assert_eq!(done["payload"]["exitCode"], 0);
    assert_eq!(after.last().unwrap()["type"], "turn.completed");
}

#[tokio::test]
async fn approval_declined_does_not_run_it() {
    let (after, _s) = approval("decline").await;
    let t = payload_types(&after);
    assert!(!t.contains(&"call.started".to_owned()), "{t:?}");
    let msg = after.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert!(msg["payload"]["text"].as_str().unwrap().contains("declined"), "{msg}");
    assert_eq!(after.last().unwrap()["type"], "turn.completed");
}

#[tokio::test]
async fn a_question_is_answered_with_answers() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/ask What colour?").await;
    let req = ws.until_type("interaction.requested").await.pop().unwrap()["payload"].clone();
    assert_eq!(req["kind"], "userInput");
    assert_eq!(req["questions"][0]["question"], "What colour?");
    let rid = req["requestId"].as_str().unwrap();
    let path = format!("/v1/rooms/r/sessions/s/interactions/{rid}");
    // Accepting a question without answers is bad input, and leaves the request pending.
    let (status, body) = s.post(&path, json!({"decision": "accept"})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_decision");
    let (status, body) = s.post(&path, json!({"decision": "acceptForSession", "answers": {}})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_decision");
    let (status, _) = s.post(&path, json!({"decision": "accept", "answers": {"answer": "teal"}})).await;
    assert_eq!(status, StatusCode::OK);
    let events = ws.until_type("turn.completed").await;
    let msg = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert_eq!(msg["payload"]["text"], "You answered: teal");
}

#[tokio::test]
async fn cancel_mid_stream_ends_the_turn_canceled() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let turn = s.turn("r", "s", "/slow 50\n/chunks 200").await;
    ws.until_type("message.delta").await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["turnId"], turn.as_str());
    let rest = ws.until(|e| e["type"].as_str().unwrap().starts_with("turn.")).await;
    let end = rest.last().unwrap();
    assert_eq!(end["type"], "turn.canceled");
    assert_eq!(end["payload"]["turnId"], turn.as_str());
    let deltas = rest.iter().filter(|e| e["type"] == "message.delta").count();
    assert!(deltas < 150, "stopped mid-stream ({deltas} more deltas)");
    assert!(rest.iter().any(|e| e["type"] == "message.completed"), "the open message is closed");
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/cancel").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "no_active_turn");
    // The session takes the next turn.
    s.turn("r", "s", "again").await;
    assert_eq!(ws.until_type("turn.completed").await.last().unwrap()["type"], "turn.completed");
}

#[tokio::test]
async fn a_second_turn_conflicts_and_client_submit_id_is_idempotent() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let body = json!({"input": [{"type": "text", "text": "/slow 30\n/chunks 20"}], "clientSubmitId": "c-1"});
    let (status, first) = s.post("/v1/rooms/r/sessions/s/turns", body.clone()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(first["duplicate"], false);
    let (status, again) = s.post("/v1/rooms/r/sessions/s/turns", body.clone()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(again["turnId"], first["turnId"]);
    assert_eq!(again["duplicate"], true);
    let (status, err) =
        s.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "other"}]})).await;
    assert_eq!(error_code(status, &err, StatusCode::CONFLICT), "turn_active");
    // Steering adds to the running turn instead.
    let (status, steered) = s
        .post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "also this"}], "steer": true}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{steered}");
    assert_eq!(steered["turnId"], first["turnId"]);
    assert_eq!(steered["steered"], true);
    let events = ws.until_type("turn.completed").await;
    assert_eq!(events.iter().filter(|e| e["type"] == "turn.started").count(), 1, "one turn only");
    assert!(events.iter().any(|e| e["type"] == "turn.steered"));
    let msg = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert!(msg["payload"]["text"].as_str().unwrap().contains("(steered: also this)"), "{msg}");
    // After the turn, the same clientSubmitId still names the same turn.
    let (_, late) = s.post("/v1/rooms/r/sessions/s/turns", body).await;
    assert_eq!(late["turnId"], first["turnId"]);
}

#[tokio::test]
async fn close_is_idempotent_and_settles_everything() {
    let s = Server::start(&["--close-grace-ms", "2000"]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/run rm -rf build").await;
    ws.until_type("interaction.requested").await;
    let (status, _) = s.delete("/v1/rooms/r/sessions/s").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let events = ws.until_type("session.completed").await;
    let t = payload_types(&events);
    assert!(t.contains(&"interaction.resolved".to_owned()), "{t:?}");
    assert!(t.contains(&"turn.canceled".to_owned()), "{t:?}");
    let resolved = events.iter().find(|e| e["type"] == "interaction.resolved").unwrap();
    assert_eq!(resolved["payload"]["resolvedBy"], "close");
    let completed = events.last().unwrap();
    assert_eq!(completed["payload"]["session"]["status"], "completed");
    assert_eq!(completed["payload"]["session"]["resumable"], false);
    let (status, _) = s.delete("/v1/rooms/r/sessions/s").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "closing twice is fine");
    let (_, session) = s.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(session["status"], "completed");
    assert_eq!(session["submitAvailability"]["state"], "blocked");
    let (status, body) =
        s.post("/v1/rooms/r/sessions/s/turns", json!({"input": [{"type": "text", "text": "hi"}]})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "session_closed");
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/resume").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "session_closed");
    // Exactly one session.completed in the log.
    let all = s.events("r").await;
    assert_eq!(all.iter().filter(|e| e["type"] == "session.completed").count(), 1);
}

#[tokio::test]
async fn release_and_disconnect_keep_the_session_resumable() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "/slow 40\n/chunks 30").await;
    ws.until_type("message.delta").await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/release").await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "session_busy");
    ws.until_type("turn.completed").await;
    let (status, _) = s.post_empty("/v1/rooms/r/sessions/s/release").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let upd = ws.until_type("session.updated").await.pop().unwrap();
    assert_eq!(upd["payload"]["reason"], "released");
    assert_eq!(upd["payload"]["session"]["status"], "disconnected");
    assert_eq!(upd["payload"]["session"]["live"], false);
    assert_eq!(upd["payload"]["session"]["resumable"], true);
    // The next turn resumes it implicitly.
    s.turn("r", "s", "/history").await;
    let events = ws.until_type("turn.completed").await;
    let resumed = events.iter().find(|e| e["type"] == "session.updated").unwrap();
    assert_eq!(resumed["payload"]["reason"], "resumed");
    let msg = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert!(msg["payload"]["text"].as_str().unwrap().contains("/chunks 30"), "{msg}");

    // Disconnect drops it now, rejecting what is pending, and the turn fails.
    s.turn("r", "s", "/ask ok?").await;
    ws.until_type("interaction.requested").await;
    let (status, _) = s.post_empty("/v1/rooms/r/sessions/s/disconnect").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let events = ws.until_type("session.updated").await;
    let t = payload_types(&events);
    assert!(t.contains(&"interaction.resolved".to_owned()) && t.contains(&"turn.failed".to_owned()), "{t:?}");
    let (_, session) = s.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(session["status"], "disconnected");
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/s/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ready");
    assert_eq!(body["live"], true);
}

#[tokio::test]
async fn a_failing_turn_and_a_crashing_agent_only_affect_their_session() {
    let s = Server::start(&[]).await;
    s.session("r", "a").await;
    s.session("r", "b").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "a", "/fail it broke").await;
    let failed = ws.until_type("turn.failed").await.pop().unwrap();
    assert_eq!(failed["payload"]["error"]["code"], "scripted_failure");
    assert_eq!(failed["payload"]["error"]["message"], "it broke");
    s.turn("r", "a", "/panic").await;
    let events = ws.until(|e| e["type"] == "session.updated").await;
    let t = payload_types(&events);
    assert!(t.contains(&"turn.failed".to_owned()), "{t:?}");
    let upd = events.last().unwrap();
    assert_eq!(upd["payload"]["reason"], "provider_exited");
    assert_eq!(upd["payload"]["session"]["status"], "disconnected");
    assert!(upd["payload"]["session"]["lastError"].as_str().unwrap().contains("panicked"));
    // The other session is untouched and the server still serves.
    s.turn("r", "b", "still here").await;
    let done = ws.until_type("turn.completed").await;
    assert!(done.iter().all(|e| e["sessionId"] == "b"));
    let (_, b) = s.get("/v1/rooms/r/sessions/b").await;
    assert_eq!(b["status"], "ready");
}

#[tokio::test]
async fn sessions_are_listed_per_room_and_providers_are_described() {
    let s = Server::start(&[]).await;
    s.session("r1", "x").await;
    s.session("r1", "y").await;
    s.session("r2", "z").await;
    let (_, list) = s.get("/v1/rooms/r1/sessions").await;
    let ids: Vec<&str> = list["data"].as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["x", "y"]);
    let (_, list) = s.get("/v1/rooms/empty/sessions").await;
    assert_eq!(list["data"], json!([]));
    let (_, providers) = s.get("/v1/providers").await;
    let scripted = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == "scripted").unwrap();
    assert_eq!(scripted["available"], true);
    assert_eq!(scripted["capabilities"]["interactive"], true);
    assert_eq!(scripted["capabilities"]["steer"], true);
    // A generated id, a title, a cwd and settings are kept.
    let (status, body) = s
        .post(
            "/v1/rooms/r3/sessions",
            json!({"provider": "scripted", "title": "T", "cwd": s.dir.to_str().unwrap(), "settings": {"approvalPolicy": "never", "sandbox": "read-only", "model": "m"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["title"], "T");
    assert_eq!(body["settings"]["approvalPolicy"], "never");
    assert!(!body["sessionId"].as_str().unwrap().is_empty());
    let (status, _) = s.get(&format!("/v1/rooms/r3/sessions/{}", body["sessionId"].as_str().unwrap())).await;
    assert_eq!(status, StatusCode::OK);
}

/// `/edit`, `/write` and `/delete` change files in the session's cwd for real, each a file
/// change with its minimal unified diff (git's: three lines of context).
#[tokio::test]
async fn scripted_file_directives_change_files_with_a_diff() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let change_of = |events: &[Value]| {
        let done = events.iter().rev().find(|e| e["type"] == "call.completed").unwrap();
        assert_eq!(done["payload"]["status"], "completed", "{done}");
        done["payload"]["changes"][0].clone()
    };
    s.turn("r", "s", r"/edit docs/notes.md first line\nsecond line").await;
    let events = ws.until_type("turn.completed").await;
    let started = events.iter().find(|e| e["type"] == "call.started").unwrap();
    assert_eq!(started["payload"]["kind"], "fileChange");
    let change = change_of(&events);
    assert_eq!((change["path"].as_str(), change["kind"].as_str()), (Some("docs/notes.md"), Some("add")));
    assert_eq!(change["diff"], "--- /dev/null\n+++ b/docs/notes.md\n@@ -0,0 +1,2 @@\n+first line\n+second line\n");
    let file = s.dir.join("docs/notes.md");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "first line\nsecond line\n");

    s.turn("r", "s", "/edit docs/notes.md third").await;
    let change = change_of(&ws.until_type("turn.completed").await);
    assert_eq!(change["kind"], "update");
    // The minimal diff (one line added after its context), as the turn's changes count it: not
    // the whole file removed and added again.
    assert_eq!(
        change["diff"],
        "--- a/docs/notes.md\n+++ b/docs/notes.md\n@@ -1,2 +1,3 @@\n first line\n second line\n+third\n"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "first line\nsecond line\nthird\n");

    s.turn("r", "s", "/write docs/notes.md only").await;
    change_of(&ws.until_type("turn.completed").await);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "only\n");

    s.turn("r", "s", "/delete docs/notes.md").await;
    let change = change_of(&ws.until_type("turn.completed").await);
    assert_eq!(change["kind"], "delete");
    assert_eq!(change["diff"], "--- a/docs/notes.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-only\n");
    assert!(!file.exists());
}

/// Nothing outside the session's cwd is changed: not by `..`, an absolute path or a link.
#[tokio::test]
async fn scripted_file_directives_stay_inside_the_cwd() {
    let s = Server::start(&[]).await;
    let cwd = s.dir.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let outside = s.dir.join("outside.txt");
    std::fs::write(&outside, "keep\n").unwrap();
    std::os::unix::fs::symlink(&outside, cwd.join("link.txt")).unwrap();
    let (status, _) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "cwd": cwd.to_str().unwrap()})).await;
    assert_eq!(status, StatusCode::CREATED);
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    for line in [
        "/write ../outside.txt gone",
        &format!("/write {} gone", outside.display()),
        "/edit link.txt gone",
        "/delete ../outside.txt",
    ] {
        s.turn("r", "s", line).await;
        let events = ws.until_type("turn.completed").await;
        let done = events.iter().find(|e| e["type"] == "call.completed").unwrap();
        assert_eq!(done["payload"]["status"], "failed", "{line}: {done}");
        let output = done["payload"]["output"].as_str().unwrap();
        assert!(output.contains("outside") || output.contains("link"), "{line}: {output}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n", "{line} changed the file outside");
    }
}

/// A session started without a title is named by its first turn's first words; a title given is
/// kept; a session is renamed with `PATCH`, announced each time as `session.updated`.
#[tokio::test]
async fn an_untitled_session_is_named_by_its_first_words_and_can_be_renamed() {
    let s = Server::start(&[]).await;
    s.session("r", "s").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "s", "fix the login bug\nwith details after").await;
    let events = ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "titled").await;
    let titled = events.last().unwrap();
    assert_eq!(titled["payload"]["session"]["title"], "fix the login bug");
    ws.until_type("turn.completed").await;
    assert_eq!(s.get("/v1/rooms/r/sessions/s").await.1["title"], "fix the login bug");
    // The next turn names nothing.
    s.turn("r", "s", "something else").await;
    let events = ws.until_type("turn.completed").await;
    assert!(!events.iter().any(|e| e["payload"]["reason"] == "titled"), "{events:?}");

    let (status, body) = s.patch("/v1/rooms/r/sessions/s", json!({"title": "  Login fix  "})).await;
    assert_eq!((status, body["title"].as_str()), (StatusCode::OK, Some("Login fix")), "{body}");
    let events = ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "renamed").await;
    assert_eq!(events.last().unwrap()["payload"]["session"]["title"], "Login fix");
    let (status, body) = s.patch("/v1/rooms/r/sessions/s", json!({"title": "   "})).await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "invalid_input");
    let (status, body) = s.patch("/v1/rooms/r/sessions/s", json!({"name": "x"})).await;
    assert!(status.is_client_error(), "{body}");
    let (status, body) = s.patch("/v1/rooms/r/sessions/nope", json!({"title": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // A title given at the start stays.
    let (status, _) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "t", "title": "Mine"})).await;
    assert_eq!(status, StatusCode::CREATED);
    s.turn("r", "t", "other words").await;
    ws.until(|e| e["type"] == "turn.completed" && e["sessionId"] == "t").await;
    assert_eq!(s.get("/v1/rooms/r/sessions/t").await.1["title"], "Mine");
}
