//! The pure mapping of ACP to Ensemble: `session/update` kinds to events and session patches, a
//! permission request to an interaction, a decision to the option it picks, a stop reason to the
//! turn's terminal event, and the agent's modes and config options to the session's.
//!
//! The [`Translator`] keeps what a turn has open (the message or the reasoning being streamed, the
//! tool calls started) so every item it opened is closed exactly once, also when the turn ends
//! without the agent closing it.

use std::collections::HashMap;

use ensemble_core::clock::new_id;
use ensemble_core::event::{
    AgentOption, AgentOptionKind, CallCompletedPayload, CallKind, CallStartedPayload, CallStatus, CallUpdatedPayload,
    CommandInfo, CommandsUpdatedPayload, Decision, ErrorInfo, EventBody, FileChange, InteractionKind,
    InteractionRequestedPayload, NoticeLevel, NoticePayload, PlanStep, PlanUpdatedPayload, TextCompletedPayload,
    TextDeltaPayload, TurnCanceledPayload, TurnCompletedPayload, TurnFailedPayload, UsagePayload,
};
use ensemble_core::model::{ConfigChoice, ConfigOption, ModeInfo, SessionModes, SessionPatch};
use ensemble_core::shared_list::SharedList;
use ensemble_core::usage::Cost;
use serde_json::Value;

use super::diff::unified;
use super::quirks::{self, Quirks};
use super::wire as acp;

/// What one ACP message means for the session.
#[derive(Clone, Debug, PartialEq)]
#[expect(clippy::large_enum_variant, reason = "events are the common case; boxing them would allocate per update")]
pub enum Out {
    Event(EventBody),
    Update(SessionPatch),
}

/// Turn and session state the mapping needs.
#[derive(Debug)]
pub struct Translator {
    /// Longest text kept for an open message or reasoning item (what `*.completed` carries).
    max_text: usize,
    message: Option<OpenText>,
    reasoning: Option<OpenText>,
    calls: HashMap<String, OpenCall>,
    /// The agent's modes, kept to apply `current_mode_update`.
    modes: Option<SessionModes>,
    /// How this agent fills what the protocol leaves free (from its `initialize`).
    quirks: &'static Quirks,
}

#[derive(Debug)]
struct OpenText {
    item_id: String,
    /// The agent's message id, when it gives one (a new id starts a new item).
    agent_id: Option<String>,
    text: String,
}

#[derive(Debug, Default)]
struct OpenCall {
    kind: Option<acp::ToolKind>,
    /// What the call said about itself, for a permission request that only names it.
    title: String,
    raw_input: Option<Value>,
    output: String,
    changes: Vec<FileChange>,
}

impl Translator {
    pub fn new(max_text: usize) -> Self {
        Self {
            max_text,
            message: None,
            reasoning: None,
            calls: HashMap::new(),
            modes: None,
            quirks: quirks::for_agent(None),
        }
    }

    /// The agent said who it is: its quirks apply from now on.
    pub fn set_quirks(&mut self, quirks: &'static Quirks) {
        self.quirks = quirks;
    }

    /// Forgets the previous turn's items (a new turn starts).
    pub fn reset(&mut self) {
        self.message = None;
        self.reasoning = None;
        self.calls.clear();
    }

    /// The agent's modes as the session shows them, remembered for later mode updates.
    pub fn set_modes(&mut self, modes: Option<&acp::SessionModeState>) -> Option<SessionModes> {
        self.modes = modes.map(session_modes);
        self.modes.clone()
    }

    /// The modes after a switch to `mode` (None when the agent has no modes).
    pub fn current_mode(&mut self, mode: &str) -> Option<SessionModes> {
        let modes = self.modes.as_mut()?;
        modes.current = mode.to_owned();
        Some(modes.clone())
    }

    /// Maps one `session/update`.
    pub fn update(&mut self, update: acp::SessionUpdate) -> Vec<Out> {
        use acp::SessionUpdate as U;
        let mut out = Vec::new();
        match update {
            U::AgentMessageChunk(chunk) if announced_mode(self.quirks, &chunk.content).is_some() => {
                let mode = announced_mode(self.quirks, &chunk.content).unwrap_or_default();
                if let Some(modes) = self.current_mode(mode) {
                    out.push(Out::Update(SessionPatch { modes: Some(modes), ..Default::default() }));
                }
            }
            U::AgentMessageChunk(chunk) => {
                self.close_reasoning(&mut out);
                if let Some(text) = text_of(&chunk.content) {
                    let agent_id = chunk.message_id.map(|m| m.0.to_string());
                    Self::stream(
                        &mut self.message,
                        agent_id,
                        text,
                        self.max_text,
                        &mut out,
                        EventBody::MessageDelta,
                        |o, t| EventBody::MessageCompleted(TextCompletedPayload { item_id: o, text: t }),
                    );
                }
            }
            U::AgentThoughtChunk(chunk) => {
                self.close_message(&mut out);
                if let Some(text) = text_of(&chunk.content) {
                    let agent_id = chunk.message_id.map(|m| m.0.to_string());
                    Self::stream(
                        &mut self.reasoning,
                        agent_id,
                        text,
                        self.max_text,
                        &mut out,
                        EventBody::ReasoningDelta,
                        |o, t| EventBody::ReasoningCompleted(TextCompletedPayload { item_id: o, text: t }),
                    );
                }
            }
            U::ToolCall(call) => {
                self.close_text(&mut out);
                self.tool_call(call, &mut out);
            }
            U::ToolCallUpdate(update) => {
                self.close_text(&mut out);
                self.tool_call_update(update, &mut out);
            }
            U::Plan(plan) => out.push(EventBody::PlanUpdated(plan_updated(&plan)).into()),
            U::AvailableCommandsUpdate(c) => {
                out.push(EventBody::CommandsUpdated(commands(&c.available_commands)).into());
            }
            U::CurrentModeUpdate(m) => {
                if let Some(modes) = self.modes.as_mut() {
                    modes.current = m.current_mode_id.0.to_string();
                    out.push(Out::Update(SessionPatch { modes: Some(modes.clone()), ..Default::default() }));
                }
            }
            U::ConfigOptionUpdate(c) => out.push(Out::Update(SessionPatch {
                config_options: Some(config_options(&c.config_options)),
                ..Default::default()
            })),
            U::SessionInfoUpdate(info) => {
                if let acp::MaybeUndefined::Value(title) = info.title
                    && !title.trim().is_empty()
                {
                    out.push(Out::Update(SessionPatch { title: Some(title), ..Default::default() }));
                }
            }
            U::UsageUpdate(u) => out.push(
                EventBody::UsageUpdated(UsagePayload {
                    total_tokens: clamp(u.used),
                    context_window: Some(clamp(u.size)),
                    cost: u
                        .cost
                        .filter(|c| c.amount.is_finite() && !c.currency.trim().is_empty())
                        .map(|c| Cost { amount: c.amount, currency: ensemble_core::limits::clip(&c.currency) }),
                    ..Default::default()
                })
                .into(),
            ),
            U::Notice(n) => {
                let level = match n.severity {
                    acp::NoticeSeverity::Error => NoticeLevel::Error,
                    acp::NoticeSeverity::Warning => NoticeLevel::Warning,
                    _ => NoticeLevel::Info,
                };
                let message = match n.description {
                    Some(d) if !d.is_empty() => format!("{}: {d}", n.title),
                    _ => n.title,
                };
                out.push(EventBody::Notice(NoticePayload { level, message }).into());
            }
            // The user's own input is `turn.started`'s; compaction and the rest have no event.
            _ => {}
        }
        out
    }

    fn stream(
        open: &mut Option<OpenText>,
        agent_id: Option<String>,
        text: &str,
        max: usize,
        out: &mut Vec<Out>,
        delta: fn(TextDeltaPayload) -> EventBody,
        completed: fn(String, String) -> EventBody,
    ) {
        if let Some(o) = open.as_ref()
            && agent_id.is_some()
            && o.agent_id.is_some()
            && o.agent_id != agent_id
            && let Some(o) = open.take()
        {
            out.push(completed(o.item_id, o.text).into());
        }
        let o = open.get_or_insert_with(|| OpenText { item_id: new_id(), agent_id, text: String::new() });
        push_capped(&mut o.text, text, max);
        out.push(delta(TextDeltaPayload { item_id: o.item_id.clone(), text: text.to_owned() }).into());
    }

    fn close_message(&mut self, out: &mut Vec<Out>) {
        if let Some(o) = self.message.take() {
            out.push(EventBody::MessageCompleted(TextCompletedPayload { item_id: o.item_id, text: o.text }).into());
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<Out>) {
        if let Some(o) = self.reasoning.take() {
            out.push(EventBody::ReasoningCompleted(TextCompletedPayload { item_id: o.item_id, text: o.text }).into());
        }
    }

    fn close_text(&mut self, out: &mut Vec<Out>) {
        self.close_reasoning(out);
        self.close_message(out);
    }

    fn tool_call(&mut self, call: acp::ToolCall, out: &mut Vec<Out>) {
        let id = call.tool_call_id.0.to_string();
        if self.calls.contains_key(&id) {
            // Announced twice: treat the second as an update.
            let fields =
                acp::ToolCallUpdateFields::new().status(call.status).content(call.content).raw_output(call.raw_output);
            return self.tool_call_update(acp::ToolCallUpdate::new(call.tool_call_id, fields).meta(call.meta), out);
        }
        let changes = changes(&call.content);
        out.push(
            EventBody::CallStarted(CallStartedPayload {
                call_id: id.clone(),
                kind: call_kind(call.kind),
                name: call.title.clone(),
                command: command_of(self.quirks, call.kind, &call.title, call.raw_input.as_ref()),
                cwd: call.raw_input.as_ref().and_then(|i| str_field(i, &["cwd"])),
                input: call.raw_input.clone(),
                changes: changes.clone(),
            })
            .into(),
        );
        let mut open = OpenCall {
            kind: Some(call.kind),
            title: call.title.clone(),
            raw_input: call.raw_input.clone(),
            output: String::new(),
            changes,
        };
        let mut text = content_text(&call.content);
        let (piece, exit) = self.quirks.terminal_meta(call.meta.as_ref());
        text.push_str(piece.as_deref().unwrap_or_default());
        if !text.is_empty() {
            push_capped(&mut open.output, &text, self.max_text);
            out.push(
                EventBody::CallUpdated(CallUpdatedPayload {
                    call_id: id.clone(),
                    output_delta: Some(text),
                    status: None,
                })
                .into(),
            );
        }
        self.calls.insert(id.clone(), open);
        if matches!(call.status, acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed) {
            self.complete_call(&id, call.status, call.raw_output.as_ref(), exit, out);
        }
    }

    fn tool_call_update(&mut self, update: acp::ToolCallUpdate, out: &mut Vec<Out>) {
        let id = update.tool_call_id.0.to_string();
        let f = update.fields;
        // A terminal command's output and exit code, from `_meta` (see `quirks`).
        let (piece, exit) = self.quirks.terminal_meta(update.meta.as_ref());
        if !self.calls.contains_key(&id) {
            // An update of a call never announced: announce it from what the update says.
            let kind = f.kind.unwrap_or(acp::ToolKind::Other);
            let title = f.title.clone().unwrap_or_else(|| "tool call".to_owned());
            let changes = f.content.as_deref().map(changes).unwrap_or_default();
            out.push(
                EventBody::CallStarted(CallStartedPayload {
                    call_id: id.clone(),
                    kind: call_kind(kind),
                    name: title.clone(),
                    command: command_of(self.quirks, kind, &title, f.raw_input.as_ref()),
                    cwd: f.raw_input.as_ref().and_then(|i| str_field(i, &["cwd"])),
                    input: f.raw_input.clone(),
                    changes: changes.clone(),
                })
                .into(),
            );
            self.calls.insert(
                id.clone(),
                OpenCall { kind: Some(kind), title, raw_input: f.raw_input.clone(), output: String::new(), changes },
            );
        }
        let max = self.max_text;
        let Some(open) = self.calls.get_mut(&id) else { return };
        if let Some(k) = f.kind {
            open.kind = Some(k);
        }
        let mut delta = String::new();
        if let Some(content) = &f.content {
            for c in changes(content) {
                open.changes.retain(|x| x.path != c.path);
                open.changes.push(c);
            }
            let text = content_text(content);
            // Content replaces the call's content: only what is new is a delta.
            if let Some(rest) = text.strip_prefix(open.output.as_str()) {
                delta = rest.to_owned();
            } else if !text.is_empty() {
                delta = text;
            }
        }
        delta.push_str(piece.as_deref().unwrap_or_default());
        if !delta.is_empty() {
            push_capped(&mut open.output, &delta, max);
        }
        match f.status {
            Some(status @ (acp::ToolCallStatus::Completed | acp::ToolCallStatus::Failed)) => {
                if !delta.is_empty() {
                    out.push(
                        EventBody::CallUpdated(CallUpdatedPayload {
                            call_id: id.clone(),
                            output_delta: Some(delta),
                            status: None,
                        })
                        .into(),
                    );
                }
                self.complete_call(&id, status, f.raw_output.as_ref(), exit, out);
            }
            status => {
                let status = status.map(|s| status_name(s).to_owned());
                if !delta.is_empty() || status.is_some() {
                    out.push(
                        EventBody::CallUpdated(CallUpdatedPayload {
                            call_id: id,
                            output_delta: (!delta.is_empty()).then_some(delta),
                            status,
                        })
                        .into(),
                    );
                }
            }
        }
    }

    fn complete_call(
        &mut self,
        id: &str,
        status: acp::ToolCallStatus,
        raw_output: Option<&Value>,
        exit: Option<i32>,
        out: &mut Vec<Out>,
    ) {
        let Some(open) = self.calls.remove(id) else { return };
        let raw = raw_output.and_then(|o| self.quirks.output(o));
        let output = match raw {
            Some(o) if !o.is_empty() => Some(o),
            _ => (!open.output.is_empty()).then_some(open.output),
        };
        let exit_code = raw_output.and_then(|o| self.quirks.exit_code(o)).or(exit);
        let status = match status {
            acp::ToolCallStatus::Failed => CallStatus::Failed,
            _ => CallStatus::Completed,
        };
        out.push(
            EventBody::CallCompleted(CallCompletedPayload {
                call_id: id.to_owned(),
                status,
                output,
                exit_code,
                changes: open.changes,
            })
            .into(),
        );
    }

    /// Closes what is still open when a turn ends (or the agent goes away): the message and the
    /// reasoning with their text so far, calls as interrupted.
    pub fn close_open_items(&mut self) -> Vec<EventBody> {
        let mut out = Vec::new();
        self.close_text(&mut out);
        let mut calls: Vec<(String, OpenCall)> = self.calls.drain().collect();
        calls.sort_by(|a, b| a.0.cmp(&b.0));
        for (call_id, open) in calls {
            out.push(
                EventBody::CallCompleted(CallCompletedPayload {
                    call_id,
                    status: CallStatus::Interrupted,
                    output: (!open.output.is_empty()).then_some(open.output),
                    exit_code: None,
                    changes: open.changes,
                })
                .into(),
            );
        }
        out.into_iter()
            .filter_map(|o| match o {
                Out::Event(e) => Some(e),
                Out::Update(_) => None,
            })
            .collect()
    }

    /// The interaction a `session/request_permission` becomes. The options are the decisions
    /// that pick one of the agent's options (see [`option_for`]); `cancel` is always offered.
    pub fn permission(&self, request: &acp::RequestPermissionRequest, request_id: &str) -> InteractionRequestedPayload {
        let call = &request.tool_call;
        let f = &call.fields;
        let call_id = call.tool_call_id.0.to_string();
        let known = self.calls.get(&call_id);
        let kind = f.kind.or_else(|| known.and_then(|c| c.kind));
        let title = f
            .title
            .clone()
            .or_else(|| known.map(|c| c.title.clone()).filter(|t| !t.is_empty()))
            .unwrap_or_else(|| "The agent asks for permission".to_owned());
        let raw_input = f.raw_input.clone().or_else(|| known.and_then(|c| c.raw_input.clone()));
        let diffs: Vec<String> = f
            .content
            .iter()
            .flatten()
            .filter_map(|c| match c {
                acp::ToolCallContent::Diff(d) => Some(diff_text(d)),
                _ => None,
            })
            .collect();
        let text = f.content.as_deref().map(content_text).unwrap_or_default();
        let interaction_kind = match kind {
            Some(acp::ToolKind::Execute) => InteractionKind::CommandApproval,
            _ if !diffs.is_empty() => InteractionKind::FileChangeApproval,
            _ => InteractionKind::Permissions,
        };
        let mut options: Vec<Decision> = Vec::new();
        for d in [Decision::Accept, Decision::AcceptForSession, Decision::Decline] {
            if option_for(&request.options, d).is_some() {
                options.push(d);
            }
        }
        options.push(Decision::Cancel);
        let agent_options = request
            .options
            .iter()
            .filter_map(|o| {
                let kind = option_kind(&o.kind)?;
                Some(AgentOption {
                    option_id: o.option_id.0.to_string(),
                    name: o.name.clone(),
                    kind,
                    decision: kind.decision(),
                })
            })
            .collect();
        let detail = (!text.is_empty()).then_some(text);
        InteractionRequestedPayload {
            request_id: request_id.to_owned(),
            kind: interaction_kind,
            command: kind.and_then(|k| command_of(self.quirks, k, &title, raw_input.as_ref())),
            cwd: raw_input.as_ref().and_then(|i| str_field(i, &["cwd"])),
            title,
            detail,
            diff: (!diffs.is_empty()).then(|| diffs.join("")),
            questions: Vec::new(),
            options,
            call_id: Some(call_id),
            agent_options,
        }
    }
}

impl From<EventBody> for Out {
    fn from(e: EventBody) -> Self {
        Out::Event(e)
    }
}

/// The agent's option a decision picks: accept → `allow_once`, acceptForSession → `allow_always`,
/// decline → `reject_once` (else `reject_always`). `cancel` picks none (the answer is `cancelled`).
pub fn option_for(options: &[acp::PermissionOption], decision: Decision) -> Option<&acp::PermissionOption> {
    let kinds: &[acp::PermissionOptionKind] = match decision {
        Decision::Accept => &[acp::PermissionOptionKind::AllowOnce],
        Decision::AcceptForSession => &[acp::PermissionOptionKind::AllowAlways],
        Decision::Decline => &[acp::PermissionOptionKind::RejectOnce, acp::PermissionOptionKind::RejectAlways],
        Decision::Cancel => &[],
    };
    kinds.iter().find_map(|k| options.iter().find(|o| o.kind == *k))
}

fn option_kind(kind: &acp::PermissionOptionKind) -> Option<AgentOptionKind> {
    Some(match kind {
        acp::PermissionOptionKind::AllowOnce => AgentOptionKind::AllowOnce,
        acp::PermissionOptionKind::AllowAlways => AgentOptionKind::AllowAlways,
        acp::PermissionOptionKind::RejectOnce => AgentOptionKind::RejectOnce,
        acp::PermissionOptionKind::RejectAlways => AgentOptionKind::RejectAlways,
        _ => return None,
    })
}

/// How a turn ended, from `session/prompt`'s stop reason. `we_cancelled`: Ensemble asked for
/// the cancel; `declined`: the client rejected a permission in this turn.
pub fn terminal(turn_id: &str, stop: acp::StopReason, we_cancelled: bool, declined: bool) -> EventBody {
    let turn_id = turn_id.to_owned();
    let failed = |code: &str, message: &str| {
        EventBody::TurnFailed(TurnFailedPayload { turn_id: turn_id.clone(), error: ErrorInfo::new(code, message) })
    };
    match stop {
        acp::StopReason::EndTurn => EventBody::TurnCompleted(TurnCompletedPayload { turn_id }),
        acp::StopReason::Cancelled => {
            let reason = if we_cancelled {
                "interrupted"
            } else if declined {
                "declined"
            } else {
                "agent_cancelled"
            };
            EventBody::TurnCanceled(TurnCanceledPayload { turn_id, reason: reason.into() })
        }
        acp::StopReason::Refusal => failed("refusal", "the agent refused to continue"),
        acp::StopReason::MaxTokens => failed("max_tokens", "the agent reached its token limit"),
        acp::StopReason::MaxTurnRequests => {
            failed("max_turn_requests", "the agent reached its limit of model requests for one turn")
        }
        _ => failed("unknown_stop_reason", "the agent ended the turn for a reason Ensemble does not know"),
    }
}

/// The agent's modes as the session's.
pub fn session_modes(m: &acp::SessionModeState) -> SessionModes {
    SessionModes {
        current: m.current_mode_id.0.to_string(),
        available: m
            .available_modes
            .iter()
            .map(|a| ModeInfo { id: a.id.0.to_string(), name: a.name.clone(), description: a.description.clone() })
            .collect(),
    }
}

/// The agent's config options as the session's (a boolean option has the choices `true` and
/// `false`).
pub fn config_options(options: &[acp::SessionConfigOption]) -> SharedList<ConfigOption> {
    options
        .iter()
        .filter_map(|o| {
            let (current, choices): (String, SharedList<ConfigChoice>) = match &o.kind {
                acp::SessionConfigKind::Select(s) => {
                    let flat: Vec<&acp::SessionConfigSelectOption> = match &s.options {
                        acp::SessionConfigSelectOptions::Ungrouped(v) => v.iter().collect(),
                        acp::SessionConfigSelectOptions::Grouped(g) => {
                            g.iter().flat_map(|g| g.options.iter()).collect()
                        }
                        _ => Vec::new(),
                    };
                    let choices = flat
                        .into_iter()
                        .map(|c| ConfigChoice {
                            value: c.value.0.to_string(),
                            name: c.name.clone(),
                            description: c.description.clone(),
                        })
                        .collect();
                    (s.current_value.0.to_string(), choices)
                }
                acp::SessionConfigKind::Boolean(b) => {
                    let c = |v: &str| ConfigChoice { value: v.into(), name: v.into(), description: None };
                    (b.current_value.to_string(), [c("true"), c("false")].into())
                }
                _ => return None,
            };
            let category = o.category.as_ref().and_then(|c| match serde_json::to_value(c) {
                Ok(Value::String(s)) => Some(s),
                _ => None,
            });
            Some(ConfigOption {
                id: o.id.0.to_string(),
                name: o.name.clone(),
                description: o.description.clone(),
                category,
                current,
                choices,
            })
        })
        .collect()
}

/// The value to send for option `id` set to `value` (booleans as booleans).
pub fn option_value(options: &[acp::SessionConfigOption], id: &str, value: &str) -> acp::SessionConfigOptionValue {
    let boolean = options.iter().any(|o| &*o.id.0 == id && matches!(o.kind, acp::SessionConfigKind::Boolean(_)));
    match (boolean, value) {
        (true, "true") => acp::SessionConfigOptionValue::boolean(true),
        (true, "false") => acp::SessionConfigOptionValue::boolean(false),
        _ => acp::SessionConfigOptionValue::value_id(value.to_owned()),
    }
}

pub fn commands(list: &[acp::AvailableCommand]) -> CommandsUpdatedPayload {
    CommandsUpdatedPayload {
        commands: list
            .iter()
            .map(|c| CommandInfo {
                name: c.name.clone(),
                description: c.description.clone(),
                input_hint: c.input.as_ref().and_then(|i| match i {
                    acp::AvailableCommandInput::Unstructured(u) => Some(u.hint.clone()),
                    _ => None,
                }),
            })
            .collect(),
    }
}

fn plan_updated(plan: &acp::Plan) -> PlanUpdatedPayload {
    PlanUpdatedPayload {
        explanation: None,
        steps: plan
            .entries
            .iter()
            .map(|e| PlanStep {
                step: e.content.clone(),
                status: match e.status {
                    acp::PlanEntryStatus::InProgress => "inProgress",
                    acp::PlanEntryStatus::Completed => "completed",
                    _ => "pending",
                }
                .to_owned(),
            })
            .collect(),
    }
}

fn call_kind(kind: acp::ToolKind) -> CallKind {
    match kind {
        acp::ToolKind::Execute => CallKind::Command,
        acp::ToolKind::Edit | acp::ToolKind::Delete | acp::ToolKind::Move => CallKind::FileChange,
        acp::ToolKind::Fetch => CallKind::WebSearch,
        acp::ToolKind::Other => CallKind::Other,
        _ => CallKind::Tool,
    }
}

fn status_name(s: acp::ToolCallStatus) -> &'static str {
    match s {
        acp::ToolCallStatus::Pending => "pending",
        acp::ToolCallStatus::InProgress => "inProgress",
        acp::ToolCallStatus::Completed => "completed",
        acp::ToolCallStatus::Failed => "failed",
        _ => "unknown",
    }
}

/// The command an execute call runs: what the agent's raw input says (see `quirks`), else its
/// title.
fn command_of(q: &Quirks, kind: acp::ToolKind, title: &str, raw_input: Option<&Value>) -> Option<String> {
    if kind != acp::ToolKind::Execute {
        return None;
    }
    raw_input.and_then(|i| q.command(i)).or_else(|| Some(title.to_owned()))
}

fn str_field(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str)).map(str::to_owned)
}

/// The mode an agent announces in a message chunk rather than with `current_mode_update`
/// (its quirks' `mode_update_prefix`, Gemini CLI's `[MODE_UPDATE] <mode>`): not text for the user.
fn announced_mode<'a>(q: &Quirks, content: &'a acp::ContentBlock) -> Option<&'a str> {
    let prefix = q.mode_update_prefix?;
    text_of(content)?.strip_prefix(prefix).map(str::trim).filter(|m| !m.is_empty())
}

fn text_of(block: &acp::ContentBlock) -> Option<&str> {
    match block {
        acp::ContentBlock::Text(t) => Some(&t.text),
        _ => None,
    }
}

/// The text of a call's content blocks (terminals are not served, so they carry none).
fn content_text(content: &[acp::ToolCallContent]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            acp::ToolCallContent::Content(c) => text_of(&c.content).map(str::to_owned),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn changes(content: &[acp::ToolCallContent]) -> Vec<FileChange> {
    content
        .iter()
        .filter_map(|c| match c {
            acp::ToolCallContent::Diff(d) => Some(FileChange {
                path: d.path.display().to_string(),
                kind: match (&d.old_text, d.new_text.is_empty()) {
                    (None, _) => "add",
                    (Some(_), true) => "delete",
                    (Some(_), false) => "update",
                }
                .to_owned(),
                diff: Some(diff_text(d)),
            }),
            _ => None,
        })
        .collect()
}

fn diff_text(d: &acp::Diff) -> String {
    let path = d.path.display().to_string();
    unified(&path, d.old_text.as_deref(), &d.new_text)
}

fn push_capped(into: &mut String, text: &str, max: usize) {
    if into.len() >= max {
        return;
    }
    let room = max - into.len();
    let mut cut = text.len().min(room);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    into.push_str(&text[..cut]);
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
