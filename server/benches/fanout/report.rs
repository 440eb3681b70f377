//! What the bench prints: a line per run on stderr, then the tables and the targets on stdout.

use std::collections::HashMap;
use std::time::Instant;

use crate::measure::Latency;
use crate::options::Opts;
use crate::scenario::{Outcome, Which};

pub fn report_run(which: Which, label: &str, o: &Outcome) {
    let cores = |us: u64| us as f64 / 1e6 / o.secs.max(1e-9);
    let mut line = format!(
        "[{:8}] {label}: {} events x {} subs in {:.2} s = {:.0} deliveries/s; server {:.2} µs CPU/delivery ({:.2} cores), clients {:.2} µs ({:.2} cores)",
        which.name(),
        o.events,
        o.subs,
        o.secs,
        o.rate(),
        o.srv_us_per_delivery(),
        cores(o.cpu.server),
        o.cli_us_per_delivery(),
        cores(o.cpu.client),
    );
    if which == Which::Ensemble {
        line.push_str(&format!(
            "; store writer {:.2} µs CPU/event ({:.2} cores); {} commits for {} events",
            o.cpu.writer as f64 / o.events.max(1) as f64,
            cores(o.cpu.writer),
            o.commits,
            o.store_events
        ));
    }
    if !o.latencies_us.is_empty() {
        let l = Latency::of(&o.latencies_us);
        line.push_str(&format!("; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms", l.p50, l.p99, l.max));
    }
    if !o.errors.is_empty() {
        line.push_str(&format!("; {} ERRORS, first: {}", o.errors.len(), o.errors[0]));
    }
    eprintln!("{line}");
}

pub fn si(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// The run with the median rate.
pub fn median(mut runs: Vec<Outcome>) -> Outcome {
    runs.sort_by(|a, b| a.rate().total_cmp(&b.rate()));
    let mid = runs.len() / 2;
    runs.swap_remove(mid)
}

fn ok(o: Option<&Outcome>) -> Option<&Outcome> {
    o.filter(|o| o.errors.is_empty())
}

/// The tables and the targets; whether any scenario failed.
pub fn table(
    opts: &Opts,
    throughput: &[(usize, HashMap<Which, Outcome>)],
    latency: &HashMap<Which, Outcome>,
    started: Instant,
    with_ensemble: bool,
) -> bool {
    let mut failed = false;
    println!();
    println!(
        "Room fan-out: Ensemble (emit -> fold -> SQLite group commit -> RoomHub -> real router/ws.rs) vs tuned axum baseline"
    );
    let frame =
        |w: Which| throughput.iter().filter_map(|(_, m)| m.get(&w)).chain(latency.get(&w)).map(|o| o.frame_bytes).max();
    println!(
        "(server CPU = threads srv-* and ensemble-store-writer, incl. the publisher; {} server / {} client workers; \
         medians of {} run(s); event frames {} B (Ensemble) / {} B (baseline); {:.0} s total)",
        opts.srv_threads,
        opts.cli_threads,
        opts.runs,
        frame(Which::Ensemble).map_or("-".into(), |b| b.to_string()),
        frame(Which::Baseline).map_or("-".into(), |b| b.to_string()),
        started.elapsed().as_secs_f64()
    );
    println!();
    println!(
        "| scenario | Ensemble deliveries/s | baseline deliveries/s | ratio | Ensemble µs CPU/delivery | baseline µs CPU/delivery |"
    );
    println!("| --- | --: | --: | --: | --: | --: |");
    let cell = |o: Option<&Outcome>, f: &dyn Fn(&Outcome) -> String| match o {
        Some(o) if o.errors.is_empty() => f(o),
        Some(o) => format!("FAILED ({})", o.errors.len()),
        None => "-".into(),
    };
    let mut ratio_100 = None;
    for (subs, m) in throughput {
        let (e, b) = (m.get(&Which::Ensemble), m.get(&Which::Baseline));
        failed |= m.values().any(|o| !o.errors.is_empty());
        let ratio = match (ok(e), ok(b)) {
            (Some(e), Some(b)) => Some(e.rate() / b.rate()),
            _ => None,
        };
        if *subs == 100 {
            ratio_100 = ratio;
        }
        let events = e.or(b).map_or(0, |o| o.events);
        println!(
            "| max rate, {subs} sub{} ({events} events) | {} | {} | {} | {} | {} |",
            if *subs == 1 { "" } else { "s" },
            cell(e, &|o| si(o.rate())),
            cell(b, &|o| si(o.rate())),
            ratio.map_or("-".into(), |r| format!("{r:.2}x")),
            cell(e, &|o| format!("{:.2}", o.srv_us_per_delivery())),
            cell(b, &|o| format!("{:.2}", o.srv_us_per_delivery())),
        );
    }
    let mut p99 = None;
    if !latency.is_empty() {
        let (e, b) = (latency.get(&Which::Ensemble), latency.get(&Which::Baseline));
        failed |= latency.values().any(|o| !o.errors.is_empty());
        let lat = |o: &Outcome| {
            let l = Latency::of(&o.latencies_us);
            format!("{:.2} / {:.2} / {:.2} / {:.2}", l.p50, l.p99, l.p999, l.max)
        };
        p99 = ok(e).map(|o| Latency::of(&o.latencies_us).p99);
        println!();
        println!(
            "| {} ev/s, {} subs, {} s | Ensemble p50 / p99 / p99.9 / max ms | baseline p50 / p99 / p99.9 / max ms | Ensemble µs CPU/delivery | baseline µs CPU/delivery |",
            opts.rate, opts.latency_subs, opts.latency_secs
        );
        println!("| --- | --: | --: | --: | --: |");
        println!(
            "| publish -> receive | {} | {} | {} | {} |",
            cell(e, &lat),
            cell(b, &lat),
            cell(e, &|o| format!("{:.2}", o.srv_us_per_delivery())),
            cell(b, &|o| format!("{:.2}", o.srv_us_per_delivery())),
        );
    }
    if with_ensemble {
        println!();
        println!("| Ensemble SQLite group commit | events | commits | events/commit |");
        println!("| --- | --: | --: | --: |");
        let rows = throughput
            .iter()
            .filter_map(|(subs, m)| m.get(&Which::Ensemble).map(|o| (format!("max rate, {subs} subs"), o)))
            .chain(latency.get(&Which::Ensemble).map(|o| (format!("{} ev/s, {} subs", opts.rate, o.subs), o)));
        for (label, o) in rows {
            println!(
                "| {label} | {} | {} | {:.1} |",
                o.store_events,
                o.commits,
                o.store_events as f64 / o.commits.max(1) as f64
            );
        }
    }
    println!();
    match ratio_100 {
        Some(r) => println!(
            "target: Ensemble >= 0.5x baseline deliveries/s with 100 subscribers: {} ({r:.2}x)",
            if r >= 0.5 { "MET" } else { "MISSED" }
        ),
        None => println!("target: deliveries/s ratio with 100 subscribers: not measured"),
    }
    match p99 {
        Some(p) => println!(
            "target: Ensemble p99 < 10 ms at {} ev/s with {} subscribers: {} ({p:.2} ms)",
            opts.rate,
            opts.latency_subs,
            if p < 10.0 { "MET" } else { "MISSED" }
        ),
        None => println!("target: p99 latency: not measured"),
    }
    failed
}
