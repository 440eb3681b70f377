//! Time and ids, injectable so tests can control them.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the unix epoch.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The controller's source of time. Timestamps it hands out never go backwards, so events of one
/// session are ordered by `occurredAtMs` as well as by `seq`.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;
}

/// Wall-clock time, made monotonic.
#[derive(Debug, Default)]
pub struct SystemClock {
    last: AtomicI64,
}

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        let now = unix_ms();
        let prev = self.last.fetch_max(now, Ordering::Relaxed);
        prev.max(now)
    }
}

/// A new time-ordered id (UUIDv7).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
