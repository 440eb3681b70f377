//! Chaos on the room WebSocket: many clients connect, read a little, drop the connection and
//! reconnect with `after=` while several sessions stream; every client ends with exactly the room's
//! durable log, event for event.
//!
//! - One room, [`SESSIONS`] scripted sessions, each running [`TURNS`] long streaming turns one after
//!   the other (all sessions at once). A driver per session waits for each `turn.completed` on its
//!   own WebSocket before it submits the next turn.
//! - [`CLIENTS`] client tasks, started before the first session. Each one repeatedly connects, reads
//!   a random number of events (0: it drops the connection before even reading `hello`), then drops
//!   the connection: mostly abruptly (the TCP connection just goes away), sometimes with a close
//!   frame; and reconnects with `after=<the last seq it has>`. The first connection uses `after=0`
//!   too: no `after` means "live only, from the head", which would skip the history. Every fourth
//!   client does that once on purpose, at a random connection, as a reloaded page would: it forgets
//!   what it has, connects without `after`, takes the history up to `hello.headSeq` from REST, and
//!   the live stream must continue at exactly `headSeq + 1`.
//! - Every received event must be exactly the next seq. A `resync` frame (not expected with the
//!   default `--ws-queue`) is counted and answered like a drop: reconnect with `after=`.
//! - When all turns have completed, the room's head (`headSeq` from REST) is published; a client
//!   stops once it has every event up to it. Then each client's events must equal the REST log
//!   1..=head (whole events, so the `eventId`s too).
//!
//! Decisions are drawn from a seeded xorshift generator, one stream per client: the seed is printed
//! and `CHAOS_SEED=<seed>` replays the same decisions (the interleaving with the server still
//! varies). Nothing waits by sleeping: every wait is for a frame, a REST answer or a task.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::watch;

use crate::common::*;

const ROOM: &str = "chaos";
const SESSIONS: usize = 4;
const TURNS: usize = 3;
/// One long streaming turn: 60 `message.delta`s, 5 ms apart.
const TURN: &str = "/slow 5\n/chunks 60";
const CLIENTS: usize = 24;
/// Most events one connection reads before it is dropped.
const MAX_READ: u64 = 60;
/// A client that needs more connections than this is not making progress.
const MAX_CONNECTIONS_PER_CLIENT: usize = 1000;
/// The whole test's budget.
const BUDGET: Duration = Duration::from_secs(30);

/// xorshift64* (no dependency; reproducible from the seed).
struct Rng(u64);

impl Rng {
    /// A generator for stream `stream` of `seed` (splitmix64, so that neighbouring streams differ).
    fn new(seed: u64, stream: u64) -> Rng {
        let mut z = seed.wrapping_add(stream.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform enough in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    match std::env::var("CHAOS_SEED") {
        Ok(s) => s.trim().parse().expect("CHAOS_SEED must be a u64"),
        Err(_) => SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos() as u64,
    }
}

fn seq(e: &Value) -> u64 {
    e["seq"].as_u64().unwrap_or_else(|| panic!("an event without seq: {e}"))
}

#[derive(Debug, Default)]
struct Stats {
    connections: usize,
    /// Dropped before `hello` was read.
    dropped_before_hello: usize,
    /// Closed with a close frame rather than just dropped.
    closed_with_frame: usize,
    resyncs: usize,
    /// Events that came over the WebSocket (the rest: the REST history a reload takes).
    ws_events: usize,
    backfilled: usize,
}

/// One client: connect, read a little, drop, reconnect with `after=`, until it has the whole room.
async fn client(
    s: Arc<Server>,
    id: usize,
    seed: u64,
    mut rng: Rng,
    mut head: watch::Receiver<Option<u64>>,
) -> (Vec<Value>, Stats) {
    let mut got: Vec<Value> = Vec::new();
    let mut stats = Stats::default();
    // Every fourth client reloads once, at a random connection.
    let mut reload_at = (id % 4 == 3).then(|| rng.below(16) as usize);
    let reached =
        |got: &Vec<Value>, head: &watch::Receiver<Option<u64>>| head.borrow().is_some_and(|h| got.len() as u64 >= h);
    while !reached(&got, &head) {
        assert!(
            stats.connections < MAX_CONNECTIONS_PER_CLIENT,
            "client {id} (seed {seed}): no progress after {} connections, at seq {}",
            stats.connections,
            got.len()
        );
        let live_only = reload_at.is_some_and(|k| stats.connections >= k);
        if live_only {
            got.clear();
        }
        let last = got.len() as u64;
        let mut ws = s.ws(ROOM, if live_only { None } else { Some(last) }).await;
        stats.connections += 1;
        let budget = rng.below(MAX_READ + 1);
        if budget == 0 {
            stats.dropped_before_hello += 1;
            continue;
        }
        let hello = ws.hello().await;
        let hello_head = hello["headSeq"].as_u64().expect("hello.headSeq");
        if live_only {
            reload_at = None;
            // Live only: the stream starts after hello's head; what came before is REST's.
            for e in rest_events(&s, 0, hello_head).await {
                assert_eq!(seq(&e), got.len() as u64 + 1, "client {id} (seed {seed}): REST backfill");
                got.push(e);
                stats.backfilled += 1;
            }
            assert_eq!(got.len() as u64, hello_head, "client {id} (seed {seed}): the REST log up to hello's head");
        } else {
            assert!(hello_head >= last, "client {id} (seed {seed}): hello.headSeq {hello_head} < after={last}");
        }
        let mut read = 0;
        while read < budget && !reached(&got, &head) {
            let frame = tokio::select! {
                frame = ws.frame() => frame,
                // The head became known: check whether this client is done.
                _ = head.changed() => continue,
            };
            match frame["type"].as_str() {
                Some("event") => {
                    let e = frame["event"].clone();
                    let expected = got.len() as u64 + 1;
                    assert_eq!(
                        seq(&e),
                        expected,
                        "client {id} (seed {seed}), connection {} (after={last}, live only: {live_only}): \
                         expected seq {expected}, got {e}",
                        stats.connections
                    );
                    got.push(e);
                    read += 1;
                    stats.ws_events += 1;
                }
                Some("resync") => {
                    stats.resyncs += 1;
                    break;
                }
                _ => panic!("client {id} (seed {seed}): unexpected frame {frame}"),
            }
        }
        if rng.below(4) == 0 {
            stats.closed_with_frame += 1;
            let _ = ws.stream.close(None).await;
        }
        drop(ws);
    }
    (got, stats)
}

/// The room's events with `after < seq <= upto`, over REST.
async fn rest_events(s: &Server, mut after: u64, upto: u64) -> Vec<Value> {
    let mut out = Vec::new();
    while after < upto {
        let limit = (upto - after).min(1000);
        let (status, page) = s.get(&format!("/v1/rooms/{ROOM}/events?after={after}&limit={limit}")).await;
        assert!(status.is_success(), "{page}");
        let data = page["data"].as_array().expect("data");
        assert!(!data.is_empty(), "the log ends before seq {upto}: {page}");
        after = seq(data.last().expect("an event"));
        out.extend(data.iter().cloned());
    }
    out
}

/// Runs one session's turns one after another, each to `turn.completed`.
async fn drive(s: Arc<Server>, id: String) {
    let mut ws = s.ws(ROOM, None).await;
    ws.hello().await;
    for _ in 0..TURNS {
        let turn = s.turn(ROOM, &id, TURN).await;
        let end = ws
            .until(|e| {
                e["sessionId"] == id.as_str()
                    && e["turnId"] == turn.as_str()
                    && matches!(e["type"].as_str(), Some("turn.completed" | "turn.failed" | "turn.canceled"))
            })
            .await;
        let last = end.last().expect("the turn's end");
        assert_eq!(last["type"], "turn.completed", "{last}");
    }
}

async fn head_seq(s: &Server) -> u64 {
    let (status, page) = s.get(&format!("/v1/rooms/{ROOM}/events?after=0&limit=1")).await;
    assert!(status.is_success(), "{page}");
    page["headSeq"].as_u64().expect("headSeq")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_clients_all_end_with_the_exact_full_sequence() {
    let seed = seed();
    println!("chaos seed: {seed} (CHAOS_SEED={seed} replays its decisions)");
    tokio::time::timeout(BUDGET, chaos(seed))
        .await
        .unwrap_or_else(|_| panic!("the chaos test (seed {seed}) did not finish within {BUDGET:?}"));
}

async fn chaos(seed: u64) {
    let started = Instant::now();
    // Every client reconnects with the harness's one token, many at once.
    let s = Arc::new(Server::start(&["--max-ws-per-token", "1024"]).await);
    let (head_tx, head_rx) = watch::channel(None);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|id| tokio::spawn(client(s.clone(), id, seed, Rng::new(seed, id as u64), head_rx.clone())))
        .collect();

    let mut drivers = Vec::new();
    for i in 0..SESSIONS {
        let id = format!("s{i}");
        s.session(ROOM, &id).await;
        drivers.push(tokio::spawn(drive(s.clone(), id)));
    }
    for d in drivers {
        d.await.expect("a session driver failed");
    }
    let head = head_seq(&s).await;
    head_tx.send(Some(head)).expect("clients listen");

    let mut results = Vec::new();
    for (id, c) in clients.into_iter().enumerate() {
        let r = c.await.unwrap_or_else(|e| panic!("client {id} (seed {seed}) failed: {e}"));
        results.push(r);
    }
    let streaming = started.elapsed();

    let log = s.events(ROOM).await;
    assert_eq!(head_seq(&s).await, head, "nothing happened in the room after its turns completed");
    assert_eq!(log.len() as u64, head, "the REST log has every seq 1..=head");
    for (i, e) in log.iter().enumerate() {
        assert_eq!(seq(e), i as u64 + 1, "the REST log is gap-free");
    }
    for (id, (got, _)) in results.iter().enumerate() {
        assert_eq!(got.len(), log.len(), "client {id} (seed {seed}): every event up to the head");
        for (mine, logged) in got.iter().zip(&log) {
            assert_eq!(
                mine,
                logged,
                "client {id} (seed {seed}): event {} differs from the log (eventId {} vs {})",
                seq(logged),
                mine["eventId"],
                logged["eventId"]
            );
        }
    }

    let stats: Vec<&Stats> = results.iter().map(|(_, st)| st).collect();
    let connections: Vec<usize> = stats.iter().map(|st| st.connections).collect();
    let total: usize = connections.iter().sum();
    let sum = |f: fn(&Stats) -> usize| stats.iter().map(|st| f(st)).sum::<usize>();
    let resyncs = sum(|st| st.resyncs);
    println!(
        "chaos: seed {seed}; {head} events in {SESSIONS} sessions x {TURNS} turns; {CLIENTS} clients, each with all \
         {head} events; {total} connections ({} reconnects; per client {}..={}), {} dropped before hello, {} closed \
         with a close frame, {} events over WebSockets, {} taken from REST by reloads; {resyncs} \
         resyncs; {:.2?}",
        total - CLIENTS,
        connections.iter().min().unwrap(),
        connections.iter().max().unwrap(),
        sum(|st| st.dropped_before_hello),
        sum(|st| st.closed_with_frame),
        sum(|st| st.ws_events),
        sum(|st| st.backfilled),
        streaming,
    );
}
