#![forbid(unsafe_code)]
//! A scriptable mock of the OpenAI **Responses API** (`POST /v1/responses`, SSE streaming) on
//! 127.0.0.1, good enough for the real `codex app-server` (0.169.0) to run turns against.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::time::Duration;
//! use ensemble_mock_model::{CodexProvider, MockConfig, MockModel, Reply};
//!
//! let mock = MockModel::start(MockConfig::default().api_key("test-key")).await?;
//! mock.push(Reply::shell("echo hi > out.txt"));   // 1st model call: run a command
//! // 2nd model call (carrying the command output) is answered by the keyword rules with
//! // "The command ran. Tool output was: …".
//! let args = CodexProvider::default().env_key("MOCK_API_KEY").args(&mock.base_url());
//! // spawn `codex app-server` with `args`, env MOCK_API_KEY=test-key, drive a turn, then:
//! let reqs = mock.wait_for_responses_requests(2, Duration::from_secs(30)).await?;
//! assert!(reqs[1].trailing_tool_output().is_some());
//! # Ok(()) }
//! ```
//!
//! How an answer is chosen for each `POST …/responses`, first match wins:
//! 1. a wrong or missing API key when one is configured: HTTP 401 in OpenAI's shape;
//! 2. the queue of scripted replies ([`MockModel::push`]), first in first out;
//! 3. the responder closure ([`MockModel::set_responder`]) if it returns `Some`;
//! 4. the keyword rules (see [`MockConfig::keyword_rules`]), or HTTP 500 if they are off.

mod codex;
mod keywords;
mod reply;
mod request;
mod server;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::task::JoinHandle;

pub use codex::CodexProvider;
pub use keywords::quote_tool_output;
pub use reply::{
    DEFAULT_GOAL_OBJECTIVE, DEFAULT_PATCH, DEFAULT_TEXT_CHUNKS, Gate, HttpReply, MessageStep, Reply, Step, StreamEnd,
    StreamReply, TOOL_OUTPUT_REPLY_PREFIX, Usage,
};
pub use request::{Outcome, RecordedRequest, ToolOutput};

use server::Shared;

/// Computes a reply for a request; `None` falls through to the keyword rules.
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

/// Settings of a mock. Can be changed while it runs with [`MockModel::update_config`].
#[derive(Clone, Debug)]
pub struct MockConfig {
    /// Address to bind. Default `127.0.0.1:0` (a free port).
    pub addr: SocketAddr,
    /// If set, every request must carry `Authorization: Bearer <key>`, otherwise it gets 401.
    pub api_key: Option<String>,
    /// Answer unscripted requests from keywords in the last user message (default true):
    /// `SHELL`, `SHELL ESCALATE`, `PATCH`, `ASKUSER`, `GOAL`, `REASON`, `MINIMAL`, `NOCOMPLETE`,
    /// `FAILEVENT`, `HTTP500`, `HTTP429`, `SLOW`; anything else gets "Hello from the mock model.".
    /// A request ending with a tool result gets a message quoting it. With false, unscripted
    /// requests get HTTP 500.
    pub keyword_rules: bool,
    /// Pause after each delta of the default text reply. Default 10 ms.
    pub text_delay: Duration,
    /// `SLOW`: number of deltas (default 60) …
    pub slow_deltas: usize,
    /// … and the pause after each (default 250 ms).
    pub slow_delay: Duration,
    /// Command for the `SHELL` keyword.
    pub shell_command: String,
    /// Usage the keyword replies report.
    pub usage: Usage,
    /// Append every request and outcome to this file as JSON lines.
    pub log_file: Option<PathBuf>,
}

/// Default command of the `SHELL` keyword (a write, so `untrusted` asks for approval).
pub const DEFAULT_SHELL_COMMAND: &str = "echo mock-shell-ran > mock_shell_out.txt && cat mock_shell_out.txt";

impl Default for MockConfig {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            api_key: None,
            keyword_rules: true,
            text_delay: Duration::from_millis(10),
            slow_deltas: 60,
            slow_delay: Duration::from_millis(250),
            shell_command: DEFAULT_SHELL_COMMAND.to_owned(),
            usage: Usage::default(),
            log_file: None,
        }
    }
}

impl MockConfig {
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    pub fn keyword_rules(mut self, on: bool) -> Self {
        self.keyword_rules = on;
        self
    }

    pub fn text_delay(mut self, delay: Duration) -> Self {
        self.text_delay = delay;
        self
    }

    pub fn slow_pacing(mut self, deltas: usize, delay: Duration) -> Self {
        self.slow_deltas = deltas;
        self.slow_delay = delay;
        self
    }

    pub fn shell_command(mut self, command: impl Into<String>) -> Self {
        self.shell_command = command.into();
        self
    }

    pub fn log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_file = Some(path.into());
        self
    }

    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }
}

/// A wait on the request log did not finish in time.
#[derive(Debug)]
pub struct WaitTimeout {
    pub waited: Duration,
    /// The request log when the wait gave up.
    pub requests: Vec<RecordedRequest>,
}

impl std::fmt::Display for WaitTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mock model: condition not met after {:?}; requests so far:", self.waited)?;
        for r in &self.requests {
            write!(f, " [#{} {} {} -> {} {:?}]", r.seq, r.method, r.path, r.reply, r.outcome)?;
        }
        Ok(())
    }
}

impl std::error::Error for WaitTimeout {}

impl From<WaitTimeout> for std::io::Error {
    fn from(e: WaitTimeout) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, e)
    }
}

/// A running mock. Stops serving when dropped (streams in progress end without
/// `response.completed`).
pub struct MockModel {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModel").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl MockModel {
    /// Bind `config.addr` and serve in a task on the current tokio runtime.
    pub async fn start(config: MockConfig) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(config.addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(config));
        let app = Router::new().fallback(server::handle).layer(DefaultBodyLimit::disable()).with_state(shared.clone());
        let mut stop = shared.shutdown.subscribe();
        let server = tokio::spawn(async move {
            let result = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stop.wait_for(|s| *s).await;
                })
                .await;
            if let Err(err) = result {
                tracing::warn!(%err, "mock-model server stopped with an error");
            }
        });
        Ok(Self { shared, addr, server: Some(server) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the `base_url` for codex's model provider.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `-c` arguments for `codex app-server` that point `provider` at this mock.
    pub fn codex_args(&self, provider: &CodexProvider) -> Vec<String> {
        provider.args(&self.base_url())
    }

    /// Queue a reply for the next `POST …/responses` (FIFO, ahead of responder and keywords).
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(reply);
    }

    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.lock().queue.extend(replies);
    }

    /// Replies still queued.
    pub fn queued(&self) -> usize {
        self.shared.lock().queue.len()
    }

    pub fn clear_queue(&self) {
        self.shared.lock().queue.clear();
    }

    /// Decide replies with a closure (after the queue, before the keyword rules).
    pub fn set_responder<F>(&self, responder: F)
    where
        F: Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
    {
        self.shared.lock().responder = Some(Arc::new(responder));
    }

    pub fn clear_responder(&self) {
        self.shared.lock().responder = None;
    }

    /// Change settings while running (e.g. the API key or the slow pacing).
    pub fn update_config(&self, change: impl FnOnce(&mut MockConfig)) {
        change(&mut self.shared.lock().config);
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Only the `POST …/responses` requests (model calls).
    pub fn responses_requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.iter().filter(|r| r.is_responses()).cloned().collect()
    }

    /// The request with this `seq`.
    pub fn request(&self, seq: u64) -> Option<RecordedRequest> {
        self.shared.lock().requests.iter().find(|r| r.seq == seq).cloned()
    }

    /// Wait until `done(requests)` holds; returns the log at that point.
    pub async fn wait_for<F>(&self, timeout: Duration, mut done: F) -> Result<Vec<RecordedRequest>, WaitTimeout>
    where
        F: FnMut(&[RecordedRequest]) -> bool,
    {
        let mut changed = self.shared.changed.subscribe();
        let wait = async {
            loop {
                changed.borrow_and_update();
                let snapshot = self.requests();
                if done(&snapshot) {
                    return snapshot;
                }
                if changed.changed().await.is_err() {
                    // The sender lives as long as `self`; keep the type checker happy.
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .map_err(|_| WaitTimeout { waited: timeout, requests: self.requests() })
    }

    /// Wait until at least `n` model calls arrived; returns the model calls.
    pub async fn wait_for_responses_requests(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<RecordedRequest>, WaitTimeout> {
        let all = self.wait_for(timeout, |reqs| reqs.iter().filter(|r| r.is_responses()).count() >= n).await?;
        Ok(all.into_iter().filter(RecordedRequest::is_responses).collect())
    }

    /// Wait until the answer to request `seq` is over; returns how it ended.
    pub async fn wait_for_outcome(&self, seq: u64, timeout: Duration) -> Result<Outcome, WaitTimeout> {
        let reqs =
            self.wait_for(timeout, |reqs| reqs.iter().any(|r| r.seq == seq && r.outcome != Outcome::Pending)).await?;
        Ok(reqs.into_iter().find(|r| r.seq == seq).map(|r| r.outcome).unwrap_or(Outcome::Pending))
    }

    /// Stop serving and wait for the server task to end.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.send_replace(true);
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
    }
}
