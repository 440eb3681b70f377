//! The agent: request handlers and the prompt directives.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    self, AgentCapabilities, AvailableCommand, AvailableCommandsUpdate, CancelNotification, CloseSessionRequest,
    CloseSessionResponse, ContentBlock, ContentChunk, Cost, CurrentModeUpdate, Diff, EmbeddedResourceResource,
    ForkSessionRequest, ForkSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, PermissionOption, PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    PromptCapabilities, PromptRequest, PromptResponse, ReadTextFileRequest, RequestPermissionOutcome,
    RequestPermissionRequest, SessionCapabilities, SessionCloseCapabilities, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption, SessionForkCapabilities,
    SessionId, SessionInfo, SessionInfoUpdate, SessionListCapabilities, SessionMode, SessionModeState,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse, StopReason, ToolCall, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate, WriteTextFileRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, UntypedMessage};
use serde_json::json;
use tokio::sync::watch;

use crate::Options;
use crate::io::write_raw_lines;
use crate::store::{MODELS, MODES, SessionData, Store, Turn};

type Cx = ConnectionTo<Client>;

/// The largest `flood N`.
const MAX_FLOOD: usize = 100_000;

/// A session this process knows.
#[derive(Debug)]
struct Live {
    data: SessionData,
    /// Bumped by every `session/cancel` for the session; a turn subscribes when its prompt arrives.
    cancel: watch::Sender<u64>,
}

impl Live {
    fn new(data: SessionData) -> Self {
        Self { data, cancel: watch::Sender::new(0) }
    }
}

#[derive(Debug)]
struct State {
    options: Options,
    store: Store,
    sessions: Mutex<HashMap<String, Live>>,
    next_session: AtomicU64,
    next_message: AtomicU64,
}

/// Serve ACP v1 over `transport` until the client closes its side.
pub async fn serve(options: Options, transport: impl ConnectTo<Agent> + 'static) -> Result<(), Error> {
    let state = Arc::new(State {
        store: Store::new(options.state_dir.clone()),
        options,
        sessions: Mutex::new(HashMap::new()),
        next_session: AtomicU64::new(1),
        next_message: AtomicU64::new(1),
    });
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9, s10) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
    );
    Agent
        .v1()
        .name("ensemble-acp-test-agent")
        .on_receive_request(
            async move |request: InitializeRequest, responder: Responder<InitializeResponse>, _cx: Cx| {
                s1.initialize(request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder: Responder<NewSessionResponse>, cx: Cx| {
                s2.new_session(request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder: Responder<LoadSessionResponse>, cx: Cx| {
                s3.load_session(request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder: Responder<SetSessionModeResponse>, cx: Cx| {
                s4.set_mode(request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest,
                        responder: Responder<SetSessionConfigOptionResponse>,
                        _cx: Cx| { s5.set_config_option(request, responder) },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder: Responder<CloseSessionResponse>, _cx: Cx| {
                s6.close(request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder: Responder<PromptResponse>, cx: Cx| {
                s7.prompt(request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ForkSessionRequest, responder: Responder<ForkSessionResponse>, _cx: Cx| {
                s9.fork_session(request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder: Responder<ListSessionsResponse>, _cx: Cx| {
                s10.list_sessions(request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx: Cx| {
                s8.cancel(&notification.session_id);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

fn unknown_session(id: &SessionId) -> Error {
    Error::invalid_params().data(json!({ "sessionId": id, "reason": "unknown session" }))
}

fn modes(data: &SessionData) -> SessionModeState {
    SessionModeState::new(data.mode.clone(), MODES.iter().map(|(id, name)| SessionMode::new(*id, *name)).collect())
}

fn config_options(data: &SessionData) -> Vec<SessionConfigOption> {
    let values: Vec<_> = MODELS.iter().map(|(value, name)| SessionConfigSelectOption::new(*value, *name)).collect();
    vec![
        SessionConfigOption::select("model", "Model", data.model.clone(), values)
            .category(SessionConfigOptionCategory::Model),
    ]
}

fn chunk(text: impl Into<String>, message_id: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.into())).message_id(message_id)
}

/// Respond and report (but do not fail on) a connection that is already gone.
fn deliver<T: agent_client_protocol::JsonRpcResponse>(responder: Responder<T>, result: Result<T, Error>) {
    if let Err(error) = responder.respond_with_result(result) {
        eprintln!("ensemble-acp-test-agent: cannot respond: {error}");
    }
}

impl State {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn message_id(&self, kind: &str) -> String {
        format!("{kind}-{}", self.next_message.fetch_add(1, Ordering::Relaxed))
    }

    /// Persist session `id` as it is in memory (a no-op without `--state-dir`).
    fn persist(&self, id: &str) -> Result<(), Error> {
        let data = self.sessions().get(id).map(|live| live.data.clone());
        match data {
            Some(data) => self
                .store
                .save(id, &data)
                .map_err(|error| Error::internal_error().data(json!(format!("cannot persist session {id}: {error}")))),
            None => Ok(()),
        }
    }

    fn initialize(&self, _request: InitializeRequest, responder: Responder<InitializeResponse>) -> Result<(), Error> {
        let mut sessions = SessionCapabilities::new().close(SessionCloseCapabilities::new());
        if self.options.fork {
            sessions = sessions.fork(SessionForkCapabilities::new());
        }
        if self.options.list {
            sessions = sessions.list(SessionListCapabilities::new());
        }
        let prompts = PromptCapabilities::new().image(self.options.images).embedded_context(self.options.images);
        let capabilities = AgentCapabilities::new()
            .load_session(self.options.load)
            .session_capabilities(sessions)
            .prompt_capabilities(prompts);
        let methods = if self.options.auth_required {
            vec![schema::AuthMethod::Agent(
                schema::AuthMethodAgent::new("api-key", "API key").description("Set TEST_AGENT_KEY".to_owned()),
            )]
        } else {
            Vec::new()
        };
        responder.respond(
            InitializeResponse::new(ProtocolVersion::V1)
                .auth_methods(methods)
                .agent_capabilities(capabilities)
                .agent_info(Implementation::new("ensemble-acp-test-agent", env!("CARGO_PKG_VERSION"))),
        )
    }

    fn new_session(
        &self,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: &Cx,
    ) -> Result<(), Error> {
        if self.options.auth_required {
            return responder.respond_with_error(Error::auth_required());
        }
        let n = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = format!("test-{n}-{}", std::process::id());
        let data = SessionData::new(request.cwd);
        let response = NewSessionResponse::new(id.clone()).modes(modes(&data)).config_options(config_options(&data));
        self.sessions().insert(id.clone(), Live::new(data));
        if let Err(error) = self.persist(&id) {
            self.sessions().remove(&id);
            return responder.respond_with_error(error);
        }
        responder.respond(response)?;
        // After the answer (which is queued first), so the client already knows the session id.
        let commands = AvailableCommandsUpdate::new(vec![AvailableCommand::new("hello", "say hello")]);
        cx.send_notification(SessionNotification::new(id, SessionUpdate::AvailableCommandsUpdate(commands)))
    }

    fn load_session(
        &self,
        request: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: &Cx,
    ) -> Result<(), Error> {
        if !self.options.load {
            return responder.respond_with_error(Error::method_not_found());
        }
        let id = request.session_id.0.to_string();
        let known = self.sessions().get(&id).map(|live| live.data.clone());
        let Some(mut data) = known.or_else(|| self.store.load(&id)) else {
            return responder.respond_with_error(schema::Error::session_not_found(request.session_id).into());
        };
        data.cwd = request.cwd;
        // Replay the history before answering.
        for turn in &data.history {
            let user = self.message_id("user");
            let agent = self.message_id("msg");
            cx.send_notification(SessionNotification::new(
                request.session_id.clone(),
                SessionUpdate::UserMessageChunk(chunk(turn.prompt.clone(), &user)),
            ))?;
            cx.send_notification(SessionNotification::new(
                request.session_id.clone(),
                SessionUpdate::AgentMessageChunk(chunk(turn.reply.clone(), &agent)),
            ))?;
        }
        let response = LoadSessionResponse::new().modes(modes(&data)).config_options(config_options(&data));
        {
            let mut sessions = self.sessions();
            match sessions.get_mut(&id) {
                Some(live) => live.data = data,
                None => {
                    sessions.insert(id.clone(), Live::new(data));
                }
            }
        }
        if let Err(error) = self.persist(&id) {
            return responder.respond_with_error(error);
        }
        responder.respond(response)
    }

    /// `session/list`: the state dir's sessions (of `cwd`, when given), titled by their first prompt.
    fn list_sessions(
        &self,
        request: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
    ) -> Result<(), Error> {
        if !self.options.list {
            return responder.respond_with_error(Error::method_not_found());
        }
        let sessions = self
            .store
            .all()
            .into_iter()
            .filter(|(_, data)| request.cwd.as_ref().is_none_or(|c| *c == data.cwd))
            .map(|(id, data)| {
                let title = data.history.first().map(|t| t.prompt.clone());
                SessionInfo::new(id, data.cwd).title(title)
            })
            .collect();
        responder.respond(ListSessionsResponse::new(sessions))
    }

    /// `session/fork`: a new session whose history is a copy of the source's, working in `cwd`.
    fn fork_session(
        &self,
        request: ForkSessionRequest,
        responder: Responder<ForkSessionResponse>,
    ) -> Result<(), Error> {
        if !self.options.fork {
            return responder.respond_with_error(Error::method_not_found());
        }
        let source = request.session_id.0.to_string();
        let known = self.sessions().get(&source).map(|live| live.data.clone());
        let Some(mut data) = known.or_else(|| self.store.load(&source)) else {
            return responder.respond_with_error(schema::Error::session_not_found(request.session_id).into());
        };
        data.cwd = request.cwd;
        let n = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = format!("fork-{n}-{}", std::process::id());
        let response = ForkSessionResponse::new(id.clone()).modes(modes(&data)).config_options(config_options(&data));
        self.sessions().insert(id.clone(), Live::new(data));
        if let Err(error) = self.persist(&id) {
            self.sessions().remove(&id);
            return responder.respond_with_error(error);
        }
        responder.respond(response)
    }

    fn set_mode(
        &self,
        request: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
        cx: &Cx,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        let mode = request.mode_id.0.to_string();
        if !MODES.iter().any(|(known, _)| *known == mode) {
            return responder
                .respond_with_error(Error::invalid_params().data(json!({ "modeId": mode, "reason": "unknown mode" })));
        }
        let changed = self.sessions().get_mut(&id).map(|live| live.data.mode.clone_from(&mode)).is_some();
        if !changed {
            return responder.respond_with_error(unknown_session(&request.session_id));
        }
        if let Err(error) = self.persist(&id) {
            return responder.respond_with_error(error);
        }
        cx.send_notification(SessionNotification::new(
            request.session_id,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode)),
        ))?;
        responder.respond(SetSessionModeResponse::new())
    }

    fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
        responder: Responder<SetSessionConfigOptionResponse>,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        if request.config_id.0.as_ref() != "model" {
            return responder.respond_with_error(
                Error::invalid_params()
                    .data(json!({ "configId": request.config_id, "reason": "unknown config option" })),
            );
        }
        let value = match &request.value {
            SessionConfigOptionValue::ValueId { value }
                if MODELS.iter().any(|(known, _)| *known == value.0.as_ref()) =>
            {
                value.0.to_string()
            }
            other => {
                return responder.respond_with_error(
                    Error::invalid_params().data(json!({ "value": other, "reason": "unknown value for model" })),
                );
            }
        };
        let options = self.sessions().get_mut(&id).map(|live| {
            live.data.model = value;
            config_options(&live.data)
        });
        let Some(options) = options else {
            return responder.respond_with_error(unknown_session(&request.session_id));
        };
        if let Err(error) = self.persist(&id) {
            return responder.respond_with_error(error);
        }
        responder.respond(SetSessionConfigOptionResponse::new(options))
    }

    fn close(&self, request: CloseSessionRequest, responder: Responder<CloseSessionResponse>) -> Result<(), Error> {
        // Forget it in memory only: the state dir keeps it for a later `session/load`.
        if self.sessions().remove(request.session_id.0.as_ref()).is_none() {
            return responder.respond_with_error(unknown_session(&request.session_id));
        }
        responder.respond(CloseSessionResponse::new())
    }

    fn cancel(&self, session_id: &SessionId) {
        if let Some(live) = self.sessions().get(session_id.0.as_ref()) {
            live.cancel.send_modify(|generation| *generation += 1);
        }
    }

    fn prompt(
        self: &Arc<Self>,
        request: PromptRequest,
        responder: Responder<PromptResponse>,
        cx: &Cx,
    ) -> Result<(), Error> {
        let Some(cancelled) = self.sessions().get(request.session_id.0.as_ref()).map(|live| live.cancel.subscribe())
        else {
            return responder.respond_with_error(unknown_session(&request.session_id));
        };
        let mut text: String = request
            .prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<String>()
            .trim()
            .to_owned();
        for block in &request.prompt {
            let described = match block {
                ContentBlock::Image(i) => {
                    let padding = i.data.bytes().rev().take_while(|&b| b == b'=').count();
                    format!(" [image {} {} bytes]", i.mime_type, i.data.len() * 3 / 4 - padding)
                }
                ContentBlock::ResourceLink(l) => format!(" [link {} {}]", l.name, l.uri),
                ContentBlock::Resource(r) => match &r.resource {
                    EmbeddedResourceResource::TextResourceContents(t) => {
                        format!(" [resource {} {} bytes]", t.uri, t.text.len())
                    }
                    EmbeddedResourceResource::BlobResourceContents(b) => format!(" [resource {} blob]", b.uri),
                    _ => " [resource]".to_owned(),
                },
                _ => continue,
            };
            text.push_str(&described);
        }
        let turn = TurnRunner { state: self.clone(), cx: cx.clone(), session_id: request.session_id, cancelled };
        // The turn runs outside the dispatch loop, so `session/cancel` and the answers to the agent's own
        // requests (permission, fs, …) are processed while it waits.
        cx.spawn(async move {
            let result = turn.run(text.trim()).await.map(PromptResponse::new);
            deliver(responder, result);
            Ok(())
        })
    }
}

/// One prompt turn.
struct TurnRunner {
    state: Arc<State>,
    cx: Cx,
    session_id: SessionId,
    cancelled: watch::Receiver<u64>,
}

impl TurnRunner {
    fn id(&self) -> &str {
        self.session_id.0.as_ref()
    }

    fn update(&self, update: SessionUpdate) -> Result<(), Error> {
        self.cx.send_notification(SessionNotification::new(self.session_id.clone(), update))
    }

    /// One `agent_message_chunk` with a fresh message id.
    fn say(&self, text: impl Into<String>) -> Result<(), Error> {
        let message_id = self.state.message_id("msg");
        self.update(SessionUpdate::AgentMessageChunk(chunk(text, &message_id)))
    }

    fn session<T>(&self, f: impl FnOnce(&mut SessionData) -> T) -> Result<T, Error> {
        let mut sessions = self.state.sessions();
        let live = sessions.get_mut(self.id()).ok_or_else(|| unknown_session(&self.session_id))?;
        Ok(f(&mut live.data))
    }

    async fn run(mut self, text: &str) -> Result<StopReason, Error> {
        let (word, rest) = match text.split_once(char::is_whitespace) {
            Some((word, rest)) => (word, rest.trim_start()),
            None => (text, ""),
        };
        match word {
            "tool" => self.tool(),
            "permission" => self.permission().await,
            "elicit" => self.elicit().await,
            "terminal" => self.terminal(rest, false).await,
            // `exec SCRIPT`: the agent itself runs `sh -c SCRIPT` and says what it printed (what a
            // hostile agent could do in its box).
            "exec" => {
                let out = std::process::Command::new("/bin/sh").args(["-c", rest]).output();
                let said = match out {
                    Ok(o) => format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
                    Err(e) => format!("exec error: {e}"),
                };
                self.say(said)?;
                Ok(StopReason::EndTurn)
            }
            "terminal-leave" => self.terminal(rest, true).await,
            "slow" => {
                self.say("working")?;
                // Until a `session/cancel` for this session (or the session is gone).
                let _changed = self.cancelled.changed().await;
                Ok(StopReason::Cancelled)
            }
            "crash" => self.crash(),
            "garbage" => {
                write_raw_lines(&["not json at all", "{\"broken\":", "[1,2,3]"]).map_err(Error::into_internal_error)?;
                self.say("after garbage")?;
                Ok(StopReason::EndTurn)
            }
            "flood" => self.flood(rest),
            "read" => self.read(rest).await,
            "write" => self.write(rest).await,
            "write-many" => self.write_many(rest).await,
            "unknown-request" => self.unknown_request().await,
            "refuse" => Ok(StopReason::Refusal),
            "unauthenticated" => Err(Error::auth_required()),
            "max-tokens" => Ok(StopReason::MaxTokens),
            "max-turn-requests" => Ok(StopReason::MaxTurnRequests),
            "history" => {
                let prompts = self.session(|data| data.history.iter().map(|t| t.prompt.clone()).collect::<Vec<_>>())?;
                self.say(format!("history: {}", prompts.join(" | ")))?;
                Ok(StopReason::EndTurn)
            }
            "title" => {
                self.update(SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title(rest.to_owned())))?;
                self.say("titled")?;
                Ok(StopReason::EndTurn)
            }
            _ => self.echo(text),
        }
    }

    /// The default: a thought, then `echo: TEXT [mode=M model=X]` in three chunks of one message.
    fn echo(&self, text: &str) -> Result<StopReason, Error> {
        let (mode, model) = self.session(|data| (data.mode.clone(), data.model.clone()))?;
        let thought_id = self.state.message_id("thought");
        self.update(SessionUpdate::AgentThoughtChunk(chunk(format!("thinking about {text}"), &thought_id)))?;
        let reply = format!("echo: {text} [mode={mode} model={model}]");
        let message_id = self.state.message_id("msg");
        for part in thirds(&reply) {
            self.update(SessionUpdate::AgentMessageChunk(chunk(part, &message_id)))?;
        }
        self.session(|data| data.history.push(Turn { prompt: text.to_owned(), reply }))?;
        self.state.persist(self.id())?;
        Ok(StopReason::EndTurn)
    }

    fn tool(&self) -> Result<StopReason, Error> {
        let cwd = self.session(|data| data.cwd.clone())?;
        self.update(SessionUpdate::ToolCall(
            ToolCall::new("call-1", "echo hi")
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::Pending)
                .raw_input(json!({ "command": "echo hi", "cwd": cwd })),
        ))?;
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            "call-1",
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress).content(vec![ToolCallContent::from("hi\n")]),
        )))?;
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            "call-1",
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Completed)
                .raw_output(json!({ "exit_code": 0, "aggregated_output": "hi\n" })),
        )))?;
        self.update(SessionUpdate::ToolCall(
            ToolCall::new("call-2", "edit a.txt")
                .kind(ToolKind::Edit)
                .status(ToolCallStatus::Completed)
                .content(vec![Diff::new(cwd.join("a.txt"), "b\n").old_text("a\n").into()]),
        ))?;
        self.update(SessionUpdate::Plan(Plan::new(vec![
            PlanEntry::new("look", PlanEntryPriority::Medium, PlanEntryStatus::Completed),
            PlanEntry::new("edit", PlanEntryPriority::Medium, PlanEntryStatus::InProgress),
        ])))?;
        self.update(SessionUpdate::UsageUpdate(UsageUpdate::new(10, 100).cost(Cost::new(0.0125, "USD"))))?;
        self.say("done")?;
        Ok(StopReason::EndTurn)
    }

    async fn permission(&self) -> Result<StopReason, Error> {
        self.update(SessionUpdate::ToolCall(
            ToolCall::new("call-p", "rm -rf build")
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::Pending)
                .raw_input(json!({ "command": "rm -rf build" })),
        ))?;
        let options = vec![
            PermissionOption::new("allow-once", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("allow-always", "Always allow", PermissionOptionKind::AllowAlways),
            PermissionOption::new("reject-once", "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new("reject-always", "Never", PermissionOptionKind::RejectAlways),
        ];
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new("call-p", ToolCallUpdateFields::new()),
            options,
        );
        // Awaited in the turn's own task, not in the dispatch loop: `session/cancel` still gets through.
        let response = match self.cx.send_request(request).block_task().await {
            Ok(response) => response,
            Err(error) => {
                self.say(format!("permission error: {} {}", i32::from(error.code), error.message))?;
                return Ok(StopReason::EndTurn);
            }
        };
        match response.outcome {
            RequestPermissionOutcome::Selected(selected) => {
                let option = selected.option_id.0.to_string();
                let status =
                    if option.starts_with("allow") { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
                self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    "call-p",
                    ToolCallUpdateFields::new().status(status),
                )))?;
                self.say(format!("permission: {option}"))?;
                Ok(StopReason::EndTurn)
            }
            _ => Ok(StopReason::Cancelled),
        }
    }

    /// `terminal/create` of `sh -c SCRIPT`, shown by tool call `call-t`; then its exit and output,
    /// and `terminal/release` — or, with `leave`, "started" while it still runs (never released).
    async fn terminal(&self, script: &str, leave: bool) -> Result<StopReason, Error> {
        let created = self
            .cx
            .send_request(
                schema::CreateTerminalRequest::new(self.session_id.clone(), "sh")
                    .args(vec!["-c".to_owned(), script.to_owned()]),
            )
            .block_task()
            .await;
        let id = match created {
            Ok(r) => r.terminal_id,
            Err(error) => {
                self.say(format!("terminal error: {} {}", i32::from(error.code), error.message))?;
                return Ok(StopReason::EndTurn);
            }
        };
        self.update(SessionUpdate::ToolCall(
            ToolCall::new("call-t", script)
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::InProgress)
                .content(vec![ToolCallContent::Terminal(schema::Terminal::new(id.clone()))]),
        ))?;
        if leave {
            self.say("started")?;
            return Ok(StopReason::EndTurn);
        }
        let exit = self
            .cx
            .send_request(schema::WaitForTerminalExitRequest::new(self.session_id.clone(), id.clone()))
            .block_task()
            .await
            .map_err(|e| Error::into_internal_error(std::io::Error::other(e.message)))?;
        let output = self
            .cx
            .send_request(schema::TerminalOutputRequest::new(self.session_id.clone(), id.clone()))
            .block_task()
            .await
            .map_err(|e| Error::into_internal_error(std::io::Error::other(e.message)))?;
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            "call-t",
            ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
        )))?;
        let _ =
            self.cx.send_request(schema::ReleaseTerminalRequest::new(self.session_id.clone(), id)).block_task().await;
        self.say(format!(
            "terminal exit {:?}: {}",
            exit.exit_status.exit_code,
            output.output.trim_end().replace('\n', " | ")
        ))?;
        Ok(StopReason::EndTurn)
    }

    /// `elicitation/create`: a form (a color to choose, a yes/no), then what came back.
    async fn elicit(&self) -> Result<StopReason, Error> {
        let request: schema::CreateElicitationRequest = serde_json::from_value(json!({
            "mode": "form",
            "sessionId": self.id(),
            "message": "Pick a color",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "color": {"type": "string", "title": "Color", "enum": ["red", "blue"]},
                    "sure": {"type": "boolean", "title": "Sure?"}
                },
                "required": ["color"]
            }
        }))
        .map_err(Error::into_internal_error)?;
        match self.cx.send_request(request).block_task().await {
            Ok(response) => {
                let sent = serde_json::to_value(&response).map_err(Error::into_internal_error)?;
                self.say(format!("elicited: {sent}"))?;
                Ok(StopReason::EndTurn)
            }
            Err(error) => {
                self.say(format!("elicit error: {} {}", i32::from(error.code), error.message))?;
                Ok(StopReason::EndTurn)
            }
        }
    }

    /// "about to crash", written straight to stdout (so it is on the pipe), then exit status 3.
    fn crash(&self) -> Result<StopReason, Error> {
        let message_id = self.state.message_id("msg");
        let notification = SessionNotification::new(
            self.session_id.clone(),
            SessionUpdate::AgentMessageChunk(chunk("about to crash", &message_id)),
        );
        let line = json!({ "jsonrpc": "2.0", "method": "session/update", "params": notification }).to_string();
        if let Err(error) = write_raw_lines(&[&line]) {
            eprintln!("ensemble-acp-test-agent: stdout: {error}");
        }
        eprintln!("ensemble-acp-test-agent: crashing on purpose (exit 3)");
        std::process::exit(3)
    }

    fn flood(&self, rest: &str) -> Result<StopReason, Error> {
        let count = rest
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= MAX_FLOOD)
            .ok_or_else(|| {
                Error::invalid_params().data(json!(format!("flood needs a count from 0 to {MAX_FLOOD}, got {rest:?}")))
            })?;
        let message_id = self.state.message_id("msg");
        for _ in 0..count {
            self.update(SessionUpdate::AgentMessageChunk(chunk("x", &message_id)))?;
        }
        Ok(StopReason::EndTurn)
    }

    async fn read(&self, rest: &str) -> Result<StopReason, Error> {
        let path =
            rest.split_whitespace().next().ok_or_else(|| Error::invalid_params().data(json!("read needs a path")))?;
        let request = ReadTextFileRequest::new(self.session_id.clone(), PathBuf::from(path));
        let reply = match self.cx.send_request(request).block_task().await {
            Ok(response) => format!("read ok: {}", response.content),
            Err(error) => format!("read error: {} {}", i32::from(error.code), error.message),
        };
        self.say(reply)?;
        Ok(StopReason::EndTurn)
    }

    async fn write(&self, rest: &str) -> Result<StopReason, Error> {
        let (path, content) = match rest.split_once(char::is_whitespace) {
            Some((path, content)) => (path, content.trim_start()),
            None => (rest, ""),
        };
        if path.is_empty() {
            return Err(Error::invalid_params().data(json!("write needs a path")));
        }
        let request = WriteTextFileRequest::new(self.session_id.clone(), PathBuf::from(path), content);
        let reply = match self.cx.send_request(request).block_task().await {
            Ok(_) => "write ok".to_owned(),
            Err(error) => format!("write error: {} {}", i32::from(error.code), error.message),
        };
        self.say(reply)?;
        Ok(StopReason::EndTurn)
    }

    /// N writes to one path at once, as a hostile agent would (to a FIFO, say): how many were
    /// written and the distinct errors, in order of first appearance.
    async fn write_many(&self, rest: &str) -> Result<StopReason, Error> {
        let mut words = rest.split_whitespace();
        let n: usize = words.next().and_then(|n| n.parse().ok()).unwrap_or(0).min(10_000);
        let path = words.next().ok_or_else(|| Error::invalid_params().data(json!("write-many needs N and a path")))?;
        let requests = (0..n).map(|_| {
            let request = WriteTextFileRequest::new(self.session_id.clone(), PathBuf::from(path), "x");
            self.cx.send_request(request).block_task()
        });
        let mut ok = 0;
        let mut errors: Vec<String> = Vec::new();
        for result in futures::future::join_all(requests).await {
            match result {
                Ok(_) => ok += 1,
                Err(error) => {
                    let e = format!("{} {}", i32::from(error.code), error.message);
                    if !errors.contains(&e) {
                        errors.push(e);
                    }
                }
            }
        }
        self.say(format!("write-many: ok={ok} errors={}", errors.join(" | ")))?;
        Ok(StopReason::EndTurn)
    }

    async fn unknown_request(&self) -> Result<StopReason, Error> {
        let request = UntypedMessage::new("_ensemble/unknown", json!({ "sessionId": self.session_id }))?;
        let reply = match self.cx.send_request(request).block_task().await {
            Ok(_) => "unknown: answered".to_owned(),
            Err(error) => format!("unknown: {}", i32::from(error.code)),
        };
        self.say(reply)?;
        Ok(StopReason::EndTurn)
    }
}

/// `text` in three parts of roughly equal length (in characters); parts may be empty for short text.
fn thirds(text: &str) -> [&str; 3] {
    let n = text.chars().count();
    let byte = |chars: usize| text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i);
    let (a, b) = (byte(n / 3), byte(2 * n / 3));
    [&text[..a], &text[a..b], &text[b..]]
}

#[cfg(test)]
mod tests {
    use super::thirds;

    #[test]
    fn thirds_split_on_chars() {
        assert_eq!(thirds("abcdefghi"), ["abc", "def", "ghi"]);
        assert_eq!(thirds("ab"), ["", "a", "b"]);
        assert_eq!(thirds("ééé"), ["é", "é", "é"]);
        assert_eq!(thirds("").concat(), "");
    }
}
