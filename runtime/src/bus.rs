//! The room bus: fans committed events out to a room's live subscribers.
//!
//! Each room with at least one subscriber has a bounded broadcast ring; a room without subscribers
//! has nothing at all (idle rooms cost nothing). Frames are serialised once and shared. A subscriber
//! that falls more than the ring's capacity behind is told so (`Lagged`) and must resync; it never
//! slows the room or the other subscribers.

use std::collections::HashMap;
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

struct RoomBus {
    tx: broadcast::Sender<Frame>,
    /// The highest room seq sent on this bus (the gap sweep compares it with the log's head).
    last_seq: u64,
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
    relay: OnceLock<Arc<dyn Relay>>,
}

impl RoomHub {
    /// `capacity`: frames a subscriber may fall behind before it must resync.
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self { rooms: Mutex::new(HashMap::new()), capacity: capacity.max(1), relay: OnceLock::new() })
    }

    /// Sends this host's frames on to other hosts too (set once, before the store opens).
    pub fn set_relay(&self, relay: Arc<dyn Relay>) {
        let _ = self.relay.set(relay);
    }

    /// Subscribes to a room's live frames. Everything committed after this call is delivered.
    pub fn subscribe(self: &Arc<Self>, room_id: &str) -> Subscription {
        let rx = {
            let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
            let bus = rooms
                .entry(room_id.to_owned())
                .or_insert_with(|| RoomBus { tx: broadcast::channel(self.capacity).0, last_seq: 0 });
            bus.tx.subscribe()
        };
        metrics::gauge!("ensemble_room_subscribers").increment(1.0);
        Subscription { rx: Some(rx), room_id: room_id.to_owned(), hub: self.clone() }
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
            let _ = bus.tx.send(frame);
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
            for e in events {
                let _ = bus.tx.send(Frame::Event { seq: e.seq, bytes: e.frame.clone() });
            }
            if let Some(last) = events.last() {
                bus.last_seq = bus.last_seq.max(last.seq);
            }
            metrics::counter!("ensemble_events_broadcast_total").increment(events.len() as u64);
        }
    }
}

/// A live subscription; dropping it unsubscribes (and frees the room's bus if it was the last).
pub struct Subscription {
    rx: Option<broadcast::Receiver<Frame>>,
    room_id: String,
    hub: Arc<RoomHub>,
}

/// Why a subscription stopped yielding frames.
#[derive(Debug, PartialEq, Eq)]
pub enum RecvError {
    /// The subscriber fell this many frames behind; it must resync.
    Lagged(u64),
    Closed,
}

impl Subscription {
    pub async fn recv(&mut self) -> Result<Frame, RecvError> {
        let Some(rx) = self.rx.as_mut() else {
            return Err(RecvError::Closed);
        };
        rx.recv().await.map_err(|e| match e {
            broadcast::error::RecvError::Lagged(n) => RecvError::Lagged(n),
            broadcast::error::RecvError::Closed => RecvError::Closed,
        })
    }

    /// A frame already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<Result<Frame, RecvError>> {
        let rx = self.rx.as_mut()?;
        match rx.try_recv() {
            Ok(f) => Some(Ok(f)),
            Err(broadcast::error::TryRecvError::Empty) => None,
            Err(broadcast::error::TryRecvError::Lagged(n)) => Some(Err(RecvError::Lagged(n))),
            Err(broadcast::error::TryRecvError::Closed) => Some(Err(RecvError::Closed)),
        }
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

    #[tokio::test]
    async fn idle_rooms_have_no_bus() {
        let hub = RoomHub::new(8);
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
        let hub = RoomHub::new(4);
        let mut slow = hub.subscribe("r");
        let mut fast = hub.subscribe("r");
        for seq in 1..=10 {
            hub.committed("r", &[committed(seq)]);
            match fast.recv().await.unwrap() {
                Frame::Event { seq: got, .. } => assert_eq!(got, seq),
                Frame::Side { .. } => panic!(),
            }
        }
        assert_eq!(slow.recv().await.unwrap_err(), RecvError::Lagged(6));
    }
}
