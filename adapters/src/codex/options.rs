//! The codex provider's command-line options and the configuration they make.

use std::path::PathBuf;
use std::time::Duration;

use super::config::CodexConfig;
use crate::kit::binary::which;
use crate::kit::provider::{ProviderEnv, ProviderError};

/// How to run codex.
#[derive(Clone, Debug, clap::Args)]
pub struct CodexOptions {
    /// The `codex` executable [default: `codex` on PATH].
    #[arg(long, env = "ENSEMBLE_CODEX_BIN", help_heading = "Essentials")]
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
}

impl CodexOptions {
    /// `CODEX_HOME`: `--codex-home`, else `DATA_DIR/codex-home`.
    pub fn home(&self, data_dir: &std::path::Path) -> PathBuf {
        self.codex_home.clone().unwrap_or_else(|| data_dir.join("codex-home"))
    }

    /// The provider's configuration, validated.
    pub fn config(&self, env: &ProviderEnv) -> Result<CodexConfig, ProviderError> {
        let bin = match &self.codex_bin {
            // Made absolute from the server's cwd now: a relative path would otherwise be found
            // from each session's cwd, a directory of the repository the agent works on.
            Some(b) if b.is_relative() && b.components().count() > 1 => {
                std::path::absolute(b).map_err(|e| ProviderError(format!("--codex-bin {}: {e}", b.display())))?
            }
            Some(b) => b.clone(),
            None => which("codex").unwrap_or_else(|| PathBuf::from("codex")),
        };
        let home = self.home(&env.data_dir);
        let mut c = CodexConfig::new(bin, home);
        c.sandboxes = env.isolation.clone();
        for o in self.codex_config.iter().map(|o| o.trim()).filter(|o| !o.is_empty()) {
            match o.split_once('=') {
                Some((k, _)) if !k.trim().is_empty() => c.overrides.push(o.to_owned()),
                _ => return Err(ProviderError(format!("--codex-config expects KEY=VALUE, got `{o}`"))),
            }
        }
        for e in self.codex_env.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            match e.split_once('=') {
                Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
                    c.env.push((k.to_owned(), v.to_owned()))
                }
                _ => return Err(ProviderError(format!("--codex-env expects KEY=VALUE, got `{e}`"))),
            }
        }
        c.thread_start_timeout = Duration::from_secs(self.codex_thread_start_timeout_secs.max(1));
        c.call_timeout = Duration::from_secs(self.codex_call_timeout_secs.max(1));
        c.goal_grace = env.goal_grace;
        c.auth_check_ttl = env.auth_check_ttl;
        c.rpc.max_line_bytes = env.rpc_max_line_bytes;
        c.rpc.incoming_bytes = env.rpc_queue_bytes;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        codex: CodexOptions,
    }

    fn env() -> ProviderEnv {
        ProviderEnv {
            data_dir: "/data".into(),
            goal_grace: Duration::from_millis(250),
            rpc_max_line_bytes: 1 << 20,
            rpc_queue_bytes: 16 << 20,
            taken_ids: Vec::new(),
            max_live_sessions: 32,
            server_files: Vec::new(),
            private_dirs: Vec::new(),
            isolation: crate::kit::sandbox::IsolationEnv::off(),
            auth_check_ttl: Duration::from_secs(60),
        }
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
        let c = cli.codex.config(&env()).unwrap();
        assert_eq!(c.bin, PathBuf::from("/opt/codex"));
        assert_eq!(c.home, PathBuf::from("/data/codex-home"));
        assert_eq!(c.overrides, ["model=\"m\"", "a=1", "b=2"]);
        assert_eq!(c.env, [("KEY".to_owned(), "v=w".to_owned())]);
        let relative = Cli::try_parse_from(["ensemble", "--codex-bin", "bin/codex"]).unwrap();
        let bin = relative.codex.config(&env()).unwrap().bin;
        assert_eq!(bin, std::env::current_dir().unwrap().join("bin/codex"), "from the server's cwd, not a session's");
        let bad = Cli::try_parse_from(["ensemble", "--codex-config", "novalue"]).unwrap();
        assert!(bad.codex.config(&env()).unwrap_err().0.contains("KEY=VALUE"));
        let bad = Cli::try_parse_from(["ensemble", "--codex-env", "=x"]).unwrap();
        assert!(bad.codex.config(&env()).is_err());
    }
}
