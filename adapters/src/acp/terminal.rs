//! The client's `terminal/*` capability: commands an agent asks Ensemble to run for it. Each runs
//! under the session's supervision, as the agent itself does (own process group, pdeathsig, the
//! run tag, an explicit environment), in a directory inside the session's cwd; its output (stdout
//! and stderr, as they come) is kept up to the agent's byte limit, cut from the front, and streamed
//! as the output of the tool call that shows the terminal. A terminal ends with its session:
//! killed when the agent releases it, when the session's process stops, or when it is dropped.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::{oneshot, watch};

use super::wire as acp;
use crate::kit::process::{ProcessSpec, Supervised, base_env};

/// Most terminals one session has at once.
pub(super) const MAX_TERMINALS: usize = 16;
/// Output kept of a terminal whose agent names no limit (and the most any may ask for).
pub(super) const MAX_OUTPUT_BYTES: usize = 1 << 20;
/// After a kill's SIGTERM, how long before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// Why a terminal request was refused (the JSON-RPC error the agent gets).
#[derive(Debug)]
pub(super) struct TerminalError {
    pub code: i64,
    pub message: String,
}

fn invalid(message: impl Into<String>) -> TerminalError {
    TerminalError { code: super::wire::codes::INVALID_PARAMS, message: message.into() }
}

/// What a terminal printed so far: at most `limit` bytes, the oldest cut first.
struct Output {
    text: String,
    truncated: bool,
    limit: usize,
}

impl Output {
    fn push(&mut self, piece: &str) {
        self.text.push_str(piece);
        if self.text.len() > self.limit {
            let mut cut = self.text.len() - self.limit;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.truncated = true;
        }
    }
}

struct Term {
    output: Mutex<Output>,
    exit: watch::Sender<Option<acp::TerminalExitStatus>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    /// The tool call that shows this terminal: its output goes there as it comes.
    call: Mutex<Option<String>>,
}

impl Term {
    fn kill(&self) {
        if let Some(k) = self.kill.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = k.send(());
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where a terminal's output goes as it comes: `(call id, text)`.
pub(super) type OutputSink = Arc<dyn Fn(String, String) + Send + Sync>;

/// One session's terminals.
pub(super) struct Terminals {
    cwd: PathBuf,
    env: Vec<(String, String)>,
    terms: Mutex<HashMap<String, Arc<Term>>>,
    next: AtomicU64,
    sink: Mutex<Option<OutputSink>>,
}

/// `dir` (absolute, or relative to `top`) with `..` taken apart; `None` if it leaves `top`.
fn inside(top: &Path, dir: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in top.join(dir).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(top).then_some(out)
}

impl Terminals {
    /// The terminals of a session working in `cwd`, whose agent was given `env`.
    pub(super) fn new(cwd: PathBuf, env: Vec<(String, String)>) -> Self {
        Self { cwd, env, terms: Mutex::new(HashMap::new()), next: AtomicU64::new(1), sink: Mutex::new(None) }
    }

    /// Where terminal output linked to a call goes.
    pub(super) fn set_sink(&self, sink: OutputSink) {
        *self.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    }

    fn get(&self, id: &acp::TerminalId) -> Result<Arc<Term>, TerminalError> {
        self.terms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&*id.0)
            .cloned()
            .ok_or_else(|| invalid(format!("no terminal `{}`", id.0)))
    }

    /// `terminal/create`: starts the command.
    pub(super) fn create(
        &self,
        request: &acp::CreateTerminalRequest,
    ) -> Result<acp::CreateTerminalResponse, TerminalError> {
        if request.command.trim().is_empty() {
            return Err(invalid("an empty command"));
        }
        let cwd = match &request.cwd {
            Some(dir) => inside(&self.cwd, dir)
                .ok_or_else(|| invalid("the terminal's cwd must be inside the session's working directory"))?,
            None => self.cwd.clone(),
        };
        let mut terms = self.terms.lock().unwrap_or_else(|e| e.into_inner());
        if terms.len() >= MAX_TERMINALS {
            return Err(invalid(format!("at most {MAX_TERMINALS} terminals at once: release one first")));
        }
        let mut env = base_env();
        for (k, v) in self
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(request.env.iter().map(|e| (e.name.clone(), e.value.clone())))
        {
            if k == "ENSEMBLE_RUN_ID" || k.is_empty() || k.contains('=') {
                continue;
            }
            env.retain(|(ek, _)| ek.to_str() != Some(k.as_str()));
            env.push((k.into(), v.into()));
        }
        let spec = ProcessSpec {
            program: PathBuf::from(&request.command),
            args: request.args.iter().map(Into::into).collect(),
            env,
            cwd,
        };
        let spawned =
            Supervised::spawn(&spec).map_err(|e| invalid(format!("cannot run `{}`: {e}", request.command)))?;
        let limit = request
            .output_byte_limit
            .and_then(|l| usize::try_from(l).ok())
            .unwrap_or(MAX_OUTPUT_BYTES)
            .min(MAX_OUTPUT_BYTES);
        let (kill_tx, kill_rx) = oneshot::channel();
        let term = Arc::new(Term {
            output: Mutex::new(Output { text: String::new(), truncated: false, limit }),
            exit: watch::Sender::new(None),
            kill: Mutex::new(Some(kill_tx)),
            call: Mutex::new(None),
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let sink = self.sink.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let readers = [
            tokio::spawn(read(spawned.stdout, Arc::downgrade(&term), sink.clone())),
            tokio::spawn(read(spawned.stderr, Arc::downgrade(&term), sink)),
        ];
        drop(spawned.stdin);
        tokio::spawn(supervise(spawned.process, kill_rx, term.exit.clone(), readers));
        terms.insert(id.clone(), term);
        Ok(acp::CreateTerminalResponse::new(id))
    }

    /// `terminal/output`.
    pub(super) fn output(&self, id: &acp::TerminalId) -> Result<acp::TerminalOutputResponse, TerminalError> {
        let term = self.get(id)?;
        let o = term.output.lock().unwrap_or_else(|e| e.into_inner());
        Ok(acp::TerminalOutputResponse::new(o.text.clone(), o.truncated).exit_status(term.exit.borrow().clone()))
    }

    /// `terminal/wait_for_exit`: once the command has ended.
    pub(super) async fn wait_for_exit(
        &self,
        id: &acp::TerminalId,
    ) -> Result<acp::WaitForTerminalExitResponse, TerminalError> {
        let mut rx = self.get(id)?.exit.subscribe();
        let status = rx.wait_for(Option::is_some).await.map_err(|_| invalid("the terminal was released"))?.clone();
        Ok(acp::WaitForTerminalExitResponse::new(status.unwrap_or_default()))
    }

    /// `terminal/kill`: the command ends; the terminal stays readable until released.
    pub(super) fn kill(&self, id: &acp::TerminalId) -> Result<acp::KillTerminalResponse, TerminalError> {
        self.get(id)?.kill();
        Ok(acp::KillTerminalResponse::new())
    }

    /// `terminal/release`: killed if still running, and forgotten.
    pub(super) fn release(&self, id: &acp::TerminalId) -> Result<acp::ReleaseTerminalResponse, TerminalError> {
        let term = self.terms.lock().unwrap_or_else(|e| e.into_inner()).remove(&*id.0);
        term.ok_or_else(|| invalid(format!("no terminal `{}`", id.0)))?.kill();
        Ok(acp::ReleaseTerminalResponse::new())
    }

    /// The call `call_id` shows terminal `id`: what it printed so far goes there now, the rest as
    /// it comes.
    pub(super) fn link(&self, id: &str, call_id: &str) -> Option<String> {
        let term = self.terms.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()?;
        let mut call = term.call.lock().unwrap_or_else(|e| e.into_inner());
        if call.is_some() {
            return None;
        }
        *call = Some(call_id.to_owned());
        let text = term.output.lock().unwrap_or_else(|e| e.into_inner()).text.clone();
        (!text.is_empty()).then_some(text)
    }

    /// Every terminal killed and forgotten (the session's process stops).
    pub(super) fn kill_all(&self) {
        let terms: Vec<Arc<Term>> =
            self.terms.lock().unwrap_or_else(|e| e.into_inner()).drain().map(|(_, t)| t).collect();
        for t in terms {
            t.kill();
        }
    }
}

/// Reads one of a terminal's pipes into its output, and to its call once linked.
async fn read(mut pipe: impl tokio::io::AsyncRead + Unpin, term: std::sync::Weak<Term>, sink: Option<OutputSink>) {
    let mut buf = vec![0u8; 8192];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        // Whole characters only; a character cut by the read waits for the rest.
        let valid = match std::str::from_utf8(&pending) {
            Ok(_) => pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
        pending.drain(..valid);
        let Some(term) = term.upgrade() else { break };
        term.output.lock().unwrap_or_else(|e| e.into_inner()).push(&text);
        let call = term.call.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let (Some(call), Some(sink)) = (call, &sink) {
            sink(call, text);
        }
    }
}

/// Waits for the command's end (or a kill), then for its output to be read, and says how it ended.
async fn supervise(
    mut process: Supervised,
    kill: oneshot::Receiver<()>,
    exit: watch::Sender<Option<acp::TerminalExitStatus>>,
    readers: [tokio::task::JoinHandle<()>; 2],
) {
    let status = tokio::select! {
        s = process.wait() => s.ok(),
        _ = kill => process.terminate(KILL_GRACE).await,
    };
    // Descendants that outlived the leader, and the group, go too.
    let family = process.family();
    process.kill_family(&family);
    for r in readers {
        let _ = tokio::time::timeout(Duration::from_secs(5), r).await;
    }
    let mut s = acp::TerminalExitStatus::new();
    if let Some(status) = status {
        use std::os::unix::process::ExitStatusExt;
        s = s.exit_code(status.code().and_then(|c| u32::try_from(c).ok()));
        s = s.signal(status.signal().map(|n| format!("signal {n}")));
    }
    let _ = exit.send(Some(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_the_newest_bytes_on_character_boundaries() {
        let mut o = Output { text: String::new(), truncated: false, limit: 5 };
        o.push("abc");
        assert_eq!((o.text.as_str(), o.truncated), ("abc", false));
        o.push("déf");
        assert!(o.text.len() <= 5 && o.truncated, "{:?}", o.text);
        assert!(o.text.ends_with("déf") || o.text.ends_with("éf"), "{:?}", o.text);
    }

    #[test]
    fn a_terminals_cwd_stays_inside_the_sessions() {
        let top = Path::new("/w");
        assert_eq!(inside(top, Path::new("src")), Some(PathBuf::from("/w/src")));
        assert_eq!(inside(top, Path::new("/w/x")), Some(PathBuf::from("/w/x")));
        assert_eq!(inside(top, Path::new("../etc")), None);
        assert_eq!(inside(top, Path::new("/etc")), None);
    }

    #[tokio::test]
    async fn a_command_runs_its_output_is_kept_and_it_can_be_killed() {
        let dir = tempfile::tempdir().unwrap();
        let t = Terminals::new(dir.path().to_path_buf(), Vec::new());
        let req = |cmd: &str, args: &[&str]| {
            acp::CreateTerminalRequest::new("s", cmd).args(args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
        };
        let made = t.create(&req("sh", &["-c", "echo out; echo err >&2; exit 3"])).unwrap();
        let exit = t.wait_for_exit(&made.terminal_id).await.unwrap();
        assert_eq!(exit.exit_status.exit_code, Some(3));
        let out = t.output(&made.terminal_id).unwrap();
        assert!(out.output.contains("out") && out.output.contains("err"), "{out:?}");
        assert!(out.exit_status.is_some());
        // A command that would run for ever: killed, it ends by a signal.
        let long = t.create(&req("sleep", &["1000"])).unwrap();
        t.kill(&long.terminal_id).unwrap();
        let exit = t.wait_for_exit(&long.terminal_id).await.unwrap();
        assert!(exit.exit_status.signal.is_some(), "{exit:?}");
        t.release(&long.terminal_id).unwrap();
        assert!(t.output(&long.terminal_id).is_err(), "released");
        // Outside the cwd, or too many: refused.
        assert!(t.create(&req("true", &[]).cwd(PathBuf::from("/etc"))).is_err());
        let many: Vec<_> = (0..MAX_TERMINALS - 1).map(|_| t.create(&req("sleep", &["1000"])).unwrap()).collect();
        assert!(t.create(&req("true", &[])).is_err(), "one too many");
        t.kill_all();
        for m in &many {
            assert!(t.output(&m.terminal_id).is_err());
        }
    }
}
