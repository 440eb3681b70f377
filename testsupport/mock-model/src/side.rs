//! Side requests: model calls an agent makes besides its main loop, on the same endpoint, often
//! at the same time as a main call. They are recognised by content and answered so the agent is
//! satisfied, ahead of the queue of scripted replies (a title request must not eat the reply a
//! test queued for the turn).

use serde::Serialize;
use serde_json::{Value, json};

use crate::MockConfig;
use crate::dialect::Dialect;
use crate::reply::Reply;
use crate::request::RecordedRequest;
use crate::{anthropic, chat, gemini};

/// What kind of side request a model call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SideRequest {
    /// Session title generation: Claude Code and codex-acp (no tools, JSON schema with `title`;
    /// answered with `{"title": <MockConfig::title>}`) and opencode (no tools, "You are a title
    /// generator" system prompt; answered with the title as text).
    Title,
    /// Claude Code's prompt suggestion after a turn (last user text starts with
    /// `[SUGGESTION MODE`); answered with [`SUGGESTION_REPLY`].
    Suggestion,
    /// Claude Code's auto-mode permission classifier ("You are a security monitor" system
    /// prompt); answered `<severity>0</severity>` (or `<block>no</block>` for the older prompt
    /// that asks for that), i.e. "allow".
    Classifier,
    /// Another request without tools for structured JSON output, e.g. Gemini CLI's model router
    /// (`complexity_score`); answered with a JSON object that fits the schema.
    Structured,
}

impl SideRequest {
    pub fn name(self) -> &'static str {
        match self {
            Self::Title => "title",
            Self::Suggestion => "suggestion",
            Self::Classifier => "classifier",
            Self::Structured => "structured",
        }
    }
}

/// What the mock suggests as the user's next prompt.
pub const SUGGESTION_REPLY: &str = "try it out";

/// Default session title (see [`MockConfig::title`]).
pub const DEFAULT_TITLE: &str = "Mock title";

fn has_tools(req: &RecordedRequest) -> bool {
    req.body.as_ref().and_then(|b| b.get("tools")).and_then(Value::as_array).is_some_and(|t| !t.is_empty())
}

/// The JSON schema the request asks the answer to follow, if it asks for JSON (`Value::Null`
/// when it asks for JSON without a schema).
fn output_schema(req: &RecordedRequest) -> Option<&Value> {
    let body = req.body.as_ref()?;
    match req.dialect()? {
        Dialect::Anthropic => anthropic::output_schema(body),
        Dialect::Gemini => gemini::output_schema(body),
        Dialect::ChatCompletions => chat::output_schema(body),
        // codex's `outputSchema` (codex-acp's title generator sends one).
        Dialect::Responses => {
            let format = body.pointer("/text/format")?;
            (format.get("type").and_then(Value::as_str) == Some("json_schema")).then(|| format.get("schema")).flatten()
        }
    }
}

fn schema_has_title(schema: &Value) -> bool {
    schema.pointer("/properties/title").is_some()
}

// These two readers live here rather than with the request log, so the log does not depend on
// the detection (which reads the conversation through the dialects).
impl RecordedRequest {
    /// What kind of side request this is (title generation, prompt suggestion, classifier,
    /// structured output), recognised by content; None for main-loop calls and for Responses.
    pub fn side_request(&self) -> Option<SideRequest> {
        detect(self)
    }

    /// A model call of the agent's main loop: any dialect, not a side request.
    pub fn is_model_call(&self) -> bool {
        self.dialect().is_some() && self.side_request().is_none()
    }
}

fn detect(req: &RecordedRequest) -> Option<SideRequest> {
    let dialect = req.dialect()?;
    if dialect == Dialect::Responses {
        // Only codex-acp's title generator: no tools, an output schema with a `title`. A codex
        // turn with an output schema of its own has tools, and goes through the queue.
        let title = !has_tools(req) && output_schema(req).is_some_and(schema_has_title);
        return title.then_some(SideRequest::Title);
    }
    if !has_tools(req) {
        if let Some(schema) = output_schema(req) {
            return Some(if schema_has_title(schema) { SideRequest::Title } else { SideRequest::Structured });
        }
        if dialect == Dialect::ChatCompletions
            && req.system_text().trim_start().starts_with("You are a title generator")
        {
            return Some(SideRequest::Title);
        }
    }
    if dialect == Dialect::Anthropic {
        if req.last_user_text().trim_start().starts_with("[SUGGESTION MODE") {
            return Some(SideRequest::Suggestion);
        }
        if req.system_text().contains("You are a security monitor") {
            return Some(SideRequest::Classifier);
        }
    }
    None
}

pub(crate) fn reply(req: &RecordedRequest, kind: SideRequest, config: &MockConfig) -> Reply {
    let text = match kind {
        SideRequest::Title | SideRequest::Structured => match output_schema(req) {
            Some(schema) => sample(schema, None, &config.title).to_string(),
            None => config.title.clone(),
        },
        SideRequest::Suggestion => SUGGESTION_REPLY.to_owned(),
        SideRequest::Classifier => {
            let asks_severity = req.body.as_ref().is_some_and(|b| b.to_string().contains("<severity>"));
            if asks_severity { "<severity>0</severity>".to_owned() } else { "<block>no</block>".to_owned() }
        }
    };
    Reply::text(text).with_usage(Some(config.usage))
}

fn schema_type(schema: &Value) -> Option<String> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t.to_ascii_lowercase()),
        Some(Value::Array(types)) => {
            types.iter().filter_map(Value::as_str).find(|t| *t != "null").map(str::to_ascii_lowercase)
        }
        _ if schema.get("properties").is_some() => Some("object".to_owned()),
        _ => None,
    }
}

/// A value that fits `schema`, chosen to make the agents go the simple way: the configured
/// title, `next_speaker: "user"` (Gemini CLI: the model is done), `complexity_score: 1` (Gemini
/// CLI's router: the cheap model), the first `enum` value, `"mock"`, the minimum number, false,
/// empty arrays. Types may be upper case (Gemini's schema dialect).
fn sample(schema: &Value, name: Option<&str>, title: &str) -> Value {
    match name {
        Some("title") => return json!(title),
        Some("next_speaker") => return json!("user"),
        _ => {}
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = schema_type(schema);
    // No type at the top (a request for JSON without a schema): an object.
    let kind = kind.as_deref().or(if name.is_none() { Some("object") } else { None });
    match kind {
        Some("object") => {
            let props = schema.get("properties").and_then(Value::as_object);
            let fields: serde_json::Map<String, Value> =
                props.into_iter().flatten().map(|(key, sub)| (key.clone(), sample(sub, Some(key), title))).collect();
            Value::Object(fields)
        }
        Some("integer") | Some("number") => json!(schema.get("minimum").and_then(Value::as_i64).unwrap_or(1).max(1)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ => json!("mock"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fit_the_agents_schemas() {
        let claude_title =
            json!({"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]});
        assert_eq!(sample(&claude_title, None, "T"), json!({"title": "T"}));
        let router = json!({"type": "OBJECT", "properties": {
            "complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER"}}});
        assert_eq!(sample(&router, None, "T"), json!({"complexity_reasoning": "mock", "complexity_score": 1}));
        let next = json!({"type": "object", "properties": {
            "reasoning": {"type": "string"}, "next_speaker": {"type": "string", "enum": ["model", "user"]},
            "tags": {"type": "array"}, "ok": {"type": ["boolean", "null"]}}});
        assert_eq!(
            sample(&next, None, "T"),
            json!({"reasoning": "mock", "next_speaker": "user", "tags": [], "ok": false})
        );
        assert_eq!(sample(&Value::Null, None, "T"), json!({}));
    }

    #[test]
    fn codex_acps_title_request_is_a_side_request_and_a_codex_turn_is_not() {
        let responses = |body: Value| RecordedRequest {
            seq: 1,
            method: "POST".into(),
            path: "/v1/responses".into(),
            query: None,
            headers: Vec::new(),
            body: Some(body),
            raw_body: None,
            received_at_ms: 0,
            reply: String::new(),
            outcome: crate::request::Outcome::Pending,
        };
        let schema = json!({"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]});
        let format =
            json!({"format": {"type": "json_schema", "strict": true, "schema": schema, "name": "codex_output_schema"}});
        let title = responses(json!({"model": "gpt-5.6-luna", "input": [], "text": format}));
        assert_eq!(detect(&title), Some(SideRequest::Title));
        let Reply::Stream(s) = reply(&title, SideRequest::Title, &MockConfig::default()) else { panic!("a stream") };
        let crate::reply::Step::Message(m) = &s.steps[0] else { panic!("a message") };
        assert_eq!(m.text(), json!({"title": DEFAULT_TITLE}).to_string());
        let turn =
            responses(json!({"input": [], "text": format, "tools": [{"type": "function", "name": "exec_command"}]}));
        assert_eq!(detect(&turn), None, "a turn with tools and an output schema");
        assert_eq!(detect(&responses(json!({"input": []}))), None);
    }
}
