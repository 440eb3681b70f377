//! Wire types: Managed tokens, the caller, the audit trail.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::access::Role;

/// `POST /v1/tokens`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateToken {
    /// Who or what holds it (shown as the actor of what it does), 1–128 characters.
    pub name: String,
    pub role: Role,
    /// The room ids it reaches, or `["*"]` for every room.
    pub rooms: Vec<String>,
    /// When it stops working (milliseconds since the epoch); at most one of this and `ttlSecs`.
    #[serde(default)]
    pub expires_at_ms: Option<i64>,
    /// How long it works from now, in seconds.
    #[serde(default)]
    pub ttl_secs: Option<u64>,
}

/// A managed token, without its secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub rooms: Vec<String>,
    pub created_at_ms: i64,
    /// The name of the token that made it.
    pub created_by: String,
    /// The id of the token that made it (`admin`: the token file's). A token is valid only while
    /// its maker is, and is revoked with it. Absent on tokens made before it was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at_ms: Option<i64>,
    /// Neither it nor a token up its chain of makers is revoked or expired.
    pub active: bool,
}

/// A new token and its secret, which is shown this once and never again.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedToken {
    pub token: TokenInfo,
    pub secret: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TokenList {
    pub data: Vec<TokenInfo>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Path)]
pub struct TokenPath {
    /// Token id
    pub token_id: String,
}

/// Who the caller is.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    pub token_id: String,
    pub name: String,
    pub role: Role,
    /// The rooms the token reaches (`["*"]`: every room).
    pub rooms: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Records after this `seq` (default 0).
    #[serde(default)]
    pub after: Option<u64>,
    /// At most this many (1–1000, default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One mutating request.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub seq: u64,
    pub at_ms: i64,
    /// The caller's token id (absent: no valid token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    pub method: String,
    /// The route template, e.g. `/v1/rooms/{roomId}/sessions`.
    pub route: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub room_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub status: u16,
    /// The error code of a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditList {
    pub data: Vec<AuditEntry>,
    /// The `after` of the next page, when this one was full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
}
