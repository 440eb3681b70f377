//! The readers of what a request says (`last_user_text`, `trailing_tool_output`, `tool_names`,
//! …), which understand every [`Dialect`]: Responses is read here, the other dialects by their
//! modules. They sit above both the request log and those modules, which read a JSON body and
//! know nothing of [`RecordedRequest`], so that neither imports the other.

use serde_json::Value;

use crate::dialect::{Dialect, OfferedTool};
use crate::request::{RecordedRequest, ToolOutput};
use crate::{anthropic, chat, gemini};

impl RecordedRequest {
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
    use crate::request::Outcome;
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
