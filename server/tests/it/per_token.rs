//! What one token may hold or write is bounded, so it cannot lock the others out or fill the
//! disk: long polls and room WebSockets per token, a revoked token's long polls and exports ended
//! at once, and its refusals kept in the audit at a bounded rate, with invalid path ids as a short
//! marker.

use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::*;
use crate::roles::{As, make_token, wait_audit};

/// Starts a turn in `room`/`s` that waits on an approval (so `?wait=idle` waits) and returns the
/// request id to answer.
async fn waiting_on_approval(s: &Server, room: &str) -> String {
    let mut ws = s.ws(room, None).await;
    ws.hello().await;
    s.session(room, "s").await;
    s.turn(room, "s", "/run make").await;
    let asked = ws.until_type("interaction.requested").await;
    asked.last().unwrap()["payload"]["requestId"].as_str().unwrap().to_owned()
}

/// One long poll with `token`: its status, its `Ensemble-Wait` header and its body.
async fn long_poll(client: reqwest::Client, url: String, token: String) -> (StatusCode, Option<String>, Value) {
    let res = client.get(url).bearer_auth(token).send().await.expect("long poll");
    let wait = res.headers().get("ensemble-wait").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = decode(res).await;
    (status, wait, body)
}

/// The issue's case: 40 `?wait=idle` long polls of one token under `--max-connections 40` timed
/// every other client out. Now the token's long polls beyond `--max-long-polls-per-token` (16 by
/// default) answer at once with the session as it is (`Ensemble-Wait: limited`), and the admin
/// gets in; the ones that wait answer `reached` when the session gets there.
#[tokio::test]
async fn one_tokens_long_polls_do_not_lock_out_another_token() {
    let s = Server::start(&["--max-connections", "40"]).await;
    let request = waiting_on_approval(&s, "r").await;
    let (_, viewer) = make_token(&s, "poller", "viewer", &["r"]).await;
    // A connection of its own per long poll, closed after its answer (so that the only connections
    // are the ones that wait).
    let client =
        reqwest::Client::builder().timeout(Duration::from_secs(120)).pool_max_idle_per_host(0).build().unwrap();
    let url = s.url("/v1/rooms/r/sessions/s?wait=idle&timeoutSecs=100");
    // One after the other, each until the server has it waiting or has answered it.
    let polls = FuturesUnordered::new();
    let mut early = 0;
    for _ in 0..40 {
        let poll = tokio::spawn(long_poll(client.clone(), url.clone(), viewer.clone()));
        let deadline = Instant::now() + WAIT;
        loop {
            if poll.is_finished() {
                let (status, wait, body) = poll.await.unwrap();
                assert_eq!((status, wait.as_deref()), (StatusCode::OK, Some("limited")), "{body}");
                assert_eq!(body["status"], "waiting", "the session as it is");
                early += 1;
                break;
            }
            if metric(&s, "ensemble_long_polls_waiting").await as usize == polls.len() + 1 {
                polls.push(poll);
                break;
            }
            assert!(Instant::now() < deadline, "the long poll neither waits nor answered");
            tokio::task::yield_now().await;
        }
    }
    assert_eq!((polls.len(), early), (16, 24), "--max-long-polls-per-token is 16 by default");
    let mut polls = polls;
    let at = Instant::now();
    let (status, body) = s.get("/v1/rooms/r/sessions/s").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(at.elapsed() < Duration::from_secs(10), "the admin waited {:?}", at.elapsed());
    // The 16 that wait answer once the session is idle.
    let (status, body) =
        s.post(&format!("/v1/rooms/r/sessions/s/interactions/{request}"), json!({"decision": "accept"})).await;
    assert!(status.is_success(), "{body}");
    let mut reached = 0;
    while let Some(done) = tokio::time::timeout(WAIT, polls.next()).await.expect("answered") {
        let (status, wait, body) = done.unwrap();
        assert_eq!(
            (status, wait.as_deref(), body["status"].as_str()),
            (StatusCode::OK, Some("reached"), Some("ready"))
        );
        reached += 1;
    }
    assert_eq!(reached, 16);
    assert_eq!(metric(&s, "ensemble_long_polls_limited_total").await, 24.0);
    // A timeout says so too.
    s.turn("r", "s", "/run again").await;
    let (_, wait, _) = long_poll(client.clone(), s.url("/v1/rooms/r/sessions/s?wait=input"), TOKEN.into()).await;
    assert_eq!(wait.as_deref(), Some("reached"));
    let (status, wait, body) =
        long_poll(client.clone(), s.url("/v1/rooms/r/sessions/s?wait=idle&timeoutSecs=1"), TOKEN.into()).await;
    assert_eq!((status, wait.as_deref(), body["status"].as_str()), (StatusCode::OK, Some("timeout"), Some("waiting")));
}

/// The issue's other case: one token's sockets filled `--max-ws-per-room` and the admin got 503.
/// Now a token has at most `--max-ws-per-token` sockets (429 `too_many_token_connections` beyond,
/// with Retry-After), so another token still gets into the room; closing one frees its place.
#[tokio::test]
async fn one_tokens_sockets_do_not_lock_out_another_token() {
    let s = Server::start(&["--max-ws-per-room", "6", "--max-ws-per-token", "4"]).await;
    let (_, viewer) = make_token(&s, "wall", "viewer", &["r", "elsewhere"]).await;
    let viewer = As { s: &s, token: viewer };
    let mut open = Vec::new();
    for _ in 0..4 {
        let mut ws = viewer.ws("r").await.expect("within the token's limit");
        ws.hello().await;
        open.push(ws);
    }
    for _ in 0..3 {
        assert_eq!(viewer.ws("r").await.err(), Some(StatusCode::TOO_MANY_REQUESTS));
    }
    let (status, body, retry) = refused_ws(&s, &viewer.token, "r").await;
    assert_eq!(
        (status, body["error"]["code"].as_str(), retry.as_deref()),
        (429, Some("too_many_token_connections"), Some("1"))
    );
    assert_eq!(body["error"]["details"]["limit"], 4);
    // Other rooms count too: the limit is the token's.
    assert_eq!(viewer.ws("elsewhere").await.err(), Some(StatusCode::TOO_MANY_REQUESTS));
    let mut admin = s.ws("r", None).await;
    admin.hello().await;
    // The room's own limit still holds for everyone.
    let mut sixth = s.ws("r", None).await;
    sixth.hello().await;
    let (status, body, _) = refused_ws(&s, TOKEN, "r").await;
    assert_eq!((status, body["error"]["code"].as_str()), (503, Some("too_many_room_connections")));
    // A socket closed gives its place back.
    open.pop().unwrap().stream.close(None).await.unwrap();
    sixth.stream.close(None).await.unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        match viewer.ws("r").await {
            Ok(mut ws) => {
                ws.hello().await;
                break;
            }
            Err(_) if Instant::now() < deadline => tokio::task::yield_now().await,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A refused upgrade's status, body and Retry-After.
async fn refused_ws(s: &Server, token: &str, room: &str) -> (u16, Value, Option<String>) {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = format!("ws://{}/v1/rooms/{room}/ws", s.addr).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            let body = res.body().as_deref().and_then(|b| serde_json::from_slice(b).ok()).unwrap_or(Value::Null);
            (res.status().as_u16(), body, retry)
        }
        other => panic!("not refused: {:?}", other.map(|_| ())),
    }
}

/// A revoked token's long poll answers 401 at once instead of waiting on. (With
/// `--max-long-polls-per-token 1`, the token's second long poll meanwhile answers at once.)
#[tokio::test]
async fn a_revoked_tokens_long_poll_ends_at_once() {
    let s = Server::start(&["--max-long-polls-per-token", "1"]).await;
    waiting_on_approval(&s, "r").await;
    let (id, viewer) = make_token(&s, "poller", "viewer", &["r"]).await;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(120)).build().unwrap();
    let url = s.url("/v1/rooms/r/sessions/s?wait=idle&timeoutSecs=100");
    let poll = tokio::spawn(long_poll(client.clone(), url.clone(), viewer.clone()));
    let deadline = Instant::now() + WAIT;
    while metric(&s, "ensemble_long_polls_waiting").await < 1.0 {
        assert!(Instant::now() < deadline, "the long poll never waited");
        tokio::task::yield_now().await;
    }
    let (status, wait, _) = long_poll(client, url, viewer).await;
    assert_eq!((status, wait.as_deref()), (StatusCode::OK, Some("limited")), "the token's second");
    let at = Instant::now();
    assert_eq!(s.delete(&format!("/v1/tokens/{id}")).await.0, StatusCode::OK);
    let (status, wait, body) = tokio::time::timeout(WAIT, poll).await.expect("ended at once").unwrap();
    assert_eq!(error_code(status, &body, StatusCode::UNAUTHORIZED), "unauthorized");
    assert!(wait.is_none());
    assert!(at.elapsed() < Duration::from_secs(10), "{:?}", at.elapsed());
    assert_eq!(metric(&s, "ensemble_long_polls_waiting").await, 0.0);
}

/// A revoked token's export stops where it is: the rest of the room is not sent, and there is no
/// end line. (The client reads through a small receive buffer, so the server cannot have written
/// the whole export ahead into the sockets' buffers before the revocation.)
#[tokio::test]
async fn a_revoked_tokens_export_ends_at_once() {
    let s = Server::start(&["--export-page-events", "10", "--scripted-chunk-delay-ms", "0"]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.session("r", "s").await;
    s.turn("r", "s", "/chunks 4000").await;
    ws.until_type("turn.completed").await;
    let full = s.http().get(s.url("/v1/rooms/r/export")).send().await.unwrap().text().await.unwrap();
    assert!(full.contains(r#"{"kind":"end""#) && full.len() > 500_000, "{}", full.len());
    let (id, viewer) = make_token(&s, "exporter", "viewer", &["r"]).await;

    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(16 * 1024).unwrap();
    let mut tcp = socket.connect(s.addr.parse().unwrap()).await.unwrap();
    let head = format!(
        "GET /v1/rooms/r/export HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {viewer}\r\nConnection: close\r\n\r\n",
        s.addr
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") || got.len() < 8192 {
        let n = tokio::time::timeout(WAIT, tcp.read(&mut buf)).await.expect("the export starts").unwrap();
        assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    assert!(got.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got[..100]));
    assert_eq!(s.delete(&format!("/v1/tokens/{id}")).await.0, StatusCode::OK);
    // Read on: what was already in the buffers, then the cut.
    loop {
        match tokio::time::timeout(WAIT, tcp.read(&mut buf)).await.expect("the export ends") {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&got);
    assert!(!text.contains(r#"{"kind":"end""#), "the export ran to its end");
    assert!(got.len() < full.len() / 2, "{} of {} bytes sent after the revocation", got.len(), full.len());
}

/// The issue's case: a viewer sent thousands of refused requests naming a 60 KB room id, and the
/// audit trail kept every one whole (+122 MB in 19 s). Now its refusals are kept at a bounded rate
/// (the rest counted), and an id that is not a valid id is kept as a marker and a short hash.
#[tokio::test]
async fn a_viewers_refusals_with_huge_ids_grow_the_audit_by_a_bounded_amount() {
    let s = Server::start(&[]).await;
    let (viewer_id, viewer) = make_token(&s, "looker", "viewer", &["*"]).await;
    let huge = "x".repeat(60 * 1024);
    let url = s.url(&format!("/v1/rooms/{huge}/sessions"));
    let client = reqwest::Client::builder().timeout(WAIT).build().unwrap();
    const SENT: usize = 2000;
    let started = Instant::now();
    let mut pending = FuturesUnordered::new();
    for i in 0..SENT {
        let req = client.post(&url).bearer_auth(&viewer).json(&json!({})).send();
        pending.push(async move { req.await.expect("refused").status() });
        // Eight at a time.
        if i >= 8 {
            assert_eq!(pending.next().await, Some(StatusCode::FORBIDDEN));
        }
    }
    while let Some(status) = pending.next().await {
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
    let elapsed = started.elapsed().as_secs() as usize;
    let dropped = metric(&s, "ensemble_audit_refusals_dropped_total").await as usize;
    let kept = SENT - dropped;
    // The default: bursts of 60, then 60 a minute.
    assert!((60..=61 + elapsed).contains(&kept), "{kept} of {SENT} kept in {elapsed} s");
    let audit = wait_audit(&s, |d| d.iter().filter(|e| e["tokenId"] == viewer_id.as_str()).count() == kept).await;
    let mine: Vec<&Value> = audit.iter().filter(|e| e["tokenId"] == viewer_id.as_str()).collect();
    let room = mine[0]["roomId"].as_str().unwrap();
    assert!(room.starts_with("(invalid id) sha256:") && room.len() < 40, "{room}");
    assert!(mine.iter().all(|e| e["roomId"] == room && e["code"] == "forbidden"), "one id, one mark");
    let bytes: usize = mine.iter().map(|e| e.to_string().len()).sum();
    assert!(bytes < kept * 400, "{bytes} bytes for {kept} records");
}
