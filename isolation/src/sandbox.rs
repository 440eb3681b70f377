//! A session's box: the bubblewrap command line its processes run under, and what the server
//! keeps for it while they run (the proxy's sockets, its control group).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ensemble_core::isolation::{Isolation, IsolationMode, NetworkAccess};
use tokio::net::UnixListener;
use tokio::task::AbortHandle;

use crate::IsolationError;
use crate::cgroup::{Cgroup, Cgroups};
use crate::init::Forward;
use crate::proxy::{self, Endpoint, OnBlocked, Policy};

/// Where the server's own pieces are inside a sandbox.
const INSIDE: &str = "/run/ensemble";
/// The proxy's address inside (a fresh network namespace: nothing else listens there), unless a
/// listed endpoint uses its port.
const PROXY_PORT: u16 = 3128;

/// How much of a session's name a box's directory keeps (its hash's first 16 hex digits).
const NAME_LEN: usize = 16;
/// The longest a socket's path beneath the run dir gets: `/` + name + `-` + 12 hex digits +
/// `/ep-65535.sock`.
const SOCKET_TAIL: usize = 1 + NAME_LEN + 1 + 12 + "/ep-65535.sock".len();
/// The most bytes of a Unix socket's path (`sun_path` holds 108 with its NUL).
const SUN_PATH: usize = 107;

fn cut(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// Where the boxes' sockets go: `preferred` (made afresh, so what an earlier run left is gone)
/// when a socket's path beneath it fits in `sun_path`; else — a data dir at a long path — a
/// private directory of the server's own under the system's temporary directory, removed with
/// the guard.
pub fn socket_dir(preferred: &Path) -> std::io::Result<(PathBuf, Option<tempfile::TempDir>)> {
    if preferred.as_os_str().len() + SOCKET_TAIL <= SUN_PATH {
        let _ = std::fs::remove_dir_all(preferred);
        std::fs::create_dir_all(preferred)?;
        return Ok((preferred.to_path_buf(), None));
    }
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::Builder::new()
        .prefix("ensemble-run-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()?;
    if temp.path().as_os_str().len() + SOCKET_TAIL > SUN_PATH {
        return Err(std::io::Error::other(format!(
            "no directory for the boxes' sockets: {} and {} are too long for a socket's path (set TMPDIR shorter)",
            preferred.display(),
            temp.path().display()
        )));
    }
    Ok((temp.path().to_path_buf(), Some(temp)))
}

/// What the server knows once, and every sandbox needs.
#[derive(Debug)]
pub struct Host {
    /// `bwrap`, found on `PATH` (or given).
    pub bwrap: PathBuf,
    /// This server's own binary, run inside as `sandbox-init`.
    pub init: PathBuf,
    /// Where each sandbox gets a directory of sockets (`DATA_DIR/run`, or a private temporary
    /// directory where that is too long for a socket's path: see [`socket_dir`]).
    pub run_dir: PathBuf,
    /// The temporary directory `run_dir` is, removed with the host.
    pub run_dir_guard: Option<tempfile::TempDir>,
    /// Directories no agent sees (the data dir, the worktrees, …): not there, or empty, even
    /// where a provider's binds would reach them.
    pub hidden_dirs: Vec<PathBuf>,
    /// Directories that are empty in a box unless a session's workspace (or a provider's bind)
    /// is in them: the workspace roots, where the other projects are.
    pub hidden_roots: Vec<PathBuf>,
    /// Files no agent sees (the token file, the cluster secret, …): empty there.
    pub hidden_files: Vec<PathBuf>,
    /// The server's listening addresses: never reachable.
    pub server: Vec<SocketAddr>,
    /// The real home, hidden (a fresh one in its place).
    pub home: Option<PathBuf>,
    pub cgroups: Cgroups,
    /// Whether bubblewrap can build a box here; why not.
    pub available: Result<(), String>,
    /// The most connections one sandbox has through its proxy at once.
    pub proxy_connections: usize,
}

impl Host {
    /// Checks that `bwrap` makes the namespaces a box needs (a real run, bounded), and finds the
    /// control groups.
    pub async fn probe(mut self) -> Host {
        self.available = probe_bwrap(&self.bwrap).await;
        self
    }

    /// Whether sessions can be boxed here, and if not what to do.
    pub fn check(&self) -> Result<(), IsolationError> {
        self.available.clone().map_err(IsolationError::Unavailable)
    }

    /// `~/x` made absolute against the real home.
    pub fn expand(&self, path: &str) -> Option<PathBuf> {
        match path.strip_prefix("~/") {
            Some(rest) => self.home.as_ref().map(|h| h.join(rest)),
            None if path == "~" => None,
            None => Some(PathBuf::from(path)),
        }
    }
}

async fn probe_bwrap(bwrap: &Path) -> Result<(), String> {
    let how = "install bubblewrap (Debian/Ubuntu: `apt install bubblewrap`; Fedora: `dnf install bubblewrap`) and \
               allow unprivileged user namespaces, or run the provider with isolation off (`--isolation off`, or \
               `mode = \"off\"` in its `[provider.isolation]`)";
    let run = tokio::process::Command::new(bwrap)
        .args(["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--tmpfs", "/tmp", "--", "/bin/sh", "-c", "exit 0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(20), run).await {
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => Err(format!(
            "bubblewrap cannot make a sandbox here ({}): {how}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(Err(e)) => Err(format!("bubblewrap ({}) cannot run: {e}; {how}", bwrap.display())),
        Err(_) => Err(format!("bubblewrap did not answer in 20 s; {how}")),
    }
}

/// What one session's box holds, besides the system (read-only) and a fresh home and `/tmp`.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub isolation: Isolation,
    /// Directories the agent works in, read-write at their own paths.
    pub workspace: Vec<PathBuf>,
    /// Git dirs whose work trees are in the workspace: usable (objects, refs, index), but their
    /// configuration, hooks and `info/` read-only, so the agent cannot arm the user's own git.
    pub git_dirs: Vec<PathBuf>,
    /// The provider's own directories (codex's home), read-write at their own paths.
    pub own_dirs: Vec<PathBuf>,
    /// What the provider's program needs under the real home (its install), read-only.
    pub program_dirs: Vec<PathBuf>,
    /// The workspace read-only (a session that asked its agent for a read-only sandbox, which
    /// the box then carries).
    pub read_only_workspace: bool,
}

/// A running session's box. Dropping it stops its proxy and removes its sockets and its control
/// group (killing what is left in it).
pub struct Sandbox {
    host: Arc<Host>,
    plan: Plan,
    dir: PathBuf,
    forwards: Vec<Forward>,
    proxy_port: u16,
    tasks: Vec<AbortHandle>,
    cgroup: Option<Cgroup>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("dir", &self.dir).field("isolation", &self.plan.isolation).finish()
    }
}

/// A command as it runs in a box.
#[derive(Clone, Debug, Default)]
pub struct Wrapped {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    /// Files the process writes `0` into before it runs, to join the session's control group.
    pub cgroup_procs: Vec<PathBuf>,
}

impl Sandbox {
    /// Makes the session's box: its sockets (the proxy, each listed loopback endpoint) served
    /// on this runtime, and its control group. `name` is unique per live session (its key's
    /// hash); `on_blocked` hears each refused target.
    pub fn create(host: &Arc<Host>, plan: Plan, name: &str, on_blocked: OnBlocked) -> Result<Sandbox, IsolationError> {
        host.check()?;
        if plan.isolation.mode == IsolationMode::Off {
            return Err(IsolationError::Invalid("a sandbox of a provider with isolation off".into()));
        }
        let (endpoints, all) = match &plan.isolation.network {
            NetworkAccess::All(_) => (Vec::new(), true),
            NetworkAccess::Endpoints(list) => (
                list.iter()
                    .map(|e| Endpoint::parse(e))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(IsolationError::Invalid)?,
                false,
            ),
        };
        for e in &endpoints {
            if let Some(addr) = e.loopback()
                && host
                    .server
                    .iter()
                    .any(|s| s.port() == addr.port() && (s.ip() == addr.ip() || s.ip().is_unspecified()))
            {
                return Err(IsolationError::Invalid(format!("{}:{} is the server itself", e.host, e.port)));
            }
        }
        // Unique per box (an agent started for no session, a `/run`, shares its session's name),
        // and short: a socket's whole path must fit in `sun_path` (see `socket_dir`).
        let id = ensemble_core::clock::new_id();
        let unique = format!("{}-{}", cut(name, NAME_LEN), id.rsplit('-').next().unwrap_or(&id));
        let dir = host.run_dir.join(&unique);
        std::fs::create_dir(&dir).map_err(IsolationError::io("the sandbox's sockets"))?;
        std::fs::create_dir(dir.join("empty")).map_err(IsolationError::io("the sandbox's sockets"))?;
        let mut sandbox = Sandbox {
            host: host.clone(),
            plan,
            dir,
            forwards: Vec::new(),
            proxy_port: PROXY_PORT,
            tasks: Vec::new(),
            cgroup: None,
        };
        let policy = Arc::new(Policy::new(
            (!all).then(|| endpoints.clone()),
            host.server.clone(),
            on_blocked,
            host.proxy_connections,
        ));
        for (i, e) in endpoints.iter().enumerate() {
            let Some(target) = e.loopback() else { continue };
            let socket = sandbox.dir.join(format!("ep-{i}.sock"));
            let listener = UnixListener::bind(&socket).map_err(IsolationError::io("a loopback endpoint's socket"))?;
            sandbox.tasks.push(tokio::spawn(proxy::forward(listener, target, policy.clone())).abort_handle());
            sandbox
                .forwards
                .push(Forward { addr: target, socket: Path::new(INSIDE).join("net").join(format!("ep-{i}.sock")) });
        }
        while sandbox.forwards.iter().any(|f| f.addr.port() == sandbox.proxy_port) {
            sandbox.proxy_port += 1;
        }
        let listener =
            UnixListener::bind(sandbox.dir.join("proxy.sock")).map_err(IsolationError::io("the proxy's socket"))?;
        sandbox.tasks.push(tokio::spawn(proxy::serve(listener, policy)).abort_handle());
        sandbox.forwards.push(Forward {
            addr: SocketAddr::from(([127, 0, 0, 1], sandbox.proxy_port)),
            socket: Path::new(INSIDE).join("net").join("proxy.sock"),
        });
        let iso = &sandbox.plan.isolation;
        sandbox.cgroup = host
            .cgroups
            .create(&unique, iso.memory_mb, iso.max_processes)
            .map_err(IsolationError::io("the session's control group"))?;
        Ok(sandbox)
    }

    pub fn isolation(&self) -> &Isolation {
        &self.plan.isolation
    }

    /// Times the session's memory limit killed one of its processes.
    pub fn oom_kills(&self) -> u64 {
        self.cgroup.as_ref().map_or(0, Cgroup::oom_kills)
    }

    /// `program args` (with `env`, in `cwd`) as it runs in this box.
    pub fn wrap(&self, program: &Path, args: &[OsString], env: &[(OsString, OsString)], cwd: &Path) -> Wrapped {
        let mut a: Vec<OsString> = Vec::new();
        let mut arg = |s: &str| a.push(s.into());
        // Namespaces: no network but loopback, no view of other processes, no capabilities, gone
        // with the server.
        for flag in ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"] {
            arg(flag);
        }
        let mut mount = |kind: &str, from: &Path, to: &Path| {
            a.push(kind.into());
            a.push(from.into());
            a.push(to.into());
        };
        mount("--ro-bind", Path::new("/"), Path::new("/"));
        let mut rest: Vec<OsString> = vec!["--dev".into(), "/dev".into(), "--proc".into(), "/proc".into()];
        for d in ["/tmp", "/run"] {
            rest.extend(["--tmpfs".into(), d.into()]);
        }
        a.extend(rest);
        let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
        // A fresh home in place of the real one, with what the provider needs of it.
        if let Some(home) = self.host.home.as_ref().filter(|h| exists(h) && h.as_path() != Path::new("/")) {
            a.extend(["--tmpfs".into(), home.clone().into_os_string()]);
        }
        // The other projects: only this session's workspace is bound back below.
        for r in self.host.hidden_roots.iter().filter(|r| exists(r) && r.as_path() != Path::new("/")) {
            if !self.host.home.as_ref().is_some_and(|h| r.starts_with(h)) && !r.starts_with("/tmp") {
                a.extend(["--tmpfs".into(), r.clone().into_os_string()]);
            }
        }
        let bind = |a: &mut Vec<OsString>, kind: &str, p: &Path| {
            a.extend([kind.into(), p.as_os_str().to_owned(), p.as_os_str().to_owned()]);
        };
        for p in self.plan.program_dirs.iter().filter(|p| exists(p)) {
            bind(&mut a, "--ro-bind", p);
        }
        for p in self.plan.isolation.home.iter().filter_map(|h| self.host.expand(h)).filter(|p| exists(p)) {
            bind(&mut a, "--bind", &p);
        }
        // The server's own, wherever the binds above (or below) reach: gone. One under a fresh
        // `/tmp`, `/run` or home that nothing binds is not there at all (a mount point would
        // make it appear, empty).
        let fresh: Vec<&Path> = [Path::new("/tmp"), Path::new("/run")]
            .into_iter()
            .chain(self.host.home.as_deref())
            .chain(self.host.hidden_roots.iter().map(PathBuf::as_path).filter(|r| *r != Path::new("/")))
            .collect();
        // A provider's own directory inside another of the server's (codex's home in the data
        // dir) is bound elsewhere (below).
        let under_hidden = |p: &Path| self.host.hidden_dirs.iter().any(|d| p.starts_with(d) && p != d);
        let bound: Vec<PathBuf> = self
            .plan
            .program_dirs
            .iter()
            .chain(self.plan.own_dirs.iter().filter(|p| !under_hidden(p)))
            .chain(&self.plan.workspace)
            .chain(&self.plan.git_dirs)
            .cloned()
            .chain(self.plan.isolation.home.iter().filter_map(|h| self.host.expand(h)))
            .collect();
        let reachable = |d: &Path| {
            !fresh.iter().any(|f| d.starts_with(f)) || bound.iter().any(|b| d.starts_with(b) || b.starts_with(d))
        };
        // The server's directories: hidden before the binds below, so a workspace inside one (a
        // worktree under the data dir) or one bound as itself (codex's home, the provider's own)
        // is bound back over it; one strictly inside a bound path is hidden after them instead.
        let inside_bound = |d: &Path| bound.iter().any(|b| d.starts_with(b) && d != b);
        let hidden: Vec<&PathBuf> = self.host.hidden_dirs.iter().filter(|d| exists(d) && reachable(d)).collect();
        for d in hidden.iter().filter(|d| !inside_bound(d)) {
            a.extend(["--tmpfs".into(), d.as_os_str().to_owned()]);
        }
        // The provider's own directories at their own paths, but one inside the server's own
        // (codex's home in the data dir) elsewhere, so the data dir stays absent: the
        // environment naming it is changed to match.
        let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (i, p) in self.plan.own_dirs.iter().enumerate().filter(|(_, p)| exists(p)) {
            if under_hidden(p) {
                let inside = PathBuf::from(format!("{INSIDE}/own-{i}"));
                a.extend(["--bind".into(), p.clone().into_os_string(), inside.clone().into_os_string()]);
                moved.push((p.clone(), inside));
            } else {
                bind(&mut a, "--bind", p);
            }
        }
        let workspace = if self.plan.read_only_workspace { "--ro-bind" } else { "--bind" };
        for p in self.plan.workspace.iter().filter(|p| exists(p)) {
            bind(&mut a, workspace, p);
        }
        for g in self.plan.git_dirs.iter().filter(|g| g.is_dir()) {
            bind(&mut a, workspace, g);
            for part in ["config", "hooks", "info"] {
                let p = g.join(part);
                if exists(&p) {
                    bind(&mut a, "--ro-bind", &p);
                } else if part != "config" {
                    // Made (empty) on the host as the mount point, and read-only here: the agent
                    // cannot plant hooks or attributes the user's own git would read.
                    a.extend(["--ro-bind".into(), self.dir.join("empty").into_os_string(), p.into_os_string()]);
                }
            }
        }
        // Last, over the binds above, what of the server's lies inside one of them (a session
        // in `~` with the data dir in `~/.local/share`): the bind must not bring it back.
        for d in hidden.iter().filter(|d| inside_bound(d)) {
            a.extend(["--tmpfs".into(), d.as_os_str().to_owned()]);
        }
        for f in self.host.hidden_files.iter().filter(|f| exists(f) && reachable(f)) {
            a.extend(["--ro-bind".into(), "/dev/null".into(), f.clone().into_os_string()]);
        }
        a.extend(["--ro-bind".into(), self.host.init.clone().into_os_string(), format!("{INSIDE}/init").into()]);
        a.extend(["--bind".into(), self.dir.clone().into_os_string(), format!("{INSIDE}/net").into()]);
        a.extend(["--chdir".into(), cwd.as_os_str().to_owned()]);
        a.extend(["--".into(), format!("{INSIDE}/init").into(), "sandbox-init".into()]);
        for f in &self.forwards {
            a.extend(["--forward".into(), f.arg().into()]);
        }
        a.push("--".into());
        a.push(program.as_os_str().to_owned());
        a.extend(args.iter().cloned());

        let proxy = format!("http://127.0.0.1:{}", self.proxy_port);
        let set = [
            ("HTTPS_PROXY", proxy.as_str()),
            ("HTTP_PROXY", proxy.as_str()),
            ("https_proxy", proxy.as_str()),
            ("http_proxy", proxy.as_str()),
            ("ALL_PROXY", proxy.as_str()),
            ("all_proxy", proxy.as_str()),
            // Loopback is reached directly: a listed local endpoint is forwarded at its address.
            ("NO_PROXY", "localhost,127.0.0.1,::1"),
            ("no_proxy", "localhost,127.0.0.1,::1"),
            ("TMPDIR", "/tmp"),
        ];
        let mut env: Vec<(OsString, OsString)> = env
            .iter()
            .filter(|(k, _)| !set.iter().any(|(s, _)| k == s))
            .map(|(k, v)| match moved.iter().find(|(from, _)| from.as_os_str() == v.as_os_str()) {
                Some((_, to)) => (k.clone(), to.clone().into_os_string()),
                None => (k.clone(), v.clone()),
            })
            .collect();
        env.extend(set.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
        Wrapped {
            program: self.host.bwrap.clone(),
            args: a,
            env,
            cgroup_procs: self.cgroup.as_ref().map(Cgroup::procs_files).unwrap_or_default(),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_files_stay_hidden_inside_a_workspace_that_holds_them() {
        let top = tempfile::tempdir().unwrap();
        let (data, token) = (top.path().join("data"), top.path().join("token"));
        std::fs::create_dir(&data).unwrap();
        std::fs::write(&token, "t").unwrap();
        let host = Arc::new(Host {
            bwrap: "bwrap".into(),
            init: "/bin/true".into(),
            run_dir: top.path().join("run"),
            run_dir_guard: None,
            hidden_dirs: vec![data.clone()],
            hidden_roots: Vec::new(),
            hidden_files: vec![token.clone()],
            server: Vec::new(),
            home: None,
            cgroups: Cgroups::None("test".into()),
            available: Ok(()),
            proxy_connections: 1,
        });
        let plan = Plan {
            isolation: Isolation::default(),
            workspace: vec![top.path().to_path_buf()],
            git_dirs: Vec::new(),
            own_dirs: Vec::new(),
            program_dirs: Vec::new(),
            read_only_workspace: false,
        };
        let sandbox = Sandbox {
            host,
            plan,
            dir: top.path().join("run/x"),
            forwards: Vec::new(),
            proxy_port: PROXY_PORT,
            tasks: Vec::new(),
            cgroup: None,
        };
        let args: Vec<String> = sandbox
            .wrap(Path::new("/bin/true"), &[], &[], top.path())
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        // Where `what` mounts onto `path` (a tmpfs names it next; a bind after its source).
        let at = |what: &str, path: &Path| {
            let target = if what == "--tmpfs" { 1 } else { 2 };
            args.windows(3)
                .position(|w| w[0] == what && w[target] == path.to_string_lossy())
                .unwrap_or_else(|| panic!("no {what} onto {}: {args:?}", path.display()))
        };
        let workspace = at("--bind", top.path());
        assert!(at("--tmpfs", &data) > workspace, "the data dir is hidden after the workspace is bound");
        assert!(at("--ro-bind", &token) > workspace, "the token file is hidden after the workspace is bound");
    }

    #[test]
    fn a_socket_dir_too_long_for_a_socket_is_a_temporary_one_of_the_servers() {
        let base = tempfile::tempdir().unwrap();
        let short = base.path().join("run");
        let (dir, guard) = socket_dir(&short).unwrap();
        assert_eq!(dir, short, "a short one is used");
        assert!(guard.is_none() && dir.is_dir());

        let long = base.path().join("d".repeat(SUN_PATH)).join("run");
        let (dir, guard) = socket_dir(&long).unwrap();
        assert_ne!(dir, long);
        assert!(dir.as_os_str().len() + SOCKET_TAIL <= SUN_PATH, "{}", dir.display());
        let mode = std::fs::metadata(&dir).unwrap().permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o077, 0, "private");
        // The longest socket a box makes there can be bound.
        let sub = dir.join(format!("{}-{}", "a".repeat(NAME_LEN), "b".repeat(12)));
        std::fs::create_dir(&sub).unwrap();
        std::os::unix::net::UnixListener::bind(sub.join("ep-65535.sock")).unwrap();
        drop(guard);
        assert!(!dir.exists(), "removed with its guard");
    }
}
