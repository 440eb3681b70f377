#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use super::*;

fn policy() -> AccessPolicy {
    AccessPolicy::new("127.0.0.1:7878".parse().unwrap(), &[], &[]).unwrap()
}

#[test]
fn loopback_hosts_pass_and_look_alikes_do_not() {
    let p = policy();
    for ok in [
        "localhost",
        "localhost:7878",
        "LOCALHOST:7878",
        "localhost.:7878",
        "127.0.0.1:7878",
        "127.1.2.3",
        "[::1]:7878",
        "[0:0:0:0:0:0:0:1]",
        "[::ffff:127.0.0.1]:1",
    ] {
        assert!(p.host_allowed(Some(ok)), "{ok} should pass");
    }
    for bad in [
        "localhost.evil.com",
        "localhost.evil.com:7878",
        "evil-localhost:7878",
        "evil.com",
        "localhost..",
        "127.0.0.1.nip.io",
        "2130706433",
        "127.1",
        "0x7f.0.0.1",
        "user@localhost",
        "localhost:78x",
        "localhost:123456",
        "::1",
        "[::1",
        "[::2]:7878",
        "[fe80::1%25eth0]",
        "local host",
        "",
        "10.0.0.1",
        "0.0.0.0",
    ] {
        assert!(!p.host_allowed(Some(bad)), "{bad} should be refused");
    }
    assert!(!p.host_allowed(None));
}

#[test]
fn configured_hosts_and_the_listen_ip_are_allowed() {
    let p = AccessPolicy::new("10.1.2.3:7878".parse().unwrap(), &["Ensemble.Internal".into()], &[]).unwrap();
    assert!(p.host_allowed(Some("10.1.2.3:7878")));
    assert!(p.host_allowed(Some("ensemble.internal:7878")));
    assert!(p.host_allowed(Some("ENSEMBLE.INTERNAL.")));
    assert!(!p.host_allowed(Some("ensemble.internal.evil.com")));
    let any = AccessPolicy::new("0.0.0.0:1".parse().unwrap(), &["*".into()], &[]).unwrap();
    assert!(any.host_allowed(Some("anything.example")));
    assert!(!any.host_allowed(Some("bad host")));
    assert!(AccessPolicy::new("0.0.0.0:1".parse().unwrap(), &["a/b".into()], &[]).is_err());
    assert!(AccessPolicy::new("0.0.0.0:1".parse().unwrap(), &["a:1".into()], &[]).is_err());
}

#[test]
fn origins_by_bypass_class() {
    let p = AccessPolicy::new("127.0.0.1:7878".parse().unwrap(), &[], &["https://app.example".into()]).unwrap();
    let host = Some("localhost:7878");
    // Non-browser clients send no Origin.
    assert!(p.origin_allowed(None, host));
    // Same origin.
    assert!(p.origin_allowed(Some("http://localhost:7878"), host));
    assert!(p.origin_allowed(Some("HTTP://LOCALHOST:7878"), host));
    assert!(p.origin_allowed(Some("http://127.0.0.1:7878"), Some("127.0.0.1:7878")));
    assert!(p.origin_allowed(Some("http://[::1]:7878"), Some("[::1]:7878")));
    assert!(p.origin_allowed(Some("http://localhost"), Some("localhost")));
    // Trusted.
    assert!(p.origin_allowed(Some("https://app.example"), host));
    assert!(p.origin_allowed(Some("https://app.example:443"), host));
    let refused = [
        ("subdomain confusion", "http://localhost.evil.com:7878"),
        ("suffix confusion", "http://evil-localhost:7878"),
        ("scheme mismatch", "https://localhost:7878"),
        ("port mismatch", "http://localhost:7879"),
        ("default port", "http://localhost"),
        ("null", "null"),
        ("ws scheme", "ws://localhost:7878"),
        ("file scheme", "file://"),
        ("userinfo", "http://localhost:7878@evil.com"),
        ("path", "http://localhost:7878/x"),
        ("other loopback name", "http://127.0.0.1:7878"),
        ("trusted scheme mismatch", "http://app.example"),
        ("trusted subdomain", "https://evil.app.example"),
        ("empty", ""),
    ];
    for (class, origin) in refused {
        assert!(!p.origin_allowed(Some(origin), host), "{class}: {origin} should be refused");
    }
    // IPv6 forms are compared as addresses.
    assert!(p.origin_allowed(Some("http://[0::1]:7878"), Some("[::1]:7878")));
    assert!(!p.origin_allowed(Some("http://[::2]:7878"), Some("[::1]:7878")));
}

#[test]
fn duplicate_host_or_origin_headers_are_refused() {
    let p = policy();
    let mut h = HeaderMap::new();
    h.append(header::HOST, HeaderValue::from_static("localhost"));
    assert_eq!(p.check(&h), Ok(()));
    h.append(header::HOST, HeaderValue::from_static("evil.com"));
    assert_eq!(p.check(&h), Err(Refusal::Host));
    let mut h = HeaderMap::new();
    h.append(header::HOST, HeaderValue::from_static("localhost"));
    h.append(header::ORIGIN, HeaderValue::from_static("http://localhost"));
    h.append(header::ORIGIN, HeaderValue::from_static("http://evil.com"));
    assert_eq!(p.check(&h), Err(Refusal::Origin));
}

const SECRET: &str = "0123456789abcdef0123456789abcdef";

fn token() -> Token {
    Token::new(SECRET.into())
}

#[test]
fn bearer_header_forms() {
    let t = token();
    let with = |v: &str| {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        authenticate(&t, &h, false).is_some()
    };
    assert!(with(&format!("Bearer {SECRET}")));
    assert!(with(&format!("bearer {SECRET}")));
    assert!(with(&format!("Bearer  {SECRET} ")));
    assert!(!with("Bearer "));
    assert!(!with("Bearer    "));
    assert!(!with(SECRET));
    assert!(!with(&format!("Basic {SECRET}")));
    assert!(!with(&format!("Bearer {}", &SECRET[1..])));
    assert!(!with(&format!("Bearer {SECRET}x")));
    assert!(authenticate(&t, &HeaderMap::new(), false).is_none());
    assert_eq!(format!("{t:?}"), "Token(<redacted>)");
}

#[test]
fn subprotocol_token_only_on_websocket_upgrades() {
    let t = token();
    let mut h = HeaderMap::new();
    h.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_str(&format!("ensemble.v1, ensemble.bearer.{SECRET}")).unwrap(),
    );
    assert!(!is_websocket_upgrade(&Method::GET, &h));
    assert!(authenticate(&t, &h, false).is_none(), "not the room WebSocket's upgrade");
    assert_eq!(authenticate(&t, &h, true), Some(Authenticated::Subprotocol));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    assert!(!is_websocket_upgrade(&Method::GET, &h), "no Connection: upgrade");
    h.insert(header::CONNECTION, HeaderValue::from_static("keep-alive, Upgrade"));
    assert!(is_websocket_upgrade(&Method::GET, &h));
    assert!(!is_websocket_upgrade(&Method::POST, &h), "an upgrade is a GET");
    h.insert(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static("ensemble.bearer.wrong"));
    assert!(authenticate(&t, &h, true).is_none());
    h.insert(
        header::SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_str(&format!("ensemble.bearer.{SECRET},ensemble.bearer.other")).unwrap(),
    );
    assert!(authenticate(&t, &h, true).is_none(), "two bearer entries are ambiguous");
}

#[test]
fn a_bearer_entry_needs_the_app_protocol_beside_it() {
    let with = |v: &str| {
        let mut h = HeaderMap::new();
        h.insert(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_str(v).unwrap());
        bearer_without_app_protocol(&h)
    };
    assert!(with("ensemble.bearer.x"));
    assert!(with("other, ensemble.bearer.x"));
    assert!(!with("ensemble.v1, ensemble.bearer.x"));
    assert!(!with("ensemble.bearer.x,ensemble.v1"));
    assert!(!with("ensemble.v1"));
    assert!(!with("chat"));
    assert!(!bearer_without_app_protocol(&HeaderMap::new()));
    // Two headers count as one list.
    let mut h = HeaderMap::new();
    h.append(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static("ensemble.bearer.x"));
    h.append(header::SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static("ensemble.v1"));
    assert!(!bearer_without_app_protocol(&h));
}

fn write_private(path: &Path, content: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn token_files_are_validated() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    write_private(&f, format!("  {SECRET}\n").as_bytes());
    let (t, src) = load_token(Some(&f), false, dir.path()).unwrap();
    assert!(t.matches(SECRET));
    assert_eq!(src, TokenSource::File(f.clone()));
    write_private(&f, b"\n");
    assert!(matches!(load_token(Some(&f), false, dir.path()), Err(SecurityError::EmptyToken(_))));
    write_private(&f, b"short");
    assert!(matches!(load_token(Some(&f), false, dir.path()), Err(SecurityError::ShortToken { len: 5, .. })));
    write_private(&f, format!("{SECRET} with spaces").as_bytes());
    assert!(matches!(load_token(Some(&f), false, dir.path()), Err(SecurityError::TokenCharacters(_))));
    write_private(&f, &[0xff; 40]);
    assert!(matches!(load_token(Some(&f), false, dir.path()), Err(SecurityError::TokenCharacters(_))));
    assert!(matches!(
        load_token(Some(Path::new("rel/t")), false, dir.path()),
        Err(SecurityError::RelativeTokenFile(_))
    ));

    // Generated once with 0600, then read back.
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let (t1, src) = load_token(None, false, &data).unwrap();
    assert!(matches!(src, TokenSource::Generated(_)));
    assert_eq!(t1.expose().len(), 64);
    let mode = std::fs::metadata(data.join(TOKEN_FILE)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let (t2, src) = load_token(None, false, &data).unwrap();
    assert!(matches!(src, TokenSource::DataDir(_)));
    assert!(t2.matches(t1.expose()));
    std::fs::set_permissions(data.join(TOKEN_FILE), std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(load_token(None, false, &data), Err(SecurityError::DataDirTokenPermissions { .. })));
    // The escape hatch is for --token-file (secret mounts), never for the data dir's own token.
    assert!(matches!(load_token(None, true, &data), Err(SecurityError::DataDirTokenPermissions { .. })));
}

#[test]
fn shared_token_files_are_refused_unless_allowed_and_symlinks_count_by_their_target() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    for mode in [0o644, 0o640, 0o604, 0o620, 0o602, 0o660] {
        std::fs::write(&f, SECRET).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
        match load_token(Some(&f), false, dir.path()) {
            Err(e @ SecurityError::TokenPermissions { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(&format!("{mode:o}")) && msg.contains("chmod 600"), "{msg}");
                assert!(msg.contains("--allow-shared-token-file"), "{msg}");
            }
            other => panic!("mode {mode:o}: {other:?}"),
        }
        assert!(load_token(Some(&f), true, dir.path()).unwrap().0.matches(SECRET), "{mode:o} allowed");
    }
    // A private symlink to a shared file: the target's mode counts.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    assert!(matches!(load_token(Some(&link), false, dir.path()), Err(SecurityError::TokenPermissions { .. })));
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(load_token(Some(&link), false, dir.path()).unwrap().0.matches(SECRET));
}

#[test]
fn only_short_regular_files_are_token_files() {
    let dir = tempfile::tempdir().unwrap();
    let not_files = [
        (PathBuf::from("/dev/zero"), "a character device"),
        (PathBuf::from("/dev/null"), "a character device"),
        (dir.path().to_path_buf(), "a directory"),
    ];
    for (p, kind) in &not_files {
        match load_token(Some(p), true, dir.path()) {
            Err(SecurityError::NotARegularFile { kind: k, .. }) => assert_eq!(k, *kind, "{}", p.display()),
            other => panic!("{}: {other:?}", p.display()),
        }
    }
    // A FIFO nobody writes to: refused at once, not waited on.
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    assert!(matches!(
        load_token(Some(&fifo), true, dir.path()),
        Err(SecurityError::NotARegularFile { kind: "a FIFO", .. })
    ));
    // Longer than the limit, even if it starts with a good token.
    let long = dir.path().join("long");
    let mut content = format!("{SECRET}\n").into_bytes();
    content.resize(MAX_TOKEN_FILE_BYTES as usize + 1, b' ');
    write_private(&long, &content);
    assert!(matches!(load_token(Some(&long), false, dir.path()), Err(SecurityError::TokenFileTooLong { .. })));
    content.truncate(MAX_TOKEN_FILE_BYTES as usize);
    write_private(&long, &content);
    assert!(load_token(Some(&long), false, dir.path()).unwrap().0.matches(SECRET));
    // A missing file.
    assert!(matches!(load_token(Some(&dir.path().join("nope")), false, dir.path()), Err(SecurityError::Read { .. })));
}

#[test]
fn non_loopback_needs_a_token_file() {
    let f = Path::new("/t");
    assert!(check_listen("127.0.0.1:1".parse().unwrap(), None).is_ok());
    assert!(check_listen("[::1]:1".parse().unwrap(), None).is_ok());
    assert!(check_listen("0.0.0.0:1".parse().unwrap(), None).is_err());
    assert!(check_listen("[::]:1".parse().unwrap(), None).is_err());
    assert!(check_listen("0.0.0.0:1".parse().unwrap(), Some(f)).is_ok());
}

#[test]
fn token_looking_query_parameters_are_detected() {
    assert!(query_carries_token(Some("after=3&token=x")));
    assert!(query_carries_token(Some("Access_Token=x")));
    assert!(query_carries_token(Some("token")));
    assert!(query_carries_token(Some("a=1&&bearer=")));
    // Percent-encoded and `+` forms are decoded before matching.
    assert!(query_carries_token(Some("%74oken=x")));
    assert!(query_carries_token(Some("%54%4F%4B%45%4E=x")));
    assert!(query_carries_token(Some("access%5ftoken=x")));
    assert!(query_carries_token(Some("after=1&a%75th=x")));
    assert!(!query_carries_token(Some("after=3")));
    assert!(!query_carries_token(Some("x=token")));
    assert!(!query_carries_token(Some("access+token=x")), "`+` is a space");
    assert!(!query_carries_token(Some("%2574oken=x")), "decoded once, as the form parser does");
    assert!(!query_carries_token(None));
}

#[test]
fn absolute_form_targets_are_judged_by_their_authority() {
    let p = AccessPolicy::new("127.0.0.1:7878".parse().unwrap(), &["ensemble.internal".into()], &[]).unwrap();
    let ok =
        |scheme: Option<&str>, authority: Option<&str>, host: &str| p.target_allowed(scheme, authority, Some(host));
    // Origin-form: nothing to judge here (the Host check is separate).
    assert!(ok(None, None, "evil.example"));
    assert!(ok(Some("http"), Some("127.0.0.1:7878"), "127.0.0.1:7878"));
    assert!(ok(Some("HTTP"), Some("LOCALHOST:7878"), "localhost:7878"));
    assert!(ok(Some("http"), Some("localhost"), "localhost:80"));
    assert!(ok(Some("http"), Some("localhost:80"), "localhost"));
    assert!(ok(Some("https"), Some("ensemble.internal"), "ensemble.internal:443"));
    assert!(ok(Some("http"), Some("[::1]:7878"), "[0::1]:7878"));
    for (class, scheme, authority, host) in [
        ("foreign authority", Some("http"), Some("evil.example"), "127.0.0.1:7878"),
        ("foreign authority, same Host", Some("http"), Some("evil.example"), "evil.example"),
        ("other loopback than Host", Some("http"), Some("localhost:7878"), "127.0.0.1:7878"),
        ("port mismatch", Some("http"), Some("127.0.0.1:7879"), "127.0.0.1:7878"),
        ("default port mismatch", Some("http"), Some("127.0.0.1"), "127.0.0.1:7878"),
        ("https default port", Some("https"), Some("localhost"), "localhost:80"),
        ("userinfo", Some("http"), Some("user@127.0.0.1:7878"), "127.0.0.1:7878"),
        ("other scheme", Some("ftp"), Some("127.0.0.1:7878"), "127.0.0.1:7878"),
        ("authority-form", None, Some("127.0.0.1:7878"), "127.0.0.1:7878"),
        ("decimal IP", Some("http"), Some("2130706433"), "2130706433"),
    ] {
        assert!(!ok(scheme, authority, host), "{class}: {scheme:?} {authority:?} with Host {host}");
    }
    assert!(!p.target_allowed(Some("http"), Some("127.0.0.1"), None), "no Host");
    assert_eq!(target_authority(None, None), TargetAuthority::None);
    assert_eq!(
        target_authority(Some("https"), Some("Localhost.")),
        TargetAuthority::Named(HostName::Name("localhost".into()), 443)
    );
    assert_eq!(target_authority(None, Some("localhost:1")), TargetAuthority::Invalid);
}
