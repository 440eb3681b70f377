//! The `acp` providers: agents that speak the Agent Client Protocol (Claude Code through
//! claude-agent-acp, Gemini CLI, codex-acp, …), one agent process per session, on stdio.
//!
//! The messages are the `agent-client-protocol` crate's schema types (protocol v1); they travel
//! over the [`crate::kit`]'s JSON-RPC on a process the kit supervises (own process group,
//! pdeathsig, TERM→KILL with descendants, run tag), like codex's. Each `[[provider]]` of the
//! providers file (`--providers`) is one adapter.
//!
//! Rules: `initialize` advertises file reading and writing (confined to the session's `cwd`),
//! terminals (run under the session's supervision, `terminal`) and elicitation (`elicit`);
//! `session/new` gets the cwd and the configured MCP servers. A turn is one
//! `session/prompt`, its stop reason the terminal event. Cancel answers every pending permission
//! request `cancelled` and sends `session/cancel`. Close sends `session/close` when the agent
//! offers it, then stops the process; release and disconnect only stop it, so the session stays
//! loadable. Resume uses `session/load` (the replayed history is not published again) or
//! `session/resume`; an agent with neither makes its sessions `resumable: false`, with the reason.
//! Agent requests Ensemble does not serve are answered with a JSON-RPC error at once. Sides and
//! goals are not offered (`session/fork` is not a stable part of the protocol).
//!
//! The files: [`config`] (the providers file), `wire` (the methods, typed), `translate` (the pure
//! mapping to events), `fs` (the confined file system), `terminal` (commands run for the agent),
//! `elicit` (questions), `quirks` (what each agent does its own way), `diff`, `live` (one process
//! and its session), `spawn` (starting an agent in its box, its handshake, the background probe),
//! and this file (the adapter and the registration).

pub mod config;
mod diff;
mod elicit;
mod fs;
mod live;
pub mod quirks;
mod spawn;
mod terminal;
pub mod translate;
mod wire;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ensemble_core::adapter::{
    Adapter, AdapterError, AuthCheck, Capabilities, ForkOpen, InputKinds, ProviderDescriptor, SessionHandle,
    StartOutcome, TurnRequest,
};
use ensemble_core::clock::unix_ms;
use ensemble_core::event::Decision;
use ensemble_core::model::{
    AgentInfo, AuthState, ConfigChange, ProviderSession, ProviderSessionList, Session, SessionKey, SessionPatch,
};
use serde_json::Value;

pub use config::{AcpConfig, ConfigError};
use live::Live;
use spawn::{SESSION_NEW_AT, alone_sandbox, discarding, probe, spawn, wait_out_start_minute};

use crate::kit::availability::{Availability, AvailabilityCell};
use crate::kit::binary;
use crate::kit::jsonrpc::RpcClient;
use crate::kit::process::{ProcessSpec, Supervised, base_env};
use crate::kit::provider::{Provider, ProviderEnv, ProviderError};
use crate::kit::sessions::Sessions;
use crate::kit::stderr::{self, StderrTail};

/// How long a start-up failure marks the provider unavailable before it is probed again.
const FAILURE_COOLDOWN: Duration = Duration::from_secs(10);
/// Lines of the agent's stderr kept for error messages.
const STDERR_TAIL: usize = 20;
/// Longest Ensemble waits for `session/close` before it stops the process anyway.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The name of the providers file looked for in the data dir.
pub const PROVIDERS_FILE: &str = "providers.toml";

/// The ACP providers' options.
#[derive(Clone, Debug, clap::Args)]
pub struct AcpOptions {
    /// The providers file: the ACP agents to offer as providers (TOML, `[[provider]]` tables)
    /// [default: DATA_DIR/providers.toml when it exists].
    #[arg(long = "providers", env = "ENSEMBLE_PROVIDERS", help_heading = "Essentials")]
    pub providers: Option<PathBuf>,
}

/// The ACP providers' registration.
pub struct Acp;

#[async_trait]
impl Provider for Acp {
    type Options = AcpOptions;

    /// The providers file: it holds every agent's keys.
    fn private_files(options: &AcpOptions, data_dir: &std::path::Path) -> Vec<PathBuf> {
        vec![options.providers.clone().unwrap_or_else(|| data_dir.join(PROVIDERS_FILE))]
    }

    async fn build(options: &AcpOptions, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
        let path = match &options.providers {
            Some(p) => p.clone(),
            None => {
                let default = env.data_dir.join(PROVIDERS_FILE);
                if !default.exists() {
                    return Ok(Vec::new());
                }
                default
            }
        };
        let taken: Vec<&str> = env.taken_ids.iter().map(String::as_str).collect();
        let rpc = crate::kit::jsonrpc::RpcConfig {
            max_line_bytes: env.rpc_max_line_bytes,
            incoming_bytes: env.rpc_queue_bytes,
            ..Default::default()
        };
        let configs = config::load(&path, &taken, &rpc).map_err(|e| ProviderError(e.0))?;
        let mut files = env.server_files.clone();
        files.push(path);
        let guard = ensemble_files::Guard::new(&files, &env.private_dirs);
        let mut out: Vec<Arc<dyn Adapter>> = Vec::new();
        for mut c in configs {
            c.guard = guard.clone();
            c.sandboxes = env.isolation.clone();
            let adapter = Arc::new(AcpAdapter::new(c));
            // In the background: an agent that is slow to start must not delay the server.
            let probing = adapter.clone();
            tokio::spawn(async move { probing.probe().await });
            out.push(adapter);
        }
        Ok(out)
    }
}

/// One ACP agent as a provider.
pub struct AcpAdapter {
    config: Arc<AcpConfig>,
    sessions: Sessions<Live>,
    availability: AvailabilityCell,
    /// What the agent said about itself when it last started.
    agent: Arc<Mutex<Option<AgentInfo>>>,
    /// Whether the agent could work when it last said: a session refused for want of a login
    /// (ACP's -32000), or one that started.
    auth: Mutex<Option<AuthCheck>>,
}

impl AcpAdapter {
    pub fn new(config: AcpConfig) -> Self {
        Self {
            config: Arc::new(config),
            sessions: Sessions::default(),
            availability: AvailabilityCell::new(FAILURE_COOLDOWN),
            agent: Arc::new(Mutex::new(None)),
            auth: Mutex::new(None),
        }
    }

    /// Remembers what a session's start said about the agent's login.
    fn note_auth(&self, result: Result<(), &AdapterError>, live: &Live) {
        let state = match result {
            Ok(()) => AuthCheck { state: AuthState::Authenticated, message: None, at_ms: unix_ms() },
            Err(e) if e.code() == "auth_required" => AuthCheck {
                state: AuthState::AuthRequired,
                message: Some(live.auth_message(&e.to_string())),
                at_ms: unix_ms(),
            },
            Err(_) => return,
        };
        *self.auth.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
    }

    pub fn config(&self) -> &AcpConfig {
        &self.config
    }

    /// Starts the agent once (`initialize` only) to learn whether it runs and what it offers.
    pub async fn probe(&self) {
        let state = probe(&self.config, &self.agent).await;
        self.availability.set(state);
    }

    /// Installs a live session, stopping the one it replaces.
    async fn install(&self, key: SessionKey, live: Arc<Live>) {
        if let Some(old) = self.sessions.replace(key, live) {
            old.cancel_pending().await;
            old.stop().await;
        }
    }

    /// Spawns the agent for a session, in its box, and completes the handshake.
    async fn spawn(&self, session: &Session, handle: SessionHandle) -> Result<Arc<Live>, AdapterError> {
        let extras = self.config.extras();
        let sandbox = self.config.sandboxes.sandbox(session, Some(handle.sink.clone()), &extras)?.map(Arc::new);
        let (live, _) =
            spawn(&self.config, &self.availability, &self.agent, session.key(), handle, &session.cwd, sandbox).await?;
        Ok(live)
    }

    /// Takes a session's live side down now: pending permissions answered `cancelled`, the
    /// process stopped, what a turn still had open closed.
    async fn take_down(&self, session: &Session, close_at_agent: bool) {
        let Some(live) = self.sessions.remove(&session.key()) else { return };
        live.cancel_pending().await;
        if close_at_agent
            && live.is_live()
            && live.agent_capabilities().session_capabilities.close.is_some()
            && let Some(id) = live.session_id()
        {
            let timeout = self.config.call_timeout.min(CLOSE_TIMEOUT);
            if let Err(e) = live.call::<wire::CloseSession>(&wire::CloseSessionRequest::new(id), timeout).await {
                tracing::debug!(session = %session.key(), error = %e, "session/close failed");
            }
        }
        live.stop().await;
        let open = live.close_open_items();
        live.sink.send(open).await;
    }

    fn mcp_servers(&self) -> Vec<wire::McpServer> {
        self.config
            .mcp_servers
            .iter()
            .map(|m| {
                let env = m.env.iter().map(|(k, v)| wire::EnvVariable::new(k.clone(), v.clone())).collect();
                wire::McpServer::Stdio(
                    wire::McpServerStdio::new(m.name.clone(), m.command.clone()).args(m.args.clone()).env(env),
                )
            })
            .collect()
    }

    /// What the session offers to resume it, or why it cannot be.
    fn resume_support(&self, live: &Live) -> Option<String> {
        let caps = live.agent_capabilities();
        if caps.load_session || caps.session_capabilities.resume.is_some() {
            None
        } else {
            Some(format!("{} offers neither session/load nor session/resume", self.config.id))
        }
    }

    /// After a resume: the session's mode and option picks the agent did not keep are made again,
    /// one by one (opencode keeps a model picked after the last turn only in memory, and loads
    /// the session with the model of its last message).
    async fn restore_picks(&self, live: &Live, session: &Session, patch: &mut SessionPatch) {
        let mut changes = Vec::new();
        if let (Some(had), Some(now)) = (&session.modes, &patch.modes)
            && had.current != now.current
            && now.available.iter().any(|m| m.id == had.current)
        {
            changes.push(ConfigChange { mode: Some(had.current.clone()), options: Default::default() });
        }
        let now = patch.config_options.clone().unwrap_or_default();
        for had in session.config_options.iter() {
            if now
                .iter()
                .any(|o| o.id == had.id && o.current != had.current && o.choices.iter().any(|c| c.value == had.current))
            {
                changes.push(ConfigChange { mode: None, options: [(had.id.clone(), had.current.clone())].into() });
            }
        }
        for change in changes {
            match live.configure(&change).await {
                Ok(p) => {
                    if p.modes.is_some() {
                        patch.modes = p.modes;
                    }
                    if p.config_options.is_some() {
                        patch.config_options = p.config_options;
                    }
                }
                Err(e) => {
                    tracing::warn!(session = %session.key(), error = %e, ?change, "could not restore a pick after the resume")
                }
            }
        }
    }

    /// Applies the model the session asked for at start, when the agent offers it as an option.
    async fn apply_start_settings(&self, live: &Live, session: &Session, patch: &mut SessionPatch) {
        let Some(model) = &session.settings.model else { return };
        let options = patch.config_options.clone().unwrap_or_default();
        let Some(option) = options
            .iter()
            .find(|o| o.category.as_deref() == Some("model") && o.choices.iter().any(|c| c.value == *model))
        else {
            tracing::debug!(session = %session.key(), model, "the agent offers no such model; keeping its default");
            return;
        };
        if option.current == *model {
            return;
        }
        let change = ConfigChange { mode: None, options: [(option.id.clone(), model.clone())].into() };
        match live.configure(&change).await {
            Ok(p) => {
                if p.config_options.is_some() {
                    patch.config_options = p.config_options;
                }
            }
            Err(e) => tracing::warn!(session = %session.key(), error = %e, "could not select the session's model"),
        }
    }
}

#[async_trait]
impl Adapter for AcpAdapter {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn capabilities(&self) -> Capabilities {
        // Modes and options change between turns: ACP leaves a mid-turn switch to the agent, so
        // it is refused while a turn runs.
        Capabilities {
            interactive: true,
            steer: false,
            quiesce: true,
            sides: false,
            goals: false,
            config: true,
            config_mid_turn: false,
        }
    }

    async fn list_sessions(&self, cwd: &str, cursor: Option<String>) -> Result<ProviderSessionList, AdapterError> {
        // An agent of its own for the question, stopped after it.
        let key = SessionKey::new("list", &self.config.id);
        let sandbox = alone_sandbox(&self.config, cwd)?;
        let (live, init) =
            spawn(&self.config, &self.availability, &self.agent, key.clone(), discarding(&key), cwd, sandbox).await?;
        let answer = async {
            if init.agent_capabilities.session_capabilities.list.is_none() {
                return Err(AdapterError::Unsupported(format!(
                    "the agent of `{}` does not list its sessions (no sessionCapabilities.list)",
                    self.config.id
                )));
            }
            let request = wire::ListSessionsRequest::new().cwd(PathBuf::from(cwd)).cursor(cursor);
            live.call::<wire::ListSessions>(&request, self.config.call_timeout).await
        }
        .await;
        live.stop().await;
        let response = answer?;
        Ok(ProviderSessionList {
            data: response
                .sessions
                .into_iter()
                .map(|s| ProviderSession {
                    provider_session_id: s.session_id.0.to_string(),
                    cwd: s.cwd.to_string_lossy().into_owned(),
                    title: s.title.map(|t| ensemble_core::limits::clip(&t)),
                    updated_at: s.updated_at,
                })
                .collect(),
            next: response.next_cursor,
        })
    }

    async fn check_auth(&self, _wait: Duration) -> Option<AuthCheck> {
        // Asked by its sessions only: a session of its own just to ask would be kept by the
        // agent (in its list of sessions) for nothing.
        self.auth.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn input_kinds(&self, session: &Session) -> InputKinds {
        // Files go as a `resource_link`, which every agent takes; images only where the agent
        // said so in its handshake.
        let image = self.sessions.get(&session.key()).is_some_and(|l| l.agent_capabilities().prompt_capabilities.image);
        let name = self.config.id.as_str();
        InputKinds {
            image: (!image)
                .then(|| format!("the agent of `{name}` takes no images (its promptCapabilities.image is false)")),
            file: None,
        }
    }

    fn descriptor(&self) -> ProviderDescriptor {
        // A start-up failure is not forever: a stale state is probed again in the background.
        let config = self.config.clone();
        let agent = self.agent.clone();
        let state = self.availability.current(|| async move { probe(&config, &agent).await });
        let info = self.agent.lock().ok().and_then(|a| a.clone());
        let (available, reason) = match &state {
            Availability::Available { .. } => (true, None),
            // The first probe runs in the background; until it is over the agent is offered (a
            // start that fails says why, and marks it unavailable).
            Availability::Unknown => (true, None),
            Availability::Unavailable { reason, .. } => (false, Some(reason.clone())),
        };
        let display_name = match (&self.config.name, &info) {
            (Some(n), _) => n.clone(),
            (None, Some(AgentInfo { name: Some(n), version: Some(v), .. })) => format!("{n} {v} (ACP)"),
            (None, Some(AgentInfo { name: Some(n), .. })) => format!("{n} (ACP)"),
            _ => format!("{} (ACP)", self.config.id),
        };
        ProviderDescriptor { display_name, available, unavailable_reason: reason, agent: info }
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let state = handle.state.clone();
        let live = self.spawn(session, handle).await?;
        let request = wire::NewSessionRequest::new(PathBuf::from(&session.cwd)).mcp_servers(self.mcp_servers());
        let response = match live.call::<wire::NewSession>(&request, self.config.start_timeout).await {
            Ok(r) => r,
            Err(e) => {
                self.note_auth(Err(&e), &live);
                live.stop().await;
                return Err(e);
            }
        };
        self.note_auth(Ok(()), &live);
        if live.quirks().load_after_start_minute() {
            let now = ensemble_core::clock::unix_ms().to_string();
            if let Err(e) = state.set(SESSION_NEW_AT, now).await {
                tracing::warn!(session = %session.key(), error = %e, "could not keep when the agent's session began");
            }
        }
        let mut patch = live.bind(&response.session_id.0, response.modes.as_ref(), response.config_options.as_deref());
        self.apply_start_settings(&live, session, &mut patch).await;
        patch.not_resumable = self.resume_support(&live);
        self.install(session.key(), live).await;
        Ok(StartOutcome { patch, events: Vec::new() })
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let Some(id) = session.provider_session_id.clone() else {
            return Err(AdapterError::Invalid("the session has no agent session to resume".into()));
        };
        let state = handle.state.clone();
        let live = self.spawn(session, handle).await?;
        let caps = live.agent_capabilities();
        let cwd = PathBuf::from(&session.cwd);
        let outcome = if caps.load_session {
            if live.quirks().load_after_start_minute() {
                wait_out_start_minute(&state, &session.key()).await;
            }
            live.bind(&id, None, None);
            live.set_replaying(true);
            let request = wire::LoadSessionRequest::new(id.clone(), cwd).mcp_servers(self.mcp_servers());
            let r = live.call::<wire::LoadSession>(&request, self.config.start_timeout).await;
            // The replay is over only once every update sent before the answer is handled.
            live.barrier().await;
            live.set_replaying(false);
            r.map(|r| live.bind(&id, r.modes.as_ref(), r.config_options.as_deref()))
        } else if caps.session_capabilities.resume.is_some() {
            let request = wire::ResumeSessionRequest::new(id.clone(), cwd).mcp_servers(self.mcp_servers());
            let r = live.call::<wire::ResumeSession>(&request, self.config.start_timeout).await;
            r.map(|r| live.bind(&id, r.modes.as_ref(), r.config_options.as_deref()))
        } else {
            Err(AdapterError::failed(
                "not_resumable",
                self.resume_support(&live).unwrap_or_else(|| "the agent cannot resume sessions".into()),
            ))
        };
        match outcome {
            Ok(mut patch) => {
                self.restore_picks(&live, session, &mut patch).await;
                self.install(session.key(), live).await;
                Ok(StartOutcome { patch, events: Vec::new() })
            }
            Err(e) => {
                live.stop().await;
                Err(e)
            }
        }
    }

    /// ACP's `session/fork` copies a whole session as it is now, so only the source's most recent
    /// turn can be forked through, and not while another one runs.
    async fn fork(
        &self,
        open: ForkOpen<'_>,
        session: &Session,
        handle: SessionHandle,
    ) -> Result<StartOutcome, AdapterError> {
        let Some(source) = open.source.provider_session_id.clone() else {
            return Err(AdapterError::Unsupported("the source session never had an agent session".into()));
        };
        if open.last_turn != Some(open.through_turn) {
            return Err(AdapterError::Unsupported(format!(
                "ACP's session/fork copies the whole conversation: only the source's last turn ({}) can be forked through",
                open.last_turn.unwrap_or("none")
            )));
        }
        if let Some(running) = &open.source.active_turn_id {
            return Err(AdapterError::Unsupported(format!(
                "ACP's session/fork copies the whole conversation: wait until the source's turn {running} ends"
            )));
        }
        let live = self.spawn(session, handle).await?;
        if live.agent_capabilities().session_capabilities.fork.is_none() {
            live.stop().await;
            return Err(AdapterError::Unsupported(format!("{} does not offer session/fork", self.config.id)));
        }
        let request =
            wire::ForkSessionRequest::new(source, PathBuf::from(&session.cwd)).mcp_servers(self.mcp_servers());
        let response = match live.call::<wire::ForkSession>(&request, self.config.start_timeout).await {
            Ok(r) => r,
            Err(e) => {
                live.stop().await;
                return Err(e);
            }
        };
        let mut patch = live.bind(&response.session_id.0, response.modes.as_ref(), response.config_options.as_deref());
        patch.not_resumable = self.resume_support(&live);
        self.install(session.key(), live).await;
        Ok(StartOutcome { patch, events: Vec::new() })
    }

    async fn close(&self, session: &Session) -> Result<(), AdapterError> {
        self.take_down(session, true).await;
        Ok(())
    }

    async fn start_turn(&self, session: &Session, turn: TurnRequest) -> Result<(), AdapterError> {
        self.sessions.live_or_err(session)?.start_turn(turn)
    }

    async fn cancel(&self, session: &Session, turn_id: &str) -> Result<(), AdapterError> {
        self.sessions.live_or_err(session)?.cancel(turn_id).await
    }

    fn is_live(&self, session: &Session) -> bool {
        self.sessions.get(&session.key()).is_some_and(|l| l.is_live())
    }

    fn isolation(&self) -> Option<ensemble_core::isolation::ProviderIsolation> {
        Some(self.config.isolation())
    }

    fn can_resume(&self, session: &Session) -> bool {
        session.provider_session_id.as_deref().is_some_and(|s| !s.is_empty())
    }

    fn live_processes(&self) -> usize {
        self.sessions.count(|l| l.is_live())
    }

    async fn respond(
        &self,
        session: &Session,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
        option: Option<&str>,
    ) -> Result<(), AdapterError> {
        self.sessions.live_or_err(session)?.respond(request_id, decision, answers.as_ref(), option).await
    }

    fn check_answer(
        &self,
        session: &Session,
        request_id: &str,
        decision: Decision,
        answers: Option<&Value>,
    ) -> Result<(), AdapterError> {
        self.sessions.live_or_err(session)?.check_answer(request_id, decision, answers)
    }

    async fn set_config(&self, session: &Session, change: ConfigChange) -> Result<SessionPatch, AdapterError> {
        self.sessions.live_or_err(session)?.configure(&change).await
    }

    async fn release(&self, session: &Session) -> Result<(), AdapterError> {
        let key = session.key();
        let live = self.sessions.get(&key).ok_or(AdapterError::NotLive)?;
        if live.busy() {
            return Err(AdapterError::Busy("a turn or a permission request is pending".into()));
        }
        // No session/close: the agent keeps the session loadable.
        self.sessions.remove(&key);
        live.stop().await;
        Ok(())
    }

    async fn disconnect(&self, session: &Session) -> Result<(), AdapterError> {
        self.take_down(session, false).await;
        Ok(())
    }

    async fn quiesce_for_close(&self, session: &Session, grace: Duration) -> Result<(), AdapterError> {
        let Some(live) = self.sessions.get(&session.key()) else { return Ok(()) };
        let Some((turn_id, ended)) = live.active_turn() else { return Ok(()) };
        let notified = ended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Err(e) = live.cancel(&turn_id).await {
            tracing::warn!(session = %session.key(), error = %e, "cancel before close failed");
        }
        if live.active_turn().is_none() {
            return Ok(());
        }
        if tokio::time::timeout(grace, notified).await.is_err() {
            tracing::warn!(session = %session.key(), turn = %turn_id, "turn did not end within the close grace; stopping the agent");
            live.stop().await;
            let open = live.close_open_items();
            live.sink.send(open).await;
        }
        Ok(())
    }
}
