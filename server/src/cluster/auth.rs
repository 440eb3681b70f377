//! How hosts prove to each other that a message is theirs: NATS credentials (who may connect to
//! the NATS server at all) and MACs keyed by the cluster secret (which messages a host acts on).
//!
//! Reaching NATS must not be enough to act as a host: every forwarded request, its answer and every
//! room frame carries an HMAC-SHA256 over its fields, keyed by a key derived from
//! `--cluster-secret-file` for that purpose alone, so a MAC made for one kind of message never
//! passes for another. Fields are length-prefixed, so no two messages share an encoding. The MACs
//! authenticate; they do not encrypt: who reads NATS still reads the traffic (use `tls://` and NATS
//! permissions for that).

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::security::{self, SecurityError};

type HmacSha256 = Hmac<Sha256>;

/// Shortest cluster secret accepted (bytes, after trimming surrounding whitespace).
pub const MIN_SECRET_BYTES: usize = 32;
/// Most bytes read from a cluster secret file.
pub const MAX_SECRET_FILE_BYTES: u64 = 4096;
/// Most bytes read from a NATS credentials file (a `.creds` file is about 1 KiB).
pub const MAX_CREDENTIALS_FILE_BYTES: u64 = 16 * 1024;
/// The flags, as errors name them.
pub const SECRET_FLAG: &str = "--cluster-secret-file";
pub const CREDENTIALS_FLAG: &str = "--nats-credentials";

/// Headers of the authenticated messages.
pub const MAC_HEADER: &str = "Ensemble-Mac";
pub const TIMESTAMP_HEADER: &str = "Ensemble-Timestamp";
pub const NONCE_HEADER: &str = "Ensemble-Nonce";

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error(transparent)]
    File(#[from] SecurityError),
    #[error(
        "the cluster secret in {path} is {len} bytes; at least {MIN_SECRET_BYTES} are required (e.g. `(umask 077 && \
         head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > FILE)`, the same file on every host)"
    )]
    ShortSecret { path: PathBuf, len: usize },
    #[error("{CREDENTIALS_FLAG} {path}: {reason}")]
    Credentials { path: PathBuf, reason: String },
    #[error("{CREDENTIALS_FLAG} {path}: not a valid NATS credentials file: {source}")]
    Creds { path: PathBuf, source: std::io::Error },
}

/// What a MAC is for: each has its own key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A forwarded request.
    Request,
    /// The answer to a forwarded request.
    Answer,
    /// A room frame.
    Frame,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Request => b"ensemble.cluster.v1.request",
            Purpose::Answer => b"ensemble.cluster.v1.answer",
            Purpose::Frame => b"ensemble.cluster.v1.frame",
        }
    }
}

/// The keys derived from the cluster secret. Its `Debug` never shows them.
pub struct ClusterKeys {
    request: [u8; 32],
    answer: [u8; 32],
    frame: [u8; 32],
}

impl fmt::Debug for ClusterKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClusterKeys(<redacted>)")
    }
}

/// HMAC-SHA256 of length-prefixed `fields` under `key`.
fn mac_of(key: &[u8], fields: &[&[u8]]) -> HmacSha256 {
    // HMAC takes keys of any length: this cannot fail.
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC accepts any key"));
    for f in fields {
        mac.update(&(f.len() as u64).to_be_bytes());
        mac.update(f);
    }
    mac
}

impl ClusterKeys {
    /// Derives one key per purpose: HMAC(secret, purpose label).
    pub fn from_secret(secret: &[u8]) -> Self {
        let derive = |p: Purpose| -> [u8; 32] { mac_of(secret, &[p.label()]).finalize().into_bytes().into() };
        Self { request: derive(Purpose::Request), answer: derive(Purpose::Answer), frame: derive(Purpose::Frame) }
    }

    /// Reads `--cluster-secret-file` (the token file's checks; at least [`MIN_SECRET_BYTES`]).
    pub fn load(path: &Path, allow_shared: bool) -> Result<Self, AuthError> {
        let raw = security::read_secret_file(SECRET_FLAG, path, allow_shared, MAX_SECRET_FILE_BYTES)?;
        let secret = raw.trim_ascii();
        if secret.len() < MIN_SECRET_BYTES {
            return Err(AuthError::ShortSecret { path: path.into(), len: secret.len() });
        }
        Ok(Self::from_secret(secret))
    }

    fn key(&self, purpose: Purpose) -> &[u8; 32] {
        match purpose {
            Purpose::Request => &self.request,
            Purpose::Answer => &self.answer,
            Purpose::Frame => &self.frame,
        }
    }

    /// The MAC of `fields` for `purpose`, hex encoded (a header value).
    pub fn sign(&self, purpose: Purpose, fields: &[&[u8]]) -> String {
        hex(&mac_of(self.key(purpose), fields).finalize().into_bytes())
    }

    /// Whether `mac` (hex) is the MAC of `fields` for `purpose`; compared in constant time.
    pub fn verify(&self, purpose: Purpose, fields: &[&[u8]], mac: &str) -> bool {
        let Some(tag) = unhex(mac) else { return false };
        mac_of(self.key(purpose), fields).verify_slice(&tag).is_ok()
    }
}

/// An optional field, distinct from an empty one.
pub fn optional(v: Option<&str>) -> Vec<u8> {
    match v {
        None => vec![0],
        Some(s) => {
            let mut out = Vec::with_capacity(1 + s.len());
            out.push(1);
            out.extend_from_slice(s.as_bytes());
            out
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// 16 random bytes, hex encoded.
pub fn nonce() -> String {
    let mut bytes = [0u8; 16];
    // getrandom fails only where the OS has no randomness at all; a zero nonce is then still
    // unique enough to be refused as a replay rather than accepted twice.
    let _ = getrandom::fill(&mut bytes);
    hex(&bytes)
}

/// A nonce as 128 bits (exactly 32 hex digits).
fn parse_nonce(s: &str) -> Option<u128> {
    (s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| u128::from_str_radix(s, 16).ok()).flatten()
}

/// Milliseconds since the Unix epoch, by this host's clock.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Whether a timestamp (ms) is within `max_skew` of this host's clock, either way.
pub fn fresh(timestamp_ms: u64, max_skew: Duration) -> bool {
    now_ms().abs_diff(timestamp_ms) <= max_skew.as_millis() as u64
}

/// Why a forwarded request or a frame was not acted on (the `reason` label of its counter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// No MAC, timestamp or nonce.
    Unauthenticated,
    /// A MAC that does not match (another secret, or a forgery).
    BadMac,
    /// A timestamp outside `--cluster-max-skew-secs`.
    Stale,
    /// A nonce seen before within the window.
    Replayed,
    /// The replay cache is full of nonces still in their window: refused rather than unchecked.
    ReplayCacheFull,
}

impl Rejection {
    pub fn label(self) -> &'static str {
        match self {
            Rejection::Unauthenticated => "unauthenticated",
            Rejection::BadMac => "bad_mac",
            Rejection::Stale => "stale",
            Rejection::Replayed => "replayed",
            Rejection::ReplayCacheFull => "replay_cache_full",
        }
    }
}

/// The nonces of forwarded requests accepted within the window, at most `capacity`. A nonce is
/// kept twice the window after it arrived: its timestamp was then within the window, so the
/// request stops being fresh before its nonce is forgotten.
pub struct ReplayCache {
    inner: Mutex<Seen>,
    keep: Duration,
    capacity: usize,
}

#[derive(Default)]
struct Seen {
    nonces: HashSet<u128>,
    /// In arrival order, with when each may be forgotten.
    order: VecDeque<(Instant, u128)>,
}

impl ReplayCache {
    pub fn new(window: Duration, capacity: usize) -> Self {
        Self { inner: Mutex::new(Seen::default()), keep: window * 2, capacity: capacity.max(1) }
    }

    /// Records `nonce` (32 hex digits, as [`nonce`] makes them); refuses one seen before, one of
    /// another form, and any when the cache is full.
    pub fn admit(&self, nonce: &str) -> Result<(), Rejection> {
        self.admit_at(nonce, Instant::now())
    }

    fn admit_at(&self, nonce: &str, now: Instant) -> Result<(), Rejection> {
        let nonce = parse_nonce(nonce).ok_or(Rejection::Unauthenticated)?;
        let mut seen = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        while seen.order.front().is_some_and(|(until, _)| *until <= now) {
            if let Some((_, old)) = seen.order.pop_front() {
                seen.nonces.remove(&old);
            }
        }
        if seen.nonces.contains(&nonce) {
            return Err(Rejection::Replayed);
        }
        if seen.nonces.len() >= self.capacity {
            return Err(Rejection::ReplayCacheFull);
        }
        seen.nonces.insert(nonce);
        seen.order.push_back((now + self.keep, nonce));
        Ok(())
    }
}

/// How this host authenticates to the NATS server (`--nats-credentials`). Its `Debug` never
/// shows the secrets.
pub enum NatsCredentials {
    /// A `.creds` file: a user JWT and its nkey seed.
    Creds(String),
    UserPassword {
        user: String,
        password: String,
    },
    Token(String),
    /// An nkey seed (`SU…`).
    Nkey(String),
}

impl fmt::Debug for NatsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            NatsCredentials::Creds(_) => "creds",
            NatsCredentials::UserPassword { .. } => "user/password",
            NatsCredentials::Token(_) => "token",
            NatsCredentials::Nkey(_) => "nkey",
        };
        write!(f, "NatsCredentials({kind}, <redacted>)")
    }
}

impl NatsCredentials {
    /// Reads `--nats-credentials` (the token file's checks).
    pub fn load(path: &Path, allow_shared: bool) -> Result<Self, AuthError> {
        let raw = security::read_secret_file(CREDENTIALS_FLAG, path, allow_shared, MAX_CREDENTIALS_FILE_BYTES)?;
        let text = String::from_utf8(raw)
            .map_err(|_| AuthError::Credentials { path: path.into(), reason: "not UTF-8 text".into() })?;
        let creds = Self::parse(&text).map_err(|reason| AuthError::Credentials { path: path.into(), reason })?;
        if let NatsCredentials::Creds(c) = &creds {
            // Parsed now, so a broken file stops the start instead of every reconnect.
            async_nats::ConnectOptions::new()
                .credentials(c)
                .map_err(|source| AuthError::Creds { path: path.into(), source })?;
        }
        Ok(creds)
    }

    /// A `.creds` file, or `key=value` lines (`#` comments): `user` and `password`, or `token`, or
    /// `nkey` (a seed).
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.contains("-----BEGIN NATS USER JWT-----") {
            return Ok(NatsCredentials::Creds(text.to_owned()));
        }
        let (mut user, mut password, mut token, mut nkey) = (None, None, None, None);
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let Some((key, value)) = line.split_once('=') else {
                return Err("expected `key=value` lines (user, password, token or nkey) or a .creds file".into());
            };
            let slot = match key.trim() {
                "user" => &mut user,
                "password" => &mut password,
                "token" => &mut token,
                "nkey" => &mut nkey,
                other => return Err(format!("unknown key `{other}` (expected user, password, token or nkey)")),
            };
            if slot.replace(value.trim().to_owned()).is_some() {
                return Err(format!("`{}` is given twice", key.trim()));
            }
        }
        let empty = |v: &Option<String>| v.as_deref().is_some_and(str::is_empty);
        if empty(&user) || empty(&password) || empty(&token) || empty(&nkey) {
            return Err("a value is empty".into());
        }
        match (user, password, token, nkey) {
            (Some(user), Some(password), None, None) => Ok(NatsCredentials::UserPassword { user, password }),
            (None, None, Some(token), None) => Ok(NatsCredentials::Token(token)),
            (None, None, None, Some(seed)) => Ok(NatsCredentials::Nkey(seed)),
            (None, None, None, None) => Err("no credentials in it".into()),
            _ => Err("give either `user` and `password`, or `token`, or `nkey`".into()),
        }
    }

    /// Sets these credentials on the connection's options.
    pub fn apply(&self, options: async_nats::ConnectOptions) -> std::io::Result<async_nats::ConnectOptions> {
        Ok(match self {
            NatsCredentials::Creds(c) => options.credentials(c)?,
            NatsCredentials::UserPassword { user, password } => {
                options.user_and_password(user.clone(), password.clone())
            }
            NatsCredentials::Token(t) => options.token(t.clone()),
            NatsCredentials::Nkey(seed) => options.nkey(seed.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_bind_every_field_and_the_purpose() {
        let keys = ClusterKeys::from_secret(&[7; 32]);
        let fields: [&[u8]; 3] = [b"POST", b"/v1/rooms", b"body"];
        let mac = keys.sign(Purpose::Request, &fields);
        assert!(keys.verify(Purpose::Request, &fields, &mac));
        // Another purpose, another secret, moved bytes between fields, a changed field: refused.
        assert!(!keys.verify(Purpose::Answer, &fields, &mac));
        assert!(!ClusterKeys::from_secret(&[8; 32]).verify(Purpose::Request, &fields, &mac));
        assert!(!keys.verify(Purpose::Request, &[b"POST/", b"v1/rooms", b"body"], &mac));
        assert!(!keys.verify(Purpose::Request, &[b"POST", b"/v1/rooms", b"bodz"], &mac));
        // Garbage and truncated MACs.
        assert!(!keys.verify(Purpose::Request, &fields, "zz"));
        assert!(!keys.verify(Purpose::Request, &fields, &mac[..62]));
        assert!(!keys.verify(Purpose::Request, &fields, ""));
        assert_ne!(optional(None), optional(Some("")));
    }

    #[test]
    fn the_replay_cache_refuses_a_nonce_twice_and_forgets_it_after_twice_the_window() {
        let cache = ReplayCache::new(Duration::from_secs(30), 2);
        let (a, b, c) = (nonce(), nonce(), nonce());
        assert_eq!(a.len(), 32);
        let t0 = Instant::now();
        assert_eq!(cache.admit_at(&a, t0), Ok(()));
        assert_eq!(cache.admit_at(&a, t0 + Duration::from_secs(59)), Err(Rejection::Replayed));
        assert_eq!(cache.admit_at(&a.to_uppercase(), t0), Err(Rejection::Replayed), "the same 128 bits");
        assert_eq!(cache.admit_at(&b, t0), Ok(()));
        // Full of nonces still in their window: refused, not unchecked.
        assert_eq!(cache.admit_at(&c, t0), Err(Rejection::ReplayCacheFull));
        // Both forgotten after 60 s: room again, and `a` is new (its request is stale by now).
        assert_eq!(cache.admit_at(&c, t0 + Duration::from_secs(60)), Ok(()));
        assert_eq!(cache.admit_at(&a, t0 + Duration::from_secs(60)), Ok(()));
        // Not a nonce of ours.
        assert_eq!(cache.admit_at("abc", t0), Err(Rejection::Unauthenticated));
        assert_eq!(cache.admit_at(&"+".repeat(32), t0), Err(Rejection::Unauthenticated));
    }

    #[test]
    fn timestamps_are_fresh_within_the_skew_either_way() {
        let skew = Duration::from_secs(30);
        let now = now_ms();
        assert!(fresh(now, skew));
        assert!(fresh(now - 29_000, skew) && fresh(now + 29_000, skew));
        assert!(!fresh(now - 31_000, skew) && !fresh(now + 31_000, skew));
        assert!(!fresh(0, skew) && !fresh(u64::MAX, skew));
    }

    #[test]
    fn credentials_files_parse() {
        let up = NatsCredentials::parse("# hosts\nuser = ensemble\npassword=s3cret\n").unwrap();
        assert!(
            matches!(&up, NatsCredentials::UserPassword { user, password } if user == "ensemble" && password == "s3cret")
        );
        assert!(!format!("{up:?}").contains("s3cret"));
        assert!(matches!(NatsCredentials::parse("token=abc").unwrap(), NatsCredentials::Token(t) if t == "abc"));
        assert!(matches!(NatsCredentials::parse("nkey=SUAB").unwrap(), NatsCredentials::Nkey(s) if s == "SUAB"));
        let creds = "-----BEGIN NATS USER JWT-----\nx\n------END NATS USER JWT------\n";
        assert!(matches!(NatsCredentials::parse(creds).unwrap(), NatsCredentials::Creds(_)));
        for bad in
            ["", "# nothing", "user=a", "password=b", "user=a\npassword=b\ntoken=c", "token=", "token=a\ntoken=b"]
        {
            assert!(NatsCredentials::parse(bad).is_err(), "{bad:?}");
        }
        assert!(NatsCredentials::parse("pass=x").unwrap_err().contains("unknown key `pass`"));
        assert!(NatsCredentials::parse("just a token").is_err());
    }

    #[test]
    fn secret_files_are_checked_like_the_token_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("secret");
        std::fs::write(&f, "  short\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(ClusterKeys::load(&f, false), Err(AuthError::ShortSecret { len: 5, .. })));
        std::fs::write(&f, format!("{}\n", "k".repeat(32))).unwrap();
        assert!(ClusterKeys::load(&f, false).is_ok());
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        let err = ClusterKeys::load(&f, false).unwrap_err().to_string();
        assert!(err.contains("--cluster-secret-file") && err.contains("chmod 600"), "{err}");
        assert!(ClusterKeys::load(&f, true).is_ok());
        assert!(ClusterKeys::load(Path::new("rel/secret"), true).unwrap_err().to_string().contains("absolute"));
        let err = NatsCredentials::load(Path::new("/dev/zero"), true).unwrap_err().to_string();
        assert!(err.contains("--nats-credentials") && err.contains("not a regular file"), "{err}");
        std::fs::write(&f, "-----BEGIN NATS USER JWT-----\nnot a jwt\n").unwrap();
        assert!(NatsCredentials::load(&f, true).is_err());
    }
}
