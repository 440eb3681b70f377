//! The room bus: fans committed events out to a room's live subscribers.
//!
//! Each room with at least one subscriber has a bounded broadcast ring; a room without subscribers
//! has nothing at all (idle rooms cost nothing). Frames are serialised once and shared. A subscriber
//! that falls more than the ring's capacity behind — in frames, or in bytes — is told so (`Lagged`)
//! and must resync; it never slows the room or the other subscribers. The ring keeps every frame a
//! subscriber has not read yet, so the byte budget is what bounds a lagging subscriber's memory
//! when frames are large (up to `--max-event-bytes` each).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use tokio::sync::broadcast;

use crate::store::{CommitListener, CommittedEvent};

/// A frame for a room's subscribers.
#[derive(Clone, Debug)]
pub enum Frame {
    /// A durable room event with its room seq; `bytes` is the whole wire frame.
    Event { seq: u64, bytes: Bytes },
    /// A side-conversation event (not in the room log).
    Side { bytes: Bytes },
}

impl Frame {
    fn len(&self) -> usize {
        match self {
            Frame::Event { bytes, .. } | Frame::Side { bytes } => bytes.len(),
        }
    }
}

/// A frame in a room's ring, with the room's byte count up to and including it.
#[derive(Clone, Debug)]
struct Stamped {
    through: u64,
    frame: Frame,
}

struct RoomBus {
    tx: broadcast::Sender<Stamped>,
    /// Bytes of every frame sent on this bus (written under the hub's lock, read by subscribers).
    sent: Arc<AtomicU64>,
    /// The highest room seq sent on this bus (the gap sweep compares it with the log's head).
    last_seq: u64,
}

impl RoomBus {
    /// Sends frames in order. The room's byte count is published once per call: subscribers read it
    /// on every batch they take, and a count rewritten per frame cost each of them a cache miss per
    /// frame (fan-out bench, one subscriber).
    fn push(&mut self, frames: impl IntoIterator<Item = Frame>) {
        let mut through = self.sent.load(Ordering::Relaxed);
        for frame in frames {
            through += frame.len() as u64;
            let _ = self.tx.send(Stamped { through, frame });
        }
        self.sent.store(through, Ordering::Relaxed);
    }
}

/// Where this host's own frames go besides its local subscribers: the other hosts sharing the
/// database. Called in commit order per room; must not block (drop rather than wait: readers fill
/// gaps from the log).
pub trait Relay: Send + Sync {
    fn relay(&self, room_id: &str, frame: &Frame);
}

/// All rooms' buses.
pub struct RoomHub {
    rooms: Mutex<HashMap<String, RoomBus>>,
    capacity: usize,
    max_lag_bytes: u64,
    relay: OnceLock<Arc<dyn Relay>>,
}

impl RoomHub {
    /// `capacity`: frames a subscriber may fall behind before it must resync; `max_lag_bytes`: the
    /// bytes of those frames it may fall behind.
    pub fn new(capacity: usize, max_lag_bytes: usize) -> Arc<Self> {
        Arc::new(Self {
            rooms: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
            max_lag_bytes: max_lag_bytes.max(1) as u64,
            relay: OnceLock::new(),
        })
    }

    /// Sends this host's frames on to other hosts too (set once, before the store opens).
    pub fn set_relay(&self, relay: Arc<dyn Relay>) {
        let _ = self.relay.set(relay);
    }

    /// Subscribes to a room's live frames. Everything committed after this call is delivered.
    pub fn subscribe(self: &Arc<Self>, room_id: &str) -> Subscription {
        let (rx, sent) = {
            let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
            let bus = rooms.entry(room_id.to_owned()).or_insert_with(|| RoomBus {
                tx: broadcast::channel(self.capacity).0,
                sent: Arc::new(AtomicU64::new(0)),
                last_seq: 0,
            });
            (bus.tx.subscribe(), bus.sent.clone())
        };
        metrics::gauge!("ensemble_room_subscribers").increment(1.0);
        Subscription {
            rx: Some(rx),
            sent,
            max_lag_bytes: self.max_lag_bytes,
            room_id: room_id.to_owned(),
            hub: self.clone(),
        }
    }

    /// Whether the room has subscribers here (a frame for it would reach someone).
    pub fn watches(&self, room_id: &str) -> bool {
        self.rooms.lock().unwrap_or_else(|e| e.into_inner()).contains_key(room_id)
    }

    /// Rooms that currently have a bus (i.e. subscribers).
    pub fn active_rooms(&self) -> usize {
        self.rooms.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Sends a frame of this host to a room's subscribers, if it has any, and to other hosts.
    pub fn send(&self, room_id: &str, frame: Frame) {
        if let Some(relay) = self.relay.get() {
            relay.relay(room_id, &frame);
        }
        self.deliver(room_id, frame);
    }

    /// Sends a frame to this host's subscribers of the room only (a frame from another host).
    pub fn deliver(&self, room_id: &str, frame: Frame) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bus) = rooms.get_mut(room_id) {
            if let Frame::Event { seq, .. } = &frame {
                bus.last_seq = bus.last_seq.max(*seq);
            }
            bus.push([frame]);
        }
    }

    /// Notes that a reader of the room has seen the log up to `seq` (so the gap sweep only looks
    /// for what came after).
    pub fn observed(&self, room_id: &str, seq: u64) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bus) = rooms.get_mut(room_id) {
            bus.last_seq = bus.last_seq.max(seq);
        }
    }

    /// The rooms with subscribers here, each with the highest room seq sent to them (0: none yet).
    pub fn watched_rooms(&self) -> Vec<(String, u64)> {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        rooms.iter().map(|(r, b)| (r.clone(), b.last_seq)).collect()
    }

    fn unsubscribed(&self, room_id: &str) {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if rooms.get(room_id).is_some_and(|b| b.tx.receiver_count() == 0) {
            rooms.remove(room_id);
        }
    }
}

impl CommitListener for RoomHub {
    fn committed(&self, room_id: &str, events: &[CommittedEvent]) {
        if let Some(relay) = self.relay.get() {
            for e in events {
                relay.relay(room_id, &Frame::Event { seq: e.seq, bytes: e.frame.clone() });
            }
        }
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bus) = rooms.get_mut(room_id) {
            bus.push(events.iter().map(|e| Frame::Event { seq: e.seq, bytes: e.frame.clone() }));
            if let Some(last) = events.last() {
                bus.last_seq = bus.last_seq.max(last.seq);
            }
            metrics::counter!("ensemble_events_broadcast_total").increment(events.len() as u64);
        }
    }
}

/// A live subscription; dropping it unsubscribes (and frees the room's bus if it was the last).
pub struct Subscription {
    rx: Option<broadcast::Receiver<Stamped>>,
    /// The room's byte count ([`RoomBus::sent`]).
    sent: Arc<AtomicU64>,
    max_lag_bytes: u64,
    room_id: String,
    hub: Arc<RoomHub>,
}

/// Why a subscription stopped yielding frames.
#[derive(Debug, PartialEq, Eq)]
pub enum RecvError {
    /// The subscriber fell this many frames behind (more than the ring holds, or more bytes than
    /// its budget); it must resync.
    Lagged(u64),
    Closed,
}

impl Subscription {
    pub async fn recv(&mut self) -> Result<Frame, RecvError> {
        let Some(rx) = self.rx.as_mut() else {
            return Err(RecvError::Closed);
        };
        match rx.recv().await {
            Ok(s) => self.within_budget(s),
            Err(broadcast::error::RecvError::Lagged(n)) => Err(RecvError::Lagged(n)),
            Err(broadcast::error::RecvError::Closed) => Err(RecvError::Closed),
        }
    }

    /// A frame already queued, without waiting. The byte budget is checked by [`Self::recv`] only:
    /// a reader takes a batch with one `recv` and then `try_recv`s, and reading the room's byte
    /// count for every frame of a batch cost every subscriber a shared cache line per frame.
    pub fn try_recv(&mut self) -> Option<Result<Frame, RecvError>> {
        let rx = self.rx.as_mut()?;
        match rx.try_recv() {
            Ok(s) => Some(Ok(s.frame)),
            Err(broadcast::error::TryRecvError::Empty) => None,
            Err(broadcast::error::TryRecvError::Lagged(n)) => Some(Err(RecvError::Lagged(n))),
            Err(broadcast::error::TryRecvError::Closed) => Some(Err(RecvError::Closed)),
        }
    }

    /// The frame, unless the room has sent more than the byte budget since it: then this
    /// subscriber is lagging (the ring holds all of that for it).
    fn within_budget(&self, s: Stamped) -> Result<Frame, RecvError> {
        let behind = self.sent.load(Ordering::Relaxed).saturating_sub(s.through);
        if behind > self.max_lag_bytes {
            let frames = self.rx.as_ref().map_or(0, |rx| rx.len() as u64);
            return Err(RecvError::Lagged(frames + 1));
        }
        Ok(s.frame)
    }

    pub fn room_id(&self) -> &str {
        &self.room_id
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        drop(self.rx.take());
        self.hub.unsubscribed(&self.room_id);
        metrics::gauge!("ensemble_room_subscribers").decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed(seq: u64) -> CommittedEvent {
        CommittedEvent { seq, session_id: "s".into(), frame: Bytes::from(format!("{seq}")) }
    }

    /// Commits `event` to room `r` and checks that `fast`, keeping up, receives it next.
    async fn commit_followed(hub: &RoomHub, fast: &mut Subscription, event: CommittedEvent) {
        let seq = event.seq;
        hub.committed("r", &[event]);
        match fast.recv().await.unwrap() {
            Frame::Event { seq: got, .. } => assert_eq!(got, seq),
            Frame::Side { .. } => panic!("unexpected side frame"),
        }
    }

    #[tokio::test]
    async fn idle_rooms_have_no_bus() {
        let hub = RoomHub::new(8, 1 << 20);
        hub.committed("r", &[committed(1)]);
        assert_eq!(hub.active_rooms(), 0);
        let mut sub = hub.subscribe("r");
        assert_eq!(hub.active_rooms(), 1);
        hub.committed("r", &[committed(2)]);
        match sub.recv().await.unwrap() {
            Frame::Event { seq, .. } => assert_eq!(seq, 2),
            Frame::Side { .. } => panic!("unexpected side frame"),
        }
        drop(sub);
        assert_eq!(hub.active_rooms(), 0);
    }

    #[tokio::test]
    async fn a_slow_subscriber_lags_without_holding_back_others() {
        let hub = RoomHub::new(4, 1 << 20);
        let mut slow = hub.subscribe("r");
        let mut fast = hub.subscribe("r");
        for seq in 1..=10 {
            commit_followed(&hub, &mut fast, committed(seq)).await;
        }
        assert_eq!(slow.recv().await.unwrap_err(), RecvError::Lagged(6));
    }

    #[tokio::test]
    async fn a_subscriber_further_behind_than_the_byte_budget_lags_within_the_frame_capacity() {
        // Room for 100 frames but only 100 bytes: frames of 30 bytes.
        let hub = RoomHub::new(100, 100);
        let frame = |seq: u64| CommittedEvent { seq, session_id: "s".into(), frame: Bytes::from(vec![b'x'; 30]) };
        let mut slow = hub.subscribe("r");
        let mut fast = hub.subscribe("r");
        for seq in 1..=10 {
            commit_followed(&hub, &mut fast, frame(seq)).await;
        }
        // 270 bytes were sent after the slow one's next frame: past its budget, though its ring
        // still holds every frame.
        assert_eq!(slow.recv().await.unwrap_err(), RecvError::Lagged(10));
        // At the budget exactly it is not lagging.
        let mut edge = hub.subscribe("r");
        for seq in 11..=14 {
            hub.committed("r", &[frame(seq)]);
        }
        assert!(edge.recv().await.is_ok(), "90 bytes behind, within 100");
    }
}
