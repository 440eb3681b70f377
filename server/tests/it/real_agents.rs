//! The agents people run, for real, as ACP providers: each installed by `scripts/test` from npm
//! (pinned) and pointed at the scripted model server on 127.0.0.1 (`testsupport/mock-model`, which
//! speaks each one's model API), driven only through Ensemble's REST API and room WebSocket.
//!
//! Each agent's providers entry is the one `docs/providers.md` shows (found by its `id`), as a user
//! would write it; the test sets only its `command` (the installed binary) and adds to its `env`
//! what points the agent at the local model server and keeps it off the network. What every agent
//! is put through is here ([`Scenarios`]); each agent's file says what is its own.

#![allow(dead_code, reason = "each agent's file uses the scenarios it can run")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use ensemble_mock_model::{MockConfig, MockModel, TOOL_OUTPUT_REPLY_PREFIX, TOOL_REJECTED_REPLY};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// A turn of a real agent against the mock: seconds, not milliseconds (the agents start slowly).
pub const AGENT_WAIT: Duration = Duration::from_secs(90);

/// Where an agent is installed: `$VAR`, or `.tools/<rel>` as `scripts/test` installs it.
pub fn installed(var: &str, rel: &str, package: &str) -> PathBuf {
    let p = install_path(var, rel);
    assert!(p.exists(), "{package} is missing: run scripts/test (it installs it into .tools/), or set {var}");
    p
}

fn install_path(var: &str, rel: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools").join(rel),
    }
}

/// Whether the tests of this agent run here: skipped without it (a fresh checkout), failed where
/// `scripts/test` demands every program (`ensemble_test_engines::tier`).
pub fn have_agent(var: &str, rel: &str, package: &str) -> bool {
    let how = format!("scripts/test installs it into .tools/{rel}; or set {var}");
    tier::runs_with(package, install_path(var, rel).exists(), &how)
}

/// The `[[provider]]` entry with `id` that the README shows; `docs/providers.md` must show the
/// same one.
pub fn documented_entry(id: &str) -> toml::Table {
    let readme =
        entry_in("README.md", id).unwrap_or_else(|| panic!("README.md shows no [[provider]] with id = {id:?}"));
    if let Some(guide) = entry_in("docs/providers.md", id) {
        assert_eq!(guide, readme, "README.md and docs/providers.md show {id:?} differently");
    }
    readme
}

/// The `[[provider]]` entry with `id` from the fenced TOML blocks of `file` (from the repository's top).
fn entry_in(file: &str, id: &str) -> Option<toml::Table> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file)).unwrap();
    let mut blocks = Vec::new();
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```toml\n") {
        let body = &rest[start + 8..];
        let end = body.find("```").expect("a closed block");
        blocks.push(&body[..end]);
        rest = &body[end + 3..];
    }
    for block in blocks {
        let table: toml::Table =
            toml::from_str(block).unwrap_or_else(|e| panic!("{file}: a TOML block that does not parse: {e}"));
        let providers = table.get("provider").and_then(toml::Value::as_array).cloned().unwrap_or_default();
        for p in providers {
            if let toml::Value::Table(t) = p
                && t.get("id").and_then(toml::Value::as_str) == Some(id)
            {
                return Some(t);
            }
        }
    }
    None
}

/// One agent set up against its own mock model: its home (settings, sessions), a work dir, and
/// a providers file with its documented entry.
pub struct RealAgent {
    pub id: &'static str,
    pub mock: MockModel,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub dir: tempfile::TempDir,
    /// In the agent's environment: finds its processes (and theirs).
    pub marker: String,
}

impl RealAgent {
    /// `env` is added to the documented entry's (the same keys replaced); `prepare` writes what
    /// the agent reads from its home before it starts.
    pub async fn new(
        id: &'static str,
        command: &Path,
        env: &[(&str, String)],
        prepare: impl FnOnce(&Path, &str),
    ) -> Self {
        let mock = MockModel::start(MockConfig::default().api_key(MOCK_KEY)).await.expect("mock model");
        let home = tempfile::Builder::new().prefix(&format!("ensemble-{id}-home-")).tempdir_in("/var/tmp").unwrap();
        let work = tempfile::Builder::new().prefix(&format!("ensemble-{id}-work-")).tempdir_in("/var/tmp").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("ensemble-agent-{id}-{}", ensemble_core::clock::new_id());
        prepare(home.path(), &mock.base_url());
        let mut entry = documented_entry(id);
        entry.insert("command".into(), toml::Value::String(command.display().to_string()));
        let mut vars = entry.get("env").and_then(toml::Value::as_table).cloned().unwrap_or_default();
        vars.insert("HOME".into(), toml::Value::String(home.path().display().to_string()));
        vars.insert("ACP_TEST_MARKER".into(), toml::Value::String(marker.clone()));
        for (k, v) in env {
            vars.insert((*k).to_owned(), toml::Value::String(v.clone()));
        }
        entry.insert("env".into(), toml::Value::Table(vars));
        let mut file = toml::Table::new();
        file.insert("provider".into(), toml::Value::Array(vec![toml::Value::Table(entry)]));
        std::fs::write(dir.path().join("providers.toml"), toml::to_string(&file).unwrap()).unwrap();
        RealAgent { id, mock, home, work, dir, marker }
    }

    /// The same agent with `env` added to its entry (values known once the mock runs).
    pub fn with_env(self, env: &[(&str, String)]) -> Self {
        let path = self.dir.path().join("providers.toml");
        let mut file: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if let Some(toml::Value::Array(providers)) = file.get_mut("provider")
            && let Some(toml::Value::Table(entry)) = providers.first_mut()
            && let Some(toml::Value::Table(vars)) = entry.get_mut("env")
        {
            for (k, v) in env {
                vars.insert((*k).to_owned(), toml::Value::String(v.clone()));
            }
        }
        std::fs::write(&path, toml::to_string(&file).unwrap()).unwrap();
        self
    }

    pub fn providers(&self) -> String {
        self.dir.path().join("providers.toml").display().to_string()
    }

    pub fn cwd(&self) -> &str {
        self.work.path().to_str().unwrap()
    }

    /// A server running the agent in its box, with its mock model as the endpoint it may reach.
    pub async fn server(&self) -> Server {
        Server::start(&["--providers", &self.providers(), "--isolation-network", &self.mock.addr().to_string()]).await
    }

    pub fn processes(&self) -> Vec<i32> {
        processes_with_env(&format!("ACP_TEST_MARKER={}", self.marker))
    }

    pub async fn none_left(&self) {
        no_process_left(&format!("ACP_TEST_MARKER={}", self.marker)).await;
    }

    /// Starts session `id` of this agent in room `r`.
    pub async fn start(&self, s: &Server, id: &str) -> Value {
        let body = json!({"sessionId": id, "provider": self.id, "cwd": self.cwd()});
        let (status, body) = s.post_within("/v1/rooms/r/sessions", body, AGENT_WAIT).await;
        assert_eq!(status, StatusCode::CREATED, "{body}\n{}", s.log());
        body
    }
}

/// Reads events until `pred`, within [`AGENT_WAIT`].
pub async fn until(ws: &mut Ws, pred: impl FnMut(&Value) -> bool) -> Vec<Value> {
    tokio::time::timeout(AGENT_WAIT, ws.until(pred)).await.expect("the agent did not get there in time")
}

/// The events of turn `turn` through its end.
pub async fn turn_events(ws: &mut Ws, turn: &str) -> Vec<Value> {
    let t = turn.to_owned();
    until(ws, move |e| {
        e["turnId"] == t.as_str()
            && matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled"))
    })
    .await
}

/// The text of the messages of `turn` among `events`.
pub fn said(events: &[Value], turn: &str) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "message.completed" && e["turnId"] == turn)
        .filter_map(|e| e["payload"]["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn end_of(events: &[Value]) -> &str {
    events.last().and_then(|e| e["type"].as_str()).unwrap_or_default()
}

/// What every agent is put through.
pub struct Scenarios<'a> {
    pub agent: &'a RealAgent,
    pub server: &'a Server,
}

impl Scenarios<'_> {
    /// Listed available, under the name it gives itself (once one of its processes has started).
    pub async fn listed(&self, agent_name: &str) -> Value {
        let (_, providers) = self.server.get("/v1/providers").await;
        let p = providers["data"].as_array().unwrap().iter().find(|p| p["id"] == self.agent.id).cloned().unwrap();
        assert_eq!(p["available"], true, "{p}\n{}", self.server.log());
        assert_eq!(p["agent"]["name"], agent_name, "{p}");
        p
    }

    /// A turn whose reply streams in pieces.
    pub async fn streamed_text(&self, ws: &mut Ws, session: &str) {
        let turn = self.server.turn("r", session, "hello there").await;
        let events = turn_events(ws, &turn).await;
        assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
        assert!(said(&events, &turn).contains("Hello from the mock model."), "{events:#?}");
        let deltas = events.iter().filter(|e| e["type"] == "message.delta" && e["turnId"] == turn.as_str()).count();
        assert!(deltas >= 2, "streamed in pieces: {deltas} deltas");
    }

    /// The shell tool asks first: accepted, it runs and the agent says so; declined, it does not.
    pub async fn permission(&self, ws: &mut Ws, session: &str, decision: &str) -> Vec<Value> {
        let out = self.agent.work.path().join("mock_shell_out.txt");
        let _ = std::fs::remove_file(&out);
        let turn = self.server.turn("r", session, "SHELL please").await;
        let t = turn.clone();
        let asked = until(ws, move |e| e["type"] == "interaction.requested" && e["turnId"] == t.as_str()).await;
        let request = asked.last().unwrap()["payload"].clone();
        let id = request["requestId"].as_str().unwrap();
        let path = format!("/v1/rooms/r/sessions/{session}/interactions/{id}");
        let (status, body) = self.server.post(&path, json!({ "decision": decision })).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let events = turn_events(ws, &turn).await;
        let text = said(&events, &turn);
        if decision == "accept" {
            assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
            assert!(out.exists(), "the command ran");
            assert!(text.contains(TOOL_OUTPUT_REPLY_PREFIX), "{text}");
        } else {
            assert!(!out.exists(), "a declined command did not run");
            assert!(!text.contains(TOOL_OUTPUT_REPLY_PREFIX), "{text}");
        }
        events
    }

    /// The reply a model sends after a declined tool (agents that go back to the model).
    pub fn declined_reply(events: &[Value]) -> bool {
        events.iter().any(|e| e["payload"]["text"].as_str().is_some_and(|t| t.contains(TOOL_REJECTED_REPLY)))
    }

    /// Cancel mid-stream: the turn ends canceled, and the next turn runs.
    pub async fn cancel(&self, ws: &mut Ws, session: &str) {
        let turn = self.server.turn("r", session, "SLOW please").await;
        let t = turn.clone();
        until(ws, move |e| e["type"] == "message.delta" && e["turnId"] == t.as_str()).await;
        let (status, body) = self.server.post_empty(&format!("/v1/rooms/r/sessions/{session}/cancel")).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let events = turn_events(ws, &turn).await;
        assert_eq!(end_of(&events), "turn.canceled", "{events:#?}");
        let next = self.server.turn("r", session, "hello again").await;
        let events = turn_events(ws, &next).await;
        assert_eq!(end_of(&events), "turn.completed", "the session goes on: {events:#?}");
    }

    /// The session's modes or config options are listed, and one is switched.
    pub async fn switch(&self, ws: &mut Ws, session: &str, change: Value, check: impl Fn(&Value) -> bool) {
        let (status, body) = self.server.patch(&format!("/v1/rooms/r/sessions/{session}/config"), change.clone()).await;
        assert_eq!(status, StatusCode::OK, "{change}: {body}");
        assert!(check(&body), "{change}: {body}");
        until(ws, |e| e["type"] == "session.updated" && e["payload"]["reason"] == "config").await;
    }

    /// A config option other than the mode (the first with a choice to make) switched to another
    /// of its values; returns its id and the value.
    pub async fn switch_an_option(&self, ws: &mut Ws, session: &str) -> (String, String) {
        let (_, now) = self.server.get(&format!("/v1/rooms/r/sessions/{session}")).await;
        let options = now["configOptions"].as_array().cloned().unwrap_or_default();
        let (id, value) = options
            .iter()
            .filter(|o| o["id"] != "mode")
            .find_map(|o| {
                let current = o["current"].as_str()?;
                let other =
                    o["choices"].as_array()?.iter().filter_map(|c| c["value"].as_str()).find(|v| *v != current)?;
                Some((o["id"].as_str()?.to_owned(), other.to_owned()))
            })
            .unwrap_or_else(|| panic!("no config option with a choice: {now}"));
        let (i, v) = (id.clone(), value.clone());
        self.switch(ws, session, json!({"options": { id.clone(): value.clone() }}), move |s: &Value| {
            s["configOptions"]
                .as_array()
                .is_some_and(|o| o.iter().any(|o| o["id"] == i.as_str() && o["current"] == v.as_str()))
        })
        .await;
        (id, value)
    }

    /// Released, then resumed: the agent loads its session again and answers.
    pub async fn resume(&self, ws: &mut Ws, session: &str) {
        let (status, body) = self.server.post_empty(&format!("/v1/rooms/r/sessions/{session}/release")).await;
        assert!(status.is_success(), "{body}");
        self.agent.none_left().await;
        let path = format!("/v1/rooms/r/sessions/{session}/resume");
        let res = self.server.http().post(self.server.url(&path)).timeout(AGENT_WAIT).send().await.expect("POST");
        let status = res.status();
        let body: Value = res.json().await.unwrap_or_default();
        assert_eq!(status, StatusCode::OK, "{body}\n{}", self.server.log());
        assert_eq!(body["live"], true);
        let turn = self.server.turn("r", session, "after the resume").await;
        let events = turn_events(ws, &turn).await;
        assert_eq!(end_of(&events), "turn.completed", "{events:#?}");
    }

    /// Closed: no process of the agent is left.
    pub async fn close(&self, session: &str) {
        let (status, _) = self.server.delete(&format!("/v1/rooms/r/sessions/{session}")).await;
        assert!(status.is_success());
        self.agent.none_left().await;
    }
}

/// The server killed with a live session: its agent and everything it started go too.
pub async fn nothing_left_after_the_server_is_killed(agent: &RealAgent) {
    let s = agent.server().await;
    agent.start(&s, "killed").await;
    assert!(!agent.processes().is_empty(), "the agent runs");
    s.kill9().await;
    agent.none_left().await;
}
