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

/// codex-acp 2.x (`@agentclientprotocol/codex-acp`): a command in a terminal has no `rawOutput`;
/// its output comes in `_meta.terminal_output_delta` and its exit code in `_meta.terminal_exit`
/// (the updates as its 2.6.0 sends them for an allowed, then a rejected, command).
#[test]
fn codex_acp2_command_output_and_exit_come_from_meta() {
    let mut t = Translator::new(1024);
    t.set_quirks(quirks::for_agent(Some("@agentclientprotocol/codex-acp")));
    let started = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call", "toolCallId": "call_4", "kind": "execute",
        "title": "echo ran > out.txt && cat out.txt", "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": "call_4"}],
        "rawInput": {"command": "echo ran > out.txt && cat out.txt", "cwd": "/w"},
        "_meta": {"terminal_info": {"cwd": "/w", "terminal_id": "call_4"}}
    }))));
    let [EventBody::CallStarted(call)] = started.as_slice() else { panic!("{started:?}") };
    assert_eq!((call.command.as_deref(), call.cwd.as_deref()), (Some("echo ran > out.txt && cat out.txt"), Some("/w")));
    let piece = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call_update", "toolCallId": "call_4",
        "_meta": {"terminal_output_delta": {"data": "ran\n", "terminal_id": "call_4"}}
    }))));
    let [EventBody::CallUpdated(u)] = piece.as_slice() else { panic!("{piece:?}") };
    assert_eq!(u.output_delta.as_deref(), Some("ran\n"));
    let end = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call_update", "toolCallId": "call_4", "status": "completed",
        "_meta": {"terminal_output_delta": {"data": "done\n", "terminal_id": "call_4"},
                  "terminal_exit": {"exit_code": 0, "signal": null, "terminal_id": "call_4"}}
    }))));
    let [EventBody::CallUpdated(last), EventBody::CallCompleted(done)] = end.as_slice() else { panic!("{end:?}") };
    assert_eq!(last.output_delta.as_deref(), Some("done\n"));
    assert_eq!(
        (done.status, done.output.as_deref(), done.exit_code),
        (CallStatus::Completed, Some("ran\ndone\n"), Some(0))
    );

    // Rejected: it never ran, so no exit code.
    t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call", "toolCallId": "call_5", "kind": "execute", "title": "touch x",
        "status": "in_progress", "content": [{"type": "terminal", "terminalId": "call_5"}],
        "rawInput": {"command": "touch x", "cwd": "/w"}
    })));
    let failed = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call_update", "toolCallId": "call_5", "status": "failed",
        "_meta": {"terminal_exit": {"exit_code": null, "signal": null, "terminal_id": "call_5"}}
    }))));
    let [EventBody::CallCompleted(f)] = failed.as_slice() else { panic!("{failed:?}") };
    assert_eq!((f.status, f.output.as_deref(), f.exit_code), (CallStatus::Failed, None, None));
}

/// Only agents known to report commands in `_meta` (and the generic one) are read there: Zed's
/// codex-acp 0.16 reports them in `rawOutput`.
#[test]
fn terminal_meta_is_read_only_for_the_agents_that_use_it() {
    let meta = serde_json::json!({
        "sessionUpdate": "tool_call", "toolCallId": "c1", "kind": "execute", "title": "ls", "status": "completed",
        "_meta": {"terminal_output_delta": {"data": "a\n"}, "terminal_exit": {"exit_code": 2}}
    });
    let completed = |agent: Option<&str>| {
        let mut t = Translator::new(1024);
        t.set_quirks(quirks::for_agent(agent));
        let out = events(t.update(update(meta.clone())));
        match out.last() {
            Some(EventBody::CallCompleted(c)) => (c.output.clone(), c.exit_code),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(completed(Some("@agentclientprotocol/codex-acp")), (Some("a\n".to_owned()), Some(2)));
    assert_eq!(completed(None), (Some("a\n".to_owned()), Some(2)), "the generic agent takes every shape");
    assert_eq!(completed(Some("codex-acp")), (None, None));
}

/// Gemini CLI announces a mode change as a message chunk `[MODE_UPDATE] <mode>`: the session's
/// mode, not text. Other agents' text that looks the same stays text.
#[test]
fn gemini_cli_mode_updates_are_the_sessions_mode() {
    let modes: acp::SessionModeState = serde_json::from_value(serde_json::json!({
        "currentModeId": "default", "availableModes": [{"id": "default", "name": "Default"}, {"id": "plan", "name": "Plan"}]
    }))
    .unwrap();
    let chunk = |text: &str| {
        update(serde_json::json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}))
    };
    let mut t = Translator::new(1024);
    t.set_quirks(quirks::for_agent(Some("gemini-cli")));
    t.set_modes(Some(&modes));
    let said = events(t.update(chunk("Hello")));
    assert!(matches!(&said[..], [EventBody::MessageDelta(_)]), "{said:?}");
    let m = t.update(chunk("[MODE_UPDATE] plan"));
    assert!(matches!(&m[..], [Out::Update(p)] if p.modes.as_ref().unwrap().current == "plan"), "{m:?}");
    // The message goes on as one item, without the announcement.
    t.update(chunk(" there"));
    let closed = t.close_open_items();
    assert!(matches!(&closed[..], [EventBody::MessageCompleted(c)] if c.text == "Hello there"), "{closed:?}");
    assert_eq!(t.current_mode("plan").unwrap().current, "plan");

    let mut other = Translator::new(1024);
    other.set_modes(Some(&modes));
    let text = events(other.update(chunk("[MODE_UPDATE] plan")));
    assert!(matches!(&text[..], [EventBody::MessageDelta(d)] if d.text == "[MODE_UPDATE] plan"), "{text:?}");
}

/// Gemini CLI's permission options, as its 0.61.0 sends them (with no `tool_call` before): accept
/// picks `proceed_once`, acceptForSession `proceed_always`, decline `cancel` (its reject).
#[test]
fn gemini_cli_permission_options_map_to_decisions() {
    let mut t = Translator::new(1024);
    t.set_quirks(quirks::for_agent(Some("gemini-cli")));
    let request: acp::RequestPermissionRequest = serde_json::from_value(serde_json::json!({
        "sessionId": "s",
        "options": [
            {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
            {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}
        ],
        "toolCall": {"toolCallId": "run_shell_command__run_shell_command_1_0", "status": "pending",
            "title": "echo hi > f.txt", "kind": "execute", "locations": [],
            "content": [{"type": "content", "content": {"type": "text", "text": "[current working directory /w] (say hi)"}}]}
    }))
    .unwrap();
    let p = t.permission(&request, "r1");
    assert_eq!(p.kind, InteractionKind::CommandApproval);
    assert_eq!(p.command.as_deref(), Some("echo hi > f.txt"));
    assert_eq!(p.call_id.as_deref(), Some("run_shell_command__run_shell_command_1_0"));
    assert_eq!(p.options, [Decision::Accept, Decision::AcceptForSession, Decision::Decline, Decision::Cancel]);
    let pick = |d| option_for(&request.options, d).map(|o| o.option_id.0.to_string());
    assert_eq!(pick(Decision::Accept).as_deref(), Some("proceed_once"));
    assert_eq!(pick(Decision::AcceptForSession).as_deref(), Some("proceed_always"));
    assert_eq!(pick(Decision::Decline).as_deref(), Some("cancel"));
    assert_eq!(pick(Decision::Cancel), None);
    // Once it ran, the call is announced by its only update.
    let ran = events(t.update(update(serde_json::json!({
        "sessionUpdate": "tool_call_update", "toolCallId": "run_shell_command__run_shell_command_1_0",
        "status": "completed", "title": "echo hi > f.txt", "content": [], "locations": [], "kind": "execute"
    }))));
    let [EventBody::CallStarted(s), EventBody::CallCompleted(c)] = &ran[..] else { panic!("{ran:?}") };
    assert_eq!((s.command.as_deref(), c.status), (Some("echo hi > f.txt"), CallStatus::Completed));
}
