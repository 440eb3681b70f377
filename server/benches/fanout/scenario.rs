//! One scenario: a fresh room on one server, its subscribers, its publisher, and what came of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ensemble_core::adapter::SessionHandle;
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use crate::baseline::{BaseRoom, BaselineServer, publish_baseline};
use crate::clients::run_client;
use crate::durable::{DurableServer, Pending, publish_durable};
use crate::ensemble::{EnsembleServer, publish_ensemble};
use crate::measure::{Cpu, now_ns};
use crate::options::Opts;
use crate::publish::{Pace, PaceMode};

/// Longest any scenario may take before it counts as failed.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    Ensemble,
    /// The durable baseline (`durable.rs`).
    Durable,
    /// The in-memory baseline (`baseline.rs`).
    Memory,
}

impl Which {
    pub fn name(self) -> &'static str {
        match self {
            Which::Ensemble => "Ensemble",
            Which::Durable => "durable",
            Which::Memory => "memory",
        }
    }
}

#[derive(Clone, Copy)]
pub enum Load {
    MaxRate,
    Fixed { rate: u64, warmup_secs: u64 },
}

#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub subs: usize,
    pub events: u64,
    pub secs: f64,
    pub cpu: Cpu,
    pub commits: u64,
    pub store_events: u64,
    pub latencies_us: Vec<u32>,
    pub frame_bytes: usize,
    pub errors: Vec<String>,
}

impl Outcome {
    pub fn deliveries(&self) -> u64 {
        self.events * self.subs as u64
    }
    pub fn rate(&self) -> f64 {
        self.deliveries() as f64 / self.secs.max(1e-9)
    }
    pub fn srv_us_per_delivery(&self) -> f64 {
        self.cpu.server as f64 / self.deliveries().max(1) as f64
    }
    pub fn cli_us_per_delivery(&self) -> f64 {
        self.cpu.client as f64 / self.deliveries().max(1) as f64
    }
}

pub enum Target {
    Ensemble(SessionHandle),
    Durable(tokio::sync::mpsc::Sender<Pending>, Arc<BaseRoom>, String),
    Memory(Arc<BaseRoom>, String),
}

pub struct Bench {
    pub opts: Opts,
    pub srv: Handle,
    pub ensemble: Option<Arc<EnsembleServer>>,
    pub durable: Option<Arc<DurableServer>>,
    pub baseline: Option<Arc<BaselineServer>>,
    pub rooms: AtomicU64,
}

impl Bench {
    pub fn enabled(&self) -> Vec<Which> {
        let mut v = Vec::new();
        if self.ensemble.is_some() {
            v.push(Which::Ensemble);
        }
        if self.durable.is_some() {
            v.push(Which::Durable);
        }
        if self.baseline.is_some() {
            v.push(Which::Memory);
        }
        v
    }

    /// (commits, events) of Ensemble's store or the durable baseline's writer so far.
    pub fn store_stats(&self, which: Which) -> (u64, u64) {
        match (which, &self.ensemble, &self.durable) {
            (Which::Ensemble, Some(ens), _) => {
                let stats = ens.controller.store().stats();
                (stats.commits.load(Ordering::Relaxed), stats.events.load(Ordering::Relaxed))
            }
            (Which::Durable, _, Some(d)) => (d.commits.load(Ordering::Relaxed), d.events.load(Ordering::Relaxed)),
            _ => (0, 0),
        }
    }

    pub fn connections(&self, which: Which) -> usize {
        match which {
            Which::Ensemble => self.ensemble.as_ref().map_or(0, |e| e.state.ws_connections.load(Ordering::SeqCst)),
            Which::Durable => self.durable.as_ref().map_or(0, |d| d.shared.conns.load(Ordering::SeqCst)),
            Which::Memory => self.baseline.as_ref().map_or(0, |b| b.shared.conns.load(Ordering::SeqCst)),
        }
    }

    /// Runs one scenario: a fresh room, `subs` subscribers, `events` events.
    pub async fn run(&self, which: Which, subs: usize, events: u64, load: Load) -> Outcome {
        let mut out = Outcome { subs, events, ..Default::default() };
        let room = format!("r{}-{}{subs}", self.rooms.fetch_add(1, Ordering::Relaxed), &which.name()[..1]);
        let (url, target) = match which {
            Which::Ensemble => {
                let ens = self.ensemble.clone().expect("Ensemble is running");
                let (r, addr) = (room.clone(), ens.addr);
                let handle = self.srv.spawn(async move { ens.open_room(&r).await }).await.expect("open the room");
                (format!("ws://{addr}/v1/rooms/{room}/ws"), Target::Ensemble(handle))
            }
            Which::Durable => {
                let d = self.durable.as_ref().expect("the durable baseline is running");
                let target = Target::Durable(d.queue.clone(), d.shared.room(&room), room.clone());
                (format!("ws://{}/rooms/{room}/ws", d.addr), target)
            }
            Which::Memory => {
                let base = self.baseline.as_ref().expect("the baseline is running");
                (format!("ws://{}/rooms/{room}/ws", base.addr), Target::Memory(base.shared.room(&room), room.clone()))
            }
        };
        let received: Arc<Vec<AtomicU64>> = Arc::new((0..subs).map(|_| AtomicU64::new(0)).collect());
        let latency_after = match load {
            Load::MaxRate => None,
            Load::Fixed { rate, warmup_secs } => Some(rate * warmup_secs),
        };
        let (ready_tx, mut ready_rx) = mpsc::channel(subs.max(1));
        let clients: Vec<_> = (0..subs)
            .map(|i| {
                tokio::spawn(run_client(
                    url.clone(),
                    self.opts.client_read_buf,
                    events,
                    latency_after,
                    received.clone(),
                    i,
                    ready_tx.clone(),
                ))
            })
            .collect();
        drop(ready_tx);
        let aborts: Vec<_> = clients.iter().map(|c| c.abort_handle()).collect();
        for _ in 0..subs {
            match tokio::time::timeout(Duration::from_secs(30), ready_rx.recv()).await {
                Ok(Some(Ok(()))) => {}
                Ok(Some(Err(e))) => out.errors.push(e),
                Ok(None) | Err(_) => {
                    out.errors.push("the subscribers did not all connect".into());
                    break;
                }
            }
        }
        if !out.errors.is_empty() {
            aborts.iter().for_each(|a| a.abort());
            return out;
        }

        let (commits0, events0) = self.store_stats(which);
        let cpu0 = Cpu::sample();
        let t0 = now_ns();
        let mode = match load {
            Load::MaxRate => PaceMode::Window { window: self.opts.window, received: received.clone() },
            Load::Fixed { rate, .. } => PaceMode::Rate {
                start: tokio::time::Instant::now(),
                period: Duration::from_secs_f64(1.0 / rate as f64),
            },
        };
        let pace = Pace { events, mode };
        let publisher = match target {
            Target::Ensemble(handle) => self.srv.spawn(publish_ensemble(handle, pace)),
            Target::Durable(queue, room, id) => self.srv.spawn(publish_durable(queue, room, id, pace)),
            Target::Memory(room, id) => self.srv.spawn(publish_baseline(room, id, pace)),
        };
        let results = match tokio::time::timeout(SCENARIO_TIMEOUT, futures::future::join_all(clients)).await {
            Ok(results) => results,
            Err(_) => {
                out.errors.push(format!("timed out after {SCENARIO_TIMEOUT:?}"));
                aborts.iter().for_each(|a| a.abort());
                publisher.abort();
                Vec::new()
            }
        };
        out.cpu = Cpu::sample().since(cpu0);
        let (commits1, events1) = self.store_stats(which);
        (out.commits, out.store_events) = (commits1 - commits0, events1 - events0);
        let _ = publisher.await;
        let mut done = t0;
        for r in results {
            match r {
                Ok(c) => {
                    if let Some(e) = c.error {
                        out.errors.push(e);
                    }
                    done = done.max(c.done_ns);
                    out.latencies_us.extend(c.latencies_us);
                    out.frame_bytes = out.frame_bytes.max(c.frame_bytes);
                }
                Err(e) => out.errors.push(format!("client task: {e}")),
            }
        }
        out.secs = (done - t0) as f64 / 1e9;
        // Let the server side of the connections end before the next scenario measures CPU.
        let idle_by = Instant::now() + Duration::from_secs(10);
        while self.connections(which) > 0 && Instant::now() < idle_by {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        out
    }
}
