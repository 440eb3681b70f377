//! Access control at the HTTP edge: the bearer token, the Host allowlist (DNS rebinding) and the
//! Origin policy (cross-site WebSocket hijacking and CSRF). See `SECURITY.md` for the threat model.
//!
//! Order of checks for every request except `/healthz` and `/readyz`: Host, then Origin, then the
//! token. The first two need no secret, so a rebinding or cross-site page learns nothing about the
//! token from timing or status.

mod policy;

use std::fmt;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::access::Principal;
use crate::access::audit::{Attempt, AuditLog};
use crate::access::table::{RouteTable, Rule};
use crate::access::tokens::{MAX_TOKEN_FILE_BYTES, Registry, Verdict};
use crate::error::{ApiError, ErrorCode};

use policy::single;
pub use policy::{
    AccessPolicy, HostName, Origin, Refusal, RefusalLog, TargetAuthority, parse_host_header, parse_origin,
    target_authority,
};

/// Shortest token accepted (bytes, after trimming).
pub const MIN_TOKEN_BYTES: usize = 32;
/// The `Sec-WebSocket-Protocol` entry prefix that carries the token from a browser.
pub const BEARER_PROTOCOL_PREFIX: &str = "ensemble.bearer.";
/// The subprotocol a browser may offer beside the bearer entry; chosen in preference to it so
/// the token is not echoed in the handshake response.
pub const APP_PROTOCOL: &str = "ensemble.v1";
/// The generated token's file name inside the data dir.
pub const TOKEN_FILE: &str = "token";
/// Query parameters that look like a token. Refused outright, so a token never travels in a URL
/// (and so never reaches a proxy's or browser's history).
const TOKEN_QUERY_KEYS: [&str; 4] = ["token", "access_token", "bearer", "auth"];

#[derive(Debug, thiserror::Error)]
pub enum SecurityError {
    #[error("--token-file must be an absolute path, got {0}")]
    RelativeTokenFile(PathBuf),
    #[error("cannot read the token file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("the token file {0} is empty")]
    EmptyToken(PathBuf),
    #[error("the token in {path} is {len} bytes; at least {MIN_TOKEN_BYTES} are required")]
    ShortToken { path: PathBuf, len: usize },
    #[error(
        "the token in {0} may only contain the characters A-Z a-z 0-9 and !#$%&'*+-.^_`|~ (it must fit a \
         Sec-WebSocket-Protocol entry)"
    )]
    TokenCharacters(PathBuf),
    #[error(
        "the token file {path} is accessible by other users (mode {mode:o}); run `chmod 600 {path}`, or pass \
         --allow-shared-token-file (ENSEMBLE_ALLOW_SHARED_TOKEN_FILE=true) if it is a secret mount that cannot be 0600"
    )]
    TokenPermissions { path: PathBuf, mode: u32 },
    #[error("the data dir's token file {path} is accessible by other users (mode {mode:o}); run `chmod 600 {path}`")]
    DataDirTokenPermissions { path: PathBuf, mode: u32 },
    #[error("the token file {path} is not a regular file (it is {kind}); give a file holding the token")]
    NotARegularFile { path: PathBuf, kind: &'static str },
    #[error("the token file {path} is longer than {MAX_TOKEN_FILE_BYTES} bytes; it must hold just the token")]
    TokenFileTooLong { path: PathBuf },
    #[error("cannot create the token file {path}: {source}")]
    Create { path: PathBuf, source: std::io::Error },
    #[error("cannot generate a token: {0}")]
    Random(String),
    #[error(
        "refusing to listen on {0} without --token-file: a non-loopback address is reachable by other \
         hosts, so give it a token you chose (`--token-file /abs/path`, at least {MIN_TOKEN_BYTES} bytes)"
    )]
    NonLoopbackWithoutTokenFile(SocketAddr),
    #[error("{flag} must be an absolute path, got {path}")]
    RelativeSecretFile { flag: &'static str, path: PathBuf },
    #[error("cannot read the {flag} file {path}: {source}")]
    SecretRead { flag: &'static str, path: PathBuf, source: std::io::Error },
    #[error(
        "the {flag} file {path} is accessible by other users (mode {mode:o}); run `chmod 600 {path}`, or pass \
         --allow-shared-token-file (ENSEMBLE_ALLOW_SHARED_TOKEN_FILE=true) if it is a secret mount that cannot be 0600"
    )]
    SecretPermissions { flag: &'static str, path: PathBuf, mode: u32 },
    #[error("the {flag} file {path} is not a regular file (it is {kind})")]
    SecretNotARegularFile { flag: &'static str, path: PathBuf, kind: &'static str },
    #[error("the {flag} file {path} is longer than {max} bytes")]
    SecretFileTooLong { flag: &'static str, path: PathBuf, max: u64 },
    #[error("invalid --allowed-hosts entry `{0}`: expected a host name or IP address (or `*`)")]
    BadAllowedHost(String),
    #[error("invalid --trusted-origins entry `{0}`: expected scheme://host[:port] with http or https")]
    BadTrustedOrigin(String),
}

/// The bearer token. Its `Debug` and `Display` never show it.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
    secret: String,
}

impl Token {
    fn new(secret: String) -> Self {
        Self { digest: Sha256::digest(secret.as_bytes()).into(), secret }
    }

    /// The secret itself, for the one start-up line that prints it.
    pub fn expose(&self) -> &str {
        &self.secret
    }

    /// Compares in constant time. Both sides are hashed first, so neither the content nor the
    /// length of the real token leaks through timing.
    pub fn matches(&self, candidate: &str) -> bool {
        let d: [u8; 32] = Sha256::digest(candidate.as_bytes()).into();
        self.matches_digest(&d)
    }

    /// [`Token::matches`] with the candidate's SHA-256 already made.
    pub fn matches_digest(&self, digest: &[u8; 32]) -> bool {
        bool::from(self.digest.ct_eq(digest))
    }

    /// The SHA-256 of the secret (what the token registry compares with).
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Where the token came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// `--token-file`.
    File(PathBuf),
    /// Generated at first start into the data dir.
    Generated(PathBuf),
    /// Read back from the data dir.
    DataDir(PathBuf),
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// What kind of file this is, for a refusal's message.
fn file_kind(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads a token file: a regular file (symlinks followed: the target counts), private unless
/// `allow_shared`, at most [`MAX_TOKEN_FILE_BYTES`], holding one token. The file is opened first
/// (non-blocking, so a FIFO cannot stall the start) and everything is checked on the open file, so
/// what is checked is what is read.
fn read_token(path: &Path, allow_shared: bool, data_dir_token: bool) -> Result<Token, SecurityError> {
    use std::io::Read;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let read_err = |source| SecurityError::Read { path: path.into(), source };
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if !meta.file_type().is_file() {
        return Err(SecurityError::NotARegularFile { path: path.into(), kind: file_kind(meta.file_type()) });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        if data_dir_token {
            return Err(SecurityError::DataDirTokenPermissions { path: path.into(), mode });
        }
        if !allow_shared {
            return Err(SecurityError::TokenPermissions { path: path.into(), mode });
        }
        tracing::info!(path = %path.display(), mode = format!("{mode:o}"),
            "the token file is accessible by other users; allowed by --allow-shared-token-file");
    }
    let mut raw = Vec::new();
    (&mut file).take(MAX_TOKEN_FILE_BYTES + 1).read_to_end(&mut raw).map_err(read_err)?;
    if raw.len() as u64 > MAX_TOKEN_FILE_BYTES {
        return Err(SecurityError::TokenFileTooLong { path: path.into() });
    }
    let raw = String::from_utf8(raw).map_err(|_| SecurityError::TokenCharacters(path.into()))?;
    let t = raw.trim();
    if t.is_empty() {
        return Err(SecurityError::EmptyToken(path.into()));
    }
    if t.len() < MIN_TOKEN_BYTES {
        return Err(SecurityError::ShortToken { path: path.into(), len: t.len() });
    }
    if !t.chars().all(is_tchar) {
        return Err(SecurityError::TokenCharacters(path.into()));
    }
    Ok(Token::new(t.to_owned()))
}

/// Reads a secret file other than the token (`flag` names it in errors) with the token file's
/// checks: an absolute path to a regular file (symlinks followed: the target counts), private
/// unless `allow_shared`, at most `max_bytes`; checked on the open file, so what is checked is
/// what is read.
pub fn read_secret_file(
    flag: &'static str,
    path: &Path,
    allow_shared: bool,
    max_bytes: u64,
) -> Result<Vec<u8>, SecurityError> {
    use std::io::Read;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if !path.is_absolute() {
        return Err(SecurityError::RelativeSecretFile { flag, path: path.into() });
    }
    let read_err = |source| SecurityError::SecretRead { flag, path: path.into(), source };
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if !meta.file_type().is_file() {
        return Err(SecurityError::SecretNotARegularFile {
            flag,
            path: path.into(),
            kind: file_kind(meta.file_type()),
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        if !allow_shared {
            return Err(SecurityError::SecretPermissions { flag, path: path.into(), mode });
        }
        tracing::info!(flag, path = %path.display(), mode = format!("{mode:o}"),
            "the file is accessible by other users; allowed by --allow-shared-token-file");
    }
    let mut raw = Vec::new();
    (&mut file).take(max_bytes + 1).read_to_end(&mut raw).map_err(read_err)?;
    if raw.len() as u64 > max_bytes {
        return Err(SecurityError::SecretFileTooLong { flag, path: path.into(), max: max_bytes });
    }
    Ok(raw)
}

/// Loads the token: from `--token-file` if given, else from (or newly into) `DATA_DIR/token`.
/// A token file readable or writable by group or others is refused unless `allow_shared` (secret
/// mounts that cannot be 0600); the data dir's own token must always be private.
/// A generated token is 32 random bytes, hex encoded, in a file created with mode 0600.
pub fn load_token(
    token_file: Option<&Path>,
    allow_shared: bool,
    data_dir: &Path,
) -> Result<(Token, TokenSource), SecurityError> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(p) = token_file {
        if !p.is_absolute() {
            return Err(SecurityError::RelativeTokenFile(p.into()));
        }
        let token = read_token(p, allow_shared, false)?;
        return Ok((token, TokenSource::File(p.into())));
    }
    let path = data_dir.join(TOKEN_FILE);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => Ok((read_token(&path, false, true)?, TokenSource::DataDir(path))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| SecurityError::Random(e.to_string()))?;
            let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            // create_new: never follow or overwrite something an attacker placed there.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(|source| SecurityError::Create { path: path.clone(), source })?;
            f.write_all(format!("{secret}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(|source| SecurityError::Create { path: path.clone(), source })?;
            Ok((Token::new(secret), TokenSource::Generated(path)))
        }
        Err(source) => Err(SecurityError::Read { path, source }),
    }
}

/// A non-loopback listener needs a token the operator chose (and therefore knows to protect).
pub fn check_listen(listen: SocketAddr, token_file: Option<&Path>) -> Result<(), SecurityError> {
    if !listen.ip().is_loopback() && token_file.is_none() {
        return Err(SecurityError::NonLoopbackWithoutTokenFile(listen));
    }
    Ok(())
}

/// How a request proved it holds the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authenticated {
    Header,
    /// Through a `Sec-WebSocket-Protocol` entry (only on the room WebSocket's upgrade); the
    /// handshake answers `ensemble.v1`, never the entry.
    Subprotocol,
}

/// Is this a WebSocket upgrade request (RFC 6455 §4.1: `GET`, `Upgrade: websocket`, `Connection:
/// upgrade`)?
pub fn is_websocket_upgrade(method: &Method, headers: &HeaderMap) -> bool {
    let has_token = |name: header::HeaderName, token: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    method == Method::GET && has_token(header::UPGRADE, "websocket") && has_token(header::CONNECTION, "upgrade")
}

/// The entries of every `Sec-WebSocket-Protocol` header.
fn subprotocols(headers: &HeaderMap) -> Vec<&str> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect()
}

/// A bearer entry offered without `ensemble.v1`: the server could only complete such a handshake
/// by echoing the token, so it is refused.
pub fn bearer_without_app_protocol(headers: &HeaderMap) -> bool {
    let entries = subprotocols(headers);
    entries.iter().any(|e| e.starts_with(BEARER_PROTOCOL_PREFIX)) && !entries.contains(&APP_PROTOCOL)
}

/// Finds and checks the token file's token in a request (see [`presented`]).
pub fn authenticate(token: &Token, headers: &HeaderMap, websocket_upgrade: bool) -> Option<Authenticated> {
    let (secret, how) = presented(headers, websocket_upgrade)?;
    token.matches(secret).then_some(how)
}

/// The token a request presents: `Authorization: Bearer …`, or — only when `websocket_upgrade`
/// (the room WebSocket's upgrade; the caller decides) — a `Sec-WebSocket-Protocol` entry
/// `ensemble.bearer.…`. Not checked yet.
pub fn presented(headers: &HeaderMap, websocket_upgrade: bool) -> Option<(&str, Authenticated)> {
    let auth = single(headers, header::AUTHORIZATION).ok()?;
    if let Some(value) = auth {
        let (scheme, credentials) = value.split_once(' ')?;
        // RFC 7235: the scheme is case-insensitive.
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let credentials = credentials.trim();
        return (!credentials.is_empty()).then_some((credentials, Authenticated::Header));
    }
    if !websocket_upgrade {
        return None;
    }
    let entries = subprotocols(headers);
    let mut bearer = entries.iter().filter_map(|e| e.strip_prefix(BEARER_PROTOCOL_PREFIX));
    let candidate = bearer.next()?;
    if bearer.next().is_some() || candidate.is_empty() {
        return None;
    }
    Some((candidate, Authenticated::Subprotocol))
}

/// The parameter names of a query string as a form parser reads them (axum's `Query` uses the same
/// `application/x-www-form-urlencoded` rules): `&`-separated pairs, the name before the first `=`,
/// `+` as a space, percent escapes decoded (invalid ones kept as they are, invalid UTF-8 replaced).
pub fn query_names(query: &str) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
    form_urlencoded::parse(query.as_bytes()).map(|(name, _)| name)
}

/// Does a query string carry a parameter named like a token (`token`, `access_token`, `bearer`,
/// `auth`, in any case, however percent-encoded)?
pub fn query_carries_token(query: Option<&str>) -> bool {
    query.is_some_and(|q| query_names(q).any(|name| TOKEN_QUERY_KEYS.iter().any(|k| name.eq_ignore_ascii_case(k))))
}

/// Marks a request another host of the cluster forwarded (over NATS, after its own edge checked
/// Host, Origin and token). Only in-process code can set a request extension, so a client cannot
/// claim it; `cluster::forward` sets it only on a message whose MAC (keyed by the cluster secret),
/// timestamp and nonce it verified.
#[derive(Clone, Debug)]
pub struct Forwarded {
    /// The host that received the request.
    pub from: String,
    /// The caller's token there (checked again here: revoked, expired, role and rooms).
    pub token_id: String,
}

/// What the guard checks with besides the [`Access`] policy.
pub struct Gate<'a> {
    pub access: &'a Access,
    pub tokens: &'a Registry,
    pub audit: &'a AuditLog,
    /// What each route needs (its declaration).
    pub routes: &'a RouteTable,
}

/// The route template and the room and session a request names.
struct Target {
    route: Option<String>,
    room: Option<String>,
    session: Option<String>,
}

impl Target {
    fn of(req: &Request) -> Target {
        let route = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned());
        let (mut room, mut session) = (None, None);
        // Every route that names them names them as its 3rd and 5th segments
        // (`/v1/rooms/{roomId}/sessions/{sessionId}/…`).
        if let Some(route) = route.as_deref().and_then(|r| r.strip_prefix("/v1/rooms/{roomId}")) {
            let mut parts = req.uri().path().split('/').skip(3);
            room = parts.next().and_then(percent_decode);
            if route.starts_with("/sessions/{sessionId}") {
                session = parts.nth(1).and_then(percent_decode);
            }
        }
        Target { route, room, session }
    }
}

/// Percent-decodes a path segment (None if it is malformed: the handler then answers it).
pub fn percent_decode(segment: &str) -> Option<String> {
    if !segment.contains('%') {
        return Some(segment.to_owned());
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Role and room scope, then `next` acting for the principal.
async fn authorized<F, Fut>(
    principal: Principal,
    rule: Option<Rule>,
    target: &Target,
    mut req: Request,
    next: F,
) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    if let Some(route) = &target.route {
        match rule {
            Some(Rule::Token(need)) => {
                if let Err(e) = principal.check(need, target.room.as_deref()) {
                    return e.into_response();
                }
            }
            Some(Rule::Public | Rule::Probe) => {}
            None => {
                // Fail closed: a route nobody declared a role for is nobody's (a test keeps it empty).
                tracing::error!(route, method = %req.method(), "a route without a declared role was refused");
                return ApiError::new(StatusCode::FORBIDDEN, "forbidden", "this route has no declared role")
                    .into_response();
            }
        }
    }
    let actor = principal.actor.clone();
    req.extensions_mut().insert(principal);
    ensemble_runtime::actor::acting(Some(actor), next(req)).await
}

/// The guard: Host, Origin, token, role and room (see the module documentation), around `next`
/// (the server's edge middleware runs it; see `router::edge`). Mutating requests are audited.
pub async fn guarded<F, Fut>(gate: Gate<'_>, req: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let access = gate.access;
    let matched = req.extensions().get::<MatchedPath>().map(|p| p.as_str());
    let declared = matched.and_then(|route| gate.routes.lookup(req.method(), route));
    let rule = declared.map(|(rule, _)| rule);
    // Probes from orchestrators send whatever Host they like, and answer nothing worth stealing.
    if rule == Some(Rule::Probe) {
        return next(req).await;
    }
    let subprotocol_route = declared.is_some_and(|(_, subprotocol)| subprotocol);
    if let Some(f) = req.extensions().get::<Forwarded>() {
        // The receiving host checked Host, Origin and the secret; the identity is checked again.
        let target = Target::of(&req);
        return match gate.tokens.principal_forwarded(&f.token_id).await {
            Some(p) => authorized(p, rule, &target, req, next).await,
            None => unauthorized(),
        };
    }
    let refusal = access.policy.check(req.headers()).and_then(|()| {
        let host = single(req.headers(), header::HOST).ok().flatten();
        let uri = req.uri();
        if access.policy.target_allowed(uri.scheme_str(), uri.authority().map(|a| a.as_str()), host) {
            Ok(())
        } else {
            Err(Refusal::Target)
        }
    });
    match refusal {
        Ok(()) => {}
        Err(Refusal::Host) => {
            access.refusals_log.warn(Refusal::Host);
            return ApiError::new(StatusCode::FORBIDDEN, "host_not_allowed", "this Host is not allowed")
                .into_response();
        }
        Err(Refusal::Target) => {
            access.refusals_log.warn(Refusal::Target);
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "host_not_allowed",
                "the request target's authority is not allowed or does not match the Host header",
            )
            .into_response();
        }
        Err(Refusal::Origin) => {
            access.refusals_log.warn(Refusal::Origin);
            return ApiError::new(StatusCode::FORBIDDEN, "origin_not_allowed", "this Origin is not allowed")
                .into_response();
        }
    }
    if query_carries_token(req.uri().query()) {
        return ApiError::bad_request(
            "token_in_query",
            "tokens are not accepted in the URL; use `Authorization: Bearer …` or the WebSocket subprotocol \
             `ensemble.bearer.…`",
        )
        .into_response();
    }
    // The subprotocol token is for browsers opening the room WebSocket, and only there.
    let room_ws = subprotocol_route && is_websocket_upgrade(req.method(), req.headers());
    if room_ws && bearer_without_app_protocol(req.headers()) {
        return ApiError::bad_request(
            "app_protocol_required",
            "offer the subprotocol `ensemble.v1` beside `ensemble.bearer.…`; the server answers `ensemble.v1` \
             and never echoes the token",
        )
        .into_response();
    }
    // A trusted origin (only those: the server's own needs no CORS) may call the API from a
    // browser, which first sends a preflight that carries no token.
    let cors = req
        .headers()
        .get(header::ORIGIN)
        .filter(|o| o.to_str().is_ok_and(|o| access.policy.is_trusted_origin(o)))
        .cloned();
    if let Some(origin) = &cors
        && req.method() == Method::OPTIONS
        && req.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    {
        return (
            StatusCode::NO_CONTENT,
            [
                (header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone()),
                (header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE")),
                (header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type")),
                (header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600")),
                (header::VARY, HeaderValue::from_static("Origin")),
            ],
        )
            .into_response();
    }
    let mut res = if rule == Some(Rule::Public) {
        next(req).await
    } else {
        let target = Target::of(&req);
        let method = req.method().clone();
        let verdict = match presented(req.headers(), room_ws) {
            Some((secret, how)) => (gate.tokens.authenticate(secret).await, Some(how)),
            None => (Verdict::Unknown, None),
        };
        let (res, actor) = match verdict {
            (Verdict::Valid(p), Some(how)) => {
                let actor = p.actor.clone();
                let mut req = req;
                req.extensions_mut().insert(how);
                (authorized(p, rule, &target, req, next).await, Some(actor))
            }
            // A revoked or expired token is refused like an unknown one, but its attempts are its.
            (Verdict::Ended(actor), _) => (unauthorized_because("this token was revoked or has expired"), Some(actor)),
            _ => (unauthorized(), None),
        };
        if !method.is_safe() {
            let code = res.extensions().get::<ErrorCode>().map(|c| c.0.clone());
            let Target { route, room, session } = target;
            gate.audit.request(Attempt { actor, method, route, room, session }, res.status().as_u16(), code).await;
        }
        res
    };
    if let Some(origin) = cors {
        let h = res.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("location, retry-after, ensemble-wait"),
        );
        h.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    res
}

fn unauthorized() -> Response {
    unauthorized_because("a valid bearer token is required")
}

/// 401 `unauthorized`, saying why, with the `WWW-Authenticate` challenge.
pub fn unauthorized_because(why: &str) -> Response {
    let mut res = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", why).into_response();
    res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"ensemble\""));
    res
}

/// Everything the guard needs.
#[derive(Debug)]
pub struct Access {
    pub token: Token,
    pub policy: AccessPolicy,
    /// The warnings about requests refused for their Host or Origin, rate-limited.
    pub refusals_log: RefusalLog,
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
