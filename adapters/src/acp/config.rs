//! The providers file (`--providers FILE`): the ACP agents Ensemble runs, validated at start with
//! errors that name the file and the line.
//!
//! ```toml
//! [[provider]]
//! id = "codex-acp"                 # what a session's "provider" names
//! kind = "acp"
//! command = "/usr/local/bin/codex-acp"
//! args = ["-c", 'model="gpt-5.5"']
//! env = { OPENAI_API_KEY_FILE = "/run/secrets/openai" }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::kit::binary::which;
use crate::kit::jsonrpc::RpcConfig;
use crate::kit::sandbox::{Declared, IsolationEnv};
use ensemble_core::isolation::ProviderIsolation;

/// The provider kinds a providers file may name.
pub const KINDS: &[&str] = &["acp"];

/// How to run one ACP agent.
#[derive(Clone, Debug)]
pub struct AcpConfig {
    /// The provider id sessions name.
    pub id: String,
    /// Shown in `GET /v1/providers` (default: from the agent's `initialize`, else the id).
    pub name: Option<String>,
    /// The agent executable (resolved on PATH when it has no `/`).
    pub command: PathBuf,
    pub args: Vec<String>,
    /// Added to the explicit environment every agent process gets.
    pub env: Vec<(String, String)>,
    /// MCP servers passed to `session/new` and `session/load`.
    pub mcp_servers: Vec<McpServerConfig>,
    /// Deadline of `initialize`, `session/new`, `session/load` and `session/resume`.
    pub start_timeout: Duration,
    /// Deadline of the other calls (`session/set_mode`, `session/close`, …).
    pub call_timeout: Duration,
    /// Longest a `session/prompt` (one turn) may run before it is cancelled and failed.
    pub turn_timeout: Duration,
    /// After stdin closes, how long the agent gets to exit by itself before SIGTERM.
    pub stop_grace: Duration,
    /// After SIGTERM, how long before SIGKILL.
    pub term_grace: Duration,
    /// Largest file `fs/read_text_file` returns.
    pub max_file_bytes: u64,
    /// Most file requests of one session in flight at once; more are refused at once.
    pub max_file_requests: usize,
    /// Longest a file request may take before the agent is told it failed.
    pub file_timeout: Duration,
    /// What one session's terminals (`terminal/*`) may print together in a second; the rest is
    /// dropped (see `terminal::OutputBudget`).
    pub terminal_output_bytes_per_sec: u64,
    /// The server's own files, which no file request may touch (set by the server).
    pub guard: ensemble_files::Guard,
    pub rpc: RpcConfig,
    /// Held by a start until one start of the provider has answered `initialize` (see `spawn`).
    pub first_start: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Its `[provider.isolation]`, as written.
    pub declared: Declared,
    /// The machine's side of isolation and the server's defaults (set by the server).
    pub sandboxes: IsolationEnv,
}

impl AcpConfig {
    /// What the agent's box holds besides the workspace: the directories its environment names
    /// as its own (`HOME=…`, `XDG_*_HOME=…`), and its program's install.
    pub fn extras(&self) -> crate::kit::sandbox::Extras {
        crate::kit::sandbox::Extras::from_env(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())), &self.command)
    }

    /// The provider's isolation: what its entry declares over what its agent is known to need
    /// and the server's defaults.
    pub fn isolation(&self) -> ProviderIsolation {
        self.sandboxes.for_provider(&self.declared, super::quirks::known_for_command(&self.command), true)
    }
}

impl AcpConfig {
    pub fn new(id: impl Into<String>, command: impl Into<PathBuf>) -> Self {
        Self {
            id: id.into(),
            name: None,
            command: command.into(),
            args: Vec::new(),
            env: Vec::new(),
            mcp_servers: Vec::new(),
            start_timeout: Duration::from_secs(90),
            call_timeout: Duration::from_secs(30),
            turn_timeout: Duration::from_secs(6 * 3600),
            stop_grace: Duration::from_secs(1),
            term_grace: Duration::from_secs(2),
            max_file_bytes: 8 * 1024 * 1024,
            max_file_requests: 8,
            file_timeout: Duration::from_secs(30),
            terminal_output_bytes_per_sec: super::terminal::DEFAULT_OUTPUT_BYTES_PER_SEC,
            guard: ensemble_files::Guard::default(),
            rpc: RpcConfig::default(),
            first_start: Default::default(),
            declared: Declared::default(),
            sandboxes: IsolationEnv::off(),
        }
    }
}

/// An MCP server (stdio) the agent is asked to connect to.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub name: String,
    pub command: PathBuf,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    provider: Vec<Spanned<Entry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: Spanned<String>,
    kind: Spanned<String>,
    #[serde(default)]
    name: Option<String>,
    command: Spanned<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Option<Spanned<BTreeMap<String, String>>>,
    #[serde(default)]
    mcp_server: Vec<Spanned<McpServerConfig>>,
    #[serde(default)]
    start_timeout_secs: Option<Spanned<u64>>,
    #[serde(default)]
    call_timeout_secs: Option<Spanned<u64>>,
    #[serde(default)]
    turn_timeout_secs: Option<Spanned<u64>>,
    #[serde(default)]
    max_file_bytes: Option<Spanned<u64>>,
    #[serde(default)]
    max_file_requests: Option<Spanned<u64>>,
    #[serde(default)]
    file_timeout_secs: Option<Spanned<u64>>,
    #[serde(default)]
    terminal_output_bytes_per_sec: Option<Spanned<u64>>,
    #[serde(default)]
    isolation: Option<Spanned<Declared>>,
}

/// `[provider.isolation]` checked: endpoints that are `host:port`, limits of at least 1.
fn check_declared(d: &Declared) -> Result<(), String> {
    if let Some(ensemble_core::isolation::NetworkAccess::Endpoints(list)) = &d.network {
        for e in list {
            ensemble_isolation::Endpoint::parse(e).map_err(|why| format!("isolation.network: {why}"))?;
        }
    }
    for (name, v) in [("memory_mb", d.memory_mb), ("max_processes", d.max_processes)] {
        if v == Some(0) {
            return Err(format!("isolation.{name} must be at least 1"));
        }
    }
    for h in d.home.iter().flatten() {
        if !(h.starts_with("~/") || h.starts_with('/')) {
            return Err(format!("isolation.home: `{h}` must start with ~/ (the real home) or be absolute"));
        }
    }
    Ok(())
}

/// The least `terminal_output_bytes_per_sec`: below it even a command's error message is cut.
const MIN_TERMINAL_OUTPUT_BYTES_PER_SEC: u64 = 1024;

/// Environment variables a providers file may not set: the server marks its agents with it to
/// find them after a crash, so an agent that overrode it would escape the start-up reaping.
const RESERVED_ENV: &[&str] = &["ENSEMBLE_RUN_ID"];

/// Environment variables a providers file may set, but that change which code the agent runs:
/// logged at start, so the operator sees them.
fn notable_env(key: &str) -> bool {
    key == "PATH" || key.starts_with("LD_")
}

/// The providers file is unreadable or invalid; the message names the file and the line.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Reads and validates a providers file. `reserved`: ids already taken (the built-in providers).
pub fn load(path: &Path, reserved: &[&str], rpc: &RpcConfig) -> Result<Vec<AcpConfig>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read the providers file {}: {e}", path.display())))?;
    parse(&text, reserved, rpc).map_err(|(line, message)| match line {
        Some(line) => ConfigError(format!("{}:{line}: {message}", path.display())),
        None => ConfigError(format!("{}: {message}", path.display())),
    })
}

/// Where a `[provider]` or `[provider.mcp_server]` header (single brackets) starts, and its name.
fn single_table_header(text: &str) -> Option<(usize, &'static str)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        let t = t.split('#').next().unwrap_or_default().trim();
        let name = match t {
            "[provider]" => "provider",
            "[provider.mcp_server]" => "provider.mcp_server",
            _ => "",
        };
        if !name.is_empty() {
            return Some((offset + line.len() - line.trim_start().len(), name));
        }
        offset += line.len();
    }
    None
}

/// Parses a providers file's text; an error is (1-based line, message).
pub fn parse(text: &str, reserved: &[&str], rpc: &RpcConfig) -> Result<Vec<AcpConfig>, (Option<usize>, String)> {
    let line_of = |offset: usize| text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1;
    // `[provider]` (one table) where `[[provider]]` (an entry of a list) is meant: TOML's own
    // error ("invalid type: map, expected a sequence") does not say what to write instead.
    if let Some((at, name)) = single_table_header(text) {
        return Err((
            Some(line_of(at)),
            format!("write `[[{name}]]` (two brackets: one entry of a list), not `[{name}]`"),
        ));
    }
    let file: File = toml::from_str(text).map_err(|e| (e.span().map(|s| line_of(s.start)), e.message().to_owned()))?;
    let mut out: Vec<AcpConfig> = Vec::new();
    for entry in file.provider {
        let entry = entry.into_inner();
        let at = |s: &std::ops::Range<usize>| Some(line_of(s.start));
        let id = entry.id.get_ref();
        if let Err(e) = ensemble_core::limits::check_id("id", id) {
            return Err((at(&entry.id.span()), format!("invalid provider id `{id}`: {}", e.message)));
        }
        if reserved.contains(&id.as_str()) {
            return Err((at(&entry.id.span()), format!("the provider id `{id}` is taken by a built-in provider")));
        }
        if out.iter().any(|c| c.id == *id) {
            return Err((at(&entry.id.span()), format!("the provider id `{id}` is defined twice")));
        }
        let kind = entry.kind.get_ref();
        if !KINDS.contains(&kind.as_str()) {
            return Err((
                at(&entry.kind.span()),
                format!("unknown provider kind `{kind}` (known: {})", KINDS.join(", ")),
            ));
        }
        let command = entry.command.get_ref().trim();
        if command.is_empty() {
            return Err((at(&entry.command.span()), "`command` must not be empty".to_owned()));
        }
        let command = if command.contains('/') {
            // A relative path would be found from each session's cwd: a file of the repository
            // the agent works on.
            if !command.starts_with('/') {
                return Err((
                    at(&entry.command.span()),
                    format!("`command` must be an absolute path or a name found on PATH, not the relative `{command}`"),
                ));
            }
            PathBuf::from(command)
        } else {
            // Resolved now, so availability reports what will be run; a name not on PATH stays as
            // it is and the provider is unavailable until it appears.
            which(command).unwrap_or_else(|| PathBuf::from(command))
        };
        if let Some(env) = &entry.env {
            for key in env.get_ref().keys() {
                if key.is_empty() || key.contains(['=', '\0']) || key.contains(char::is_whitespace) {
                    return Err((at(&env.span()), format!("invalid environment variable name `{key}`")));
                }
                if RESERVED_ENV.contains(&key.as_str()) {
                    return Err((at(&env.span()), format!("`{key}` is set by the server and may not be overridden")));
                }
                if notable_env(key) {
                    tracing::warn!(provider = %id, variable = %key, "the providers file overrides {key} for this agent");
                }
            }
        }
        let mut c = AcpConfig::new(id.clone(), command);
        c.name = entry.name.filter(|n| !n.trim().is_empty());
        c.args = entry.args;
        c.env = entry.env.map(|e| e.into_inner().into_iter().collect()).unwrap_or_default();
        c.mcp_servers = Vec::with_capacity(entry.mcp_server.len());
        for m in entry.mcp_server {
            let span = m.span();
            let m = m.into_inner();
            if !m.command.is_absolute() && m.command.components().count() > 1 {
                return Err((
                    at(&span),
                    format!("the MCP server `{}` must have an absolute `command` or a name found on PATH", m.name),
                ));
            }
            c.mcp_servers.push(m);
        }
        let secs = |v: Option<Spanned<u64>>, name: &str, default: Duration| match v {
            None => Ok(default),
            Some(s) if *s.get_ref() == 0 => Err((at(&s.span()), format!("`{name}` must be at least 1"))),
            Some(s) => Ok(Duration::from_secs(*s.get_ref())),
        };
        c.start_timeout = secs(entry.start_timeout_secs, "start_timeout_secs", c.start_timeout)?;
        c.call_timeout = secs(entry.call_timeout_secs, "call_timeout_secs", c.call_timeout)?;
        c.turn_timeout = secs(entry.turn_timeout_secs, "turn_timeout_secs", c.turn_timeout)?;
        if let Some(m) = entry.max_file_bytes {
            c.max_file_bytes = *m.get_ref();
        }
        if let Some(m) = entry.max_file_requests {
            c.max_file_requests = match usize::try_from(*m.get_ref()) {
                Ok(0) | Err(_) => return Err((at(&m.span()), "`max_file_requests` must be at least 1".to_owned())),
                Ok(n) => n,
            };
        }
        c.file_timeout = secs(entry.file_timeout_secs, "file_timeout_secs", c.file_timeout)?;
        if let Some(m) = entry.terminal_output_bytes_per_sec {
            if *m.get_ref() < MIN_TERMINAL_OUTPUT_BYTES_PER_SEC {
                return Err((
                    at(&m.span()),
                    format!("`terminal_output_bytes_per_sec` must be at least {MIN_TERMINAL_OUTPUT_BYTES_PER_SEC}"),
                ));
            }
            c.terminal_output_bytes_per_sec = *m.get_ref();
        }
        if let Some(iso) = entry.isolation {
            let span = iso.span();
            c.declared = iso.into_inner();
            check_declared(&c.declared).map_err(|why| (at(&span), why))?;
        }
        c.rpc = rpc.clone();
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Vec<AcpConfig>, (Option<usize>, String)> {
        parse(text, &["scripted", "codex"], &RpcConfig::default())
    }

    #[test]
    fn a_valid_file() {
        let c = parsed(
            r#"
[[provider]]
id = "codex-acp"
kind = "acp"
command = "/opt/codex-acp"
args = ["-c", 'model="m"']
env = { OPENAI_API_KEY_FILE = "/run/secrets/openai" }
turn_timeout_secs = 60
max_file_requests = 2
file_timeout_secs = 5
terminal_output_bytes_per_sec = 4096

[[provider.mcp_server]]
name = "files"
command = "/opt/mcp"

[[provider]]
id = "other"
kind = "acp"
command = "/opt/other"
"#,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].id, "codex-acp");
        assert_eq!(c[0].command, PathBuf::from("/opt/codex-acp"));
        assert_eq!(c[0].args, ["-c", "model=\"m\""]);
        assert_eq!(c[0].env, [("OPENAI_API_KEY_FILE".to_owned(), "/run/secrets/openai".to_owned())]);
        assert_eq!(c[0].turn_timeout, Duration::from_secs(60));
        assert_eq!((c[0].max_file_requests, c[0].file_timeout), (2, Duration::from_secs(5)));
        assert_eq!((c[1].max_file_requests, c[1].file_timeout), (8, Duration::from_secs(30)));
        assert_eq!((c[0].terminal_output_bytes_per_sec, c[1].terminal_output_bytes_per_sec), (4096, 256 * 1024));
        assert_eq!(c[0].mcp_servers[0].name, "files");
        assert_eq!(c[1].call_timeout, Duration::from_secs(30));
        assert!(parsed("").unwrap_or_else(|e| panic!("{e:?}")).is_empty());
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\n", 1, "command"),
            ("[[provider]]\nid = \"a\"\nkind = \"lsp\"\ncommand = \"/x\"\n", 3, "unknown provider kind `lsp`"),
            ("[[provider]]\nid = \"codex\"\nkind = \"acp\"\ncommand = \"/x\"\n", 2, "taken by a built-in"),
            ("[[provider]]\nid = \"a b\"\nkind = \"acp\"\ncommand = \"/x\"\n", 2, "invalid provider id"),
            (
                "[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\n\n[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/y\"\n",
                7,
                "defined twice",
            ),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\nbogus = 1\n", 5, "unknown field `bogus`"),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"\"\n", 4, "must not be empty"),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\ncall_timeout_secs = 0\n", 5, "at least 1"),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\nenv = { \"A B\" = \"1\" }\n", 5, "`A B`"),
            ("[[provider]\n", 1, ""),
            (
                "# agents\n[provider]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\n",
                2,
                "write `[[provider]]` (two brackets",
            ),
            (
                "[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\n[provider.mcp_server]\nname = \"m\"\ncommand = \"/m\"\n",
                5,
                "`[[provider.mcp_server]]`",
            ),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"bin/agent\"\n", 4, "relative `bin/agent`"),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"./agent\"\n", 4, "absolute path"),
            (
                "[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\n\n[[provider.mcp_server]]\nname = \"m\"\ncommand = \"tools/mcp\"\n",
                6,
                "MCP server `m`",
            ),
            (
                "[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\nenv = { ENSEMBLE_RUN_ID = \"x\" }\n",
                5,
                "may not be overridden",
            ),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\nmax_file_requests = 0\n", 5, "at least 1"),
            ("[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\nfile_timeout_secs = 0\n", 5, "at least 1"),
            (
                "[[provider]]\nid = \"a\"\nkind = \"acp\"\ncommand = \"/x\"\nterminal_output_bytes_per_sec = 10\n",
                5,
                "at least 1024",
            ),
        ];
        for (text, line, needle) in cases {
            let (at, message) = parsed(text).err().unwrap_or_else(|| panic!("accepted: {text}"));
            assert_eq!(at, Some(line), "{text}: {message}");
            assert!(message.contains(needle), "{text}: {message}");
        }
    }
}
