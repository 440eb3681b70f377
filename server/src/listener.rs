//! The HTTP listener: an accept loop over hyper's HTTP/1 connection driver, in place of
//! `axum::serve`, which holds every connection for as long as its peer likes and retries a failing
//! `accept` once a second with an error line each time.
//!
//! - **Header-read timeout** (`--header-read-timeout-secs`): a connection that has not sent a
//!   complete request head in time is closed (hyper's timer; it also runs while a kept-alive
//!   connection waits for its next request).
//! - **Keep-alive idle timeout** (`--keep-alive-idle-secs`): a connection idle between requests
//!   is closed.
//! - **Connection cap** (`--max-connections`, lowered to half the open-file limit when that is
//!   smaller): at the cap, the oldest connection without a request in progress (one still sending
//!   its head, then the longest idle kept-alive one) is closed to make room for the new one, so a
//!   flood of half-open connections cannot lock out a client that sends a request; only when every
//!   connection is busy with a request does the loop stop accepting, and new connections wait in
//!   the kernel's listen backlog. Upgraded room WebSockets leave this count (they are counted by
//!   `--max-ws-connections`).
//! - **Accept errors** are backed off exponentially (10 ms to 1 s; never a hot loop) and logged
//!   rate-limited. (Running out of descriptors does not close a connection: `accept` fails with
//!   EMFILE whenever the table is full, also right after the last descriptor went to a new
//!   connection that has not sent its request yet, which would be the one closed.)
//! - **Graceful shutdown**: when `shutdown` is cancelled the loop stops accepting, idle connections
//!   close, requests in progress finish; [`serve`] returns when every connection is gone.
//!
//! Handlers keep `ConnectInfo<SocketAddr>` (the router is served through
//! `into_make_service_with_connect_info`), WebSocket upgrades work (`with_upgrades`), and
//! `TCP_NODELAY` is set on every connection when asked.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use bytes::Bytes;
use futures::future::BoxFuture;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// The listener's limits.
#[derive(Clone, Debug)]
pub struct ListenerConfig {
    pub header_read_timeout: Duration,
    pub keep_alive_idle: Duration,
    pub max_connections: usize,
    /// Set `TCP_NODELAY` on accepted connections.
    pub nodelay: bool,
}

/// The connection cap actually used: `configured`, but at most half the soft open-file limit (the
/// other half is for WebSockets, the store, agents' pipes), and at least 1.
pub fn effective_max_connections(configured: usize, soft_file_limit: Option<u64>) -> usize {
    let by_files = soft_file_limit.map(|l| usize::try_from(l / 2).unwrap_or(usize::MAX)).unwrap_or(usize::MAX);
    configured.min(by_files).max(1)
}

/// Serves `router` on `listener` until `shutdown` is cancelled and every connection has ended.
pub async fn serve(listener: TcpListener, router: Router, config: ListenerConfig, shutdown: CancellationToken) {
    let make = router.into_make_service_with_connect_info::<SocketAddr>();
    let registry = Arc::new(Registry::new(config.max_connections));
    let tracker = TaskTracker::new();
    let mut errors = AcceptErrors::default();
    let mut at_cap_log = RateLimited::new(Duration::from_secs(10));
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = shutdown.cancelled() => break,
        };
        let (tcp, remote) = match accepted {
            Ok(conn) => {
                errors.succeeded();
                conn
            }
            Err(e) => {
                let kind = AcceptErrorKind::of(&e);
                metrics::counter!("ensemble_http_accept_errors_total", "kind" => kind.label()).increment(1);
                if kind == AcceptErrorKind::Connection {
                    // That peer is gone; the next one is unaffected.
                    tracing::debug!(error = %e, "accept: connection failed before it was accepted");
                    continue;
                }
                let (delay, log) = errors.failed(Instant::now());
                if let Some(suppressed) = log {
                    tracing::error!(error = %e, retry_in_ms = delay.as_millis() as u64, suppressed,
                        "accept failed; backing off (`suppressed`: errors not logged since the last line)");
                }
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = shutdown.cancelled() => break,
                }
                continue;
            }
        };
        // At the cap this connection waits for a slot (made by closing an idle connection, or freed
        // by a busy one), and the ones after it wait in the kernel's backlog.
        let permit = tokio::select! {
            p = registry.slot(&mut at_cap_log) => p,
            _ = shutdown.cancelled() => break,
        };
        if config.nodelay
            && let Err(e) = tcp.set_nodelay(true)
        {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let service = match make.clone().oneshot(remote).await {
            Ok(s) => s,
            Err(never) => match never {},
        };
        let conn = registry.insert();
        tracker.spawn(drive(tcp, service, conn, registry.clone(), config.clone(), shutdown.clone(), permit));
    }
    drop(listener);
    tracker.close();
    tracker.wait().await;
}

/// Runs one connection to its end: done, timed out, evicted, or shut down.
async fn drive<S>(
    tcp: TcpStream,
    service: S,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
    config: ListenerConfig,
    shutdown: CancellationToken,
    _permit: OwnedSemaphorePermit,
) where
    S: tower::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    let service = Tracked { inner: service, conn: conn.clone(), registry: registry.clone() };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(config.header_read_timeout).keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(tcp), service).with_upgrades();
    tokio::pin!(connection);
    let idle = tokio::time::sleep(config.keep_alive_idle);
    tokio::pin!(idle);
    let mut closing = false;
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    if e.is_timeout() {
                        metrics::counter!("ensemble_http_header_timeouts_total").increment(1);
                        tracing::debug!("closed a connection that did not send a request head in time");
                    } else {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                }
                break;
            }
            // Evicted to make room: closed at once (it had no request in progress).
            _ = conn.evicted.cancelled() => break,
            _ = shutdown.cancelled(), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            _ = &mut idle, if !closing => {
                // The idle timer counts from the end of the last response; before the first
                // request, the header-read timeout alone applies.
                match conn.idle_deadline(config.keep_alive_idle) {
                    Some(deadline) if deadline <= Instant::now() => {
                        closing = true;
                        connection.as_mut().graceful_shutdown();
                    }
                    Some(deadline) => idle.as_mut().reset(deadline),
                    None => idle.as_mut().reset(Instant::now() + config.keep_alive_idle),
                }
            }
        }
    }
    registry.remove(&conn);
}

/// One open connection, as the registry sees it.
struct Conn {
    id: u64,
    /// Requests in progress: from the head being read to the response's last byte.
    active: AtomicUsize,
    /// Answered `101 Switching Protocols`: it is being handed to its WebSocket, never evicted.
    upgrading: AtomicBool,
    state: Mutex<ConnState>,
    /// Cancelled to close the connection at once (eviction).
    evicted: CancellationToken,
}

struct ConnState {
    /// Has a request reached the service yet?
    used: bool,
    /// Since when it has had no request in progress (its accept time until the first request).
    idle_since: Instant,
}

impl Conn {
    /// When the keep-alive idle timeout closes it; `None` while a request is in progress or before
    /// the first one.
    fn idle_deadline(&self, idle: Duration) -> Option<Instant> {
        if self.active.load(Ordering::Acquire) > 0 || self.upgrading.load(Ordering::Acquire) {
            return None;
        }
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.used.then(|| state.idle_since + idle)
    }

    /// Its place in the eviction order (smallest first): connections that never sent a request,
    /// oldest first, then the longest idle; `None` if it is busy or already evicted.
    fn eviction_key(&self) -> Option<(bool, Instant)> {
        if self.active.load(Ordering::Acquire) > 0
            || self.upgrading.load(Ordering::Acquire)
            || self.evicted.is_cancelled()
        {
            return None;
        }
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Some((state.used, state.idle_since))
    }
}

/// The open connections and the cap on them.
struct Registry {
    limiter: Arc<Semaphore>,
    conns: Mutex<BTreeMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    /// Signalled when a connection's last request in progress ends (it may now be evicted).
    became_idle: Notify,
}

impl Registry {
    fn new(max_connections: usize) -> Self {
        Self {
            limiter: Arc::new(Semaphore::new(max_connections.clamp(1, Semaphore::MAX_PERMITS))),
            conns: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(0),
            became_idle: Notify::new(),
        }
    }

    /// A slot for a connection just accepted: free, or made free by closing an idle connection, or —
    /// when every connection is busy — the next one freed.
    async fn slot(&self, at_cap_log: &mut RateLimited) -> OwnedSemaphorePermit {
        loop {
            if let Ok(permit) = self.limiter.clone().try_acquire_owned() {
                return permit;
            }
            let idle = self.became_idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.evict_oldest_idle() {
                // Its slot comes free as soon as its task has closed it.
                if let Ok(p) = self.limiter.clone().acquire_owned().await {
                    return p;
                }
                continue;
            }
            if let Some(suppressed) = at_cap_log.check(Instant::now()) {
                tracing::warn!(
                    suppressed,
                    "every HTTP connection is busy at the --max-connections cap; new connections wait in the backlog"
                );
            }
            tokio::select! {
                permit = self.limiter.clone().acquire_owned() => {
                    if let Ok(p) = permit {
                        return p;
                    }
                }
                // A connection without a request in progress can now make room.
                _ = idle => {}
            }
        }
    }

    fn insert(&self) -> Arc<Conn> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            active: AtomicUsize::new(0),
            upgrading: AtomicBool::new(false),
            state: Mutex::new(ConnState { used: false, idle_since: Instant::now() }),
            evicted: CancellationToken::new(),
        });
        self.conns.lock().unwrap_or_else(|e| e.into_inner()).insert(id, conn.clone());
        metrics::gauge!("ensemble_http_connections").increment(1.0);
        conn
    }

    fn remove(&self, conn: &Conn) {
        if self.conns.lock().unwrap_or_else(|e| e.into_inner()).remove(&conn.id).is_some() {
            metrics::gauge!("ensemble_http_connections").decrement(1.0);
        }
    }

    /// Closes the connection first in the eviction order, if any is idle.
    fn evict_oldest_idle(&self) -> bool {
        let conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let victim = conns.values().filter_map(|c| c.eviction_key().map(|k| (k, c))).min_by_key(|(k, _)| *k);
        match victim {
            Some((_, c)) => {
                c.evicted.cancel();
                metrics::counter!("ensemble_http_connections_evicted_total").increment(1);
                true
            }
            None => false,
        }
    }
}

/// The router, counting the connection's requests in progress until each response's last byte.
#[derive(Clone)]
struct Tracked<S> {
    inner: S,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl<S> hyper::service::Service<Request<Incoming>> for Tracked<S>
where
    S: tower::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let busy = Busy::start(self.conn.clone(), self.registry.clone());
        let inner = self.inner.clone();
        let conn = self.conn.clone();
        Box::pin(async move {
            let res = inner.oneshot(req).await?;
            if res.status() == StatusCode::SWITCHING_PROTOCOLS {
                conn.upgrading.store(true, Ordering::Release);
            }
            Ok(res.map(|inner| TrackedBody { inner, _busy: busy }))
        })
    }
}

/// One request in progress on a connection.
struct Busy {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Busy {
    fn start(conn: Arc<Conn>, registry: Arc<Registry>) -> Self {
        conn.active.fetch_add(1, Ordering::AcqRel);
        conn.state.lock().unwrap_or_else(|e| e.into_inner()).used = true;
        Self { conn, registry }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.conn.state.lock().unwrap_or_else(|e| e.into_inner());
        state.idle_since = Instant::now();
        if self.conn.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            drop(state);
            self.registry.became_idle.notify_one();
        }
    }
}

/// A response body that ends its request's [`Busy`] when it is dropped (sent or abandoned).
struct TrackedBody {
    inner: Body,
    _busy: Busy,
}

impl http_body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Kinds of `accept` failures, for the metric and the reaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcceptErrorKind {
    /// The peer went away before it was accepted: not our problem, no pause.
    Connection,
    /// Out of descriptors or memory: pause until some are freed.
    Resources,
    Other,
}

impl AcceptErrorKind {
    pub fn of(e: &io::Error) -> Self {
        use io::ErrorKind as K;
        if matches!(e.kind(), K::ConnectionAborted | K::ConnectionReset | K::ConnectionRefused) {
            return Self::Connection;
        }
        match e.raw_os_error() {
            Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => Self::Resources,
            Some(libc::EPROTO | libc::EPERM | libc::ETIMEDOUT | libc::EHOSTUNREACH | libc::ENETUNREACH) => {
                Self::Connection
            }
            _ => Self::Other,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Connection => "connection",
            Self::Resources => "resources",
            Self::Other => "other",
        }
    }
}

/// The backoff after failed accepts: 10 ms, doubling to 1 s, reset by a success; the log line at
/// most every 10 s.
#[derive(Debug)]
pub struct AcceptErrors {
    next_delay: Duration,
    log: RateLimited,
}

impl AcceptErrors {
    pub const FIRST_DELAY: Duration = Duration::from_millis(10);
    pub const MAX_DELAY: Duration = Duration::from_secs(1);
    pub const LOG_EVERY: Duration = Duration::from_secs(10);

    /// After a failure: how long to pause, and whether to log (with how many failures went
    /// unlogged since the last line).
    pub fn failed(&mut self, now: Instant) -> (Duration, Option<u64>) {
        let delay = self.next_delay;
        self.next_delay = (delay * 2).min(Self::MAX_DELAY);
        (delay, self.log.check(now))
    }

    pub fn succeeded(&mut self) {
        self.next_delay = Self::FIRST_DELAY;
    }
}

impl Default for AcceptErrors {
    fn default() -> Self {
        Self { next_delay: Self::FIRST_DELAY, log: RateLimited::new(Self::LOG_EVERY) }
    }
}

/// At most one log line per period; counts what it held back.
#[derive(Debug)]
pub struct RateLimited {
    every: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimited {
    pub fn new(every: Duration) -> Self {
        Self { every, last: None, suppressed: 0 }
    }

    /// `Some(suppressed since the last line)` if a line may be logged now.
    pub fn check(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(last) if now.saturating_duration_since(last) < self.every => {
                self.suppressed += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.suppressed))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_at_most_half_the_file_limit() {
        assert_eq!(effective_max_connections(1024, None), 1024);
        assert_eq!(effective_max_connections(1024, Some(1_048_576)), 1024);
        assert_eq!(effective_max_connections(1024, Some(1024)), 512);
        assert_eq!(effective_max_connections(10, Some(1024)), 10);
        assert_eq!(effective_max_connections(0, Some(1024)), 1);
        assert_eq!(effective_max_connections(1024, Some(1)), 1);
    }

    #[test]
    fn accept_failures_back_off_and_log_rate_limited() {
        let t0 = Instant::now();
        let mut e = AcceptErrors::default();
        let mut delays = Vec::new();
        let mut logged = Vec::new();
        for i in 0..10u64 {
            let (d, log) = e.failed(t0 + Duration::from_millis(i * 100));
            delays.push(d.as_millis());
            logged.push(log);
        }
        assert_eq!(delays, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        // The first failure is logged, the next nine (within 10 s) are counted.
        assert_eq!(logged[0], Some(0));
        assert!(logged[1..].iter().all(Option::is_none));
        assert_eq!(e.failed(t0 + Duration::from_secs(11)).1, Some(9));
        e.succeeded();
        assert_eq!(e.failed(t0 + Duration::from_secs(12)).0, AcceptErrors::FIRST_DELAY);
    }

    #[test]
    fn accept_errors_are_classified() {
        let os = io::Error::from_raw_os_error;
        assert_eq!(AcceptErrorKind::of(&os(libc::EMFILE)), AcceptErrorKind::Resources);
        assert_eq!(AcceptErrorKind::of(&os(libc::ENFILE)), AcceptErrorKind::Resources);
        assert_eq!(AcceptErrorKind::of(&os(libc::ECONNABORTED)), AcceptErrorKind::Connection);
        assert_eq!(AcceptErrorKind::of(&os(libc::EINVAL)), AcceptErrorKind::Other);
    }

    #[tokio::test]
    async fn eviction_takes_connections_without_a_request_oldest_first_then_the_longest_idle() {
        let r = Arc::new(Registry::new(3));
        let a = r.insert();
        let b = r.insert();
        let c = r.insert();
        // a: busy; b: served a request and idle since; c: never sent one.
        let _busy_a = Busy::start(a.clone(), r.clone());
        drop(Busy::start(b.clone(), r.clone()));
        assert!(r.evict_oldest_idle());
        assert!(c.evicted.is_cancelled() && !b.evicted.is_cancelled());
        assert!(r.evict_oldest_idle());
        assert!(b.evicted.is_cancelled());
        assert!(!r.evict_oldest_idle(), "a is busy");
        assert!(!a.evicted.is_cancelled());
        assert!(a.idle_deadline(Duration::from_secs(1)).is_none(), "busy");
        assert!(b.idle_deadline(Duration::from_secs(1)).is_some(), "idle after a request");
        assert!(c.idle_deadline(Duration::from_secs(1)).is_none(), "before the first request");
    }
}
