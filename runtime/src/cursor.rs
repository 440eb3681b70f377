//! A reader's position in a room: the replay from the durable log, then the live bus, as one
//! gap-free, duplicate-free, ordered stream.
//!
//! The cursor subscribes to the room bus *before* it reads the log. Every event committed after the
//! subscription reaches the bus; every event committed before it is in the log; so the union covers
//! everything, and the seq check drops the overlap. The room WebSocket is a thin shell around this.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;

use crate::bus::{Frame, RecvError, RoomHub, Subscription};
use crate::store::{Store, StoreError};

/// Events read from the log per query (and no more than the store's page bytes of them).
pub const REPLAY_PAGE: usize = 512;

/// What a cursor yields.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A durable room event, as its wire frame.
    Event { seq: u64, frame: Bytes },
    /// A side-conversation frame (not in the log, no room seq).
    Side { frame: Bytes },
}

/// Why a cursor cannot continue; the reader must resync (reload state, reconnect).
#[derive(Debug, thiserror::Error)]
pub enum CursorError {
    #[error("the requested history is no longer retained")]
    HistoryExpired { head: u64 },
    #[error("the requested position is ahead of the log")]
    AheadOfLog { head: u64 },
    #[error("the reader fell {behind} frames behind")]
    Lagged { behind: u64 },
    #[error("the room bus closed")]
    Closed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl CursorError {
    /// The `reason` of the `resync` frame.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::HistoryExpired { .. } => "history_expired",
            Self::AheadOfLog { .. } => "ahead_of_log",
            Self::Lagged { .. } => "lagged",
            Self::Closed => "closed",
            Self::Store(_) => "store_error",
        }
    }
}

pub struct RoomCursor {
    store: Store,
    room: String,
    sub: Subscription,
    /// The last seq handed out.
    last: u64,
    /// Replayed events not yet handed out.
    replay: VecDeque<(u64, Bytes)>,
    /// The log has been read up to the point where the bus takes over.
    caught_up: bool,
}

impl RoomCursor {
    /// Opens a cursor after `after` (None: at the head, live only). Returns it with the head seq
    /// at opening time.
    pub async fn open(
        hub: &Arc<RoomHub>,
        store: &Store,
        room: &str,
        after: Option<u64>,
    ) -> Result<(Self, u64), CursorError> {
        // Subscribe first: see the module comment.
        let sub = hub.subscribe(room);
        let (head, pruned) = store.room_heads(room).await?;
        hub.observed(room, head);
        let after = after.unwrap_or(head);
        if after > head {
            return Err(CursorError::AheadOfLog { head });
        }
        if after < pruned {
            return Err(CursorError::HistoryExpired { head });
        }
        let cursor = Self {
            store: store.clone(),
            room: room.to_owned(),
            sub,
            last: after,
            replay: VecDeque::new(),
            caught_up: after == head,
        };
        Ok((cursor, head))
    }

    /// The last seq handed out.
    pub fn position(&self) -> u64 {
        self.last
    }

    /// Waits for at least one item and returns up to `max` (without waiting for more).
    /// Cancel-safe: state only changes after an await completed.
    pub async fn next_batch(&mut self, max: usize) -> Result<Vec<Item>, CursorError> {
        let max = max.max(1);
        if !self.caught_up && self.replay.is_empty() {
            self.fill(u64::MAX).await?;
        }
        let mut out = Vec::new();
        while out.len() < max {
            match self.replay.pop_front() {
                Some((seq, frame)) => {
                    self.last = seq;
                    out.push(Item::Event { seq, frame });
                }
                None => break,
            }
        }
        if !out.is_empty() || !self.caught_up {
            return Ok(out);
        }
        // Live: wait for one frame, then take what is already queued.
        let first = self.sub.recv().await;
        let mut next = Some(first);
        while let Some(frame) = next.take() {
            match frame {
                Ok(Frame::Event { seq, bytes }) => {
                    if seq > self.last + 1 {
                        metrics::counter!("ensemble_gap_fills_total").increment(1);
                        // On one host only a lost race could cause it; with several hosts, a frame
                        // NATS lost or one that is still on its way. The log has it: fill from there.
                        tracing::warn!(room = %self.room, from = self.last, to = seq, "filling a live gap from the log");
                        while self.last + 1 < seq {
                            let before = self.last;
                            self.fill(seq - 1).await?;
                            while let Some((s, f)) = self.replay.pop_front() {
                                self.last = s;
                                out.push(Item::Event { seq: s, frame: f });
                            }
                            if self.last == before {
                                return Err(CursorError::HistoryExpired { head: seq });
                            }
                        }
                    }
                    if seq == self.last + 1 {
                        self.last = seq;
                        out.push(Item::Event { seq, frame: bytes });
                    }
                }
                Ok(Frame::Side { bytes }) => out.push(Item::Side { frame: bytes }),
                Err(RecvError::Lagged(behind)) => return Err(CursorError::Lagged { behind }),
                Err(RecvError::Closed) => return Err(CursorError::Closed),
            }
            if out.len() < max {
                next = self.sub.try_recv();
            }
        }
        Ok(out)
    }

    /// Reads the log after `last` (up to `until`) into the replay buffer.
    async fn fill(&mut self, until: u64) -> Result<(), CursorError> {
        let page = self.store.events_after(&self.room, self.last, REPLAY_PAGE).await?;
        if let Some((first, _)) = page.events.first()
            && *first != self.last + 1
        {
            // Pruned while we were reading: never a silent gap.
            return Err(CursorError::HistoryExpired { head: page.head_seq });
        }
        if page.events.is_empty() && page.pruned_through > self.last {
            return Err(CursorError::HistoryExpired { head: page.head_seq });
        }
        // Not "a full page": a page is cut by bytes too, so fewer events may still not be the end.
        let more = page.next().is_some();
        for (seq, raw) in page.events {
            if seq > until {
                break;
            }
            self.replay.push_back((seq, event_frame(&raw)));
        }
        if until == u64::MAX && !more {
            // Everything committed before the subscription is now buffered; the bus has the rest.
            self.caught_up = true;
        }
        Ok(())
    }
}

/// A stored event as its wire frame.
fn event_frame(raw: &serde_json::value::RawValue) -> Bytes {
    let mut frame = String::with_capacity(raw.get().len() + 26);
    frame.push_str("{\"type\":\"event\",\"event\":");
    frame.push_str(raw.get());
    frame.push('}');
    Bytes::from(frame)
}

/// Delivers to each room watched on this host what its bus has not carried yet but the log has
/// (with several hosts: frames NATS lost, at most a page per room per call; a reader that still
/// misses more fills the rest itself at its next frame). Returns the frames delivered.
pub async fn fill_watched(hub: &Arc<RoomHub>, store: &Store) -> Result<u64, StoreError> {
    let mut delivered = 0;
    for (room, last) in hub.watched_rooms() {
        let (head, _) = store.room_heads(&room).await?;
        if head <= last {
            continue;
        }
        let page = store.events_after(&room, last, REPLAY_PAGE).await?;
        for (seq, raw) in page.events {
            hub.deliver(&room, Frame::Event { seq, bytes: event_frame(&raw) });
            delivered += 1;
        }
    }
    Ok(delivered)
}
