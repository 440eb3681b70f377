//! Command line and environment configuration. Every flag has an `ENSEMBLE_*` environment fallback;
//! every limit and timeout has a name and a default here.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "ensemble", version, about = "Runs coding agents as a shared, observable service.")]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (the default).
    Serve(Box<ServeArgs>),
    /// Print the OpenAPI document.
    Openapi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SqliteSync {
    Normal,
    Full,
}

#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "ENSEMBLE_LISTEN", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,

    /// Where the database and managed state live [default: $XDG_DATA_HOME/ensemble].
    #[arg(long, env = "ENSEMBLE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,

    #[arg(long, env = "ENSEMBLE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// File holding the bearer token (absolute path; trimmed; at least 32 bytes) [default: a token
    /// generated at first start into DATA_DIR/token, mode 0600]. Required for a non-loopback --listen.
    #[arg(long, env = "ENSEMBLE_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,

    /// Host names (or IPs) accepted in the `Host` header besides loopback ones and the listen IP,
    /// comma separated; `*` accepts any (only behind a proxy that checks Host).
    #[arg(long, env = "ENSEMBLE_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Origins (`scheme://host[:port]`) allowed besides the server's own, comma separated.
    #[arg(long, env = "ENSEMBLE_TRUSTED_ORIGINS", value_delimiter = ',')]
    pub trusted_origins: Vec<String>,

    /// Directories a session's `cwd` must be inside, `:`-separated [default: the user's home].
    #[arg(long, env = "ENSEMBLE_WORKSPACE_ROOTS", value_delimiter = ':')]
    pub workspace_roots: Vec<PathBuf>,

    /// Working directory of sessions started without `cwd` [default: the user's home].
    #[arg(long, env = "ENSEMBLE_DEFAULT_CWD")]
    pub default_cwd: Option<PathBuf>,

    /// Pause between two chunks the scripted provider streams.
    #[arg(long, env = "ENSEMBLE_SCRIPTED_CHUNK_DELAY_MS", default_value_t = 20)]
    pub scripted_chunk_delay_ms: u64,

    /// Events kept per room; older ones are pruned (0 = keep all).
    #[arg(long, env = "ENSEMBLE_RETENTION_EVENTS", default_value_t = 100_000)]
    pub retention_events: u64,

    /// Events older than this many seconds are pruned (0 = no age limit).
    #[arg(long, env = "ENSEMBLE_RETENTION_SECS", default_value_t = 0)]
    pub retention_secs: u64,

    /// Longest the store writer waits to group more work into one commit.
    #[arg(long, env = "ENSEMBLE_COMMIT_LINGER_MS", default_value_t = 2)]
    pub commit_linger_ms: u64,

    /// Most events in one commit.
    #[arg(long, env = "ENSEMBLE_COMMIT_MAX_BATCH", default_value_t = 512)]
    pub commit_max_batch: usize,

    /// Write operations queued for the store before publishers wait.
    #[arg(long, env = "ENSEMBLE_STORE_QUEUE", default_value_t = 4096)]
    pub store_queue: usize,

    /// SQLite durability: `normal` survives a killed process, `full` also a power loss.
    #[arg(long, env = "ENSEMBLE_SQLITE_SYNC", value_enum, default_value_t = SqliteSync::Normal)]
    pub sqlite_sync: SqliteSync,

    /// Longest a lifecycle operation waits for its session's lock.
    #[arg(long, env = "ENSEMBLE_LOCK_TIMEOUT_MS", default_value_t = 10_000)]
    pub lock_timeout_ms: u64,

    /// How long close waits for a canceled turn to end before forcing it.
    #[arg(long, env = "ENSEMBLE_CLOSE_GRACE_MS", default_value_t = 3_000)]
    pub close_grace_ms: u64,

    /// Largest accepted request body (413 beyond).
    #[arg(long, env = "ENSEMBLE_MAX_BODY_BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Largest turn input text.
    #[arg(long, env = "ENSEMBLE_MAX_INPUT_BYTES", default_value_t = 1024 * 1024)]
    pub max_input_bytes: usize,

    /// Open room WebSockets in total (503 + Retry-After beyond).
    #[arg(long, env = "ENSEMBLE_MAX_WS_CONNECTIONS", default_value_t = 1024)]
    pub max_ws_connections: usize,

    /// Open WebSockets per room (503 + Retry-After beyond).
    #[arg(long, env = "ENSEMBLE_MAX_WS_PER_ROOM", default_value_t = 128)]
    pub max_ws_per_room: usize,

    /// Sessions kept in total, side conversations included (429 beyond; close some to start more).
    #[arg(long, env = "ENSEMBLE_MAX_SESSIONS", default_value_t = 4096)]
    pub max_sessions: usize,

    /// Sessions kept per room (429 beyond).
    #[arg(long, env = "ENSEMBLE_MAX_SESSIONS_PER_ROOM", default_value_t = 256)]
    pub max_sessions_per_room: usize,

    /// Live provider sessions (processes) at once; starting or resuming beyond is refused with
    /// 503 and Retry-After.
    #[arg(long, env = "ENSEMBLE_MAX_LIVE_SESSIONS", default_value_t = 32)]
    pub max_live_sessions: usize,

    /// Largest event payload (serialised); a larger one is replaced by a `notice`.
    #[arg(long, env = "ENSEMBLE_MAX_EVENT_BYTES", default_value_t = 1024 * 1024)]
    pub max_event_bytes: usize,

    /// A live session idle this long (no turn, no pending interaction, no open side) is released;
    /// 0 = never.
    #[arg(long, env = "ENSEMBLE_IDLE_RELEASE_SECS", default_value_t = 1800)]
    pub idle_release_secs: u64,

    /// Largest message a WebSocket client may send.
    #[arg(long, env = "ENSEMBLE_WS_MAX_MESSAGE_BYTES", default_value_t = 64 * 1024)]
    pub ws_max_message_bytes: usize,

    /// Frames a WebSocket client may fall behind before it gets `resync` and is closed.
    #[arg(long, env = "ENSEMBLE_WS_QUEUE", default_value_t = 4096)]
    pub ws_queue: usize,

    /// Bytes buffered for a WebSocket peer that does not read before the connection is dropped.
    #[arg(long, env = "ENSEMBLE_WS_WRITE_BUFFER_BYTES", default_value_t = 4 * 1024 * 1024)]
    pub ws_write_buffer_bytes: usize,

    /// Interval of server pings on WebSockets.
    #[arg(long, env = "ENSEMBLE_WS_PING_SECS", default_value_t = 20)]
    pub ws_ping_secs: u64,

    /// A WebSocket peer silent for this long is closed.
    #[arg(long, env = "ENSEMBLE_WS_IDLE_SECS", default_value_t = 60)]
    pub ws_idle_secs: u64,

    /// Longest a write to a WebSocket peer may take before the peer counts as dead.
    #[arg(long, env = "ENSEMBLE_WS_WRITE_TIMEOUT_SECS", default_value_t = 10)]
    pub ws_write_timeout_secs: u64,

    /// On SIGTERM/SIGINT: how long `/readyz` answers 503 (and new work is refused) before the
    /// listener stops.
    #[arg(long, env = "ENSEMBLE_DRAIN_MS", default_value_t = 250)]
    pub drain_ms: u64,

    /// Longest the shutdown waits for open requests and connections.
    #[arg(long, env = "ENSEMBLE_SHUTDOWN_TIMEOUT_SECS", default_value_t = 10)]
    pub shutdown_timeout_secs: u64,

    /// How long a turn the provider starts by itself waits for evidence of the goal operation that
    /// caused it before it is reported as unproven.
    #[arg(long, env = "ENSEMBLE_GOAL_GRACE_MS", default_value_t = 250)]
    pub goal_grace_ms: u64,

    /// Events a side conversation keeps in memory for replay.
    #[arg(long, env = "ENSEMBLE_SIDE_LOG_EVENTS", default_value_t = 10_000)]
    pub side_log_events: usize,

    /// Also register the scripted provider's test variants (broken side conversations, for tests).
    #[arg(long, env = "ENSEMBLE_TEST_PROVIDERS", hide = true)]
    pub test_providers: bool,

    /// Test-only routes (a handler that panics), for the server's own tests.
    #[arg(long, env = "ENSEMBLE_TEST_HOOKS", hide = true)]
    pub test_hooks: bool,

    /// The `codex` executable [default: `codex` on PATH].
    #[arg(long, env = "ENSEMBLE_CODEX_BIN")]
    pub codex_bin: Option<PathBuf>,

    /// `KEY=VALUE` passed to every codex process as `-c KEY=VALUE` (repeatable; in the environment
    /// variable, entries are separated by `;`).
    #[arg(long = "codex-config", env = "ENSEMBLE_CODEX_CONFIG", value_delimiter = ';')]
    pub codex_config: Vec<String>,

    /// `KEY=VALUE` added to every codex process's environment (repeatable; `;`-separated in the
    /// environment variable). Nothing else of the server's environment is passed on except PATH,
    /// HOME, USER, LANG and similar.
    #[arg(long = "codex-env", env = "ENSEMBLE_CODEX_ENV", value_delimiter = ';')]
    pub codex_env: Vec<String>,

    /// `CODEX_HOME` of the codex processes, where codex keeps its threads [default: DATA_DIR/codex-home].
    #[arg(long, env = "ENSEMBLE_CODEX_HOME")]
    pub codex_home: Option<PathBuf>,

    /// Deadline of codex's `thread/start`.
    #[arg(long, env = "ENSEMBLE_CODEX_THREAD_START_TIMEOUT_SECS", default_value_t = 90)]
    pub codex_thread_start_timeout_secs: u64,

    /// Deadline of codex's other calls (initialize, thread/resume, turn/start, …).
    #[arg(long, env = "ENSEMBLE_CODEX_CALL_TIMEOUT_SECS", default_value_t = 30)]
    pub codex_call_timeout_secs: u64,

    /// Longest JSON-RPC line accepted from an agent process; longer lines are skipped.
    #[arg(long, env = "ENSEMBLE_RPC_MAX_LINE_BYTES", default_value_t = 8 * 1024 * 1024)]
    pub rpc_max_line_bytes: usize,

    /// Longest a REST request may take (408 beyond).
    #[arg(long, env = "ENSEMBLE_REQUEST_TIMEOUT_SECS", default_value_t = 120)]
    pub request_timeout_secs: u64,
}

impl ServeArgs {
    pub fn data_dir(&self) -> PathBuf {
        if let Some(d) = &self.data_dir {
            return d.clone();
        }
        if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(x).join("ensemble");
        }
        home_dir().join(".local").join("share").join("ensemble")
    }

    pub fn default_cwd(&self) -> PathBuf {
        self.default_cwd.clone().unwrap_or_else(home_dir)
    }

    pub fn workspace_roots(&self) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = self.workspace_roots.iter().filter(|p| !p.as_os_str().is_empty()).cloned().collect();
        if roots.is_empty() { vec![home_dir()] } else { roots }
    }

    /// The codex provider's configuration, validated.
    pub fn codex(&self) -> Result<ensemble_adapters::codex::CodexConfig, String> {
        use ensemble_adapters::codex::{CodexConfig, which};
        let bin = match &self.codex_bin {
            Some(b) => b.clone(),
            None => which("codex").unwrap_or_else(|| PathBuf::from("codex")),
        };
        let home = self.codex_home.clone().unwrap_or_else(|| self.data_dir().join("codex-home"));
        let mut c = CodexConfig::new(bin, home);
        for o in &self.codex_config {
            let o = o.trim();
            if o.is_empty() {
                continue;
            }
            match o.split_once('=') {
                Some((k, _)) if !k.trim().is_empty() => c.overrides.push(o.to_owned()),
                _ => return Err(format!("--codex-config expects KEY=VALUE, got `{o}`")),
            }
        }
        for e in &self.codex_env {
            let e = e.trim();
            if e.is_empty() {
                continue;
            }
            match e.split_once('=') {
                Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
                    c.env.push((k.to_owned(), v.to_owned()))
                }
                _ => return Err(format!("--codex-env expects KEY=VALUE, got `{e}`")),
            }
        }
        c.thread_start_timeout = Duration::from_secs(self.codex_thread_start_timeout_secs.max(1));
        c.goal_grace = Duration::from_millis(self.goal_grace_ms);
        c.call_timeout = Duration::from_secs(self.codex_call_timeout_secs.max(1));
        c.rpc.max_line_bytes = self.rpc_max_line_bytes.max(1024);
        Ok(c)
    }

    pub fn ws(&self) -> WsLimits {
        WsLimits {
            max_message_bytes: self.ws_max_message_bytes,
            queue: self.ws_queue,
            write_buffer_bytes: self.ws_write_buffer_bytes,
            ping_interval: Duration::from_secs(self.ws_ping_secs.max(1)),
            idle_timeout: Duration::from_secs(self.ws_idle_secs.max(1)),
            write_timeout: Duration::from_secs(self.ws_write_timeout_secs.max(1)),
            max_connections: self.max_ws_connections,
            max_per_room: self.max_ws_per_room,
        }
    }
}

/// WebSocket limits, as the handler uses them.
#[derive(Clone, Debug)]
pub struct WsLimits {
    pub max_message_bytes: usize,
    pub queue: usize,
    pub write_buffer_bytes: usize,
    pub ping_interval: Duration,
    pub idle_timeout: Duration,
    pub write_timeout: Duration,
    pub max_connections: usize,
    pub max_per_room: usize,
}

pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_contract() {
        let a = Cli::try_parse_from(["ensemble"]).unwrap().serve;
        assert_eq!(a.listen.to_string(), "127.0.0.1:7878");
        assert_eq!(a.max_body_bytes, 8 * 1024 * 1024);
        assert_eq!(a.log_format, LogFormat::Text);
    }

    #[test]
    fn serve_is_the_default_subcommand() {
        let cli = Cli::try_parse_from(["ensemble", "--listen", "127.0.0.1:0"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.serve.listen.port(), 0);
        let cli = Cli::try_parse_from(["ensemble", "serve", "--listen", "127.0.0.1:0"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Serve(_))));
        assert!(Cli::try_parse_from(["ensemble", "openapi"]).is_ok());
        assert!(Cli::try_parse_from(["ensemble", "--log-format", "xml"]).is_err());
    }

    #[test]
    fn codex_settings_are_validated() {
        let cli = Cli::try_parse_from([
            "ensemble",
            "--codex-bin",
            "/opt/codex",
            "--codex-config",
            "model=\"m\"",
            "--codex-config",
            "a=1;b=2",
            "--codex-env",
            "KEY=v=w",
        ])
        .unwrap();
        let c = cli.serve.codex().unwrap();
        assert_eq!(c.bin, PathBuf::from("/opt/codex"));
        assert_eq!(c.overrides, ["model=\"m\"", "a=1", "b=2"]);
        assert_eq!(c.env, [("KEY".to_owned(), "v=w".to_owned())]);
        let bad = Cli::try_parse_from(["ensemble", "--codex-config", "novalue"]).unwrap();
        assert!(bad.serve.codex().unwrap_err().contains("KEY=VALUE"));
        let bad = Cli::try_parse_from(["ensemble", "--codex-env", "=x"]).unwrap();
        assert!(bad.serve.codex().is_err());
    }
}
