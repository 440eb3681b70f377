//! The `codex` provider: one real `codex app-server` process per session, spoken to with
//! newline-delimited JSON-RPC on stdio.
//!
//! Ported rules (from the Go daemon's adapter): a start over a live session replaces its process;
//! a resume keeps the old live client until the new one has resumed; close quiesces a running turn
//! (interrupt, bounded grace, then the process goes down) and rejects pending requests; release
//! refuses while work is pending; disconnect rejects pending requests and drops the process without
//! any destructive provider call, so the thread stays resumable. An interrupt asked for before codex
//! has told us the turn id is queued and sent as soon as the id is known. The process's end (EOF or
//! exit) fails every pending call and reports the session lost, with the exit status.
//!
//! The files, from the bottom up:
//! - [`config`]: how to run codex;
//! - [`wire`]: codex's protocol as types (every params, result and notification Ensemble uses);
//! - [`translate`]: the pure mapping of codex's notifications and requests to runtime events;
//! - `conn`: one process, its connection and the router that hands each message to its thread;
//! - `goals`: goal operations as `thread/goal/*` calls, codex's goal as the runtime's;
//! - `live`: one thread's live session (turn state, notifications, server requests, turn operations);
//! - `start` and `sides`: bringing a session's thread up, and forking side conversations;
//! - [`options`]: the command-line options;
//! - this file: the adapter (the sessions' live threads) and the provider's registration.

mod config;
mod conn;
mod goals;
mod live;
mod modes;
mod options;
mod sides;
mod start;
pub mod translate;
pub mod wire;

pub use config::{CODEX, CodexConfig, MIN_VERSION};
pub use options::CodexOptions;

use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use async_trait::async_trait;
use ensemble_core::adapter::{
    Adapter, AdapterError, AuthCheck, Capabilities, ForkOpen, InputKinds, Prompt, ProviderDescriptor, SessionHandle,
    SideOpen, SideOpened, StartOutcome, TurnRequest,
};
use ensemble_core::clock::unix_ms;
use ensemble_core::event::{CommandInfo, CommandsUpdatedPayload, Decision, EventBody};
use ensemble_core::goal::{GoalCommand, ProviderGoal};
use ensemble_core::model::{AuthState, ConfigChange, Session, SessionKey, SessionPatch, SideCapabilities};
use ensemble_core::shared_list::SharedList;
use serde_json::Value;

use crate::kit::auth_check::AuthChecks;
use crate::kit::availability::{Availability, AvailabilityCell};
use crate::kit::binary::{self, BinaryCheck};
use crate::kit::provider::{Provider, ProviderEnv, ProviderError};
use crate::kit::sessions::Sessions;
use live::Live;

/// How long a start-up failure marks the provider unavailable before it is probed again.
const FAILURE_COOLDOWN: Duration = Duration::from_secs(10);

/// The slash commands codex understands (`commands.updated`).
pub fn commands() -> SharedList<CommandInfo> {
    static COMMANDS: LazyLock<SharedList<CommandInfo>> = LazyLock::new(|| list().into());
    COMMANDS.clone()
}

fn list() -> Vec<CommandInfo> {
    let c = |name: &str, description: &str| CommandInfo {
        name: name.into(),
        description: description.into(),
        input_hint: None,
    };
    vec![
        c("review", "review the working tree's changes"),
        c("compact", "summarise the conversation to free context"),
        c("undo", "undo the last turn's changes"),
        c("goal", "set or show the session's goal"),
    ]
}

/// The codex provider's registration.
pub struct Codex;

#[async_trait]
impl Provider for Codex {
    type Options = CodexOptions;

    async fn build(options: &CodexOptions, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
        let adapter = CodexAdapter::new(options.config(env)?);
        adapter.probe().await;
        Ok(vec![Arc::new(adapter)])
    }

    /// `CODEX_HOME`: codex's login and threads.
    fn private_dirs(options: &CodexOptions, data_dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        vec![options.home(data_dir)]
    }
}

/// The codex provider.
pub struct CodexAdapter {
    config: CodexConfig,
    sessions: Sessions<Live>,
    availability: AvailabilityCell,
    auth_checks: AuthChecks,
}

impl CodexAdapter {
    pub fn new(config: CodexConfig) -> Self {
        let auth_checks = AuthChecks::new(config.auth_check_ttl);
        Self {
            config,
            sessions: Sessions::default(),
            availability: AvailabilityCell::new(FAILURE_COOLDOWN),
            auth_checks,
        }
    }

    pub fn config(&self) -> &CodexConfig {
        &self.config
    }

    /// Runs `codex --version` and records whether codex can be used.
    pub async fn probe(&self) {
        self.availability.set(probe(&self.config.bin).await);
    }

    /// Takes a session's live side down now: pending requests rejected, the process stopped, and
    /// whatever a turn still had open closed (a close without quiescing, e.g. at shutdown, or a
    /// disconnect).
    async fn take_down(&self, session: &Session) {
        if let Some(live) = self.sessions.remove(&session.key()) {
            live.reject_pending().await;
            live.stop(&self.config).await;
            let open = live.close_open_items();
            live.sink.send(open).await;
        }
    }

    /// Installs a live session, stopping the one it replaces.
    async fn install(&self, key: SessionKey, live: Arc<Live>) {
        if let Some(old) = self.sessions.replace(key, live) {
            old.reject_pending().await;
            old.stop(&self.config).await;
        }
    }
}

async fn probe(bin: &Path) -> Availability {
    let check = BinaryCheck {
        name: CODEX,
        bin,
        setting: "--codex-bin",
        min_version: MIN_VERSION,
        timeout: Duration::from_secs(10),
    };
    binary::probe(&check).await
}

/// What a start or resume tells the controller.
/// What a start or resume learnt: the thread, the auth state, and the models, efforts and modes
/// the session offers.
fn started(
    live: &Live,
    session: &Session,
    thread: Option<String>,
    (auth_state, auth_message): (AuthState, Option<String>),
) -> StartOutcome {
    let offered = modes::offered(&live.models(), session, live.thread_model().as_deref());
    StartOutcome {
        patch: SessionPatch { provider_session_id: thread, auth_state: Some(auth_state), auth_message, ..offered },
        events: vec![EventBody::CommandsUpdated(CommandsUpdatedPayload { commands: commands() })],
    }
}

#[async_trait]
impl Adapter for CodexAdapter {
    fn id(&self) -> &str {
        CODEX
    }

    fn capabilities(&self) -> Capabilities {
        // A change of model, effort or mode applies from the next `turn/start`: fine mid-turn.
        Capabilities {
            interactive: true,
            steer: true,
            quiesce: true,
            sides: true,
            goals: true,
            config: true,
            config_mid_turn: true,
        }
    }

    fn descriptor(&self) -> ProviderDescriptor {
        // A start-up failure is not forever: a stale state is probed again in the background.
        let bin = self.config.bin.clone();
        let state = self.availability.current(|| async move { probe(&bin).await });
        let (available, reason) = match &state {
            Availability::Available { .. } => (true, None),
            Availability::Unknown => (false, Some("not probed yet".to_owned())),
            Availability::Unavailable { reason, .. } => (false, Some(reason.clone())),
        };
        let display_name = match &state {
            Availability::Available { version } => format!("Codex (app-server {version})"),
            _ => "Codex (app-server)".to_owned(),
        };
        ProviderDescriptor { display_name, available, unavailable_reason: reason, agent: None }
    }

    async fn check_auth(&self, wait: Duration) -> Option<AuthCheck> {
        if !matches!(self.availability.get(), Availability::Available { .. }) {
            return None;
        }
        let config = self.config.clone();
        let ask = || async move {
            let (state, message) = start::probe_auth(&config).await?;
            Some(AuthCheck { state, message, at_ms: unix_ms() })
        };
        self.auth_checks.get(wait, ask).await
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let live = start::spawn(&self.config, &self.availability, session, handle).await?;
        let auth = start::auth(&self.config, live.rpc()).await;
        live.list_models(self.config.call_timeout).await;
        let thread_id = match start::start_thread(&self.config, &live, session).await {
            Ok(t) => t,
            Err(e) => {
                live.stop(&self.config).await;
                return Err(e);
            }
        };
        let outcome = started(&live, session, Some(thread_id), auth);
        self.install(session.key(), live).await;
        Ok(outcome)
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let Some(thread_id) = session.provider_session_id.clone() else {
            return Err(AdapterError::Invalid("the session has no codex thread to resume".into()));
        };
        // The old live client (if any) stays installed until the new one has resumed.
        let live = start::spawn(&self.config, &self.availability, session, handle).await?;
        live.set_thread(&thread_id);
        let auth = start::auth(&self.config, live.rpc()).await;
        live.list_models(self.config.call_timeout).await;
        let new_thread = match start::resume_thread(&self.config, &live, session, &thread_id).await {
            Ok(t) => t,
            Err(err) => {
                live.stop(&self.config).await;
                return Err(err);
            }
        };
        let outcome = started(&live, session, new_thread, auth);
        self.install(session.key(), live).await;
        Ok(outcome)
    }

    async fn fork(
        &self,
        open: ForkOpen<'_>,
        session: &Session,
        handle: SessionHandle,
    ) -> Result<StartOutcome, AdapterError> {
        let live = start::spawn(&self.config, &self.availability, session, handle).await?;
        let auth = start::auth(&self.config, live.rpc()).await;
        live.list_models(self.config.call_timeout).await;
        let thread_id = match start::fork_thread(&self.config, &live, &open, session).await {
            Ok(t) => t,
            Err(e) => {
                live.stop(&self.config).await;
                return Err(e);
            }
        };
        let outcome = started(&live, session, Some(thread_id), auth);
        self.install(session.key(), live).await;
        Ok(outcome)
    }

    async fn close(&self, session: &Session) -> Result<(), AdapterError> {
        self.take_down(session).await;
        Ok(())
    }

    async fn start_turn(&self, session: &Session, turn: TurnRequest) -> Result<(), AdapterError> {
        let live = self.sessions.live_or_err(session)?;
        live.start_turn(session, turn, self.config.call_timeout).await
    }

    async fn cancel(&self, session: &Session, turn_id: &str) -> Result<(), AdapterError> {
        let live = self.sessions.live_or_err(session)?;
        live.cancel(turn_id, self.config.call_timeout);
        Ok(())
    }

    async fn set_config(&self, session: &Session, change: ConfigChange) -> Result<SessionPatch, AdapterError> {
        let live = self.sessions.live_or_err(session)?;
        Ok(modes::changed(&live.models(), session, &change))
    }

    fn is_live(&self, session: &Session) -> bool {
        self.sessions.get(&session.key()).is_some_and(|l| l.is_live())
    }

    fn isolation(&self) -> Option<ensemble_core::isolation::ProviderIsolation> {
        Some(self.config.isolation())
    }

    fn can_resume(&self, session: &Session) -> bool {
        session.provider_session_id.as_deref().is_some_and(|t| !t.is_empty())
    }

    fn live_processes(&self) -> usize {
        self.sessions.count(|l| !l.side && l.is_live())
    }

    async fn side_capabilities(&self, source: &Session) -> Result<SideCapabilities, AdapterError> {
        Ok(match self.sessions.get(&source.key()) {
            // Forks run in the source's live process, so its running turn is part of the snapshot.
            Some(l) if l.is_live() && !l.side && l.thread().is_some() => SideCapabilities::all(),
            _ => SideCapabilities::default(),
        })
    }

    async fn open_side(&self, open: SideOpen<'_>) -> Result<SideOpened, AdapterError> {
        let source = self.sessions.live_or_err(open.source)?;
        let key = open.side.key();
        let (live, session) = sides::open(&self.config, &source, open).await?;
        let old = self.sessions.replace(key, live);
        if let Some(old) = old {
            old.stop(&self.config).await;
        }
        Ok(SideOpened { session, capabilities: SideCapabilities::all() })
    }

    async fn apply_goal(&self, session: &Session, command: GoalCommand) -> Result<Option<ProviderGoal>, AdapterError> {
        let live = self.sessions.live_or_err(session)?;
        if live.side {
            return Err(AdapterError::Unsupported("side conversations have no goals".into()));
        }
        let thread = live.thread().ok_or(AdapterError::NotLive)?;
        goals::apply(&live.conn, &live.goals, &thread, &command, self.config.call_timeout).await
    }

    async fn respond(
        &self,
        session: &Session,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
        _option: Option<&str>,
    ) -> Result<(), AdapterError> {
        let live = self.sessions.live_or_err(session)?;
        live.respond(request_id, decision, answers.as_ref()).await
    }

    fn input_kinds(&self, _session: &Session) -> InputKinds {
        InputKinds::all()
    }

    async fn steer(&self, session: &Session, turn_id: &str, input: Vec<Prompt>) -> Result<(), AdapterError> {
        let live = self.sessions.live_or_err(session)?;
        live.steer(turn_id, &input, self.config.call_timeout).await
    }

    async fn release(&self, session: &Session) -> Result<(), AdapterError> {
        let key = session.key();
        let live = self.sessions.get(&key).ok_or(AdapterError::NotLive)?;
        if live.busy() {
            return Err(AdapterError::Busy("a turn or an interaction is pending".into()));
        }
        self.sessions.remove(&key);
        live.stop(&self.config).await;
        Ok(())
    }

    async fn disconnect(&self, session: &Session) -> Result<(), AdapterError> {
        // No thread/unsubscribe or delete: the thread must stay resumable.
        self.take_down(session).await;
        Ok(())
    }

    async fn quiesce_for_close(&self, session: &Session, grace: Duration) -> Result<(), AdapterError> {
        let Some(live) = self.sessions.get(&session.key()) else { return Ok(()) };
        let Some((turn_id, ended)) = live.active_turn() else { return Ok(()) };
        let notified = ended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Err(e) = self.cancel(session, &turn_id).await {
            tracing::warn!(session = %session.key(), error = %e, "interrupt before close failed");
        }
        if live.active_turn().is_none() {
            return Ok(());
        }
        if tokio::time::timeout(grace, notified).await.is_err() {
            // Codex never ended the turn (or never told us its id): take the process down.
            tracing::warn!(session = %session.key(), turn = %turn_id, "turn did not end within the close grace; stopping codex");
            live.stop(&self.config).await;
            let open = live.close_open_items();
            live.sink.send(open).await;
        }
        Ok(())
    }
}
