//! "Open a session" as a person meets it, in rooms of very different ages: the console in
//! headless Chromium opened at a room and one of its sessions, timed until the session's last turn
//! is on screen, with the bytes the server sent for it; and the REST page a client reads a
//! session's tail with (`GET …/sessions/{id}/events?before=`). The baseline is the smallest room:
//! opening a session must cost what is on the screen, not the room's history.
//!
//! `cargo bench -p ensemble-server --bench open_session [-- OPTIONS]`
//!
//! Per size: a store written directly (the runtime's `Store`, group-committed) with one room of
//! that many events — four sessions taking turns (`turn.started`, two `message.delta`s,
//! `message.completed`, `turn.completed`) — then `ensemble serve` on it with retention off; the
//! REST tail page (100 events) and a page from the middle of the room, 50 warm-up and 200 timed
//! requests each (medians); then `web-tests/bench/open-session.mjs` (the browser tests' Chromium and
//! Playwright), `--runs` opens in fresh contexts (medians). Needs node, web-tests/node_modules and
//! Chromium (`CHROMIUM_PATH`, default /usr/bin/chromium); without them the browser rows are skipped.
//!
//! Options (also as `OPEN_SESSION_*` environment variables):
//!   --sizes A,B,C  room sizes in events (default 1000,100000,1000000)
//!   --runs K       browser opens per size (default 3)
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

#[path = "../common/server.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ensemble_core::event::{
    EventBody, NewEvent, SessionStartedPayload, TextCompletedPayload, TextDeltaPayload, TurnCompletedPayload,
    TurnOrigin, TurnStartedPayload,
};
use ensemble_core::model::{InputItem, Scope, Session, SessionStatus};
use ensemble_runtime::session::{Phase, SessionRecord};
use ensemble_runtime::store::{AppendBatch, CommitListener, CommittedEvent, RecordRow, Store, StoreConfig, WriteOp};

use crate::common::{Server, TOKEN, arg, median, prepare};

const ROOM: &str = "big";
const SESSIONS: usize = 4;
const EVENTS_PER_TURN: usize = 5;

/// An append's acknowledgement, not a future of its own (awaited through `.0`).
struct Ack(tokio::sync::oneshot::Receiver<Result<u64, ensemble_runtime::store::StoreError>>);

struct Quiet;
impl CommitListener for Quiet {
    fn committed(&self, _: &str, _: &[CommittedEvent]) {}
}

fn event(session: &str, turn: Option<&str>, body: EventBody) -> NewEvent {
    NewEvent {
        room_id: ROOM.into(),
        event_id: String::new(),
        session_id: session.into(),
        scope: Scope::Canonical,
        turn_id: turn.map(str::to_owned),
        occurred_at_ms: 1_700_000_000_000,
        actor: None,
        body,
    }
}

fn turn_events(t: usize) -> (String, Vec<NewEvent>) {
    let s = format!("s{}", t % SESSIONS);
    let id = format!("t{t}");
    let reply = format!("reply {t} of {s}");
    let turn = Some(id.as_str());
    let item = || "m1".to_owned();
    let events = vec![
        event(
            &s,
            turn,
            EventBody::TurnStarted(TurnStartedPayload {
                turn_id: id.clone(),
                origin: TurnOrigin::User,
                goal_operation_id: None,
                goal_revision: None,
                goal_repair_epoch: None,
                input: vec![InputItem::Text { text: format!("question {t}") }],
                client_submit_id: None,
            }),
        ),
        event(&s, turn, EventBody::MessageDelta(TextDeltaPayload { item_id: item(), text: "reply ".into() })),
        event(&s, turn, EventBody::MessageDelta(TextDeltaPayload { item_id: item(), text: reply[6..].to_owned() })),
        event(&s, turn, EventBody::MessageCompleted(TextCompletedPayload { item_id: item(), text: reply.clone() })),
        event(&s, turn, EventBody::TurnCompleted(TurnCompletedPayload { turn_id: id.clone() })),
    ];
    (reply, events)
}

/// Writes a room of about `events` events into `data/ensemble.sqlite3`; returns the last turn's
/// session and reply.
async fn write_room(dir: &Path, events: usize) -> (String, String) {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mut cfg = StoreConfig::new(data.join("ensemble.sqlite3"));
    cfg.retention.max_events_per_room = None;
    let store = Store::connect(cfg, Arc::new(Quiet)).await.unwrap();
    let mut acks = Vec::new();
    // Sends one append and hands back its acknowledgement, awaited later (many in flight).
    async fn send(store: &Store, events: Vec<NewEvent>, records: Vec<RecordRow>) -> Ack {
        let (ack, rx) = tokio::sync::oneshot::channel();
        let batch = AppendBatch { room_id: ROOM.into(), events, records, outbound: vec![], ack: Some(ack) };
        store.send(WriteOp::Append(batch)).await.unwrap();
        Ack(rx)
    }
    for i in 0..SESSIONS {
        let id = format!("s{i}");
        let mut session = Session::new_canonical(ROOM, &id, "scripted", "/", 1_700_000_000_000);
        session.status = SessionStatus::Disconnected;
        session.title = format!("session {i}");
        let rec = SessionRecord::new(session, Phase::Disconnected);
        let started = event(
            &id,
            None,
            EventBody::SessionStarted(SessionStartedPayload { session: rec.session.clone().into(), ephemeral: false }),
        );
        acks.push(send(&store, vec![started], vec![RecordRow::of(&rec).unwrap()]).await);
    }
    let turns = events.saturating_sub(SESSIONS) / EVENTS_PER_TURN;
    let mut last = (String::new(), String::new());
    let mut batch = Vec::new();
    for t in 0..turns.max(1) {
        let (reply, evs) = turn_events(t);
        last = (format!("s{}", t % SESSIONS), reply);
        batch.extend(evs);
        if batch.len() >= 500 || t + 1 == turns.max(1) {
            acks.push(send(&store, std::mem::take(&mut batch), vec![]).await);
            if acks.len() > 64 {
                for rx in acks.drain(..) {
                    rx.0.await.unwrap().unwrap();
                }
            }
        }
    }
    for rx in acks {
        rx.0.await.unwrap().unwrap();
    }
    store.close().await;
    last
}

/// The median time of `n` GETs of `url` (after 50 unmeasured), and the size of one answer.
async fn time_get(server: &Server, url: &str, n: usize) -> (Duration, usize) {
    let mut bytes = 0;
    for _ in 0..50 {
        let r = server.http.get(url).send().await.unwrap();
        assert_eq!(r.status(), 200, "{url}");
        bytes = r.bytes().await.unwrap().len();
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        let r = server.http.get(url).send().await.unwrap();
        r.bytes().await.unwrap();
        times.push(t0.elapsed().as_secs_f64());
    }
    (Duration::from_secs_f64(median(times)), bytes)
}

/// The browser's opens: medians of (ms, bytes), or `None` without node, Playwright or Chromium.
fn browser_opens(base: &str, session: &str, last: &str, runs: usize) -> Option<(f64, f64)> {
    let web = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../web-tests");
    let chromium = std::env::var("CHROMIUM_PATH").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !web.join("node_modules/playwright-core").exists() && !web.join("node_modules/playwright").exists()
        || !Path::new(&chromium).exists()
    {
        return None;
    }
    let out = std::process::Command::new("node")
        .current_dir(&web)
        .args(["bench/open-session.mjs", base, TOKEN, ROOM, session, last, &runs.to_string()])
        .output()
        .ok()?;
    assert!(out.status.success(), "open-session.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let (mut ms, mut bytes) = (Vec::new(), Vec::new());
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        ms.push(v["ms"].as_f64().unwrap());
        bytes.push(v["bytes"].as_f64().unwrap());
    }
    Some((median(ms), median(bytes)))
}

struct Row {
    events: usize,
    tail: Duration,
    middle: Duration,
    tail_bytes: usize,
    open: Option<(f64, f64)>,
}

fn target(what: &str, ratio: f64, limit: f64) {
    let met = if ratio <= limit { "MET" } else { "MISSED" };
    println!("target: {what} within {limit}x of the smallest room: {met} ({ratio:.2}x)");
}

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = arg("--sizes", "OPEN_SESSION_SIZES", "1000,100000,1000000")
        .split(',')
        .map(|s| s.trim().parse().expect("--sizes: numbers"))
        .collect();
    let runs: usize = arg("--runs", "OPEN_SESSION_RUNS", "3").parse().expect("--runs");
    let mut rows = Vec::new();
    for &size in &sizes {
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path());
        let t0 = Instant::now();
        let (session, last) = write_room(dir.path(), size).await;
        eprintln!("open_session: a room of {size} events written in {:.1} s", t0.elapsed().as_secs_f64());
        let server = Server::spawn(dir.path(), &["--retention-events".into(), "0".into()]).await;
        server.ready().await;
        let head: u64 = {
            let r = server.http.get(format!("{}/v1/rooms", server.base)).send().await.unwrap();
            let v: serde_json::Value = r.json().await.unwrap();
            v["data"][0]["headSeq"].as_u64().unwrap()
        };
        let base = format!("{}/v1/rooms/{ROOM}/sessions/{session}/events", server.base);
        let (tail, tail_bytes) = time_get(&server, &format!("{base}?before={}&limit=100", head + 1), 200).await;
        let (middle, _) = time_get(&server, &format!("{base}?before={}&limit=100", head / 2), 200).await;
        let open = browser_opens(&server.base, &session, &last, runs);
        server.stop().await;
        rows.push(Row { events: size, tail, middle, tail_bytes, open });
    }
    println!("### Open a session ({runs} browser opens per room, medians)");
    println!();
    println!(
        "| room events | REST tail page (100) | REST page mid-room | tail page bytes | last turn on screen | bytes sent for the open |"
    );
    println!("| --: | --: | --: | --: | --: | --: |");
    for r in &rows {
        let (open, bytes) = match r.open {
            Some((ms, b)) => (format!("{ms:.0} ms"), format!("{:.0} KB", b / 1000.0)),
            None => ("skipped".into(), "skipped".into()),
        };
        println!(
            "| {} | {:.2} ms | {:.2} ms | {} | {open} | {bytes} |",
            r.events,
            r.tail.as_secs_f64() * 1e3,
            r.middle.as_secs_f64() * 1e3,
            r.tail_bytes
        );
    }
    if let (Some(small), Some(big)) = (rows.first(), rows.last())
        && rows.len() > 1
    {
        println!();
        let what = |w: &str| format!("{w} at {} events", big.events);
        target(&what("REST tail page"), big.tail.as_secs_f64() / small.tail.as_secs_f64(), 2.0);
        if let (Some((ms_s, b_s)), Some((ms_b, b_b))) = (small.open, big.open) {
            target(&what("open a session, last turn on screen"), ms_b / ms_s, 1.5);
            target(&what("open a session, bytes sent"), b_b / b_s, 1.5);
        }
    }
}
