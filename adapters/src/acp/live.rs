//! One ACP agent process serving one session: the connection and its supervision, the loop that
//! handles what the agent sends (`session/update`, permission requests; its terminal, question
//! and file requests in `live/requests.rs`), and the session's operations (prompt, cancel, answer,
//! modes and options).
//!
//! Ordering: `session/prompt` answers after the turn's updates, but the answer is resolved on the
//! connection's reader while the updates are handled by this session's loop. Before a turn's
//! terminal event is published, [`Live::barrier`] waits until the loop has handled everything the
//! agent sent before its answer; the same barrier ends a `session/load` replay.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ensemble_core::adapter::{AdapterError, EventSink, Fact, Prompt, TurnRequest};
use ensemble_core::clock::new_id;
use ensemble_core::event::{Decision, ErrorInfo, EventBody, TurnFailedPayload};
use ensemble_core::model::{ConfigChange, SessionKey, SessionPatch};
use serde_json::Value;
use tokio::sync::{Notify, mpsc, oneshot};

use super::config::AcpConfig;
use super::fs;
use super::translate::{self, Out, Translator};
use super::wire::{self as acp, client, codes};
use crate::kit::jsonrpc::{self, Incoming, IncomingRx, RpcClient, RpcError};
use crate::kit::process::Supervised;
use crate::kit::stderr::StderrTail;
use crate::kit::typed::{self, CallError, Request};

mod requests;

/// Most text kept per open message, reasoning or call output (what `*.completed` repeats).
const MAX_ITEM_TEXT: usize = 256 * 1024;

/// One agent process and the session on it.
pub(super) struct Live {
    pub(super) key: SessionKey,
    pub(super) sink: EventSink,
    pub(super) rpc: RpcClient,
    config: Arc<AcpConfig>,
    process: tokio::sync::Mutex<Option<Supervised>>,
    /// Set when Ensemble stops the process on purpose: its end is then not a loss.
    closing: AtomicBool,
    pub(super) stderr_tail: StderrTail,
    /// The agent's file requests, confined to the session's directory.
    files: fs::Files,
    /// The commands the agent runs through the client (`terminal/*`).
    terminals: super::terminal::Terminals,
    /// Distinguishes request ids of different processes (agents number them from 0 each time).
    nonce: String,
    /// What the agent said about itself in `initialize`.
    pub(super) agent: Mutex<Option<acp::InitializeResponse>>,
    state: Mutex<State>,
    barriers: mpsc::UnboundedSender<oneshot::Sender<()>>,
}

struct State {
    /// The agent's session id, once `session/new` or `session/load` answered.
    session_id: Option<String>,
    active: Option<ActiveTurn>,
    translator: Translator,
    /// Permission requests waiting for the client's answer, by Ensemble request id.
    pending: HashMap<String, PendingPermission>,
    /// `session/load` is replaying the history: it was published when it happened.
    replaying: bool,
    /// The agent's config options as it sent them (their kinds decide how values are sent).
    options: Vec<acp::SessionConfigOption>,
}

struct ActiveTurn {
    ours: String,
    /// Ensemble asked for the cancel.
    cancelled: bool,
    /// The client rejected a permission in this turn.
    declined: bool,
    ended: Arc<Notify>,
}

struct PendingPermission {
    rpc_id: Value,
    options: Vec<acp::PermissionOption>,
    /// An elicitation's fields (`elicitation/create`), not a permission request.
    form: Option<Vec<super::elicit::Field>>,
}

impl Live {
    #[expect(clippy::too_many_arguments, reason = "one call site, `spawn`: a struct would only rename them")]
    pub(super) fn new(
        key: SessionKey,
        sink: EventSink,
        rpc: RpcClient,
        process: Supervised,
        stderr_tail: StderrTail,
        config: Arc<AcpConfig>,
        cwd: PathBuf,
        sandbox: Option<Arc<ensemble_isolation::Sandbox>>,
    ) -> (Arc<Self>, mpsc::UnboundedReceiver<oneshot::Sender<()>>) {
        let (barriers, barrier_rx) = mpsc::unbounded_channel();
        let live = Arc::new(Self {
            key,
            sink,
            rpc,
            process: tokio::sync::Mutex::new(Some(process)),
            closing: AtomicBool::new(false),
            stderr_tail,
            files: fs::Files::new(
                &cwd,
                config.guard.clone(),
                config.max_file_requests,
                config.file_timeout,
                config.max_file_bytes,
            ),
            terminals: super::terminal::Terminals::new(
                cwd.clone(),
                config.env.clone(),
                config.terminal_output_bytes_per_sec,
                sandbox,
            ),
            config,
            nonce: new_id().chars().rev().take(8).collect(),
            agent: Mutex::new(None),
            state: Mutex::new(State {
                session_id: None,
                active: None,
                translator: Translator::new(MAX_ITEM_TEXT),
                pending: HashMap::new(),
                replaying: false,
                options: Vec::new(),
            }),
            barriers,
        });
        // A terminal's output, once a call shows it, is that call's output as it comes.
        let weak = Arc::downgrade(&live);
        live.terminals.set_sink(Arc::new(move |call_id: String, text: String| {
            if let Some(live) = weak.upgrade() {
                tokio::spawn(async move { live.terminal_output(call_id, text).await });
            }
        }));
        (live, barrier_rx)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The agent said who it is in `initialize`.
    pub(super) fn set_quirks(&self, quirks: &'static super::quirks::Quirks) {
        self.state().translator.set_quirks(quirks);
    }

    /// The quirks of the agent, by the name it gave in `initialize`.
    pub(super) fn quirks(&self) -> &'static super::quirks::Quirks {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        super::quirks::for_agent(agent.as_ref().and_then(|a| a.agent_info.as_ref()).map(|i| i.name.as_str()))
    }

    pub(super) fn session_id(&self) -> Option<String> {
        self.state().session_id.clone()
    }

    pub(super) fn is_live(&self) -> bool {
        !self.rpc.is_closed()
    }

    /// Whether a turn or a permission request is pending.
    pub(super) fn busy(&self) -> bool {
        let st = self.state();
        st.active.is_some() || !st.pending.is_empty()
    }

    /// Our running turn, and what is notified when it ends.
    pub(super) fn active_turn(&self) -> Option<(String, Arc<Notify>)> {
        self.state().active.as_ref().map(|a| (a.ours.clone(), a.ended.clone()))
    }

    /// What to say of an agent that wants a login: its words, and the ways in it offers.
    pub(super) fn auth_message(&self, said: &str) -> String {
        let methods: Vec<String> = self
            .agent
            .lock()
            .ok()
            .and_then(|a| a.as_ref().map(|a| a.auth_methods.clone()))
            .unwrap_or_default()
            .iter()
            .map(|m| match m.description() {
                Some(d) => format!("{} ({d})", m.name()),
                None => m.name().to_owned(),
            })
            .collect();
        let ways = if methods.is_empty() { String::new() } else { format!("; it offers: {}", methods.join(", ")) };
        ensemble_core::limits::clip(&format!(
            "{said}{ways}. Give the agent its API key in the provider's env in the providers file, or log in as its documentation says, then start or resume the session."
        ))
    }

    pub(super) fn agent_capabilities(&self) -> acp::AgentCapabilities {
        self.agent.lock().ok().and_then(|a| a.as_ref().map(|a| a.agent_capabilities.clone())).unwrap_or_default()
    }

    /// Calls `R`; a failure is the adapter's error.
    pub(super) async fn call<R: Request>(
        &self,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<R::Response, AdapterError> {
        match typed::call::<R>(&self.rpc, params, timeout).await {
            Ok(r) => Ok(r),
            Err(CallError::Rpc(e)) => Err(self.rpc_error(R::METHOD, e).await),
            Err(e @ CallError::Result { .. }) => {
                Err(AdapterError::failed("provider_error", format!("{} {e}", self.config.id)))
            }
        }
    }

    /// An RPC failure as the adapter's error, with the exit status when the process died.
    pub(super) async fn rpc_error(&self, method: &str, e: RpcError) -> AdapterError {
        let id = &self.config.id;
        match e {
            RpcError::Timeout { .. } => AdapterError::Timeout(format!("{id}: {e}")),
            RpcError::Server { error, .. } => {
                // ACP's "authentication required".
                let code = if error.code == -32000 { "auth_required" } else { "provider_error" };
                AdapterError::failed(code, format!("{id} rejected `{method}`: {}", error.message))
            }
            RpcError::Closed(reason) => {
                let status = self.exit_status(Duration::from_millis(500)).await;
                AdapterError::failed(
                    "provider_exited",
                    format!("{id} went away during `{method}` ({reason}; {status}){}", self.stderr_tail.suffix()),
                )
            }
        }
    }

    async fn exit_status(&self, wait: Duration) -> String {
        match self.process.lock().await.as_mut() {
            Some(p) => p.exit_text(wait).await,
            None => "stopped".into(),
        }
    }

    /// Stops the process: stdin closes and the agent gets `stop_grace` to exit, then SIGTERM,
    /// then SIGKILL, with every descendant.
    pub(super) async fn stop(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.terminals.kill_all();
        let process = self.process.lock().await.take();
        // Before the leader exits: descendants that left its group are found through it.
        let family = process.as_ref().map(Supervised::family).unwrap_or_default();
        self.rpc.close("the session stopped its agent process");
        if let Some(p) = process {
            p.shut_down(&family, self.config.stop_grace, self.config.term_grace).await;
        }
        self.wake_waiters();
    }

    fn wake_waiters(&self) {
        if let Some(a) = self.state().active.as_ref() {
            a.ended.notify_waiters();
        }
    }

    /// Waits until the loop has handled everything the agent sent before now.
    pub(super) async fn barrier(&self) {
        let (tx, rx) = oneshot::channel();
        if self.barriers.send(tx).is_ok() {
            let _ = rx.await;
        }
    }

    /// Facts that close what the active turn has open (the agent will not close them any more).
    pub(super) fn close_open_items(&self) -> Vec<Fact> {
        let mut st = self.state();
        let turn = st.active.as_ref().map(|a| a.ours.clone());
        st.translator.close_open_items().into_iter().map(|body| Fact::Event { turn_id: turn.clone(), body }).collect()
    }

    /// Answers every pending permission request `cancelled` (cancel, close, disconnect).
    pub(super) async fn cancel_pending(&self) {
        let pending: Vec<PendingPermission> = self.state().pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            let sent = if p.form.is_some() {
                let answer = acp::CreateElicitationResponse::new(acp::ElicitationAction::Cancel);
                typed::respond(&self.rpc, p.rpc_id, &answer).await
            } else {
                let answer = acp::RequestPermissionResponse::new(acp::RequestPermissionOutcome::Cancelled);
                typed::respond(&self.rpc, p.rpc_id, &answer).await
            };
            if let Err(e) = sent {
                tracing::debug!(session = %self.key, error = %e, "could not answer a permission request");
            }
        }
    }

    /// Remembers the session the agent created or loaded, with its modes and options.
    pub(super) fn bind(
        &self,
        session_id: &str,
        modes: Option<&acp::SessionModeState>,
        options: Option<&[acp::SessionConfigOption]>,
    ) -> SessionPatch {
        let mut st = self.state();
        st.session_id = Some(session_id.to_owned());
        let modes = st.translator.set_modes(modes);
        let options = options.map(|o| {
            st.options = o.to_vec();
            translate::config_options(o)
        });
        SessionPatch {
            provider_session_id: Some(session_id.to_owned()),
            modes,
            config_options: options,
            ..Default::default()
        }
    }

    pub(super) fn set_replaying(&self, replaying: bool) {
        self.state().replaying = replaying;
    }

    // ---- the loop -------------------------------------------------------------------------

    /// Handles what the agent sends until its output closes, then reports an unexpected end.
    pub(super) async fn run(
        self: Arc<Self>,
        mut incoming: IncomingRx,
        mut barriers: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
    ) {
        loop {
            tokio::select! {
                // What the agent sent comes first: a barrier passes once all of it is handled.
                biased;
                msg = incoming.recv() => match msg {
                    Some(msg) => self.handle(msg).await,
                    None => break,
                },
                Some(tx) = barriers.recv() => { let _ = tx.send(()); }
            }
        }
        // The agent is gone: release whoever waits for a barrier.
        barriers.close();
        while let Ok(tx) = barriers.try_recv() {
            let _ = tx.send(());
        }
        if !self.closing.load(Ordering::SeqCst) {
            let status = self.exit_status(Duration::from_secs(2)).await;
            let reason = format!("{} exited ({status}){}", self.config.id, self.stderr_tail.suffix());
            tracing::warn!(session = %self.key, %reason, "agent process lost");
            self.state().pending.clear();
            let mut facts = self.close_open_items();
            facts.push(Fact::Lost { reason });
            self.sink.send(facts).await;
        }
        self.wake_waiters();
    }

    async fn handle(self: &Arc<Self>, msg: Incoming) {
        match msg {
            Incoming::Notification { method, params } if method == client::UPDATE => self.on_update(params).await,
            Incoming::Notification { method, .. } => {
                tracing::debug!(session = %self.key, method, "ignoring an unknown notification");
            }
            Incoming::Request { id, method, params } => self.on_request(id, &method, params).await,
            Incoming::Response { .. } => {}
        }
    }

    async fn on_update(&self, params: Value) {
        let note: acp::SessionNotification = match serde_json::from_value(params) {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(session = %self.key, error = %jsonrpc::redacted(&e), "unreadable session/update");
                return;
            }
        };
        let (outs, turn) = {
            let mut st = self.state();
            if st.session_id.as_deref().is_some_and(|s| s != &*note.session_id.0) {
                return;
            }
            if let acp::SessionUpdate::ConfigOptionUpdate(c) = &note.update {
                st.options = c.config_options.clone();
            }
            if st.replaying {
                // History being replayed was published when it happened; only the current modes
                // and options matter now.
                if !matches!(
                    note.update,
                    acp::SessionUpdate::CurrentModeUpdate(_) | acp::SessionUpdate::ConfigOptionUpdate(_)
                ) {
                    return;
                }
            }
            let turn = st.active.as_ref().map(|a| a.ours.clone());
            (st.translator.update(note.update.clone()), turn)
        };
        for (call_id, so_far) in self.link_terminals(&note.update) {
            self.terminal_output(call_id, so_far).await;
        }
        let facts: Vec<Fact> = outs
            .into_iter()
            .map(|o| match o {
                Out::Event(body) => Fact::Event { turn_id: turn.clone(), body },
                Out::Update(patch) => Fact::Update(patch),
            })
            .collect();
        self.sink.send(facts).await;
    }

    async fn on_request(self: &Arc<Self>, id: Value, method: &str, params: Value) {
        match method {
            client::REQUEST_PERMISSION => self.on_permission(id, params).await,
            client::ELICITATION_CREATE => self.on_elicitation(id, params).await,
            m if m.starts_with("terminal/") => {
                // Off the loop: `terminal/wait_for_exit` waits for the command's end.
                let me = self.clone();
                let method = m.to_owned();
                tokio::spawn(async move { me.on_terminal(id, &method, params).await });
            }
            client::READ_TEXT_FILE | client::WRITE_TEXT_FILE => {
                // Off the loop: a large file must not hold the session's updates.
                let me = self.clone();
                let method = method.to_owned();
                tokio::spawn(async move { me.on_file(id, &method, params).await });
            }
            _ => {
                // Never left hanging: what Ensemble does not serve is answered at once.
                let message = format!("Ensemble does not offer `{method}`");
                self.respond_error(id, codes::METHOD_NOT_FOUND, &message).await;
            }
        }
    }

    async fn respond_error(&self, id: Value, code: i64, message: &str) {
        if let Err(e) = self.rpc.respond_error(id, code, message).await {
            tracing::debug!(session = %self.key, error = %e, "could not answer an agent request");
        }
    }

    async fn on_permission(&self, id: Value, params: Value) {
        let request: acp::RequestPermissionRequest = match serde_json::from_value(params) {
            Ok(r) => r,
            Err(e) => {
                let message = format!("Ensemble cannot read the permission request: {}", jsonrpc::redacted(&e));
                return self.respond_error(id, codes::INVALID_PARAMS, &message).await;
            }
        };
        let request_id = crate::kit::ids::request_id(&self.nonce, &id);
        let cancelling = self.state().active.as_ref().is_some_and(|a| a.cancelled);
        if cancelling {
            // The turn is being cancelled: the spec's answer is `cancelled`.
            let answer = acp::RequestPermissionResponse::new(acp::RequestPermissionOutcome::Cancelled);
            let _ = typed::respond(&self.rpc, id, &answer).await;
            return;
        }
        let (payload, turn) = {
            let mut st = self.state();
            let payload = st.translator.permission(&request, &request_id);
            st.pending.insert(request_id, PendingPermission { rpc_id: id, options: request.options, form: None });
            (payload, st.active.as_ref().map(|a| a.ours.clone()))
        };
        self.sink.emit(turn.as_deref(), EventBody::InteractionRequested(payload)).await;
    }

    // ---- operations -----------------------------------------------------------------------

    /// Starts a turn: `session/prompt` runs in the background until the agent's answer, whose
    /// stop reason becomes the turn's terminal event.
    pub(super) fn start_turn(self: &Arc<Self>, turn: TurnRequest) -> Result<(), AdapterError> {
        let session_id = self.session_id().ok_or(AdapterError::NotLive)?;
        {
            let mut st = self.state();
            if let Some(a) = &st.active {
                return Err(AdapterError::Busy(format!("turn {} is running", a.ours)));
            }
            st.translator.reset();
            st.active = Some(ActiveTurn {
                ours: turn.turn_id.clone(),
                cancelled: false,
                declined: false,
                ended: Arc::new(Notify::new()),
            });
        }
        let caps = self.agent_capabilities().prompt_capabilities;
        let prompt: Vec<acp::ContentBlock> = turn.input.iter().map(|i| content_block(i, &caps)).collect();
        let params = acp::PromptRequest::new(session_id, prompt);
        let me = self.clone();
        tokio::spawn(async move {
            let result = typed::call::<acp::Prompt>(&me.rpc, &params, me.config.turn_timeout).await;
            me.barrier().await;
            me.finish_turn(&turn.turn_id, result).await;
        });
        Ok(())
    }

    async fn finish_turn(&self, turn_id: &str, result: Result<acp::PromptResponse, CallError>) {
        // A prompt refused for want of a login (ACP's -32000): the session says so, and refuses
        // its next turns at once rather than let the agent be asked again.
        let mut needs_login = None;
        let terminal = match result {
            Ok(response) => {
                let (cancelled, declined) = {
                    let st = self.state();
                    st.active.as_ref().map(|a| (a.cancelled, a.declined)).unwrap_or_default()
                };
                vec![translate::terminal(turn_id, response.stop_reason, cancelled, declined)]
            }
            // The process is gone: the loop reports the loss, which ends the turn.
            Err(CallError::Rpc(RpcError::Closed(_))) => return,
            Err(CallError::Rpc(e @ RpcError::Timeout { .. })) => {
                if let Some(s) = self.session_id() {
                    let _ = typed::notify::<acp::Cancel>(&self.rpc, &acp::CancelNotification::new(s)).await;
                }
                vec![failed(turn_id, "provider_timeout", &format!("{}: {e}", self.config.id))]
            }
            Err(CallError::Rpc(RpcError::Server { error, .. })) if error.code == -32000 => {
                let said = format!("{} needs a login: {}", self.config.id, error.message);
                needs_login = Some(self.auth_message(&said));
                vec![failed(turn_id, "auth_required", &said)]
            }
            Err(CallError::Rpc(RpcError::Server { error, .. })) => vec![failed(
                turn_id,
                "provider_error",
                &format!("{} failed the prompt: {}", self.config.id, error.message),
            )],
            Err(e @ CallError::Result { .. }) => vec![failed(turn_id, "provider_error", &e.to_string())],
        };
        let (mut facts, ended) = {
            let mut st = self.state();
            if st.active.as_ref().is_none_or(|a| a.ours != turn_id) {
                return;
            }
            let a = st.active.take();
            st.pending.clear();
            let open = st.translator.close_open_items();
            (open, a.map(|a| a.ended))
        };
        facts.extend(terminal);
        self.sink.emit_many(facts.into_iter().map(|b| (Some(turn_id.to_owned()), b)).collect()).await;
        if let Some(message) = needs_login {
            self.sink
                .update(SessionPatch {
                    auth_state: Some(ensemble_core::model::AuthState::AuthRequired),
                    auth_message: Some(message),
                    ..Default::default()
                })
                .await;
        }
        if let Some(n) = ended {
            n.notify_waiters();
        }
    }

    /// Cancels our turn: pending permissions are answered `cancelled` (as the spec requires), then
    /// `session/cancel`; the agent ends the prompt with stop reason `cancelled`.
    pub(super) async fn cancel(&self, turn_id: &str) -> Result<(), AdapterError> {
        {
            let mut st = self.state();
            match st.active.as_mut() {
                Some(a) if a.ours == turn_id => a.cancelled = true,
                _ => return Ok(()),
            }
        }
        self.cancel_pending().await;
        let Some(session_id) = self.session_id() else { return Ok(()) };
        typed::notify::<acp::Cancel>(&self.rpc, &acp::CancelNotification::new(session_id))
            .await
            .map_err(|e| AdapterError::failed("provider_error", e.to_string()))
    }

    /// Answers a permission request with the agent's option the decision picks (`option`: the
    /// client named one).
    /// Whether `answers` fit the pending elicitation `request_id` (anything fits a permission).
    pub(super) fn check_answer(
        &self,
        request_id: &str,
        decision: Decision,
        answers: Option<&Value>,
    ) -> Result<(), AdapterError> {
        let form = self.state().pending.get(request_id).and_then(|p| p.form.clone());
        match form {
            Some(fields) => super::elicit::respond(decision, answers, &fields).map(drop).map_err(AdapterError::Invalid),
            None => Ok(()),
        }
    }

    pub(super) async fn respond(
        &self,
        request_id: &str,
        decision: Decision,
        answers: Option<&Value>,
        option: Option<&str>,
    ) -> Result<(), AdapterError> {
        // An elicitation's answers are checked before it is taken off the pending ones: a wrong
        // answer leaves it to be answered again.
        let form = {
            let st = self.state();
            let p =
                st.pending.get(request_id).ok_or_else(|| AdapterError::UnknownInteraction(request_id.to_owned()))?;
            p.form.clone()
        };
        if let Some(fields) = form {
            // Checked before (`check_answer`); should it not fit now, the agent is not left waiting.
            let response = super::elicit::respond(decision, answers, &fields)
                .unwrap_or_else(|_| acp::CreateElicitationResponse::new(acp::ElicitationAction::Cancel));
            let pending = self.state().pending.remove(request_id);
            let Some(pending) = pending else { return Err(AdapterError::AlreadyAnswered(request_id.to_owned())) };
            return typed::respond(&self.rpc, pending.rpc_id, &response)
                .await
                .map_err(|e| AdapterError::failed("provider_error", e.to_string()));
        }
        let pending = {
            let mut st = self.state();
            let pending =
                st.pending.remove(request_id).ok_or_else(|| AdapterError::UnknownInteraction(request_id.to_owned()))?;
            if decision == Decision::Decline
                && let Some(a) = st.active.as_mut()
            {
                a.declined = true;
            }
            pending
        };
        let chosen = match option {
            Some(id) => pending.options.iter().find(|o| &*o.option_id.0 == id),
            None => translate::option_for(&pending.options, decision),
        };
        let outcome = match chosen {
            Some(o) => {
                acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(o.option_id.clone()))
            }
            None => acp::RequestPermissionOutcome::Cancelled,
        };
        typed::respond(&self.rpc, pending.rpc_id, &acp::RequestPermissionResponse::new(outcome))
            .await
            .map_err(|e| AdapterError::failed("provider_error", e.to_string()))
    }

    /// `session/set_mode` and `session/set_config_option`; returns the modes and options after.
    pub(super) async fn configure(&self, change: &ConfigChange) -> Result<SessionPatch, AdapterError> {
        let session_id = self.session_id().ok_or(AdapterError::NotLive)?;
        let t = self.config.call_timeout;
        let mut patch = SessionPatch::default();
        if let Some(mode) = &change.mode {
            let params = acp::SetSessionModeRequest::new(session_id.clone(), mode.clone());
            self.call::<acp::SetMode>(&params, t).await?;
            let mut st = self.state();
            let modes = st.translator.current_mode(mode);
            patch.modes = modes;
        }
        for (id, value) in &change.options {
            let v = translate::option_value(&self.state().options, id, value);
            let params = acp::SetSessionConfigOptionRequest::new(session_id.clone(), id.clone(), v);
            let response = self.call::<acp::SetConfigOption>(&params, t).await?;
            let mut st = self.state();
            st.options = response.config_options.clone();
            patch.config_options = Some(translate::config_options(&response.config_options));
        }
        Ok(patch)
    }
}

fn failed(turn_id: &str, code: &str, message: &str) -> EventBody {
    EventBody::TurnFailed(TurnFailedPayload { turn_id: turn_id.to_owned(), error: ErrorInfo::new(code, message) })
}

/// One item of a turn's input as an ACP content block: text; an image (only sent to an agent
/// whose `promptCapabilities.image` is true); a file as an embedded resource (its text, or its
/// bytes in base64) when the agent takes `embeddedContext` and the server read its content, else
/// as a `resource_link`, which every agent takes.
fn content_block(item: &Prompt, caps: &acp::PromptCapabilities) -> acp::ContentBlock {
    use base64::Engine;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let uri = |p: &std::path::Path| format!("file://{}", p.display());
    match item {
        Prompt::Text(t) => acp::ContentBlock::from(t.as_str()),
        Prompt::Image(image) => acp::ContentBlock::Image(
            acp::ImageContent::new(b64(&image.data), image.mime_type.as_str()).uri(image.path.as_deref().map(uri)),
        ),
        Prompt::File(file) => match &file.content {
            Some(content) if caps.embedded_context => {
                let resource = match std::str::from_utf8(content) {
                    Ok(text) => acp::EmbeddedResourceResource::TextResourceContents(
                        acp::TextResourceContents::new(text, uri(&file.path)).mime_type(file.mime_type.clone()),
                    ),
                    Err(_) => acp::EmbeddedResourceResource::BlobResourceContents(
                        acp::BlobResourceContents::new(b64(content), uri(&file.path)).mime_type(file.mime_type.clone()),
                    ),
                };
                acp::ContentBlock::Resource(acp::EmbeddedResource::new(resource))
            }
            _ => acp::ContentBlock::ResourceLink(
                acp::ResourceLink::new(file.name.as_str(), uri(&file.path))
                    .mime_type(file.mime_type.clone())
                    .size(i64::try_from(file.size).ok()),
            ),
        },
    }
}

impl crate::kit::sessions::Liveness for Live {
    fn is_live(&self) -> bool {
        Live::is_live(self)
    }
}
