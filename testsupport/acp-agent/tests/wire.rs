//! Drives the built `ensemble-acp-test-agent` over raw newline-delimited JSON-RPC on its stdin/stdout
//! and checks the wire shapes against ACP v1 (camelCase fields, `sessionUpdate` tags, stop reasons).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_ensemble-acp-test-agent");
const TIMEOUT: Duration = Duration::from_secs(5);

/// One line the agent wrote on stdout.
#[derive(Debug)]
enum Line {
    Json(Value),
    Raw(String),
}

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Line>,
    stderr: Receiver<String>,
    next_id: u64,
}

impl Agent {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the test agent");
        let stdout = child.stdout.take().unwrap();
        let (tx, stdout_rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let item = match serde_json::from_str::<Value>(&line) {
                    Ok(value) if value.get("jsonrpc") == Some(&json!("2.0")) => Line::Json(value),
                    _ => Line::Raw(line),
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
        });
        let stderr = child.stderr.take().unwrap();
        let (tx, stderr_rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self { child, stdin, stdout: stdout_rx, stderr: stderr_rx, next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Answer a request the agent sent.
    fn answer(&mut self, request: &Value, outcome: Result<Value, Value>) {
        let mut message = json!({ "jsonrpc": "2.0", "id": request["id"] });
        match outcome {
            Ok(result) => message["result"] = result,
            Err(error) => message["error"] = error,
        }
        self.send(&message);
    }

    fn next_line(&mut self) -> Line {
        match self.stdout.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line from the agent within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the agent closed stdout"),
        }
    }

    fn next(&mut self) -> Value {
        match self.next_line() {
            Line::Json(value) => value,
            Line::Raw(line) => panic!("not JSON-RPC from the agent: {line:?}"),
        }
    }

    /// Everything up to the response to request `id`: (messages before it, the response).
    fn until_response(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let message = self.next();
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return (before, message);
            }
            before.push(message);
        }
    }

    fn call(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let id = self.request(method, params);
        self.until_response(id)
    }

    fn result(&mut self, method: &str, params: Value) -> Value {
        let (before, response) = self.call(method, params);
        assert!(before.is_empty(), "unexpected messages before the answer to {method}: {before:#?}");
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    fn initialize(&mut self) -> Value {
        self.result("initialize", json!({ "protocolVersion": 1, "clientCapabilities": {} }))
    }

    /// `session/new` in `cwd`; returns the session id and checks the `available_commands_update` after it.
    fn new_session(&mut self, cwd: &Path) -> String {
        let result = self.result("session/new", json!({ "cwd": cwd, "mcpServers": [] }));
        let id = result["sessionId"].as_str().unwrap().to_owned();
        let update = self.next();
        assert_eq!(
            update,
            json!({ "jsonrpc": "2.0", "method": "session/update", "params": { "sessionId": id, "update": {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{ "name": "hello", "description": "say hello" }],
            }}})
        );
        id
    }

    fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] }))
    }

    /// A whole turn: its `session/update`s (checked to name `session`) and the stop reason.
    fn turn(&mut self, session: &str, text: &str) -> (Vec<Value>, Value) {
        let id = self.prompt(session, text);
        let (before, response) = self.until_response(id);
        let updates = before
            .into_iter()
            .map(|message| {
                assert_eq!(message["method"], "session/update", "{message}");
                assert_eq!(message["params"]["sessionId"], session, "{message}");
                message["params"]["update"].clone()
            })
            .collect();
        (updates, response["result"]["stopReason"].clone())
    }

    /// Close stdin and wait for the process to end; returns the exit status and the lines still unread.
    fn finish(mut self) -> (ExitStatus, Vec<Line>) {
        self.stdin = None;
        self.wait()
    }

    /// Wait for the process to end (its stdout reaches EOF, then it is reaped); returns the exit status
    /// and the lines still unread.
    fn wait(&mut self) -> (ExitStatus, Vec<Line>) {
        let deadline = Instant::now() + TIMEOUT;
        let mut rest = Vec::new();
        loop {
            match self.stdout.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => rest.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the agent did not exit"),
            }
        }
        (self.child.wait().unwrap(), rest)
    }

    fn stderr_line(&mut self) -> String {
        self.stderr.recv_timeout(TIMEOUT).expect("a line on stderr")
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _killed = self.child.kill();
        let _reaped = self.child.wait();
    }
}

fn text_of(update: &Value) -> &str {
    assert_eq!(update["content"]["type"], "text", "{update}");
    update["content"]["text"].as_str().unwrap()
}

fn tags(updates: &[Value]) -> Vec<&str> {
    updates.iter().map(|update| update["sessionUpdate"].as_str().unwrap()).collect()
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {response}"))
}

#[test]
fn echo_modes_config_and_stop_reasons() {
    let cwd = tempfile::tempdir().unwrap();
    let mut agent = Agent::spawn(&[]);
    let started = agent.stderr_line();
    assert_eq!(started, format!("ensemble-acp-test-agent: started pid={}", agent.child.id()));

    let init = agent.initialize();
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], false);
    assert_eq!(init["agentCapabilities"]["sessionCapabilities"]["close"], json!({}));

    let result = agent.result("session/new", json!({ "cwd": cwd.path(), "mcpServers": [] }));
    let session = result["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(session, format!("test-1-{}", agent.child.id()));
    assert_eq!(
        result["modes"],
        json!({ "currentModeId": "default", "availableModes": [
            { "id": "default", "name": "Default" }, { "id": "plan", "name": "Plan" }] })
    );
    assert_eq!(
        result["configOptions"],
        json!([{ "id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "small",
                 "options": [{ "value": "small", "name": "Small" }, { "value": "large", "name": "Large" }] }])
    );
    assert_eq!(agent.next()["params"]["update"]["sessionUpdate"], "available_commands_update");

    let (updates, stop) = agent.turn(&session, "hi");
    assert_eq!(stop, "end_turn");
    assert_eq!(
        tags(&updates),
        ["agent_thought_chunk", "agent_message_chunk", "agent_message_chunk", "agent_message_chunk"]
    );
    assert_eq!(text_of(&updates[0]), "thinking about hi");
    let message_id = &updates[1]["messageId"];
    assert!(message_id.is_string());
    assert!(updates[1..].iter().all(|update| &update["messageId"] == message_id && !text_of(update).is_empty()));
    let reply: String = updates[1..].iter().map(text_of).collect();
    assert_eq!(reply, "echo: hi [mode=default model=small]");

    // Mode: the update, then the (empty) answer; an unknown mode is invalid params.
    let (before, response) = agent.call("session/set_mode", json!({ "sessionId": session, "modeId": "plan" }));
    assert_eq!(response["result"], json!({}));
    assert_eq!(
        before,
        [json!({ "jsonrpc": "2.0", "method": "session/update", "params": { "sessionId": session,
            "update": { "sessionUpdate": "current_mode_update", "currentModeId": "plan" } } })]
    );
    let (_, response) = agent.call("session/set_mode", json!({ "sessionId": session, "modeId": "yolo" }));
    assert_eq!(error_code(&response), -32602);

    // Config option: the full list with the new current value; unknown id or value is invalid params.
    let result = agent
        .result("session/set_config_option", json!({ "sessionId": session, "configId": "model", "value": "large" }));
    assert_eq!(result["configOptions"][0]["currentValue"], "large");
    assert_eq!(result["configOptions"][0]["options"].as_array().unwrap().len(), 2);
    for (config, value) in [("model", "huge"), ("effort", "small")] {
        let (_, response) = agent
            .call("session/set_config_option", json!({ "sessionId": session, "configId": config, "value": value }));
        assert_eq!(error_code(&response), -32602);
    }

    // Text blocks are concatenated and trimmed; other blocks are described after them.
    let id = agent.request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [
            { "type": "text", "text": "  again" },
            { "type": "resource_link", "uri": "file:///x", "name": "x" },
            { "type": "text", "text": " and again  " }] }),
    );
    let (before, response) = agent.until_response(id);
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let reply: String = before[1..].iter().map(|m| text_of(&m["params"]["update"]).to_owned()).collect();
    assert_eq!(reply, "echo: again and again [link x file:///x] [mode=plan model=large]");

    for (text, reason) in
        [("refuse", "refusal"), ("max-tokens", "max_tokens"), ("max-turn-requests", "max_turn_requests")]
    {
        let (updates, stop) = agent.turn(&session, text);
        assert!(updates.is_empty(), "{updates:?}");
        assert_eq!(stop, reason);
    }

    let (updates, stop) = agent.turn(&session, "title A new  title");
    assert_eq!(stop, "end_turn");
    assert_eq!(updates[0], json!({ "sessionUpdate": "session_info_update", "title": "A new  title" }));
    assert_eq!(text_of(&updates[1]), "titled");

    let id = agent.prompt("no-such-session", "hi");
    assert_eq!(error_code(&agent.until_response(id).1), -32602);

    assert_eq!(agent.result("session/close", json!({ "sessionId": session })), json!({}));
    let id = agent.prompt(&session, "hi");
    assert_eq!(error_code(&agent.until_response(id).1), -32602);

    assert!(agent.finish().0.success());
}

#[test]
fn tool_directive_wire_shapes() {
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path().to_str().unwrap();
    let mut agent = Agent::spawn(&[]);
    agent.initialize();
    let session = agent.new_session(Path::new(cwd));
    let (updates, stop) = agent.turn(&session, "tool");
    assert_eq!(stop, "end_turn");
    assert_eq!(updates.len(), 7, "{updates:#?}");
    assert_eq!(
        updates,
        [
            // `status: pending` is the schema's default and is left out on the wire.
            json!({ "sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "echo hi", "kind": "execute",
                    "rawInput": { "command": "echo hi", "cwd": cwd } }),
            json!({ "sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "in_progress",
                    "content": [{ "type": "content", "content": { "type": "text", "text": "hi\n" } }] }),
            json!({ "sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "completed",
                    "rawOutput": { "exit_code": 0, "aggregated_output": "hi\n" } }),
            json!({ "sessionUpdate": "tool_call", "toolCallId": "call-2", "title": "edit a.txt", "kind": "edit",
                    "status": "completed",
                    "content": [{ "type": "diff", "path": format!("{cwd}/a.txt"), "oldText": "a\n", "newText": "b\n" }] }),
            json!({ "sessionUpdate": "plan", "entries": [
                { "content": "look", "priority": "medium", "status": "completed" },
                { "content": "edit", "priority": "medium", "status": "in_progress" }] }),
            json!({ "sessionUpdate": "usage_update", "used": 10, "size": 100, "cost": { "amount": 0.0125, "currency": "USD" } }),
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": "done" },
                    "messageId": updates[6]["messageId"] }),
        ]
    );
    assert!(agent.finish().0.success());
}

/// The `session/request_permission` the `permission` directive sends, after its `tool_call`.
fn permission_request(agent: &mut Agent, session: &str) -> (u64, Value) {
    let id = agent.prompt(session, "permission");
    let tool_call = agent.next();
    assert_eq!(
        tool_call["params"]["update"],
        json!({ "sessionUpdate": "tool_call", "toolCallId": "call-p", "title": "rm -rf build", "kind": "execute",
                "rawInput": { "command": "rm -rf build" } })
    );
    let request = agent.next();
    assert_eq!(request["method"], "session/request_permission");
    assert!(request["id"].is_number() || request["id"].is_string());
    assert_eq!(
        request["params"],
        json!({ "sessionId": session, "toolCall": { "toolCallId": "call-p" }, "options": [
            { "optionId": "allow-once", "name": "Allow", "kind": "allow_once" },
            { "optionId": "allow-always", "name": "Always allow", "kind": "allow_always" },
            { "optionId": "reject-once", "name": "Reject", "kind": "reject_once" },
            { "optionId": "reject-always", "name": "Never", "kind": "reject_always" }] })
    );
    (id, request)
}

#[test]
fn permission_selected_and_cancelled() {
    let cwd = tempfile::tempdir().unwrap();
    let mut agent = Agent::spawn(&[]);
    agent.initialize();
    let session = agent.new_session(cwd.path());

    for (option, status) in [("reject-once", "failed"), ("allow-always", "completed")] {
        let (id, request) = permission_request(&mut agent, &session);
        agent.answer(&request, Ok(json!({ "outcome": { "outcome": "selected", "optionId": option } })));
        let (before, response) = agent.until_response(id);
        assert_eq!(response["result"]["stopReason"], "end_turn");
        let updates: Vec<_> = before.iter().map(|m| m["params"]["update"].clone()).collect();
        assert_eq!(
            updates[0],
            json!({ "sessionUpdate": "tool_call_update", "toolCallId": "call-p", "status": status })
        );
        assert_eq!(text_of(&updates[1]), format!("permission: {option}"));
        assert_eq!(updates.len(), 2);
    }

    // The client cancels the turn while the permission request is open: `session/cancel` gets through
    // (the agent is not blocked), the client answers `cancelled`, the turn stops as cancelled.
    let (id, request) = permission_request(&mut agent, &session);
    agent.notify("session/cancel", json!({ "sessionId": session }));
    agent.answer(&request, Ok(json!({ "outcome": { "outcome": "cancelled" } })));
    let (before, response) = agent.until_response(id);
    assert!(before.is_empty(), "{before:#?}");
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(agent.finish().0.success());
}

#[test]
fn slow_until_cancel() {
    let cwd = tempfile::tempdir().unwrap();
    let mut agent = Agent::spawn(&[]);
    agent.initialize();
    let session = agent.new_session(cwd.path());
    let other = agent.new_session(cwd.path());

    let id = agent.prompt(&session, "slow");
    let working = agent.next();
    assert_eq!(working["params"]["sessionId"], session.as_str());
    assert_eq!(text_of(&working["params"]["update"]), "working");
    // The connection stays responsive while the turn waits, and a cancel for another session does not end it.
    agent.notify("session/cancel", json!({ "sessionId": other }));
    let (updates, stop) = agent.turn(&other, "meanwhile");
    assert_eq!((updates.len(), stop), (4, json!("end_turn")));
    agent.notify("session/cancel", json!({ "sessionId": session }));
    let (before, response) = agent.until_response(id);
    assert!(before.is_empty(), "{before:#?}");
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(agent.finish().0.success());
}

#[test]
fn load_replays_history_from_the_state_dir() {
    let state = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let state_dir = state.path().to_str().unwrap();

    let mut first = Agent::spawn(&["--state-dir", state_dir]);
    first.initialize();
    let session = first.new_session(cwd.path());
    assert_eq!(first.turn(&session, "hi").1, "end_turn");
    first.call("session/set_mode", json!({ "sessionId": session, "modeId": "plan" }));
    first.result("session/set_config_option", json!({ "sessionId": session, "configId": "model", "value": "large" }));
    assert_eq!(first.turn(&session, "second one").1, "end_turn");
    let (_, response) =
        first.call("session/load", json!({ "sessionId": session, "cwd": cwd.path(), "mcpServers": [] }));
    assert_eq!(error_code(&response), -32601, "no --load: no session/load");
    assert!(first.finish().0.success());

    let mut second = Agent::spawn(&["--load", "--state-dir", state_dir]);
    let init = second.initialize();
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    let (before, response) =
        second.call("session/load", json!({ "sessionId": session, "cwd": cwd.path(), "mcpServers": [] }));
    let replay: Vec<(String, String)> = before
        .iter()
        .map(|message| {
            assert_eq!(message["method"], "session/update");
            assert_eq!(message["params"]["sessionId"], session.as_str());
            let update = &message["params"]["update"];
            (update["sessionUpdate"].as_str().unwrap().to_owned(), text_of(update).to_owned())
        })
        .collect();
    let expected = [
        ("user_message_chunk", "hi"),
        ("agent_message_chunk", "echo: hi [mode=default model=small]"),
        ("user_message_chunk", "second one"),
        ("agent_message_chunk", "echo: second one [mode=plan model=large]"),
    ];
    assert_eq!(replay, expected.map(|(tag, text)| (tag.to_owned(), text.to_owned())));
    assert_eq!(response["result"]["modes"]["currentModeId"], "plan");
    assert_eq!(response["result"]["configOptions"][0]["currentValue"], "large");

    // The loaded session carries on where it was.
    let (updates, stop) = second.turn(&session, "third");
    assert_eq!(stop, "end_turn");
    let reply: String = updates[1..].iter().map(text_of).collect();
    assert_eq!(reply, "echo: third [mode=plan model=large]");

    let (_, response) =
        second.call("session/load", json!({ "sessionId": "test-9-1", "cwd": cwd.path(), "mcpServers": [] }));
    assert_eq!(error_code(&response), -32002);
    assert!(second.finish().0.success());
}

#[test]
fn client_requests_fs_and_unknown_method() {
    let cwd = tempfile::tempdir().unwrap();
    let mut agent = Agent::spawn(&[]);
    agent.initialize();
    let session = agent.new_session(cwd.path());

    let id = agent.prompt(&session, "read /etc/hosts");
    let request = agent.next();
    assert_eq!(request["method"], "fs/read_text_file");
    assert_eq!(request["params"], json!({ "sessionId": session, "path": "/etc/hosts" }));
    agent.answer(&request, Ok(json!({ "content": "127.0.0.1 localhost" })));
    let (before, _) = agent.until_response(id);
    assert_eq!(text_of(&before[0]["params"]["update"]), "read ok: 127.0.0.1 localhost");

    let id = agent.prompt(&session, "read /nope");
    let request = agent.next();
    agent.answer(&request, Err(json!({ "code": -32002, "message": "Resource not found" })));
    let (before, _) = agent.until_response(id);
    assert_eq!(text_of(&before[0]["params"]["update"]), "read error: -32002 Resource not found");

    let id = agent.prompt(&session, "write /tmp/out.txt two  words");
    let request = agent.next();
    assert_eq!(request["method"], "fs/write_text_file");
    assert_eq!(request["params"], json!({ "sessionId": session, "path": "/tmp/out.txt", "content": "two  words" }));
    agent.answer(&request, Ok(Value::Null));
    let (before, _) = agent.until_response(id);
    assert_eq!(text_of(&before[0]["params"]["update"]), "write ok");

    let id = agent.prompt(&session, "unknown-request");
    let request = agent.next();
    assert_eq!(request["method"], "_ensemble/unknown");
    agent.answer(&request, Err(json!({ "code": -32601, "message": "Method not found" })));
    let (before, response) = agent.until_response(id);
    assert_eq!(text_of(&before[0]["params"]["update"]), "unknown: -32601");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert!(agent.finish().0.success());
}

#[test]
fn garbage_flood_and_crash() {
    let cwd = tempfile::tempdir().unwrap();
    let mut agent = Agent::spawn(&[]);
    agent.initialize();
    let session = agent.new_session(cwd.path());

    let id = agent.prompt(&session, "garbage");
    let mut raw = Vec::new();
    for _ in 0..3 {
        match agent.next_line() {
            Line::Raw(line) => raw.push(line),
            Line::Json(value) => panic!("expected garbage, got {value}"),
        }
    }
    assert_eq!(raw, ["not json at all", "{\"broken\":", "[1,2,3]"]);
    let (before, response) = agent.until_response(id);
    assert_eq!(text_of(&before[0]["params"]["update"]), "after garbage");
    assert_eq!(response["result"]["stopReason"], "end_turn");

    let (updates, stop) = agent.turn(&session, "flood 20000");
    assert_eq!(stop, "end_turn");
    assert_eq!(updates.len(), 20000);
    assert!(updates.iter().all(|update| update["sessionUpdate"] == "agent_message_chunk" && text_of(update) == "x"));
    let id = agent.prompt(&session, "flood many");
    assert_eq!(error_code(&agent.until_response(id).1), -32602);

    agent.prompt(&session, "crash");
    let message = agent.next();
    assert_eq!(message["params"]["sessionId"], session.as_str());
    assert_eq!(message["params"]["update"]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(text_of(&message["params"]["update"]), "about to crash");
    assert_eq!(agent.wait().0.code(), Some(3));
}

#[test]
fn flags() {
    let mut agent = Agent::spawn(&["--bogus"]);
    assert_eq!(agent.wait().0.code(), Some(2));
    assert!(agent.stderr_line().contains("--bogus"));

    // Never answers `initialize`; exits 0 at EOF without having written anything.
    let mut agent = Agent::spawn(&["--hang-initialize"]);
    agent.request("initialize", json!({ "protocolVersion": 1, "clientCapabilities": {} }));
    let status = agent.finish();
    assert!(status.0.success());
    assert!(status.1.is_empty(), "{:?}", status.1);
}
