//! Room frames between hosts: this host's frames out on NATS, the other hosts' frames in to this
//! host's room sockets.
//!
//! A message is `[kind][seq, 8 bytes big-endian][frame]` on the room's subject; kind `e` is a
//! committed room event (with its room seq), `s` a side-conversation frame (seq 0).

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use ensemble_runtime::bus::{Frame, Relay, RoomHub};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{room_subject, subject_room};

/// Queues this host's frames for NATS without ever blocking the store writer.
pub struct NatsRelay {
    tx: mpsc::Sender<(String, Bytes)>,
}

impl NatsRelay {
    /// Starts the publishing task; `outbox` frames may wait for it before frames are dropped.
    pub fn start(client: async_nats::Client, outbox: usize) -> Arc<Self> {
        let (tx, mut rx) = mpsc::channel::<(String, Bytes)>(outbox.max(1));
        tokio::spawn(async move {
            while let Some((subject, payload)) = rx.recv().await {
                if let Err(e) = client.publish(subject, payload).await {
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
        if self.tx.try_send((room_subject(room_id), payload.freeze())).is_err() {
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

/// Delivers the other hosts' frames to this host's room sockets.
pub async fn receive(mut frames: async_nats::Subscriber, hub: Arc<RoomHub>, stop: CancellationToken) {
    loop {
        let msg = tokio::select! {
            () = stop.cancelled() => return,
            msg = frames.next() => match msg {
                Some(m) => m,
                None => return,
            },
        };
        match (subject_room(msg.subject.as_str()), decode(&msg.payload)) {
            (Some(room), Some(frame)) => {
                metrics::counter!("ensemble_cluster_frames_received_total").increment(1);
                hub.deliver(&room, frame);
            }
            _ => tracing::debug!(subject = %msg.subject, "ignored a malformed room frame"),
        }
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
}
