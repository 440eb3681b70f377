//! Bringing a session's thread up: the codex process and its handshake, the auth check, and
//! `thread/start` or `thread/resume`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ensemble_runtime::adapter::{AdapterError, SessionHandle};
use ensemble_runtime::model::{AuthState, Session};
use serde_json::{Value, json};

use super::config::{CODEX, CodexConfig, THREAD_USED};
use super::conn::{Conn, route};
use super::live::Live;
use crate::kit::availability::AvailabilityCell;
use crate::kit::binary;
use crate::kit::goals::GoalEngine;
use crate::kit::jsonrpc::{RpcClient, RpcError};
use crate::kit::process::{PASSTHROUGH_ENV, ProcessSpec, Supervised, base_env};
use crate::kit::stderr::{self, StderrTail};

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
    let spec = process_spec(config, session);
    let spawned = Supervised::spawn(&spec).map_err(|e| {
        let reason = binary::spawn_failure(CODEX, &config.bin, &e);
        availability.failed(reason.clone());
        AdapterError::Unavailable(reason)
    })?;
    let label = format!("codex {}", session.key());
    let (rpc, incoming) = RpcClient::start(spawned.stdout, spawned.stdin, config.rpc.clone(), label);
    let tail = StderrTail::new(STDERR_TAIL);
    tokio::spawn(stderr::drain(spawned.stderr, CODEX, session.key(), tail.clone(), config.rpc.max_line_bytes));
    let conn = Arc::new(Conn::new(session.key(), rpc, spawned.process, tail));
    let live = Live::new(session.key(), sink, provider_state, goals, conn.clone(), None, config.goal_grace);
    conn.set_owner(&live);
    tokio::spawn(route(conn.clone(), incoming, config.call_timeout));
    let init = conn
        .rpc
        .call(
            "initialize",
            json!({
                "clientInfo": {"name": "ensemble", "title": "Ensemble", "version": env!("CARGO_PKG_VERSION")},
                "capabilities": {"experimentalApi": true},
            }),
            config.call_timeout,
        )
        .await;
    if let Err(e) = init {
        let err = conn.rpc_error("initialize", e).await;
        conn.stop(config).await;
        availability.failed(format!("start-up failure: {err}"));
        return Err(err);
    }
    if let Err(e) = conn.rpc.notify("initialized", Value::Null).await {
        let err = conn.rpc_error("initialized", e).await;
        conn.stop(config).await;
        return Err(err);
    }
    Ok(live)
}

fn process_spec(config: &CodexConfig, session: &Session) -> ProcessSpec {
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
    ProcessSpec { program: config.bin.clone(), args, env, cwd: PathBuf::from(&session.cwd) }
}

/// `account/read` and `modelProvider/list`: does codex have what it needs to call its model?
pub(super) async fn auth(config: &CodexConfig, live: &Live) -> (AuthState, Option<String>) {
    let t = config.call_timeout;
    if let Ok(account) = live.rpc().call("account/read", json!({}), t).await
        && account.get("requiresOpenaiAuth").and_then(Value::as_bool) == Some(true)
        && account.get("account").is_none_or(Value::is_null)
    {
        return (
            AuthState::AuthRequired,
            Some(format!(
                "codex is not logged in: run `CODEX_HOME={} codex login`, or point it at a model provider with --codex-config and its key with --codex-env",
                config.home.display()
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
            && !has_env(config, var)
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
    let t = config.thread_start_timeout;
    let v = match live.rpc().call("thread/start", thread_params(session), t).await {
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

fn thread_params(session: &Session) -> Value {
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

/// `thread/resume` of `thread_id` on a new process. A thread that never ran a turn has no rollout
/// to resume (codex writes it at the first turn) and nothing to lose: a fresh thread replaces it,
/// and its id is returned.
pub(super) async fn resume_thread(
    config: &CodexConfig,
    live: &Arc<Live>,
    session: &Session,
    thread_id: &str,
) -> Result<Option<String>, AdapterError> {
    let mut params = thread_params(session);
    params["threadId"] = json!(thread_id);
    params["excludeTurns"] = json!(true);
    let e = match live.rpc().call("thread/resume", params, config.call_timeout).await {
        Ok(v) => {
            live.remember_model(&v);
            return Ok(None);
        }
        Err(e) => e,
    };
    let no_rollout = match &e {
        RpcError::Server { error, .. } if error.message.contains("no rollout found") => Some(error.message.clone()),
        _ => None,
    };
    match no_rollout {
        None => Err(live.conn.rpc_error("thread/resume", e).await),
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
