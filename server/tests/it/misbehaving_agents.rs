//! An agent process that floods output, prints garbage, hangs or exits mid-turn affects only its
//! own session. The agent is `ensemble-fake-agent` (testsupport/fake-codex), which speaks
//! codex's app-server protocol and misbehaves as the text of a turn asks; each test runs it next
//! to a well-behaved session of the same server.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

/// The longest JSON-RPC line the test servers accept from an agent.
const MAX_LINE: usize = 65_536;

pub fn fake_agent() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| workspace_bin("ensemble-fake-agent", "ensemble-fake-codex").display().to_string())
}

/// A server whose codex is the fake agent.
async fn server(extra: &[&str]) -> Server {
    let max_line = MAX_LINE.to_string();
    // These tests watch the agent's own process by the pid it reports and count processes by
    // their environment: unboxed, so what they see is the agent itself (a boxed agent's pid is
    // its namespace's; `isolation.rs` holds the box's own process guarantees).
    let mut args = vec![
        "--codex-bin",
        fake_agent(),
        "--rpc-max-line-bytes",
        &max_line,
        "--close-grace-ms",
        "500",
        "--isolation",
        "off",
    ];
    args.extend_from_slice(extra);
    Server::start(&args).await
}

/// CODEX_HOME of the server's agents (the default under the data dir).
fn home(s: &Server) -> PathBuf {
    s.dir.join("data").join("codex-home")
}

async fn start(s: &Server, room: &str, id: &str) -> Value {
    let (status, body) =
        s.post(&format!("/v1/rooms/{room}/sessions"), json!({"provider": "codex", "sessionId": id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}\n{}", s.log());
    assert_eq!(body["status"], "ready", "{body}");
    assert_eq!(body["live"], true, "{body}");
    body
}

async fn session(s: &Server, room: &str, id: &str) -> Value {
    let (status, body) = s.get(&format!("/v1/rooms/{room}/sessions/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn is_terminal(e: &Value) -> bool {
    matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled"))
}

/// Events of `session` only.
fn of(events: &[Value], session: &str) -> Vec<Value> {
    events.iter().filter(|e| e["sessionId"] == session).cloned().collect()
}

/// Reads the room until `turn` of `session` ends; returns that session's events.
async fn turn_end(ws: &mut Ws, session: &str, turn: &str) -> Vec<Value> {
    let events = ws.until(|e| e["sessionId"] == session && e["turnId"] == turn && is_terminal(e)).await;
    of(&events, session)
}

/// The texts of the `message.completed` events.
fn completed_texts(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "message.completed")
        .map(|e| e["payload"]["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The streamed text of the `message.delta` events.
fn streamed(events: &[Value]) -> String {
    events.iter().filter(|e| e["type"] == "message.delta").map(|e| e["payload"]["text"].as_str().unwrap()).collect()
}

/// Asserts a turn's events: it ended `turn.completed` and its agent said `ok: <input>`.
fn assert_ok_turn(events: &[Value], input: &str) {
    let end = events.last().expect("events");
    assert_eq!(end["type"], "turn.completed", "{:?}", types(events));
    let want = format!("ok: {input}");
    assert_eq!(streamed(events), want, "{:?}", types(events));
    assert_eq!(completed_texts(events), [want], "{:?}", types(events));
}

/// One well-behaved turn: completes with `ok: <input>`. Returns how long it took.
async fn good_turn(s: &Server, ws: &mut Ws, room: &str, id: &str, input: &str) -> Duration {
    let t0 = Instant::now();
    let turn = s.turn(room, id, input).await;
    let events = turn_end(ws, id, &turn).await;
    assert_ok_turn(&events, input);
    t0.elapsed()
}

/// GET of a session, asserted quick: REST keeps answering whatever an agent does (typically in
/// well under 100 ms; the bound leaves room for a loaded machine).
async fn quick_get(s: &Server, room: &str, id: &str) -> Duration {
    let t0 = Instant::now();
    session(s, room, id).await;
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(3), "GET of {room}/{id} took {took:?}");
    took
}

/// (VmRSS, VmHWM) of a process in KiB.
fn memory_kib(pid: i32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{name} missing from /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Whether a process is gone (or a zombie nobody reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|r| matches!(r.trim_start().chars().next(), Some('Z' | 'X'))),
    }
}

/// Waits (polling /proc, with a deadline) until every pid is gone; returns the ones left.
async fn wait_gone(pids: &[i32], within: Duration) -> Vec<i32> {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| !gone(*p)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pid a `hang`/`nonewline` agent announces in its first delta.
fn announced_pid(events: &[Value]) -> i32 {
    let text = streamed(events);
    text.strip_prefix("hanging pid ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text:?}"))
}

/// A room reader that survives `resync` (it reconnects after the last seq it saw), for rooms that
/// get more events than a WebSocket's queue holds.
struct RoomTail {
    addr: String,
    token: String,
    room: String,
    ws: Ws,
    last: u64,
}

impl RoomTail {
    async fn open(s: &Server, room: &str) -> RoomTail {
        let mut ws = s.ws(room, Some(0)).await;
        ws.hello().await;
        RoomTail { addr: s.addr.clone(), token: s.token.clone().unwrap(), room: room.to_owned(), ws, last: 0 }
    }

    async fn reconnect(&mut self) {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let url = format!("ws://{}/v1/rooms/{}/ws?after={}", self.addr, self.room, self.last);
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert("authorization", format!("Bearer {}", self.token).parse().unwrap());
        let (stream, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req)).await.unwrap().unwrap();
        self.ws = Ws { stream };
        self.ws.hello().await;
    }

    /// The next event, in seq order with no gap.
    async fn next(&mut self) -> Value {
        loop {
            let f = self.ws.frame().await;
            match f["type"].as_str() {
                Some("event") => {
                    let e = f["event"].clone();
                    let seq = e["seq"].as_u64().unwrap();
                    assert_eq!(seq, self.last + 1, "gap or duplicate in room {}", self.room);
                    self.last = seq;
                    return e;
                }
                Some("resync" | "__close") => self.reconnect().await,
                _ => continue,
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------

impl RoomTail {
    /// Events up to the terminal event of `turn`.
    async fn turn_end(&mut self, turn: &str) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let e = self.next().await;
            let done = e["turnId"] == turn && is_terminal(&e);
            events.push(e);
            if done {
                return events;
            }
        }
    }
}

/// What a flood did.
struct Flood {
    /// The flooded turn's terminal event.
    end: Value,
    deltas: u64,
    took: Duration,
    /// The good session's turns during the flood.
    good_turns: Vec<Duration>,
    slowest_get: Duration,
    rss_before_kib: u64,
    rss_after_kib: u64,
    peak_kib: u64,
}

impl Flood {
    fn growth_mib(&self) -> u64 {
        self.peak_kib.saturating_sub(self.rss_before_kib) / 1024
    }

    fn report(&self, what: &str) {
        eprintln!(
            "{what}: {} deltas in {:?}; {} good turns meanwhile (slowest {:?}); slowest GET {:?}; \
             RSS before {} MiB, after {} MiB, peak {} MiB (growth {} MiB)",
            self.deltas,
            self.took,
            self.good_turns.len(),
            self.good_turns.iter().max().unwrap(),
            self.slowest_get,
            self.rss_before_kib / 1024,
            self.rss_after_kib / 1024,
            self.peak_kib / 1024,
            self.growth_mib(),
        );
    }
}

/// `flood <count> <size> <per>` on session `f` of room `flood` while session `g` of room `good`
/// runs turns and REST is asked about both; then a normal turn on each.
async fn flood_next_to_good(count: u64, size: usize, per: u64) -> Flood {
    let s = server(&[]).await;
    start(&s, "flood", "f").await;
    start(&s, "good", "g").await;
    let mut good = s.ws("good", None).await;
    good.hello().await;
    // Warm up both sessions so the baseline includes what any turn allocates.
    good_turn(&s, &mut good, "good", "g", "warm up").await;
    let mut tail = RoomTail::open(&s, "flood").await;
    let warm = s.turn("flood", "f", "warm up").await;
    assert_ok_turn(&tail.turn_end(&warm).await, "warm up");
    let (rss_before_kib, _) = memory_kib(s.pid());

    let t0 = Instant::now();
    let flood = s.turn("flood", "f", &format!("flood {count} {size} {per}")).await;
    let (first_tx, first_rx) = tokio::sync::oneshot::channel();
    let reader = tokio::spawn(async move {
        let mut first = Some(first_tx);
        let mut deltas = 0u64;
        loop {
            let e = tail.next().await;
            if e["type"] == "message.delta" {
                deltas += 1;
                if let Some(tx) = first.take() {
                    let _ = tx.send(());
                }
            }
            if e["turnId"] == flood.as_str() && is_terminal(&e) {
                return (e, deltas, tail);
            }
        }
    });
    first_rx.await.expect("the flood started");
    // While the flood runs: the other session's turns complete and REST answers quickly.
    let mut good_turns = Vec::new();
    let mut slowest_get = Duration::ZERO;
    let mut peak_kib = 0;
    loop {
        let n = good_turns.len();
        good_turns.push(good_turn(&s, &mut good, "good", "g", &format!("during the flood {n}")).await);
        slowest_get = slowest_get.max(quick_get(&s, "good", "g").await);
        slowest_get = slowest_get.max(quick_get(&s, "flood", "f").await);
        peak_kib = peak_kib.max(memory_kib(s.pid()).0);
        if reader.is_finished() {
            break;
        }
    }
    let (end, deltas, mut tail) = tokio::time::timeout(Duration::from_secs(45), reader)
        .await
        .expect("the flooded turn did not end in time")
        .unwrap();
    let took = t0.elapsed();
    let (rss_after_kib, hwm) = memory_kib(s.pid());
    // The flooded session goes on, and so does the other one.
    let next = s.turn("flood", "f", "after the flood").await;
    assert_ok_turn(&tail.turn_end(&next).await, "after the flood");
    good_turn(&s, &mut good, "good", "g", "after the flood").await;
    Flood { end, deltas, took, good_turns, slowest_get, rss_before_kib, rss_after_kib, peak_kib: hwm.max(peak_kib) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_deltas_stays_in_its_session_and_memory_stays_bounded() {
    // 200,000 deltas of ~100 bytes (20 MB of text, ~65 MB of events) in 200 messages: were the
    // server to hold them all, it would grow by well over the bound.
    const DELTAS: u64 = 200_000;
    let flood = flood_next_to_good(DELTAS, 100, 1_000).await;
    flood.report("flood of deltas");
    assert_eq!(flood.end["type"], "turn.completed", "{}", flood.end);
    assert_eq!(flood.deltas, DELTAS, "every delta is delivered once");
    let grew = flood.growth_mib();
    assert!(grew < 96, "the server's memory grew by {grew} MiB during the flood");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_endless_message_costs_bounded_memory() {
    // One message of 4,000 deltas of 32 KiB: 128 MiB of text.
    const DELTAS: u64 = 4_000;
    let flood = flood_next_to_good(DELTAS, 32 * 1024, DELTAS).await;
    flood.report("one endless message");
    assert_eq!(flood.end["type"], "turn.completed", "{}", flood.end);
    assert_eq!(flood.deltas, DELTAS, "every delta is delivered once");
    let grew = flood.growth_mib();
    assert!(grew < 96, "the server's memory grew by {grew} MiB for one message");
}

/// Sends a request that must be answered within `limit`; returns its status and how long it took.
async fn within(req: reqwest::RequestBuilder, limit: Duration, what: &str) -> (StatusCode, Value, Duration) {
    let t0 = Instant::now();
    let res = tokio::time::timeout(limit, req.send())
        .await
        .unwrap_or_else(|_| panic!("{what} did not answer within {limit:?}"))
        .expect(what);
    let (status, body) = decode(res).await;
    (status, body, t0.elapsed())
}

/// A `hang` turn next to a good session; then a cancel and a close, each of which must answer
/// within `limit`. The hung agent ignores turn/interrupt and the end of its stdin, so only the
/// close's force (SIGTERM after the close grace) ends it.
async fn hang_cancel_close(s: &Server, limit: Duration) {
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(s, "r", "h").await;
    start(s, "r", "g").await;
    let hung = s.turn("r", "h", "hang").await;
    let events = ws.until(|e| e["sessionId"] == "h" && e["type"] == "message.delta").await;
    let pid = announced_pid(&of(&events, "h"));
    assert!(!gone(pid), "the agent runs");
    good_turn(s, &mut ws, "r", "g", "while the other hangs").await;
    quick_get(s, "r", "h").await;

    // Nobody answers the interrupt: the cancel may be accepted or fail, but it answers in time
    // and the turn keeps running.
    let cancel = s.http().post(s.url("/v1/rooms/r/sessions/h/cancel"));
    let (status, body, took) = within(cancel, limit, "the cancel of a hung turn").await;
    eprintln!("cancel of a hung turn: {status} {body} after {took:?}");
    assert!(status == StatusCode::ACCEPTED || status.is_server_error(), "{status} {body}");
    good_turn(s, &mut ws, "r", "g", "after the cancel").await;
    assert_eq!(session(s, "r", "h").await["activeTurnId"], hung.as_str(), "the turn is still running");

    let close = s.http().delete(s.url("/v1/rooms/r/sessions/h"));
    let (status, body, took) = within(close, limit, "the close of a hung session").await;
    eprintln!("close of a hung session: {status} after {took:?}");
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let events = of(&ws.until(|e| e["sessionId"] == "h" && e["type"] == "session.completed").await, "h");
    let canceled =
        events.iter().find(|e| e["type"] == "turn.canceled").unwrap_or_else(|| panic!("{:?}", types(&events)));
    assert_eq!(canceled["turnId"], hung.as_str());
    // What the agent was streaming is closed with its text so far.
    assert_eq!(completed_texts(&events), [format!("hanging pid {pid}")], "{:?}", types(&events));
    let now = session(s, "r", "h").await;
    assert_eq!(now["status"], "completed", "{now}");
    assert_eq!(now["live"], false, "{now}");
    assert!(wait_gone(&[pid], WAIT).await.is_empty(), "the hung agent {pid} outlived its session");
    assert_eq!(codex_app_servers(&home(s)).len(), 1, "only the good session's agent is left");
    good_turn(s, &mut ws, "r", "g", "after the close").await;
}

#[tokio::test]
async fn a_hung_agent_is_forced_down_by_close() {
    // A short call timeout bounds what each unanswered turn/interrupt costs (see the ignored test):
    // the close takes 1 s (interrupt) + 500 ms (grace) + 1 s (to exit on its own) + SIGTERM.
    let s = server(&["--codex-call-timeout-secs", "1"]).await;
    hang_cancel_close(&s, Duration::from_secs(6)).await;
}

#[tokio::test]
async fn a_hung_agent_is_forced_down_by_close_with_default_timeouts() {
    // Close grace 500 ms, then 1 s to exit on its own, then SIGTERM: well under 5 s.
    let s = server(&[]).await;
    hang_cancel_close(&s, Duration::from_secs(5)).await;
}

#[tokio::test]
async fn an_agent_that_exits_mid_turn_disconnects_only_its_session() {
    let s = server(&[]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, "r", "x").await;
    start(&s, "r", "g").await;
    // Both turns at once: the exit must not disturb the other session's stream.
    let doomed = s.turn("r", "x", "exit").await;
    let fine = s.turn("r", "g", "side by side").await;
    let mut x_done = false;
    let mut g_done = false;
    let events = ws
        .until(|e| {
            x_done |= e["sessionId"] == "x"
                && e["type"] == "session.updated"
                && e["payload"]["session"]["status"] == "disconnected";
            g_done |= e["sessionId"] == "g" && e["turnId"] == fine.as_str() && is_terminal(e);
            x_done && g_done
        })
        .await;
    let g: Vec<Value> = of(&events, "g").into_iter().filter(|e| e["turnId"] == fine.as_str()).collect();
    assert_ok_turn(&g, "side by side");
    let x = of(&events, "x");
    let failed = x.iter().find(|e| e["type"] == "turn.failed").unwrap_or_else(|| panic!("{:?}", types(&x)));
    assert_eq!(failed["turnId"], doomed.as_str());
    assert_eq!(failed["payload"]["error"]["code"], "provider_exited", "{failed}");
    // The message it was streaming is closed with its text so far, before the turn fails.
    assert_eq!(completed_texts(&x), ["partial"], "{:?}", types(&x));
    let pos = |ty: &str| x.iter().position(|e| e["type"] == ty).unwrap();
    assert!(pos("message.completed") < pos("turn.failed"), "{:?}", types(&x));
    let now = session(&s, "r", "x").await;
    assert_eq!(now["status"], "disconnected", "{now}");
    assert_eq!(now["live"], false, "{now}");
    assert_eq!(now["resumable"], true, "{now}");
    assert!(now.get("activeTurnId").is_none(), "{now}");
    let last_error = now["lastError"].as_str().unwrap_or_default();
    assert!(last_error.contains("exit status 42"), "lastError: {last_error}");
    assert_eq!(session(&s, "r", "g").await["status"], "ready");
    assert_eq!(codex_app_servers(&home(&s)).len(), 1, "only the good session's agent is left");

    // The session resumes (a new agent, the same thread) and works; the other one never noticed.
    let thread = now["providerSessionId"].clone();
    let (status, body) = s.post_empty("/v1/rooms/r/sessions/x/resume").await;
    assert_eq!(status, StatusCode::OK, "{body}\n{}", s.log());
    assert_eq!(body["status"], "ready", "{body}");
    assert_eq!(body["live"], true, "{body}");
    assert_eq!(body["providerSessionId"], thread, "{body}");
    good_turn(&s, &mut ws, "r", "x", "back again").await;
    good_turn(&s, &mut ws, "r", "g", "still here").await;
}

#[tokio::test]
async fn garbage_output_is_skipped_and_the_session_goes_on() {
    let s = server(&[]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, "r", "b").await;
    start(&s, "r", "g").await;
    let skipped = metric(&s, "ensemble_rpc_lines_skipped_total{reason=\"malformed\"}").await;
    let bad = s.turn("r", "b", "garbage").await;
    let fine = s.turn("r", "g", "next to garbage").await;
    let mut b_done = false;
    let mut g_done = false;
    let events = ws
        .until(|e| {
            b_done |= e["turnId"] == bad.as_str() && is_terminal(e);
            g_done |= e["turnId"] == fine.as_str() && is_terminal(e);
            b_done && g_done
        })
        .await;
    let g: Vec<Value> = of(&events, "g").into_iter().filter(|e| e["turnId"] == fine.as_str()).collect();
    assert_ok_turn(&g, "next to garbage");
    let b: Vec<Value> = of(&events, "b").into_iter().filter(|e| e["turnId"] == bad.as_str()).collect();
    let end = b.last().unwrap();
    assert_eq!(end["type"], "turn.completed", "{:?}", types(&b));
    assert_eq!(end["turnId"], bad.as_str());
    // Nothing of another turn or thread leaked into the session, and no turn ended early.
    let all = of(&events, "b");
    assert!(!serde_json::to_string(&all).unwrap().contains("GHOST"), "{all:?}");
    assert!(all.iter().filter(|e| e["turnId"].is_string()).all(|e| e["turnId"] == bad.as_str()), "{all:?}");
    assert_eq!(b.iter().filter(|e| is_terminal(e)).count(), 1, "{:?}", types(&b));
    assert_eq!(streamed(&b), "ok: garbage survived", "{:?}", types(&b));
    assert_eq!(completed_texts(&b), ["ok: garbage survived"], "{:?}", types(&b));
    // The malformed lines were counted (17 of them; unknown ids and methods are not malformed).
    let now = metric(&s, "ensemble_rpc_lines_skipped_total{reason=\"malformed\"}").await;
    assert!(now - skipped >= 17.0, "malformed lines skipped: {skipped} -> {now}");
    let state = session(&s, "r", "b").await;
    assert_eq!(state["status"], "ready", "{state}");
    assert!(state.get("lastError").is_none(), "{state}");
    good_turn(&s, &mut ws, "r", "b", "and the next turn").await;
    good_turn(&s, &mut ws, "r", "g", "and the next turn").await;
}

#[tokio::test]
async fn an_over_long_line_is_skipped_and_the_session_goes_on() {
    let s = server(&[]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, "r", "l").await;
    start(&s, "r", "g").await;
    let too_long = "ensemble_rpc_lines_skipped_total{reason=\"too_long\"}";
    let skipped = metric(&s, too_long).await;
    // Four times the limit, as one delta the server would show if it did not skip it.
    let long = s.turn("r", "l", &format!("longline {}", 4 * MAX_LINE)).await;
    let fine = s.turn("r", "g", "next to a long line").await;
    let mut l_done = false;
    let mut g_done = false;
    let events = ws
        .until(|e| {
            l_done |= e["turnId"] == long.as_str() && is_terminal(e);
            g_done |= e["turnId"] == fine.as_str() && is_terminal(e);
            l_done && g_done
        })
        .await;
    let g: Vec<Value> = of(&events, "g").into_iter().filter(|e| e["turnId"] == fine.as_str()).collect();
    assert_ok_turn(&g, "next to a long line");
    let l: Vec<Value> = of(&events, "l").into_iter().filter(|e| e["turnId"] == long.as_str()).collect();
    assert_eq!(l.last().unwrap()["type"], "turn.completed", "{:?}", types(&l));
    // The long delta never arrived; its message was closed empty; the next one is whole.
    assert_eq!(streamed(&l), "ok: longline survived", "{:?}", types(&l));
    assert_eq!(completed_texts(&l), ["", "ok: longline survived"], "{:?}", types(&l));
    assert!(metric(&s, too_long).await > skipped, "the long line was counted as skipped");
    assert_eq!(session(&s, "r", "l").await["status"], "ready");
    good_turn(&s, &mut ws, "r", "l", "and the next turn").await;
    good_turn(&s, &mut ws, "r", "g", "and the next turn").await;
}

#[tokio::test]
async fn an_endless_line_costs_no_memory_and_close_still_works() {
    const BYTES: u64 = 256 * 1024 * 1024;
    let s = server(&["--codex-call-timeout-secs", "1"]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, "r", "n").await;
    start(&s, "r", "g").await;
    good_turn(&s, &mut ws, "r", "g", "warm up").await;
    let (rss_before, _) = memory_kib(s.pid());
    s.turn("r", "n", &format!("nonewline {BYTES}")).await;
    let events = ws.until(|e| e["sessionId"] == "n" && e["type"] == "message.delta").await;
    let pid = announced_pid(&of(&events, "n"));
    // The agent's write only completes once the server has read every byte (/proc/PID/io).
    let written = || {
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|io| io.lines().find_map(|l| l.strip_prefix("wchar:").map(|v| v.trim().parse::<u64>().unwrap())))
    };
    let deadline = Instant::now() + WAIT;
    while written().expect("/proc/PID/io of the agent") < BYTES {
        assert!(Instant::now() < deadline, "the server stopped reading the agent's output");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    good_turn(&s, &mut ws, "r", "g", "while the other writes an endless line").await;
    let (rss, hwm) = memory_kib(s.pid());
    let grew_mib = hwm.saturating_sub(rss_before) / 1024;
    eprintln!(
        "endless line: {} MiB read; RSS before {} MiB, now {} MiB, peak {} MiB",
        BYTES >> 20,
        rss_before / 1024,
        rss / 1024,
        hwm / 1024
    );
    assert!(grew_mib < 64, "the server's memory grew by {grew_mib} MiB reading one line");
    let (status, _) = s.delete("/v1/rooms/r/sessions/n").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(wait_gone(&[pid], WAIT).await.is_empty(), "the agent {pid} outlived its session");
    good_turn(&s, &mut ws, "r", "g", "after the close").await;
}

#[tokio::test]
async fn closing_a_session_kills_the_agents_grandchildren() {
    let s = server(&[]).await;
    let mut ws = s.ws("r", None).await;
    ws.hello().await;
    start(&s, "r", "p").await;
    start(&s, "r", "g").await;
    let pidfile = s.dir.join("grandchildren.pids");
    let turn = s.turn("r", "p", &format!("spawn {}", pidfile.display())).await;
    let events = turn_end(&mut ws, "p", &turn).await;
    assert_eq!(events.last().unwrap()["type"], "turn.completed", "{:?}", types(&events));
    let pids: Vec<i32> =
        std::fs::read_to_string(&pidfile).unwrap().split_whitespace().map(|p| p.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.iter().all(|p| !gone(*p)), "the grandchildren run: {pids:?}");
    let (status, _) = s.delete("/v1/rooms/r/sessions/p").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let left = wait_gone(&pids, WAIT).await;
    for p in &left {
        // Do not leave them behind for the next test run.
        kill_pid(*p, 9);
    }
    assert!(left.is_empty(), "grandchildren outlived the session: {left:?} of {pids:?}");
    good_turn(&s, &mut ws, "r", "g", "unaffected").await;
}
