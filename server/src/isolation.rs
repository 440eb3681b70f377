//! The server's side of isolation: its flags (the defaults every provider's box starts from).
//! The machine's side is probed once at start, in `server.rs` (`isolation_env`).

use std::path::PathBuf;

use ensemble_core::isolation::{AllHosts, Isolation, IsolationMode, NetworkAccess};

/// `--isolation` and its defaults.
#[derive(Clone, Debug, clap::Args)]
pub struct IsolationArgs {
    /// Whether agents run in a box Ensemble builds (bubblewrap: no network but an allowlist, no
    /// view of the server's files or processes, memory and process limits). `off` only by
    /// explicit choice: every provider then shows a warning. A provider's `[provider.isolation]`
    /// `mode` overrides it.
    #[arg(long, env = "ENSEMBLE_ISOLATION", value_enum, default_value_t = OnOff::On)]
    pub isolation: OnOff,

    /// Endpoints every provider's agents may reach through the egress proxy besides their own
    /// model API's (`host:port`, comma separated; a loopback one such as a local model server,
    /// `127.0.0.1:8089`, is reachable at the same address inside), or `all`.
    #[arg(long, env = "ENSEMBLE_ISOLATION_NETWORK", value_delimiter = ',')]
    pub isolation_network: Vec<String>,

    /// The most memory one session's processes may use together, in MiB.
    #[arg(long, env = "ENSEMBLE_ISOLATION_MEMORY_MB", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(16..))]
    pub isolation_memory_mb: u64,

    /// The most processes (and threads) one session may have at once.
    #[arg(long, env = "ENSEMBLE_ISOLATION_MAX_PROCESSES", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(8..))]
    pub isolation_max_processes: u64,

    /// The most connections one session has open through its egress proxy at once.
    #[arg(long, env = "ENSEMBLE_ISOLATION_PROXY_CONNECTIONS", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub isolation_proxy_connections: u64,

    /// The bubblewrap binary (a name is looked up on PATH).
    #[arg(long, env = "ENSEMBLE_BWRAP_BIN", default_value = "bwrap")]
    pub bwrap_bin: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl IsolationArgs {
    /// The server's defaults, checked: endpoints that are `host:port` (or `all`).
    pub fn defaults(&self) -> anyhow::Result<Isolation> {
        let list: Vec<String> =
            self.isolation_network.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
        let network = if list.iter().any(|s| s.eq_ignore_ascii_case("all")) {
            NetworkAccess::All(AllHosts::All)
        } else {
            for e in &list {
                ensemble_isolation::Endpoint::parse(e).map_err(|why| anyhow::anyhow!("--isolation-network: {why}"))?;
            }
            NetworkAccess::Endpoints(list)
        };
        Ok(Isolation {
            mode: if self.isolation == OnOff::On { IsolationMode::On } else { IsolationMode::Off },
            network,
            home: Vec::new(),
            memory_mb: Some(self.isolation_memory_mb),
            max_processes: Some(self.isolation_max_processes),
            limits: Default::default(),
        })
    }
}
