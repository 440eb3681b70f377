//! Gemini CLI (`@google/gemini-cli@0.61.0`, `gemini --acp`) against the scripted Gemini API on
//! 127.0.0.1.
//!
//! Pointed there with `GOOGLE_GEMINI_BASE_URL` (which also makes it skip `authenticate`), with
//! `GEMINI_API_KEY` as the key the mock checks. Its model is pinned (`GEMINI_MODEL`): with its
//! default (`auto`) it asks a second model to pick one before every prompt. Kept off the network
//! by its settings (`~/.gemini/settings.json`: no usage statistics, which it sends to Google by
//! default, no telemetry, no update checks, no IDE). `GEMINI_CLI_NO_RELAUNCH`: otherwise the
//! process Ensemble starts is a launcher that starts the agent as its child and ignores SIGTERM.
//! `GEMINI_CLI_TRUST_WORKSPACE`: in an untrusted folder it refuses the modes `autoEdit` and
//! `yolo`. Its own default mode (`default`) asks before every command.

use std::path::Path;
use std::time::Duration;

use ensemble_mock_model::{WRITE_FILE_CONTENT, WRITE_FILE_NAME};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;
use crate::real_agents::*;

fn bin() -> std::path::PathBuf {
    installed("ENSEMBLE_GEMINI_BIN", "gemini/node_modules/.bin/gemini", "@google/gemini-cli@0.61.0")
}

/// Whether this agent is installed here (its tests skip without it).
fn present() -> bool {
    have_agent("ENSEMBLE_GEMINI_BIN", "gemini/node_modules/.bin/gemini", "@google/gemini-cli@0.61.0")
}

const SETTINGS: &str = r#"{
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "ide": {"enabled": false}
}"#;

async fn gemini() -> RealAgent {
    let agent = RealAgent::new("gemini", &bin(), &[], |home: &Path, _base: &str| {
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::write(home.join(".gemini/settings.json"), SETTINGS).unwrap();
    })
    .await;
    let env = [
        ("GOOGLE_GEMINI_BASE_URL", agent.mock.url()),
        ("GEMINI_API_KEY", MOCK_KEY.to_owned()),
        ("GEMINI_CLI_NO_RELAUNCH", "true".to_owned()),
        ("GEMINI_CLI_TRUST_WORKSPACE", "true".to_owned()),
        ("GEMINI_MODEL", "gemini-2.5-flash".to_owned()),
    ];
    agent.with_env(&env)
}

/// Released and resumed at once, in the minute Gemini CLI created its session: its session file
/// is named by that minute, and a `session/load` in the same minute would start a new file of
/// that name over the history. Ensemble waits the minute out, so the resume may take up to a
/// minute (past the harness's usual 15 s per request); the conversation goes on with its history.
async fn resume_at_once(agent: &RealAgent, s: &Server, ws: &mut Ws, session: &str) {
    let (status, body) = s.post_empty(&format!("/v1/rooms/r/sessions/{session}/release")).await;
    assert!(status.is_success(), "{body}");
    agent.none_left().await;
    let asked_at = std::time::Instant::now();
    let res = s
        .http()
        .post(s.url(&format!("/v1/rooms/r/sessions/{session}/resume")))
        .timeout(Duration::from_secs(150))
        .send()
        .await
        .expect("POST resume");
    let (status, body) = decode(res).await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
    assert_eq!(body["live"], true);
    let waited = s.log().contains("session/load waits for the minute");
    eprintln!("resumed in {:?} (waited out the session's first minute: {waited})", asked_at.elapsed());
    let turn = s.turn("r", session, "after the resume").await;
    let events = turn_events(ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    let last = agent.mock.model_calls().pop().expect("a model call");
    let said = last.user_texts();
    assert!(said.iter().any(|t| t == "hello there"), "the history was loaded: {said:?}");
}

/// Its write tool reads the file first (`fs/read_text_file`), and gives up on an error: a new
/// file reads empty, so it asks with the diff, and writes through `fs/write_text_file`.
async fn writes_a_new_file(agent: &RealAgent, s: &Server, ws: &mut Ws, session: &str) {
    let written = agent.work.path().join(WRITE_FILE_NAME);
    let turn = s.turn("r", session, "WRITE please").await;
    let t = turn.clone();
    let asked = until(ws, move |e| e["type"] == "interaction.requested" && e["turnId"] == t.as_str()).await;
    let request = asked.last().unwrap()["payload"].clone();
    assert_eq!(request["kind"], "fileChangeApproval", "{request}");
    assert!(request["diff"].as_str().is_some_and(|d| d.contains(WRITE_FILE_CONTENT)), "{request}");
    assert!(!written.exists(), "not before it is accepted");
    let id = request["requestId"].as_str().unwrap();
    let path = format!("/v1/rooms/r/sessions/{session}/interactions/{id}");
    let (status, body) = s.post(&path, json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let events = turn_events(ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    assert_eq!(std::fs::read_to_string(&written).unwrap().trim_end(), WRITE_FILE_CONTENT);
    let done = events.iter().find(|e| e["type"] == "call.completed").expect("the write is shown");
    assert_eq!(done["payload"]["status"], "completed", "{done}");
}

#[tokio::test]
async fn gemini_cli_runs_turns_asks_permission_cancels_switches_and_resumes() {
    if !present() {
        return;
    }
    let agent = gemini().await;
    let s = agent.server().await;
    let go = Scenarios { agent: &agent, server: &s };
    let session = agent.start(&s, "g1").await;
    // What the agent said of itself in its handshake (known once one of its processes started).
    let listed = go.listed("Gemini CLI").await;
    assert_eq!(listed["agent"]["loadSession"], true, "{listed}");
    let modes: Vec<&str> =
        session["modes"]["available"].as_array().unwrap().iter().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(modes, ["default", "autoEdit", "yolo", "plan"], "{session}");
    assert_eq!(session["modes"]["current"], "default", "{session}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    go.streamed_text(&mut ws, "g1").await;
    // Straight after the first turn: most likely still the minute the session was created in.
    resume_at_once(&agent, &s, &mut ws, "g1").await;
    let accepted = go.permission(&mut ws, "g1", "accept").await;
    // It asks before it announces the call; the call is shown once it ran.
    let all = s.events("r").await;
    let asked = all.iter().find(|e| e["type"] == "interaction.requested").unwrap();
    assert_eq!(asked["payload"]["kind"], "commandApproval", "{asked}");
    assert_eq!(asked["payload"]["command"], ensemble_mock_model::DEFAULT_SHELL_COMMAND, "{asked}");
    assert!(accepted.iter().any(|e| e["type"] == "call.completed"), "{accepted:#?}");
    let declined = go.permission(&mut ws, "g1", "decline").await;
    assert!(Scenarios::declined_reply(&declined), "the model was told: {declined:#?}");
    writes_a_new_file(&agent, &s, &mut ws, "g1").await;
    go.cancel(&mut ws, "g1").await;
    go.switch(&mut ws, "g1", json!({"mode": "plan"}), |s: &Value| s["modes"]["current"] == "plan").await;
    go.switch(&mut ws, "g1", json!({"mode": "default"}), |s: &Value| s["modes"]["current"] == "default").await;
    // Its announcement of a mode change is the session's mode, not a message.
    let (_, now) = s.get("/v1/rooms/r/sessions/g1").await;
    assert_eq!(now["modes"]["current"], "default", "{now}");
    let all = s.events("r").await;
    assert!(!all.iter().any(|e| e.to_string().contains("[MODE_UPDATE]")), "{all:#?}");
    go.close("g1").await;
}

#[tokio::test]
async fn gemini_cli_leaves_nothing_when_the_server_is_killed() {
    if !present() {
        return;
    }
    nothing_left_after_the_server_is_killed(&gemini().await).await;
}
