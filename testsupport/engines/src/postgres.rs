//! A throwaway PostgreSQL cluster: `initdb` into a temp dir, `postgres` on a free loopback port.

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tempfile::TempDir;
use tokio_postgres::NoTls;

use crate::process::{self, Launch, POLL};

const INSTALL_HINT: &str = "install PostgreSQL's server binaries (Debian: `apt-get install -y postgresql`, \
     which puts them under /usr/lib/postgresql/*/bin), or put `initdb` and `postgres` on PATH";

/// The superuser role `initdb` creates (`-U`), and the database every cluster has.
const SUPERUSER: &str = "postgres";

const INITDB_TIMEOUT: Duration = Duration::from_secs(120);
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
const KILL_TIMEOUT: Duration = Duration::from_secs(10);
const QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// One readiness probe: short, so that a server that exited (or someone else on the port, which
/// accepts and says nothing) is noticed soon; a slow server just gets probed again.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);
/// Attempts at a free port: another process may take the one we picked before the server binds it.
const PORT_ATTEMPTS: usize = 5;

/// A PostgreSQL server of its own, listening on 127.0.0.1 only, with trust authentication for the
/// superuser `postgres`. Dropping it shuts the server down (immediately) and removes its files.
pub struct Postgres {
    bins: Bins,
    run_as: Option<RunAs>,
    /// Holds `data/` (the cluster), `sock/` (the Unix socket) and the logs.
    dir: TempDir,
    port: u16,
    /// The postmaster, while the server runs.
    child: Option<Child>,
}

impl Postgres {
    /// Whether the server binaries (and, as root, a user to run them as) can be found.
    pub fn available() -> bool {
        Bins::locate().is_ok() && (process::effective_uid() != 0 || RunAs::unprivileged().is_ok())
    }

    /// Creates a cluster in a temp dir and starts it on a free port of 127.0.0.1.
    ///
    /// As root, the server runs as `postgres` (or `nobody`): that user must be able to reach the
    /// temp dir (`TMPDIR`, /tmp by default).
    pub fn start() -> anyhow::Result<Postgres> {
        let bins = Bins::locate()?;
        // PostgreSQL refuses to run as root.
        let run_as = if process::effective_uid() == 0 { Some(RunAs::unprivileged()?) } else { None };
        let dir = tempfile::Builder::new().prefix("ensemble-pg-").tempdir().context("creating a temp dir")?;
        let sock = dir.path().join("sock");
        fs::create_dir(&sock).with_context(|| format!("creating {}", sock.display()))?;
        if let Some(user) = &run_as {
            for path in [dir.path(), &sock] {
                std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
                    .with_context(|| format!("giving {} to {}", path.display(), user.name))?;
            }
        }
        let mut pg = Postgres { bins, run_as, dir, port: 0, child: None };
        pg.initdb()?;
        for attempt in 1..=PORT_ATTEMPTS {
            pg.port = process::free_port().context("picking a free port")?;
            match pg.launch() {
                Ok(()) => return Ok(pg),
                Err(Launch::PortTaken) if attempt < PORT_ATTEMPTS => continue,
                Err(Launch::PortTaken) => break,
                Err(Launch::Failed(e)) => return Err(e),
            }
        }
        bail!("no free port for PostgreSQL after {PORT_ATTEMPTS} attempts")
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        self.database_url(SUPERUSER)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's data directory (inside the temp dir removed on drop).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Creates an empty database and returns its URL, so that tests can share one server.
    /// `name` is 1 to 63 ASCII letters, digits, `_` or `-`.
    pub fn create_database(&self, name: &str) -> anyhow::Result<String> {
        let valid =
            (1..=63).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            bail!("database name {name:?}: use 1 to 63 ASCII letters, digits, `_` or `-`");
        }
        if self.child.is_none() {
            bail!("PostgreSQL is stopped");
        }
        let port = self.port;
        // Quoted: the name keeps its case and may hold `-`.
        let sql = format!("CREATE DATABASE \"{name}\"");
        process::block_on(execute(port, &sql, Instant::now() + QUERY_TIMEOUT))?
            .with_context(|| format!("creating database {name}"))?;
        Ok(self.database_url(name))
    }

    /// Fast shutdown (clients are disconnected, a checkpoint is written), waiting for the server
    /// to exit. Does nothing if it is stopped.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        process::signal(child.id(), libc::SIGINT);
        if process::wait_until(&mut child, Instant::now() + STOP_TIMEOUT)?.is_some() {
            return Ok(());
        }
        self.kill(&mut child);
        bail!("PostgreSQL did not shut down within {STOP_TIMEOUT:?}; killed it")
    }

    /// Starts the stopped server again on the same data directory and port.
    pub fn start_again(&mut self) -> anyhow::Result<()> {
        if self.child.is_some() {
            bail!("PostgreSQL is already running");
        }
        match self.launch() {
            Ok(()) => Ok(()),
            Err(Launch::PortTaken) => bail!("port {} was taken while PostgreSQL was stopped", self.port),
            Err(Launch::Failed(e)) => Err(e),
        }
    }

    fn database_url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    fn command(&self, program: &Path) -> Command {
        let mut cmd = match &self.run_as {
            Some(user) => user.command(program),
            None => Command::new(program),
        };
        // The cwd must be readable by the server's user (initdb and postgres resolve it).
        cmd.current_dir(self.dir.path()).env("LC_ALL", "C").env_remove("PGDATA").stdin(Stdio::null());
        cmd
    }

    /// What failed when `program` could not be started.
    fn starting(&self, program: &Path) -> String {
        match &self.run_as {
            // The child switches user before it changes into the temp dir.
            Some(user) => format!(
                "starting {} as {} in {} (which that user must be able to reach)",
                program.display(),
                user.name,
                self.dir.path().display()
            ),
            None => format!("starting {}", program.display()),
        }
    }

    fn initdb(&self) -> anyhow::Result<()> {
        let log_path = self.dir.path().join("initdb.log");
        let log = File::create(&log_path)?;
        let mut cmd = self.command(&self.bins.initdb);
        cmd.arg("-D")
            .arg(self.data_dir())
            .args(["-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"])
            .stdout(log.try_clone()?)
            .stderr(log);
        let mut child = process::spawn(cmd).with_context(|| self.starting(&self.bins.initdb))?;
        match process::wait_until(&mut child, Instant::now() + INITDB_TIMEOUT)? {
            Some(status) if status.success() => Ok(()),
            Some(status) => bail!("initdb failed ({status}):\n{}", process::log_tail(&log_path, 20)),
            None => {
                process::kill_and_reap(&mut child);
                bail!("initdb did not finish within {INITDB_TIMEOUT:?}:\n{}", process::log_tail(&log_path, 20))
            }
        }
    }

    /// Starts the server on `self.port` and waits until it answers a query.
    fn launch(&mut self) -> Result<(), Launch> {
        let log_path = self.dir.path().join("postgres.log");
        let mut log = OpenOptions::new().create(true).append(true).open(&log_path)?;
        let log_start = log.seek(SeekFrom::End(0))?;
        let sock = self.dir.path().join("sock");
        let mut cmd = self.command(&self.bins.postgres);
        cmd.arg("-D")
            .arg(self.data_dir())
            .args(["-c", "listen_addresses=127.0.0.1", "-c", &format!("port={}", self.port)])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", sock.display()))
            // Throwaway data: durability is not worth the time.
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .stdout(log.try_clone()?)
            .stderr(log);
        let mut child = process::spawn(cmd).with_context(|| self.starting(&self.bins.postgres))?;
        match wait_ready(&mut child, self.port) {
            Ok(()) => {
                self.child = Some(child);
                Ok(())
            }
            Err(e) => {
                self.kill(&mut child);
                let what = format!("PostgreSQL did not come up on 127.0.0.1:{}", self.port);
                Err(Launch::from_log(&log_path, log_start, &what, e))
            }
        }
    }

    /// Immediate shutdown, then SIGKILL to whatever of the server is left.
    fn kill(&self, child: &mut Child) {
        // Once reaped, the child's pid may be another process's: no signal then.
        if matches!(child.try_wait(), Ok(None)) {
            process::signal(child.id(), libc::SIGQUIT);
            // The postmaster exits once its children have; if it does not, nothing is spared.
            if !matches!(process::wait_until(child, Instant::now() + KILL_TIMEOUT), Ok(Some(_))) {
                process::kill_and_reap(child);
            }
        }
        // Backends leave the postmaster's process group (they call setsid), so a SIGKILLed
        // postmaster can leave some behind: they are found by their cwd, the data directory.
        kill_strays(&self.data_dir());
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            self.kill(&mut child);
        }
    }
}

fn config(port: u16, database: &str) -> tokio_postgres::Config {
    let mut config = tokio_postgres::Config::new();
    config.host("127.0.0.1").port(port).user(SUPERUSER).dbname(database).connect_timeout(Duration::from_secs(5));
    config
}

/// Runs `sql` as the superuser in the `postgres` database, giving up at `deadline`.
async fn execute(port: u16, sql: &str, deadline: Instant) -> anyhow::Result<()> {
    // `connect_timeout` only bounds the TCP connect: whatever listens there may never answer.
    tokio::time::timeout_at(deadline.into(), async {
        let (client, connection) = config(port, SUPERUSER).connect(NoTls).await?;
        let connection = tokio::spawn(connection);
        let done = client.batch_execute(sql).await;
        drop(client);
        let _ = connection.await;
        Ok(done?)
    })
    .await
    .map_err(|_| anyhow::anyhow!("no answer from 127.0.0.1:{port} in time"))?
}

/// Runs `sql` on the server at `url` (a shared server's admin URL).
pub(crate) async fn execute_at(url: &str, sql: &str, deadline: Instant) -> anyhow::Result<()> {
    tokio::time::timeout_at(deadline.into(), async {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
        let connection = tokio::spawn(connection);
        let done = client.batch_execute(sql).await;
        drop(client);
        let _ = connection.await;
        Ok(done?)
    })
    .await
    .map_err(|_| anyhow::anyhow!("no answer from the shared PostgreSQL in time"))?
}

/// Polls until the server answers a query (it accepts connections while still starting up), the
/// child exits, or the deadline passes.
fn wait_ready(child: &mut Child, port: u16) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    process::block_on(async move {
        loop {
            let attempt_deadline = deadline.min(Instant::now() + ATTEMPT_TIMEOUT);
            let error = match execute(port, "SELECT 1", attempt_deadline).await {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if let Some(status) = child.try_wait()? {
                bail!("postgres exited ({status})");
            }
            if Instant::now() >= deadline {
                bail!("PostgreSQL not ready within {READY_TIMEOUT:?}: {error:#}");
            }
            tokio::time::sleep(POLL).await;
        }
    })?
}

/// SIGKILL to every process running in `data_dir` (the postmaster and its children all do),
/// waiting until they are gone.
fn kill_strays(data_dir: &Path) {
    let deadline = Instant::now() + KILL_TIMEOUT;
    loop {
        let strays = processes_in(data_dir);
        if strays.is_empty() || Instant::now() >= deadline {
            return;
        }
        for pid in strays {
            process::signal(pid, libc::SIGKILL);
        }
        std::thread::sleep(POLL);
    }
}

/// The live processes whose cwd is `dir` or below (zombies have none).
fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir)))
        .collect()
}

/// `initdb` and the `postgres` beside it.
struct Bins {
    initdb: PathBuf,
    postgres: PathBuf,
}

impl Bins {
    fn locate() -> anyhow::Result<Bins> {
        let Some(initdb) = process::find_on_path("initdb").or_else(|| in_debian_dirs("initdb")) else {
            bail!("`initdb` not found on PATH nor under /usr/lib/postgresql/*/bin: {INSTALL_HINT}");
        };
        // The server of the same version: beside initdb (following a symlink such as
        // /usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb), else on PATH.
        let beside = fs::canonicalize(&initdb).ok().and_then(|p| Some(p.parent()?.join("postgres")));
        let Some(postgres) = beside.filter(|p| process::is_executable(p)).or_else(|| process::find_on_path("postgres"))
        else {
            bail!("`postgres` not found beside {} nor on PATH: {INSTALL_HINT}", initdb.display());
        };
        Ok(Bins { initdb, postgres })
    }
}

/// `name` in the newest /usr/lib/postgresql/VERSION/bin (where Debian's packages put the server).
fn in_debian_dirs(name: &str) -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            Some((version, e.path().join("bin").join(name)))
        })
        .filter(|(_, p)| process::is_executable(p))
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p)
}

/// The unprivileged user the server runs as when this process is root.
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
}

impl RunAs {
    /// `postgres` (Debian's package creates it), else `nobody`.
    fn unprivileged() -> anyhow::Result<RunAs> {
        let passwd = fs::read_to_string("/etc/passwd").context("reading /etc/passwd")?;
        let Some((name, uid, gid)) = ["postgres", "nobody"].iter().find_map(|name| {
            let fields: Vec<&str> = passwd.lines().find(|l| l.starts_with(&format!("{name}:")))?.split(':').collect();
            Some((name.to_string(), fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?))
        }) else {
            bail!("running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as");
        };
        Ok(RunAs { name, uid, gid })
    }

    /// The child switches user itself (std calls setgroups, setgid and setuid between fork and
    /// exec), so it keeps its pid, its process group and, set after the switch (a switch clears
    /// it), its parent-death signal: no `setpriv` or `runuser` in between.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.uid(self.uid).gid(self.gid);
        cmd
    }
}
