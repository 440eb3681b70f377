//! One codex process: its JSON-RPC connection, its supervision, and the router that hands every
//! message to the thread it names.
//!
//! The session that started the process and the side conversations forked from it share it. The
//! router knows threads only as [`Routed`]: it delivers, parks the messages of a fork that has not
//! answered yet (replaying them before anything newer once the fork registers), and tells every
//! thread when the process ends.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use ensemble_core::adapter::AdapterError;
use ensemble_core::clock::new_id;
use ensemble_core::model::SessionKey;
use tokio::sync::Notify;

use super::config::CodexConfig;
use super::wire::Scope;
use crate::kit::jsonrpc::{Incoming, IncomingRx, RpcClient, RpcError};
use crate::kit::process::Supervised;
use crate::kit::stderr::StderrTail;
use crate::kit::typed::{self, CallError, Request};

/// What the router needs of a thread it delivers to.
pub(super) trait Routed: Send + Sync + 'static {
    /// The codex thread, once codex has named it.
    fn thread_id(&self) -> Option<String>;

    /// Handles one message of this thread (or, for the process's owner, of no thread).
    fn handle(self: Arc<Self>, msg: Incoming, timeout: Duration) -> impl Future<Output = ()> + Send;

    /// The process ended: by itself (`lost`, with the reason) or because Ensemble stopped it.
    fn process_ended(self: Arc<Self>, lost: Option<String>) -> impl Future<Output = ()> + Send;

    /// Wakes whoever waits for the thread's turn to end (the process is gone).
    fn wake_waiters(&self);
}

/// One codex process and the threads on it.
pub(super) struct Conn<T> {
    label: SessionKey,
    pub(super) rpc: RpcClient,
    process: tokio::sync::Mutex<Option<Supervised>>,
    /// Distinguishes request ids of different processes (codex numbers them from 0 each time).
    pub(super) nonce: String,
    /// Set when Ensemble stops the process on purpose: its end is then not a loss.
    closing: AtomicBool,
    stderr_tail: StderrTail,
    routes: Mutex<Routes<T>>,
    replay_ready: Notify,
    /// The session's box, kept as long as its process is.
    _sandbox: Option<ensemble_isolation::Sandbox>,
}

struct Routes<T> {
    /// The session that owns the process: it gets what names no known thread while its own thread
    /// is not known yet (start-up), and what names no thread at all.
    owner: Weak<T>,
    threads: HashMap<String, Weak<T>>,
    /// Forks under way: messages of threads nobody owns yet wait here for the fork to register.
    forks: usize,
    parked: Vec<(String, Incoming)>,
    /// Parked messages of a registered fork, delivered by the router before anything newer for
    /// that thread (so a fork's first notifications keep their order).
    replay: VecDeque<(String, Incoming)>,
}

enum Route<T> {
    To(Arc<T>),
    Parked,
    Nowhere,
}

impl<T: Routed> Conn<T> {
    pub(super) fn new(
        label: SessionKey,
        rpc: RpcClient,
        process: Supervised,
        stderr_tail: StderrTail,
        sandbox: Option<ensemble_isolation::Sandbox>,
    ) -> Self {
        Self {
            _sandbox: sandbox,
            label,
            rpc,
            process: tokio::sync::Mutex::new(Some(process)),
            nonce: new_id().chars().rev().take(8).collect(),
            closing: AtomicBool::new(false),
            stderr_tail,
            routes: Mutex::new(Routes {
                owner: Weak::new(),
                threads: HashMap::new(),
                forks: 0,
                parked: Vec::new(),
                replay: VecDeque::new(),
            }),
            replay_ready: Notify::new(),
        }
    }

    fn routes(&self) -> MutexGuard<'_, Routes<T>> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session that started the process.
    pub(super) fn set_owner(&self, owner: &Arc<T>) {
        self.routes().owner = Arc::downgrade(owner);
    }

    fn route(&self, msg: &Incoming) -> Route<T> {
        let params = match msg {
            Incoming::Notification { params, .. } | Incoming::Request { params, .. } => params,
            Incoming::Response { .. } => return Route::Nowhere,
        };
        let thread = Scope::of(params).thread_id;
        let mut r = self.routes();
        let owner = r.owner.upgrade();
        let Some(thread) = thread else { return owner.map(Route::To).unwrap_or(Route::Nowhere) };
        if let Some(live) = r.threads.get(thread).and_then(Weak::upgrade) {
            if r.replay.iter().any(|(t, _)| t == thread) {
                r.replay.push_back((thread.to_owned(), msg.clone()));
                return Route::Parked;
            }
            return Route::To(live);
        }
        if r.forks > 0 {
            r.parked.push((thread.to_owned(), msg.clone()));
            return Route::Parked;
        }
        match owner {
            // Before thread/start answers, the owner's thread is not registered yet.
            Some(o) if o.thread_id().is_none() => Route::To(o),
            _ => Route::Nowhere,
        }
    }

    pub(super) fn register(&self, thread: &str, live: &Arc<T>) {
        self.routes().threads.insert(thread.to_owned(), Arc::downgrade(live));
    }

    pub(super) fn deregister(&self, thread: &str) {
        self.routes().threads.remove(thread);
    }

    pub(super) fn begin_fork(&self) {
        self.routes().forks += 1;
    }

    /// Ends a fork. With the fork's thread and session, registers them and hands what was parked
    /// for the thread to the router, which delivers it before anything newer.
    pub(super) fn end_fork(&self, registered: Option<(&str, &Arc<T>)>) {
        {
            let mut r = self.routes();
            r.forks = r.forks.saturating_sub(1);
            let parked = std::mem::take(&mut r.parked);
            let thread = registered.map(|(t, _)| t);
            let (mine, rest): (Vec<_>, Vec<_>) = parked.into_iter().partition(|(t, _)| Some(t.as_str()) == thread);
            if let Some((t, live)) = registered {
                r.threads.insert(t.to_owned(), Arc::downgrade(live));
            }
            r.replay.extend(mine);
            if r.forks > 0 {
                r.parked = rest;
            } else if !rest.is_empty() {
                tracing::debug!(process = %self.label, dropped = rest.len(), "dropping messages of unknown threads");
            }
        }
        self.replay_ready.notify_one();
    }

    fn take_replay(&self) -> Vec<(Arc<T>, Incoming)> {
        let mut r = self.routes();
        let replay = std::mem::take(&mut r.replay);
        replay.into_iter().filter_map(|(t, m)| r.threads.get(&t).and_then(Weak::upgrade).map(|l| (l, m))).collect()
    }

    /// Every session on this process.
    fn lives(&self) -> Vec<Arc<T>> {
        let r = self.routes();
        let mut out: Vec<Arc<T>> = r.threads.values().filter_map(Weak::upgrade).collect();
        if let Some(o) = r.owner.upgrade()
            && !out.iter().any(|l| Arc::ptr_eq(l, &o))
        {
            out.push(o);
        }
        out
    }

    /// Calls `R`; a failure is the adapter's error.
    pub(super) async fn call<R: Request>(
        &self,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<R::Response, AdapterError> {
        match typed::call::<R>(&self.rpc, params, timeout).await {
            Ok(response) => Ok(response),
            Err(e) => Err(self.call_error(R::METHOD, e).await),
        }
    }

    /// Calls `R` for its effect (its result is not read); a failure is the adapter's error.
    pub(super) async fn call_discarding<R: Request>(
        &self,
        params: &R::Params,
        timeout: Duration,
    ) -> Result<(), AdapterError> {
        match typed::call_discarding::<R>(&self.rpc, params, timeout).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.rpc_error(R::METHOD, e).await),
        }
    }

    /// Turns a typed call's failure into an adapter error.
    pub(super) async fn call_error(&self, method: &str, e: CallError) -> AdapterError {
        match e {
            CallError::Rpc(e) => self.rpc_error(method, e).await,
            e @ CallError::Result { .. } => AdapterError::failed("provider_error", format!("codex {e}")),
        }
    }

    /// Turns an RPC failure into an adapter error, with the exit status when the process died.
    pub(super) async fn rpc_error(&self, method: &str, e: RpcError) -> AdapterError {
        match e {
            RpcError::Timeout { .. } => AdapterError::Timeout(e.to_string()),
            RpcError::Server { error, .. } => {
                AdapterError::failed("provider_error", format!("codex rejected `{method}`: {}", error.message))
            }
            RpcError::Closed(reason) => {
                let status = self.exit_status(Duration::from_millis(500)).await;
                AdapterError::failed(
                    "provider_exited",
                    format!(
                        "codex app-server went away during `{method}` ({reason}; {status}){}",
                        self.stderr_tail.suffix()
                    ),
                )
            }
        }
    }

    async fn exit_status(&self, wait: Duration) -> String {
        match self.process.lock().await.as_mut() {
            Some(p) => p.exit_text(wait).await,
            None => "stopped".into(),
        }
    }

    /// Stops the process: close stdin and give codex `stop_grace` to exit, then SIGTERM, then SIGKILL.
    pub(super) async fn stop(&self, config: &CodexConfig) {
        self.closing.store(true, Ordering::SeqCst);
        let process = self.process.lock().await.take();
        // Before stdin closes and codex exits by itself: once it is gone, descendants that left
        // its process group (setsid) are orphans that /proc no longer ties to it.
        let family = process.as_ref().map(Supervised::family).unwrap_or_default();
        self.rpc.close("the session stopped its codex process");
        if let Some(p) = process {
            p.shut_down(&family, config.stop_grace, config.term_grace).await;
        }
        for live in self.lives() {
            live.wake_waiters();
        }
    }
}

/// Routes a process's requests and notifications to its threads; reports the process's end to
/// every thread still on it.
pub(super) async fn route<T: Routed>(conn: Arc<Conn<T>>, mut incoming: IncomingRx, timeout: Duration) {
    loop {
        let next = tokio::select! {
            biased;
            _ = conn.replay_ready.notified() => None,
            m = incoming.recv() => Some(m),
        };
        // What a fork parked came before anything received after it.
        loop {
            let replay = conn.take_replay();
            if replay.is_empty() {
                break;
            }
            for (live, msg) in replay {
                live.handle(msg, timeout).await;
            }
        }
        let msg = match next {
            None => continue,
            Some(None) => break,
            Some(Some(msg)) => msg,
        };
        match conn.route(&msg) {
            Route::To(live) => live.handle(msg, timeout).await,
            Route::Parked => {}
            Route::Nowhere => tracing::debug!(process = %conn.label, "dropping a message for no known thread"),
        }
    }
    let lost = !conn.closing.load(Ordering::SeqCst);
    let reason = if lost {
        let status = conn.exit_status(Duration::from_secs(2)).await;
        Some(format!("codex app-server exited ({status}){}", conn.stderr_tail.suffix()))
    } else {
        None
    };
    for live in conn.lives() {
        live.process_ended(reason.clone()).await;
    }
}
