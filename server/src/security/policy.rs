//! The Host allowlist (DNS rebinding) and the Origin policy (cross-site WebSocket hijacking and
//! CSRF): the checks the guard makes before it looks for a token. They need no secret, so a
//! rebinding or cross-site page learns nothing about the token from timing or status.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{HeaderMap, header};

use super::SecurityError;
use crate::listener::RateLimited;

/// A host as the policy compares it: an IP address, or a lower-case name without a trailing dot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HostName {
    Ip(IpAddr),
    Name(String),
}

impl HostName {
    fn parse(s: &str) -> Option<HostName> {
        if let Some(inner) = s.strip_prefix('[') {
            let inner = inner.strip_suffix(']')?;
            return inner.parse::<Ipv6Addr>().ok().map(|ip| HostName::Ip(IpAddr::V6(ip)));
        }
        if let Ok(ip) = s.parse::<Ipv4Addr>() {
            return Some(HostName::Ip(IpAddr::V4(ip)));
        }
        // One trailing dot is the same name in absolute form; anything else must be a plain DNS name.
        let name = s.strip_suffix('.').unwrap_or(s);
        let ok = !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|l| {
                !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        // A name made only of digits and dots (`127.1`, `2130706433`) is an IP in some resolvers'
        // eyes; it is neither a name we could allow nor an address we parse, so refuse it.
        if !ok || name.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        Some(HostName::Name(name.to_ascii_lowercase()))
    }

    fn is_loopback(&self) -> bool {
        match self {
            HostName::Ip(IpAddr::V4(ip)) => ip.is_loopback(),
            HostName::Ip(IpAddr::V6(ip)) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
            HostName::Name(n) => n == "localhost",
        }
    }
}

/// Parses a `Host` header value: `host[:port]`, IPv6 in brackets. Userinfo, paths, spaces and
/// anything non-ASCII are refused.
pub fn parse_host_header(value: &str) -> Option<(HostName, Option<u16>)> {
    if value.is_empty()
        || !value.is_ascii()
        || value.bytes().any(|b| b.is_ascii_whitespace() || b"@/\\?#%".contains(&b))
    {
        return None;
    }
    let (host, port) = if value.starts_with('[') {
        let end = value.find(']')?;
        let (h, rest) = value.split_at(end + 1);
        match rest {
            "" => (h, None),
            _ => (h, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match value.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (value, None),
        }
    };
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((HostName::parse(host)?, port))
}

/// An origin: scheme, host and port (the default port filled in), compared exactly.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    pub scheme: &'static str,
    pub host: HostName,
    pub port: u16,
}

/// Parses an `Origin` header value (`scheme://host[:port]`, nothing after). `null`, other schemes
/// (`ws:`, `file:`, …), paths and userinfo are refused.
pub fn parse_origin(value: &str) -> Option<Origin> {
    let (scheme, rest) = value.split_once("://")?;
    let (scheme, default_port) = if scheme.eq_ignore_ascii_case("http") {
        ("http", 80)
    } else if scheme.eq_ignore_ascii_case("https") {
        ("https", 443)
    } else {
        return None;
    };
    let (host, port) = parse_host_header(rest)?;
    Some(Origin { scheme, host, port: port.unwrap_or(default_port) })
}

/// Why a request was refused before authentication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    Host,
    /// An absolute-form request target whose authority is not allowed or differs from `Host`.
    Target,
    Origin,
}

/// The warnings about refused Hosts, Origins and request targets: anyone who reaches the port can
/// send these, so each kind is logged at most once per interval (`--refusal-log-interval-secs`),
/// and the line says how many were held back since the one before.
#[derive(Debug)]
pub struct RefusalLog {
    kinds: Mutex<[RateLimited; 3]>,
}

impl RefusalLog {
    pub fn new(every: Duration) -> Self {
        Self { kinds: Mutex::new(std::array::from_fn(|_| RateLimited::new(every))) }
    }

    /// Logs a refusal of this kind, unless one was logged within the interval (then counts it).
    pub fn warn(&self, refusal: Refusal) {
        let i = match refusal {
            Refusal::Host => 0,
            Refusal::Target => 1,
            Refusal::Origin => 2,
        };
        let now = tokio::time::Instant::now();
        let Some(suppressed) = self.kinds.lock().unwrap_or_else(|e| e.into_inner())[i].check(now) else {
            metrics::counter!("ensemble_refusal_log_suppressed_total").increment(1);
            return;
        };
        match refusal {
            Refusal::Host => tracing::warn!(
                suppressed,
                "refused a request with a Host that is not allowed (DNS rebinding protection)"
            ),
            Refusal::Target => {
                tracing::warn!(suppressed, "refused an absolute-form request target naming another authority")
            }
            Refusal::Origin => tracing::warn!(suppressed, "refused a cross-origin request"),
        }
    }
}

/// The Host allowlist and the Origin policy.
#[derive(Clone, Debug)]
pub struct AccessPolicy {
    any_host: bool,
    hosts: HashSet<HostName>,
    origins: HashSet<Origin>,
}

impl AccessPolicy {
    /// Loopback names and IPs always; plus `allowed_hosts` (`*` allows any Host: only sensible
    /// behind a proxy that checks it) and the listen address when it is a specific IP.
    pub fn new(
        listen: SocketAddr,
        allowed_hosts: &[String],
        trusted_origins: &[String],
    ) -> Result<Self, SecurityError> {
        let mut any_host = false;
        let mut hosts = HashSet::new();
        if !listen.ip().is_unspecified() {
            hosts.insert(HostName::Ip(listen.ip()));
        }
        for h in allowed_hosts.iter().map(|h| h.trim()).filter(|h| !h.is_empty()) {
            if h == "*" {
                any_host = true;
                continue;
            }
            match parse_host_header(h) {
                Some((name, None)) => {
                    hosts.insert(name);
                }
                _ => return Err(SecurityError::BadAllowedHost(h.to_owned())),
            }
        }
        let mut origins = HashSet::new();
        for o in trusted_origins.iter().map(|o| o.trim().trim_end_matches('/')).filter(|o| !o.is_empty()) {
            origins.insert(parse_origin(o).ok_or_else(|| SecurityError::BadTrustedOrigin(o.to_owned()))?);
        }
        Ok(Self { any_host, hosts, origins })
    }

    /// Is this `Host` header one we serve? (Against DNS rebinding: a page on `evil.example` that
    /// re-resolves to 127.0.0.1 still sends `Host: evil.example`.)
    pub fn host_allowed(&self, host: Option<&str>) -> bool {
        let Some((name, _)) = host.and_then(parse_host_header) else { return false };
        self.name_allowed(&name)
    }

    fn name_allowed(&self, name: &HostName) -> bool {
        self.any_host || name.is_loopback() || self.hosts.contains(name)
    }

    /// Is a request with this `Origin` (if any) and `Host` allowed? No Origin: a non-browser client.
    /// Same origin (http, same host and port as the Host header), or a configured trusted origin.
    pub fn origin_allowed(&self, origin: Option<&str>, host: Option<&str>) -> bool {
        let Some(origin) = origin else { return true };
        let Some(o) = parse_origin(origin) else { return false };
        if self.origins.contains(&o) {
            return true;
        }
        let Some((host, port)) = host.and_then(parse_host_header) else { return false };
        o.scheme == "http" && o.host == host && o.port == port.unwrap_or(80)
    }

    /// Is this exactly one of the configured trusted origins (those get CORS answers)?
    pub fn is_trusted_origin(&self, origin: &str) -> bool {
        parse_origin(origin).is_some_and(|o| self.origins.contains(&o))
    }

    /// Both checks, on a request's headers.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = single(headers, header::HOST).map_err(|()| Refusal::Host)?;
        if !self.host_allowed(host) {
            return Err(Refusal::Host);
        }
        let origin = single(headers, header::ORIGIN).map_err(|()| Refusal::Origin)?;
        if !self.origin_allowed(origin, host) {
            return Err(Refusal::Origin);
        }
        Ok(())
    }
}

/// The value of a header that must appear at most once (as text).
pub(crate) fn single(headers: &HeaderMap, name: header::HeaderName) -> Result<Option<&str>, ()> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(());
    }
    first.map(|v| v.to_str().map_err(|_| ())).transpose()
}

/// What a request target says about the authority it is meant for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetAuthority {
    /// The usual origin form (`GET /p`): no authority.
    None,
    /// Absolute form (`GET http://host:port/p`): the host and the effective port.
    Named(HostName, u16),
    /// An authority that is not `http`/`https` (authority form, other schemes) or that does not
    /// parse as a `Host` value does.
    Invalid,
}

/// The authority a request target names, parsed as a `Host` header is.
pub fn target_authority(scheme: Option<&str>, authority: Option<&str>) -> TargetAuthority {
    let Some(authority) = authority else { return TargetAuthority::None };
    let default_port = match scheme {
        Some(s) if s.eq_ignore_ascii_case("http") => 80,
        Some(s) if s.eq_ignore_ascii_case("https") => 443,
        _ => return TargetAuthority::Invalid,
    };
    match parse_host_header(authority) {
        Some((host, port)) => TargetAuthority::Named(host, port.unwrap_or(default_port)),
        None => TargetAuthority::Invalid,
    }
}

impl AccessPolicy {
    /// The request target's authority, if it has one (absolute form), is judged as the Host header
    /// is, and must name the same host and port as the Host header (RFC 9112 §3.2.2 lets a server
    /// prefer the target's authority; we accept only requests where both agree).
    pub fn target_allowed(&self, scheme: Option<&str>, authority: Option<&str>, host: Option<&str>) -> bool {
        let (name, port) = match target_authority(scheme, authority) {
            TargetAuthority::None => return true,
            TargetAuthority::Named(name, port) => (name, port),
            TargetAuthority::Invalid => return false,
        };
        let Some((host_name, host_port)) = host.and_then(parse_host_header) else { return false };
        let default_port = if scheme.is_some_and(|s| s.eq_ignore_ascii_case("https")) { 443 } else { 80 };
        self.name_allowed(&name) && name == host_name && port == host_port.unwrap_or(default_port)
    }
}
