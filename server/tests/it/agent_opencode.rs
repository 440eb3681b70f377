//! opencode (`opencode-ai@1.18.33`, `opencode acp`) against the scripted OpenAI chat completions
//! API on 127.0.0.1.
//!
//! Its model comes from its own config (`$XDG_CONFIG_HOME/opencode/opencode.json`): a provider
//! `mock` of the bundled `@ai-sdk/openai-compatible` kind whose `baseURL` is the mock's, and
//! `"permission": {"bash": "ask", "edit": "ask"}` (its default is to allow everything). Kept off
//! the network: no models.dev fetch, no update check, no default plugins, no LSP download
//! (`OPENCODE_DISABLE_*`), and its config dir seeded with an empty `node_modules` and a
//! `package-lock.json` that lists `@opencode-ai/plugin`, else it runs `npm install` of that
//! package there at every start. It reports itself as `OpenCode`; it offers no session modes, only
//! config options (`mode`: build or plan; `model`). A rejected permission ends its turn at once
//! (it does not go back to the model).

use std::path::Path;

use ensemble_mock_model::Reply;
use serde_json::{Value, json};

use crate::common::*;
use crate::real_agents::*;

fn bin() -> std::path::PathBuf {
    installed("ENSEMBLE_OPENCODE_BIN", "opencode/node_modules/opencode-linux-x64/bin/opencode", "opencode-ai@1.18.33")
}

/// Whether this agent is installed here (its tests skip without it).
fn present() -> bool {
    have_agent("ENSEMBLE_OPENCODE_BIN", "opencode/node_modules/opencode-linux-x64/bin/opencode", "opencode-ai@1.18.33")
}

/// What opencode reads from its config dir, and what keeps it from installing its plugin package
/// there from the npm registry.
fn configure(home: &Path, base: &str) {
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(dir.join("node_modules")).unwrap();
    let plugin = json!({"@opencode-ai/plugin": "1.18.33"});
    let lock = json!({"name": "opencode-config", "lockfileVersion": 3, "requires": true,
        "packages": {"": {"dependencies": plugin}}});
    std::fs::write(dir.join("package-lock.json"), lock.to_string()).unwrap();
    std::fs::write(dir.join("package.json"), json!({"dependencies": plugin}).to_string()).unwrap();
    let model = |name: &str| json!({"name": name, "tool_call": true, "limit": {"context": 128000, "output": 4096}});
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
        "enabled_providers": ["mock"],
        "autoupdate": false,
        "share": "disabled",
        "snapshot": false,
        "lsp": false,
        "formatter": false,
        "permission": {"bash": "ask", "edit": "ask", "webfetch": "deny"},
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": base, "apiKey": MOCK_KEY},
            "models": {"mock-model": model("Mock Model"), "mock-model-2": model("Mock Model 2")},
        }},
    });
    std::fs::write(dir.join("opencode.json"), serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

async fn opencode() -> RealAgent {
    let agent = RealAgent::new("opencode", &bin(), &[], configure).await;
    let home = agent.home.path().to_owned();
    let at = |rel: &str| home.join(rel).display().to_string();
    let env = [
        ("XDG_CONFIG_HOME", at(".config")),
        ("XDG_DATA_HOME", at(".local/share")),
        ("XDG_CACHE_HOME", at(".cache")),
        ("XDG_STATE_HOME", at(".local/state")),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".to_owned()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".to_owned()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".to_owned()),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".to_owned()),
        ("OPENCODE_DISABLE_SHARE", "1".to_owned()),
        ("OPENCODE_DISABLE_CLAUDE_CODE", "1".to_owned()),
        ("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1".to_owned()),
        ("OPENCODE_DISABLE_PROJECT_CONFIG", "1".to_owned()),
    ];
    agent.with_env(&env)
}

/// The current value of the session's config option `id`.
fn option(session: &Value, id: &str) -> Value {
    let options = session["configOptions"].as_array().cloned().unwrap_or_default();
    options.iter().find(|o| o["id"] == id).map(|o| o["current"].clone()).unwrap_or_default()
}

/// Nothing was installed from the npm registry into its config dir, and only the chat
/// completions API was called.
fn stayed_offline(agent: &RealAgent) {
    let home = agent.home.path();
    let installed: Vec<_> = std::fs::read_dir(home.join(".config/opencode/node_modules"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(installed.is_empty(), "opencode installed {installed:?}");
    assert!(!home.join(".npm").exists(), "opencode ran npm");
    let paths: Vec<String> = agent.mock.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().all(|p| p == "/v1/chat/completions"), "{paths:?}");
}

#[tokio::test]
async fn opencode_runs_turns_asks_permission_cancels_switches_and_resumes() {
    if !present() {
        return;
    }
    let agent = opencode().await;
    let s = agent.server().await;
    let go = Scenarios { agent: &agent, server: &s };
    let session = agent.start(&s, "o1").await;
    let listed = go.listed("OpenCode").await;
    assert_eq!(listed["agent"]["loadSession"], true, "{listed}");
    assert_eq!(listed["agent"]["closeSession"], true, "{listed}");
    // No session modes: its modes are a config option, beside the model.
    assert_eq!(option(&session, "mode"), "build", "{session}");
    assert_eq!(option(&session, "model"), "mock/mock-model", "{session}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;

    go.streamed_text(&mut ws, "o1").await;
    let accepted = go.permission(&mut ws, "o1", "accept").await;
    let done = accepted.iter().find(|e| e["type"] == "call.completed").expect("the call completed");
    assert_eq!(done["payload"]["exitCode"], 0, "{done}");
    let declined = go.permission(&mut ws, "o1", "decline").await;
    // opencode ends the turn itself on a rejection, without going back to the model.
    assert_eq!(end_of(&declined), "turn.completed", "{declined:#?}");
    assert!(!Scenarios::declined_reply(&declined), "{declined:#?}");
    go.cancel(&mut ws, "o1").await;
    go.switch(&mut ws, "o1", json!({"options": {"mode": "plan"}}), |s: &Value| option(s, "mode") == "plan").await;
    go.switch(&mut ws, "o1", json!({"options": {"model": "mock/mock-model-2"}}), |s: &Value| {
        option(s, "model") == "mock/mock-model-2"
    })
    .await;
    go.switch(&mut ws, "o1", json!({"options": {"mode": "build"}}), |s: &Value| option(s, "mode") == "build").await;
    go.resume(&mut ws, "o1").await;
    // opencode loads a session with the model of its last message: Ensemble picked the switched
    // one again, and the turn after the resume used it.
    let (_, now) = s.get("/v1/rooms/r/sessions/o1").await;
    assert_eq!(option(&now, "model"), "mock/mock-model-2", "{now}");
    let last = agent.mock.requests().into_iter().rfind(|r| r.is_model_call()).unwrap();
    assert_eq!(last.body.as_ref().unwrap()["model"], "mock-model-2");
    go.close("o1").await;
    stayed_offline(&agent);
}

/// A command the agent's shell tool started and left running in the background (opencode starts
/// each in a session of its own, and it outlives the tool call) goes when the session closes.
#[tokio::test]
async fn opencode_leaves_no_background_command_behind_when_closed() {
    if !present() {
        return;
    }
    let agent = opencode().await;
    let s = agent.server().await;
    agent.start(&s, "bg").await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    agent.mock.push(Reply::shell("sleep 600 >/dev/null 2>&1 & echo started > mock_shell_out.txt"));
    let turn = s.turn("r", "bg", "SHELL in the background").await;
    let t = turn.clone();
    let asked = until(&mut ws, move |e| e["type"] == "interaction.requested" && e["turnId"] == t.as_str()).await;
    let id = asked.last().unwrap()["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, body) =
        s.post(&format!("/v1/rooms/r/sessions/bg/interactions/{id}"), json!({"decision": "accept"})).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let events = turn_events(&mut ws, &turn).await;
    assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    let sleeping = || {
        agent
            .processes()
            .into_iter()
            .filter(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\x00600")))
    };
    let left: Vec<i32> = sleeping().collect();
    assert_eq!(left.len(), 1, "the command runs on in the background");
    // Its shell exited and it was reparented: in the agent's box to the box's own init (a
    // process of the session's), never out of the session.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", left[0])).unwrap();
    let ppid: i32 = stat.rsplit(')').next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(agent.processes().contains(&ppid), "{stat}");
    let parent = std::fs::read(format!("/proc/{ppid}/cmdline")).unwrap();
    let argv0 = parent.split(|b| *b == 0).next().unwrap_or_default();
    assert!(argv0.ends_with(b"bwrap"), "reparented to the box's init: {}", String::from_utf8_lossy(&parent));
    Scenarios { agent: &agent, server: &s }.close("bg").await;
}

#[tokio::test]
async fn opencode_leaves_nothing_when_the_server_is_killed() {
    if !present() {
        return;
    }
    nothing_left_after_the_server_is_killed(&opencode().await).await;
}
