//! HTTP side: routing by dialect, the API-key check, the request log, side requests, and the
//! Responses SSE writer (the other dialects' writers are in their own modules).

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::dialect::Dialect;
use crate::keywords::{dialect_keyword_reply, keyword_reply, unscripted_reply};
use crate::pieces::CallContext;
use crate::reply::{Gate, HttpReply, MessageStep, Reply, Step, StreamEnd, StreamReply, add_file_patch_text};
use crate::request::{Outcome, RecordedRequest};
use crate::sse::{Host, Sink, Stop, sse_response};
use crate::{MockConfig, Responder, anthropic, chat, gemini, side};

/// State shared by the handle and the server tasks.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Bumped whenever the request log changes (new request or new outcome).
    pub(crate) changed: watch::Sender<u64>,
    /// Set to true to stop the server and every stream in progress.
    pub(crate) shutdown: watch::Sender<bool>,
}

pub(crate) struct State {
    pub(crate) config: MockConfig,
    pub(crate) queue: VecDeque<Reply>,
    pub(crate) responder: Option<Responder>,
    pub(crate) requests: Vec<RecordedRequest>,
    next_seq: u64,
}

impl Shared {
    pub(crate) fn new(config: MockConfig) -> Self {
        Self {
            state: Mutex::new(State {
                config,
                queue: VecDeque::new(),
                responder: None,
                requests: Vec::new(),
                next_seq: 1,
            }),
            changed: watch::Sender::new(0),
            shutdown: watch::Sender::new(false),
        }
    }

    /// Lock the state. A panic while the lock was held cannot leave it inconsistent in a way that
    /// matters for a test mock, so poisoning is ignored.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn notify_changed(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

impl Host for Shared {
    fn subscribe_shutdown(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    fn set_outcome(&self, seq: u64, outcome: Outcome) {
        {
            let mut st = self.lock();
            if let Some(r) = st.requests.iter_mut().find(|r| r.seq == seq) {
                r.outcome = outcome.clone();
            }
            if let Some(path) = st.config.log_file.clone() {
                append_log(&path, &json!({"seq": seq, "outcome": outcome}));
            }
        }
        self.notify_changed();
    }
}

fn append_log(path: &std::path::Path, value: &Value) {
    let line = format!("{value}\n");
    let result =
        std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(err) = result {
        tracing::warn!(path = %path.display(), %err, "mock-model: cannot write request log");
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The single handler behind every route.
pub(crate) async fn handle(
    AxumState(shared): AxumState<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed: Option<Value> = if body.is_empty() { None } else { serde_json::from_slice(&body).ok() };
    let raw_body =
        if parsed.is_none() && !body.is_empty() { Some(String::from_utf8_lossy(&body).into_owned()) } else { None };
    let mut record = RecordedRequest {
        seq: 0,
        method: method.as_str().to_owned(),
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect(),
        body: parsed,
        raw_body,
        received_at_ms: now_ms(),
        reply: String::new(),
        outcome: Outcome::Pending,
    };
    let dialect = record.dialect();
    // Routes that are not model calls are checked the way codex authenticates (a bearer token).
    let key_dialect = dialect.unwrap_or(Dialect::Responses);
    let side = dialect.and_then(|_| record.side_request());

    // Take what we need from the state, then decide outside the lock (the responder is user code).
    let (config, authorized, by_side, queued, responder) = {
        let mut st = shared.lock();
        record.seq = st.next_seq;
        st.next_seq += 1;
        let authorized = st.config.api_key.as_deref().is_none_or(|key| record.api_key() == Some(key));
        let by_side = side.filter(|_| authorized && st.config.side_requests);
        let queued = if dialect.is_some() && authorized && by_side.is_none() { st.queue.pop_front() } else { None };
        (st.config.clone(), authorized, by_side, queued, st.responder.clone())
    };

    let reply = if !authorized {
        key_dialect.unauthorized(record.api_key())
    } else if let Some(dialect) = dialect {
        match (by_side, queued) {
            (Some(kind), _) => side::reply(&record, kind, &config),
            (None, Some(reply)) => reply,
            (None, None) => match responder.and_then(|f| f(&record)) {
                Some(reply) => reply,
                None if !config.keyword_rules => unscripted_reply(record.seq),
                None if dialect == Dialect::Responses => keyword_reply(&record, &config),
                None => dialect_keyword_reply(&record, &config, dialect),
            },
        }
    } else {
        other_route(&record)
    };

    // How the reply goes out: Responses as before; the other dialects as SSE when the client
    // asked for a stream, else as one JSON body (pacing dropped).
    let answer = match (dialect, reply) {
        (_, Reply::Http(h)) => Answer::Http(key_dialect.adapt_error(h), None),
        (None | Some(Dialect::Responses), Reply::Stream(stream)) => Answer::Responses(stream),
        (Some(d), Reply::Stream(stream)) => {
            let ctx = call_context(d, &record);
            if record.wants_stream() {
                Answer::Stream(ctx, stream)
            } else {
                let label = Reply::Stream(stream.clone()).label().replacen("stream[", "json[", 1);
                Answer::Http(non_streaming(&ctx, &stream), Some(label))
            }
        }
    };
    record.reply = match &answer {
        Answer::Http(h, label) => label.clone().unwrap_or_else(|| format!("http {}", h.status)),
        Answer::Responses(stream) | Answer::Stream(_, stream) => Reply::Stream(stream.clone()).label(),
    };
    if let Some(kind) = by_side {
        // Say in the log why this request did not get the queued reply.
        record.reply = format!("side({}) {}", kind.name(), record.reply);
    }
    if let Answer::Http(h, _) = &answer {
        record.outcome = Outcome::Http { status: h.status };
    }
    let seq = record.seq;
    let responses_ctx = StreamContext {
        seq,
        model: record.model().map(str::to_owned),
        tools: record.tool_names(),
        apply_patch_is_custom: record
            .tool("apply_patch")
            .and_then(|t| t.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t == "custom"),
    };
    {
        let mut st = shared.lock();
        if let Some(path) = st.config.log_file.clone() {
            append_log(&path, &serde_json::to_value(&record).unwrap_or(Value::Null));
        }
        st.requests.push(record);
    }
    shared.notify_changed();

    match answer {
        Answer::Http(h, _) => {
            let mut response = http_response(h);
            if dialect == Some(Dialect::Anthropic) {
                add_request_id(&mut response, seq);
            }
            response
        }
        Answer::Responses(stream) => {
            let end = stream.end.clone();
            sse_response(shared, seq, end, Vec::new(), move |sink| async move {
                let mut writer =
                    SseWriter { sink, sequence: 0, ctx: responses_ctx, ids: HashMap::new(), output_index: 0 };
                writer.write_all(&stream).await
            })
        }
        Answer::Stream(ctx, stream) => stream_in_dialect(shared, ctx, stream),
    }
}

/// What goes back to the client.
enum Answer {
    /// A plain HTTP answer, with the label to log when it is not just `http STATUS`.
    Http(HttpReply, Option<String>),
    /// An SSE stream of Responses events.
    Responses(StreamReply),
    /// An SSE stream in another dialect.
    Stream(CallContext, StreamReply),
}

/// What the dialect writers need to know about `req`.
fn call_context(dialect: Dialect, req: &RecordedRequest) -> CallContext {
    let include_usage = req
        .body
        .as_ref()
        .and_then(|b| b.pointer("/stream_options/include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    CallContext {
        dialect,
        seq: req.seq,
        model: req.model().unwrap_or("mock-model").to_owned(),
        tools: req.offered_tools(),
        cwd: req.working_directory(),
        include_usage,
    }
}

/// Answers for what is not a model call. Kept minimal: the agents were not seen calling any of
/// these with a base URL pointing at a mock, but SDKs probe some of them.
fn other_route(record: &RecordedRequest) -> Reply {
    let path = record.path.trim_end_matches('/');
    if record.method == "GET" && path.ends_with("/models") {
        Reply::http(200, json!({"object": "list", "data": [], "models": []}))
    } else if record.method == "POST" && path.ends_with("/messages/count_tokens") {
        Reply::http(200, json!({"input_tokens": 42}))
    } else if record.method == "POST" && path.ends_with(":countTokens") {
        Reply::http(200, json!({"totalTokens": 42}))
    } else {
        Reply::http(
            404,
            json!({"error": {"message": format!("no route for {} {}", record.method, record.path),
                              "type": "invalid_request_error", "param": null, "code": "not_found"}}),
        )
    }
}

/// A stream reply as the single JSON body of a non-streaming request. A reply that would fail
/// or stop short becomes HTTP 500.
fn non_streaming(ctx: &CallContext, stream: &StreamReply) -> HttpReply {
    let body = match &stream.end {
        StreamEnd::Completed => match ctx.dialect {
            Dialect::Anthropic => anthropic::message_json(stream, ctx),
            Dialect::Gemini => gemini::response_json(stream, ctx),
            Dialect::ChatCompletions | Dialect::Responses => chat::completion_json(stream, ctx),
        },
        StreamEnd::Failed { message, .. } => return error_http(ctx.dialect, message),
        StreamEnd::Close => return error_http(ctx.dialect, "mock: the answer was cut off"),
    };
    HttpReply { status: 200, body, headers: Vec::new() }
}

fn error_http(dialect: Dialect, message: &str) -> HttpReply {
    match dialect.error(500, message) {
        Reply::Http(h) => h,
        Reply::Stream(_) => HttpReply { status: 500, body: Value::Null, headers: Vec::new() },
    }
}

/// Anthropic's SDK reports the `request-id` header in its errors and logs.
fn add_request_id(response: &mut Response, seq: u64) {
    if let Ok(value) = HeaderValue::try_from(format!("req_mock_{seq}")) {
        response.headers_mut().insert(HeaderName::from_static("request-id"), value);
    }
}

fn stream_in_dialect(shared: Arc<Shared>, ctx: CallContext, stream: StreamReply) -> Response {
    let seq = ctx.seq;
    let end = stream.end.clone();
    match ctx.dialect {
        Dialect::Anthropic => {
            let headers = vec![("request-id".to_owned(), format!("req_mock_{seq}"))];
            sse_response(shared, seq, end, headers, move |sink| async move {
                anthropic::Writer::new(sink, ctx).write_all(&stream).await
            })
        }
        Dialect::Gemini => sse_response(shared, seq, end, Vec::new(), move |sink| async move {
            gemini::Writer::new(sink, ctx).write_all(&stream).await
        }),
        Dialect::ChatCompletions | Dialect::Responses => {
            sse_response(shared, seq, end, Vec::new(), move |sink| async move {
                chat::Writer::new(sink, ctx).write_all(&stream).await
            })
        }
    }
}

fn http_response(reply: HttpReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Body::from(reply.body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            headers.insert(name, value);
        }
    }
    response
}

/// What the Responses SSE writer needs to know about the request.
struct StreamContext {
    seq: u64,
    model: Option<String>,
    tools: Vec<String>,
    apply_patch_is_custom: bool,
}

/// Writes Responses events (`response.created`, output items, `response.completed`).
struct SseWriter {
    sink: Sink,
    sequence: u64,
    ctx: StreamContext,
    /// How many ids of each prefix this response has handed out.
    ids: HashMap<&'static str, u32>,
    output_index: u64,
}

impl SseWriter {
    /// `prefix_mock_SEQ` for the first id with this prefix in the response, then `…_SEQ_2`, ….
    fn id(&mut self, prefix: &'static str) -> String {
        let n = self.ids.entry(prefix).or_insert(0);
        *n += 1;
        if *n == 1 { format!("{prefix}_mock_{}", self.ctx.seq) } else { format!("{prefix}_mock_{}_{n}", self.ctx.seq) }
    }

    fn response_id(&self) -> String {
        format!("resp_mock_{}", self.ctx.seq)
    }

    async fn send_raw(&mut self, event: &Value) -> Result<(), Stop> {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("message");
        self.sink.frame(format!("event: {kind}\ndata: {event}\n\n")).await
    }

    async fn send(&mut self, mut event: Value) -> Result<(), Stop> {
        if let Some(obj) = event.as_object_mut() {
            obj.insert("sequence_number".to_owned(), json!(self.sequence));
        }
        self.sequence += 1;
        self.send_raw(&event).await
    }

    async fn pause(&mut self, duration: Duration) -> Result<(), Stop> {
        self.sink.pause(duration).await
    }

    async fn wait_gate(&mut self, gate: &Gate) -> Result<(), Stop> {
        self.sink.wait_gate(gate).await
    }

    async fn write_all(&mut self, stream: &StreamReply) -> Result<(), Stop> {
        let response_id = self.response_id();
        if stream.created {
            let model = self.ctx.model.clone();
            self.send(json!({"type": "response.created", "response": {
                "id": response_id, "object": "response", "status": "in_progress", "model": model, "output": []
            }}))
            .await?;
        }
        for step in &stream.steps {
            self.write_step(step).await?;
        }
        match &stream.end {
            StreamEnd::Completed => {
                let mut response =
                    json!({"id": response_id, "object": "response", "status": "completed", "output": []});
                if let (Some(usage), Some(obj)) = (stream.usage, response.as_object_mut()) {
                    obj.insert("usage".to_owned(), usage.to_json());
                }
                self.send(json!({"type": "response.completed", "response": response})).await
            }
            StreamEnd::Failed { code, message } => {
                self.send(json!({"type": "response.failed", "response": {
                    "id": response_id, "object": "response", "status": "failed",
                    "error": {"code": code, "message": message}
                }}))
                .await
            }
            StreamEnd::Close => Ok(()),
        }
    }

    async fn write_step(&mut self, step: &Step) -> Result<(), Stop> {
        match step {
            Step::Reasoning { summary } => self.write_reasoning(summary).await,
            Step::Message(message) => self.write_message(message).await,
            Step::FunctionCall { name, arguments, call_id } => {
                self.write_function_call(name, arguments, call_id.as_deref()).await
            }
            Step::CustomToolCall { name, input, call_id } => {
                self.write_custom_tool_call(name, input, call_id.as_deref()).await
            }
            Step::Shell { command, escalate } => {
                let (name, args) = shell_call(&self.ctx.tools, command, escalate.as_deref());
                self.write_function_call(name, &args.to_string(), None).await
            }
            Step::ApplyPatch { patch } => self.write_apply_patch(patch).await,
            Step::WriteFile { path, content } => self.write_apply_patch(&add_file_patch_text(path, content)).await,
            Step::Wait(gate) => self.wait_gate(gate).await,
            Step::Sleep(duration) => self.pause(*duration).await,
            Step::RawEvent(event) => self.send_raw(event).await,
        }
    }

    async fn write_apply_patch(&mut self, patch: &str) -> Result<(), Stop> {
        if self.ctx.apply_patch_is_custom {
            self.write_custom_tool_call("apply_patch", patch, None).await
        } else {
            self.write_function_call("apply_patch", &json!({"input": patch}).to_string(), None).await
        }
    }

    fn next_output_index(&mut self) -> u64 {
        let i = self.output_index;
        self.output_index += 1;
        i
    }

    async fn write_reasoning(&mut self, summary: &[String]) -> Result<(), Stop> {
        let id = self.id("rs");
        let index = self.next_output_index();
        let full = summary.concat();
        self.send(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "reasoning", "id": id, "summary": []}}))
            .await?;
        self.send(json!({"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": index,
            "summary_index": 0, "part": {"type": "summary_text", "text": ""}}))
            .await?;
        for delta in summary {
            self.send(json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                "output_index": index, "summary_index": 0, "delta": delta}))
                .await?;
        }
        self.send(json!({"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": index,
            "summary_index": 0, "text": full}))
            .await?;
        self.send(json!({"type": "response.output_item.done", "output_index": index,
            "item": {"type": "reasoning", "id": id,
                     "summary": [{"type": "summary_text", "text": full}], "encrypted_content": null}}))
            .await
    }

    async fn write_message(&mut self, message: &MessageStep) -> Result<(), Stop> {
        let id = self.id("msg");
        let index = self.next_output_index();
        let full = message.text();
        let done_item = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": full, "annotations": []}]});
        if !message.streamed {
            if let Some((_, gate)) = &message.hold {
                self.wait_gate(gate).await?;
            }
            return self
                .send(json!({"type": "response.output_item.done", "output_index": index, "item": done_item}))
                .await;
        }
        self.send(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []}}))
            .await?;
        self.send(json!({"type": "response.content_part.added", "item_id": id, "output_index": index,
            "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
            .await?;
        for (i, chunk) in message.chunks.iter().enumerate() {
            if let Some((_, gate)) = message.hold.as_ref().filter(|(after, _)| *after == i) {
                self.wait_gate(gate).await?;
            }
            self.send(json!({"type": "response.output_text.delta", "item_id": id, "output_index": index,
                "content_index": 0, "delta": chunk}))
                .await?;
            self.pause(message.delay).await?;
        }
        if let Some((_, gate)) = message.hold.as_ref().filter(|(after, _)| *after >= message.chunks.len()) {
            self.wait_gate(gate).await?;
        }
        self.send(json!({"type": "response.output_text.done", "item_id": id, "output_index": index,
            "content_index": 0, "text": full}))
            .await?;
        self.send(json!({"type": "response.content_part.done", "item_id": id, "output_index": index,
            "content_index": 0, "part": {"type": "output_text", "text": full, "annotations": []}}))
            .await?;
        self.send(json!({"type": "response.output_item.done", "output_index": index, "item": done_item})).await
    }

    async fn write_function_call(&mut self, name: &str, arguments: &str, call_id: Option<&str>) -> Result<(), Stop> {
        let id = self.id("fc");
        let generated = self.id("call");
        let call_id = call_id.map(str::to_owned).unwrap_or(generated);
        let index = self.next_output_index();
        self.send(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "function_call", "id": id, "call_id": call_id, "name": name,
                     "arguments": "", "status": "in_progress"}}))
            .await?;
        self.send(json!({"type": "response.function_call_arguments.delta", "item_id": id,
            "output_index": index, "delta": arguments}))
            .await?;
        self.send(json!({"type": "response.function_call_arguments.done", "item_id": id,
            "output_index": index, "arguments": arguments}))
            .await?;
        self.send(json!({"type": "response.output_item.done", "output_index": index,
            "item": {"type": "function_call", "id": id, "call_id": call_id, "name": name,
                     "arguments": arguments, "status": "completed"}}))
            .await
    }

    async fn write_custom_tool_call(&mut self, name: &str, input: &str, call_id: Option<&str>) -> Result<(), Stop> {
        let id = self.id("ctc");
        let generated = self.id("call");
        let call_id = call_id.map(str::to_owned).unwrap_or(generated);
        let index = self.next_output_index();
        self.send(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "custom_tool_call", "id": id, "call_id": call_id, "name": name,
                     "input": "", "status": "in_progress"}}))
            .await?;
        self.send(json!({"type": "response.output_item.done", "output_index": index,
            "item": {"type": "custom_tool_call", "id": id, "call_id": call_id, "name": name,
                     "input": input, "status": "completed"}}))
            .await
    }
}

/// The shell tool call for whichever shell tool codex offered.
fn shell_call(tools: &[String], command: &str, escalate: Option<&str>) -> (&'static str, Value) {
    let offered = |name: &str| tools.iter().any(|t| t == name);
    if offered("exec_command") {
        let mut args = json!({"cmd": command});
        if let (Some(justification), Some(obj)) = (escalate, args.as_object_mut()) {
            obj.insert("sandbox_permissions".to_owned(), json!("require_escalated"));
            obj.insert("justification".to_owned(), json!(justification));
        }
        ("exec_command", args)
    } else if offered("shell_command") {
        ("shell_command", json!({"command": command}))
    } else {
        ("shell", json!({"command": ["bash", "-lc", command]}))
    }
}
