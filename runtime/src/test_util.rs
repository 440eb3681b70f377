//! Test support for code that drives the controller (feature `test-util`): the [`Puppet`] adapter,
//! whose behaviour a test steers, a [`Fixture`] with a real store and bus in a temporary
//! directory, and a [`StalledWriter`] that holds the store's writer back.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test support fails loudly")]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::Notify;

use crate::bus::RoomHub;
use crate::controller::{Controller, ControllerConfig, StartSession};
use crate::store::{CommitListener, CommittedEvent, Store, StoreConfig};
use ensemble_core::adapter::{
    Adapter, AdapterError, Capabilities, Fact, ProviderDescriptor, SessionHandle, StartOutcome, TurnRequest,
};
use ensemble_core::clock::SystemClock;
use ensemble_core::event::{EventBody, TextDeltaPayload};
use ensemble_core::model::{Session, SessionPatch};

/// An adapter that does what the test says: it starts (or fails to), accepts turns and never ends
/// them by itself, and hands every [`SessionHandle`] to the test, which emits facts through it.
pub struct Puppet {
    pub id: String,
    /// `start` and `resume` fail with code `boom`.
    pub fail_start: bool,
    /// When set, `start` waits for it before returning (a start in flight, holding the lock).
    pub gate: Option<Arc<Notify>>,
    /// `start` emits a `message.delta` before it returns (a fact racing the announcement).
    pub early_fact: bool,
    /// `start` reports this change of the session before it returns (metadata racing the
    /// announcement).
    pub early_update: Option<SessionPatch>,
    /// The handles of every start and resume, oldest first.
    pub handles: Mutex<Vec<SessionHandle>>,
    pub starts: AtomicUsize,
    pub closes: AtomicUsize,
}

impl Default for Puppet {
    fn default() -> Self {
        Self::new("puppet")
    }
}

impl Puppet {
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            fail_start: false,
            gate: None,
            early_fact: true,
            early_update: None,
            handles: Mutex::new(Vec::new()),
            starts: AtomicUsize::new(0),
            closes: AtomicUsize::new(0),
        }
    }

    /// The handle of the latest start or resume.
    pub fn last_handle(&self) -> SessionHandle {
        self.handles.lock().unwrap().last().cloned().expect("the puppet was never started")
    }
}

#[async_trait]
impl Adapter for Puppet {
    fn id(&self) -> &str {
        &self.id
    }

    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor { display_name: "Puppet".into(), available: true, unavailable_reason: None, agent: None }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn start(&self, _s: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        if self.early_fact {
            // Facts emitted while starting must wait for session.started (or vanish with a failure).
            let delta = TextDeltaPayload { item_id: "early".into(), text: "hi".into() };
            handle.sink.emit(None, EventBody::MessageDelta(delta)).await;
        }
        if let Some(patch) = &self.early_update {
            handle.sink.send(vec![Fact::Update(patch.clone())]).await;
        }
        // Before the gate: a test can speak for the agent while its start is in flight.
        self.handles.lock().unwrap().push(handle);
        if let Some(g) = &self.gate {
            g.notified().await;
        }
        if self.fail_start {
            return Err(AdapterError::failed("boom", "the agent would not start"));
        }
        Ok(StartOutcome::default())
    }

    async fn resume(&self, s: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.start(s, handle).await
    }

    async fn close(&self, _s: &Session) -> Result<(), AdapterError> {
        self.closes.fetch_add(1, Ordering::SeqCst);
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

/// A controller over a real store and bus in a temporary directory.
pub struct Fixture {
    pub controller: Controller,
    pub store: Store,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new(adapters: Vec<Arc<dyn Adapter>>, config: ControllerConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (controller, store) = controller_at(dir.path(), adapters, config);
        Self { controller, store, dir }
    }

    /// The types of the room's durable events, oldest first (after a flush).
    pub async fn event_types(&self, room: &str) -> Vec<String> {
        self.store.flush().await.unwrap();
        let page = self.store.events_after(room, 0, 10_000).await.unwrap();
        page.events
            .iter()
            .map(|(_, raw)| {
                let v: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
                v["type"].as_str().unwrap().to_owned()
            })
            .collect()
    }
}

/// A controller over the store at `dir` (reopen the same directory to test a restart).
pub fn controller_at(dir: &Path, adapters: Vec<Arc<dyn Adapter>>, config: ControllerConfig) -> (Controller, Store) {
    let hub = RoomHub::new(1024, usize::MAX);
    let store = Store::open(StoreConfig::new(dir.join("db.sqlite")), hub.clone()).unwrap();
    let controller = Controller::new(config, store.clone(), hub, adapters, Arc::new(SystemClock::default()));
    (controller, store)
}

/// `POST /v1/rooms/r/sessions` with a session id and provider.
pub fn start_request(provider: &str, session_id: &str) -> StartSession {
    StartSession {
        room_id: "r".into(),
        session_id: Some(session_id.into()),
        provider: Some(provider.into()),
        ..Default::default()
    }
}

pub use ensemble_core::adapter::MemoryState;

/// Polls a future once, without a runtime's waker: `Pending` shows it waits (a later `.await`
/// polls it again with the real waker).
pub fn poll_once<F: std::future::Future>(f: std::pin::Pin<&mut F>) -> std::task::Poll<F::Output> {
    f.poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
}

/// Where a [`StalledWriter`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    /// Commits pass.
    Passing,
    /// The next commit is held.
    Armed,
    /// The writer is held inside a commit.
    Holding,
    /// Released for good: every commit passes.
    Open,
}

/// A commit listener that holds the store's writer (SQLite's is a thread of its own) inside the
/// first commit after [`Self::arm`] until [`Self::open`], passing every commit on to `next`: a
/// writer that has fallen behind, with the queue filling up in front of it.
pub struct StalledWriter {
    next: Option<Arc<dyn CommitListener>>,
    state: Mutex<Stall>,
    changed: std::sync::Condvar,
    held: Notify,
}

impl StalledWriter {
    /// Armed from the start when `armed`; commits go on to `next` (e.g. the room hub).
    pub fn new(next: Option<Arc<dyn CommitListener>>, armed: bool) -> Arc<Self> {
        let state = if armed { Stall::Armed } else { Stall::Passing };
        Arc::new(Self { next, state: Mutex::new(state), changed: std::sync::Condvar::new(), held: Notify::new() })
    }

    /// Holds the next commit.
    pub fn arm(&self) {
        *self.state.lock().unwrap() = Stall::Armed;
    }

    /// Waits (at most 10 s) until the writer is held inside a commit.
    pub async fn until_held(&self) {
        let wait = async {
            loop {
                let held = self.held.notified();
                tokio::pin!(held);
                held.as_mut().enable();
                if *self.state.lock().unwrap() == Stall::Holding {
                    return;
                }
                held.await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(10), wait).await.expect("the writer was never held");
    }

    /// Lets the held commit and every later one pass.
    pub fn open(&self) {
        *self.state.lock().unwrap() = Stall::Open;
        self.changed.notify_all();
    }
}

impl CommitListener for StalledWriter {
    fn committed(&self, room_id: &str, events: &[CommittedEvent]) {
        let mut state = self.state.lock().unwrap();
        if *state == Stall::Armed {
            *state = Stall::Holding;
            self.held.notify_waiters();
            while *state == Stall::Holding {
                state = self.changed.wait(state).unwrap();
            }
        }
        drop(state);
        if let Some(next) = &self.next {
            next.committed(room_id, events);
        }
    }
}
