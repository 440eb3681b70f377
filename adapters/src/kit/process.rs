//! Supervised child processes: the crate's only module with `unsafe` code (libc calls).
//!
//! Every agent process runs in its own process group, with an explicit environment, and:
//! - dies when the server dies (`PR_SET_PDEATHSIG(SIGKILL)`, set between fork and exec, with a
//!   re-check of the parent so a server that died during the fork is noticed);
//! - is terminated with SIGTERM to its group, then SIGKILL after a grace ([`Supervised::terminate`]);
//!   descendants that left the group (e.g. with `setsid`) are found through `/proc` and killed too,
//!   and so is whatever left its tree but carries its tag ([`TAG_ENV`]): a command an agent's tool
//!   started in a session of its own and left running in the background, reparented to init;
//! - is killed (group, descendants and what carries its tag) when its handle is dropped;
//! - carries [`RUN_ENV`] (the server run's id) in its environment, inherited by everything it
//!   starts, so a later run can find and reap what a crashed run left behind ([`reap_run`]);
//! - gets the file creation mask and soft open-file limit the server was started with
//!   ([`set_child_defaults`]), not the private mask and raised limit the server gives itself.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The complete environment of the child (nothing is inherited implicitly), to which
    /// [`TAG_ENV`] is added.
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    /// Control-group `cgroup.procs` files the child joins before it runs (a session's box: its
    /// memory and process limits then cover it and all it starts).
    pub cgroup_procs: Vec<PathBuf>,
}

impl ProcessSpec {
    /// This spec as it runs in `sandbox` (the spec itself when there is none). A program that
    /// is not there is `NotFound` now, as spawning it unboxed would be, rather than a box that
    /// starts and fails inside.
    pub fn boxed(self, sandbox: Option<&ensemble_isolation::Sandbox>) -> io::Result<ProcessSpec> {
        let Some(sandbox) = sandbox else { return Ok(self) };
        let found = if self.program.components().count() > 1 {
            self.program.is_file()
        } else {
            let path = self.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
            std::env::split_paths(&path).any(|d| d.join(&self.program).is_file())
        };
        if !found {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: not found", self.program.display())));
        }
        let w = sandbox.wrap(&self.program, &self.args, &self.env, &self.cwd);
        Ok(ProcessSpec { program: w.program, args: w.args, env: w.env, cwd: self.cwd, cgroup_procs: w.cgroup_procs })
    }
}

/// Variables passed through from the server's environment by default: what a process needs to
/// find its tools and behave, never credentials.
pub const PASSTHROUGH_ENV: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"];

/// The environment variable that tags every agent process with the server run that started it.
pub const RUN_ENV: &str = "ENSEMBLE_RUN_ID";

/// The environment variable that tags a supervised process, and everything it starts, with that
/// process's own tag (unique per spawn): what leaves its process tree is still found by it.
pub const TAG_ENV: &str = "ENSEMBLE_PROCESS_TAG";

static RUN_ID: OnceLock<String> = OnceLock::new();

/// What a child process gets back of the environment the server was started with. The server
/// makes everything it creates private (umask 077) and raises its own open-file limit; an agent
/// working in the user's files should create them as the user would, and programs that use
/// `select(2)` expect the usual soft limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildDefaults {
    pub umask: u32,
    /// The soft `RLIMIT_NOFILE` to restore (None: keep the server's).
    pub nofile_soft: Option<u64>,
}

static CHILD_DEFAULTS: OnceLock<ChildDefaults> = OnceLock::new();

/// Sets what children get back (once, at start-up, before any is spawned).
pub fn set_child_defaults(defaults: ChildDefaults) {
    let _ = CHILD_DEFAULTS.set(defaults);
}

/// Sets this server run's id (once, at start-up); [`base_env`] then tags children with it.
pub fn set_run_id(id: &str) {
    let _ = RUN_ID.set(id.to_owned());
}

/// The passthrough subset of the current environment, plus the run tag.
pub fn base_env() -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> =
        PASSTHROUGH_ENV.iter().filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v))).collect();
    if let Some(id) = RUN_ID.get() {
        env.push((RUN_ENV.into(), id.into()));
    }
    env
}

/// Live processes (of this user) whose environment carries `RUN_ENV=run_id`.
pub fn processes_of_run(run_id: &str) -> Vec<i32> {
    processes_with_env(&format!("{RUN_ENV}={run_id}"))
}

/// Live processes (of this user) other than the server whose environment carries `needle`
/// (`NAME=value`).
fn processes_with_env(needle: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|&pid| pid != std::process::id() as i32 && alive(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

/// Kills every process a previous run of the server left behind (found by its run tag).
/// Only processes that carry the exact tag are touched: a reused pid cannot be hit.
pub fn reap_run(run_id: &str) -> usize {
    if run_id.is_empty() {
        return 0;
    }
    let pids = processes_of_run(run_id);
    for &pid in &pids {
        kill_pid(pid, libc::SIGKILL);
    }
    pids.len()
}

/// A running child with its pipes taken out.
pub struct Spawned {
    pub process: Supervised,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// A supervised child process (leader of its own process group).
pub struct Supervised {
    child: Child,
    pid: i32,
    /// The value of [`TAG_ENV`] it and its descendants carry.
    tag: String,
    exited: Option<ExitStatus>,
}

impl Supervised {
    pub fn spawn(spec: &ProcessSpec) -> io::Result<Spawned> {
        let tag = ensemble_core::clock::new_id();
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env(TAG_ENV, &tag)
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let parent = std::process::id() as i32;
        let defaults = CHILD_DEFAULTS.get().copied();
        // Made before the fork: nothing is allocated between fork and exec.
        let cgroups: Vec<std::ffi::CString> = spec
            .cgroup_procs
            .iter()
            .map(|p| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| io::Error::other("a control group's path holds a NUL"))?;
        // SAFETY: the closure runs in the child between fork and exec and only calls the
        // async-signal-safe functions prctl(2), getppid(2), _exit(2), umask(2), getrlimit(2),
        // setrlimit(2) (on a local `rlimit`), open(2), write(2) and close(2) (on paths made
        // before the fork), close_range(2) and fcntl(2).
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The server may have died before prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                // Into the session's control groups before anything runs: a process that forked
                // first would escape the limits.
                for path in &cgroups {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                    libc::close(fd);
                    if written != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(d) = defaults {
                    libc::umask(d.umask as libc::mode_t);
                    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                    if let Some(soft) = d.nofile_soft
                        && libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0
                    {
                        rl.rlim_cur = (soft as libc::rlim_t).min(rl.rlim_max);
                        libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
                    }
                }
                // Nothing the server inherited without close-on-exec (a descriptor its parent
                // leaked, a socket) reaches the agent: everything above stderr closes at exec.
                // Marked, not closed: std's pipe that reports a failed exec must stay open until
                // the exec (it is close-on-exec already).
                if libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as libc::c_int) != 0 {
                    // Kernels before 5.11: every descriptor up to the soft limit.
                    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                    let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 { rl.rlim_cur } else { 1024 };
                    for fd in 3..max.min(1 << 20) as libc::c_int {
                        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                    }
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let pid =
            child.id().map(|p| p as i32).ok_or_else(|| io::Error::other("the child exited before it was seen"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(io::Error::other("child pipes missing"));
        };
        metrics::gauge!("ensemble_child_processes").increment(1.0);
        Ok(Spawned { process: Supervised { child, pid, tag, exited: None }, stdin, stdout, stderr })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The leader's live descendants now (to kill later, even if the leader has exited by then).
    pub fn family(&self) -> HashSet<i32> {
        descendants(self.pid)
    }

    /// The live processes that carry its tag: its descendants, and those that left its tree
    /// (whatever did not clear its environment).
    pub fn tagged(&self) -> HashSet<i32> {
        processes_with_env(&format!("{TAG_ENV}={}", self.tag)).into_iter().collect()
    }

    /// SIGKILL to the group, to the given processes and to every process that carries its tag.
    pub fn kill_family(&self, family: &HashSet<i32>) {
        signal_all(self.pid, family, libc::SIGKILL);
        signal_all(self.pid, &self.tagged(), libc::SIGKILL);
    }

    /// Waits for the leader to exit (cancel-safe).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.exited {
            return Ok(s);
        }
        let s = self.child.wait().await?;
        self.exited = Some(s);
        Ok(s)
    }

    /// Whether the leader has exited (without waiting).
    pub fn try_exited(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none()
            && let Ok(Some(s)) = self.child.try_wait()
        {
            self.exited = Some(s);
        }
        self.exited
    }

    /// Brings a process whose stdin was just closed down for good: `stop_grace` to exit by itself,
    /// then [`Self::terminate`] with `term_grace`, then SIGKILL to `family` (descendants seen before
    /// the leader could exit: once it is gone, those that left its group are no longer tied to it).
    pub async fn shut_down(mut self, family: &HashSet<i32>, stop_grace: Duration, term_grace: Duration) {
        if tokio::time::timeout(stop_grace, self.wait()).await.is_err() {
            self.terminate(term_grace).await;
        }
        self.kill_family(family);
    }

    /// How the leader ended, in words, waiting at most `wait`: `exit status 3`, `killed by signal: 9`,
    /// or `still running`.
    pub async fn exit_text(&mut self, wait: Duration) -> String {
        match tokio::time::timeout(wait, self.wait()).await {
            Ok(Ok(s)) => match s.code() {
                Some(c) => format!("exit status {c}"),
                None => format!("killed by {s}"),
            },
            _ => "still running".into(),
        }
    }

    /// SIGTERM to the group, its descendants and what carries its tag, then SIGKILL to whatever
    /// is left after `grace`.
    pub async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let mut family = descendants(self.pid);
        family.extend(self.tagged());
        signal_all(self.pid, &family, libc::SIGTERM);
        let status = match tokio::time::timeout(grace, self.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => None,
        };
        // Whatever is left (the leader, or descendants that ignored SIGTERM) gets SIGKILL.
        family.extend(descendants(self.pid));
        self.kill_family(&family);
        match status {
            Some(s) => Some(s),
            None => self.wait().await.ok(),
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if self.try_exited().is_none() {
            self.kill_family(&descendants(self.pid));
        } else {
            // The leader is gone; its group, and what carries its tag, may still hold children.
            kill_group(self.pid, libc::SIGKILL);
            signal_all(self.pid, &self.tagged(), libc::SIGKILL);
        }
        metrics::gauge!("ensemble_child_processes").decrement(1.0);
    }
}

fn signal_all(pgid: i32, family: &HashSet<i32>, sig: libc::c_int) {
    kill_group(pgid, sig);
    for &pid in family {
        kill_pid(pid, sig);
    }
}

/// Sends `sig` to a whole process group (ESRCH, "no such group", is fine).
pub fn kill_group(pgid: i32, sig: libc::c_int) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg(2) has no memory-safety preconditions; a positive pgid addresses one group.
    #[allow(unsafe_code)]
    unsafe {
        libc::killpg(pgid, sig);
    }
}

fn kill_pid(pid: i32, sig: libc::c_int) {
    if pid <= 1 {
        return;
    }
    // SAFETY: kill(2) has no memory-safety preconditions; a positive pid addresses one process.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Whether a process exists (and is not a zombie).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat_fields(&stat).is_some_and(|(state, _, _)| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// (state, ppid, pgrp) from a `/proc/PID/stat` line (the command may contain spaces and parens).
fn stat_fields(stat: &str) -> Option<(char, i32, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut it = rest.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    let pgrp = it.next()?.parse().ok()?;
    Some((state, ppid, pgrp))
}

/// Every live descendant of `root` (children, grandchildren, …), found through `/proc`, including
/// those that moved to another process group or session.
pub fn descendants(root: i32) -> HashSet<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return HashSet::new() };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            && let Some((_, ppid, _)) = stat_fields(&stat)
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = HashSet::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or_default() {
            if out.insert(c) {
                stack.push(c);
            }
        }
    }
    out
}

/// Members of a process group.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| stat_fields(&s))
                .is_some_and(|(state, _, pgrp)| pgrp == pgid && state != 'Z')
        })
        .collect()
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
