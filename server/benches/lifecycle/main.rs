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
//! A run, per client count C, has three phases (`Phase`): C clients each start `ops / C` sessions
//! one after the other (client `c` in room `r{c}`, ids `s{c}-{n}`); then each submits one turn to
//! each of the first half of its own sessions with input `/hang` (the scripted agent accepts the
//! turn and then waits for a cancel: the phase is the accept path alone, what a submit costs); then
//! one turn with input `x` to each of the second half (each turn streams its reply, seven events
//! and a transcript write, at full speed while the next submits arrive: accepting turns while
//! earlier ones stream). Each session gets at most one turn, so no submit meets a running turn
//! (409 `turn_active`). Every answer is checked (201 / 202). Rate = requests / wall time of the
//! phase; medians of `--runs` runs; sides alternate which goes first.
//!
//! With `--alt-linger MS` (default 2; 0: off) a third side runs Ensemble with `--commit-linger-ms MS`,
//! to show what lingering for company costs requests that wait for their own commit.
//!
//! Options (also as `LIFECYCLE_*` environment variables):
//!   --clients 1,32   client counts
//!   --ops1 N         sessions started with 1 client (default 600; each submit phase half)
//!   --ops N          sessions started with more clients (default 12000; each submit phase half)
//!   --runs K         runs per client count (default 3)
//!   --alt-linger MS  also run Ensemble with `--commit-linger-ms MS` (default 2; 0: no third side)
//!   --only ensemble  run one side alone (`ensemble` or `baseline`; for profiling, prints no ratios)
//!   --serve-baseline serve the baseline alone until killed, printing `listening on http://ADDR`
//!                    (`scripts/instructions` measures its process by itself)
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

/// The phases of a run, in order.
const PHASES: [Phase; 3] = [Phase::Starts, Phase::Submits, Phase::SubmitsStreaming];

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// `POST …/sessions` (201): each client starts its sessions.
    Starts,
    /// `POST …/turns` (202) with input `/hang`: the scripted agent accepts the turn and then waits
    /// for a cancel, so the phase measures the accept path alone (what a submit costs).
    Submits,
    /// `POST …/turns` (202) with input `x`: each turn streams its reply (turn.started, three
    /// deltas, the message, usage, turn.completed and a transcript write) at full speed while the
    /// next submits arrive, so the phase measures accepting turns while earlier ones stream.
    SubmitsStreaming,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Starts => "session starts",
            Phase::Submits => "turn submits (accept path)",
            Phase::SubmitsStreaming => "turn submits, replies streaming",
        }
    }
}

/// One run of one side: requests per second, per phase (in the order of [`PHASES`]).
type Rates = [f64; 3];

async fn drive(http: &reqwest::Client, base: &str, clients: usize, ops: usize) -> Rates {
    let per = (ops / clients).max(2);
    // The submit phases share the sessions: each turns the first or the second half of them,
    // so no submit meets a running turn (409 `turn_active`).
    let half = per / 2;
    let phase = |phase: Phase| {
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let (http, base) = (http.clone(), base.to_owned());
                tokio::spawn(async move {
                    let ids = match phase {
                        Phase::Starts => 0..per,
                        Phase::Submits => 0..half,
                        Phase::SubmitsStreaming => half..per,
                    };
                    let n_ops = ids.len();
                    for n in ids {
                        let turn = |text: &str| {
                            (
                                format!("{base}/v1/rooms/r{c}/sessions/s{c}-{n}/turns"),
                                json!({"input": [{"type": "text", "text": text}]}),
                                202,
                            )
                        };
                        let (url, body, want) = match phase {
                            Phase::Starts => (
                                format!("{base}/v1/rooms/r{c}/sessions"),
                                json!({"sessionId": format!("s{c}-{n}")}),
                                201,
                            ),
                            Phase::Submits => turn("/hang"),
                            Phase::SubmitsStreaming => turn("x"),
                        };
                        let r = http.post(url).json(&body).send().await.unwrap();
                        let status = r.status();
                        assert_eq!(status, want, "{}", r.text().await.unwrap_or_default());
                    }
                    n_ops
                })
            })
            .collect();
        async move {
            let t0 = Instant::now();
            let mut n = 0;
            for t in tasks {
                n += t.await.unwrap();
            }
            n as f64 / t0.elapsed().as_secs_f64()
        }
    };
    let mut rates = [0.0; 3];
    for (i, p) in PHASES.into_iter().enumerate() {
        rates[i] = phase(p).await;
    }
    rates
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
    let ops: usize = arg("--ops", "LIFECYCLE_OPS", "12000").parse().unwrap();
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
    if std::env::args().any(|a| a == "--serve-baseline") {
        // The baseline's server alone, for a measurement of the server process by itself
        // (`scripts/instructions`): it prints its address as `ensemble serve` does and serves
        // until it is killed.
        let b = base_rt.spawn(baseline::start(Duration::from_millis(linger_ms))).await.unwrap();
        println!("listening on http://{}", b.addr);
        std::future::pending::<()>().await;
    }
    let only = arg("--only", "LIFECYCLE_ONLY", "");
    let mut sides = vec![Side::Ensemble, Side::Baseline];
    if alt {
        sides.push(Side::EnsembleAltLinger);
    }
    if !only.is_empty() {
        // Profiling one side: the report below needs both, so it stops after the runs.
        let keep = match only.as_str() {
            "ensemble" => Side::Ensemble,
            "baseline" => Side::Baseline,
            other => panic!("--only: `ensemble` or `baseline`, not `{other}`"),
        };
        sides.retain(|s| *s == keep);
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
                    "lifecycle: {c} client(s), run {}, {}: {:.0} starts/s, {:.0} submits/s (accept path), {:.0} submits/s (replies streaming)",
                    run + 1,
                    ["Ensemble", "baseline", "Ensemble, alternative linger"][sides[i] as usize],
                    r[0],
                    r[1],
                    r[2]
                );
                per_side[i].push(r);
            }
        }
        results.push(per_side);
    }
    base_rt.shutdown_background();
    if !only.is_empty() {
        return;
    }

    println!(
        "\nSession lifecycle: the real `ensemble` binary (scripted, durable) vs a minimal axum handler group-committing one row per request \
         (SQLite WAL, synchronous=NORMAL, <= 512 rows, {linger_ms} ms linger as Ensemble's)\n\
         (reqwest clients on 127.0.0.1, each on its own sessions; {ops1} starts with 1 client, {ops} with more, half as many submits per submit phase; \
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
        for (op, phase) in PHASES.into_iter().enumerate() {
            let name = phase.name();
            let m = |s: usize| median(results[ci][s].iter().map(|r| r[op]).collect());
            let (e, b) = (m(0), m(1));
            let mut line = format!("| {c} | {name} | {} | {} | {:.2}x |", k(e), k(b), e / b);
            if alt {
                let z = m(2);
                line.push_str(&format!(" {} | {:.2}x |", k(z), z / b));
            }
            println!("{line}");
            if c >= 32 {
                targets.push((c, phase, e / b));
            }
        }
    }
    println!();
    for (c, phase, ratio) in targets {
        let name = phase.name();
        // The target counts what a submit costs (the accept path); with replies streaming each
        // submit also brings its turn's seven events and a transcript write, against one row per
        // request on the baseline's side: shown, not held to the target (docs/performance/).
        if phase == Phase::SubmitsStreaming {
            println!("for information: {name}, {c} clients: Ensemble / baseline {ratio:.2}x (not a target)");
            continue;
        }
        println!(
            "target: {name}, {c} clients: Ensemble >= 0.5x baseline: {} ({ratio:.2}x)",
            if ratio >= 0.5 { "MET" } else { "MISSED" }
        );
    }
}
