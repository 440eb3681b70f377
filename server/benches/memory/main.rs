//! Memory and restart as a user feels them, on the real `ensemble` binary: the server's resident
//! set (VmRSS, `/proc/<pid>/status`) per idle live scripted session at 10,000 sessions and per open
//! room WebSocket, and the restart time with those sessions in the store.
//!
//! `cargo bench -p ensemble-server --bench memory [-- OPTIONS]`
//!
//! A run: `ensemble serve` on a fresh data dir (the defaults of `ensemble serve`, except the
//! session and WebSocket limits raised to fit and `--idle-release-secs 0`, so no session is released
//! while measured); a warm-up of 32 sessions in room `warm`; RSS; `--sessions` scripted sessions
//! started by 32 concurrent clients over `--rooms` rooms (each answered 201, so live and idle); 1 s
//! of rest; RSS → KiB per session. Then `--ws` room WebSockets spread over the same rooms, each read
//! to its `hello`; 1 s; RSS → KiB per WebSocket. Between the two, a turn with the input `/hang`
//! submitted to each session (202; the scripted agent accepts it and waits for a cancel, as an
//! agent waits on its model); 1 s; RSS → KiB per waiting turn (the turns are canceled once the
//! WebSockets are closed: a waiting turn sends nothing they would buffer). Then SIGTERM (timed until the exit), and the server
//! spawned again on the same data dir: the time from spawn to its `listening on` line (the store
//! opened and every session recovered) and to `/readyz` 200; the restarted server must list every
//! session. Baseline of the restart: the same stop and restart of a server whose store is empty, in
//! the same run. Medians of `--runs` runs.
//!
//! Options (also as `MEMORY_*` environment variables):
//!   --sessions N   idle live sessions (default 10000)
//!   --rooms R      rooms they are spread over (default 100)
//!   --ws W         room WebSockets (default 1000)
//!   --runs K       runs (default 3)
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

#[path = "../common/server.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::{Server, TOKEN, arg, median, prepare};

const CLIENTS: usize = 32;
const WARM: usize = 32;

struct Run {
    rss_before: u64,
    rss_sessions: u64,
    rss_ws: u64,
    rss_turns: u64,
    kib_per_session: f64,
    kib_per_ws: f64,
    kib_per_turn: f64,
    stop: Duration,
    to_listening: Duration,
    to_ready: Duration,
    empty_to_listening: Duration,
    empty_to_ready: Duration,
}

fn flags(sessions: usize, ws: usize) -> Vec<String> {
    let (s, w) = ((sessions + WARM + 64).to_string(), (ws + 64).to_string());
    [
        "--max-sessions",
        &s,
        "--max-sessions-per-room",
        &s,
        "--max-live-sessions",
        &s,
        "--max-ws-connections",
        &w,
        "--max-ws-per-room",
        &w,
        "--max-ws-per-token",
        &w,
        "--idle-release-secs",
        "0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs `op(i)` for every `i` in `0..count`, [`CLIENTS`] at a time; returns the results in `i`
/// order.
async fn concurrently<T, F, Fut>(count: usize, op: F) -> Vec<T>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = T> + Send,
    T: Send + 'static,
{
    let (next, op) = (Arc::new(AtomicUsize::new(0)), Arc::new(op));
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (next, op) = (next.clone(), op.clone());
            tokio::spawn(async move {
                let mut done = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return done;
                    }
                    done.push((i, op(i).await));
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, v)| v).collect()
}

/// Starts `count` sessions (`{prefix}{i}`, in room `room(i)`) with [`CLIENTS`] concurrent clients.
async fn start_sessions(server: &Server, count: usize, room: impl Fn(usize) -> String, prefix: &str) {
    let rooms: Arc<Vec<String>> = Arc::new((0..count).map(room).collect());
    let (http, base, prefix) = (server.http.clone(), server.base.clone(), prefix.to_owned());
    concurrently(count, move |i| {
        let (http, url) = (http.clone(), format!("{base}/v1/rooms/{}/sessions", rooms[i]));
        let body = json!({"sessionId": format!("{prefix}{i}")});
        async move {
            let r = http.post(url).json(&body).send().await.unwrap();
            let status = r.status();
            assert_eq!(status, 201, "{}", r.text().await.unwrap_or_default());
        }
    })
    .await;
}

/// `POST` to `…/sessions/s{i}{path}` in room `r{i % rooms}` (the sessions [`run`] starts) for every
/// `i` below `count`, [`CLIENTS`] at a time, each answered 202 with a `turnId`; returns the ids.
async fn to_each_session(server: &Server, count: usize, rooms: usize, path: &'static str, body: Value) -> Vec<String> {
    let (http, base) = (server.http.clone(), server.base.clone());
    concurrently(count, move |i| {
        let (http, url) = (http.clone(), format!("{base}/v1/rooms/r{}/sessions/s{i}{path}", i % rooms));
        let body = body.clone();
        async move {
            let r = http.post(url).json(&body).send().await.unwrap();
            let status = r.status();
            let answer: Value = r.json().await.unwrap_or_default();
            assert_eq!(status, 202, "{answer}");
            answer["turnId"].as_str().expect("turnId").to_owned()
        }
    })
    .await
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn open_ws(addr: &str, room: &str) -> Ws {
    let mut req = format!("ws://{addr}/v1/rooms/{room}/ws").into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.expect("room socket");
    loop {
        let m =
            tokio::time::timeout(Duration::from_secs(30), ws.next()).await.expect("hello in time").unwrap().unwrap();
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            assert_eq!(v["type"], "hello");
            return ws;
        }
    }
}

async fn session_count(server: &Server) -> u64 {
    let v: Value = server.http.get(format!("{}/v1/rooms", server.base)).send().await.unwrap().json().await.unwrap();
    let rooms = v.get("data").unwrap_or(&v).as_array().expect("rooms").clone();
    rooms.iter().map(|r| r["sessionCount"].as_u64().unwrap_or(0)).sum()
}

/// Stops `server`, spawns it again on `dir`: (stop, to listening, to ready), and the restarted server.
async fn restart(server: Server, dir: &Path, flags: &[String]) -> (Duration, Duration, Duration, Server) {
    let stop = server.stop().await;
    let again = Server::spawn(dir, flags).await;
    let ready = again.ready().await;
    (stop, again.to_listening, ready, again)
}

async fn run(sessions: usize, rooms: usize, ws_count: usize) -> Run {
    let flags = flags(sessions, ws_count);
    let tmp = tempfile::Builder::new().prefix("ensemble-bench-mem-").tempdir_in("/var/tmp").unwrap();
    let (dir, empty_dir) = (tmp.path().join("full"), tmp.path().join("empty"));
    prepare(&dir);
    prepare(&empty_dir);

    // The baseline restart: an empty store.
    let empty = Server::spawn(&empty_dir, &flags).await;
    empty.ready().await;
    let (_, empty_to_listening, empty_to_ready, empty) = restart(empty, &empty_dir, &flags).await;
    empty.stop().await;

    let server = Server::spawn(&dir, &flags).await;
    server.ready().await;
    start_sessions(&server, WARM, |_| "warm".into(), "w").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = server.rss_kib();
    let t0 = Instant::now();
    start_sessions(&server, sessions, |i| format!("r{}", i % rooms), "s").await;
    eprintln!("memory: {sessions} sessions started in {:.1} s", t0.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_sessions = server.rss_kib();

    let hang = json!({"input": [{"type": "text", "text": "/hang"}]});
    let turns = to_each_session(&server, sessions, rooms, "/turns", hang).await;
    // The same settling rest as before the other readings (every submit was answered first, so it
    // orders nothing): the turns' tasks take their first poll, the allocator settles.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_turns = server.rss_kib();

    let mut sockets = Vec::with_capacity(ws_count);
    for i in 0..ws_count {
        sockets.push(open_ws(&server.addr, &format!("r{}", i % rooms)).await);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_ws = server.rss_kib();
    drop(sockets);
    let canceled = to_each_session(&server, sessions, rooms, "/cancel", json!({})).await;
    assert_eq!(canceled, turns, "each cancel names the waiting turn");

    let (stop, to_listening, to_ready, again) = restart(server, &dir, &flags).await;
    let listed = session_count(&again).await;
    assert_eq!(listed, (sessions + WARM) as u64, "the restarted server lists every session");
    again.stop().await;
    let r = Run {
        rss_before,
        rss_sessions,
        rss_ws,
        rss_turns,
        kib_per_session: (rss_sessions as f64 - rss_before as f64) / sessions as f64,
        kib_per_turn: (rss_turns as f64 - rss_sessions as f64) / sessions as f64,
        kib_per_ws: (rss_ws as f64 - rss_turns as f64) / ws_count.max(1) as f64,
        stop,
        to_listening,
        to_ready,
        empty_to_listening,
        empty_to_ready,
    };
    eprintln!(
        "memory: RSS {} → {} → {} → {} KiB: {:.2} KiB/session, {:.2} KiB/waiting turn, {:.2} KiB/WebSocket; stop {:.2} s, restart {:.3} s to listening, \
         {:.3} s to ready (empty store {:.3} / {:.3} s)",
        r.rss_before,
        r.rss_sessions,
        r.rss_turns,
        r.rss_ws,
        r.kib_per_session,
        r.kib_per_turn,
        r.kib_per_ws,
        r.stop.as_secs_f64(),
        r.to_listening.as_secs_f64(),
        r.to_ready.as_secs_f64(),
        r.empty_to_listening.as_secs_f64(),
        r.empty_to_ready.as_secs_f64()
    );
    r
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sessions: usize = arg("--sessions", "MEMORY_SESSIONS", "10000").parse().unwrap();
    let rooms: usize = arg("--rooms", "MEMORY_ROOMS", "100").parse::<usize>().unwrap().max(1);
    let ws: usize = arg("--ws", "MEMORY_WS", "1000").parse().unwrap();
    let runs: usize = arg("--runs", "MEMORY_RUNS", "3").parse::<usize>().unwrap().max(1);
    let started = Instant::now();
    let mut all = Vec::new();
    for i in 0..runs {
        eprintln!("memory: run {}/{runs}", i + 1);
        all.push(run(sessions, rooms, ws).await);
    }
    let m = |f: fn(&Run) -> f64| median(all.iter().map(f).collect());
    println!(
        "\nMemory and restart: the real `ensemble` binary, {sessions} idle live scripted sessions over {rooms} rooms, \
         {ws} room WebSockets over the same rooms; server RSS (VmRSS); medians of {runs} run(s); {:.0} s total\n",
        started.elapsed().as_secs_f64()
    );
    println!("| measure | value | baseline | ratio |");
    println!("| --- | --: | --: | --: |");
    let per_session = m(|r| r.kib_per_session);
    println!("| RSS per idle live session | {per_session:.2} KiB | 8 KiB (target) | {:.2}x |", per_session / 8.0);
    println!("| RSS per waiting turn (`/hang`) | {:.2} KiB | — | — |", m(|r| r.kib_per_turn));
    println!("| RSS per open WebSocket | {:.2} KiB | — | — |", m(|r| r.kib_per_ws));
    println!(
        "| server RSS: idle / with sessions / with turns / with WebSockets | {:.1} / {:.1} / {:.1} / {:.1} MiB | — | — |",
        m(|r| r.rss_before as f64) / 1024.0,
        m(|r| r.rss_sessions as f64) / 1024.0,
        m(|r| r.rss_turns as f64) / 1024.0,
        m(|r| r.rss_ws as f64) / 1024.0
    );
    let (l, el) = (m(|r| r.to_listening.as_secs_f64()), m(|r| r.empty_to_listening.as_secs_f64()));
    let (rd, erd) = (m(|r| r.to_ready.as_secs_f64()), m(|r| r.empty_to_ready.as_secs_f64()));
    println!(
        "| restart with {sessions} sessions: spawn → `listening on` | {l:.3} s | {el:.3} s (empty store) | {:.2}x |",
        l / el
    );
    println!(
        "| restart with {sessions} sessions: spawn → `/readyz` 200 | {rd:.3} s | {erd:.3} s (empty store) | {:.2}x |",
        rd / erd
    );
    println!("| stop (SIGTERM → exit) with {sessions} live sessions | {:.3} s | — | — |", m(|r| r.stop.as_secs_f64()));
    println!();
    println!(
        "target: RSS per idle live session <= 8 KiB: {} ({per_session:.2} KiB)",
        if per_session <= 8.0 { "MET" } else { "MISSED" }
    );
}
