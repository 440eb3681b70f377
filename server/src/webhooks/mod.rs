//! Webhooks: the registry (kept in the store, matched by the controller, see
//! `ensemble_runtime::webhooks`) and the dispatcher that delivers the outbox.
//!
//! Each enabled webhook has a worker of its own, so a receiver that hangs, answers slowly or
//! answers megabytes holds back only its own deliveries: a worker claims up to
//! `--webhook-concurrency` due deliveries (a claim is a lease in the store, so of several hosts
//! exactly one delivers each), posts them at once, each bounded by `--webhook-timeout-secs` and
//! reading nothing of the answer but its status, and settles them: delivered on a 2xx,
//! else tried again after an exponential backoff with jitter until `--webhook-retry-secs` after
//! the event, then failed. The registry is reloaded from the store every few seconds (other
//! hosts' changes) and at once after a change here.

pub mod net;
mod ranges;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use ensemble_runtime::store::{
    NewOutboxItem, OutboxAttempt, OutboxClaim, OutboxItem, Settle, Store, StoreError, WebhookRecord,
};
use ensemble_runtime::webhooks::{Subscription, Subscriptions};
use hmac::{Hmac, Mac};
use http_body_util::Full;
use hyper_rustls::ConfigBuilderExt;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::value::RawValue;
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

/// How often the registry is read again from the store (changes made on other hosts).
const RELOAD_EVERY: Duration = Duration::from_secs(5);
/// How often settled deliveries older than the retention are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The named limits and timings of delivery.
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    /// Deliver to loopback, private and link-local addresses too (tests, a LAN receiver).
    pub allow_private: bool,
    /// One attempt's limit, connecting and answering included.
    pub timeout: Duration,
    /// How long after its event a delivery is tried again before it is given up.
    pub retry_for: Duration,
    /// The first retry's delay; each next one doubles, up to `backoff_max`.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// Deliveries in flight per webhook.
    pub concurrency: usize,
    /// How often a worker looks for due deliveries when nothing woke it.
    pub poll: Duration,
    /// Most webhooks.
    pub max_webhooks: usize,
    /// Settled deliveries are kept this long (for `GET …/deliveries`).
    pub keep_settled: Duration,
    /// TLS for https receivers ([`tls_config`]).
    pub tls: Arc<rustls::ClientConfig>,
}

/// TLS for webhook connections: ring and the compiled-in Mozilla roots, given to the connector,
/// never installed as the process's default (that would change every other TLS client in it).
pub fn tls_config() -> anyhow::Result<Arc<rustls::ClientConfig>> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()?
        .with_webpki_roots()
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The webhooks of this server and their delivery.
pub struct Webhooks {
    store: Store,
    subs: Arc<Subscriptions>,
    pub config: WebhookConfig,
    /// This host's name in claims.
    host: String,
    /// Which addresses deliveries may reach (the URL check and the client's resolver).
    reach: net::Reach,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector<net::Resolver>>, Full<Bytes>>,
    /// The webhooks as last read, by id.
    hooks: Mutex<HashMap<String, Arc<WebhookRecord>>>,
    /// Running workers, by webhook id.
    workers: Mutex<HashMap<String, CancellationToken>>,
    reload: tokio::sync::Notify,
    /// Tells the other hosts of a change made here (set with several hosts).
    announce: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
}

/// The time now, in milliseconds since the epoch.
fn now_ms() -> i64 {
    ensemble_core::clock::unix_ms()
}

impl Webhooks {
    pub fn new(store: Store, subs: Arc<Subscriptions>, config: WebhookConfig, host: String) -> Self {
        let reach = net::Reach::new(config.allow_private);
        let mut http = HttpConnector::new_with_resolver(net::Resolver { reach: reach.clone() });
        http.enforce_http(false);
        http.set_connect_timeout(Some(config.timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*config.tls).clone())
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        // No redirects are followed (this client follows none), and no proxy is asked: a proxy
        // would connect where the resolver never looked.
        let client = Client::builder(TokioExecutor::new()).build(https);
        Self {
            store,
            subs,
            config,
            host,
            reach,
            client,
            hooks: Mutex::default(),
            workers: Mutex::default(),
            reload: tokio::sync::Notify::new(),
            announce: Mutex::default(),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Which addresses a webhook may reach.
    pub fn reach(&self) -> &net::Reach {
        &self.reach
    }

    /// Reads the webhooks again soon (another host changed them).
    pub fn changed(&self) {
        self.reload.notify_one();
    }

    /// What tells the other hosts of a change made here.
    pub fn on_change(&self, f: Arc<dyn Fn() + Send + Sync>) {
        *self.announce.lock().unwrap_or_else(|e| e.into_inner()) = Some(f);
    }

    /// After a change made here: the webhooks read again now, and the other hosts told.
    pub async fn changed_here(self: &Arc<Self>) -> Result<(), StoreError> {
        self.load().await?;
        let announce = self.announce.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(f) = announce {
            f();
        }
        Ok(())
    }

    /// Starts delivering: reloads the registry every few seconds (and on a change), keeps a worker
    /// per enabled webhook, prunes settled deliveries; until `stop`.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) {
        let this = self.clone();
        tokio::spawn(async move {
            let mut last_prune = Instant::now();
            loop {
                if let Err(e) = this.load().await {
                    tracing::warn!(error = %e, "reading the webhooks failed");
                }
                if last_prune.elapsed() >= PRUNE_EVERY {
                    last_prune = Instant::now();
                    let before = now_ms() - this.config.keep_settled.as_millis() as i64;
                    match this.store.outbox_prune(before).await {
                        Ok(n) if n > 0 => tracing::debug!(pruned = n, "pruned settled webhook deliveries"),
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "pruning webhook deliveries failed"),
                    }
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = this.reload.notified() => {}
                    () = tokio::time::sleep(RELOAD_EVERY) => {}
                }
            }
            for (_, w) in this.workers.lock().unwrap_or_else(|e| e.into_inner()).drain() {
                w.cancel();
            }
        });
    }

    /// Reads the webhooks, gives the controller the enabled ones, and starts or stops workers.
    pub async fn load(self: &Arc<Self>) -> Result<(), StoreError> {
        let all = self.store.webhooks().await?;
        let subs = all
            .iter()
            .filter(|h| h.enabled)
            .map(|h| Subscription { id: h.id.clone(), events: h.events.clone(), rooms: h.rooms.clone() })
            .collect();
        self.subs.set(subs);
        let enabled: Vec<String> = all.iter().filter(|h| h.enabled).map(|h| h.id.clone()).collect();
        *self.hooks.lock().unwrap_or_else(|e| e.into_inner()) =
            all.into_iter().map(|h| (h.id.clone(), Arc::new(h))).collect();
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        if workers.len() != enabled.len() || enabled.iter().any(|id| !workers.contains_key(id)) {
            tracing::info!(enabled = enabled.len(), "webhooks: {} enabled", enabled.len());
            metrics::gauge!("ensemble_webhooks_enabled").set(enabled.len() as f64);
        }
        workers.retain(|id, stop| {
            let keep = enabled.contains(id);
            if !keep {
                stop.cancel();
            }
            keep
        });
        for id in enabled {
            if !workers.contains_key(&id) {
                let stop = CancellationToken::new();
                workers.insert(id.clone(), stop.clone());
                tokio::spawn(self.clone().work(id, stop));
            }
        }
        Ok(())
    }

    fn hook(&self, id: &str) -> Option<Arc<WebhookRecord>> {
        self.hooks.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    /// One webhook's worker: claims due deliveries, delivers them together, settles them.
    async fn work(self: Arc<Self>, id: String, stop: CancellationToken) {
        // A claim outlasts an attempt, and a host that dies mid-delivery leaves it to be claimed
        // again soon after.
        let lease = self.config.timeout.as_millis() as i64 + 5_000;
        loop {
            let woken = self.subs.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let Some(hook) = self.hook(&id) else { return };
            let now = now_ms();
            let claim = OutboxClaim {
                webhook_id: id.clone(),
                host: self.host.clone(),
                now_ms: now,
                until_ms: now + lease,
                limit: self.config.concurrency.max(1),
            };
            let items = match self.store.outbox_claim(claim).await {
                Ok(items) => items,
                Err(e) => {
                    tracing::warn!(webhook = %id, error = %e, "claiming webhook deliveries failed");
                    Vec::new()
                }
            };
            if items.is_empty() {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = &mut woken => {}
                    () = tokio::time::sleep(self.config.poll) => {}
                }
                continue;
            }
            let attempts = items.into_iter().map(|item| {
                let hook = hook.clone();
                let this = self.clone();
                async move { this.attempt(&hook, item).await }
            });
            tokio::select! {
                () = stop.cancelled() => return,
                _ = futures::future::join_all(attempts) => {}
            }
        }
    }

    /// Posts one delivery and settles it.
    async fn attempt(&self, hook: &WebhookRecord, item: OutboxItem) {
        let started = Instant::now();
        let at_ms = now_ms();
        let outcome = self.post(hook, &item).await;
        let duration_ms = started.elapsed().as_millis() as i64;
        let (status, error) = match &outcome {
            Ok(status) => (Some(*status), None),
            Err((status, why)) => (*status, Some(why.clone())),
        };
        let delivered = outcome.is_ok();
        let attempt = OutboxAttempt { at_ms, status, error, duration_ms };
        let settle = if delivered {
            Settle::Delivered
        } else {
            let next = at_ms + backoff(&self.config, item.attempts).as_millis() as i64;
            if next > item.created_at_ms + self.config.retry_for.as_millis() as i64 {
                Settle::Failed
            } else {
                Settle::Retry { next_at_ms: next }
            }
        };
        metrics::counter!("ensemble_webhook_attempts_total", "outcome" => if delivered { "delivered" } else { "failed" })
            .increment(1);
        if matches!(settle, Settle::Failed) {
            tracing::warn!(webhook = %hook.id, delivery = item.id, attempts = item.attempts + 1, "webhook delivery given up");
        }
        match self.store.outbox_settle(item.id, &self.host, attempt, settle).await {
            Ok(true) => {}
            Ok(false) => tracing::debug!(delivery = item.id, "a delivery's claim was lost before it settled"),
            Err(e) => tracing::warn!(delivery = item.id, error = %e, "settling a webhook delivery failed"),
        }
    }

    /// Sends one delivery: the answer's status, or why there is none (with the status of a
    /// non-2xx answer, never its body: what a receiver says is not relayed to whoever lists the
    /// deliveries, so a webhook cannot be used to read a page).
    async fn post(&self, hook: &WebhookRecord, item: &OutboxItem) -> Result<u16, (Option<u16>, String)> {
        let url = self.reach.check_url(&hook.url).map_err(|e| (None, e))?;
        let body = payload(item).map_err(|e| (None, format!("the delivery's event is not JSON: {e}")))?;
        let ts = now_ms() / 1000;
        let request = hyper::Request::post(url.as_str())
            .header("content-type", "application/json")
            .header("user-agent", concat!("ensemble-webhooks/", env!("CARGO_PKG_VERSION")))
            .header("ensemble-webhook-id", &hook.id)
            .header("ensemble-event-id", &item.event_id)
            .header("ensemble-event-type", &item.kind)
            .header("ensemble-delivery-attempt", (item.attempts + 1).to_string())
            .header("ensemble-timestamp", ts.to_string())
            .header("ensemble-signature", format!("v1={}", sign(&hook.secret, ts, &body)))
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| (None, format!("the request could not be made: {e}")))?;
        let sent = async {
            let res = self.client.request(request).await.map_err(|e| (None, describe(&e)))?;
            // The body is never read: dropping the answer closes the connection.
            let status = res.status().as_u16();
            if res.status().is_success() { Ok(status) } else { Err((Some(status), format!("answered {status}"))) }
        };
        match tokio::time::timeout(self.config.timeout, sent).await {
            Ok(r) => r,
            Err(_) => Err((None, format!("no answer within {} s", self.config.timeout.as_secs_f64()))),
        }
    }

    /// Queues a test delivery (a `webhook.test` event) for `hook`: its id.
    pub async fn test(&self, hook: &WebhookRecord, nonce: &str) -> Result<(i64, String), StoreError> {
        let event_id = format!("test_{nonce}");
        let now = now_ms();
        let event = serde_json::json!({
            "type": "webhook.test",
            "eventId": event_id,
            "occurredAtMs": now,
            "payload": {"message": "a test delivery from Ensemble"},
        });
        let item = NewOutboxItem {
            webhook_id: hook.id.clone(),
            event_id: event_id.clone(),
            kind: "webhook.test".into(),
            room_id: None,
            session_id: None,
            event_json: event.to_string(),
            created_at_ms: now,
        };
        let id = self.store.outbox_insert(item).await?;
        self.subs.wake();
        Ok((id, event_id))
    }
}

/// The delay before the retry after `attempts` failed ones: doubling from the base, capped, and
/// drawn from its upper half so that receivers coming back are not hit by every sender at once.
pub fn backoff(config: &WebhookConfig, attempts: u32) -> Duration {
    let full = config.backoff_base.saturating_mul(1u32 << attempts.min(20)).min(config.backoff_max);
    let mut byte = [0u8; 2];
    let _ = getrandom::fill(&mut byte);
    let frac = f64::from(u16::from_le_bytes(byte)) / f64::from(u16::MAX);
    full.mul_f64(0.5 + frac / 2.0)
}

/// What a receiver gets: the delivery's envelope around the event as the room WebSocket sends it.
pub fn payload(item: &OutboxItem) -> Result<String, serde_json::Error> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Envelope<'a> {
        /// The event's id: the idempotency key.
        id: &'a str,
        #[serde(rename = "type")]
        kind: &'a str,
        webhook_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        room_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_id: Option<&'a str>,
        created_at_ms: i64,
        event: &'a RawValue,
    }
    let event: &RawValue = serde_json::from_str(&item.event_json)?;
    serde_json::to_string(&Envelope {
        id: &item.event_id,
        kind: &item.kind,
        webhook_id: &item.webhook_id,
        room_id: item.room_id.as_deref(),
        session_id: item.session_id.as_deref(),
        created_at_ms: item.created_at_ms,
        event,
    })
}

/// `hex(HMAC-SHA256(secret, "{timestamp}.{body}"))`.
pub fn sign(secret: &str, timestamp: i64, body: &str) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts any key"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    crate::access::tokens::hex(&mac.finalize().into_bytes())
}

/// Why a request failed, with its causes (the client's own text says little).
fn describe(e: &hyper_util::client::legacy::Error) -> String {
    let mut text = if e.is_connect() { "could not connect".to_owned() } else { "the request failed".to_owned() };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
