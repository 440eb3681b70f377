//! The client's `terminal/*` capability: commands an agent asks Ensemble to run for it. Each runs
//! under the session's supervision, as the agent itself does (own process group, pdeathsig, the
//! run tag, an explicit environment), in a directory inside the session's cwd; its output (stdout
//! and stderr, as they come) is kept up to the agent's byte limit, cut from the front, and streamed
//! as the output of the tool call that shows the terminal. A terminal ends with its session:
//! killed when the agent releases it, when the session's process stops, or when it is dropped.
//!
//! A session's terminals share one output budget ([`OutputBudget`], the provider's
//! `terminal_output_bytes_per_sec`): what they print beyond it is dropped, counted, and said in
//! the output by a marker, and the pipes of a terminal over it are read only every
//! [`DROP_TICK`], so a command that floods them (`yes`) waits on its full pipe instead of
//! keeping the server busy reading, storing and sending what nobody will read.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
/// The default of the provider's `terminal_output_bytes_per_sec`.
pub(super) const DEFAULT_OUTPUT_BYTES_PER_SEC: u64 = 256 * 1024;
/// How often a pipe is read while its session's budget is spent: what it drains is dropped, and
/// between reads the command blocks on its full pipe (at most a pipe's capacity a tick).
pub(super) const DROP_TICK: Duration = Duration::from_millis(100);
/// One read of a pipe: a whole default pipe (64 KiB), so that a tick drains it.
const READ_BYTES: usize = 64 * 1024;
/// The budget's window.
const WINDOW: Duration = Duration::from_secs(1);

/// What a session's terminals may keep of their output together: `per_sec` bytes in each
/// window of a second.
pub(super) struct OutputBudget {
    per_sec: u64,
    window: Mutex<(Instant, u64)>,
}

impl OutputBudget {
    pub(super) fn new(per_sec: u64) -> Self {
        Self { per_sec, window: Mutex::new((Instant::now(), 0)) }
    }

    /// How many of `n` bytes read now may be kept; with fewer than `n`, also when the window
    /// ends (the budget is back).
    fn take(&self, n: usize) -> (usize, Instant) {
        let mut w = self.window.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if now.duration_since(w.0) >= WINDOW {
            *w = (now, 0);
        }
        let left = self.per_sec.saturating_sub(w.1);
        let kept = usize::try_from(left).map_or(n, |left| left.min(n));
        w.1 += kept as u64;
        (kept, w.0 + WINDOW)
    }

    /// The marker that stands in the output for `dropped` bytes.
    fn marker(&self, dropped: u64) -> String {
        format!(
            "\n[Ensemble: {dropped} bytes of output dropped: this session's terminals keep at most {} bytes a second]\n",
            self.per_sec
        )
    }
}

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
    /// The session's box: every command runs in it, as the agent does.
    sandbox: Option<Arc<ensemble_isolation::Sandbox>>,
    budget: Arc<OutputBudget>,
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
    /// The terminals of a session working in `cwd`, whose agent was given `env`, keeping at most
    /// `bytes_per_sec` of their output together.
    pub(super) fn new(
        cwd: PathBuf,
        env: Vec<(String, String)>,
        bytes_per_sec: u64,
        sandbox: Option<Arc<ensemble_isolation::Sandbox>>,
    ) -> Self {
        Self {
            cwd,
            env,
            sandbox,
            budget: Arc::new(OutputBudget::new(bytes_per_sec)),
            terms: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            sink: Mutex::new(None),
        }
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
            cgroup_procs: Vec::new(),
        }
        .boxed(self.sandbox.as_deref());
        let spawned = spec
            .and_then(|spec| Supervised::spawn(&spec))
            .map_err(|e| invalid(format!("cannot run `{}`: {e}", request.command)))?;
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
            tokio::spawn(read(spawned.stdout, Arc::downgrade(&term), sink.clone(), self.budget.clone())),
            tokio::spawn(read(spawned.stderr, Arc::downgrade(&term), sink, self.budget.clone())),
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

/// Reads one of a terminal's pipes into its output, and to its call once linked, within the
/// session's budget: the rest is dropped, and a marker says how much where it was.
async fn read(
    mut pipe: impl tokio::io::AsyncRead + Unpin,
    term: std::sync::Weak<Term>,
    sink: Option<OutputSink>,
    budget: Arc<OutputBudget>,
) {
    let mut buf = vec![0u8; READ_BYTES];
    let mut pending: Vec<u8> = Vec::new();
    // Dropped since the last marker.
    let mut dropped: u64 = 0;
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let (kept, window_end) = budget.take(n);
        let mut text = String::new();
        if kept > 0 {
            if dropped > 0 {
                text.push_str(&budget.marker(dropped));
                dropped = 0;
            }
            pending.extend_from_slice(&buf[..kept]);
            // Whole characters only; a character cut by the read waits for the rest.
            let valid = match std::str::from_utf8(&pending) {
                Ok(_) => pending.len(),
                Err(e) if e.error_len().is_none() && kept == n => e.valid_up_to(),
                Err(_) => pending.len(),
            };
            text.push_str(&String::from_utf8_lossy(&pending[..valid]));
            pending.drain(..valid);
        }
        if kept < n {
            dropped += (n - kept) as u64;
        }
        let Some(t) = term.upgrade() else { break };
        if kept < n {
            t.output.lock().unwrap_or_else(|e| e.into_inner()).truncated = true;
        }
        if !text.is_empty() {
            deliver(&t, text, &sink);
        }
        drop(t);
        if kept < n {
            // Spent: the next read drains the pipe once a tick (or as the window turns).
            tokio::time::sleep_until(window_end.min(Instant::now() + DROP_TICK).into()).await;
        }
    }
    if dropped > 0
        && let Some(t) = term.upgrade()
    {
        deliver(&t, budget.marker(dropped), &sink);
    }
}

/// Text a terminal printed: kept in its output, and sent to its call once linked.
fn deliver(term: &Term, text: String, sink: &Option<OutputSink>) {
    term.output.lock().unwrap_or_else(|e| e.into_inner()).push(&text);
    let call = term.call.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let (Some(call), Some(sink)) = (call, sink) {
        sink(call, text);
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
    // `send_replace`: stored even with no receiver yet (a `wait_for_exit` that comes later).
    exit.send_replace(Some(s));
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

    /// Splits a terminal's output into what was kept and the bytes its markers say were dropped.
    fn kept_and_dropped(text: &str) -> (usize, u64) {
        let mut kept = 0;
        let mut dropped = 0;
        let mut rest = text;
        while let Some(at) = rest.find("\n[Ensemble: ") {
            kept += at;
            let after = &rest[at + "\n[Ensemble: ".len()..];
            let (n, tail) = after.split_once(" bytes of output dropped").unwrap();
            dropped += n.parse::<u64>().unwrap();
            rest = &tail[tail.find("]\n").unwrap() + 2..];
        }
        (kept + rest.len(), dropped)
    }

    #[tokio::test]
    async fn a_sessions_terminals_share_a_budget_beyond_which_output_is_dropped_and_counted() {
        const BUDGET: u64 = 4096;
        const PRINTED: u64 = 300_000;
        let dir = tempfile::tempdir().unwrap();
        let t = Terminals::new(dir.path().to_path_buf(), Vec::new(), BUDGET, None);
        let started = Instant::now();
        let script = format!("yes | head -c {PRINTED}");
        let made: Vec<_> = (0..2)
            .map(|_| {
                let req = acp::CreateTerminalRequest::new("s", "sh").args(vec!["-c".to_owned(), script.clone()]);
                t.create(&req).unwrap()
            })
            .collect();
        let mut kept_total = 0;
        for m in &made {
            let exit = t.wait_for_exit(&m.terminal_id).await.unwrap();
            assert_eq!(exit.exit_status.exit_code, Some(0));
            let out = t.output(&m.terminal_id).unwrap();
            assert!(out.truncated, "dropped output is said truncated");
            let (kept, dropped) = kept_and_dropped(&out.output);
            // Every byte printed is either kept or counted in a marker.
            assert_eq!(kept as u64 + dropped, PRINTED, "{kept} kept, {dropped} dropped");
            assert!(dropped > 0);
            kept_total += kept as u64;
        }
        // Both terminals together kept no more than the budget of each window they ran in.
        let windows = started.elapsed().as_secs() + 1;
        assert!(kept_total <= BUDGET * windows, "{kept_total} kept over {windows} windows");
    }

    #[test]
    fn the_budget_is_shared_and_comes_back_each_window() {
        let b = OutputBudget::new(100);
        assert_eq!(b.take(60).0, 60);
        let (kept, end) = b.take(60);
        assert_eq!(kept, 40, "the rest of the window's budget");
        assert_eq!(b.take(10).0, 0);
        assert!(end > Instant::now() && end <= Instant::now() + WINDOW);
        *b.window.lock().unwrap() = (Instant::now() - WINDOW, 100);
        assert_eq!(b.take(60).0, 60, "a new window");
    }

    #[tokio::test]
    async fn an_exit_is_kept_for_whoever_asks_later() {
        // Nobody waits while the command ends: its exit must still be there for `output` and
        // for a `wait_for_exit` that comes afterwards (a watch send without receivers is lost).
        let dir = tempfile::tempdir().unwrap();
        let t = Terminals::new(dir.path().to_path_buf(), Vec::new(), DEFAULT_OUTPUT_BYTES_PER_SEC, None);
        let made =
            t.create(&acp::CreateTerminalRequest::new("s", "sh").args(vec!["-c".into(), "exit 7".into()])).unwrap();
        // No receiver may exist before the exit is recorded, so there is no event to wait on:
        // the state is read until it says so (yielding, not sleeping), within a deadline.
        let recorded = async {
            while t.output(&made.terminal_id).unwrap().exit_status.is_none() {
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), recorded).await.expect("the exit was never recorded");
        let exit = tokio::time::timeout(Duration::from_secs(10), t.wait_for_exit(&made.terminal_id)).await.unwrap();
        assert_eq!(exit.unwrap().exit_status.exit_code, Some(7));
    }

    #[tokio::test]
    async fn a_command_runs_its_output_is_kept_and_it_can_be_killed() {
        let dir = tempfile::tempdir().unwrap();
        let t = Terminals::new(dir.path().to_path_buf(), Vec::new(), DEFAULT_OUTPUT_BYTES_PER_SEC, None);
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
