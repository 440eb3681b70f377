//! The request log: what the agents sent, and what became of the answer. Only the readers that
//! need no dialect module are here (headers, the API key, whether a stream is wanted): the dialect
//! modules take [`ToolOutput`] from this file, so the readers that call them are in `readers`.

use serde::Serialize;
use serde_json::Value;

use crate::dialect::Dialect;

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

    /// Whether the client asked for an SSE stream: `stream: true` (Responses, Anthropic, chat
    /// completions) or `:streamGenerateContent` (Gemini).
    pub fn wants_stream(&self) -> bool {
        match self.dialect() {
            Some(Dialect::Gemini) => self.path.ends_with(":streamGenerateContent"),
            Some(_) => self.body.as_ref().and_then(|b| b.get("stream")).and_then(Value::as_bool).unwrap_or(false),
            None => false,
        }
    }

    /// The key the request presents, read the way its dialect's clients send it (a request that
    /// is not a model call is read like a Responses one): `x-api-key` or a bearer token
    /// (Anthropic; `ANTHROPIC_AUTH_TOKEN` sends the latter), `x-goog-api-key`, the `key` query
    /// parameter or a bearer token (Gemini), a bearer token (OpenAI). Empty values count as
    /// missing: Gemini CLI sends `x-goog-api-key: ""` when it has no key.
    pub fn api_key(&self) -> Option<&str> {
        let found = match self.dialect().unwrap_or(Dialect::Responses) {
            Dialect::Responses | Dialect::ChatCompletions => self.bearer_token(),
            Dialect::Anthropic => self.header("x-api-key").filter(|k| !k.is_empty()).or_else(|| self.bearer_token()),
            Dialect::Gemini => self
                .header("x-goog-api-key")
                .filter(|k| !k.is_empty())
                .or_else(|| self.query_param("key"))
                .or_else(|| self.bearer_token()),
        };
        found.filter(|k| !k.is_empty())
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

/// Text blocks the agents put in front of the user's own words: Claude Code's
/// `<system-reminder>` and Gemini CLI's `<session_context>`. The keyword rules skip them (they
/// quote file listings and instructions, not the user).
pub(crate) fn is_context_wrapper(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<system-reminder>") || t.starts_with("<session_context>")
}
