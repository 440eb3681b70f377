//! The baseline: a minimal axum server answering the same two routes by committing one row per
//! request through a plain SQLite group-commit writer thread (`base-writer`: rusqlite bundled, WAL,
//! `synchronous=NORMAL`, ≤ 512 rows per transaction, lingering for more as long as Ensemble's
//! `--commit-linger-ms`, the statement prepared once), answering once the row is committed.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::post;
use axum::serve::ListenerExt;
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

use crate::group_commit::{self, QUEUE};

struct Row {
    room: String,
    key: String,
    json: String,
    done: oneshot::Sender<()>,
}

type Queue = mpsc::Sender<Row>;

pub struct Baseline {
    pub addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Drop for Baseline {
    /// Stops the server; its router holds the writer's queue, so the writer thread ends too.
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Starts the server on the current runtime; the writer on its own thread.
pub async fn start(linger: Duration) -> Baseline {
    let dir = tempfile::Builder::new().prefix("ensemble-bench-base-").tempdir_in("/var/tmp").unwrap();
    let conn = open(&dir.path().join("base.sqlite"));
    let (queue, rx) = mpsc::channel(QUEUE);
    std::thread::Builder::new().name("base-writer".into()).spawn(move || writer(conn, rx, linger)).unwrap();
    let app = Router::new()
        .route("/v1/rooms/{room}/sessions", post(start_session))
        .route("/v1/rooms/{room}/sessions/{id}/turns", post(submit_turn))
        .with_state(queue);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // As Ensemble's listener.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Baseline { addr, server, _dir: dir }
}

async fn commit(queue: &Queue, room: String, key: String, json: String) -> Result<(), StatusCode> {
    let (done, committed) = oneshot::channel();
    queue.send(Row { room, key, json, done }).await.map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
    committed.await.map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)
}

async fn start_session(
    State(queue): State<Queue>,
    UrlPath(room): UrlPath<String>,
    Json(body): Json<Value>,
) -> Result<(StatusCode, Json<Value>), StatusCode> {
    let id = body["sessionId"].as_str().unwrap_or("s").to_owned();
    commit(&queue, room, id.clone(), body.to_string()).await?;
    Ok((StatusCode::CREATED, Json(json!({"sessionId": id, "status": "ready"}))))
}

async fn submit_turn(
    State(queue): State<Queue>,
    UrlPath((room, id)): UrlPath<(String, String)>,
    Json(body): Json<Value>,
) -> Result<(StatusCode, Json<Value>), StatusCode> {
    commit(&queue, room, id, body.to_string()).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"turnId": "t", "duplicate": false, "steered": false}))))
}

fn open(path: &Path) -> Connection {
    group_commit::open(
        path,
        "CREATE TABLE requests (
            id INTEGER PRIMARY KEY,
            room_id TEXT NOT NULL,
            key TEXT NOT NULL,
            json TEXT NOT NULL
         );",
    )
}

fn writer(mut conn: Connection, rx: mpsc::Receiver<Row>, linger: Duration) {
    group_commit::run(rx, linger, |batch| {
        let tx = conn.transaction().unwrap();
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO requests (room_id, key, json) VALUES (?1, ?2, ?3)").unwrap();
            for r in batch.iter() {
                insert.execute(params![r.room, r.key, r.json]).unwrap();
            }
        }
        tx.commit().unwrap();
        for r in batch.drain(..) {
            let _ = r.done.send(());
        }
    });
}
