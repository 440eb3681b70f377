//! ACP agents as providers, against the deterministic test agent built on the
//! `agent-client-protocol` crate's agent side (`testsupport/acp-agent`): what the real agent
//! cannot be made to do on demand (crash, garbage, floods, a silent `initialize`, file requests
//! outside the cwd, `session/load`). Everything goes through Ensemble's REST API and room WebSocket.

use std::path::PathBuf;
use std::sync::OnceLock;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// The test agent's binary (built with the workspace; built here when a run left it out).
pub fn test_agent() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| workspace_bin("ensemble-acp-test-agent", "ensemble-acp-test-agent")).clone()
}

/// A providers file with one ACP provider `test-acp` running the test agent with `args`, and a
/// marker in its environment to find its processes by.
pub struct AcpSetup {
    pub dir: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub marker: String,
}

impl AcpSetup {
    pub fn new(args: &[&str], extra: &str) -> AcpSetup {
        let dir = tempfile::tempdir().expect("tempdir");
        // Inside the roots the harness gives every server (its dir and /var/tmp).
        let work = tempfile::Builder::new().prefix("ensemble-acp-work-").tempdir_in("/var/tmp").expect("work");
        let marker = format!("ensemble-acp-test-{}", std::process::id()) + &ensemble_core::clock::new_id();
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        let file = format!(
            "[[provider]]\nid = \"test-acp\"\nkind = \"acp\"\ncommand = {:?}\nargs = [{}]\nenv = {{ ACP_TEST_MARKER = {:?} }}\n{extra}\n",
            test_agent().display().to_string(),
            args.join(", "),
            marker
        );
        std::fs::write(dir.path().join("providers.toml"), file).expect("providers file");
        AcpSetup { dir, work, marker }
    }

    pub fn providers(&self) -> String {
        self.dir.path().join("providers.toml").display().to_string()
    }

    pub fn cwd(&self) -> &str {
        self.work.path().to_str().expect("utf-8")
    }

    pub async fn server(&self) -> Server {
        let providers = self.providers();
        Server::start(&["--providers", &providers]).await
    }

    /// Live agent processes of this setup.
    pub fn processes(&self) -> Vec<i32> {
        processes_with_env(&format!("ACP_TEST_MARKER={}", self.marker))
    }

    /// The agent processes themselves, not the box around each (bwrap and its init carry the
    /// agent's environment too).
    pub fn agents(&self) -> Vec<i32> {
        let agent = test_agent();
        self.processes()
            .into_iter()
            .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == agent))
            .collect()
    }

    pub async fn none_left(&self) {
        no_process_left(&format!("ACP_TEST_MARKER={}", self.marker)).await;
    }
}

/// The provider `id` as `GET /v1/providers` lists it. What the agent advertised is there once one
/// of its processes has started (a session's, or the background probe's).
pub async fn provider(s: &Server, id: &str) -> Value {
    let (_, body) = s.get("/v1/providers").await;
    body["data"].as_array().and_then(|d| d.iter().find(|p| p["id"] == id)).cloned().unwrap_or_default()
}

async fn get_session(s: &Server, id: &str) -> Value {
    let (status, body) = s.get(&format!("/v1/rooms/r/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub(crate) async fn start(s: &Server, a: &AcpSetup, id: &str) -> Value {
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": id, "provider": "test-acp", "cwd": a.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}\n{}", s.log());
    body
}

fn is_terminal(e: &Value) -> bool {
    matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled"))
}

/// The text of a turn's messages.
pub(crate) fn message_text(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "message.delta")
        .map(|e| e["payload"]["text"].as_str().unwrap_or(""))
        .collect()
}

/// Runs a turn and returns its events up to the terminal one.
pub(crate) async fn turn(s: &Server, ws: &mut Ws, session: &str, text: &str) -> Vec<Value> {
    s.turn("r", session, text).await;
    ws.until(is_terminal).await
}

#[tokio::test]
async fn a_turn_streams_text_tools_diffs_plans_and_usage() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let session = start(&s, &a, "a1").await;
    // The session's start ran `initialize`: what the agent advertised is listed now.
    let p = provider(&s, "test-acp").await;
    assert_eq!(p["available"], true, "{p}");
    assert_eq!(p["capabilities"]["interactive"], true, "{p}");
    assert_eq!(p["capabilities"]["sideConversations"], false, "{p}");
    assert_eq!(p["capabilities"]["resume"], false, "no session/load: {p}");
    assert_eq!(p["agent"]["protocolVersion"], 1, "{p}");
    assert_eq!(p["default"], false, "{p}");
    let (_, list) = s.get("/v1/providers").await;
    let defaults: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["default"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(defaults, ["scripted"], "exactly the server's default provider is marked");
    assert_eq!(session["status"], "ready", "{session}");
    assert_eq!(session["modes"]["current"], "default", "{session}");
    assert_eq!(session["configOptions"][0]["id"], "model", "{session}");
    assert_eq!(session["resumable"], false, "{session}");
    assert!(session["resumeUnsupportedReason"].as_str().is_some_and(|r| r.contains("session/load")), "{session}");
    let cmds = ws.until_type("commands.updated").await;
    assert_eq!(cmds.last().unwrap()["payload"]["commands"][0]["name"], "hello");

    let events = turn(&s, &mut ws, "a1", "hi there").await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    assert_eq!(message_text(&events), "echo: hi there [mode=default model=small]");
    let done = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert_eq!(done["payload"]["text"], "echo: hi there [mode=default model=small]");
    assert!(events.iter().any(|e| e["type"] == "reasoning.completed"), "{:?}", types(&events));

    let events = turn(&s, &mut ws, "a1", "tool").await;
    let t = types(&events);
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{t:?}");
    let started = events.iter().find(|e| e["type"] == "call.started").unwrap();
    assert_eq!(started["payload"]["kind"], "command");
    assert_eq!(started["payload"]["command"], "echo hi");
    let output =
        events.iter().find(|e| e["type"] == "call.updated" && e["payload"]["outputDelta"].is_string()).unwrap();
    assert_eq!(output["payload"]["outputDelta"], "hi\n");
    let completed: Vec<&Value> = events.iter().filter(|e| e["type"] == "call.completed").collect();
    assert_eq!(completed[0]["payload"]["exitCode"], 0);
    assert_eq!(completed[0]["payload"]["output"], "hi\n");
    let diff = completed[1]["payload"]["changes"][0]["diff"].as_str().unwrap();
    assert!(diff.contains("-a\n+b\n"), "{diff}");
    let plan = events.iter().find(|e| e["type"] == "plan.updated").unwrap();
    assert_eq!(plan["payload"]["steps"][1]["status"], "inProgress");
    let usage = events.iter().find(|e| e["type"] == "usage.updated").unwrap();
    assert_eq!(
        (usage["payload"]["totalTokens"].as_i64(), usage["payload"]["contextWindow"].as_i64()),
        (Some(10), Some(100))
    );
    // The agent's cost, with its currency.
    assert_eq!(usage["payload"]["cost"], json!({"amount": 0.0125, "currency": "USD"}), "{usage}");
    assert_gap_free(&events);

    let events = turn(&s, &mut ws, "a1", "title A better title").await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
    assert_eq!(get_session(&s, "a1").await["title"], "A better title");
    let (status, _) = s.delete("/v1/rooms/r/sessions/a1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    a.none_left().await;
}

#[tokio::test]
async fn permissions_are_answered_from_rest_with_the_agents_options() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "p1").await;
    let path = |rid: &str| format!("/v1/rooms/r/sessions/p1/interactions/{rid}");

    // Reject, naming the agent's option.
    s.turn("r", "p1", "permission").await;
    let asked = ws.until_type("interaction.requested").await.pop().unwrap();
    let p = &asked["payload"];
    assert_eq!(p["kind"], "commandApproval", "{p}");
    assert_eq!(p["command"], "rm -rf build", "{p}");
    assert_eq!(p["options"], json!(["accept", "acceptForSession", "decline", "cancel"]), "{p}");
    let ids: Vec<&str> =
        p["agentOptions"].as_array().unwrap().iter().map(|o| o["optionId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["allow-once", "allow-always", "reject-once", "reject-always"]);
    assert_eq!(p["agentOptions"][3]["decision"], "decline");
    let rid = p["requestId"].as_str().unwrap().to_owned();
    // An option must stand for the decision sent with it.
    let (status, body) = s.post(&path(&rid), json!({"decision": "accept", "optionId": "reject-always"})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_decision")), "{body}");
    let (status, body) = s.post(&path(&rid), json!({"decision": "decline", "optionId": "nope"})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_decision")), "{body}");
    let (status, body) = s.post(&path(&rid), json!({"decision": "decline", "optionId": "reject-always"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let events = ws.until(is_terminal).await;
    assert_eq!(message_text(&events), "permission: reject-always");
    let failed = events.iter().find(|e| e["type"] == "call.completed").unwrap();
    assert_eq!(failed["payload"]["status"], "failed");

    // Allow, by decision only: the agent's first option of that kind.
    s.turn("r", "p1", "permission").await;
    let asked = ws.until_type("interaction.requested").await.pop().unwrap();
    let rid = asked["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, body) = s.post(&path(&rid), json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
    assert_eq!(message_text(&events), "permission: allow-once");
    let (status, _) = s.post(&path(&rid), json!({"decision": "accept"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "answered once");
}

#[tokio::test]
async fn cancel_answers_a_pending_permission_cancelled() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "c1").await;
    s.turn("r", "c1", "permission").await;
    let asked = ws.until_type("interaction.requested").await.pop().unwrap();
    let rid = asked["payload"]["requestId"].as_str().unwrap().to_owned();
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/c1/cancel").await;
    assert!(status.is_success(), "{status} {body}");
    let events = ws.until(is_terminal).await;
    let end = events.last().unwrap();
    assert_eq!(end["type"], "turn.canceled", "{:?}", types(&events));
    assert_eq!(end["payload"]["reason"], "interrupted");
    let resolved = ws.until_type("interaction.resolved").await.pop().unwrap();
    assert_eq!(
        (resolved["payload"]["requestId"].as_str(), resolved["payload"]["decision"].as_str()),
        (Some(rid.as_str()), Some("cancel"))
    );

    // A turn that waits for nothing but the cancel.
    s.turn("r", "c1", "slow").await;
    ws.until_type("message.delta").await;
    let (status, _) = s.post_empty("/v1/rooms/r/sessions/c1/cancel").await;
    assert!(status.is_success());
    let events = ws.until(is_terminal).await;
    assert_eq!(events.last().unwrap()["type"], "turn.canceled");
    assert!(
        events.iter().any(|e| e["type"] == "message.completed"),
        "the open message is closed: {:?}",
        types(&events)
    );
}

#[tokio::test]
async fn modes_and_options_change_for_the_next_turn() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "m1").await;
    let cfg = "/v1/rooms/r/sessions/m1/config";
    let req = |body: Value| {
        let url = s.url(cfg);
        let http = s.http().clone();
        async move {
            let r = http.patch(url).json(&body).send().await.expect("patch");
            let status = r.status();
            (status, r.json::<Value>().await.unwrap_or_default())
        }
    };
    let (status, body) = req(json!({"mode": "plan", "options": {"model": "large"}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["modes"]["current"], "plan", "{body}");
    assert_eq!(body["configOptions"][0]["current"], "large", "{body}");
    ws.until(|e| e["type"] == "session.updated").await;
    let events = turn(&s, &mut ws, "m1", "go").await;
    assert_eq!(message_text(&events), "echo: go [mode=plan model=large]");
    let (status, body) = req(json!({"options": {"model": "huge"}})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = req(json!({"mode": "yolo"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // While a turn runs the switch waits for the next one: refused.
    s.turn("r", "m1", "slow").await;
    ws.until_type("message.delta").await;
    let (status, body) = req(json!({"mode": "default"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    s.post_empty("/v1/rooms/r/sessions/m1/cancel").await;
    ws.until(is_terminal).await;
}

#[tokio::test]
async fn stop_reasons_end_turns_with_stable_codes() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "s1").await;
    for (text, code) in
        [("refuse", "refusal"), ("max-tokens", "max_tokens"), ("max-turn-requests", "max_turn_requests")]
    {
        let events = turn(&s, &mut ws, "s1", text).await;
        let end = events.last().unwrap();
        assert_eq!((end["type"].as_str(), end["payload"]["error"]["code"].as_str()), (Some("turn.failed"), Some(code)));
    }
    let events = turn(&s, &mut ws, "s1", "unknown-request").await;
    assert_eq!(message_text(&events), "unknown: -32601", "requests Ensemble does not serve get an error at once");
    // No fork in the protocol's stable part, no goals: both refused up front.
    let (status, body) = s.post("/v1/rooms/r/sessions/s1/sides", json!({"requestId": "side-1"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("side_unsupported")),
        "{body}"
    );
    let r = s
        .http()
        .put(s.url("/v1/rooms/r/sessions/s1/goal"))
        .json(&json!({"objective": "ship it", "clientSubmitId": "g-1"}))
        .send()
        .await
        .unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("goals_unsupported")),
        "{body}"
    );
}

#[tokio::test]
async fn file_requests_stay_inside_the_sessions_directory() {
    let a = AcpSetup::new(&[], "");
    std::fs::write(a.work.path().join("a.txt"), "inside\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "nope").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), a.work.path().join("link")).unwrap();
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "f1").await;
    let cwd = a.cwd().to_owned();
    let events = turn(&s, &mut ws, "f1", &format!("read {cwd}/a.txt")).await;
    assert_eq!(message_text(&events), "read ok: inside\n");
    for bad in [outside.path().join("secret").display().to_string(), format!("{cwd}/link"), format!("{cwd}/../x")] {
        let events = turn(&s, &mut ws, "f1", &format!("read {bad}")).await;
        let text = message_text(&events);
        assert!(text.starts_with("read error: -32602"), "{bad}: {text}");
    }
    let events = turn(&s, &mut ws, "f1", &format!("write {cwd}/new.txt fresh text")).await;
    assert_eq!(message_text(&events), "write ok");
    assert_eq!(std::fs::read_to_string(a.work.path().join("new.txt")).unwrap(), "fresh text");
    let target = outside.path().join("evil");
    let events = turn(&s, &mut ws, "f1", &format!("write {} x", target.display())).await;
    assert!(message_text(&events).starts_with("write error: -32602"));
    assert!(!target.exists());
}

#[tokio::test]
async fn garbage_and_floods_do_not_derail_the_session() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "g1").await;
    let events = turn(&s, &mut ws, "g1", "garbage").await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
    assert_eq!(message_text(&events), "after garbage");
    let events = turn(&s, &mut ws, "g1", "flood 20000").await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
    assert_eq!(message_text(&events).len(), 20000, "every chunk arrives once");
    assert_gap_free(&events);
    let (status, _) = s.get("/v1/rooms/r/sessions/g1").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn an_agent_that_crashes_mid_turn_fails_the_turn_and_leaves_nothing() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "x1").await;
    let events = turn(&s, &mut ws, "x1", "crash").await;
    let end = events.last().unwrap();
    assert_eq!(end["type"], "turn.failed", "{:?}", types(&events));
    assert!(
        events.iter().any(|e| e["type"] == "message.completed"),
        "the open message is closed: {:?}",
        types(&events)
    );
    let lost = ws.until(|e| e["type"] == "session.updated" && e["payload"]["reason"] == "provider_exited").await;
    let now = &lost.last().unwrap()["payload"]["session"];
    assert!(matches!(now["status"].as_str(), Some("disconnected" | "failed")), "{now}");
    assert!(now["lastError"].as_str().is_some_and(|e| e.contains("exit status 3")), "{now}");
    a.none_left().await;
}

#[tokio::test]
async fn an_agent_that_never_answers_initialize_times_out() {
    let a = AcpSetup::new(&["--hang-initialize"], "start_timeout_secs = 1");
    let providers = a.providers();
    let s = Server::start(&["--providers", &providers]).await;
    // Until its first start is over, the provider is offered; a start then waits for the deadline.
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "h1", "provider": "test-acp", "cwd": a.cwd()})).await;
    assert!(status.is_client_error() || status.is_server_error(), "{status} {body}");
    assert!(matches!(body["error"]["code"].as_str(), Some("provider_timeout" | "provider_unavailable")), "{body}");
    a.none_left().await;
    // The failed start marked the provider unavailable before it answered.
    let p = provider(&s, "test-acp").await;
    assert_eq!(p["available"], false, "{p}");
    assert!(p["unavailableReason"].as_str().is_some_and(|r| r.contains("initialize")), "{p}");
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "h2", "provider": "test-acp", "cwd": a.cwd()})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("initialize")), "{body}");
    a.none_left().await;
}

#[tokio::test]
async fn no_agent_process_outlives_close_release_or_the_server() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    a.none_left().await; // the availability probe is gone
    start(&s, &a, "k1").await;
    assert!(!a.processes().is_empty(), "the session's agent runs");
    let (status, _) = s.delete("/v1/rooms/r/sessions/k1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    a.none_left().await;
    start(&s, &a, "k2").await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/k2/release").await;
    assert!(status.is_success(), "{status} {body}");
    a.none_left().await;
    start(&s, &a, "k3").await;
    assert!(!a.processes().is_empty(), "the session's agent runs");
    s.stop().await;
    a.none_left().await;
    let s = a.server().await;
    start(&s, &a, "k4").await;
    assert!(!a.processes().is_empty(), "the session's agent runs");
    s.kill9().await;
    a.none_left().await;
}

#[tokio::test]
async fn load_session_resumes_after_a_restart_without_republishing_history() {
    let state = tempfile::tempdir().unwrap();
    // The agent's state dir is its own: bound into its box.
    let own = format!("isolation = {{ home = [{:?}] }}", state.path().to_str().unwrap());
    let a = AcpSetup::new(&["--load", "--state-dir", state.path().to_str().unwrap()], &own);
    let data = tempfile::tempdir().unwrap();
    let providers = a.providers();
    let args = ["--providers", providers.as_str()];
    let s = Server::start_in(data.path(), &args).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    let session = start(&s, &a, "l1").await;
    assert_eq!(session["resumable"], true, "{session}");
    let p = provider(&s, "test-acp").await;
    assert_eq!(p["capabilities"]["resume"], true, "{p}");
    let first = turn(&s, &mut ws, "l1", "first words").await;
    assert_eq!(message_text(&first), "echo: first words [mode=default model=small]");
    let head = first.last().unwrap()["seq"].as_u64().unwrap();
    s.stop().await;

    let s = Server::start_in(data.path(), &args).await;
    assert_eq!(get_session(&s, "l1").await["status"], "disconnected");
    let mut ws = s.ws("r", Some(head)).await;
    ws.hello().await;
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/l1/resume").await;
    assert!(status.is_success(), "{status} {body}\n{}", s.log());
    let events = turn(&s, &mut ws, "l1", "second").await;
    assert_eq!(message_text(&events), "echo: second [mode=default model=small]", "history is not published again");
    assert!(
        !events.iter().any(|e| e["type"] == "message.completed"
            && e["payload"]["text"].as_str().is_some_and(|t| t.contains("first words"))),
        "{events:?}"
    );
    assert!(!a.processes().is_empty(), "the session's agent runs");
}

#[tokio::test]
async fn without_load_a_restarted_session_says_why_it_cannot_resume() {
    let a = AcpSetup::new(&[], "");
    let data = tempfile::tempdir().unwrap();
    let providers = a.providers();
    let args = ["--providers", providers.as_str()];
    let s = Server::start_in(data.path(), &args).await;
    start(&s, &a, "n1").await;
    s.stop().await;
    let s = Server::start_in(data.path(), &args).await;
    let session = get_session(&s, "n1").await;
    assert_eq!(session["resumable"], false, "{session}");
    assert!(session["resumeUnsupportedReason"].is_string(), "{session}");
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/n1/resume").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "not_resumable", "{body}");
}

#[tokio::test]
async fn a_bad_providers_file_stops_the_server_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("providers.toml");
    std::fs::write(&file, "[[provider]]\nid = \"x\"\nkind = \"lsp\"\ncommand = \"/bin/true\"\n").unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .arg("--providers")
        .arg(&file)
        .output();
    let out = tokio::time::timeout(WAIT, out).await.expect("exits").expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}:3: unknown provider kind `lsp`", file.display())), "{stderr}");
    // The default file in the data dir is read too, and an id may not shadow a built-in.
    let data = dir.path().join("data2");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("providers.toml"),
        "[[provider]]\nid = \"scripted\"\nkind = \"acp\"\ncommand = \"/bin/true\"\n",
    )
    .unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .output();
    let out = tokio::time::timeout(WAIT, out).await.expect("exits").expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("providers.toml:2:") && stderr.contains("`scripted`"), "{stderr}");
}

#[tokio::test]
async fn a_turn_past_its_timeout_is_canceled_and_fails() {
    let a = AcpSetup::new(&[], "turn_timeout_secs = 1");
    let s = a.server().await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, &a, "t1").await;
    let events = turn(&s, &mut ws, "t1", "slow").await;
    let end = events.last().unwrap();
    assert_eq!(
        (end["type"].as_str(), end["payload"]["error"]["code"].as_str()),
        (Some("turn.failed"), Some("provider_timeout")),
        "{end}"
    );
    assert!(
        events.iter().any(|e| e["type"] == "message.completed"),
        "the open message is closed: {:?}",
        types(&events)
    );
    // The agent got session/cancel and the session takes the next turn.
    let events = turn(&s, &mut ws, "t1", "after").await;
    assert_eq!(message_text(&events), "echo: after [mode=default model=small]");
}

#[tokio::test]
async fn a_missing_agent_binary_is_listed_unavailable_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("providers.toml");
    std::fs::write(&file, "[[provider]]\nid = \"ghost\"\nkind = \"acp\"\ncommand = \"/nonexistent/ghost-acp\"\n")
        .unwrap();
    let providers = file.display().to_string();
    let s = Server::start(&["--providers", &providers]).await;
    // Refused either way: by the background probe's verdict, or by the start's own failed spawn,
    // which records the reason before it answers.
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "g", "provider": "ghost"})).await;
    assert!(status.is_client_error() || status.is_server_error(), "{status} {body}");
    assert_eq!(body["error"]["code"], "provider_unavailable", "{body}");
    let p = provider(&s, "ghost").await;
    assert_eq!(p["available"], false, "{p}");
    assert!(
        p["unavailableReason"].as_str().is_some_and(|r| r.contains("not found")
            && r.contains("/nonexistent/ghost-acp")
            && r.contains("install it")),
        "{p}"
    );
    let (status, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "g2", "provider": "ghost"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("provider_unavailable")),
        "{body}"
    );
}

#[tokio::test]
async fn an_agents_own_sessions_are_listed_and_one_is_continued_in_a_room() {
    let state = tempfile::tempdir().unwrap();
    let own = format!("isolation = {{ home = [{:?}] }}", state.path().to_str().unwrap());
    let a = AcpSetup::new(&["--load", "--list", "--state-dir", state.path().to_str().unwrap()], &own);
    let s = a.server().await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "first", "provider": "test-acp", "cwd": a.cwd()})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "first", "remember banana").await;
    ws.until_type("turn.completed").await;
    let agent_id = get_session(&s, "first").await["providerSessionId"].as_str().unwrap().to_owned();
    s.delete("/v1/rooms/r/sessions/first").await;

    // The agent lists what it keeps for that directory (and nothing for another one).
    let cwd = a.cwd().to_owned();
    let (status, list) = s.get(&format!("/v1/providers/test-acp/sessions?cwd={cwd}")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let found: Vec<&Value> =
        list["data"].as_array().unwrap().iter().filter(|x| x["providerSessionId"] == agent_id.as_str()).collect();
    assert_eq!(found.len(), 1, "{list}");
    assert_eq!(found[0]["title"], "remember banana");
    let (status, other) = s.get(&format!("/v1/providers/test-acp/sessions?cwd={}", s.dir.display())).await;
    assert_eq!(status, StatusCode::OK, "{other}");
    assert!(other["data"].as_array().unwrap().is_empty(), "{other}");
    // Continued in another room: the agent loads it, history and all.
    let (status, body) = s
        .post(
            "/v1/rooms/r2/sessions",
            json!({"sessionId": "again", "provider": "test-acp", "cwd": a.cwd(), "providerSessionId": agent_id}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["providerSessionId"], agent_id.as_str());
    let mut ws2 = s.ws("r2", None).await;
    ws2.hello().await;
    s.turn("r2", "again", "history").await;
    let events = ws2.until_type("turn.completed").await;
    let said: String = events
        .iter()
        .filter(|e| e["type"] == "message.completed")
        .map(|e| e["payload"]["text"].as_str().unwrap_or_default())
        .collect();
    assert!(said.contains("history: remember banana"), "{said}");
    s.delete("/v1/rooms/r2/sessions/again").await;
    // Refused clearly: an unknown id, an unknown provider, a cwd outside the roots, an agent that
    // does not list.
    let (status, body) = s
        .post("/v1/rooms/r2/sessions", json!({"provider": "test-acp", "cwd": a.cwd(), "providerSessionId": "nope"}))
        .await;
    assert!(status.is_client_error() || status.is_server_error(), "{status} {body}");
    assert!(body["error"]["code"].is_string(), "{body}");
    let (status, body) = s.get("/v1/providers/nope/sessions").await;
    assert_eq!(error_code(status, &body, StatusCode::NOT_FOUND), "unknown_provider");
    let (status, body) = s.get("/v1/providers/test-acp/sessions?cwd=/").await;
    assert_eq!(error_code(status, &body, StatusCode::BAD_REQUEST), "cwd_outside_workspace");
    let (status, body) = s.get("/v1/providers/scripted/sessions").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    a.none_left().await;
    let plain = AcpSetup::new(&[], "");
    let s = plain.server().await;
    let (status, body) = s.get(&format!("/v1/providers/test-acp/sessions?cwd={}", plain.cwd())).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("sessionCapabilities.list"), "{body}");
    plain.none_left().await;
}

#[tokio::test]
async fn an_elicitation_is_a_question_answered_from_rest_with_typed_values() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "e", "provider": "test-acp", "cwd": a.cwd()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    for (answers, decision, expect) in [
        (
            json!({"color": "blue", "sure": "yes"}),
            "accept",
            r#"elicited: {"action":"accept","content":{"color":"blue","sure":true}}"#,
        ),
        (json!({}), "decline", r#"elicited: {"action":"decline"}"#),
    ] {
        let turn = s.turn("r", "e", "elicit").await;
        let asked = ws.until_type("interaction.requested").await.last().cloned().unwrap();
        let p = &asked["payload"];
        assert_eq!((p["kind"].as_str(), p["title"].as_str()), (Some("userInput"), Some("Pick a color")), "{asked}");
        let color = p["questions"].as_array().unwrap().iter().find(|q| q["id"] == "color").unwrap();
        assert_eq!(color["options"], json!([{"label": "red"}, {"label": "blue"}]), "{color}");
        let path = format!("/v1/rooms/r/sessions/e/interactions/{}", p["requestId"].as_str().unwrap());
        if decision == "accept" {
            // An answer that does not fit is refused, and the question stays to be answered.
            let (status, body) = s.post(&path, json!({"decision": "accept", "answers": {"color": "green"}})).await;
            assert!(status.is_client_error(), "{body}");
            assert!(body["error"]["message"].as_str().unwrap().contains("green"), "{body}");
        }
        let (status, body) = s.post(&path, json!({"decision": decision, "answers": answers})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let t = turn.clone();
        let events = ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == t.as_str()).await;
        let said: String = events
            .iter()
            .filter(|e| e["type"] == "message.completed")
            .map(|e| e["payload"]["text"].as_str().unwrap_or_default())
            .collect();
        assert!(said.contains(expect), "{said}");
    }
}

#[tokio::test]
async fn an_agents_terminal_runs_in_the_session_streams_as_its_call_and_dies_with_it() {
    let a = AcpSetup::new(&[], "");
    let s = a.server().await;
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "t", "provider": "test-acp", "cwd": a.cwd()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // Run where the session works, with its output as the call's.
    let turn = s.turn("r", "t", "terminal pwd; echo two; exit 4").await;
    let t = turn.clone();
    let events = ws.until(move |e| e["type"] == "turn.completed" && e["turnId"] == t.as_str()).await;
    let said: String = events
        .iter()
        .filter(|e| e["type"] == "message.completed")
        .map(|e| e["payload"]["text"].as_str().unwrap_or_default())
        .collect();
    let real = std::path::Path::new(a.cwd()).canonicalize().unwrap();
    assert!(said.contains("terminal exit Some(4)") && said.contains("two"), "{said}");
    assert!(said.contains(a.cwd()) || said.contains(real.to_str().unwrap()), "ran in the session's cwd: {said}");
    let output: String = events
        .iter()
        .filter(|e| e["type"] == "call.updated" && e["payload"]["callId"] == "call-t")
        .filter_map(|e| e["payload"]["outputDelta"].as_str())
        .collect();
    assert!(output.contains("two"), "the terminal's output streamed as the call's: {events:#?}");
    // A terminal left running dies with the session.
    let marker = format!("ensemble-term-{}", std::process::id());
    s.turn("r", "t", &format!("terminal-leave exec sleep 1000 # {marker}")).await;
    ws.until(|e| e["type"] == "turn.completed").await;
    assert!(!a.processes().is_empty());
    s.delete("/v1/rooms/r/sessions/t").await;
    a.none_left().await;
}

#[tokio::test]
async fn an_agent_that_wants_a_login_is_said_so_and_its_turns_are_refused_at_once() {
    // Refused at session/new: the start is a 409 naming what the agent offers, and the provider
    // is listed as needing a login.
    let a = AcpSetup::new(&["--auth-required"], "");
    let s = a.server().await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions", json!({"sessionId": "x", "provider": "test-acp", "cwd": a.cwd()})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "auth_required");
    let listed = provider(&s, "test-acp").await;
    assert_eq!(listed["authState"], "auth_required", "{listed}");
    let message = listed["authMessage"].as_str().unwrap();
    assert!(message.contains("API key (Set TEST_AGENT_KEY)") && message.contains("providers file"), "{message}");
    a.none_left().await;

    // Refused at the prompt: the turn fails auth_required, the session says so, and its next turn
    // is refused at once, without asking the agent.
    let b = AcpSetup::new(&[], "");
    let s = b.server().await;
    s.post("/v1/rooms/r/sessions", json!({"sessionId": "y", "provider": "test-acp", "cwd": b.cwd()})).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "y", "unauthenticated").await;
    let events = ws.until(|e| e["type"] == "turn.failed").await;
    assert_eq!(events.last().unwrap()["payload"]["error"]["code"], "auth_required");
    ws.until(|e| e["type"] == "session.updated" && e["payload"]["session"]["authState"] == "auth_required").await;
    let (status, body) =
        s.post("/v1/rooms/r/sessions/y/turns", json!({"input": [{"type": "text", "text": "again"}]})).await;
    assert_eq!(error_code(status, &body, StatusCode::CONFLICT), "auth_required");
    assert_eq!(provider(&s, "test-acp").await["authState"], "auth_required");
}
