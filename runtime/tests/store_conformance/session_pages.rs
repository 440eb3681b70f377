//! Reading one session's events a page at a time, backwards from its tail and forwards: every seq
//! of the session once, in order, and nothing of another session, with sessions interleaved in
//! one room, records that move, batches of two sessions, retention and a restart (SQLite links
//! each session's rows: migration 12; PostgreSQL reads its index).

use super::*;
use ensemble_runtime::store::{SessionPageFrom, StoreError};

/// One batch of `n` events of `session` (and `also` events of `other` after them), with the
/// session's record when `record` says so; answers the seqs it took per session.
async fn batch(
    store: &Store,
    session: &str,
    n: usize,
    other: Option<(&str, usize)>,
    record: Option<&SessionRecord>,
) -> Vec<(String, u64)> {
    let mut events: Vec<NewEvent> = (0..n).map(|i| NewEvent { session_id: session.into(), ..ev("r", i) }).collect();
    if let Some((o, m)) = other {
        events.extend((0..m).map(|i| NewEvent { session_id: o.into(), ..ev("r", i) }));
    }
    let names: Vec<String> = events.iter().map(|e| e.session_id.clone()).collect();
    let (ack, rx) = oneshot::channel();
    let records = record.map(|r| RecordRow::of(r).unwrap()).into_iter().collect();
    store
        .send(WriteOp::Append(AppendBatch { room_id: "r".into(), events, records, outbound: vec![], ack: Some(ack) }))
        .await
        .unwrap();
    let last = rx.await.unwrap().unwrap();
    let first = last + 1 - names.len() as u64;
    names.into_iter().zip(first..).collect()
}

/// The session's seqs read back to front in pages of `limit`, each page oldest first.
async fn read_back(store: &Store, session: &str, limit: usize) -> Result<Vec<u64>, StoreError> {
    let mut got: Vec<u64> = Vec::new();
    let mut before = u64::MAX;
    loop {
        let page = store.session_events("r", session, SessionPageFrom::Before(before), limit).await?;
        assert!(page.events.len() <= limit);
        let seqs: Vec<u64> = page.events.iter().map(|e| e.0).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
        for (seq, json) in &page.events {
            let v: serde_json::Value = serde_json::from_str(json.get()).unwrap();
            assert_eq!((&v["seq"], &v["sessionId"]), (&serde_json::json!(seq), &serde_json::json!(session)));
        }
        let mut all = seqs.clone();
        all.extend(got);
        got = all;
        match seqs.first() {
            Some(first) if page.more => before = *first,
            _ => return Ok(got),
        }
    }
}

/// The session's seqs read front to back in pages of `limit`.
async fn read_forward(store: &Store, session: &str, limit: usize) -> Vec<u64> {
    let mut got: Vec<u64> = Vec::new();
    loop {
        let after = got.last().copied().unwrap_or(0);
        let page = store.session_events("r", session, SessionPageFrom::After(after), limit).await.unwrap();
        got.extend(page.events.iter().map(|e| e.0));
        if !page.more {
            return got;
        }
    }
}

pub(super) async fn a_sessions_events_page_back_from_its_tail_and_forward(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.retention.max_events_per_room = Some(200);
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    let rec = |s: &str, title: &str| {
        let mut session = Session::new_canonical("r", s, "scripted", "/", 0);
        session.title = title.into();
        SessionRecord::new(session, Phase::Live)
    };
    let mut seen: Vec<(String, u64)> = Vec::new();
    for s in ["a", "b", "c"] {
        seen.extend(batch(&store, s, 2, None, Some(&rec(s, "first"))).await);
    }
    // Interleaved: a's records change (a record's first change moves its row), batches carry two
    // sessions, c writes rarely.
    for i in 0..60 {
        let a_record = (i % 7 == 0).then(|| rec("a", &format!("t{i}")));
        seen.extend(batch(&store, "a", 3, Some(("b", 1)), a_record.as_ref()).await);
        seen.extend(batch(&store, "b", 2, None, None).await);
        if i % 20 == 0 {
            seen.extend(batch(&store, "c", 1, None, None).await);
        }
    }
    let check = async |store: &Store, seen: &[(String, u64)]| {
        let (head, pruned) = store.room_heads("r").await.unwrap();
        for s in ["a", "b", "c"] {
            let want: Vec<u64> = seen.iter().filter(|(x, q)| x == s && *q > pruned).map(|(_, q)| *q).collect();
            for limit in [1, 5, 64, 1000] {
                assert_eq!(read_back(store, s, limit).await.unwrap(), want, "{engine:?} {s} back in {limit}s");
                assert_eq!(read_forward(store, s, limit).await, want, "{engine:?} {s} forward in {limit}s");
            }
            let tail = store.session_events("r", s, SessionPageFrom::Before(head + 1), 5).await.unwrap();
            assert_eq!(tail.last_seq, *want.last().unwrap(), "{engine:?} {s}");
            assert_eq!(tail.head_seq, head);
            // From any seq of the room, not only one of the session's own.
            for before in [pruned + 1, pruned + 2, (pruned + head) / 2, head, head + 1] {
                let page = store.session_events("r", s, SessionPageFrom::Before(before), 4).await.unwrap();
                let older: Vec<u64> = want.iter().copied().filter(|q| *q < before).collect();
                let expect = older[older.len().saturating_sub(4)..].to_vec();
                assert_eq!(page.events.iter().map(|e| e.0).collect::<Vec<_>>(), expect, "{engine:?} {s} < {before}");
                assert_eq!(page.more, want.iter().filter(|q| **q < before).count() > 4, "{engine:?} {s} < {before}");
            }
        }
        let none = store.session_events("r", "nobody", SessionPageFrom::Before(u64::MAX), 10).await.unwrap();
        assert!(none.events.is_empty() && none.last_seq == 0 && !none.more);
    };
    check(&store, &seen).await;
    let (_, pruned) = store.room_heads("r").await.unwrap();
    assert!(pruned > 0, "{engine:?}: retention pruned part of the room");

    // After a restart each chain goes on where it stopped.
    store.close().await;
    drop(store);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    for _ in 0..5 {
        seen.extend(batch(&store, "c", 2, Some(("a", 1)), None).await);
    }
    check(&store, &seen).await;
}
