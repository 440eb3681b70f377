//! Reading a room's log a page at a time: every seq once, in order, whatever the page's size in
//! events or in bytes.

use super::*;

/// Every room's events from its first unpruned seq to its head, read in pages of `limit`; each
/// event's JSON is checked against its seq and room.
async fn read_all(store: &Store, room: &str, limit: usize) -> Vec<u64> {
    let mut got = Vec::new();
    loop {
        let page = store.events_after(room, got.last().copied().unwrap_or(0), limit).await.unwrap();
        assert!(page.events.len() <= limit);
        if page.events.is_empty() {
            return got;
        }
        for (seq, json) in &page.events {
            let v: serde_json::Value = serde_json::from_str(json.get()).unwrap();
            assert_eq!((&v["seq"], &v["roomId"]), (&serde_json::json!(seq), &serde_json::json!(room)));
            got.push(*seq);
        }
    }
}

/// Long logs of three rooms written in turns (their rows interleave), pruned by retention, read
/// in pages of many sizes, before and after a restart and after more appends: each read holds
/// exactly the seqs asked for (SQLite walks each room's chain of rows from a mark: migration 5).
pub(super) async fn pages_of_interleaved_pruned_logs_hold_every_seq_once(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.retention.max_events_per_room = Some(150);
    let rooms = ["a", "b", "c"];
    let check = async |store: &Store| {
        for room in rooms {
            let (head, pruned) = store.room_heads(room).await.unwrap();
            assert!(pruned > 64 && head > pruned + 130, "{engine:?} {room}: {pruned} {head}");
            let want: Vec<u64> = (pruned + 1..=head).collect();
            for limit in [1, 7, 64, 100, 1000] {
                assert_eq!(read_all(store, room, limit).await, want, "{engine:?} {room}, pages of {limit}");
            }
            for after in [0, pruned - 1, pruned + 63, pruned + 64, head - 65, head - 1, head, head + 5] {
                let page = store.events_after(room, after, 10).await.unwrap();
                let from = after.max(pruned) + 1;
                let want: Vec<u64> = (from..=head.min(from + 9)).collect();
                assert_eq!(seqs(&page), want, "{engine:?} {room}, 10 after {after}");
            }
        }
    };
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    for round in 0..100 {
        for (k, room) in rooms.iter().enumerate() {
            append_n(&store, room, 1 + (round + k) % 5).await;
        }
    }
    check(&store).await;
    store.close().await;
    drop(store);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    check(&store).await;
    for room in rooms {
        append_n(&store, room, 70).await;
    }
    check(&store).await;
}

/// A page holds no more than the store's page bytes of events (one larger event alone), and a
/// reader that goes on from each page's `next` reads every event once, in order. (A thousand events
/// of a MiB made one page of a GiB.)
pub(super) async fn pages_are_cut_by_bytes_and_paging_on_reads_every_event(engine: Engine) {
    use ensemble_core::event::TextCompletedPayload;
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    let max = 10_000;
    cfg.page_bytes = max;
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    // Small, large, and larger than a page, mixed.
    let sizes = [100, 3000, 50_000, 200, 200, 9_000, 4000, 4000, 4000, 30_000, 30_000, 10, 20, 6000, 5000, 100];
    let events: Vec<NewEvent> = sizes
        .iter()
        .enumerate()
        .map(|(i, size)| NewEvent {
            body: EventBody::MessageCompleted(TextCompletedPayload {
                item_id: format!("m{i}"),
                text: "x".repeat(*size),
            }),
            ..ev("big", i)
        })
        .collect();
    let (ack, rx) = oneshot::channel();
    let op = WriteOp::Append(AppendBatch {
        room_id: "big".into(),
        events,
        records: vec![],
        outbound: vec![],
        ack: Some(ack),
    });
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let (mut after, mut got, mut pages) = (0, Vec::new(), 0);
    loop {
        let page = store.events_after("big", after, 100).await.unwrap();
        pages += 1;
        let bytes: usize = page.events.iter().map(|(_, json)| json.get().len()).sum();
        assert!(bytes <= max || page.events.len() == 1, "{engine:?}: a page of {bytes} bytes");
        assert!(!page.events.is_empty(), "{engine:?}: a page before the head holds an event");
        got.extend(seqs(&page));
        // Full: the next event would not have fitted.
        if let Some(next) = page.next() {
            let following = store.events_after("big", next, 1).await.unwrap();
            let more = following.events[0].1.get().len();
            assert!(bytes + more > max, "{engine:?}: a page of {bytes} bytes left out one of {more}");
            after = next;
        } else {
            assert_eq!(got.last().copied(), Some(page.head_seq));
            break;
        }
    }
    assert_eq!(got, (1..=sizes.len() as u64).collect::<Vec<_>>(), "{engine:?}: every event once, in order");
    assert!(pages > 5, "{engine:?}: {pages} pages");
    // `limit` still counts: two small events, two a page.
    let page = store.events_after("big", 3, 2).await.unwrap();
    assert_eq!((seqs(&page), page.next()), (vec![4, 5], Some(5)));
}
