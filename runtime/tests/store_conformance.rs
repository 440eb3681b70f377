//! The store's conformance suite: every case runs against both engines, embedded SQLite and a real
//! PostgreSQL (started by `ensemble-test-engines` on a free loopback port, one server per test
//! process, a fresh database per store): gap-free seqs that continue after a restart, group
//! commit, isolation of a failed operation, retention, the goal ledger, provider state. A last
//! case runs two PostgreSQL stores (two hosts) on one room at once. The cases of tokens and the
//! audit trail are in `store_conformance/access.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ensemble_core::event::{
    CommandInfo, CommandsUpdatedPayload, EventBody, NewEvent, SessionStartedPayload, TextDeltaPayload,
};
use ensemble_core::goal::GoalIdentity;
use ensemble_core::model::{Scope, Session};
use ensemble_core::shared_list::SharedList;
use ensemble_runtime::session::{Phase, SessionRecord};
use ensemble_runtime::store::{
    AppendBatch, CommitListener, CommittedEvent, LedgerKey, Outbound, OutboxAttempt, OutboxClaim, OutboxState,
    RecordRow, Settle, Store, StoreConfig, WebhookRecord, WriteOp,
};
use ensemble_runtime::test_util::{StalledWriter, poll_once};
use ensemble_test_engines::TestDatabase;
use tokio::sync::oneshot;

/// The cases of tokens and the audit trail.
#[path = "store_conformance/access.rs"]
mod access;
use access::*;

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

#[derive(Clone, Copy, Debug)]
enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    /// SQL that makes inserting event `seq` of `room` fail, and SQL that lets it through again:
    /// PostgreSQL's unique key by room and seq refuses it while a stray row holds the seq; SQLite's
    /// events have no key by room (migration 5), so a trigger refuses it.
    fn refuse_event(self, room: &str, seq: u64) -> (String, String) {
        match self {
            Engine::Postgres => (
                format!("INSERT INTO events (room_id, seq, occurred_at_ms, json) VALUES ('{room}', {seq}, 0, '{{}}')"),
                format!("DELETE FROM events WHERE room_id = '{room}' AND seq = {seq}"),
            ),
            Engine::Sqlite => (
                format!(
                    "CREATE TRIGGER refuse_{room}_{seq} BEFORE INSERT ON events WHEN NEW.room_id = '{room}' \
                     AND NEW.seq = {seq} BEGIN SELECT RAISE(ABORT, 'refused'); END"
                ),
                format!("DROP TRIGGER refuse_{room}_{seq}"),
            ),
        }
    }
}

/// Where one case's stores live: a SQLite file, or a database of its own on PostgreSQL (the
/// run's shared server, or one of its own: `TestDatabase`).
struct Place {
    dir: tempfile::TempDir,
    url: Option<String>,
    _db: Option<TestDatabase>,
}

impl Place {
    /// `None` for PostgreSQL where it is missing and `scripts/test` does not demand it (that
    /// engine's half of the case skips; SQLite's runs).
    async fn new(engine: Engine) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let (url, db) = match engine {
            Engine::Sqlite => (None, None),
            Engine::Postgres => {
                if !ensemble_test_engines::tier::postgres() {
                    return None;
                }
                // Its helpers block on a runtime of their own: off this one.
                let db = tokio::task::spawn_blocking(|| TestDatabase::create("conformance").unwrap()).await.unwrap();
                (Some(db.url().to_owned()), Some(db))
            }
        };
        Some(Self { dir, url, _db: db })
    }

    fn config(&self) -> StoreConfig {
        match &self.url {
            Some(url) => StoreConfig::postgres(url.clone()),
            None => StoreConfig::new(self.dir.path().join("db.sqlite")),
        }
    }

    async fn open(&self, cfg: StoreConfig, listener: Arc<dyn CommitListener>) -> Store {
        Store::connect(cfg, listener).await.unwrap()
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
        actor: None,
        body: EventBody::MessageDelta(TextDeltaPayload { item_id: "i".into(), text: format!("{i}") }),
    }
}

fn append_op(
    room: &str,
    n: usize,
    session: Option<&str>,
) -> (WriteOp, oneshot::Receiver<Result<u64, ensemble_runtime::store::StoreError>>) {
    let (ack, rx) = oneshot::channel();
    let records = session
        .map(|s| SessionRecord::new(Session::new_canonical(room, s, "scripted", "/", 0), Phase::Live))
        .map(|rec| RecordRow::of(&rec).expect("a record serialises"))
        .into_iter()
        .collect();
    let op = WriteOp::Append(AppendBatch {
        room_id: room.into(),
        events: (0..n).map(|i| ev(room, i)).collect(),
        records,
        outbound: vec![],
        ack: Some(ack),
    });
    (op, rx)
}

async fn append_n(store: &Store, room: &str, n: usize) -> u64 {
    let (op, rx) = append_op(room, n, None);
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap()
}

fn seqs(page: &ensemble_runtime::store::EventPage) -> Vec<u64> {
    page.events.iter().map(|e| e.0).collect()
}

/// Each case, once per engine.
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test] async fn $case() { super::$case(super::Engine::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $case() { super::$case(super::Engine::Postgres).await })*
        }
    };
}

conformance!(
    seqs_are_gap_free_per_room_and_continue_after_reopen,
    retention_prunes_but_seq_continues,
    a_group_commits_many_events_in_few_transactions,
    a_failed_append_rolls_back_only_itself_within_a_group,
    a_failed_append_inside_a_run_of_appends_rolls_back_only_itself,
    the_goal_ledger_keeps_the_first_bind_and_marks_conflicts_ambiguous,
    a_failed_operation_rolls_back_alone_and_the_others_commit,
    a_lone_operation_after_an_idle_spell_does_not_wait_for_the_linger,
    sessions_and_rooms_are_listed_and_deleted,
    pages_of_interleaved_pruned_logs_hold_every_seq_once,
    a_record_as_started_reads_back_also_after_its_event_is_pruned,
    events_carrying_a_shared_list_read_back_as_they_were_published,
    tokens_read_back_exactly_in_creation_order,
    a_token_with_a_taken_id_or_secret_hash_is_refused_alone,
    a_token_is_revoked_once_and_revocations_and_touches_survive_a_reopen,
    a_revocation_takes_every_token_its_token_made_and_nothing_else,
    a_touch_never_moves_a_tokens_last_use_backwards,
    a_token_prune_removes_only_tokens_revoked_or_expired_before_its_time,
    audit_seqs_are_gap_free_across_appends_and_a_reopen_and_page_exactly,
    an_audit_prune_removes_only_older_records_and_seqs_go_on,
    webhook_deliveries_are_written_with_their_events_claimed_once_and_settled,
    pages_are_cut_by_bytes_and_paging_on_reads_every_event,
    a_sessions_events_page_back_from_its_tail_and_forward,
);

#[path = "store_conformance/session_pages.rs"]
mod session_pages;
use session_pages::a_sessions_events_page_back_from_its_tail_and_forward;

#[path = "store_conformance/pages.rs"]
mod pages;
use pages::{
    pages_are_cut_by_bytes_and_paging_on_reads_every_event, pages_of_interleaved_pruned_logs_hold_every_seq_once,
};

/// A provider's command list made once, as the scripted agent's is (its JSON written once).
fn constant_commands() -> SharedList<CommandInfo> {
    static LIST: std::sync::LazyLock<SharedList<CommandInfo>> = std::sync::LazyLock::new(|| {
        SharedList::new(
            (0..12)
                .map(|i| CommandInfo {
                    name: format!("c{i}"),
                    description: format!("command \"{i}\" — é\n"),
                    input_hint: (i % 2 == 0).then(|| "ARGS".into()),
                })
                .collect(),
        )
    });
    LIST.clone()
}

fn commands_event(room: &str, i: usize, commands: SharedList<CommandInfo>, turn: Option<&str>) -> NewEvent {
    NewEvent {
        turn_id: turn.map(Into::into),
        body: EventBody::CommandsUpdated(CommandsUpdatedPayload { commands }),
        ..ev(room, i)
    }
}

/// What a reader must get back: the event as its frame carried it.
fn published(events: &[NewEvent], first_seq: u64) -> Vec<String> {
    events.iter().zip(first_seq..).map(|(e, seq)| serde_json::to_string(&e.clone().with_seq(seq)).unwrap()).collect()
}

/// Events that carry a provider's shared list read back byte for byte as they were published, by
/// page and by turn, after a restart, and after a group whose first use of the list was rolled
/// back.
async fn events_carrying_a_shared_list_read_back_as_they_were_published(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    let other: SharedList<CommandInfo> =
        SharedList::new(vec![CommandInfo { name: "x".into(), description: "not constant".into(), input_hint: None }]);
    // One group: the first append to carry the list fails (seq 2 refused) and is rolled back.
    let (refuse, allow) = engine.refuse_event("r", 2);
    store.exec(&refuse).await.unwrap();
    let batch = |events: Vec<NewEvent>| {
        let (ack, rx) = oneshot::channel();
        (
            WriteOp::Append(AppendBatch {
                room_id: "r".into(),
                events,
                records: vec![],
                outbound: vec![],
                ack: Some(ack),
            }),
            rx,
        )
    };
    let (failing, r_failing) = batch(vec![ev("r", 0), commands_event("r", 1, constant_commands(), None)]);
    let (exec_allow, _) = {
        let (ack, rx) = oneshot::channel();
        (WriteOp::Exec { sql: allow, ack }, rx)
    };
    let first = vec![
        commands_event("r", 2, constant_commands(), None),
        ev("r", 3),
        commands_event("r", 4, constant_commands(), Some("t")),
        commands_event("r", 5, other.clone(), None),
    ];
    let (ok, r_ok) = batch(first.clone());
    for op in [failing, exec_allow, ok] {
        store.send(op).await.unwrap();
    }
    assert!(r_failing.await.unwrap().is_err());
    assert_eq!(r_ok.await.unwrap().unwrap(), 4);
    let read = |page: ensemble_runtime::store::EventPage| -> Vec<String> {
        page.events.iter().map(|(_, raw)| raw.get().to_owned()).collect()
    };
    assert_eq!(read(store.events_after("r", 0, 100).await.unwrap()), published(&first, 1));
    let by_turn: Vec<String> = store.turn_events("r", "t").await.unwrap().iter().map(|r| r.get().to_owned()).collect();
    assert_eq!(by_turn, published(&first, 1)[2..3]);
    store.close().await;
    drop(store);

    // After a restart, and past a page boundary.
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    let second = vec![commands_event("r", 6, constant_commands(), None), ev("r", 7)];
    let (more, r_more) = batch(second.clone());
    store.send(more).await.unwrap();
    assert_eq!(r_more.await.unwrap().unwrap(), 6);
    let mut all = published(&first, 1);
    all.extend(published(&second, 5));
    assert_eq!(read(store.events_after("r", 0, 100).await.unwrap()), all);
    assert_eq!(read(store.events_after("r", 3, 2).await.unwrap()), all[3..5]);
    store.close().await;
    drop(store);
}

async fn seqs_are_gap_free_per_room_and_continue_after_reopen(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let listener = Arc::new(Collect::default());
    let store = place.open(place.config(), listener.clone()).await;
    assert_eq!(append_n(&store, "a", 3).await, 3);
    assert_eq!(append_n(&store, "b", 2).await, 2);
    assert_eq!(append_n(&store, "a", 1).await, 4);
    let seen = listener.0.lock().unwrap().clone();
    let a: Vec<u64> = seen.iter().filter(|(r, _)| r == "a").map(|(_, s)| *s).collect();
    assert_eq!(a, vec![1, 2, 3, 4], "{engine:?}");
    store.close().await;
    drop(store);

    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(append_n(&store, "a", 1).await, 5, "{engine:?}: seq continues after a restart");
    let page = store.events_after("a", 2, 10).await.unwrap();
    assert_eq!(seqs(&page), vec![3, 4, 5]);
    assert_eq!(page.head_seq, 5);
    let v: serde_json::Value = serde_json::from_str(page.events[0].1.get()).unwrap();
    assert_eq!(v["seq"], 3);
    assert_eq!(v["type"], "message.delta");
}

async fn retention_prunes_but_seq_continues(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.retention.max_events_per_room = Some(8);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    for _ in 0..5 {
        append_n(&store, "r", 4).await;
    }
    let (head, pruned) = store.room_heads("r").await.unwrap();
    assert_eq!(head, 20);
    assert!(pruned >= 10, "{engine:?}: pruned through {pruned}");
    let page = store.events_after("r", 0, 100).await.unwrap();
    assert_eq!(page.events.first().map(|e| e.0), Some(pruned + 1));
    assert_eq!(page.events.last().map(|e| e.0), Some(20));
    assert_eq!(page.pruned_through, pruned);
}

async fn a_group_commits_many_events_in_few_transactions(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(20);
    cfg.linger_when_idle = true;
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    let mut acks = Vec::new();
    for _ in 0..200 {
        let (op, rx) = append_op("r", 1, None);
        store.send(op).await.unwrap();
        acks.push(rx);
    }
    let mut last = 0;
    for rx in acks {
        let seq = rx.await.unwrap().unwrap();
        assert!(seq > last, "acks arrive in seq order");
        last = seq;
    }
    assert_eq!(last, 200);
    assert_eq!(store.events_after("r", 0, 1000).await.unwrap().events.len(), 200);
    let commits = store.stats().commits.load(Ordering::Relaxed);
    assert!(commits <= 20, "{engine:?}: 200 queued events took {commits} commits");
}

async fn a_failed_append_rolls_back_only_itself_within_a_group(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    let exec = |sql: String| {
        let (ack, rx) = oneshot::channel();
        (WriteOp::Exec { sql, ack }, rx)
    };
    assert_eq!(append_n(&store, "r", 1).await, 1);
    // One group: seq 2 lands; seq 4 refused makes the next 2-event append fail on its second
    // event; seq 4 is let through again; the last append must get seq 3, not clash with seq 2.
    let (refuse, allow) = engine.refuse_event("r", 4);
    let (a1, r1) = append_op("r", 1, None);
    let (j1, _) = exec(refuse);
    let (a2, r2) = append_op("r", 2, None);
    let (j2, _) = exec(allow);
    let (a3, r3) = append_op("r", 1, None);
    for op in [a1, j1, a2, j2, a3] {
        store.send(op).await.unwrap();
    }
    assert_eq!(r1.await.unwrap().unwrap(), 2);
    assert!(r2.await.unwrap().is_err());
    assert_eq!(r3.await.unwrap().unwrap(), 3, "{engine:?}: the failed append's seqs are handed out again");
    assert_eq!(seqs(&store.events_after("r", 0, 10).await.unwrap()), vec![1, 2, 3]);
}

/// Appends in a row (SQLite: one savepoint for the run; PostgreSQL: no savepoint at first); one of
/// them failing must still undo only its own writes (events, session records, seqs) and leave the
/// others, and the room heads, as if each had had its own savepoint.
async fn a_failed_append_inside_a_run_of_appends_rolls_back_only_itself(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let listener = Arc::new(Collect::default());
    let store = place.open(cfg, listener.clone()).await;
    // Room `bad` gets seq 1, then seq 2 is refused to its next append.
    assert_eq!(append_n(&store, "bad", 1).await, 1);
    store.exec(&engine.refuse_event("bad", 2).0).await.unwrap();
    listener.0.lock().unwrap().clear();

    // One group, appends only: a, bad (fails), b, a.
    let (a1, ra1) = append_op("a", 1, Some("sa"));
    let (bad, rbad) = append_op("bad", 2, Some("sbad"));
    let (b1, rb1) = append_op("b", 2, Some("sb"));
    let (a2, ra2) = append_op("a", 1, None);
    for op in [a1, bad, b1, a2] {
        store.send(op).await.unwrap();
    }
    assert_eq!(ra1.await.unwrap().unwrap(), 1);
    assert!(rbad.await.unwrap().is_err());
    assert_eq!(rb1.await.unwrap().unwrap(), 2);
    assert_eq!(ra2.await.unwrap().unwrap(), 2);
    assert_eq!(store.stats().commits.load(Ordering::Relaxed), 3, "{engine:?}: the four appends were one group");
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
    // The failed append's record row went with it: that session's record is written anew.
    let (op, rx) = append_op("bad", 0, Some("sbad"));
    store.send(op).await.unwrap();
    assert_eq!(rx.await.unwrap().unwrap(), 1, "{engine:?}");
    let rooms: Vec<(String, u64, u64)> =
        store.rooms().await.unwrap().into_iter().map(|r| (r.room_id, r.head_seq, r.session_count)).collect();
    assert_eq!(rooms, vec![("a".into(), 2, 1), ("b".into(), 2, 1), ("bad".into(), 1, 1)], "{engine:?}");
    store.close().await;
    drop(store);

    // The heads survive a restart.
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(append_n(&store, "a", 1).await, 3);
    assert_eq!(append_n(&store, "b", 1).await, 3);
    let page = store.events_after("bad", 0, 10).await.unwrap();
    assert_eq!((seqs(&page).first(), page.head_seq), (Some(&1), 1), "{engine:?}: its own row");
}

async fn the_goal_ledger_keeps_the_first_bind_and_marks_conflicts_ambiguous(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
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
    assert!(c.ambiguous, "{engine:?}");
    assert_eq!(c.identity, a, "the first identity stays");
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let after = store.goal_lookup(key.clone()).await.unwrap().unwrap();
    assert!(after.ambiguous, "ambiguity survives a restart");
    let other = LedgerKey { session_created_at_ms: 2, ..key };
    assert_eq!(store.goal_lookup(other).await.unwrap(), None, "another incarnation of the session");
}

async fn a_failed_operation_rolls_back_alone_and_the_others_commit(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    store.set_provider_state("r", "s", "k", "v1".into()).await.unwrap();
    let bad = store.exec(
        "INSERT INTO provider_state VALUES ('r','s','k2','x');
         INSERT INTO no_such_table VALUES (1);",
    );
    let good = store.set_provider_state("r", "s", "k3", "v3".into());
    let (bad, good) = tokio::join!(bad, good);
    assert!(bad.is_err(), "{engine:?}");
    good.unwrap();
    assert_eq!(store.provider_state("r", "s", "k").await.unwrap().as_deref(), Some("v1"));
    assert_eq!(store.provider_state("r", "s", "k2").await.unwrap(), None, "{engine:?}: the failed one rolled back");
    assert_eq!(store.provider_state("r", "s", "k3").await.unwrap().as_deref(), Some("v3"));
    store.set_provider_state("r", "s", "k", "v2".into()).await.unwrap();
    assert_eq!(store.provider_state("r", "s", "k").await.unwrap().as_deref(), Some("v2"), "overwritten");
}

async fn a_lone_operation_after_an_idle_spell_does_not_wait_for_the_linger(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    // Were the lone appends to linger, each ack would take a minute.
    cfg.linger = Duration::from_secs(60);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    for i in 0..3 {
        let (op, rx) = append_op("r", 1, None);
        store.send(op).await.unwrap();
        let seq =
            tokio::time::timeout(Duration::from_secs(10), rx).await.expect("acked without lingering").unwrap().unwrap();
        assert_eq!(seq, i as u64 + 1);
    }
}

async fn sessions_and_rooms_are_listed_and_deleted(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let (op, rx) = append_op("r1", 2, Some("s1"));
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let (op, rx) = append_op("r2", 0, Some("s2"));
    store.send(op).await.unwrap();
    assert_eq!(rx.await.unwrap().unwrap(), 0, "no events: the room's head");
    let rooms: Vec<(String, u64, u64)> =
        store.rooms().await.unwrap().into_iter().map(|r| (r.room_id, r.head_seq, r.session_count)).collect();
    assert_eq!(rooms, vec![("r1".into(), 2, 1), ("r2".into(), 0, 1)], "{engine:?}");
    let (op, rx) = append_op("r1", 0, Some("s1"));
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let counts: Vec<u64> = store.rooms().await.unwrap().into_iter().map(|r| r.session_count).collect();
    assert_eq!(counts, vec![1, 1], "{engine:?}: a record written again is still one session");
    let mut turn = ev("r1", 9);
    turn.turn_id = Some("t1".into());
    store
        .send(WriteOp::Append(AppendBatch {
            room_id: "r1".into(),
            events: vec![turn],
            records: vec![],
            outbound: vec![],
            ack: None,
        }))
        .await
        .unwrap();
    store.set_provider_state("r2", "s2", "k", "v".into()).await.unwrap();
    assert_eq!(store.turn_events("r1", "t1").await.unwrap().len(), 1, "{engine:?}: a turn's events");
    store.send(WriteOp::DeleteSession { room_id: "r2".into(), session_id: "s2".into() }).await.unwrap();
    store.flush().await.unwrap();
    let ids: Vec<String> = store.load_sessions().await.unwrap().into_iter().map(|r| r.session.session_id).collect();
    assert_eq!(ids, vec!["s1"]);
    assert_eq!(store.provider_state("r2", "s2", "k").await.unwrap(), None, "its provider state goes too");
    let rooms: Vec<(String, u64, u64)> =
        store.rooms().await.unwrap().into_iter().map(|r| (r.room_id, r.head_seq, r.session_count)).collect();
    assert_eq!(rooms, vec![("r1".into(), 3, 1)], "{engine:?}: a room with neither events nor sessions is not listed");
    store.close().await;
    drop(store);
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let (op, rx) = append_op("r2", 0, Some("s2"));
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let rooms: Vec<(String, u64, u64)> =
        store.rooms().await.unwrap().into_iter().map(|r| (r.room_id, r.head_seq, r.session_count)).collect();
    assert_eq!(rooms, vec![("r1".into(), 3, 1), ("r2".into(), 0, 1)], "{engine:?}: after a restart");
    let ids: Vec<String> = store.load_sessions().await.unwrap().into_iter().map(|r| r.session.session_id).collect();
    assert_eq!(ids, vec!["s1", "s2"]);
    store.ping().await.unwrap();
}

/// SQLite's writer keeps each record's row id in memory (the records have no index by room and
/// session): a record written and then rolled back with its failing operation must leave no trace
/// there, or that session's next write would land on whichever record took the row id.
#[tokio::test]
async fn sqlite_a_record_rolled_back_with_its_operation_is_written_anew() {
    let Some(place) = Place::new(Engine::Sqlite).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    store
        .exec("CREATE TRIGGER no_sy BEFORE INSERT ON sessions WHEN NEW.session_id = 'sy' BEGIN SELECT RAISE(ABORT, 'no sy'); END")
        .await
        .unwrap();
    let record = |s: &str| {
        RecordRow::of(&SessionRecord::new(Session::new_canonical("r", s, "scripted", "/", 0), Phase::Live)).unwrap()
    };
    // One group: the append writing sx and then sy fails on sy (sx's row goes with it) and is
    // replayed in a savepoint of its own; sz, after it, may take sx's row id.
    let (ok, r_ok) = append_op("r", 1, Some("s0"));
    let (ack, r_bad) = oneshot::channel();
    let bad = WriteOp::Append(AppendBatch {
        room_id: "r".into(),
        events: vec![],
        records: vec![record("sx"), record("sy")],
        outbound: vec![],
        ack: Some(ack),
    });
    let (next, r_next) = append_op("r", 0, Some("sz"));
    for op in [ok, bad, next] {
        store.send(op).await.unwrap();
    }
    r_ok.await.unwrap().unwrap();
    assert!(r_bad.await.unwrap().is_err());
    r_next.await.unwrap().unwrap();
    let (again, r_again) = append_op("r", 0, Some("sx"));
    store.send(again).await.unwrap();
    r_again.await.unwrap().unwrap();
    let ids: Vec<String> = store.load_sessions().await.unwrap().into_iter().map(|r| r.session.session_id).collect();
    assert_eq!(ids, vec!["s0", "sx", "sz"], "sx written anew, sz untouched");
    let counts: Vec<u64> = store.rooms().await.unwrap().into_iter().map(|r| r.session_count).collect();
    assert_eq!(counts, vec![3]);
}

/// Sends an append of `events` and `records` to room `r`; its acknowledgement, to await later
/// (several sent at once make one group).
async fn send_to_r(store: &Store, events: Vec<NewEvent>, records: Vec<RecordRow>) -> Ack {
    let (ack, rx) = oneshot::channel();
    let batch = AppendBatch { room_id: "r".into(), events, records, outbound: vec![], ack: Some(ack) };
    store.send(WriteOp::Append(batch)).await.unwrap();
    rx
}

type Ack = oneshot::Receiver<Result<u64, ensemble_runtime::store::StoreError>>;

/// `n` events of `session` in room `r`.
fn events_of(session: &str, n: usize) -> Vec<NewEvent> {
    (0..n).map(|i| NewEvent { session_id: session.into(), ..ev("r", i) }).collect()
}

/// A new record of `session` in room `r`.
fn record_of(session: &str) -> RecordRow {
    RecordRow::of(&SessionRecord::new(Session::new_canonical("r", session, "scripted", "/", 0), Phase::Live)).unwrap()
}

/// The seqs of `session`'s tail in room `r` (one page of up to 100).
async fn tail_of(store: &Store, session: &str) -> Vec<u64> {
    use ensemble_runtime::store::SessionPageFrom;
    let page = store.session_events("r", session, SessionPageFrom::Before(u64::MAX), 100).await.unwrap();
    page.events.iter().map(|e| e.0).collect()
}

/// A failed append rolls back the session's chain with its rows (SQLite links each session's
/// events, migration 12): the session's next event links to the last one committed, and the
/// session reads back every committed event, in one group and after a restart.
#[tokio::test]
async fn sqlite_a_failed_append_leaves_its_sessions_chain_as_it_was() {
    let Some(place) = Place::new(Engine::Sqlite).await else { return };
    let mut cfg = place.config();
    cfg.linger = Duration::from_millis(200);
    cfg.linger_when_idle = true;
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    store
        .exec("CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.json LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'poison'); END")
        .await
        .unwrap();
    let first = send_to_r(&store, vec![ev("r", 0), ev("r", 1)], vec![record_of("s")]).await;
    assert_eq!(first.await.unwrap().unwrap(), 2);
    // One group: an event, then two of which the second is refused, then one more.
    let poisoned = NewEvent { event_id: "poison".into(), ..ev("r", 9) };
    let mut acks = Vec::new();
    for events in [vec![ev("r", 2)], vec![ev("r", 3), poisoned], vec![ev("r", 4)]] {
        acks.push(send_to_r(&store, events, vec![]).await);
    }
    let mut results = Vec::new();
    for rx in acks {
        results.push(rx.await.unwrap().is_ok());
    }
    assert_eq!(results, vec![true, false, true]);
    assert_eq!(tail_of(&store, "s").await, vec![1, 2, 3, 4]);
    store.close().await;
    drop(store);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    assert_eq!(append_n(&store, "r", 1).await, 5);
    assert_eq!(tail_of(&store, "s").await, vec![1, 2, 3, 4, 5]);
}

/// A SQLite store stopped before its sessions' rows were given their newest events (a crash:
/// they are written with the record or every `HEADS_FLUSH_EVENTS`) finds them again at the next
/// start by reading the room's events above `heads_through`: every session's tail and its next
/// events are whole.
#[tokio::test]
async fn sqlite_sessions_newest_events_are_found_again_after_a_crash() {
    let Some(place) = Place::new(Engine::Sqlite).await else { return };
    let cfg = place.config();
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    let mut want: std::collections::HashMap<&str, Vec<u64>> = Default::default();
    for s in ["a", "b"] {
        let seq = send_to_r(&store, events_of(s, 1), vec![record_of(s)]).await.await.unwrap().unwrap();
        want.entry(s).or_default().push(seq);
    }
    // Events without records: the rows of a and b do not hold them.
    for i in 0..20 {
        let s = if i % 3 == 0 { "b" } else { "a" };
        want.entry(s).or_default().push(send_to_r(&store, events_of(s, 1), vec![]).await.await.unwrap().unwrap());
    }
    // As a crash leaves them: the rows without their newest events, the room's mark at 0 (a
    // clean stop writes them, so they are taken away after it).
    store.close().await;
    drop(store);
    let db = rusqlite::Connection::open(place.dir.path().join("db.sqlite")).unwrap();
    db.execute_batch("UPDATE sessions SET last_id = NULL, last_seq = NULL; UPDATE rooms SET heads_through = 0")
        .unwrap();
    drop(db);
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    for s in ["a", "b"] {
        assert_eq!(tail_of(&store, s).await, want[s], "{s} after the crash");
    }
    // Their chains go on from there, and a clean stop writes the rows: read back again.
    want.entry("b").or_default().push(send_to_r(&store, events_of("b", 1), vec![]).await.await.unwrap().unwrap());
    store.close().await;
    drop(store);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    for s in ["a", "b"] {
        assert_eq!(tail_of(&store, s).await, want[s], "{s} after a clean stop");
    }

    // A long run of events without records: the rows are given their newest events on the way
    // (every 2,048 of the room's events), not only at a stop.
    for _ in 0..25 {
        send_to_r(&store, events_of("a", 100), vec![]).await.await.unwrap().unwrap();
    }
    let db = rusqlite::Connection::open(place.dir.path().join("db.sqlite")).unwrap();
    let (last, through): (i64, i64) = db
        .query_row(
            "SELECT s.last_seq, r.heads_through FROM sessions s JOIN rooms r ON r.room_id = s.room_id WHERE s.session_id = 'a'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(through >= 2048 && last == through, "written on the way: last {last}, through {through}");
    assert_eq!(tail_of(&store, "a").await.len(), 100, "a page of the tail");
}

/// A closed SQLite store leaves its WAL empty, so the next start reads nothing back: the writer's
/// last checkpoint empties it even while other connections are open (a reader here; SQLite itself
/// empties it only when the last connection closes), after the checkpoint thread has stopped —
/// while that thread's checkpoint ran, SQLite answered the last one busy and the WAL stayed: in 2
/// of 3 stops of a server after 3,000 starts (38–41 MB of WAL), 0 of 6 with the thread stopped
/// first. That race needs the server's load; this case checks the rest.
#[tokio::test]
async fn sqlite_a_closed_store_leaves_its_wal_empty() {
    let Some(place) = Place::new(Engine::Sqlite).await else { return };
    let wal = place.dir.path().join("db.sqlite-wal");
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    let mut acks = Vec::new();
    for b in 0..16 {
        let (ack, rx) = oneshot::channel();
        let events = (0..256).map(|i| ev("r", b * 256 + i)).collect();
        store
            .send(WriteOp::Append(AppendBatch {
                room_id: "r".into(),
                events,
                records: vec![],
                outbound: vec![],
                ack: Some(ack),
            }))
            .await
            .unwrap();
        acks.push(rx);
    }
    for rx in acks {
        rx.await.unwrap().unwrap();
    }
    // A reader's connection stays open in the store's pool.
    assert_eq!(store.events_after("r", 0, 10).await.unwrap().events.len(), 10);
    assert!(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) > 0, "the WAL holds the commits");
    store.close().await;
    let len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(len, 0, "{len} bytes of WAL left after the store closed");
}

/// SQLite reads a room's events by walking its chain of rows (migration 5): a row missing from
/// the middle makes the read fail, never return a page with a gap.
#[tokio::test]
async fn sqlite_a_broken_chain_of_events_is_an_error_not_a_gap() {
    let Some(place) = Place::new(Engine::Sqlite).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert_eq!(append_n(&store, "r", 200).await, 200);
    assert_eq!(seqs(&store.events_after("r", 100, 3).await.unwrap()), vec![101, 102, 103]);
    store.exec("DELETE FROM events WHERE room_id = 'r' AND seq = 150").await.unwrap();
    assert_eq!(seqs(&store.events_after("r", 100, 3).await.unwrap()), vec![101, 102, 103], "below the hole");
    assert_eq!(seqs(&store.events_after("r", 150, 3).await.unwrap()), vec![151, 152, 153], "above it");
    for after in [60, 140, 149] {
        let err = store.events_after("r", after, 100).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("event log breaks"), "after {after}: {err}");
    }
    // A link to the wrong row (seq 180's to seq 178's, skipping 179) is caught by its seq.
    store
        .exec(
            "UPDATE events SET prev_id = (SELECT id FROM events WHERE room_id = 'r' AND seq = 178)
             WHERE room_id = 'r' AND seq = 180",
        )
        .await
        .unwrap();
    let err = store.events_after("r", 175, 10).await.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("event log breaks"), "{err}");
    assert_eq!(seqs(&store.events_after("r", 180, 2).await.unwrap()), vec![181, 182]);
}

/// Publishers wait while the writer is behind by `queue_capacity` operations or by `queue_bytes`
/// of appends (`--store-queue`, `--store-queue-bytes`), and go on once it catches up. SQLite only:
/// the stalled writer blocks its thread, and PostgreSQL's writer is a task of the test's runtime.
#[tokio::test]
async fn sqlite_a_writer_behind_holds_publishers_back_by_count_and_by_bytes() {
    let Some(place) = Place::new(Engine::Sqlite).await else { return };
    let mut cfg = place.config();
    cfg.queue_capacity = 4;
    cfg.queue_bytes = 64 * 1024;
    let stall = StalledWriter::new(None, true);
    let store = place.open(cfg, stall.clone()).await;
    let wait = Duration::from_secs(10);
    let mut acks = Vec::new();
    let (op, ack) = append_op("r", 1, None);
    store.send(op).await.unwrap();
    acks.push(ack);
    stall.until_held().await;

    // By bytes: two appends of 40 KiB are admitted (the first below the budget, the second too,
    // taking the queue over it); the next publisher waits, whatever its size.
    for _ in 0..2 {
        let permit = store.reserve(40 * 1024).await.unwrap();
        let (op, ack) = append_op("r", 1, None);
        permit.send(op);
        acks.push(ack);
    }
    assert_eq!(store.queued_bytes(), 80 * 1024);
    let mut by_bytes = std::pin::pin!(store.reserve(1));
    assert!(poll_once(by_bytes.as_mut()).is_pending(), "a queue over its byte budget admits nobody");

    // By count: operations whose senders await them are not charged, but fill the queue.
    for _ in 0..2 {
        let (op, ack) = append_op("r", 1, None);
        store.send(op).await.unwrap();
        acks.push(ack);
    }
    assert_eq!(store.queue_len(), 4);
    let (op, ack) = append_op("r", 1, None);
    let mut by_count = std::pin::pin!(store.send(op));
    assert!(poll_once(by_count.as_mut()).is_pending(), "a full queue takes nothing more");

    stall.open();
    tokio::time::timeout(wait, by_count).await.expect("a place once the writer catches up").unwrap();
    acks.push(ack);
    let permit = tokio::time::timeout(wait, by_bytes).await.expect("admitted once the writer catches up").unwrap();
    for (i, ack) in acks.into_iter().enumerate() {
        let seq = tokio::time::timeout(wait, ack).await.expect("acked").unwrap().unwrap();
        assert_eq!(seq, i as u64 + 1, "every queued append committed, in order");
    }
    assert_eq!(store.queue_len(), 1, "the permit holds its place");
    assert_eq!(store.queued_bytes(), 1, "the writer gave back what it took; the permit holds its charge");
    drop(permit);
    assert_eq!((store.queue_len(), store.queued_bytes()), (0, 0), "a permit dropped unused gives both back");
}

/// By default a PostgreSQL store holds its database's writer lock: a second one is refused with a
/// clear error, and a graceful stop of the first releases it.
#[tokio::test]
async fn a_second_exclusive_postgres_store_is_refused() {
    let Some(place) = Place::new(Engine::Postgres).await else { return };
    let first = place.open(place.config(), Arc::new(Collect::default())).await;
    let err = Store::connect(place.config(), Arc::new(Collect::default())).await.err().expect("refused");
    assert!(err.to_string().contains("another Ensemble server is using this database"), "{err}");
    first.close().await;
    drop(first);
    // A graceful stop releases the lock: the next store opens at once.
    Store::connect(place.config(), Arc::new(Collect::default())).await.unwrap();
}

/// Two hosts on one PostgreSQL database append to one room at once: one gap-free order, each
/// host's listener sees its own events in increasing seq, and no seq is used twice.
#[tokio::test]
async fn two_postgres_stores_share_one_gap_free_order_per_room() {
    let Some(place) = Place::new(Engine::Postgres).await else { return };
    let (la, lb) = (Arc::new(Collect::default()), Arc::new(Collect::default()));
    let shared = || StoreConfig { exclusive: false, ..place.config() };
    let a = place.open(shared(), la.clone()).await;
    let b = place.open(shared(), lb.clone()).await;
    let run = |store: Store| {
        tokio::spawn(async move {
            let mut acks = Vec::new();
            for i in 0..200 {
                let (op, rx) = append_op("shared", 1 + i % 3, None);
                store.send(op).await.unwrap();
                acks.push(rx);
            }
            for rx in acks {
                rx.await.unwrap().unwrap();
            }
        })
    };
    let (x, y) = (run(a.clone()), run(b.clone()));
    x.await.unwrap();
    y.await.unwrap();
    let total: usize = (0..200).map(|i| 1 + i % 3).sum::<usize>() * 2;
    let page = a.events_after("shared", 0, 10_000).await.unwrap();
    assert_eq!(seqs(&page), (1..=total as u64).collect::<Vec<_>>(), "one gap-free order");
    for l in [&la, &lb] {
        let s: Vec<u64> = l.0.lock().unwrap().iter().map(|e| e.1).collect();
        assert!(s.windows(2).all(|w| w[0] < w[1]), "each host fans out in seq order");
    }
    let mut all: Vec<u64> = la.0.lock().unwrap().iter().chain(lb.0.lock().unwrap().iter()).map(|e| e.1).collect();
    all.sort_unstable();
    assert_eq!(all, (1..=total as u64).collect::<Vec<_>>(), "every seq used exactly once, by one host");
}

/// A start's record as its `session.started` (`RecordRow::as_started`: SQLite keeps a reference to
/// the event, PostgreSQL the record made from it) reads back as the record it stands for: at once,
/// after a restart, after it changed, and after retention pruned the event it referred to. A
/// record as started without its event in the batch fails its operation alone.
async fn a_record_as_started_reads_back_also_after_its_event_is_pruned(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let mut cfg = place.config();
    cfg.retention.max_events_per_room = Some(8);
    let store = place.open(cfg.clone(), Arc::new(Collect::default())).await;
    let start = |room: &str, session: &str, with_event: bool| {
        let mut s = Session::new_canonical(room, session, "scripted", "/w", 7);
        s.title = format!("title of {session}");
        let rec = SessionRecord::new(s, Phase::Live);
        assert!(rec.is_as_started(&rec.session));
        let started = NewEvent {
            room_id: room.into(),
            event_id: format!("started-{session}"),
            session_id: session.into(),
            scope: Scope::Canonical,
            turn_id: None,
            occurred_at_ms: 7,
            actor: None,
            body: EventBody::SessionStarted(SessionStartedPayload {
                session: rec.session.clone().into(),
                ephemeral: false,
            }),
        };
        // Twelve deltas after it, more than the retention budget: with them the append prunes
        // its own session.started at once.
        let deltas = (0..12).map(|i| NewEvent { session_id: session.into(), ..ev(room, i) });
        let events: Vec<NewEvent> =
            if with_event { std::iter::once(started).chain(deltas).collect() } else { deltas.collect() };
        let (ack, rx) = oneshot::channel();
        let op = WriteOp::Append(AppendBatch {
            room_id: room.into(),
            events,
            records: vec![RecordRow::as_started(&rec)],
            outbound: vec![],
            ack: Some(ack),
        });
        (rec, op, rx)
    };
    let (s1, op, rx) = start("r", "s1", true);
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let (s2, op, rx) = start("r", "s2", true);
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let (_, op, rx) = start("r", "s3", false);
    store.send(op).await.unwrap();
    assert!(rx.await.unwrap().is_err(), "{engine:?}: a record as started needs its session.started");
    let (_, pruned) = store.room_heads("r").await.unwrap();
    assert!(pruned >= 14, "{engine:?}: s2's session.started pruned by its own append (through {pruned})");
    assert_eq!(store.load_sessions().await.unwrap(), vec![s1.clone(), s2.clone()], "{engine:?}");

    // s1 changes; then s2's session.started (and s1's) are pruned.
    let mut s1_changed = s1.clone();
    s1_changed.session.title = "changed".into();
    let (ack, rx) = oneshot::channel();
    store
        .send(WriteOp::Append(AppendBatch {
            room_id: "r".into(),
            events: vec![],
            records: vec![RecordRow::of(&s1_changed).unwrap()],
            outbound: vec![],
            ack: Some(ack),
        }))
        .await
        .unwrap();
    rx.await.unwrap().unwrap();
    store.close().await;
    drop(store);
    let store = place.open(cfg, Arc::new(Collect::default())).await;
    assert_eq!(store.load_sessions().await.unwrap(), vec![s1_changed.clone(), s2.clone()], "{engine:?}: reopened");
    for _ in 0..4 {
        append_n(&store, "r", 8).await;
    }
    let (_, pruned) = store.room_heads("r").await.unwrap();
    assert!(pruned >= 14, "{engine:?}: both session.started events pruned (through {pruned})");
    assert_eq!(
        store.load_sessions().await.unwrap(),
        vec![s1_changed, s2],
        "{engine:?}: the records outlive the events they referred to"
    );
}

fn hook(id: &str) -> WebhookRecord {
    WebhookRecord {
        id: id.into(),
        url: "https://example.com/hook".into(),
        events: vec!["turn.completed".into()],
        rooms: vec!["r".into(), "q \"2\"".into()],
        secret: "whsec_0123456789abcdef".into(),
        enabled: true,
        description: Some("ci".into()),
        created_at_ms: 5,
        updated_at_ms: 5,
        created_by: "admin".into(),
    }
}

fn claim(host: &str, now_ms: i64, limit: usize) -> OutboxClaim {
    OutboxClaim { webhook_id: "wh_1".into(), host: host.into(), now_ms, until_ms: now_ms + 1_000, limit }
}

fn attempt(status: u16) -> OutboxAttempt {
    OutboxAttempt { at_ms: 1, status: Some(status), error: None, duration_ms: 3 }
}

/// Webhooks read back as written; an append's deliveries are written with its events (an event
/// of a failed append has none), each once; of two hosts claiming at once each delivery goes to
/// one; a claim held is not claimed again until it lapses; only the holder settles; a retry
/// waits for its time; delivered and failed rows are pruned, pending ones kept; deleting the
/// webhook deletes its deliveries.
async fn webhook_deliveries_are_written_with_their_events_claimed_once_and_settled(engine: Engine) {
    let Some(place) = Place::new(engine).await else { return };
    let store = place.open(place.config(), Arc::new(Collect::default())).await;
    assert!(store.webhook_insert(hook("wh_1")).await.unwrap());
    assert!(!store.webhook_insert(hook("wh_1")).await.unwrap(), "{engine:?}: a taken id");
    let mut changed = hook("wh_1");
    changed.enabled = false;
    changed.updated_at_ms = 9;
    assert!(store.webhook_update(changed.clone()).await.unwrap());
    assert!(!store.webhook_update(hook("wh_none")).await.unwrap());
    assert_eq!(store.webhooks().await.unwrap(), vec![changed], "{engine:?}");

    // Six events, four of them announced (two to one event: the same (webhook, event) is once).
    let (ack, rx) = oneshot::channel();
    let outbound = [0, 2, 3, 5, 5]
        .into_iter()
        .map(|i| Outbound { event: i, webhook_id: "wh_1".into(), kind: "turn.completed".into() })
        .collect();
    let events = (0..6).map(|i| ev("r", i)).collect();
    let op = WriteOp::Append(AppendBatch { room_id: "r".into(), events, records: vec![], outbound, ack: Some(ack) });
    store.send(op).await.unwrap();
    rx.await.unwrap().unwrap();
    let all = store.deliveries("wh_1", None, 100).await.unwrap();
    assert_eq!(all.len(), 4, "{engine:?}: {all:?}");
    assert_eq!(
        all.iter().map(|d| d.event_id.as_str()).collect::<Vec<_>>(),
        ["e5", "e3", "e2", "e0"],
        "{engine:?}: newest first, by event id"
    );
    let first = all.last().unwrap();
    assert_eq!(
        (first.room_id.as_deref(), first.session_id.as_deref(), first.state),
        (Some("r"), Some("s"), OutboxState::Pending)
    );
    let event: serde_json::Value = serde_json::from_str(&first.event_json).unwrap();
    assert_eq!(
        (event["seq"].as_u64(), event["eventId"].as_str()),
        (Some(1), Some("e0")),
        "{engine:?}: the event as sent"
    );
    // A page.
    let older = store.deliveries("wh_1", Some(all[1].id), 10).await.unwrap();
    assert_eq!(older.iter().map(|d| d.event_id.as_str()).collect::<Vec<_>>(), ["e2", "e0"]);

    // Two hosts claim at once: each delivery goes to one of them.
    let (a, b) = tokio::join!(store.outbox_claim(claim("a", 100, 3)), store.outbox_claim(claim("b", 100, 3)));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.len() + b.len(), 4, "{engine:?}: {a:?} {b:?}");
    let mut ids: Vec<i64> = a.iter().chain(&b).map(|d| d.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{engine:?}: none twice");
    assert!(store.outbox_claim(claim("c", 500, 10)).await.unwrap().is_empty(), "{engine:?}: held until 1100");
    let (mine, theirs) = (&a[0], b.first().unwrap_or(&a[1]));
    let holder = if b.is_empty() { "a" } else { "b" };
    assert!(!store.outbox_settle(mine.id, "b-not-holder", attempt(200), Settle::Delivered).await.unwrap());
    assert!(store.outbox_settle(mine.id, "a", attempt(200), Settle::Delivered).await.unwrap());
    assert!(!store.outbox_settle(mine.id, "a", attempt(200), Settle::Delivered).await.unwrap(), "settled once");
    assert!(store.outbox_settle(theirs.id, holder, attempt(503), Settle::Retry { next_at_ms: 5_000 }).await.unwrap());
    // Lapsed claims are claimed again; the retry waits for its time.
    let again = store.outbox_claim(claim("c", 2_000, 10)).await.unwrap();
    assert_eq!(again.len(), 2, "{engine:?}: the two never settled: {again:?}");
    assert!(again.iter().all(|d| d.id != mine.id && d.id != theirs.id));
    for d in &again {
        assert!(store.outbox_settle(d.id, "c", attempt(502), Settle::Retry { next_at_ms: 10_000 }).await.unwrap());
    }
    let retried = store.outbox_claim(claim("c", 5_000, 10)).await.unwrap();
    assert_eq!(retried.iter().map(|d| d.id).collect::<Vec<_>>(), [theirs.id], "{engine:?}");
    assert_eq!((retried[0].attempts, retried[0].log.clone()), (1, vec![attempt(503)]));
    assert!(store.outbox_settle(theirs.id, "c", attempt(500), Settle::Failed).await.unwrap());
    let now = store.deliveries("wh_1", None, 100).await.unwrap();
    let state = |id: i64| now.iter().find(|d| d.id == id).unwrap().state;
    assert_eq!((state(mine.id), state(theirs.id)), (OutboxState::Delivered, OutboxState::Failed), "{engine:?}");

    // Pruned: the settled ones; deleted with the webhook: the rest.
    assert_eq!(store.outbox_prune(i64::MAX).await.unwrap(), 2, "{engine:?}");
    assert_eq!(store.deliveries("wh_1", None, 100).await.unwrap().len(), 2);
    assert!(store.webhook_delete("wh_1").await.unwrap());
    assert!(!store.webhook_delete("wh_1").await.unwrap());
    assert!(store.deliveries("wh_1", None, 100).await.unwrap().is_empty(), "{engine:?}");
    assert!(store.webhooks().await.unwrap().is_empty());
}
