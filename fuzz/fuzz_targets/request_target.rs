//! Fuzzes how the access guard reads a request target (`ensemble_server::security`): the names of
//! its query (the `token_in_query` refusal) against the model in `ensemble_test_models::query`,
//! and the authority of an absolute-form target (`GET http://host:port/p`) against the Host
//! header. The property tests in `server/tests/it/access_props.rs` check the same rules.
//!
//! Input layout: the bytes before the first NUL are the request target, the bytes after it the
//! Host header (both lossily made UTF-8). Checked against the default policy (listening on
//! 127.0.0.1:7878, no extra hosts).

#![no_main]

use ensemble_server::security::{AccessPolicy, HostName, parse_host_header, query_carries_token, query_names};
use ensemble_test_models::hosts::is_loopback_ip;
use ensemble_test_models::query;
use libfuzzer_sys::fuzz_target;

fn loopback(name: &HostName) -> bool {
    match name {
        HostName::Ip(ip) => is_loopback_ip(*ip),
        HostName::Name(n) => n == "localhost",
    }
}

/// Splits a request target as an HTTP parser does: origin form (`/path?query`), or absolute form
/// (`scheme://authority/path?query`). Returns scheme, authority and query.
fn split(target: &str) -> (Option<&str>, Option<&str>, Option<&str>) {
    let (head, q) = match target.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (target, None),
    };
    match head.split_once("://") {
        Some((scheme, rest)) if !head.starts_with('/') => {
            let authority = rest.split('/').next().unwrap_or_default();
            (Some(scheme), Some(authority), q)
        }
        _ => (None, None, q),
    }
}

fuzz_target!(|data: &[u8]| {
    let policy = AccessPolicy::new("127.0.0.1:7878".parse().unwrap(), &[], &[]).unwrap();
    let (target, host) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let target = String::from_utf8_lossy(target);
    let host = String::from_utf8_lossy(host);
    let (scheme, authority, q) = split(&target);

    // The query: the names the guard sees are the model's, and so is its decision.
    if let Some(q) = q {
        let names: Vec<String> = query_names(q).map(|n| n.into_owned()).collect();
        assert_eq!(names, query::names(q), "names of {q:?}");
        assert_eq!(query_carries_token(Some(q)), query::carries_token(q), "decision on {q:?}");
    }

    // The authority: allowed only if it is loopback and names the Host header's host and port.
    let allowed = policy.target_allowed(scheme, authority, Some(&host));
    match authority {
        None => assert!(allowed, "an origin-form target is left to the Host check"),
        Some(a) if allowed => {
            let (name, port) = parse_host_header(a).expect("an allowed authority parses");
            assert!(loopback(&name), "{a:?} is not loopback");
            let (host_name, host_port) = parse_host_header(&host).expect("an allowed request has a Host");
            assert_eq!(name, host_name, "{a:?} vs Host {host:?}");
            let default = if scheme.is_some_and(|s| s.eq_ignore_ascii_case("https")) { 443 } else { 80 };
            assert_eq!(port.unwrap_or(default), host_port.unwrap_or(default), "{a:?} vs Host {host:?}");
            assert!(!a.contains('@'), "userinfo in {a:?}");
        }
        Some(_) => {}
    }
    // Case never matters.
    let upper = policy.target_allowed(
        scheme.map(str::to_ascii_uppercase).as_deref(),
        authority.map(str::to_ascii_uppercase).as_deref(),
        Some(&host.to_ascii_uppercase()),
    );
    assert_eq!(allowed, upper, "case changed the decision on {target:?} with Host {host:?}");
    assert!(authority.is_none() || !policy.target_allowed(scheme, authority, None), "no Host");
});
