//! One server per data dir, and no agent process outliving a crashed run.
//!
//! At start-up the server takes an exclusive lock on `DATA_DIR/lock` (a second server on the same
//! data dir refuses to start), then reaps what earlier runs left: every `DATA_DIR/runs/<id>` file
//! names a run, and every process still tagged with that run's id (see
//! [`ensemble_adapters::kit::process::RUN_ENV`]) is killed. A run that ends cleanly removes its file.
//!
//! The run file also says where the running server listens and where its token is
//! ([`RunInfo`]), so `ensemble url` and `ensemble token` work whatever `--listen` and
//! `--data-dir` were.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context;
use ensemble_adapters::kit::process;
use serde::{Deserialize, Serialize};

/// What a run file holds: the server's process, its address and its token's file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub pid: u32,
    /// `http://IP:PORT`, an address this host can reach (loopback when listening on all).
    pub url: String,
    /// The file the token is in, when it is in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
}

/// The running server's claim on its data dir. Dropping it ends the run (file removed, lock
/// released).
pub struct Run {
    pub id: String,
    file: PathBuf,
    _lock: File,
}

impl Run {
    /// Locks the data dir, reaps leftovers of earlier runs, and registers this run (`url` and
    /// `token_file` go into its file, see [`running`]).
    pub fn begin(data_dir: &Path, url: &str, token_file: Option<&Path>) -> anyhow::Result<(Run, usize)> {
        let lock_path = data_dir.join("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("opening {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                anyhow::bail!("another ensemble server is using the data dir {}", data_dir.display())
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", lock_path.display()));
            }
        }
        let runs = data_dir.join("runs");
        std::fs::create_dir_all(&runs).with_context(|| format!("creating {}", runs.display()))?;
        let mut reaped = 0;
        for entry in std::fs::read_dir(&runs)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Holding the lock, every registered run is a dead one.
            let n = process::reap_run(&name);
            if n > 0 {
                tracing::warn!(run = %name, processes = n, "reaped agent processes left by an earlier run");
            }
            reaped += n;
            let _ = std::fs::remove_file(entry.path());
        }
        let id = ensemble_core::clock::new_id();
        let file = runs.join(&id);
        let info =
            RunInfo { pid: std::process::id(), url: url.to_owned(), token_file: token_file.map(Path::to_path_buf) };
        let json = serde_json::to_string(&info).context("encoding the run file")?;
        std::fs::write(&file, json + "\n").with_context(|| format!("registering the run in {}", file.display()))?;
        process::set_run_id(&id);
        Ok((Run { id, file, _lock: lock }, reaped))
    }
}

/// The server running on `data_dir`, read from its run file: the one whose process is alive (a
/// crashed run leaves a file behind until the next start reaps it).
pub fn running(data_dir: &Path) -> anyhow::Result<RunInfo> {
    let runs = data_dir.join("runs");
    let entries = match std::fs::read_dir(&runs) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_running(data_dir)),
        Err(e) => return Err(e).with_context(|| format!("reading {}", runs.display())),
    };
    for entry in entries.flatten() {
        // A file of an older version held only the pid: it says nothing useful, skip it.
        let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
        let Ok(info) = serde_json::from_str::<RunInfo>(&text) else { continue };
        if i32::try_from(info.pid).is_ok_and(process::alive) {
            return Ok(info);
        }
    }
    Err(not_running(data_dir))
}

fn not_running(data_dir: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "no ensemble server is running on the data dir {} (start one with `ensemble serve`, or name its data dir \
         with --data-dir or ENSEMBLE_DATA_DIR)",
        data_dir.display()
    )
}

/// The token a client of the server on `data_dir` sends: from the running server's token file,
/// else (no server running) from the data dir's generated one.
pub fn token(data_dir: &Path) -> anyhow::Result<String> {
    let file = match running(data_dir) {
        Ok(RunInfo { token_file: Some(f), .. }) => f,
        Ok(RunInfo { token_file: None, .. }) => anyhow::bail!("the running server's token is not in a file"),
        Err(e) => {
            let generated = data_dir.join("token");
            if !generated.exists() {
                return Err(e);
            }
            generated
        }
    };
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading the token from {}", file.display()))?;
    Ok(text.trim().to_owned())
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}
