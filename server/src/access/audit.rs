//! The audit trail: every mutating request (refused ones too) with who made it, the route, the
//! room and session, and the outcome. Requests hand their record to a writer that commits them
//! in batches; the queue is bounded, and a full queue makes the request wait rather than lose a
//! record.
//!
//! What a caller controls is kept bounded: refusals are kept at a bounded rate per token (and for
//! all requests without a valid token together) and beyond it only counted, and a path id that is
//! not a valid id is kept as a fixed marker and a short hash of it, never as sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::Method;
use ensemble_core::limits::check_id;
use ensemble_runtime::actor::Actor;
use ensemble_runtime::store::{AuditRecord, Store};
use sha2::{Digest, Sha256};
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

/// What a path id that is not a valid id is kept as, followed by ` sha256:` and the first
/// [`MARK_HASH_HEX`] hex digits of its SHA-256 (so repeats of one id can still be told apart).
/// Ids never contain a space or a parenthesis, so it cannot be mistaken for one.
pub const INVALID_ID_MARKER: &str = "(invalid id)";
const MARK_HASH_HEX: usize = 12;
/// Token buckets kept before full ones (nobody refused lately) are forgotten.
const BUCKETS_KEPT: usize = 1024;

/// How many refusals are kept: per token, and for requests without a valid token together, a
/// bucket of `burst` refilled at `per_min` a minute; beyond it they are only counted
/// (`ensemble_audit_anonymous_dropped_total`, `ensemble_audit_refusals_dropped_total`), so that a
/// caller cannot fill the disk one refused request at a time.
#[derive(Clone, Copy, Debug)]
pub struct RefusalLimits {
    pub per_min: u32,
    pub burst: u32,
}

impl Default for RefusalLimits {
    fn default() -> Self {
        Self { per_min: 60, burst: 60 }
    }
}

/// One bucket: (what is left, when it was last filled).
type Bucket = (f64, Instant);

/// The token buckets of refusals: one for requests without a valid token, one per token id.
struct Buckets {
    limits: RefusalLimits,
    anonymous: Bucket,
    by_token: HashMap<String, Bucket>,
}

impl Buckets {
    fn take(limits: RefusalLimits, b: &mut Bucket, now: Instant) -> bool {
        let burst = f64::from(limits.burst);
        b.0 = (b.0 + now.saturating_duration_since(b.1).as_secs_f64() * f64::from(limits.per_min) / 60.0).min(burst);
        b.1 = now;
        if b.0 >= 1.0 {
            b.0 -= 1.0;
            true
        } else {
            false
        }
    }

    /// May one more refusal of `token` (None: no valid token) be kept now?
    fn admit(&mut self, token: Option<&str>, now: Instant) -> bool {
        let limits = self.limits;
        let Some(token) = token else { return Self::take(limits, &mut self.anonymous, now) };
        if self.by_token.len() >= BUCKETS_KEPT && !self.by_token.contains_key(token) {
            // A full bucket is the same as none.
            let burst = f64::from(limits.burst);
            let refill = f64::from(limits.per_min) / 60.0;
            self.by_token.retain(|_, b| b.0 + now.saturating_duration_since(b.1).as_secs_f64() * refill < burst);
        }
        let b = self.by_token.entry(token.to_owned()).or_insert((f64::from(limits.burst), now));
        Self::take(limits, b, now)
    }
}

/// The request an audit record describes, before its outcome.
pub struct Attempt {
    /// Who made it: a valid token, or one that was revoked or expired (None: no token known).
    pub actor: Option<Arc<Actor>>,
    pub method: Method,
    /// The route template (None: no route matched).
    pub route: Option<String>,
    /// As the path named them (percent-decoded), checked here.
    pub room: Option<String>,
    pub session: Option<String>,
}

#[derive(Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Msg>,
    buckets: Arc<Mutex<Buckets>>,
}

impl AuditLog {
    /// The log and the writer to spawn (it ends once every sender is gone and the queue is empty).
    pub fn new(store: Store, limits: RefusalLimits) -> (AuditLog, impl std::future::Future<Output = ()>) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let buckets =
            Buckets { limits, anonymous: (f64::from(limits.burst), Instant::now()), by_token: HashMap::new() };
        (AuditLog { tx, buckets: Arc::new(Mutex::new(buckets)) }, write(store, rx))
    }

    /// Records a mutating request's outcome: always when it was not refused, else within the
    /// refusal limits of who made it (see [`RefusalLimits`]).
    pub async fn request(&self, attempt: Attempt, status: u16, code: Option<String>) {
        let token = attempt.actor.as_ref().map(|a| a.token_id.as_str());
        let refused = (400..500).contains(&status);
        if refused && !self.buckets.lock().unwrap_or_else(|e| e.into_inner()).admit(token, Instant::now()) {
            match token {
                None => metrics::counter!("ensemble_audit_anonymous_dropped_total").increment(1),
                Some(_) => metrics::counter!("ensemble_audit_refusals_dropped_total").increment(1),
            }
            return;
        }
        self.record(AuditRecord {
            seq: 0,
            at_ms: super::tokens::now_ms(),
            token_id: attempt.actor.as_ref().map(|a| a.token_id.clone()),
            actor_name: attempt.actor.as_ref().map(|a| a.name.clone()),
            method: method_name(&attempt.method),
            route: attempt.route.unwrap_or_else(|| "(no route)".to_owned()),
            room_id: attempt.room.map(kept_id),
            session_id: attempt.session.map(kept_id),
            status,
            code,
        })
        .await;
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

/// A path id as the trail keeps it: as it is when it is a valid id, else [`INVALID_ID_MARKER`] and
/// a short hash (a 60 KB id costs the trail some forty bytes).
pub fn kept_id(id: String) -> String {
    if check_id("id", &id).is_ok() {
        return id;
    }
    let hash = super::tokens::hex(&Sha256::digest(id.as_bytes()));
    format!("{INVALID_ID_MARKER} sha256:{}", &hash[..MARK_HASH_HEX])
}

/// A method as the trail keeps it: a standard one by name, any other (any length) as `(other)`.
fn method_name(method: &Method) -> String {
    const STANDARD: [Method; 9] = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    if STANDARD.contains(method) { method.as_str().to_owned() } else { "(other)".to_owned() }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_id_is_kept_and_any_other_is_a_marker_with_a_short_hash() {
        assert_eq!(kept_id("room-1.a_b~c:d".into()), "room-1.a_b~c:d");
        let long = kept_id("x".repeat(60 * 1024));
        assert!(long.starts_with("(invalid id) sha256:") && long.len() == INVALID_ID_MARKER.len() + 8 + 12, "{long}");
        assert_eq!(long, kept_id("x".repeat(60 * 1024)), "the same id, the same mark");
        assert_ne!(long, kept_id("y".repeat(60 * 1024)));
        for bad in ["", "..", "a b", "é", "a/b", &"a".repeat(129)] {
            assert!(kept_id(bad.to_owned()).starts_with(INVALID_ID_MARKER), "{bad:?}");
        }
        assert_eq!(method_name(&Method::DELETE), "DELETE");
        assert_eq!(method_name(&Method::from_bytes("X".repeat(5000).as_bytes()).unwrap()), "(other)");
    }

    #[test]
    fn refusals_are_kept_per_token_within_a_burst_and_a_rate_each() {
        let limits = RefusalLimits { per_min: 60, burst: 3 };
        let mut b = Buckets { limits, anonymous: (3.0, Instant::now()), by_token: HashMap::new() };
        let t0 = Instant::now();
        let kept = |b: &mut Buckets, token: Option<&str>, at: Instant| (0..10).filter(|_| b.admit(token, at)).count();
        assert_eq!(kept(&mut b, Some("tok_a"), t0), 3);
        // Another token, and the requests without one, have buckets of their own.
        assert_eq!(kept(&mut b, Some("tok_b"), t0), 3);
        assert_eq!(kept(&mut b, None, t0), 3);
        assert_eq!(kept(&mut b, Some("tok_a"), t0), 0);
        // One a second comes back.
        assert_eq!(kept(&mut b, Some("tok_a"), t0 + Duration::from_secs(2)), 2);
        assert_eq!(kept(&mut b, Some("tok_a"), t0 + Duration::from_secs(60)), 3, "never more than the burst");
    }

    #[test]
    fn full_buckets_are_forgotten_so_the_map_stays_bounded() {
        let limits = RefusalLimits { per_min: 60, burst: 2 };
        let mut b = Buckets { limits, anonymous: (2.0, Instant::now()), by_token: HashMap::new() };
        let t0 = Instant::now();
        for i in 0..BUCKETS_KEPT {
            assert!(b.admit(Some(&format!("tok_{i}")), t0));
        }
        assert_eq!(b.by_token.len(), BUCKETS_KEPT);
        // Later, every bucket has filled up again: the next new token finds room.
        assert!(b.admit(Some("tok_new"), t0 + Duration::from_secs(5)));
        assert_eq!(b.by_token.len(), 1);
        assert!(b.admit(Some("tok_new"), t0 + Duration::from_secs(5)));
        assert!(!b.admit(Some("tok_new"), t0 + Duration::from_secs(5)), "its own bucket is kept");
    }
}
