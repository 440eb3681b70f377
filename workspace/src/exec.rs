//! One `git` command: no shell, stdin closed, C locale, no prompt, a deadline, stdout optionally
//! capped, stderr clipped.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::{Git, GitError};

/// Variables of the daemon's environment that would point git at another repository, index,
/// object store or pathspec dialect than the one a call names, or run an external diff.
const CLEARED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
];

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
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    cap: usize,
}

impl Git {
    /// `git …` run in `dir`.
    pub(crate) fn call<'a>(&'a self, dir: &'a Path) -> Call<'a> {
        Call { git: self, dir: Some(dir), args: Vec::new(), env: Vec::new(), cap: usize::MAX }
    }

    /// `git …` run in the daemon's own directory (for commands that need no repository).
    pub(crate) fn call_anywhere(&self) -> Call<'_> {
        Call { git: self, dir: None, args: Vec::new(), env: Vec::new(), cap: usize::MAX }
    }
}

impl<'a> Call<'a> {
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

    /// Keeps at most `bytes` of stdout; past that the command is killed and `Out::capped` set.
    pub fn cap(mut self, bytes: usize) -> Self {
        self.cap = bytes;
        self
    }

    /// Runs the command to its end, whatever its exit status.
    pub async fn output(self) -> Result<Out, GitError> {
        let command = describe(&self.args);
        let mut cmd = Command::new(&self.git.bin);
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Dropping the future (the deadline, or a caller giving up) kills git.
            .kill_on_drop(true);
        if let Some(dir) = self.dir {
            cmd.current_dir(dir);
        }
        for key in CLEARED_ENV {
            cmd.env_remove(key);
        }
        // The C locale keeps the messages matched below in English; no prompt may wait on a
        // terminal; no read-only command takes the user's index lock to refresh it.
        cmd.env("LC_ALL", "C").env("GIT_TERMINAL_PROMPT", "0").env("GIT_OPTIONAL_LOCKS", "0");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        let mut child = cmd.spawn().map_err(|e| spawn_error(&self.git.bin, self.dir, e))?;
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
        match tokio::time::timeout(self.git.timeout, run).await {
            Ok(out) => Ok(out?),
            Err(_) => Err(GitError::Timeout(command)),
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
