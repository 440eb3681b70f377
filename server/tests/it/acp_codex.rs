//! ACP against a real agent: `@zed-industries/codex-acp@0.16.0` (installed by `scripts/test`),
//! whose embedded codex talks to the scripted model API on 127.0.0.1. Everything goes through
//! Ensemble's REST API and room WebSocket.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ensemble_mock_model::{CodexProvider, MockModel, Reply};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// Where codex-acp is: `$ENSEMBLE_CODEX_ACP_BIN`, or the npm install `scripts/test` makes.
fn codex_acp_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("ENSEMBLE_CODEX_ACP_BIN") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools/codex-acp/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp");
    assert!(
        p.exists(),
        "codex-acp is missing: run scripts/test (it installs @zed-industries/codex-acp@0.16.0 into \
         .tools/codex-acp), or set ENSEMBLE_CODEX_ACP_BIN"
    );
    p
}

/// The mock model, codex-acp's home and work dirs, and a providers file naming it `codex-acp`.
struct CodexAcp {
    mock: MockModel,
    // Kept for its lifetime: codex-acp's CODEX_HOME.
    _home: tempfile::TempDir,
    work: tempfile::TempDir,
    dir: tempfile::TempDir,
    marker: String,
}

impl CodexAcp {
    async fn new() -> CodexAcp {
        let mock = MockModel::start(ensemble_mock_model::MockConfig::default().api_key(MOCK_KEY)).await.expect("mock");
        // codex refuses a home under /tmp.
        let home = tempfile::Builder::new().prefix("ensemble-acp-home-").tempdir_in("/var/tmp").expect("home");
        let work = tempfile::Builder::new().prefix("ensemble-acp-work-").tempdir_in("/var/tmp").expect("work");
        let dir = tempfile::tempdir().expect("dir");
        let marker = format!("codex-acp-test-{}", ensemble_runtime::clock::new_id());
        let mut args: Vec<String> = CodexProvider::default().env_key("MOCK_API_KEY").args(&mock.base_url());
        // Commands run in codex's sandbox and ask before they leave it.
        for o in ["approval_policy=\"on-request\"", "sandbox_mode=\"read-only\""] {
            args.push("-c".into());
            args.push(o.into());
        }
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        let file = format!(
            "[[provider]]\nid = \"codex-acp\"\nkind = \"acp\"\ncommand = {:?}\nargs = [{}]\n\
             env = {{ MOCK_API_KEY = {MOCK_KEY:?}, CODEX_HOME = {:?}, HOME = {:?}, ACP_TEST_MARKER = {marker:?} }}\n",
            codex_acp_bin().display().to_string(),
            args.join(", "),
            home.path().display().to_string(),
            home.path().display().to_string(),
        );
        std::fs::write(dir.path().join("providers.toml"), file).expect("providers file");
        CodexAcp { mock, _home: home, work, dir, marker }
    }

    fn providers(&self) -> String {
        self.dir.path().join("providers.toml").display().to_string()
    }

    fn cwd(&self) -> &str {
        self.work.path().to_str().expect("utf-8")
    }

    fn processes(&self) -> Vec<i32> {
        processes_with_env(&format!("ACP_TEST_MARKER={}", self.marker))
    }

    async fn none_left(&self) {
        no_process_left(&format!("ACP_TEST_MARKER={}", self.marker)).await;
    }

    async fn server_in(&self, data: &Path) -> Server {
        let providers = self.providers();
        Server::start_in(data, &["--providers", &providers]).await
    }

    async fn start(&self, s: &Server, id: &str) -> Value {
        let (status, body) =
            s.post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": "codex-acp", "cwd": self.cwd()})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}\n{}", s.log());
        body
    }
}

fn is_terminal(e: &Value) -> bool {
    matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled"))
}

/// The turn's message text, without the warning codex-acp streams as message text when the
/// model (the mock's) has no metadata in codex's catalogue.
fn message_text(events: &[Value]) -> String {
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "message.delta")
        .map(|e| e["payload"]["text"].as_str().unwrap_or(""))
        .collect();
    const WARNING: &str = "cause issues.";
    match text.find(WARNING) {
        Some(at) if text.starts_with("Model metadata for") => text[at + WARNING.len()..].to_owned(),
        _ => text,
    }
}

#[tokio::test]
async fn a_streamed_turn_and_a_model_switch_for_the_next_turn() {
    let c = CodexAcp::new().await;
    let data = tempfile::tempdir().unwrap();
    let s = c.server_in(data.path()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let session = c.start(&s, "c1").await;
    assert_eq!(session["status"], "ready", "{session}");
    let p = crate::acp::provider(&s, "codex-acp").await;
    assert!(p["agent"]["name"].as_str().is_some_and(|n| n.to_lowercase().contains("codex")), "{p}");
    let options = session["configOptions"].as_array().cloned().unwrap_or_default();
    let model = options.iter().find(|o| o["category"] == "model").cloned().unwrap_or_else(|| panic!("{session}"));

    c.mock.push(Reply::text_chunks(["Hello", " from", " codex-acp"], Duration::from_millis(5)));
    s.turn("r", "c1", "say hello").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert_eq!(message_text(&events), "Hello from codex-acp");
    let done = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert!(done["payload"]["text"].as_str().unwrap().ends_with("Hello from codex-acp"), "{done}");
    assert_eq!(c.mock.responses_requests().last().unwrap().last_user_text(), "say hello");

    // Another model, from the agent's own choices, used from the next turn on.
    let other = model["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["value"].as_str().unwrap().to_owned())
        .find(|v| *v != model["current"])
        .unwrap_or_else(|| panic!("one model only: {model}"));
    let id = model["id"].as_str().unwrap();
    let r = s
        .http()
        .patch(s.url("/v1/rooms/r/sessions/c1/config"))
        .json(&json!({"options": {id: other}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.unwrap();
    let now = body["configOptions"].as_array().unwrap().iter().find(|o| o["id"] == id).unwrap().clone();
    assert_eq!(now["current"], other.as_str(), "{now}");
    c.mock.push(Reply::text("switched"));
    s.turn("r", "c1", "again").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    let sent = c.mock.responses_requests().last().unwrap().model().map(str::to_owned);
    assert_eq!(sent.as_deref(), Some(other.as_str()), "the next turn runs on the picked model");
    let (status, _) = s.delete("/v1/rooms/r/sessions/c1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    c.none_left().await;
}

#[tokio::test]
async fn permissions_are_allowed_and_rejected_from_rest_and_cancel_answers_them() {
    let c = CodexAcp::new().await;
    let data = tempfile::tempdir().unwrap();
    let s = c.server_in(data.path()).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    c.start(&s, "p1").await;
    let answer = |rid: &str, body: Value| {
        let path = format!("/v1/rooms/r/sessions/p1/interactions/{rid}");
        let s = &s;
        async move { s.post(&path, body).await }
    };

    // Allowed: the command runs outside the sandbox, then the model answers.
    c.mock.push(Reply::shell_escalated("touch allowed.txt", "to create a file"));
    c.mock.push(Reply::text("created"));
    s.turn("r", "p1", "make a file").await;
    let asked = ws.until_type("interaction.requested").await.pop().unwrap();
    let p = &asked["payload"];
    assert!(p["agentOptions"].as_array().is_some_and(|o| !o.is_empty()), "{p}");
    let allow = p["agentOptions"].as_array().unwrap().iter().find(|o| o["kind"] == "allow_once").unwrap().clone();
    let (status, body) =
        answer(p["requestId"].as_str().unwrap(), json!({"decision": "accept", "optionId": allow["optionId"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}\n{}", types(&events), s.log());
    assert!(c.work.path().join("allowed.txt").exists(), "the allowed command ran");
    assert_eq!(message_text(&events), "created");

    // Rejected: codex-acp ends the turn.
    c.mock.push(Reply::shell_escalated("touch rejected.txt", "to create another file"));
    c.mock.push(Reply::text("not created"));
    s.turn("r", "p1", "make another").await;
    let asked = ws.until_type("interaction.requested").await.pop().unwrap();
    let (status, body) = answer(asked["payload"]["requestId"].as_str().unwrap(), json!({"decision": "decline"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let events = ws.until(is_terminal).await;
    let end = events.last().unwrap();
    assert!(
        end["type"] == "turn.completed" || (end["type"] == "turn.canceled" && end["payload"]["reason"] == "declined"),
        "{end}"
    );
    assert!(!c.work.path().join("rejected.txt").exists(), "the rejected command did not run");

    // Cancel while the permission is pending: it is answered `cancelled`, the turn ends canceled.
    c.mock.clear_queue();
    c.mock.push(Reply::shell_escalated("touch never.txt", "again"));
    s.turn("r", "p1", "and another").await;
    let asked = ws.until_type("interaction.requested").await.pop().unwrap();
    let rid = asked["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/p1/cancel").await;
    assert!(status.is_success(), "{status} {body}");
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.canceled", "{:?}", types(&events));
    let resolved = ws.until_type("interaction.resolved").await.pop().unwrap();
    assert_eq!(resolved["payload"]["requestId"], rid.as_str());
    assert!(!c.work.path().join("never.txt").exists());
}

#[tokio::test]
async fn no_codex_acp_outlives_close_release_or_the_server_and_a_restart_resumes() {
    let c = CodexAcp::new().await;
    let data = tempfile::tempdir().unwrap();
    let s = c.server_in(data.path()).await;
    c.start(&s, "k1").await;
    assert!(!c.processes().is_empty());
    let (status, _) = s.delete("/v1/rooms/r/sessions/k1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    c.none_left().await;
    c.start(&s, "k2").await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/k2/release").await;
    assert!(status.is_success(), "{status} {body}");
    c.none_left().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    c.start(&s, "k3").await;
    c.mock.push(Reply::text("remember me"));
    s.turn("r", "k3", "first").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    let head = events.last().unwrap()["seq"].as_u64().unwrap();
    s.stop().await; // SIGTERM
    c.none_left().await;

    let s = c.server_in(data.path()).await;
    let (_, k3) = s.get("/v1/rooms/r/sessions/k3").await;
    assert_eq!(k3["status"], "disconnected", "{k3}");
    // codex-acp 0.16 offers session/load: the session comes back with its history.
    assert_eq!(k3["resumable"], true, "{k3}");
    let mut ws = s.ws("r", Some(head)).await;
    ws.hello().await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/k3/resume").await;
    assert!(status.is_success(), "{status} {body}\n{}", s.log());
    let p = crate::acp::provider(&s, "codex-acp").await;
    assert_eq!(p["agent"]["loadSession"], true, "{p}");
    c.mock.push(Reply::text("resumed"));
    s.turn("r", "k3", "second").await;
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    assert_eq!(message_text(&events), "resumed", "the replayed history is not published again");
    let req = c.mock.responses_requests();
    assert!(req.last().unwrap().user_texts().iter().any(|t| t == "first"), "codex-acp loaded the history");
    s.kill9().await;
    c.none_left().await;
}
