//! Starting an ACP agent: its process (in the session's box, or one of its own for a question
//! asked of no session), the handshake, what it says of itself, and the background probe.

use super::*;

/// What to say when the provider's command is not there: the command as written, where it was
/// looked for, and how agents of this kind are usually installed.
pub(super) fn missing_command(config: &AcpConfig, e: &std::io::Error) -> Option<String> {
    if e.kind() != std::io::ErrorKind::NotFound {
        return None;
    }
    let command = config.command.display();
    // A bare name stays bare when PATH did not have it at start.
    let looked = if config.command.is_absolute() { "" } else { " on PATH" };
    let name = config.command.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let hint = match name.as_str() {
        "claude-agent-acp" => " (install it: `npm install -g @agentclientprotocol/claude-agent-acp`)",
        "codex-acp" => " (install it: `npm install -g @agentclientprotocol/codex-acp`)",
        "gemini" => " (install it: `npm install -g @google/gemini-cli`)",
        "opencode" => " (install it: `npm install -g opencode-ai`)",
        _ => " (install it, or give its absolute path as `command`)",
    };
    Some(format!("provider `{}`: the command `{command}` was not found{looked}{hint}", config.id))
}

/// The provider state's key for when the agent answered `session/new` (ms since the epoch), kept
/// for an agent whose `session/load` must not run in that minute.
pub(super) const SESSION_NEW_AT: &str = "acp.session_new_at_ms";

/// Waits until the UTC minute in which the agent answered `session/new` is over: Gemini CLI names
/// its session file by that minute and, loading in it, starts that file over (see
/// `quirks::gemini_cli`). At most a minute, while the resume holds the session.
pub(super) async fn wait_out_start_minute(state: &ensemble_core::adapter::ProviderState, key: &SessionKey) {
    let Ok(Some(at)) = state.get(SESSION_NEW_AT).await else { return };
    let Ok(at) = at.parse::<i64>() else { return };
    let wait = (at.div_euclid(60_000) + 1) * 60_000 - ensemble_core::clock::unix_ms();
    if let Ok(ms) = u64::try_from(wait)
        && ms > 0
    {
        tracing::info!(session = %key, wait_ms = ms, "session/load waits for the minute the agent's session began in to end");
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// Spawns an agent process and completes `initialize`.
pub(super) async fn spawn(
    config: &Arc<AcpConfig>,
    availability: &AvailabilityCell,
    agent: &Mutex<Option<AgentInfo>>,
    key: SessionKey,
    handle: SessionHandle,
    cwd: &str,
    sandbox: Option<Arc<ensemble_isolation::Sandbox>>,
) -> Result<(Arc<Live>, wire::InitializeResponse), AdapterError> {
    // Until one start of the provider has answered `initialize`, starts run one at a time: an
    // agent may set up its own data on its first start, and two at once can fail (opencode
    // creates its database then; the second dies on a `CREATE TABLE`). The probe at server start
    // and the first session would otherwise race.
    let first = agent.lock().map(|a| a.is_none()).unwrap_or(false);
    let _first_start = if first { Some(config.first_start.lock().await) } else { None };
    let spec = process_spec(config, cwd).boxed(sandbox.as_deref());
    let spawned = spec.and_then(|spec| Supervised::spawn(&spec)).map_err(|e| {
        let reason =
            missing_command(config, &e).unwrap_or_else(|| binary::spawn_failure(&config.id, &config.command, &e));
        availability.failed(reason.clone());
        AdapterError::Unavailable(reason)
    })?;
    let label = format!("{} {key}", config.id);
    let (rpc, incoming) = RpcClient::start(spawned.stdout, spawned.stdin, config.rpc.clone(), label);
    let tail = StderrTail::new(STDERR_TAIL);
    tokio::spawn(stderr::drain(
        spawned.stderr,
        config.id.clone(),
        key.clone(),
        tail.clone(),
        config.rpc.max_line_bytes,
    ));
    let (live, barriers) =
        Live::new(key, handle.sink, rpc, spawned.process, tail, config.clone(), PathBuf::from(cwd), sandbox);
    tokio::spawn(live.clone().run(incoming, barriers));
    let init = wire::InitializeRequest::new(wire::ProtocolVersion::V1)
        .client_capabilities(
            wire::ClientCapabilities::new()
                .fs(wire::FileSystemCapabilities::new().read_text_file(true).write_text_file(true))
                // `notice` updates become notices (codex-acp sends its warnings as reply text else).
                .session(wire::ClientSessionCapabilities::new().notices(wire::NoticeCapabilities::new()))
                .terminal(true)
                .elicitation(
                    wire::ElicitationCapabilities::new()
                        .form(wire::ElicitationFormCapabilities::new())
                        .url(wire::ElicitationUrlCapabilities::new()),
                ),
        )
        .client_info(wire::Implementation::new("ensemble", env!("CARGO_PKG_VERSION")).title("Ensemble".to_owned()));
    let response = match live.call::<wire::Initialize>(&init, config.start_timeout).await {
        Ok(r) => r,
        Err(e) => {
            live.stop().await;
            availability.failed(format!("start-up failure: {e}"));
            return Err(e);
        }
    };
    if response.protocol_version != wire::ProtocolVersion::V1 {
        live.stop().await;
        let reason = format!(
            "{} speaks ACP protocol version {}; Ensemble speaks 1",
            config.id,
            serde_json::to_string(&response.protocol_version).unwrap_or_default()
        );
        availability.failed(reason.clone());
        return Err(AdapterError::Unavailable(reason));
    }
    let info = agent_info(&response);
    availability.set(Availability::Available { version: info.version.clone().unwrap_or_default() });
    if let Ok(mut a) = agent.lock() {
        *a = Some(info);
    }
    live.set_quirks(quirks::for_agent(response.agent_info.as_ref().map(|i| i.name.as_str())));
    if let Ok(mut a) = live.agent.lock() {
        *a = Some(response.clone());
    }
    Ok((live, response))
}

/// The box of an agent started for no session (the probe, a listing of its sessions), working
/// in `cwd`, as the provider's sessions get it.
pub(super) fn alone_sandbox(
    config: &AcpConfig,
    cwd: &str,
) -> Result<Option<Arc<ensemble_isolation::Sandbox>>, AdapterError> {
    let mut alone = Session::new_canonical("probe", &config.id, &config.id, cwd, 0);
    alone.isolation = Some(Box::new(config.isolation().isolation));
    let extras = config.extras();
    Ok(config.sandboxes.sandbox(&alone, None, &extras)?.map(Arc::new))
}

pub(super) fn process_spec(config: &AcpConfig, cwd: &str) -> ProcessSpec {
    let mut env = base_env();
    for (k, v) in &config.env {
        env.retain(|(ek, _)| ek.to_str() != Some(k.as_str()));
        env.push((k.into(), v.into()));
    }
    ProcessSpec {
        program: config.command.clone(),
        args: config.args.iter().map(OsString::from).collect(),
        env,
        cwd: PathBuf::from(cwd),
        cgroup_procs: Vec::new(),
    }
}

pub(super) fn agent_info(r: &wire::InitializeResponse) -> AgentInfo {
    let c = &r.agent_capabilities;
    AgentInfo {
        name: r.agent_info.as_ref().map(|i| i.title.clone().unwrap_or_else(|| i.name.clone())),
        version: r.agent_info.as_ref().map(|i| i.version.clone()),
        protocol_version: r.protocol_version.as_u16(),
        load_session: c.load_session,
        resume_session: c.session_capabilities.resume.is_some(),
        close_session: c.session_capabilities.close.is_some(),
        prompt_image: c.prompt_capabilities.image,
        prompt_audio: c.prompt_capabilities.audio,
        mcp_http: c.mcp_capabilities.http,
        auth_methods: r.auth_methods.iter().map(|m| m.id().0.to_string()).collect(),
    }
}

/// Starts the agent in a scratch directory, `initialize` only, and stops it.
/// A handle whose facts and state go nowhere, for an agent started without a session.
pub(super) fn discarding(key: &SessionKey) -> SessionHandle {
    SessionHandle {
        sink: ensemble_core::adapter::EventSink::new(Arc::new(Discard), key.clone(), 0),
        state: ensemble_core::adapter::ProviderState::new(Arc::new(Discard), key.clone()),
        goals: Arc::new(ensemble_core::goal::NoGoalHost),
        goal: Default::default(),
    }
}

pub(super) async fn probe(config: &Arc<AcpConfig>, agent: &Mutex<Option<AgentInfo>>) -> Availability {
    let scratch = std::env::temp_dir();
    let cell = AvailabilityCell::new(FAILURE_COOLDOWN);
    let key = SessionKey::new("probe", &config.id);
    let handle = discarding(&key);
    // No box can be made here: the agent is not run unboxed to be probed (its sessions' starts
    // say why they cannot start).
    if config.isolation().unavailable.is_some()
        && config.isolation().isolation.mode == ensemble_core::isolation::IsolationMode::On
    {
        return Availability::Unknown;
    }
    // In the box its sessions get (with no workspace): what is probed is what will run.
    let sandbox = match alone_sandbox(config, &scratch.to_string_lossy()) {
        Ok(s) => s,
        Err(e) => return Availability::unavailable(e.to_string()),
    };
    match spawn(config, &cell, agent, key, handle, &scratch.to_string_lossy(), sandbox).await {
        Ok((live, _)) => {
            live.stop().await;
            cell.get()
        }
        Err(e) => match cell.get() {
            s @ Availability::Unavailable { .. } => s,
            _ => Availability::unavailable(e.to_string()),
        },
    }
}

/// Where a probe's facts and state go: nowhere (it opens no session).
pub(super) struct Discard;

#[async_trait]
impl ensemble_core::adapter::FactReceiver for Discard {
    async fn receive(&self, _key: &SessionKey, _generation: u64, _facts: Vec<ensemble_core::adapter::Fact>) {}
}

#[async_trait]
impl ensemble_core::adapter::StateBackend for Discard {
    async fn get(&self, _: &SessionKey, _: &str) -> Result<Option<String>, ensemble_core::adapter::StateError> {
        Ok(None)
    }
    async fn set(&self, _: &SessionKey, _: &str, _: String) -> Result<(), ensemble_core::adapter::StateError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    #[test]
    fn a_missing_command_is_named_with_how_to_install_it() {
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        let m = missing_command(&AcpConfig::new("claude", "claude-agent-acp"), &gone).unwrap();
        assert!(m.contains("provider `claude`: the command `claude-agent-acp` was not found on PATH"), "{m}");
        assert!(m.contains("npm install -g @agentclientprotocol/claude-agent-acp"), "{m}");
        let m = missing_command(&AcpConfig::new("x", "/opt/x/agent"), &gone).unwrap();
        assert!(m.contains("`/opt/x/agent` was not found (install it, or give its absolute path"), "{m}");
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(missing_command(&AcpConfig::new("x", "/opt/x/agent"), &denied).is_none());
    }
}
