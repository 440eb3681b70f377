//! The audit trail: every mutating request (refused ones too) with who made it, the route, the
//! room and session, and the outcome. Requests hand their record to a writer that commits them
//! in batches; the queue is bounded, and a full queue makes the request wait rather than lose a
//! record.

use std::time::Duration;

use ensemble_runtime::store::{AuditRecord, Store};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Records waiting for the writer, at most.
pub const QUEUE: usize = 4096;
/// Records committed together, at most.
const BATCH: usize = 256;
/// After the first record of a batch, how long the writer gathers more. Each batch dirties the
/// trail's last page and its counter row in the database's log; gathered, a burst of requests
/// costs one such write instead of one per commit (a fifth of a session start's instructions).
const LINGER: Duration = Duration::from_millis(100);

/// What the writer is sent: a record, or a request to commit what it has now.
enum Msg {
    Record(Box<AuditRecord>),
    Flush(oneshot::Sender<()>),
}

/// Refusals of requests without a valid token are kept at this many a second (and bursts of
/// [`ANONYMOUS_BURST`]); beyond it they are only counted (`ensemble_audit_anonymous_dropped_total`),
/// so that someone without a token cannot fill the disk one refused request at a time.
pub const ANONYMOUS_PER_SEC: f64 = 1.0;
pub const ANONYMOUS_BURST: f64 = 60.0;

#[derive(Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Msg>,
    /// The token bucket of anonymous records: (tokens, when last filled).
    anonymous: std::sync::Arc<std::sync::Mutex<(f64, std::time::Instant)>>,
}

impl AuditLog {
    /// The log and the writer to spawn (it ends once every sender is gone and the queue is empty).
    pub fn new(store: Store) -> (AuditLog, impl std::future::Future<Output = ()>) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let anonymous = std::sync::Arc::new(std::sync::Mutex::new((ANONYMOUS_BURST, std::time::Instant::now())));
        (AuditLog { tx, anonymous }, write(store, rx))
    }

    /// May a refusal without a valid token be recorded now (see [`ANONYMOUS_PER_SEC`])?
    pub fn admit_anonymous(&self) -> bool {
        let mut b = self.anonymous.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        b.0 = (b.0 + now.duration_since(b.1).as_secs_f64() * ANONYMOUS_PER_SEC).min(ANONYMOUS_BURST);
        b.1 = now;
        if b.0 >= 1.0 {
            b.0 -= 1.0;
            true
        } else {
            metrics::counter!("ensemble_audit_anonymous_dropped_total").increment(1);
            false
        }
    }

    pub async fn record(&self, record: AuditRecord) {
        if self.tx.send(Msg::Record(Box::new(record))).await.is_err() {
            tracing::warn!("the audit writer has stopped; a record was not kept");
        }
    }

    /// Returns once every record handed over before is committed (at shutdown, before the store
    /// closes; in tests).
    pub async fn flush(&self) {
        let (done, committed) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = committed.await;
        }
    }
}

async fn write(store: Store, mut rx: mpsc::Receiver<Msg>) {
    let mut batch: Vec<Msg> = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        let deadline = tokio::time::Instant::now() + LINGER;
        while batch.len() < BATCH && !batch.iter().any(|m| matches!(m, Msg::Flush(_))) {
            let room = BATCH - batch.len();
            match tokio::time::timeout_at(deadline, rx.recv_many(&mut batch, room)).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let mut records = Vec::with_capacity(batch.len());
        let mut flushes = Vec::new();
        for m in batch.drain(..) {
            match m {
                Msg::Record(r) => records.push(*r),
                Msg::Flush(done) => flushes.push(done),
            }
        }
        // A failed commit is retried (the store's disk may come back); the queue fills meanwhile
        // and requests wait, so nothing is dropped.
        let mut delay = Duration::from_millis(50);
        while !records.is_empty()
            && let Err(e) = store.audit_append(records.clone()).await
        {
            tracing::warn!(error = %e, "writing the audit trail failed; retrying");
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(5));
        }
        for done in flushes {
            let _ = done.send(());
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
