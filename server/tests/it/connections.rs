//! Connections at the HTTP edge (issue #11, "connections are held forever"): a flood of half-open
//! connections beyond the open-file limit does not lock out a client with the token, a connection
//! that never finishes its head is closed after the header-read timeout, an idle kept-alive one
//! after the keep-alive timeout, the cap makes room by closing the oldest idle connection, and the
//! soft open-file limit is raised to the hard one.

use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

/// What the issue's flood sent on each connection: a request line and a Host header, and then
/// nothing (the head never ends).
const HALF_HEAD: &[u8] = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";

async fn half_open(addr: &str) -> TcpStream {
    let mut tcp =
        tokio::time::timeout(WAIT, TcpStream::connect(addr)).await.expect("connect in time").expect("connect");
    tcp.write_all(HALF_HEAD).await.expect("write");
    tcp
}

/// The soft open-file limit of a process (`/proc/<pid>/limits`), and its hard one.
fn file_limits(pid: &str) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
    let mut n =
        line.trim_start_matches("Max open files").split_whitespace().map(|v| v.parse::<u64>().unwrap_or(u64::MAX));
    (n.next().unwrap(), n.next().unwrap())
}

/// Waits (bounded) until the server has closed `tcp`; returns how long that took from `since`.
async fn closed_after(tcp: &mut TcpStream, since: Instant) -> Duration {
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(WAIT, tcp.read(&mut buf)).await.expect("the server did not close the connection") {
            Ok(0) | Err(_) => return since.elapsed(),
            Ok(_) => continue,
        }
    }
}

/// Is `tcp` still open (nothing to read, no end of stream)?
fn still_open(tcp: &TcpStream) -> bool {
    let mut buf = [0u8; 16];
    matches!(tcp.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Reads one HTTP/1.1 response (head and a `Content-Length` body) off a kept-alive connection.
async fn read_response(tcp: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(WAIT, tcp.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "the connection closed mid-response: {}", String::from_utf8_lossy(&out));
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len: usize = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if body.len() >= len {
                return text;
            }
        }
    }
}

#[tokio::test]
async fn half_open_connections_beyond_the_file_limit_do_not_lock_out_a_client_with_the_token() {
    const HELD: usize = 2000;
    const FILES: u64 = 1024;
    let (own, _) = file_limits("self");
    assert!(own > HELD as u64 + 256, "this test holds {HELD} sockets; raise the test's open-file limit (now {own})");
    // A header-read timeout far beyond the test: only the connection cap can keep the server going.
    let s = Server::start_with_file_limit(&["--header-read-timeout-secs", "600"], FILES).await;
    assert_eq!(file_limits(&s.pid().to_string()), (FILES, FILES));
    let started = Instant::now();
    let held: Vec<TcpStream> =
        futures::stream::iter(0..HELD).map(|_| half_open(&s.addr)).buffer_unordered(64).collect().await;
    assert_eq!(held.len(), HELD);
    let flooded = started.elapsed();

    // A client with the token is served within a few seconds, on a fresh connection.
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let asked = Instant::now();
    let res = client.get(s.url("/v1/rooms")).bearer_auth(TOKEN).send().await.expect("the token-bearing request failed");
    assert_eq!(res.status(), StatusCode::OK);
    assert!(asked.elapsed() < Duration::from_secs(5), "served after {:?}", asked.elapsed());

    // The server never ran out of descriptors, and made room by closing the oldest half-open ones.
    let open_fds = std::fs::read_dir(format!("/proc/{}/fd", s.pid())).unwrap().count();
    assert!(open_fds < FILES as usize, "{open_fds} descriptors open");
    let (_, metrics) = s.get("/metrics").await;
    let metrics = metrics.as_str().unwrap().to_owned();
    let evicted: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("ensemble_http_connections_evicted_total "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!(evicted >= (HELD - 512) as f64, "evicted {evicted}\n{metrics}");
    let log = s.log();
    assert!(!log.contains("Too many open files"), "{log}");
    assert!(log.contains("--max-connections lowered to half the open-file limit"), "{log}");
    drop(held);
    eprintln!("flood of {HELD} half-open connections took {flooded:?}");
}

#[tokio::test]
async fn a_connection_that_does_not_finish_its_head_is_closed_after_the_header_read_timeout() {
    let s = Server::start(&["--header-read-timeout-secs", "1"]).await;
    let t0 = Instant::now();
    let mut half = half_open(&s.addr).await;
    let mut silent = tokio::time::timeout(WAIT, TcpStream::connect(&s.addr)).await.unwrap().unwrap();
    let half_closed = closed_after(&mut half, t0).await;
    let silent_closed = closed_after(&mut silent, t0).await;
    for (what, after) in [("half a head", half_closed), ("nothing", silent_closed)] {
        assert!(after >= Duration::from_millis(900), "{what}: closed too early, after {after:?}");
        assert!(after < Duration::from_secs(5), "{what}: closed after {after:?}");
    }
    // A complete request is answered as usual.
    let (st, _) = s.get("/v1/rooms").await;
    assert_eq!(st, StatusCode::OK);
    let (_, metrics) = s.get("/metrics").await;
    assert!(metrics.as_str().unwrap().contains("ensemble_http_header_timeouts_total 2"), "{metrics}");
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_keep_alive_timeout() {
    let s = Server::start(&["--keep-alive-idle-secs", "1", "--header-read-timeout-secs", "60"]).await;
    let mut tcp = tokio::time::timeout(WAIT, TcpStream::connect(&s.addr)).await.unwrap().unwrap();
    let request = format!("GET /v1/rooms HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n", s.addr);
    // Two requests on the connection: kept alive between them.
    for _ in 0..2 {
        tcp.write_all(request.as_bytes()).await.unwrap();
        let res = read_response(&mut tcp).await;
        assert!(res.starts_with("HTTP/1.1 200"), "{res}");
    }
    let idle_since = Instant::now();
    let after = closed_after(&mut tcp, idle_since).await;
    assert!(after >= Duration::from_millis(900), "closed too early, after {after:?}");
    assert!(after < Duration::from_secs(5), "closed after {after:?}");
}

#[tokio::test]
async fn at_the_connection_cap_the_oldest_idle_connection_makes_room() {
    let s = Server::start(&["--max-connections", "4", "--header-read-timeout-secs", "600"]).await;
    let mut first = half_open(&s.addr).await;
    let mut others = Vec::new();
    for _ in 0..3 {
        others.push(half_open(&s.addr).await);
    }
    // The cap is full of half-open connections; a client with the token still gets in.
    let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let res = client.get(s.url("/v1/rooms")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    // The oldest of them made room; the others are still open.
    closed_after(&mut first, Instant::now()).await;
    assert!(others.iter().all(still_open));
    // The next newcomer closes the next half-open one, not the client's kept-alive connection
    // (idle between requests comes after never having sent one).
    let _newcomer = half_open(&s.addr).await;
    closed_after(&mut others[0], Instant::now()).await;
    let res = client.get(s.url("/v1/rooms")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(others[1..].iter().all(still_open));
}

#[tokio::test]
async fn the_soft_open_file_limit_is_raised_to_the_hard_one_and_agents_get_the_original_back() {
    let (_, hard) = file_limits("self");
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_after_shell(
        tmp.path(),
        &["--codex-bin", crate::misbehaving_agents::fake_agent(), "--log-format", "json"],
        // The limits are logged at debug (a routine start-up step).
        "umask 022 && ulimit -S -n 256 && export RUST_LOG=info,ensemble=debug",
    )
    .await;
    let (soft, server_hard) = file_limits(&s.pid().to_string());
    assert_eq!((soft, server_hard), (hard, hard), "the server's own limit");
    // Both limits are logged, before and after.
    let log = s.log();
    let line: serde_json::Value = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["message"].as_str().is_some_and(|m| m.starts_with("open-file limit")))
        .unwrap_or_else(|| panic!("no open-file limit line: {log}"));
    assert_eq!((line["soft"].as_u64(), line["hard"].as_u64()), (Some(hard), Some(hard)), "{line}");
    assert_eq!((line["soft_before"].as_u64(), line["hard_before"].as_u64()), (Some(256), Some(hard)), "{line}");
    // An agent process gets the limit and the file creation mask the server was started with.
    let (st, body) = s.post("/v1/rooms/r/sessions", serde_json::json!({"provider": "codex", "sessionId": "a"})).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.turn("r", "a", "limits").await;
    let events = ws.until(|e| e["type"] == "turn.completed").await;
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "message.completed")
        .filter_map(|e| e["payload"]["text"].as_str())
        .filter(|t| t.starts_with("umask"))
        .collect();
    assert_eq!(said, ["umask 0022 nofile 256"], "{events:?}");
}

#[tokio::test]
async fn out_of_descriptors_the_accept_loop_backs_off_logs_once_and_recovers() {
    // Few descriptors, all taken by room WebSockets (which the HTTP connection cap does not count):
    // `accept` then fails with EMFILE until one of them closes.
    let s = Server::start_with_file_limit(&["--max-ws-per-room", "1000"], 48).await;
    let mut sockets = Vec::new();
    let pending = loop {
        assert!(sockets.len() < 64, "the descriptors never ran out");
        let addr = s.addr.clone();
        let mut attempt = tokio::spawn(async move {
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            let mut req = format!("ws://{addr}/v1/rooms/r/ws").into_client_request().unwrap();
            req.headers_mut().insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
            tokio_tungstenite::connect_async(req).await.map(|(ws, _)| Ws { stream: ws })
        });
        // A handshake that has not completed in a second is one the server cannot accept.
        match tokio::time::timeout(Duration::from_secs(1), &mut attempt).await {
            Ok(ws) => {
                let mut ws = ws.unwrap().unwrap_or_else(|e| panic!("handshake: {e}\n{}", s.log()));
                ws.hello().await;
                sockets.push(ws);
            }
            Err(_) => break attempt,
        }
    };
    // The failure is logged once (then at most every 10 s), not once per attempt.
    s.logged("accept failed").await;
    // A descriptor comes free: the waiting client is served.
    sockets.pop();
    let mut ws =
        tokio::time::timeout(WAIT, pending).await.expect("not served after a descriptor freed").unwrap().unwrap();
    ws.hello().await;
    let log = s.log();
    assert_eq!(log.matches("accept failed").count(), 1, "{log}");
    assert!(log.contains("Too many open files"), "{log}");
    drop(sockets);
    let (_, metrics) = s.get("/metrics").await;
    let failures: f64 = metrics
        .as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("ensemble_http_accept_errors_total{kind=\"resources\"} "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    // Backed off from 10 ms doubling to 1 s: a handful of attempts, never a hot loop.
    assert!((1.0..=30.0).contains(&failures), "{failures} failed accepts\n{metrics}");
}
