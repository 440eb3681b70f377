//! The store's own tests: seq assignment, group commit, savepoint isolation, retention, the ledger.

use std::time::Duration;

use super::*;
use crate::event::NewEvent;
use crate::event::{EventBody, TextDeltaPayload};
use crate::model::Scope;

#[derive(Default)]
struct Collect(Mutex<Vec<(String, u64)>>);
impl CommitListener for Collect {
    fn committed(&self, room: &str, events: &[CommittedEvent]) {
        let mut v = self.0.lock().unwrap();
        for e in events {
            v.push((room.to_owned(), e.seq));
        }
    }
}

fn ev(room: &str, i: usize) -> NewEvent {
    NewEvent {
        room_id: room.into(),
        event_id: format!("e{i}"),
        session_id: "s".into(),
        scope: Scope::Canonical,
        turn_id: None,
        occurred_at_ms: 1,
        body: EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: format!("{i}") }),
    }
}

async fn append_n(store: &Store, room: &str, n: usize) -> u64 {
    let (ack, rx) = oneshot::channel();
    store
        .send(WriteOp::Append(AppendBatch {
            room_id: room.into(),
            events: (0..n).map(|i| ev(room, i)).collect(),
            records: vec![],
            ack: Some(ack),
        }))
        .await
        .unwrap();
    rx.await.unwrap().unwrap()
}

#[tokio::test]
async fn seqs_are_gap_free_per_room_and_continue_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let listener = Arc::new(Collect::default());
    let store = Store::open(StoreConfig::new(&path), listener.clone()).unwrap();
    assert_eq!(append_n(&store, "a", 3).await, 3);
    assert_eq!(append_n(&store, "b", 2).await, 2);
    assert_eq!(append_n(&store, "a", 1).await, 4);
    let seen = listener.0.lock().unwrap().clone();
    let a: Vec<u64> = seen.iter().filter(|(r, _)| r == "a").map(|(_, s)| *s).collect();
    assert_eq!(a, vec![1, 2, 3, 4]);
    store.close().await;
    drop(store);

    let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
    assert_eq!(append_n(&store, "a", 1).await, 5);
    let page = store.events_after("a", 2, 10).await.unwrap();
    assert_eq!(page.events.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![3, 4, 5]);
    assert_eq!(page.head_seq, 5);
    let v: serde_json::Value = serde_json::from_str(page.events[0].1.get()).unwrap();
    assert_eq!(v["seq"], 3);
    assert_eq!(v["type"], "message.delta");
}

#[tokio::test]
async fn retention_prunes_but_seq_continues() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
    cfg.retention.max_events_per_room = Some(8);
    let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
    for _ in 0..5 {
        append_n(&store, "r", 4).await;
    }
    let (head, pruned) = store.room_heads("r").await.unwrap();
    assert_eq!(head, 20);
    assert!(pruned >= 10, "pruned through {pruned}");
    let page = store.events_after("r", 0, 100).await.unwrap();
    assert_eq!(page.events.first().map(|e| e.0), Some(pruned + 1));
    assert_eq!(page.events.last().map(|e| e.0), Some(20));
    assert_eq!(page.pruned_through, pruned);
}

#[tokio::test]
async fn a_group_commits_many_events_in_few_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
    cfg.linger = Duration::from_millis(20);
    cfg.linger_when_idle = true;
    let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
    let mut acks = Vec::new();
    for i in 0..200 {
        let (ack, rx) = oneshot::channel();
        store
            .send(WriteOp::Append(AppendBatch {
                room_id: "r".into(),
                events: vec![ev("r", i)],
                records: vec![],
                ack: Some(ack),
            }))
            .await
            .unwrap();
        acks.push(rx);
    }
    let mut last = 0;
    for rx in acks {
        let seq = rx.await.unwrap().unwrap();
        assert!(seq > last, "acks arrive in seq order");
        last = seq;
    }
    assert_eq!(last, 200);
    let stored: i64 = store.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))?)).await.unwrap();
    assert_eq!(stored, 200);
    let commits = store.stats().commits.load(std::sync::atomic::Ordering::Relaxed);
    assert!(commits <= 20, "200 queued events took {commits} commits");
}

#[tokio::test]
async fn a_failed_append_rolls_back_only_itself_within_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
    let append = |n: usize| {
        let (ack, rx) = oneshot::channel();
        let op = WriteOp::Append(AppendBatch {
            room_id: "r".into(),
            events: (0..n).map(|i| ev("r", i)).collect(),
            records: vec![],
            ack: Some(ack),
        });
        (op, rx)
    };
    let raw = |sql: &'static str| {
        let (reply, rx) = oneshot::channel();
        let job = FnJob {
            f: Some(move |c: &Connection| -> Result<(), StoreError> {
                c.execute_batch(sql)?;
                Ok(())
            }),
            value: None,
            reply: Some(reply),
        };
        (WriteOp::Job(Box::new(job)), rx)
    };
    // A first group leaves the room's head cached in the writer (seq 1).
    let (a0, r0) = append(1);
    store.send(a0).await.unwrap();
    assert_eq!(r0.await.unwrap().unwrap(), 1);
    // One group: seq 2 lands; a stray row at seq 4 makes the next 2-event append fail on its
    // second event; the stray row goes; the last append must get seq 3, not clash with seq 2.
    let (a1, r1) = append(1);
    let (j1, _) = raw("INSERT INTO events VALUES ('r', 4, 0, '{}')");
    let (a2, r2) = append(2);
    let (j2, _) = raw("DELETE FROM events WHERE room_id = 'r' AND seq = 4");
    let (a3, r3) = append(1);
    for op in [a1, j1, a2, j2, a3] {
        store.send(op).await.unwrap();
    }
    assert_eq!(r1.await.unwrap().unwrap(), 2);
    assert!(r2.await.unwrap().is_err());
    assert_eq!(r3.await.unwrap().unwrap(), 3, "the failed append's seqs are handed out again");
    let page = store.events_after("r", 0, 10).await.unwrap();
    assert_eq!(page.events.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2, 3]);
}

#[tokio::test]
async fn the_goal_ledger_keeps_the_first_bind_and_marks_conflicts_ambiguous() {
    use crate::goal::GoalIdentity;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
    let key = LedgerKey {
        room_id: "r".into(),
        session_id: "s".into(),
        session_created_at_ms: 1,
        provider_session_id: "t".into(),
        fingerprint: "fp".into(),
    };
    assert_eq!(store.goal_lookup(key.clone()).await.unwrap(), None);
    let a = GoalIdentity::new("a", 1, 0);
    let b = store.goal_bind(key.clone(), a.clone()).await.unwrap();
    assert_eq!((b.identity.clone(), b.ambiguous), (a.clone(), false));
    assert!(!store.goal_bind(key.clone(), a.clone()).await.unwrap().ambiguous, "idempotent");
    let c = store.goal_bind(key.clone(), GoalIdentity::new("b", 2, 0)).await.unwrap();
    assert!(c.ambiguous);
    assert_eq!(c.identity, a, "the first identity stays");
    store.close().await;
    drop(store);
    let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
    let after = store.goal_lookup(key.clone()).await.unwrap().unwrap();
    assert!(after.ambiguous, "ambiguity survives a restart");
    let other = LedgerKey { session_created_at_ms: 2, ..key };
    assert_eq!(store.goal_lookup(other).await.unwrap(), None, "another incarnation of the session");
}

#[tokio::test]
async fn jobs_return_values_after_commit_and_failures_roll_back_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig::new(dir.path().join("db.sqlite")), Arc::new(Collect::default())).unwrap();
    store.set_provider_state("r", "s", "k", "v1".into()).await.unwrap();
    let bad = store.write(|c| {
        c.execute("INSERT INTO provider_state VALUES ('r','s','k2','x')", [])?;
        c.execute("INSERT INTO no_such_table VALUES (1)", [])?;
        Ok(())
    });
    let good = store.set_provider_state("r", "s", "k3", "v3".into());
    let (bad, good) = tokio::join!(bad, good);
    assert!(bad.is_err());
    good.unwrap();
    assert_eq!(store.provider_state("r", "s", "k").await.unwrap().as_deref(), Some("v1"));
    assert_eq!(store.provider_state("r", "s", "k2").await.unwrap(), None, "failed job rolled back");
    assert_eq!(store.provider_state("r", "s", "k3").await.unwrap().as_deref(), Some("v3"));
}

/// Appends in a row share one savepoint; one of them failing must still undo only its own writes
/// (events, session records, seqs) and leave the others, and the `rooms` heads, as if each had had
/// its own savepoint.
#[tokio::test]
async fn a_failed_append_inside_a_run_of_appends_rolls_back_only_itself() {
    use crate::model::Session;
    use crate::session::{Phase, SessionRecord};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let mut cfg = StoreConfig::new(&path);
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let listener = Arc::new(Collect::default());
    let store = Store::open(cfg, listener.clone()).unwrap();
    let append = |room: &str, n: usize, session: Option<&str>| {
        let (ack, rx) = oneshot::channel();
        let records = session
            .map(|s| SessionRecord::new(Session::new_canonical(room, s, "scripted", "/", 0), Phase::Live))
            .into_iter()
            .collect();
        let op = WriteOp::Append(AppendBatch {
            room_id: room.into(),
            events: (0..n).map(|i| ev(room, i)).collect(),
            records,
            ack: Some(ack),
        });
        (op, rx)
    };
    // Room `bad` gets seq 1 (its head is cached in the writer), then a stray row at seq 2 that
    // its next append will clash with.
    let (op, rx) = append("bad", 1, None);
    store.send(op).await.unwrap();
    assert_eq!(rx.await.unwrap().unwrap(), 1);
    store
        .write(|c| {
            c.execute("INSERT INTO events VALUES ('bad', 2, 0, '{}')", [])?;
            Ok(())
        })
        .await
        .unwrap();
    listener.0.lock().unwrap().clear();

    // One group, appends only: a, bad (fails), b, a.
    let (a1, ra1) = append("a", 1, Some("sa"));
    let (bad, rbad) = append("bad", 2, Some("sbad"));
    let (b1, rb1) = append("b", 2, Some("sb"));
    let (a2, ra2) = append("a", 1, None);
    for op in [a1, bad, b1, a2] {
        store.send(op).await.unwrap();
    }
    assert_eq!(ra1.await.unwrap().unwrap(), 1);
    assert!(rbad.await.unwrap().is_err());
    assert_eq!(rb1.await.unwrap().unwrap(), 2);
    assert_eq!(ra2.await.unwrap().unwrap(), 2);
    assert_eq!(store.stats().commits.load(std::sync::atomic::Ordering::Relaxed), 3, "the four appends were one group");
    let fanned = listener.0.lock().unwrap().clone();
    let want: Vec<(String, u64)> =
        [("a", 1), ("b", 1), ("b", 2), ("a", 2)].iter().map(|(r, s)| (r.to_string(), *s)).collect();
    assert_eq!(fanned, want, "only committed events are fanned out, in order");
    let sessions: Vec<String> =
        store.load_sessions().await.unwrap().into_iter().map(|r| r.session.session_id).collect();
    assert_eq!(sessions, vec!["sa", "sb"], "the failed append's record is not written");
    assert_eq!(store.room_heads("bad").await.unwrap(), (1, 0));
    assert_eq!(store.room_heads("a").await.unwrap(), (2, 0));
    assert_eq!(store.room_heads("b").await.unwrap(), (2, 0));
    store.close().await;
    drop(store);

    // The heads written once per group survive a restart.
    let store = Store::open(StoreConfig::new(&path), Arc::new(Collect::default())).unwrap();
    assert_eq!(append_n(&store, "a", 1).await, 3);
    assert_eq!(append_n(&store, "b", 1).await, 3);
    let page = store.events_after("bad", 0, 10).await.unwrap();
    assert_eq!(page.events.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2], "its own row and the stray one");
}

#[tokio::test]
async fn a_lone_operation_after_an_idle_spell_does_not_wait_for_the_linger() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
    // Were the lone appends to linger, each ack would take a minute.
    cfg.linger = Duration::from_secs(60);
    let store = Store::open(cfg, Arc::new(Collect::default())).unwrap();
    for i in 0..3 {
        let (ack, rx) = oneshot::channel();
        store
            .send(WriteOp::Append(AppendBatch {
                room_id: "r".into(),
                events: vec![ev("r", i)],
                records: vec![],
                ack: Some(ack),
            }))
            .await
            .unwrap();
        let seq =
            tokio::time::timeout(Duration::from_secs(10), rx).await.expect("acked without lingering").unwrap().unwrap();
        assert_eq!(seq, i as u64 + 1);
    }
}
