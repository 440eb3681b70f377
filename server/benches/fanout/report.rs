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

fn ratio(a: Option<&Outcome>, b: Option<&Outcome>, f: impl Fn(&Outcome) -> f64) -> Option<f64> {
    match (ok(a), ok(b)) {
        (Some(a), Some(b)) => Some(f(a) / f(b)),
        _ => None,
    }
}

fn x(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}x"))
}

fn writer_us(o: &Outcome) -> f64 {
    o.cpu.writer as f64 / o.events.max(1) as f64
}

fn cell(o: Option<&Outcome>, f: &dyn Fn(&Outcome) -> String) -> String {
    match o {
        Some(o) if o.errors.is_empty() => f(o),
        Some(o) => format!("FAILED ({})", o.errors.len()),
        None => "-".into(),
    }
}

/// One target line: MET, MISSED or not measured.
fn target(what: &str, value: Option<f64>, met: impl Fn(f64) -> bool, unit: &str) {
    match value {
        Some(v) => println!("target: {what}: {} ({v:.2}{unit})", if met(v) { "MET" } else { "MISSED" }),
        None => println!("target: {what}: not measured"),
    }
}

/// The tables and the targets; whether any scenario failed.
pub fn table(
    opts: &Opts,
    throughput: &[(usize, HashMap<Which, Outcome>)],
    latency: &HashMap<Which, Outcome>,
    started: Instant,
) -> bool {
    use Which::{Durable, Ensemble, Memory};
    let mut failed = false;
    println!();
    println!(
        "Room fan-out: Ensemble (emit -> fold -> SQLite group commit -> RoomHub -> real router/ws.rs) vs tuned axum \
         baselines, durable (SQLite group commit, then broadcast) and in-memory"
    );
    let frame =
        |w: Which| throughput.iter().filter_map(|(_, m)| m.get(&w)).chain(latency.get(&w)).map(|o| o.frame_bytes).max();
    let frame = |w: Which| frame(w).map_or("-".into(), |b| b.to_string());
    println!(
        "(server CPU = threads srv-*, ensemble-store-*, ensemble-read-* and dur-writer, incl. the publisher; writer CPU = ensemble-store-* \
         or dur-writer per event; {} server / {} client workers; medians of {} run(s); event frames {} / {} / {} B; \
         {:.0} s total)",
        opts.srv_threads,
        opts.cli_threads,
        opts.runs,
        frame(Ensemble),
        frame(Durable),
        frame(Memory),
        started.elapsed().as_secs_f64()
    );
    println!();
    println!(
        "| scenario | Ensemble deliveries/s | durable | memory | Ensemble / durable | Ensemble / memory | \
         server µs CPU/delivery (E / D / M) | writer µs CPU/event (E / D) |"
    );
    println!("| --- | --: | --: | --: | --: | --: | --: | --: |");
    let (mut ratio_1, mut writer_1, mut ratio_100) = (None, None, None);
    for (subs, m) in throughput {
        let (e, d, b) = (m.get(&Ensemble), m.get(&Durable), m.get(&Memory));
        failed |= m.values().any(|o| !o.errors.is_empty());
        let (vs_d, vs_m) = (ratio(e, d, Outcome::rate), ratio(e, b, Outcome::rate));
        if *subs == 1 {
            ratio_1 = vs_d;
            writer_1 = ratio(e, d, writer_us);
        }
        if *subs == 100 {
            ratio_100 = vs_m;
        }
        let events = e.or(d).or(b).map_or(0, |o| o.events);
        let cpu = |o: Option<&Outcome>| cell(o, &|o| format!("{:.2}", o.srv_us_per_delivery()));
        println!(
            "| max rate, {subs} sub{} ({events} events) | {} | {} | {} | {} | {} | {} / {} / {} | {} / {} |",
            if *subs == 1 { "" } else { "s" },
            cell(e, &|o| si(o.rate())),
            cell(d, &|o| si(o.rate())),
            cell(b, &|o| si(o.rate())),
            x(vs_d),
            x(vs_m),
            cpu(e),
            cpu(d),
            cpu(b),
            cell(e, &|o| format!("{:.2}", writer_us(o))),
            cell(d, &|o| format!("{:.2}", writer_us(o))),
        );
    }
    let mut p99_ratio = None;
    if !latency.is_empty() {
        let (e, d, b) = (latency.get(&Ensemble), latency.get(&Durable), latency.get(&Memory));
        failed |= latency.values().any(|o| !o.errors.is_empty());
        let lat = |o: &Outcome| {
            let l = Latency::of(&o.latencies_us);
            format!("{:.2} / {:.2} / {:.2} / {:.2}", l.p50, l.p99, l.p999, l.max)
        };
        let p99 = |o: &Outcome| Latency::of(&o.latencies_us).p99;
        p99_ratio = ratio(e, d, p99);
        let cpu = |o: Option<&Outcome>| cell(o, &|o| format!("{:.2}", o.srv_us_per_delivery()));
        println!();
        println!(
            "| {} ev/s, {} subs, {} s, p50 / p99 / p99.9 / max ms | Ensemble | durable | memory | p99 Ensemble / durable | \
             server µs CPU/delivery (E / D / M) |",
            opts.rate, opts.latency_subs, opts.latency_secs
        );
        println!("| --- | --: | --: | --: | --: | --: |");
        println!(
            "| publish -> receive | {} | {} | {} | {} | {} / {} / {} |",
            cell(e, &lat),
            cell(d, &lat),
            cell(b, &lat),
            x(p99_ratio),
            cpu(e),
            cpu(d),
            cpu(b),
        );
    }
    let rows: Vec<(String, Which, &Outcome)> = throughput
        .iter()
        .flat_map(|(subs, m)| {
            [Ensemble, Durable]
                .into_iter()
                .filter_map(move |w| m.get(&w).map(|o| (format!("max rate, {subs} subs"), w, o)))
        })
        .chain(
            [Ensemble, Durable]
                .into_iter()
                .filter_map(|w| latency.get(&w).map(|o| (format!("{} ev/s, {} subs", opts.rate, o.subs), w, o))),
        )
        .collect();
    if !rows.is_empty() {
        println!();
        println!("| SQLite group commit | writer | events | commits | events/commit |");
        println!("| --- | --- | --: | --: | --: |");
        for (label, w, o) in rows {
            println!(
                "| {label} | {} | {} | {} | {:.1} |",
                w.name(),
                o.store_events,
                o.commits,
                o.store_events as f64 / o.commits.max(1) as f64
            );
        }
    }
    println!();
    target("max rate, 1 subscriber: Ensemble >= 0.5x durable", ratio_1, |r| r >= 0.5, "x");
    target("writer CPU per event, 1 subscriber: Ensemble <= 2x durable", writer_1, |r| r <= 2.0, "x");
    target("max rate, 100 subscribers: Ensemble >= 0.9x memory", ratio_100, |r| r >= 0.9, "x");
    target(
        &format!("p99 at {} ev/s x {} subscribers: Ensemble <= 1.5x durable", opts.rate, opts.latency_subs),
        p99_ratio,
        |r| r <= 1.5,
        "x",
    );
    failed
}
