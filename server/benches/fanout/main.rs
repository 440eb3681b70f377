//! Room fan-out: Ensemble's real path side by side with two tuned minimal axum baselines, a durable
//! one and an in-memory one, in one run.
//!
//! `cargo bench -p ensemble-server --bench fanout [-- OPTIONS]`
//!
//! **Ensemble**: an in-bench [`Adapter`] captures the session's [`SessionHandle`]; the publisher calls
//! `handle.sink.emit(..)` with one ~220-byte `message.delta` (a ~250-byte frame) per call → controller
//! fold → SQLite group-commit store (a real file in a tempdir; `StoreConfig` as `build_controller`
//! makes it from the default `ServeArgs`: `StoreConfig::new` plus the 100k-event retention) → `RoomHub` →
//! the real router (`ensemble_server::router`) on 127.0.0.1:0 → tokio-tungstenite clients on
//! `/v1/rooms/{room}/ws` (a `hello` frame, then `{"type":"event","event":{..}}` frames).
//!
//! **In-memory baseline** (`memory`): a minimal axum WebSocket server without persistence, tuned as
//! `fanout-baseline.md` describes: 4 KiB read buffer, feed up to 64 queued frames then flush once,
//! each event serialised once (the same `Event` type and frame shape as Ensemble's) and shared as
//! `Utf8Bytes` through a `tokio::sync::broadcast` ring of the same capacity as Ensemble's room bus.
//!
//! **Durable baseline** (`durable`): the same server, whose publisher queues each event to a plain
//! SQLite group-commit writer thread (`dur-writer`: WAL, `synchronous=NORMAL`, ≤ 512 events or 2 ms
//! per transaction, as Ensemble's defaults) that broadcasts the frames once committed.
//!
//! All servers run on one runtime whose threads are named `srv-*` (the store writer threads,
//! `ensemble-store-*` and `dur-writer`, count as server too, and as "writer"); the publisher runs there as well (it plays the
//! adapter reading a provider). The clients run on a runtime named `cli-*`. Server CPU is read per
//! thread from `/proc/self/task/*/stat` (utime+stime) around each scenario; the progress lines also
//! show the store writer's share.
//!
//! Throughput scenarios publish M events as fast as possible, with a window so no subscriber ever
//! falls more than `--window` events behind (half the room ring by default, so nothing is lost);
//! the time runs from the first publish to the last subscriber receiving its M-th event. Every
//! client checks it got every event, in order, by `seq`. The latency scenario publishes at a fixed
//! rate with the publish time (ns) embedded in the event text, measured at the client.
//!
//! Options (also as `FANOUT_*` environment variables, e.g. `FANOUT_SUBS=1,10`):
//!   --subs 1,10,100        subscriber counts of the throughput scenarios (empty: none)
//!   --events M             events per throughput scenario (default: depends on the subscriber count)
//!   --runs K               repeat each throughput scenario K times and report the median (default 3)
//!   --latency-secs S       length of the fixed-rate scenario, after 1 s of warm-up (default 10; 0: skip)
//!   --rate R               events/s of the fixed-rate scenario (default 1000)
//!   --latency-subs N       subscribers of the fixed-rate scenario (default 100)
//!   --only LIST            some of ensemble,durable,memory (default: all three)
//!   --srv-threads T        server runtime workers (default 2)
//!   --cli-threads T        client runtime workers (default 2)
//!   --window W             most events in flight at max rate (default 2048)
//!   --client-read-buf B    the clients' tungstenite read buffer (default 16384)
//!   --nodelay 0|1          TCP_NODELAY on both servers' accepted sockets (default 1, as `server::serve`
//!                          does; 0 shows what Nagle + delayed ACKs do to latency)
//! Ensemble's own settings come from its `ENSEMBLE_*` environment variables, as for `ensemble serve`
//! (e.g. `ENSEMBLE_COMMIT_LINGER_MS`, `ENSEMBLE_WS_QUEUE`).
//!
//! Files: `ensemble.rs` (Ensemble's side), `baseline.rs` (the in-memory baseline's), `durable.rs`
//! (the durable baseline's writer and publisher), `publish.rs` (the event
//! both publish and their pacing), `clients.rs` (the subscribers), `scenario.rs` (one run: a room,
//! its subscribers and publisher, the outcome), `measure.rs` (clock, CPU per thread, latency),
//! `report.rs` (the progress lines and the tables), `options.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

// The allocator the `ensemble` binary ships with, for every side in this process (Ensemble's and
// the baselines'): with glibc's, freeing on the writer thread what other threads allocated was a
// seventh of Ensemble's writer in a profile, a cost the shipped binary does not pay.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod baseline;
mod clients;
mod durable;
mod ensemble;
#[path = "../common/group_commit.rs"]
mod group_commit;
mod measure;
mod options;
mod publish;
mod report;
mod scenario;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use ensemble_server::config::Cli;

use crate::baseline::start_baseline;
use crate::durable::start_durable;
use crate::ensemble::start_ensemble;
use crate::measure::base_instant;
use crate::options::Opts;
use crate::report::{median, report_run};
use crate::scenario::{Bench, Load, Outcome, Which};

fn runtime(prefix: &'static str, workers: usize) -> tokio::runtime::Runtime {
    let n = AtomicUsize::new(0);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name_fn(move || format!("{prefix}-{}", n.fetch_add(1, Ordering::Relaxed)))
        // Blocking-pool threads (the store's readers) must not exit mid-scenario: their CPU
        // would vanish from /proc/self/task.
        .thread_keep_alive(Duration::from_secs(3600))
        .enable_all()
        .build()
        .expect("runtime")
}

fn main() {
    let opts = Opts::parse();
    base_instant();
    let srv = runtime("srv", opts.srv_threads);
    let cli = runtime("cli", opts.cli_threads);
    let ensemble = opts.ensemble.then(|| Arc::new(srv.block_on(start_ensemble(opts.nodelay))));
    let capacity = Cli::try_parse_from(["ensemble"]).map(|c| c.serve.ws_queue).unwrap_or(4096);
    let durable = opts.durable.then(|| Arc::new(srv.block_on(start_durable(capacity, opts.nodelay))));
    let baseline = opts.baseline.then(|| Arc::new(srv.block_on(start_baseline(capacity, opts.nodelay))));
    let bench =
        Bench { opts: opts.clone(), srv: srv.handle().clone(), ensemble, durable, baseline, rooms: AtomicU64::new(0) };
    let started = Instant::now();
    eprintln!(
        "fanout: {} CPUs; server runtime {} workers (srv-*), client runtime {} workers (cli-*); window {} events; \
         room ring {capacity}; client read buffer {} B; TCP_NODELAY {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        opts.srv_threads,
        opts.cli_threads,
        opts.window,
        opts.client_read_buf,
        if opts.nodelay { "on (as server::serve)" } else { "off" },
    );

    let (throughput, latency) = cli.block_on(async {
        // Warm-up: connections, SQLite pages, allocator; not reported.
        for which in bench.enabled() {
            let o = bench.run(which, 10, 5_000, Load::MaxRate).await;
            report_run(which, "warm-up", &o);
        }
        let mut throughput: Vec<(usize, HashMap<Which, Outcome>)> = Vec::new();
        for &subs in &opts.subs {
            let events = opts.events_for(subs);
            let mut runs: HashMap<Which, Vec<Outcome>> = HashMap::new();
            for run in 0..opts.runs {
                for which in bench.enabled() {
                    let o = bench.run(which, subs, events, Load::MaxRate).await;
                    report_run(which, &format!("max rate, run {}", run + 1), &o);
                    runs.entry(which).or_default().push(o);
                }
            }
            throughput.push((subs, runs.into_iter().map(|(w, r)| (w, median(r))).collect()));
        }
        let mut latency = HashMap::new();
        if opts.latency_secs > 0 {
            let warmup_secs = 1;
            let events = opts.rate * (opts.latency_secs + warmup_secs);
            for which in bench.enabled() {
                let o = bench.run(which, opts.latency_subs, events, Load::Fixed { rate: opts.rate, warmup_secs }).await;
                report_run(which, &format!("{} ev/s", opts.rate), &o);
                latency.insert(which, o);
            }
        }
        (throughput, latency)
    });

    let failed = report::table(&opts, &throughput, &latency, started);

    if let Some(ens) = bench.ensemble {
        srv.block_on(async move { ens.stop().await });
    }
    drop(cli);
    srv.shutdown_timeout(Duration::from_secs(2));
    if failed {
        eprintln!("fanout: some scenarios FAILED (see above)");
        std::process::exit(1);
    }
}
