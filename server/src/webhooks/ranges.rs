//! The address ranges a webhook may not reach, after the IANA IPv4 and IPv6 Special-Purpose
//! Address Registries: every range there that is not globally reachable, the documentation and
//! benchmarking ones, multicast and broadcast, and every IPv6 form that carries an IPv4 address
//! (mapped, compatible, translated, NAT64, 6to4) judged by the IPv4 address it carries. IPv6
//! outside global unicast (2000::/3) is refused whole: nothing else there is a receiver.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused: its range, and the IPv6 form that carried it, if one did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Special {
    pub kind: &'static str,
    /// The IPv6 form an IPv4 address was found in (`NAT64`, `6to4`, …).
    pub within: Option<&'static str>,
}

impl fmt::Display for Special {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.within {
            Some(form) => write!(f, "{} (inside {form})", self.kind),
            None => f.write_str(self.kind),
        }
    }
}

const fn s(kind: &'static str) -> Special {
    Special { kind, within: None }
}

/// IPv4: (network, prefix length, range). The first match names it; broadcast precedes 240/4.
const V4: &[([u8; 4], u32, &str)] = &[
    ([0, 0, 0, 0], 8, "this-network"),
    ([10, 0, 0, 0], 8, "private"),
    ([100, 64, 0, 0], 10, "shared (CGNAT)"),
    ([127, 0, 0, 0], 8, "loopback"),
    ([169, 254, 0, 0], 16, "link-local"),
    ([172, 16, 0, 0], 12, "private"),
    ([192, 0, 0, 0], 24, "IETF protocol assignments"),
    ([192, 0, 2, 0], 24, "documentation"),
    ([192, 88, 99, 0], 24, "6to4 relay anycast"),
    ([192, 168, 0, 0], 16, "private"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([198, 51, 100, 0], 24, "documentation"),
    ([203, 0, 113, 0], 24, "documentation"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([255, 255, 255, 255], 32, "broadcast"),
    ([240, 0, 0, 0], 4, "reserved"),
];

/// IPv6: (network, prefix length, range), after the forms that carry IPv4 are looked into.
const V6: &[(u128, u32, &str)] = &[
    (0, 128, "unspecified"),
    (1, 128, "loopback"),
    (0, 96, "IPv4-compatible"),
    (0xffff << 48, 96, "IPv4-translated"),
    (0x0064_ff9b_0001 << 80, 48, "NAT64 local-use"),
    (0x0100 << 112, 64, "discard-only"),
    ((0x0100 << 112) | (1 << 64), 64, "dummy prefix"),
    (0x2001 << 112, 32, "Teredo"),
    ((0x2001 << 112) | (0x0002 << 96), 48, "benchmarking"),
    ((0x2001 << 112) | (0x0010 << 96), 28, "ORCHID"),
    ((0x2001 << 112) | (0x0020 << 96), 28, "ORCHIDv2"),
    (0x2001 << 112, 23, "IETF protocol assignments"),
    ((0x2001 << 112) | (0x0db8 << 96), 32, "documentation"),
    (0x3fff << 112, 20, "documentation"),
    (0x5f00 << 112, 16, "SRv6 SIDs"),
    (0xfc00 << 112, 7, "unique-local (private)"),
    (0xfe80 << 112, 10, "link-local"),
    (0xfec0 << 112, 10, "site-local"),
    (0xff00 << 112, 8, "multicast"),
];

fn in_v4(ip: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: u128, net: u128, len: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    ip & mask == net & mask
}

/// The special-purpose range `ip` is in, if any.
pub fn special(ip: IpAddr) -> Option<Special> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<Special> {
    V4.iter().find(|(net, len, _)| in_v4(ip, *net, *len)).map(|(_, _, kind)| s(kind))
}

/// The IPv4 address an IPv6 address carries, and the form that carries it: IPv4-mapped
/// (`::ffff:a.b.c.d`), NAT64 (`64:ff9b::/96`, the last 32 bits) or 6to4 (`2002::/16`, bits
/// 16–48). Connecting to such an address reaches that IPv4 address (through the host's own
/// stack, a NAT64 gateway or a 6to4 relay).
pub fn carried_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    let bits = u128::from(ip);
    if let Some(v4) = ip.to_ipv4_mapped() {
        Some((v4, "an IPv4-mapped address"))
    } else if in_v6(bits, 0x0064_ff9b << 96, 96) {
        Some((Ipv4Addr::from(bits as u32), "a NAT64 address"))
    } else if in_v6(bits, 0x2002 << 112, 16) {
        Some((Ipv4Addr::from((bits >> 80) as u32), "a 6to4 address"))
    } else {
        None
    }
}

fn special_v6(ip: Ipv6Addr) -> Option<Special> {
    // An IPv4 address in an IPv6 form is judged by that IPv4 address alone.
    if let Some((v4, form)) = carried_v4(ip) {
        return special_v4(v4).map(|inner| Special { kind: inner.kind, within: Some(form) });
    }
    let bits = u128::from(ip);
    if let Some((_, _, kind)) = V6.iter().find(|(net, len, _)| in_v6(bits, *net, *len)) {
        return Some(s(kind));
    }
    if !in_v6(bits, 0x2000 << 112, 3) {
        return Some(s("reserved (not global unicast)"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(ip: &str) -> Option<String> {
        special(ip.parse().unwrap()).map(|s| s.to_string())
    }

    /// One address (or more) per class of each registry, and the ones around its edges.
    #[test]
    fn ipv4_special_purpose_ranges_are_named() {
        for (ip, want) in [
            ("0.0.0.0", Some("this-network")),
            ("0.255.255.255", Some("this-network")),
            ("10.1.2.3", Some("private")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.255", Some("private")),
            ("192.168.0.1", Some("private")),
            ("100.64.0.1", Some("shared (CGNAT)")),
            ("100.127.255.255", Some("shared (CGNAT)")),
            ("127.0.0.1", Some("loopback")),
            ("127.255.0.9", Some("loopback")),
            ("169.254.169.254", Some("link-local")),
            ("192.0.0.1", Some("IETF protocol assignments")),
            ("192.0.0.170", Some("IETF protocol assignments")),
            ("192.0.2.2", Some("documentation")),
            ("198.51.100.7", Some("documentation")),
            ("203.0.113.9", Some("documentation")),
            ("192.88.99.1", Some("6to4 relay anycast")),
            ("198.18.0.1", Some("benchmarking")),
            ("198.19.255.255", Some("benchmarking")),
            ("224.0.0.1", Some("multicast")),
            ("239.255.255.250", Some("multicast")),
            ("240.0.0.1", Some("reserved")),
            ("254.1.1.1", Some("reserved")),
            ("255.255.255.255", Some("broadcast")),
            // Just outside.
            ("11.0.0.1", None),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("192.0.1.1", None),
            ("192.0.3.1", None),
            ("198.17.255.255", None),
            ("198.20.0.0", None),
            ("223.255.255.255", None),
            ("93.184.216.34", None),
            ("8.8.8.8", None),
        ] {
            assert_eq!(kind(ip).as_deref(), want, "{ip}");
        }
    }

    #[test]
    fn ipv6_special_purpose_ranges_are_named() {
        for (ip, want) in [
            ("::", Some("unspecified")),
            ("::1", Some("loopback")),
            ("::7f00:1", Some("IPv4-compatible")),
            ("::5db8:d822", Some("IPv4-compatible")),
            ("::ffff:0:7f00:1", Some("IPv4-translated")),
            ("64:ff9b:1::1", Some("NAT64 local-use")),
            ("100::1", Some("discard-only")),
            ("100:0:0:1::1", Some("dummy prefix")),
            ("2001::1", Some("Teredo")),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some("Teredo")),
            ("2001:1::1", Some("IETF protocol assignments")),
            ("2001:2::1", Some("benchmarking")),
            ("2001:10::1", Some("ORCHID")),
            ("2001:20::1", Some("ORCHIDv2")),
            ("2001:1ff::1", Some("IETF protocol assignments")),
            ("2001:db8::1", Some("documentation")),
            ("3fff::1", Some("documentation")),
            ("3fff:fff::1", Some("documentation")),
            ("5f00::1", Some("SRv6 SIDs")),
            ("fc00::1", Some("unique-local (private)")),
            ("fd00::2", Some("unique-local (private)")),
            ("fe80::1", Some("link-local")),
            ("febf::1", Some("link-local")),
            ("fec0::1", Some("site-local")),
            ("ff02::1", Some("multicast")),
            ("4000::1", Some("reserved (not global unicast)")),
            ("1::1", Some("reserved (not global unicast)")),
            // Global unicast outside every special range.
            ("2001:200::1", None),
            ("2606:4700::1111", None),
            ("2a00:1450::1", None),
            ("3fff:1000::1", None),
        ] {
            assert_eq!(kind(ip).as_deref(), want, "{ip}");
        }
    }

    /// Forms that carry an IPv4 address are judged by it.
    #[test]
    fn ipv6_forms_carrying_ipv4_are_judged_by_it() {
        for (ip, want) in [
            ("::ffff:127.0.0.1", Some("loopback (inside an IPv4-mapped address)")),
            ("::ffff:10.0.0.1", Some("private (inside an IPv4-mapped address)")),
            ("::ffff:93.184.216.34", None),
            ("64:ff9b::7f00:1", Some("loopback (inside a NAT64 address)")),
            ("64:ff9b::a9fe:a9fe", Some("link-local (inside a NAT64 address)")),
            ("64:ff9b::c612:1", Some("benchmarking (inside a NAT64 address)")),
            ("64:ff9b::5db8:d822", None),
            ("2002:7f00:1::", Some("loopback (inside a 6to4 address)")),
            ("2002:c0a8:101::1", Some("private (inside a 6to4 address)")),
            ("2002:c000:201::", Some("documentation (inside a 6to4 address)")),
            ("2002:5db8:d822::1", None),
        ] {
            assert_eq!(kind(ip).as_deref(), want, "{ip}");
        }
    }
}
