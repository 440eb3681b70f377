//! Exercise the mock over real HTTP with a tiny HTTP/1.1 client (no client library).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use ensemble_mock_model::{CodexProvider, Gate, MessageStep, MockConfig, MockModel, Outcome, Reply, Step, StreamEnd};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------- client

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    remaining: Option<usize>,
    done: bool,
    sse_buf: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Next piece of the body, None at its end.
    async fn next_bytes(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        if self.chunked {
            let mut line = String::new();
            self.reader.read_line(&mut line).await.unwrap();
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap(), 16).unwrap_or(0);
            if size == 0 {
                self.done = true;
                return None;
            }
            let mut buf = vec![0; size + 2];
            self.reader.read_exact(&mut buf).await.unwrap();
            buf.truncate(size);
            return Some(buf);
        }
        if let Some(left) = self.remaining {
            let mut buf = vec![0; left];
            self.reader.read_exact(&mut buf).await.unwrap();
            self.done = true;
            return Some(buf);
        }
        let mut buf = vec![0; 8192];
        let n = self.reader.read(&mut buf).await.unwrap();
        if n == 0 {
            self.done = true;
            return None;
        }
        buf.truncate(n);
        Some(buf)
    }

    async fn body(mut self) -> Vec<u8> {
        let mut all = Vec::new();
        while let Some(b) = self.next_bytes().await {
            all.extend(b);
        }
        all
    }

    async fn json(self) -> Value {
        serde_json::from_slice(&self.body().await).unwrap()
    }

    /// Next SSE event as (event name, data), None when the body ends.
    async fn next_event(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(pos) = self.sse_buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.sse_buf.drain(..pos + 2).collect();
                let text = String::from_utf8(frame).unwrap();
                let mut name = String::new();
                let mut data = String::new();
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                return Some((name, serde_json::from_str(&data).unwrap()));
            }
            let more = self.next_bytes().await?;
            self.sse_buf.extend(more);
        }
    }

    async fn events(mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some((name, data)) = self.next_event().await {
            assert_eq!(data["type"], name, "event: line matches data.type");
            out.push(data);
        }
        assert!(self.sse_buf.is_empty(), "no trailing partial event");
        out
    }
}

async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Response {
    let stream = TcpStream::connect(addr).await.unwrap();
    let mut reader = BufReader::new(stream);
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-length: {}\r\n", body.len());
    if !body.is_empty() {
        head.push_str("content-type: application/json\r\naccept: text/event-stream\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    reader.get_mut().write_all(head.as_bytes()).await.unwrap();
    reader.get_mut().write_all(body.as_bytes()).await.unwrap();

    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.unwrap();
    let status: u16 = status_line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap();
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let find = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let chunked = find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let remaining = find("content-length").map(|v| v.parse().unwrap());
    Response { status, headers, reader, chunked, remaining, done: false, sse_buf: Vec::new() }
}

/// A Responses request body shaped like codex's.
fn body_with(user_text: &str, extra_input: &[Value], tools: &[Value]) -> Value {
    let mut input = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are codex."}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": user_text}]}),
    ];
    input.extend(extra_input.iter().cloned());
    json!({"model": "mock-model", "stream": true, "input": input, "tools": tools, "tool_choice": "auto"})
}

fn exec_command_tool() -> Value {
    json!({"type": "function", "name": "exec_command", "parameters": {"type": "object"}})
}

async fn post(mock: &MockModel, body: &Value) -> Response {
    request(mock.addr(), "POST", "/v1/responses", &[], Some(body)).await
}

async fn start(config: MockConfig) -> MockModel {
    MockModel::start(config).await.unwrap()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn deltas(events: &[Value]) -> String {
    events.iter().filter(|e| e["type"] == "response.output_text.delta").map(|e| e["delta"].as_str().unwrap()).collect()
}

fn done_items(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["type"] == "response.output_item.done").map(|e| &e["item"]).collect()
}

// ---------------------------------------------------------------- tests

#[tokio::test]
async fn text_reply_has_the_full_sse_sequence() {
    let mock = start(MockConfig::default().text_delay(Duration::ZERO)).await;
    assert_eq!(mock.base_url(), format!("http://{}/v1", mock.addr()));
    let resp = request(
        mock.addr(),
        "POST",
        "/v1/responses",
        &[("thread-id", "t-1"), ("x-codex-turn-metadata", r#"{"request_kind":"turn","turn_id":"u-1"}"#)],
        Some(&body_with("Say hello please", &[], &[])),
    )
    .await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    let events = resp.events().await;
    let mut expected = vec!["response.created", "response.output_item.added", "response.content_part.added"];
    expected.extend(["response.output_text.delta"; 5]);
    expected.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(types(&events), expected);
    assert_eq!(deltas(&events), "Hello from the mock model.");
    let seqs: Vec<u64> = events.iter().map(|e| e["sequence_number"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>());
    let item = done_items(&events)[0];
    assert_eq!(item["id"], "msg_mock_1");
    assert_eq!(item["content"][0]["text"], "Hello from the mock model.");
    let completed = events.last().unwrap();
    assert_eq!(completed["response"]["id"], "resp_mock_1");
    assert_eq!(completed["response"]["usage"]["total_tokens"], 15);

    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::Completed);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert!(r.is_responses());
    assert_eq!(r.last_user_text(), "Say hello please");
    assert_eq!(r.thread_id(), Some("t-1"));
    assert_eq!(r.request_kind().as_deref(), Some("turn"));
    assert_eq!(r.model(), Some("mock-model"));
}

#[tokio::test]
async fn http_error_keywords() {
    let mock = start(MockConfig::default()).await;
    let r500 = post(&mock, &body_with("please HTTP500", &[], &[])).await;
    assert_eq!(r500.status, 500);
    let body = r500.json().await;
    assert_eq!(body["error"]["type"], "server_error");
    assert!(body["error"]["message"].is_string());

    let r429 = post(&mock, &body_with("please HTTP429", &[], &[])).await;
    assert_eq!(r429.status, 429);
    assert_eq!(r429.json().await["error"]["type"], "rate_limit_exceeded");

    let outcomes: Vec<Outcome> = mock.requests().into_iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, vec![Outcome::Http { status: 500 }, Outcome::Http { status: 429 }]);
}

#[tokio::test]
async fn stream_failure_keywords() {
    let mock = start(MockConfig::default()).await;
    let events = post(&mock, &body_with("NOCOMPLETE", &[], &[])).await.events().await;
    assert_eq!(events.first().unwrap()["type"], "response.created");
    assert!(!types(&events).contains(&"response.completed"));
    assert_eq!(deltas(&events), "partial answer");

    let events = post(&mock, &body_with("FAILEVENT", &[], &[])).await.events().await;
    assert_eq!(types(&events), vec!["response.created", "response.failed"]);
    assert_eq!(events[1]["response"]["error"]["message"], "mock response.failed");

    let events = post(&mock, &body_with("MINIMAL", &[], &[])).await.events().await;
    assert_eq!(types(&events), vec!["response.output_item.done", "response.completed"]);
    assert!(events[1]["response"].get("usage").is_none());

    let outcomes = mock.wait_for(WAIT, |r| r.iter().all(|r| r.outcome != Outcome::Pending)).await.unwrap();
    let outcomes: Vec<Outcome> = outcomes.into_iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, vec![Outcome::Closed, Outcome::Failed, Outcome::Completed]);
}

#[tokio::test]
async fn api_key_is_enforced_in_openai_shape() {
    let mock = start(MockConfig::default().api_key("sk-test-key-0123")).await;
    let body = body_with("hi", &[], &[]);

    let missing = request(mock.addr(), "POST", "/v1/responses", &[], Some(&body)).await;
    assert_eq!(missing.status, 401);
    let err = missing.json().await;
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert_eq!(err["error"]["code"], Value::Null);
    assert!(err["error"]["message"].as_str().unwrap().contains("didn't provide an API key"));

    let wrong =
        request(mock.addr(), "POST", "/v1/responses", &[("authorization", "Bearer sk-wrong-key-9999")], Some(&body))
            .await;
    assert_eq!(wrong.status, 401);
    let err = wrong.json().await;
    assert_eq!(err["error"]["code"], "invalid_api_key");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Incorrect API key provided: sk-") && !message.contains("wrong-key"), "{message}");

    let right =
        request(mock.addr(), "POST", "/v1/responses", &[("Authorization", "Bearer sk-test-key-0123")], Some(&body))
            .await;
    assert_eq!(right.status, 200);
    assert_eq!(deltas(&right.events().await), "Hello from the mock model.");

    // Rejected requests are logged too, and did not consume a queued reply.
    mock.push(Reply::text("queued"));
    let again = request(mock.addr(), "POST", "/v1/responses", &[], Some(&body)).await;
    assert_eq!(again.status, 401);
    assert_eq!(mock.queued(), 1);
    let statuses: Vec<String> = mock.requests().iter().map(|r| r.reply.clone()).collect();
    assert_eq!(statuses[..2], ["http 401".to_owned(), "http 401".to_owned()]);

    // The key can be changed (or dropped) while running.
    mock.update_config(|c| c.api_key = None);
    let open = request(mock.addr(), "POST", "/v1/responses", &[], Some(&body)).await;
    assert_eq!(deltas(&open.events().await), "queued");
}

#[tokio::test]
async fn shell_keyword_calls_the_offered_tool_and_quotes_the_output() {
    let mock = start(MockConfig::default().shell_command("echo hi")).await;
    let events = post(&mock, &body_with("run a SHELL command", &[], &[exec_command_tool()])).await.events().await;
    assert_eq!(
        types(&events),
        vec![
            "response.created",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let call = done_items(&events)[0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["name"], "exec_command");
    assert_eq!(call["call_id"], "call_mock_1");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"cmd": "echo hi"}));

    // The follow-up carries the tool result: answered with a message quoting it.
    let follow_up = body_with(
        "run a SHELL command",
        &[
            call.clone(),
            json!({"type": "function_call_output", "call_id": "call_mock_1", "output": "Process exited with code 0\nOutput:\nhi\n"}),
        ],
        &[exec_command_tool()],
    );
    let events = post(&mock, &follow_up).await.events().await;
    assert_eq!(deltas(&events), "The command ran. Tool output was: Process exited with code 0\nOutput:\nhi\n");
    let out = mock.requests()[1].trailing_tool_output().unwrap();
    assert_eq!(out.call_id, "call_mock_1");

    // ESCALATE asks for escalated sandbox permissions.
    let events = post(&mock, &body_with("SHELL ESCALATE", &[], &[exec_command_tool()])).await.events().await;
    let args: Value = serde_json::from_str(done_items(&events)[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["sandbox_permissions"], "require_escalated");
    assert!(args["justification"].is_string());

    // Only `shell_command` offered: that one is used.
    let tools = [json!({"type": "function", "name": "shell_command"})];
    let events = post(&mock, &body_with("SHELL", &[], &tools)).await.events().await;
    let call = done_items(&events)[0];
    assert_eq!(call["name"], "shell_command");
    assert_eq!(
        serde_json::from_str::<Value>(call["arguments"].as_str().unwrap()).unwrap(),
        json!({"command": "echo hi"})
    );
}

#[tokio::test]
async fn patch_uses_the_freeform_tool_when_offered() {
    let mock = start(MockConfig::default()).await;
    let tools = [json!({"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}})];
    let events = post(&mock, &body_with("PATCH it", &[], &tools)).await.events().await;
    let call = done_items(&events)[0];
    assert_eq!(call["type"], "custom_tool_call");
    assert_eq!(call["name"], "apply_patch");
    assert!(call["input"].as_str().unwrap().starts_with("*** Begin Patch\n*** Add File: mock_patch_file.txt\n"));

    let events = post(&mock, &body_with("PATCH it", &[], &[])).await.events().await;
    let call = done_items(&events)[0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["name"], "apply_patch");

    let follow_up = body_with(
        "PATCH it",
        &[json!({"type": "custom_tool_call_output", "call_id": "call_mock_1", "output": "Success."})],
        &tools,
    );
    assert_eq!(deltas(&post(&mock, &follow_up).await.events().await), "The command ran. Tool output was: Success.");

    // WRITE is an apply_patch that adds mock_written.txt (codex has no write tool).
    let events = post(&mock, &body_with("WRITE it", &[], &tools)).await.events().await;
    let call = done_items(&events)[0];
    assert_eq!(call["name"], "apply_patch");
    assert_eq!(call["input"], "*** Begin Patch\n*** Add File: mock_written.txt\n+written by the mock\n*** End Patch\n");
    assert_eq!(mock.requests()[3].trailing_tool_output(), None);
    assert_eq!(mock.requests()[2].tool_outputs()[0].name, None, "the call is not in that request's input");

    // HTTP400 fails fast (no agent retries it).
    let resp = post(&mock, &body_with("HTTP400", &[], &[])).await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.json().await["error"]["message"], "scripted bad request");
}

#[tokio::test]
async fn other_tool_keywords_and_reasoning() {
    let mock = start(MockConfig::default().text_delay(Duration::ZERO)).await;
    let events = post(&mock, &body_with("GOAL", &[], &[])).await.events().await;
    let call = done_items(&events)[0];
    assert_eq!(call["name"], "create_goal");
    assert_eq!(call["arguments"], json!({"objective": "Mock goal created by the model"}).to_string());

    let events = post(&mock, &body_with("ASKUSER", &[], &[])).await.events().await;
    let call = done_items(&events)[0];
    assert_eq!(call["name"], "request_user_input");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["questions"][0]["id"], "color");

    let events = post(&mock, &body_with("REASON first", &[], &[])).await.events().await;
    let t = types(&events);
    assert_eq!(t[1..3], ["response.output_item.added", "response.reasoning_summary_part.added"]);
    let items = done_items(&events);
    assert_eq!(items[0]["type"], "reasoning");
    assert_eq!(items[0]["summary"][0]["text"], "Thinking about it.");
    assert_eq!(items[1]["type"], "message");
    // distinct output indexes per item
    let idx: Vec<u64> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| e["output_index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, vec![0, 1]);
}

#[tokio::test]
async fn slow_pacing_is_configurable() {
    let mock = start(MockConfig::default().slow_pacing(4, Duration::from_millis(1))).await;
    let events = post(&mock, &body_with("be SLOW", &[], &[])).await.events().await;
    assert_eq!(deltas(&events), "tick0 tick1 tick2 tick3 ");
    mock.update_config(|c| c.slow_deltas = 2);
    let events = post(&mock, &body_with("be SLOW", &[], &[])).await.events().await;
    assert_eq!(deltas(&events), "tick0 tick1 ");
}

#[tokio::test]
async fn queue_then_responder_then_keywords() {
    let mock = start(MockConfig::default().text_delay(Duration::ZERO)).await;
    mock.push_all([
        Reply::text_chunks(["a", "b", "c"], Duration::ZERO),
        Reply::function_call("my_tool", &json!({"x": 1})),
        Reply::server_error(),
    ]);
    mock.set_responder(|req| req.last_user_text().contains("ROUTE").then(|| Reply::text("routed")));

    let body = body_with("hello", &[], &[]);
    assert_eq!(deltas(&post(&mock, &body).await.events().await), "abc");
    let events = post(&mock, &body).await.events().await;
    assert_eq!(done_items(&events)[0]["name"], "my_tool");
    assert_eq!(post(&mock, &body).await.status, 500);
    assert_eq!(mock.queued(), 0);
    assert_eq!(deltas(&post(&mock, &body_with("ROUTE me", &[], &[])).await.events().await), "routed");
    assert_eq!(deltas(&post(&mock, &body).await.events().await), "Hello from the mock model.");
    mock.clear_responder();
    assert_eq!(
        deltas(&post(&mock, &body_with("ROUTE me", &[], &[])).await.events().await),
        "Hello from the mock model."
    );

    let labels: Vec<String> = mock.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(labels[0], "stream[message(3 chunks), completed]");
    assert_eq!(labels[1], "stream[function_call(my_tool), completed]");
    assert_eq!(labels[2], "http 500");
}

#[tokio::test]
async fn composed_stream_with_usage_and_end() {
    let mock = start(MockConfig::default()).await;
    mock.push(
        Reply::steps(vec![
            Step::Message(MessageStep::new(["one"])),
            Step::Message(MessageStep::new(["two"]).unstreamed()),
            Step::CustomToolCall { name: "t".into(), input: "in".into(), call_id: Some("my-call".into()) },
            Step::RawEvent(json!({"type": "response.custom_event", "x": 1})),
        ])
        .with_usage(None)
        .ending(StreamEnd::Failed { code: "c".into(), message: "m".into() }),
    );
    let events = post(&mock, &body_with("x", &[], &[])).await.events().await;
    let items = done_items(&events);
    assert_eq!(items[0]["id"], "msg_mock_1");
    assert_eq!(items[1]["id"], "msg_mock_1_2");
    assert_eq!(items[1]["content"][0]["text"], "two");
    assert_eq!(items[2]["call_id"], "my-call");
    let raw = events.iter().find(|e| e["type"] == "response.custom_event").unwrap();
    assert_eq!(raw, &json!({"type": "response.custom_event", "x": 1}));
    assert_eq!(events.last().unwrap()["type"], "response.failed");
}

#[tokio::test]
async fn held_stream_waits_for_the_gate() {
    let mock = start(MockConfig::default()).await;
    let gate = Gate::new();
    mock.push(Reply::held_text(["a", "b"], &gate, ["c"]));
    let mut resp = post(&mock, &body_with("x", &[], &[])).await;
    let mut seen = Vec::new();
    while seen.iter().filter(|e: &&Value| e["type"] == "response.output_text.delta").count() < 2 {
        seen.push(resp.next_event().await.unwrap().1);
    }
    assert_eq!(mock.requests()[0].outcome, Outcome::Pending);
    gate.open();
    while let Some((_, e)) = resp.next_event().await {
        seen.push(e);
    }
    assert_eq!(deltas(&seen), "abc");
    assert_eq!(seen.last().unwrap()["type"], "response.completed");
    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::Completed);
}

#[tokio::test]
async fn client_disconnect_is_recorded() {
    // Like codex on turn/interrupt: read a few deltas, then drop the connection while the mock
    // is holding the stream open (no writes pending).
    let mock = start(MockConfig::default()).await;
    let gate = Gate::new();
    mock.push(Reply::message(MessageStep::ticks(10).hold_after(3, &gate)));
    let mut resp = post(&mock, &body_with("x", &[], &[])).await;
    let mut n = 0;
    while n < 3 {
        if resp.next_event().await.unwrap().1["type"] == "response.output_text.delta" {
            n += 1;
        }
    }
    drop(resp);
    assert_eq!(mock.wait_for_outcome(1, WAIT).await.unwrap(), Outcome::ClientDisconnected);

    // Same with a slow (sleeping) stream.
    mock.push(Reply::slow_text(100, Duration::from_secs(1)));
    let mut resp = post(&mock, &body_with("x", &[], &[])).await;
    while resp.next_event().await.unwrap().1["type"] != "response.output_text.delta" {}
    drop(resp);
    assert_eq!(mock.wait_for_outcome(2, WAIT).await.unwrap(), Outcome::ClientDisconnected);
}

#[tokio::test]
async fn unscripted_requests_fail_when_keywords_are_off() {
    let mock = start(MockConfig::default().keyword_rules(false)).await;
    mock.push(Reply::text("only one"));
    assert_eq!(deltas(&post(&mock, &body_with("SHELL", &[], &[])).await.events().await), "only one");
    let resp = post(&mock, &body_with("SHELL", &[], &[])).await;
    assert_eq!(resp.status, 500);
    assert!(resp.json().await["error"]["message"].as_str().unwrap().contains("no scripted reply"));
}

#[tokio::test]
async fn other_routes() {
    let mock = start(MockConfig::default()).await;
    let models = request(mock.addr(), "GET", "/v1/models", &[], None).await;
    assert_eq!(models.status, 200);
    assert_eq!(models.json().await["object"], "list");
    let missing = request(mock.addr(), "POST", "/v1/embeddings", &[], Some(&json!({}))).await;
    assert_eq!(missing.status, 404);
    let tokens = request(mock.addr(), "POST", "/v1/messages/count_tokens", &[], Some(&json!({}))).await;
    assert_eq!(tokens.json().await["input_tokens"], 42);
    assert_eq!(mock.responses_requests().len(), 0);
    assert!(mock.model_calls().is_empty());
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test]
async fn wait_for_times_out_with_the_log() {
    let mock = start(MockConfig::default()).await;
    let err = mock.wait_for_responses_requests(1, Duration::from_millis(20)).await.unwrap_err();
    assert!(err.requests.is_empty());
    assert!(err.to_string().contains("not met"));
}

#[tokio::test]
async fn shutdown_ends_held_streams_and_stops_listening() {
    let mock = start(MockConfig::default()).await;
    let addr = mock.addr();
    let gate = Gate::new();
    mock.push(Reply::held_text(["a"], &gate, ["b"]));
    let mut resp = post(&mock, &body_with("x", &[], &[])).await;
    while resp.next_event().await.unwrap().1["type"] != "response.output_text.delta" {}
    mock.shutdown().await;
    // The stream ends without response.completed and the port is closed.
    let mut rest = Vec::new();
    while let Some((_, e)) = resp.next_event().await {
        rest.push(e);
    }
    assert!(!types(&rest).contains(&"response.completed"));
    assert!(TcpStream::connect(addr).await.is_err());
}

#[test]
fn codex_args_point_at_the_mock() {
    let args = CodexProvider::default().model("gpt-5.5").env_key("MOCK_API_KEY").args("http://127.0.0.1:1/v1");
    assert_eq!(args.iter().filter(|a| *a == "-c").count() * 2, args.len());
    assert!(args.contains(&"model=\"gpt-5.5\"".to_owned()));
    assert!(args.contains(&"model_providers.mock.stream_max_retries=0".to_owned()));
    let toml = CodexProvider::default().config_toml("http://127.0.0.1:1/v1");
    assert!(toml.contains("[model_providers.mock]\n"));
    assert!(!toml.contains("env_key"));
}
