//! Whether a provider can be used right now, as its last probe found it, and when to probe again.
//!
//! A provider probes its binary once before the server listens ([`super::binary::probe`]). A
//! failure found at start-up (the binary went away, the handshake failed) marks it unavailable
//! with `retry`; once [`AvailabilityCell::cooldown`] has passed, the next look at the state probes
//! again in the background, so a fixed installation comes back without a restart. A probe that
//! found the binary unusable (`retry: false`) stands until the next explicit probe.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// tokio's clock: what the tests pause and advance (outside a runtime it is the system's).
use tokio::time::Instant;

/// What the last probe (or start-up) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// Never probed.
    Unknown,
    Available {
        /// The version the binary reported (`x.y.z`).
        version: String,
    },
    Unavailable {
        /// Why, for the operator.
        reason: String,
        since: Instant,
        /// A start-up failure: probe again after the cooldown.
        retry: bool,
    },
}

impl Availability {
    /// Unavailable for good (until the next explicit probe).
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self::Unavailable { reason: reason.into(), since: Instant::now(), retry: false }
    }

    /// Whether a look at this state should probe again.
    pub fn stale(&self, cooldown: Duration) -> bool {
        match self {
            Self::Unknown => true,
            Self::Available { .. } => false,
            Self::Unavailable { since, retry, .. } => *retry && since.elapsed() > cooldown,
        }
    }
}

/// A provider's availability, shared between its adapter and the background probes.
#[derive(Clone, Debug)]
pub struct AvailabilityCell {
    state: Arc<Mutex<Availability>>,
    cooldown: Duration,
}

impl AvailabilityCell {
    /// Unknown until the first probe; a start-up failure is probed again after `cooldown`.
    pub fn new(cooldown: Duration) -> Self {
        Self { state: Arc::new(Mutex::new(Availability::Unknown)), cooldown }
    }

    pub fn cooldown(&self) -> Duration {
        self.cooldown
    }

    pub fn get(&self) -> Availability {
        self.state.lock().map(|a| a.clone()).unwrap_or(Availability::Unknown)
    }

    pub fn set(&self, state: Availability) {
        if let Ok(mut a) = self.state.lock() {
            *a = state;
        }
    }

    /// A start-up failure: unavailable now, probed again once the cooldown has passed.
    pub fn failed(&self, reason: impl Into<String>) {
        self.set(Availability::Unavailable { reason: reason.into(), since: Instant::now(), retry: true });
    }

    /// The state as it is. When it is stale (never probed, or a start-up failure older than the
    /// cooldown) and a tokio runtime is at hand, `probe` runs in the background and its answer
    /// replaces the state; this call never waits for it.
    pub fn current<F, Fut>(&self, probe: F) -> Availability
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Availability> + Send + 'static,
    {
        let state = self.get();
        if state.stale(self.cooldown)
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let fresh = probe();
            let cell = self.clone();
            handle.spawn(async move { cell.set(fresh.await) });
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state once the background probe has run (the runtime is single-threaded: yielding lets
    /// the spawned probe run).
    async fn settled(cell: &AvailabilityCell, until: impl Fn(&Availability) -> bool) -> Availability {
        for _ in 0..100 {
            let a = cell.get();
            if until(&a) {
                return a;
            }
            tokio::task::yield_now().await;
        }
        panic!("availability never settled: {:?}", cell.get());
    }

    #[tokio::test(start_paused = true)]
    async fn an_unprobed_provider_is_probed_in_the_background() {
        let cell = AvailabilityCell::new(Duration::from_secs(10));
        let seen = cell.current(|| async { Availability::Available { version: "1.2.3".into() } });
        assert_eq!(seen, Availability::Unknown, "the look itself does not wait");
        let a = settled(&cell, |a| matches!(a, Availability::Available { .. })).await;
        assert_eq!(a, Availability::Available { version: "1.2.3".into() });
    }

    #[tokio::test(start_paused = true)]
    async fn a_start_up_failure_is_probed_again_only_after_the_cooldown() {
        let cell = AvailabilityCell::new(Duration::from_millis(50));
        cell.failed("the handshake failed");
        let probe = || async { Availability::Available { version: "1.0.0".into() } };
        assert!(matches!(cell.current(probe), Availability::Unavailable { retry: true, .. }));
        tokio::time::advance(Duration::from_millis(20)).await;
        cell.current(probe);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(matches!(cell.get(), Availability::Unavailable { .. }), "still cooling down: not probed");
        tokio::time::advance(Duration::from_millis(60)).await;
        cell.current(probe);
        settled(&cell, |a| matches!(a, Availability::Available { .. })).await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_unusable_binary_is_not_probed_again_by_itself() {
        let cell = AvailabilityCell::new(Duration::ZERO);
        cell.set(Availability::unavailable("too old"));
        tokio::time::advance(Duration::from_secs(3600)).await;
        cell.current(|| async { Availability::Available { version: "9.9.9".into() } });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(matches!(cell.get(), Availability::Unavailable { retry: false, .. }));
    }

    #[test]
    fn without_a_runtime_the_state_is_only_read() {
        let cell = AvailabilityCell::new(Duration::ZERO);
        assert_eq!(cell.current(|| async { Availability::Unknown }), Availability::Unknown);
    }
}
