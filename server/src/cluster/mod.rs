//! Several hosts on one PostgreSQL database, joined by NATS (`--nats-url`).
//!
//! - **Room frames.** Every frame this host commits (and every side-conversation frame it
//!   publishes) goes out on `ensemble.room.<hex room id>`; every host delivers the frames of the
//!   other hosts to its own room sockets. Core NATS delivers at most once, so a reader that sees a
//!   seq gap fills it from the database (`RoomCursor`), and a periodic sweep compares each watched
//!   room's database head with what its sockets got, delivering what NATS lost at the end of a
//!   burst (`RoomCursor` drops duplicates by seq).
//! - **Leases.** This host renews its lease every third of `--lease-secs` and claims the sessions
//!   of hosts whose lease expired (`Controller::take_over_orphans`). A host that cannot renew in
//!   time stops its agents and forgets its sessions, since another host may already own them.
//! - **Forwarding.** A request for a session another host owns travels to that host on
//!   `ensemble.host.<host id>.http` ([`forward`]) and is answered with that host's status and body.
//! - **Authentication.** Hosts connect to NATS with `--nats-credentials`, and every forwarded
//!   request, answer and frame carries a MAC keyed by `--cluster-secret-file` ([`auth`]): a
//!   message without a valid one is dropped and counted, never acted on.

pub mod auth;
pub mod forward;
mod relay;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use async_nats::connection::State as NatsState;
use bytes::Bytes;
use ensemble_runtime::bus::RoomHub;
use ensemble_runtime::controller::Controller;
use ensemble_runtime::cursor;
use futures::StreamExt;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use relay::{NatsRelay, frame_headers};

/// This host's lease, as the lease loop sees it.
enum LeaseState {
    /// Renewed at `renewed` (by this host's clock).
    Held { renewed: Instant },
    /// Given up (renewals failed or the lease was written off): no sessions held, registering again.
    Lost,
}

/// What the cluster's background tasks and the forwarding need.
pub struct Node {
    pub client: async_nats::Client,
    pub host_id: String,
    pub lease: Duration,
    /// Longest a forwarded request waits for the owner's answer (then 504).
    pub forward_timeout: Duration,
    /// Largest body a forwarded request may carry (the server's body limit).
    pub max_body_bytes: usize,
    /// How often watched rooms are compared with the database's heads.
    gap_sweep: Duration,
    /// Wakes the gap sweep at once (NATS reconnected: anything may have been lost meanwhile).
    sweep_now: Arc<Notify>,
    /// The MAC keys of the messages between hosts.
    keys: Arc<auth::ClusterKeys>,
    /// Longest a message's timestamp may be off this host's clock.
    max_skew: Duration,
    /// Nonces of the forwarded requests accepted within the window.
    replays: auth::ReplayCache,
}

/// The cluster's settings, from the command line.
pub struct Settings {
    pub nats_url: String,
    pub host_id: String,
    pub lease: Duration,
    pub outbox: usize,
    pub gap_sweep: Duration,
    pub forward_timeout: Duration,
    pub max_body_bytes: usize,
    /// `--nats-credentials`, read (None: anonymous).
    pub credentials: Option<auth::NatsCredentials>,
    /// `--cluster-secret-file`, read.
    pub keys: Arc<auth::ClusterKeys>,
    pub max_skew: Duration,
    pub replay_cache: usize,
}

/// The subject of a room's frames (hex: room ids may hold `.`, a NATS token separator). Built for
/// every frame a host commits, so without a `format!` per byte.
pub fn room_subject(room: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(14 + room.len() * 2);
    s.push_str("ensemble.room.");
    for b in room.bytes() {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

/// The room id a frame subject names.
fn subject_room(subject: &str) -> Option<String> {
    let hex = subject.strip_prefix("ensemble.room.")?;
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> =
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect();
    String::from_utf8(bytes?).ok()
}

/// The subject a host answers forwarded requests on.
/// Where hosts say that tokens changed (made or revoked).
const TOKENS_SUBJECT: &str = "ensemble.tokens";
/// Tokens are read again at least this often with several hosts, announcement or not.
const TOKENS_RELOAD_EVERY: Duration = Duration::from_secs(5);
/// And at most this often, however many announcements come.
const TOKENS_RELOAD_MIN: Duration = Duration::from_millis(100);
/// Where hosts say that webhooks changed (each host also reads them every few seconds).
const WEBHOOKS_SUBJECT: &str = "ensemble.webhooks";

fn host_subject(host: &str) -> String {
    format!("ensemble.host.{host}.http")
}

/// Connects to NATS (retrying in the background if it is down at start) and hooks the relay into
/// the hub, before the store opens, so no committed frame misses it.
pub async fn connect(settings: &Settings, hub: &Arc<RoomHub>) -> anyhow::Result<Arc<Node>> {
    let sweep_now = Arc::new(Notify::new());
    let wake = sweep_now.clone();
    let mut options = async_nats::ConnectOptions::new();
    if let Some(credentials) = &settings.credentials {
        options = credentials.apply(options).context("applying --nats-credentials")?;
    }
    let client = options
        .name(format!("ensemble/{}", settings.host_id))
        // This host's own frames are delivered to its sockets locally already.
        .no_echo()
        .retry_on_initial_connect()
        .max_reconnects(None)
        .event_callback(move |event| {
            let wake = wake.clone();
            async move {
                match event {
                    async_nats::Event::Connected => {
                        tracing::info!("nats connected");
                        wake.notify_one();
                    }
                    async_nats::Event::Disconnected => tracing::warn!("nats disconnected; reconnecting"),
                    // Wrong or missing --nats-credentials, among others: said loudly, since it
                    // does not heal by itself.
                    async_nats::Event::ServerError(e) => tracing::error!(error = %e, "nats server error"),
                    other => tracing::debug!(event = %other, "nats event"),
                }
            }
        })
        .connect(settings.nats_url.as_str())
        .await
        .context("connecting to NATS")?;
    let relay = NatsRelay::start(client.clone(), settings.outbox, settings.keys.clone());
    hub.set_relay(relay);
    Ok(Arc::new(Node {
        client,
        host_id: settings.host_id.clone(),
        lease: settings.lease,
        forward_timeout: settings.forward_timeout,
        max_body_bytes: settings.max_body_bytes,
        gap_sweep: settings.gap_sweep,
        sweep_now,
        keys: settings.keys.clone(),
        max_skew: settings.max_skew,
        replays: auth::ReplayCache::new(settings.max_skew, settings.replay_cache),
    }))
}

impl Node {
    /// Whether NATS is connected (for `/readyz`).
    pub fn nats_connected(&self) -> bool {
        self.client.connection_state() == NatsState::Connected
    }

    /// Registers this host's lease (before recovering its own sessions).
    pub async fn register(&self, controller: &Controller) -> anyhow::Result<()> {
        let leases = controller.store().leases().context("several hosts need the PostgreSQL store")?;
        leases.register(&self.host_id, self.lease).await.context("registering this host's lease")?;
        Ok(())
    }

    /// Starts the background tasks: frames from other hosts, the gap sweep, the lease, and the
    /// answering of forwarded requests with `app`. They end with `stop`.
    pub async fn spawn(
        self: &Arc<Self>,
        controller: Controller,
        app: axum::Router,
        stop: CancellationToken,
    ) -> anyhow::Result<()> {
        let frames = self.client.subscribe("ensemble.room.*").await.context("subscribing to room frames")?;
        let requests = self.client.subscribe(host_subject(&self.host_id)).await.context("subscribing to requests")?;
        let receiver = relay::Receiver::new(
            controller.hub().clone(),
            controller.store().clone(),
            self.keys.clone(),
            self.max_skew,
        );
        tokio::spawn(receiver.run(frames, stop.clone()));
        tokio::spawn(self.clone().sweep(controller.clone(), stop.clone()));
        tokio::spawn(self.clone().keep_lease(controller, stop.clone()));
        tokio::spawn(forward::answer(self.clone(), requests, app, stop));
        Ok(())
    }

    /// Announces this host's webhook changes on [`WEBHOOKS_SUBJECT`], and reads the webhooks again
    /// on another host's announcement, so a webhook made anywhere matches events on every host at
    /// once (the webhooks' own tick reads them every few seconds should an announcement be lost).
    /// Like the tokens', an announcement carries nothing and only makes the host look.
    pub async fn watch_webhooks(
        self: &Arc<Self>,
        webhooks: Arc<crate::webhooks::Webhooks>,
        stop: CancellationToken,
    ) -> anyhow::Result<()> {
        let mut announced = self.client.subscribe(WEBHOOKS_SUBJECT).await.context("subscribing to webhook changes")?;
        let client = self.client.clone();
        webhooks.on_change(Arc::new(move || {
            let client = client.clone();
            tokio::spawn(async move {
                if let Err(e) = client.publish(WEBHOOKS_SUBJECT, Bytes::new()).await {
                    tracing::warn!(error = %e, "announcing a webhook change failed (other hosts read them on their tick)");
                }
            });
        }));
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    msg = announced.next() => if msg.is_none() { return },
                }
                webhooks.changed();
                tokio::time::sleep(TOKENS_RELOAD_MIN).await;
            }
        });
        Ok(())
    }

    /// Keeps the token registry in step with the other hosts': a change made here is announced on
    /// [`TOKENS_SUBJECT`], and an announcement (or, should one be lost, the periodic tick) makes
    /// this host read the tokens from PostgreSQL again. An announcement carries nothing and is not
    /// trusted for anything: it only makes the host look, at most every [`TOKENS_RELOAD_MIN`].
    pub async fn watch_tokens(
        self: &Arc<Self>,
        tokens: Arc<crate::access::tokens::Registry>,
        stop: CancellationToken,
    ) -> anyhow::Result<()> {
        let mut announced = self.client.subscribe(TOKENS_SUBJECT).await.context("subscribing to token changes")?;
        let client = self.client.clone();
        tokens.on_change(Arc::new(move || {
            let client = client.clone();
            tokio::spawn(async move {
                if let Err(e) = client.publish(TOKENS_SUBJECT, Bytes::new()).await {
                    tracing::warn!(error = %e, "announcing a token change failed (other hosts reload on their tick)");
                }
            });
        }));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(TOKENS_RELOAD_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => {}
                    msg = announced.next() => if msg.is_none() { return },
                }
                if let Err(e) = tokens.reload().await {
                    tracing::warn!(error = %e.message, "reloading tokens failed");
                }
                tokio::time::sleep(TOKENS_RELOAD_MIN).await;
            }
        });
        Ok(())
    }

    /// Delivers what the watched rooms' sockets are missing from the database, periodically and
    /// whenever NATS reconnects.
    async fn sweep(self: Arc<Self>, controller: Controller, stop: CancellationToken) {
        let mut tick = tokio::time::interval(self.gap_sweep);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
                () = self.sweep_now.notified() => {}
            }
            match cursor::fill_watched(controller.hub(), controller.store()).await {
                Ok(0) => {}
                Ok(n) => {
                    metrics::counter!("ensemble_cluster_sweep_filled_total").increment(n);
                    tracing::debug!(frames = n, "gap sweep delivered frames NATS lost");
                }
                Err(e) => tracing::debug!(error = %e, "gap sweep failed"),
            }
        }
    }

    /// Renews the lease and takes over the sessions of lost hosts; gives everything up if the
    /// lease could not be renewed in time, and comes back (owning only what nobody claimed
    /// meanwhile) once it can register again.
    async fn keep_lease(self: Arc<Self>, controller: Controller, stop: CancellationToken) {
        let Some(leases) = controller.store().leases().cloned() else { return };
        let mut tick = tokio::time::interval(self.lease / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut lease = LeaseState::Held { renewed: Instant::now() };
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            lease = match lease {
                LeaseState::Held { renewed } => match leases.renew(&self.host_id, self.lease).await {
                    Ok(true) => LeaseState::Held { renewed: Instant::now() },
                    Ok(false) => {
                        tracing::error!(host = %self.host_id, "this host's lease expired; its sessions belong to others now");
                        self.give_up(&controller).await
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "renewing the lease failed");
                        // Another host may claim our sessions once the lease lapses: stop at the
                        // last attempt before it does (the next tick could come too late).
                        if renewed.elapsed() + self.lease / 3 >= self.lease {
                            self.give_up(&controller).await
                        } else {
                            LeaseState::Held { renewed }
                        }
                    }
                },
                LeaseState::Lost => match self.come_back(&controller).await {
                    Ok(()) => LeaseState::Held { renewed: Instant::now() },
                    Err(e) => {
                        tracing::warn!(error = %e, "registering the lease again failed");
                        LeaseState::Lost
                    }
                },
            };
            if !matches!(lease, LeaseState::Held { .. }) {
                continue;
            }
            match controller.take_over_orphans(256).await {
                Ok(0) => {}
                Ok(n) => {
                    metrics::counter!("ensemble_cluster_takeovers_total").increment(n as u64);
                    tracing::info!(sessions = n, "took over the sessions of a lost host");
                }
                Err(e) => tracing::warn!(error = %e, "taking over sessions failed"),
            }
            let _ = leases.forget_dead_hosts(Duration::from_secs(3600)).await;
        }
    }

    /// Stops every agent and forgets every session (another host may own them now).
    async fn give_up(&self, controller: &Controller) -> LeaseState {
        controller.abandon_all().await;
        metrics::counter!("ensemble_cluster_lease_lost_total").increment(1);
        tracing::warn!(host = %self.host_id, "this host gave its sessions up: its agents are stopped until it registers again");
        LeaseState::Lost
    }

    /// Registers the lease again, then loads the sessions still recorded as this host's (nobody
    /// claimed them meanwhile), reporting their lost processes once (`host_lost`), as a survivor
    /// would have.
    async fn come_back(&self, controller: &Controller) -> anyhow::Result<()> {
        let leases = controller.store().leases().context("several hosts need the PostgreSQL store")?;
        leases.register(&self.host_id, self.lease).await?;
        let reclaimed = controller.reclaim_own().await?;
        tracing::info!(host = %self.host_id, sessions = reclaimed, "lease registered again");
        Ok(())
    }

    /// A clean stop: this host's sessions (already disconnected) are free for others at once.
    pub async fn leave(&self, controller: &Controller) {
        if let Some(leases) = controller.store().leases()
            && let Err(e) = leases.release_host(&self.host_id).await
        {
            tracing::warn!(error = %e, "releasing this host's sessions failed; they move when its lease expires");
        }
        let _ = self.client.flush().await;
    }
}

/// `hostname-xxxxxx`: the default host id.
pub fn default_host_id() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let mut id: String =
        name.trim().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(48).collect();
    if id.is_empty() {
        id.push_str("host");
    }
    let mut suffix = [0u8; 4];
    let _ = getrandom::fill(&mut suffix);
    id.push('-');
    for b in suffix {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_subjects_round_trip() {
        for room in ["r", "a.b:c~d_e-f", "ROOM.1"] {
            let s = room_subject(room);
            assert!(!s["ensemble.room.".len()..].contains('.'));
            assert_eq!(subject_room(&s).as_deref(), Some(room));
        }
        assert_eq!(subject_room("ensemble.room.zz"), None);
        assert_eq!(subject_room("ensemble.room.6"), None);
    }

    #[test]
    fn default_host_ids_are_valid_and_distinct() {
        let (a, b) = (default_host_id(), default_host_id());
        assert_ne!(a, b);
        assert!(a.len() <= 64 && a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    }
}
