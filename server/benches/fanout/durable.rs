//! The durable baseline: the in-memory baseline's room and connections (`baseline.rs`), with a
//! plain SQLite group-commit writer in front of the broadcast, as `fanout-baseline.md` describes.
//!
//! The publisher serialises each event once into its frame and queues it; a writer thread
//! (`dur-writer`) takes what is queued (up to 512 events, lingering at most 2 ms for more when work is queued, as
//! Ensemble's defaults), inserts each into one table in one transaction (rusqlite bundled, WAL,
//! `synchronous=NORMAL`, the statement prepared once), commits, and only then broadcasts the frames.
//! The table is the minimal log: rows appended by row id, no index (a room's reader would ask for
//! a row-id range). It used to be the table Ensemble's log started with, clustered by
//! `(room_id, seq)`: a profile of the 1-subscriber scenario put the text-key B-tree descent and
//! its page splits among the writer's largest costs, work a minimal room does not do, so the
//! ratio flattered Ensemble (docs/performance/log.md).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::Utf8Bytes;
use axum::routing::get;
use axum::serve::ListenerExt;
use ensemble_core::clock::{new_id, unix_ms};
use ensemble_core::event::{Event, EventBody, TextDeltaPayload};
use ensemble_core::model::Scope;
use rusqlite::{Connection, params};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::baseline::{BaseRoom, Baseline, base_ws};
use crate::group_commit::{self, QUEUE};
use crate::measure::now_ns;
use crate::publish::{ITEM, Pace, SESSION, stamp_text};

/// As Ensemble's `--commit-linger-ms`: `ENSEMBLE_COMMIT_LINGER_MS` if set (it reaches the spawned
/// server too), else Ensemble's default, 0.
fn linger() -> Duration {
    Duration::from_millis(std::env::var("ENSEMBLE_COMMIT_LINGER_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// One event on its way to the log: its room, seq and frame (`{"type":"event","event":…}`).
pub struct Pending {
    room: Arc<BaseRoom>,
    room_id: String,
    seq: u64,
    occurred_at_ms: i64,
    frame: String,
}

pub struct DurableServer {
    pub addr: SocketAddr,
    pub shared: Arc<Baseline>,
    pub queue: mpsc::Sender<Pending>,
    pub commits: Arc<AtomicU64>,
    pub events: Arc<AtomicU64>,
    pub _dir: tempfile::TempDir,
}

pub async fn start_durable(capacity: usize, nodelay: bool) -> DurableServer {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = open(&dir.path().join("durable.sqlite"));
    let (queue, rx) = mpsc::channel(QUEUE);
    let (commits, events) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (c, e) = (commits.clone(), events.clone());
    std::thread::Builder::new().name("dur-writer".into()).spawn(move || writer(conn, rx, &c, &e)).expect("writer");
    let shared = Arc::new(Baseline::new(capacity));
    let app = Router::new().route("/rooms/{room}/ws", get(base_ws)).with_state(shared.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = listener.tap_io(move |tcp| {
        let _ = tcp.set_nodelay(nodelay);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    DurableServer { addr, shared, queue, commits, events, _dir: dir }
}

fn open(path: &Path) -> Connection {
    group_commit::open(
        path,
        "CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            room_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            occurred_at_ms INTEGER NOT NULL,
            json TEXT NOT NULL
         );",
    )
}

fn writer(mut conn: Connection, rx: mpsc::Receiver<Pending>, commits: &AtomicU64, events: &AtomicU64) {
    group_commit::run(rx, linger(), |batch| {
        let tx = conn.transaction().unwrap();
        {
            let mut insert = tx
                .prepare_cached("INSERT INTO events (room_id, seq, occurred_at_ms, json) VALUES (?1, ?2, ?3, ?4)")
                .unwrap();
            for p in batch.iter() {
                // The log keeps the `event` part of the frame.
                let json = &p.frame[FRAME_PREFIX.len()..p.frame.len() - 1];
                insert.execute(params![p.room_id, p.seq as i64, p.occurred_at_ms, json]).unwrap();
            }
        }
        tx.commit().unwrap();
        commits.fetch_add(1, Ordering::Relaxed);
        events.fetch_add(batch.len() as u64, Ordering::Relaxed);
        for p in batch.drain(..) {
            p.room.head.store(p.seq, Ordering::Relaxed);
            let _ = p.room.tx.send(Utf8Bytes::from(p.frame));
        }
    });
}

const FRAME_PREFIX: &str = "{\"type\":\"event\",\"event\":";

/// Serialises each event once into its frame and queues it for the writer, which broadcasts it
/// once committed.
pub async fn publish_durable(queue: mpsc::Sender<Pending>, room: Arc<BaseRoom>, room_id: String, pace: Pace) {
    let mut i = 0;
    let mut seq = room.head.load(Ordering::Relaxed);
    while let Some(()) = pace.next(i).await {
        seq += 1;
        let event = Event {
            seq,
            room_id: room_id.clone(),
            event_id: new_id(),
            session_id: SESSION.into(),
            scope: Scope::Canonical,
            turn_id: None,
            occurred_at_ms: unix_ms(),
            actor: None,
            body: EventBody::MessageDelta(TextDeltaPayload { item_id: ITEM.into(), text: stamp_text(now_ns()) }),
        };
        // Serialised once, straight into the frame (as Ensemble's writer does).
        let mut frame = Vec::with_capacity(512);
        frame.extend_from_slice(FRAME_PREFIX.as_bytes());
        serde_json::to_writer(&mut frame, &event).unwrap();
        frame.push(b'}');
        let frame = String::from_utf8(frame).unwrap();
        let pending =
            Pending { room: room.clone(), room_id: room_id.clone(), seq, occurred_at_ms: event.occurred_at_ms, frame };
        if queue.send(pending).await.is_err() {
            return;
        }
        i += 1;
    }
}
