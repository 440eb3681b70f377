//! Ensemble's real path: a bench adapter whose session sink the publisher drives, the controller
//! and SQLite store as `ensemble serve` builds them, and the real router on 127.0.0.1:0.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use clap::Parser;
use ensemble_core::adapter::{
    Adapter, AdapterError, Capabilities, ProviderDescriptor, SessionHandle, StartOutcome, TurnRequest,
};
use ensemble_core::clock::SystemClock;
use ensemble_core::event::{EventBody, TextDeltaPayload};
use ensemble_core::model::{Session, SessionKey};
use ensemble_runtime::bus::RoomHub;
use ensemble_runtime::controller::{Controller, StartSession};
use ensemble_runtime::store::Store;
use ensemble_server::config::{Cli, ServeArgs};
use ensemble_server::{AppState, router};
use tokio::net::TcpListener;

use crate::measure::now_ns;
use crate::publish::{ITEM, Pace, SESSION, stamp_text};

const PROVIDER: &str = "bench";
pub const BENCH_TOKEN: &str = "bench-token-0123456789abcdef0123456789abcdef";

/// An adapter whose sessions are driven by the bench: it keeps the handle `start` gives it.
#[derive(Default)]
pub struct BenchAdapter {
    pub live: Mutex<HashMap<SessionKey, SessionHandle>>,
}

impl BenchAdapter {
    pub fn handle(&self, key: &SessionKey) -> Option<SessionHandle> {
        self.live.lock().unwrap().get(key).cloned()
    }
}

#[async_trait]
impl Adapter for BenchAdapter {
    fn id(&self) -> &str {
        PROVIDER
    }

    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor {
            display_name: "Fan-out bench".into(),
            available: true,
            unavailable_reason: None,
            agent: None,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.live.lock().unwrap().insert(session.key(), handle);
        Ok(StartOutcome::default())
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.start(session, handle).await
    }

    async fn close(&self, session: &Session) -> Result<(), AdapterError> {
        self.live.lock().unwrap().remove(&session.key());
        Ok(())
    }

    async fn start_turn(&self, _session: &Session, _turn: TurnRequest) -> Result<(), AdapterError> {
        Err(AdapterError::Unsupported("turns".into()))
    }

    async fn cancel(&self, _session: &Session, _turn_id: &str) -> Result<(), AdapterError> {
        Err(AdapterError::Unsupported("turns".into()))
    }

    fn is_live(&self, session: &Session) -> bool {
        self.live.lock().unwrap().contains_key(&session.key())
    }
}

pub struct EnsembleServer {
    pub addr: SocketAddr,
    pub controller: Controller,
    pub state: AppState,
    pub adapter: Arc<BenchAdapter>,
    pub _dir: tempfile::TempDir,
}

/// Wires store, hub and controller as `server::build_controller` does (same defaults, from the
/// same `ENSEMBLE_*` settings), with the bench adapter as the only provider, and serves the real
/// router as `server::serve` does. Runs on the server runtime.
pub async fn start_ensemble(nodelay: bool) -> EnsembleServer {
    ensemble_server::telemetry::metrics_handle();
    let dir = tempfile::tempdir().expect("tempdir");
    let data: PathBuf = dir.path().join("data");
    let token_file = dir.path().join("token");
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        // Token files must be private (0600).
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&token_file).unwrap();
        f.write_all(BENCH_TOKEN.as_bytes()).unwrap();
    }
    let cli = Cli::try_parse_from([
        "ensemble",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        data.to_str().unwrap(),
        "--token-file",
        token_file.to_str().unwrap(),
        "--workspace-roots",
        dir.path().to_str().unwrap(),
        "--default-cwd",
        dir.path().to_str().unwrap(),
        "--max-ws-per-room",
        "100000",
        "--max-ws-per-token",
        "100000",
        "--max-ws-connections",
        "100000",
    ])
    .expect("default server args");
    let args: ServeArgs = cli.serve;
    std::fs::create_dir_all(&data).unwrap();
    let hub = RoomHub::new(args.ws_queue, args.ws_queue_bytes);
    let cfg = ensemble_server::server::store_config(&args);
    let store = Store::open(cfg, hub.clone()).expect("store");
    let adapter = Arc::new(BenchAdapter::default());
    let adapters: Vec<Arc<dyn Adapter>> = vec![adapter.clone()];
    let mut config = ensemble_server::server::controller_config(&args);
    config.default_cwd = dir.path().to_string_lossy().into_owned();
    let controller = Controller::new(config, store, hub, adapters, Arc::new(SystemClock::default()));
    let (app_config, _) = ensemble_server::server::app_config(&args).expect("app config");
    let state = AppState::new(controller.clone(), app_config);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = state.shutdown.clone();
    // As `server::serve` does.
    let mut listener_config = ensemble_server::server::listener_config(&args, None);
    listener_config.nodelay = nodelay;
    tokio::spawn(ensemble_server::listener::serve(listener, router(state.clone()), listener_config, shutdown));
    EnsembleServer { addr, controller, state, adapter, _dir: dir }
}

impl EnsembleServer {
    /// A new room with one live bench session; returns the handle its adapter got.
    pub async fn open_room(&self, room: &str) -> SessionHandle {
        self.controller
            .start(StartSession {
                room_id: room.into(),
                session_id: Some(SESSION.into()),
                provider: Some(PROVIDER.into()),
                ..Default::default()
            })
            .await
            .expect("start the bench session");
        self.adapter.handle(&SessionKey::new(room, SESSION)).expect("the adapter got a handle")
    }

    pub async fn stop(&self) {
        self.state.start_draining();
        self.state.shutdown.cancel();
        self.controller.shutdown().await;
        self.controller.store().close().await;
    }
}

pub async fn publish_ensemble(handle: SessionHandle, pace: Pace) {
    let mut i = 0;
    while let Some(()) = pace.next(i).await {
        let body = EventBody::MessageDelta(TextDeltaPayload { item_id: ITEM.into(), text: stamp_text(now_ns()) });
        handle.sink.emit(None, body).await;
        i += 1;
    }
}
