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

mod options;
pub mod translate;

pub use options::{Codex, CodexOptions};

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use ensemble_runtime::adapter::{
    Adapter, AdapterError, Capabilities, EventSink, Fact, ProviderDescriptor, ProviderState, SessionHandle, SideOpen,
    SideOpened, StartOutcome, TurnRequest,
};
use ensemble_runtime::clock::new_id;
use ensemble_runtime::event::{
    CommandInfo, CommandsUpdatedPayload, Decision, EventBody, InteractionKind, InteractionResolvedPayload, ResolvedBy,
    TurnCanceledPayload, TurnCompletedPayload, TurnFailedPayload,
};
use ensemble_runtime::model::{AuthState, InputItem, Session, SessionKey, SessionPatch, SideCapabilities};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::kit::availability::{Availability, AvailabilityCell};
use crate::kit::binary::{self, BinaryCheck, Version};
use crate::kit::goals::GoalEngine;
use crate::kit::jsonrpc::{Incoming, RpcClient, RpcConfig, RpcError};
use crate::kit::process::{ProcessSpec, Supervised, base_env};
use crate::kit::stderr::{self, StderrTail};
use ensemble_runtime::goal::{GoalAction, GoalCommand, GoalFact, ProviderGoal};
use translate::Translator;

/// The provider id.
pub const CODEX: &str = "codex";
/// The oldest app-server this adapter speaks to.
pub const MIN_VERSION: Version = Version::new(0, 169, 0);
/// Lines of codex's stderr kept for error messages.
const STDERR_TAIL: usize = 20;
/// Provider-state key: the codex thread that has run a turn (so codex has written its rollout).
const THREAD_USED: &str = "codex.thread_used";
/// What a side conversation's model sees where the inherited context ends.
const SIDE_BOUNDARY: &str = "<side_conversation_boundary>\nEverything above is the main conversation, \
    kept as context only. From here on this is a side conversation: answer the user's side questions \
    here. Do not continue, change or act on the main conversation's task unless asked to in this side \
    conversation.\n</side_conversation_boundary>";
/// The side conversation's standing instructions (given at the fork).
const SIDE_INSTRUCTIONS: &str = "You are in a side conversation forked from a running session. The \
    turns you inherited are context, not tasks to resume.";
/// How long a start-up failure marks the provider unavailable before it is probed again.
const FAILURE_COOLDOWN: Duration = Duration::from_secs(10);

/// How to run codex.
#[derive(Clone, Debug)]
pub struct CodexConfig {
    /// The `codex` executable.
    pub bin: PathBuf,
    /// `KEY=VALUE` entries passed to every process as `-c KEY=VALUE`.
    pub overrides: Vec<String>,
    /// Extra environment of every process (on top of [`crate::kit::process::PASSTHROUGH_ENV`]).
    pub env: Vec<(String, String)>,
    /// `CODEX_HOME`, managed by Ensemble (created if missing).
    pub home: PathBuf,
    /// Deadline of `thread/start` (codex may initialise resources synchronously).
    pub thread_start_timeout: Duration,
    /// Deadline of the other calls (initialize, account/read, model/list, thread/resume, turn/*).
    pub call_timeout: Duration,
    /// After stdin closes, how long codex gets to exit by itself before SIGTERM.
    pub stop_grace: Duration,
    /// After SIGTERM, how long before SIGKILL.
    pub term_grace: Duration,
    /// How long a turn codex starts by itself waits for evidence of the goal operation it serves.
    pub goal_grace: Duration,
    pub rpc: RpcConfig,
}

impl CodexConfig {
    pub fn new(bin: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        Self {
            bin: bin.into(),
            overrides: Vec::new(),
            env: Vec::new(),
            home: home.into(),
            thread_start_timeout: Duration::from_secs(90),
            call_timeout: Duration::from_secs(30),
            stop_grace: Duration::from_secs(1),
            term_grace: Duration::from_secs(2),
            goal_grace: Duration::from_millis(250),
            rpc: RpcConfig::default(),
        }
    }
}

/// The slash commands codex understands (`commands.updated`).
pub fn commands() -> Vec<CommandInfo> {
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

/// The codex provider.
pub struct CodexAdapter {
    config: CodexConfig,
    sessions: Mutex<HashMap<SessionKey, Arc<Live>>>,
    availability: AvailabilityCell,
}

impl CodexAdapter {
    pub fn new(config: CodexConfig) -> Self {
        Self { config, sessions: Mutex::new(HashMap::new()), availability: AvailabilityCell::new(FAILURE_COOLDOWN) }
    }

    pub fn config(&self) -> &CodexConfig {
        &self.config
    }

    /// Runs `codex --version` and records whether codex can be used.
    pub async fn probe(&self) {
        self.availability.set(probe(&self.config.bin).await);
    }

    fn live(&self, key: &SessionKey) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// Takes a session's live side down now: pending requests rejected, the process stopped, and
    /// whatever a turn still had open closed (a close without quiescing, e.g. at shutdown, or a
    /// disconnect).
    async fn take_down(&self, session: &Session) {
        if let Some(live) = self.remove(&session.key()) {
            live.reject_pending().await;
            live.stop(&self.config).await;
            let open = live.close_open_items();
            live.sink.send(open).await;
        }
    }

    fn live_or_err(&self, session: &Session) -> Result<Arc<Live>, AdapterError> {
        self.live(&session.key()).filter(|l| l.is_live()).ok_or(AdapterError::NotLive)
    }

    fn remove(&self, key: &SessionKey) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(key)
    }

    /// Installs a live session, stopping the one it replaces.
    async fn install(&self, key: SessionKey, live: Arc<Live>) {
        let old = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(key, live);
        if let Some(old) = old {
            old.reject_pending().await;
            old.stop(&self.config).await;
        }
    }

    /// Spawns `codex app-server` for a session and completes the handshake.
    async fn spawn(&self, session: &Session, handle: SessionHandle) -> Result<Arc<Live>, AdapterError> {
        let SessionHandle { sink, state: provider_state, goals: goal_host, goal } = handle;
        let goals = GoalEngine::new(goal_host, sink.clone(), goal);
        std::fs::create_dir_all(&self.config.home).map_err(|e| {
            AdapterError::failed("codex_home", format!("cannot create CODEX_HOME {}: {e}", self.config.home.display()))
        })?;
        let spec = self.process_spec(session);
        let spawned = Supervised::spawn(&spec).map_err(|e| {
            let reason = binary::spawn_failure(CODEX, &self.config.bin, &e);
            self.availability.failed(reason.clone());
            AdapterError::Unavailable(reason)
        })?;
        let label = format!("codex {}", session.key());
        let (rpc, incoming) = RpcClient::start(spawned.stdout, spawned.stdin, self.config.rpc.clone(), label);
        let tail = StderrTail::new(STDERR_TAIL);
        tokio::spawn(stderr::drain(spawned.stderr, CODEX, session.key(), tail.clone(), self.config.rpc.max_line_bytes));
        let conn = Arc::new(Conn {
            label: session.key(),
            rpc,
            process: tokio::sync::Mutex::new(Some(spawned.process)),
            nonce: new_id().chars().rev().take(8).collect(),
            closing: AtomicBool::new(false),
            stderr_tail: tail,
            routes: Mutex::new(Routes::default()),
            replay_ready: Notify::new(),
        });
        let live = Arc::new(Live {
            key: session.key(),
            sink,
            provider_state,
            thread_used: AtomicBool::new(false),
            conn: conn.clone(),
            thread_id: Mutex::new(None),
            model: Mutex::new(None),
            side: false,
            detached: AtomicBool::new(false),
            state: Mutex::new(TurnState::default()),
            goals,
            emit_gate: tokio::sync::Mutex::new(()),
            goal_grace: self.config.goal_grace,
        });
        conn.routes().owner = Arc::downgrade(&live);
        tokio::spawn(route(conn.clone(), incoming, self.config.call_timeout));
        let init = conn
            .rpc
            .call(
                "initialize",
                json!({
                    "clientInfo": {"name": "ensemble", "title": "Ensemble", "version": env!("CARGO_PKG_VERSION")},
                    "capabilities": {"experimentalApi": true},
                }),
                self.config.call_timeout,
            )
            .await;
        if let Err(e) = init {
            let err = conn.rpc_error("initialize", e).await;
            conn.stop(&self.config).await;
            self.availability.failed(format!("start-up failure: {err}"));
            return Err(err);
        }
        if let Err(e) = conn.rpc.notify("initialized", Value::Null).await {
            let err = conn.rpc_error("initialized", e).await;
            conn.stop(&self.config).await;
            return Err(err);
        }
        Ok(live)
    }

    fn process_spec(&self, session: &Session) -> ProcessSpec {
        let mut args: Vec<OsString> = vec!["app-server".into()];
        for o in &self.config.overrides {
            args.push("-c".into());
            args.push(o.into());
        }
        let mut env = base_env();
        // The npm package ships bubblewrap next to the binary; codex looks for it on PATH.
        if let Some(resources) = self.config.bin.parent().and_then(Path::parent).map(|v| v.join("codex-resources"))
            && resources.is_dir()
        {
            let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
            let mut joined = resources.into_os_string();
            if !path.is_empty() {
                joined.push(":");
                joined.push(&path);
            }
            env.retain(|(k, _)| k != "PATH");
            env.push(("PATH".into(), joined));
        }
        env.push(("CODEX_HOME".into(), self.config.home.clone().into_os_string()));
        if !self.config.env.iter().any(|(k, _)| k == "RUST_LOG") {
            env.push(("RUST_LOG".into(), "warn".into()));
        }
        for (k, v) in &self.config.env {
            env.retain(|(ek, _)| ek.to_str() != Some(k.as_str()));
            env.push((k.into(), v.into()));
        }
        ProcessSpec { program: self.config.bin.clone(), args, env, cwd: PathBuf::from(&session.cwd) }
    }

    /// `account/read` and `modelProvider/list`: does codex have what it needs to call its model?
    async fn auth(&self, live: &Live) -> (AuthState, Option<String>) {
        let t = self.config.call_timeout;
        if let Ok(account) = live.rpc().call("account/read", json!({}), t).await
            && account.get("requiresOpenaiAuth").and_then(Value::as_bool) == Some(true)
            && account.get("account").is_none_or(Value::is_null)
        {
            return (
                AuthState::AuthRequired,
                Some(format!(
                    "codex is not logged in: run `CODEX_HOME={} codex login`, or point it at a model provider with --codex-config and its key with --codex-env",
                    self.config.home.display()
                )),
            );
        }
        if let Ok(list) = live.rpc().call("modelProvider/list", json!({}), t).await {
            let default = list.get("defaultProviderId").and_then(Value::as_str).unwrap_or_default();
            let provider = list
                .get("data")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().find(|p| p.get("id").and_then(Value::as_str) == Some(default)));
            let auth = provider.and_then(|p| p.get("settings")).and_then(|s| s.get("auth"));
            if let Some(auth) = auth
                && auth.get("mode").and_then(Value::as_str) == Some("environmentVariable")
                && let Some(var) = auth.get("envKey").and_then(Value::as_str)
                && !self.has_env(var)
            {
                return (
                    AuthState::AuthRequired,
                    Some(format!(
                        "codex's model provider `{default}` reads its API key from {var}, which is not set: start Ensemble with --codex-env {var}=<key>"
                    )),
                );
            }
        }
        (AuthState::Authenticated, None)
    }

    fn has_env(&self, var: &str) -> bool {
        self.config.env.iter().any(|(k, v)| k == var && !v.is_empty())
            || (crate::kit::process::PASSTHROUGH_ENV.contains(&var) && std::env::var_os(var).is_some())
    }

    /// `thread/start` on a live process; returns the new thread's id.
    async fn start_thread(&self, live: &Arc<Live>, session: &Session) -> Result<String, AdapterError> {
        let t = self.config.thread_start_timeout;
        let v = match live.rpc().call("thread/start", self.thread_params(session), t).await {
            Ok(v) => v,
            Err(e) => return Err(live.conn.rpc_error("thread/start", e).await),
        };
        live.remember_model(&v);
        let id = v
            .get("thread")
            .and_then(|t| t.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| AdapterError::failed("provider_error", "thread/start returned no thread id"))?;
        live.set_thread(&id);
        Ok(id)
    }

    fn thread_params(&self, session: &Session) -> Value {
        let mut p = json!({ "cwd": session.cwd });
        let s = &session.settings;
        if let Some(m) = &s.model {
            p["model"] = json!(m);
        }
        if let Some(a) = s.approval_policy {
            p["approvalPolicy"] = json!(a.as_str());
        }
        if let Some(x) = s.sandbox {
            p["sandbox"] = json!(x.as_str());
        }
        if let Some(e) = &s.reasoning_effort {
            p["config"] = json!({ "model_reasoning_effort": e });
        }
        p
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

#[derive(Default)]
struct TurnState {
    active: Option<ActiveTurn>,
    /// Turns codex started by itself that wait to learn which goal operation they belong to: their
    /// events wait here (even past the turn's end) so that `turn.started`, with its origin, is first.
    attributing: HashMap<String, Vec<EventBody>>,
    translator: Translator,
    pending: HashMap<String, PendingRequest>,
}

struct ActiveTurn {
    /// Ensemble's turn id.
    ours: String,
    /// Codex's turn id, once known.
    provider: Option<String>,
    /// Codex announced the turn (`turn/started`): only from then on does it accept
    /// `turn/interrupt` (before, it answers "no active turn to interrupt").
    started: bool,
    /// Cancel was asked before codex announced the turn.
    interrupt_queued: bool,
    ended: Arc<Notify>,
}

struct PendingRequest {
    rpc_id: Value,
    kind: InteractionKind,
    params: Value,
}

/// One codex process. The session that started it and the side conversations forked from it share
/// it; the router delivers every message to the thread it names.
struct Conn {
    label: SessionKey,
    rpc: RpcClient,
    process: tokio::sync::Mutex<Option<Supervised>>,
    /// Distinguishes request ids of different processes (codex numbers them from 0 each time).
    nonce: String,
    /// Set when Ensemble stops the process on purpose: its end is then not a loss.
    closing: AtomicBool,
    stderr_tail: StderrTail,
    routes: Mutex<Routes>,
    replay_ready: Notify,
}

#[derive(Default)]
struct Routes {
    /// The session that owns the process: it gets what names no known thread while its own thread
    /// is not known yet (start-up), and what names no thread at all.
    owner: Weak<Live>,
    threads: HashMap<String, Weak<Live>>,
    /// Forks under way: messages of threads nobody owns yet wait here for the fork to register.
    forks: usize,
    parked: Vec<(String, Incoming)>,
    /// Parked messages of a registered fork, delivered by the router before anything newer for
    /// that thread (so a fork's first notifications keep their order).
    replay: VecDeque<(String, Incoming)>,
}

enum Route {
    To(Arc<Live>),
    Parked,
    Nowhere,
}

impl Conn {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn route(&self, msg: &Incoming) -> Route {
        let params = match msg {
            Incoming::Notification { params, .. } | Incoming::Request { params, .. } => params,
            Incoming::Response { .. } => return Route::Nowhere,
        };
        let thread = params.get("threadId").and_then(Value::as_str);
        let mut r = self.routes();
        let owner = r.owner.upgrade();
        let Some(thread) = thread else { return owner.map(Route::To).unwrap_or(Route::Nowhere) };
        if let Some(live) = r.threads.get(thread).and_then(Weak::upgrade) {
            if r.replay.iter().any(|(t, _)| t == thread) {
                r.replay.push_back((thread.to_owned(), msg.clone()));
                return Route::Parked;
            }
            return Route::To(live);
        }
        if r.forks > 0 {
            r.parked.push((thread.to_owned(), msg.clone()));
            return Route::Parked;
        }
        match owner {
            // Before thread/start answers, the owner's thread is not registered yet.
            Some(o) if o.thread().is_none() => Route::To(o),
            _ => Route::Nowhere,
        }
    }

    fn register(&self, thread: &str, live: &Arc<Live>) {
        self.routes().threads.insert(thread.to_owned(), Arc::downgrade(live));
    }

    fn deregister(&self, thread: &str) {
        self.routes().threads.remove(thread);
    }

    fn begin_fork(&self) {
        self.routes().forks += 1;
    }

    /// Ends a fork. With the fork's thread and session, registers them and hands what was parked
    /// for the thread to the router, which delivers it before anything newer.
    fn end_fork(&self, registered: Option<(&str, &Arc<Live>)>) {
        {
            let mut r = self.routes();
            r.forks = r.forks.saturating_sub(1);
            let parked = std::mem::take(&mut r.parked);
            let thread = registered.map(|(t, _)| t);
            let (mine, rest): (Vec<_>, Vec<_>) = parked.into_iter().partition(|(t, _)| Some(t.as_str()) == thread);
            if let Some((t, live)) = registered {
                r.threads.insert(t.to_owned(), Arc::downgrade(live));
            }
            r.replay.extend(mine);
            if r.forks > 0 {
                r.parked = rest;
            } else if !rest.is_empty() {
                tracing::debug!(process = %self.label, dropped = rest.len(), "dropping messages of unknown threads");
            }
        }
        self.replay_ready.notify_one();
    }

    fn take_replay(&self) -> Vec<(Arc<Live>, Incoming)> {
        let mut r = self.routes();
        let replay = std::mem::take(&mut r.replay);
        replay.into_iter().filter_map(|(t, m)| r.threads.get(&t).and_then(Weak::upgrade).map(|l| (l, m))).collect()
    }

    /// Every session on this process.
    fn lives(&self) -> Vec<Arc<Live>> {
        let r = self.routes();
        let mut out: Vec<Arc<Live>> = r.threads.values().filter_map(Weak::upgrade).collect();
        if let Some(o) = r.owner.upgrade()
            && !out.iter().any(|l| Arc::ptr_eq(l, &o))
        {
            out.push(o);
        }
        out
    }

    /// Turns an RPC failure into an adapter error, with the exit status when the process died.
    async fn rpc_error(&self, method: &str, e: RpcError) -> AdapterError {
        match e {
            RpcError::Timeout { .. } => AdapterError::Timeout(e.to_string()),
            RpcError::Server { error, .. } => {
                AdapterError::failed("provider_error", format!("codex rejected `{method}`: {}", error.message))
            }
            RpcError::Closed(reason) => {
                let status = self.exit_status(Duration::from_millis(500)).await;
                AdapterError::failed(
                    "provider_exited",
                    format!(
                        "codex app-server went away during `{method}` ({reason}; {status}){}",
                        self.stderr_tail.suffix()
                    ),
                )
            }
        }
    }

    async fn exit_status(&self, wait: Duration) -> String {
        let mut guard = self.process.lock().await;
        let Some(p) = guard.as_mut() else { return "stopped".into() };
        match tokio::time::timeout(wait, p.wait()).await {
            Ok(Ok(s)) => match s.code() {
                Some(c) => format!("exit status {c}"),
                None => format!("killed by {s}"),
            },
            _ => "still running".into(),
        }
    }

    /// Stops the process: close stdin and give codex `stop_grace` to exit, then SIGTERM, then SIGKILL.
    async fn stop(&self, config: &CodexConfig) {
        self.closing.store(true, Ordering::SeqCst);
        let process = self.process.lock().await.take();
        // Before stdin closes and codex exits by itself: once it is gone, descendants that left
        // its process group (setsid) are orphans that /proc no longer ties to it.
        let family = process.as_ref().map(Supervised::family).unwrap_or_default();
        self.rpc.close("the session stopped its codex process");
        if let Some(mut p) = process {
            if tokio::time::timeout(config.stop_grace, p.wait()).await.is_err() {
                p.terminate(config.term_grace).await;
            }
            // Descendants that outlived the leader go with the group, and those seen before.
            p.kill_family(&family);
            drop(p);
        }
        for live in self.lives() {
            live.wake_waiters();
        }
    }
}

/// One codex thread: a session's own, or a side conversation's fork.
struct Live {
    key: SessionKey,
    sink: EventSink,
    /// Durable per-session state: whether the thread has run a turn ([`THREAD_USED`]).
    provider_state: ProviderState,
    /// [`THREAD_USED`] is recorded for this process's thread.
    thread_used: AtomicBool,
    conn: Arc<Conn>,
    thread_id: Mutex<Option<String>>,
    /// The thread's model as codex reports it (collaboration modes need it).
    model: Mutex<Option<String>>,
    /// A side conversation's fork (it shares its source's process).
    side: bool,
    /// No longer routed (a closed side): its process may live on for others.
    detached: AtomicBool,
    state: Mutex<TurnState>,
    /// The goal state machine of this thread.
    goals: Arc<GoalEngine>,
    /// Serialises emitting with the release of an attributed turn's buffer.
    emit_gate: tokio::sync::Mutex<()>,
    /// How long a turn codex starts by itself waits for evidence of its goal operation.
    goal_grace: Duration,
}

impl Live {
    fn state(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn thread(&self) -> Option<String> {
        self.thread_id.lock().ok().and_then(|t| t.clone())
    }

    /// Binds this session to a thread and routes the thread's messages to it.
    fn set_thread(self: &Arc<Self>, id: &str) {
        if let Ok(mut t) = self.thread_id.lock() {
            *t = Some(id.to_owned());
        }
        self.goals.set_thread(id);
        self.conn.register(id, self);
    }

    fn remember_model(&self, thread_response: &Value) {
        if let Some(m) = thread_response.get("model").and_then(Value::as_str)
            && let Ok(mut model) = self.model.lock()
        {
            *model = Some(m.to_owned());
        }
    }

    fn rpc(&self) -> &RpcClient {
        &self.conn.rpc
    }

    /// Whether this thread can take requests.
    fn is_live(&self) -> bool {
        !self.detached.load(Ordering::SeqCst) && !self.conn.rpc.is_closed()
    }

    fn wake_waiters(&self) {
        let ended = self.state().active.as_ref().map(|a| a.ended.clone());
        if let Some(n) = ended {
            n.notify_waiters();
        }
    }

    /// Answers every pending request negatively (close, disconnect, replacement).
    async fn reject_pending(&self) {
        let pending: Vec<PendingRequest> = self.state().pending.drain().map(|(_, p)| p).collect();
        for p in pending {
            let result = translate::answer(p.kind, &p.params, Decision::Cancel, None);
            let _ = self.rpc().respond(p.rpc_id, result).await;
        }
    }

    /// Ends this thread's live side: a side unsubscribes its fork and leaves the shared process
    /// running; the owner stops the process.
    async fn stop(&self, config: &CodexConfig) {
        self.detached.store(true, Ordering::SeqCst);
        let thread = self.thread();
        if self.side {
            if let Some(t) = &thread {
                self.conn.deregister(t);
                if !self.conn.rpc.is_closed()
                    && let Err(e) =
                        self.rpc().call("thread/unsubscribe", json!({"threadId": t}), config.call_timeout).await
                {
                    tracing::debug!(session = %self.key, error = %e, "thread/unsubscribe failed");
                }
            }
            self.wake_waiters();
        } else {
            self.conn.stop(config).await;
        }
    }

    /// Dispatches one routed message.
    async fn handle(self: &Arc<Self>, msg: Incoming, timeout: Duration) {
        match msg {
            Incoming::Notification { method, params } => self.on_notification(&method, &params, timeout).await,
            Incoming::Request { id, method, params } => self.on_request(id, &method, &params).await,
            Incoming::Response { .. } => {}
        }
    }

    /// Closes what the active turn has open (messages with their text so far, calls as
    /// interrupted): codex will never complete them once its process is gone.
    fn close_open_items(&self) -> Vec<Fact> {
        let mut st = self.state();
        let turn = st.active.as_ref().map(|a| a.ours.clone());
        st.translator.close_open_items().into_iter().map(|body| Fact::Event { turn_id: turn.clone(), body }).collect()
    }

    async fn emit(&self, turn: Option<String>, events: Vec<EventBody>) {
        if events.is_empty() {
            return;
        }
        let _gate = self.emit_gate.lock().await;
        {
            let mut st = self.state();
            if let Some(buffer) = turn.as_ref().and_then(|t| st.attributing.get_mut(t)) {
                buffer.extend(events);
                return;
            }
        }
        self.sink.emit_many(events.into_iter().map(|e| (turn.clone(), e)).collect()).await;
    }

    /// Decides which goal operation a turn codex started by itself belongs to, then announces it
    /// (`turn.started` with its origin) and releases what the turn produced meanwhile.
    async fn attribute(self: Arc<Self>, ours: String, provider_turn: String) {
        let identity = self.goals.attribute(&provider_turn, self.goal_grace).await;
        let _gate = self.emit_gate.lock().await;
        let buffered = self.state().attributing.remove(&ours).unwrap_or_default();
        let started = ensemble_runtime::goal::provider_turn_started(&ours, identity.as_ref());
        let mut facts = vec![Fact::Event { turn_id: Some(ours.clone()), body: EventBody::TurnStarted(started) }];
        if identity.is_none() {
            facts.push(Fact::Goal(GoalFact::ReconcileRequired {
                reason: "unproven_continuation".into(),
                provider_turn_id: Some(provider_turn),
            }));
        }
        facts.extend(buffered.into_iter().map(|body| Fact::Event { turn_id: Some(ours.clone()), body }));
        self.sink.send(facts).await;
    }

    /// Sends `turn/interrupt` for a provider turn (in the background: the caller holds no lock).
    fn send_interrupt(self: &Arc<Self>, provider_turn: String, timeout: Duration) {
        let me = self.clone();
        tokio::spawn(async move {
            let Some(thread) = me.thread() else { return };
            if let Err(e) =
                me.rpc().call("turn/interrupt", json!({"threadId": thread, "turnId": provider_turn}), timeout).await
            {
                tracing::warn!(session = %me.key, error = %e, "turn/interrupt failed");
            }
        });
    }

    /// Our turn id for a provider turn id, binding an unbound active turn on first sight.
    fn our_turn(self: &Arc<Self>, provider: Option<&str>) -> Option<String> {
        let provider = provider?;
        let mut st = self.state();
        let a = st.active.as_mut()?;
        match &a.provider {
            Some(p) if p == provider => Some(a.ours.clone()),
            Some(_) => None,
            None => {
                a.provider = Some(provider.to_owned());
                Some(a.ours.clone())
            }
        }
    }

    /// `turn/started` for our active turn: it can be interrupted now; send a queued interrupt.
    fn turn_announced(self: &Arc<Self>, provider: &str, timeout: Duration) -> Option<String> {
        let ours = self.our_turn(Some(provider))?;
        let queued = {
            let mut st = self.state();
            let Some(a) = st.active.as_mut() else { return Some(ours) };
            a.started = true;
            std::mem::take(&mut a.interrupt_queued)
        };
        if queued {
            self.send_interrupt(provider.to_owned(), timeout);
        }
        Some(ours)
    }

    async fn on_notification(self: &Arc<Self>, method: &str, p: &Value, timeout: Duration) {
        if let (Some(ours), Some(theirs)) = (self.thread(), p.get("threadId").and_then(Value::as_str))
            && ours != theirs
        {
            return;
        }
        match method {
            "turn/started" => {
                let id = p.get("turn").and_then(|t| t.get("id")).and_then(Value::as_str).unwrap_or_default().to_owned();
                if self.turn_announced(&id, timeout).is_some() {
                    return;
                }
                let started = {
                    let mut st = self.state();
                    if st.active.is_some() {
                        None
                    } else {
                        let ours = new_id();
                        st.translator.reset();
                        st.active = Some(ActiveTurn {
                            ours: ours.clone(),
                            provider: Some(id.clone()),
                            started: true,
                            interrupt_queued: false,
                            ended: Arc::new(Notify::new()),
                        });
                        st.attributing.insert(ours.clone(), Vec::new());
                        Some(ours)
                    }
                };
                if let Some(ours) = started {
                    // A turn codex started by itself (e.g. continuing a goal): which operation it
                    // serves is decided off the read loop, with a bounded wait for evidence.
                    tokio::spawn(self.clone().attribute(ours, id));
                }
            }
            "turn/completed" => {
                let turn = p.get("turn").cloned().unwrap_or(Value::Null);
                let id = turn.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                let ended = {
                    let mut st = self.state();
                    let matches = st.active.as_ref().is_some_and(|a| a.provider.as_deref().is_none_or(|p| p == id));
                    if matches {
                        let a = st.active.take();
                        let mut events = st.translator.close_open_items();
                        a.map(|a| {
                            let terminal = match turn.get("status").and_then(Value::as_str) {
                                Some("interrupted") => EventBody::TurnCanceled(TurnCanceledPayload {
                                    turn_id: a.ours.clone(),
                                    reason: "interrupted".into(),
                                }),
                                Some("failed") => EventBody::TurnFailed(TurnFailedPayload {
                                    turn_id: a.ours.clone(),
                                    error: translate::turn_error(&turn),
                                }),
                                _ => EventBody::TurnCompleted(TurnCompletedPayload { turn_id: a.ours.clone() }),
                            };
                            events.push(terminal);
                            (a, events)
                        })
                    } else {
                        None
                    }
                };
                if let Some((a, events)) = ended {
                    self.emit(Some(a.ours.clone()), events).await;
                    a.ended.notify_waiters();
                }
            }
            "serverRequest/resolved" => {
                let rid = p.get("requestId").cloned().unwrap_or(Value::Null);
                let resolved = {
                    let mut st = self.state();
                    let key = st.pending.iter().find(|(_, r)| r.rpc_id == rid).map(|(k, _)| k.clone());
                    key.and_then(|k| st.pending.remove(&k).map(|_| k))
                };
                if let Some(request_id) = resolved {
                    let turn = self.state().active.as_ref().map(|a| a.ours.clone());
                    let body = EventBody::InteractionResolved(InteractionResolvedPayload {
                        request_id,
                        decision: Decision::Cancel,
                        resolved_by: ResolvedBy::Provider,
                        answers: None,
                    });
                    self.emit(turn, vec![body]).await;
                }
            }
            "thread/goal/updated" => {
                let Some(goal) = p.get("goal").and_then(provider_goal) else { return };
                let turn = p.get("turnId").and_then(Value::as_str);
                self.goals.observed(goal, turn).await;
            }
            "thread/goal/cleared" => self.goals.cleared().await,
            "thread/name/updated" => {
                if let Some(name) = p.get("threadName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
                    self.sink.update(SessionPatch { title: Some(name.to_owned()), ..Default::default() }).await;
                }
            }
            _ => {
                let turn_scoped = p.get("turnId").and_then(Value::as_str);
                let ours = self.our_turn(turn_scoped);
                if turn_scoped.is_some() && ours.is_none() && method.starts_with("item/") {
                    tracing::debug!(session = %self.key, method, "dropping an item of a turn that is not ours");
                    return;
                }
                let events = self.state().translator.notification(method, p);
                self.emit(ours, events).await;
            }
        }
    }

    async fn on_request(self: &Arc<Self>, id: Value, method: &str, p: &Value) {
        let id_text = match &id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let request_id = format!("{}-{}", self.conn.nonce, id_text);
        let (payload, turn) = {
            let st = self.state();
            let payload = translate::interaction(method, p, &request_id, &st.translator);
            (payload, st.active.as_ref().map(|a| a.ours.clone()))
        };
        match payload {
            Some(payload) => {
                self.state()
                    .pending
                    .insert(request_id, PendingRequest { rpc_id: id, kind: payload.kind, params: p.clone() });
                self.emit(turn, vec![EventBody::InteractionRequested(payload)]).await;
            }
            None => {
                // Requests Ensemble has no client for are answered at once, so codex never waits.
                let r = match method {
                    "mcpServer/elicitation/request" => self.rpc().respond(id, json!({"action": "decline"})).await,
                    "item/tool/call" => self.rpc().respond(id, json!({"contentItems": [], "success": false})).await,
                    _ => self.rpc().respond_error(id, -32601, &format!("Ensemble does not handle `{method}`")).await,
                };
                if let Err(e) = r {
                    tracing::debug!(session = %self.key, error = %e, "could not answer a server request");
                }
            }
        }
    }
}

/// Routes a process's requests and notifications to its threads; reports the process's end to
/// every thread still on it.
async fn route(conn: Arc<Conn>, mut incoming: tokio::sync::mpsc::Receiver<Incoming>, timeout: Duration) {
    loop {
        let next = tokio::select! {
            biased;
            _ = conn.replay_ready.notified() => None,
            m = incoming.recv() => Some(m),
        };
        // What a fork parked came before anything received after it.
        loop {
            let replay = conn.take_replay();
            if replay.is_empty() {
                break;
            }
            for (live, msg) in replay {
                live.handle(msg, timeout).await;
            }
        }
        let msg = match next {
            None => continue,
            Some(None) => break,
            Some(Some(msg)) => msg,
        };
        match conn.route(&msg) {
            Route::To(live) => live.handle(msg, timeout).await,
            Route::Parked => {}
            Route::Nowhere => tracing::debug!(process = %conn.label, "dropping a message for no known thread"),
        }
    }
    let lost = !conn.closing.load(Ordering::SeqCst);
    let status = if lost { conn.exit_status(Duration::from_secs(2)).await } else { String::new() };
    for live in conn.lives() {
        if lost && !live.detached.swap(true, Ordering::SeqCst) {
            let reason = format!("codex app-server exited ({status}){}", conn.stderr_tail.suffix());
            tracing::warn!(session = %live.key, %reason, "codex process lost");
            let mut facts = live.close_open_items();
            facts.push(Fact::Lost { reason });
            live.sink.send(facts).await;
        }
        live.wake_waiters();
    }
}

/// A codex goal (`thread/goal/*`) as a [`ProviderGoal`].
fn provider_goal(v: &Value) -> Option<ProviderGoal> {
    if v.is_null() {
        return None;
    }
    let n = |k: &str| v.get(k).and_then(Value::as_i64);
    Some(ProviderGoal {
        thread_id: v.get("threadId").and_then(Value::as_str).unwrap_or_default().to_owned(),
        objective: v.get("objective").and_then(Value::as_str).unwrap_or_default().to_owned(),
        status: v.get("status").and_then(Value::as_str).unwrap_or_default().to_owned(),
        token_budget: n("tokenBudget"),
        tokens_used: n("tokensUsed"),
        created_at: n("createdAt").unwrap_or(0),
        updated_at: n("updatedAt").unwrap_or(0),
    })
}

fn input_items(input: &[InputItem]) -> Value {
    Value::Array(input.iter().map(|i| json!({"type": "text", "text": i.text(), "text_elements": []})).collect())
}

#[async_trait]
impl Adapter for CodexAdapter {
    fn id(&self) -> &str {
        CODEX
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { interactive: true, steer: true, quiesce: true, sides: true, goals: true }
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
        ProviderDescriptor { display_name, available, unavailable_reason: reason }
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let live = self.spawn(session, handle).await?;
        let (auth_state, auth_message) = self.auth(&live).await;
        let t = self.config.call_timeout;
        if let Err(e) = live.rpc().call("model/list", json!({}), t).await {
            tracing::debug!(session = %session.key(), error = %e, "model/list failed");
        }
        let thread_id = match self.start_thread(&live, session).await {
            Ok(t) => t,
            Err(e) => {
                live.stop(&self.config).await;
                return Err(e);
            }
        };
        self.install(session.key(), live).await;
        Ok(StartOutcome {
            patch: SessionPatch {
                provider_session_id: Some(thread_id),
                auth_state: Some(auth_state),
                auth_message,
                title: None,
            },
            events: vec![EventBody::CommandsUpdated(CommandsUpdatedPayload { commands: commands() })],
        })
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let Some(thread_id) = session.provider_session_id.clone() else {
            return Err(AdapterError::Invalid("the session has no codex thread to resume".into()));
        };
        // The old live client (if any) stays installed until the new one has resumed.
        let live = self.spawn(session, handle).await?;
        live.set_thread(&thread_id);
        let (auth_state, auth_message) = self.auth(&live).await;
        let mut params = self.thread_params(session);
        params["threadId"] = json!(thread_id);
        params["excludeTurns"] = json!(true);
        let resumed = live.rpc().call("thread/resume", params, self.config.call_timeout).await;
        if let Ok(v) = &resumed {
            live.remember_model(v);
        }
        let mut new_thread = None;
        if let Err(e) = resumed {
            let no_rollout = match &e {
                RpcError::Server { error, .. } if error.message.contains("no rollout found") => {
                    Some(error.message.clone())
                }
                _ => None,
            };
            let outcome = match no_rollout {
                None => Err(live.conn.rpc_error("thread/resume", e).await),
                // The thread ran turns, so codex had its rollout: the conversation is gone.
                Some(message)
                    if live.provider_state.get(THREAD_USED).await.ok().flatten() == Some(thread_id.clone()) =>
                {
                    Err(AdapterError::failed(
                        "provider_session_not_found",
                        format!("codex has no history for thread {thread_id}: {message}"),
                    ))
                }
                // Codex writes a thread's rollout at its first turn: a thread that never ran one
                // cannot be resumed, but nothing is lost either, so start a fresh thread.
                Some(_) => self.start_thread(&live, session).await.map(Some),
            };
            match outcome {
                Ok(t) => new_thread = t,
                Err(err) => {
                    live.stop(&self.config).await;
                    return Err(err);
                }
            }
        }
        self.install(session.key(), live).await;
        Ok(StartOutcome {
            patch: SessionPatch {
                provider_session_id: new_thread,
                auth_state: Some(auth_state),
                auth_message,
                title: None,
            },
            events: vec![EventBody::CommandsUpdated(CommandsUpdatedPayload { commands: commands() })],
        })
    }

    async fn close(&self, session: &Session) -> Result<(), AdapterError> {
        self.take_down(session).await;
        Ok(())
    }

    async fn start_turn(&self, session: &Session, turn: TurnRequest) -> Result<(), AdapterError> {
        let live = self.live_or_err(session)?;
        let thread = live.thread().ok_or(AdapterError::NotLive)?;
        {
            let mut st = live.state();
            if let Some(a) = &st.active {
                return Err(AdapterError::Busy(format!("turn {} is running", a.ours)));
            }
            st.translator.reset();
            st.active = Some(ActiveTurn {
                ours: turn.turn_id.clone(),
                provider: None,
                started: false,
                interrupt_queued: false,
                ended: Arc::new(Notify::new()),
            });
        }
        let mut params = json!({"threadId": thread, "input": input_items(&turn.input)});
        if let Some(mode) = session.settings.collaboration_mode {
            // Questions to the user (`request_user_input`) only reach us in plan mode.
            let model = session.settings.model.clone().or_else(|| live.model.lock().ok().and_then(|m| m.clone()));
            params["collaborationMode"] = json!({
                "mode": mode.as_str(),
                "settings": {"model": model, "reasoning_effort": session.settings.reasoning_effort, "developer_instructions": null},
            });
        }
        match live.rpc().call("turn/start", params, self.config.call_timeout).await {
            Ok(v) => {
                let provider = v.get("turn").and_then(|t| t.get("id")).and_then(Value::as_str).map(str::to_owned);
                if let Some(p) = provider {
                    live.our_turn(Some(&p));
                }
                // From now on codex has a rollout for the thread, and a resume must find it.
                if !live.thread_used.swap(true, Ordering::SeqCst)
                    && let Err(e) = live.provider_state.set(THREAD_USED, thread.clone()).await
                {
                    tracing::warn!(session = %session.key(), error = %e, "cannot record that the thread has turns");
                }
                Ok(())
            }
            Err(e) => {
                {
                    let mut st = live.state();
                    if st.active.as_ref().is_some_and(|a| a.ours == turn.turn_id) {
                        st.active = None;
                    }
                }
                Err(live.conn.rpc_error("turn/start", e).await)
            }
        }
    }

    async fn cancel(&self, session: &Session, turn_id: &str) -> Result<(), AdapterError> {
        let live = self.live_or_err(session)?;
        let provider = {
            let mut st = live.state();
            match st.active.as_mut() {
                Some(a) if a.ours == turn_id => match &a.provider {
                    Some(p) if a.started => Some(p.clone()),
                    _ => {
                        // Codex has not announced the turn yet (`turn/started`) and would answer
                        // "no active turn to interrupt": interrupt as soon as it does.
                        a.interrupt_queued = true;
                        None
                    }
                },
                // Already over on codex's side; its terminal event is on its way.
                _ => return Ok(()),
            }
        };
        if let Some(p) = provider {
            // In the background: a codex that never answers must not hold the caller (and the
            // session's lock) for the call timeout. The turn's end comes as `turn/completed`, or
            // from close, which forces it after its grace.
            live.send_interrupt(p, self.config.call_timeout);
        }
        Ok(())
    }

    fn is_live(&self, session: &Session) -> bool {
        self.live(&session.key()).is_some_and(|l| l.is_live())
    }

    fn can_resume(&self, session: &Session) -> bool {
        session.provider_session_id.as_deref().is_some_and(|t| !t.is_empty())
    }

    fn live_processes(&self) -> usize {
        self.sessions.lock().map(|s| s.values().filter(|l| !l.side && l.is_live()).count()).unwrap_or(0)
    }

    async fn side_capabilities(&self, source: &Session) -> Result<SideCapabilities, AdapterError> {
        Ok(match self.live(&source.key()) {
            // Forks run in the source's live process, so its running turn is part of the snapshot.
            Some(l) if l.is_live() && !l.side && l.thread().is_some() => SideCapabilities::all(),
            _ => SideCapabilities::default(),
        })
    }

    async fn open_side(&self, open: SideOpen<'_>) -> Result<SideOpened, AdapterError> {
        let source = self.live_or_err(open.source)?;
        if source.side {
            return Err(AdapterError::Unsupported("a side conversation cannot be forked".into()));
        }
        let parent = source.thread().ok_or(AdapterError::NotLive)?;
        let conn = source.conn.clone();
        let t = self.config.call_timeout;
        // Notifications of the new thread that race the fork's answer are parked until it is known.
        conn.begin_fork();
        let params = json!({
            "threadId": parent,
            "ephemeral": true,
            "excludeTurns": true,
            "developerInstructions": SIDE_INSTRUCTIONS,
        });
        let response = match conn.rpc.call("thread/fork", params, t).await {
            Ok(v) => v,
            Err(e) => {
                conn.end_fork(None);
                return Err(conn.rpc_error("thread/fork", e).await);
            }
        };
        let thread = response.get("thread").cloned().unwrap_or(Value::Null);
        let child = thread.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let from = thread.get("forkedFromId").and_then(Value::as_str);
        if child.is_empty() || child == parent || from != Some(parent.as_str()) {
            conn.end_fork(None);
            if !child.is_empty() && child != parent {
                let _ = conn.rpc.call("thread/unsubscribe", json!({"threadId": child}), t).await;
            }
            return Err(AdapterError::failed(
                "side_fork_invalid",
                format!("thread/fork returned thread `{child}` forked from {from:?}, not from `{parent}`"),
            ));
        }
        let live = Arc::new(Live {
            key: open.side.key(),
            sink: open.handle.sink.clone(),
            provider_state: open.handle.state.clone(),
            // An ephemeral fork has no rollout to protect.
            thread_used: AtomicBool::new(true),
            conn: conn.clone(),
            thread_id: Mutex::new(Some(child.clone())),
            model: Mutex::new(None),
            side: true,
            detached: AtomicBool::new(false),
            state: Mutex::new(TurnState::default()),
            goals: GoalEngine::new(open.handle.goals.clone(), open.handle.sink.clone(), Default::default()),
            emit_gate: tokio::sync::Mutex::new(()),
            goal_grace: self.config.goal_grace,
        });
        live.remember_model(&response);
        live.goals.set_thread(&child);
        conn.end_fork(Some((&child, &live)));
        let boundary =
            json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": SIDE_BOUNDARY}]}]);
        if let Err(e) = conn.rpc.call("thread/inject_items", json!({"threadId": child, "items": boundary}), t).await {
            let err = conn.rpc_error("thread/inject_items", e).await;
            live.stop(&self.config).await;
            return Err(err);
        }
        let old = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(open.side.key(), live);
        if let Some(old) = old {
            old.stop(&self.config).await;
        }
        let mut session = open.side.clone();
        session.provider_session_id = Some(child);
        Ok(SideOpened { session, capabilities: SideCapabilities::all() })
    }

    async fn apply_goal(&self, session: &Session, command: GoalCommand) -> Result<Option<ProviderGoal>, AdapterError> {
        let live = self.live_or_err(session)?;
        if live.side {
            return Err(AdapterError::Unsupported("side conversations have no goals".into()));
        }
        let thread = live.thread().ok_or(AdapterError::NotLive)?;
        let t = self.config.call_timeout;
        let call = async {
            let (method, params) = match &command.action {
                GoalAction::Set { objective, token_budget } => {
                    let mut p = json!({"threadId": thread, "objective": objective, "status": "active"});
                    if let Some(b) = token_budget {
                        p["tokenBudget"] = json!(b);
                    }
                    ("thread/goal/set", p)
                }
                GoalAction::Pause => ("thread/goal/set", json!({"threadId": thread, "status": "paused"})),
                GoalAction::Resume => ("thread/goal/set", json!({"threadId": thread, "status": "active"})),
                GoalAction::Clear => ("thread/goal/clear", json!({"threadId": thread})),
            };
            match live.rpc().call(method, params, t).await {
                Ok(v) => Ok(v.get("goal").and_then(provider_goal)),
                Err(e) => Err(live.conn.rpc_error(method, e).await),
            }
        };
        live.goals.apply(&command, call).await
    }

    async fn respond(
        &self,
        session: &Session,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
    ) -> Result<(), AdapterError> {
        let live = self.live_or_err(session)?;
        let pending = live
            .state()
            .pending
            .remove(request_id)
            .ok_or_else(|| AdapterError::UnknownInteraction(request_id.to_owned()))?;
        let result = translate::answer(pending.kind, &pending.params, decision, answers.as_ref());
        live.rpc()
            .respond(pending.rpc_id, result)
            .await
            .map_err(|e| AdapterError::failed("provider_error", e.to_string()))
    }

    async fn steer(&self, session: &Session, turn_id: &str, input: Vec<InputItem>) -> Result<(), AdapterError> {
        let live = self.live_or_err(session)?;
        let provider = {
            let st = live.state();
            match st.active.as_ref() {
                Some(a) if a.ours == turn_id => a.provider.clone(),
                _ => return Err(AdapterError::Invalid("that turn is not running".into())),
            }
        };
        let Some(provider) = provider else {
            return Err(AdapterError::Busy("codex has not started the turn yet; retry the steer".into()));
        };
        let thread = live.thread().ok_or(AdapterError::NotLive)?;
        let params = json!({"threadId": thread, "expectedTurnId": provider, "input": input_items(&input)});
        live.rpc().call("turn/steer", params, self.config.call_timeout).await.map(|_| ()).map_err(|e| match e {
            RpcError::Server { error, .. } => {
                AdapterError::Invalid(format!("codex refused the steer: {}", error.message))
            }
            other => AdapterError::failed("provider_error", other.to_string()),
        })
    }

    async fn release(&self, session: &Session) -> Result<(), AdapterError> {
        let key = session.key();
        let live = self.live(&key).ok_or(AdapterError::NotLive)?;
        {
            let st = live.state();
            if st.active.is_some() || !st.pending.is_empty() {
                return Err(AdapterError::Busy("a turn or an interaction is pending".into()));
            }
        }
        self.remove(&key);
        live.stop(&self.config).await;
        Ok(())
    }

    async fn disconnect(&self, session: &Session) -> Result<(), AdapterError> {
        // No thread/unsubscribe or delete: the thread must stay resumable.
        self.take_down(session).await;
        Ok(())
    }

    async fn quiesce_for_close(&self, session: &Session, grace: Duration) -> Result<(), AdapterError> {
        let Some(live) = self.live(&session.key()) else { return Ok(()) };
        let active = live.state().active.as_ref().map(|a| (a.ours.clone(), a.ended.clone()));
        let Some((turn_id, ended)) = active else { return Ok(()) };
        let notified = ended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Err(e) = self.cancel(session, &turn_id).await {
            tracing::warn!(session = %session.key(), error = %e, "interrupt before close failed");
        }
        if live.state().active.is_none() {
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
