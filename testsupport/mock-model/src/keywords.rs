//! The keyword rules: pick an answer from the text of the most recent user message, the way the
//! lab's python mock does.

use crate::MockConfig;
use crate::reply::{
    DEFAULT_GOAL_OBJECTIVE, DEFAULT_PATCH, DEFAULT_TEXT_CHUNKS, MessageStep, Reply, TOOL_OUTPUT_REPLY_PREFIX,
};
use crate::request::RecordedRequest;

/// How many characters of a tool output the follow-up answer quotes.
const QUOTE_LIMIT: usize = 300;

/// The answer the keyword rules give to this request.
///
/// In order: `HTTP500`, `HTTP429`, `NOCOMPLETE`, `FAILEVENT`, `MINIMAL` decide the whole answer.
/// Otherwise `REASON` adds a reasoning item first, then: if the request ends with a tool result,
/// a message quoting it; else `SHELL` (`ESCALATE`), `PATCH`, `ASKUSER`, `GOAL` call a tool;
/// `SLOW` streams the configured slow ticks; anything else gets "Hello from the mock model.".
pub(crate) fn keyword_reply(req: &RecordedRequest, config: &MockConfig) -> Reply {
    let text = req.last_user_text();
    let has = |word: &str| text.contains(word);

    if has("HTTP500") {
        return Reply::server_error();
    }
    if has("HTTP429") {
        return Reply::rate_limited();
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
        RecordedRequest {
            seq: 1,
            method: "POST".into(),
            path: "/v1/responses".into(),
            query: None,
            headers: Vec::new(),
            body: Some(json!({"input": input})),
            raw_body: None,
            received_at_ms: 0,
            reply: String::new(),
            outcome: Outcome::Pending,
        }
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
        let follow_up = req(json!([user("SHELL"), {"type": "function_call_output", "call_id": "c", "output": "x"}]));
        let Reply::Stream(s) = keyword_reply(&follow_up, &c) else { panic!("stream") };
        let Step::Message(m) = &s.steps[0] else { panic!("message") };
        assert_eq!(m.text(), "The command ran. Tool output was: x");
    }
}
