//! Wiring and running the server: store, adapters, controller, router, signals, shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use ensemble_adapters::kit::sandbox::IsolationEnv;
use ensemble_core::clock::SystemClock;
use ensemble_core::isolation::IsolationMode;
use ensemble_isolation::{Cgroups, Host};
use ensemble_runtime::bus::RoomHub;
use ensemble_runtime::controller::{
    AttachmentConfig, ClusterConfig, Controller, ControllerConfig, ControllerError, WorkspaceConfig,
};
use ensemble_runtime::store::{DEFAULT_WAL_PREFILL, Retention, Store, StoreConfig, Synchronous};
use tokio::net::TcpListener;

use crate::access::audit::RefusalLimits;
use crate::cluster;
use crate::config::{ServeArgs, SqliteSync};
use crate::datadir;
use crate::listener::{self, ListenerConfig};
use crate::os;
use crate::router::router;
use crate::runs::Run;
use crate::security::{self, Access, AccessPolicy, RefusalLog, TokenSource};
use crate::state::{AppConfig, AppState};
use crate::telemetry;
use crate::workspace::WorkspaceRoots;

/// The file name of the database inside the data dir.
pub const DB_FILE: &str = "ensemble.sqlite3";

/// The WAL fill's default for a data dir: none on a copy-on-write file system (an overwrite
/// allocates anew there; on btrfs it measured no gain), else [`DEFAULT_WAL_PREFILL`].
pub fn default_wal_prefill(data_dir: &std::path::Path) -> u64 {
    match os::file_system_type(data_dir) {
        Ok(t) if os::is_copy_on_write(t) => {
            tracing::debug!(
                file_system = format_args!("{t:#x}"),
                "data dir copies on write: the WAL is not written ahead"
            );
            0
        }
        _ => DEFAULT_WAL_PREFILL,
    }
}

/// The store's configuration, from the server's.
pub fn store_config(args: &ServeArgs) -> StoreConfig {
    let mut cfg = StoreConfig::new(args.data_dir().join(DB_FILE));
    cfg.database_url = args.database_url.clone();
    // Several hosts share the database on purpose; alone, a host holds it exclusively.
    cfg.exclusive = args.nats_url.is_none();
    cfg.linger = Duration::from_millis(args.commit_linger_ms);
    cfg.linger_when_idle = args.commit_linger_when_idle;
    cfg.max_batch = args.commit_max_batch.max(1);
    cfg.queue_capacity = args.store_queue.max(1);
    cfg.queue_bytes = args.store_queue_bytes.max(1);
    cfg.readers = args.store_readers as usize;
    cfg.min_free_bytes = args.store_min_free_bytes;
    cfg.page_bytes = args.events_page_bytes;
    cfg.wal_prefill = args.sqlite_wal_prefill_bytes.unwrap_or_else(|| default_wal_prefill(&args.data_dir()));
    cfg.synchronous = match args.sqlite_sync {
        SqliteSync::Normal => Synchronous::Normal,
        SqliteSync::Full => Synchronous::Full,
    };
    cfg.retention = Retention {
        max_events_per_room: (args.retention_events > 0).then_some(args.retention_events),
        max_age: (args.retention_secs > 0).then(|| Duration::from_secs(args.retention_secs)),
    };
    cfg
}

/// The controller's configuration, from the server's.
pub fn controller_config(args: &ServeArgs) -> ControllerConfig {
    ControllerConfig {
        lock_timeout: Duration::from_millis(args.lock_timeout_ms),
        close_grace: Duration::from_millis(args.close_grace_ms),
        default_cwd: args.default_cwd().to_string_lossy().into_owned(),
        max_input_bytes: args.max_input_bytes,
        side_log_events: args.side_log_events,
        side_log_bytes: args.side_log_bytes,
        start_buffer_bytes: args.start_buffer_bytes,
        max_sessions: args.max_sessions,
        max_sessions_per_room: args.max_sessions_per_room,
        max_live_sessions: args.max_live_sessions,
        max_event_bytes: args.max_event_bytes.max(ensemble_core::event::MIN_EVENT_BYTES),
        idle_release: (args.idle_release_secs > 0).then(|| Duration::from_secs(args.idle_release_secs)),
        default_provider: args.default_provider.clone(),
        cluster: args.nats_url.as_ref().map(|_| ClusterConfig { host_id: host_id(args) }),
        store_retry: Duration::from_millis(args.store_retry_ms),
        workspaces: Some(workspace_config(args)),
        workspaces_off_reason: None,
        max_queued_turns: args.max_queued_turns,
        max_queued_bytes: args.max_queued_bytes,
        queue_preview_bytes: args.queue_preview_bytes,
        default_session_budget: default_budget(args.session_max_tokens, args.session_max_cost),
        default_room_budget: default_budget(args.room_max_tokens, args.room_max_cost),
        attention_after: (args.attention_after_secs > 0).then(|| Duration::from_secs(args.attention_after_secs)),
        attachments: AttachmentConfig {
            dir: Some(args.data_dir().join("attachments")),
            guard: files_guard(args),
            max_image_bytes: args.max_image_bytes,
            max_turn_bytes: args.max_turn_attachment_bytes,
            max_embedded_file_bytes: args.max_embedded_file_bytes,
        },
    }
}

/// A default budget from its flags (0 for no limit), `None` when neither limits.
fn default_budget(max_tokens: u64, max_cost: f64) -> Option<ensemble_core::usage::Budget> {
    let b = ensemble_core::usage::Budget {
        max_tokens: (max_tokens > 0).then(|| i64::try_from(max_tokens).unwrap_or(i64::MAX)),
        max_cost: (max_cost > 0.0 && max_cost.is_finite()).then_some(max_cost),
        on_exhausted: None,
    };
    (b.max_tokens.is_some() || b.max_cost.is_some()).then_some(b)
}

/// Where worktree sessions' worktrees are made: `--worktrees-dir`, made absolute from the
/// server's cwd now (git records a worktree's path, and sessions run elsewhere), else
/// `DATA_DIR/worktrees`.
fn worktrees_dir(args: &ServeArgs) -> std::path::PathBuf {
    args.worktrees_dir
        .as_ref()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
        .unwrap_or_else(|| args.data_dir().join("worktrees"))
}

/// The server's own directories, canonical (made if missing, so they can be resolved): the data
/// dir (the database, the token, the checkpoints, the attachments), the worktrees and each
/// provider's own (codex's home). No session works in them and no file request reaches them.
pub fn private_dirs(args: &ServeArgs) -> Vec<std::path::PathBuf> {
    let data_dir = args.data_dir();
    let mut dirs = vec![data_dir.clone(), worktrees_dir(args)];
    dirs.extend(args.providers.private_dirs(&data_dir));
    dirs.into_iter()
        .map(|d| {
            let _ = std::fs::create_dir_all(&d);
            d.canonicalize().unwrap_or(d)
        })
        .collect()
}

/// Where worktrees go and how checkpoints are taken, from the server's configuration.
pub fn workspace_config(args: &ServeArgs) -> WorkspaceConfig {
    let data_dir = args.data_dir();
    WorkspaceConfig {
        git: ensemble_workspace::Git::new(args.git_bin.clone(), Duration::from_secs(args.git_timeout_secs)),
        worktrees_dir: worktrees_dir(args),
        index_dir: data_dir.join("checkpoints"),
        roots: args.workspace_roots().iter().filter_map(|r| r.canonicalize().ok()).collect(),
        private: private_dirs(args),
        max_file_bytes: args.checkpoint_max_file_bytes,
        max_diff_bytes: args.max_diff_bytes,
        worktree_retention: (args.worktree_retention_secs > 0)
            .then(|| Duration::from_secs(args.worktree_retention_secs)),
    }
}

/// This host's id: `--host-id`, or the hostname with a random suffix (decided once per process).
pub fn host_id(args: &ServeArgs) -> String {
    static DEFAULT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    args.host_id.clone().unwrap_or_else(|| DEFAULT.get_or_init(cluster::default_host_id).clone())
}

/// The cluster's settings, when `--nats-url` joins this host to others: with the NATS credentials
/// and the cluster secret read (and checked) from their files.
pub fn cluster_settings(args: &ServeArgs) -> anyhow::Result<Option<cluster::Settings>> {
    let Some(nats_url) = args.nats_url.clone() else { return Ok(None) };
    let Some(secret_file) = &args.cluster_secret_file else {
        anyhow::bail!(
            "--nats-url needs --cluster-secret-file (ENSEMBLE_CLUSTER_SECRET_FILE): a file of at least {} random \
             bytes, the same on every host, that authenticates what the hosts send each other over NATS (README \
             \"Running several hosts\")",
            cluster::auth::MIN_SECRET_BYTES
        );
    };
    let keys = cluster::auth::ClusterKeys::load(secret_file, args.allow_shared_token_file)?;
    let credentials = args
        .nats_credentials
        .as_deref()
        .map(|p| cluster::auth::NatsCredentials::load(p, args.allow_shared_token_file))
        .transpose()?;
    if credentials.is_none() {
        tracing::warn!(
            "--nats-credentials not given: connecting to NATS anonymously (README \"Running several hosts\")"
        );
    }
    let request_timeout = Duration::from_secs(args.request_timeout_secs.max(1));
    Ok(Some(cluster::Settings {
        nats_url,
        host_id: host_id(args),
        lease: Duration::from_secs(args.lease_secs),
        outbox: args.nats_outbox.max(1),
        gap_sweep: Duration::from_millis(args.gap_sweep_ms),
        // Under the request timeout, so the caller hears 504 from here rather than 408.
        forward_timeout: request_timeout.mul_f64(0.9),
        max_body_bytes: args.max_body_bytes,
        credentials,
        keys: Arc::new(keys),
        max_skew: Duration::from_secs(args.cluster_max_skew_secs),
        replay_cache: usize::try_from(args.cluster_replay_cache).unwrap_or(usize::MAX),
    }))
}

/// Builds the controller (and its store, and with `--nats-url` the link to the other hosts) from
/// the configuration, probing the providers.
pub async fn build_controller(args: &ServeArgs) -> anyhow::Result<(Controller, Option<Arc<cluster::Node>>)> {
    build_controller_with(args, cluster_settings(args)?, args.listen).await
}

/// [`build_controller`] with the cluster's settings already read.
async fn build_controller_with(
    args: &ServeArgs,
    cluster: Option<cluster::Settings>,
    listen: std::net::SocketAddr,
) -> anyhow::Result<(Controller, Option<Arc<cluster::Node>>)> {
    let data_dir = args.data_dir();
    std::fs::create_dir_all(&data_dir).with_context(|| format!("creating the data dir {}", data_dir.display()))?;
    let hub = RoomHub::new(args.ws_queue, args.ws_queue_bytes);
    // NATS before the store: the relay must see every frame the store commits.
    let node = match cluster {
        Some(settings) => {
            tracing::info!(host = %settings.host_id, lease_secs = settings.lease.as_secs(), "joining the hosts on NATS");
            Some(cluster::connect(&settings, &hub).await?)
        }
        None => None,
    };
    let cfg = store_config(args);
    let engine = if cfg.database_url.is_some() { "postgres" } else { "sqlite" };
    let store = Store::connect(cfg, hub.clone()).await.with_context(|| format!("opening the store ({engine})"))?;
    tracing::debug!(engine, "store open");
    // The server's secrets outside the data dir (whose entries are all refused anyway): no agent's
    // file request may reach them.
    let server_files = [&args.token_file, &args.nats_credentials, &args.cluster_secret_file]
        .into_iter()
        .filter_map(|f| f.clone())
        .collect();
    let isolation = isolation_env(args, listen).await?;
    let adapters =
        args.providers.build(data_dir, args.max_live_sessions, server_files, private_dirs(args), isolation).await?;
    if !adapters.iter().any(|a| a.id() == args.default_provider) {
        let ids: Vec<&str> = adapters.iter().map(|a| a.id()).collect();
        anyhow::bail!(
            "--default-provider `{}` is not a registered provider ({})",
            args.default_provider,
            ids.join(", ")
        );
    }
    let mut config = controller_config(args);
    // Without a git that runs, no worktrees and no checkpoints (worktree starts say why).
    if let Some(ws) = &config.workspaces {
        match ws.git.version().await {
            Ok(v) => tracing::debug!(git = %v, "workspaces: worktrees and checkpoints on"),
            Err(e) => {
                tracing::warn!(error = %e, "workspaces: no worktrees and no checkpoints");
                config.workspaces = None;
                config.workspaces_off_reason = Some(match e {
                    ensemble_workspace::GitError::Unavailable(why) => why,
                    other => other.to_string(),
                });
            }
        }
    }
    Ok((Controller::new(config, store, hub, adapters, Arc::new(SystemClock::default())), node))
}

/// The server's own files (its secrets) and directories (the data dir, the worktrees, codex's
/// home, with everything beneath them), which no file route may show, whatever name reaches them.
fn files_guard(args: &ServeArgs) -> ensemble_files::Guard {
    let files: Vec<std::path::PathBuf> = [&args.token_file, &args.nats_credentials, &args.cluster_secret_file]
        .into_iter()
        .filter_map(|f| f.clone())
        .collect();
    ensemble_files::Guard::new(&files, &private_dirs(args))
}

/// The HTTP edge's configuration (token, Host/Origin policy, workspace roots, limits), validated.
/// Expects the data dir to exist (a generated token is kept there).
pub fn app_config(args: &ServeArgs) -> anyhow::Result<(AppConfig, TokenSource)> {
    let (token, source) =
        security::load_token(args.token_file.as_deref(), args.allow_shared_token_file, &args.data_dir())?;
    let policy = AccessPolicy::new(args.listen, &args.allowed_hosts, &args.trusted_origins)?;
    let workspace = WorkspaceRoots::new(&args.workspace_roots()).map_err(anyhow::Error::msg)?;
    let cwd = args.default_cwd();
    let inside = cwd.canonicalize().map(|c| workspace.contains(&c)).unwrap_or(false);
    if !inside {
        anyhow::bail!(
            "the default cwd {} is not an existing directory inside the workspace roots ({}); set --default-cwd \
             or --workspace-roots",
            cwd.display(),
            workspace.roots().iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(":")
        );
    }
    let config = AppConfig {
        ws: args.ws(),
        max_body_bytes: args.max_body_bytes,
        request_timeout: Duration::from_secs(args.request_timeout_secs.max(1)),
        export_page_events: usize::try_from(args.export_page_events).unwrap_or(usize::MAX),
        webhooks: crate::webhooks::WebhookConfig {
            allow_private: args.webhook_allow_private,
            timeout: Duration::from_secs(args.webhook_timeout_secs),
            retry_for: Duration::from_secs(args.webhook_retry_secs),
            backoff_base: Duration::from_millis(args.webhook_backoff_ms),
            backoff_max: Duration::from_secs(args.webhook_backoff_max_secs),
            concurrency: usize::try_from(args.webhook_concurrency).unwrap_or(4),
            poll: Duration::from_secs(1),
            max_webhooks: args.max_webhooks,
            keep_settled: Duration::from_secs(args.webhook_keep_secs),
            tls: crate::webhooks::tls_config()?,
        },
        access: Access {
            token,
            policy,
            refusals_log: RefusalLog::new(Duration::from_secs(args.refusal_log_interval_secs)),
        },
        max_tokens: args.max_tokens,
        max_long_polls_per_token: usize::try_from(args.max_long_polls_per_token).unwrap_or(usize::MAX),
        audit_refusals: RefusalLimits { per_min: args.audit_refusals_per_min, burst: args.audit_refusal_burst },
        workspace,
        files_guard: files_guard(args),
        max_file_view_bytes: args.max_file_view_bytes,
        auth_check_wait: Duration::from_millis(args.providers.shared.auth_check_wait_ms),
        test_hooks: args.test_hooks,
        cluster: None,
    };
    Ok((config, source))
}

/// The HTTP listener's limits, from the server's (the connection cap fitted to `soft_file_limit`).
pub fn listener_config(args: &ServeArgs, soft_file_limit: Option<u64>) -> ListenerConfig {
    ListenerConfig {
        header_read_timeout: Duration::from_secs(args.header_read_timeout_secs.max(1)),
        keep_alive_idle: Duration::from_secs(args.keep_alive_idle_secs.max(1)),
        max_connections: listener::effective_max_connections(args.max_connections, soft_file_limit),
        // Room WebSockets flush once per batch of frames, so Nagle buys nothing; with it, a small
        // batch written while the previous one is unacknowledged waits for the peer's delayed ACK
        // (up to 40 ms on Linux), which dominated the fan-out p99 (see `server/benches/fanout/`).
        nodelay: true,
    }
}

/// The listening socket, with a message that says what to do when the port is taken.
async fn bind(listen: std::net::SocketAddr) -> anyhow::Result<TcpListener> {
    match TcpListener::bind(listen).await {
        Ok(l) => Ok(l),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "{listen} is already in use (another server on that port?); choose another with --listen HOST:PORT \
             (port 0 picks a free one)"
        ),
        Err(e) => Err(e).with_context(|| format!("binding {listen}")),
    }
}

/// Last-use times written every few seconds, and the audit trail pruned.
fn spawn_access_upkeep(
    state: &AppState,
    retention: Duration,
    token_retention: Duration,
    stop: tokio_util::sync::CancellationToken,
) {
    let tokens = state.tokens.clone();
    let stopping = stop.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                () = stopping.cancelled() => break,
                _ = tick.tick() => tokens.flush_touches().await,
            }
        }
        tokens.flush_touches().await;
    });
    tokio::spawn(crate::access::audit::prune(state.controller.store().clone(), retention, stop.clone()));
    tokio::spawn(crate::access::tokens::prune(state.tokens.clone(), token_retention, stop));
}

/// Runs the server until SIGINT/SIGTERM, then shuts down gracefully.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // Before anything else: a mistaken exposure must not even open the store.
    security::check_listen(args.listen, args.token_file.as_deref())?;
    // Bound next, before the data dir, the token or the store are made: a port in use must not
    // leave a half-made data dir behind (connections wait in the backlog until serving starts).
    let listener = bind(args.listen).await?;
    telemetry::metrics_handle();
    let data_dir = args.data_dir();
    // Private (0700), ours, and not writable by anyone else, before anything is read from it.
    let prepared = datadir::prepare(&data_dir)?;
    for path in &prepared.tightened {
        tracing::warn!(path = %path.display(), "made private: it was readable by other users");
    }
    // The token, Host/Origin policy and workspace roots are checked before anything is opened.
    let (app_config, token_source) = app_config(&args)?;
    // So are the cluster secret and the NATS credentials.
    let cluster = cluster_settings(&args)?;
    // Before any agent can start: one server per data dir, and nothing left from a crashed run.
    let addr = listener.local_addr()?;
    // The address this host's own tools use (`ensemble url`, the console line): loopback when
    // listening on all addresses.
    let local_addr = if addr.ip().is_unspecified() {
        match addr {
            SocketAddr::V4(_) => SocketAddr::from(([127, 0, 0, 1], addr.port())),
            SocketAddr::V6(_) => SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, addr.port())),
        }
    } else {
        addr
    };
    let token_path = match &token_source {
        TokenSource::File(p) | TokenSource::Generated(p) | TokenSource::DataDir(p) => p.as_path(),
    };
    let (run, reaped) = Run::begin(&data_dir, &format!("http://{local_addr}"), Some(token_path))?;
    tracing::debug!(run = %run.id, reaped, "run registered");
    let (controller, node) = build_controller_with(&args, cluster, addr).await?;
    if let Some(node) = &node {
        node.register(&controller).await?;
    }
    let console_token = match &token_source {
        TokenSource::Generated(_) | TokenSource::DataDir(_) => Some(app_config.access.token.expose().to_owned()),
        TokenSource::File(_) => None,
    };
    let recovered = match controller.recover().await {
        Ok(n) => n,
        Err(ControllerError::Store(e)) if e.is_full() => {
            anyhow::bail!("loading stored sessions: the store's disk is full ({e}); free space and start again")
        }
        Err(e) => return Err(e).context("loading stored sessions"),
    };
    // Before any checkpoint: what a server killed mid-checkpoint or mid-restore left behind.
    let (locks, restores) = controller.recover_workspaces().await;
    if locks + restores > 0 {
        tracing::warn!(locks, restores, "cleared stale checkpoint locks; reported interrupted restores");
    }
    let pruned = controller.prune_worktrees().await;
    if pruned > 0 {
        tracing::info!(pruned, "removed worktrees whose session is gone");
    }
    controller.spawn_idle_release();
    controller.spawn_worktree_retention();
    controller.spawn_store_watch();
    let mut app_config = app_config;
    app_config.cluster = node.clone();
    let state = AppState::new(controller.clone(), app_config);
    state.tokens.reload().await.map_err(|e| anyhow::anyhow!("loading the tokens: {}", e.message))?;
    let app = router(state.clone());
    let cluster_stop = tokio_util::sync::CancellationToken::new();
    if let Some(node) = &node {
        node.spawn(controller.clone(), app.clone(), cluster_stop.clone()).await?;
        node.watch_tokens(state.tokens.clone(), cluster_stop.clone()).await?;
        node.watch_webhooks(state.webhooks.clone(), cluster_stop.clone()).await?;
    }
    state.webhooks.load().await.map_err(|e| anyhow::anyhow!("loading the webhooks: {e}"))?;
    state.webhooks.spawn(cluster_stop.clone());
    spawn_access_upkeep(
        &state,
        Duration::from_secs(args.audit_retention_days.max(1) * 86_400),
        Duration::from_secs(args.token_retention_secs),
        cluster_stop.clone(),
    );
    // Tests and scripts read this exact line to learn the bound address.
    println!("listening on http://{addr}");
    // The console URL carries the token in the fragment, which browsers never send to a server.
    // It goes to stdout only, never to the logs.
    let console_addr = local_addr;
    let console =
        console_token.map(|t| crate::routes::system::console_url(&format!("http://{console_addr}"), &t, None));
    match (&console, &token_source) {
        (Some(url), TokenSource::Generated(p)) => println!("console: {url}  (new token, kept in {})", p.display()),
        (Some(url), _) => println!("console: {url}"),
        (None, _) => println!("console: http://{console_addr}/  (token: the --token-file)"),
    }
    tracing::info!(%addr, data_dir = %args.data_dir().display(), recovered, "ensemble started");

    let signal_state = state.clone();
    let drain = Duration::from_millis(args.drain_ms);
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down: draining");
        signal_state.start_draining();
        tokio::time::sleep(drain).await;
        signal_state.shutdown.cancel();
    });

    let listener_config = listener_config(&args, os::file_limit().ok().map(|l| l.soft));
    tracing::debug!(
        max_connections = listener_config.max_connections,
        header_read_timeout_secs = listener_config.header_read_timeout.as_secs(),
        keep_alive_idle_secs = listener_config.keep_alive_idle.as_secs(),
        "http listener"
    );
    if listener_config.max_connections < args.max_connections {
        tracing::warn!(
            configured = args.max_connections,
            used = listener_config.max_connections,
            "--max-connections lowered to half the open-file limit"
        );
    }
    let shutdown = state.shutdown.clone();
    let serving = listener::serve(listener, app, listener_config, shutdown.clone());
    let limit = Duration::from_secs(args.shutdown_timeout_secs);
    tokio::select! {
        () = serving => {}
        _ = async { shutdown.cancelled().await; tokio::time::sleep(limit).await } => {
            tracing::warn!("open connections did not finish within the shutdown timeout");
        }
    }
    tracing::info!("closing live sessions");
    // The audit writer gathers records for a moment: what it holds goes in before the store closes.
    state.audit.flush().await;
    controller.shutdown().await;
    if let Some(node) = &node {
        node.leave(&controller).await;
    }
    cluster_stop.cancel();
    controller.store().close().await;
    drop(run);
    tracing::info!("stopped");
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The machine's side, probed (bubblewrap run once, the control groups found) when isolation is
/// on; what every provider builds its sessions' boxes with.
async fn isolation_env(args: &ServeArgs, listen: SocketAddr) -> anyhow::Result<IsolationEnv> {
    let iso = &args.isolation;
    let defaults = iso.defaults()?;
    let data_dir = args.data_dir();
    // What an earlier run left there (its sandboxes' sockets) goes: this data dir is locked to
    // this server.
    let (run_dir, run_dir_guard) = ensemble_isolation::socket_dir(&data_dir.join("run"))?;
    let hidden_files: Vec<PathBuf> = [&args.token_file, &args.nats_credentials, &args.cluster_secret_file]
        .into_iter()
        .filter_map(Clone::clone)
        .chain(args.providers.private_files(&data_dir))
        .collect();
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    let bwrap = ensemble_adapters::kit::binary::which(&iso.bwrap_bin.to_string_lossy())
        .unwrap_or_else(|| iso.bwrap_bin.clone());
    let on = defaults.mode == IsolationMode::On;
    let host = Host {
        bwrap,
        init: std::env::current_exe()?,
        run_dir,
        run_dir_guard,
        hidden_dirs: private_dirs(args),
        // Other projects, other rooms' work: a session's own workspace is bound back.
        hidden_roots: args.workspace_roots().into_iter().filter_map(|r| r.canonicalize().ok()).collect(),
        hidden_files,
        server: vec![listen],
        home,
        cgroups: if on { Cgroups::detect() } else { Cgroups::None("isolation is off".into()) },
        available: Err("not probed".into()),
        proxy_connections: usize::try_from(iso.isolation_proxy_connections).unwrap_or(usize::MAX),
    };
    let host = if on { host.probe().await } else { host };
    if on {
        match (&host.available, &host.cgroups) {
            (Err(why), _) => tracing::warn!("isolation: {why}"),
            (Ok(()), Cgroups::None(why)) => tracing::warn!(
                "isolation on, but the sessions' memory and process limits are not enforced (no control group the \
                 server may write: {why})"
            ),
            (Ok(()), c) => tracing::debug!(limits = ?c.enforcement(), "isolation on"),
        }
    } else {
        tracing::warn!("isolation is off (--isolation off): agents can read and do whatever this server's user can");
    }
    Ok(IsolationEnv { host: Arc::new(host), defaults })
}
