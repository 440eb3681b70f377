//! Managed tokens: made by an admin, each with a role and rooms, stored only as a SHA-256 of the
//! secret, revoked at once. The registry keeps every token in memory (a request never waits on the
//! store to be authenticated), reloads from the store at start, when another host says the tokens
//! changed, and when a secret it does not know comes in (at most once a second: made on another
//! host a moment ago). Last-use times are written in batches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use ensemble_runtime::actor::Actor;
use ensemble_runtime::store::{Store, TokenRecord};
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use subtle::ConstantTimeEq;

use super::{Principal, Role, RoomScope};
use crate::error::ApiError;

/// Every managed secret starts so (and the token file's never needs to): a leaked one is easy to
/// find in logs and code, and anything else skips the hash lookup.
pub const SECRET_PREFIX: &str = "ens_";
/// Longest managed secret considered (bytes); longer ones are refused without a lookup. The
/// token file's token may be longer (up to `MAX_TOKEN_FILE_BYTES`), and is compared first.
pub const MAX_SECRET_BYTES: usize = 512;
/// Longest token name (characters).
pub const MAX_NAME_CHARS: usize = 128;
/// Most rooms one token may name.
pub const MAX_ROOMS: usize = 256;
/// A secret the registry does not know makes it reload from the store at most this often.
const MISS_RELOAD_EVERY: Duration = Duration::from_secs(1);

/// One managed token as the registry holds it.
#[derive(Clone, Debug)]
struct Managed {
    record: TokenRecord,
    principal: Principal,
}

impl Managed {
    fn new(record: TokenRecord) -> Option<Managed> {
        let role = Role::parse(&record.role)?;
        let principal = Principal {
            actor: Arc::new(Actor { token_id: record.id.clone(), name: record.name.clone() }),
            role,
            rooms: RoomScope::from_list(&record.rooms),
        };
        Some(Managed { record, principal })
    }

    fn active(&self, now_ms: i64) -> bool {
        self.record.revoked_at_ms.is_none() && self.record.expires_at_ms.is_none_or(|e| now_ms < e)
    }
}

#[derive(Default)]
struct Known {
    by_hash: HashMap<String, Arc<Managed>>,
    by_id: HashMap<String, Arc<Managed>>,
}

/// What `POST /v1/tokens` asks for (checked).
pub struct NewToken {
    pub name: String,
    pub role: Role,
    pub rooms: Vec<String>,
    pub expires_at_ms: Option<i64>,
}

pub struct Registry {
    /// SHA-256 of the token file's token.
    admin: [u8; 32],
    store: Store,
    max_tokens: usize,
    known: RwLock<Known>,
    touched: Mutex<HashMap<String, i64>>,
    last_miss_reload: Mutex<Option<Instant>>,
    /// Bumped on every change of the set of valid tokens (a revocation here or on another host);
    /// open WebSockets look again at their own token.
    changed: watch::Sender<u64>,
    /// Called after a change made here, so other hosts reload (set by the cluster).
    announce: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
}

pub fn now_ms() -> i64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(crate) fn random_hex(n: usize) -> Result<String, ApiError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("no randomness: {e}")))?;
    Ok(hex(&bytes))
}

fn store_error(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable", format!("the token store failed: {e}"))
        .retry_after(1)
}

impl Registry {
    pub fn new(admin: [u8; 32], store: Store, max_tokens: usize) -> Registry {
        Registry {
            admin,
            store,
            max_tokens,
            known: RwLock::new(Known::default()),
            touched: Mutex::new(HashMap::new()),
            last_miss_reload: Mutex::new(None),
            changed: watch::Sender::new(0),
            announce: Mutex::new(None),
        }
    }

    /// Other hosts are told of changes made here through `f`.
    pub fn on_change(&self, f: Arc<dyn Fn() + Send + Sync>) {
        *self.announce.lock().unwrap_or_else(|e| e.into_inner()) = Some(f);
    }

    fn announce(&self) {
        let f = self.announce.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(f) = f {
            f();
        }
    }

    /// A receiver that changes whenever a token stops being valid.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Reads every token from the store again.
    pub async fn reload(&self) -> Result<(), ApiError> {
        let records = self.store.tokens().await.map_err(store_error)?;
        let mut known = Known::default();
        for record in records {
            let Some(m) = Managed::new(record) else { continue };
            let m = Arc::new(m);
            known.by_hash.insert(m.record.secret_hash.clone(), m.clone());
            known.by_id.insert(m.record.id.clone(), m);
        }
        *self.known.write().unwrap_or_else(|e| e.into_inner()) = known;
        self.changed.send_modify(|n| *n += 1);
        Ok(())
    }

    fn lookup(&self, hash: &str) -> Option<Arc<Managed>> {
        self.known.read().unwrap_or_else(|e| e.into_inner()).by_hash.get(hash).cloned()
    }

    /// The principal a presented secret stands for, if it is valid now.
    pub async fn authenticate(&self, secret: &str) -> Option<Principal> {
        if secret.len() as u64 > crate::security::MAX_TOKEN_FILE_BYTES {
            return None;
        }
        let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
        if bool::from(self.admin.ct_eq(&digest)) {
            return Some(Principal::admin());
        }
        if !secret.starts_with(SECRET_PREFIX) || secret.len() > MAX_SECRET_BYTES {
            return None;
        }
        let hash = hex(&digest);
        let found = match self.lookup(&hash) {
            Some(m) => Some(m),
            None if self.may_reload_on_miss() => {
                if let Err(e) = self.reload().await {
                    tracing::warn!(error = %e.message, "reloading tokens after an unknown one failed");
                }
                self.lookup(&hash)
            }
            None => None,
        }?;
        let now = now_ms();
        if !found.active(now) {
            return None;
        }
        self.touched.lock().unwrap_or_else(|e| e.into_inner()).insert(found.record.id.clone(), now);
        Some(found.principal.clone())
    }

    fn may_reload_on_miss(&self) -> bool {
        let mut last = self.last_miss_reload.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| t.elapsed() < MISS_RELOAD_EVERY) {
            return false;
        }
        *last = Some(Instant::now());
        true
    }

    /// The principal of a token id another host forwarded a request for, if still valid.
    pub fn principal_by_id(&self, id: &str) -> Option<Principal> {
        if id == super::ADMIN_TOKEN_ID {
            return Some(Principal::admin());
        }
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        known.by_id.get(id).filter(|m| m.active(now_ms())).map(|m| m.principal.clone())
    }

    /// [`Self::principal_by_id`] for a request another host forwarded: a token this host does not
    /// know yet (made there a moment ago, its announcement still on the way) is looked for in the
    /// store first. Forwarded requests are authenticated between hosts, so this is not rate-limited.
    pub async fn principal_forwarded(&self, id: &str) -> Option<Principal> {
        if let Some(p) = self.principal_by_id(id) {
            return Some(p);
        }
        let unknown = !self.known.read().unwrap_or_else(|e| e.into_inner()).by_id.contains_key(id);
        if unknown && let Err(e) = self.reload().await {
            tracing::warn!(error = %e.message, "reloading tokens for a forwarded request failed");
        }
        self.principal_by_id(id)
    }

    /// Is the token `id` still valid (the admin token always is)?
    pub fn is_active(&self, id: &str) -> bool {
        self.principal_by_id(id).is_some()
    }

    /// When the token `id` expires, if it does.
    pub fn expires_at_ms(&self, id: &str) -> Option<i64> {
        self.known.read().unwrap_or_else(|e| e.into_inner()).by_id.get(id).and_then(|m| m.record.expires_at_ms)
    }

    /// Every token (revoked and expired ones too), oldest first; last-use times as known now.
    pub fn list(&self) -> Vec<TokenRecord> {
        let touched = self.touched.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<TokenRecord> = known
            .by_id
            .values()
            .map(|m| {
                let mut r = m.record.clone();
                if let Some(t) = touched.get(&r.id) {
                    r.last_used_at_ms = Some(r.last_used_at_ms.map_or(*t, |u| u.max(*t)));
                }
                r
            })
            .collect();
        out.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        out
    }

    /// Makes a token; returns it and its secret (shown once, never stored).
    pub async fn create(&self, new: NewToken, by: &Principal) -> Result<(TokenRecord, String), ApiError> {
        let now = now_ms();
        let live = {
            let known = self.known.read().unwrap_or_else(|e| e.into_inner());
            known.by_id.values().filter(|m| m.active(now)).count()
        };
        if live >= self.max_tokens {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "too_many_tokens",
                format!("there are {live} valid tokens (the limit, --max-tokens); revoke one first"),
            )
            .with_details(serde_json::json!({ "limit": self.max_tokens })));
        }
        let secret = format!("{SECRET_PREFIX}{}", random_hex(32)?);
        let record = TokenRecord {
            id: format!("tok_{}", random_hex(8)?),
            name: new.name,
            role: new.role.name().to_owned(),
            rooms: new.rooms,
            secret_hash: hex(&Sha256::digest(secret.as_bytes())),
            created_at_ms: now,
            created_by: by.actor.name.clone(),
            created_by_id: Some(by.token_id().to_owned()),
            expires_at_ms: new.expires_at_ms,
            revoked_at_ms: None,
            last_used_at_ms: None,
        };
        self.store.token_insert(record.clone()).await.map_err(store_error)?;
        if let Some(m) = Managed::new(record.clone()) {
            let m = Arc::new(m);
            let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
            known.by_hash.insert(m.record.secret_hash.clone(), m.clone());
            known.by_id.insert(m.record.id.clone(), m);
        }
        self.announce();
        Ok((record, secret))
    }

    /// Revokes `id` at once: requests with it fail from now on, and its WebSockets close.
    pub async fn revoke(&self, id: &str) -> Result<TokenRecord, ApiError> {
        let not_found = || ApiError::new(StatusCode::NOT_FOUND, "token_not_found", format!("no token `{id}`"));
        if id == super::ADMIN_TOKEN_ID {
            return Err(ApiError::bad_request(
                "admin_token",
                "the token file's token cannot be revoked here; replace the file and restart",
            ));
        }
        let existing = self.known.read().unwrap_or_else(|e| e.into_inner()).by_id.get(id).cloned();
        let existing = existing.ok_or_else(not_found)?;
        let now = now_ms();
        self.store.token_revoke(id, now).await.map_err(store_error)?;
        let mut record = existing.record.clone();
        if record.revoked_at_ms.is_none() {
            record.revoked_at_ms = Some(now);
        }
        if let Some(m) = Managed::new(record.clone()) {
            let m = Arc::new(m);
            let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
            known.by_hash.insert(m.record.secret_hash.clone(), m.clone());
            known.by_id.insert(m.record.id.clone(), m);
        }
        self.changed.send_modify(|n| *n += 1);
        self.announce();
        Ok(record)
    }

    /// Removes the tokens that ended (revoked or expired) more than `retention` ago from the store
    /// and from the list.
    async fn prune(&self, retention: Duration) {
        let before = now_ms() - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        match self.store.token_prune(before).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(removed = n, "removed tokens that ended long ago");
                if let Err(e) = self.reload().await {
                    tracing::warn!(error = %e.message, "reloading the tokens after a prune failed");
                }
            }
            Err(e) => tracing::warn!(error = %e, "removing tokens that ended long ago failed"),
        }
    }

    fn remember_use(&self, used: &[(String, i64)]) {
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        for (id, t) in used {
            if let Some(m) = known.by_id.get(id).cloned() {
                let mut r = m.record.clone();
                r.last_used_at_ms = Some(r.last_used_at_ms.map_or(*t, |u| u.max(*t)));
                if let Some(m) = Managed::new(r) {
                    let m = Arc::new(m);
                    known.by_hash.insert(m.record.secret_hash.clone(), m.clone());
                    known.by_id.insert(id.clone(), m);
                }
            }
        }
    }

    /// Writes the last-use times gathered since the previous call.
    pub async fn flush_touches(&self) {
        let used: Vec<(String, i64)> =
            std::mem::take(&mut *self.touched.lock().unwrap_or_else(|e| e.into_inner())).into_iter().collect();
        if used.is_empty() {
            return;
        }
        self.remember_use(&used);
        if let Err(e) = self.store.token_touch(used).await {
            tracing::warn!(error = %e, "recording when tokens were last used failed");
        }
    }
}

/// Removes ended tokens after `retention`, now and then hourly (or every `retention` if shorter),
/// until `stop`.
pub async fn prune(tokens: Arc<Registry>, retention: Duration, stop: tokio_util::sync::CancellationToken) {
    let every = retention.min(Duration::from_secs(3600));
    loop {
        tokens.prune(retention).await;
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}
