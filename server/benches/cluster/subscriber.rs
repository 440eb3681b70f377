//! A room subscriber: a tokio-tungstenite client on `GET /v1/rooms/{room}/ws` that reads `hello`,
//! then checks that event frames come with consecutive `seq`s, counts the `message.delta` events
//! (with their receive instants, when asked) and ends after its room's `turns`-th `turn.completed`.
//! A `resync` (it fell more than `--ws-queue` frames behind) is counted and answered as a client
//! must: reconnect with `after=` the last seq it got, and go on.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::TOKEN;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Longest silence on a socket before the bench gives up.
const SILENCE: Duration = Duration::from_secs(60);

/// One `message.delta` as a subscriber received it.
pub struct Delta {
    pub seq: u64,
    pub at: Instant,
    /// Wall clock at receipt minus the event's `occurredAtMs` (whole milliseconds, truncated), ms.
    pub lag_ms: f64,
}

/// What a subscriber saw.
pub struct Seen {
    pub deltas: u64,
    pub last_delta: Option<Instant>,
    pub resyncs: u32,
    /// Every delta, when asked for ([`Subscriber::run`]'s `record`).
    pub samples: Vec<Delta>,
}

/// A connected subscriber, past its `hello`.
pub struct Subscriber {
    addr: String,
    room: String,
    ws: Ws,
    /// The seq the next event frame must carry.
    next: u64,
}

/// The number after `key` in `s`.
fn number_after(s: &str, key: &str) -> Option<u64> {
    let at = s.find(key)? + key.len();
    let digits = s[at..].bytes().take_while(u8::is_ascii_digit).count();
    s[at..at + digits].parse().ok()
}

fn wall_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1e3).unwrap_or(0.0)
}

/// Opens the room socket (`after` as the query, if any) and reads its `hello`: the socket and the
/// room's head.
async fn connect(addr: &str, room: &str, after: Option<u64>) -> (Ws, u64) {
    let query = after.map(|a| format!("?after={a}")).unwrap_or_default();
    let mut req = format!("ws://{addr}/v1/rooms/{room}/ws{query}").into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(req, None, /*disable_nagle*/ true)
        .await
        .unwrap_or_else(|e| panic!("room socket on {addr}: {e}"));
    loop {
        let m = tokio::time::timeout(SILENCE, ws.next()).await.expect("hello in time").expect("hello").unwrap();
        if let Message::Text(t) = m {
            let s = t.as_str();
            assert!(s.starts_with(r#"{"type":"hello""#), "expected hello, got {s}");
            return (ws, number_after(s, r#""headSeq":"#).expect("hello's headSeq"));
        }
    }
}

impl Subscriber {
    pub async fn open(addr: &str, room: &str) -> Subscriber {
        let (ws, head) = connect(addr, room, None).await;
        Subscriber { addr: addr.to_owned(), room: room.to_owned(), ws, next: head + 1 }
    }

    /// Reads until the room's `turns`-th `turn.completed` (each one's instant goes to `completed`,
    /// if given), then closes the socket.
    pub async fn run(mut self, turns: u64, record: bool, completed: Option<mpsc::UnboundedSender<Instant>>) -> Seen {
        let mut seen = Seen { deltas: 0, last_delta: None, resyncs: 0, samples: Vec::new() };
        let mut done = 0;
        loop {
            let msg = tokio::time::timeout(SILENCE, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("room {}: no frame for {SILENCE:?} on {}", self.room, self.addr));
            let text = match msg {
                Some(Ok(Message::Text(t))) => t,
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                other => panic!("room {} on {}: after seq {}: {other:?}", self.room, self.addr, self.next - 1),
            };
            let s = text.as_str();
            if s.starts_with(r#"{"type":"resync""#) {
                // Fell behind: reconnect from the last seq seen; the replay fills the rest.
                seen.resyncs += 1;
                let _ = self.ws.close(None).await;
                let (ws, _) = connect(&self.addr, &self.room, Some(self.next - 1)).await;
                self.ws = ws;
                continue;
            }
            if !s.starts_with(r#"{"type":"event""#) {
                continue;
            }
            let at = Instant::now();
            let seq = number_after(s, r#""seq":"#).expect("event seq");
            assert_eq!(seq, self.next, "room {} on {}: a gap or a duplicate", self.room, self.addr);
            self.next += 1;
            if s.contains(r#""type":"message.delta""#) {
                seen.deltas += 1;
                seen.last_delta = Some(at);
                if record {
                    let occurred = number_after(s, r#""occurredAtMs":"#).expect("occurredAtMs") as f64;
                    seen.samples.push(Delta { seq, at, lag_ms: wall_ms() - occurred });
                }
            } else if s.contains(r#""type":"turn.completed""#) {
                done += 1;
                if let Some(tx) = &completed {
                    let _ = tx.send(at);
                }
                if done == turns {
                    let _ = self.ws.close(None).await;
                    return seen;
                }
            } else if s.contains(r#""type":"turn.failed""#) || s.contains(r#""type":"turn.canceled""#) {
                panic!("room {}: a turn did not complete: {s}", self.room);
            }
        }
    }
}
