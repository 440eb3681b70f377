//! The Anthropic, Gemini and chat-completions dialects over real HTTP (reqwest), with requests
//! shaped like the ones Claude Code, Gemini CLI and opencode sent in the lab (see
//! `/tmp/agents/*/REPORT.md` at the time of writing).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use ensemble_mock_model::{
    Dialect, Gate, MockConfig, MockModel, Outcome, Reply, SideRequest, TOOL_REJECTED_REPLY, WRITE_FILE_CONTENT,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);
const KEY: &str = "test-key-0123";

// ---------------------------------------------------------------- client

/// One SSE event: its `event:` name (if any) and its `data:` text.
#[derive(Debug)]
struct Event {
    name: Option<String>,
    data: String,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("event data is JSON ({e}): {}", self.data))
    }
}

/// Reads an SSE body chunk by chunk, as the agents' SDKs do.
struct Sse {
    response: reqwest::Response,
    buf: String,
}

impl Sse {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        let content_type = response.headers().get("content-type").unwrap().to_str().unwrap().to_owned();
        assert_eq!(content_type, "text/event-stream");
        Self { response, buf: String::new() }
    }

    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(pos) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..pos + 2).collect();
                let mut name = None;
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                return Some(Event { name, data });
            }
            let chunk = self.response.chunk().await.unwrap()?;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    async fn all(mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(e) = self.next().await {
            out.push(e);
        }
        assert!(self.buf.trim().is_empty(), "no trailing partial event: {:?}", self.buf);
        out
    }
}

async fn start() -> MockModel {
    MockModel::start(MockConfig::default().api_key(KEY).text_delay(Duration::ZERO)).await.unwrap()
}

async fn post(url: String, headers: &[(&str, &str)], body: &Value) -> reqwest::Response {
    let mut req = reqwest::Client::new().post(url).json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

// ---------------------------------------------------------------- Anthropic (Claude Code)

const CLAUDE_CWD: &str = "/tmp/claude-work";

fn claude_tools() -> Value {
    json!([
        {"name": "Agent", "description": "…", "input_schema": {"type": "object", "properties": {"prompt": {"type": "string"}}}},
        {"name": "Bash", "description": "…", "input_schema": {"type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}, "description": {"type": "string"}},
            "required": ["command"]}},
        {"name": "Write", "description": "…", "input_schema": {"type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"], "additionalProperties": false}}
    ])
}

/// A main-loop request as Claude Code sends it: a `<system-reminder>` block before the prompt,
/// and a `system` message with the environment after it.
fn claude_body(prompt: &str, more: &[Value], stream: bool) -> Value {
    let mut messages = vec![
        json!({"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>\nSHELL WRITE are not the user's words\n</system-reminder>"},
            {"type": "text", "text": prompt}]}),
        json!({"role": "system", "content": format!("# Environment\n - Primary working directory: {CLAUDE_CWD}\n - Platform: linux")}),
    ];
    messages.extend(more.iter().cloned());
    json!({"model": "claude-opus-5-5", "max_tokens": 128000, "stream": stream,
           "system": [{"type": "text", "text": "You are a Claude agent."}],
           "messages": messages, "tools": claude_tools()})
}

async fn claude(mock: &MockModel, body: &Value) -> reqwest::Response {
    post(
        format!("{}/v1/messages?beta=true", mock.url()),
        &[("x-api-key", KEY), ("anthropic-version", "2023-06-01")],
        body,
    )
    .await
}

fn names(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.name.as_deref().unwrap()).collect()
}

fn claude_text(events: &[Event]) -> String {
    events
        .iter()
        .map(Event::json)
        .filter(|e| e["type"] == "content_block_delta" && e["delta"]["type"] == "text_delta")
        .map(|e| e["delta"]["text"].as_str().unwrap().to_owned())
        .collect()
}

/// The `tool_use` blocks of a streamed message: (id, name, input put back together).
fn claude_tool_uses(events: &[Event]) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String, String)> = None;
    for e in events.iter().map(Event::json) {
        match e["type"].as_str().unwrap() {
            "content_block_start" if e["content_block"]["type"] == "tool_use" => {
                let b = &e["content_block"];
                current = Some((b["id"].as_str().unwrap().into(), b["name"].as_str().unwrap().into(), String::new()));
            }
            "content_block_delta" if e["delta"]["type"] == "input_json_delta" => {
                current.as_mut().unwrap().2.push_str(e["delta"]["partial_json"].as_str().unwrap());
            }
            "content_block_stop" => {
                if let Some((id, name, json)) = current.take() {
                    out.push((id, name, serde_json::from_str(&json).unwrap()));
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn anthropic_streams_the_default_text() {
    let mock = start().await;
    let events = Sse::new(claude(&mock, &claude_body("Say hello", &[], true)).await).all().await;
    let mut expected = vec!["message_start", "content_block_start"];
    expected.extend(["content_block_delta"; 5]);
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names(&events), expected);
    for e in &events {
        assert_eq!(e.json()["type"], e.name.as_deref().unwrap(), "event: line matches data.type");
    }
    assert_eq!(claude_text(&events), "Hello from the mock model.");
    let start = events[0].json();
    assert_eq!(start["message"]["id"], "msg_mock_1");
    assert_eq!(start["message"]["model"], "claude-opus-5-5", "the model is echoed");
    assert_eq!(start["message"]["usage"]["input_tokens"], 10);
    let delta = events[events.len() - 2].json();
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 5);

    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::Completed);
    let r = &mock.requests()[0];
    assert_eq!(r.dialect(), Some(Dialect::Anthropic));
    assert_eq!(r.query_param("beta"), Some("true"));
    assert!(r.is_model_call() && r.wants_stream());
    assert_eq!(r.last_user_text(), "Say hello", "the system-reminder block is not the user's text");
    assert_eq!(r.tool_names(), vec!["Agent", "Bash", "Write"]);
    assert_eq!(r.working_directory().as_deref(), Some(CLAUDE_CWD));
    assert_eq!(r.api_key(), Some(KEY));
    assert_eq!(r.model(), Some("claude-opus-5-5"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
}

#[tokio::test]
async fn anthropic_shell_then_tool_result_then_rejection() {
    let mock = start().await;
    let events = Sse::new(claude(&mock, &claude_body("please run SHELL", &[], true)).await).all().await;
    let uses = claude_tool_uses(&events);
    assert_eq!(uses.len(), 1);
    let (id, name, input) = &uses[0];
    assert_eq!((id.as_str(), name.as_str()), ("toolu_mock_1", "Bash"));
    assert_eq!(input["command"], ensemble_mock_model::MockConfig::default().shell_command);
    assert!(input["description"].is_string(), "Bash takes a description: {input}");
    let delta = events.iter().map(Event::json).find(|e| e["type"] == "message_delta").unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");

    // The follow-up carries the result.
    let assistant =
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": input}]});
    let result = |content: &str, is_error: bool| {
        json!({"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": content,
            "is_error": is_error, "cache_control": {"type": "ephemeral"}}]})
    };
    let ok = claude_body("please run SHELL", &[assistant.clone(), result("mock-shell-ran", false)], true);
    let events = Sse::new(claude(&mock, &ok).await).all().await;
    assert_eq!(claude_text(&events), "The command ran. Tool output was: mock-shell-ran");
    let out = mock.requests()[1].trailing_tool_output().unwrap();
    assert_eq!((out.call_id.as_str(), out.name.as_deref(), out.is_error), ("toolu_mock_1", Some("Bash"), false));

    // Refused permission: Claude Code sends is_error.
    let refused =
        claude_body("please run SHELL", &[assistant, result("User refused permission to run tool", true)], true);
    let events = Sse::new(claude(&mock, &refused).await).all().await;
    assert_eq!(claude_text(&events), TOOL_REJECTED_REPLY);
    let out = mock.requests()[2].trailing_tool_output().unwrap();
    assert!(out.is_error);
    assert_eq!(out.output, "User refused permission to run tool");
    assert_eq!(mock.requests()[2].tool_outputs().len(), 1);
}

#[tokio::test]
async fn anthropic_write_uses_the_working_directory() {
    let mock = start().await;
    let events = Sse::new(claude(&mock, &claude_body("WRITE a file", &[], true)).await).all().await;
    let uses = claude_tool_uses(&events);
    assert_eq!(uses[0].1, "Write");
    assert_eq!(
        uses[0].2,
        json!({"file_path": format!("{CLAUDE_CWD}/mock_written.txt"), "content": WRITE_FILE_CONTENT})
    );
}

#[tokio::test]
async fn anthropic_rejects_a_wrong_key_in_its_shape() {
    let mock = start().await;
    let body = claude_body("hi", &[], true);
    let url = format!("{}/v1/messages", mock.url());
    for headers in [vec![], vec![("x-api-key", "wrong")], vec![("authorization", "Bearer wrong")]] {
        let resp = post(url.clone(), &headers, &body).await;
        assert_eq!(resp.status(), 401);
        let err: Value = resp.json().await.unwrap();
        assert_eq!(
            err,
            json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
        );
    }
    // ANTHROPIC_AUTH_TOKEN sends a bearer token instead of x-api-key.
    let bearer = format!("Bearer {KEY}");
    let ok = post(url, &[("authorization", bearer.as_str())], &body).await;
    assert_eq!(claude_text(&Sse::new(ok).all().await), "Hello from the mock model.");
}

#[tokio::test]
async fn anthropic_non_streaming_and_queued_replies() {
    let mock = start().await;
    let resp = claude(&mock, &claude_body("Say hello", &[], false)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers().get("request-id").unwrap(), "req_mock_1");
    let message: Value = resp.json().await.unwrap();
    assert_eq!(message["type"], "message");
    assert_eq!(message["content"], json!([{"type": "text", "text": "Hello from the mock model."}]));
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(message["usage"]["output_tokens"], 5);

    // The queue serves every dialect; OpenAI-shaped errors are re-shaped.
    mock.push(Reply::shell("echo queued"));
    mock.push(Reply::rate_limited());
    let message: Value = claude(&mock, &claude_body("x", &[], false)).await.json().await.unwrap();
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["content"][0]["name"], "Bash");
    assert_eq!(message["content"][0]["input"]["command"], "echo queued");
    let limited = claude(&mock, &claude_body("x", &[], true)).await;
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.json::<Value>().await.unwrap()["error"]["type"], "rate_limit_error");

    let labels: Vec<String> = mock.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(labels, ["json[message(5 chunks), completed]", "json[shell, completed]", "http 429"]);
    let outcomes: Vec<Outcome> = mock.requests().into_iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Http { status: 200 }, Outcome::Http { status: 200 }, Outcome::Http { status: 429 }]);
}

#[tokio::test]
async fn anthropic_side_requests_are_answered_by_content_and_leave_the_queue_alone() {
    let mock = start().await;
    mock.push(Reply::text("for the turn"));

    // Title generation: no tools, asks for JSON with a title.
    let title = json!({"model": "claude-opus-5-5", "stream": true, "tools": [],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object",
            "properties": {"title": {"type": "string"}}, "required": ["title"], "additionalProperties": false}}},
        "messages": [{"role": "user", "content": [{"type": "text", "text": "<session>\nSHELL please\n</session>\n\nWrite the title"}]}]});
    let events = Sse::new(claude(&mock, &title).await).all().await;
    assert_eq!(serde_json::from_str::<Value>(&claude_text(&events)).unwrap(), json!({"title": "Mock title"}));

    // Prompt suggestion after a turn.
    let suggestion = claude_body(
        "x",
        &[
            json!({"role": "user", "content": "[SUGGESTION MODE: Suggest what the user might naturally type next into Claude Code.]"}),
        ],
        true,
    );
    let events = Sse::new(claude(&mock, &suggestion).await).all().await;
    assert_eq!(claude_text(&events), ensemble_mock_model::SUGGESTION_REPLY);

    // Auto-mode classifier (not streamed).
    let classifier = json!({"model": "claude-sonnet-5", "system": [{"type": "text",
        "text": "You are a security monitor for autonomous AI coding agents. Answer with <severity>N</severity>."}],
        "messages": [{"role": "user", "content": "touch x"}]});
    let message: Value = claude(&mock, &classifier).await.json().await.unwrap();
    assert_eq!(message["content"][0]["text"], "<severity>0</severity>");

    let kinds: Vec<Option<SideRequest>> = mock.requests().iter().map(|r| r.side_request()).collect();
    assert_eq!(kinds, [Some(SideRequest::Title), Some(SideRequest::Suggestion), Some(SideRequest::Classifier)]);
    assert_eq!(mock.queued(), 1, "side requests did not take the queued reply");
    assert_eq!(mock.requests()[0].reply, "side(title) stream[message(1 chunks), completed]");
    assert_eq!(mock.requests()[2].reply, "side(classifier) json[message(1 chunks), completed]");
    assert!(mock.model_calls().is_empty());

    let events = Sse::new(claude(&mock, &claude_body("turn", &[], true)).await).all().await;
    assert_eq!(claude_text(&events), "for the turn");
    assert_eq!(mock.wait_for_model_calls(1, WAIT).await.unwrap().len(), 1);
}

#[tokio::test]
async fn anthropic_slow_stream_can_be_cancelled_and_reasoning_is_a_thinking_block() {
    let mock = MockModel::start(MockConfig::default().slow_pacing(100, Duration::from_millis(200))).await.unwrap();
    let mut sse = Sse::new(claude(&mock, &claude_body("SLOW", &[], true)).await);
    let mut deltas = 0;
    while deltas < 3 {
        if sse.next().await.unwrap().json()["type"] == "content_block_delta" {
            deltas += 1;
        }
    }
    drop(sse);
    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::ClientDisconnected);

    let events = Sse::new(claude(&mock, &claude_body("REASON", &[], true)).await).all().await;
    let blocks: Vec<Value> = events
        .iter()
        .map(Event::json)
        .filter(|e| e["type"] == "content_block_start")
        .map(|e| e["content_block"]["type"].clone())
        .collect();
    assert_eq!(blocks, [json!("thinking"), json!("text")]);
    assert!(events.iter().any(|e| e.json()["delta"]["type"] == "signature_delta"));
}

// ---------------------------------------------------------------- Gemini (Gemini CLI)

fn gemini_tools() -> Value {
    json!([{"functionDeclarations": [
        {"name": "read_file", "description": "…", "parametersJsonSchema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
        {"name": "write_file", "description": "…", "parametersJsonSchema": {"type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}, "required": ["file_path", "content"]}},
        {"name": "run_shell_command", "description": "…", "parametersJsonSchema": {"type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}, "dir_path": {"type": "string"}},
            "required": ["command"]}}
    ]}])
}

const GEMINI_CWD: &str = "/tmp/gem-home/project";

/// A main request as Gemini CLI sends it: the `<session_context>` part before the prompt.
fn gemini_body(prompt: &str, more: &[Value]) -> Value {
    let context = format!(
        "<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - {GEMINI_CWD}\n- **Directory Structure:**\n\nSHELL_NOTES.md\n</session_context>"
    );
    let mut contents = vec![json!({"role": "user", "parts": [{"text": context}, {"text": prompt}]})];
    contents.extend(more.iter().cloned());
    json!({"contents": contents, "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
           "tools": gemini_tools(), "generationConfig": {"temperature": 1}})
}

async fn gemini_stream(mock: &MockModel, model: &str, body: &Value) -> reqwest::Response {
    let url = format!("{}/v1beta/models/{model}:streamGenerateContent?alt=sse", mock.url());
    post(url, &[("x-goog-api-key", KEY)], body).await
}

fn gemini_parts(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .flat_map(|e| e.json()["candidates"][0]["content"]["parts"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn gemini_text(events: &[Event]) -> String {
    gemini_parts(events).iter().filter_map(|p| p["text"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn gemini_streams_the_default_text() {
    let mock = start().await;
    let events = Sse::new(gemini_stream(&mock, "gemini-2.5-flash", &gemini_body("Say hello", &[])).await).all().await;
    assert!(events.iter().all(|e| e.name.is_none()), "Gemini's SSE has no event: lines");
    assert_eq!(events.len(), 6);
    assert_eq!(gemini_text(&events), "Hello from the mock model.");
    let last = events.last().unwrap().json();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["candidates"][0]["content"], json!({"role": "model", "parts": []}));
    assert_eq!(
        last["usageMetadata"],
        json!({"promptTokenCount": 10, "candidatesTokenCount": 5,
        "totalTokenCount": 15, "cachedContentTokenCount": 0, "thoughtsTokenCount": 0})
    );
    assert_eq!(events[0].json()["modelVersion"], "gemini-2.5-flash");

    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::Completed);
    let r = &mock.requests()[0];
    assert_eq!(r.dialect(), Some(Dialect::Gemini));
    assert_eq!(r.model(), Some("gemini-2.5-flash"));
    assert_eq!(r.last_user_text(), "Say hello", "the session context is not the user's text");
    assert_eq!(r.working_directory().as_deref(), Some(GEMINI_CWD));
    assert_eq!(r.tool_names(), vec!["read_file", "write_file", "run_shell_command"]);
    assert_eq!(r.system_text(), "You are Gemini CLI.");
}

#[tokio::test]
async fn gemini_shell_then_function_response_then_rejection() {
    let mock = start().await;
    let events =
        Sse::new(gemini_stream(&mock, "gemini-2.5-pro", &gemini_body("Please do SHELL", &[])).await).all().await;
    let parts = gemini_parts(&events);
    let call = parts.iter().find_map(|p| p.get("functionCall")).unwrap();
    assert_eq!(call["name"], "run_shell_command");
    assert_eq!(call["args"]["command"], MockConfig::default().shell_command);
    assert!(call["args"]["description"].is_string());
    assert!(call.get("id").is_none(), "Gemini CLI makes up the id");
    assert_eq!(events.last().unwrap().json()["candidates"][0]["finishReason"], "STOP");

    let model_turn = json!({"role": "model", "parts": [{"functionCall": {"id": "run_shell_command_1_0",
        "name": "run_shell_command", "args": call["args"]}, "thoughtSignature": "skip_thought_signature_validator"}]});
    let response = |response: Value| {
        json!({"role": "user", "parts": [{"functionResponse": {"id": "run_shell_command_1_0",
            "name": "run_shell_command", "response": response}}]})
    };
    let ok =
        gemini_body("Please do SHELL", &[model_turn.clone(), response(json!({"output": "Output: mock-shell-ran"}))]);
    let events = Sse::new(gemini_stream(&mock, "gemini-2.5-pro", &ok).await).all().await;
    assert_eq!(gemini_text(&events), "The command ran. Tool output was: Output: mock-shell-ran");
    let out = mock.requests()[1].trailing_tool_output().unwrap();
    assert_eq!(
        (out.name.as_deref(), out.call_id.as_str(), out.is_error),
        (Some("run_shell_command"), "run_shell_command_1_0", false)
    );

    let rejected = gemini_body(
        "Please do SHELL",
        &[model_turn, response(json!({"error": "Tool \"run_shell_command\" was canceled by the user."}))],
    );
    let events = Sse::new(gemini_stream(&mock, "gemini-2.5-pro", &rejected).await).all().await;
    assert_eq!(gemini_text(&events), TOOL_REJECTED_REPLY);
    let out = mock.requests()[2].trailing_tool_output().unwrap();
    assert!(out.is_error);
    assert_eq!(out.output, "Tool \"run_shell_command\" was canceled by the user.");
}

#[tokio::test]
async fn gemini_write_uses_its_schema() {
    let mock = start().await;
    let events = Sse::new(gemini_stream(&mock, "m", &gemini_body("TOOL WRITE", &[])).await).all().await;
    let call = gemini_parts(&events).into_iter().find_map(|p| p.get("functionCall").cloned()).unwrap();
    assert_eq!(
        call,
        json!({"name": "write_file",
        "args": {"file_path": format!("{GEMINI_CWD}/mock_written.txt"), "content": WRITE_FILE_CONTENT}})
    );
}

#[tokio::test]
async fn gemini_key_from_header_or_query() {
    let mock = start().await;
    let body = gemini_body("hi", &[]);
    let url = format!("{}/v1beta/models/m:streamGenerateContent?alt=sse", mock.url());
    // Gemini CLI sends an empty x-goog-api-key when it has no key.
    for headers in [vec![("x-goog-api-key", "")], vec![("x-goog-api-key", "wrong")]] {
        let resp = post(url.clone(), &headers, &body).await;
        assert_eq!(resp.status(), 401);
        let err: Value = resp.json().await.unwrap();
        assert_eq!(err["error"]["code"], 401);
        assert_eq!(err["error"]["status"], "UNAUTHENTICATED");
        assert!(err["error"]["message"].as_str().unwrap().contains("API key not valid"));
    }
    let with_query = format!("{url}&key={KEY}");
    let ok = post(with_query, &[], &body).await;
    assert_eq!(gemini_text(&Sse::new(ok).all().await), "Hello from the mock model.");
}

#[tokio::test]
async fn gemini_generate_content_and_the_router() {
    let mock = start().await;
    mock.push(Reply::text("queued for the turn"));

    // The model router: non-streaming, no tools, asks for JSON; the prompt's keywords don't matter.
    let router = json!({
        "contents": [{"role": "user", "parts": [{"text": "Please do SHELL"}]}],
        "systemInstruction": {"parts": [{"text": "You are a specialized Task Routing AI."}]},
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {"type": "OBJECT",
            "properties": {"complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER"}},
            "required": ["complexity_reasoning", "complexity_score"]}}});
    let url = format!("{}/v1beta/models/gemini-3.5-flash-lite:generateContent", mock.url());
    let resp: Value = post(url.clone(), &[("x-goog-api-key", KEY)], &router).await.json().await.unwrap();
    let text = resp["candidates"][0]["content"]["parts"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"complexity_reasoning": "mock", "complexity_score": 1})
    );
    assert_eq!(mock.requests()[0].side_request(), Some(SideRequest::Structured));
    assert_eq!(mock.queued(), 1);

    // A non-streaming main call takes the queue like any other.
    let resp = post(url, &[("x-goog-api-key", KEY)], &gemini_body("anything", &[])).await;
    assert_eq!(resp.status(), 200);
    let resp: Value = resp.json().await.unwrap();
    assert_eq!(resp["candidates"][0]["content"]["parts"], json!([{"text": "queued for the turn"}]));
    assert_eq!(resp["candidates"][0]["finishReason"], "STOP");
    assert_eq!(resp["usageMetadata"]["totalTokenCount"], 15);
    assert_eq!(mock.requests()[1].outcome, Outcome::Http { status: 200 });
    assert!(!mock.requests()[1].wants_stream());
}

#[tokio::test]
async fn gemini_errors_are_in_googles_shape() {
    let mock = start().await;
    let resp = gemini_stream(&mock, "m", &gemini_body("HTTP400 please", &[])).await;
    assert_eq!(resp.status(), 400);
    let err: Value = resp.json().await.unwrap();
    assert_eq!(err, json!({"error": {"code": 400, "message": "scripted bad request", "status": "INVALID_ARGUMENT"}}));
}

// ---------------------------------------------------------------- chat completions (opencode)

fn opencode_tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "bash", "description": "…", "parameters": {"type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}, "workdir": {"type": "string"}},
            "required": ["command"]}}},
        {"type": "function", "function": {"name": "write", "description": "…", "parameters": {"type": "object",
            "properties": {"content": {"type": "string"}, "filePath": {"type": "string"}}, "required": ["content", "filePath"]}}}
    ])
}

const OPENCODE_CWD: &str = "/tmp/opencode/work";

fn chat_body(prompt: &str, more: &[Value], stream: bool) -> Value {
    let system = format!("You are opencode.\n<env>\n  Working directory: {OPENCODE_CWD}\n  Platform: linux\n</env>");
    let mut messages = vec![json!({"role": "system", "content": system}), json!({"role": "user", "content": prompt})];
    messages.extend(more.iter().cloned());
    json!({"model": "mock-model", "max_tokens": 4096, "stream": stream, "stream_options": {"include_usage": true},
           "tool_choice": "auto", "tools": opencode_tools(), "messages": messages})
}

async fn chat(mock: &MockModel, body: &Value) -> reqwest::Response {
    let bearer = format!("Bearer {KEY}");
    post(format!("{}/chat/completions", mock.base_url()), &[("authorization", bearer.as_str())], body).await
}

/// The `data:` payloads; the last must be `[DONE]` for a completed stream.
fn chat_chunks(events: &[Event]) -> Vec<Value> {
    assert_eq!(events.last().unwrap().data, "[DONE]");
    events[..events.len() - 1].iter().map(Event::json).collect()
}

fn chat_text(chunks: &[Value]) -> String {
    chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn chat_streams_the_default_text_with_usage() {
    let mock = start().await;
    let events = Sse::new(chat(&mock, &chat_body("Say hello please", &[], true)).await).all().await;
    assert!(events.iter().all(|e| e.name.is_none()));
    let chunks = chat_chunks(&events);
    assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
    assert_eq!(chat_text(&chunks), "Hello from the mock model.");
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "mock-model"));
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 10);
    assert_eq!(usage["usage"]["completion_tokens"], 5);
    assert_eq!(usage["usage"]["total_tokens"], 15);

    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::Completed);
    let r = &mock.requests()[0];
    assert_eq!(r.dialect(), Some(Dialect::ChatCompletions));
    assert_eq!(r.last_user_text(), "Say hello please");
    assert_eq!(r.tool_names(), vec!["bash", "write"]);
    assert_eq!(r.working_directory().as_deref(), Some(OPENCODE_CWD));

    // Without include_usage there is no usage chunk.
    let mut body = chat_body("hi", &[], true);
    body.as_object_mut().unwrap().remove("stream_options");
    let chunks = chat_chunks(&Sse::new(chat(&mock, &body).await).all().await);
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
}

/// The tool calls of a streamed completion: (id, name, arguments put back together).
fn chat_tool_calls(chunks: &[Value]) -> Vec<(String, String, Value)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for c in chunks {
        for tc in c["choices"][0]["delta"]["tool_calls"].as_array().into_iter().flatten() {
            let i = tc["index"].as_u64().unwrap() as usize;
            if let Some(id) = tc["id"].as_str() {
                assert_eq!(i, calls.len());
                calls.push((id.to_owned(), tc["function"]["name"].as_str().unwrap().to_owned(), String::new()));
            }
            calls[i].2.push_str(tc["function"]["arguments"].as_str().unwrap());
        }
    }
    calls.into_iter().map(|(id, name, args)| (id, name, serde_json::from_str(&args).unwrap())).collect()
}

#[tokio::test]
async fn chat_shell_then_tool_message() {
    let mock = start().await;
    let chunks = chat_chunks(&Sse::new(chat(&mock, &chat_body("SHELL: run a command", &[], true)).await).all().await);
    let calls = chat_tool_calls(&chunks);
    assert_eq!(calls.len(), 1);
    let (id, name, args) = &calls[0];
    assert_eq!((id.as_str(), name.as_str()), ("call_mock_1", "bash"));
    assert_eq!(args, &json!({"command": MockConfig::default().shell_command}), "opencode's bash has no description");
    assert_eq!(chunks[chunks.len() - 2]["choices"][0]["finish_reason"], "tool_calls");

    let assistant = json!({"role": "assistant", "content": "", "tool_calls": [{"id": id, "type": "function",
        "function": {"name": "bash", "arguments": args.to_string()}}]});
    let tool = |content: &str| json!({"role": "tool", "tool_call_id": id, "content": content});
    let follow_up = chat_body("SHELL: run a command", &[assistant.clone(), tool("mock-shell-ran\n")], true);
    let chunks = chat_chunks(&Sse::new(chat(&mock, &follow_up).await).all().await);
    assert_eq!(chat_text(&chunks), "The command ran. Tool output was: mock-shell-ran\n");
    let out = mock.requests()[1].trailing_tool_output().unwrap();
    assert_eq!((out.kind.as_str(), out.name.as_deref(), out.call_id.as_str()), ("tool", Some("bash"), "call_mock_1"));

    // Chat completions has no error flag: a rejection (opencode with continue_loop_on_deny) is
    // quoted like any output.
    let rejected = chat_body(
        "SHELL: run a command",
        &[assistant, tool("The user rejected permission to use this specific tool call.")],
        true,
    );
    let chunks = chat_chunks(&Sse::new(chat(&mock, &rejected).await).all().await);
    assert_eq!(
        chat_text(&chunks),
        "The command ran. Tool output was: The user rejected permission to use this specific tool call."
    );
    assert!(!mock.requests()[2].trailing_tool_output().unwrap().is_error);
}

#[tokio::test]
async fn chat_write_title_and_non_streaming() {
    let mock = start().await;
    let chunks = chat_chunks(&Sse::new(chat(&mock, &chat_body("WRITE a file", &[], true)).await).all().await);
    let calls = chat_tool_calls(&chunks);
    assert_eq!(calls[0].1, "write");
    assert_eq!(
        calls[0].2,
        json!({"filePath": format!("{OPENCODE_CWD}/mock_written.txt"), "content": WRITE_FILE_CONTENT})
    );

    // opencode's title request: no tools, "title generator" system prompt.
    let title = json!({"model": "mock-model", "stream": true, "messages": [
        {"role": "system", "content": "You are a title generator. You output ONLY a thread title."},
        {"role": "user", "content": "Generate a title for this conversation:\n"},
        {"role": "user", "content": "SHELL: run a command"}]});
    let chunks = chat_chunks(&Sse::new(chat(&mock, &title).await).all().await);
    assert_eq!(chat_text(&chunks), "Mock title");
    assert_eq!(mock.requests()[1].side_request(), Some(SideRequest::Title));

    let resp = chat(&mock, &chat_body("hello", &[], false)).await;
    assert_eq!(resp.status(), 200);
    let completion: Value = resp.json().await.unwrap();
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(
        completion["choices"][0]["message"],
        json!({"role": "assistant", "content": "Hello from the mock model."})
    );
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
    assert_eq!(completion["usage"]["total_tokens"], 15);

    let completion: Value = chat(&mock, &chat_body("SHELL", &[], false)).await.json().await.unwrap();
    let message = &completion["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(message["tool_calls"][0]["function"]["name"], "bash");
    let args: Value =
        serde_json::from_str(message["tool_calls"][0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["command"], MockConfig::default().shell_command);
    assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn chat_rejects_a_wrong_key_in_openais_shape() {
    let mock = start().await;
    let url = format!("{}/chat/completions", mock.base_url());
    let resp = post(url.clone(), &[("authorization", "Bearer wrong-key-99999")], &chat_body("hi", &[], true)).await;
    assert_eq!(resp.status(), 401);
    let err: Value = resp.json().await.unwrap();
    assert_eq!(err["error"]["code"], "invalid_api_key");
    assert!(err["error"]["message"].as_str().unwrap().starts_with("Incorrect API key provided"));
    let resp = post(url, &[], &chat_body("hi", &[], true)).await;
    assert_eq!(resp.status(), 401);
}

// ---------------------------------------------------------------- across dialects

#[tokio::test]
async fn held_stream_and_stream_ends_in_every_dialect() {
    let mock = start().await;
    // A gate holds a Claude stream open while Gemini and opencode calls are answered.
    let gate = Gate::new();
    mock.push(Reply::held_text(["a", "b"], &gate, ["c"]));
    let mut held = Sse::new(claude(&mock, &claude_body("x", &[], true)).await);
    let mut seen = Vec::new();
    while seen.iter().filter(|e: &&Value| e["type"] == "content_block_delta").count() < 2 {
        seen.push(held.next().await.unwrap().json());
    }
    let events = Sse::new(gemini_stream(&mock, "m", &gemini_body("NOCOMPLETE", &[])).await).all().await;
    assert_eq!(gemini_text(&events), "partial answer");
    assert!(events.iter().all(|e| e.json()["candidates"][0].get("finishReason").is_none()));
    let events = Sse::new(chat(&mock, &chat_body("FAILEVENT", &[], true)).await).all().await;
    assert_eq!(events.last().unwrap().json()["error"]["message"], "mock stream error");
    assert_eq!(mock.requests()[0].outcome, Outcome::Pending);
    gate.open();
    while let Some(e) = held.next().await {
        seen.push(e.json());
    }
    assert_eq!(seen.last().unwrap()["type"], "message_stop");

    let reqs = mock.wait_for(WAIT, |r| r.iter().all(|r| r.outcome != Outcome::Pending)).await.unwrap();
    let outcomes: Vec<Outcome> = reqs.into_iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Completed, Outcome::Closed, Outcome::Failed]);
    assert_eq!(mock.dialect_requests(Dialect::Gemini).len(), 1);
    assert_eq!(mock.model_calls().len(), 3);
}
