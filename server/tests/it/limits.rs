//! Every named limit refuses with the documented status and code, and frees up again; slow
//! readers, oversized events, idle sessions and leftover processes are handled without harming
//! anyone else.

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::*;

/// Tries a WebSocket upgrade; `Ok` when it was accepted, else the refusal's status and body.
async fn try_ws(s: &Server, room: &str) -> Result<Ws, (u16, Value, Option<String>)> {
    let mut req = format!("ws://{}/v1/rooms/{room}/ws", s.addr).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    match tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req)).await.unwrap() {
        Ok((stream, _)) => Ok(Ws { stream }),
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            let body = res.body().as_deref().and_then(|b| serde_json::from_slice(b).ok()).unwrap_or(Value::Null);
            Err((res.status().as_u16(), body, retry))
        }
        Err(e) => panic!("ws: {e}"),
    }
}

#[tokio::test]
async fn websocket_connections_are_limited_per_room_and_in_total() {
    let s = Server::start(&["--max-ws-per-room", "2", "--max-ws-connections", "3"]).await;
    let mut a1 = try_ws(&s, "a").await.unwrap();
    a1.hello().await;
    let mut a2 = try_ws(&s, "a").await.unwrap();
    a2.hello().await;
    let (st, body, retry) = try_ws(&s, "a").await.err().unwrap();
    assert_eq!(
        (st, body["error"]["code"].as_str(), retry.as_deref()),
        (503, Some("too_many_room_connections"), Some("1"))
    );
    let mut b = try_ws(&s, "b").await.unwrap();
    b.hello().await;
    let (st, body, _) = try_ws(&s, "c").await.err().unwrap();
    assert_eq!((st, body["error"]["code"].as_str()), (503, Some("too_many_connections")));
    // A closed connection frees its slot (the server notices the close promptly).
    a1.stream.close(None).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut again = loop {
        match try_ws(&s, "a").await {
            Ok(ws) => break ws,
            Err((503, _, _)) if tokio::time::Instant::now() < deadline => tokio::task::yield_now().await,
            Err(e) => panic!("{e:?}"),
        }
    };
    again.hello().await;
    // The survivors still work.
    s.session("a", "x").await;
    assert_eq!(a2.event().await["type"], "session.started");
    assert_eq!(again.event().await["type"], "session.started");
}

#[tokio::test]
async fn sessions_are_limited_per_room_in_total_and_live() {
    let s = Server::start(&["--max-sessions-per-room", "2", "--max-sessions", "3", "--max-live-sessions", "2"]).await;
    s.session("a", "a1").await;
    s.session("a", "a2").await;
    let res = s.http().post(s.url("/v1/rooms/a/sessions")).json(&json!({"sessionId": "a3"})).send().await.unwrap();
    assert_eq!(res.headers()["retry-after"], "5");
    let (st, body) = decode(res).await;
    assert_eq!(error_code(st, &body, StatusCode::TOO_MANY_REQUESTS), "too_many_sessions");
    // Live sessions: two are live, a third start is refused as a capacity problem (retry later).
    let (st, body) = s.post("/v1/rooms/b/sessions", json!({"sessionId": "b1"})).await;
    assert_eq!(error_code(st, &body, StatusCode::SERVICE_UNAVAILABLE), "at_capacity");
    // Releasing one frees a live slot (the session stays, resumable).
    let (st, _) = s.post_empty("/v1/rooms/a/sessions/a1/release").await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    s.session("b", "b1").await;
    // Now 3 open sessions in total: the total limit holds.
    let (st, body) = s.post("/v1/rooms/c/sessions", json!({"sessionId": "c1"})).await;
    assert_eq!(error_code(st, &body, StatusCode::TOO_MANY_REQUESTS), "too_many_sessions");
    // Resuming a1 (explicitly or by a turn) would be a third live one.
    let (st, body) = s.post_empty("/v1/rooms/a/sessions/a1/resume").await;
    assert_eq!(error_code(st, &body, StatusCode::SERVICE_UNAVAILABLE), "at_capacity");
    let res = s
        .http()
        .post(s.url("/v1/rooms/a/sessions/a1/turns"))
        .json(&json!({"input": [{"type": "text", "text": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert!(res.headers().contains_key("retry-after"));
    let (st, body) = decode(res).await;
    assert_eq!(error_code(st, &body, StatusCode::SERVICE_UNAVAILABLE), "at_capacity");
    let (_, a1) = s.get("/v1/rooms/a/sessions/a1").await;
    assert_eq!((a1["status"].as_str(), a1["live"].as_bool()), (Some("disconnected"), Some(false)), "{a1}");
    // Closing frees both kinds of slot.
    s.delete("/v1/rooms/b/sessions/b1").await;
    let (st, body) = s.post_empty("/v1/rooms/a/sessions/a1/resume").await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, body) = s.post("/v1/rooms/c/sessions", json!({"sessionId": "c1"})).await;
    assert_eq!(error_code(st, &body, StatusCode::SERVICE_UNAVAILABLE), "at_capacity");
    s.post_empty("/v1/rooms/a/sessions/a2/release").await;
    s.session("c", "c1").await;
}

#[tokio::test]
async fn an_oversized_event_is_cut_not_stored_whole() {
    let s = Server::start(&["--max-event-bytes", "4096", "--scripted-chunk-delay-ms", "0"]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    s.session("r", "s").await;
    // One 20 000-byte word: echoed as one delta and one completed message, both too large.
    s.turn("r", "s", &format!("short {}", "x".repeat(20_000))).await;
    let events = ws.until_type("turn.completed").await;
    let texts: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "message.delta" || e["type"] == "message.completed").collect();
    assert!(texts.iter().any(|e| e["payload"]["text"].as_str().unwrap().contains("short")), "small ones pass");
    // Everything the agent said fits; `turn.started` carries the user's input, which its own limit
    // (`--max-input-bytes`) bounds.
    for e in events.iter().filter(|e| e["type"] != "turn.started") {
        assert!(serde_json::to_string(&e["payload"]).unwrap().len() <= 4096, "{}", e["type"]);
    }
    let done = events.iter().find(|e| e["type"] == "message.completed").unwrap();
    let cut = done["payload"]["text"].as_str().unwrap();
    assert!(cut.starts_with("You said: short xxx"), "{}", &cut[..40]);
    assert!(cut.ends_with("…[truncated]"), "{}", &cut[cut.len().saturating_sub(40)..]);
    // The log holds the cut event, not the whole one; the turn ended normally.
    let logged = s.events("r").await;
    let stored = logged.iter().find(|e| e["type"] == "message.completed").unwrap();
    assert_eq!(stored["payload"]["text"], done["payload"]["text"]);
    assert_eq!(events.last().unwrap()["type"], "turn.completed");
}

#[tokio::test]
async fn a_slow_reader_gets_resync_and_misses_nothing_after_reconnecting() {
    slow_reader_resyncs(&["--ws-queue", "1024", "--scripted-chunk-delay-ms", "0"]).await;
}

/// The same by bytes: room for every frame of the turn, but not for their bytes.
#[tokio::test]
async fn a_reader_further_behind_than_its_byte_budget_gets_resync_too() {
    slow_reader_resyncs(&["--ws-queue", "65536", "--ws-queue-bytes", "65536", "--scripted-chunk-delay-ms", "0"]).await;
}

/// A reader that reads nothing while a turn of 30,000 chunks streams is told to resync (`lagged`),
/// closed with 4000, and reconnecting after its last seq gets exactly the rest; another reader
/// follows the room meanwhile.
async fn slow_reader_resyncs(flags: &[&str]) {
    let s = Server::start(flags).await;
    s.session("r", "s").await;
    // The slow reader: a small receive buffer, and it reads nothing while the room streams.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let tcp = socket.connect(s.addr.parse().unwrap()).await.unwrap();
    let mut req = format!("ws://{}/v1/rooms/r/ws?after=0", s.addr).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (slow, _) = tokio_tungstenite::client_async(req, tokio_tungstenite::MaybeTlsStream::Plain(tcp)).await.unwrap();
    let mut slow = Ws { stream: slow };
    s.turn("r", "s", "/chunks 30000").await;
    // The room is not slowed: another reader follows it to the end of the turn while the slow one
    // reads nothing. (It may fall behind too on a loaded machine; it then reconnects after its
    // last seq, as every client should.)
    let mut seen: Vec<Value> = Vec::new();
    let mut fast = s.ws("r", Some(0)).await;
    'follow: loop {
        let f = fast.frame().await;
        match f["type"].as_str() {
            Some("event") => {
                let done = f["event"]["type"] == "turn.completed";
                seen.push(f["event"].clone());
                if done {
                    break 'follow;
                }
            }
            Some("resync" | "__close") => {
                let last = seen.last().map_or(0, |e| e["seq"].as_u64().unwrap());
                fast = s.ws("r", Some(last)).await;
            }
            _ => {}
        }
    }
    assert_gap_free(&seen);
    let head = seen.last().unwrap()["seq"].as_u64().unwrap();
    // Now the slow reader reads: at some point it is told to resync, and closed with 4000.
    let mut got: Vec<Value> = Vec::new();
    let resync = loop {
        let f = slow.frame().await;
        match f["type"].as_str() {
            Some("hello") => continue,
            Some("event") => got.push(f["event"].clone()),
            Some("resync") => break f,
            other => panic!("unexpected {other:?}: {f}"),
        }
    };
    assert_eq!(resync["reason"], "lagged", "{resync}");
    assert_eq!(slow.frame().await, json!({"type": "__close", "code": 4000}));
    assert!(got.len() < seen.len(), "the slow reader fell behind");
    assert_gap_free(&got);
    // It reconnects with after= its last seq and gets exactly the rest.
    let last = got.last().map_or(0, |e| e["seq"].as_u64().unwrap());
    let mut again = s.ws("r", Some(last)).await;
    again.hello().await;
    let rest = again.until(|e| e["seq"].as_u64() == Some(head)).await;
    got.extend(rest);
    assert_gap_free(&got);
    let log = s.events("r").await;
    let ids = |v: &[Value]| v.iter().map(|e| e["eventId"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&got), ids(&log[..got.len()]));
    assert_eq!(got.len(), log.len());
}

#[tokio::test]
async fn idle_live_sessions_are_released_but_not_busy_ones() {
    let s = Server::start(&["--idle-release-secs", "1"]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    // Busy in every way that must keep a session: a running turn, a pending question, an open side.
    s.session("r", "turning").await;
    s.turn("r", "turning", "/hang").await;
    s.session("r", "asking").await;
    s.turn("r", "asking", "/ask favourite colour?").await;
    s.session("r", "source").await;
    let (st, body) =
        s.post("/v1/rooms/r/sessions/source/sides", json!({"requestId": "q", "sideSessionId": "side"})).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    // The idle one is created last, so when it is released every other one was idle at least as long.
    s.session("r", "idle").await;
    // Room events until the first release (side events pass by as `side_event` frames).
    let released = loop {
        let f = ws.frame().await;
        if f["type"] == "event"
            && f["event"]["type"] == "session.updated"
            && f["event"]["payload"]["reason"] == "released"
        {
            break f["event"].clone();
        }
    };
    assert_eq!(released["sessionId"], "idle");
    for id in ["turning", "asking", "source", "side"] {
        let (_, sess) = s.get(&format!("/v1/rooms/r/sessions/{id}")).await;
        assert_eq!(sess["live"], true, "{id}: {sess}");
    }
    // A released session comes back on its next turn.
    s.turn("r", "idle", "back again").await;
    let mut resumed = false;
    loop {
        let f = ws.frame().await;
        let e = &f["event"];
        if f["type"] == "event" && e["sessionId"] == "idle" {
            resumed |= e["type"] == "session.updated" && e["payload"]["reason"] == "resumed";
            if e["type"] == "turn.completed" {
                break;
            }
        }
    }
    assert!(resumed);
}

#[tokio::test]
async fn processes_left_by_a_crashed_run_are_reaped_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let runs = tmp.path().join("data").join("runs");
    let names = || -> Vec<String> {
        std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
    };
    let run = names();
    assert_eq!(run.len(), 1, "one registered run");
    // Stand-ins for an agent's grandchildren that outlived a crash: tagged with the run's id, one
    // of them in a session of its own (as `setsid` would leave it).
    let tagged = |setsid: bool| {
        let mut c = std::process::Command::new(if setsid { "setsid" } else { "sleep" });
        if setsid {
            c.arg("sleep");
        }
        c.arg("300").env("ENSEMBLE_RUN_ID", &run[0]).spawn().unwrap()
    };
    let mut orphans = [tagged(/*setsid*/ false), tagged(/*setsid*/ true)];
    // An untagged process must survive.
    let mut bystander = std::process::Command::new("sleep").arg("300").spawn().unwrap();
    s.kill9().await;
    let s = Server::start_in(tmp.path(), &[]).await;
    for o in &mut orphans {
        let status = tokio::time::timeout(WAIT, async {
            loop {
                if let Some(st) = o.try_wait().unwrap() {
                    return st;
                }
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the orphan was reaped");
        assert!(!status.success());
    }
    assert!(bystander.try_wait().unwrap().is_none(), "an untagged process was left alone");
    bystander.kill().unwrap();
    let _ = bystander.wait();
    // The old run is gone from the registry; the new one is there.
    let now = names();
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], run[0]);
    assert!(s.log().contains("reaped agent processes left by an earlier run"));
}

#[tokio::test]
async fn a_silent_peer_is_closed_but_a_responsive_one_is_kept() {
    let s = Server::start(&["--ws-idle-secs", "3", "--ws-ping-secs", "1"]).await;
    // This one never reads, so it never answers the server's pings.
    let mut silent = s.ws("r", None).await;
    // This one reads all the time (tungstenite answers pings as it reads).
    let mut alive = s.ws("r", None).await;
    alive.hello().await;
    let pings_answered = tokio::spawn(async move {
        // Reads until the silent peer has been closed, then proves it is still served.
        let mut frames = Vec::new();
        loop {
            let f = alive.frame().await;
            let done = f["type"] == "event";
            frames.push(f);
            if done {
                return frames;
            }
        }
    });
    // Wait (on the server's own metrics, not a clock) until the silent one was closed as idle;
    // reading it would answer the pings.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (_, metrics) = s.get("/metrics").await;
        let text = metrics.as_str().unwrap().to_owned();
        let value = |prefix: &str| text.lines().find_map(|l| l.strip_prefix(prefix)).map(|v| v.trim().to_owned());
        if value("ensemble_ws_closed_total{reason=\"idle\"} ").as_deref() == Some("1") {
            assert_eq!(value("ensemble_ws_connections ").as_deref(), Some("1"), "only the silent one went");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the silent peer was never closed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // What it sees when it finally reads: hello, then the idle close (or a broken pipe as it tries
    // to answer a ping on the closed connection).
    assert_eq!(silent.frame().await["type"], "hello");
    drop(silent);
    // The responsive peer outlived it and still gets events.
    s.session("r", "after").await;
    let frames = pings_answered.await.unwrap();
    assert!(frames.iter().all(|f| f["type"] != "__close"), "{frames:?}");
    assert_eq!(frames.last().unwrap()["event"]["type"], "session.started");
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_refused_before_it_is_sent() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = Server::start(&["--max-body-bytes", "4096"]).await;
    for declared in [4097u64, 10_000_000_000] {
        let mut tcp = tokio::net::TcpStream::connect(&s.addr).await.unwrap();
        // The head only: the body is never sent, so an answer can only come before reading it.
        let head = format!(
            "POST /v1/rooms/r/sessions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n",
            s.addr
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        let started = std::time::Instant::now();
        let mut out = Vec::new();
        // The server answers and closes the connection (the unread body is not waited for).
        tokio::time::timeout(WAIT, tcp.read_to_end(&mut out)).await.expect("no answer without the body").unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        let body: Value = serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(body["error"]["code"], "payload_too_large", "{body}");
        assert_eq!(body["error"]["details"], json!({"limit": 4096, "declared": declared}));
    }
    // Without the token the answer is still 401, as for any request (the body is not read either).
    let res = reqwest::Client::new()
        .post(s.url("/v1/rooms/r/sessions"))
        .header("content-type", "application/json")
        .body("x".repeat(8192))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    assert_eq!(list["data"], json!([]));
}
