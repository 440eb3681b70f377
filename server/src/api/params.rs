//! The path and query parameters handlers share, each parsed and documented in one place and
//! checked as the contract says (`invalid_id`, `invalid_query`, 400).
//!
//! Ids are checked when a handler asks for them, not while extracting: a request that is wrong in
//! two ways (a bad id and a bad body or query) reports what it always did.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use ensemble_core::limits::check_id;
use ensemble_core::model::SessionKey;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::{EventsQuery, SessionEventsQuery};
use crate::error::ApiError;
use ensemble_runtime::store::SessionPageFrom;

const DEFAULT_EVENT_LIMIT: u32 = 100;
const MAX_EVENT_LIMIT: u32 = 1000;

/// `/v1/rooms/{roomId}/…`: the room a request is about.
#[derive(Debug, Deserialize, FromRequestParts, IntoParams)]
#[serde(rename_all = "camelCase")]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
#[into_params(parameter_in = Path)]
pub struct RoomPath {
    /// Room id
    // The pattern and length are `limits::check_id`'s.
    #[param(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    room_id: String,
}

impl RoomPath {
    /// The room id, checked.
    pub fn id(&self) -> Result<&str, ApiError> {
        valid("roomId", &self.room_id)?;
        Ok(&self.room_id)
    }

    /// The room id, checked, owned.
    pub fn into_id(self) -> Result<String, ApiError> {
        valid("roomId", &self.room_id)?;
        Ok(self.room_id)
    }
}

/// `/v1/rooms/{roomId}/sessions/{sessionId}/…`: the session a request is about.
#[derive(Debug, Deserialize, FromRequestParts, IntoParams)]
#[serde(rename_all = "camelCase")]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
#[into_params(parameter_in = Path)]
pub struct SessionPath {
    // No doc comments: they would become descriptions of the contract's parameters. The pattern and
    // length are `limits::check_id`'s.
    #[param(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    room_id: String,
    #[param(pattern = "^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$", min_length = 1, max_length = 128)]
    session_id: String,
}

impl SessionPath {
    /// The session's key, both ids checked (the room's first).
    pub fn key(&self) -> Result<SessionKey, ApiError> {
        valid("roomId", &self.room_id)?;
        valid("sessionId", &self.session_id)?;
        Ok(SessionKey::new(&self.room_id, &self.session_id))
    }
}

fn valid(kind: &str, id: &str) -> Result<(), ApiError> {
    check_id(kind, id).map_err(ApiError::from)
}

/// `after` (default 0) and `limit` (default 100) of an events page. Seqs are SQLite integers
/// (int64 in the contract): a larger `after` is refused, not wrapped around to a negative number
/// that reads from the start.
pub fn events_page(q: &EventsQuery) -> Result<(u64, usize), ApiError> {
    let after = match q.after {
        Some(a) if i64::try_from(a).is_err() => {
            return Err(ApiError::bad_request("invalid_query", format!("after must be at most {}", i64::MAX)));
        }
        a => a.unwrap_or(0),
    };
    let limit = q.limit.unwrap_or(DEFAULT_EVENT_LIMIT);
    if limit == 0 || limit > MAX_EVENT_LIMIT {
        return Err(ApiError::bad_request("invalid_query", format!("limit must be between 1 and {MAX_EVENT_LIMIT}")));
    }
    Ok((after, limit as usize))
}

/// Which way a session's page reads (`after`, the default, or `before`; not both) and its `limit`.
pub fn session_events_page(q: &SessionEventsQuery) -> Result<(SessionPageFrom, usize), ApiError> {
    let (after, limit) = events_page(&EventsQuery { after: q.after, limit: q.limit })?;
    let from = match (q.after, q.before) {
        (Some(_), Some(_)) => return Err(ApiError::bad_request("invalid_query", "give after or before, not both")),
        (_, Some(b)) if b == 0 || i64::try_from(b).is_err() => {
            return Err(ApiError::bad_request("invalid_query", format!("before must be between 1 and {}", i64::MAX)));
        }
        (_, Some(b)) => SessionPageFrom::Before(b),
        (_, None) => SessionPageFrom::After(after),
    };
    Ok((from, limit))
}

/// 410 `history_expired`: a page starts before what is kept (`message`); the details say where
/// the kept history starts and ends.
pub fn history_expired(message: String, pruned_through: u64, head_seq: u64) -> ApiError {
    ApiError::new(StatusCode::GONE, "history_expired", message)
        .with_details(serde_json::json!({ "oldestSeq": pruned_through + 1, "headSeq": head_seq }))
}
