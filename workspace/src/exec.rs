//! One `git` command: no shell, stdin closed, C locale, no prompt, a deadline, stdout optionally
//! capped, stderr clipped — and no program run that a repository's (or the user's or the system's)
//! configuration or attributes name.
//!
//! A work tree an agent writes in is hostile to the server's own git: `.git/config` may name a
//! `core.fsmonitor` command, a filter driver, a hook directory; a worktree's `.git` file may point
//! at a git dir the agent built. So every command here runs with:
//! - no inherited `GIT_*` variable, no system or global configuration (`GIT_CONFIG_NOSYSTEM`,
//!   `GIT_CONFIG_GLOBAL=/dev/null`), no system attributes, no replace refs, no lazy fetch;
//! - the program-running settings of the repository's own configuration overridden on the command
//!   line (`-c` wins over every file): hooks, fsmonitor, pager, signing, automatic gc, transports;
//! - when it concerns a repository, its git dir (and work tree) given explicitly as recorded when
//!   the session started (`GIT_DIR`, `GIT_WORK_TREE`), never discovered from the directory again.
//!
//! Commands that read or write file content (staging, checking out, diffing) run against the
//! server's own repository for that work tree (see `crate::repo::Shadow`), whose configuration
//! names no filter, text conversion or external diff at all; a repository's filter drivers are
//! never run.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::{Git, GitError};

/// Settings given on every command line: they override what any configuration file says, so a
/// repository's `.git/config` cannot make the server's git run a program (hooks — including
/// `reference-transaction` on every ref update —, fsmonitor, a pager, gpg, `git gc --auto` and its
/// hooks, a transport), nor read attributes from a file it names.
const SAFE_CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.attributesFile=/dev/null",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "protocol.allow=never",
    "submodule.recurse=false",
    "advice.addEmbeddedRepo=false",
    "advice.detachedHead=false",
];

/// Variables set on every command: no configuration or attributes but the repository's (and the
/// command line's), no prompt, no replace refs, no lazy fetch from a promisor remote, English
/// messages (a few are matched), and no read-only command taking the user's index lock.
const SAFE_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("LC_ALL", "C"),
];

/// How long git may take to exit after a SIGTERM at its deadline before it is killed: git removes
/// its lock files on SIGTERM, never on SIGKILL.
const TERM_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// How much of stderr an error keeps: half from the start, half from the end (git puts its
/// `fatal:` line last, after any number of warnings).
const STDERR_KEEP: usize = 4096;
/// How much of the command line an error names.
const COMMAND_KEEP: usize = 300;

/// What a finished command left.
#[derive(Debug)]
pub(crate) struct Out {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// Stdout reached the cap; the command was killed there, so `status` means nothing.
    pub capped: bool,
    pub command: String,
    dir: Option<PathBuf>,
}

impl Out {
    /// The error this failed command stands for.
    pub fn error(self) -> GitError {
        if let Some(dir) = self.dir
            && self.status.code() == Some(128)
            && self.stderr.contains("not a git repository")
        {
            return GitError::NotARepo(dir);
        }
        GitError::Failed { command: self.command, status: self.status.code(), stderr: self.stderr }
    }

    /// Stdout without its trailing newline, as text (lossy).
    pub fn line(&self) -> String {
        String::from_utf8_lossy(trim_newline(&self.stdout)).into_owned()
    }
}

/// Stdout without one trailing newline.
pub(crate) fn trim_newline(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\n").unwrap_or(b)
}

/// A path git printed (raw bytes, any encoding).
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes.to_vec()))
}

/// A command being built.
pub(crate) struct Call<'a> {
    git: &'a Git,
    dir: Option<&'a Path>,
    git_dir: Option<&'a Path>,
    work_tree: Option<&'a Path>,
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    cap: usize,
    user_config: bool,
}

impl Git {
    /// `git …` run in `dir`, finding its repository from there (only to discover a repository).
    pub(crate) fn call<'a>(&'a self, dir: &'a Path) -> Call<'a> {
        Call::new(self, Some(dir))
    }

    /// `git …` run in the daemon's own directory (for commands that need no repository).
    pub(crate) fn call_anywhere(&self) -> Call<'_> {
        Call::new(self, None)
    }

    /// `git …` on the repository whose git dir is `git_dir`, with no work tree.
    pub(crate) fn call_git_dir<'a>(&'a self, git_dir: &'a Path) -> Call<'a> {
        let mut call = Call::new(self, Some(git_dir));
        call.git_dir = Some(git_dir);
        call
    }

    /// `git …` on the repository whose git dir is `git_dir`, with `work_tree` as its work tree.
    pub(crate) fn call_tree<'a>(&'a self, git_dir: &'a Path, work_tree: &'a Path) -> Call<'a> {
        let mut call = Call::new(self, Some(work_tree));
        call.git_dir = Some(git_dir);
        call.work_tree = Some(work_tree);
        call
    }
}

impl<'a> Call<'a> {
    fn new(git: &'a Git, dir: Option<&'a Path>) -> Self {
        Call {
            git,
            dir,
            git_dir: None,
            work_tree: None,
            args: Vec::new(),
            env: Vec::new(),
            cap: usize::MAX,
            user_config: false,
        }
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, key: &'static str, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key, value.as_ref().to_owned()));
        self
    }

    /// Uses `index` as the index file instead of the repository's own.
    pub fn index(self, index: &Path) -> Self {
        self.env("GIT_INDEX_FILE", index)
    }

    /// Reads the user's global configuration too (only to read a setting, such as the identity
    /// a commit is made with; reading configuration runs no program).
    pub fn user_config(mut self) -> Self {
        self.user_config = true;
        self
    }

    /// Keeps at most `bytes` of stdout; past that the command is killed and `Out::capped` set.
    pub fn cap(mut self, bytes: usize) -> Self {
        self.cap = bytes;
        self
    }

    /// Runs the command to its end, whatever its exit status.
    pub async fn output(self) -> Result<Out, GitError> {
        let command = describe(&self.args);
        let mut cmd = Command::new(&self.git.bin);
        for setting in SAFE_CONFIG {
            cmd.args(["-c", setting]);
        }
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Dropping the future (a caller giving up) kills git.
            .kill_on_drop(true);
        if let Some(dir) = self.dir {
            cmd.current_dir(dir);
        }
        // Whatever the daemon was started with: none of it may point git elsewhere, run an
        // external diff, trace to a file or add configuration.
        for (key, _) in std::env::vars_os() {
            if key.as_encoded_bytes().starts_with(b"GIT_") {
                cmd.env_remove(key);
            }
        }
        for (key, value) in SAFE_ENV {
            if self.user_config && *key == "GIT_CONFIG_GLOBAL" {
                continue;
            }
            cmd.env(key, value);
        }
        if let Some(git_dir) = self.git_dir {
            cmd.env("GIT_DIR", git_dir);
        }
        if let Some(work_tree) = self.work_tree {
            cmd.env("GIT_WORK_TREE", work_tree);
        }
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        die_with_the_server(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| spawn_error(&self.git.bin, self.dir, e))?;
        let pid = child.id();
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let cap = self.cap;
        let dir = self.dir.map(Path::to_path_buf);
        let name = command.clone();
        let run = async move {
            let read_out = async {
                let out = read_capped(stdout, cap).await;
                if matches!(out, Ok((_, true))) {
                    // Git would block on a full pipe while stderr is awaited to its end.
                    let _ = child.start_kill();
                }
                out
            };
            let (out, err) = tokio::join!(read_out, read_clipped(stderr));
            let status = child.wait().await?;
            let (stdout, capped) = out?;
            Ok::<_, io::Error>(Out { status, stdout, stderr: err?, capped, command: name, dir })
        };
        tokio::pin!(run);
        match tokio::time::timeout(self.git.timeout, &mut run).await {
            Ok(out) => Ok(out?),
            Err(_) => {
                // Past the deadline: asked to stop first, so that git removes its lock files (a
                // lock left behind would fail every later checkpoint), killed only if it won't.
                if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok().and_then(rustix::process::Pid::from_raw)) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                }
                let _ = tokio::time::timeout(TERM_GRACE, &mut run).await;
                Err(GitError::Timeout(command))
            }
        }
    }

    /// Runs the command and returns its stdout when it succeeds.
    pub async fn ok(self) -> Result<Vec<u8>, GitError> {
        let out = self.output().await?;
        if out.status.success() { Ok(out.stdout) } else { Err(out.error()) }
    }

    /// Runs the command and returns its stdout's one line when it succeeds.
    pub async fn line(self) -> Result<String, GitError> {
        let out = self.output().await?;
        if out.status.success() { Ok(out.line()) } else { Err(out.error()) }
    }
}

/// Makes git die with the server (`PR_SET_PDEATHSIG`): a git left running after a `kill -9` of the
/// server would hold an index lock the next server clears, and two gits would then write one
/// index.
fn die_with_the_server(cmd: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the child between fork and exec and only makes the system calls
    // prctl(2) and getppid(2) (rustix's wrappers allocate nothing) and `_exit` through an error
    // return, which are async-signal-safe.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // The server may have died before the signal was set.
            if rustix::process::getppid() != Some(parent) {
                return Err(io::Error::other("the server is gone"));
            }
            Ok(())
        });
    }
}

/// Why git did not start: a missing directory is the caller's; a missing binary is git's.
fn spawn_error(bin: &Path, dir: Option<&Path>, e: io::Error) -> GitError {
    if let Some(dir) = dir
        && !dir.is_dir()
    {
        return GitError::Io(io::Error::new(e.kind(), format!("{}: {e}", dir.display())));
    }
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => {
            GitError::Unavailable(format!("{}: {e}", bin.display()))
        }
        _ => GitError::Io(e),
    }
}

/// `git arg arg …`, clipped, for errors.
fn describe(args: &[OsString]) -> String {
    let mut s = String::from("git");
    for a in args {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
        if s.len() > COMMAND_KEEP {
            let mut end = COMMAND_KEEP;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            s.push('…');
            break;
        }
    }
    s
}

/// Reads up to `cap` bytes; true when there was more.
async fn read_capped(r: Option<impl AsyncRead + Unpin>, cap: usize) -> io::Result<(Vec<u8>, bool)> {
    let Some(r) = r else { return Ok((Vec::new(), false)) };
    let mut buf = Vec::new();
    r.take((cap as u64).saturating_add(1)).read_to_end(&mut buf).await?;
    let capped = buf.len() > cap;
    buf.truncate(cap);
    Ok((buf, capped))
}

/// Reads to the end, keeping the first and the last `STDERR_KEEP / 2` bytes.
async fn read_clipped(r: Option<impl AsyncRead + Unpin>) -> io::Result<String> {
    let Some(mut r) = r else { return Ok(String::new()) };
    let half = STDERR_KEEP / 2;
    let (mut head, mut tail, mut dropped) = (Vec::new(), Vec::new(), false);
    let mut chunk = [0u8; 4096];
    loop {
        let n = r.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        let mut data = &chunk[..n];
        if head.len() < half {
            let take = (half - head.len()).min(data.len());
            head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        tail.extend_from_slice(data);
        if tail.len() > half {
            tail.drain(..tail.len() - half);
            dropped = true;
        }
    }
    if dropped {
        head.extend_from_slice("\n[…]\n".as_bytes());
    }
    head.extend_from_slice(&tail);
    Ok(String::from_utf8_lossy(trim_newline(&head)).into_owned())
}
