//! Tests of `translate`.

#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use super::*;
use crate::codex::wire::method;

fn types(events: &[EventBody]) -> Vec<&'static str> {
    events.iter().map(EventBody::type_name).collect()
}

fn note(method: &str, params: Value) -> ServerNotification {
    ServerNotification::parse(method, params).unwrap().unwrap()
}

fn request(method: &str, params: Value) -> ServerRequest {
    ServerRequest::parse(method, params).unwrap().unwrap()
}

fn item(method: &str, item: Value) -> ServerNotification {
    note(method, json!({"threadId": "t", "turnId": "u", "item": item}))
}

fn delta(item_id: &str, delta: &str) -> ServerNotification {
    note(method::AGENT_MESSAGE_DELTA, json!({"itemId": item_id, "delta": delta}))
}

fn answered(request: &ServerRequest, decision: Decision, answers: Option<&Value>) -> Value {
    serde_json::to_value(answer(request, decision, answers)).unwrap()
}

#[test]
fn a_streamed_message_and_its_completion() {
    let mut t = Translator::default();
    let started = item(method::ITEM_STARTED, json!({"type": "agentMessage", "id": "m1", "text": ""}));
    assert!(t.notification(started).is_empty());
    let d = t.notification(delta("m1", "Hel"));
    assert_eq!(d, vec![EventBody::MessageDelta(TextDeltaPayload { item_id: "m1".into(), text: "Hel".into() })]);
    let done =
        t.notification(item(method::ITEM_COMPLETED, json!({"type": "agentMessage", "id": "m1", "text": "Hello"})));
    assert_eq!(types(&done), ["message.completed"]);
    assert!(t.close_open_items().is_empty(), "nothing left open");
}

#[test]
fn an_interrupt_closes_what_codex_abandons() {
    let mut t = Translator::default();
    t.notification(item(method::ITEM_STARTED, json!({"type": "agentMessage", "id": "m1", "text": ""})));
    t.notification(delta("m1", "partial"));
    t.notification(item(
        method::ITEM_STARTED,
        json!({"type": "commandExecution", "id": "c1", "command": "ls", "cwd": "/", "status": "inProgress", "commandActions": []}),
    ));
    let closed = t.close_open_items();
    assert_eq!(
        closed[0],
        EventBody::MessageCompleted(TextCompletedPayload { item_id: "m1".into(), text: "partial".into() })
    );
    match &closed[1] {
        EventBody::CallCompleted(c) => assert_eq!((c.call_id.as_str(), c.status), ("c1", CallStatus::Interrupted)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_steer_abandons_the_open_message() {
    let mut t = Translator::default();
    t.notification(item(method::ITEM_STARTED, json!({"type": "agentMessage", "id": "m1", "text": ""})));
    t.notification(delta("m1", "old"));
    let out = t.notification(item(method::ITEM_STARTED, json!({"type": "agentMessage", "id": "m2", "text": ""})));
    assert_eq!(
        out,
        vec![EventBody::MessageCompleted(TextCompletedPayload { item_id: "m1".into(), text: "old".into() })]
    );
}

#[test]
fn unknown_items_and_statuses_are_tolerated() {
    let mut t = Translator::default();
    assert!(t.notification(item(method::ITEM_STARTED, json!({"type": "noSuchItem", "id": "x"}))).is_empty());
    t.notification(item(method::ITEM_STARTED, json!({"type": "mcpToolCall", "id": "p", "server": "s", "tool": "x"})));
    let done = t.notification(item(
        method::ITEM_COMPLETED,
        json!({"type": "mcpToolCall", "id": "p", "status": "someNewStatus", "result": null, "error": {"message": "no"}}),
    ));
    match &done[..] {
        [EventBody::CallCompleted(c)] => {
            assert_eq!((c.status, c.output.as_deref()), (CallStatus::Failed, Some(r#"{"message":"no"}"#)))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn file_change_approval_carries_the_diff_of_its_item() {
    let mut t = Translator::default();
    t.notification(item(
        method::ITEM_STARTED,
        json!({"type": "fileChange", "id": "p1", "status": "inProgress",
            "changes": [{"path": "/w/a.txt", "kind": {"type": "add"}, "diff": "hello\n"}]}),
    ));
    let r = request(
        method::FILE_CHANGE_REQUEST_APPROVAL,
        json!({"itemId": "p1", "threadId": "t", "turnId": "u", "startedAtMs": 1}),
    );
    let req = interaction(&r, "r1", &t).unwrap();
    assert_eq!(req.kind, InteractionKind::FileChangeApproval);
    assert_eq!(req.diff.as_deref(), Some("--- /w/a.txt (add)\nhello\n"));
    assert_eq!(req.call_id.as_deref(), Some("p1"));
}

#[test]
fn command_approval_offers_codexs_string_decisions() {
    let r = request(
        method::COMMAND_EXECUTION_REQUEST_APPROVAL,
        json!({"itemId": "c", "command": "rm x", "cwd": "/w",
            "availableDecisions": ["accept", {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": []}}, "cancel"]}),
    );
    let req = interaction(&r, "r", &Translator::default()).unwrap();
    assert_eq!(req.options, vec![Decision::Accept, Decision::Decline, Decision::Cancel]);
    assert_eq!(req.command.as_deref(), Some("rm x"));
}

#[test]
fn requests_without_a_client_are_declined() {
    let t = Translator::default();
    let elicit = request(method::MCP_SERVER_ELICITATION_REQUEST, json!({"threadId": "t", "serverName": "s"}));
    assert!(interaction(&elicit, "r", &t).is_none());
    assert_eq!(answered(&elicit, Decision::Decline, None), json!({"action": "decline"}));
    let tool = request(
        method::DYNAMIC_TOOL_CALL,
        json!({"threadId": "t", "turnId": "u", "callId": "c", "tool": "x", "arguments": {}}),
    );
    assert!(interaction(&tool, "r", &t).is_none());
    assert_eq!(answered(&tool, Decision::Decline, None), json!({"contentItems": [], "success": false}));
}

#[test]
fn answers_take_the_shapes_codex_expects() {
    let approval = request(method::COMMAND_EXECUTION_REQUEST_APPROVAL, json!({"itemId": "c"}));
    assert_eq!(answered(&approval, Decision::Decline, None), json!({"decision": "decline"}));
    let questions = request(method::TOOL_REQUEST_USER_INPUT, json!({"itemId": "q", "questions": []}));
    assert_eq!(
        answered(&questions, Decision::Accept, Some(&json!({"color": "blue", "size": ["L"], "n": {"answers": ["1"]}}))),
        json!({"answers": {"color": {"answers": ["blue"]}, "size": {"answers": ["L"]}, "n": {"answers": ["1"]}}})
    );
    assert_eq!(answered(&questions, Decision::Decline, Some(&json!({"a": "b"}))), json!({"answers": {}}));
    let permissions = request(
        method::PERMISSIONS_REQUEST_APPROVAL,
        json!({"itemId": "p", "permissions": {"network": {"enabled": true}}}),
    );
    assert_eq!(
        answered(&permissions, Decision::AcceptForSession, None),
        json!({"permissions": {"network": {"enabled": true}}, "scope": "session"})
    );
    assert_eq!(answered(&permissions, Decision::Decline, None), json!({"permissions": {}, "scope": "turn"}));
}

fn error(v: Value) -> ErrorInfo {
    let e: TurnError = serde_json::from_value(v).unwrap();
    turn_error(Some(&e))
}

#[test]
fn turn_errors_get_stable_codes() {
    let e = error(
        json!({"message": "unexpected status 401 Unauthorized", "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 401}}}),
    );
    assert_eq!(e.code, "unauthorized");
    let e = error(json!({"message": "Missing environment variable: `MOCK_API_KEY`.", "codexErrorInfo": "other"}));
    assert_eq!(e.code, "auth_required");
    let e = error(json!({"message": "x", "codexErrorInfo": "contextWindowExceeded"}));
    assert_eq!(e.code, "context_window_exceeded");
    let e = error(json!({"message": "x", "codexErrorInfo": {"activeTurnNotSteerable": {"turnKind": "review"}}}));
    assert_eq!(e.code, "active_turn_not_steerable");
    assert_eq!(turn_error(None).code, "turn_failed");
    assert_eq!(turn_error(None).message, "the turn failed");
}

#[test]
fn usage_reads_totals_and_the_last_turn() {
    let n = note(
        method::THREAD_TOKEN_USAGE_UPDATED,
        json!({"tokenUsage": {"total": {"totalTokens": 15, "inputTokens": 10, "cachedInputTokens": 0, "outputTokens": 5, "reasoningOutputTokens": 0}, "last": {"totalTokens": 15}, "modelContextWindow": 258400}}),
    );
    let [EventBody::UsageUpdated(u)] = &Translator::default().notification(n)[..] else { panic!("no usage") };
    assert_eq!(
        (u.total_tokens, u.input_tokens, u.output_tokens, u.last_turn_total_tokens, u.context_window),
        (15, 10, 5, Some(15), Some(258400))
    );
}
