//! Process plumbing shared by the engines: spawning into a process group with a parent-death
//! signal, signals, bounded waits, free ports, finding binaries.

use std::fs;
use std::future::Future;
use std::io::{self, Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

/// How often the bounded waits look again.
pub(crate) const POLL: Duration = Duration::from_millis(20);

pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid()
    }
}

/// Sends `sig` to one process (a stale or vanished pid is ignored).
pub(crate) fn signal(pid: u32, sig: libc::c_int) {
    let Ok(pid) = i32::try_from(pid) else { return };
    if pid <= 1 {
        return;
    }
    // SAFETY: kill(2) has no memory-safety preconditions; a positive pid addresses one process.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Sends `sig` to a whole process group (ESRCH, "no such group", is fine).
pub(crate) fn signal_group(pgid: u32, sig: libc::c_int) {
    let Ok(pgid) = i32::try_from(pgid) else { return };
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg(2) has no memory-safety preconditions; a positive pgid addresses one group.
    #[allow(unsafe_code)]
    unsafe {
        libc::killpg(pgid, sig);
    }
}

/// Makes the child get SIGKILL when the thread that forked it exits.
fn kill_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl(2),
    // getppid(2) and _exit(2), which are async-signal-safe.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // This process may have died before prctl took effect.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

type SpawnJob = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns `cmd` as the leader of a new process group, with SIGKILL as its parent-death signal.
///
/// The fork happens on one thread that lives as long as the process: the kernel sends the
/// parent-death signal when the forking *thread* exits, and a test's thread ends before a server
/// shared by several tests (a `static`) should.
pub(crate) fn spawn(mut cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<mpsc::Sender<SpawnJob>> = OnceLock::new();
    cmd.process_group(0);
    kill_with_parent(&mut cmd);
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        // If the thread cannot start, `rx` is dropped with it and every send below fails.
        let _ = std::thread::Builder::new().name("engines-spawner".into()).spawn(move || {
            for (mut cmd, reply) in rx {
                let _ = reply.send(cmd.spawn());
            }
        });
        tx
    });
    let (reply, answer) = mpsc::channel();
    spawner.send((cmd, reply)).map_err(|_| io::Error::other("the engines' spawner thread is gone"))?;
    answer.recv().map_err(|_| io::Error::other("the engines' spawner thread is gone"))?
}

/// Waits for `child` to exit until `deadline`; `None` if it is still running then.
pub(crate) fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
}

/// SIGKILL to the child's process group, then reaps the child. Nothing if it has exited: once
/// reaped, its pid (hence its group id) may be another process's.
pub(crate) fn kill_and_reap(child: &mut Child) {
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    signal_group(child.id(), libc::SIGKILL);
    let _ = child.kill();
    let _ = wait_until(child, Instant::now() + Duration::from_secs(10));
}

/// A port of 127.0.0.1 that was free a moment ago (the caller retries if it is taken by then).
pub(crate) fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// The first executable `name` in `PATH`.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

pub(crate) fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// How starting a server on a chosen port went wrong.
pub(crate) enum Launch {
    /// Someone else has the port: worth another one.
    PortTaken,
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Launch {
    fn from(e: E) -> Launch {
        Launch::Failed(e.into())
    }
}

impl Launch {
    /// `PortTaken` if the server's log since `offset` (where this run's output starts) says its
    /// address was in use, else `Failed` with `what` happened and the log's tail.
    pub(crate) fn from_log(log: &Path, offset: u64, what: &str, error: anyhow::Error) -> Launch {
        let mut this_run = String::new();
        if let Ok(mut f) = fs::File::open(log) {
            let _ = f.seek(SeekFrom::Start(offset));
            let _ = f.read_to_string(&mut this_run);
        }
        if this_run.to_ascii_lowercase().contains("address already in use") {
            Launch::PortTaken
        } else {
            Launch::Failed(error.context(format!("{what}; its log:\n{}", log_tail(log, 20))))
        }
    }
}

/// The last `lines` lines of a log file, for error messages.
pub(crate) fn log_tail(path: &Path, lines: usize) -> String {
    match fs::read_to_string(path) {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("(no log at {}: {e})", path.display()),
    }
}

/// Runs `fut` to completion on a fresh current-thread runtime in a scoped thread, so that the
/// blocking API works both from plain and from async (`#[tokio::test]`) callers.
pub(crate) fn block_on<F>(fut: F) -> anyhow::Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("building a tokio runtime")?;
            Ok(rt.block_on(fut))
        })
        .join()
        .map_err(|_| anyhow!("the engines' helper thread panicked"))?
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn only_this_runs_log_tells_a_taken_port() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let earlier = "FATAL: could not bind IPv4 address \"127.0.0.1\": Address already in use\n";
        fs::write(&log, format!("{earlier}LOG: database system is ready\n")).unwrap();

        let failed = Launch::from_log(&log, earlier.len() as u64, "it did not come up", anyhow!("exited"));
        let Launch::Failed(e) = failed else { panic!("an earlier run's taken port counted") };
        let text = format!("{e:#}");
        assert!(text.starts_with("it did not come up; its log:\n"), "{text}");
        assert!(text.contains("database system is ready") && text.ends_with(": exited"), "{text}");

        assert!(matches!(Launch::from_log(&log, 0, "", anyhow!("exited")), Launch::PortTaken));
    }
}
