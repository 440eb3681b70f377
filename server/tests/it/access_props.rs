//! Property tests of the Host allowlist and the Origin policy, the decoding of query names (the
//! `token_in_query` refusal) and the judging of absolute-form request targets
//! (`ensemble_server::security`): bounded case counts, so they run in CI on stable. The unbounded
//! versions are `fuzz/fuzz_targets/host_origin.rs` and `fuzz/fuzz_targets/request_target.rs`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ensemble_server::security::{
    AccessPolicy, HostName, parse_host_header, parse_origin, query_carries_token, query_names,
};
use ensemble_test_models::hosts::is_loopback_ip;
use ensemble_test_models::query;
use proptest::prelude::*;

/// 256 cases (a fraction of a second in CI); `PROPTEST_CASES=100000` for a deeper local run.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// The default: listening on 127.0.0.1, no extra hosts, no trusted origins.
fn default_policy() -> AccessPolicy {
    AccessPolicy::new("127.0.0.1:7878".parse().unwrap(), &[], &[]).unwrap()
}

/// Listening on every interface: only the loopback names and addresses are implied.
fn wildcard_policy() -> AccessPolicy {
    AccessPolicy::new("0.0.0.0:7878".parse().unwrap(), &[], &[]).unwrap()
}

/// An extra allowed host and two trusted origins.
fn configured_policy() -> AccessPolicy {
    AccessPolicy::new(
        "127.0.0.1:7878".parse().unwrap(),
        &["Ensemble.Internal".into()],
        &["https://app.example".into(), "http://tool.internal:3000/".into()],
    )
    .unwrap()
}

fn policies() -> [AccessPolicy; 3] {
    [default_policy(), wildcard_policy(), configured_policy()]
}

fn with_port(host: &str, port: Option<u16>) -> String {
    match port {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    }
}

/// Upper- or lower-cases each ASCII letter by the bits of `seed`.
fn mix_case(s: &str, seed: u64) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| if (seed >> (i % 64)) & 1 == 1 { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
        .collect()
}

fn port() -> impl Strategy<Value = Option<u16>> {
    prop_oneof![Just(None), Just(Some(7878)), Just(Some(80)), any::<u16>().prop_map(Some)]
}

fn label() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_-]{1,16}"
}

/// Names that contain `localhost` but are not it.
fn lookalike() -> impl Strategy<Value = String> {
    (0..7u8, label(), label(), any::<bool>()).prop_map(|(form, a, b, dot)| {
        let name = match form {
            0 => format!("localhost.{a}"),
            1 => format!("{a}.localhost"),
            2 => format!("{a}-localhost"),
            3 => format!("localhost-{a}"),
            4 => format!("{a}localhost"),
            5 => format!("localhost{a}"),
            _ => format!("{a}.localhost.{b}"),
        };
        if dot { format!("{name}.") } else { name }
    })
}

/// DNS-style names (never an IPv4 address), some allowed by the configured policy.
fn dns_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("localhost".to_owned()),
        Just("ensemble.internal".to_owned()),
        lookalike().prop_map(|n| n.trim_end_matches('.').to_owned()),
        prop::collection::vec(label(), 1..4).prop_map(|ls| ls.join(".")),
    ]
    .prop_filter("an IPv4 address is not a name", |n| n.parse::<Ipv4Addr>().is_err())
}

/// One textual form of an IPv6 address: any run of zero groups compressed (or none), groups
/// zero-padded to any width, hex digits in any case, optionally the last 32 bits as a dotted quad.
#[derive(Clone, Debug)]
struct V6Spelling {
    zeros: (usize, usize),
    widths: Vec<usize>,
    dotted: bool,
    case: u64,
}

fn v6_spelling() -> impl Strategy<Value = V6Spelling> {
    (0..8usize, 0..=8usize, prop::collection::vec(1..=4usize, 8), any::<bool>(), any::<u64>())
        .prop_map(|(start, len, widths, dotted, case)| V6Spelling { zeros: (start, len), widths, dotted, case })
}

fn render_v6(ip: Ipv6Addr, s: &V6Spelling) -> String {
    let seg = ip.segments();
    let n = if s.dotted { 6 } else { 8 };
    let hex: Vec<String> = seg[..n].iter().zip(&s.widths).map(|(g, &w)| format!("{g:0w$x}")).collect();
    let (start, len) = s.zeros;
    let compress = len > 0 && start + len <= n && seg[start..start + len].iter().all(|&g| g == 0);
    let mut text =
        if compress { format!("{}::{}", hex[..start].join(":"), hex[start + len..].join(":")) } else { hex.join(":") };
    if s.dotted {
        let [a, b] = seg[6].to_be_bytes();
        let [c, d] = seg[7].to_be_bytes();
        if !text.ends_with("::") {
            text.push(':');
        }
        text.push_str(&format!("{a}.{b}.{c}.{d}"));
    }
    mix_case(&text, s.case)
}

fn loopback_v6() -> impl Strategy<Value = Ipv6Addr> {
    prop_oneof![
        Just(Ipv6Addr::LOCALHOST),
        any::<[u8; 3]>().prop_map(|[b, c, d]| Ipv4Addr::new(127, b, c, d).to_ipv6_mapped()),
    ]
}

fn other_v6() -> impl Strategy<Value = Ipv6Addr> {
    prop_oneof![
        any::<[u16; 8]>().prop_map(Ipv6Addr::from),
        // Near misses: ::, ::2, ::1:0, IPv4-compatible (not mapped) 127/8, mapped non-127.
        (0u16..4, 0..8usize).prop_map(|(v, at)| {
            let mut g = [0u16; 8];
            g[at] = v;
            Ipv6Addr::from(g)
        }),
        any::<[u8; 3]>().prop_map(|[b, c, d]| Ipv4Addr::new(127, b, c, d).to_ipv6_compatible()),
        any::<Ipv4Addr>().prop_map(|v4| v4.to_ipv6_mapped()),
    ]
    .prop_filter("not loopback", |ip| !is_loopback_ip(IpAddr::V6(*ip)))
}

proptest! {
    #![proptest_config(config())]

    /// DNS rebinding look-alikes: any prefix or suffix around `localhost` is another name.
    #[test]
    fn localhost_lookalikes_are_refused(name in lookalike(), port in port(), case in any::<u64>()) {
        let host = with_port(&mix_case(&name, case), port);
        for p in policies() {
            prop_assert!(!p.host_allowed(Some(&host)), "{host} should be refused");
        }
        let origin = format!("http://{host}");
        prop_assert!(!default_policy().origin_allowed(Some(&origin), Some(&with_port("localhost", port))));
    }

    /// Case and one trailing dot (the absolute form of a name) never change the decision.
    #[test]
    fn case_and_a_trailing_dot_do_not_matter(name in dns_name(), port in port(), case in any::<u64>()) {
        for p in policies() {
            let decision = p.host_allowed(Some(&with_port(&name, port)));
            for variant in [
                name.to_ascii_uppercase(),
                mix_case(&name, case),
                format!("{name}."),
                format!("{}.", mix_case(&name, case)),
            ] {
                prop_assert_eq!(p.host_allowed(Some(&with_port(&variant, port))), decision, "{} vs {}", variant, name);
            }
            // Two trailing dots are not a name.
            let two_dots = with_port(&format!("{name}.."), port);
            prop_assert!(!p.host_allowed(Some(&two_dots)), "{two_dots} should be refused");
        }
    }

    /// Case never matters for any Host header at all (hex digits of IPv6 included).
    #[test]
    fn case_never_matters(host in prop_oneof!["[a-zA-Z0-9.:_%@/\\[\\]-]{0,24}", ".{0,24}"]) {
        for p in policies() {
            let decision = p.host_allowed(Some(&host));
            prop_assert_eq!(p.host_allowed(Some(&host.to_ascii_uppercase())), decision);
            prop_assert_eq!(p.host_allowed(Some(&host.to_ascii_lowercase())), decision);
        }
    }

    #[test]
    fn ipv4_loopback_is_allowed_on_any_port(b in any::<u8>(), c in any::<u8>(), d in any::<u8>(), port in port()) {
        let host = with_port(&format!("127.{b}.{c}.{d}"), port);
        for p in policies() {
            prop_assert!(p.host_allowed(Some(&host)), "{host} should pass");
        }
    }

    #[test]
    fn other_ipv4_addresses_are_refused(
        first in prop_oneof![Just(0u8), Just(10u8), 0u8..127, 128u8..=255],
        [b, c, d] in any::<[u8; 3]>(),
        port in port(),
    ) {
        let ip = Ipv4Addr::new(first, b, c, d);
        let host = with_port(&ip.to_string(), port);
        for p in policies() {
            prop_assert!(!p.host_allowed(Some(&host)), "{host} should be refused");
        }
    }

    /// Octets with leading zeros (octal in some resolvers) are not parsed as an address, and a name
    /// of only digits and dots is refused: never a loopback by accident.
    #[test]
    fn non_canonical_ipv4_is_refused(octets in any::<[u8; 4]>(), padded in 0..4usize, port in port()) {
        let text: Vec<String> = octets
            .iter()
            .enumerate()
            .map(|(i, o)| if i == padded { format!("0{o}") } else { o.to_string() })
            .collect();
        let host = with_port(&text.join("."), port);
        for p in policies() {
            prop_assert!(!p.host_allowed(Some(&host)), "{host} should be refused");
        }
    }

    /// `[::1]` (and IPv4-mapped 127/8) in any equivalent textual form.
    #[test]
    fn ipv6_loopback_in_any_spelling_is_allowed(ip in loopback_v6(), spelling in v6_spelling(), port in port()) {
        let text = render_v6(ip, &spelling);
        let host = with_port(&format!("[{text}]"), port);
        prop_assert_eq!(parse_host_header(&host), Some((HostName::Ip(IpAddr::V6(ip)), port)), "{}", host);
        for p in policies() {
            prop_assert!(p.host_allowed(Some(&host)), "{host} should pass");
        }
    }

    #[test]
    fn other_ipv6_addresses_are_refused(ip in other_v6(), spelling in v6_spelling(), port in port()) {
        let host = with_port(&format!("[{}]", render_v6(ip, &spelling)), port);
        prop_assert_eq!(parse_host_header(&host), Some((HostName::Ip(IpAddr::V6(ip)), port)), "{}", host);
        for p in policies() {
            prop_assert!(!p.host_allowed(Some(&host)), "{host} should be refused");
        }
    }

    /// Without brackets an IPv6 address is ambiguous with a port: refused, loopback or not.
    #[test]
    fn unbracketed_ipv6_is_refused(
        ip in prop_oneof![loopback_v6(), other_v6()],
        spelling in v6_spelling(),
        port in port(),
    ) {
        let text = render_v6(ip, &spelling);
        for host in [with_port(&text, port), format!("[{text}"), format!("{text}]"), with_port(&format!("{text}]"), port)] {
            for p in policies() {
                prop_assert!(!p.host_allowed(Some(&host)), "{host} should be refused");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Origins

/// Pairwise different hosts, each with equivalent spellings.
const HOSTS: [&[&str]; 8] = [
    &["localhost", "LOCALHOST", "LocalHost.", "localhost."],
    &["127.0.0.1"],
    &["127.0.0.2"],
    &["[::1]", "[0::1]", "[0:0:0:0:0:0:0:1]", "[0000::0001]"],
    &["[::ffff:127.0.0.1]", "[::FFFF:7f00:1]", "[0::ffff:7F00:0001]"],
    &["ensemble.internal", "Ensemble.Internal."],
    &["evil.example", "EVIL.example."],
    &["localhost.evil.example"],
];

const OTHER_SCHEMES: [&str; 8] = ["https", "ws", "wss", "ftp", "file", "httpx", "htt", "chrome-extension"];

/// How the Origin's port is written relative to the Host's.
#[derive(Clone, Copy, Debug)]
enum OriginPort {
    /// As in the Host header (explicit or omitted).
    Same,
    /// The Host's effective port, always explicit (`:80` when the Host omits it).
    Explicit,
    Omitted,
    Other(u16),
}

fn origin_port() -> impl Strategy<Value = OriginPort> {
    prop_oneof![
        3 => Just(OriginPort::Same),
        1 => Just(OriginPort::Explicit),
        1 => Just(OriginPort::Omitted),
        1 => any::<u16>().prop_map(OriginPort::Other),
    ]
}

/// A Host header and an Origin built from parts, and whether they are the same origin.
#[derive(Clone, Debug)]
struct Pair {
    host: String,
    origin: String,
    same_origin: bool,
}

fn pair() -> impl Strategy<Value = Pair> {
    let spelling = any::<prop::sample::Index>();
    (
        0..HOSTS.len(),
        prop_oneof![2 => Just(None), 1 => (0..HOSTS.len()).prop_map(Some)],
        (spelling.clone(), spelling),
        port(),
        origin_port(),
        prop_oneof![3 => Just(None), 1 => prop::sample::select(&OTHER_SCHEMES[..]).prop_map(Some)],
        any::<u64>(),
    )
        .prop_map(|(h, other_host, (hs, os), host_port, oport, other_scheme, case)| {
            let o = other_host.unwrap_or(h);
            let host = with_port(hs.get::<&str>(HOSTS[h]), host_port);
            let effective = host_port.unwrap_or(80);
            let origin_port = match oport {
                OriginPort::Same => host_port,
                OriginPort::Explicit => Some(effective),
                OriginPort::Omitted => None,
                OriginPort::Other(p) => Some(p),
            };
            let scheme = mix_case(other_scheme.unwrap_or("http"), case);
            let origin = format!("{scheme}://{}", with_port(os.get::<&str>(HOSTS[o]), origin_port));
            let same_origin = other_scheme.is_none() && o == h && origin_port.unwrap_or(80) == effective;
            Pair { host, origin, same_origin }
        })
}

proptest! {
    #![proptest_config(config())]

    /// Same origin (http, same host in any spelling, same effective port) passes; any difference
    /// in scheme, host or port is refused (none of these hosts is a trusted origin).
    #[test]
    fn only_the_same_origin_passes(pair in pair()) {
        for p in policies() {
            prop_assert_eq!(
                p.origin_allowed(Some(&pair.origin), Some(&pair.host)),
                pair.same_origin,
                "Origin {} with Host {}", pair.origin, pair.host
            );
        }
        if pair.same_origin {
            let o = parse_origin(&pair.origin).unwrap();
            prop_assert_eq!(o.scheme, "http");
            prop_assert_eq!(Some(o.host), parse_host_header(&pair.host).map(|(h, _)| h));
        }
    }

    /// Anything after the authority (path, query, fragment, space) or before it (userinfo) makes
    /// an Origin invalid, and an Origin without a Host is refused.
    #[test]
    fn malformed_origins_and_missing_hosts_are_refused(
        pair in pair(),
        junk in prop_oneof![Just("/"), Just("/x"), Just("?a"), Just("#f"), Just(" "), Just(":")],
        user in "[a-z]{0,8}",
    ) {
        let with_suffix = format!("{}{junk}", pair.origin);
        let with_userinfo = pair.origin.replacen("://", &format!("://{user}@"), 1);
        for p in policies() {
            prop_assert!(!p.origin_allowed(Some(&with_suffix), Some(&pair.host)), "{} should be refused", with_suffix);
            prop_assert!(!p.origin_allowed(Some(&with_userinfo), Some(&pair.host)), "{} should be refused", with_userinfo);
            prop_assert!(!p.origin_allowed(Some(&pair.origin), None), "{} without a Host", pair.origin);
            // No Origin: a non-browser client, whatever the Host says (the Host check is separate).
            prop_assert!(p.origin_allowed(None, Some(&pair.host)));
        }
    }

    #[test]
    fn null_and_opaque_origins_are_refused(
        origin in prop_oneof![Just("null".to_owned()), any::<u64>().prop_map(|c| mix_case("null", c)), "[a-z]{0,12}"],
        h in 0..HOSTS.len(),
        port in port(),
    ) {
        let host = with_port(HOSTS[h][0], port);
        for p in policies() {
            prop_assert!(!p.origin_allowed(Some(&origin), Some(&host)), "{origin} should be refused");
        }
    }

    /// A trusted origin passes with any Host (or none); changing its scheme, host or port does not.
    #[test]
    fn trusted_origins_pass_and_their_neighbours_do_not(
        trusted in prop::sample::select(&[
            "https://app.example", "HTTPS://App.Example", "https://app.example:443", "https://app.example.",
            "http://tool.internal:3000", "HTTP://TOOL.INTERNAL.:3000",
        ][..]),
        neighbour in prop::sample::select(&[
            "http://app.example", "https://app.example:8443", "https://evil.app.example", "https://app.example.evil",
            "wss://app.example", "https://tool.internal:3000", "http://tool.internal", "http://tool.internal:3001",
            "http://evil-tool.internal:3000",
        ][..]),
        host in prop_oneof![Just(None), (0..HOSTS.len()).prop_map(|h| Some(HOSTS[h][0])), Just(Some("garbage host"))],
    ) {
        let p = configured_policy();
        prop_assert!(p.origin_allowed(Some(trusted), host), "{trusted} is trusted");
        prop_assert!(!p.origin_allowed(Some(neighbour), host), "{neighbour} is not trusted");
        prop_assert!(!default_policy().origin_allowed(Some(trusted), host), "{trusted} is not trusted by default");
    }
}

// ---------------------------------------------------------------------------------------------
// Query names (`token_in_query`)

/// One byte as it may appear in a query: itself (when that is unambiguous), or `%XX` in either
/// hex case.
fn spell_byte(b: u8, encode: bool, upper: bool) -> String {
    let plain = b.is_ascii_alphanumeric() || b"-._~!$'()*,;:@/?".contains(&b);
    if plain && !encode {
        (b as char).to_string()
    } else if upper {
        format!("%{b:02X}")
    } else {
        format!("%{b:02x}")
    }
}

/// A token key, in any case, with any of its bytes percent-encoded.
fn token_key() -> impl Strategy<Value = String> {
    (prop::sample::select(&query::TOKEN_KEYS[..]), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
        |(key, case, encode, upper)| {
            mix_case(key, case)
                .bytes()
                .enumerate()
                .map(|(i, b)| spell_byte(b, (encode >> (i % 64)) & 1 == 1, (upper >> (i % 64)) & 1 == 1))
                .collect()
        },
    )
}

/// Pieces a query is made of: ordinary pairs, near misses of token keys, stray separators and
/// escapes.
fn other_pair() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{1,12}=[a-z0-9%+]{0,8}",
        "[a-zA-Z0-9%+=_.~-]{0,16}",
        // Near misses: prefixes, suffixes, spaces (`+`), double encoding.
        prop::sample::select(
            &[
                "tokens=1",
                "xtoken=1",
                "token_=1",
                "access+token=1",
                "access%20token=1",
                "%2574oken=1",
                "tok%en=1",
                "to%6Ben%",
                "auth2=1",
                "bearer%00=1",
                "=token",
                "x=token",
                "%=1",
                "%7=1",
            ][..]
        )
        .prop_map(str::to_owned),
    ]
}

fn query_of(parts: Vec<String>) -> String {
    parts.join("&")
}

proptest! {
    #![proptest_config(config())]

    /// A token-looking name is found however it is cased or percent-encoded, wherever it is.
    #[test]
    fn token_names_are_found_however_encoded(
        before in prop::collection::vec(other_pair(), 0..4),
        key in token_key(),
        value in "[a-zA-Z0-9%+=]{0,12}",
        bare in any::<bool>(),
        after in prop::collection::vec(other_pair(), 0..4),
    ) {
        let pair = if bare { key } else { format!("{key}={value}") };
        let q = query_of(before.into_iter().chain([pair]).chain(after).collect());
        prop_assert!(query::carries_token(&q), "model: {}", q);
        prop_assert!(query_carries_token(Some(&q)), "{} should be refused", q);
    }

    /// On any query, the server's decision and the names it sees are the model's.
    #[test]
    fn query_names_decode_as_the_model_says(
        parts in prop::collection::vec(prop_oneof![other_pair(), token_key(), ".{0,10}"], 0..6),
    ) {
        let q = query_of(parts);
        let names: Vec<String> = query_names(&q).map(|n| n.into_owned()).collect();
        prop_assert_eq!(&names, &query::names(&q), "{}", q);
        prop_assert_eq!(query_carries_token(Some(&q)), query::carries_token(&q), "{}", q);
    }
}

// ---------------------------------------------------------------------------------------------
// Absolute-form request targets (`GET http://host:port/path`)

/// Schemes a request target may carry, and the port each implies.
const SCHEMES: [(&str, Option<u16>); 6] =
    [("http", Some(80)), ("HTTP", Some(80)), ("https", Some(443)), ("Https", Some(443)), ("ftp", None), ("ws", None)];

/// Hosts of `HOSTS` the configured policy allows (all but the last two).
fn allowed_by_configured(h: usize) -> bool {
    h < HOSTS.len() - 2
}

proptest! {
    #![proptest_config(config())]

    /// An absolute-form target is served only when its authority is an allowed host and names the
    /// same host (in any spelling) and effective port as the Host header; origin-form targets are
    /// left to the Host check.
    #[test]
    fn absolute_targets_must_agree_with_the_host_header(
        a in 0..HOSTS.len(),
        h in 0..HOSTS.len(),
        (aspell, hspell) in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        scheme in 0..SCHEMES.len(),
        aport in port(),
        hport in port(),
        userinfo in prop::option::of("[a-z]{1,5}"),
    ) {
        let (scheme, default_port) = SCHEMES[scheme];
        let authority = with_port(aspell.get::<&str>(HOSTS[a]), aport);
        let authority = match &userinfo {
            Some(u) => format!("{u}@{authority}"),
            None => authority,
        };
        let host = with_port(hspell.get::<&str>(HOSTS[h]), hport);
        let agrees = userinfo.is_none()
            && default_port.is_some_and(|d| a == h && aport.unwrap_or(d) == hport.unwrap_or(d));
        let p = configured_policy();
        prop_assert_eq!(
            p.target_allowed(Some(scheme), Some(&authority), Some(&host)),
            agrees && allowed_by_configured(a),
            "{}://{} with Host {}", scheme, authority, host
        );
        // The default policy allows only loopback authorities.
        let loopback = parse_host_header(&authority).is_some_and(|(n, _)| match n {
            HostName::Ip(ip) => is_loopback_ip(ip),
            HostName::Name(n) => n == "localhost",
        });
        prop_assert_eq!(
            default_policy().target_allowed(Some(scheme), Some(&authority), Some(&host)),
            agrees && loopback,
            "{}://{} with Host {}", scheme, authority, host
        );
        // No authority: nothing to judge; an authority without a scheme (authority form) or without
        // a Host header: refused.
        prop_assert!(p.target_allowed(None, None, Some(&host)));
        prop_assert!(!p.target_allowed(None, Some(&authority), Some(&host)));
        prop_assert!(!p.target_allowed(Some(scheme), Some(&authority), None));
    }
}
