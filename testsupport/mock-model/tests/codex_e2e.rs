//! The real `codex app-server` against the in-process mock.
//!
//! Needs the codex binary: `$ENSEMBLE_CODEX_BIN`, or the npm install under `<repo>/.tools/codex`
//! (`npm install --prefix .tools/codex @openai/codex@0.169.0`, which `scripts/test` does). Without
//! it the test fails: a real part is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use ensemble_mock_model::{CodexProvider, Gate, MockConfig, MockModel, Outcome, Reply};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const STEP: Duration = Duration::from_secs(30);
const VENDOR: &str = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl";

fn codex_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ENSEMBLE_CODEX_BIN") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/codex").join(VENDOR).join("bin/codex");
    p.exists().then_some(p)
}

struct AppServer {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    /// Every notification and server request seen, in order.
    seen: Vec<Value>,
}

impl AppServer {
    async fn send(&mut self, msg: Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Read messages until `pred` holds for one; answer server requests with `decide` meanwhile.
    async fn until(&mut self, mut pred: impl FnMut(&Value) -> bool, decide: &dyn Fn(&Value) -> Value) -> Value {
        loop {
            let line = tokio::time::timeout(STEP, self.lines.next_line())
                .await
                .expect("codex app-server answered in time")
                .unwrap()
                .expect("codex app-server still running");
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg.get("method").is_some() {
                self.seen.push(msg.clone());
                if let Some(id) = msg.get("id").cloned() {
                    let result = decide(&msg);
                    self.send(json!({"id": id, "result": result})).await;
                }
            }
            if pred(&msg) {
                return msg;
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let resp = self.until(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none(), &accept_all).await;
        assert!(resp.get("error").is_none(), "{method} failed: {resp}");
        resp["result"].clone()
    }
}

fn accept_all(msg: &Value) -> Value {
    match msg["method"].as_str() {
        Some("item/tool/requestUserInput") => json!({"answers": {}}),
        _ => json!({"decision": "accept"}),
    }
}

fn is_turn_completed(m: &Value) -> bool {
    m["method"] == "turn/completed"
}

async fn start_turn(srv: &mut AppServer, thread_id: &str, text: &str) -> String {
    let r = srv
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": text, "text_elements": []}]}),
        )
        .await;
    r["turn"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn real_codex_runs_turns_against_the_mock() {
    let codex = codex_bin().expect(
        "the codex binary is missing: run scripts/test (it installs @openai/codex@0.169.0 into .tools/codex), \
         or set ENSEMBLE_CODEX_BIN",
    );
    let mock = MockModel::start(MockConfig::default().api_key("e2e-key")).await.unwrap();

    // CODEX_HOME must exist and should not be under /tmp.
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let root = PathBuf::from(format!("/var/tmp/ensemble-mock-model-e2e-{}-{stamp}", std::process::id()));
    let home = root.join("codex_home");
    let work = root.join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();

    let resources = codex.parent().and_then(|bin| bin.parent()).map(|v| v.join("codex-resources"));
    let path = match (resources, std::env::var("PATH")) {
        (Some(r), Ok(p)) => format!("{}:{p}", r.display()),
        (_, Ok(p)) => p,
        _ => String::new(),
    };
    let mut child = Command::new(&codex)
        .arg("app-server")
        .args(mock.codex_args(&CodexProvider::default().env_key("ENSEMBLE_MOCK_KEY")))
        .env("CODEX_HOME", &home)
        // codex runs `bash -l`; a HOME of its own keeps the machine's dotfiles (and their locks) out.
        .env("HOME", &home)
        .env("ENSEMBLE_MOCK_KEY", "e2e-key")
        .env("RUST_LOG", "warn")
        .env("PATH", path)
        .current_dir(&work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut srv = AppServer { child, stdin, lines, next_id: 1, seen: Vec::new() };

    srv.request(
        "initialize",
        json!({"clientInfo": {"name": "ensemble_mock_e2e", "title": null, "version": "0.0.0"},
               "capabilities": {"experimentalApi": true}}),
    )
    .await;
    srv.send(json!({"method": "initialized"})).await;
    let thread = srv
        .request("thread/start", json!({"cwd": work, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}))
        .await;
    let thread_id = thread["thread"]["id"].as_str().unwrap().to_owned();

    // 1. A scripted shell call, approved; the follow-up request carries the output.
    mock.push(Reply::shell("echo e2e-ran > e2e.txt && cat e2e.txt"));
    start_turn(&mut srv, &thread_id, "run something").await;
    let done = srv.until(is_turn_completed, &accept_all).await;
    assert_eq!(done["params"]["turn"]["status"], "completed", "{done}");
    assert!(srv.seen.iter().any(|m| m["method"] == "item/commandExecution/requestApproval"));
    let reqs = mock.responses_requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].bearer_token(), Some("e2e-key"));
    assert_eq!(reqs[0].thread_id(), Some(thread_id.as_str()));
    assert!(reqs[0].offers_tool("exec_command"));
    let out = reqs[1].trailing_tool_output().expect("tool output sent back");
    assert_eq!(out.call_id, "call_mock_1");
    assert!(out.output.contains("e2e-ran"), "{}", out.output);
    let text = done["params"]["turn"]["items"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.starts_with("The command ran. Tool output was: "), "{text}");

    // 2. Interrupt while the mock holds the stream open: deterministic, no sleeps.
    let gate = Gate::new();
    mock.push(Reply::held_text(["one ", "two ", "three "], &gate, ["never"]));
    let turn_id = start_turn(&mut srv, &thread_id, "talk").await;
    let mut deltas = 0;
    srv.until(
        |m| {
            if m["method"] == "item/agentMessage/delta" {
                deltas += 1;
            }
            deltas == 3
        },
        &accept_all,
    )
    .await;
    srv.request("turn/interrupt", json!({"threadId": thread_id, "turnId": turn_id})).await;
    let done = srv.until(is_turn_completed, &accept_all).await;
    assert_eq!(done["params"]["turn"]["status"], "interrupted");
    let seq = mock.responses_requests().last().unwrap().seq;
    assert_eq!(mock.wait_for_outcome(seq, STEP).await.unwrap(), Outcome::ClientDisconnected);

    // 3. The key stops matching: HTTP 401 surfaces as a failed turn.
    mock.update_config(|c| c.api_key = Some("rotated".into()));
    start_turn(&mut srv, &thread_id, "hello").await;
    let done = srv.until(is_turn_completed, &accept_all).await;
    assert_eq!(done["params"]["turn"]["status"], "failed");
    assert_eq!(
        done["params"]["turn"]["error"]["codexErrorInfo"],
        json!({"httpConnectionFailed": {"httpStatusCode": 401}})
    );

    drop(srv.stdin);
    let _ = tokio::time::timeout(STEP, srv.child.wait()).await;
    let _ = std::fs::remove_dir_all(&root);
}
