//! Controller tests with the puppet adapter (and small purpose-built ones), a real store and the
//! real bus: the lifecycle rules that are hard to reach through HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ensemble_core::adapter::{
    Adapter, AdapterError, Capabilities, ProviderDescriptor, SessionHandle, SideOpen, SideOpened, StartOutcome,
    TurnRequest,
};
use ensemble_core::event::{EventBody, TextDeltaPayload};
use ensemble_core::model::{InputItem, Session, SessionKey, SessionPatch, SideCapabilities};
use ensemble_runtime::controller::{ControllerConfig, ControllerError, SubmitTurn};
use ensemble_runtime::store::{Store, StoreConfig};
use ensemble_runtime::test_util::{Fixture, Puppet, StalledWriter, poll_once, start_request as start};
use tokio::sync::Notify;

#[tokio::test]
async fn a_failed_start_leaves_no_residue_and_the_id_is_reusable() {
    let failing = Arc::new(Puppet { fail_start: true, ..Puppet::new("failing") });
    let other = Arc::new(Puppet { early_fact: false, ..Puppet::new("other") });
    let f = Fixture::new(vec![failing.clone(), other], ControllerConfig::default());
    let err = f.controller.start(start("failing", "x")).await.unwrap_err();
    assert_eq!(err.code(), "boom");
    let key = SessionKey::new("r", "x");
    assert!(matches!(f.controller.session(&key), Err(ControllerError::SessionNotFound(_))));
    assert!(f.controller.sessions("r").is_empty());
    assert!(f.event_types("r").await.is_empty(), "the buffered early fact was dropped, nothing published");
    assert!(f.store.load_sessions().await.unwrap().is_empty(), "nothing persisted");
    // A late fact from the failed start's sink goes nowhere.
    let handle = failing.last_handle();
    handle
        .sink
        .emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "late".into(), text: "x".into() }))
        .await;
    // The same id starts fine with another provider.
    let s = f.controller.start(start("other", "x")).await.unwrap();
    assert_eq!(s.status.as_str(), "ready");
    assert_eq!(f.event_types("r").await, ["session.started"]);
}

#[tokio::test]
async fn facts_emitted_during_start_follow_session_started() {
    let f = Fixture::new(vec![Arc::new(Puppet::default())], ControllerConfig::default());
    f.controller.start(start("puppet", "p")).await.unwrap();
    assert_eq!(f.event_types("r").await, ["session.started", "message.delta"]);
}

#[tokio::test]
async fn a_start_answers_with_the_session_as_it_is_when_it_answers() {
    // Without a change after the announcement, the answer is the session `session.started` carries.
    let plain = Arc::new(Puppet { early_fact: false, ..Puppet::new("plain") });
    // With one (the agent names the session while starting), the answer has it too.
    let renaming = Arc::new(Puppet {
        early_fact: false,
        early_update: Some(SessionPatch { title: Some("renamed".into()), ..SessionPatch::default() }),
        ..Puppet::new("renaming")
    });
    let f = Fixture::new(vec![plain, renaming], ControllerConfig::default());
    let a = f.controller.start_shared(start("plain", "a")).await.unwrap();
    // Its JSON is the one the store's writer made for `session.started` (no second serialisation).
    assert!(a.is_serialised(), "the answer carries the JSON of its session.started");
    let b = f.controller.start(start("renaming", "b")).await.unwrap();
    assert_eq!(b.title, "renamed");
    assert_eq!(b, f.controller.session(&SessionKey::new("r", "b")).unwrap());
    f.store.flush().await.unwrap();
    let page = f.store.events_after("r", 0, 100).await.unwrap();
    let events: Vec<serde_json::Value> =
        page.events.iter().map(|(_, raw)| serde_json::from_str(raw.get()).unwrap()).collect();
    let started = |id: &str| {
        events
            .iter()
            .find(|e| e["type"] == "session.started" && e["sessionId"] == id)
            .map(|e| serde_json::from_value::<Session>(e["payload"]["session"].clone()).unwrap())
            .unwrap()
    };
    assert_eq!(*a, started("a"));
    let a_started = events.iter().find(|e| e["type"] == "session.started" && e["sessionId"] == "a").unwrap();
    assert_eq!(serde_json::to_value(&a).unwrap(), a_started["payload"]["session"]);
    assert_eq!(started("b").title, "New session", "announced before the agent's change");
    assert!(events.iter().any(|e| e["type"] == "session.updated" && e["sessionId"] == "b"));
}

#[tokio::test]
async fn a_held_lifecycle_lock_gives_lock_timeout_not_a_hang() {
    let gate = Arc::new(Notify::new());
    let slow = Arc::new(Puppet { gate: Some(gate.clone()), ..Default::default() });
    let config = ControllerConfig { lock_timeout: Duration::from_millis(100), ..Default::default() };
    let f = Fixture::new(vec![slow.clone()], config);
    let c = f.controller.clone();
    let first = tokio::spawn(async move { c.start(start("puppet", "p")).await });
    // Wait until the first start is inside the adapter (holding the lock).
    while slow.starts.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    let err = f.controller.start(start("puppet", "p")).await.unwrap_err();
    assert!(matches!(err, ControllerError::LockTimeout(_)), "{err}");
    assert_eq!(err.code(), "lock_timeout");
    gate.notify_one();
    first.await.unwrap().unwrap();
    // And once released, operations on the session proceed.
    f.controller.close(&SessionKey::new("r", "p")).await.unwrap();
}

#[tokio::test]
async fn concurrent_submits_start_exactly_one_turn() {
    // The puppet never ends a turn by itself: the first submit's turn stays active.
    let f = Fixture::new(vec![Arc::new(Puppet::default())], ControllerConfig::default());
    f.controller.start(start("puppet", "s")).await.unwrap();
    let key = SessionKey::new("r", "s");
    let mut tasks = Vec::new();
    for i in 0..8 {
        let c = f.controller.clone();
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            c.submit_turn(
                &key,
                SubmitTurn { input: vec![InputItem::Text { text: format!("{i}") }], ..Default::default() },
            )
            .await
        }));
    }
    let mut ok = 0;
    let mut conflicts = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(ControllerError::TurnActive(_)) => conflicts += 1,
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!((ok, conflicts), (1, 7));
}

#[tokio::test]
async fn facts_of_a_replaced_live_session_are_dropped() {
    let puppet = Arc::new(Puppet::default());
    let f = Fixture::new(vec![puppet.clone()], ControllerConfig::default());
    f.controller.start(start("puppet", "p")).await.unwrap();
    let key = SessionKey::new("r", "p");
    let old = puppet.last_handle();
    f.controller.disconnect(&key).await.unwrap();
    f.controller.resume(&key).await.unwrap();
    let before = f.event_types("r").await;
    old.sink.emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "stale".into(), text: "x".into() })).await;
    old.sink.lost("old process died").await;
    assert_eq!(f.event_types("r").await, before, "nothing from the old generation");
    assert_eq!(f.controller.session(&key).unwrap().status.as_str(), "ready");
}

type Identity = fn(&SideOpen<'_>) -> Session;

/// A side-capable adapter that records what it is asked to close and returns a chosen identity.
struct SideLiar {
    identity: Identity,
    closed: Mutex<Vec<String>>,
}

#[async_trait]
impl Adapter for SideLiar {
    fn id(&self) -> &str {
        "liar"
    }
    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor { display_name: "Liar".into(), available: true, unavailable_reason: None, agent: None }
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { sides: true, ..Capabilities::default() }
    }
    async fn start(&self, _s: &Session, _h: SessionHandle) -> Result<StartOutcome, AdapterError> {
        Ok(StartOutcome::default())
    }
    async fn resume(&self, _s: &Session, _h: SessionHandle) -> Result<StartOutcome, AdapterError> {
        Ok(StartOutcome::default())
    }
    async fn close(&self, s: &Session) -> Result<(), AdapterError> {
        self.closed.lock().unwrap().push(s.session_id.clone());
        Ok(())
    }
    async fn start_turn(&self, _s: &Session, _t: TurnRequest) -> Result<(), AdapterError> {
        Ok(())
    }
    async fn cancel(&self, _s: &Session, _t: &str) -> Result<(), AdapterError> {
        Ok(())
    }
    fn is_live(&self, _s: &Session) -> bool {
        true
    }
    async fn side_capabilities(&self, _s: &Session) -> Result<SideCapabilities, AdapterError> {
        Ok(SideCapabilities::all())
    }
    async fn open_side(&self, open: SideOpen<'_>) -> Result<SideOpened, AdapterError> {
        Ok(SideOpened { session: (self.identity)(&open), capabilities: SideCapabilities::all() })
    }
}

#[tokio::test]
async fn an_invalid_side_identity_is_only_closed_when_it_is_exactly_the_side() {
    fn source(o: &SideOpen<'_>) -> Session {
        o.source.clone()
    }
    fn side_without_id(o: &SideOpen<'_>) -> Session {
        o.side.clone()
    }
    fn other_room(o: &SideOpen<'_>) -> Session {
        let mut s = o.side.clone();
        s.room_id = "elsewhere".into();
        s.provider_session_id = Some("x".into());
        s
    }
    let cases: [(&str, Identity, bool); 3] = [
        ("the source's identity", source, false),
        ("the side without a provider id", side_without_id, true),
        ("another room", other_room, false),
    ];
    for (case, identity, expect_closed) in cases {
        let liar = Arc::new(SideLiar { identity, closed: Mutex::new(Vec::new()) });
        let f = Fixture::new(vec![liar.clone()], ControllerConfig::default());
        f.controller.start(start("liar", "src")).await.unwrap();
        let err = f.controller.open_side("r", "src", Some("side"), "q").await.unwrap_err();
        assert_eq!(err.code(), "side_conflict", "{case}");
        let closed = liar.closed.lock().unwrap().clone();
        assert_eq!(closed, if expect_closed { vec!["side".to_owned()] } else { vec![] }, "{case}");
        assert!(f.controller.session(&SessionKey::new("r", "side")).is_err(), "{case}: no residue");
        assert_eq!(f.controller.session(&SessionKey::new("r", "src")).unwrap().status.as_str(), "ready", "{case}");
    }
}

/// A start writes its session once: its record row refers to the `session.started` event (SQLite,
/// migration 6) and reads back as the started session, after a restart too; the session's first
/// change writes the record out.
#[tokio::test]
async fn a_start_stores_its_record_as_its_session_started_event() {
    let f =
        Fixture::new(vec![Arc::new(Puppet { early_fact: false, ..Puppet::default() })], ControllerConfig::default());
    let started = f.controller.start(start("puppet", "p")).await.unwrap();
    f.store.flush().await.unwrap();
    let row = || -> (String, Option<i64>) {
        let conn = rusqlite::Connection::open(f.dir.path().join("db.sqlite")).unwrap();
        conn.query_row("SELECT record, started_id FROM sessions WHERE session_id = 'p'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
    };
    let (record, started_id) = row();
    assert_eq!(record, "", "no second copy of the session");
    assert!(started_id.is_some(), "a reference to the session.started event");
    let loaded = f.store.load_sessions().await.unwrap();
    assert_eq!(loaded.iter().map(|r| &r.session).collect::<Vec<_>>(), [&started]);

    let key = SessionKey::new("r", "p");
    f.controller
        .submit_turn(&key, SubmitTurn { input: vec![InputItem::Text { text: "hi".into() }], ..Default::default() })
        .await
        .unwrap();
    f.store.flush().await.unwrap();
    let (record, _) = row();
    let written: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(written["session"]["status"], "working", "the changed record, written out");
    let loaded = f.store.load_sessions().await.unwrap();
    assert_eq!(loaded[0].session, f.controller.session(&key).unwrap());
}

/// An agent's output does not wait for its commit, so while the writer is behind it is the store
/// queue's byte budget (`--store-queue-bytes`) that holds a streaming session back, by what its
/// events carry; nothing is lost, and it goes on once the writer catches up.
#[tokio::test]
async fn a_streaming_session_waits_for_a_writer_behind_by_the_bytes_it_has_queued() {
    let dir = tempfile::tempdir().unwrap();
    let hub = ensemble_runtime::bus::RoomHub::new(1024, usize::MAX);
    let stall = StalledWriter::new(Some(hub.clone()), false);
    let mut cfg = StoreConfig::new(dir.path().join("db.sqlite"));
    cfg.queue_bytes = 64 * 1024;
    let store = Store::open(cfg, stall.clone()).unwrap();
    let puppet = Arc::new(Puppet { early_fact: false, ..Puppet::new("puppet") });
    let controller = ensemble_runtime::controller::Controller::new(
        ControllerConfig::default(),
        store.clone(),
        hub,
        vec![puppet.clone()],
        Arc::new(ensemble_core::clock::SystemClock::default()),
    );
    controller.start(start("puppet", "p")).await.unwrap();
    let sink = puppet.last_handle().sink;
    let delta = |text: String| EventBody::MessageDelta(TextDeltaPayload { item_id: "m".into(), text });
    let wait = Duration::from_secs(10);

    stall.arm();
    sink.emit(None, delta("first".into())).await;
    stall.until_held().await;
    // 40 KiB is queued below the budget of 64, so is the next 40; then the queue is over it.
    for _ in 0..2 {
        tokio::time::timeout(wait, sink.emit(None, delta("x".repeat(40 * 1024)))).await.expect("queued");
    }
    assert!(store.queued_bytes() >= 80 * 1024, "each delta is charged its text: {}", store.queued_bytes());
    let mut third = std::pin::pin!(sink.emit(None, delta("last".into())));
    assert!(poll_once(third.as_mut()).is_pending(), "a session whose output is over the budget waits");

    stall.open();
    tokio::time::timeout(wait, third).await.expect("it goes on once the writer catches up");
    store.flush().await.unwrap();
    let page = store.events_after("r", 0, 100).await.unwrap();
    let texts: Vec<usize> = page
        .events
        .iter()
        .filter_map(|(_, raw)| {
            let v: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
            (v["type"] == "message.delta").then(|| v["payload"]["text"].as_str().unwrap().len())
        })
        .collect();
    assert_eq!(texts, [5, 40 * 1024, 40 * 1024, 4], "every delta committed, in order");
    assert_eq!(store.queued_bytes(), 0);
}

/// What an agent sends while its session starts waits for the announcement, but only up to
/// `start_buffer_bytes` of events (nothing can hold the agent back then: its start's own answer
/// comes through the same reader); the rest are dropped and a warning after them says how many.
#[tokio::test]
async fn events_an_agent_floods_while_starting_are_bounded_and_the_drop_is_reported() {
    let gate = Arc::new(Notify::new());
    let puppet = Arc::new(Puppet { early_fact: false, gate: Some(gate.clone()), ..Puppet::new("puppet") });
    let config = ControllerConfig { start_buffer_bytes: 64 * 1024, ..ControllerConfig::default() };
    let f = Fixture::new(vec![puppet.clone()], config);
    let controller = f.controller.clone();
    let starting = tokio::spawn(async move { controller.start(start("puppet", "p")).await });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while puppet.handles.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the start never reached the agent");
        tokio::task::yield_now().await;
    }
    let sink = puppet.last_handle().sink;
    // Ten deltas of 20 KiB: three fit in 64 KiB, seven do not.
    for i in 0..10 {
        let text = format!("{i}{}", "x".repeat(20 * 1024));
        sink.emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "m".into(), text })).await;
    }
    gate.notify_one();
    tokio::time::timeout(Duration::from_secs(10), starting).await.expect("started").unwrap().unwrap();
    f.store.flush().await.unwrap();
    let page = f.store.events_after("r", 0, 100).await.unwrap();
    let events: Vec<serde_json::Value> =
        page.events.iter().map(|(_, raw)| serde_json::from_str(raw.get()).unwrap()).collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["session.started", "message.delta", "message.delta", "message.delta", "notice"]);
    let firsts: Vec<&str> = events[1..4].iter().map(|e| &e["payload"]["text"].as_str().unwrap()[..1]).collect();
    assert_eq!(firsts, ["0", "1", "2"], "the first ones, in order");
    let notice = &events[4]["payload"];
    assert_eq!(notice["level"], "warning");
    assert!(notice["message"].as_str().unwrap().starts_with("7 events the agent sent"), "{notice}");
    // Once announced, the session's events flow as ever.
    sink.emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "m".into(), text: "after".into() })).await;
    assert_eq!(f.event_types("r").await.last().map(String::as_str), Some("message.delta"));
}

/// Every event the controller publishes is cut to the event size limit, not only an agent's: here
/// a `session.updated` carrying the modes an agent reported (the size check used to look at a
/// session's title and cwd only, so a session with a thousand modes went out whole).
#[tokio::test]
async fn a_controller_made_event_is_cut_to_the_limit_too() {
    use ensemble_core::model::{ModeInfo, SessionModes};
    let modes = (0..2000)
        .map(|i| ModeInfo { id: format!("mode-{i}"), name: format!("Mode {i}"), description: Some("d".repeat(40)) })
        .collect::<Vec<_>>();
    let patch = SessionPatch {
        modes: Some(SessionModes { current: "mode-0".into(), available: modes.into() }),
        ..SessionPatch::default()
    };
    let many = Arc::new(Puppet { early_fact: false, early_update: Some(patch), ..Puppet::new("many") });
    let max = 16 << 10;
    let f = Fixture::new(vec![many], ControllerConfig { max_event_bytes: max, ..Default::default() });
    f.controller.start(start("many", "m")).await.unwrap();
    f.store.flush().await.unwrap();
    let page = f.store.events_after("r", 0, 100).await.unwrap();
    let events: Vec<serde_json::Value> =
        page.events.iter().map(|(_, raw)| serde_json::from_str(raw.get()).unwrap()).collect();
    let updated = events.iter().find(|e| e["type"] == "session.updated").expect("a session.updated");
    let payload = serde_json::to_string(&serde_json::json!({"type": updated["type"], "payload": updated["payload"]}));
    assert!(payload.unwrap().len() <= max, "the session.updated fits the limit");
    let kept = updated["payload"]["session"]["modes"]["available"].as_array().unwrap();
    assert!(!kept.is_empty() && kept.len() < 2000, "its modes were shortened: {}", kept.len());
    assert_eq!(kept[0]["id"], "mode-0", "from the end");
}
