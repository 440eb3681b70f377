#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use super::*;

fn update(json: serde_json::Value) -> acp::SessionUpdate {
    serde_json::from_value(json).unwrap()
}

fn events(outs: Vec<Out>) -> Vec<EventBody> {
    outs.into_iter()
        .filter_map(|o| match o {
            Out::Event(e) => Some(e),
            Out::Update(_) => None,
        })
        .collect()
}

#[test]
fn message_chunks_stream_into_one_item_closed_by_the_next_kind() {
    let mut t = Translator::new(1024);
    let a = events(t.update(update(serde_json::json!({
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}
    }))));
    let b = events(t.update(update(serde_json::json!({
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "lo"}
    }))));
    let (EventBody::MessageDelta(d1), EventBody::MessageDelta(d2)) = (&a[0], &b[0]) else { panic!("{a:?} {b:?}") };
    assert_eq!(d1.item_id, d2.item_id);
    let c = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "ls", "kind": "execute",
        "rawInput": {"command": ["bash", "-lc", "ls -la"], "cwd": "/w"}
    }))));
    let EventBody::MessageCompleted(done) = &c[0] else { panic!("{c:?}") };
    assert_eq!(done.text, "Hello");
    let EventBody::CallStarted(call) = &c[1] else { panic!("{c:?}") };
    assert_eq!(call.command.as_deref(), Some("ls -la"));
    assert_eq!(call.cwd.as_deref(), Some("/w"));
    let d = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
        "rawOutput": {"exit_code": 0, "aggregated_output": "a\nb\n"}
    }))));
    let EventBody::CallCompleted(end) = &d[0] else { panic!("{d:?}") };
    assert_eq!((end.output.as_deref(), end.exit_code), (Some("a\nb\n"), Some(0)));
    assert!(t.close_open_items().is_empty(), "nothing stays open");
}

#[test]
fn open_items_are_closed_when_the_turn_ends() {
    let mut t = Translator::new(1024);
    t.update(update(serde_json::json!({"sessionUpdate": "tool_call", "toolCallId": "c9", "title": "grep"})));
    t.update(update(serde_json::json!({
        "sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}
    })));
    let closed = t.close_open_items();
    assert!(matches!(&closed[0], EventBody::ReasoningCompleted(r) if r.text == "hmm"), "{closed:?}");
    assert!(matches!(&closed[1], EventBody::CallCompleted(c) if c.status == CallStatus::Interrupted), "{closed:?}");
}

#[test]
fn diffs_plans_usage_and_modes() {
    let mut t = Translator::new(1024);
    let e = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call", "toolCallId": "e1", "title": "edit", "kind": "edit", "status": "completed",
        "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "b\n"}]
    }))));
    let EventBody::CallCompleted(c) = &e[1] else { panic!("{e:?}") };
    assert_eq!(c.changes[0].kind, "update");
    assert!(c.changes[0].diff.as_deref().unwrap().contains("-a\n+b\n"));
    let p = events(t.update(update(serde_json::json!({
        "sessionUpdate": "plan", "entries": [
            {"content": "look", "priority": "high", "status": "completed"},
            {"content": "edit", "priority": "low", "status": "in_progress"}
        ]
    }))));
    let EventBody::PlanUpdated(plan) = &p[0] else { panic!("{p:?}") };
    assert_eq!(plan.steps[1].status, "inProgress");
    let u = events(t.update(update(serde_json::json!({"sessionUpdate": "usage_update", "used": 5, "size": 50}))));
    assert!(matches!(&u[0], EventBody::UsageUpdated(x) if x.total_tokens == 5 && x.context_window == Some(50)));
    let modes: acp::SessionModeState = serde_json::from_value(serde_json::json!({
        "currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]
    }))
    .unwrap();
    t.set_modes(Some(&modes));
    let m = t.update(update(serde_json::json!({"sessionUpdate": "current_mode_update", "currentModeId": "b"})));
    assert!(matches!(&m[0], Out::Update(p) if p.modes.as_ref().unwrap().current == "b"), "{m:?}");
}

#[test]
fn permissions_map_decisions_to_the_agents_options() {
    let t = Translator::new(1024);
    let request: acp::RequestPermissionRequest = serde_json::from_value(serde_json::json!({
        "sessionId": "s", "toolCall": {"toolCallId": "c1", "title": "rm -rf build", "kind": "execute",
            "rawInput": {"command": "rm -rf build"}},
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"}
        ]
    }))
    .unwrap();
    let p = t.permission(&request, "r1");
    assert_eq!(p.kind, InteractionKind::CommandApproval);
    assert_eq!(p.command.as_deref(), Some("rm -rf build"));
    assert_eq!(p.options, [Decision::Accept, Decision::Decline, Decision::Cancel]);
    let offered: Vec<(&str, Decision)> = p.agent_options.iter().map(|o| (o.option_id.as_str(), o.decision)).collect();
    assert_eq!(offered, [("yes", Decision::Accept), ("no", Decision::Decline)]);
    assert_eq!(&*option_for(&request.options, Decision::Accept).unwrap().option_id.0, "yes");
    assert_eq!(&*option_for(&request.options, Decision::Decline).unwrap().option_id.0, "no");
    assert!(option_for(&request.options, Decision::AcceptForSession).is_none());
}

#[test]
fn stop_reasons_have_stable_codes() {
    let code = |stop, cancelled, declined| match terminal("t", stop, cancelled, declined) {
        EventBody::TurnCompleted(_) => "completed".to_owned(),
        EventBody::TurnCanceled(c) => format!("canceled:{}", c.reason),
        EventBody::TurnFailed(f) => format!("failed:{}", f.error.code),
        other => panic!("{other:?}"),
    };
    assert_eq!(code(acp::StopReason::EndTurn, false, false), "completed");
    assert_eq!(code(acp::StopReason::Cancelled, true, false), "canceled:interrupted");
    assert_eq!(code(acp::StopReason::Cancelled, false, true), "canceled:declined");
    assert_eq!(code(acp::StopReason::Refusal, false, false), "failed:refusal");
    assert_eq!(code(acp::StopReason::MaxTokens, false, false), "failed:max_tokens");
    assert_eq!(code(acp::StopReason::MaxTurnRequests, false, false), "failed:max_turn_requests");
}
