//! The runtime controller: owns every session, runs lifecycle operations under per-session locks,
//! folds adapter facts into session state and publishes them to the room log.
//!
//! Invariants:
//! - Every lifecycle operation on a session (start, resume, submit, cancel, close, release,
//!   disconnect, answer) runs under that session's lifecycle lock, acquired with a deadline.
//! - Session state changes only inside [`Controller::publish_with`], under the state mutex, together
//!   with the events that announce it; the events are enqueued to the store in the same critical
//!   section, so the room log order is the fold order.
//! - A failed start leaves nothing behind: the reservation is removed and nothing was persisted.
//! - Facts from a replaced, released or closed live session are dropped (generation check).
//!
//! [`Controller`] is defined here; the files split its operations by responsibility: `config`
//! holds its limits, `requests` what it is asked, [`publish`] the registry's guards and the
//! publish path, [`fold`] the per-session entry and its batch, `provider_state` the store-backed
//! provider state all live sessions share, and `lifecycle`, `turns`, `sides`, `goals` and `queries`
//! add the operations of each kind to [`Controller`].

mod attention;
mod cluster;
mod config;
mod config_ops;
mod error;
mod fold;
mod fork;
mod goals;
mod input;
mod lifecycle;
mod open_items;
mod provider_state;
mod publish;
mod queries;
mod queue;
mod requests;
mod sides;
mod store_watch;
mod turns;
mod usage;
mod workspace_git;
mod workspace_keep;
mod workspaces;

pub use cluster::Location;
pub use config::{AttachmentConfig, ClusterConfig, ControllerConfig, WorkspaceConfig};
pub use ensemble_core::isolation::IsolationRequest;
pub use error::ControllerError;
pub use fold::Published;
pub use fork::ForkSession;
pub use goals::{GoalControl, provider_goal_status};
pub use requests::{ForkFrom, StartSession, SubmitTurn, TurnAccepted};
pub use sides::SideOpenResult;
pub use workspaces::{ChangesRange, WorkspaceRequest};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, Weak};

use async_trait::async_trait;

use crate::bus::RoomHub;
use crate::locks::LockTable;
use crate::store::Store;
use ensemble_core::adapter::{Adapter, Fact, FactReceiver, StateBackend};
use ensemble_core::clock::Clock;
use ensemble_core::model::SessionKey;
use fold::State;

/// What every operation shares: the configuration, the store and the bus, the adapters, the
/// session registry (`state`, folded only in `publish`) and the per-session locks.
struct Inner {
    config: ControllerConfig,
    store: Store,
    hub: Arc<RoomHub>,
    adapters: BTreeMap<String, Arc<dyn Adapter>>,
    clock: Arc<dyn Clock>,
    locks: Arc<LockTable>,
    state: Mutex<State>,
    generations: AtomicU64,
    accepting: AtomicBool,
    receiver: Arc<dyn FactReceiver>,
    /// Every live session's provider state is this store's (one backend shared by all).
    provider_state: Arc<dyn StateBackend>,
    /// Per checkpointed session: orders its checkpoints and restores (made at first use).
    workspace_locks: Mutex<std::collections::HashMap<std::path::PathBuf, Arc<tokio::sync::Mutex<()>>>>,
    /// The rooms' own budgets (kept in the store too).
    room_budgets: Mutex<std::collections::HashMap<String, ensemble_core::usage::Budget>>,
    /// Rooms whose budget's exhaustion was said.
    room_said: Mutex<std::collections::HashSet<String>>,
    /// The webhooks, for the deliveries an append writes with its events.
    webhooks: Arc<crate::webhooks::Subscriptions>,
}

/// The shared handle the server holds.
#[derive(Clone)]
pub struct Controller {
    inner: Arc<Inner>,
}

/// Forwards sink facts to the controller without keeping it alive (adapters hold sinks).
struct Forwarder(Weak<Inner>);

#[async_trait]
impl FactReceiver for Forwarder {
    async fn receive(&self, key: &SessionKey, generation: u64, facts: Vec<Fact>) {
        if let Some(inner) = self.0.upgrade() {
            Controller { inner }.on_facts(key, generation, facts).await;
        }
    }
}

impl Controller {
    pub fn new(
        config: ControllerConfig,
        store: Store,
        hub: Arc<RoomHub>,
        adapters: Vec<Arc<dyn Adapter>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let adapters = adapters.into_iter().map(|a| (a.id().to_owned(), a)).collect();
        let state = State::with_capacity(config.max_sessions);
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| Inner {
            config,
            provider_state: provider_state::provider_state_in(store.clone()),
            store,
            hub,
            adapters,
            clock,
            locks: LockTable::new(),
            state: Mutex::new(state),
            generations: AtomicU64::new(0),
            accepting: AtomicBool::new(true),
            receiver: Arc::new(Forwarder(weak.clone())),
            workspace_locks: Mutex::default(),
            room_budgets: Mutex::default(),
            room_said: Mutex::default(),
            webhooks: Arc::default(),
        });
        Self { inner }
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn hub(&self) -> &Arc<RoomHub> {
        &self.inner.hub
    }

    pub fn config(&self) -> &ControllerConfig {
        &self.inner.config
    }

    /// The webhooks events are matched against (the server sets them).
    pub fn webhooks(&self) -> &Arc<crate::webhooks::Subscriptions> {
        &self.inner.webhooks
    }
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller").finish_non_exhaustive()
    }
}
