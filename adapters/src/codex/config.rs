//! How to run codex: the provider's configuration and the constants every part of it shares.

use std::path::PathBuf;
use std::time::Duration;

use crate::kit::binary::Version;
use crate::kit::jsonrpc::RpcConfig;
use crate::kit::sandbox::{Declared, Extras, IsolationEnv, Known};
use ensemble_core::isolation::ProviderIsolation;

/// The provider id.
pub const CODEX: &str = "codex";
/// The oldest app-server this adapter speaks to.
pub const MIN_VERSION: Version = Version::new(0, 169, 0);
/// Provider-state key: the codex thread that has run a turn (so codex has written its rollout).
pub(super) const THREAD_USED: &str = "codex.thread_used";

/// Where codex's id of one of our turns is kept.
pub(super) fn turn_key(ours: &str) -> String {
    format!("codex.turn.{ours}")
}

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
    /// How long the answer of a codex started only to ask about its login is kept (zero: never
    /// asked that way).
    pub auth_check_ttl: Duration,
    pub rpc: RpcConfig,
    /// The machine's side of isolation and the server's defaults (set by the server).
    pub sandboxes: IsolationEnv,
}

/// What codex needs in its box: OpenAI's endpoints (a local model server is listed with
/// `--isolation-network`); its home is `CODEX_HOME`, its own directory.
const KNOWN: Known = Known { network: &["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"], home: &[] };

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
            auth_check_ttl: Duration::from_secs(60),
            rpc: RpcConfig::default(),
            sandboxes: IsolationEnv::off(),
        }
    }

    /// Codex's isolation: what it is known to need with the server's defaults.
    pub fn isolation(&self) -> ProviderIsolation {
        self.sandboxes.for_provider(&Declared::default(), KNOWN, true)
    }

    /// What codex's box holds besides the workspace: `CODEX_HOME`, and the directories its
    /// environment names as its own.
    pub fn extras(&self) -> Extras {
        let mut extras = Extras::from_env(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())), &self.bin);
        extras.own_dirs.insert(0, self.home.clone());
        extras
    }
}
