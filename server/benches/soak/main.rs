//! A daemon that runs for a year: sessions opened, used and closed, over and over, on the real
//! `ensemble` binary, with the server's resident set (VmRSS) sampled as they go. Closed sessions
//! should leave memory, so RSS after the warm-up should stay flat.
//!
//! `cargo bench -p ensemble-server --bench soak [-- OPTIONS]`
//!
//! A run: `ensemble serve` on a fresh data dir (the session limits raised to fit; retention at
//! its default); `--clients` concurrent clients, each in a loop: start a scripted session in one
//! of `--rooms` rooms, submit one turn and wait for it to end (`GET …?wait=idle`), close it (204).
//! RSS is sampled after every tenth of `--sessions`; the first tenth is the warm-up. Reported:
//! each sample, KiB per closed session after the warm-up (a least-squares slope), and the growth
//! from the end of the warm-up to the end.
//!
//! Options (also as `SOAK_*` environment variables):
//!   --sessions N   sessions opened, used and closed (default 10000)
//!   --clients C    at a time (default 16)
//!   --rooms R      rooms they are spread over (default 16)
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails loudly")]

#[path = "../common/server.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use crate::common::{Server, arg, prepare};

/// Opens, uses and closes session `i` (room `r{i % rooms}`).
async fn one(http: &reqwest::Client, base: &str, rooms: usize, i: usize) {
    let session = format!("{base}/v1/rooms/r{}/sessions/s{i}", i % rooms);
    let r = http
        .post(format!("{base}/v1/rooms/r{}/sessions", i % rooms))
        .json(&json!({"sessionId": format!("s{i}")}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "start: {}", r.text().await.unwrap_or_default());
    let r = http
        .post(format!("{session}/turns"))
        .json(&json!({"input": [{"type": "text", "text": format!("hello from session {i}")}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "turn: {}", r.text().await.unwrap_or_default());
    let r = http.get(format!("{session}?wait=idle&timeoutSecs=30")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = http.delete(&session).send().await.unwrap();
    assert_eq!(r.status(), 204, "close: {}", r.text().await.unwrap_or_default());
}

/// The slope of `y` over `x` by least squares.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let num: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    if den == 0.0 { 0.0 } else { num / den }
}

#[tokio::main]
async fn main() {
    let sessions: usize = arg("--sessions", "SOAK_SESSIONS", "10000").parse().expect("--sessions");
    let clients: usize = arg("--clients", "SOAK_CLIENTS", "16").parse().expect("--clients");
    let rooms: usize = arg("--rooms", "SOAK_ROOMS", "16").parse().expect("--rooms");
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let cap = (sessions + 64).to_string();
    let flags: Vec<String> =
        ["--max-sessions", &cap, "--max-sessions-per-room", &cap].iter().map(|s| s.to_string()).collect();
    let server = Server::spawn(dir.path(), &flags).await;
    server.ready().await;
    let step = (sessions / 10).max(1);
    let mut samples: Vec<(usize, u64)> = vec![(0, server.rss_kib())];
    let next = Arc::new(AtomicUsize::new(0));
    let mut done = 0;
    while done < sessions {
        let upto = (done + step).min(sessions);
        let tasks: Vec<_> = (0..clients)
            .map(|_| {
                let (http, base, next) = (server.http.clone(), server.base.clone(), next.clone());
                tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= upto {
                            return;
                        }
                        one(&http, &base, rooms, i).await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        next.store(upto, Ordering::Relaxed);
        done = upto;
        samples.push((done, server.rss_kib()));
        eprintln!("soak: {done} sessions closed, RSS {} KiB", samples.last().unwrap().1);
    }
    server.stop().await;

    println!("### Soak: {sessions} sessions opened, used and closed, {clients} at a time");
    println!();
    println!("| sessions closed | RSS |");
    println!("| --: | --: |");
    for (n, rss) in &samples {
        println!("| {n} | {:.1} MB |", *rss as f64 / 1024.0);
    }
    let after: Vec<(f64, f64)> = samples.iter().skip(1).map(|(n, r)| (*n as f64, *r as f64)).collect();
    let per = slope(&after);
    let (warm, end) = (samples[1].1 as f64, samples.last().unwrap().1 as f64);
    let growth = end / warm;
    println!();
    println!("after the warm-up: {per:.3} KiB per closed session; RSS {warm:.0} → {end:.0} KiB");
    let met = if growth <= 1.10 { "MET" } else { "MISSED" };
    println!("target: RSS flat within 10% after the warm-up over {sessions} closed sessions: {met} ({growth:.2}x)");
}
