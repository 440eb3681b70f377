//! `GET /v1/rooms/{roomId}/export`: a room's log as JSON Lines, streamed a page of events at a
//! time (`--export-page-events`), so an export costs the server one page of memory however large
//! the room. The format is docs/api.md's "Export".

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use ensemble_core::model::Session;
use ensemble_runtime::controller::Controller;
use ensemble_runtime::store::EventPage;
use serde::Serialize;

use crate::access::Principal;
use crate::api::params::RoomPath;
use crate::error::{ApiError, ErrorResponse};
use crate::state::AppState;

/// The format's name and version in the header line. A later version only adds fields (and line
/// kinds), so its import reads version 1.
const FORMAT: &str = "ensemble.export";
const VERSION: u32 = 1;

/// The room's log as JSON Lines (`application/x-ndjson`): a header
/// `{"format":"ensemble.export","version":1,"roomId","exportedAtMs","head","firstSeq"}`, a
/// `{"kind":"session","session"}` line per session, a `{"kind":"event","event"}` line per event
/// (as the WebSocket sends it) in seq order up to `head`, and `{"kind":"end","events"}` last; a
/// download without the end line is incomplete. Continue live with the WebSocket's `after=head`.
/// A token revoked or expired meanwhile stops the download where it is (cut, no end line).
#[utoipa::path(get, path = "/v1/rooms/{roomId}/export", tag = "rooms",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    params(RoomPath),
    responses((status = 200, description = "The room's log, one JSON object a line (docs/api.md, \"Export\")", content_type = "application/x-ndjson", body = String),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn export_room(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    room: RoomPath,
) -> Result<Response, ApiError> {
    let room = room.into_id()?;
    // The first page fixes `head`: what is committed later is left for the WebSocket.
    let first = state.controller.events(&room, 0, state.export_page_events).await?;
    let sessions = state.controller.room_sessions(&room).await?;
    let export = Export {
        controller: state.controller.clone(),
        page: state.export_page_events,
        head: first.head_seq,
        after: first.pruned_through,
        events: 0,
        prelude: Some(prelude(&room, &first, &sessions)?),
        first: Some(first),
        room,
        done: false,
    };
    let export = Guarded { export, ended: Box::pin(state.tokens.ended(principal.token_id())) };
    let body = Body::from_stream(futures::stream::unfold(export, |mut e| async move {
        let chunk = e.next().await?;
        Some((chunk, e))
    }));
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"))], body).into_response())
}

/// An export that ends when its token does (revoked or expired, it or its maker).
struct Guarded {
    export: Export,
    ended: std::pin::Pin<Box<dyn Future<Output = ()> + Send>>,
}

impl Guarded {
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if self.export.done {
            return None;
        }
        tokio::select! {
            biased;
            () = self.ended.as_mut() => Some(Err(self.export.fail("the token was revoked or has expired"))),
            chunk = self.export.next() => chunk,
        }
    }
}

/// An export under way: the next chunk is read only once the previous one was taken.
struct Export {
    controller: Controller,
    room: String,
    /// Events read a page.
    page: usize,
    /// The room's last seq when the export began; nothing past it is written.
    head: u64,
    /// The last seq written (or, before the first event, the last one pruned).
    after: u64,
    /// Events written.
    events: u64,
    /// The header and the session lines, not sent yet.
    prelude: Option<Bytes>,
    /// The page read before the header, not sent yet.
    first: Option<EventPage>,
    done: bool,
}

impl Export {
    /// The next chunk: the prelude, a page of event lines, the end line; then `None`. A failed read
    /// ends the stream with an error (the client sees a cut response, and no end line).
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if self.done {
            return None;
        }
        if let Some(prelude) = self.prelude.take() {
            return Some(Ok(prelude));
        }
        let page = match self.first.take() {
            Some(page) => page,
            None if self.after >= self.head => {
                self.done = true;
                return Some(Ok(Bytes::from(format!("{{\"kind\":\"end\",\"events\":{}}}\n", self.events))));
            }
            None => match self.controller.events(&self.room, self.after, self.page).await {
                Ok(page) => page,
                Err(e) => return Some(Err(self.fail(&e.to_string()))),
            },
        };
        let mut out = Vec::new();
        for (seq, raw) in page.events {
            if seq > self.head {
                break;
            }
            if seq != self.after + 1 {
                // Pruned while the export read: never a silent gap.
                return Some(Err(self.fail(&format!("events after seq {} were pruned meanwhile", self.after))));
            }
            out.extend_from_slice(b"{\"kind\":\"event\",\"event\":");
            out.extend_from_slice(raw.get().as_bytes());
            out.extend_from_slice(b"}\n");
            self.after = seq;
            self.events += 1;
        }
        if out.is_empty() && self.after < self.head {
            return Some(Err(self.fail(&format!("events after seq {} were pruned meanwhile", self.after))));
        }
        Some(Ok(Bytes::from(out)))
    }

    /// Logs why the export stops short, and ends it.
    fn fail(&mut self, why: &str) -> std::io::Error {
        self.done = true;
        tracing::warn!(room = %self.room, after = self.after, head = self.head, error = %why, "room export stopped short");
        std::io::Error::other(format!("the export stopped short: {why}"))
    }
}

/// A session's line.
#[derive(Serialize)]
#[serde(tag = "kind", rename = "session")]
struct SessionLine<'a> {
    session: &'a Session,
}

/// The header line.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Header<'a> {
    format: &'static str,
    version: u32,
    room_id: &'a str,
    exported_at_ms: i64,
    head: u64,
    first_seq: u64,
}

/// The header and a line per session.
fn prelude(room: &str, first: &EventPage, sessions: &[Session]) -> Result<Bytes, ApiError> {
    let header = Header {
        format: FORMAT,
        version: VERSION,
        room_id: room,
        exported_at_ms: ensemble_core::clock::unix_ms(),
        head: first.head_seq,
        first_seq: first.pruned_through + 1,
    };
    let mut out = serde_json::to_vec(&header).map_err(internal)?;
    out.push(b'\n');
    for session in sessions {
        serde_json::to_writer(&mut out, &SessionLine { session }).map_err(internal)?;
        out.push(b'\n');
    }
    Ok(Bytes::from(out))
}

fn internal(e: serde_json::Error) -> ApiError {
    ApiError::internal("serialising a room export", e)
}
