//! Where a webhook may be delivered: http(s) URLs whose addresses are public — in no
//! special-purpose range (`super::ranges`) and none of this host's own addresses — unless
//! `--webhook-allow-private`. Host names are checked by the client's resolver at every
//! connection (a name that later resolves to 127.0.0.1 is refused then, not only when the
//! webhook was made); IP literals, which reach no resolver, are checked before sending.
//!
//! What an error says is bounded: the URL as the admin gave it, never what a name resolved to
//! (that would make a webhook a way to read the server's DNS view).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use reqwest::Url;
// The `url` crate's, as reqwest's `Url::host` gives it.
type UrlHost<'a> = url::Host<&'a str>;
use hyper_util::client::legacy::connect::dns::Name;

use super::ranges;

/// The host's own addresses: every address of every interface (and each interface's broadcast
/// address). Read when the server starts and again at every check, so an address that an
/// interface gains later is refused as well; a failed read keeps the last good one.
pub struct OwnAddrs {
    last: Mutex<Arc<[IpAddr]>>,
    /// Fixed addresses (tests), never read from the system.
    fixed: bool,
}

impl OwnAddrs {
    /// Reads the interfaces now.
    pub fn read() -> Self {
        let own = OwnAddrs { last: Mutex::new(Arc::from(Vec::new())), fixed: false };
        own.current();
        own
    }

    /// These addresses, never read again.
    pub fn fixed(addrs: Vec<IpAddr>) -> Self {
        OwnAddrs { last: Mutex::new(Arc::from(addrs)), fixed: true }
    }

    /// The addresses as they are now (getifaddrs is one netlink round trip: cheap next to the
    /// connection it guards).
    pub fn current(&self) -> Arc<[IpAddr]> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if self.fixed {
            return last.clone();
        }
        match if_addrs::get_if_addrs() {
            Ok(interfaces) => {
                let mut addrs: Vec<IpAddr> = Vec::with_capacity(interfaces.len() * 2);
                for i in interfaces {
                    addrs.push(i.ip().to_canonical());
                    if let if_addrs::IfAddr::V4(v4) = &i.addr
                        && let Some(b) = v4.broadcast
                    {
                        addrs.push(IpAddr::V4(b));
                    }
                }
                addrs.sort_unstable();
                addrs.dedup();
                *last = Arc::from(addrs);
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading this host's interface addresses failed; the last read stands")
            }
        }
        last.clone()
    }
}

/// Which addresses a webhook may reach: shared by the URL checks and the resolver.
#[derive(Clone)]
pub struct Reach {
    /// No address is refused (`--webhook-allow-private`: a receiver on the LAN or this host).
    pub allow_private: bool,
    own: Arc<OwnAddrs>,
}

impl Reach {
    pub fn new(allow_private: bool) -> Self {
        // With private addresses allowed the interfaces are never consulted.
        let own = if allow_private { OwnAddrs::fixed(Vec::new()) } else { OwnAddrs::read() };
        Self::with(allow_private, own)
    }

    pub fn with(allow_private: bool, own: OwnAddrs) -> Self {
        Reach { allow_private, own: Arc::new(own) }
    }

    /// Why `ip` may not be reached, if it may not.
    pub fn refused(&self, ip: IpAddr) -> Option<String> {
        if self.allow_private {
            return None;
        }
        Self::refused_among(ip, &self.own.current())
    }

    /// Why `ip` may not be reached, with the host's own addresses `own`.
    fn refused_among(ip: IpAddr, own: &[IpAddr]) -> Option<String> {
        let ip = ip.to_canonical();
        // The host itself, also through an IPv6 form that carries one of its IPv4 addresses.
        let carried = match ip {
            IpAddr::V6(v6) => ranges::carried_v4(v6).map(|(v4, _)| IpAddr::V4(v4)),
            IpAddr::V4(_) => None,
        };
        let is_own = own.contains(&ip) || carried.is_some_and(|c| own.contains(&c));
        match (ranges::special(ip), is_own) {
            (Some(range), true) => Some(format!("{range}; one of this host's own")),
            (Some(range), false) => Some(range.to_string()),
            (None, true) => Some("one of this host's own".to_owned()),
            (None, false) => None,
        }
    }

    /// Checks a webhook URL as given (scheme, host, an IP literal's address).
    pub fn check_url(&self, url: &str) -> Result<Url, String> {
        let parsed = Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("the URL's scheme is {}; http or https is needed", parsed.scheme()));
        }
        let Some(host) = parsed.host() else { return Err("the URL has no host".into()) };
        if self.allow_private {
            return Ok(parsed);
        }
        let ip = match host {
            UrlHost::Ipv4(v4) => IpAddr::V4(v4),
            UrlHost::Ipv6(v6) => IpAddr::V6(v6),
            UrlHost::Domain(d) => {
                let name = d.trim_end_matches('.').to_ascii_lowercase();
                if name == "localhost" || name.ends_with(".localhost") {
                    return Err(refused_text(d, "loopback"));
                }
                return Ok(parsed);
            }
        };
        match self.refused(ip) {
            Some(kind) => Err(refused_text(&ip.to_string(), &kind)),
            None => Ok(parsed),
        }
    }

    /// `host`'s addresses that a webhook may connect to.
    pub async fn resolve(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
        if self.allow_private {
            return Ok(found);
        }
        let own = self.own.current();
        let (public, refused): (Vec<SocketAddr>, Vec<SocketAddr>) =
            found.into_iter().partition(|a| Self::refused_among(a.ip(), &own).is_none());
        if !refused.is_empty() {
            // For the operator's log only: the delivery's error does not say where a name led.
            tracing::debug!(host, refused = ?refused, "a webhook host's non-public addresses were dropped");
        }
        if public.is_empty() {
            let why = if refused.is_empty() {
                format!("{host} resolves to no address")
            } else {
                format!(
                    "{host} resolves to no public address; webhooks go to public addresses unless the server runs with --webhook-allow-private"
                )
            };
            return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
        }
        Ok(public)
    }
}

fn refused_text(what: &str, kind: &str) -> String {
    format!(
        "{what} is not a public address ({kind}); webhooks go to public addresses unless the server runs with --webhook-allow-private"
    )
}

/// The resolver of webhook connections: the system's, dropping non-public addresses (and failing
/// when none is left) unless private ones are allowed.
#[derive(Clone)]
pub struct Resolver {
    pub reach: Reach,
}

impl tower::Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let reach = self.reach.clone();
        Box::pin(async move { reach.resolve(name.as_str()).await.map(Vec::into_iter) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> Reach {
        Reach::with(false, OwnAddrs::fixed(Vec::new()))
    }

    #[tokio::test]
    async fn the_resolver_drops_private_addresses_without_saying_which() {
        let err = strict().resolve("localhost").await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("localhost resolves to no public address"), "{text}");
        assert!(!text.contains("127.0.0.1") && !text.contains("::1"), "{text}");
        assert!(!Reach::with(true, OwnAddrs::fixed(Vec::new())).resolve("localhost").await.unwrap().is_empty());
    }

    #[test]
    fn urls_are_checked() {
        let reach = strict();
        assert!(reach.check_url("https://hooks.example.com/x").is_ok());
        assert!(reach.check_url("https://93.184.216.34/x").is_ok());
        assert!(reach.check_url("ftp://example.com/").unwrap_err().contains("scheme"));
        assert!(reach.check_url("http://127.0.0.1:9/").unwrap_err().contains("(loopback)"));
        assert!(reach.check_url("http://[::1]/").unwrap_err().contains("loopback"));
        assert!(reach.check_url("http://localhost:8080/").unwrap_err().contains("--webhook-allow-private"));
        assert!(reach.check_url("http://LocalHost./").unwrap_err().contains("loopback"));
        assert!(reach.check_url("http://a.localhost/").unwrap_err().contains("loopback"));
        assert!(reach.check_url("http://169.254.169.254/latest").unwrap_err().contains("link-local"));
        assert!(reach.check_url("not a url").is_err());
        assert!(Reach::with(true, OwnAddrs::fixed(Vec::new())).check_url("http://127.0.0.1:9/").is_ok());
    }

    /// The spellings the red team got through, each refused.
    #[test]
    fn the_red_teams_addresses_are_refused() {
        let reach = strict();
        for (url, kind) in [
            ("http://[::7f00:1]/", "IPv4-compatible"),
            ("http://[64:ff9b::7f00:1]/", "loopback (inside a NAT64 address)"),
            ("http://[2002:7f00:1::]/", "loopback (inside a 6to4 address)"),
            ("http://[fec0::1]/", "site-local"),
            ("http://198.18.0.1/", "benchmarking"),
            ("http://192.0.0.1/", "IETF protocol assignments"),
            ("http://0x7f.1/", "loopback"),
            ("http://2130706433/", "loopback"),
        ] {
            let err = reach.check_url(url).unwrap_err();
            assert!(err.contains(&format!("({kind})")), "{url}: {err}");
        }
    }

    /// The host's own addresses, whatever their range, and in the IPv6 forms that carry them.
    #[test]
    fn the_hosts_own_addresses_are_refused() {
        let own: Vec<IpAddr> = vec!["93.184.216.34".parse().unwrap(), "2606:4700::1111".parse().unwrap()];
        let reach = Reach::with(false, OwnAddrs::fixed(own));
        for url in [
            "http://93.184.216.34/",
            "http://[::ffff:93.184.216.34]/",
            "http://[64:ff9b::5db8:d822]/",
            "http://[2002:5db8:d822::1]/",
            "http://[2606:4700::1111]:8443/",
        ] {
            assert!(reach.check_url(url).unwrap_err().contains("(one of this host's own)"), "{url}");
        }
        assert!(reach.check_url("http://93.184.216.35/").is_ok());
        let open = Reach::with(true, OwnAddrs::fixed(vec!["93.184.216.34".parse().unwrap()]));
        assert!(open.check_url("http://93.184.216.34/").is_ok(), "--webhook-allow-private reaches this host");
    }

    /// The system's interfaces: each address read is refused, by the URL check and by the
    /// resolver (an IP literal resolves to itself).
    #[tokio::test]
    async fn this_machines_interface_addresses_are_refused() {
        let reach = Reach::new(false);
        let own = reach.own.current();
        assert!(own.contains(&IpAddr::from([127, 0, 0, 1])), "lo is read: {own:?}");
        for ip in own.iter() {
            assert!(reach.refused(*ip).unwrap().ends_with("one of this host's own"), "{ip}");
            let err = reach.resolve(&ip.to_string()).await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{ip}: {err}");
        }
    }
}
