//! What a provider implements to be registered: its options and how it builds its adapters.
//! The list of registered providers is `crate::registry`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use ensemble_core::adapter::Adapter;

/// What every provider gets to build itself, besides its own options.
#[derive(Clone, Debug)]
pub struct ProviderEnv {
    /// The server's data dir: providers keep managed state under it (e.g. codex's `CODEX_HOME`).
    pub data_dir: PathBuf,
    /// How long a turn the provider starts by itself waits for evidence of its goal operation.
    pub goal_grace: Duration,
    /// Longest JSON-RPC line accepted from an agent process; longer lines are skipped.
    pub rpc_max_line_bytes: usize,
    /// Bytes of an agent's JSON-RPC messages read ahead of its session before the reader waits.
    pub rpc_queue_bytes: usize,
    /// The ids of the providers built before this one (registration order).
    pub taken_ids: Vec<String>,
    /// The most sessions live at once (`--max-live-sessions`): a provider whose sessions cost
    /// next to nothing to start (scripted) makes its table ready for them.
    pub max_live_sessions: usize,
    /// The server's own files outside the data dir (its token file, …): an agent's file
    /// requests may never touch them.
    pub server_files: Vec<PathBuf>,
    /// The server's own directories (the data dir, the worktrees, each provider's
    /// [`Provider::private_dirs`]): nothing beneath them is touched by an agent's file request.
    pub private_dirs: Vec<PathBuf>,
    /// The box sessions run in: the machine's side and the server's defaults.
    pub isolation: crate::kit::sandbox::IsolationEnv,
    /// How long an agent's answer to "can you call your model?", asked without a session for
    /// `GET /v1/providers`, is kept before it is asked again (zero: never asked that way).
    pub auth_check_ttl: Duration,
}

/// A provider's options were invalid, or it could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);

/// A provider's registration: its options and how it builds its adapters from them.
#[async_trait]
pub trait Provider {
    /// The provider's command-line options, flattened into the server's.
    type Options: clap::Args + clap::FromArgMatches + Clone + std::fmt::Debug + Send + Sync;

    /// The adapters this provider contributes (none when, e.g., a test-only provider is off).
    /// Probing (is the binary there, which version) happens here, before the server listens.
    async fn build(options: &Self::Options, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError>;

    /// Directories the provider keeps for itself (a login, its threads), which no session may
    /// work in and no agent's file request may reach: known before any provider is built.
    fn private_dirs(_options: &Self::Options, _data_dir: &std::path::Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Files of the provider's configuration no agent may see (they hold other agents' keys).
    fn private_files(_options: &Self::Options, _data_dir: &std::path::Path) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// Options every agent-process provider shares.
#[derive(Clone, Debug, clap::Args)]
pub struct SharedOptions {
    /// How long a turn the provider starts by itself waits for evidence of the goal operation that
    /// caused it before it is reported as unproven.
    #[arg(long, env = "ENSEMBLE_GOAL_GRACE_MS", default_value_t = 250)]
    pub goal_grace_ms: u64,

    /// Longest JSON-RPC line accepted from an agent process; longer lines are skipped.
    #[arg(long, env = "ENSEMBLE_RPC_MAX_LINE_BYTES", default_value_t = 8 * 1024 * 1024)]
    pub rpc_max_line_bytes: usize,

    /// Bytes of an agent's JSON-RPC messages read ahead of its session; beyond them the server
    /// reads no further until the session has taken some (the agent's writes block meanwhile).
    #[arg(long, env = "ENSEMBLE_RPC_QUEUE_BYTES", default_value_t = 16 << 20)]
    pub rpc_queue_bytes: usize,

    /// How long an agent's answer to "can you call your model?" (a login needed?), asked by
    /// starting it without a session for `GET /v1/providers`, is kept before it is asked again;
    /// 0 never asks that way (a session's start still tells).
    #[arg(long, env = "ENSEMBLE_AUTH_CHECK_SECS", default_value_t = 60)]
    pub auth_check_secs: u64,

    /// How long `GET /v1/providers` waits for that answer (a slower one shows at a later call).
    #[arg(long, env = "ENSEMBLE_AUTH_CHECK_WAIT_MS", default_value_t = 3_000)]
    pub auth_check_wait_ms: u64,
}

impl SharedOptions {
    pub fn env(
        &self,
        data_dir: PathBuf,
        max_live_sessions: usize,
        server_files: Vec<PathBuf>,
        private_dirs: Vec<PathBuf>,
        isolation: crate::kit::sandbox::IsolationEnv,
    ) -> ProviderEnv {
        ProviderEnv {
            data_dir,
            private_dirs,
            isolation,
            goal_grace: Duration::from_millis(self.goal_grace_ms),
            rpc_max_line_bytes: self.rpc_max_line_bytes.max(1024),
            rpc_queue_bytes: self.rpc_queue_bytes,
            taken_ids: Vec::new(),
            max_live_sessions,
            server_files,
            auth_check_ttl: Duration::from_secs(self.auth_check_secs),
        }
    }
}
