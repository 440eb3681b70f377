//! Room fan-out: Ensemble's real path side by side with a tuned minimal axum baseline, in one run.
//!
//! `cargo bench -p ensemble-server --bench fanout [-- OPTIONS]`
//!
//! **Ensemble**: an in-bench [`Adapter`] captures the session's [`SessionHandle`]; the publisher calls
//! `handle.sink.emit(..)` with one ~220-byte `message.delta` (a ~250-byte frame) per call → controller
//! fold → SQLite group-commit store (a real file in a tempdir; `StoreConfig` as `build_controller`
//! makes it from the default `ServeArgs`: `StoreConfig::new` plus the 100k-event retention) → `RoomHub` →
//! the real router (`ensemble_server::router`) on 127.0.0.1:0 → tokio-tungstenite clients on
//! `/v1/rooms/{room}/ws` (a `hello` frame, then `{"type":"event","event":{..}}` frames).
//!
//! **Baseline**: a minimal axum WebSocket server without persistence, tuned as
//! `fanout-baseline.md` describes: 4 KiB read buffer, feed up to 64 queued frames then flush once,
//! each event serialised once (the same `Event` type and frame shape as Ensemble's) and shared as
//! `Utf8Bytes` through a `tokio::sync::broadcast` ring of the same capacity as Ensemble's room bus.
//!
//! Both servers run on one runtime whose threads are named `srv-*` (the store writer thread,
//! `ensemble-store-writer`, counts as server too); the publisher runs there as well (it plays the
//! adapter reading a provider). The clients run on a runtime named `cli-*`. Server CPU is read per
//! thread from `/proc/self/task/*/stat` (utime+stime) around each scenario; the progress lines also
//! show the store writer's share.
//!
//! Throughput scenarios publish M events as fast as possible, with a window so no subscriber ever
//! falls more than `--window` events behind (half the room ring by default, so nothing is lost);
//! the time runs from the first publish to the last subscriber receiving its M-th event. Every
//! client checks it got every event, in order, by `seq`. The latency scenario publishes at a fixed
//! rate with the publish time (ns) embedded in the event text, measured at the client.
//!
//! Options (also as `FANOUT_*` environment variables, e.g. `FANOUT_SUBS=1,10`):
//!   --subs 1,10,100        subscriber counts of the throughput scenarios (empty: none)
//!   --events M             events per throughput scenario (default: depends on the subscriber count)
//!   --runs K               repeat each throughput scenario K times and report the median (default 3)
//!   --latency-secs S       length of the fixed-rate scenario, after 1 s of warm-up (default 10; 0: skip)
//!   --rate R               events/s of the fixed-rate scenario (default 1000)
//!   --latency-subs N       subscribers of the fixed-rate scenario (default 100)
//!   --only ensemble|baseline
//!   --srv-threads T        server runtime workers (default 2)
//!   --cli-threads T        client runtime workers (default 2)
//!   --window W             most events in flight at max rate (default 2048)
//!   --client-read-buf B    the clients' tungstenite read buffer (default 16384)
//!   --nodelay 0|1          TCP_NODELAY on both servers' accepted sockets (default 1, as `server::serve`
//!                          does; 0 shows what Nagle + delayed ACKs do to latency)
//! Ensemble's own settings come from its `ENSEMBLE_*` environment variables, as for `ensemble serve`
//! (e.g. `ENSEMBLE_COMMIT_LINGER_MS`, `ENSEMBLE_WS_QUEUE`).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::Router;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::serve::ListenerExt;
use clap::Parser;
use ensemble_runtime::adapter::{
    Adapter, AdapterError, Capabilities, ProviderDescriptor, SessionHandle, StartOutcome, TurnRequest,
};
use ensemble_runtime::bus::RoomHub;
use ensemble_runtime::clock::{SystemClock, new_id, unix_ms};
use ensemble_runtime::controller::{Controller, StartSession};
use ensemble_runtime::event::{Event, EventBody, TextDeltaPayload};
use ensemble_runtime::model::{Scope, Session, SessionKey};
use ensemble_runtime::store::Store;
use ensemble_server::config::{Cli, ServeArgs};
use ensemble_server::{AppState, router};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

const PROVIDER: &str = "bench";
const BENCH_TOKEN: &str = "bench-token-0123456789abcdef0123456789abcdef";
const SESSION: &str = "bench";
const ITEM: &str = "m1";
/// Text after the timestamp. The `event` object is then ~220 bytes, most of it the envelope (UUID
/// `eventId`, `roomId`, `sessionId`, `occurredAtMs`, ...), the frame ~250.
const PAD: &str = "delta";
/// Frames fed before one flush by the baseline (Ensemble's ws.rs uses the same number).
const BASE_FLUSH_BATCH: usize = 64;
/// The baseline's WebSocket read buffer (see fanout-baseline.md).
const BASE_READ_BUFFER: usize = 4 * 1024;
/// Longest any scenario may take before it counts as failed.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

// ------------------------------------------------------------------------------------------ options

#[derive(Clone, Debug)]
struct Opts {
    subs: Vec<usize>,
    events: Option<u64>,
    runs: usize,
    latency_secs: u64,
    rate: u64,
    latency_subs: usize,
    ensemble: bool,
    baseline: bool,
    srv_threads: usize,
    cli_threads: usize,
    window: u64,
    client_read_buf: usize,
    nodelay: bool,
}

impl Opts {
    fn parse() -> Opts {
        let mut o = Opts {
            subs: vec![1, 10, 100],
            events: None,
            runs: 3,
            latency_secs: 10,
            rate: 1000,
            latency_subs: 100,
            ensemble: true,
            baseline: true,
            srv_threads: 2,
            cli_threads: 2,
            window: 2048,
            client_read_buf: 16 * 1024,
            nodelay: true,
        };
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (k, v) in std::env::vars() {
            if let Some(name) = k.strip_prefix("FANOUT_") {
                pairs.push((name.to_ascii_lowercase().replace('_', "-"), v));
            }
        }
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                // `cargo bench` passes `--bench` to every bench binary.
                "--bench" => {}
                flag if flag.starts_with("--") => {
                    let name = flag.trim_start_matches("--").to_owned();
                    let value = args.next().unwrap_or_else(|| panic!("{flag} needs a value"));
                    pairs.push((name, value));
                }
                // A positional filter as cargo bench would pass it: ignored.
                other => eprintln!("fanout: ignoring argument `{other}`"),
            }
        }
        for (name, v) in pairs {
            let num = |v: &str| v.trim().parse::<u64>().unwrap_or_else(|_| panic!("--{name}: not a number: {v}"));
            match name.as_str() {
                "subs" => o.subs = v.split(',').filter(|s| !s.trim().is_empty()).map(|s| num(s) as usize).collect(),
                "events" => o.events = Some(num(&v).max(1)),
                "runs" => o.runs = num(&v).max(1) as usize,
                "latency-secs" => o.latency_secs = num(&v),
                "rate" => o.rate = num(&v).max(1),
                "latency-subs" => o.latency_subs = num(&v).max(1) as usize,
                "only" => match v.as_str() {
                    "ensemble" => o.baseline = false,
                    "baseline" => o.ensemble = false,
                    _ => panic!("--only ensemble|baseline"),
                },
                "srv-threads" => o.srv_threads = num(&v).max(1) as usize,
                "cli-threads" => o.cli_threads = num(&v).max(1) as usize,
                "window" => o.window = num(&v).max(64),
                "client-read-buf" => o.client_read_buf = num(&v).max(512) as usize,
                "nodelay" => o.nodelay = !matches!(v.as_str(), "" | "0" | "false"),
                _ => eprintln!("fanout: unknown option --{name}"),
            }
        }
        o
    }

    /// Events of a throughput scenario: ~5M deliveries, 50k..300k events.
    fn events_for(&self, subs: usize) -> u64 {
        self.events.unwrap_or_else(|| (5_000_000 / subs.max(1) as u64).clamp(50_000, 300_000))
    }
}

// ------------------------------------------------------------------------------------ time and CPU

fn base_instant() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// Monotonic nanoseconds since the bench started (shared by publishers and clients).
fn now_ns() -> u64 {
    base_instant().elapsed().as_nanos() as u64
}

/// The event text: the publish time between `@`s, then filler.
fn stamp_text(ns: u64) -> String {
    format!("@{ns}@ {PAD}")
}

/// Clock ticks per second of `/proc/*/stat` times.
fn clk_tck() -> u64 {
    static TCK: OnceLock<u64> = OnceLock::new();
    *TCK.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|t: &u64| *t > 0)
            .unwrap_or(100)
    })
}

/// CPU time (µs) of this process's threads, by role.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    /// `srv-*` and the store writer.
    server: u64,
    /// The store writer alone.
    writer: u64,
    client: u64,
    other: u64,
}

impl Cpu {
    fn sample() -> Cpu {
        let mut cpu = Cpu::default();
        let per_tick = 1_000_000 / clk_tck();
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return cpu;
        };
        for entry in dir.flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid ...`: comm may contain spaces and parentheses.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let comm = &stat[open + 1..close];
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            // Fields 14 and 15 of the line (utime, stime) are 11 and 12 after the comm.
            let ticks: u64 = [11, 12].iter().filter_map(|i| fields.get(*i)?.parse::<u64>().ok()).sum();
            let us = ticks * per_tick;
            // The kernel truncates thread names to 15 bytes: `ensemble-store-writer` is `ensemble-store-`.
            if comm.starts_with("ensemble-store") {
                cpu.server += us;
                cpu.writer += us;
            } else if comm.starts_with("srv-") {
                cpu.server += us;
            } else if comm.starts_with("cli-") {
                cpu.client += us;
            } else {
                cpu.other += us;
            }
        }
        cpu
    }

    fn since(self, before: Cpu) -> Cpu {
        Cpu {
            server: self.server.saturating_sub(before.server),
            writer: self.writer.saturating_sub(before.writer),
            client: self.client.saturating_sub(before.client),
            other: self.other.saturating_sub(before.other),
        }
    }
}

// -------------------------------------------------------------------------------- Ensemble (real)

/// An adapter whose sessions are driven by the bench: it keeps the handle `start` gives it.
#[derive(Default)]
struct BenchAdapter {
    live: Mutex<HashMap<SessionKey, SessionHandle>>,
}

impl BenchAdapter {
    fn handle(&self, key: &SessionKey) -> Option<SessionHandle> {
        self.live.lock().unwrap().get(key).cloned()
    }
}

#[async_trait]
impl Adapter for BenchAdapter {
    fn id(&self) -> &str {
        PROVIDER
    }

    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor { display_name: "Fan-out bench".into(), available: true, unavailable_reason: None }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.live.lock().unwrap().insert(session.key(), handle);
        Ok(StartOutcome::default())
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.start(session, handle).await
    }

    async fn close(&self, session: &Session) -> Result<(), AdapterError> {
        self.live.lock().unwrap().remove(&session.key());
        Ok(())
    }

    async fn start_turn(&self, _session: &Session, _turn: TurnRequest) -> Result<(), AdapterError> {
        Err(AdapterError::Unsupported("turns".into()))
    }

    async fn cancel(&self, _session: &Session, _turn_id: &str) -> Result<(), AdapterError> {
        Err(AdapterError::Unsupported("turns".into()))
    }

    fn is_live(&self, session: &Session) -> bool {
        self.live.lock().unwrap().contains_key(&session.key())
    }
}

struct EnsembleServer {
    addr: SocketAddr,
    controller: Controller,
    state: AppState,
    adapter: Arc<BenchAdapter>,
    _dir: tempfile::TempDir,
}

/// Wires store, hub and controller as `server::build_controller` does (same defaults, from the
/// same `ENSEMBLE_*` settings), with the bench adapter as the only provider, and serves the real
/// router as `server::serve` does. Runs on the server runtime.
async fn start_ensemble(nodelay: bool) -> EnsembleServer {
    ensemble_server::telemetry::metrics_handle();
    let dir = tempfile::tempdir().expect("tempdir");
    let data: PathBuf = dir.path().join("data");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, BENCH_TOKEN).unwrap();
    let cli = Cli::try_parse_from([
        "ensemble",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        data.to_str().unwrap(),
        "--token-file",
        token_file.to_str().unwrap(),
        "--workspace-roots",
        dir.path().to_str().unwrap(),
        "--default-cwd",
        dir.path().to_str().unwrap(),
        "--max-ws-per-room",
        "100000",
        "--max-ws-connections",
        "100000",
    ])
    .expect("default server args");
    let args: ServeArgs = cli.serve;
    std::fs::create_dir_all(&data).unwrap();
    let hub = RoomHub::new(args.ws_queue);
    let cfg = ensemble_server::server::store_config(&args);
    let store = Store::open(cfg, hub.clone()).expect("store");
    let adapter = Arc::new(BenchAdapter::default());
    let adapters: Vec<Arc<dyn Adapter>> = vec![adapter.clone()];
    let mut config = ensemble_server::server::controller_config(&args);
    config.default_cwd = dir.path().to_string_lossy().into_owned();
    let controller = Controller::new(config, store, hub, adapters, Arc::new(SystemClock::default()));
    let (app_config, _) = ensemble_server::server::app_config(&args).expect("app config");
    let state = AppState::new(controller.clone(), app_config);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(state.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let shutdown = state.shutdown.clone();
    // As `server::serve` does.
    let listener = listener.tap_io(move |tcp| {
        let _ = tcp.set_nodelay(nodelay);
    });
    tokio::spawn(async move { axum::serve(listener, app).with_graceful_shutdown(shutdown.cancelled_owned()).await });
    EnsembleServer { addr, controller, state, adapter, _dir: dir }
}

impl EnsembleServer {
    /// A new room with one live bench session; returns the handle its adapter got.
    async fn open_room(&self, room: &str) -> SessionHandle {
        self.controller
            .start(StartSession {
                room_id: room.into(),
                session_id: Some(SESSION.into()),
                provider: Some(PROVIDER.into()),
                ..Default::default()
            })
            .await
            .expect("start the bench session");
        self.adapter.handle(&SessionKey::new(room, SESSION)).expect("the adapter got a handle")
    }

    async fn stop(&self) {
        self.state.start_draining();
        self.state.shutdown.cancel();
        self.controller.shutdown().await;
        self.controller.store().close().await;
    }
}

async fn publish_ensemble(handle: SessionHandle, pace: Pace) {
    let mut i = 0;
    while let Some(()) = pace.next(i).await {
        let body = EventBody::MessageDelta(TextDeltaPayload { item_id: ITEM.into(), text: stamp_text(now_ns()) });
        handle.sink.emit(None, body).await;
        i += 1;
    }
}

// ------------------------------------------------------------------------------- baseline (tuned)

struct BaseRoom {
    tx: broadcast::Sender<Utf8Bytes>,
    head: AtomicU64,
}

struct Baseline {
    rooms: Mutex<HashMap<String, Arc<BaseRoom>>>,
    capacity: usize,
    conns: AtomicUsize,
}

impl Baseline {
    fn room(&self, id: &str) -> Arc<BaseRoom> {
        self.rooms
            .lock()
            .unwrap()
            .entry(id.to_owned())
            .or_insert_with(|| Arc::new(BaseRoom { tx: broadcast::channel(self.capacity).0, head: AtomicU64::new(0) }))
            .clone()
    }
}

struct BaselineServer {
    addr: SocketAddr,
    shared: Arc<Baseline>,
}

async fn start_baseline(capacity: usize, nodelay: bool) -> BaselineServer {
    let shared = Arc::new(Baseline { rooms: Mutex::new(HashMap::new()), capacity, conns: AtomicUsize::new(0) });
    let app = Router::new().route("/rooms/{room}/ws", get(base_ws)).with_state(shared.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = listener.tap_io(move |tcp| {
        let _ = tcp.set_nodelay(nodelay);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    BaselineServer { addr, shared }
}

async fn base_ws(State(b): State<Arc<Baseline>>, Path(room): Path<String>, ws: WebSocketUpgrade) -> Response {
    let room = b.room(&room);
    ws.read_buffer_size(BASE_READ_BUFFER).on_upgrade(move |socket| async move {
        b.conns.fetch_add(1, Ordering::SeqCst);
        base_conn(&room, socket).await;
        b.conns.fetch_sub(1, Ordering::SeqCst);
    })
}

async fn base_conn(room: &BaseRoom, mut socket: WebSocket) {
    let mut rx = room.tx.subscribe();
    let hello = format!(r#"{{"type":"hello","headSeq":{}}}"#, room.head.load(Ordering::SeqCst));
    if socket.send(Message::Text(hello.into())).await.is_err() {
        return;
    }
    let resync = || Message::Text(Utf8Bytes::from_static(r#"{"type":"resync","reason":"lagged"}"#));
    loop {
        tokio::select! {
            biased;
            first = rx.recv() => {
                let first = match first {
                    Ok(f) => f,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = socket.send(resync()).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if socket.feed(Message::Text(first)).await.is_err() {
                    return;
                }
                for _ in 1..BASE_FLUSH_BATCH {
                    match rx.try_recv() {
                        Ok(f) => {
                            if socket.feed(Message::Text(f)).await.is_err() {
                                return;
                            }
                        }
                        Err(broadcast::error::TryRecvError::Lagged(_)) => {
                            let _ = socket.send(resync()).await;
                            return;
                        }
                        Err(_) => break,
                    }
                }
                if socket.flush().await.is_err() {
                    return;
                }
            }
            msg = socket.next() => match msg {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Serialises each event once, in the same shape as Ensemble's frames, and broadcasts the bytes.
async fn publish_baseline(room: Arc<BaseRoom>, room_id: String, pace: Pace) {
    let mut i = 0;
    while let Some(()) = pace.next(i).await {
        let seq = room.head.load(Ordering::Relaxed) + 1;
        let event = Event {
            seq,
            room_id: room_id.clone(),
            event_id: new_id(),
            session_id: SESSION.into(),
            scope: Scope::Canonical,
            turn_id: None,
            occurred_at_ms: unix_ms(),
            body: EventBody::MessageDelta(TextDeltaPayload { item_id: ITEM.into(), text: stamp_text(now_ns()) }),
        };
        let json = serde_json::to_string(&event).unwrap();
        let mut frame = String::with_capacity(json.len() + 26);
        frame.push_str("{\"type\":\"event\",\"event\":");
        frame.push_str(&json);
        frame.push('}');
        room.head.store(seq, Ordering::Relaxed);
        let _ = room.tx.send(Utf8Bytes::from(frame));
        i += 1;
    }
}

// ---------------------------------------------------------------------------------------- pacing

/// When the publisher may publish event `i`: as fast as the window allows, or at a fixed rate.
#[derive(Clone)]
struct Pace {
    events: u64,
    mode: PaceMode,
}

#[derive(Clone)]
enum PaceMode {
    /// At most `window` events ahead of the slowest subscriber.
    Window { window: u64, received: Arc<Vec<AtomicU64>> },
    /// Event `i` at `start + i / rate`.
    Rate { start: tokio::time::Instant, period: Duration },
}

impl Pace {
    async fn next(&self, i: u64) -> Option<()> {
        if i >= self.events {
            return None;
        }
        match &self.mode {
            PaceMode::Window { window, received } => {
                if i.is_multiple_of(64) {
                    loop {
                        let slowest = received.iter().map(|r| r.load(Ordering::Relaxed)).min().unwrap_or(i);
                        if i.saturating_sub(slowest) + 64 <= *window {
                            break;
                        }
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    // The baseline's broadcast never yields; give the other tasks of this worker a turn
                    // (in both publishers, alike).
                    tokio::task::yield_now().await;
                }
            }
            PaceMode::Rate { start, period } => {
                tokio::time::sleep_until(*start + period.mul_f64(i as f64)).await;
            }
        }
        Some(())
    }
}

// --------------------------------------------------------------------------------------- clients

struct ClientOut {
    error: Option<String>,
    done_ns: u64,
    latencies_us: Vec<u32>,
    /// Size of the first event frame.
    frame_bytes: usize,
}

/// The number after `key` in `s`.
fn number_after(s: &str, key: &str) -> Option<u64> {
    let at = s.find(key)? + key.len();
    let digits = s[at..].bytes().take_while(u8::is_ascii_digit).count();
    s[at..at + digits].parse().ok()
}

/// Connects, reads `hello`, reports ready, then expects `events` event frames with consecutive seqs.
async fn run_client(
    url: String,
    read_buf: usize,
    events: u64,
    latency_after: Option<u64>,
    received: Arc<Vec<AtomicU64>>,
    index: usize,
    ready: mpsc::Sender<Result<(), String>>,
) -> ClientOut {
    let out = subscribe(url, read_buf, events, latency_after, &received[index], ready).await;
    if out.error.is_some() {
        // A failed subscriber must not hold the publisher's window back.
        received[index].store(u64::MAX, Ordering::Relaxed);
    }
    out
}

async fn subscribe(
    url: String,
    read_buf: usize,
    events: u64,
    latency_after: Option<u64>,
    received: &AtomicU64,
    ready: mpsc::Sender<Result<(), String>>,
) -> ClientOut {
    let fail = |e: String| ClientOut { error: Some(e), done_ns: 0, latencies_us: Vec::new(), frame_bytes: 0 };
    let config = WebSocketConfig::default().read_buffer_size(read_buf);
    let mut request = url.as_str().into_client_request().expect("ws request");
    // The baseline ignores it; Ensemble requires it.
    request.headers_mut().insert("authorization", format!("Bearer {BENCH_TOKEN}").parse().expect("header"));
    let mut ws = match tokio_tungstenite::connect_async_with_config(request, Some(config), true).await {
        Ok((ws, _)) => ws,
        Err(e) => {
            let _ = ready.send(Err(format!("connect: {e}"))).await;
            return fail(format!("connect: {e}"));
        }
    };
    let head = match ws.next().await {
        Some(Ok(tungstenite::Message::Text(t))) if t.as_str().starts_with(r#"{"type":"hello""#) => {
            number_after(t.as_str(), r#""headSeq":"#).unwrap_or(0)
        }
        other => {
            let e = format!("expected hello, got {other:?}");
            let _ = ready.send(Err(e.clone())).await;
            return fail(e);
        }
    };
    let _ = ready.send(Ok(())).await;
    drop(ready);
    let mut latencies_us = Vec::with_capacity(latency_after.map_or(0, |a| events.saturating_sub(a) as usize));
    let mut next = head + 1;
    let mut got = 0u64;
    let mut frame_bytes = 0;
    while let Some(msg) = ws.next().await {
        let text = match msg {
            Ok(tungstenite::Message::Text(t)) => t,
            Ok(tungstenite::Message::Ping(_) | tungstenite::Message::Pong(_) | tungstenite::Message::Frame(_)) => {
                continue;
            }
            Ok(other) => return fail(format!("after {got} events: unexpected {other:?}")),
            Err(e) => return fail(format!("after {got} events: {e}")),
        };
        let s = text.as_str();
        let Some(seq) = number_after(s, r#""seq":"#).filter(|_| s.starts_with(r#"{"type":"event""#)) else {
            return fail(format!("after {got} events: unexpected frame {s}"));
        };
        if seq != next {
            return fail(format!("expected seq {next}, got {seq}"));
        }
        if got == 0 {
            frame_bytes = s.len();
        }
        next += 1;
        got += 1;
        if latency_after.is_some_and(|a| got > a) {
            let sent = number_after(s, r#""text":"@"#).unwrap_or(0);
            let us = now_ns().saturating_sub(sent) / 1_000;
            latencies_us.push(u32::try_from(us).unwrap_or(u32::MAX));
        }
        received.store(got, Ordering::Relaxed);
        if got == events {
            let done_ns = now_ns();
            let _ = ws.close(None).await;
            return ClientOut { error: None, done_ns, latencies_us, frame_bytes };
        }
    }
    fail(format!("connection ended after {got} of {events} events"))
}

// -------------------------------------------------------------------------------------- scenarios

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Which {
    Ensemble,
    Baseline,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Ensemble => "Ensemble",
            Which::Baseline => "baseline",
        }
    }
}

#[derive(Clone, Copy)]
enum Load {
    MaxRate,
    Fixed { rate: u64, warmup_secs: u64 },
}

#[derive(Debug, Default, Clone)]
struct Outcome {
    subs: usize,
    events: u64,
    secs: f64,
    cpu: Cpu,
    commits: u64,
    store_events: u64,
    latencies_us: Vec<u32>,
    frame_bytes: usize,
    errors: Vec<String>,
}

impl Outcome {
    fn deliveries(&self) -> u64 {
        self.events * self.subs as u64
    }
    fn rate(&self) -> f64 {
        self.deliveries() as f64 / self.secs.max(1e-9)
    }
    fn srv_us_per_delivery(&self) -> f64 {
        self.cpu.server as f64 / self.deliveries().max(1) as f64
    }
    fn cli_us_per_delivery(&self) -> f64 {
        self.cpu.client as f64 / self.deliveries().max(1) as f64
    }
}

enum Target {
    Ensemble(SessionHandle),
    Baseline(Arc<BaseRoom>, String),
}

struct Bench {
    opts: Opts,
    srv: Handle,
    ensemble: Option<Arc<EnsembleServer>>,
    baseline: Option<Arc<BaselineServer>>,
    rooms: AtomicU64,
}

impl Bench {
    fn enabled(&self) -> Vec<Which> {
        let mut v = Vec::new();
        if self.ensemble.is_some() {
            v.push(Which::Ensemble);
        }
        if self.baseline.is_some() {
            v.push(Which::Baseline);
        }
        v
    }

    /// (commits, events) of Ensemble's store so far.
    fn store_stats(&self, which: Which) -> (u64, u64) {
        match (which, &self.ensemble) {
            (Which::Ensemble, Some(ens)) => {
                let stats = ens.controller.store().stats();
                (stats.commits.load(Ordering::Relaxed), stats.events.load(Ordering::Relaxed))
            }
            _ => (0, 0),
        }
    }

    fn connections(&self, which: Which) -> usize {
        match which {
            Which::Ensemble => self.ensemble.as_ref().map_or(0, |e| e.state.ws_connections.load(Ordering::SeqCst)),
            Which::Baseline => self.baseline.as_ref().map_or(0, |b| b.shared.conns.load(Ordering::SeqCst)),
        }
    }

    /// Runs one scenario: a fresh room, `subs` subscribers, `events` events.
    async fn run(&self, which: Which, subs: usize, events: u64, load: Load) -> Outcome {
        let mut out = Outcome { subs, events, ..Default::default() };
        let room = format!("r{}-{}{subs}", self.rooms.fetch_add(1, Ordering::Relaxed), &which.name()[..1]);
        let (url, target) = match which {
            Which::Ensemble => {
                let ens = self.ensemble.clone().expect("Ensemble is running");
                let (r, addr) = (room.clone(), ens.addr);
                let handle = self.srv.spawn(async move { ens.open_room(&r).await }).await.expect("open the room");
                (format!("ws://{addr}/v1/rooms/{room}/ws"), Target::Ensemble(handle))
            }
            Which::Baseline => {
                let base = self.baseline.as_ref().expect("the baseline is running");
                (format!("ws://{}/rooms/{room}/ws", base.addr), Target::Baseline(base.shared.room(&room), room.clone()))
            }
        };
        let received: Arc<Vec<AtomicU64>> = Arc::new((0..subs).map(|_| AtomicU64::new(0)).collect());
        let latency_after = match load {
            Load::MaxRate => None,
            Load::Fixed { rate, warmup_secs } => Some(rate * warmup_secs),
        };
        let (ready_tx, mut ready_rx) = mpsc::channel(subs.max(1));
        let clients: Vec<_> = (0..subs)
            .map(|i| {
                tokio::spawn(run_client(
                    url.clone(),
                    self.opts.client_read_buf,
                    events,
                    latency_after,
                    received.clone(),
                    i,
                    ready_tx.clone(),
                ))
            })
            .collect();
        drop(ready_tx);
        let aborts: Vec<_> = clients.iter().map(|c| c.abort_handle()).collect();
        for _ in 0..subs {
            match tokio::time::timeout(Duration::from_secs(30), ready_rx.recv()).await {
                Ok(Some(Ok(()))) => {}
                Ok(Some(Err(e))) => out.errors.push(e),
                Ok(None) | Err(_) => {
                    out.errors.push("the subscribers did not all connect".into());
                    break;
                }
            }
        }
        if !out.errors.is_empty() {
            aborts.iter().for_each(|a| a.abort());
            return out;
        }

        let (commits0, events0) = self.store_stats(which);
        let cpu0 = Cpu::sample();
        let t0 = now_ns();
        let mode = match load {
            Load::MaxRate => PaceMode::Window { window: self.opts.window, received: received.clone() },
            Load::Fixed { rate, .. } => PaceMode::Rate {
                start: tokio::time::Instant::now(),
                period: Duration::from_secs_f64(1.0 / rate as f64),
            },
        };
        let pace = Pace { events, mode };
        let publisher = match target {
            Target::Ensemble(handle) => self.srv.spawn(publish_ensemble(handle, pace)),
            Target::Baseline(room, id) => self.srv.spawn(publish_baseline(room, id, pace)),
        };
        let results = match tokio::time::timeout(SCENARIO_TIMEOUT, futures::future::join_all(clients)).await {
            Ok(results) => results,
            Err(_) => {
                out.errors.push(format!("timed out after {SCENARIO_TIMEOUT:?}"));
                aborts.iter().for_each(|a| a.abort());
                publisher.abort();
                Vec::new()
            }
        };
        out.cpu = Cpu::sample().since(cpu0);
        let (commits1, events1) = self.store_stats(which);
        (out.commits, out.store_events) = (commits1 - commits0, events1 - events0);
        let _ = publisher.await;
        let mut done = t0;
        for r in results {
            match r {
                Ok(c) => {
                    if let Some(e) = c.error {
                        out.errors.push(e);
                    }
                    done = done.max(c.done_ns);
                    out.latencies_us.extend(c.latencies_us);
                    out.frame_bytes = out.frame_bytes.max(c.frame_bytes);
                }
                Err(e) => out.errors.push(format!("client task: {e}")),
            }
        }
        out.secs = (done - t0) as f64 / 1e9;
        // Let the server side of the connections end before the next scenario measures CPU.
        let idle_by = Instant::now() + Duration::from_secs(10);
        while self.connections(which) > 0 && Instant::now() < idle_by {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        out
    }
}

fn report_run(which: Which, label: &str, o: &Outcome) {
    let cores = |us: u64| us as f64 / 1e6 / o.secs.max(1e-9);
    let mut line = format!(
        "[{:8}] {label}: {} events x {} subs in {:.2} s = {:.0} deliveries/s; server {:.2} µs CPU/delivery ({:.2} cores), clients {:.2} µs ({:.2} cores)",
        which.name(),
        o.events,
        o.subs,
        o.secs,
        o.rate(),
        o.srv_us_per_delivery(),
        cores(o.cpu.server),
        o.cli_us_per_delivery(),
        cores(o.cpu.client),
    );
    if which == Which::Ensemble {
        line.push_str(&format!(
            "; store writer {:.2} µs CPU/event ({:.2} cores); {} commits for {} events",
            o.cpu.writer as f64 / o.events.max(1) as f64,
            cores(o.cpu.writer),
            o.commits,
            o.store_events
        ));
    }
    if !o.latencies_us.is_empty() {
        let l = Latency::of(&o.latencies_us);
        line.push_str(&format!("; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms", l.p50, l.p99, l.max));
    }
    if !o.errors.is_empty() {
        line.push_str(&format!("; {} ERRORS, first: {}", o.errors.len(), o.errors[0]));
    }
    eprintln!("{line}");
}

/// Latency percentiles in ms.
struct Latency {
    p50: f64,
    p99: f64,
    p999: f64,
    max: f64,
}

impl Latency {
    fn of(samples_us: &[u32]) -> Latency {
        let mut v = samples_us.to_vec();
        v.sort_unstable();
        let at = |p: f64| {
            if v.is_empty() {
                return f64::NAN;
            }
            let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
            f64::from(v[i.min(v.len() - 1)]) / 1000.0
        };
        Latency { p50: at(50.0), p99: at(99.0), p999: at(99.9), max: at(100.0) }
    }
}

fn si(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// The run with the median rate.
fn median(mut runs: Vec<Outcome>) -> Outcome {
    runs.sort_by(|a, b| a.rate().total_cmp(&b.rate()));
    let mid = runs.len() / 2;
    runs.swap_remove(mid)
}

fn runtime(prefix: &'static str, workers: usize) -> tokio::runtime::Runtime {
    let n = AtomicUsize::new(0);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name_fn(move || format!("{prefix}-{}", n.fetch_add(1, Ordering::Relaxed)))
        // Blocking-pool threads (the store's readers) must not exit mid-scenario: their CPU
        // would vanish from /proc/self/task.
        .thread_keep_alive(Duration::from_secs(3600))
        .enable_all()
        .build()
        .expect("runtime")
}

fn ok(o: Option<&Outcome>) -> Option<&Outcome> {
    o.filter(|o| o.errors.is_empty())
}

fn main() {
    let opts = Opts::parse();
    base_instant();
    let srv = runtime("srv", opts.srv_threads);
    let cli = runtime("cli", opts.cli_threads);
    let ensemble = opts.ensemble.then(|| Arc::new(srv.block_on(start_ensemble(opts.nodelay))));
    let capacity = Cli::try_parse_from(["ensemble"]).map(|c| c.serve.ws_queue).unwrap_or(4096);
    let baseline = opts.baseline.then(|| Arc::new(srv.block_on(start_baseline(capacity, opts.nodelay))));
    let bench = Bench { opts: opts.clone(), srv: srv.handle().clone(), ensemble, baseline, rooms: AtomicU64::new(0) };
    let started = Instant::now();
    eprintln!(
        "fanout: {} CPUs; server runtime {} workers (srv-*), client runtime {} workers (cli-*); window {} events; \
         room ring {capacity}; client read buffer {} B; TCP_NODELAY {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        opts.srv_threads,
        opts.cli_threads,
        opts.window,
        opts.client_read_buf,
        if opts.nodelay { "on (as server::serve)" } else { "off" },
    );

    let (throughput, latency) = cli.block_on(async {
        // Warm-up: connections, SQLite pages, allocator; not reported.
        for which in bench.enabled() {
            let o = bench.run(which, 10, 5_000, Load::MaxRate).await;
            report_run(which, "warm-up", &o);
        }
        let mut throughput: Vec<(usize, HashMap<Which, Outcome>)> = Vec::new();
        for &subs in &opts.subs {
            let events = opts.events_for(subs);
            let mut runs: HashMap<Which, Vec<Outcome>> = HashMap::new();
            for run in 0..opts.runs {
                for which in bench.enabled() {
                    let o = bench.run(which, subs, events, Load::MaxRate).await;
                    report_run(which, &format!("max rate, run {}", run + 1), &o);
                    runs.entry(which).or_default().push(o);
                }
            }
            throughput.push((subs, runs.into_iter().map(|(w, r)| (w, median(r))).collect()));
        }
        let mut latency = HashMap::new();
        if opts.latency_secs > 0 {
            let warmup_secs = 1;
            let events = opts.rate * (opts.latency_secs + warmup_secs);
            for which in bench.enabled() {
                let o = bench.run(which, opts.latency_subs, events, Load::Fixed { rate: opts.rate, warmup_secs }).await;
                report_run(which, &format!("{} ev/s", opts.rate), &o);
                latency.insert(which, o);
            }
        }
        (throughput, latency)
    });

    // ------------------------------------------------------------------------------ the table
    let mut failed = false;
    println!();
    println!(
        "Room fan-out: Ensemble (emit -> fold -> SQLite group commit -> RoomHub -> real router/ws.rs) vs tuned axum baseline"
    );
    let frame =
        |w: Which| throughput.iter().filter_map(|(_, m)| m.get(&w)).chain(latency.get(&w)).map(|o| o.frame_bytes).max();
    println!(
        "(server CPU = threads srv-* and ensemble-store-writer, incl. the publisher; {} server / {} client workers; \
         medians of {} run(s); event frames {} B (Ensemble) / {} B (baseline); {:.0} s total)",
        opts.srv_threads,
        opts.cli_threads,
        opts.runs,
        frame(Which::Ensemble).map_or("-".into(), |b| b.to_string()),
        frame(Which::Baseline).map_or("-".into(), |b| b.to_string()),
        started.elapsed().as_secs_f64()
    );
    println!();
    println!(
        "| scenario | Ensemble deliveries/s | baseline deliveries/s | ratio | Ensemble µs CPU/delivery | baseline µs CPU/delivery |"
    );
    println!("| --- | --: | --: | --: | --: | --: |");
    let cell = |o: Option<&Outcome>, f: &dyn Fn(&Outcome) -> String| match o {
        Some(o) if o.errors.is_empty() => f(o),
        Some(o) => format!("FAILED ({})", o.errors.len()),
        None => "-".into(),
    };
    let mut ratio_100 = None;
    for (subs, m) in &throughput {
        let (e, b) = (m.get(&Which::Ensemble), m.get(&Which::Baseline));
        failed |= m.values().any(|o| !o.errors.is_empty());
        let ratio = match (ok(e), ok(b)) {
            (Some(e), Some(b)) => Some(e.rate() / b.rate()),
            _ => None,
        };
        if *subs == 100 {
            ratio_100 = ratio;
        }
        let events = e.or(b).map_or(0, |o| o.events);
        println!(
            "| max rate, {subs} sub{} ({events} events) | {} | {} | {} | {} | {} |",
            if *subs == 1 { "" } else { "s" },
            cell(e, &|o| si(o.rate())),
            cell(b, &|o| si(o.rate())),
            ratio.map_or("-".into(), |r| format!("{r:.2}x")),
            cell(e, &|o| format!("{:.2}", o.srv_us_per_delivery())),
            cell(b, &|o| format!("{:.2}", o.srv_us_per_delivery())),
        );
    }
    let mut p99 = None;
    if !latency.is_empty() {
        let (e, b) = (latency.get(&Which::Ensemble), latency.get(&Which::Baseline));
        failed |= latency.values().any(|o| !o.errors.is_empty());
        let lat = |o: &Outcome| {
            let l = Latency::of(&o.latencies_us);
            format!("{:.2} / {:.2} / {:.2} / {:.2}", l.p50, l.p99, l.p999, l.max)
        };
        p99 = ok(e).map(|o| Latency::of(&o.latencies_us).p99);
        println!();
        println!(
            "| {} ev/s, {} subs, {} s | Ensemble p50 / p99 / p99.9 / max ms | baseline p50 / p99 / p99.9 / max ms | Ensemble µs CPU/delivery | baseline µs CPU/delivery |",
            opts.rate, opts.latency_subs, opts.latency_secs
        );
        println!("| --- | --: | --: | --: | --: |");
        println!(
            "| publish -> receive | {} | {} | {} | {} |",
            cell(e, &lat),
            cell(b, &lat),
            cell(e, &|o| format!("{:.2}", o.srv_us_per_delivery())),
            cell(b, &|o| format!("{:.2}", o.srv_us_per_delivery())),
        );
    }
    if bench.ensemble.is_some() {
        println!();
        println!("| Ensemble SQLite group commit | events | commits | events/commit |");
        println!("| --- | --: | --: | --: |");
        let rows = throughput
            .iter()
            .filter_map(|(subs, m)| m.get(&Which::Ensemble).map(|o| (format!("max rate, {subs} subs"), o)))
            .chain(latency.get(&Which::Ensemble).map(|o| (format!("{} ev/s, {} subs", opts.rate, o.subs), o)));
        for (label, o) in rows {
            println!(
                "| {label} | {} | {} | {:.1} |",
                o.store_events,
                o.commits,
                o.store_events as f64 / o.commits.max(1) as f64
            );
        }
    }
    println!();
    match ratio_100 {
        Some(r) => println!(
            "target: Ensemble >= 0.5x baseline deliveries/s with 100 subscribers: {} ({r:.2}x)",
            if r >= 0.5 { "MET" } else { "MISSED" }
        ),
        None => println!("target: deliveries/s ratio with 100 subscribers: not measured"),
    }
    match p99 {
        Some(p) => println!(
            "target: Ensemble p99 < 10 ms at {} ev/s with {} subscribers: {} ({p:.2} ms)",
            opts.rate,
            opts.latency_subs,
            if p < 10.0 { "MET" } else { "MISSED" }
        ),
        None => println!("target: p99 latency: not measured"),
    }

    if let Some(ens) = bench.ensemble {
        srv.block_on(async move { ens.stop().await });
    }
    drop(cli);
    srv.shutdown_timeout(Duration::from_secs(2));
    if failed {
        eprintln!("fanout: some scenarios FAILED (see above)");
        std::process::exit(1);
    }
}
