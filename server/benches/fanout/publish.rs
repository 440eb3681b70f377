//! What both publishers send and when: one `message.delta` of one session whose text carries its
//! publish time, paced by a window of the slowest subscriber or at a fixed rate.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub const SESSION: &str = "bench";
pub const ITEM: &str = "m1";
/// Text after the timestamp. The `event` object is then ~220 bytes, most of it the envelope (UUID
/// `eventId`, `roomId`, `sessionId`, `occurredAtMs`, ...), the frame ~250.
const PAD: &str = "delta";

/// The event text: the publish time between `@`s, then filler.
pub fn stamp_text(ns: u64) -> String {
    format!("@{ns}@ {PAD}")
}

/// When the publisher may publish event `i`: as fast as the window allows, or at a fixed rate.
#[derive(Clone)]
pub struct Pace {
    pub events: u64,
    pub mode: PaceMode,
}

#[derive(Clone)]
pub enum PaceMode {
    /// At most `window` events ahead of the slowest subscriber.
    Window { window: u64, received: Arc<Vec<AtomicU64>> },
    /// Event `i` at `start + i / rate`.
    Rate { start: tokio::time::Instant, period: Duration },
}

impl Pace {
    pub async fn next(&self, i: u64) -> Option<()> {
        if i >= self.events {
            return None;
        }
        match &self.mode {
            PaceMode::Window { window, received } => {
                if i.is_multiple_of(64) {
                    loop {
                        let slowest = received.iter().map(|r| r.load(Ordering::Relaxed)).min().unwrap_or(i);
                        if i.saturating_sub(slowest) + 64 <= *window {
                            break;
                        }
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    // The baseline's broadcast never yields; give the other tasks of this worker a turn
                    // (in both publishers, alike).
                    tokio::task::yield_now().await;
                }
            }
            PaceMode::Rate { start, period } => {
                tokio::time::sleep_until(*start + period.mul_f64(i as f64)).await;
            }
        }
        Some(())
    }
}
