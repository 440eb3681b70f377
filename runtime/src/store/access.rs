//! Access tokens and the audit trail: what the store keeps of who may call the server and of what
//! they changed. Roles, room ids and hashes are opaque here; the server gives them meaning.

/// A managed access token. Only a hash of its secret is ever stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    /// e.g. "tok_…", unique
    pub id: String,
    pub name: String,
    /// "viewer" | "operator" | "approver" | "admin" (opaque to the store)
    pub role: String,
    /// room ids, or ["*"]
    pub rooms: Vec<String>,
    /// hex SHA-256 of the secret (opaque to the store), unique
    pub secret_hash: String,
    pub created_at_ms: i64,
    /// the creating token's name
    pub created_by: String,
    /// the creating token's id ("admin" for the token file's); None in rows older than the column
    pub created_by_id: Option<String>,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
    pub last_used_at_ms: Option<i64>,
}

/// One mutating request as the audit trail keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    /// assigned by the store on append (gap-free, increasing from 1); ignored on input
    pub seq: u64,
    pub at_ms: i64,
    /// None: no valid token (refused as unauthorized)
    pub token_id: Option<String>,
    pub actor_name: Option<String>,
    pub method: String,
    /// the route template, e.g. "/v1/rooms/{roomId}/sessions"
    pub route: String,
    pub room_id: Option<String>,
    pub session_id: Option<String>,
    pub status: u16,
    /// the error code of a refusal, e.g. "forbidden"
    pub code: Option<String>,
}

/// The message of a refused token insert: which of its unique fields is taken (`id_taken`: its id,
/// else its secret hash, which is not repeated in the message).
pub(super) fn token_conflict(token: &TokenRecord, id_taken: bool) -> super::StoreError {
    if id_taken {
        super::StoreError::Conflict(format!("a token with id `{}` exists", token.id))
    } else {
        super::StoreError::Conflict(format!("a token with the secret hash of `{}` exists", token.id))
    }
}

/// The writes of access: tokens and the audit trail.
pub(super) enum AccessOp {
    /// Inserts a token; refused with [`super::StoreError::Conflict`] when its id or secret hash
    /// exists.
    TokenInsert(TokenRecord),
    /// Marks a token (and every token it made) revoked; answered whether it existed and was not
    /// revoked yet.
    TokenRevoke { id: String, at_ms: i64 },
    /// Records tokens' last use (only ever moved forward; unknown ids are ignored).
    TokenTouch(Vec<(String, i64)>),
    /// Appends audit records, assigning their seqs in order; answered with the last seq assigned
    /// (the trail's head when there are none).
    AuditAppend(Vec<AuditRecord>),
    /// Deletes tokens revoked or expired before `before_ms`; answered with how many.
    TokenPrune { before_ms: i64 },
    /// Deletes audit records older than `before_ms`; answered with how many.
    AuditPrune { before_ms: i64 },
}

/// The reads of access, as each engine answers them.
#[async_trait::async_trait]
pub(super) trait AccessReads {
    /// Every token, ordered by `created_at_ms`, then by id.
    async fn tokens(&self) -> Result<Vec<TokenRecord>, super::StoreError>;
    /// Audit records with `seq > after`, ascending, at most `limit`.
    async fn audit_after(&self, after: u64, limit: usize) -> Result<Vec<AuditRecord>, super::StoreError>;
}
