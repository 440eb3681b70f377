//! The in-memory baseline: a minimal axum WebSocket server without persistence, tuned as `fanout-baseline.md`
//! describes (see `main.rs`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::serve::ListenerExt;
use ensemble_core::clock::{new_id, unix_ms};
use ensemble_core::event::{Event, EventBody, TextDeltaPayload};
use ensemble_core::model::Scope;
use futures::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio::sync::broadcast;

use crate::measure::now_ns;
use crate::publish::{ITEM, Pace, SESSION, stamp_text};

/// Frames fed before one flush by the baseline (Ensemble's ws.rs uses the same number).
const BASE_FLUSH_BATCH: usize = 64;
/// The baseline's WebSocket read buffer (see fanout-baseline.md).
const BASE_READ_BUFFER: usize = 4 * 1024;

pub struct BaseRoom {
    pub tx: broadcast::Sender<Utf8Bytes>,
    pub head: AtomicU64,
}

pub struct Baseline {
    pub rooms: Mutex<HashMap<String, Arc<BaseRoom>>>,
    pub capacity: usize,
    pub conns: AtomicUsize,
}

impl Baseline {
    pub fn new(capacity: usize) -> Self {
        Self { rooms: Mutex::new(HashMap::new()), capacity, conns: AtomicUsize::new(0) }
    }

    pub fn room(&self, id: &str) -> Arc<BaseRoom> {
        self.rooms
            .lock()
            .unwrap()
            .entry(id.to_owned())
            .or_insert_with(|| Arc::new(BaseRoom { tx: broadcast::channel(self.capacity).0, head: AtomicU64::new(0) }))
            .clone()
    }
}

pub struct BaselineServer {
    pub addr: SocketAddr,
    pub shared: Arc<Baseline>,
}

pub async fn start_baseline(capacity: usize, nodelay: bool) -> BaselineServer {
    let shared = Arc::new(Baseline::new(capacity));
    let app = Router::new().route("/rooms/{room}/ws", get(base_ws)).with_state(shared.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = listener.tap_io(move |tcp| {
        let _ = tcp.set_nodelay(nodelay);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    BaselineServer { addr, shared }
}

pub async fn base_ws(State(b): State<Arc<Baseline>>, Path(room): Path<String>, ws: WebSocketUpgrade) -> Response {
    let room = b.room(&room);
    ws.read_buffer_size(BASE_READ_BUFFER).on_upgrade(move |socket| async move {
        b.conns.fetch_add(1, Ordering::SeqCst);
        base_conn(&room, socket).await;
        b.conns.fetch_sub(1, Ordering::SeqCst);
    })
}

pub async fn base_conn(room: &BaseRoom, mut socket: WebSocket) {
    let mut rx = room.tx.subscribe();
    let hello = format!(r#"{{"type":"hello","headSeq":{}}}"#, room.head.load(Ordering::SeqCst));
    if socket.send(Message::Text(hello.into())).await.is_err() {
        return;
    }
    let resync = || Message::Text(Utf8Bytes::from_static(r#"{"type":"resync","reason":"lagged"}"#));
    loop {
        tokio::select! {
            biased;
            first = rx.recv() => {
                let first = match first {
                    Ok(f) => f,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = socket.send(resync()).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if socket.feed(Message::Text(first)).await.is_err() {
                    return;
                }
                for _ in 1..BASE_FLUSH_BATCH {
                    match rx.try_recv() {
                        Ok(f) => {
                            if socket.feed(Message::Text(f)).await.is_err() {
                                return;
                            }
                        }
                        Err(broadcast::error::TryRecvError::Lagged(_)) => {
                            let _ = socket.send(resync()).await;
                            return;
                        }
                        Err(_) => break,
                    }
                }
                if socket.flush().await.is_err() {
                    return;
                }
            }
            msg = socket.next() => match msg {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Serialises each event once, in the same shape as Ensemble's frames, and broadcasts the bytes.
pub async fn publish_baseline(room: Arc<BaseRoom>, room_id: String, pace: Pace) {
    let mut i = 0;
    while let Some(()) = pace.next(i).await {
        let seq = room.head.load(Ordering::Relaxed) + 1;
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
        let json = serde_json::to_string(&event).unwrap();
        let mut frame = String::with_capacity(json.len() + 26);
        frame.push_str("{\"type\":\"event\",\"event\":");
        frame.push_str(&json);
        frame.push('}');
        room.head.store(seq, Ordering::Relaxed);
        let _ = room.tx.send(Utf8Bytes::from(frame));
        i += 1;
    }
}
