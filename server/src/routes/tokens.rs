//! Managed tokens (`/v1/tokens`), the audit trail (`/v1/audit`) and who the caller is (`/v1/me`).

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use ensemble_core::limits::check_id;
use ensemble_runtime::store::{AuditRecord, TokenRecord};

use crate::access::tokens::{MAX_NAME_CHARS, MAX_ROOMS, NewToken, Registry, now_ms};
use crate::access::{ADMIN_TOKEN_ID, Principal, Role, RoomScope};
use crate::api::tokens::{
    AuditEntry, AuditList, AuditQuery, CreateToken, CreatedToken, Me, TokenInfo, TokenList, TokenPath,
};
use crate::error::{ApiError, ErrorResponse, Json, Query};
use crate::state::AppState;

/// The longest life `ttlSecs` may give a token (ten years).
const MAX_TTL_SECS: u64 = 10 * 365 * 24 * 3600;
const DEFAULT_AUDIT_LIMIT: usize = 100;
const MAX_AUDIT_LIMIT: usize = 1000;

impl TokenInfo {
    /// `r` as listed, valid or not as the registry says now (which also looks at its makers).
    fn of(tokens: &Registry, r: TokenRecord) -> Self {
        let active = tokens.is_active(&r.id);
        TokenInfo {
            id: r.id,
            name: r.name,
            role: Role::parse(&r.role).unwrap_or(Role::Viewer),
            rooms: r.rooms,
            created_at_ms: r.created_at_ms,
            created_by: r.created_by,
            created_by_id: r.created_by_id,
            expires_at_ms: r.expires_at_ms,
            revoked_at_ms: r.revoked_at_ms,
            last_used_at_ms: r.last_used_at_ms,
            active,
        }
    }
}

fn scope_list(scope: &RoomScope) -> Vec<String> {
    match scope {
        RoomScope::All => vec!["*".to_owned()],
        RoomScope::Only(rooms) => rooms.iter().cloned().collect(),
    }
}

/// The caller's token: its name, role and rooms.
#[utoipa::path(get, path = "/v1/me", tag = "access",
    extensions(("x-ensemble-access" = json!({"role": "viewer"}))),
    responses((status = 200, description = "The caller", body = Me), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn me(State(state): State<AppState>, Extension(p): Extension<Principal>) -> Json<Me> {
    Json(Me {
        token_id: p.actor.token_id.clone(),
        name: p.actor.name.clone(),
        role: p.role,
        rooms: scope_list(&p.rooms),
        expires_at_ms: state.tokens.expires_at_ms(p.token_id()),
    })
}

fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_input", message).with_details(serde_json::json!({ "field": field }))
}

/// Makes a token with a role and rooms (admin). Its secret is in this answer only. It expires no
/// later than the token that made it (a later or absent expiry is cut to the maker's) and is
/// revoked with it. The name `admin` is reserved for the token file's token.
#[utoipa::path(post, path = "/v1/tokens", tag = "access",
    extensions(("x-ensemble-access" = json!({"role": "admin"}))), request_body = CreateToken,
    responses((status = 201, description = "The token and its secret (shown once)", body = CreatedToken),
        (status = 409, description = "`too_many_tokens`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn create_token(
    State(state): State<AppState>,
    Extension(by): Extension<Principal>,
    Json(req): Json<CreateToken>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    let name = req.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(invalid(
            "name",
            format!("name must be 1–{MAX_NAME_CHARS} characters, none of them control characters"),
        ));
    }
    // The token file's token acts as `admin` (its name and its id): no managed token may pass for it.
    if name.eq_ignore_ascii_case(ADMIN_TOKEN_ID) || name.eq_ignore_ascii_case(&Principal::admin().actor.name) {
        return Err(invalid("name", format!("the name `{name}` is reserved for the token file's token")));
    }
    if req.rooms.is_empty() || req.rooms.len() > MAX_ROOMS {
        return Err(invalid("rooms", format!("rooms must name 1–{MAX_ROOMS} room ids, or be [\"*\"]")));
    }
    let mut rooms: Vec<String> = Vec::with_capacity(req.rooms.len());
    for room in &req.rooms {
        if room != "*" && check_id("rooms", room).is_err() {
            return Err(invalid("rooms", format!("`{room}` is not a room id (1–128 of A-Z a-z 0-9 . _ ~ : -)")));
        }
        if !rooms.contains(room) {
            rooms.push(room.clone());
        }
    }
    if rooms.iter().any(|r| r == "*") {
        rooms = vec!["*".to_owned()];
    }
    // A token never reaches further than the one that made it.
    if !by.rooms.is_all() && rooms.iter().any(|r| r == "*" || !by.rooms.contains(r)) {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "forbidden", "a token may only name rooms its maker reaches"));
    }
    let now = now_ms();
    let expires_at_ms = match (req.expires_at_ms, req.ttl_secs) {
        (Some(_), Some(_)) => return Err(invalid("ttlSecs", "give expiresAtMs or ttlSecs, not both")),
        (Some(at), None) if at <= now => return Err(invalid("expiresAtMs", "expiresAtMs is in the past")),
        (Some(at), None) => Some(at),
        (None, Some(ttl)) if ttl == 0 || ttl > MAX_TTL_SECS => {
            return Err(invalid("ttlSecs", format!("ttlSecs must be 1–{MAX_TTL_SECS}")));
        }
        (None, Some(ttl)) => Some(now.saturating_add(i64::try_from(ttl * 1000).unwrap_or(i64::MAX))),
        (None, None) => None,
    };
    // The registry cuts a later (or no) expiry to the maker's; the answer shows the one it got.
    let (record, secret) = state.tokens.create(NewToken { name, role: req.role, rooms, expires_at_ms }, &by).await?;
    tracing::info!(token = %record.id, name = %record.name, role = %record.role, by = %by.actor.name, "token created");
    Ok((StatusCode::CREATED, Json(CreatedToken { token: TokenInfo::of(&state.tokens, record), secret })))
}

/// Does a token reach only rooms `by` reaches (so `by` may see and revoke it)?
fn within(by: &Principal, token: &TokenRecord) -> bool {
    by.rooms.is_all() || token.rooms.iter().all(|r| r != "*" && by.rooms.contains(r))
}

/// Every managed token, without secrets (admin; an admin of some rooms sees the tokens of those
/// rooms only).
#[utoipa::path(get, path = "/v1/tokens", tag = "access",
    extensions(("x-ensemble-access" = json!({"role": "admin"}))),
    responses((status = 200, description = "The tokens, oldest first", body = TokenList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_tokens(State(state): State<AppState>, Extension(by): Extension<Principal>) -> Json<TokenList> {
    let data =
        state.tokens.list().into_iter().filter(|t| within(&by, t)).map(|t| TokenInfo::of(&state.tokens, t)).collect();
    Json(TokenList { data })
}

/// Revokes a token at once (admin), and every token it made, transitively: their requests fail
/// from now on, their room WebSockets close with code 4003, their long polls answer 401 and their
/// exports stop.
#[utoipa::path(delete, path = "/v1/tokens/{tokenId}", tag = "access",
    extensions(("x-ensemble-access" = json!({"role": "admin"}))), params(TokenPath),
    responses((status = 200, description = "The revoked token", body = TokenInfo),
        (status = 404, description = "`token_not_found`", body = ErrorResponse),
        (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn revoke_token(
    State(state): State<AppState>,
    Extension(by): Extension<Principal>,
    Path(p): Path<TokenPath>,
) -> Result<Json<TokenInfo>, ApiError> {
    // A token beyond the caller's rooms is answered as one that does not exist.
    if !by.rooms.is_all() && !state.tokens.list().iter().any(|t| t.id == p.token_id && within(&by, t)) {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "token_not_found", format!("no token `{}`", p.token_id)));
    }
    let record = state.tokens.revoke(&p.token_id).await?;
    tracing::info!(token = %record.id, by = %by.actor.name, "token revoked");
    Ok(Json(TokenInfo::of(&state.tokens, record)))
}

impl From<AuditRecord> for AuditEntry {
    fn from(r: AuditRecord) -> Self {
        AuditEntry {
            seq: r.seq,
            at_ms: r.at_ms,
            token_id: r.token_id,
            actor: r.actor_name,
            method: r.method,
            route: r.route,
            room_id: r.room_id,
            session_id: r.session_id,
            status: r.status,
            code: r.code,
        }
    }
}

/// The mutating requests, refused ones too, oldest first (admin; an admin of some rooms sees the
/// records of those rooms only).
#[utoipa::path(get, path = "/v1/audit", tag = "access",
    extensions(("x-ensemble-access" = json!({"role": "admin"}))), params(AuditQuery),
    responses((status = 200, description = "A page of the audit trail", body = AuditList), (status = "4XX", body = ErrorResponse), (status = "5XX", body = ErrorResponse)))]
pub async fn list_audit(
    State(state): State<AppState>,
    Extension(by): Extension<Principal>,
    Query(q): Query<AuditQuery>,
) -> Result<Json<AuditList>, ApiError> {
    if q.after.is_some_and(|a| i64::try_from(a).is_err()) {
        return Err(ApiError::bad_request("invalid_query", "after must be a seq (0–9223372036854775807)"));
    }
    let limit = q.limit.unwrap_or(DEFAULT_AUDIT_LIMIT);
    if limit == 0 || limit > MAX_AUDIT_LIMIT {
        return Err(ApiError::bad_request("invalid_query", format!("limit must be 1–{MAX_AUDIT_LIMIT}")));
    }
    let records = state.controller.store().audit_after(q.after.unwrap_or(0), limit).await.map_err(|e| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            format!("reading the audit trail failed: {e}"),
        )
    })?;
    let next = (records.len() == limit).then(|| records.last().map(|r| r.seq)).flatten();
    // A page filtered down still says where the next one starts.
    let data = records
        .into_iter()
        .filter(|r| by.rooms.is_all() || r.room_id.as_deref().is_some_and(|room| by.rooms.contains(room)))
        .map(AuditEntry::from)
        .collect();
    Ok(Json(AuditList { data, next }))
}
