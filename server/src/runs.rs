//! One server per data dir, and no agent process outliving a crashed run.
//!
//! At start-up the server takes an exclusive lock on `DATA_DIR/lock` (a second server on the same
//! data dir refuses to start), then reaps what earlier runs left: every `DATA_DIR/runs/<id>` file
//! names a run, and every process still tagged with that run's id (see
//! [`ensemble_adapters::kit::process::RUN_ENV`]) is killed. A run that ends cleanly removes its file.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context;
use ensemble_adapters::kit::process;

/// The running server's claim on its data dir. Dropping it ends the run (file removed, lock
/// released).
pub struct Run {
    pub id: String,
    file: PathBuf,
    _lock: File,
}

impl Run {
    /// Locks the data dir, reaps leftovers of earlier runs, and registers this run.
    pub fn begin(data_dir: &Path) -> anyhow::Result<(Run, usize)> {
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
        let id = ensemble_runtime::clock::new_id();
        let file = runs.join(&id);
        std::fs::write(&file, format!("{}\n", std::process::id()))
            .with_context(|| format!("registering the run in {}", file.display()))?;
        process::set_run_id(&id);
        Ok((Run { id, file, _lock: lock }, reaped))
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}
