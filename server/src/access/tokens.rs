//! Managed tokens: made by an admin, each with a role and rooms, stored only as a SHA-256 of the
//! secret, revoked at once. The registry keeps every token in memory (a request never waits on the
//! store to be authenticated), reloads from the store at start, when another host says the tokens
//! changed, and when a secret it does not know comes in (at most once a second: made on another
//! host a moment ago). Last-use times are written in batches.
//!
//! A token made by a managed token hangs off its maker: it is valid only while every token up the
//! chain is (checked at each authentication, so a maker's expiry or revocation ends what it made
//! at once), it expires no later than its maker, and a revocation is written for the whole subtree.
//! The token file's token is the root: what it makes hangs off nobody.

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

/// Most bytes read from a token file: a token is one short line, so anything longer (or endless,
/// like `/dev/zero`) is not a token file and is refused without being read further.
pub const MAX_TOKEN_FILE_BYTES: u64 = 4096;

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

    /// Neither revoked nor expired itself (its makers are [`Known::active`]'s to check).
    fn own_active(&self, now_ms: i64) -> bool {
        self.record.revoked_at_ms.is_none() && self.record.expires_at_ms.is_none_or(|e| now_ms < e)
    }
}

#[derive(Default)]
struct Known {
    by_hash: HashMap<String, Arc<Managed>>,
    by_id: HashMap<String, Arc<Managed>>,
}

impl Known {
    /// `m` and the tokens that made it, up to the token file's: `None` when the chain breaks (a
    /// maker this registry does not hold, or a loop, which the server never makes).
    fn chain<'a>(&'a self, m: &'a Managed) -> Option<Vec<&'a Managed>> {
        let mut chain = vec![m];
        let mut at = m;
        // A chain is never longer than the tokens there are.
        while chain.len() <= self.by_id.len() {
            match at.record.created_by_id.as_deref() {
                // Made by the token file's token, or before makers were recorded.
                None | Some(super::ADMIN_TOKEN_ID) => return Some(chain),
                Some(maker) => at = self.by_id.get(maker)?,
            }
            chain.push(at);
        }
        None
    }

    /// Valid at `now_ms`: neither `m` nor any token that made it is revoked or expired.
    fn active(&self, m: &Managed, now_ms: i64) -> bool {
        self.chain(m).is_some_and(|c| c.iter().all(|t| t.own_active(now_ms)))
    }

    /// When `m` stops working: the earliest expiry up its chain.
    fn expires_at_ms(&self, m: &Managed) -> Option<i64> {
        let chain = self.chain(m)?;
        chain.iter().filter_map(|t| t.record.expires_at_ms).min()
    }

    /// The ids of the tokens `id` made, and those they made, and so on.
    fn made_by(&self, id: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut frontier = vec![id.to_owned()];
        while let Some(maker) = frontier.pop() {
            for m in self.by_id.values() {
                if m.record.created_by_id.as_deref() == Some(maker.as_str())
                    && !out.contains(&m.record.id)
                    && m.record.id != id
                {
                    out.push(m.record.id.clone());
                    frontier.push(m.record.id.clone());
                }
            }
        }
        out
    }

    fn put(&mut self, m: Managed) {
        let m = Arc::new(m);
        self.by_hash.insert(m.record.secret_hash.clone(), m.clone());
        self.by_id.insert(m.record.id.clone(), m);
    }
}

/// What a presented secret stands for.
pub enum Verdict {
    /// A valid token.
    Valid(Principal),
    /// A managed token that was revoked or expired (itself or a token up its chain): refused, but
    /// its later attempts are known to be its.
    Ended(Arc<Actor>),
    /// No token this server knows.
    Unknown,
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
            known.put(m);
        }
        *self.known.write().unwrap_or_else(|e| e.into_inner()) = known;
        self.changed.send_modify(|n| *n += 1);
        Ok(())
    }

    fn lookup(&self, hash: &str) -> Option<Arc<Managed>> {
        self.known.read().unwrap_or_else(|e| e.into_inner()).by_hash.get(hash).cloned()
    }

    /// What a presented secret stands for now.
    pub async fn authenticate(&self, secret: &str) -> Verdict {
        if secret.len() as u64 > MAX_TOKEN_FILE_BYTES {
            return Verdict::Unknown;
        }
        let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
        if bool::from(self.admin.ct_eq(&digest)) {
            return Verdict::Valid(Principal::admin());
        }
        if !secret.starts_with(SECRET_PREFIX) || secret.len() > MAX_SECRET_BYTES {
            return Verdict::Unknown;
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
        };
        let Some(found) = found else { return Verdict::Unknown };
        let now = now_ms();
        if !self.known.read().unwrap_or_else(|e| e.into_inner()).active(&found, now) {
            return Verdict::Ended(found.principal.actor.clone());
        }
        self.touched.lock().unwrap_or_else(|e| e.into_inner()).insert(found.record.id.clone(), now);
        Verdict::Valid(found.principal.clone())
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
        known.by_id.get(id).filter(|m| known.active(m, now_ms())).map(|m| m.principal.clone())
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

    /// When the token `id` stops working, if it does: its expiry, or an earlier one of a token up
    /// its chain.
    pub fn expires_at_ms(&self, id: &str) -> Option<i64> {
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        known.by_id.get(id).and_then(|m| known.expires_at_ms(m))
    }

    /// Resolves once the token `id` is no longer valid: revoked (here or on another host, it or a
    /// token up its chain) or expired. Never, for the token file's token.
    pub fn ended(self: &Arc<Self>, id: &str) -> impl Future<Output = ()> + Send + 'static {
        // Subscribed before the first look, so a revocation between the two still wakes it.
        let mut changes = self.subscribe();
        let (tokens, id) = (self.clone(), id.to_owned());
        let expiry = self.expires_at_ms(&id).map(|at| {
            let left = u64::try_from(at.saturating_sub(now_ms())).unwrap_or(0);
            tokio::time::Instant::now() + Duration::from_millis(left)
        });
        async move {
            let revoked = async {
                while tokens.is_active(&id) {
                    if changes.changed().await.is_err() {
                        // The registry is gone (the server stops): nothing ends the token now.
                        std::future::pending::<()>().await;
                    }
                }
            };
            let expired = async {
                match expiry {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = revoked => {}
                () = expired => {}
            }
        }
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
            known.by_id.values().filter(|m| known.active(m, now)).count()
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
            // Never later than the maker's: a token cannot outlive the one that made it.
            expires_at_ms: match (new.expires_at_ms, self.expires_at_ms(by.token_id())) {
                (Some(asked), Some(maker)) => Some(asked.min(maker)),
                (asked, maker) => asked.or(maker),
            },
            revoked_at_ms: None,
            last_used_at_ms: None,
        };
        self.store.token_insert(record.clone()).await.map_err(store_error)?;
        if let Some(m) = Managed::new(record.clone()) {
            self.known.write().unwrap_or_else(|e| e.into_inner()).put(m);
        }
        self.announce();
        Ok((record, secret))
    }

    /// Revokes `id` and every token it made (transitively) at once: requests with them fail from
    /// now on, and their WebSockets, long polls and exports end.
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
        {
            // As the store wrote it: the tokens it made, those not revoked yet, at the same time.
            let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
            for made in known.made_by(id) {
                let Some(m) = known.by_id.get(&made).cloned() else { continue };
                if m.record.revoked_at_ms.is_none() {
                    let mut r = m.record.clone();
                    r.revoked_at_ms = Some(now);
                    if let Some(m) = Managed::new(r) {
                        known.put(m);
                    }
                }
            }
            if let Some(m) = Managed::new(record.clone()) {
                known.put(m);
            }
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
                    known.put(m);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::ADMIN_TOKEN_ID;

    fn record(id: &str, maker: Option<&str>, expires_at_ms: Option<i64>, revoked_at_ms: Option<i64>) -> Managed {
        Managed::new(TokenRecord {
            id: id.into(),
            name: id.into(),
            role: "admin".into(),
            rooms: vec!["r".into()],
            secret_hash: format!("hash of {id}"),
            created_at_ms: 0,
            created_by: "someone".into(),
            created_by_id: maker.map(str::to_owned),
            expires_at_ms,
            revoked_at_ms,
            last_used_at_ms: None,
        })
        .unwrap()
    }

    fn known(tokens: Vec<Managed>) -> Known {
        let mut k = Known::default();
        for t in tokens {
            k.put(t);
        }
        k
    }

    /// Validity is checked up the chain at every look, so a made token whose own record says
    /// nothing (made before expiries were cut, or a revocation another host has not written for
    /// it yet) still ends with its maker.
    #[test]
    fn a_made_token_is_valid_only_while_every_maker_up_its_chain_is() {
        let k = known(vec![
            record("root", Some(ADMIN_TOKEN_ID), Some(100), None),
            record("mid", Some("root"), None, None),
            record("leaf", Some("mid"), None, None),
            record("legacy", None, None, None),
            record("orphan", Some("gone"), None, None),
            record("loop_a", Some("loop_b"), None, None),
            record("loop_b", Some("loop_a"), None, None),
        ]);
        let at = |id: &str, now: i64| k.active(&k.by_id[id], now);
        assert!(at("leaf", 99) && at("mid", 99) && at("root", 99));
        assert!(!at("leaf", 100) && !at("mid", 100) && !at("root", 100), "the root's expiry ends the chain");
        assert_eq!(k.expires_at_ms(&k.by_id["leaf"]), Some(100), "what it made expires with it");
        assert!(at("legacy", 1_000_000), "no maker recorded: it hangs off nobody");
        assert!(!at("orphan", 0), "a maker this registry does not know: refused");
        assert!(!at("loop_a", 0) && !at("loop_b", 0), "a loop ends");

        let k = known(vec![
            record("root", Some(ADMIN_TOKEN_ID), None, Some(5)),
            record("mid", Some("root"), None, None),
            record("leaf", Some("mid"), None, None),
            record("sibling", Some(ADMIN_TOKEN_ID), None, None),
        ]);
        assert!(!k.active(&k.by_id["leaf"], 0), "a revoked maker ends what it made");
        assert!(k.active(&k.by_id["sibling"], 0));
        let mut made = k.made_by("root");
        made.sort();
        assert_eq!(made, ["leaf", "mid"]);
        assert!(k.made_by("leaf").is_empty());
    }
}
