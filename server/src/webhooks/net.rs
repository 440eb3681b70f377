//! Where a webhook may be delivered: http(s) URLs whose addresses are public, unless
//! `--webhook-allow-private`. Host names are checked by the client's resolver at every
//! connection (a name that later resolves to 127.0.0.1 is refused then, not only when the
//! webhook was made); IP literals, which reach no resolver, are checked before sending.

use std::net::{IpAddr, SocketAddr};

use reqwest::Url;
// The `url` crate's, as reqwest's `Url::host` gives it.
type UrlHost<'a> = url::Host<&'a str>;
use hyper_util::client::legacy::connect::dns::Name;

/// Why an address is not public, if it is not.
pub fn private_kind(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if a == 100 && (64..128).contains(&b) {
                Some("shared (CGNAT)")
            } else if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || a == 0 || a >= 240 {
                Some("reserved")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() || v6.is_multicast() {
                Some("reserved")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if first & 0xfe00 == 0xfc00 {
                Some("private (unique local)")
            } else {
                None
            }
        }
    }
}

/// Checks a webhook URL as given (scheme, host, an IP literal's address).
pub fn check_url(url: &str, allow_private: bool) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("the URL's scheme is {}; http or https is needed", parsed.scheme()));
    }
    let Some(host) = parsed.host() else { return Err("the URL has no host".into()) };
    if allow_private {
        return Ok(parsed);
    }
    let ip = match host {
        UrlHost::Ipv4(v4) => Some(IpAddr::V4(v4)),
        UrlHost::Ipv6(v6) => Some(IpAddr::V6(v6)),
        UrlHost::Domain(d) if d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost") => {
            return Err(refused_text(d, "loopback"));
        }
        UrlHost::Domain(_) => None,
    };
    if let Some(ip) = ip
        && let Some(kind) = private_kind(ip)
    {
        return Err(refused_text(&ip.to_string(), kind));
    }
    Ok(parsed)
}

fn refused_text(what: &str, kind: &str) -> String {
    format!(
        "{what} is a {kind} address; webhooks go to public addresses unless the server runs with --webhook-allow-private"
    )
}

/// The resolver of webhook connections: the system's, dropping non-public addresses (and failing
/// when none is left) unless private ones are allowed.
#[derive(Clone, Copy)]
pub struct Resolver {
    pub allow_private: bool,
}

impl tower::Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow_private = self.allow_private;
        Box::pin(async move { resolve(name.as_str(), allow_private).await.map(Vec::into_iter) })
    }
}

/// `host`'s addresses that a webhook may connect to.
pub async fn resolve(host: &str, allow_private: bool) -> std::io::Result<Vec<SocketAddr>> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
    if allow_private {
        return Ok(found);
    }
    let mut refused = None;
    let public: Vec<SocketAddr> = found
        .into_iter()
        .filter(|a| match private_kind(a.ip()) {
            Some(kind) => {
                refused.get_or_insert((a.ip(), kind));
                false
            }
            None => true,
        })
        .collect();
    if public.is_empty() {
        let why = match refused {
            Some((ip, kind)) => refused_text(&format!("{host} resolves to {ip}, which"), kind),
            None => format!("{host} resolves to no address"),
        };
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    }
    Ok(public)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_named() {
        for (ip, kind) in [
            ("127.0.0.1", Some("loopback")),
            ("10.1.2.3", Some("private")),
            ("192.168.0.1", Some("private")),
            ("172.16.0.1", Some("private")),
            ("169.254.169.254", Some("link-local")),
            ("100.64.0.1", Some("shared (CGNAT)")),
            ("0.0.0.0", Some("reserved")),
            ("::1", Some("loopback")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("fe80::1", Some("link-local")),
            ("fd00::1", Some("private (unique local)")),
            ("93.184.216.34", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(private_kind(ip.parse().unwrap()), kind, "{ip}");
        }
    }

    #[tokio::test]
    async fn the_resolver_drops_private_addresses() {
        let err = resolve("localhost", false).await.unwrap_err();
        // 127.0.0.1 or ::1, as the host's resolver orders them.
        assert!(err.to_string().contains(", which is a loopback address"), "{err}");
        assert!(!resolve("localhost", true).await.unwrap().is_empty());
    }

    #[test]
    fn urls_are_checked() {
        assert!(check_url("https://hooks.example.com/x", false).is_ok());
        assert!(check_url("ftp://example.com/", false).unwrap_err().contains("scheme"));
        assert!(check_url("http://127.0.0.1:9/", false).unwrap_err().contains("loopback"));
        assert!(check_url("http://[::1]/", false).unwrap_err().contains("loopback"));
        assert!(check_url("http://localhost:8080/", false).unwrap_err().contains("--webhook-allow-private"));
        assert!(check_url("http://169.254.169.254/latest", false).unwrap_err().contains("link-local"));
        assert!(check_url("http://127.0.0.1:9/", true).is_ok());
        assert!(check_url("not a url", false).is_err());
    }
}
