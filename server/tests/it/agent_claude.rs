//! Claude Code, through `@agentclientprotocol/claude-agent-acp@0.101.0` (which runs the Claude
//! Code binary its SDK ships), against the scripted Anthropic Messages API on 127.0.0.1.
//!
//! Pointed there with `ANTHROPIC_BASE_URL`; kept off the network with
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`; no retries of a refused key
//! (`CLAUDE_CODE_MAX_RETRIES=0`), no prompt suggestions. Its permission mode is `default` (asks
//! before a command that changes anything) through its settings file, as a user would set it.
//! `IS_SANDBOX=1`: as root (these test machines), Claude Code refuses to start otherwise.

use std::path::Path;

use serde_json::Value;

use crate::common::*;
use crate::real_agents::*;

fn bin() -> std::path::PathBuf {
    installed(
        "ENSEMBLE_CLAUDE_ACP_BIN",
        "claude-acp/node_modules/.bin/claude-agent-acp",
        "@agentclientprotocol/claude-agent-acp@0.101.0",
    )
}

/// Whether this agent is installed here (its tests skip without it).
fn present() -> bool {
    have_agent(
        "ENSEMBLE_CLAUDE_ACP_BIN",
        "claude-acp/node_modules/.bin/claude-agent-acp",
        "@agentclientprotocol/claude-agent-acp@0.101.0",
    )
}

async fn claude() -> RealAgent {
    let agent = RealAgent::new("claude", &bin(), &[], |home: &Path, _base: &str| {
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(home.join(".claude/settings.json"), r#"{"permissions":{"defaultMode":"default"}}"#).unwrap();
    })
    .await;
    let base = agent.mock.base_url();
    let env = [
        ("ANTHROPIC_BASE_URL", base),
        ("ANTHROPIC_API_KEY", MOCK_KEY.to_owned()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".to_owned()),
        ("CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION", "false".to_owned()),
        ("IS_SANDBOX", "1".to_owned()),
    ];
    agent.with_env(&env)
}

#[tokio::test]
async fn claude_code_runs_turns_asks_permission_cancels_switches_and_resumes() {
    if !present() {
        return;
    }
    let agent = claude().await;
    let s = agent.server().await;
    let go = Scenarios { agent: &agent, server: &s };
    let session = agent.start(&s, "c1").await;
    // What the agent said of itself in its handshake (known once one of its processes started).
    let listed = go.listed("Claude Agent").await;
    assert_eq!(listed["agent"]["loadSession"], true, "{listed}");
    let modes: Vec<&str> =
        session["modes"]["available"].as_array().unwrap().iter().filter_map(|m| m["id"].as_str()).collect();
    assert!(modes.contains(&"plan") && modes.contains(&"default"), "{session}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    go.streamed_text(&mut ws, "c1").await;
    go.permission(&mut ws, "c1", "accept").await;
    let declined = go.permission(&mut ws, "c1", "decline").await;
    assert!(Scenarios::declined_reply(&declined), "the model was told: {declined:#?}");
    go.cancel(&mut ws, "c1").await;
    go.switch(&mut ws, "c1", serde_json::json!({"mode": "plan"}), |s: &Value| s["modes"]["current"] == "plan").await;
    go.switch(&mut ws, "c1", serde_json::json!({"mode": "default"}), |s: &Value| s["modes"]["current"] == "default")
        .await;
    // A config option too (its model, effort, …), taken by the next turn.
    go.switch_an_option(&mut ws, "c1").await;
    go.streamed_text(&mut ws, "c1").await;
    go.resume(&mut ws, "c1").await;
    // The agent's title for the session, and what the session cost.
    let (_, now) = s.get("/v1/rooms/r/sessions/c1").await;
    assert_eq!(now["title"], ensemble_mock_model::DEFAULT_TITLE, "{now}");
    go.close("c1").await;
}

#[tokio::test]
async fn claude_code_leaves_nothing_when_the_server_is_killed() {
    if !present() {
        return;
    }
    nothing_left_after_the_server_is_killed(&claude().await).await;
}
