//! Controller tests with real adapters (the scripted one and small purpose-built ones), a real
//! store and the real bus: the rules that are hard to reach through HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ensemble_adapters::scripted::{SCRIPTED, ScriptedAdapter, ScriptedConfig};
use ensemble_runtime::adapter::{Adapter, AdapterError, ProviderDescriptor, SessionHandle, StartOutcome, TurnRequest};
use ensemble_runtime::bus::RoomHub;
use ensemble_runtime::clock::SystemClock;
use ensemble_runtime::controller::{Controller, ControllerConfig, ControllerError, StartSession, SubmitTurn};
use ensemble_runtime::event::{EventBody, TextDeltaPayload};
use ensemble_runtime::model::{InputItem, Session, SessionKey};
use ensemble_runtime::store::{Store, StoreConfig};
use tokio::sync::Notify;

/// An adapter whose behaviour the test steers.
#[derive(Default)]
struct Puppet {
    fail_start: bool,
    /// When set, start waits for this before returning.
    gate: Option<Arc<Notify>>,
    handles: Mutex<Vec<SessionHandle>>,
    starts: AtomicUsize,
}

#[async_trait]
impl Adapter for Puppet {
    fn id(&self) -> &str {
        "puppet"
    }
    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor { display_name: "Puppet".into(), available: true, unavailable_reason: None }
    }
    async fn start(&self, _s: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        // Facts emitted while starting must wait for session.started (or vanish with a failure).
        handle
            .sink
            .emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "early".into(), text: "hi".into() }))
            .await;
        if let Some(g) = &self.gate {
            g.notified().await;
        }
        self.handles.lock().unwrap().push(handle);
        if self.fail_start {
            return Err(AdapterError::failed("boom", "the agent would not start"));
        }
        Ok(StartOutcome::default())
    }
    async fn resume(&self, s: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.start(s, handle).await
    }
    async fn close(&self, _s: &Session) -> Result<(), AdapterError> {
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
}

struct Fixture {
    controller: Controller,
    store: Store,
    _dir: tempfile::TempDir,
}

fn fixture(adapters: Vec<Arc<dyn Adapter>>, config: ControllerConfig) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let hub = RoomHub::new(1024);
    let store = Store::open(StoreConfig::new(dir.path().join("db.sqlite")), hub.clone()).unwrap();
    let controller = Controller::new(config, store.clone(), hub, adapters, Arc::new(SystemClock::default()));
    Fixture { controller, store, _dir: dir }
}

fn start(provider: &str, id: &str) -> StartSession {
    StartSession { room_id: "r".into(), session_id: Some(id.into()), provider: provider.into(), ..Default::default() }
}

async fn event_types(store: &Store) -> Vec<String> {
    let page = store.events_after("r", 0, 1000).await.unwrap();
    page.events
        .iter()
        .map(|(_, raw)| {
            serde_json::from_str::<serde_json::Value>(raw.get()).unwrap()["type"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_failed_start_leaves_no_residue_and_the_id_is_reusable() {
    let failing = Arc::new(Puppet { fail_start: true, ..Default::default() });
    let f = fixture(
        vec![failing.clone(), Arc::new(ScriptedAdapter::new(ScriptedConfig::default()))],
        ControllerConfig::default(),
    );
    let err = f.controller.start(start("puppet", "x")).await.unwrap_err();
    assert_eq!(err.code(), "boom");
    let key = SessionKey::new("r", "x");
    assert!(matches!(f.controller.session(&key), Err(ControllerError::SessionNotFound(_))));
    assert!(f.controller.sessions("r").is_empty());
    f.store.flush().await.unwrap();
    assert!(event_types(&f.store).await.is_empty(), "the buffered early fact was dropped, nothing published");
    assert!(f.store.load_sessions().await.unwrap().is_empty(), "nothing persisted");
    // A late fact from the failed start's sink goes nowhere.
    let handle = failing.handles.lock().unwrap().pop().unwrap();
    handle
        .sink
        .emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "late".into(), text: "x".into() }))
        .await;
    // The same id starts fine with another provider.
    let s = f.controller.start(start(SCRIPTED, "x")).await.unwrap();
    assert_eq!(s.status.as_str(), "ready");
    f.store.flush().await.unwrap();
    assert_eq!(event_types(&f.store).await, ["session.started", "commands.updated"]);
}

#[tokio::test]
async fn facts_emitted_during_start_follow_session_started() {
    let f = fixture(vec![Arc::new(Puppet::default())], ControllerConfig::default());
    f.controller.start(start("puppet", "p")).await.unwrap();
    f.store.flush().await.unwrap();
    assert_eq!(event_types(&f.store).await, ["session.started", "message.delta"]);
}

#[tokio::test]
async fn a_held_lifecycle_lock_gives_lock_timeout_not_a_hang() {
    let gate = Arc::new(Notify::new());
    let slow = Arc::new(Puppet { gate: Some(gate.clone()), ..Default::default() });
    let config = ControllerConfig { lock_timeout: Duration::from_millis(100), ..Default::default() };
    let f = fixture(vec![slow.clone()], config);
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
    let f = fixture(
        vec![Arc::new(ScriptedAdapter::new(ScriptedConfig {
            chunk_delay: Duration::from_millis(50),
            ..Default::default()
        }))],
        ControllerConfig::default(),
    );
    f.controller.start(start(SCRIPTED, "s")).await.unwrap();
    let key = SessionKey::new("r", "s");
    let mut tasks = Vec::new();
    for i in 0..8 {
        let c = f.controller.clone();
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            c.submit_turn(
                &key,
                SubmitTurn { input: vec![InputItem::Text { text: format!("/chunks 5\n{i}") }], ..Default::default() },
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
    let f = fixture(vec![puppet.clone()], ControllerConfig::default());
    f.controller.start(start("puppet", "p")).await.unwrap();
    let key = SessionKey::new("r", "p");
    let old = puppet.handles.lock().unwrap().pop().unwrap();
    f.controller.disconnect(&key).await.unwrap();
    f.controller.resume(&key).await.unwrap();
    f.store.flush().await.unwrap();
    let before = event_types(&f.store).await;
    old.sink.emit(None, EventBody::MessageDelta(TextDeltaPayload { item_id: "stale".into(), text: "x".into() })).await;
    old.sink.lost("old process died").await;
    f.store.flush().await.unwrap();
    assert_eq!(event_types(&f.store).await, before, "nothing from the old generation");
    assert_eq!(f.controller.session(&key).unwrap().status.as_str(), "ready");
}

/// A side-capable adapter that records what it is asked to close and returns a chosen identity.
struct SideLiar {
    identity: fn(&ensemble_runtime::adapter::SideOpen<'_>) -> Session,
    closed: Mutex<Vec<String>>,
}

#[async_trait]
impl Adapter for SideLiar {
    fn id(&self) -> &str {
        "liar"
    }
    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor { display_name: "Liar".into(), available: true, unavailable_reason: None }
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
    fn side(&self) -> Option<&dyn ensemble_runtime::adapter::SideAdapter> {
        Some(self)
    }
}

#[async_trait]
impl ensemble_runtime::adapter::SideAdapter for SideLiar {
    async fn side_capabilities(&self, _s: &Session) -> Result<ensemble_runtime::model::SideCapabilities, AdapterError> {
        Ok(ensemble_runtime::model::SideCapabilities::all())
    }
    async fn open_side(
        &self,
        open: ensemble_runtime::adapter::SideOpen<'_>,
    ) -> Result<ensemble_runtime::adapter::SideOpened, AdapterError> {
        Ok(ensemble_runtime::adapter::SideOpened {
            session: (self.identity)(&open),
            capabilities: ensemble_runtime::model::SideCapabilities::all(),
        })
    }
}

#[tokio::test]
async fn an_invalid_side_identity_is_only_closed_when_it_is_exactly_the_side() {
    fn source(o: &ensemble_runtime::adapter::SideOpen<'_>) -> Session {
        o.source.clone()
    }
    fn side_without_id(o: &ensemble_runtime::adapter::SideOpen<'_>) -> Session {
        o.side.clone()
    }
    fn other_room(o: &ensemble_runtime::adapter::SideOpen<'_>) -> Session {
        let mut s = o.side.clone();
        s.room_id = "elsewhere".into();
        s.provider_session_id = Some("x".into());
        s
    }
    type Identity = fn(&ensemble_runtime::adapter::SideOpen<'_>) -> Session;
    let cases: [(&str, Identity, bool); 3] = [
        ("the source's identity", source, false),
        ("the side without a provider id", side_without_id, true),
        ("another room", other_room, false),
    ];
    for (case, identity, expect_closed) in cases {
        let liar = Arc::new(SideLiar { identity, closed: Mutex::new(Vec::new()) });
        let f = fixture(vec![liar.clone()], ControllerConfig::default());
        f.controller.start(start("liar", "src")).await.unwrap();
        let err = f.controller.open_side("r", "src", Some("side"), "q").await.unwrap_err();
        assert_eq!(err.code(), "side_conflict", "{case}");
        let closed = liar.closed.lock().unwrap().clone();
        assert_eq!(closed, if expect_closed { vec!["side".to_owned()] } else { vec![] }, "{case}");
        assert!(f.controller.session(&SessionKey::new("r", "side")).is_err(), "{case}: no residue");
        assert_eq!(f.controller.session(&SessionKey::new("r", "src")).unwrap().status.as_str(), "ready", "{case}");
    }
}
