//! A byte budget for a queue whose capacity counts items of any size: a producer is charged what
//! it puts in and waits while the queue holds the budget or more; the consumer gives the bytes
//! back as it takes them out. The store queue (`--store-queue-bytes`: an agent's facts do not wait
//! for their commit) and an agent connection's incoming JSON-RPC queue (`--rpc-queue-bytes`) use
//! it, where the count alone would let items of up to `--max-event-bytes` or `--rpc-max-line-bytes`
//! pile up to GiBs.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// See the module. Shared between the producers and the consumer of one queue.
pub struct ByteBudget {
    queued: AtomicUsize,
    limit: usize,
    freed: Notify,
}

impl ByteBudget {
    pub fn new(limit: usize) -> Self {
        // A zero budget would admit nothing, ever.
        Self { queued: AtomicUsize::new(0), limit: limit.max(1), freed: Notify::new() }
    }

    /// Waits while the queue holds the budget or more, then charges `bytes`. An item larger than
    /// the whole budget still passes once the queue is below it, so nothing waits forever; the
    /// queue holds at most the budget plus one item per producer admitted at the same moment.
    pub async fn admit(&self, bytes: usize) {
        loop {
            if self.try_admit(bytes) {
                return;
            }
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the second look, so a release between the two wakes it.
            freed.as_mut().enable();
            if self.try_admit(bytes) {
                return;
            }
            freed.await;
        }
    }

    /// [`Self::admit`] without waiting: false (nothing charged) while the queue holds the budget.
    pub fn try_admit(&self, bytes: usize) -> bool {
        if self.queued.load(Ordering::Acquire) >= self.limit {
            return false;
        }
        if bytes > 0 {
            self.queued.fetch_add(bytes, Ordering::AcqRel);
        }
        true
    }

    /// The consumer took `bytes` out of the queue (or a charge was not used).
    pub fn release(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let before = self.queued.fetch_sub(bytes, Ordering::AcqRel);
        // Producers wait only while the queue is at or over the budget; below it nobody waits.
        if before >= self.limit {
            self.freed.notify_waiters();
        }
    }

    /// Bytes charged and not yet given back.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use super::*;

    fn poll_once<F: std::future::Future>(f: std::pin::Pin<&mut F>) -> std::task::Poll<F::Output> {
        f.poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    }

    #[tokio::test]
    async fn a_publisher_waits_while_the_queue_holds_the_budget_and_goes_once_it_drains() {
        let budget = ByteBudget::new(100);
        budget.admit(60).await;
        // Below the budget: admitted, even though it takes the queue over it.
        budget.admit(60).await;
        assert_eq!(budget.queued(), 120);
        let mut waiting = pin!(budget.admit(10));
        assert!(poll_once(waiting.as_mut()).is_pending(), "a queue over its budget admits nothing");
        budget.release(10);
        assert!(poll_once(waiting.as_mut()).is_pending(), "still at 110 of 100");
        budget.release(60);
        tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
            .await
            .expect("admitted once below the budget");
        assert_eq!(budget.queued(), 60);
    }

    #[tokio::test]
    async fn one_operation_larger_than_the_budget_passes_an_empty_queue() {
        let budget = ByteBudget::new(100);
        budget.admit(1_000).await;
        let mut waiting = pin!(budget.admit(0));
        assert!(poll_once(waiting.as_mut()).is_pending(), "even an uncharged publisher waits");
        budget.release(1_000);
        tokio::time::timeout(std::time::Duration::from_secs(10), waiting).await.expect("admitted");
        assert_eq!(budget.queued(), 0);
    }
}
