//! Pure translation of codex app-server notifications and server requests into runtime events.
//!
//! The [`Translator`] keeps what a turn has open (messages, reasoning, calls) and the file changes
//! announced by `item/started`, so it can close whatever codex abandons (an interrupted or steered
//! stream never gets its `item/completed`) and join a file-change approval to its diff.

use std::collections::{BTreeMap, HashMap};

use ensemble_runtime::event::{
    CallCompletedPayload, CallKind, CallStartedPayload, CallStatus, CallUpdatedPayload, Decision, ErrorInfo, EventBody,
    FileChange, InteractionKind, InteractionRequestedPayload, NoticeLevel, NoticePayload, PlanStep, PlanUpdatedPayload,
    Question, QuestionOption, TextCompletedPayload, TextDeltaPayload, UsagePayload,
};
use serde_json::{Value, json};

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn string(v: &Value, key: &str) -> String {
    s(v, key).unwrap_or_default().to_owned()
}

/// Most text kept of an open message or reasoning (what closes it if codex abandons it): beyond,
/// the event size limit would cut it anyway, and an endless stream must not cost endless memory.
pub const MAX_OPEN_TEXT: usize = 1024 * 1024;

fn push_capped(text: &mut String, delta: &str) {
    let room = MAX_OPEN_TEXT.saturating_sub(text.len());
    let mut cut = delta.len().min(room);
    while !delta.is_char_boundary(cut) {
        cut -= 1;
    }
    text.push_str(&delta[..cut]);
}

/// What a turn has open.
#[derive(Debug, Default)]
pub struct Translator {
    /// Agent messages streaming, with their text so far, in start order.
    messages: BTreeMap<u64, (String, String)>,
    reasoning: BTreeMap<u64, (String, String)>,
    calls: HashMap<String, CallKind>,
    file_changes: HashMap<String, Vec<FileChange>>,
    order: u64,
}

impl Translator {
    fn next(&mut self) -> u64 {
        self.order += 1;
        self.order
    }

    /// Events for a turn-scoped notification (items, deltas, plans, usage, warnings).
    pub fn notification(&mut self, method: &str, p: &Value) -> Vec<EventBody> {
        match method {
            "item/started" => self.item_started(p.get("item").unwrap_or(&Value::Null)),
            "item/completed" => self.item_completed(p.get("item").unwrap_or(&Value::Null)),
            "item/agentMessage/delta" => {
                let item_id = string(p, "itemId");
                let delta = string(p, "delta");
                match self.messages.values_mut().find(|(id, _)| *id == item_id) {
                    Some((_, text)) => push_capped(text, &delta),
                    None => {
                        let n = self.next();
                        self.messages.insert(n, (item_id.clone(), delta.clone()));
                    }
                }
                vec![EventBody::MessageDelta(TextDeltaPayload { item_id, text: delta })]
            }
            "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta" => {
                let item_id = string(p, "itemId");
                let delta = string(p, "delta");
                match self.reasoning.values_mut().find(|(id, _)| *id == item_id) {
                    Some((_, text)) => push_capped(text, &delta),
                    None => {
                        let n = self.next();
                        self.reasoning.insert(n, (item_id.clone(), delta.clone()));
                    }
                }
                vec![EventBody::ReasoningDelta(TextDeltaPayload { item_id, text: delta })]
            }
            "item/commandExecution/outputDelta" | "item/fileChange/outputDelta" => {
                vec![EventBody::CallUpdated(CallUpdatedPayload {
                    call_id: string(p, "itemId"),
                    output_delta: Some(string(p, "delta")),
                    status: None,
                })]
            }
            "item/mcpToolCall/progress" => vec![EventBody::CallUpdated(CallUpdatedPayload {
                call_id: string(p, "itemId"),
                output_delta: None,
                status: s(p, "message").map(str::to_owned),
            })],
            "item/fileChange/patchUpdated" => {
                let item_id = string(p, "itemId");
                let changes = file_changes(p.get("changes"));
                self.file_changes.insert(item_id, changes);
                Vec::new()
            }
            "turn/plan/updated" => vec![EventBody::PlanUpdated(PlanUpdatedPayload {
                explanation: s(p, "explanation").map(str::to_owned),
                steps: p
                    .get("plan")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter().map(|st| PlanStep { step: string(st, "step"), status: string(st, "status") }).collect()
                    })
                    .unwrap_or_default(),
            })],
            "thread/tokenUsage/updated" => usage(p).map(EventBody::UsageUpdated).into_iter().collect(),
            "warning" | "guardianWarning" => notice(NoticeLevel::Warning, s(p, "message").unwrap_or("warning")),
            "configWarning" | "deprecationNotice" => {
                notice(NoticeLevel::Info, s(p, "summary").or_else(|| s(p, "message")).unwrap_or(method))
            }
            "error" => {
                let will_retry = p.get("willRetry").and_then(Value::as_bool).unwrap_or(false);
                let msg = p.get("error").and_then(|e| s(e, "message")).unwrap_or("error").to_owned();
                let level = if will_retry { NoticeLevel::Warning } else { NoticeLevel::Error };
                let text = if will_retry { format!("{msg} (retrying)") } else { msg };
                notice(level, &text)
            }
            "model/rerouted" => notice(
                NoticeLevel::Info,
                &format!("model rerouted from {} to {}", string(p, "fromModel"), string(p, "toModel")),
            ),
            _ => Vec::new(),
        }
    }

    fn item_started(&mut self, item: &Value) -> Vec<EventBody> {
        let id = string(item, "id");
        match s(item, "type").unwrap_or_default() {
            "agentMessage" => {
                // A new message while another is open means codex abandoned the old one (a steer
                // restarts the model stream): close it first.
                let mut out = self.close_messages();
                let n = self.next();
                self.messages.insert(n, (id, string(item, "text")));
                out.shrink_to_fit();
                out
            }
            "reasoning" => {
                let n = self.next();
                self.reasoning.insert(n, (id, String::new()));
                Vec::new()
            }
            "commandExecution" => {
                self.calls.insert(id.clone(), CallKind::Command);
                vec![EventBody::CallStarted(CallStartedPayload {
                    call_id: id,
                    kind: CallKind::Command,
                    name: "shell".into(),
                    command: s(item, "command").map(str::to_owned),
                    cwd: s(item, "cwd").map(str::to_owned),
                    input: None,
                    changes: vec![],
                })]
            }
            "fileChange" => {
                let changes = file_changes(item.get("changes"));
                self.file_changes.insert(id.clone(), changes.clone());
                self.calls.insert(id.clone(), CallKind::FileChange);
                vec![EventBody::CallStarted(CallStartedPayload {
                    call_id: id,
                    kind: CallKind::FileChange,
                    name: "apply_patch".into(),
                    command: None,
                    cwd: None,
                    input: None,
                    changes,
                })]
            }
            "mcpToolCall" => {
                self.calls.insert(id.clone(), CallKind::Mcp);
                vec![EventBody::CallStarted(CallStartedPayload {
                    call_id: id,
                    kind: CallKind::Mcp,
                    name: format!("{}/{}", string(item, "server"), string(item, "tool")),
                    command: None,
                    cwd: None,
                    input: item.get("arguments").cloned(),
                    changes: vec![],
                })]
            }
            "dynamicToolCall" | "collabAgentToolCall" => {
                self.calls.insert(id.clone(), CallKind::Tool);
                vec![EventBody::CallStarted(CallStartedPayload {
                    call_id: id,
                    kind: CallKind::Tool,
                    name: string(item, "tool"),
                    command: None,
                    cwd: None,
                    input: item.get("arguments").or_else(|| item.get("prompt")).cloned(),
                    changes: vec![],
                })]
            }
            "webSearch" => {
                self.calls.insert(id.clone(), CallKind::WebSearch);
                vec![EventBody::CallStarted(CallStartedPayload {
                    call_id: id,
                    kind: CallKind::WebSearch,
                    name: "web_search".into(),
                    command: None,
                    cwd: None,
                    input: Some(json!({ "query": string(item, "query") })),
                    changes: vec![],
                })]
            }
            _ => Vec::new(),
        }
    }

    fn item_completed(&mut self, item: &Value) -> Vec<EventBody> {
        let id = string(item, "id");
        match s(item, "type").unwrap_or_default() {
            "agentMessage" => {
                self.messages.retain(|_, (m, _)| *m != id);
                vec![EventBody::MessageCompleted(TextCompletedPayload { item_id: id, text: string(item, "text") })]
            }
            "reasoning" => {
                let streamed = self.reasoning.iter().find(|(_, (r, _))| *r == id).map(|(_, (_, t))| t.clone());
                self.reasoning.retain(|_, (r, _)| *r != id);
                let summary = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"))
                    .filter(|t| !t.is_empty());
                let text = summary.or(streamed).unwrap_or_default();
                vec![EventBody::ReasoningCompleted(TextCompletedPayload { item_id: id, text })]
            }
            "commandExecution" => {
                self.calls.remove(&id);
                vec![EventBody::CallCompleted(CallCompletedPayload {
                    call_id: id,
                    status: call_status(s(item, "status")),
                    output: s(item, "aggregatedOutput").map(str::to_owned),
                    exit_code: item.get("exitCode").and_then(Value::as_i64).map(|c| c as i32),
                    changes: vec![],
                })]
            }
            "fileChange" => {
                self.calls.remove(&id);
                let changes = file_changes(item.get("changes"));
                vec![EventBody::CallCompleted(CallCompletedPayload {
                    call_id: id,
                    status: call_status(s(item, "status")),
                    output: None,
                    exit_code: None,
                    changes,
                })]
            }
            "mcpToolCall" | "dynamicToolCall" | "collabAgentToolCall" | "webSearch" => {
                self.calls.remove(&id);
                let output = item
                    .get("result")
                    .or_else(|| item.get("contentItems"))
                    .or_else(|| item.get("error"))
                    .filter(|v| !v.is_null())
                    .map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
                let status = match item.get("success").and_then(Value::as_bool) {
                    Some(false) => CallStatus::Failed,
                    _ => call_status(s(item, "status")),
                };
                vec![EventBody::CallCompleted(CallCompletedPayload {
                    call_id: id,
                    status,
                    output,
                    exit_code: None,
                    changes: vec![],
                })]
            }
            _ => Vec::new(),
        }
    }

    fn close_messages(&mut self) -> Vec<EventBody> {
        std::mem::take(&mut self.messages)
            .into_values()
            .map(|(item_id, text)| EventBody::MessageCompleted(TextCompletedPayload { item_id, text }))
            .collect()
    }

    /// Closes everything codex left open (after an interrupt, a steer, or the turn's end).
    pub fn close_open_items(&mut self) -> Vec<EventBody> {
        let mut out = self.close_messages();
        for (item_id, text) in std::mem::take(&mut self.reasoning).into_values() {
            out.push(EventBody::ReasoningCompleted(TextCompletedPayload { item_id, text }));
        }
        let mut calls: Vec<String> = self.calls.drain().map(|(id, _)| id).collect();
        calls.sort();
        for call_id in calls {
            out.push(EventBody::CallCompleted(CallCompletedPayload {
                call_id,
                status: CallStatus::Interrupted,
                output: None,
                exit_code: None,
                changes: vec![],
            }));
        }
        out
    }

    /// The unified diff of a file-change item (joined from its `item/started`).
    pub fn diff_for(&self, item_id: &str) -> Option<String> {
        let changes = self.file_changes.get(item_id)?;
        let mut out = String::new();
        for c in changes {
            out.push_str(&format!("--- {} ({})\n", c.path, c.kind));
            if let Some(d) = &c.diff {
                out.push_str(d);
                if !d.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        Some(out)
    }

    /// Forgets per-turn state (a new turn starts).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

fn notice(level: NoticeLevel, message: &str) -> Vec<EventBody> {
    vec![EventBody::Notice(NoticePayload { level, message: message.to_owned() })]
}

fn call_status(status: Option<&str>) -> CallStatus {
    match status {
        Some("failed") => CallStatus::Failed,
        Some("declined") => CallStatus::Declined,
        Some("inProgress") => CallStatus::Interrupted,
        _ => CallStatus::Completed,
    }
}

fn file_changes(v: Option<&Value>) -> Vec<FileChange> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| FileChange {
                    path: string(c, "path"),
                    kind: c.get("kind").and_then(|k| s(k, "type")).unwrap_or("update").to_owned(),
                    diff: s(c, "diff").map(str::to_owned),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `thread/tokenUsage/updated` → `usage.updated`.
pub fn usage(p: &Value) -> Option<UsagePayload> {
    let t = p.get("tokenUsage")?;
    let total = t.get("total")?;
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
    Some(UsagePayload {
        input_tokens: n(total, "inputTokens"),
        output_tokens: n(total, "outputTokens"),
        cached_input_tokens: n(total, "cachedInputTokens"),
        reasoning_output_tokens: n(total, "reasoningOutputTokens"),
        total_tokens: n(total, "totalTokens"),
        last_turn_total_tokens: t.get("last").and_then(|l| l.get("totalTokens")).and_then(Value::as_i64),
        context_window: t.get("modelContextWindow").and_then(Value::as_i64),
    })
}

/// The error of a failed turn (`turn/completed` with `status: failed`).
pub fn turn_error(turn: &Value) -> ErrorInfo {
    let err = turn.get("error").unwrap_or(&Value::Null);
    let message = s(err, "message").unwrap_or("the turn failed").to_owned();
    let info = err.get("codexErrorInfo").unwrap_or(&Value::Null);
    let http_status = info.get("httpConnectionFailed").and_then(|h| h.get("httpStatusCode")).and_then(Value::as_i64);
    let code = match (http_status, info.as_str()) {
        (Some(401 | 403), _) => "unauthorized".to_owned(),
        (Some(429), _) => "rate_limited".to_owned(),
        (Some(s), _) if s >= 500 => "model_unavailable".to_owned(),
        _ if message.contains("Missing environment variable") => "auth_required".to_owned(),
        (_, Some(kind)) => to_snake(kind),
        (_, None) => {
            info.as_object().and_then(|o| o.keys().next()).map(|k| to_snake(k)).unwrap_or("turn_failed".into())
        }
    };
    ErrorInfo::new(&code, message)
}

fn to_snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    if out.is_empty() { "turn_failed".into() } else { out }
}

/// Which interactive request a server request is, and how to present it.
pub fn interaction(
    method: &str,
    p: &Value,
    request_id: &str,
    translator: &Translator,
) -> Option<InteractionRequestedPayload> {
    let item_id = s(p, "itemId").map(str::to_owned);
    let reason = s(p, "reason").map(str::to_owned);
    let approvals = vec![Decision::Accept, Decision::AcceptForSession, Decision::Decline, Decision::Cancel];
    let base = |kind, title: String| InteractionRequestedPayload {
        request_id: request_id.to_owned(),
        kind,
        title,
        detail: reason.clone(),
        command: None,
        cwd: None,
        diff: None,
        questions: vec![],
        options: approvals.clone(),
        call_id: item_id.clone(),
    };
    match method {
        "item/commandExecution/requestApproval" => {
            let command = s(p, "command").map(str::to_owned);
            let mut r = base(
                InteractionKind::CommandApproval,
                command.as_deref().map(|c| format!("Run `{c}`?")).unwrap_or_else(|| "Run a command?".into()),
            );
            r.command = command;
            r.cwd = s(p, "cwd").map(str::to_owned);
            if let Some(available) = p.get("availableDecisions").and_then(Value::as_array) {
                // Offer what codex offers, in its order (the amendment variants have no REST form).
                let offered: Vec<Decision> = available
                    .iter()
                    .filter_map(Value::as_str)
                    .filter_map(|d| match d {
                        "accept" => Some(Decision::Accept),
                        "acceptForSession" => Some(Decision::AcceptForSession),
                        "decline" => Some(Decision::Decline),
                        "cancel" => Some(Decision::Cancel),
                        _ => None,
                    })
                    .collect();
                if !offered.is_empty() {
                    r.options = offered;
                }
                // Codex 0.169.0 leaves `decline` out of `availableDecisions` (it lists accept, the
                // amendment and cancel) but honours it: the call ends `declined` and the turn goes
                // on. Without it a client could only cancel the whole turn.
                if !r.options.contains(&Decision::Decline) {
                    let at = r.options.iter().position(|d| *d == Decision::Cancel).unwrap_or(r.options.len());
                    r.options.insert(at, Decision::Decline);
                }
            }
            Some(r)
        }
        "item/fileChange/requestApproval" => {
            let mut r = base(InteractionKind::FileChangeApproval, "Apply these file changes?".into());
            r.diff = item_id.as_deref().and_then(|i| translator.diff_for(i));
            Some(r)
        }
        "item/permissions/requestApproval" => {
            let mut r = base(InteractionKind::Permissions, "Grant additional permissions?".into());
            r.cwd = s(p, "cwd").map(str::to_owned);
            r.detail = Some(format!(
                "{}requested: {}",
                reason.as_deref().map(|x| format!("{x}; ")).unwrap_or_default(),
                p.get("permissions").cloned().unwrap_or(Value::Null)
            ));
            Some(r)
        }
        "item/tool/requestUserInput" => {
            let questions: Vec<Question> = p
                .get("questions")
                .and_then(Value::as_array)
                .map(|qs| {
                    qs.iter()
                        .map(|q| Question {
                            id: string(q, "id"),
                            header: s(q, "header").map(str::to_owned),
                            question: string(q, "question"),
                            options: q
                                .get("options")
                                .and_then(Value::as_array)
                                .map(|os| {
                                    os.iter()
                                        .map(|o| QuestionOption {
                                            label: string(o, "label"),
                                            description: s(o, "description").map(str::to_owned),
                                        })
                                        .collect()
                                })
                                .unwrap_or_default(),
                            is_other: q.get("isOther").and_then(Value::as_bool).unwrap_or(false),
                            is_secret: q.get("isSecret").and_then(Value::as_bool).unwrap_or(false),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let title = questions.first().map(|q| q.question.clone()).unwrap_or_else(|| "A question".into());
            let mut r = base(InteractionKind::UserInput, title);
            r.questions = questions;
            r.options = vec![Decision::Accept, Decision::Decline, Decision::Cancel];
            Some(r)
        }
        _ => None,
    }
}

/// The JSON-RPC result that answers a server request with the client's decision.
pub fn answer(kind: InteractionKind, request_params: &Value, decision: Decision, answers: Option<&Value>) -> Value {
    match kind {
        InteractionKind::CommandApproval | InteractionKind::FileChangeApproval => {
            json!({ "decision": decision.as_str() })
        }
        InteractionKind::Permissions => {
            let granted = if decision.accepts() {
                request_params.get("permissions").cloned().unwrap_or(json!({}))
            } else {
                json!({})
            };
            let scope = if decision == Decision::AcceptForSession { "session" } else { "turn" };
            json!({ "permissions": granted, "scope": scope })
        }
        InteractionKind::UserInput => {
            let mut out = serde_json::Map::new();
            if decision.accepts()
                && let Some(Value::Object(m)) = answers
            {
                for (qid, a) in m {
                    let list: Vec<Value> = match a {
                        Value::String(s) => vec![Value::String(s.clone())],
                        Value::Array(items) => items.clone(),
                        Value::Object(o) => o.get("answers").and_then(Value::as_array).cloned().unwrap_or_default(),
                        other => vec![Value::String(other.to_string())],
                    };
                    out.insert(qid.clone(), json!({ "answers": list }));
                }
            }
            json!({ "answers": out })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(events: &[EventBody]) -> Vec<&'static str> {
        events.iter().map(EventBody::type_name).collect()
    }

    #[test]
    fn a_streamed_message_and_its_completion() {
        let mut t = Translator::default();
        assert!(
            t.notification("item/started", &json!({"item": {"type": "agentMessage", "id": "m1", "text": ""}}))
                .is_empty()
        );
        let d = t.notification("item/agentMessage/delta", &json!({"itemId": "m1", "delta": "Hel"}));
        assert_eq!(d, vec![EventBody::MessageDelta(TextDeltaPayload { item_id: "m1".into(), text: "Hel".into() })]);
        let done =
            t.notification("item/completed", &json!({"item": {"type": "agentMessage", "id": "m1", "text": "Hello"}}));
        assert_eq!(types(&done), ["message.completed"]);
        assert!(t.close_open_items().is_empty(), "nothing left open");
    }

    #[test]
    fn an_interrupt_closes_what_codex_abandons() {
        let mut t = Translator::default();
        t.notification("item/started", &json!({"item": {"type": "agentMessage", "id": "m1", "text": ""}}));
        t.notification("item/agentMessage/delta", &json!({"itemId": "m1", "delta": "partial"}));
        t.notification("item/started", &json!({"item": {"type": "commandExecution", "id": "c1", "command": "ls", "cwd": "/", "status": "inProgress", "commandActions": []}}));
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
        t.notification("item/started", &json!({"item": {"type": "agentMessage", "id": "m1", "text": ""}}));
        t.notification("item/agentMessage/delta", &json!({"itemId": "m1", "delta": "old"}));
        let out = t.notification("item/started", &json!({"item": {"type": "agentMessage", "id": "m2", "text": ""}}));
        assert_eq!(
            out,
            vec![EventBody::MessageCompleted(TextCompletedPayload { item_id: "m1".into(), text: "old".into() })]
        );
    }

    #[test]
    fn file_change_approval_carries_the_diff_of_its_item() {
        let mut t = Translator::default();
        t.notification(
            "item/started",
            &json!({"item": {"type": "fileChange", "id": "p1", "status": "inProgress",
                "changes": [{"path": "/w/a.txt", "kind": {"type": "add"}, "diff": "hello\n"}]}}),
        );
        let req = interaction(
            "item/fileChange/requestApproval",
            &json!({"itemId": "p1", "threadId": "t", "turnId": "u", "startedAtMs": 1}),
            "r1",
            &t,
        )
        .unwrap();
        assert_eq!(req.kind, InteractionKind::FileChangeApproval);
        assert_eq!(req.diff.as_deref(), Some("--- /w/a.txt (add)\nhello\n"));
        assert_eq!(req.call_id.as_deref(), Some("p1"));
    }

    #[test]
    fn command_approval_offers_codexs_string_decisions() {
        let req = interaction(
            "item/commandExecution/requestApproval",
            &json!({"itemId": "c", "command": "rm x", "cwd": "/w",
                "availableDecisions": ["accept", {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": []}}, "cancel"]}),
            "r",
            &Translator::default(),
        )
        .unwrap();
        assert_eq!(req.options, vec![Decision::Accept, Decision::Decline, Decision::Cancel]);
        assert_eq!(req.command.as_deref(), Some("rm x"));
    }

    #[test]
    fn answers_take_the_shapes_codex_expects() {
        assert_eq!(
            answer(InteractionKind::CommandApproval, &json!({}), Decision::Decline, None),
            json!({"decision": "decline"})
        );
        assert_eq!(
            answer(
                InteractionKind::UserInput,
                &json!({}),
                Decision::Accept,
                Some(&json!({"color": "blue", "size": ["L"], "n": {"answers": ["1"]}}))
            ),
            json!({"answers": {"color": {"answers": ["blue"]}, "size": {"answers": ["L"]}, "n": {"answers": ["1"]}}})
        );
        assert_eq!(
            answer(InteractionKind::UserInput, &json!({}), Decision::Decline, Some(&json!({"a": "b"}))),
            json!({"answers": {}})
        );
        let req = json!({"permissions": {"network": {"enabled": true}}});
        assert_eq!(
            answer(InteractionKind::Permissions, &req, Decision::AcceptForSession, None),
            json!({"permissions": {"network": {"enabled": true}}, "scope": "session"})
        );
        assert_eq!(
            answer(InteractionKind::Permissions, &req, Decision::Decline, None),
            json!({"permissions": {}, "scope": "turn"})
        );
    }

    #[test]
    fn turn_errors_get_stable_codes() {
        let e = turn_error(
            &json!({"error": {"message": "unexpected status 401 Unauthorized", "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 401}}}}),
        );
        assert_eq!(e.code, "unauthorized");
        let e = turn_error(
            &json!({"error": {"message": "Missing environment variable: `MOCK_API_KEY`.", "codexErrorInfo": "other"}}),
        );
        assert_eq!(e.code, "auth_required");
        let e = turn_error(&json!({"error": {"message": "x", "codexErrorInfo": "contextWindowExceeded"}}));
        assert_eq!(e.code, "context_window_exceeded");
        assert_eq!(turn_error(&json!({})).code, "turn_failed");
    }

    #[test]
    fn usage_reads_totals_and_the_last_turn() {
        let u = usage(&json!({"tokenUsage": {"total": {"totalTokens": 15, "inputTokens": 10, "cachedInputTokens": 0, "outputTokens": 5, "reasoningOutputTokens": 0}, "last": {"totalTokens": 15}, "modelContextWindow": 258400}})).unwrap();
        assert_eq!(
            (u.total_tokens, u.input_tokens, u.output_tokens, u.last_turn_total_tokens, u.context_window),
            (15, 10, 5, Some(15), Some(258400))
        );
    }
}
