#![forbid(unsafe_code)]
//! A scriptable mock of model APIs on 127.0.0.1, good enough for real coding agents to run turns
//! against. One [`MockModel`] serves every [`Dialect`] on the same port, with one request log,
//! one API key and one queue of scripted replies:
//!
//! | dialect | route | agent | point it at the mock with |
//! |---|---|---|---|
//! | OpenAI Responses | `POST /v1/responses` | `codex app-server` 0.171.0 | [`CodexProvider`] with [`MockModel::base_url`] |
//! | Anthropic Messages | `POST /v1/messages[?beta=true]` | Claude Code (claude-agent-acp) | `ANTHROPIC_BASE_URL=`[`MockModel::url`], `ANTHROPIC_API_KEY` |
//! | Gemini | `POST /v1beta/models/{m}:streamGenerateContent?alt=sse`, `:generateContent` | Gemini CLI `--acp` | `GOOGLE_GEMINI_BASE_URL=`[`MockModel::url`], `GEMINI_API_KEY` |
//! | OpenAI chat completions | `POST /v1/chat/completions` | opencode `acp` | `@ai-sdk/openai-compatible` provider, `baseURL` [`MockModel::base_url`] |
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
//! How an answer is chosen for each model call, first match wins:
//! 1. a wrong or missing API key when one is configured: HTTP 401 in the dialect's shape (the
//!    key is read from `Authorization: Bearer`, and also `x-api-key` for Anthropic,
//!    `x-goog-api-key` or `?key=` for Gemini);
//! 2. a recognised side request ([`SideRequest`]: title generation, prompt suggestion,
//!    permission classifier, structured output), answered by content without touching the
//!    queue (see [`MockConfig::side_requests`]);
//! 3. the queue of scripted replies ([`MockModel::push`]), first in first out;
//! 4. the responder closure ([`MockModel::set_responder`]) if it returns `Some`;
//! 5. the keyword rules (see [`MockConfig::keyword_rules`]), or HTTP 500 if they are off.
//!
//! A [`Reply`] does not depend on the dialect: the same `Reply::shell(…)` becomes an
//! `exec_command` call for codex, a `Bash` `tool_use` for Claude Code, a `run_shell_command`
//! `functionCall` for Gemini CLI and a `bash` tool call for opencode. A request that does not ask
//! for a stream gets the reply as one JSON body.

mod anthropic;
mod chat;
mod codex;
mod dialect;
mod gemini;
mod keywords;
mod pieces;
mod readers;
mod reply;
mod request;
mod server;
mod side;
mod sse;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::task::JoinHandle;

pub use codex::CodexProvider;
pub use dialect::Dialect;
pub use keywords::quote_tool_output;
pub use reply::{
    DEFAULT_GOAL_OBJECTIVE, DEFAULT_PATCH, DEFAULT_TEXT_CHUNKS, Gate, HttpReply, MessageStep, Reply, Step, StreamEnd,
    StreamReply, TOOL_OUTPUT_REPLY_PREFIX, TOOL_REJECTED_REPLY, Usage, WRITE_FILE_CONTENT, WRITE_FILE_NAME,
};
pub use request::{Outcome, RecordedRequest, ToolOutput};
pub use side::{DEFAULT_TITLE, SUGGESTION_REPLY, SideRequest};

use server::Shared;

/// Computes a reply for a request; `None` falls through to the keyword rules.
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

/// Settings of a mock. Can be changed while it runs with [`MockModel::update_config`].
#[derive(Clone, Debug)]
pub struct MockConfig {
    /// Address to bind. Default `127.0.0.1:0` (a free port).
    pub addr: SocketAddr,
    /// If set, every request must present this key, otherwise it gets 401: as
    /// `Authorization: Bearer <key>` (every dialect), `x-api-key` (Anthropic), `x-goog-api-key`
    /// or the `key` query parameter (Gemini).
    pub api_key: Option<String>,
    /// Answer unscripted requests from keywords in the last user message (default true).
    /// Responses (codex): `SHELL`, `SHELL ESCALATE`, `PATCH`, `WRITE`, `ASKUSER`, `GOAL`,
    /// `REASON`, `MINIMAL`, `NOCOMPLETE`, `FAILEVENT`, `HTTP500`, `HTTP429`, `HTTP400`, `SLOW`.
    /// Anthropic, Gemini, chat completions: `SHELL`, `WRITE`, `REASON`, `NOCOMPLETE`,
    /// `FAILEVENT`, `HTTP500`, `HTTP429`, `HTTP400`, `SLOW`. Anything else gets "Hello from the
    /// mock model.". A request ending with a tool result gets a message quoting it ("The command
    /// was not run." when the agent reports the call failed or rejected). With false, unscripted
    /// requests get HTTP 500.
    pub keyword_rules: bool,
    /// Answer recognised side requests ([`SideRequest`]) by content, ahead of the queue
    /// (default true). With false they go through the queue, responder and keyword rules like
    /// any model call.
    pub side_requests: bool,
    /// The session title the mock gives title-generation requests. Default [`DEFAULT_TITLE`].
    pub title: String,
    /// Pause after each delta of the default text reply. Default 10 ms.
    pub text_delay: Duration,
    /// `SLOW`: number of deltas (default 60) …
    pub slow_deltas: usize,
    /// … and the pause after each (default 250 ms).
    pub slow_delay: Duration,
    /// Command for the `SHELL` keyword (whatever the shell tool is called in the dialect).
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
            side_requests: true,
            title: DEFAULT_TITLE.to_owned(),
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

    pub fn side_requests(mut self, on: bool) -> Self {
        self.side_requests = on;
        self
    }

    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
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

/// A running mock. Stops serving when dropped (streams in progress end without their terminal
/// event).
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

    /// `http://127.0.0.1:PORT`: the base URL for Claude Code (`ANTHROPIC_BASE_URL`, which must
    /// not end in `/v1`) and Gemini CLI (`GOOGLE_GEMINI_BASE_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the `base_url` for codex's model provider and for OpenAI
    /// compatible providers (opencode's `baseURL`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `-c` arguments for `codex app-server` that point `provider` at this mock.
    pub fn codex_args(&self, provider: &CodexProvider) -> Vec<String> {
        provider.args(&self.base_url())
    }

    /// Queue a reply for the next model call, in any dialect (FIFO, ahead of responder and
    /// keywords; side requests do not take from the queue).
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

    /// Decide replies with a closure (after the queue, before the keyword rules). It sees model
    /// calls of every dialect ([`RecordedRequest::dialect`]); side requests only when
    /// [`MockConfig::side_requests`] is off.
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

    /// Model calls of the agents' main loops, in any dialect: side requests (titles,
    /// suggestions, classifiers, routers) are left out.
    pub fn model_calls(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.iter().filter(|r| r.is_model_call()).cloned().collect()
    }

    /// Every request in this dialect, side requests included.
    pub fn dialect_requests(&self, dialect: Dialect) -> Vec<RecordedRequest> {
        self.shared.lock().requests.iter().filter(|r| r.dialect() == Some(dialect)).cloned().collect()
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

    /// Wait until at least `n` main-loop model calls (any dialect, see [`Self::model_calls`])
    /// arrived; returns them.
    pub async fn wait_for_model_calls(&self, n: usize, timeout: Duration) -> Result<Vec<RecordedRequest>, WaitTimeout> {
        let all = self.wait_for(timeout, |reqs| reqs.iter().filter(|r| r.is_model_call()).count() >= n).await?;
        Ok(all.into_iter().filter(RecordedRequest::is_model_call).collect())
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
