//! Property: any interleaving of publish / subscribe / read / disconnect / reconnect gives every
//! reader a gap-free, duplicate-free, ordered sequence (real store, real bus, real writer thread).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::sync::Arc;
use std::time::Duration;

use ensemble_core::event::{EventBody, NewEvent, TextDeltaPayload};
use ensemble_core::model::Scope;
use ensemble_runtime::bus::RoomHub;
use ensemble_runtime::cursor::{CursorError, Item, RoomCursor};
use ensemble_runtime::store::{AppendBatch, Store, StoreConfig, WriteOp};
use proptest::prelude::*;

const ROOM: &str = "room";
const CLIENTS: usize = 4;

#[derive(Clone, Debug)]
enum Op {
    Publish(usize),
    Connect(usize),
    Read(usize, usize),
    Disconnect(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1usize..30).prop_map(Op::Publish),
        2 => (0..CLIENTS).prop_map(Op::Connect),
        4 => ((0..CLIENTS), (1usize..50)).prop_map(|(c, n)| Op::Read(c, n)),
        1 => (0..CLIENTS).prop_map(Op::Disconnect),
    ]
}

#[derive(Default)]
struct Reader {
    cursor: Option<RoomCursor>,
    seen: Vec<u64>,
}

impl Reader {
    fn last(&self) -> u64 {
        self.seen.last().copied().unwrap_or(0)
    }

    async fn connect(&mut self, hub: &Arc<RoomHub>, store: &Store) {
        if self.cursor.is_none() {
            let (cursor, _) = RoomCursor::open(hub, store, ROOM, Some(self.last())).await.expect("open");
            self.cursor = Some(cursor);
        }
    }

    /// Reads up to `n` items, giving up (cancelling the read) after a short wait.
    async fn read(&mut self, n: usize, wait: Duration) {
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        match tokio::time::timeout(wait, cursor.next_batch(n)).await {
            Err(_) => {}
            Ok(Ok(items)) => {
                for item in items {
                    if let Item::Event { seq, frame } = item {
                        let v: serde_json::Value = serde_json::from_slice(&frame).expect("frame is json");
                        assert_eq!(v["event"]["seq"], seq, "frame and seq agree");
                        self.seen.push(seq);
                    }
                }
            }
            // A reader that fell behind resyncs: it reconnects from what it has.
            Ok(Err(CursorError::Lagged { .. })) => self.cursor = None,
            Ok(Err(e)) => panic!("unexpected cursor error: {e}"),
        }
    }
}

fn event(i: usize) -> NewEvent {
    NewEvent {
        room_id: ROOM.into(),
        event_id: format!("e{i}"),
        session_id: "s".into(),
        scope: Scope::Canonical,
        turn_id: None,
        occurred_at_ms: 0,
        actor: None,
        body: EventBody::MessageDelta(TextDeltaPayload { item_id: "m".into(), text: format!("{i}") }),
    }
}

async fn publish(store: &Store, n: usize, counter: &mut usize) {
    let events = (0..n).map(|i| event(*counter + i)).collect();
    *counter += n;
    // No ack: the writer commits concurrently with the readers.
    store
        .send(WriteOp::Append(AppendBatch {
            room_id: ROOM.into(),
            events,
            records: vec![],
            outbound: vec![],
            ack: None,
        }))
        .await
        .expect("send");
}

async fn scenario(ops: Vec<Op>, capacity: usize, linger_ms: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = RoomHub::new(capacity, usize::MAX);
    let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
    cfg.linger = Duration::from_millis(linger_ms);
    cfg.max_batch = 16;
    let store = Store::open(cfg, hub.clone()).expect("store");
    let mut readers: Vec<Reader> = (0..CLIENTS).map(|_| Reader::default()).collect();
    let mut published = 0usize;
    for op in ops {
        match op {
            Op::Publish(n) => publish(&store, n, &mut published).await,
            Op::Connect(c) => readers[c].connect(&hub, &store).await,
            Op::Read(c, n) => readers[c].read(n, Duration::from_millis(2)).await,
            Op::Disconnect(c) => readers[c].cursor = None,
        }
    }
    store.flush().await.expect("flush");
    let head = published as u64;
    for r in &mut readers {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while r.last() < head {
            assert!(tokio::time::Instant::now() < deadline, "reader stuck at {} of {head}", r.last());
            r.connect(&hub, &store).await;
            r.read(64, Duration::from_millis(200)).await;
        }
        let expected: Vec<u64> = (1..=head).collect();
        assert_eq!(r.seen, expected, "gap-free, duplicate-free, ordered");
    }
    store.close().await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, max_shrink_iters: 64, .. ProptestConfig::default() })]

    #[test]
    fn every_reader_sees_every_event_once_in_order(
        ops in proptest::collection::vec(op(), 1..60),
        capacity in 1usize..24,
        linger_ms in 0u64..3,
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
        rt.block_on(scenario(ops, capacity, linger_ms));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_joining_during_a_burst_miss_nothing() {
    // A concurrent publisher while readers connect at random points (the subscribe/replay race).
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = RoomHub::new(1 << 16, usize::MAX);
    let store = Store::open(StoreConfig::new(dir.path().join("db.sqlite")), hub.clone()).expect("store");
    let publisher = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut n = 0;
            for _ in 0..200 {
                publish(&store, 5, &mut n).await;
                tokio::task::yield_now().await;
            }
            n as u64
        })
    };
    let mut readers = Vec::new();
    for _ in 0..20 {
        let mut r = Reader::default();
        r.connect(&hub, &store).await;
        readers.push(r);
        tokio::task::yield_now().await;
    }
    let head = publisher.await.expect("publisher");
    store.flush().await.expect("flush");
    for r in &mut readers {
        while r.last() < head {
            r.connect(&hub, &store).await;
            r.read(256, Duration::from_millis(500)).await;
        }
        assert_eq!(r.seen, (1..=head).collect::<Vec<_>>());
    }
}
