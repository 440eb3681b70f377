//! Query strings as a form parser reads them (`application/x-www-form-urlencoded`, what axum's
//! `Query` extractor uses), and which of them carry a token-looking parameter the server must
//! refuse (`token_in_query`).
//!
//! Written from the WHATWG URL standard's description, independently of the `form_urlencoded`
//! crate the server uses: split on `&`, drop empty pieces, the name is what comes before the first
//! `=`, `+` is a space, `%` and two hex digits is that byte (anything else after `%` stays as it
//! is), and the bytes become text with invalid UTF-8 replaced.

/// Parameter names that look like a token, compared ASCII case-insensitively after decoding.
pub const TOKEN_KEYS: [&str; 4] = ["token", "access_token", "bearer", "auth"];

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes one name or value.
pub fn decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The decoded names of a query string's parameters, in order.
pub fn names(query: &str) -> Vec<String> {
    query
        .split('&')
        .filter(|piece| !piece.is_empty())
        .map(|piece| decode(piece.split('=').next().unwrap_or_default()))
        .collect()
}

/// Must the server refuse this query string (`token_in_query`)?
pub fn carries_token(query: &str) -> bool {
    names(query).iter().any(|n| TOKEN_KEYS.iter().any(|k| n.eq_ignore_ascii_case(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_like_the_standard_says() {
        assert_eq!(decode("a+b%20c"), "a b c");
        assert_eq!(decode("%74oken"), "token");
        assert_eq!(decode("%7"), "%7");
        assert_eq!(decode("%"), "%");
        assert_eq!(decode("%zz"), "%zz");
        assert_eq!(decode("%FF"), "\u{fffd}");
        assert_eq!(names("a=1&&b&=c&%74=x"), ["a", "b", "", "t"]);
        assert!(carries_token("x=1&ToKeN=2"));
        assert!(!carries_token("x=token"));
    }
}
