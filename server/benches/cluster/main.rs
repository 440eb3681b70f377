//! Cross-host room fan-out as a user feels it: two real `ensemble` hosts on one real PostgreSQL,
//! joined by a real nats-server, a scripted session streaming on host A, and room WebSocket
//! subscribers on host B (every frame crosses NATS) side by side with the same subscribers on A
//! itself (no hop).
//!
//! `cargo bench -p ensemble-server --bench cluster [-- OPTIONS]`
//!
//! PostgreSQL and nats-server come from `ensemble-test-engines` (on free loopback ports, in temp
//! dirs, started once per process; each run gets a fresh database); when either is missing the bench
//! says it is skipped and exits 0. A run spawns hosts `a` and `b` (`ensemble serve --database-url …
//! --nats-url … --nats-credentials … --cluster-secret-file … --host-id a|b --lease-secs 15`, each
//! with its own data dir and token file, sharing the NATS credentials and a cluster secret, on
//! 127.0.0.1:0; `--scripted-chunk-delay-ms 0`, WebSocket limits raised to fit, the rest as
//! `ensemble serve`'s defaults), and stops both with SIGTERM at its end.
//!
//! **Fan-out throughput.** A room, its session `pub` started on A, `--subs` subscribers connected
//! (each read to its `hello`) either to B (**cross-host**) or to A (**same host**: the same cluster,
//! no hop). Then turns `/chunks C` are submitted to A one after the other, each once subscriber 0 saw
//! the previous one's `turn.completed`, until `--events` `message.delta`s (a `/chunks C` turn streams
//! 2·C deltas: `chunk ` and `N ` are one delta each). Time: from the first submit to the last
//! subscriber's last delta; rate = deltas × subscribers / time (other events are delivered too, but
//! not counted). Every subscriber checks it got every event in `seq` order and the same number of
//! deltas; one that falls behind the room queue (`resync`) reconnects with `after=` (counted).
//! The two sides alternate which goes first from run to run. On the same host, A both commits and
//! delivers; across hosts, B's delivery work runs in another process: with a spare core, the
//! cross-host side may well be the faster one.
//!
//! **Latency.** A room with one subscriber on A and one on B; `--pace-sessions` sessions on A each
//! run one turn `/slow 1` + `/chunks N` at once, lasting about `--latency-secs`. `/slow 1` sleeps
//! 1 ms before each delta, which tokio's timer rounds up to ~2 ms: ~500 deltas/s a session, so two
//! sessions pace the room near 1,000 events/s (the table shows the rate reached). For each delta
//! (after the first 500, a warm-up), B's receive instant minus A's receive instant of the same
//! `seq` (both clients in this process, one monotonic clock): the latency the cross-host hop adds
//! (A → PostgreSQL commit → NATS → B → socket, against A → socket). For reference, publish →
//! receive at A and at B from the event's `occurredAtMs` (whole milliseconds: up to 1 ms high).
//!
//! Medians of `--runs` runs. The table goes to stdout, progress to stderr.
//!
//! Options (also as `CLUSTER_*` environment variables):
//!   --runs K          runs (default 3)
//!   --subs S          subscribers of the throughput scenario (default 100)
//!   --events M        deltas per throughput side (default 30000)
//!   --chunks C        `/chunks C` per throughput turn (default 2500: 5,000 deltas a turn)
//!   --latency-secs T  length of the paced turns (default 5; 0: skip the latency scenario)
//!   --pace-sessions P sessions streaming at once in the paced scenario (default 2)
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

#[path = "../common/server.rs"]
mod common;
mod subscriber;

use std::time::{Duration, Instant};

use ensemble_test_engines::{Nats, Postgres};
use futures::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::common::{Server, arg, median, prepare};
use crate::subscriber::{Seen, Subscriber};

/// Deltas of the paced turn left out of the latency (the first ones: connections and caches warm).
const WARMUP: usize = 500;

struct Opts {
    runs: usize,
    subs: usize,
    events: u64,
    chunks: u64,
    latency_secs: u64,
    pace_sessions: usize,
}

/// One throughput side of one run.
struct Throughput {
    /// Deliveries (deltas × subscribers) per second.
    rate: f64,
    deltas: u64,
    secs: f64,
    resyncs: u32,
}

/// The latency scenario of one run, milliseconds.
struct Latency {
    /// B's receive minus A's receive of the same seq.
    added_p50: f64,
    added_p99: f64,
    /// Publish → receive, from `occurredAtMs`.
    a_p50: f64,
    a_p99: f64,
    b_p99: f64,
    /// Deltas per second the paced turn produced (as received at A).
    rate: f64,
    samples: usize,
}

struct Run {
    cross: Throughput,
    same: Throughput,
    latency: Option<Latency>,
}

/// Where a host finds the cluster: the database, NATS, and the files that authenticate it.
struct Cluster<'a> {
    db_url: &'a str,
    nats_url: &'a str,
    credentials: &'a str,
    secret: &'a str,
}

fn flags(c: &Cluster<'_>, host: &str, subs: usize) -> Vec<String> {
    let ws = (subs + 16).to_string();
    let ws_total = (2 * subs + 64).to_string();
    [
        "--database-url",
        c.db_url,
        "--nats-url",
        c.nats_url,
        "--nats-credentials",
        c.credentials,
        "--cluster-secret-file",
        c.secret,
        "--host-id",
        host,
        "--lease-secs",
        "15",
        "--scripted-chunk-delay-ms",
        "0",
        "--max-ws-per-room",
        &ws,
        "--max-ws-per-token",
        &ws,
        "--max-ws-connections",
        &ws_total,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Starts the scripted session `id` in `room` on `host`.
async fn start_session(host: &Server, room: &str, id: &str) {
    let r = host
        .http
        .post(format!("{}/v1/rooms/{room}/sessions", host.base))
        .json(&json!({"sessionId": id}))
        .send()
        .await
        .unwrap();
    let status = r.status();
    assert_eq!(status, 201, "{}", r.text().await.unwrap_or_default());
}

/// Submits a turn to session `id` (retrying while its previous one is still winding down: 409).
async fn submit(host: &Server, room: &str, id: &str, text: &str) {
    let url = format!("{}/v1/rooms/{room}/sessions/{id}/turns", host.base);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = host.http.post(&url).json(&json!({"input": [{"type": "text", "text": text}]})).send().await.unwrap();
        let status = r.status();
        if status == 202 {
            return;
        }
        let body: Value = r.json().await.unwrap_or_default();
        assert!(status == 409 && Instant::now() < deadline, "submit: {status} {body}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Opens `n` subscribers of `room` on `host`, all at once.
async fn subscribers(host: &Server, room: &str, n: usize) -> Vec<Subscriber> {
    join_all((0..n).map(|_| Subscriber::open(&host.addr, room))).await
}

/// The fan-out throughput of one side: `pub` on `publisher`, the subscribers on `subscribed`.
async fn throughput(publisher: &Server, subscribed: &Server, room: &str, o: &Opts) -> Throughput {
    start_session(publisher, room, "pub").await;
    let subs = subscribers(subscribed, room, o.subs).await;
    // Let the start's trailing events (the scripted agent's `commands.updated`, …) settle.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let per_turn = 2 * o.chunks;
    let turns = o.events.div_ceil(per_turn).max(1);
    let (tx, mut completed) = mpsc::unbounded_channel();
    let tasks: Vec<_> = subs
        .into_iter()
        .enumerate()
        .map(|(i, s)| tokio::spawn(s.run(turns, false, (i == 0).then(|| tx.clone()))))
        .collect();
    drop(tx);
    let text = format!("/chunks {}", o.chunks);
    let t0 = Instant::now();
    for _ in 0..turns {
        submit(publisher, room, "pub", &text).await;
        completed.recv().await.expect("subscriber 0 saw the turn complete");
    }
    let seen: Vec<Seen> = join_all(tasks).await.into_iter().map(|r| r.unwrap()).collect();
    let deltas = seen[0].deltas;
    assert!(seen.iter().all(|s| s.deltas == deltas), "every subscriber gets every delta");
    assert_eq!(deltas, turns * per_turn, "deltas of {turns} turns `{text}`");
    let end = seen.iter().filter_map(|s| s.last_delta).max().expect("deltas");
    let secs = (end - t0).as_secs_f64();
    Throughput {
        rate: (deltas * o.subs as u64) as f64 / secs,
        deltas,
        secs,
        resyncs: seen.iter().map(|s| s.resyncs).sum(),
    }
}

/// `q` (0..=1) of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// The paced scenario: `--pace-sessions` sessions on A streaming at once, one subscriber on A and
/// one on B.
async fn latency(a: &Server, b: &Server, o: &Opts) -> Latency {
    let room = "lat";
    let ids: Vec<String> = (0..o.pace_sessions).map(|i| format!("pace{i}")).collect();
    for id in &ids {
        start_session(a, room, id).await;
    }
    let (on_a, on_b) = (Subscriber::open(&a.addr, room).await, Subscriber::open(&b.addr, room).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let turns = o.pace_sessions as u64;
    let (ta, tb) = (tokio::spawn(on_a.run(turns, true, None)), tokio::spawn(on_b.run(turns, true, None)));
    // Per session ~2 ms per delta (tokio's timer rounds `/slow 1`'s 1 ms sleep up), 2 deltas a chunk.
    let chunks = (o.latency_secs * 250).max(WARMUP as u64);
    let text = format!("/slow 1\n/chunks {chunks}");
    join_all(ids.iter().map(|id| submit(a, room, id, &text))).await;
    let (sa, sb) = (ta.await.unwrap(), tb.await.unwrap());
    assert_eq!(sa.deltas, sb.deltas, "both hosts deliver every delta");
    let (da, db) = (&sa.samples[WARMUP..], &sb.samples[WARMUP..]);
    let mut added = Vec::with_capacity(da.len());
    for (x, y) in da.iter().zip(db) {
        assert_eq!(x.seq, y.seq);
        // Signed: B may, rarely, read a frame before A's client does.
        let ms = if y.at >= x.at { (y.at - x.at).as_secs_f64() } else { -(x.at - y.at).as_secs_f64() } * 1e3;
        added.push(ms);
    }
    let added = sorted(added);
    let lag_a = sorted(da.iter().map(|d| d.lag_ms).collect());
    let lag_b = sorted(db.iter().map(|d| d.lag_ms).collect());
    let span = (da.last().unwrap().at - da[0].at).as_secs_f64();
    Latency {
        added_p50: quantile(&added, 0.5),
        added_p99: quantile(&added, 0.99),
        a_p50: quantile(&lag_a, 0.5),
        a_p99: quantile(&lag_a, 0.99),
        b_p99: quantile(&lag_b, 0.99),
        rate: (da.len() - 1) as f64 / span,
        samples: da.len(),
    }
}

async fn run(index: usize, db_url: &str, nats: &Nats, o: &Opts) -> Run {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = tempfile::Builder::new().prefix("ensemble-bench-cluster-").tempdir_in("/var/tmp").unwrap();
    let (dir_a, dir_b) = (tmp.path().join("a"), tmp.path().join("b"));
    prepare(&dir_a);
    prepare(&dir_b);
    let secret = tmp.path().join("cluster-secret");
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&secret).unwrap();
    f.write_all(b"bench-cluster-secret-0123456789abcdef0123456789\n").unwrap();
    let (nats_url, credentials) = (nats.url(), nats.credentials_file());
    let cluster = Cluster {
        db_url,
        nats_url: &nats_url,
        credentials: credentials.to_str().unwrap(),
        secret: secret.to_str().unwrap(),
    };
    let a = Server::spawn(&dir_a, &flags(&cluster, "a", o.subs)).await;
    a.ready().await;
    let b = Server::spawn(&dir_b, &flags(&cluster, "b", o.subs)).await;
    b.ready().await;
    let r = index + 1;
    let (mut cross, mut same) = (None, None);
    let cross_first = index.is_multiple_of(2);
    for cross_now in [cross_first, !cross_first] {
        if cross_now {
            let t = throughput(&a, &b, "fanout-cross", o).await;
            eprintln!(
                "cluster: run {r}, cross-host fan-out: {} subscribers on B, {} deltas in {:.2} s: {:.0} deliveries/s ({} resyncs)",
                o.subs, t.deltas, t.secs, t.rate, t.resyncs
            );
            cross = Some(t);
        } else {
            let t = throughput(&a, &a, "fanout-same", o).await;
            eprintln!(
                "cluster: run {r}, same-host fan-out: {} subscribers on A, {} deltas in {:.2} s: {:.0} deliveries/s ({} resyncs)",
                o.subs, t.deltas, t.secs, t.rate, t.resyncs
            );
            same = Some(t);
        }
    }
    let latency = if o.latency_secs > 0 {
        let l = latency(&a, &b, o).await;
        eprintln!(
            "cluster: run {r}, latency: {} deltas at {:.0}/s; B − A p50 {:.3} ms, p99 {:.3} ms; publish → receive p50/p99 at A {:.2}/{:.2} ms, p99 at B {:.2} ms",
            l.samples, l.rate, l.added_p50, l.added_p99, l.a_p50, l.a_p99, l.b_p99
        );
        Some(l)
    } else {
        None
    };
    b.stop().await;
    a.stop().await;
    Run { cross: cross.unwrap(), same: same.unwrap(), latency }
}

fn k(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 10_000.0 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// `12345` → `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn main() {
    let num = |name: &str, env: &str, default: &str| -> u64 {
        arg(name, env, default).parse().unwrap_or_else(|_| panic!("{name}: a number"))
    };
    let o = Opts {
        runs: (num("--runs", "CLUSTER_RUNS", "3") as usize).max(1),
        subs: (num("--subs", "CLUSTER_SUBS", "100") as usize).max(1),
        events: num("--events", "CLUSTER_EVENTS", "30000").max(1),
        chunks: num("--chunks", "CLUSTER_CHUNKS", "2500").max(1),
        latency_secs: num("--latency-secs", "CLUSTER_LATENCY_SECS", "5"),
        pace_sessions: (num("--pace-sessions", "CLUSTER_PACE_SESSIONS", "2") as usize).max(1),
    };
    if !Postgres::available() || !Nats::available() {
        println!(
            "cluster bench skipped: needs PostgreSQL's server binaries (initdb, postgres) and nats-server \
             (PostgreSQL available: {}, nats-server available: {})",
            Postgres::available(),
            Nats::available()
        );
        return;
    }
    let started = Instant::now();
    // The engines' calls block on a runtime of their own: made here, outside the bench's runtime.
    let pg = Postgres::start().expect("PostgreSQL");
    let nats = Nats::start().expect("nats-server");
    let dbs: Vec<String> = (0..o.runs).map(|i| pg.create_database(&format!("cluster{i}")).expect("database")).collect();
    eprintln!("cluster: PostgreSQL on port {}, nats-server at {}", pg.port(), nats.url());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let runs: Vec<Run> = rt.block_on(async {
        let mut runs = Vec::new();
        for (i, db) in dbs.iter().enumerate() {
            runs.push(run(i, db, &nats, &o).await);
        }
        runs
    });
    drop(rt);
    drop(nats);
    drop(pg);

    let med = |f: &dyn Fn(&Run) -> f64| median(runs.iter().map(f).collect());
    let (cross, same) = (med(&|r| r.cross.rate), med(&|r| r.same.rate));
    let ratio = cross / same;
    let deltas = runs[0].cross.deltas;
    let resyncs: u32 = runs.iter().map(|r| r.cross.resyncs + r.same.resyncs).sum();
    println!(
        "\nCross-host fan-out: two `ensemble` hosts (A, B) on one PostgreSQL, joined by NATS; a scripted session streams on A\n\
         (medians of {} run(s); {} resync(s) in all; {:.0} s total)\n",
        o.runs,
        resyncs,
        started.elapsed().as_secs_f64()
    );
    println!("| scenario | measure | cross-host (subscribers on B) | same host (subscribers on A) | cross / same |");
    println!("| --- | --- | --: | --: | --: |");
    println!(
        "| fan-out, {} subscribers, {} deltas | deliveries/s | {} | {} | {ratio:.2}x |",
        o.subs,
        thousands(deltas),
        k(cross),
        k(same)
    );
    if runs.iter().all(|r| r.latency.is_some()) {
        let l = |f: &dyn Fn(&Latency) -> f64| med(&|r| f(r.latency.as_ref().unwrap()));
        let rate = l(&|x| x.rate);
        let scenario = format!("paced ~{rate:.0} deltas/s ({} sessions), 1 subscriber on each", o.pace_sessions);
        println!("| {scenario} | added by the hop (B − A), p50 | {:.2} ms | | |", l(&|x| x.added_p50));
        println!("| {scenario} | added by the hop (B − A), p99 | {:.2} ms | | |", l(&|x| x.added_p99));
        println!(
            "| {scenario} | publish → receive p99 (occurredAtMs, ms resolution) | {:.1} ms | {:.1} ms (p50 {:.1} ms) | |",
            l(&|x| x.b_p99),
            l(&|x| x.a_p99),
            l(&|x| x.a_p50)
        );
    }
    println!(
        "\ntarget: cross-host fan-out >= 0.5x same-host: {} ({ratio:.2}x)",
        if ratio >= 0.5 { "MET" } else { "MISSED" }
    );
}
