//! The request log: what the agents sent, and what became of the answer. The readers
//! (`last_user_text`, `trailing_tool_output`, `tool_names`, …) understand every [`Dialect`].

use serde::Serialize;
use serde_json::Value;

use crate::dialect::{Dialect, OfferedTool};
use crate::side::SideRequest;
use crate::{anthropic, chat, gemini, side};

/// What happened to the mock's answer to one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Outcome {
    /// Still being answered (an SSE stream in progress).
    Pending,
    /// A plain (non-SSE) HTTP answer with this status was sent.
    Http { status: u16 },
    /// The stream was sent in full, ending with `response.completed`.
    Completed,
    /// The stream was sent in full, ending with `response.failed`.
    Failed,
    /// The stream was sent in full and closed without a terminal event.
    Closed,
    /// The client went away before the stream was over (codex does this on `turn/interrupt`, the
    /// ACP agents on `session/cancel`).
    ClientDisconnected,
    /// The mock was shut down while the stream was in progress.
    ShutDown,
}

/// One HTTP request the mock received, as logged.
#[derive(Clone, Debug, Serialize)]
pub struct RecordedRequest {
    /// 1-based arrival order over all requests to this mock. Ids in the answer derive from it
    /// (`resp_mock_N`, `msg_mock_N`, `call_mock_N`, …).
    pub seq: u64,
    pub method: String,
    /// Path without the query string, e.g. `/v1/responses`.
    pub path: String,
    pub query: Option<String>,
    /// Header names are lower-case; order as received.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, if it was JSON.
    pub body: Option<Value>,
    /// The body as text (lossy UTF-8) when it was not JSON.
    pub raw_body: Option<String>,
    /// Milliseconds since the Unix epoch when the request arrived.
    pub received_at_ms: u64,
    /// Which answer the mock chose, e.g. `stream[shell, completed]` or `http 401`.
    pub reply: String,
    pub outcome: Outcome,
}

/// A tool result the agent sent back to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// Where it came from: `function_call_output` or `custom_tool_call_output` (Responses),
    /// `tool_result` (Anthropic), `functionResponse` (Gemini), `tool` (chat completions).
    pub kind: String,
    /// The id of the call it answers (`tool_use_id`, `tool_call_id`, Gemini's `id`).
    pub call_id: String,
    /// The tool's name, when the request tells it (Gemini's `functionResponse.name`) or the
    /// call it answers is in the conversation.
    pub name: Option<String>,
    /// The output (text blocks joined; a non-string output as JSON text). For an error, the
    /// error text (Gemini's `response.error`).
    pub output: String,
    /// The agent reports the call as failed or not run: Claude Code's `is_error: true` (also for
    /// a permission it was refused), Gemini CLI's `response.error` (also for a rejected call).
    /// Always false for Responses and chat completions, whose formats have no such flag.
    pub is_error: bool,
}

impl RecordedRequest {
    /// First value of a header (name is matched case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The value of a query parameter (not percent-decoded).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query.as_deref()?.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then_some(value)
        })
    }

    /// True for `POST …/responses`.
    pub fn is_responses(&self) -> bool {
        self.method == "POST" && self.path.ends_with("/responses")
    }

    /// The model API this request speaks, if it is a model call.
    pub fn dialect(&self) -> Option<Dialect> {
        Dialect::of(&self.method, &self.path)
    }

    /// What kind of side request this is (title generation, prompt suggestion, classifier,
    /// structured output), recognised by content; None for main-loop calls and for Responses.
    pub fn side_request(&self) -> Option<SideRequest> {
        side::detect(self)
    }

    /// A model call of the agent's main loop: any dialect, not a side request.
    pub fn is_model_call(&self) -> bool {
        self.dialect().is_some() && self.side_request().is_none()
    }

    /// Whether the client asked for an SSE stream: `stream: true` (Responses, Anthropic, chat
    /// completions) or `:streamGenerateContent` (Gemini).
    pub fn wants_stream(&self) -> bool {
        match self.dialect() {
            Some(Dialect::Gemini) => self.path.ends_with(":streamGenerateContent"),
            Some(_) => self.body.as_ref().and_then(|b| b.get("stream")).and_then(Value::as_bool).unwrap_or(false),
            None => false,
        }
    }

    /// The key the request presents, read the way its dialect sends it (`x-api-key`,
    /// `x-goog-api-key`, `?key=`, or a bearer token).
    pub fn api_key(&self) -> Option<&str> {
        self.dialect().unwrap_or(Dialect::Responses).presented_key(self)
    }

    /// The `input` array of a Responses request (empty if none).
    pub fn input(&self) -> &[Value] {
        self.body.as_ref().and_then(|b| b.get("input")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The conversation: `input` (Responses), `messages` (Anthropic, chat completions) or
    /// `contents` (Gemini); empty if none.
    pub fn conversation(&self) -> &[Value] {
        let key = match self.dialect() {
            Some(Dialect::Anthropic | Dialect::ChatCompletions) => "messages",
            Some(Dialect::Gemini) => "contents",
            Some(Dialect::Responses) | None => "input",
        };
        self.body.as_ref().and_then(|b| b.get(key)).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The model: `model` from the body, or from the path for Gemini (`/models/{model}:…`).
    pub fn model(&self) -> Option<&str> {
        if self.dialect() == Some(Dialect::Gemini) {
            return gemini::model_in_path(&self.path);
        }
        self.body.as_ref().and_then(|b| b.get("model")).and_then(Value::as_str)
    }

    /// Text of the most recent user message (the keyword rules read this).
    pub fn last_user_text(&self) -> String {
        self.user_texts().pop().unwrap_or_default()
    }

    /// Texts of all user messages, oldest first. Responses: every `user` message in `input`
    /// (includes codex's `<environment_context>` message). The other dialects: the user
    /// messages that have text, leaving out the context blocks the agents prepend
    /// (`<system-reminder>`, `<session_context>`) and messages that only carry tool results.
    pub fn user_texts(&self) -> Vec<String> {
        let Some(body) = self.body.as_ref() else { return Vec::new() };
        match self.dialect() {
            Some(Dialect::Anthropic) => anthropic::user_texts(body),
            Some(Dialect::Gemini) => gemini::user_texts(body),
            Some(Dialect::ChatCompletions) => chat::user_texts(body),
            Some(Dialect::Responses) | None => self
                .input()
                .iter()
                .filter(|item| item.get("type").and_then(Value::as_str).unwrap_or("message") == "message")
                .filter(|item| item.get("role").and_then(Value::as_str) == Some("user"))
                .map(message_text)
                .collect(),
        }
    }

    /// The tool result if the conversation ends with one (i.e. this is a follow-up request after
    /// a tool call): the last `input` item (Responses), the last tool result of a final user
    /// message (Anthropic; Claude Code's `system` messages are skipped), the last
    /// `functionResponse` of a final user content (Gemini), a final `tool` message (chat).
    pub fn trailing_tool_output(&self) -> Option<ToolOutput> {
        let body = self.body.as_ref()?;
        match self.dialect() {
            Some(Dialect::Anthropic) => anthropic::trailing_tool_output(body),
            Some(Dialect::Gemini) => gemini::trailing_tool_output(body),
            Some(Dialect::ChatCompletions) => chat::trailing_tool_output(body),
            Some(Dialect::Responses) | None => self.input().last().and_then(|item| tool_output(self.input(), item)),
        }
    }

    /// All tool results in the conversation, oldest first.
    pub fn tool_outputs(&self) -> Vec<ToolOutput> {
        let Some(body) = self.body.as_ref() else { return Vec::new() };
        match self.dialect() {
            Some(Dialect::Anthropic) => anthropic::tool_outputs(body),
            Some(Dialect::Gemini) => gemini::tool_outputs(body),
            Some(Dialect::ChatCompletions) => chat::tool_outputs(body),
            Some(Dialect::Responses) | None => {
                self.input().iter().filter_map(|item| tool_output(self.input(), item)).collect()
            }
        }
    }

    /// The system prompt: `instructions` (Responses), `system` (Anthropic),
    /// `systemInstruction` (Gemini), the `system`/`developer` messages (chat completions).
    pub fn system_text(&self) -> String {
        let Some(body) = self.body.as_ref() else { return String::new() };
        match self.dialect() {
            Some(Dialect::Anthropic) => anthropic::system_text(body),
            Some(Dialect::Gemini) => gemini::system_text(body),
            Some(Dialect::ChatCompletions) => chat::system_text(body),
            Some(Dialect::Responses) | None => {
                body.get("instructions").and_then(Value::as_str).unwrap_or_default().to_owned()
            }
        }
    }

    /// The agent's working directory, as its prompt states it: "Primary working directory: …"
    /// (Claude Code), "Working directory: …" (opencode), the first "Workspace Directories" entry
    /// (Gemini CLI), `<cwd>…</cwd>` (codex). The `WRITE` keyword writes there.
    pub fn working_directory(&self) -> Option<String> {
        let body = self.body.as_ref()?;
        let mut found = None;
        visit_strings(body, &mut |text| {
            if found.is_none() {
                found = cwd_in(text);
            }
        });
        found
    }

    /// The offered tools with their argument schemas.
    pub(crate) fn offered_tools(&self) -> Vec<OfferedTool> {
        let Some(body) = self.body.as_ref() else { return Vec::new() };
        match self.dialect() {
            Some(Dialect::Anthropic) => anthropic::tools(body),
            Some(Dialect::Gemini) => gemini::tools(body),
            Some(Dialect::ChatCompletions) => chat::tools(body),
            Some(Dialect::Responses) | None => self
                .tool_names()
                .into_iter()
                .map(|name| {
                    let schema = self.tool(&name).and_then(|t| t.get("parameters")).cloned();
                    OfferedTool { name, schema }
                })
                .collect(),
        }
    }

    /// Names of the tools offered. Responses: each tool's `name`, else its `type`, plus the tools
    /// inside namespaces. Anthropic: `tools[].name`; Gemini:
    /// `tools[].functionDeclarations[].name`; chat completions: `tools[].function.name`.
    pub fn tool_names(&self) -> Vec<String> {
        if matches!(self.dialect(), Some(Dialect::Anthropic | Dialect::Gemini | Dialect::ChatCompletions)) {
            return self.offered_tools().into_iter().map(|t| t.name).collect();
        }
        let mut names = Vec::new();
        let tools = self.body.as_ref().and_then(|b| b.get("tools")).and_then(Value::as_array);
        for tool in tools.into_iter().flatten() {
            if let Some(name) = tool.get("name").or_else(|| tool.get("type")).and_then(Value::as_str) {
                names.push(name.to_owned());
            }
            for sub in tool.get("tools").and_then(Value::as_array).into_iter().flatten() {
                if let Some(name) = sub.get("name").and_then(Value::as_str) {
                    names.push(name.to_owned());
                }
            }
        }
        names
    }

    /// The top-level tool definition with this `name` (for Gemini, the function declaration; for
    /// chat completions, the `{"type": "function", "function": …}` entry).
    pub fn tool(&self, name: &str) -> Option<&Value> {
        let tools = self.body.as_ref().and_then(|b| b.get("tools")).and_then(Value::as_array)?;
        match self.dialect() {
            Some(Dialect::Gemini) => tools
                .iter()
                .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
                .flatten()
                .find(|d| d.get("name").and_then(Value::as_str) == Some(name)),
            Some(Dialect::ChatCompletions) => {
                tools.iter().find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name))
            }
            _ => tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name)),
        }
    }

    /// The JSON schema of a tool's arguments (`parameters`, `input_schema`,
    /// `parametersJsonSchema`).
    pub fn tool_schema(&self, name: &str) -> Option<Value> {
        self.offered_tools().into_iter().find(|t| t.name == name).and_then(|t| t.schema)
    }

    pub fn offers_tool(&self, name: &str) -> bool {
        self.tool_names().iter().any(|n| n == name)
    }

    /// The `x-codex-turn-metadata` header parsed as JSON (`thread_id`, `turn_id`,
    /// `request_kind`, `sandbox`, `model`, …).
    pub fn turn_metadata(&self) -> Option<Value> {
        self.header("x-codex-turn-metadata").and_then(|v| serde_json::from_str(v).ok())
    }

    /// `request_kind` from the turn metadata (`"turn"` or `"compaction"`).
    pub fn request_kind(&self) -> Option<String> {
        self.turn_metadata()?.get("request_kind")?.as_str().map(str::to_owned)
    }

    /// The codex thread id (`thread-id` header).
    pub fn thread_id(&self) -> Option<&str> {
        self.header("thread-id")
    }

    /// The bearer token from `authorization`, if any.
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self.header("authorization")?;
        let (scheme, token) = value.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then_some(token.trim())
    }
}

fn message_text(item: &Value) -> String {
    match item.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().concat()
        }
        _ => String::new(),
    }
}

fn tool_output(input: &[Value], item: &Value) -> Option<ToolOutput> {
    let kind = item.get("type").and_then(Value::as_str)?;
    if kind != "function_call_output" && kind != "custom_tool_call_output" {
        return None;
    }
    let output = match item.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_owned();
    let name = input
        .iter()
        .filter(|i| matches!(i.get("type").and_then(Value::as_str), Some("function_call" | "custom_tool_call")))
        .find(|i| i.get("call_id").and_then(Value::as_str) == Some(call_id.as_str()))
        .and_then(|i| i.get("name").and_then(Value::as_str))
        .map(str::to_owned);
    Some(ToolOutput { kind: kind.to_owned(), call_id, name, output, is_error: false })
}

/// Text blocks the agents put in front of the user's own words: Claude Code's
/// `<system-reminder>` and Gemini CLI's `<session_context>`. The keyword rules skip them (they
/// quote file listings and instructions, not the user).
pub(crate) fn is_context_wrapper(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<system-reminder>") || t.starts_with("<session_context>")
}

/// Every string in a request body except the tool definitions, depth first.
fn visit_strings(value: &Value, f: &mut dyn FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| visit_strings(v, f)),
        Value::Object(map) => {
            map.iter().filter(|(k, _)| k.as_str() != "tools").for_each(|(_, v)| visit_strings(v, f));
        }
        _ => {}
    }
}

/// The absolute working directory stated in this text, if any.
fn cwd_in(text: &str) -> Option<String> {
    const LINE_MARKERS: [&str; 3] =
        ["Primary working directory: ", "Working directory: ", "**Workspace Directories:**\n  - "];
    for marker in LINE_MARKERS {
        if let Some((_, rest)) = text.split_once(marker) {
            let line = rest.lines().next().unwrap_or_default().trim();
            if line.starts_with('/') {
                return Some(line.to_owned());
            }
        }
    }
    let (_, rest) = text.split_once("<cwd>")?;
    let (dir, _) = rest.split_once("</cwd>")?;
    let dir = dir.trim();
    dir.starts_with('/').then(|| dir.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(body: Value) -> RecordedRequest {
        RecordedRequest {
            seq: 1,
            method: "POST".into(),
            path: "/v1/responses".into(),
            query: None,
            headers: vec![("authorization".into(), "Bearer k1".into())],
            body: Some(body),
            raw_body: None,
            received_at_ms: 0,
            reply: String::new(),
            outcome: Outcome::Pending,
        }
    }

    #[test]
    fn reads_user_text_tools_and_outputs() {
        let r = req(json!({
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run SHELL"}]},
                {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "done\n"}
            ],
            "tools": [
                {"type": "function", "name": "exec_command"},
                {"type": "web_search"},
                {"type": "namespace", "name": "multi_agent_v1", "tools": [{"name": "spawn_agent"}]}
            ]
        }));
        assert_eq!(r.last_user_text(), "run SHELL");
        assert_eq!(r.user_texts().len(), 2);
        assert_eq!(r.tool_names(), vec!["exec_command", "web_search", "multi_agent_v1", "spawn_agent"]);
        let out = r.trailing_tool_output().expect("tool output");
        assert_eq!(out.call_id, "c1");
        assert_eq!(out.name.as_deref(), Some("exec_command"));
        assert_eq!(r.dialect(), Some(Dialect::Responses));
        assert_eq!(r.side_request(), None);
        assert_eq!(out.output, "done\n");
        assert_eq!(r.bearer_token(), Some("k1"));
    }
}
