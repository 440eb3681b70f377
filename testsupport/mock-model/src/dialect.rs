//! Which model API a request speaks, and what differs between them outside the answer body:
//! what an error looks like, and which offered tool runs a shell command or writes a file. Where
//! each sends the API key is read by the request log (`RecordedRequest::api_key`).

use serde::Serialize;
use serde_json::{Value, json};

use crate::reply::{HttpReply, Reply};

/// A model API the mock serves. All of them share one port, one request log, one API key and
/// one queue of scripted replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// OpenAI Responses, `POST …/responses` (codex). Base URL: [`crate::MockModel::base_url`].
    Responses,
    /// Anthropic Messages, `POST /v1/messages[?beta=true]` (Claude Code). Base URL
    /// (`ANTHROPIC_BASE_URL`): [`crate::MockModel::url`], without `/v1`.
    Anthropic,
    /// Gemini, `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and
    /// `…:generateContent` (Gemini CLI). Base URL (`GOOGLE_GEMINI_BASE_URL`):
    /// [`crate::MockModel::url`].
    Gemini,
    /// OpenAI chat completions, `POST …/chat/completions` (opencode's `@ai-sdk/openai-compatible`
    /// provider). Base URL: [`crate::MockModel::base_url`].
    ChatCompletions,
}

impl Dialect {
    /// The dialect of a model call to this method and path (no query), if it is one.
    pub fn of(method: &str, path: &str) -> Option<Self> {
        if method != "POST" {
            return None;
        }
        if path.ends_with("/responses") {
            Some(Self::Responses)
        } else if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else if path.ends_with("/chat/completions") {
            Some(Self::ChatCompletions)
        } else if path.contains("/models/")
            && (path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent"))
        {
            Some(Self::Gemini)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Responses => "responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::ChatCompletions => "chat_completions",
        }
    }

    /// An HTTP error with this status in the dialect's JSON shape (what its SDK parses into an
    /// error message).
    pub fn error(self, status: u16, message: &str) -> Reply {
        let body = match self {
            Self::Responses | Self::ChatCompletions => {
                let (kind, code) = match status {
                    401 => ("invalid_request_error", Some("invalid_api_key")),
                    429 => ("rate_limit_exceeded", Some("rate_limit_exceeded")),
                    400..=499 => ("invalid_request_error", None),
                    _ => ("server_error", None),
                };
                json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
            }
            Self::Anthropic => {
                let kind = match status {
                    401 => "authentication_error",
                    403 => "permission_error",
                    404 => "not_found_error",
                    413 => "request_too_large",
                    429 => "rate_limit_error",
                    529 => "overloaded_error",
                    400..=499 => "invalid_request_error",
                    _ => "api_error",
                };
                json!({"type": "error", "error": {"type": kind, "message": message}})
            }
            Self::Gemini => json!({"error": {"code": status, "message": message, "status": google_status(status)}}),
        };
        Reply::http(status, body)
    }

    /// The 401 for a missing or wrong key.
    pub(crate) fn unauthorized(self, presented: Option<&str>) -> Reply {
        match self {
            Self::Responses | Self::ChatCompletions => Reply::unauthorized(presented),
            Self::Anthropic => self.error(401, "invalid x-api-key"),
            Self::Gemini => self.error(401, "API key not valid. Please pass a valid API key."),
        }
    }

    /// Rewrite an error body in OpenAI's shape (what [`Reply::server_error`],
    /// [`Reply::rate_limited`] and friends produce) into this dialect's shape, so the same queued
    /// reply works whichever agent receives it. Other bodies are left alone.
    pub(crate) fn adapt_error(self, reply: HttpReply) -> HttpReply {
        if matches!(self, Self::Responses | Self::ChatCompletions) {
            return reply;
        }
        let openai_message = reply
            .body
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("error"))
            .filter(|e| e.get("type").is_some_and(Value::is_string))
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str);
        match openai_message {
            Some(message) => match self.error(reply.status, message) {
                Reply::Http(mut adapted) => {
                    adapted.headers = reply.headers;
                    adapted
                }
                Reply::Stream(_) => reply,
            },
            None => reply,
        }
    }

    /// Name of the shell tool to call when the request offers none we know.
    fn default_shell_tool(self) -> &'static str {
        match self {
            Self::Anthropic => "Bash",
            Self::Gemini => "run_shell_command",
            Self::ChatCompletions | Self::Responses => "bash",
        }
    }

    fn default_write_tool(self) -> &'static str {
        match self {
            Self::Anthropic => "Write",
            Self::Gemini => "write_file",
            Self::ChatCompletions | Self::Responses => "write",
        }
    }
}

fn google_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        501 => "NOT_IMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// A tool the request offers the model: its name and, when the dialect has one, the JSON schema
/// of its arguments.
#[derive(Clone, Debug)]
pub(crate) struct OfferedTool {
    pub(crate) name: String,
    pub(crate) schema: Option<Value>,
}

impl OfferedTool {
    /// Whether the schema lists this argument. Without a schema we cannot tell, so yes.
    fn takes(&self, arg: &str) -> bool {
        match self.schema.as_ref().and_then(|s| s.get("properties")).and_then(Value::as_object) {
            Some(props) => props.contains_key(arg),
            None => true,
        }
    }
}

/// Shell tools, in the order they are preferred: Claude Code's, Gemini CLI's, opencode's, then
/// generic names.
const SHELL_TOOLS: [&str; 4] = ["Bash", "run_shell_command", "bash", "shell"];

/// File-writing tools: Claude Code's, Gemini CLI's, opencode's.
const WRITE_TOOLS: [&str; 3] = ["Write", "write_file", "write"];

/// What the mock says a shell command is for (Claude Code and Gemini CLI show it to the user).
pub(crate) const SHELL_DESCRIPTION: &str = "Run the mock model's shell command";

fn pick<'a>(tools: &'a [OfferedTool], names: &[&str]) -> Option<&'a OfferedTool> {
    names.iter().find_map(|n| tools.iter().find(|t| t.name == *n))
}

/// The call that runs `command` with the request's shell tool: `{"command": …}`, plus a
/// `description` when the tool's schema has one (Claude Code's `Bash`, Gemini CLI's
/// `run_shell_command`; opencode's `bash` has none).
pub(crate) fn shell_call(dialect: Dialect, tools: &[OfferedTool], command: &str) -> (String, Value) {
    let tool = pick(tools, &SHELL_TOOLS);
    let name = tool.map(|t| t.name.clone()).unwrap_or_else(|| dialect.default_shell_tool().to_owned());
    let mut args = json!({"command": command});
    if tool.is_none_or(|t| t.takes("description"))
        && let Some(obj) = args.as_object_mut()
    {
        obj.insert("description".to_owned(), json!(SHELL_DESCRIPTION));
    }
    (name, args)
}

/// The call that writes `content` to `path` with the request's write tool. The path argument
/// is named as the schema names it (`file_path` for Claude Code and Gemini CLI, `filePath` for
/// opencode). A relative path is made absolute with the agent's working directory when the
/// request tells it, because Claude Code's and opencode's tools ask for absolute paths.
pub(crate) fn write_call(
    dialect: Dialect,
    tools: &[OfferedTool],
    path: &str,
    content: &str,
    cwd: Option<&str>,
) -> (String, Value) {
    let tool = pick(tools, &WRITE_TOOLS);
    let name = tool.map(|t| t.name.clone()).unwrap_or_else(|| dialect.default_write_tool().to_owned());
    let path_arg = match tool {
        Some(t) if t.schema.is_some() => {
            ["file_path", "filePath", "path"].into_iter().find(|a| t.takes(a)).unwrap_or("file_path")
        }
        _ if name == "write" => "filePath",
        _ => "file_path",
    };
    let full_path = match cwd {
        Some(dir) if !path.starts_with('/') => format!("{}/{path}", dir.trim_end_matches('/')),
        _ => path.to_owned(),
    };
    let mut args = serde_json::Map::new();
    args.insert(path_arg.to_owned(), json!(full_path));
    args.insert("content".to_owned(), json!(content));
    (name, Value::Object(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, props: &[&str]) -> OfferedTool {
        let props: serde_json::Map<String, Value> = props.iter().map(|p| ((*p).to_owned(), json!({}))).collect();
        OfferedTool { name: name.to_owned(), schema: Some(json!({"type": "object", "properties": props})) }
    }

    #[test]
    fn routes() {
        assert_eq!(Dialect::of("POST", "/v1/responses"), Some(Dialect::Responses));
        assert_eq!(Dialect::of("POST", "/v1/messages"), Some(Dialect::Anthropic));
        assert_eq!(Dialect::of("POST", "/v1/messages/count_tokens"), None);
        assert_eq!(Dialect::of("POST", "/v1/chat/completions"), Some(Dialect::ChatCompletions));
        assert_eq!(Dialect::of("POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent"), Some(Dialect::Gemini));
        assert_eq!(Dialect::of("POST", "/v1beta/models/x:generateContent"), Some(Dialect::Gemini));
        assert_eq!(Dialect::of("POST", "/v1beta/models/x:countTokens"), None);
        assert_eq!(Dialect::of("GET", "/v1/messages"), None);
    }

    #[test]
    fn shell_and_write_follow_the_schema() {
        let claude =
            [tool("Agent", &[]), tool("Bash", &["command", "description"]), tool("Write", &["file_path", "content"])];
        let (name, args) = shell_call(Dialect::Anthropic, &claude, "ls");
        assert_eq!((name.as_str(), args), ("Bash", json!({"command": "ls", "description": SHELL_DESCRIPTION})));
        let (name, args) = write_call(Dialect::Anthropic, &claude, "a.txt", "x", Some("/w/"));
        assert_eq!((name.as_str(), args), ("Write", json!({"file_path": "/w/a.txt", "content": "x"})));

        let opencode = [tool("bash", &["command", "timeout", "workdir"]), tool("write", &["content", "filePath"])];
        assert_eq!(shell_call(Dialect::ChatCompletions, &opencode, "ls").1, json!({"command": "ls"}));
        let (name, args) = write_call(Dialect::ChatCompletions, &opencode, "/abs.txt", "x", Some("/w"));
        assert_eq!((name.as_str(), args), ("write", json!({"filePath": "/abs.txt", "content": "x"})));

        // Nothing offered: the dialect's usual name.
        assert_eq!(shell_call(Dialect::Gemini, &[], "ls").0, "run_shell_command");
        assert_eq!(write_call(Dialect::Gemini, &[], "a", "b", None).1, json!({"file_path": "a", "content": "b"}));
    }

    #[test]
    fn openai_errors_are_adapted() {
        let Reply::Http(h) = Reply::rate_limited().with_header("retry-after-ms", "5") else { panic!("http") };
        let a = Dialect::Anthropic.adapt_error(h.clone());
        assert_eq!(
            a.body,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "mock rate limit"}})
        );
        assert_eq!(a.headers, vec![("retry-after-ms".to_owned(), "5".to_owned())]);
        let g = Dialect::Gemini.adapt_error(h.clone());
        assert_eq!(g.body["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(Dialect::ChatCompletions.adapt_error(h.clone()).body, h.body);
        // A body already in the dialect's shape is kept.
        let Reply::Http(own) = Dialect::Gemini.error(500, "x") else { panic!("http") };
        assert_eq!(Dialect::Anthropic.adapt_error(own.clone()).body, own.body);
    }
}
