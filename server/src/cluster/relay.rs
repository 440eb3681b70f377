//! Room frames between hosts: this host's frames out on NATS, the other hosts' frames in to this
//! host's room sockets.
//!
//! A message is `[kind][seq, 8 bytes big-endian][frame]` on the room's subject; kind `e` is a
//! committed room event (with its room seq), `s` a side-conversation frame (seq 0). Its headers
//! carry `Ensemble-Timestamp` (unix ms) and `Ensemble-Mac` over subject, timestamp and payload
//! ([`super::auth`]).
//!
//! A frame is delivered only if its MAC is valid and its timestamp within
//! `--cluster-max-skew-secs`; a room event also only if its seq is one the database holds for the
//! room (at most the room's durable head), so not even a host with the secret can make a client
//! skip ahead or `resync`. Side-conversation frames are not in the database, so the MAC and its
//! timestamp are all that protect them: without the secret none can be forged, but a genuine one
//! replayed within the window reaches clients again (with the seq it has within its side, so a
//! client sees a duplicate, not a new event).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use ensemble_runtime::bus::{Frame, Relay, RoomHub};
use ensemble_runtime::store::Store;
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::auth::{self, ClusterKeys, MAC_HEADER, Purpose, Rejection, TIMESTAMP_HEADER};
use super::subject_room;

/// Rooms whose durable head the receiver remembers before it forgets those nobody here watches.
const MAX_REMEMBERED_HEADS: usize = 4096;

/// Queues this host's frames for NATS without ever blocking the store writer.
pub struct NatsRelay {
    tx: mpsc::Sender<(String, Bytes)>,
}

impl NatsRelay {
    /// Starts the publishing task (which signs the frames: off the store writer);
    /// `outbox` frames may wait for it before frames are dropped.
    pub fn start(client: async_nats::Client, outbox: usize, keys: Arc<ClusterKeys>) -> Arc<Self> {
        let (tx, mut rx) = mpsc::channel::<(String, Bytes)>(outbox.max(1));
        tokio::spawn(async move {
            while let Some((subject, payload)) = rx.recv().await {
                let headers = frame_headers(&keys, &subject, &payload);
                if let Err(e) = client.publish_with_headers(subject, headers, payload).await {
                    // Readers on other hosts fill the gap from the database.
                    metrics::counter!("ensemble_cluster_frames_dropped_total").increment(1);
                    tracing::debug!(error = %e, "publishing a room frame failed");
                } else {
                    metrics::counter!("ensemble_cluster_frames_relayed_total").increment(1);
                }
            }
        });
        Arc::new(Self { tx })
    }
}

/// The headers that authenticate a frame message: its timestamp and MAC.
pub fn frame_headers(keys: &ClusterKeys, subject: &str, payload: &[u8]) -> async_nats::HeaderMap {
    let timestamp = auth::now_ms().to_string();
    let mac = keys.sign(Purpose::Frame, &[subject.as_bytes(), timestamp.as_bytes(), payload]);
    let mut h = async_nats::HeaderMap::new();
    h.insert(TIMESTAMP_HEADER, timestamp.as_str());
    h.insert(MAC_HEADER, mac.as_str());
    h
}

/// Checks a frame message's MAC and timestamp.
fn authenticate(keys: &ClusterKeys, max_skew: Duration, msg: &async_nats::Message) -> Result<(), Rejection> {
    let h = msg.headers.as_ref();
    let get = |name: &str| h.and_then(|h| h.get(name)).map(|v| v.as_str());
    let (Some(timestamp), Some(mac)) = (get(TIMESTAMP_HEADER), get(MAC_HEADER)) else {
        return Err(Rejection::Unauthenticated);
    };
    if !keys.verify(Purpose::Frame, &[msg.subject.as_bytes(), timestamp.as_bytes(), &msg.payload], mac) {
        return Err(Rejection::BadMac);
    }
    match timestamp.parse::<u64>() {
        Ok(ts) if auth::fresh(ts, max_skew) => Ok(()),
        _ => Err(Rejection::Stale),
    }
}

impl Relay for NatsRelay {
    fn relay(&self, room_id: &str, frame: &Frame) {
        let (kind, seq, bytes) = match frame {
            Frame::Event { seq, bytes } => (b'e', *seq, bytes),
            Frame::Side { bytes } => (b's', 0, bytes),
        };
        let mut payload = BytesMut::with_capacity(9 + bytes.len());
        payload.put_u8(kind);
        payload.put_u64(seq);
        payload.put_slice(bytes);
        if self.tx.try_send((super::room_subject(room_id), payload.freeze())).is_err() {
            metrics::counter!("ensemble_cluster_frames_dropped_total").increment(1);
        }
    }
}

/// Decodes a frame message.
fn decode(payload: &Bytes) -> Option<Frame> {
    if payload.len() < 9 {
        return None;
    }
    let seq = u64::from_be_bytes(payload[1..9].try_into().ok()?);
    let bytes = payload.slice(9..);
    match payload[0] {
        b'e' if seq > 0 => Some(Frame::Event { seq, bytes }),
        b's' => Some(Frame::Side { bytes }),
        _ => None,
    }
}

/// Why a frame message was not delivered (the `reason` of `ensemble_cluster_frames_refused_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refused {
    Auth(Rejection),
    Malformed,
    /// A room event whose seq is above the room's durable head.
    SeqBeyondHead,
    /// The database did not answer, so the seq could not be checked; the gap sweep delivers the
    /// event from the database once it does.
    HeadUnknown,
}

impl Refused {
    fn label(self) -> &'static str {
        match self {
            Refused::Auth(r) => r.label(),
            Refused::Malformed => "malformed",
            Refused::SeqBeyondHead => "seq_beyond_head",
            Refused::HeadUnknown => "head_unknown",
        }
    }
}

/// Delivers the other hosts' frames to this host's room sockets.
pub struct Receiver {
    hub: Arc<RoomHub>,
    store: Store,
    keys: Arc<ClusterKeys>,
    max_skew: Duration,
    /// Durable heads read from the database, per room: seqs up to them need no read.
    heads: HashMap<String, u64>,
    /// When a refusal was last logged (a flood of forged frames must not flood the log).
    last_warned: Option<Instant>,
}

impl Receiver {
    pub fn new(hub: Arc<RoomHub>, store: Store, keys: Arc<ClusterKeys>, max_skew: Duration) -> Self {
        Self { hub, store, keys, max_skew, heads: HashMap::new(), last_warned: None }
    }

    pub async fn run(mut self, mut frames: async_nats::Subscriber, stop: CancellationToken) {
        loop {
            let msg = tokio::select! {
                () = stop.cancelled() => return,
                msg = frames.next() => match msg {
                    Some(m) => m,
                    None => return,
                },
            };
            if let Err(refused) = self.handle(&msg).await {
                metrics::counter!("ensemble_cluster_frames_refused_total", "reason" => refused.label()).increment(1);
                if self.last_warned.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                    self.last_warned = Some(Instant::now());
                    tracing::warn!(subject = %msg.subject, reason = refused.label(), "dropped a room frame from NATS");
                }
            }
        }
    }

    /// Delivers one frame message, or says why not.
    async fn handle(&mut self, msg: &async_nats::Message) -> Result<(), Refused> {
        authenticate(&self.keys, self.max_skew, msg).map_err(Refused::Auth)?;
        let room = subject_room(msg.subject.as_str()).ok_or(Refused::Malformed)?;
        let frame = decode(&msg.payload).ok_or(Refused::Malformed)?;
        if !self.hub.watches(&room) {
            // Nobody here would get it: no database read for it either.
            return Ok(());
        }
        if let Frame::Event { seq, .. } = &frame {
            self.check_durable(&room, *seq).await?;
        }
        metrics::counter!("ensemble_cluster_frames_received_total").increment(1);
        self.hub.deliver(&room, frame);
        Ok(())
    }

    /// Whether the database holds `seq` for `room`: at most its head as last read, else as read
    /// now (a frame arrives after its commit, so a genuine one is always there by then).
    async fn check_durable(&mut self, room: &str, seq: u64) -> Result<(), Refused> {
        if self.heads.get(room).is_some_and(|head| seq <= *head) {
            return Ok(());
        }
        let head = match self.store.room_heads(room).await {
            Ok((head, _)) => head,
            Err(e) => {
                tracing::debug!(room, error = %e, "reading a room's head for a relayed frame failed");
                return Err(Refused::HeadUnknown);
            }
        };
        if self.heads.len() >= MAX_REMEMBERED_HEADS && !self.heads.contains_key(room) {
            let hub = &self.hub;
            self.heads.retain(|r, _| hub.watches(r));
        }
        self.heads.insert(room.to_owned(), head);
        if seq <= head { Ok(()) } else { Err(Refused::SeqBeyondHead) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_decode_and_garbage_is_refused() {
        let mut p = BytesMut::new();
        p.put_u8(b'e');
        p.put_u64(42);
        p.put_slice(b"{}");
        match decode(&p.freeze()) {
            Some(Frame::Event { seq, bytes }) => assert_eq!((seq, &bytes[..]), (42, &b"{}"[..])),
            other => panic!("{other:?}"),
        }
        assert!(decode(&Bytes::from_static(b"e123")).is_none());
        assert!(decode(&Bytes::from_static(b"x\0\0\0\0\0\0\0\x01{}")).is_none());
        assert!(decode(&Bytes::from_static(b"e\0\0\0\0\0\0\0\0{}")).is_none());
    }

    fn message(subject: &str, headers: Option<async_nats::HeaderMap>, payload: &'static [u8]) -> async_nats::Message {
        async_nats::Message {
            subject: subject.into(),
            reply: None,
            payload: Bytes::from_static(payload),
            headers,
            status: None,
            description: None,
            length: payload.len(),
        }
    }

    #[test]
    fn only_frames_signed_with_the_cluster_secret_and_fresh_pass() {
        let keys = ClusterKeys::from_secret(&[1; 32]);
        let skew = Duration::from_secs(30);
        let subject = "ensemble.room.72";
        let payload = b"e\0\0\0\0\0\0\0\x01{}";
        let signed = frame_headers(&keys, subject, payload);
        assert_eq!(authenticate(&keys, skew, &message(subject, Some(signed.clone()), payload)), Ok(()));
        assert_eq!(authenticate(&keys, skew, &message(subject, None, payload)), Err(Rejection::Unauthenticated));
        // The same MAC on another room, or over another payload, or made with another secret.
        let other_room = message("ensemble.room.73", Some(signed.clone()), payload);
        assert_eq!(authenticate(&keys, skew, &other_room), Err(Rejection::BadMac));
        let other_payload = message(subject, Some(signed), b"e\0\0\0\0\0\0\0\x02{}");
        assert_eq!(authenticate(&keys, skew, &other_payload), Err(Rejection::BadMac));
        let stranger = ClusterKeys::from_secret(&[2; 32]);
        let forged = message(subject, Some(frame_headers(&stranger, subject, payload)), payload);
        assert_eq!(authenticate(&keys, skew, &forged), Err(Rejection::BadMac));
        // A correctly signed frame from long ago.
        let old = "1000";
        let mac = keys.sign(Purpose::Frame, &[subject.as_bytes(), old.as_bytes(), payload]);
        let mut h = async_nats::HeaderMap::new();
        h.insert(TIMESTAMP_HEADER, old);
        h.insert(MAC_HEADER, mac.as_str());
        assert_eq!(authenticate(&keys, skew, &message(subject, Some(h), payload)), Err(Rejection::Stale));
    }
}
