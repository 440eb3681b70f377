//! Pure translation of codex's notifications and server requests into runtime events, and of the
//! client's answers into codex's results.
//!
//! The [`Translator`] keeps what a turn has open (messages, reasoning, calls) and the file changes
//! announced by `item/started`, so it can close whatever codex abandons (an interrupted or steered
//! stream never gets its `item/completed`) and join a file-change approval to its diff.

use std::collections::{BTreeMap, HashMap};

use ensemble_core::event::{
    CallCompletedPayload, CallKind, CallStartedPayload, CallStatus, CallUpdatedPayload, Decision, ErrorInfo, EventBody,
    FileChange, InteractionKind, InteractionRequestedPayload, NoticeLevel, NoticePayload, PlanStep, PlanUpdatedPayload,
    Question, QuestionOption, TextCompletedPayload, TextDeltaPayload, UsagePayload,
};
use ensemble_core::goal::ProviderGoal;
use serde_json::{Value, json};

use super::wire::{
    ApprovalDecision, ApprovalRequest, ApprovalResponse, CodexErrorInfo, DynamicToolCallResponse, FileUpdateChange,
    ItemStatus, McpServerElicitationAction, McpServerElicitationRequestResponse, OfferedDecision, PermissionGrantScope,
    PermissionsRequestApprovalResponse, ServerNotification, ServerRequest, ServerResponse, ThreadGoal, ThreadItem,
    ThreadTokenUsage, ToolRequestUserInputAnswer, ToolRequestUserInputQuestion, ToolRequestUserInputResponse,
    TurnError,
};

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

/// Texts streaming, by start order: (item id, text so far).
type OpenTexts = BTreeMap<u64, (String, String)>;

/// What a turn has open.
#[derive(Debug, Default)]
pub struct Translator {
    /// Agent messages streaming, with their text so far, in start order.
    messages: OpenTexts,
    reasoning: OpenTexts,
    calls: HashMap<String, CallKind>,
    file_changes: HashMap<String, Vec<FileChange>>,
    order: u64,
}

impl Translator {
    fn next(&mut self) -> u64 {
        self.order += 1;
        self.order
    }

    /// Events for a turn-scoped notification (items, deltas, plans, usage, warnings). The ones
    /// the session handles itself (turns, goals, names, resolved requests) give none here.
    pub fn notification(&mut self, n: ServerNotification) -> Vec<EventBody> {
        let method = n.method();
        match n {
            ServerNotification::ItemStarted(n) => self.item_started(n.item),
            ServerNotification::ItemCompleted(n) => self.item_completed(n.item),
            ServerNotification::AgentMessageDelta(d) => {
                append(&mut self.messages, &mut self.order, &d.item_id, &d.delta);
                vec![EventBody::MessageDelta(TextDeltaPayload { item_id: d.item_id, text: d.delta })]
            }
            ServerNotification::ReasoningSummaryTextDelta(d) | ServerNotification::ReasoningTextDelta(d) => {
                append(&mut self.reasoning, &mut self.order, &d.item_id, &d.delta);
                vec![EventBody::ReasoningDelta(TextDeltaPayload { item_id: d.item_id, text: d.delta })]
            }
            ServerNotification::CommandExecutionOutputDelta(d) | ServerNotification::FileChangeOutputDelta(d) => {
                vec![EventBody::CallUpdated(CallUpdatedPayload {
                    call_id: d.item_id,
                    output_delta: Some(d.delta),
                    status: None,
                })]
            }
            ServerNotification::McpToolCallProgress(p) => vec![EventBody::CallUpdated(CallUpdatedPayload {
                call_id: p.item_id,
                output_delta: None,
                status: p.message,
            })],
            ServerNotification::FileChangePatchUpdated(p) => {
                self.file_changes.insert(p.item_id, file_changes(p.changes));
                Vec::new()
            }
            ServerNotification::TurnPlanUpdated(p) => vec![EventBody::PlanUpdated(PlanUpdatedPayload {
                explanation: p.explanation,
                steps: p.plan.into_iter().map(|s| PlanStep { step: s.step, status: s.status }).collect(),
            })],
            ServerNotification::ThreadTokenUsageUpdated(u) => vec![EventBody::UsageUpdated(usage(&u.token_usage))],
            ServerNotification::Warning(w) | ServerNotification::GuardianWarning(w) => {
                notice(NoticeLevel::Warning, w.message.as_deref().unwrap_or("warning"))
            }
            ServerNotification::ConfigWarning(s) | ServerNotification::DeprecationNotice(s) => {
                notice(NoticeLevel::Info, s.summary.as_deref().unwrap_or(method))
            }
            ServerNotification::Error(e) => {
                let msg = e.error.and_then(|e| e.message).unwrap_or_else(|| "error".into());
                if e.will_retry {
                    notice(NoticeLevel::Warning, &format!("{msg} (retrying)"))
                } else {
                    notice(NoticeLevel::Error, &msg)
                }
            }
            ServerNotification::ModelRerouted(r) => {
                notice(NoticeLevel::Info, &format!("model rerouted from {} to {}", r.from_model, r.to_model))
            }
            ServerNotification::ThreadStarted(_)
            | ServerNotification::ThreadNameUpdated(_)
            | ServerNotification::ThreadGoalUpdated(_)
            | ServerNotification::ThreadGoalCleared(_)
            | ServerNotification::TurnStarted(_)
            | ServerNotification::TurnCompleted(_)
            | ServerNotification::ServerRequestResolved(_) => Vec::new(),
        }
    }

    /// A call starts: remembered as open, announced with what the caller adds.
    fn call(&mut self, call_id: String, kind: CallKind, name: impl Into<String>) -> CallStartedPayload {
        self.calls.insert(call_id.clone(), kind);
        CallStartedPayload { call_id, kind, name: name.into(), command: None, cwd: None, input: None, changes: vec![] }
    }

    fn item_started(&mut self, item: ThreadItem) -> Vec<EventBody> {
        let started = match item {
            ThreadItem::AgentMessage { id, text } => {
                // A new message while another is open means codex abandoned the old one (a steer
                // restarts the model stream): close it first.
                let mut out = self.close_messages();
                let n = self.next();
                self.messages.insert(n, (id, text));
                out.shrink_to_fit();
                return out;
            }
            ThreadItem::Reasoning { id, .. } => {
                let n = self.next();
                self.reasoning.insert(n, (id, String::new()));
                return Vec::new();
            }
            ThreadItem::CommandExecution { id, command, cwd, .. } => {
                CallStartedPayload { command, cwd, ..self.call(id, CallKind::Command, "shell") }
            }
            ThreadItem::FileChange { id, changes, .. } => {
                let changes = file_changes(changes);
                self.file_changes.insert(id.clone(), changes.clone());
                CallStartedPayload { changes, ..self.call(id, CallKind::FileChange, "apply_patch") }
            }
            ThreadItem::McpToolCall { id, server, tool, arguments, .. } => {
                CallStartedPayload { input: arguments, ..self.call(id, CallKind::Mcp, format!("{server}/{tool}")) }
            }
            ThreadItem::DynamicToolCall { id, tool, arguments, .. } => {
                CallStartedPayload { input: arguments, ..self.call(id, CallKind::Tool, tool) }
            }
            ThreadItem::CollabAgentToolCall { id, tool, prompt, .. } => {
                CallStartedPayload { input: prompt.map(Value::String), ..self.call(id, CallKind::Tool, tool) }
            }
            ThreadItem::WebSearch { id, query } => CallStartedPayload {
                input: Some(json!({ "query": query })),
                ..self.call(id, CallKind::WebSearch, "web_search")
            },
            ThreadItem::UserMessage { .. } | ThreadItem::Unknown => return Vec::new(),
        };
        vec![EventBody::CallStarted(started)]
    }

    fn item_completed(&mut self, item: ThreadItem) -> Vec<EventBody> {
        let completed = match item {
            ThreadItem::AgentMessage { id, text } => {
                self.messages.retain(|_, (m, _)| *m != id);
                return vec![EventBody::MessageCompleted(TextCompletedPayload { item_id: id, text })];
            }
            ThreadItem::Reasoning { id, summary } => {
                let streamed = self.reasoning.iter().find(|(_, (r, _))| *r == id).map(|(_, (_, t))| t.clone());
                self.reasoning.retain(|_, (r, _)| *r != id);
                let summary = Some(summary.join("\n")).filter(|t| !t.is_empty());
                let text = summary.or(streamed).unwrap_or_default();
                return vec![EventBody::ReasoningCompleted(TextCompletedPayload { item_id: id, text })];
            }
            ThreadItem::CommandExecution { id, status, aggregated_output, exit_code, .. } => CallCompletedPayload {
                status: call_status(status),
                output: aggregated_output,
                exit_code: exit_code.map(|c| c as i32),
                ..self.call_ended(id)
            },
            ThreadItem::FileChange { id, changes, status } => CallCompletedPayload {
                status: call_status(status),
                changes: file_changes(changes),
                ..self.call_ended(id)
            },
            ThreadItem::McpToolCall { id, result, error, status, .. } => {
                // A failed call has no result but an error: show the error, and call it failed.
                let error = error.filter(|e| !e.is_null());
                let failed = error.is_some().then_some(false);
                self.tool_call_ended(id, result.filter(|r| !r.is_null()).or(error), failed, status)
            }
            ThreadItem::DynamicToolCall { id, content_items, success, status, .. } => {
                self.tool_call_ended(id, content_items, success, status)
            }
            ThreadItem::CollabAgentToolCall { id, status, .. } => self.tool_call_ended(id, None, None, status),
            ThreadItem::WebSearch { id, .. } => self.tool_call_ended(id, None, None, None),
            ThreadItem::UserMessage { .. } | ThreadItem::Unknown => return Vec::new(),
        };
        vec![EventBody::CallCompleted(completed)]
    }

    /// A call ends (completed, unless the caller says otherwise).
    fn call_ended(&mut self, call_id: String) -> CallCompletedPayload {
        self.calls.remove(&call_id);
        CallCompletedPayload { call_id, status: CallStatus::Completed, output: None, exit_code: None, changes: vec![] }
    }

    /// A tool call ends, with what the tool answered (text as it is, anything else as JSON).
    fn tool_call_ended(
        &mut self,
        call_id: String,
        output: Option<Value>,
        success: Option<bool>,
        status: Option<ItemStatus>,
    ) -> CallCompletedPayload {
        let output =
            output.filter(|v| !v.is_null()).map(|v| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string()));
        let status = if success == Some(false) { CallStatus::Failed } else { call_status(status) };
        CallCompletedPayload { status, output, ..self.call_ended(call_id) }
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

/// Adds a delta to the open text of `item_id` (opening it on its first delta).
fn append(open: &mut OpenTexts, order: &mut u64, item_id: &str, delta: &str) {
    match open.values_mut().find(|(id, _)| id == item_id) {
        Some((_, text)) => push_capped(text, delta),
        None => {
            *order += 1;
            open.insert(*order, (item_id.to_owned(), delta.to_owned()));
        }
    }
}

fn notice(level: NoticeLevel, message: &str) -> Vec<EventBody> {
    vec![EventBody::Notice(NoticePayload { level, message: message.to_owned() })]
}

fn call_status(status: Option<ItemStatus>) -> CallStatus {
    match status {
        Some(ItemStatus::Failed) => CallStatus::Failed,
        Some(ItemStatus::Declined) => CallStatus::Declined,
        Some(ItemStatus::InProgress) => CallStatus::Interrupted,
        Some(ItemStatus::Completed | ItemStatus::Interrupted | ItemStatus::Unknown) | None => CallStatus::Completed,
    }
}

fn file_changes(changes: Vec<FileUpdateChange>) -> Vec<FileChange> {
    changes
        .into_iter()
        .map(|c| FileChange {
            path: c.path,
            kind: c.kind.map(|k| k.kind).unwrap_or_else(|| "update".into()),
            diff: c.diff,
        })
        .collect()
}

/// `thread/tokenUsage/updated` → `usage.updated`.
pub fn usage(u: &ThreadTokenUsage) -> UsagePayload {
    let t = &u.total;
    UsagePayload {
        input_tokens: t.input_tokens.unwrap_or(0),
        output_tokens: t.output_tokens.unwrap_or(0),
        cached_input_tokens: t.cached_input_tokens.unwrap_or(0),
        reasoning_output_tokens: t.reasoning_output_tokens.unwrap_or(0),
        total_tokens: t.total_tokens.unwrap_or(0),
        last_turn_total_tokens: u.last.as_ref().and_then(|l| l.total_tokens),
        context_window: u.model_context_window,
        cost: None,
    }
}

/// The error of a failed turn (`turn/completed` with `status: failed`).
pub fn turn_error(error: Option<&TurnError>) -> ErrorInfo {
    let message = error.and_then(|e| e.message.clone()).unwrap_or_else(|| "the turn failed".into());
    let info = error.and_then(|e| e.codex_error_info.as_ref());
    let http_status = match info {
        Some(CodexErrorInfo::Detailed(details)) => details.get("httpConnectionFailed").and_then(|d| d.http_status_code),
        _ => None,
    };
    let code = match (http_status, info) {
        (Some(401 | 403), _) => Some("unauthorized".to_owned()),
        (Some(429), _) => Some("rate_limited".to_owned()),
        (Some(s), _) if s >= 500 => Some("model_unavailable".to_owned()),
        _ if message.contains("Missing environment variable") => Some("auth_required".to_owned()),
        (_, Some(CodexErrorInfo::Kind(kind))) => Some(to_snake(kind)),
        (_, Some(CodexErrorInfo::Detailed(details))) => details.keys().next().map(|k| to_snake(k)),
        (_, Some(CodexErrorInfo::Other(v))) => v.as_object().and_then(|o| o.keys().next()).map(|k| to_snake(k)),
        (_, None) => None,
    }
    .unwrap_or_else(|| "turn_failed".into());
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

/// A codex goal as a [`ProviderGoal`].
pub fn provider_goal(g: ThreadGoal) -> ProviderGoal {
    ProviderGoal {
        thread_id: g.thread_id,
        objective: g.objective,
        status: g.status,
        token_budget: g.token_budget,
        tokens_used: g.tokens_used,
        created_at: g.created_at,
        updated_at: g.updated_at,
    }
}

/// Which interaction a server request is, and how to present it; `None` for requests Ensemble
/// has no client for (answered at once with [`answer`] and [`Decision::Decline`]).
pub fn interaction(
    request: &ServerRequest,
    request_id: &str,
    translator: &Translator,
) -> Option<InteractionRequestedPayload> {
    let (kind, title, item_id, reason) = match request {
        ServerRequest::CommandExecutionApproval(p) => {
            let title = p.command.as_deref().map(|c| format!("Run `{c}`?")).unwrap_or_else(|| "Run a command?".into());
            asked(InteractionKind::CommandApproval, title, &p.request)
        }
        ServerRequest::FileChangeApproval(p) => {
            asked(InteractionKind::FileChangeApproval, "Apply these file changes?".into(), p)
        }
        ServerRequest::PermissionsApproval(p) => {
            asked(InteractionKind::Permissions, "Grant additional permissions?".into(), &p.request)
        }
        ServerRequest::UserInput(p) => {
            let title = p.questions.first().map(|q| q.question.clone()).unwrap_or_else(|| "A question".into());
            (InteractionKind::UserInput, title, p.item_id.as_deref(), None)
        }
        ServerRequest::McpServerElicitation(_) | ServerRequest::DynamicToolCall(_) => return None,
    };
    let mut r = InteractionRequestedPayload {
        request_id: request_id.to_owned(),
        kind,
        title,
        detail: reason.map(str::to_owned),
        command: None,
        cwd: None,
        diff: None,
        questions: vec![],
        options: vec![Decision::Accept, Decision::AcceptForSession, Decision::Decline, Decision::Cancel],
        call_id: item_id.map(str::to_owned),
        agent_options: vec![],
    };
    match request {
        ServerRequest::CommandExecutionApproval(p) => {
            r.command = p.command.clone();
            r.cwd = p.cwd.clone();
            if let Some(available) = &p.available_decisions {
                offer(&mut r.options, available);
            }
        }
        ServerRequest::FileChangeApproval(_) => r.diff = item_id.and_then(|i| translator.diff_for(i)),
        ServerRequest::PermissionsApproval(p) => {
            r.cwd = p.cwd.clone();
            r.detail = Some(format!(
                "{}requested: {}",
                reason.map(|x| format!("{x}; ")).unwrap_or_default(),
                p.permissions.clone().unwrap_or(Value::Null)
            ));
        }
        ServerRequest::UserInput(p) => {
            r.questions = p.questions.iter().map(question).collect();
            r.options = vec![Decision::Accept, Decision::Decline, Decision::Cancel];
        }
        ServerRequest::McpServerElicitation(_) | ServerRequest::DynamicToolCall(_) => {}
    }
    Some(r)
}

/// An approval's kind and title, with what every approval request carries.
fn asked(
    kind: InteractionKind,
    title: String,
    r: &ApprovalRequest,
) -> (InteractionKind, String, Option<&str>, Option<&str>) {
    (kind, title, r.item_id.as_deref(), r.reason.as_deref())
}

/// Offers what codex offers, in its order (the amendment variants have no REST form).
fn offer(options: &mut Vec<Decision>, available: &[OfferedDecision]) {
    let offered: Vec<Decision> = available
        .iter()
        .filter_map(|d| match d {
            OfferedDecision::Plain(d) => Some(decision(*d)),
            OfferedDecision::Other(_) => None,
        })
        .collect();
    if !offered.is_empty() {
        *options = offered;
    }
    // Codex 0.169.0 leaves `decline` out of `availableDecisions` (it lists accept, the amendment
    // and cancel) but honours it: the call ends `declined` and the turn goes on. Without it a
    // client could only cancel the whole turn.
    if !options.contains(&Decision::Decline) {
        let at = options.iter().position(|d| *d == Decision::Cancel).unwrap_or(options.len());
        options.insert(at, Decision::Decline);
    }
}

fn question(q: &ToolRequestUserInputQuestion) -> Question {
    let options = q.options.as_deref().unwrap_or_default();
    Question {
        id: q.id.clone(),
        header: q.header.clone(),
        question: q.question.clone(),
        options: options
            .iter()
            .map(|o| QuestionOption { label: o.label.clone(), description: o.description.clone() })
            .collect(),
        is_other: q.is_other,
        is_secret: q.is_secret,
    }
}

fn decision(d: ApprovalDecision) -> Decision {
    match d {
        ApprovalDecision::Accept => Decision::Accept,
        ApprovalDecision::AcceptForSession => Decision::AcceptForSession,
        ApprovalDecision::Decline => Decision::Decline,
        ApprovalDecision::Cancel => Decision::Cancel,
    }
}

fn approval(d: Decision) -> ApprovalDecision {
    match d {
        Decision::Accept => ApprovalDecision::Accept,
        Decision::AcceptForSession => ApprovalDecision::AcceptForSession,
        Decision::Decline => ApprovalDecision::Decline,
        Decision::Cancel => ApprovalDecision::Cancel,
    }
}

/// The result that answers a server request with the client's decision (and answers).
pub fn answer(request: &ServerRequest, decision: Decision, answers: Option<&Value>) -> ServerResponse {
    match request {
        ServerRequest::CommandExecutionApproval(_) | ServerRequest::FileChangeApproval(_) => {
            ServerResponse::Approval(ApprovalResponse { decision: approval(decision) })
        }
        ServerRequest::PermissionsApproval(p) => {
            let granted = match (&p.permissions, decision.accepts()) {
                (Some(asked), true) => asked.clone(),
                _ => json!({}),
            };
            let scope = if decision == Decision::AcceptForSession {
                PermissionGrantScope::Session
            } else {
                PermissionGrantScope::Turn
            };
            ServerResponse::Permissions(PermissionsRequestApprovalResponse { permissions: granted, scope })
        }
        ServerRequest::UserInput(_) => {
            let mut out = BTreeMap::new();
            if decision.accepts()
                && let Some(Value::Object(m)) = answers
            {
                for (qid, a) in m {
                    out.insert(qid.clone(), ToolRequestUserInputAnswer { answers: answer_texts(a) });
                }
            }
            ServerResponse::UserInput(ToolRequestUserInputResponse { answers: out })
        }
        ServerRequest::McpServerElicitation(_) => {
            let action = match decision {
                Decision::Accept | Decision::AcceptForSession => McpServerElicitationAction::Accept,
                Decision::Decline => McpServerElicitationAction::Decline,
                Decision::Cancel => McpServerElicitationAction::Cancel,
            };
            ServerResponse::McpServerElicitation(McpServerElicitationRequestResponse { action })
        }
        ServerRequest::DynamicToolCall(_) => {
            ServerResponse::DynamicToolCall(DynamicToolCallResponse { content_items: vec![], success: false })
        }
    }
}

/// A client's answer to one question as codex's list of texts: a text, a list, or `{answers}`.
fn answer_texts(a: &Value) -> Vec<String> {
    let text = |v: &Value| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
    match a {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().map(text).collect(),
        Value::Object(o) => {
            o.get("answers").and_then(Value::as_array).map(|l| l.iter().map(text).collect()).unwrap_or_default()
        }
        other => vec![other.to_string()],
    }
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
