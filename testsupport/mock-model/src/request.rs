//! The request log: what codex sent, and what became of the answer.

use serde::Serialize;
use serde_json::Value;

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
    /// The client went away before the stream was over (codex does this on `turn/interrupt`).
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

/// A tool result codex sent back to the model (`function_call_output` or
/// `custom_tool_call_output` in `input`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// `function_call_output` or `custom_tool_call_output`.
    pub kind: String,
    pub call_id: String,
    /// The output; a non-string output is rendered as JSON text.
    pub output: String,
}

impl RecordedRequest {
    /// First value of a header (name is matched case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// True for `POST …/responses`.
    pub fn is_responses(&self) -> bool {
        self.method == "POST" && self.path.ends_with("/responses")
    }

    /// The `input` array of a Responses request (empty if none).
    pub fn input(&self) -> &[Value] {
        self.body.as_ref().and_then(|b| b.get("input")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `model` from the body.
    pub fn model(&self) -> Option<&str> {
        self.body.as_ref().and_then(|b| b.get("model")).and_then(Value::as_str)
    }

    /// Text of the most recent `user` message in `input` (the keyword rules read this).
    pub fn last_user_text(&self) -> String {
        self.user_texts().pop().unwrap_or_default()
    }

    /// Texts of all `user` messages in `input`, oldest first (includes codex's
    /// `<environment_context>` message).
    pub fn user_texts(&self) -> Vec<String> {
        self.input()
            .iter()
            .filter(|item| item.get("type").and_then(Value::as_str).unwrap_or("message") == "message")
            .filter(|item| item.get("role").and_then(Value::as_str) == Some("user"))
            .map(message_text)
            .collect()
    }

    /// The tool result if the last `input` item is one (i.e. this is a follow-up request after a
    /// tool call).
    pub fn trailing_tool_output(&self) -> Option<ToolOutput> {
        self.input().last().and_then(tool_output)
    }

    /// All tool results in `input`, oldest first.
    pub fn tool_outputs(&self) -> Vec<ToolOutput> {
        self.input().iter().filter_map(tool_output).collect()
    }

    /// Names of the tools offered in `tools` (tool `name`, else its `type`, plus the tools
    /// inside namespaces).
    pub fn tool_names(&self) -> Vec<String> {
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

    /// The top-level tool definition with this `name`.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.body
            .as_ref()
            .and_then(|b| b.get("tools"))
            .and_then(Value::as_array)?
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
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

fn tool_output(item: &Value) -> Option<ToolOutput> {
    let kind = item.get("type").and_then(Value::as_str)?;
    if kind != "function_call_output" && kind != "custom_tool_call_output" {
        return None;
    }
    let output = match item.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Some(ToolOutput {
        kind: kind.to_owned(),
        call_id: item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
        output,
    })
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
        assert_eq!(out.output, "done\n");
        assert_eq!(r.bearer_token(), Some("k1"));
    }
}
