//! Command line and environment configuration. Every flag has an `ENSEMBLE_*` environment fallback;
//! every limit and timeout has a name and a default here.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ensemble_adapters::ProviderOptions;

#[derive(Debug, Parser)]
#[command(name = "ensemble", version, about = "Runs coding agents as a shared, observable service.")]
#[command(args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Without a command, `ensemble` runs the server: `ensemble --listen …` is `ensemble serve --listen …`.\nThe server's flags: `ensemble serve --help`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

impl Cli {
    /// The command line, parsed. `ensemble --help` lists the commands and leaves the server's
    /// flags (which it takes too, as `serve`'s) to `ensemble serve --help`.
    pub fn parse_args() -> Self {
        let command = <Self as clap::CommandFactory>::command()
            .mut_args(|a| if matches!(a.get_id().as_str(), "help" | "version") { a } else { a.hide(true) });
        let matches = command.get_matches();
        <Self as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (the default).
    Serve(Box<ServeArgs>),
    /// Print the OpenAPI document.
    Openapi,
    /// Print the running server's address (`http://IP:PORT`), read from its data dir.
    Url(LocalArgs),
    /// Print the token a client of the running server sends (from its data dir), or manage the
    /// server's tokens: `create`, `list`, `revoke`.
    Token(TokenArgs),
    /// What runs first inside an agent's box (the server starts it there; not for people).
    #[command(hide = true)]
    SandboxInit(SandboxInitArgs),
}

/// `ensemble sandbox-init --forward ADDR=SOCKET… -- PROGRAM ARGS…`.
#[derive(Clone, Debug, Args)]
pub struct SandboxInitArgs {
    /// A loopback address to listen on inside, joined to the Unix socket the server serves it on.
    #[arg(long = "forward")]
    pub forward: Vec<String>,
    /// The agent's command line.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// `ensemble token [create|list|revoke]`.
#[derive(Clone, Debug, Args)]
pub struct TokenArgs {
    #[command(flatten)]
    pub local: LocalArgs,
    #[command(subcommand)]
    pub action: Option<TokenAction>,
}

#[derive(Clone, Debug, Subcommand)]
pub enum TokenAction {
    /// Make a token; prints its secret (shown only this once) on stdout.
    Create {
        /// viewer, operator, approver or admin.
        #[arg(long)]
        role: String,
        /// Room ids it reaches, comma separated, or `*` for every room.
        #[arg(long, value_delimiter = ',', required = true)]
        rooms: Vec<String>,
        /// Its name (shown as who did what it does).
        #[arg(long, default_value = "cli")]
        name: String,
        /// How long it works: a number with s, m, h or d (`7d`, `12h`) [default: until revoked].
        #[arg(long, value_parser = parse_ttl)]
        ttl: Option<u64>,
        /// Also draw the console URL as a QR code (on stderr), for a phone's camera.
        #[arg(long)]
        qr: bool,
    },
    /// List the tokens (no secrets).
    List {
        /// The API's JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token at once (its WebSockets close).
    Revoke {
        /// The token's id (`tok_…`, from `list`).
        id: String,
    },
}

/// `7d`, `12h`, `30m`, `90s` or plain seconds, as seconds.
pub fn parse_ttl(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{s}` is not a duration like 7d, 12h, 30m or 90s"))?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{s}`: the unit is one of s, m, h, d")),
    };
    match n.checked_mul(unit) {
        Some(0) | None => Err(format!("`{s}` is not a positive duration")),
        Some(secs) => Ok(secs),
    }
}

/// Which server a local subcommand (`url`, `token`) asks: the one running on this data dir.
#[derive(Clone, Debug, Args)]
pub struct LocalArgs {
    /// The server's data dir [default: $XDG_DATA_HOME/ensemble].
    #[arg(long, env = "ENSEMBLE_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,
}

impl LocalArgs {
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(default_data_dir)
    }
}

/// `$XDG_DATA_HOME/ensemble`, or `~/.local/share/ensemble`.
pub fn default_data_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("ensemble");
    }
    home_dir().join(".local").join("share").join("ensemble")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Whether log lines carry colour escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogColor {
    /// When stderr is a terminal and `NO_COLOR` is not set.
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SqliteSync {
    Normal,
    Full,
}

#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on, `IP:PORT` or `HOST:PORT` (`localhost:7878`; a name is resolved at
    /// start, IPv4 first); port 0 picks a free port.
    #[arg(help_heading = "Essentials", long, env = "ENSEMBLE_LISTEN", default_value = "127.0.0.1:7878", value_parser = parse_listen)]
    pub listen: SocketAddr,

    /// Where the database and managed state live [default: $XDG_DATA_HOME/ensemble].
    #[arg(help_heading = "Essentials", long, env = "ENSEMBLE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,

    /// The provider of sessions started without one.
    #[arg(help_heading = "Essentials", long, env = "ENSEMBLE_DEFAULT_PROVIDER", default_value = "scripted")]
    pub default_provider: String,

    /// How the logs (on stderr) are written; `RUST_LOG` sets what is logged (default: info).
    #[arg(help_heading = "Essentials", long, env = "ENSEMBLE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Colour in the text logs.
    #[arg(help_heading = "Essentials", long, env = "ENSEMBLE_LOG_COLOR", value_enum, default_value_t = LogColor::Auto)]
    pub log_color: LogColor,

    /// File holding the bearer token (absolute path; trimmed; at least 32 bytes) [default: a token
    /// generated at first start into DATA_DIR/token, mode 0600]. Required for a non-loopback --listen.
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,

    /// Accept a --token-file (and --cluster-secret-file, --nats-credentials) that group or others
    /// may read (refused otherwise): for secret mounts (Docker, Kubernetes) that cannot be 0600 and
    /// owned by the server's user.
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_ALLOW_SHARED_TOKEN_FILE", value_parser = clap::builder::BoolishValueParser::new())]
    pub allow_shared_token_file: bool,

    /// Host names (or IPs) accepted in the `Host` header besides loopback ones and the listen IP,
    /// comma separated; `*` accepts any (only behind a proxy that checks Host).
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,

    /// Origins (`scheme://host[:port]`) allowed besides the server's own, comma separated.
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_TRUSTED_ORIGINS", value_delimiter = ',')]
    pub trusted_origins: Vec<String>,

    /// Directories a session's `cwd` must be inside, `:`-separated [default: the user's home].
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_WORKSPACE_ROOTS", value_delimiter = ':')]
    pub workspace_roots: Vec<PathBuf>,

    /// Working directory of sessions started without `cwd` [default: the user's home].
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_DEFAULT_CWD")]
    pub default_cwd: Option<PathBuf>,

    /// Most managed tokens valid at once (`POST /v1/tokens` beyond it: 409 `too_many_tokens`).
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_MAX_TOKENS", default_value_t = 1000)]
    pub max_tokens: usize,

    /// Revoked and expired tokens stay listed this long after they ended, then are removed
    /// (checked hourly, or as often as this if shorter).
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_TOKEN_RETENTION_SECS", default_value_t = 30 * 86_400, value_parser = clap::value_parser!(u64).range(1..))]
    pub token_retention_secs: u64,

    /// Audit records older than this many days are removed (checked hourly).
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_AUDIT_RETENTION_DAYS", default_value_t = 90)]
    pub audit_retention_days: u64,

    /// Refused requests kept in the audit trail per token (and for those without a valid token,
    /// together) a minute, after a burst of --audit-refusal-burst; the rest are only counted.
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_AUDIT_REFUSALS_PER_MIN", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..))]
    pub audit_refusals_per_min: u32,

    /// Refused requests of one token (or without a valid token) kept in a row before
    /// --audit-refusals-per-min applies.
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_AUDIT_REFUSAL_BURST", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..))]
    pub audit_refusal_burst: u32,

    /// A warning about a refused Host, Origin or request target is logged at most once per this
    /// many seconds for each kind; the next one says how many were held back.
    #[arg(help_heading = "Security", long, env = "ENSEMBLE_REFUSAL_LOG_INTERVAL_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub refusal_log_interval_secs: u64,

    /// Every registered provider's options (see `ensemble_adapters::registry`).
    #[command(flatten, next_help_heading = "Providers")]
    pub providers: ProviderOptions,

    /// The box every provider's agents run in.
    #[command(flatten, next_help_heading = "Isolation")]
    pub isolation: crate::isolation::IsolationArgs,

    /// Largest accepted request body (413 beyond).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_BODY_BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Largest turn input text.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_INPUT_BYTES", default_value_t = 1024 * 1024)]
    pub max_input_bytes: usize,

    /// Tokens (in and out) a session may spend unless it has a budget of its own (0: no limit).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_SESSION_MAX_TOKENS", default_value_t = 0)]
    pub session_max_tokens: u64,

    /// Cost (in the agent's currency) a session may spend unless it has a budget of its own (0: no
    /// limit).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_SESSION_MAX_COST", default_value_t = 0.0, value_parser = cost)]
    pub session_max_cost: f64,

    /// Tokens a room's sessions may spend together unless it has a budget of its own (0: no limit).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_ROOM_MAX_TOKENS", default_value_t = 0)]
    pub room_max_tokens: u64,

    /// Cost a room's sessions may spend together unless it has a budget of its own (0: no limit).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_ROOM_MAX_COST", default_value_t = 0.0, value_parser = cost)]
    pub room_max_cost: f64,

    /// An interaction unanswered this long is announced as `session.needs_attention` (once; 0:
    /// never).
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_ATTENTION_AFTER_SECS", default_value_t = 30)]
    pub attention_after_secs: u64,

    /// Deliver webhooks to any address: this host's own, loopback, private, link-local, CGNAT and
    /// the other special-purpose ranges too (refused by default: a webhook URL must not reach
    /// into the host or its network).
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,

    /// Longest one webhook delivery attempt may take, connecting and answering included.
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub webhook_timeout_secs: u64,

    /// How long after its event a failing delivery is tried again before it is given up.
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_RETRY_SECS", default_value_t = 86_400)]
    pub webhook_retry_secs: u64,

    /// The first retry's delay (milliseconds); each next one doubles, with jitter.
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_BACKOFF_MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_backoff_ms: u64,

    /// The longest delay between retries (seconds).
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_BACKOFF_MAX_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_backoff_max_secs: u64,

    /// Deliveries in flight per webhook (a slow receiver holds back only its own).
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_CONCURRENCY", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub webhook_concurrency: u64,

    /// Most webhooks.
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_MAX_WEBHOOKS", default_value_t = 100)]
    pub max_webhooks: usize,

    /// How long settled (delivered or failed) deliveries are kept for `GET …/deliveries`.
    #[arg(help_heading = "Webhooks", long, env = "ENSEMBLE_WEBHOOK_KEEP_SECS", default_value_t = 604_800)]
    pub webhook_keep_secs: u64,

    /// Most follow-ups one session's queue holds (`POST …/turns` with `queue: true`; beyond it 409
    /// `queue_full`).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_QUEUED_TURNS", default_value_t = 32)]
    pub max_queued_turns: usize,

    /// Most bytes of input one session's queue holds (its turns' inputs as JSON, images by
    /// reference; beyond it 409 `queue_full`).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_QUEUED_BYTES", default_value_t = 4 << 20)]
    pub max_queued_bytes: usize,

    /// How much of a queued turn's text a `queue.updated` event shows, in bytes (`GET …/queue` has
    /// all of it).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_QUEUE_PREVIEW_BYTES", default_value_t = 256)]
    pub queue_preview_bytes: usize,

    /// Largest image of a turn (decoded bytes; sent as base64 it also counts against
    /// --max-body-bytes).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_IMAGE_BYTES", default_value_t = 5 << 20)]
    pub max_image_bytes: u64,

    /// Most bytes of images and embedded files one turn carries.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_TURN_ATTACHMENT_BYTES", default_value_t = 16 << 20)]
    pub max_turn_attachment_bytes: u64,

    /// A file of a turn is given to the agent with its content up to this size, larger ones as a
    /// link to the file only.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_EMBEDDED_FILE_BYTES", default_value_t = 256 << 10)]
    pub max_embedded_file_bytes: u64,

    /// Open HTTP connections (room WebSockets are counted by --max-ws-connections instead). At the
    /// cap the oldest connection without a request in progress is closed to make room; when every
    /// one is busy, new connections wait in the listen backlog. Lowered to half the open-file limit
    /// if that is smaller.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,

    /// Open room WebSockets in total (503 + Retry-After beyond).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_WS_CONNECTIONS", default_value_t = 1024)]
    pub max_ws_connections: usize,

    /// Open WebSockets per room (503 + Retry-After beyond).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_WS_PER_ROOM", default_value_t = 128)]
    pub max_ws_per_room: usize,

    /// Open room WebSockets per token, in all rooms (429 + Retry-After beyond).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_WS_PER_TOKEN", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_ws_per_token: u64,

    /// `?wait=` long polls one token may have waiting at once; beyond it a long poll answers at
    /// once with the session as it is (header `Ensemble-Wait: limited`).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_LONG_POLLS_PER_TOKEN", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_long_polls_per_token: u64,

    /// Sessions kept in total, side conversations included (429 beyond; close some to start more).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_SESSIONS", default_value_t = 4096)]
    pub max_sessions: usize,

    /// Sessions kept per room (429 beyond).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_SESSIONS_PER_ROOM", default_value_t = 256)]
    pub max_sessions_per_room: usize,

    /// Live provider sessions (processes) at once; starting or resuming beyond is refused with
    /// 503 and Retry-After.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_LIVE_SESSIONS", default_value_t = 32)]
    pub max_live_sessions: usize,

    /// Largest event payload (serialised), whoever made the event (an agent, a client's request, the
    /// server): a larger one has its longest strings cut and its longest lists shortened until it
    /// fits (at least 4096).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_MAX_EVENT_BYTES", default_value_t = 1024 * 1024)]
    pub max_event_bytes: usize,

    /// A live session idle this long (no turn, no pending interaction, no open side) is released;
    /// 0 = never.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_IDLE_RELEASE_SECS", default_value_t = 1800)]
    pub idle_release_secs: u64,

    /// Largest message a WebSocket client may send.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_WS_MAX_MESSAGE_BYTES", default_value_t = 64 * 1024)]
    pub ws_max_message_bytes: usize,

    /// Frames a WebSocket client may fall behind before it gets `resync` and is closed.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_WS_QUEUE", default_value_t = 4096)]
    pub ws_queue: usize,

    /// Bytes of frames a WebSocket client may fall behind before it gets `resync` and is closed
    /// (what its room's ring keeps for it: with large events the frame count alone would let one
    /// slow client hold up to `--ws-queue` × `--max-event-bytes`).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_WS_QUEUE_BYTES", default_value_t = 16 * 1024 * 1024)]
    pub ws_queue_bytes: usize,

    /// Most bytes of events one page holds (`GET …/events`, a side's events, an export's and a
    /// WebSocket's reads of the log); a page always holds one event, however large, and `next`
    /// says where to go on.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_EVENTS_PAGE_BYTES", default_value_t = 4 << 20)]
    pub events_page_bytes: usize,

    /// Events a side conversation keeps in memory for replay.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_SIDE_LOG_EVENTS", default_value_t = 10_000)]
    pub side_log_events: usize,

    /// Bytes of events a side conversation keeps in memory for replay (the newest is always kept).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_SIDE_LOG_BYTES", default_value_t = 16 << 20)]
    pub side_log_bytes: usize,

    /// Bytes of events an agent may send while its session starts, resumes or opens (they wait
    /// for the session's announcement); later ones are dropped, and a warning notice says so.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_START_BUFFER_BYTES", default_value_t = 16 << 20)]
    pub start_buffer_bytes: usize,

    /// Events a room export (`GET …/export`) reads from the store at a time, and so about what
    /// one export holds in memory.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_EXPORT_PAGE_EVENTS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub export_page_events: u64,

    /// Longest a REST request may take (408 beyond).
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_REQUEST_TIMEOUT_SECS", default_value_t = 120)]
    pub request_timeout_secs: u64,

    /// Longest a client may take to send a request's headers (from the connection's start, or from
    /// the end of the previous response); the connection is closed beyond.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_HEADER_READ_TIMEOUT_SECS", default_value_t = 10)]
    pub header_read_timeout_secs: u64,

    /// An HTTP connection idle this long between requests is closed.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_KEEP_ALIVE_IDLE_SECS", default_value_t = 5)]
    pub keep_alive_idle_secs: u64,

    /// Longest a lifecycle operation waits for its session's lock.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_LOCK_TIMEOUT_MS", default_value_t = 10_000)]
    pub lock_timeout_ms: u64,

    /// How long close waits for a canceled turn to end before forcing it.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_CLOSE_GRACE_MS", default_value_t = 3_000)]
    pub close_grace_ms: u64,

    /// On SIGTERM/SIGINT: how long `/readyz` answers 503 (and new work is refused) before the
    /// listener stops.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_DRAIN_MS", default_value_t = 250)]
    pub drain_ms: u64,

    /// Longest the shutdown waits for open requests and connections.
    #[arg(help_heading = "Limits", long, env = "ENSEMBLE_SHUTDOWN_TIMEOUT_SECS", default_value_t = 10)]
    pub shutdown_timeout_secs: u64,

    /// Events kept per room; older ones are pruned (0 = keep all).
    #[arg(help_heading = "Storage", long, env = "ENSEMBLE_RETENTION_EVENTS", default_value_t = 100_000)]
    pub retention_events: u64,

    /// Events older than this many seconds are pruned (0 = no age limit).
    #[arg(help_heading = "Storage", long, env = "ENSEMBLE_RETENTION_SECS", default_value_t = 0)]
    pub retention_secs: u64,

    /// `postgres://user:password@host:port/db`: keep sessions, room logs, goals and provider state in
    /// PostgreSQL instead of the SQLite file in the data dir (migrations are applied at start).
    /// Without `--nats-url`, one server per database (docs/several-hosts.md). The
    /// URL may carry credentials: it is never logged.
    #[arg(help_heading = "Storage", long, env = "ENSEMBLE_DATABASE_URL", value_parser = parse_database_url, hide_env_values = true)]
    pub database_url: Option<String>,

    /// SQLite durability: `normal` survives a killed process, `full` also a power loss.
    #[arg(help_heading = "Storage", long, env = "ENSEMBLE_SQLITE_SYNC", value_enum, default_value_t = SqliteSync::Normal)]
    pub sqlite_sync: SqliteSync,

    /// The git binary worktrees and checkpoints run (a name is looked up on PATH). Without a
    /// working git, worktree sessions are refused (503 `git_unavailable`) and nothing is
    /// checkpointed.
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_GIT_BIN", default_value = "git")]
    pub git_bin: PathBuf,

    /// Where worktree sessions' worktrees are made [default: DATA_DIR/worktrees].
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_WORKTREES_DIR")]
    pub worktrees_dir: Option<PathBuf>,

    /// A closed session's worktree is removed this long after the close (its branch kept unless
    /// merged); 0: kept until `DELETE …?purge=true`. Seconds.
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_WORKTREE_RETENTION_SECS", default_value_t = 0)]
    pub worktree_retention_secs: u64,

    /// Files larger than this are left out of checkpoints (and named in `turn.changes`). Bytes.
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_CHECKPOINT_MAX_FILE_BYTES", default_value_t = 64 << 20)]
    pub checkpoint_max_file_bytes: u64,

    /// The longest unified diff `…/changes` answers with; longer ones are cut and flagged. Bytes.
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_MAX_DIFF_BYTES", default_value_t = 1 << 20)]
    pub max_diff_bytes: usize,

    /// The most of a file `GET …/files/content` shows (the rest is cut, and flagged). Bytes.
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_MAX_FILE_VIEW_BYTES", default_value_t = 1 << 20)]
    pub max_file_view_bytes: u64,

    /// Longest one git command may run before it is killed. Seconds.
    #[arg(help_heading = "Workspaces", long, env = "ENSEMBLE_GIT_TIMEOUT_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub git_timeout_secs: u64,

    /// After a commit failed (a full disk, a database gone), how often the store is tried again;
    /// once it writes, the sessions that lost events meanwhile are repaired. Milliseconds.
    #[arg(help_heading = "Storage", long, env = "ENSEMBLE_STORE_RETRY_MS", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub store_retry_ms: u64,

    /// After a failed commit, the SQLite store counts as writing again only once its data dir's
    /// file system has this many bytes free (small writes land on a full disk where large ones
    /// fail). Bytes.
    #[arg(help_heading = "Storage", long, env = "ENSEMBLE_STORE_MIN_FREE_BYTES", default_value_t = 16 << 20)]
    pub store_min_free_bytes: u64,

    /// `nats://host:port`: join the other hosts on this NATS server (needs `--database-url`;
    /// docs/several-hosts.md). Room frames and forwarded requests travel over it.
    #[arg(
        help_heading = "Several hosts",
        long,
        env = "ENSEMBLE_NATS_URL",
        requires = "database_url",
        hide_env_values = true
    )]
    pub nats_url: Option<String>,

    /// How this host authenticates to the NATS server (absolute path; the token file's permission
    /// checks): a NATS `.creds` file (user JWT and nkey seed), or `key=value` lines: `user=` and
    /// `password=`, or `token=`, or `nkey=` (a seed). Without it, the connection is anonymous.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_NATS_CREDENTIALS", requires = "nats_url")]
    pub nats_credentials: Option<PathBuf>,

    /// The secret every host shares (absolute path; at least 32 bytes, trimmed; the token file's
    /// permission checks); required with `--nats-url`. Every forwarded request, its answer and every
    /// room frame carries a MAC keyed by it; a host acts on nothing without a valid one.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_CLUSTER_SECRET_FILE", requires = "nats_url")]
    pub cluster_secret_file: Option<PathBuf>,

    /// How far a forwarded request's or a room frame's timestamp may be from this host's clock
    /// (either way) before it is refused as stale; forwarded requests' nonces are remembered for
    /// twice as long, so a captured request cannot be replayed. Seconds.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_CLUSTER_MAX_SKEW_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub cluster_max_skew_secs: u64,

    /// Nonces of forwarded requests remembered at once (within twice `--cluster-max-skew-secs`);
    /// when full, further forwarded requests are refused (503 on the forwarding host) until old
    /// ones expire.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_CLUSTER_REPLAY_CACHE", default_value_t = 131_072, value_parser = clap::value_parser!(u64).range(1..))]
    pub cluster_replay_cache: u64,

    /// This host's name among the hosts (unique; default: the hostname plus a random suffix). Keep
    /// it across restarts to recover this host's own sessions at once instead of after its lease.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_HOST_ID", value_parser = parse_host_id)]
    pub host_id: Option<String>,

    /// Seconds a host's lease lasts without renewal (renewed every third of it); when it expires,
    /// another host takes the host's sessions over.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_LEASE_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(2..=3600))]
    pub lease_secs: u64,

    /// Frames queued for NATS before this host drops some (other hosts then fill the gap from the
    /// database).
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_NATS_OUTBOX", default_value_t = 65_536)]
    pub nats_outbox: usize,

    /// How often a host compares the rooms its sockets watch with the database's heads, to deliver
    /// frames NATS lost (it delivers at most once). Milliseconds.
    #[arg(help_heading = "Several hosts", long, env = "ENSEMBLE_GAP_SWEEP_MS", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(10..))]
    pub gap_sweep_ms: u64,

    /// Longest the store writer waits to group more work into one commit, when work is piling up
    /// (an operation with nothing queued behind it commits at once; a lull of a quarter of it ends
    /// the wait). 0, the default: a group is whatever queued during the previous commit, which
    /// measured faster on every bench (docs/performance/log.md).
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_COMMIT_LINGER_MS", default_value_t = 0)]
    pub commit_linger_ms: u64,

    /// Linger before every commit, also when nothing is queued: fewer commits (less CPU) at
    /// moderate event rates, for a few ms more latency on every event.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_COMMIT_LINGER_WHEN_IDLE", value_parser = clap::builder::BoolishValueParser::new())]
    pub commit_linger_when_idle: bool,

    /// Most events in one commit.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_COMMIT_MAX_BATCH", default_value_t = 512)]
    pub commit_max_batch: usize,

    /// Write operations queued for the store before publishers wait.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_STORE_QUEUE", default_value_t = 4096)]
    pub store_queue: usize,

    /// Bytes of agent output queued for the store before its sessions wait (the count alone would
    /// let large events pile up in memory while the writer is behind).
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_STORE_QUEUE_BYTES", default_value_t = 16 << 20)]
    pub store_queue_bytes: usize,

    /// Store reads (room logs, session lists, `hello` snapshots) run on this many threads of their
    /// own, never on the pool anything else can fill; with PostgreSQL, the idle read connections kept.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_STORE_READERS", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub store_readers: u64,

    /// Bytes of the SQLite WAL written with zeros ahead of its last frame, so commits overwrite
    /// pages the file has instead of growing it (docs/performance/log.md); 0 turns it off. Default:
    /// 256 KiB, or 0 when the data dir is on a copy-on-write file system (btrfs, ZFS, bcachefs),
    /// where an overwrite allocates anew and it measured no gain.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_SQLITE_WAL_PREFILL_BYTES")]
    pub sqlite_wal_prefill_bytes: Option<u64>,

    /// Bytes buffered for a WebSocket peer that does not read before the connection is dropped.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_WS_WRITE_BUFFER_BYTES", default_value_t = 4 * 1024 * 1024)]
    pub ws_write_buffer_bytes: usize,

    /// Interval of server pings on WebSockets.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_WS_PING_SECS", default_value_t = 20)]
    pub ws_ping_secs: u64,

    /// A WebSocket peer silent for this long is closed.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_WS_IDLE_SECS", default_value_t = 60)]
    pub ws_idle_secs: u64,

    /// Longest a write to a WebSocket peer may take before the peer counts as dead.
    #[arg(help_heading = "Tuning", long, env = "ENSEMBLE_WS_WRITE_TIMEOUT_SECS", default_value_t = 10)]
    pub ws_write_timeout_secs: u64,

    /// Test-only routes (a handler that panics), for the server's own tests.
    #[arg(long, env = "ENSEMBLE_TEST_HOOKS", hide = true)]
    pub test_hooks: bool,
}

impl ServeArgs {
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(default_data_dir)
    }

    pub fn default_cwd(&self) -> PathBuf {
        self.default_cwd.clone().unwrap_or_else(home_dir)
    }

    pub fn workspace_roots(&self) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = self.workspace_roots.iter().filter(|p| !p.as_os_str().is_empty()).cloned().collect();
        if roots.is_empty() { vec![home_dir()] } else { roots }
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
            max_per_token: usize::try_from(self.max_ws_per_token).unwrap_or(usize::MAX),
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
    pub max_per_token: usize,
}

pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
}

/// A host id goes into NATS subjects: letters, digits, `-` and `_`, at most 64 bytes.
fn parse_host_id(v: &str) -> Result<String, String> {
    if !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        Ok(v.to_owned())
    } else {
        Err("expected 1 to 64 letters, digits, `-` or `_`".into())
    }
}

/// Only PostgreSQL URLs: anything else is refused at start with a clear message.
/// `--listen`: a socket address, or a host name and port resolved now (its first IPv4 address, else
/// its first address), so `localhost:7878` works as people type it.
fn parse_listen(v: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = v.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let usage = "expected IP:PORT or HOST:PORT, e.g. 127.0.0.1:7878 or localhost:7878";
    let Some((host, port)) = v.rsplit_once(':') else { return Err(usage.into()) };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(usage.into());
    }
    let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(v)
        .map_err(|e| format!("cannot resolve `{host}`: {e} ({usage})"))?
        .collect();
    addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).copied().ok_or_else(|| format!("`{host}` has no address"))
}

fn parse_database_url(v: &str) -> Result<String, String> {
    if v.starts_with("postgres://") || v.starts_with("postgresql://") {
        Ok(v.to_owned())
    } else {
        Err("expected a postgres:// (or postgresql://) URL; leave it unset for the embedded SQLite store".into())
    }
}

/// A cost limit: a finite number, 0 or more.
fn cost(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(c) if c.is_finite() && c >= 0.0 => Ok(c),
        _ => Err(format!("`{s}` is not a cost (a number, 0 or more)")),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
