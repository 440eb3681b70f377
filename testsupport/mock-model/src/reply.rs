//! What the mock answers to one model call: either a plain HTTP reply (errors) or an SSE stream
//! made of [`Step`]s. Replies do not depend on the dialect: each dialect's writer renders the
//! same steps in its own wire format (and a non-streaming request gets them as one JSON body).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

/// Patch used by the `PATCH` keyword (see [`Reply::apply_patch`]).
pub const DEFAULT_PATCH: &str =
    "*** Begin Patch\n*** Add File: mock_patch_file.txt\n+created by mock apply_patch\n*** End Patch\n";

/// Objective used by the `GOAL` keyword.
pub const DEFAULT_GOAL_OBJECTIVE: &str = "Mock goal created by the model";

/// Prefix of the text the mock answers with when the request ends with a tool result.
pub const TOOL_OUTPUT_REPLY_PREFIX: &str = "The command ran. Tool output was: ";

/// The text the mock answers with when the request ends with a tool result the agent reports as
/// failed or not run (Claude Code's `is_error`, Gemini CLI's `response.error`).
pub const TOOL_REJECTED_REPLY: &str = "The command was not run.";

/// File the `WRITE` keyword writes (in the agent's working directory when the request states it).
pub const WRITE_FILE_NAME: &str = "mock_written.txt";

/// What the `WRITE` keyword writes.
pub const WRITE_FILE_CONTENT: &str = "written by the mock";

/// The full text of the default reply ("Hello from the mock model.").
pub const DEFAULT_TEXT_CHUNKS: [&str; 5] = ["Hello", " from", " the", " mock", " model."];

/// One scripted answer to a model call, in any dialect.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `200 text/event-stream` with the given steps.
    Stream(StreamReply),
    /// A non-streaming HTTP answer (typically an error). An error body in OpenAI's shape is
    /// rewritten into the shape of the dialect that receives it.
    Http(HttpReply),
}

/// A plain HTTP answer.
#[derive(Clone, Debug)]
pub struct HttpReply {
    pub status: u16,
    pub body: Value,
    /// Extra response headers (for example `retry-after`).
    pub headers: Vec<(String, String)>,
}

/// An SSE answer: `response.created` (optional; Responses only), the steps in order, then the
/// end.
#[derive(Clone, Debug)]
pub struct StreamReply {
    /// Send `response.created` first (default true).
    pub created: bool,
    pub steps: Vec<Step>,
    pub end: StreamEnd,
    /// Usage put into `response.completed` (None: no `usage` field, so codex emits no
    /// `thread/tokenUsage/updated`). Anthropic answers always carry usage (zero when None).
    pub usage: Option<Usage>,
}

/// How an SSE stream finishes.
#[derive(Clone, Debug, PartialEq, Eq)]
///
/// For the other dialects: `Completed` is `message_delta` + `message_stop` (Anthropic), a chunk
/// with `finishReason` (Gemini), a chunk with `finish_reason` then `[DONE]` (chat completions);
/// `Failed` is an `error` event (Anthropic), an error object (Gemini, chat completions) with
/// `code` as the error's type or status. A non-streaming request whose reply fails or closes
/// gets HTTP 500 instead.
pub enum StreamEnd {
    /// `response.completed`, then the body ends.
    Completed,
    /// `response.failed` with this error, then the body ends.
    Failed { code: String, message: String },
    /// The body ends without any terminal event (codex: "stream closed before response.completed").
    Close,
}

/// Token usage reported at the end of an answer: `response.completed` (Responses), `usage` of
/// `message_start`/`message_delta` (Anthropic; `input_tokens` there excludes the cached part),
/// `usageMetadata` (Gemini), the usage chunk (chat completions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 }
    }
}

impl Usage {
    pub(crate) fn to_json(self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_input_tokens},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_output_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        })
    }
}

/// One piece of an SSE answer.
#[derive(Clone, Debug)]
pub enum Step {
    /// A reasoning item whose summary is streamed as these deltas.
    Reasoning { summary: Vec<String> },
    /// An assistant message.
    Message(MessageStep),
    /// A `function_call` output item (arguments is the JSON text codex will parse).
    FunctionCall { name: String, arguments: String, call_id: Option<String> },
    /// A freeform `custom_tool_call` output item.
    CustomToolCall { name: String, input: String, call_id: Option<String> },
    /// Call whichever shell tool the request offers (`exec_command`, `shell_command` or `shell`
    /// for codex; `Bash`, `run_shell_command`, `bash` or `shell` for the other dialects). With
    /// `escalate`, `exec_command` gets `sandbox_permissions:"require_escalated"` and the string as
    /// `justification` (codex only; ignored by the other dialects).
    Shell { command: String, escalate: Option<String> },
    /// Call `apply_patch`: the freeform custom tool if offered (e.g. model `gpt-5.5`), otherwise
    /// a function call with `{"input": patch}`.
    ApplyPatch { patch: String },
    /// Write a file with whichever write tool the request offers (`Write`, `write_file`,
    /// `write`), with the argument names its schema uses. A relative path is made absolute with
    /// the working directory the request states. For codex (Responses) it is an `apply_patch`
    /// that adds the file.
    WriteFile { path: String, content: String },
    /// Stop sending until the gate is opened (or the client goes away).
    Wait(Gate),
    /// Pause this long.
    Sleep(Duration),
    /// Send this JSON object verbatim as one SSE event (`event:` is its `"type"`).
    RawEvent(Value),
}

/// An assistant message, streamed as `output_text.delta` chunks.
#[derive(Clone, Debug)]
pub struct MessageStep {
    pub chunks: Vec<String>,
    /// Pause after each delta.
    pub delay: Duration,
    /// After this many deltas, wait for the gate (or the client's disconnect) before going on.
    pub hold: Option<(usize, Gate)>,
    /// false: send only `response.output_item.done` with the full text (no added/deltas).
    pub streamed: bool,
}

impl MessageStep {
    pub fn new<I, S>(chunks: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self { chunks: chunks.into_iter().map(Into::into).collect(), delay: Duration::ZERO, hold: None, streamed: true }
    }

    /// `count` chunks `"tick0 "`, `"tick1 "`, … (the `SLOW` keyword's text).
    pub fn ticks(count: usize) -> Self {
        Self::new((0..count).map(|i| format!("tick{i} ")))
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Send `after` deltas, then hold the stream open until `gate` is opened.
    pub fn hold_after(mut self, after: usize, gate: &Gate) -> Self {
        self.hold = Some((after, gate.clone()));
        self
    }

    /// Only `response.output_item.done`, no `output_item.added` and no deltas.
    pub fn unstreamed(mut self) -> Self {
        self.streamed = false;
        self
    }

    pub fn text(&self) -> String {
        self.chunks.concat()
    }
}

/// A one-shot latch a test opens to let held streams continue. Cloning shares the latch.
#[derive(Clone, Debug)]
pub struct Gate(Arc<watch::Sender<bool>>);

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    pub fn new() -> Self {
        Self(Arc::new(watch::Sender::new(false)))
    }

    pub fn open(&self) {
        self.0.send_replace(true);
    }

    pub fn is_open(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the gate is open.
    pub async fn opened(&self) {
        let mut rx = self.0.subscribe();
        // The sender lives in self, so wait_for only returns Err if it was dropped: impossible here.
        let _ = rx.wait_for(|open| *open).await;
    }
}

impl StreamReply {
    pub fn new(steps: Vec<Step>) -> Self {
        Self { created: true, steps, end: StreamEnd::Completed, usage: Some(Usage::default()) }
    }
}

fn error_body(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

impl Reply {
    /// A stream made of these steps, ending with `response.completed` and default usage.
    pub fn steps(steps: Vec<Step>) -> Self {
        Reply::Stream(StreamReply::new(steps))
    }

    /// A streamed assistant message with the whole text as one delta.
    pub fn text(text: impl Into<String>) -> Self {
        Self::message(MessageStep::new([text.into()]))
    }

    /// A streamed assistant message, one delta per chunk, `delay` after each.
    pub fn text_chunks<I, S>(chunks: I, delay: Duration) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::message(MessageStep::new(chunks).delay(delay))
    }

    /// `count` deltas `"tick{i} "`, `delay` apart (what the `SLOW` keyword sends).
    pub fn slow_text(count: usize, delay: Duration) -> Self {
        Self::message(MessageStep::ticks(count).delay(delay))
    }

    /// Stream `before` as deltas, then hold the connection open until `gate` opens (or codex
    /// disconnects, e.g. on `turn/interrupt`), then stream `after` and complete.
    pub fn held_text<B, A, S, T>(before: B, gate: &Gate, after: A) -> Self
    where
        B: IntoIterator<Item = S>,
        A: IntoIterator<Item = T>,
        S: Into<String>,
        T: Into<String>,
    {
        let before: Vec<String> = before.into_iter().map(Into::into).collect();
        let n = before.len();
        let mut chunks = before;
        chunks.extend(after.into_iter().map(Into::into));
        Self::message(MessageStep::new(chunks).hold_after(n, gate))
    }

    pub fn message(step: MessageStep) -> Self {
        Self::steps(vec![Step::Message(step)])
    }

    /// The smallest stream codex accepts: `output_item.done` (message) and `response.completed`
    /// with only an id (no `response.created`, no deltas, no usage).
    pub fn minimal(text: impl Into<String>) -> Self {
        Reply::Stream(StreamReply {
            created: false,
            steps: vec![Step::Message(MessageStep::new([text.into()]).unstreamed())],
            end: StreamEnd::Completed,
            usage: None,
        })
    }

    /// Call the offered shell tool with this command (codex: `exec_command`, `shell_command` or
    /// `shell`; Claude Code: `Bash`; Gemini CLI: `run_shell_command`; opencode: `bash`).
    pub fn shell(command: impl Into<String>) -> Self {
        Self::steps(vec![Step::Shell { command: command.into(), escalate: None }])
    }

    /// Call `exec_command` asking for `require_escalated` sandbox permissions.
    pub fn shell_escalated(command: impl Into<String>, justification: impl Into<String>) -> Self {
        Self::steps(vec![Step::Shell { command: command.into(), escalate: Some(justification.into()) }])
    }

    /// Call `apply_patch` with this patch text (`*** Begin Patch` … `*** End Patch`).
    pub fn apply_patch(patch: impl Into<String>) -> Self {
        Self::steps(vec![Step::ApplyPatch { patch: patch.into() }])
    }

    /// A patch that adds one file (path relative to the turn's cwd).
    pub fn add_file_patch(path: &str, contents: &str) -> Self {
        Self::apply_patch(add_file_patch_text(path, contents))
    }

    /// Write a file with the offered write tool (see [`Step::WriteFile`]).
    pub fn write_file(path: impl Into<String>, content: impl Into<String>) -> Self {
        Self::steps(vec![Step::WriteFile { path: path.into(), content: content.into() }])
    }

    /// A `function_call` to any tool, with JSON arguments.
    pub fn function_call(name: impl Into<String>, arguments: &Value) -> Self {
        Self::steps(vec![Step::FunctionCall { name: name.into(), arguments: arguments.to_string(), call_id: None }])
    }

    /// A freeform `custom_tool_call`.
    pub fn custom_tool_call(name: impl Into<String>, input: impl Into<String>) -> Self {
        Self::steps(vec![Step::CustomToolCall { name: name.into(), input: input.into(), call_id: None }])
    }

    /// Call `request_user_input` with these questions (a JSON array of
    /// `{id, header, question, options:[{label, description}]}`). Codex only turns it into
    /// `item/tool/requestUserInput` in plan collaboration mode.
    pub fn request_user_input(questions: Value) -> Self {
        Self::function_call("request_user_input", &json!({ "questions": questions }))
    }

    /// The `ASKUSER` keyword's single "color" question.
    pub fn request_user_input_default() -> Self {
        Self::request_user_input(json!([{
            "id": "color",
            "header": "Color",
            "question": "Which color do you prefer?",
            "options": [
                {"label": "Blue (Recommended)", "description": "Calm."},
                {"label": "Red", "description": "Bold."}
            ]
        }]))
    }

    /// Call `create_goal` with this objective.
    pub fn create_goal(objective: impl Into<String>) -> Self {
        Self::function_call("create_goal", &json!({ "objective": objective.into() }))
    }

    /// Any HTTP status with a JSON body.
    pub fn http(status: u16, body: Value) -> Self {
        Reply::Http(HttpReply { status, body, headers: Vec::new() })
    }

    /// HTTP 500 in OpenAI's error shape.
    pub fn server_error() -> Self {
        Self::http(500, error_body("mock internal error", "server_error", None))
    }

    /// HTTP 429 in OpenAI's error shape.
    pub fn rate_limited() -> Self {
        Self::http(429, error_body("mock rate limit", "rate_limit_exceeded", Some("rate_limit_exceeded")))
    }

    /// HTTP 400 in OpenAI's error shape, with a message no agent takes for a transient error:
    /// the fast way to fail a turn (opencode, Claude Code and Gemini CLI retry 429 and 5xx for
    /// minutes).
    pub fn bad_request() -> Self {
        Self::http(400, error_body("scripted bad request", "invalid_request_error", None))
    }

    /// HTTP 401 as OpenAI answers a request without a usable API key.
    pub fn unauthorized(provided: Option<&str>) -> Self {
        let body = match provided {
            None => error_body(
                "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                "invalid_request_error",
                None,
            ),
            Some(key) => error_body(
                &format!("Incorrect API key provided: {}.", redact_key(key)),
                "invalid_request_error",
                Some("invalid_api_key"),
            ),
        };
        Self::http(401, body)
    }

    /// A stream that sends a partial message and ends without `response.completed`.
    pub fn cut_off(partial: impl Into<String>) -> Self {
        Self::text(partial).ending(StreamEnd::Close)
    }

    /// A stream whose only event after `response.created` is `response.failed`.
    pub fn failed(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::steps(Vec::new()).ending(StreamEnd::Failed { code: code.into(), message: message.into() })
    }

    /// Put a reasoning item (summary streamed as these deltas) before the other steps.
    pub fn with_reasoning<I, S>(mut self, summary: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Reply::Stream(s) = &mut self {
            s.steps.insert(0, Step::Reasoning { summary: summary.into_iter().map(Into::into).collect() });
        }
        self
    }

    /// Append a step (no effect on an HTTP reply).
    pub fn then(mut self, step: Step) -> Self {
        if let Reply::Stream(s) = &mut self {
            s.steps.push(step);
        }
        self
    }

    /// Change how the stream ends (no effect on an HTTP reply).
    pub fn ending(mut self, end: StreamEnd) -> Self {
        if let Reply::Stream(s) = &mut self {
            s.end = end;
        }
        self
    }

    /// Report this usage in `response.completed` (None: omit `usage`).
    pub fn with_usage(mut self, usage: Option<Usage>) -> Self {
        if let Reply::Stream(s) = &mut self {
            s.usage = usage;
        }
        self
    }

    /// Add a response header (HTTP replies only).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Reply::Http(h) = &mut self {
            h.headers.push((name.into(), value.into()));
        }
        self
    }

    /// Short description, kept in the request log.
    pub fn label(&self) -> String {
        match self {
            Reply::Http(h) => format!("http {}", h.status),
            Reply::Stream(s) => {
                let mut parts: Vec<String> = s
                    .steps
                    .iter()
                    .map(|step| match step {
                        Step::Reasoning { .. } => "reasoning".to_owned(),
                        Step::Message(m) => format!("message({} chunks)", m.chunks.len()),
                        Step::FunctionCall { name, .. } => format!("function_call({name})"),
                        Step::CustomToolCall { name, .. } => format!("custom_tool_call({name})"),
                        Step::Shell { escalate: None, .. } => "shell".to_owned(),
                        Step::Shell { escalate: Some(_), .. } => "shell(escalated)".to_owned(),
                        Step::ApplyPatch { .. } => "apply_patch".to_owned(),
                        Step::WriteFile { .. } => "write_file".to_owned(),
                        Step::Wait(_) => "wait".to_owned(),
                        Step::Sleep(_) => "sleep".to_owned(),
                        Step::RawEvent(_) => "raw".to_owned(),
                    })
                    .collect();
                parts.push(match &s.end {
                    StreamEnd::Completed => "completed".to_owned(),
                    StreamEnd::Failed { .. } => "failed".to_owned(),
                    StreamEnd::Close => "close".to_owned(),
                });
                format!("stream[{}]", parts.join(", "))
            }
        }
    }
}

/// `*** Begin Patch` … `*** End Patch` adding one file.
pub(crate) fn add_file_patch_text(path: &str, contents: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in contents.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

fn redact_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_keeps_only_ends() {
        assert_eq!(redact_key("short"), "*****");
        assert_eq!(redact_key("sk-abcdefghijkl"), "sk-********ijkl");
    }

    #[test]
    fn add_file_patch_prefixes_lines() {
        let Reply::Stream(s) = Reply::add_file_patch("a.txt", "one\ntwo") else { panic!("stream") };
        let Step::ApplyPatch { patch } = &s.steps[0] else { panic!("patch") };
        assert_eq!(patch, "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** End Patch\n");
    }
}
