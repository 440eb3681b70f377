//! The application state every handler and middleware shares. It imports nothing that imports it:
//! the router, the handlers, the WebSocket and the telemetry build on it, never the other way.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ensemble_runtime::controller::Controller;
use tokio_util::sync::CancellationToken;

use crate::access::audit::{AuditLog, RefusalLimits};
use crate::access::per_token::PerToken;
use crate::access::tokens::Registry;
use crate::cluster::Node;
use crate::config::WsLimits;
use crate::security::Access;
use crate::workspace::WorkspaceRoots;

/// Everything a handler may need.
pub struct App {
    pub controller: Controller,
    pub ws: WsLimits,
    /// Cancelled when the server stops: WebSockets close with a close frame.
    pub shutdown: CancellationToken,
    draining: AtomicBool,
    pub ws_connections: AtomicUsize,
    /// Open WebSockets per room (entries removed at zero).
    pub ws_rooms: Mutex<HashMap<String, usize>>,
    /// Open room WebSockets per token (`--max-ws-per-token`).
    pub ws_tokens: Arc<PerToken>,
    /// Waiting `?wait=` long polls per token (`--max-long-polls-per-token`).
    pub long_polls: Arc<PerToken>,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// Events a room export reads at a time.
    pub export_page_events: usize,
    /// Webhooks and their delivery.
    pub webhooks: Arc<crate::webhooks::Webhooks>,
    /// What the access guard checks (Host, Origin, token).
    pub access: Access,
    /// Managed tokens (and the token file's, as admin).
    pub tokens: Arc<Registry>,
    /// Where mutating requests are recorded.
    pub audit: AuditLog,
    pub workspace: WorkspaceRoots,
    /// The server's own files, which the workspace file routes refuse.
    pub files_guard: ensemble_files::Guard,
    /// The most of a file `…/files/content` shows.
    pub max_file_view_bytes: u64,
    /// How long `GET /v1/providers` waits for an agent's answer about its login.
    pub auth_check_wait: Duration,
    /// Enables test-only routes (a handler that panics).
    pub test_hooks: bool,
    /// Several hosts: NATS and this host's identity (None: the only host).
    pub cluster: Option<Arc<Node>>,
}

/// What the HTTP edge is configured with.
pub struct AppConfig {
    pub ws: WsLimits,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// Events a room export reads at a time.
    pub export_page_events: usize,
    pub webhooks: crate::webhooks::WebhookConfig,
    pub access: Access,
    /// Most valid managed tokens at once.
    pub max_tokens: usize,
    /// Waiting long polls per token.
    pub max_long_polls_per_token: usize,
    /// How many refusals the audit trail keeps.
    pub audit_refusals: RefusalLimits,
    pub workspace: WorkspaceRoots,
    pub files_guard: ensemble_files::Guard,
    pub max_file_view_bytes: u64,
    /// How long `GET /v1/providers` waits for an agent's answer about its login.
    pub auth_check_wait: Duration,
    pub test_hooks: bool,
    pub cluster: Option<Arc<Node>>,
}

#[derive(Clone)]
pub struct AppState(pub Arc<App>);

impl Deref for AppState {
    type Target = App;
    fn deref(&self) -> &App {
        &self.0
    }
}

impl AppState {
    /// Spawns the audit writer (on the current runtime).
    pub fn new(controller: Controller, config: AppConfig) -> Self {
        let store = controller.store().clone();
        let tokens = Arc::new(Registry::new(config.access.token.digest(), store.clone(), config.max_tokens));
        // Claims in the outbox name the host: the cluster's name for it, else one of this run's.
        let host = match &controller.config().cluster {
            Some(c) => c.host_id.clone(),
            None => format!(
                "local-{}",
                crate::access::tokens::random_hex(6).unwrap_or_else(|_| std::process::id().to_string())
            ),
        };
        let webhooks = Arc::new(crate::webhooks::Webhooks::new(
            store.clone(),
            controller.webhooks().clone(),
            config.webhooks,
            host,
        ));
        let (audit, writer) = AuditLog::new(store, config.audit_refusals);
        tokio::spawn(writer);
        Self(Arc::new(App {
            controller,
            ws: config.ws.clone(),
            shutdown: CancellationToken::new(),
            draining: AtomicBool::new(false),
            ws_connections: AtomicUsize::new(0),
            ws_rooms: Mutex::new(HashMap::new()),
            // Sockets are counted by `ensemble_ws_connections` already.
            ws_tokens: PerToken::new(config.ws.max_per_token, None),
            long_polls: PerToken::new(config.max_long_polls_per_token, Some("ensemble_long_polls_waiting")),
            max_body_bytes: config.max_body_bytes,
            request_timeout: config.request_timeout,
            export_page_events: config.export_page_events,
            webhooks,
            access: config.access,
            tokens,
            audit,
            workspace: config.workspace,
            files_guard: config.files_guard,
            max_file_view_bytes: config.max_file_view_bytes,
            auth_check_wait: config.auth_check_wait,
            test_hooks: config.test_hooks,
            cluster: config.cluster,
        }))
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }
}
