//! The room WebSocket: `hello`, then the replay from the durable log, then live events, with no
//! gap and no duplicate across the switch.
//!
//! The ordering work is the runtime's [`RoomCursor`] (subscribe first, then replay, then live,
//! dropping the overlap by seq); this module adds the socket: batching (feed many frames, flush
//! once), pings, idle and write timeouts, client frames. A client more than `ws_queue` frames behind
//! gets `resync` and is closed with [`CLOSE_RESYNC`]; it reconnects with `after=` and misses nothing.

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use ensemble_runtime::cursor::{CursorError, Item, RoomCursor};
use futures::{SinkExt, StreamExt};
use tokio::time::{Instant, timeout};

use crate::access::per_token::Held;
use crate::access::{Principal, Role};
use crate::api::params::RoomPath;
use crate::api::{ClientFrame, ServerFrame, WsQuery};
use crate::error::{ApiError, ErrorResponse, Query};
use crate::security::APP_PROTOCOL;
use crate::state::AppState;

/// Close code after a `resync` frame (the client must reload and reconnect).
pub const CLOSE_RESYNC: u16 = 4000;
/// Close code for a peer that stayed silent past the idle timeout.
pub const CLOSE_IDLE: u16 = 4001;
/// Close code when the server shuts down.
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code for a client message over `--ws-max-message-bytes` (RFC 6455 "message too big").
pub const CLOSE_TOO_BIG: u16 = 1009;
/// Close code when the socket's token was revoked or expired.
pub const CLOSE_TOKEN_REVOKED: u16 = 4003;
/// Frames written before one flush.
const FLUSH_BATCH: usize = 64;

/// The room's live WebSocket (see the contract's "Room WebSocket").
#[utoipa::path(get, path = "/v1/rooms/{roomId}/ws", tag = "rooms",
    extensions(("x-ensemble-access" = json!({"role": "viewer", "subprotocolToken": true}))),
    params(RoomPath, WsQuery),
    responses(
        (status = 101, description = "Switching protocols. The server sends `ServerFrame`s as JSON text frames; the client may send `ClientFrame`s.", body = ServerFrame),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn room_ws(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    room: RoomPath,
    Query(q): Query<WsQuery>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let room = room.into_id()?;
    let ws = ws.map_err(|r| {
        ApiError::new(
            if r.status() == StatusCode::METHOD_NOT_ALLOWED {
                StatusCode::METHOD_NOT_ALLOWED
            } else {
                StatusCode::BAD_REQUEST
            },
            "websocket_upgrade_required",
            r.body_text(),
        )
    })?;
    if state.is_draining() {
        return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the server is shutting down"));
    }
    let slot = ConnectionSlot::take(&state, &room, principal.token_id())?;
    // A browser that offered subprotocols fails the handshake unless one is chosen: the answer is
    // always the application protocol, never the bearer entry (the guard refuses a bearer entry
    // offered without `ensemble.v1`), so the token is never echoed.
    let ws = ws.protocols([APP_PROTOCOL]);
    let limits = state.ws.clone();
    Ok(ws
        // A small read buffer: tungstenite zero-fills it on every read (see fanout-baseline.md).
        .read_buffer_size(4 * 1024)
        .max_write_buffer_size(limits.write_buffer_bytes)
        .max_message_size(limits.max_message_bytes)
        .max_frame_size(limits.max_message_bytes)
        .on_upgrade(move |socket| async move {
            let outcome = Connection { state: state.clone(), room, socket, principal }.run(q.after).await;
            tracing::debug!(?outcome, "room websocket ended");
            drop(slot);
        }))
}

/// Decodes one client text frame (`None`: a binary frame). Pure, so it can be fuzzed.
pub fn decode_client_frame(text: Option<&str>) -> Result<ClientFrame, String> {
    match text {
        Some(t) => serde_json::from_str::<ClientFrame>(t).map_err(|e| e.to_string()),
        None => Err("binary frames are not supported".into()),
    }
}

/// The server's answer to one client frame: `pong`, or an `error` frame that never echoes more
/// than a bounded part of the input.
pub fn reply_to_client(text: Option<&str>) -> ServerFrame {
    match decode_client_frame(text) {
        Ok(ClientFrame::Ping) => ServerFrame::Pong,
        Err(mut message) => {
            if message.len() > 256 {
                let mut cut = 256;
                while !message.is_char_boundary(cut) {
                    cut -= 1;
                }
                message.truncate(cut);
            }
            ServerFrame::Error { code: "invalid_frame".into(), message }
        }
    }
}

/// Is this read error a client message (or frame) over the configured size?
fn is_too_big(e: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    use tokio_tungstenite::tungstenite::error::{CapacityError, Error};
    e.downcast_ref::<Error>().is_some_and(|e| matches!(e, Error::Capacity(CapacityError::MessageTooLong { .. })))
}

/// One counted WebSocket, in total, in its room and for its token; released on drop (also when
/// the upgrade never completes).
struct ConnectionSlot {
    state: AppState,
    room: String,
    _token: Held,
}

impl ConnectionSlot {
    fn take(state: &AppState, room: &str, token: &str) -> Result<Self, ApiError> {
        // The token's own cap first: one token filling a room or the server is told it is its own.
        let Some(held) = state.ws_tokens.take(token) else {
            let max = state.ws_tokens.max();
            metrics::counter!("ensemble_ws_refused_total", "code" => "too_many_token_connections").increment(1);
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_token_connections",
                format!("this token has {max} open room WebSockets (the limit, --max-ws-per-token); close one first"),
            )
            .with_details(serde_json::json!({ "limit": max }))
            .retry_after(1));
        };
        let mut rooms = state.ws_rooms.lock().unwrap_or_else(|e| e.into_inner());
        let total = state.ws_connections.load(Ordering::Relaxed);
        let in_room = rooms.get(room).copied().unwrap_or(0);
        let refusal = if total >= state.ws.max_connections {
            Some(("too_many_connections", format!("the server has {total} open WebSockets (the limit)")))
        } else if in_room >= state.ws.max_per_room {
            Some(("too_many_room_connections", format!("room `{room}` has {in_room} open WebSockets (the limit)")))
        } else {
            None
        };
        if let Some((code, message)) = refusal {
            metrics::counter!("ensemble_ws_refused_total", "code" => code).increment(1);
            return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, message).retry_after(1));
        }
        *rooms.entry(room.to_owned()).or_default() += 1;
        state.ws_connections.fetch_add(1, Ordering::Relaxed);
        metrics::gauge!("ensemble_ws_connections").increment(1.0);
        Ok(Self { state: state.clone(), room: room.to_owned(), _token: held })
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut rooms = self.state.ws_rooms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = rooms.get_mut(&self.room) {
            *n -= 1;
            if *n == 0 {
                rooms.remove(&self.room);
            }
        }
        self.state.ws_connections.fetch_sub(1, Ordering::Relaxed);
        metrics::gauge!("ensemble_ws_connections").decrement(1.0);
    }
}

#[derive(Debug)]
enum End {
    ClientClosed,
    Resync(&'static str),
    Idle,
    Shutdown,
    WriteFailed,
    ReadFailed,
    TooBig,
    TokenRevoked,
}

impl End {
    fn name(&self) -> &'static str {
        match self {
            End::ClientClosed => "client_closed",
            End::Resync(_) => "resync",
            End::Idle => "idle",
            End::Shutdown => "shutdown",
            End::WriteFailed => "write_failed",
            End::ReadFailed => "read_failed",
            End::TooBig => "too_big",
            End::TokenRevoked => "token_revoked",
        }
    }
}

struct Connection {
    state: AppState,
    room: String,
    socket: WebSocket,
    principal: Principal,
}

impl Connection {
    async fn run(mut self, after: Option<u64>) -> End {
        let end = self.serve(after).await;
        metrics::counter!("ensemble_ws_closed_total", "reason" => end.name()).increment(1);
        let close = match &end {
            End::Resync(reason) => {
                tracing::debug!(room = %self.room, reason, "closing after resync");
                Some((CLOSE_RESYNC, "resync"))
            }
            End::Idle => Some((CLOSE_IDLE, "idle timeout")),
            End::Shutdown => Some((CLOSE_GOING_AWAY, "server shutting down")),
            End::TooBig => Some((CLOSE_TOO_BIG, "message too big")),
            End::TokenRevoked => Some((CLOSE_TOKEN_REVOKED, "token revoked or expired")),
            End::ClientClosed | End::WriteFailed | End::ReadFailed => None,
        };
        // Never let a stalled peer delay shutdown or the task's end.
        if let Some((code, reason)) = close {
            let frame = Message::Close(Some(CloseFrame { code, reason: Utf8Bytes::from_static(reason) }));
            let _ = timeout(Duration::from_secs(1), self.socket.send(frame)).await;
        } else if matches!(end, End::ClientClosed) {
            // The reply to the client's close frame is queued by the protocol layer; flush it so
            // the close handshake completes cleanly (code 1000, not 1006).
            let _ = timeout(Duration::from_secs(1), self.socket.close()).await;
        }
        end
    }

    async fn serve(&mut self, after: Option<u64>) -> End {
        let controller = self.state.controller.clone();
        let opened = RoomCursor::open(controller.hub(), controller.store(), &self.room, after).await;
        let head = match &opened {
            Ok((_, head)) => *head,
            Err(CursorError::HistoryExpired { head } | CursorError::AheadOfLog { head }) => *head,
            Err(e) => {
                tracing::error!(room = %self.room, error = %e, "opening the room cursor failed");
                return End::ReadFailed;
            }
        };
        // With several hosts the stored records list the sessions other hosts hold.
        let sessions = match controller.room_sessions(&self.room).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(room = %self.room, error = %e, "listing the room's sessions failed");
                controller.sessions(&self.room)
            }
        };
        // Sides live in their source's host's memory: other hosts' are read from them.
        let mut sides = controller.sides(&self.room);
        if let Some(node) = &self.state.cluster {
            sides.extend(node.remote_sides(&controller, &self.room).await);
        }
        let hello = hello(&controller, &self.room, head, sessions, sides, self.principal.role);
        let sent = self.send_json(&hello).await;
        // Not kept for the connection's life: a live local would stay in this future's state, and
        // the room's session snapshots (~1.3 KB of heap each) with it, for every open socket.
        drop(hello);
        if let Err(end) = sent {
            return end;
        }
        match opened {
            Ok((mut cursor, _)) => self.pump(&mut cursor).await,
            Err(e) => self.resync(&e, head).await,
        }
    }

    /// Forwards the cursor's items and answers the client until one side stops.
    async fn pump(&mut self, cursor: &mut RoomCursor) -> End {
        let limits = self.state.ws.clone();
        let shutdown = self.state.shutdown.clone();
        let mut ping = tokio::time::interval_at(Instant::now() + limits.ping_interval, limits.ping_interval);
        // Both made once and kept across the loop: made per iteration, each batch registered and
        // cleared a timer entry and a cancellation waiter, which the fan-out bench showed. The
        // idle deadline moves only when the client is heard.
        let idle = tokio::time::sleep(limits.idle_timeout);
        tokio::pin!(idle);
        let stopping = shutdown.cancelled();
        tokio::pin!(stopping);
        // The token may be revoked (here or on another host, it or its maker) or expire while the
        // socket is open. Made once, like the timers above: it wakes only when the set of valid
        // tokens changes, or at the expiry.
        let ended = self.state.tokens.ended(self.principal.token_id());
        tokio::pin!(ended);
        // Looked up once: a registry lookup per batch showed in the fan-out profile.
        let frames_sent = metrics::counter!("ensemble_ws_frames_sent_total");
        loop {
            tokio::select! {
                biased;
                _ = &mut stopping => return End::Shutdown,
                () = &mut ended => return End::TokenRevoked,
                batch = cursor.next_batch(FLUSH_BATCH) => {
                    let items = match batch {
                        Ok(items) => items,
                        Err(e) => {
                            if let CursorError::Lagged { behind } = e {
                                metrics::counter!("ensemble_ws_lagged_total").increment(1);
                                tracing::info!(room = %self.room, behind, "websocket client fell behind; resync");
                            }
                            let head = self.head(cursor.position()).await;
                            return self.resync(&e, head).await;
                        }
                    };
                    let n = items.len() as u64;
                    if let Err(end) = self.write_batch(items).await {
                        return end;
                    }
                    frames_sent.increment(n);
                }
                msg = self.socket.next() => {
                    idle.as_mut().reset(Instant::now() + limits.idle_timeout);
                    let reply = match msg {
                        None | Some(Ok(Message::Close(_))) => return End::ClientClosed,
                        Some(Err(e)) => {
                            // Over the limit: the frame header said so before its payload was read,
                            // so nothing was buffered; nothing more is read either (the rest of that
                            // frame is still on the wire).
                            let e = e.into_inner();
                            if is_too_big(&*e) {
                                return End::TooBig;
                            }
                            tracing::debug!(error = %e, "websocket read failed");
                            return End::ReadFailed;
                        }
                        Some(Ok(Message::Text(text))) => Some(reply_to_client(Some(text.as_str()))),
                        Some(Ok(Message::Binary(_))) => Some(reply_to_client(None)),
                        Some(Ok(Message::Ping(_) | Message::Pong(_))) => None,
                    };
                    if let Some(reply) = reply
                        && let Err(end) = self.send_json(&reply).await
                    {
                        return end;
                    }
                }
                _ = ping.tick() => {
                    if let Err(end) = self.send(Message::Ping(Bytes::new())).await {
                        return end;
                    }
                }
                _ = &mut idle => return End::Idle,
            }
        }
    }

    async fn head(&mut self, fallback: u64) -> u64 {
        let store = self.state.controller.store().clone();
        store.room_heads(&self.room).await.map(|(h, _)| h).unwrap_or(fallback)
    }

    async fn resync(&mut self, why: &CursorError, head: u64) -> End {
        let reason = why.reason();
        metrics::counter!("ensemble_ws_resyncs_total", "reason" => reason).increment(1);
        match self.send_json(&ServerFrame::Resync { reason: reason.into(), head_seq: head }).await {
            Ok(()) => End::Resync(reason),
            Err(end) => end,
        }
    }

    async fn send_json(&mut self, frame: &ServerFrame) -> Result<(), End> {
        let text = serde_json::to_string(frame).map_err(|_| End::WriteFailed)?;
        self.send(Message::Text(Utf8Bytes::from(text))).await
    }

    async fn send(&mut self, msg: Message) -> Result<(), End> {
        match timeout(self.state.ws.write_timeout, self.socket.send(msg)).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(End::WriteFailed),
        }
    }

    /// Feeds a batch of frames and flushes once, all under one write timeout: a timer per frame
    /// cost a large share of the server's CPU per delivery with many subscribers (`benches/fanout/`).
    async fn write_batch(&mut self, items: Vec<Item>) -> Result<(), End> {
        let socket = &mut self.socket;
        let write = async move {
            for item in items {
                let (Item::Event { frame, .. } | Item::Side { frame }) = item;
                let text = Utf8Bytes::try_from(frame).map_err(|_| End::WriteFailed)?;
                socket.feed(Message::Text(text)).await.map_err(|_| End::WriteFailed)?;
            }
            socket.flush().await.map_err(|_| End::WriteFailed)
        };
        match timeout(self.state.ws.write_timeout, write).await {
            Ok(result) => result,
            Err(_) => Err(End::WriteFailed),
        }
    }
}

/// The `hello` frame, bounded like every frame (`--max-event-bytes`): the room's sessions, then
/// its open side conversations, as many as fit; `sessionsTruncated` says a client must read the
/// rest over REST (`GET …/sessions`, `GET …/sessions/{id}/sides`).
fn hello(
    controller: &ensemble_runtime::Controller,
    room: &str,
    head: u64,
    sessions: Vec<ensemble_core::model::Session>,
    sides: Vec<ensemble_core::model::Session>,
    role: Role,
) -> ServerFrame {
    let mut budget = controller.config().max_event_bytes;
    let mut truncated = false;
    let mut fit = |list: Vec<ensemble_core::model::Session>| -> Vec<ensemble_core::model::Session> {
        let mut kept = Vec::with_capacity(list.len());
        for s in list {
            let size = serde_json::to_vec(&s).map(|b| b.len() + 1).unwrap_or(usize::MAX);
            if truncated || size > budget {
                truncated = true;
                continue;
            }
            budget -= size;
            kept.push(s);
        }
        kept
    };
    let sessions = fit(sessions);
    let sides = fit(sides);
    ServerFrame::Hello {
        room_id: room.to_owned(),
        head_seq: head,
        sessions,
        sides,
        sessions_truncated: truncated,
        role,
    }
}
