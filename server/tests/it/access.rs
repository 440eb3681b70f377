//! Access control end to end, against the real binary: the bearer token (header and WebSocket
//! subprotocol), the Host allowlist and the Origin policy with the known bypass classes by name,
//! the refusal to expose a non-loopback listener without a token file, the generated token, and
//! that no token ever reaches the logs.

use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::*;

/// Sends one raw HTTP/1.1 request (so Host and every header are exactly what the test says) and
/// returns the status and the body as JSON (or text).
async fn raw(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value, String) {
    let mut tcp = tokio::time::timeout(WAIT, TcpStream::connect(addr)).await.unwrap().unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut out)).await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status: u16 = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let json = serde_json::from_str(body.trim()).unwrap_or(Value::Null);
    (status, json, head.to_owned())
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

#[tokio::test]
async fn rest_needs_the_token_except_health() {
    let s = Server::start(&[]).await;
    let plain = reqwest::Client::new();
    let status = |r: reqwest::Response| r.status();
    // Public probes, and the document generators fetch (it holds no data).
    assert_eq!(status(plain.get(s.url("/healthz")).send().await.unwrap()), StatusCode::OK);
    // `/readyz` says ready or not to anyone; the engine only to a caller with the token.
    let (st, ready) = decode(plain.get(s.url("/readyz")).send().await.unwrap()).await;
    assert_eq!((st, ready), (StatusCode::OK, serde_json::json!({"status": "ok"})));
    let wrong = plain.get(s.url("/readyz")).header("authorization", "Bearer wrong").send().await.unwrap();
    assert_eq!(decode(wrong).await.1, serde_json::json!({"status": "ok"}));
    let (_, ready) = s.get("/readyz").await;
    assert_eq!(ready["database"], "sqlite", "{ready}");
    let spec = plain.get(s.url("/openapi.json")).send().await.unwrap();
    assert_eq!(spec.status(), StatusCode::OK);
    assert_eq!(spec.json::<serde_json::Value>().await.unwrap()["openapi"], "3.1.0");
    // ... but not from a foreign origin or host: those checks come before the token's.
    let foreign = plain.get(s.url("/openapi.json")).header("origin", "http://evil.example").send().await.unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    // Everything else, including metrics.
    for path in ["/v1/rooms", "/v1/providers", "/metrics", "/v1/rooms/r/events"] {
        let res = plain.get(s.url(path)).send().await.unwrap();
        assert_eq!(res.headers()["www-authenticate"], "Bearer realm=\"ensemble\"");
        let (st, body) = decode(res).await;
        assert_eq!(error_code(st, &body, StatusCode::UNAUTHORIZED), "unauthorized", "{path}");
    }
    // Wrong, empty, whitespace-only, truncated, extended and wrong-scheme credentials.
    let wrong = [
        "Bearer nope".to_owned(),
        "Bearer ".to_owned(),
        "Bearer     ".to_owned(),
        format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]),
        format!("Bearer {TOKEN}x"),
        format!("Basic {TOKEN}"),
        TOKEN.to_owned(),
    ];
    for auth in &wrong {
        let (st, body) =
            decode(plain.get(s.url("/v1/rooms")).header("authorization", auth).send().await.unwrap()).await;
        assert_eq!(error_code(st, &body, StatusCode::UNAUTHORIZED), "unauthorized", "{auth}");
    }
    // Two Authorization headers are refused even if one is right.
    let (st, _, _) = raw(
        &s.addr,
        "GET",
        "/v1/rooms",
        &[("Host", &s.addr), ("Authorization", &bearer()), ("Authorization", "Bearer nope")],
        "",
    )
    .await;
    assert_eq!(st, 401);
    // The right token, any case of the scheme (RFC 7235).
    for auth in [bearer(), format!("bearer {TOKEN}")] {
        let res = plain.get(s.url("/v1/rooms")).header("authorization", auth).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
    }
    // A token in the URL is refused outright (it would end up in histories and proxy logs).
    let (st, body) = decode(
        plain.get(s.url(&format!("/v1/rooms?token={TOKEN}"))).header("authorization", bearer()).send().await.unwrap(),
    )
    .await;
    assert_eq!(error_code(st, &body, StatusCode::BAD_REQUEST), "token_in_query");
    let (st, body) =
        decode(plain.get(s.url(&format!("/v1/rooms/r/ws?access_token={TOKEN}"))).send().await.unwrap()).await;
    assert_eq!(error_code(st, &body, StatusCode::BAD_REQUEST), "token_in_query");
}

#[tokio::test]
async fn websocket_upgrades_take_the_token_as_header_or_subprotocol() {
    let s = Server::start(&[]).await;
    let url = format!("ws://{}/v1/rooms/r/ws", s.addr);
    let connect = |protocols: Option<String>, auth: Option<String>| {
        let url = url.clone();
        async move {
            let mut req = url.into_client_request().unwrap();
            if let Some(p) = protocols {
                req.headers_mut().insert("sec-websocket-protocol", p.parse().unwrap());
            }
            if let Some(a) = auth {
                req.headers_mut().insert("authorization", a.parse().unwrap());
            }
            tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req)).await.unwrap()
        }
    };
    let refused = |r: Result<_, tokio_tungstenite::tungstenite::Error>| match r {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => res.status().as_u16(),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => 101,
    };
    assert_eq!(refused(connect(None, None).await), 401);
    assert_eq!(refused(connect(Some("ensemble.v1, ensemble.bearer.wrong".into()), None).await), 401);
    assert_eq!(refused(connect(Some("ensemble.v1".into()), None).await), 401);
    assert_eq!(refused(connect(None, Some("Bearer wrong".into())).await), 401);

    // A browser offers the application protocol and the bearer entry: the server picks the former,
    // so the token is not echoed back.
    let (mut ws, res) = connect(Some(format!("ensemble.v1, ensemble.bearer.{TOKEN}")), None).await.unwrap();
    assert_eq!(res.headers()["sec-websocket-protocol"], "ensemble.v1");
    let mut w = Ws { stream: ws };
    w.hello().await;
    ws = w.stream;
    drop(ws);
    // Only the bearer entry offered: the only answer would echo the token, so the handshake is
    // refused with a code that says what to offer (whether or not the token is right).
    for entry in [format!("ensemble.bearer.{TOKEN}"), "ensemble.bearer.wrong".to_owned()] {
        let (st, body, head) = raw(
            &s.addr,
            "GET",
            "/v1/rooms/r/ws",
            &[
                ("Host", &s.addr),
                ("Upgrade", "websocket"),
                ("Connection", "Upgrade"),
                ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                ("Sec-WebSocket-Protocol", &entry),
            ],
            "",
        )
        .await;
        assert_eq!((st, body["error"]["code"].as_str()), (400, Some("app_protocol_required")), "{body}");
        assert!(!head.contains(TOKEN) && !body.to_string().contains(TOKEN), "{head}\n{body}");
    }
    assert_eq!(refused(connect(Some(format!("ensemble.bearer.{TOKEN}")), None).await), 400);
    // The header works for non-browser clients; offered protocols get `ensemble.v1` or nothing.
    let (ws, res) = connect(None, Some(bearer())).await.unwrap();
    assert!(!res.headers().contains_key("sec-websocket-protocol"));
    let mut w = Ws { stream: ws };
    w.hello().await;
}

#[tokio::test]
async fn the_subprotocol_token_opens_the_room_websocket_and_nothing_else() {
    let s = Server::start(&[]).await;
    let subprotocol = format!("ensemble.v1, ensemble.bearer.{TOKEN}");
    let upgrade = |path: &'static str, method: &'static str| {
        let (addr, subprotocol) = (s.addr.clone(), subprotocol.clone());
        async move {
            raw(
                &addr,
                method,
                path,
                &[
                    ("Host", &addr),
                    ("Content-Type", "application/json"),
                    ("Upgrade", "websocket"),
                    ("Connection", "Upgrade"),
                    ("Sec-WebSocket-Version", "13"),
                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                    ("Sec-WebSocket-Protocol", &subprotocol),
                ],
                if method == "POST" { r#"{"sessionId":"sneaky"}"# } else { "" },
            )
            .await
        }
    };
    // The issue's request: a POST dressed as an upgrade, with the token as a subprotocol entry.
    let (st, body, _) = upgrade("/v1/rooms/r/sessions", "POST").await;
    assert_eq!((st, body["error"]["code"].as_str()), (401, Some("unauthorized")), "{body}");
    for path in ["/v1/rooms", "/v1/rooms/r/sessions", "/v1/rooms/r/events", "/metrics"] {
        let (st, body, _) = upgrade(path, "GET").await;
        assert_eq!(st, 401, "{path}: {body}");
    }
    // Without the upgrade headers, not even on the room WebSocket's route.
    let (st, _, _) =
        raw(&s.addr, "GET", "/v1/rooms/r/ws", &[("Host", &s.addr), ("Sec-WebSocket-Protocol", &subprotocol)], "").await;
    assert_eq!(st, 401);
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    assert_eq!(list["data"], json!([]), "no session was created");
    // The room WebSocket itself.
    let mut req = format!("ws://{}/v1/rooms/r/ws", s.addr).into_client_request().unwrap();
    req.headers_mut().insert("sec-websocket-protocol", subprotocol.parse().unwrap());
    let (ws, res) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req)).await.unwrap().unwrap();
    assert_eq!(res.headers()["sec-websocket-protocol"], "ensemble.v1");
    Ws { stream: ws }.hello().await;
}

#[tokio::test]
async fn token_looking_query_names_are_refused_however_encoded() {
    let s = Server::start(&[]).await;
    for query in [
        "token=x",
        "%74oken=x",
        "%74%6F%6B%65%6E=x",
        "TOKEN=x",
        "%54oKeN=x",
        "after=0&access%5Ftoken=x",
        "access_token",
        "bear%65r=x",
        "a%75th=x",
    ] {
        for path in ["/v1/rooms", "/v1/rooms/r/ws"] {
            let (st, body) =
                decode(reqwest::Client::new().get(s.url(&format!("{path}?{query}"))).send().await.unwrap()).await;
            assert_eq!(error_code(st, &body, StatusCode::BAD_REQUEST), "token_in_query", "{path}?{query}");
        }
    }
    // Other names, and token-looking values, are not refused.
    for query in ["after=0", "x=token", "tokens=1", "access+token=1", "%2574oken=1"] {
        let (st, body) = s.get(&format!("/v1/rooms/r/events?{query}")).await;
        assert_ne!(body["error"]["code"], "token_in_query", "{query}: {st} {body}");
    }
}

#[tokio::test]
async fn an_absolute_form_request_target_is_judged_by_its_authority() {
    let s = Server::start(&[]).await;
    let port = s.addr.rsplit(':').next().unwrap().to_owned();
    let auth = bearer();
    let get = |target: String, host: String| {
        let (addr, auth) = (s.addr.clone(), auth.clone());
        async move { raw(&addr, "GET", &target, &[("Host", &host), ("Authorization", &auth)], "").await }
    };
    // The authority the target names, agreeing with the Host header: served.
    for (target, host) in [
        (format!("http://127.0.0.1:{port}/v1/rooms"), format!("127.0.0.1:{port}")),
        (format!("http://LOCALHOST:{port}/v1/rooms"), format!("localhost:{port}")),
    ] {
        let (st, body, _) = get(target.clone(), host).await;
        assert_eq!(st, 200, "{target}: {body}");
    }
    // Any other authority, or one that differs from the Host header: refused like a bad Host.
    for (class, target, host) in [
        ("the issue's request", "http://evil.example/v1/rooms".to_owned(), format!("127.0.0.1:{port}")),
        ("foreign authority with port", format!("http://evil.example:{port}/v1/rooms"), format!("127.0.0.1:{port}")),
        ("other loopback name than Host", format!("http://localhost:{port}/v1/rooms"), format!("127.0.0.1:{port}")),
        ("port mismatch", "http://127.0.0.1:1/v1/rooms".to_owned(), format!("127.0.0.1:{port}")),
        ("default port", "http://127.0.0.1/v1/rooms".to_owned(), format!("127.0.0.1:{port}")),
        ("https default port", "https://127.0.0.1/v1/rooms".to_owned(), format!("127.0.0.1:{port}")),
        ("other scheme", format!("ftp://127.0.0.1:{port}/v1/rooms"), format!("127.0.0.1:{port}")),
        ("userinfo", format!("http://u@127.0.0.1:{port}/v1/rooms"), format!("127.0.0.1:{port}")),
        ("the WebSocket route", "http://evil.example/v1/rooms/r/ws".to_owned(), format!("127.0.0.1:{port}")),
    ] {
        let (st, body, _) = get(target.clone(), host).await;
        assert!(matches!(st, 400 | 403), "{class}: {target} -> {st} {body}");
        if st == 403 {
            assert_eq!(body["error"]["code"], "host_not_allowed", "{class}");
        }
    }
}

#[tokio::test]
async fn hosts_outside_the_allowlist_are_refused_by_name() {
    let s = Server::start(&["--allowed-hosts", "ensemble.internal"]).await;
    let port = s.addr.rsplit(':').next().unwrap().to_owned();
    let ok = [
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("localhost.:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
        format!("ensemble.internal:{port}"),
    ];
    for host in &ok {
        let (st, body, _) = raw(&s.addr, "GET", "/v1/rooms", &[("Host", host), ("Authorization", &bearer())], "").await;
        assert_eq!(st, 200, "{host}: {body}");
    }
    let refused = [
        ("rebinding", format!("evil.example:{port}")),
        ("subdomain confusion", format!("localhost.evil.com:{port}")),
        ("suffix confusion", format!("evil-localhost:{port}")),
        ("configured-name suffix", format!("ensemble.internal.evil.com:{port}")),
        ("nip.io", format!("127.0.0.1.nip.io:{port}")),
        ("decimal IP", format!("2130706433:{port}")),
        ("double trailing dot", format!("localhost..:{port}")),
        ("userinfo", format!("user@localhost:{port}")),
        ("unbracketed IPv6", "::1".to_owned()),
        ("other IPv6", format!("[::2]:{port}")),
        ("wildcard address", format!("0.0.0.0:{port}")),
    ];
    for (class, host) in &refused {
        let (st, body, _) = raw(&s.addr, "GET", "/v1/rooms", &[("Host", host), ("Authorization", &bearer())], "").await;
        assert_eq!(st, 403, "{class}: {host}");
        assert_eq!(body["error"]["code"], "host_not_allowed", "{class}");
        // The WebSocket upgrade too.
        let (st, _, _) = raw(
            &s.addr,
            "GET",
            "/v1/rooms/r/ws",
            &[
                ("Host", host),
                ("Authorization", &bearer()),
                ("Upgrade", "websocket"),
                ("Connection", "Upgrade"),
                ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ],
            "",
        )
        .await;
        assert_eq!(st, 403, "ws {class}: {host}");
    }
    // Probes answer whatever the Host (orchestrators use pod IPs).
    let (st, _, _) = raw(&s.addr, "GET", "/healthz", &[("Host", "10.1.2.3:7878")], "").await;
    assert_eq!(st, 200);
}

#[tokio::test]
async fn origins_other_than_our_own_or_trusted_are_refused_by_name() {
    let s = Server::start(&["--trusted-origins", "https://app.example"]).await;
    let port: u16 = s.addr.rsplit(':').next().unwrap().parse().unwrap();
    let host = format!("127.0.0.1:{port}");
    let send = |origin: Option<String>| {
        let (addr, host) = (s.addr.clone(), host.clone());
        async move {
            let mut h = vec![("Host", host.as_str()), ("Content-Type", "application/json")];
            let auth = bearer();
            h.push(("Authorization", &auth));
            let o;
            if let Some(origin) = origin {
                o = origin;
                h.push(("Origin", &o));
            }
            raw(&addr, "POST", "/v1/rooms/r/sessions", &h, "{}").await
        }
    };
    // No Origin (a non-browser client), same origin, a trusted origin.
    for origin in [None, Some(format!("http://127.0.0.1:{port}")), Some("https://app.example".to_owned())] {
        let (st, body, _) = send(origin.clone()).await;
        assert_eq!(st, 201, "{origin:?}: {body}");
    }
    let refused = [
        ("cross site", "https://evil.example".to_owned()),
        ("subdomain confusion", format!("http://127.0.0.1.evil.com:{port}")),
        ("suffix confusion", format!("http://evil-localhost:{port}")),
        ("scheme mismatch", format!("https://127.0.0.1:{port}")),
        ("port mismatch", format!("http://127.0.0.1:{}", port.wrapping_add(1))),
        ("default port", "http://127.0.0.1".to_owned()),
        ("other loopback name", format!("http://localhost:{port}")),
        ("null", "null".to_owned()),
        ("ws scheme", format!("ws://127.0.0.1:{port}")),
        ("trusted host, wrong scheme", "http://app.example".to_owned()),
        ("trusted host, subdomain", "https://evil.app.example".to_owned()),
        ("IPv6 other", format!("http://[::2]:{port}")),
    ];
    for (class, origin) in &refused {
        let (st, body, _) = send(Some(origin.clone())).await;
        assert_eq!(st, 403, "{class}: {origin}");
        assert_eq!(body["error"]["code"], "origin_not_allowed", "{class}");
    }
    // Cross-site WebSocket hijacking: a foreign page that even knows the token is refused.
    let mut req = format!("ws://{}/v1/rooms/r/ws", s.addr).into_client_request().unwrap();
    req.headers_mut().insert("origin", "https://evil.example".parse().unwrap());
    req.headers_mut()
        .insert("sec-websocket-protocol", format!("ensemble.v1, ensemble.bearer.{TOKEN}").parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => assert_eq!(res.status().as_u16(), 403),
        other => panic!("CSWSH was not refused: {:?}", other.map(|(_, r)| r.status())),
    }
    // A trusted origin may use REST from a browser: its preflight (no token) is answered with CORS
    // headers, and so are its requests; nobody else gets CORS headers.
    let http = reqwest::Client::new();
    let pre = http
        .request(reqwest::Method::OPTIONS, s.url("/v1/rooms"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "authorization")
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), StatusCode::NO_CONTENT);
    assert_eq!(pre.headers()["access-control-allow-origin"], "https://app.example");
    assert!(pre.headers()["access-control-allow-headers"].to_str().unwrap().contains("authorization"));
    let res =
        http.get(s.url("/v1/rooms")).header("origin", "https://app.example").bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["access-control-allow-origin"], "https://app.example");
    let same = http.get(s.url("/v1/rooms")).bearer_auth(TOKEN).send().await.unwrap();
    assert!(!same.headers().contains_key("access-control-allow-origin"));
    let pre = http
        .request(reqwest::Method::OPTIONS, s.url("/v1/rooms"))
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "GET")
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), StatusCode::FORBIDDEN);
    assert!(!pre.headers().contains_key("access-control-allow-origin"));
    // The session list holds only the three allowed starts.
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn simple_cross_site_posts_cannot_act() {
    // A form or `text/plain` fetch needs no preflight; it must not reach a handler.
    let s = Server::start(&[]).await;
    let host = s.addr.clone();
    // Without the token: 401 whatever the body.
    let (st, _, _) =
        raw(&s.addr, "POST", "/v1/rooms/r/sessions", &[("Host", &host), ("Content-Type", "text/plain")], "{}").await;
    assert_eq!(st, 401);
    // Even with the token, only JSON is accepted.
    let (st, body, _) = raw(
        &s.addr,
        "POST",
        "/v1/rooms/r/sessions",
        &[("Host", &host), ("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", &bearer())],
        "sessionId=x",
    )
    .await;
    assert_eq!((st, body["error"]["code"].as_str()), (415, Some("unsupported_media_type")));
    let (_, list) = s.get("/v1/rooms/r/sessions").await;
    assert_eq!(list["data"], json!([]));
}

#[tokio::test]
async fn a_non_loopback_listener_needs_a_token_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(["serve", "--listen", "0.0.0.0:0", "--data-dir"])
        .arg(tmp.path().join("data"))
        .stdin(Stdio::null())
        .output();
    let out = tokio::time::timeout(WAIT, out).await.unwrap().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refusing to listen on 0.0.0.0:0 without --token-file"), "{stderr}");
    // Nothing was created: the refusal comes before the store.
    assert!(!tmp.path().join("data").join("ensemble.sqlite3").exists());

    // With a token file it starts (and still refuses foreign Hosts).
    let s = Server::start(&["--listen", "0.0.0.0:0"]).await;
    let port = s.addr.rsplit(':').next().unwrap();
    let local = format!("127.0.0.1:{port}");
    let (st, _, _) = raw(&local, "GET", "/v1/rooms", &[("Host", &local), ("Authorization", &bearer())], "").await;
    assert_eq!(st, 200);
    let (st, _, _) =
        raw(&local, "GET", "/v1/rooms", &[("Host", "evil.example"), ("Authorization", &bearer())], "").await;
    assert_eq!(st, 403);

    // Bad token files are refused with a clear message.
    for (content, expect) in [
        ("\n", "is empty"),
        ("short", "at least 32 are required"),
        ("has spaces in it but is long enough", "may only contain"),
    ] {
        let f = tmp.path().join("tok");
        write_private(&f, content);
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(tmp.path().join("data2"))
            .arg("--token-file")
            .arg(&f)
            .stdin(Stdio::null())
            .output();
        let out = tokio::time::timeout(WAIT, out).await.unwrap().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{content:?}: {stderr}");
    }
}

#[tokio::test]
async fn a_generated_token_is_private_printed_once_and_kept() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let start = || async {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(tmp.path().join("data"))
            .arg("--default-cwd")
            .arg(tmp.path())
            .arg("--workspace-roots")
            .arg(tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let listening = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
        let console = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
        (child, listening, console)
    };
    let (mut child, listening, console) = start().await;
    let addr = listening.strip_prefix("listening on http://").unwrap().to_owned();
    let token_path = tmp.path().join("data").join("token");
    let token = std::fs::read_to_string(&token_path).unwrap().trim().to_owned();
    assert_eq!(token.len(), 64);
    assert_eq!(std::fs::metadata(&token_path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(console.split("  ").next().unwrap(), format!("console: http://{addr}/#token={token}"));
    // The console page itself needs no token; the API does.
    let http = reqwest::Client::new();
    let page = http.get(format!("http://{addr}/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("default-src 'none'"));
    let ok = http.get(format!("http://{addr}/v1/rooms")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    child.kill().await.unwrap();
    // Kept across restarts.
    let (mut child, _, console) = start().await;
    assert!(console.ends_with(&format!("#token={token}")), "{console}");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn tokens_never_reach_the_logs() {
    for format in ["text", "json"] {
        let s = Server::start_with_env(&["--log-format", format], &[("RUST_LOG", "trace")]).await;
        let plain = reqwest::Client::new();
        let wrong = "wrong-token-abcdefghijklmnopqrstuvwxyz0123456789";
        s.session("r", "s").await;
        s.turn("r", "s", "hello").await;
        let _ = plain.get(s.url("/v1/rooms")).bearer_auth(wrong).send().await.unwrap();
        let _ = plain.get(s.url(&format!("/v1/rooms?token={TOKEN}"))).send().await.unwrap();
        let _ = plain.get(s.url(&format!("/v1/rooms?access_token={wrong}"))).send().await.unwrap();
        for proto in [format!("ensemble.v1, ensemble.bearer.{TOKEN}"), format!("ensemble.bearer.{wrong}")] {
            let mut req = format!("ws://{}/v1/rooms/r/ws", s.addr).into_client_request().unwrap();
            req.headers_mut().insert("sec-websocket-protocol", proto.parse().unwrap());
            if let Ok((ws, _)) = tokio_tungstenite::connect_async(req).await {
                let mut w = Ws { stream: ws };
                w.hello().await;
            }
        }
        let mut ws = s.ws("r", Some(0)).await;
        ws.hello().await;
        ws.until_type("turn.completed").await;
        let log = s.log();
        assert!(s.stop().await.success());
        assert!(log.len() > 1000, "trace logging produced output ({format})");
        assert!(!log.contains(TOKEN), "the token leaked into the {format} log");
        assert!(!log.contains(wrong), "a presented token leaked into the {format} log");
        assert!(!log.contains(&TOKEN[..16]), "part of the token leaked into the {format} log");
    }
}

#[tokio::test]
async fn room_content_never_reaches_the_logs() {
    // A marker in everything a client sends and the agent says: the turn's text (streamed back by
    // the scripted agent as deltas and messages, written to the store, sent on the WebSocket), a
    // client WebSocket frame, a session title, a rejected body, a side conversation's prompt.
    const MARKER: &str = "ROOMSECRET7f3a9c";
    for format in ["text", "json"] {
        let s = Server::start_with_env(&["--log-format", format], &[("RUST_LOG", "trace")]).await;
        let mut ws = s.ws("r", Some(0)).await;
        ws.hello().await;
        let (st, body) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "s", "title": MARKER})).await;
        assert_eq!(st, StatusCode::CREATED, "{body}");
        s.turn("r", "s", &format!("hello {MARKER}\n/tool grep -n {MARKER}")).await;
        let events = ws.until_type("turn.completed").await;
        assert!(events.iter().any(|e| e.to_string().contains(MARKER)), "the marker went through the room");
        ws.send_text(&format!("{{\"type\":\"{MARKER}\"}}")).await;
        let reply = ws.frame().await;
        assert_eq!(reply["type"], "error", "{reply}");
        let (st, _) = s.post("/v1/rooms/r/sessions", json!({"sessionId": "t", "settings": {"sandbox": MARKER}})).await;
        assert_eq!(st, StatusCode::BAD_REQUEST);
        let (_, history) = s.get("/v1/rooms/r/events?after=0").await;
        assert!(history.to_string().contains(MARKER));
        drop(ws);
        let log = s.log();
        assert!(s.stop().await.success());
        assert!(log.len() > 1000, "trace logging produced output ({format})");
        assert!(!log.contains(MARKER), "room content reached the {format} log:\n{}", {
            log.lines().filter(|l| l.contains(MARKER)).take(5).collect::<Vec<_>>().join("\n")
        });
    }
}

#[tokio::test]
async fn a_second_server_on_the_same_data_dir_refuses_to_start() {
    let s = Server::start(&[]).await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(s.dir.join("data"))
        .arg("--token-file")
        .arg(s.dir.join("token"))
        .stdin(Stdio::null())
        .output();
    let out = tokio::time::timeout(WAIT, out).await.unwrap().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("another ensemble server is using the data dir"));
    // The first one is unharmed.
    let (st, _) = s.get("/v1/rooms").await;
    assert_eq!(st, StatusCode::OK);
}

#[tokio::test]
async fn a_port_in_use_is_said_before_anything_is_made() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = run_to_exit(&[
        std::ffi::OsStr::new("--listen"),
        std::ffi::OsStr::new(&addr),
        std::ffi::OsStr::new("--data-dir"),
        data.as_os_str(),
    ])
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{addr} is already in use")) && stderr.contains("--listen"), "{stderr}");
    assert!(!data.exists(), "no data dir, token or database was made");
}

#[tokio::test]
async fn session_cwd_stays_inside_the_workspace_roots() {
    let s = Server::start(&[]).await;
    let root = s.dir.canonicalize().unwrap();
    let inside = root.join("proj");
    std::fs::create_dir(&inside).unwrap();
    let outside = tempfile::tempdir_in("/tmp").unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
    std::os::unix::fs::symlink(&inside, root.join("alias")).unwrap();
    let s = &s;
    let start = |cwd: String| async move { s.post("/v1/rooms/r/sessions", json!({ "cwd": cwd })).await };
    let (st, body) = start(inside.display().to_string()).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    assert_eq!(body["cwd"], inside.display().to_string());
    // A symlink inside the root is resolved to where it points.
    let (st, body) = start(root.join("alias").display().to_string()).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    assert_eq!(body["cwd"], inside.display().to_string());
    for (trick, code) in [
        (outside.display().to_string(), "cwd_outside_workspace"),
        (root.join("escape").display().to_string(), "cwd_outside_workspace"),
        (format!("{}/proj/../../", root.display()), "invalid_cwd"),
        (format!("{}/..", root.display()), "invalid_cwd"),
        ("/".to_owned(), "cwd_outside_workspace"),
        ("proj".to_owned(), "invalid_cwd"),
    ] {
        let (st, body) = start(trick.clone()).await;
        assert_eq!(error_code(st, &body, StatusCode::BAD_REQUEST), code, "{trick}");
    }
}

#[tokio::test]
async fn a_handler_panic_is_a_json_500_and_the_server_keeps_serving() {
    let s = Server::start(&["--test-hooks"]).await;
    let (st, body) = s.get("/v1/test/panic").await;
    assert_eq!(error_code(st, &body, StatusCode::INTERNAL_SERVER_ERROR), "internal");
    assert!(!body.to_string().contains("on purpose"), "the panic message is not leaked: {body}");
    let (st, _) = s.get("/v1/rooms").await;
    assert_eq!(st, StatusCode::OK);
    s.session("r", "s").await;
    // Without the hook the route does not exist.
    let s2 = Server::start(&[]).await;
    let (st, _) = s2.get("/v1/test/panic").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
}

/// A refused Host or Origin is a warning in the log, and anyone who reaches the port can send one:
/// each kind is logged at most once per `--refusal-log-interval-secs`, and the next line counts
/// what was held back, so a flood costs a few lines and loses no count.
#[tokio::test]
async fn refused_host_and_origin_warnings_are_rate_limited_and_count_what_they_held_back() {
    let s = Server::start_relaying_log(&["--refusal-log-interval-secs", "1"]).await;
    let port = s.addr.rsplit(':').next().unwrap().to_owned();
    let bad_host = format!("evil.example:{port}");
    let started = std::time::Instant::now();
    let refused_host = async || {
        let (st, _, _) =
            raw(&s.addr, "GET", "/v1/rooms", &[("Host", &bad_host), ("Authorization", &bearer())], "").await;
        assert_eq!(st, 403);
    };
    for _ in 0..200 {
        refused_host().await;
    }
    for _ in 0..50 {
        let res = s.http().get(s.url("/v1/rooms")).header("origin", "https://evil.example").send().await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN);
    }
    // The counts held back in each line of a kind (the log's colours taken out).
    let held = |log: &str, what: &str| -> Vec<u64> {
        log.lines()
            .filter(|l| l.contains(what))
            .map(|l| {
                let mut plain = String::new();
                let mut chars = l.chars();
                while let Some(c) = chars.next() {
                    if c == '\u{1b}' {
                        chars.by_ref().find(|c| *c == 'm');
                    } else {
                        plain.push(c);
                    }
                }
                let n = plain.split("suppressed=").nth(1).and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next());
                n.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no count in {plain}"))
            })
            .collect()
    };
    const HOST: &str = "Host that is not allowed";
    // Once the interval has passed, the next refusal's line says how many went unlogged.
    let mut sent = 200;
    let deadline = std::time::Instant::now() + WAIT;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !held(&s.log(), HOST).iter().any(|n| *n > 0) {
        assert!(std::time::Instant::now() < deadline, "no line counted the held-back ones:\n{}", s.log());
        tick.tick().await;
        refused_host().await;
        sent += 1;
    }
    let log = s.log();
    let (host, origin) = (held(&log, HOST), held(&log, "refused a cross-origin request"));
    let most = 2 + started.elapsed().as_secs() as usize;
    assert!(host.len() <= most && origin.len() <= most, "{host:?} {origin:?} in {:?}", started.elapsed());
    assert_eq!((host[0], origin[0]), (0, 0), "the first of a kind is logged");
    let accounted = host.len() as u64 + host.iter().sum::<u64>();
    assert!((200..=sent).contains(&accounted), "{accounted} of {sent} refusals accounted for: {host:?}");
}
