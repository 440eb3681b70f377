//! What the bench measures with: one monotonic clock shared by publishers and clients, CPU time per
//! thread role from `/proc/self/task`, and latency percentiles.

use std::sync::OnceLock;
use std::time::Instant;

pub fn base_instant() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// Monotonic nanoseconds since the bench started (shared by publishers and clients).
pub fn now_ns() -> u64 {
    base_instant().elapsed().as_nanos() as u64
}

/// Clock ticks per second of `/proc/*/stat` times.
pub fn clk_tck() -> u64 {
    static TCK: OnceLock<u64> = OnceLock::new();
    *TCK.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|t: &u64| *t > 0)
            .unwrap_or(100)
    })
}

/// CPU time (µs) of this process's threads, by role.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu {
    /// `srv-*`, the store's writer and readers.
    pub server: u64,
    /// The store writer alone (Ensemble's or the durable baseline's: one runs at a time).
    pub writer: u64,
    pub client: u64,
    pub other: u64,
}

impl Cpu {
    pub fn sample() -> Cpu {
        let mut cpu = Cpu::default();
        let per_tick = 1_000_000 / clk_tck();
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return cpu;
        };
        for entry in dir.flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid ...`: comm may contain spaces and parentheses.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let comm = &stat[open + 1..close];
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            // Fields 14 and 15 of the line (utime, stime) are 11 and 12 after the comm.
            let ticks: u64 = [11, 12].iter().filter_map(|i| fields.get(*i)?.parse::<u64>().ok()).sum();
            let us = ticks * per_tick;
            // The kernel truncates thread names to 15 bytes: `ensemble-store-writer` is `ensemble-store-`.
            if comm.starts_with("ensemble-store") || comm.starts_with("dur-writer") {
                cpu.server += us;
                cpu.writer += us;
            } else if comm.starts_with("srv-") || comm.starts_with("ensemble-read") {
                // The store's readers (`ensemble-read-N`) serve the server, not the writer.
                cpu.server += us;
            } else if comm.starts_with("cli-") {
                cpu.client += us;
            } else {
                cpu.other += us;
            }
        }
        cpu
    }

    pub fn since(self, before: Cpu) -> Cpu {
        Cpu {
            server: self.server.saturating_sub(before.server),
            writer: self.writer.saturating_sub(before.writer),
            client: self.client.saturating_sub(before.client),
            other: self.other.saturating_sub(before.other),
        }
    }
}

/// Latency percentiles in ms.
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Latency {
    pub fn of(samples_us: &[u32]) -> Latency {
        let mut v = samples_us.to_vec();
        v.sort_unstable();
        let at = |p: f64| {
            if v.is_empty() {
                return f64::NAN;
            }
            let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
            f64::from(v[i.min(v.len() - 1)]) / 1000.0
        };
        Latency { p50: at(50.0), p99: at(99.0), p999: at(99.9), max: at(100.0) }
    }
}
