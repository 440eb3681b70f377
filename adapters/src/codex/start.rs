//! Bringing a session's thread up: the codex process and its handshake, the auth check, and
//! `thread/start` or `thread/resume`.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use ensemble_core::adapter::{AdapterError, ForkOpen, SessionHandle};
use ensemble_core::model::{ApprovalPolicy, AuthState, SandboxMode, Session};
use serde_json::{Map, Value};

use super::config::{CODEX, CodexConfig, THREAD_USED, turn_key};
use super::conn::{Conn, route};
use super::live::Live;
use super::wire::{
    AccountRead, AskForApproval, ClientInfo, GatewayAuth, GetAccountParams, Initialize, InitializeCapabilities,
    InitializeParams, Initialized, ModelProviderList, ModelProviderListParams, ProviderSettings, ThreadFork,
    ThreadForkParams, ThreadResume, ThreadResumeParams, ThreadSettings, ThreadStart, ThreadStartParams,
};
use crate::kit::availability::AvailabilityCell;
use crate::kit::binary;
use crate::kit::goals::GoalEngine;
use crate::kit::jsonrpc::{RpcClient, RpcError};
use crate::kit::process::{PASSTHROUGH_ENV, ProcessSpec, Supervised, base_env};
use crate::kit::stderr::{self, StderrTail};
use crate::kit::typed::{self, CallError};

/// Lines of codex's stderr kept for error messages.
const STDERR_TAIL: usize = 20;

/// Spawns `codex app-server` for a session and completes the handshake.
pub(super) async fn spawn(
    config: &CodexConfig,
    availability: &AvailabilityCell,
    session: &Session,
    handle: SessionHandle,
) -> Result<Arc<Live>, AdapterError> {
    let SessionHandle { sink, state: provider_state, goals: goal_host, goal } = handle;
    let goals = GoalEngine::new(goal_host, sink.clone(), goal);
    std::fs::create_dir_all(&config.home).map_err(|e| {
        AdapterError::failed("codex_home", format!("cannot create CODEX_HOME {}: {e}", config.home.display()))
    })?;
    // In Ensemble's box codex's own sandbox cannot nest (bubblewrap in bubblewrap): the box
    // carries the session's choice (a read-only one makes the workspace read-only there) and
    // codex runs its commands unsandboxed inside it (`thread_settings`).
    let mut extras = config.extras();
    extras.read_only_workspace = session.settings.sandbox == Some(SandboxMode::ReadOnly);
    let sandbox = config.sandboxes.sandbox(session, Some(sink.clone()), &extras)?;
    let mut spec = process_spec(config, Path::new(&session.cwd));
    if sandbox.is_some() {
        spec.args.extend(["-c".into(), "sandbox_mode=\"danger-full-access\"".into()]);
    }
    let spec = spec.boxed(sandbox.as_ref());
    let spawned = spec.and_then(|spec| Supervised::spawn(&spec)).map_err(|e| {
        let reason = binary::spawn_failure(CODEX, &config.bin, &e);
        availability.failed(reason.clone());
        AdapterError::Unavailable(reason)
    })?;
    let label = format!("codex {}", session.key());
    let (rpc, incoming) = RpcClient::start(spawned.stdout, spawned.stdin, config.rpc.clone(), label);
    let tail = StderrTail::new(STDERR_TAIL);
    tokio::spawn(stderr::drain(spawned.stderr, CODEX, session.key(), tail.clone(), config.rpc.max_line_bytes));
    let conn = Arc::new(Conn::new(session.key(), rpc, spawned.process, tail, sandbox));
    let live = Live::new(session.key(), sink, provider_state, goals, conn.clone(), None, config.goal_grace);
    conn.set_owner(&live);
    tokio::spawn(route(conn.clone(), incoming, config.call_timeout));
    let init = initialize_params();
    let init = typed::call_discarding::<Initialize>(&conn.rpc, &init, config.call_timeout).await;
    if let Err(e) = init {
        let err = conn.rpc_error("initialize", e).await;
        conn.stop(config).await;
        availability.failed(format!("start-up failure: {err}"));
        return Err(err);
    }
    if let Err(e) = typed::notify::<Initialized>(&conn.rpc, &()).await {
        let err = conn.rpc_error("initialized", e).await;
        conn.stop(config).await;
        return Err(err);
    }
    Ok(live)
}

fn process_spec(config: &CodexConfig, cwd: &Path) -> ProcessSpec {
    let mut args: Vec<OsString> = vec!["app-server".into()];
    for o in &config.overrides {
        args.push("-c".into());
        args.push(o.into());
    }
    let mut env = base_env();
    // The npm package ships bubblewrap next to the binary; codex looks for it on PATH.
    if let Some(resources) = config.bin.parent().and_then(Path::parent).map(|v| v.join("codex-resources"))
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
    env.push(("CODEX_HOME".into(), config.home.clone().into_os_string()));
    if !config.env.iter().any(|(k, _)| k == "RUST_LOG") {
        env.push(("RUST_LOG".into(), "warn".into()));
    }
    for (k, v) in &config.env {
        env.retain(|(ek, _)| ek.to_str() != Some(k.as_str()));
        env.push((k.into(), v.into()));
    }
    ProcessSpec { program: config.bin.clone(), args, env, cwd: cwd.to_path_buf(), cgroup_procs: Vec::new() }
}

/// `account/read` and `modelProvider/list`: does codex have what it needs to call its model?
pub(super) async fn auth(config: &CodexConfig, rpc: &RpcClient) -> (AuthState, Option<String>) {
    let t = config.call_timeout;
    if let Ok(account) = typed::call::<AccountRead>(rpc, &GetAccountParams::default(), t).await
        && account.requires_openai_auth == Some(true)
        && account.account.is_none()
    {
        return (
            AuthState::AuthRequired,
            Some(format!(
                "codex is not logged in: run `CODEX_HOME={} codex login`, or point it at a model provider with --codex-config and its key with --codex-env",
                config.home.display()
            )),
        );
    }
    if let Ok(list) = typed::call::<ModelProviderList>(rpc, &ModelProviderListParams {}, t).await {
        let default = &list.default_provider_id;
        let provider = list.data.iter().find(|p| p.id == *default);
        if let Some(ProviderSettings::CustomGateway { auth: GatewayAuth::EnvironmentVariable { env_key: var } }) =
            provider.and_then(|p| p.settings.as_ref())
            && !has_env(config, var)
        {
            return (
                AuthState::AuthRequired,
                Some(format!(
                    "codex's model provider \"{default}\" reads its API key from {var}, which is not set: start Ensemble with --codex-env {var}=<key>"
                )),
            );
        }
    }
    (AuthState::Authenticated, None)
}

/// The auth check without a session: a codex started only to be asked ([`auth`]), in `CODEX_HOME`,
/// then stopped. `None` if it could not be started or asked.
pub(super) async fn probe_auth(config: &CodexConfig) -> Option<(AuthState, Option<String>)> {
    std::fs::create_dir_all(&config.home).ok()?;
    // In the box its sessions get, working in its home.
    let mut alone = Session::new_canonical("auth", CODEX, CODEX, &config.home.to_string_lossy(), 0);
    alone.isolation = Some(Box::new(config.isolation().isolation));
    let sandbox = config.sandboxes.sandbox(&alone, None, &config.extras()).ok()?;
    let spawned = Supervised::spawn(&process_spec(config, &config.home).boxed(sandbox.as_ref()).ok()?).ok()?;
    let label = "codex (auth check)".to_owned();
    let (rpc, mut incoming) = RpcClient::start(spawned.stdout, spawned.stdin, config.rpc.clone(), label);
    // Nothing it says unasked matters here; its stderr is read so it never blocks on a full pipe.
    tokio::spawn(async move { while incoming.recv().await.is_some() {} });
    let tail = StderrTail::new(STDERR_TAIL);
    tokio::spawn(stderr::drain(spawned.stderr, CODEX, "auth check", tail, config.rpc.max_line_bytes));
    let process = spawned.process;
    let family = process.family();
    let init = initialize_params();
    let asked = async {
        typed::call_discarding::<Initialize>(&rpc, &init, config.call_timeout).await.ok()?;
        typed::notify::<Initialized>(&rpc, &()).await.ok()?;
        Some(auth(config, &rpc).await)
    }
    .await;
    rpc.close("the auth check is done");
    process.shut_down(&family, config.stop_grace, config.term_grace).await;
    asked
}

fn initialize_params() -> InitializeParams {
    InitializeParams {
        client_info: ClientInfo {
            name: "ensemble".into(),
            title: Some("Ensemble".into()),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        capabilities: Some(InitializeCapabilities { experimental_api: true }),
    }
}

fn has_env(config: &CodexConfig, var: &str) -> bool {
    config.env.iter().any(|(k, v)| k == var && !v.is_empty())
        || (PASSTHROUGH_ENV.contains(&var) && std::env::var_os(var).is_some())
}

/// `thread/start` on a live process; returns the new thread's id.
pub(super) async fn start_thread(
    config: &CodexConfig,
    live: &Arc<Live>,
    session: &Session,
) -> Result<String, AdapterError> {
    let params = ThreadStartParams { settings: thread_settings(session) };
    let response = live.conn.call::<ThreadStart>(&params, config.thread_start_timeout).await?;
    live.remember_model(&response);
    let id = response
        .thread
        .map(|t| t.id)
        .ok_or_else(|| AdapterError::failed("provider_error", "thread/start returned no thread id"))?;
    live.set_thread(&id);
    Ok(id)
}

/// Whether the session runs in Ensemble's box (codex's own sandbox then stays off: it cannot
/// nest, and the box does its work).
fn boxed(session: &Session) -> bool {
    session.isolation.as_deref().is_some_and(|i| i.mode == ensemble_core::isolation::IsolationMode::On)
}

/// The session's settings as a thread's.
fn thread_settings(session: &Session) -> ThreadSettings {
    let s = &session.settings;
    ThreadSettings {
        cwd: Some(session.cwd.clone()),
        model: s.model.clone(),
        approval_policy: s.approval_policy.map(|a| match a {
            ApprovalPolicy::Untrusted => AskForApproval::Untrusted,
            ApprovalPolicy::OnRequest => AskForApproval::OnRequest,
            ApprovalPolicy::Never => AskForApproval::Never,
        }),
        sandbox: if boxed(session) {
            Some(super::wire::SandboxMode::DangerFullAccess)
        } else {
            s.sandbox.map(|x| match x {
                SandboxMode::ReadOnly => super::wire::SandboxMode::ReadOnly,
                SandboxMode::WorkspaceWrite => super::wire::SandboxMode::WorkspaceWrite,
                SandboxMode::DangerFullAccess => super::wire::SandboxMode::DangerFullAccess,
            })
        },
        config: s
            .reasoning_effort
            .as_ref()
            .map(|e| Map::from_iter([("model_reasoning_effort".to_owned(), Value::String(e.clone()))])),
    }
}

/// `thread/resume` of `thread_id` on a new process. A thread that never ran a turn has no rollout
/// to resume (codex writes it at the first turn) and nothing to lose: a fresh thread replaces it,
/// and its id is returned.
pub(super) async fn resume_thread(
    config: &CodexConfig,
    live: &Arc<Live>,
    session: &Session,
    thread_id: &str,
) -> Result<Option<String>, AdapterError> {
    let params =
        ThreadResumeParams { thread_id: thread_id.to_owned(), exclude_turns: true, settings: thread_settings(session) };
    let e = match typed::call::<ThreadResume>(live.rpc(), &params, config.call_timeout).await {
        Ok(response) => {
            live.remember_model(&response);
            return Ok(None);
        }
        Err(e) => e,
    };
    let no_rollout = match &e {
        CallError::Rpc(RpcError::Server { error, .. }) if error.message.contains("no rollout found") => {
            Some(error.message.clone())
        }
        _ => None,
    };
    match no_rollout {
        None => Err(live.conn.call_error("thread/resume", e).await),
        // The thread ran turns, so codex had its rollout: the conversation is gone.
        Some(message) if live.provider_state.get(THREAD_USED).await.ok().flatten().as_deref() == Some(thread_id) => {
            Err(AdapterError::failed(
                "provider_session_not_found",
                format!("codex has no history for thread {thread_id}: {message}"),
            ))
        }
        Some(_) => start_thread(config, live, session).await.map(Some),
    }
}

/// `thread/fork` of the source's thread through codex's id of our turn `open.through_turn`, on the
/// fork's own process and in its own cwd; returns the new thread's id. The fork is persisted (not
/// ephemeral), so it resumes like any thread.
pub(super) async fn fork_thread(
    config: &CodexConfig,
    live: &Arc<Live>,
    open: &ForkOpen<'_>,
    session: &Session,
) -> Result<String, AdapterError> {
    let Some(parent) = open.source.provider_session_id.clone() else {
        return Err(AdapterError::Unsupported("the source session never had a codex thread".into()));
    };
    let last = open.source_state.get(&turn_key(open.through_turn)).await.ok().flatten().ok_or_else(|| {
        AdapterError::Unsupported(format!(
            "codex's id of turn {} is not known (it never reached codex, or ran before Ensemble recorded it)",
            open.through_turn
        ))
    })?;
    let params = ThreadForkParams {
        thread_id: parent.clone(),
        exclude_turns: true,
        last_turn_id: Some(last),
        settings: thread_settings(session),
        ..Default::default()
    };
    let response = live.conn.call::<ThreadFork>(&params, config.thread_start_timeout).await?;
    live.remember_model(&response);
    let (child, from) = match &response.thread {
        Some(t) => (t.id.clone(), t.forked_from_id.clone()),
        None => (String::new(), None),
    };
    if child.is_empty() || child == parent || from.as_deref() != Some(parent.as_str()) {
        return Err(AdapterError::failed(
            "fork_invalid",
            format!("thread/fork returned thread `{child}` forked from {from:?}, not from `{parent}`"),
        ));
    }
    live.set_thread(&child);
    Ok(child)
}
