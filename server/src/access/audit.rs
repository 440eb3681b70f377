//! The audit trail: every mutating request (refused ones too) with who made it, the route, the
//! room and session, and the outcome. Requests hand their record to a writer that commits them
//! in batches; the queue is bounded, and a full queue makes the request wait rather than lose a
//! record.

use std::time::Duration;

use ensemble_runtime::store::{AuditRecord, Store};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Records waiting for the writer, at most.
pub const QUEUE: usize = 4096;
/// Records committed together, at most.
const BATCH: usize = 256;

#[derive(Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<AuditRecord>,
}

impl AuditLog {
    /// The log and the writer to spawn (it ends once every sender is gone and the queue is empty).
    pub fn new(store: Store) -> (AuditLog, impl std::future::Future<Output = ()>) {
        let (tx, rx) = mpsc::channel(QUEUE);
        (AuditLog { tx }, write(store, rx))
    }

    pub async fn record(&self, record: AuditRecord) {
        if self.tx.send(record).await.is_err() {
            tracing::warn!("the audit writer has stopped; a record was not kept");
        }
    }
}

async fn write(store: Store, mut rx: mpsc::Receiver<AuditRecord>) {
    let mut batch = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        let records = std::mem::take(&mut batch);
        // A failed commit is retried (the store's disk may come back); the queue fills meanwhile
        // and requests wait, so nothing is dropped.
        let mut delay = Duration::from_millis(50);
        while let Err(e) = store.audit_append(records.clone()).await {
            tracing::warn!(error = %e, "writing the audit trail failed; retrying");
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(5));
        }
    }
}

/// Removes records older than `retention`, now and then every hour, until `stop`.
pub async fn prune(store: Store, retention: Duration, stop: CancellationToken) {
    loop {
        let before = super::tokens::now_ms() - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        match store.audit_prune(before).await {
            Ok(n) if n > 0 => tracing::info!(removed = n, "pruned the audit trail"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "pruning the audit trail failed"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(Duration::from_secs(3600)) => {}
        }
    }
}
