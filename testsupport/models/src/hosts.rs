//! Which addresses are loopback, as the Host allowlist must see them: 127.0.0.0/8, `::1`, and
//! IPv4-mapped IPv6 addresses of 127.0.0.0/8. (The one loopback name is `localhost`.)

use std::net::IpAddr;

pub fn is_loopback_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[0] == 127,
        IpAddr::V6(v6) => {
            v6.segments() == [0, 0, 0, 0, 0, 0, 0, 1] || v6.to_ipv4_mapped().is_some_and(|v4| v4.octets()[0] == 127)
        }
    }
}
