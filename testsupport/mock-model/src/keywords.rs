//! The keyword rules: pick an answer from the text of the most recent user message, the way the
//! lab's python mocks do. Codex (Responses) has its own set; the other dialects share one.

use crate::MockConfig;
use crate::dialect::Dialect;
use crate::reply::{
    DEFAULT_GOAL_OBJECTIVE, DEFAULT_PATCH, DEFAULT_TEXT_CHUNKS, MessageStep, Reply, TOOL_OUTPUT_REPLY_PREFIX,
    TOOL_REJECTED_REPLY, WRITE_FILE_CONTENT, WRITE_FILE_NAME,
};
use crate::request::RecordedRequest;

/// How many characters of a tool output the follow-up answer quotes.
const QUOTE_LIMIT: usize = 300;

/// The answer the keyword rules give to this request.
///
/// In order: `HTTP500`, `HTTP429`, `HTTP400`, `NOCOMPLETE`, `FAILEVENT`, `MINIMAL` decide the
/// whole answer. Otherwise `REASON` adds a reasoning item first, then: if the request ends with a
/// tool result, a message quoting it; else `SHELL` (`ESCALATE`), `PATCH`, `WRITE` (an
/// `apply_patch` adding `mock_written.txt`), `ASKUSER`, `GOAL` call a tool; `SLOW` streams the
/// configured slow ticks; anything else gets "Hello from the mock model.".
pub(crate) fn keyword_reply(req: &RecordedRequest, config: &MockConfig) -> Reply {
    let text = req.last_user_text();
    let has = |word: &str| text.contains(word);

    if has("HTTP500") {
        return Reply::server_error();
    }
    if has("HTTP429") {
        return Reply::rate_limited();
    }
    if has("HTTP400") {
        return Reply::bad_request();
    }
    if has("NOCOMPLETE") {
        return Reply::cut_off("partial answer");
    }
    if has("FAILEVENT") {
        return Reply::failed("server_error", "mock response.failed");
    }
    if has("MINIMAL") {
        return Reply::minimal("minimal reply");
    }

    let main = if let Some(out) = req.trailing_tool_output() {
        Reply::text(quote_tool_output(&out.output))
    } else if has("SHELL") {
        if has("ESCALATE") {
            Reply::shell_escalated(config.shell_command.clone(), "Mock wants to write outside the sandbox")
        } else {
            Reply::shell(config.shell_command.clone())
        }
    } else if has("PATCH") {
        Reply::apply_patch(DEFAULT_PATCH)
    } else if has("WRITE") {
        Reply::write_file(WRITE_FILE_NAME, WRITE_FILE_CONTENT)
    } else if has("ASKUSER") {
        Reply::request_user_input_default()
    } else if has("GOAL") {
        Reply::create_goal(DEFAULT_GOAL_OBJECTIVE)
    } else if has("SLOW") {
        Reply::slow_text(config.slow_deltas, config.slow_delay)
    } else {
        Reply::message(MessageStep::new(DEFAULT_TEXT_CHUNKS).delay(config.text_delay))
    };
    let main = main.with_usage(Some(config.usage));
    if has("REASON") { main.with_reasoning(["Thinking", " about", " it."]) } else { main }
}

/// The keyword rules for Anthropic, Gemini and chat completions (Claude Code, Gemini CLI,
/// opencode). In order: `HTTP500`, `HTTP429`, `HTTP400` (errors in the dialect's shape),
/// `NOCOMPLETE` (the stream stops without its end), `FAILEVENT` (an error event in the stream)
/// decide the whole answer. Otherwise `REASON` adds a thinking block first, then: if the request
/// ends with a tool result, "The command was not run." when the agent reports it failed or
/// rejected, else "The command ran. Tool output was: …"; `SHELL` calls the shell tool with
/// [`MockConfig::shell_command`]; `WRITE` calls the write tool to write `mock_written.txt`;
/// `SLOW` streams the configured slow ticks; anything else gets "Hello from the mock model." in
/// chunks.
pub(crate) fn dialect_keyword_reply(req: &RecordedRequest, config: &MockConfig, dialect: Dialect) -> Reply {
    let text = req.last_user_text();
    let has = |word: &str| text.contains(word);

    if has("HTTP500") {
        return dialect.error(500, "mock internal error");
    }
    if has("HTTP429") {
        return dialect.error(429, "mock rate limit");
    }
    if has("HTTP400") {
        return dialect.error(400, "scripted bad request");
    }
    if has("NOCOMPLETE") {
        return Reply::cut_off("partial answer");
    }
    if has("FAILEVENT") {
        let code = match dialect {
            Dialect::Anthropic => "api_error",
            Dialect::Gemini => "INTERNAL",
            Dialect::Responses | Dialect::ChatCompletions => "server_error",
        };
        return Reply::failed(code, "mock stream error");
    }

    let main = if let Some(out) = req.trailing_tool_output() {
        if out.is_error { Reply::text(TOOL_REJECTED_REPLY) } else { Reply::text(quote_tool_output(&out.output)) }
    } else if has("SHELL") {
        Reply::shell(config.shell_command.clone())
    } else if has("WRITE") {
        Reply::write_file(WRITE_FILE_NAME, WRITE_FILE_CONTENT)
    } else if has("SLOW") {
        Reply::slow_text(config.slow_deltas, config.slow_delay)
    } else {
        Reply::message(MessageStep::new(DEFAULT_TEXT_CHUNKS).delay(config.text_delay))
    };
    let main = main.with_usage(Some(config.usage));
    if has("REASON") { main.with_reasoning(["Thinking", " about", " it."]) } else { main }
}

/// The follow-up text for a tool result.
pub fn quote_tool_output(output: &str) -> String {
    let quoted: String = output.chars().take(QUOTE_LIMIT).collect();
    format!("{TOOL_OUTPUT_REPLY_PREFIX}{quoted}")
}

/// Fallback when keyword rules are off and nothing was scripted.
pub(crate) fn unscripted_reply(seq: u64) -> Reply {
    Reply::http(
        500,
        serde_json::json!({"error": {
            "message": format!("ensemble-mock-model: no scripted reply for request {seq} (keyword rules are off)"),
            "type": "server_error", "param": null, "code": null
        }}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::{Step, StreamEnd};
    use crate::request::Outcome;
    use serde_json::{Value, json};

    fn req(input: Value) -> RecordedRequest {
        at("/v1/responses", json!({"input": input}))
    }

    fn at(path: &str, body: Value) -> RecordedRequest {
        RecordedRequest {
            seq: 1,
            method: "POST".into(),
            path: path.into(),
            query: None,
            headers: Vec::new(),
            body: Some(body),
            raw_body: None,
            received_at_ms: 0,
            reply: String::new(),
            outcome: Outcome::Pending,
        }
    }

    fn text_of(reply: &Reply) -> String {
        let Reply::Stream(s) = reply else { panic!("stream") };
        let Step::Message(m) = &s.steps[0] else { panic!("message") };
        m.text()
    }

    #[test]
    fn dialect_keywords_pick_answers() {
        let c = MockConfig::default();
        let claude = |messages: Value| at("/v1/messages", json!({"messages": messages, "stream": true}));
        let user = |t: &str| json!({"role": "user", "content": [{"type": "text", "text": t}]});
        let kw = |r: &RecordedRequest| dialect_keyword_reply(r, &c, Dialect::Anthropic);

        assert_eq!(kw(&claude(json!([user("hi")]))).label(), "stream[message(5 chunks), completed]");
        assert_eq!(kw(&claude(json!([user("SHELL")]))).label(), "stream[shell, completed]");
        assert_eq!(kw(&claude(json!([user("WRITE")]))).label(), "stream[write_file, completed]");
        assert_eq!(kw(&claude(json!([user("REASON")]))).label(), "stream[reasoning, message(5 chunks), completed]");
        let Reply::Http(h) = kw(&claude(json!([user("HTTP429")]))) else { panic!("http") };
        assert_eq!(h.body["error"]["type"], "rate_limit_error");

        let result = |is_error: bool| {
            claude(json!([user("SHELL"),
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "out", "is_error": is_error}]}]))
        };
        assert_eq!(text_of(&kw(&result(false))), "The command ran. Tool output was: out");
        assert_eq!(text_of(&kw(&result(true))), "The command was not run.");
    }

    fn user(text: &str) -> Value {
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    }

    #[test]
    fn keywords_pick_answers() {
        let c = MockConfig::default();
        assert!(matches!(keyword_reply(&req(json!([user("HTTP500")])), &c), Reply::Http(h) if h.status == 500));
        assert!(matches!(keyword_reply(&req(json!([user("HTTP429")])), &c), Reply::Http(h) if h.status == 429));
        assert!(
            matches!(keyword_reply(&req(json!([user("NOCOMPLETE")])), &c), Reply::Stream(s) if s.end == StreamEnd::Close)
        );
        assert_eq!(keyword_reply(&req(json!([user("SHELL")])), &c).label(), "stream[shell, completed]");
        assert_eq!(
            keyword_reply(&req(json!([user("SHELL ESCALATE")])), &c).label(),
            "stream[shell(escalated), completed]"
        );
        assert_eq!(
            keyword_reply(&req(json!([user("REASON")])), &c).label(),
            "stream[reasoning, message(5 chunks), completed]"
        );
        assert_eq!(
            keyword_reply(&req(json!([user("GOAL")])), &c).label(),
            "stream[function_call(create_goal), completed]"
        );
        assert_eq!(keyword_reply(&req(json!([user("WRITE")])), &c).label(), "stream[write_file, completed]");
        assert!(matches!(keyword_reply(&req(json!([user("HTTP400")])), &c), Reply::Http(h) if h.status == 400));
        let follow_up = req(json!([user("SHELL"), {"type": "function_call_output", "call_id": "c", "output": "x"}]));
        let Reply::Stream(s) = keyword_reply(&follow_up, &c) else { panic!("stream") };
        let Step::Message(m) = &s.steps[0] else { panic!("message") };
        assert_eq!(m.text(), "The command ran. Tool output was: x");
    }
}
