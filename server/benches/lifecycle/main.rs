//! Session lifecycle as a user feels it: scripted session starts per second
//! (`POST /v1/rooms/{room}/sessions`, 201) and turn submits per second (`POST …/sessions/{id}/turns`,
//! 202 — accepted once durable), with 1 and 32 concurrent clients, through the real `ensemble`
//! binary against a minimal axum server that group-commits one row per request (`baseline.rs`).
//!
//! `cargo bench -p ensemble-server --bench lifecycle [-- OPTIONS]`
//!
//! **Ensemble**: `ensemble serve` spawned on 127.0.0.1:0 with a fresh data dir per run (durable:
//! its SQLite store, with the defaults of `ensemble serve` except `--scripted-chunk-delay-ms 0` and
//! session limits raised so they never interfere), stopped with SIGTERM after the run. **Baseline**:
//! in the bench process, on a runtime of its own (2 workers, `base-*`), a fresh SQLite file per run,
//! the same linger as Ensemble's (`--commit-linger-ms`). Both are driven by the same client code:
//! reqwest over HTTP/1.1 keep-alive on 127.0.0.1, from the bench's main runtime (2 workers).
//!
//! A run, per client count C: C clients each start `ops / C` sessions one after the other (client
//! `c` in room `r{c}`, ids `s{c}-{n}`); then each submits one turn (input `x`: the scripted agent
//! echoes it in a few events) to each of its own sessions, one after the other. Each session gets
//! exactly one turn, so no submit can meet a running turn (409 `turn_active`) and a submit's cost is
//! only the accept path (the turns themselves run on in the background, as they would for users).
//! Every answer is checked (201 / 202). Rate = requests / wall time of the phase; medians of
//! `--runs` runs; sides alternate which goes first.
//!
//! With `--alt-linger MS` (default 2; 0: off) a third side runs Ensemble with `--commit-linger-ms MS`,
//! to show what lingering for company costs requests that wait for their own commit.
//!
//! Options (also as `LIFECYCLE_*` environment variables):
//!   --clients 1,32   client counts
//!   --ops1 N         requests per phase with 1 client (default 600)
//!   --ops N          requests per phase with more clients (default 8000)
//!   --runs K         runs per client count (default 3)
//!   --alt-linger MS  also run Ensemble with `--commit-linger-ms MS` (default 2; 0: no third side)
//! The linger of both main sides is `ENSEMBLE_COMMIT_LINGER_MS` (default 0, Ensemble's default).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

// The allocator the `ensemble` binary ships with, for every side in this process (Ensemble's and
// the baselines'): with glibc's, freeing on the writer thread what other threads allocated was a
// seventh of Ensemble's writer in a profile, a cost the shipped binary does not pay.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod baseline;
#[path = "../common/server.rs"]
mod common;
#[path = "../common/group_commit.rs"]
mod group_commit;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{Server, arg, median, prepare};

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Ensemble,
    Baseline,
    EnsembleAltLinger,
}

/// One run of one side: (starts/s, submits/s).
type Rates = (f64, f64);

async fn drive(http: &reqwest::Client, base: &str, clients: usize, ops: usize) -> Rates {
    let per = (ops / clients).max(1);
    let phase = |turns: bool| {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let (http, base) = (http.clone(), base.to_owned());
                tokio::spawn(async move {
                    for n in 0..per {
                        let (url, body, want) = if turns {
                            (
                                format!("{base}/v1/rooms/r{c}/sessions/s{c}-{n}/turns"),
                                json!({"input": [{"type": "text", "text": "x"}]}),
                                202,
                            )
                        } else {
                            (format!("{base}/v1/rooms/r{c}/sessions"), json!({"sessionId": format!("s{c}-{n}")}), 201)
                        };
                        let r = http.post(url).json(&body).send().await.unwrap();
                        let status = r.status();
                        assert_eq!(status, want, "{}", r.text().await.unwrap_or_default());
                    }
                })
            })
            .collect();
        async move {
            let t0 = Instant::now();
            for t in tasks {
                t.await.unwrap();
            }
            (per * clients) as f64 / t0.elapsed().as_secs_f64()
        }
    };
    let starts = phase(false).await;
    // Let the starts' trailing events (the scripted agent's `commands.updated`, …) settle.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let turns = phase(true).await;
    (starts, turns)
}

async fn run_side(
    side: Side,
    base_rt: &tokio::runtime::Runtime,
    (linger_ms, alt_ms): (u64, u64),
    clients: usize,
    ops: usize,
) -> Rates {
    match side {
        Side::Baseline => {
            let b = base_rt.spawn(baseline::start(Duration::from_millis(linger_ms))).await.unwrap();
            let rates = drive(&common::client(), &format!("http://{}", b.addr), clients, ops).await;
            drop(b);
            rates
        }
        Side::Ensemble | Side::EnsembleAltLinger => {
            let dir = tempfile::Builder::new().prefix("ensemble-bench-life-").tempdir_in("/var/tmp").unwrap();
            prepare(dir.path());
            let linger = if side == Side::Ensemble { linger_ms } else { alt_ms };
            let big = (ops * 2).to_string();
            let flags: Vec<String> = [
                "--scripted-chunk-delay-ms",
                "0",
                "--commit-linger-ms",
                &linger.to_string(),
                "--max-sessions",
                &big,
                "--max-sessions-per-room",
                &big,
                "--max-live-sessions",
                &big,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let server = Server::spawn(dir.path(), &flags).await;
            server.ready().await;
            let rates = drive(&server.http, &server.base, clients, ops).await;
            server.stop().await;
            rates
        }
    }
}

fn k(v: f64) -> String {
    if v >= 10_000.0 { format!("{:.1}k", v / 1e3) } else { format!("{v:.0}") }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let clients: Vec<usize> = arg("--clients", "LIFECYCLE_CLIENTS", "1,32")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim().parse().expect("--clients"))
        .collect();
    let ops1: usize = arg("--ops1", "LIFECYCLE_OPS1", "600").parse().unwrap();
    let ops: usize = arg("--ops", "LIFECYCLE_OPS", "8000").parse().unwrap();
    let runs: usize = arg("--runs", "LIFECYCLE_RUNS", "3").parse::<usize>().unwrap().max(1);
    let alt_ms: u64 = arg("--alt-linger", "LIFECYCLE_ALT_LINGER", "2").parse().unwrap();
    let alt = alt_ms > 0;
    let linger_ms: u64 = std::env::var("ENSEMBLE_COMMIT_LINGER_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let n = AtomicUsize::new(0);
    let base_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name_fn(move || format!("base-{}", n.fetch_add(1, Ordering::Relaxed)))
        .enable_all()
        .build()
        .unwrap();
    let mut sides = vec![Side::Ensemble, Side::Baseline];
    if alt {
        sides.push(Side::EnsembleAltLinger);
    }
    let started = Instant::now();
    // results[client count][side] = per-run rates
    let mut results: Vec<Vec<Vec<Rates>>> = Vec::new();
    for &c in &clients {
        let ops = if c == 1 { ops1 } else { ops };
        let mut per_side = vec![Vec::new(); sides.len()];
        for run in 0..runs {
            let order: Vec<usize> =
                if run % 2 == 0 { (0..sides.len()).collect() } else { (0..sides.len()).rev().collect() };
            for i in order {
                let r = run_side(sides[i], &base_rt, (linger_ms, alt_ms), c, ops).await;
                eprintln!(
                    "lifecycle: {c} client(s), run {}, {}: {:.0} starts/s, {:.0} submits/s",
                    run + 1,
                    ["Ensemble", "baseline", "Ensemble, alternative linger"][sides[i] as usize],
                    r.0,
                    r.1
                );
                per_side[i].push(r);
            }
        }
        results.push(per_side);
    }
    base_rt.shutdown_background();

    println!(
        "\nSession lifecycle: the real `ensemble` binary (scripted, durable) vs a minimal axum handler group-committing one row per request \
         (SQLite WAL, synchronous=NORMAL, <= 512 rows, {linger_ms} ms linger as Ensemble's)\n\
         (reqwest clients on 127.0.0.1, each on its own sessions; {ops1} requests per phase with 1 client, {ops} with more; \
         medians of {runs} run(s); {:.0} s total)\n",
        started.elapsed().as_secs_f64()
    );
    let mut head = "| clients | operation | Ensemble ops/s | baseline ops/s | Ensemble / baseline |".to_owned();
    let mut rule = "| --: | --- | --: | --: | --: |".to_owned();
    if alt {
        head.push_str(&format!(" Ensemble, linger {alt_ms} ms | linger {alt_ms} ms / baseline |"));
        rule.push_str(" --: | --: |");
    }
    println!("{head}\n{rule}");
    let mut targets = Vec::new();
    for (ci, &c) in clients.iter().enumerate() {
        for (op, name) in [(0, "session starts"), (1, "turn submits")] {
            let m = |s: usize| median(results[ci][s].iter().map(|r| if op == 0 { r.0 } else { r.1 }).collect());
            let (e, b) = (m(0), m(1));
            let mut line = format!("| {c} | {name} | {} | {} | {:.2}x |", k(e), k(b), e / b);
            if alt {
                let z = m(2);
                line.push_str(&format!(" {} | {:.2}x |", k(z), z / b));
            }
            println!("{line}");
            if c >= 32 {
                targets.push((c, name, e / b));
            }
        }
    }
    println!();
    for (c, name, ratio) in targets {
        println!(
            "target: {name}, {c} clients: Ensemble >= 0.5x baseline: {} ({ratio:.2}x)",
            if ratio >= 0.5 { "MET" } else { "MISSED" }
        );
    }
}
