//! A throwaway nats-server on a free loopback port, which admits only clients with its
//! credentials (a user and a random password, like a deployment's).

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tempfile::TempDir;

use crate::process::{self, Launch, POLL};

const INSTALL_HINT: &str = "install nats-server (Debian: `apt-get install -y nats-server`) or put it on PATH";

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// Attempts at a free port: another process may take the one we picked before the server binds it.
const PORT_ATTEMPTS: usize = 5;

/// The user the server admits.
pub const NATS_USER: &str = "ensemble";

/// A nats-server of its own, listening on 127.0.0.1 only (no monitoring, cluster or leaf-node
/// port), admitting only [`NATS_USER`] with [`Nats::password`]. Dropping it kills the server.
pub struct Nats {
    bin: PathBuf,
    /// Holds the server's configuration, log and the clients' credentials file.
    dir: TempDir,
    port: u16,
    password: String,
    child: Option<Child>,
}

/// Writes a file only its owner may read (as the server requires of secret files).
fn write_private(path: &Path, content: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(content.as_bytes())
}

/// 24 random bytes as hex, from the OS.
fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Nats {
    /// Whether `nats-server` can be found.
    pub fn available() -> bool {
        locate().is_some()
    }

    /// Starts nats-server on a free port of 127.0.0.1 and waits until it greets a client.
    pub fn start() -> anyhow::Result<Nats> {
        let Some(bin) = locate() else {
            bail!("`nats-server` not found on PATH nor in /usr/sbin: {INSTALL_HINT}");
        };
        let dir = tempfile::Builder::new().prefix("ensemble-nats-").tempdir().context("creating a temp dir")?;
        let password = random_hex().context("generating a password")?;
        // Hex only: nothing in it needs quoting in either file.
        let config = format!("authorization {{\n  user: {NATS_USER}\n  password: \"{password}\"\n}}\n");
        write_private(&dir.path().join("nats-server.conf"), &config).context("writing nats-server.conf")?;
        let creds = format!("user={NATS_USER}\npassword={password}\n");
        write_private(&dir.path().join("credentials"), &creds).context("writing the credentials file")?;
        let mut nats = Nats { bin, dir, port: 0, password, child: None };
        for attempt in 1..=PORT_ATTEMPTS {
            nats.port = process::free_port().context("picking a free port")?;
            match nats.launch() {
                Ok(()) => return Ok(nats),
                Err(Launch::PortTaken) if attempt < PORT_ATTEMPTS => continue,
                Err(Launch::PortTaken) => break,
                Err(Launch::Failed(e)) => return Err(e),
            }
        }
        bail!("no free port for nats-server after {PORT_ATTEMPTS} attempts")
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// A file for `--nats-credentials` (`user=` and `password=`, mode 0600).
    pub fn credentials_file(&self) -> PathBuf {
        self.dir.path().join("credentials")
    }

    /// The password of [`NATS_USER`].
    pub fn password(&self) -> &str {
        &self.password
    }

    /// Stops the server (SIGTERM, then SIGKILL if it lingers) and waits for it to exit. Does
    /// nothing if it is stopped.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        process::signal(child.id(), libc::SIGTERM);
        if process::wait_until(&mut child, Instant::now() + STOP_TIMEOUT)?.is_some() {
            return Ok(());
        }
        process::kill_and_reap(&mut child);
        bail!("nats-server did not exit within {STOP_TIMEOUT:?} of SIGTERM; killed it")
    }

    /// Starts the stopped server again on the same port.
    pub fn start_again(&mut self) -> anyhow::Result<()> {
        if self.child.is_some() {
            bail!("nats-server is already running");
        }
        match self.launch() {
            Ok(()) => Ok(()),
            Err(Launch::PortTaken) => bail!("port {} was taken while nats-server was stopped", self.port),
            Err(Launch::Failed(e)) => Err(e),
        }
    }

    fn launch(&mut self) -> Result<(), Launch> {
        let log_path = self.dir.path().join("nats-server.log");
        let mut log = OpenOptions::new().create(true).append(true).open(&log_path)?;
        let log_start = log.seek(SeekFrom::End(0))?;
        let mut cmd = Command::new(&self.bin);
        cmd.args(["-c", "nats-server.conf", "-a", "127.0.0.1", "-p", &self.port.to_string()])
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let mut child = process::spawn(cmd).with_context(|| format!("starting {}", self.bin.display()))?;
        match wait_ready(&mut child, self.port) {
            Ok(()) => {
                self.child = Some(child);
                Ok(())
            }
            Err(e) => {
                process::kill_and_reap(&mut child);
                let what = format!("nats-server did not come up on 127.0.0.1:{}", self.port);
                Err(Launch::from_log(&log_path, log_start, &what, e))
            }
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            process::kill_and_reap(&mut child);
        }
    }
}

/// `nats-server` on PATH, else where Debian's package puts it (/usr/sbin, which a non-root
/// user's PATH often lacks).
fn locate() -> Option<PathBuf> {
    process::find_on_path("nats-server").or_else(|| {
        let debian = PathBuf::from("/usr/sbin/nats-server");
        process::is_executable(&debian).then_some(debian)
    })
}

/// One readiness probe: short, so that a server that exited (or someone else on the port, which
/// accepts and says nothing) is noticed soon; a slow server just gets probed again.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(500);

/// Polls until the server sends its `INFO` greeting, the child exits, or the deadline passes.
fn wait_ready(child: &mut Child, port: u16) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        let error = match greeting(addr) {
            Ok(line) if line.starts_with("INFO ") => return Ok(()),
            Ok(line) => anyhow::anyhow!("unexpected greeting {line:?}"),
            Err(e) => e,
        };
        if let Some(status) = child.try_wait()? {
            bail!("nats-server exited ({status})");
        }
        if Instant::now() >= deadline {
            bail!("nats-server not ready within {READY_TIMEOUT:?}: {error}");
        }
        std::thread::sleep(POLL);
    }
}

/// The first line the server sends to a new connection.
fn greeting(addr: SocketAddr) -> anyhow::Result<String> {
    let stream = TcpStream::connect_timeout(&addr, ATTEMPT_TIMEOUT)?;
    stream.set_read_timeout(Some(ATTEMPT_TIMEOUT))?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line)?;
    Ok(line)
}
