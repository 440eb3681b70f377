//! The box every provider's sessions run in: a provider's isolation (what it declares over its
//! agent's known needs and the server's defaults), and the sandbox of one session's processes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ensemble_core::adapter::{AdapterError, EventSink};
use ensemble_core::event::{EventBody, NetworkBlockedPayload};
use ensemble_core::isolation::{Isolation, IsolationMode, NetworkAccess, OFF_WARNING, ProviderIsolation};
use ensemble_core::model::Session;
use ensemble_isolation::{Host, Plan, Sandbox};
use sha2::Digest;

/// The machine's side of isolation (probed once) and the server's defaults, given to every
/// provider.
#[derive(Clone, Debug)]
pub struct IsolationEnv {
    pub host: Arc<Host>,
    /// `--isolation`, `--isolation-network`, `--isolation-memory-mb`, `--isolation-max-processes`.
    pub defaults: Isolation,
}

/// What a provider declares of its isolation (`[provider.isolation]` in the providers file).
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    pub mode: Option<IsolationMode>,
    pub network: Option<NetworkAccess>,
    pub home: Option<Vec<String>>,
    pub memory_mb: Option<u64>,
    pub max_processes: Option<u64>,
}

/// What a provider's agent is known to need, before anything is declared (its quirks).
#[derive(Clone, Copy, Debug, Default)]
pub struct Known {
    /// Its model API's endpoints.
    pub network: &'static [&'static str],
    /// Its configuration and login under the home.
    pub home: &'static [&'static str],
}

/// What else one session's box holds for its provider.
#[derive(Clone, Debug, Default)]
pub struct Extras {
    /// The provider's own directories, read-write (codex's home).
    pub own_dirs: Vec<PathBuf>,
    /// The program the session runs (its install is made visible when it is under the home).
    pub program: Option<PathBuf>,
    /// The workspace read-only in the box (the session asked its agent's sandbox for it).
    pub read_only_workspace: bool,
}

impl IsolationEnv {
    /// No isolation at all (the tests of a provider alone).
    pub fn off() -> Self {
        IsolationEnv {
            host: Arc::new(Host {
                bwrap: "bwrap".into(),
                init: "ensemble".into(),
                run_dir: std::env::temp_dir(),
                run_dir_guard: None,
                hidden_dirs: Vec::new(),
                hidden_roots: Vec::new(),
                hidden_files: Vec::new(),
                server: Vec::new(),
                home: None,
                cgroups: ensemble_isolation::Cgroups::None("not set up".into()),
                available: Err("isolation is not set up".into()),
                proxy_connections: 64,
            }),
            defaults: Isolation { mode: IsolationMode::Off, ..Isolation::default() },
        }
    }

    /// A provider's isolation: what it declares, else its agent's known needs joined to the
    /// server's defaults. `at_start`: its sessions start a process when they start.
    pub fn for_provider(&self, declared: &Declared, known: Known, at_start: bool) -> ProviderIsolation {
        let d = &self.defaults;
        // A declared list replaces the agent's known endpoints; the server's are added to either
        // (`--isolation-network` is what every provider may reach: a local model server). "all"
        // declared is all; the server's "all" opens only providers that declare no list.
        let network = match (&declared.network, &d.network) {
            (Some(NetworkAccess::All(a)), _) | (None, NetworkAccess::All(a)) => NetworkAccess::All(*a),
            (Some(NetworkAccess::Endpoints(list)), NetworkAccess::All(_)) => NetworkAccess::Endpoints(list.clone()),
            (declared, NetworkAccess::Endpoints(server)) => {
                let mut all: Vec<String> = match declared {
                    Some(NetworkAccess::Endpoints(list)) => list.clone(),
                    _ => known.network.iter().map(|s| (*s).to_owned()).collect(),
                };
                for e in server {
                    if !all.contains(e) {
                        all.push(e.clone());
                    }
                }
                NetworkAccess::Endpoints(all)
            }
        };
        let mut home: Vec<String> = known.home.iter().map(|s| (*s).to_owned()).collect();
        home.extend(
            declared.home.clone().unwrap_or_default().into_iter().filter(|h| !known.home.contains(&h.as_str())),
        );
        let isolation = Isolation {
            mode: declared.mode.unwrap_or(d.mode),
            network,
            home,
            memory_mb: declared.memory_mb.or(d.memory_mb),
            max_processes: declared.max_processes.or(d.max_processes),
            limits: self.host.cgroups.enforcement(),
        };
        let on = isolation.mode == IsolationMode::On;
        ProviderIsolation {
            unavailable: if on { self.host.available.clone().err() } else { None },
            warning: (!on).then(|| OFF_WARNING.to_owned()),
            at_start,
            isolation,
        }
    }

    /// The box of one session's processes, or `None` when it runs with isolation off.
    /// `sink`: where the proxy's refusals are told (`network.blocked`).
    pub fn sandbox(
        &self,
        session: &Session,
        sink: Option<EventSink>,
        extras: &Extras,
    ) -> Result<Option<Sandbox>, AdapterError> {
        self.sandbox_at(&Place::of(session), sink, extras)
    }

    /// [`Self::sandbox`] of what a provider kept of the session.
    pub fn sandbox_at(
        &self,
        place: &Place,
        sink: Option<EventSink>,
        extras: &Extras,
    ) -> Result<Option<Sandbox>, AdapterError> {
        let Some(isolation) = place.isolation.as_deref().filter(|i| i.mode == IsolationMode::On) else {
            return Ok(None);
        };
        let ws = place.workspace.as_deref();
        let top = ws.and_then(|w| w.path.as_deref()).map(PathBuf::from);
        let mut workspace: Vec<PathBuf> = top.into_iter().collect();
        let cwd = PathBuf::from(&place.cwd);
        if !place.cwd.is_empty() && !workspace.iter().any(|w| cwd.starts_with(w)) {
            workspace.push(cwd);
        }
        // The repository's git dir, whether in the workspace (a dir session's `.git`) or not (a
        // worktree's repository): usable, its configuration and hooks read-only.
        let git_dirs = ws.and_then(|w| w.common_dir.as_deref()).map(PathBuf::from).into_iter().collect();
        let program_dirs = extras.program.as_deref().and_then(|p| self.under_home(p)).into_iter().collect();
        let plan = Plan {
            isolation: isolation.clone(),
            workspace,
            git_dirs,
            own_dirs: extras.own_dirs.clone(),
            program_dirs,
            read_only_workspace: extras.read_only_workspace,
        };
        let on_blocked: ensemble_isolation::OnBlocked = match sink {
            Some(sink) => Arc::new(move |host: &str, port: u16| {
                let (sink, host) = (sink.clone(), host.to_owned());
                tokio::spawn(async move {
                    sink.emit(None, EventBody::NetworkBlocked(NetworkBlockedPayload { host, port })).await;
                });
            }),
            None => Arc::new(|_: &str, _: u16| {}),
        };
        Sandbox::create(&self.host, plan, &place.name, on_blocked)
            .map(Some)
            .map_err(|e| AdapterError::Unavailable(format!("the session's isolation: {e}")))
    }

    /// The top directory under the real home holding `program` (resolved), when it is there: an
    /// install there (`~/.nvm`, `~/.npm-global`) is made visible, read-only.
    fn under_home(&self, program: &Path) -> Option<PathBuf> {
        let home = self.host.home.as_ref()?;
        let resolved = which(program).and_then(|p| p.canonicalize().ok())?;
        let first = resolved.strip_prefix(home).ok()?.components().next()?;
        Some(home.join(first))
    }
}

/// The variables of a provider's environment that name where its agent keeps its own state: the
/// directories they name (when they exist) are the provider's own, bound into its box read-write.
const OWN_DIR_VARS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
];

impl Extras {
    /// The provider's own directories its environment names (`HOME=…`, `XDG_*_HOME=…`,
    /// `CODEX_HOME=…`), and `program`.
    pub fn from_env<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>, program: &Path) -> Extras {
        let own_dirs = env
            .into_iter()
            .filter(|(k, v)| OWN_DIR_VARS.contains(k) && v.starts_with('/'))
            .map(|(_, v)| PathBuf::from(v))
            .filter(|p| p.is_dir())
            .collect();
        Extras { own_dirs, program: Some(program.to_path_buf()), read_only_workspace: false }
    }
}

/// What a session's box is made from: what a provider that makes it later keeps of the session
/// (the scripted agent makes one per `/run`).
#[derive(Clone, Debug, Default)]
pub struct Place {
    pub isolation: Option<Box<ensemble_core::isolation::Isolation>>,
    pub workspace: Option<Box<ensemble_core::model::SessionWorkspace>>,
    pub cwd: String,
    /// A short name of the session (its box's sockets and control group are named after it).
    pub name: String,
}

impl Place {
    pub fn of(session: &Session) -> Place {
        Place {
            isolation: session.isolation.clone(),
            workspace: session.workspace.clone(),
            cwd: session.cwd.clone(),
            name: name(&session.room_id, &session.session_id),
        }
    }
}

/// A short name of a session (room and session ids may hold any character).
pub fn name(room: &str, session: &str) -> String {
    let mut h = sha2::Sha256::new();
    h.update(room.as_bytes());
    h.update([0]);
    h.update(session.as_bytes());
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `program` as a path: itself when it has a slash, else found on `PATH`.
fn which(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_path_buf());
    }
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ensemble_core::isolation::AllHosts;

    fn env(network: NetworkAccess) -> IsolationEnv {
        let mut e = IsolationEnv::off();
        e.defaults = Isolation { mode: IsolationMode::On, network, memory_mb: Some(4096), ..Isolation::default() };
        e
    }

    const KNOWN: Known = Known { network: &["api.example:443"], home: &["~/.agent"] };

    fn list(items: &[&str]) -> NetworkAccess {
        NetworkAccess::Endpoints(items.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn a_provider_gets_its_known_or_declared_endpoints_and_the_servers() {
        let server = env(list(&["127.0.0.1:8089"]));
        let p = server.for_provider(&Declared::default(), KNOWN, true);
        assert_eq!(p.isolation.network, list(&["api.example:443", "127.0.0.1:8089"]));
        assert_eq!(p.isolation.home, vec!["~/.agent".to_owned()]);
        assert_eq!(p.isolation.memory_mb, Some(4096));
        // A declared list replaces the known one; the server's still joins it.
        let declared =
            Declared { network: Some(list(&["other.example:443"])), memory_mb: Some(512), ..Declared::default() };
        let p = server.for_provider(&declared, KNOWN, true);
        assert_eq!(p.isolation.network, list(&["other.example:443", "127.0.0.1:8089"]));
        assert_eq!(p.isolation.memory_mb, Some(512));
        // "all" declared is all; the server's "all" does not override a declared list.
        let all = Declared { network: Some(NetworkAccess::All(AllHosts::All)), ..Declared::default() };
        assert_eq!(server.for_provider(&all, KNOWN, true).isolation.network, NetworkAccess::All(AllHosts::All));
        let open = env(NetworkAccess::All(AllHosts::All));
        assert_eq!(
            open.for_provider(&Declared::default(), KNOWN, true).isolation.network,
            NetworkAccess::All(AllHosts::All)
        );
        assert_eq!(open.for_provider(&declared, KNOWN, true).isolation.network, list(&["other.example:443"]));
        // Off by declaration: said as a warning.
        let off = Declared { mode: Some(IsolationMode::Off), ..Declared::default() };
        let p = server.for_provider(&off, KNOWN, true);
        assert_eq!(p.warning.as_deref(), Some(OFF_WARNING));
    }
}
