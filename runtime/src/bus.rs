//! The room bus: fans committed events out to a room's live subscribers.
//!
//! Each room with at least one subscriber has a bounded broadcast ring; a room without subscribers
//! has nothing at all (idle rooms cost nothing). Frames are serialised once and shared. A subscriber
//! that falls more than the ring's capacity behind is told so (`Lagged`) and must resync; it never
//! slows the room or the other subscribers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
}

/// All rooms' buses.
pub struct RoomHub {
    rooms: Mutex<HashMap<String, RoomBus>>,
    capacity: usize,
}

impl RoomHub {
    /// `capacity`: frames a subscriber may fall behind before it must resync.
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self { rooms: Mutex::new(HashMap::new()), capacity: capacity.max(1) })
    }

    /// Subscribes to a room's live frames. Everything committed after this call is delivered.
    pub fn subscribe(self: &Arc<Self>, room_id: &str) -> Subscription {
        let rx = {
            let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
            let bus =
                rooms.entry(room_id.to_owned()).or_insert_with(|| RoomBus { tx: broadcast::channel(self.capacity).0 });
            bus.tx.subscribe()
        };
        metrics::gauge!("ensemble_room_subscribers").increment(1.0);
        Subscription { rx: Some(rx), room_id: room_id.to_owned(), hub: self.clone() }
    }

    /// Rooms that currently have a bus (i.e. subscribers).
    pub fn active_rooms(&self) -> usize {
        self.rooms.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Sends a frame to a room's subscribers, if it has any.
    pub fn send(&self, room_id: &str, frame: Frame) {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bus) = rooms.get(room_id) {
            let _ = bus.tx.send(frame);
        }
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
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bus) = rooms.get(room_id) {
            for e in events {
                let _ = bus.tx.send(Frame::Event { seq: e.seq, bytes: e.frame.clone() });
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
