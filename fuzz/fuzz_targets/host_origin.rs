//! Fuzzes the Host allowlist and the Origin policy (`ensemble_server::security`).
//!
//! Input layout: the bytes before the first NUL are the Host header, the bytes after it the Origin
//! header (both lossily made UTF-8). Checked against the default policy (listening on
//! 127.0.0.1:7878, no extra hosts, no trusted origins).

#![no_main]

use std::net::IpAddr;

use ensemble_server::security::{AccessPolicy, HostName, parse_host_header, parse_origin};
use ensemble_test_models::hosts::is_loopback_ip;
use libfuzzer_sys::fuzz_target;

fn loopback(name: &HostName) -> bool {
    match name {
        HostName::Ip(ip) => is_loopback_ip(*ip),
        HostName::Name(n) => n == "localhost",
    }
}

/// The canonical text of a parsed host (what a browser would send for it).
fn render(name: &HostName, port: Option<u16>) -> String {
    let host = match name {
        HostName::Ip(IpAddr::V4(ip)) => ip.to_string(),
        HostName::Ip(IpAddr::V6(ip)) => format!("[{ip}]"),
        HostName::Name(n) => n.clone(),
    };
    match port {
        Some(p) => format!("{host}:{p}"),
        None => host,
    }
}

fuzz_target!(|data: &[u8]| {
    let policy = AccessPolicy::new("127.0.0.1:7878".parse().unwrap(), &[], &[]).unwrap();
    let (host, origin) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let host = String::from_utf8_lossy(host);
    let origin = origin.map(String::from_utf8_lossy);
    let origin = origin.as_deref();

    // Host: allowed exactly when it parses to a loopback host; case never matters.
    let parsed = parse_host_header(&host);
    let allowed = policy.host_allowed(Some(&host));
    assert_eq!(allowed, parsed.as_ref().is_some_and(|(n, _)| loopback(n)), "Host {host:?} parsed as {parsed:?}");
    assert_eq!(allowed, policy.host_allowed(Some(&host.to_ascii_uppercase())), "case changed {host:?}");
    assert_eq!(allowed, policy.host_allowed(Some(&host.to_ascii_lowercase())), "case changed {host:?}");
    assert!(!policy.host_allowed(None));
    if let Some((name, port)) = &parsed {
        // Parsing is canonical: the rendered form parses back to the same host and port.
        let again = render(name, *port);
        assert_eq!(parse_host_header(&again).as_ref(), Some(&(name.clone(), *port)), "{host:?} -> {again:?}");
        if let HostName::Name(n) = name {
            assert!(!n.is_empty() && !n.ends_with('.') && n.bytes().all(|b| !b.is_ascii_uppercase()));
        }
        // A page is always same-origin with itself.
        assert!(policy.origin_allowed(Some(&format!("http://{host}")), Some(&host)), "self-origin of {host:?}");
    }

    // Origin: absent, or exactly same-origin http with the Host.
    assert!(policy.origin_allowed(None, Some(&host)));
    if let Some(origin) = origin {
        let o = parse_origin(origin);
        if let Some(o) = &o {
            assert!(o.scheme == "http" || o.scheme == "https");
            assert!(
                origin.get(..o.scheme.len() + 3).is_some_and(|s| s.eq_ignore_ascii_case(&format!("{}://", o.scheme)))
            );
        }
        let same = match (&o, &parsed) {
            (Some(o), Some((h, p))) => o.scheme == "http" && o.host == *h && o.port == p.unwrap_or(80),
            _ => false,
        };
        assert_eq!(policy.origin_allowed(Some(origin), Some(&host)), same, "Origin {origin:?} with Host {host:?}");
        assert!(!policy.origin_allowed(Some(origin), None), "an Origin without a Host is refused");
        assert_eq!(same, policy.origin_allowed(Some(&origin.to_ascii_uppercase()), Some(&host)), "case: {origin:?}");
    }
});
