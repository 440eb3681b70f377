//! codex through ACP: `@agentclientprotocol/codex-acp@2.6.0`, a Node program that runs
//! `codex app-server` (the pinned codex 0.171.0 that `scripts/test` installs, through
//! `CODEX_PATH`), against the scripted Responses API on 127.0.0.1.
//!
//! Pointed there by `$CODEX_HOME/config.toml` (a model provider whose key is the entry's
//! `OPENAI_API_KEY`, no retries, no plugins or analytics: nothing leaves the machine), as a user
//! would configure codex; `NO_BROWSER=1` leaves out the ChatGPT login. `CODEX_HOME` is under
//! /var/tmp: under /tmp codex cannot set up its sandbox. Its default mode (`agent`, "Auto review")
//! has codex's own model review every command that leaves the sandbox and never asks the client;
//! `read-only` and `workspace-write` ask. It declines by ending the turn (`cancelled`), without
//! going back to the model. A command's output is in the tool call's `_meta` (see
//! `adapters/src/acp/quirks/codex_acp2.rs`). Its title comes from a model call of its own, which
//! the mock answers.

use std::path::{Path, PathBuf};

use ensemble_mock_model::{CodexProvider, DEFAULT_TITLE, Reply};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;
use crate::real_agents::*;

fn bin() -> PathBuf {
    installed(
        "ENSEMBLE_CODEX_ACP2_BIN",
        "codex-acp2/node_modules/.bin/codex-acp",
        "@agentclientprotocol/codex-acp@2.6.0",
    )
}

/// Whether this agent is installed here (its tests skip without it).
fn present() -> bool {
    have_agent(
        "ENSEMBLE_CODEX_ACP2_BIN",
        "codex-acp2/node_modules/.bin/codex-acp",
        "@agentclientprotocol/codex-acp@2.6.0",
    ) && have_codex()
}

async fn codex_acp() -> RealAgent {
    let agent = RealAgent::new("codex-acp", &bin(), &[], |home: &Path, base: &str| {
        let config = CodexProvider::default().env_key("OPENAI_API_KEY").config_toml(base);
        std::fs::write(home.join("config.toml"), config).unwrap();
    })
    .await;
    let env = [
        ("CODEX_HOME", agent.home.path().display().to_string()),
        ("CODEX_PATH", codex_bin().display().to_string()),
        ("OPENAI_API_KEY", MOCK_KEY.to_owned()),
        ("NO_BROWSER", "1".to_owned()),
    ];
    agent.with_env(&env)
}

/// The mock's shell call asks to leave the sandbox, so that codex asks before it runs (the
/// Responses dialect's `SHELL` alone runs inside it).
fn escalate_shell_calls(agent: &RealAgent) {
    agent.mock.set_responder(|r| {
        (r.trailing_tool_output().is_none() && r.last_user_text().contains("SHELL")).then(|| {
            Reply::shell_escalated(ensemble_mock_model::DEFAULT_SHELL_COMMAND, "to write a file outside the sandbox")
        })
    });
}

/// The command's call among a turn's events: it ran (or not) as codex-acp reported it.
fn call_completed(events: &[Value]) -> Value {
    events.iter().rev().find(|e| e["type"] == "call.completed").cloned().unwrap_or_else(|| panic!("{events:#?}"))
}

/// The pid of the session's agent itself (the Node program), not of its codex app-server, nor of
/// an agent the server started to learn what it offers (in another directory).
fn agent_pid(agent: &RealAgent) -> i32 {
    let args = |pid: i32| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cwd = |pid: i32| std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
    let mine: Vec<i32> = agent.processes();
    mine.iter()
        .copied()
        .find(|&p| {
            let a = args(p);
            a.windows(9).any(|w| w == b"codex-acp")
                && !a.windows(10).any(|w| w == b"app-server")
                && cwd(p).as_deref() == Some(agent.work.path())
        })
        .unwrap_or_else(|| panic!("no codex-acp among {mine:?}"))
}

async fn set_mode(s: &Server, ws: &mut Ws, session: &str, mode: &str) {
    let (status, body) = s.patch(&format!("/v1/rooms/r/sessions/{session}/config"), json!({"mode": mode})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["modes"]["current"], mode, "{body}");
    until(ws, |e| e["type"] == "session.updated" && e["payload"]["reason"] == "config").await;
}

#[tokio::test]
async fn codex_acp_runs_turns_asks_permission_cancels_switches_and_resumes() {
    if !present() {
        return;
    }
    let agent = codex_acp().await;
    let s = agent.server().await;
    let go = Scenarios { agent: &agent, server: &s };
    let session = agent.start(&s, "c1").await;
    // What the agent said of itself in its handshake: agentInfo {name: @agentclientprotocol/codex-acp,
    // title: Codex}, shown by its title.
    let listed = go.listed("Codex").await;
    assert_eq!(listed["agent"]["version"], "2.6.0", "{listed}");
    assert_eq!(listed["agent"]["loadSession"], true, "{listed}");
    let modes: Vec<&str> =
        session["modes"]["available"].as_array().unwrap().iter().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(modes, ["read-only", "workspace-write", "agent", "agent-full-access"], "{session}");
    assert_eq!(session["modes"]["current"], "agent", "{session}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    go.streamed_text(&mut ws, "c1").await;
    // Its default mode asks a model, not the client: a mode that asks the client first.
    go.switch(&mut ws, "c1", json!({"mode": "read-only"}), |s: &Value| s["modes"]["current"] == "read-only").await;
    escalate_shell_calls(&agent);
    let accepted = go.permission(&mut ws, "c1", "accept").await;
    // Its output and exit code, which codex-acp sends in the call's `_meta` only.
    let ran = call_completed(&accepted);
    assert_eq!(ran["payload"]["status"], "completed", "{ran}");
    assert_eq!(ran["payload"]["exitCode"], 0, "{ran}");
    assert!(ran["payload"]["output"].as_str().is_some_and(|o| o.contains("mock-shell-ran")), "{ran}");
    let declined = go.permission(&mut ws, "c1", "decline").await;
    // codex-acp ends the turn on a rejection rather than telling the model.
    assert_eq!(end_of(&declined), "turn.canceled", "{declined:#?}");
    assert_eq!(declined.last().unwrap()["payload"]["reason"], "declined", "{declined:#?}");
    assert_eq!(call_completed(&declined)["payload"]["status"], "failed", "{declined:#?}");
    agent.mock.clear_responder();
    go.cancel(&mut ws, "c1").await;
    go.switch(&mut ws, "c1", json!({"mode": "workspace-write"}), |s: &Value| {
        s["modes"]["current"] == "workspace-write"
    })
    .await;
    go.resume(&mut ws, "c1").await;
    // The agent's title for the session, from its own model call.
    let (_, now) = s.get("/v1/rooms/r/sessions/c1").await;
    assert_eq!(now["title"], DEFAULT_TITLE, "{now}");
    go.close("c1").await;
}

#[tokio::test]
async fn codex_acp_leaves_nothing_when_the_server_is_killed() {
    if !present() {
        return;
    }
    nothing_left_after_the_server_is_killed(&codex_acp().await).await;
}

/// A model picked from the agent's own choices is the one the next turn runs on.
#[tokio::test]
async fn codex_acp_runs_the_next_turn_on_the_model_switched_to() {
    if !present() {
        return;
    }
    let agent = codex_acp().await;
    let s = agent.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let session = agent.start(&s, "m1").await;
    let options = session["configOptions"].as_array().cloned().unwrap_or_default();
    let model = options.iter().find(|o| o["category"] == "model").cloned().unwrap_or_else(|| panic!("{session}"));
    assert_eq!(model["current"], "mock-model", "{model}");
    let turn = s.turn("r", "m1", "say hello").await;
    let events = turn_events(&mut ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    assert_eq!(agent.mock.model_calls().last().unwrap().model(), Some("mock-model"));
    // codex's warning for a model it has no metadata for is a notice (Ensemble takes codex-acp's
    // `notice` updates), not part of the reply.
    let notice = events.iter().find(|e| e["type"] == "notice").unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(notice["payload"]["level"], "warning", "{notice}");
    assert!(notice["payload"]["message"].as_str().is_some_and(|m| m.contains("mock-model")), "{notice}");
    assert_eq!(said(&events, &turn), "Hello from the mock model.", "{events:#?}");

    let other = model["choices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["value"].as_str())
        .find(|v| *v != "mock-model")
        .unwrap_or_else(|| panic!("one model only: {model}"))
        .to_owned();
    let id = model["id"].as_str().unwrap();
    let (status, body) = s.patch("/v1/rooms/r/sessions/m1/config", json!({"options": {id: other}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let now = body["configOptions"].as_array().unwrap().iter().find(|o| o["id"] == id).cloned().unwrap();
    assert_eq!(now["current"], other.as_str(), "{now}");
    let turn = s.turn("r", "m1", "again").await;
    let events = turn_events(&mut ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    let sent = agent.mock.model_calls().last().unwrap().model().map(str::to_owned);
    assert_eq!(sent.as_deref(), Some(other.as_str()), "the next turn runs on the picked model");
    go_close(&s, &agent, "m1").await;
}

/// Cancel while a permission is pending: the request is answered `cancelled`, the turn ends
/// canceled and the command never runs.
#[tokio::test]
async fn codex_acp_cancel_answers_a_pending_permission() {
    if !present() {
        return;
    }
    let agent = codex_acp().await;
    let s = agent.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    agent.start(&s, "p1").await;
    set_mode(&s, &mut ws, "p1", "workspace-write").await;
    let out = agent.work.path().join("mock_shell_out.txt");
    // The mock's keyword for a call that leaves the sandbox.
    let turn = s.turn("r", "p1", "SHELL ESCALATE please").await;
    let t = turn.clone();
    let asked = until(&mut ws, move |e| e["type"] == "interaction.requested" && e["turnId"] == t.as_str()).await;
    let request = &asked.last().unwrap()["payload"];
    assert_eq!(request["kind"], "commandApproval", "{request}");
    assert_eq!(request["command"], ensemble_mock_model::DEFAULT_SHELL_COMMAND, "{request}");
    let kinds: Vec<&str> =
        request["agentOptions"].as_array().unwrap().iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"], "{request}");
    let rid = request["requestId"].as_str().unwrap().to_owned();
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/p1/cancel").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let events = turn_events(&mut ws, &turn).await;
    assert_eq!(end_of(&events), "turn.canceled", "{events:#?}");
    assert_eq!(events.last().unwrap()["payload"]["reason"], "interrupted", "{events:#?}");
    let resolved = match events.iter().find(|e| e["type"] == "interaction.resolved") {
        Some(e) => e.clone(),
        None => until(&mut ws, |e| e["type"] == "interaction.resolved").await.pop().unwrap(),
    };
    assert_eq!(resolved["payload"]["requestId"], rid.as_str(), "{resolved}");
    assert!(!out.exists(), "the command did not run");
    // The session goes on.
    let next = s.turn("r", "p1", "hello again").await;
    let events = turn_events(&mut ws, &next).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    go_close(&s, &agent, "p1").await;
}

/// The agent killed (SIGKILL, then SIGTERM): the session is disconnected with why, nothing of the
/// agent is left (its codex app-server neither), and it resumes.
#[tokio::test]
async fn codex_acp_killed_leaves_a_resumable_session_and_no_process() {
    if !present() {
        return;
    }
    let agent = codex_acp().await;
    let s = agent.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    agent.start(&s, "d1").await;
    let turn = s.turn("r", "d1", "first").await;
    assert_eq!(end_of(&turn_events(&mut ws, &turn).await), "turn.completed");
    for signal in [9, 15] {
        kill_pid(agent_pid(&agent), signal);
        let lost =
            until(&mut ws, |e| e["type"] == "session.updated" && e["payload"]["reason"] == "provider_exited").await;
        let now = &lost.last().unwrap()["payload"]["session"];
        assert_eq!(now["status"], "disconnected", "signal {signal}: {now}");
        assert!(now["lastError"].as_str().is_some_and(|e| e.contains("codex-acp exited")), "{now}");
        assert_eq!(now["resumable"], true, "{now}");
        agent.none_left().await;
        let (status, body) = s.post_empty("/v1/rooms/r/sessions/d1/resume").await;
        assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
        let turn = s.turn("r", "d1", "after the loss").await;
        let events = turn_events(&mut ws, &turn).await;
        assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
        let sent = agent.mock.model_calls().last().unwrap().user_texts();
        assert!(sent.iter().any(|t| t == "first"), "codex-acp loaded the history: {sent:?}");
    }
    go_close(&s, &agent, "d1").await;
}

/// The server stopped (SIGTERM) leaves no process; started again, it loads the session
/// (`session/load`), whose replayed history is not published again, and the agent has it.
/// Then the server killed (SIGKILL) leaves no process either.
#[tokio::test]
async fn codex_acp_sessions_outlive_a_server_restart() {
    if !present() {
        return;
    }
    let agent = codex_acp().await;
    let data = tempfile::tempdir().unwrap();
    let providers = agent.providers();
    let mock = agent.mock.addr().to_string();
    let s = Server::start_in(data.path(), &["--providers", &providers, "--isolation-network", &mock]).await;
    agent.start(&s, "k1").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let turn = s.turn("r", "k1", "first").await;
    let events = turn_events(&mut ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    let head = events.last().unwrap()["seq"].as_u64().unwrap();
    s.stop().await;
    agent.none_left().await;

    let s = Server::start_in(data.path(), &["--providers", &providers, "--isolation-network", &mock]).await;
    let (_, k1) = s.get("/v1/rooms/r/sessions/k1").await;
    assert_eq!(k1["status"], "disconnected", "{k1}");
    assert_eq!(k1["resumable"], true, "{k1}");
    let mut ws = s.ws("r", Some(head)).await;
    ws.hello().await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/k1/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
    let turn = s.turn("r", "k1", "second").await;
    let events = turn_events(&mut ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    let replayed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("message.")) && e["turnId"] != turn.as_str())
        .collect();
    assert!(replayed.is_empty(), "the replayed history is not published again: {replayed:#?}");
    let sent = agent.mock.model_calls().last().unwrap().user_texts();
    assert!(sent.iter().any(|t| t == "first"), "codex-acp loaded the history: {sent:?}");
    s.kill9().await;
    agent.none_left().await;
}

async fn go_close(s: &Server, agent: &RealAgent, session: &str) {
    Scenarios { agent, server: s }.close(session).await;
}
